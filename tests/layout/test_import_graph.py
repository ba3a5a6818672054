"""A layering you can draw: src/tfexec's imports form no cycle, between modules or between
packages, and nothing reaches a sibling behind the import graph's back.

Every import counts — top-level, function-local and ``TYPE_CHECKING`` ones — since a cycle
hidden in a function is still a cycle in the design. The graph is read with ``ast`` (nothing
is imported). ``import a.b.c`` depends on the module ``a.b.c``, not on the packages above it:
a package's ``__init__`` re-exporting its modules is not a dependency of those modules.
"""

import ast
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"
ROOT = SRC / "tfexec"

KNOWN_MODULE_CYCLES: tuple[frozenset[str], ...] = (
    # KNOWN EXCEPTION, to be removed: the run loop and a loop body call each other (RunLoop and
    # Body.execute). The trusted-base work (issue #28) is reshaping these modules; when it lands
    # without the cycle, this entry must go (the test fails while it names a cycle that is gone).
    frozenset({"tfexec.forward.check", "tfexec.forward.data", "tfexec.forward.kinds", "tfexec.forward.node",
               "tfexec.forward.run"}),
)
"""Import cycles that exist and are known; every other cycle fails the test."""

CLI_PRIVATE_IMPORTS: dict[str, str] = {
    # KNOWN EXCEPTIONS, each to be removed by moving the subcommand's command-line code into
    # cli/ (tfexec diff, dump and validate have moved already):
    "tfexec.docs._cli": "shared with `python -m tfexec.docs`, the docs check CI runs",
    "tfexec.docs._check": "shared with `python -m tfexec.docs`",
    "tfexec.explain._cli": "the explorer's page options; being reworked with the page (issue #29)",
    "tfexec.reduce._cli": "drives the reducer's internals (search steps, candidates, the check command)",
    "tfexec.frontends.torch._cli": "the importer's command line; being reworked with the importer (issue #27)",
    "tfexec.mesh._distributed": "the torchrun participant; the mesh launcher is being reworked (issue #30)",
    "tfexec.mesh._launch": "the batch launcher (issue #30)",
    "tfexec.mesh._results": "the job and result types and the default timeout (issue #30)",
    "tfexec.mesh._wire": "the job's encoding for the participants (issue #30)",
}
"""Private modules of other packages that ``tfexec.cli`` still imports, and why."""


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES: dict[str, Path] = {_module_name(p): p for p in sorted(ROOT.rglob("*.py"))}


def _imported(module: str, path: Path) -> Iterator[str]:
    """Every tfexec module ``module`` imports, wherever the import statement is."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            # ``from pkg import mod`` imports the module pkg.mod; ``from pkg import name``, pkg.
            names = [f"{source}.{a.name}" if f"{source}.{a.name}" in MODULES else source for a in node.names]
        else:
            continue
        for name in names:
            if name in MODULES and name != module:
                yield name


GRAPH: dict[str, set[str]] = {m: set(_imported(m, p)) for m, p in MODULES.items()}


def _cycles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components of more than one node (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            nxt = next(edges, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph.get(nxt, ())))))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(frozenset(component))
    return found


def _package(module: str) -> str:
    """The package a module belongs to: ``tfexec.forward`` for ``tfexec.forward.run``; a module
    directly under tfexec (``tfexec.infer``) and the facade ``tfexec`` itself are their own."""
    return ".".join(module.split(".")[:2])


def test_the_cycle_finder_finds_a_cycle_and_only_cycles() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [frozenset({"a", "b", "c"})]
    assert _cycles({"a": {"b"}, "b": set(), "c": {"a", "b"}}) == []


def test_the_graph_is_read_from_every_kind_of_import(tmp_path: Path) -> None:
    source = tmp_path / "probe.py"
    source.write_text(
        "from typing import TYPE_CHECKING\n"
        "import tfexec.ir.span\n"
        "from tfexec.ir import dims\n"  # a module, imported from its package
        "from .types import Type\n"  # relative, from tfexec.ir
        "if TYPE_CHECKING:\n    from tfexec.ir.expr import Expr\n"
        "def f() -> None:\n    from tfexec.errors import TfexecError\n",
        encoding="utf-8",
    )
    found = set(_imported("tfexec.ir.probe", source))
    assert found == {"tfexec.ir.span", "tfexec.ir.dims", "tfexec.ir.types", "tfexec.ir.expr", "tfexec.errors"}
    assert "tfexec.mesh" in GRAPH["tfexec"]  # the facade's lazy names are imports too


def test_no_import_cycle_between_modules_but_the_known_ones() -> None:
    cycles = _cycles(GRAPH)
    unknown = [sorted(c) for c in cycles if not any(c <= known for known in KNOWN_MODULE_CYCLES)]
    assert unknown == [], f"import cycles: {unknown}"
    gone = [sorted(k) for k in KNOWN_MODULE_CYCLES if not any(c <= k for c in cycles)]
    assert gone == [], f"no longer a cycle: remove it from KNOWN_MODULE_CYCLES: {gone}"


def test_no_import_cycle_between_packages() -> None:
    packages: dict[str, set[str]] = defaultdict(set)
    for module, targets in GRAPH.items():
        packages[_package(module)] |= {_package(t) for t in targets} - {_package(module)}
    assert _cycles(dict(packages)) == []


def test_no_module_reaches_tfexec_by_importlib() -> None:
    """``importlib.import_module("tfexec....")`` would hide an arrow from the graph above."""
    hidden = []
    for module, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)
                    and isinstance(node.args[0].value, str) and node.args[0].value.startswith("tfexec")
                    and (getattr(node.func, "attr", None) or getattr(node.func, "id", None)) in
                    ("import_module", "__import__", "find_spec")):
                hidden.append(f"{module}: {node.args[0].value}")
    assert hidden == []


def test_the_command_line_imports_no_private_module_of_another_package_but_the_known_ones() -> None:
    private = {
        target for module, targets in GRAPH.items() if module.startswith("tfexec.cli")
        for target in targets
        if not target.startswith("tfexec.cli") and any(part.startswith("_") for part in target.split("."))
    }
    assert private - set(CLI_PRIVATE_IMPORTS) == set()
    assert set(CLI_PRIVATE_IMPORTS) - private == set(), "no longer imported: remove from CLI_PRIVATE_IMPORTS"
