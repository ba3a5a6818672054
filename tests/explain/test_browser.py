"""The explorer pages in a real browser: headless Chromium (Debian's ``chromium``; ``.ci/run``
installs it) opens the examples' pages from disk and these tests drive them with real mouse
and key events, asserting on the rendered DOM. Each test saves a screenshot at 1280x800
(into ``$TFEXEC_SCREENSHOTS`` when set, to look at).
"""

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch

import tfexec
from tfexec.explain.outline import Outline, outline

from explain_browser import HEIGHT, WIDTH, Browser, find_chromium
from explain_programs import FAILING_LOOP, LLAMA, MLP, NESTED, TILED, drifting, entry, flash, flash_inputs

CHROMIUM = find_chromium()
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="chromium is not installed (apt-get install -y chromium; .ci/run installs it when missing)"
)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    assert CHROMIUM is not None
    b = Browser(CHROMIUM)
    try:
        yield b
    finally:
        b.close()


@pytest.fixture(autouse=True)
def no_script_errors(browser: Browser) -> Iterator[None]:
    """Whatever a test clicks or types, the page raises no script error."""
    yield
    assert browser.errors() == [], browser.errors()


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[str, Outline]]:
    """Each page's file URL and the outline of its program."""
    folder = tmp_path_factory.mktemp("pages")
    gen = torch.Generator().manual_seed(0)
    llama = tfexec.load_module(LLAMA)
    targets: dict[str, tuple[object, tuple[object, ...]]] = {
        "llama": (llama, (torch.randn(8, 64, generator=gen),)),
        "flash": (flash(), flash_inputs()),
        "tiled": (entry(TILED.read_text(encoding="utf-8"), str(TILED)),
                  (torch.randn(128, 96, generator=gen), torch.randn(96, 128, generator=gen))),
        "mlp": (entry(MLP.read_text(encoding="utf-8"), str(MLP)),
                (torch.randn(2, 64, generator=gen), torch.randn(64, 256, generator=gen), torch.randn(256, 64, generator=gen))),
        "nested": (entry(NESTED, "nested.tf.py"), (torch.randn(4, 8, generator=gen),)),
        "no-iterations": (flash(), (torch.randn(8, 32, generator=gen), torch.randn(0, 32), torch.randn(0, 32))),
        "failing": (entry(FAILING_LOOP, "loop.tf.py"), (torch.randn(4, 100, generator=gen),)),
        "differ": (drifting(), (torch.randn(3, 4, generator=gen),)),
    }
    out = {}
    for name, (target, inputs) in targets.items():
        path = folder / f"{name}.html"
        path.write_text(tfexec.explain(target, *inputs), encoding="utf-8")  # type: ignore[arg-type]
        out[name] = (path.as_uri(), outline(tfexec.lower(target)))  # type: ignore[arg-type]
    return out


def _open(browser: Browser, pages: dict[str, tuple[str, Outline]], name: str) -> Outline:
    url, lines = pages[name]
    browser.open(url)
    assert browser.errors() == [], browser.errors()
    return lines


def _shot(browser: Browser, tmp_path: Path, name: str) -> Path:
    path = browser.screenshot(tmp_path / f"{name}.png")
    data = path.read_bytes()
    assert data.startswith(b"\x89PNG") and len(data) > 20_000  # a drawn page, not a blank one
    keep = os.environ.get("TFEXEC_SCREENSHOTS")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copy(path, Path(keep) / path.name)
    return path


def _selected(browser: Browser) -> list[str]:
    return browser.js("[...document.querySelectorAll('#rows tr.row.sel')].map(r => r.id)")  # type: ignore[no-any-return]


@pytest.mark.parametrize("name", ["llama", "flash", "tiled", "mlp", "nested", "no-iterations"])
def test_each_example_page_draws_every_slot_side_by_side_and_fetches_nothing(
    browser: Browser, pages: dict[str, tuple[str, Outline]], name: str, tmp_path: Path,
) -> None:
    lines = _open(browser, pages, name)
    assert browser.js("document.querySelectorAll('#rows tr.row').length") == len(lines.rows)
    assert browser.requests() == [pages[name][0]]  # the page itself, and nothing else
    assert browser.js("document.getElementById('verdict').className") == "ok"
    panes = browser.js("['program', 'lowered', 'value'].map(id => { const b = document.getElementById(id)"
                       ".getBoundingClientRect(); return [b.left, b.right, b.top, b.bottom]; })")
    assert panes[0][1] <= panes[1][0] + 1 and panes[1][1] <= panes[2][0] + 1 and panes[2][1] <= WIDTH
    assert all(p[3] <= HEIGHT and p[3] - p[2] > 500 for p in panes)  # three full-height panes in 1280x800
    assert browser.js("document.documentElement.scrollWidth") <= WIDTH
    assert len(_selected(browser)) == 1
    _shot(browser, tmp_path, f"{name}-open")


def test_clicking_a_source_span_highlights_the_node_everywhere(
    browser: Browser, pages: dict[str, tuple[str, Outline]], tmp_path: Path,
) -> None:
    lines = _open(browser, pages, "llama")
    xn = next(r for r in lines.rows if r.name == "xn")
    browser.click(f".sp[data-rows='{xn.index}']", at_start=True)
    assert _selected(browser) == [f"row-{xn.index}"]
    assert browser.js(f"document.getElementById('row-{xn.index}').getAttribute('aria-selected')") == "true"
    assert browser.js("[...document.querySelectorAll('.sp.sel')].map(s => s.textContent)") == [
        "rms_norm(x, attn_norm_weight, eps=1e-06)"]
    assert browser.js("document.getElementById('value-title').textContent") == f"%{xn.slot}  xn = rms_norm"
    assert browser.js("document.getElementById('value-verdict').textContent") == "bitwise equal on both routes"
    reads = browser.js("[...document.querySelectorAll('#rows tr.row.read')].map(r => r.id)")
    assert reads == [f"row-{t}" for t in xn.read_rows]
    assert browser.js("[...document.querySelectorAll('#rows tr.row.read td.c-mark')].map(t => t.textContent)") == ["←", "←"]
    readers = [r.index for r in lines.rows if xn.index in r.read_rows]
    assert browser.js("[...document.querySelectorAll('#rows tr.row.reader')].map(r => r.id)") == [f"row-{i}" for i in readers]
    arrows = browser.js("[...document.querySelectorAll('#arrows path[data-to]')].map(p => Number(p.dataset.to))")
    assert arrows == list(xn.read_rows) and all(t < xn.index for t in arrows)  # drawn to earlier rows only
    _shot(browser, tmp_path, "llama-click-xn")


def test_a_span_of_a_callee_inlined_three_times_steps_through_its_instances(
    browser: Browser, pages: dict[str, tuple[str, Outline]],
) -> None:
    lines = _open(browser, pages, "llama")
    splits = [r.index for r in lines.rows if r.name == "split"]
    assert len(splits) == 3
    selector = f".sp[data-rows='{' '.join(map(str, splits))}']"
    seen = []
    for _ in range(4):
        browser.click(selector, at_start=True)
        seen.append(_selected(browser)[0])
    assert seen == [f"row-{i}" for i in splits + splits[:1]]


def test_arrow_keys_step_through_the_nodes_in_order(browser: Browser, pages: dict[str, tuple[str, Outline]]) -> None:
    lines = _open(browser, pages, "flash")
    loop = next(r for r in lines.rows if r.kind == "loop")
    browser.click(f"#row-{loop.index} td.c-key")
    assert _selected(browser) == [f"row-{loop.index}"]
    browser.key("ArrowDown", key_code=40)
    first_input = lines.loops[loop.index].rows[0]
    assert _selected(browser) == [f"row-{first_input}"]  # into the loop's body, which opened
    assert browser.js(f"document.getElementById('row-{first_input}').hidden") is False
    browser.key("ArrowUp", key_code=38)
    browser.key("ArrowUp", key_code=38)
    assert _selected(browser) == [f"row-{loop.index - 1}"]
    browser.key("End", key_code=35)
    assert _selected(browser) == [f"row-{len(lines.rows) - 1}"]
    browser.key("Home", key_code=36)
    assert _selected(browser) == ["row-0"]


def test_the_iteration_slider_changes_the_value_shown(
    browser: Browser, pages: dict[str, tuple[str, Outline]], tmp_path: Path,
) -> None:
    lines = _open(browser, pages, "flash")
    loop = next(r for r in lines.rows if r.kind == "loop")
    s = next(r for r in lines.rows if r.name == "s")
    browser.click(f"#row-{loop.index} td.c-key")
    browser.click(f"#row-{s.index} td.c-key")
    facts = "document.getElementById('value-key').textContent + ' ' + document.querySelector('.stats').textContent"
    before = browser.js(facts)
    assert before.startswith("flash/%10[0]/s ")
    browser.js(f"document.getElementById('iter-{loop.index}').focus()")
    browser.key("ArrowRight", key_code=39)  # the slider's own key
    after = browser.js(facts)
    assert after.startswith("flash/%10[1]/s ") and after.split(" ", 1)[1] != before.split(" ", 1)[1]
    assert browser.js(f"document.getElementById('iter-{loop.index}').value") == "1"
    assert browser.js("document.getElementById('value-iter').value") == "1"  # the value pane's copy follows
    _shot(browser, tmp_path, "flash-iteration-1")
    browser.click(f"#row-{s.index} td.c-key")
    browser.key("[", code="BracketLeft", key_code=219)  # the page's key for the previous iteration
    assert browser.js(facts).startswith("flash/%10[0]/s ")


def test_a_carry_shows_its_initial_value_then_the_previous_iterations_output(
    browser: Browser, pages: dict[str, tuple[str, Outline]],
) -> None:
    lines = _open(browser, pages, "flash")
    loop = next(r for r in lines.rows if r.kind == "loop")
    m = next(r for r in lines.rows if r.kind == "carry" and r.name == "m")
    browser.click(f"#row-{loop.index} td.c-key")
    browser.click(f"#row-{m.index} td.c-key")
    assert browser.js("document.getElementById('value-key').textContent") == "flash/m0"
    assert browser.js("[...document.querySelectorAll('#arrows path[data-to]')].map(p => p.getAttribute('class'))") == ["outer", "next"]
    browser.key("]", code="BracketRight", key_code=221)
    assert browser.js("document.getElementById('value-key').textContent") == "flash/%10[0]/m_new"


def test_nested_loops_have_a_slider_each_and_carries_cross_both(
    browser: Browser, pages: dict[str, tuple[str, Outline]], tmp_path: Path,
) -> None:
    lines = _open(browser, pages, "nested")
    outer, inner = (r for r in lines.rows if r.kind == "loop")
    add = next(r for r in lines.rows if r.op == "add")
    acc2 = next(r for r in lines.rows if r.kind == "carry" and r.name == "acc2")
    browser.click(f"#row-{outer.index} td.c-key")
    browser.click(f"#row-{inner.index} td.c-key")
    browser.click(f"#row-{add.index} td.c-key")
    key = "document.getElementById('value-key').textContent"
    assert browser.js(key) == "f/acc[0]/inner/acc2[0]/%1"
    browser.js(f"document.getElementById('iter-{outer.index}').focus()")
    browser.key("ArrowRight", key_code=39)
    browser.js(f"document.getElementById('iter-{inner.index}').focus()")
    browser.key("End", key_code=35)
    assert browser.js(key) == "f/acc[1]/inner/acc2[2]/%1"
    browser.click(f"#row-{acc2.index} td.c-key")
    assert browser.js(key) == "f/acc[1]/inner/acc2[1]/%1"  # iteration 2 starts from iteration 1's add
    browser.js(f"document.getElementById('iter-{inner.index}').focus()")
    browser.key("Home", key_code=36)
    assert browser.js(key) == "f/acc[0]/inner/acc2"  # iteration 0: the outer carry, i.e. outer iteration 0's result
    _shot(browser, tmp_path, "nested-loops")


def test_a_loop_that_ran_zero_times_says_so(browser: Browser, pages: dict[str, tuple[str, Outline]]) -> None:
    lines = _open(browser, pages, "no-iterations")
    loop = next(r for r in lines.rows if r.kind == "loop")
    s = next(r for r in lines.rows if r.name == "s")
    browser.click(f"#row-{loop.index} td.c-key")
    assert browser.js(f"document.getElementById('iter-{loop.index}').disabled") is True
    browser.click(f"#row-{s.index} td.c-key")
    assert "the loop ran 0 times" in browser.js("document.getElementById('value-body').textContent")
    assert browser.errors() == []


def test_a_failing_program_opens_on_the_failing_node_with_its_error(
    browser: Browser, pages: dict[str, tuple[str, Outline]], tmp_path: Path,
) -> None:
    lines = _open(browser, pages, "failing")
    pa = next(r for r in lines.rows if r.name == "pa")
    assert _selected(browser) == [f"row-{pa.index}"]
    assert browser.js("document.getElementById('verdict').className") == "failed"
    assert browser.js(f"document.querySelector('#row-{pa.index} td.c-ok').textContent") == "!"
    assert browser.js(f"document.getElementById('iter-{pa.loops[0]}').value") == "2"
    error = browser.js("document.querySelector('#value-body .verdict-line.err').textContent")
    assert "failed here" in error and "runs past axis 1 of length 100" in error
    assert "loop.tf.py:6:14 pa = slice" in browser.js("document.getElementById('errors').textContent")
    _shot(browser, tmp_path, "failing-loop")


def test_routes_that_differ_are_marked_in_words(browser: Browser, pages: dict[str, tuple[str, Outline]], tmp_path: Path) -> None:
    lines = _open(browser, pages, "differ")
    drift = next(r for r in lines.rows if r.op == "drift_test_op")
    assert _selected(browser) == [f"row-{drift.index}"]
    marks = browser.js("[...document.querySelectorAll('#rows td.c-ok')].map(t => t.textContent)")
    assert marks == ["·", "=", "≠", "≠"]  # the input, tanh, then drift and exp
    assert browser.js("document.getElementById('value-verdict').textContent").startswith("the routes differ: 12 of 12")
    assert browser.js("[...document.querySelectorAll('#value-body .route h4')].map(h => h.textContent)") == [
        "direct route (visitor)", "lowered route (snoc list)"]
    browser.call("Emulation.setEmulatedVisionDeficiency", session=True, type="achromatopsia")
    try:
        _shot(browser, tmp_path, "differ-without-colour")
    finally:
        browser.call("Emulation.setEmulatedVisionDeficiency", session=True, type="none")


def test_a_loop_that_failed_at_iteration_2_shows_iterations_0_and_1_as_computed(
    browser: Browser, pages: dict[str, tuple[str, Outline]], tmp_path: Path,
) -> None:
    lines = _open(browser, pages, "failing")
    pa = next(r for r in lines.rows if r.name == "pa")
    loop = pa.loops[0]
    mark = f"document.querySelector('#row-{pa.index} td.c-ok').textContent"
    verdict = "document.getElementById('value-verdict') ? document.getElementById('value-verdict').textContent : ''"
    errors = "document.querySelectorAll('#value-body .verdict-line.err').length"
    assert browser.js(mark) == "!" and browser.js(errors) > 0  # iteration 2: failed here
    for i in (0, 1):
        browser.js(f"tfexecExplorer.setIteration({loop}, {i})")
        assert browser.js(mark) == "="  # computed by both routes, and equal
        assert browser.js(errors) == 0 and browser.js(verdict) == "bitwise equal on both routes"
    _shot(browser, tmp_path, "failing-loop-iteration-1")


def test_body_slots_are_named_after_their_loop_and_frees_are_not_cut(
    browser: Browser, pages: dict[str, tuple[str, Outline]],
) -> None:
    lines = _open(browser, pages, "flash")
    loop = next(r for r in lines.rows if r.kind == "loop")
    body = [r for r in lines.rows if r.body == loop.index]
    browser.js(f"document.querySelector('tr.bodyhead[data-loop=\"{loop.index}\"] button.toggle').click()")
    names = browser.js("[...document.querySelectorAll('#rows tr.row td.c-slot')].map(td => td.textContent)")
    assert len(set(names)) == len(names)
    assert all(browser.js(f"document.querySelector('#row-{r.index} td.c-slot').textContent") == f"%{loop.slot}.{r.slot}"
               for r in body)
    cut = browser.js("[...document.querySelectorAll('#rows td.c-frees')].filter(td => td.offsetParent && "
                     "td.scrollWidth > td.clientWidth + 1).length")
    assert cut == 0
