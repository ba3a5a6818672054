"""``explain(target, *inputs) -> str``: the explorer page, one self-contained HTML file.

The page is ``page.html`` with ``page.css``, ``draw.js`` (one value's numbers and heatmap)
and ``page.js`` (the panes, selection, loops, keys) inlined and the page model
(``tfexec.explain.model``) as a JSON script element; it loads nothing else — no network
request of any kind, no fonts, no external script — so it opens from disk and can be mailed.
"""

import html
import json
import re
from importlib import resources

from tfexec.api_checks import public
from tfexec.explain.model import PageModel, describe_inputs, page_model
from tfexec.ir.expr import Function
from tfexec.loading import LoadedModule
from tfexec.semantics.targets import resolve_target


_MARKER = re.compile(r"\{\{(TITLE|DATA)\}\}|/\*\{\{(CSS|JS)\}\}\*/")


def _asset(name: str) -> str:
    return resources.files("tfexec.explain").joinpath(name).read_text(encoding="utf-8")


def render(model: PageModel) -> str:
    """The HTML of a page model."""
    data = json.dumps(model.data, ensure_ascii=True, separators=(",", ":"), allow_nan=False)
    data = data.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")  # inert inside <script>
    parts = {"TITLE": html.escape(str(model.data.get("title", "tfexec explain"))), "DATA": data,
             "CSS": _asset("page.css"), "JS": _asset("draw.js") + "\n" + _asset("page.js")}
    # One pass over the template, so nothing inserted is scanned for markers again.
    return _MARKER.sub(lambda m: parts[m.group(1) or m.group(2)], _asset("page.html"))


def build_page(
    target: "Function | LoadedModule", inputs: tuple[object, ...], *, title: str | None = None, about: str | None = None,
) -> tuple[str, PageModel]:
    """The page's HTML and its model (status and headline included), for the command line."""
    fn, _ = resolve_target(target)
    model = page_model(target, inputs, title or f"tfexec explain: {fn.name}", about or describe_inputs(fn, inputs))
    return render(model), model


@public
def explain(target: "Function | LoadedModule", *inputs: object, title: str | None = None, about: str | None = None) -> str:
    """The explorer page of running ``target`` on ``inputs``: a self-contained HTML document.

    Side by side and linked: the program's text form, its lowered snoc list, and each node's
    value from both routes (loop bodies per iteration); the failing node first when the
    program fails or the routes differ. ``title`` and ``about`` head the page (default: the
    function's name and the inputs' shapes). It never raises for a program that fails: the
    page shows the error.
    """
    return build_page(target, tuple(inputs), title=title, about=about)[0]


__all__ = ["build_page", "explain", "render"]
