"""The run loop's own data-moving functions, run on symbolic values.

The graph's denotation (``lowered``) models what each node is handed from its declared reads.
The run loop does not read ``node.reads`` itself: it calls the step's getter (or indexes
slots ``a``/``b`` on its fast paths), a loop body's output getter, an op's operand
``assemble``r, the kinds' ``rebuild`` and ``record``, which writes a node list's table. Those are pure functions of the values they are
given, so validation runs *them* — the very objects the run loop calls — on symbols standing
for the denotations, and compares what they hand over with the model: a getter, projection,
fast-path slot, assembler or rebuild that moves the wrong value is a mismatch, not a matter of
trust. (A symbol is an object of its own, so a weak scalar ``3`` can never pass for term 3.)
"""

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from tfexec.forward import run
from tfexec.forward.run import COMPUTE, DIRECT, ONE, TWO, Ref, Step
from tfexec.ir.weak import Weak
from tfexec.semantics.dispatch import Fill
from tfexec.validate.terms import Den

if TYPE_CHECKING:
    from tfexec.forward.kinds import EnterCall


class Sym:
    """A symbol for one tensor's term in a symbolic run context."""

    __slots__ = ("term",)

    def __init__(self, term: int) -> None:
        self.term = term

    def __repr__(self) -> str:
        return f"#{self.term}"


def symbolic(den: Den) -> object:
    """``den`` with each term a ``Sym`` (tuples stay tuples: the run loop projects them)."""
    if isinstance(den, tuple):
        return tuple(symbolic(d) for d in den)
    return Sym(den)


def plain(value: object) -> object:
    """A symbolic value made comparable: ``("t", term)`` per symbol, ``("s", type, value)`` per
    Python scalar, tuples and lists as tuples; anything else as ``("?", its type name)``."""
    if isinstance(value, Sym):
        return ("t", value.term)
    if isinstance(value, str):
        return ("k", value)
    if isinstance(value, (tuple, list)):
        return tuple(plain(v) for v in value)
    if isinstance(value, (bool, int, float)):
        return ("s", type(value).__name__, value)
    return ("?", type(value).__name__)


def handed(step: Step, context: Sequence[object]) -> tuple[object, ...]:
    """What the run loop hands a node's function from ``context`` (the symbolic slots), exactly
    as ``Body.execute`` does for the step's kind (raises where the run would)."""
    _, kind, a, b, get, _, _ = step
    if kind == ONE:
        return (context[a],)
    if kind == TWO:
        return (context[a], context[b])
    assert get is not None and kind in (DIRECT, COMPUTE)
    return tuple(get(context))  # type: ignore[arg-type]


def recorded(
    keyed: Sequence[tuple[str, Ref]], context: Sequence[object], prefix: str, iterations: dict[str, object],
) -> tuple[tuple[str, object], ...]:
    """The table ``record`` writes for a node list from its symbolic ``context`` and the
    per-iteration entries of its loops (``iterations``, in the order they were recorded)."""
    out: dict[str, object] = {}
    run.record(keyed, context, prefix, dict(iterations), out, None)
    return tuple(out.items())


class SymbolicRun(run.Run):
    """A run context for calling an ``EnterCall``'s ``compute`` on symbols: no device, and a
    boundary's ``enter`` records the arguments it was handed instead of checking them."""

    __slots__ = ("entered",)

    def __init__(self) -> None:  # noqa: D107  (nothing of Run's is needed)
        self.device = None
        self.entered: list[tuple[int, tuple[object, ...]]] = []

    def enter(self, boundary: "EnterCall", args: tuple[object, ...]) -> None:
        self.entered.append((boundary.callee_scope, args))


def entered(boundary: "EnterCall", scope: int, reads: Sequence[object]) -> tuple[object, object]:
    """What ``boundary.compute`` hands ``enter`` and returns, given symbolic ``reads``."""
    sym = SymbolicRun()
    value = boundary.compute(sym, scope, reads)
    if len(sym.entered) != 1:
        raise AssertionError(f"it enters {len(sym.entered)} scope(s), not one")
    scope_opened, args = sym.entered[0]
    return (("scope", scope_opened), args), value


def expected_operands(fills: Sequence[Fill], reads: Sequence[object]) -> tuple[object, ...]:
    """The kernel operands the fills say: each hole the next read, each weak field its value."""
    it = iter(reads)

    def fill(f: Fill) -> object:
        if f is None:
            return next(it)
        if isinstance(f, Weak):
            return f.value
        return tuple(fill(g) for g in f)

    return tuple(fill(f) for f in fills)


def mismatch(model: object, run: Callable[[], object]) -> str | None:
    """Why what ``run()`` gives differs from ``model`` (both symbolic), or None."""
    try:
        got = run()
    except Exception as exc:  # the run loop would fail here where the model does not
        return f"raises {type(exc).__name__}: {exc}" if str(exc) else f"raises {type(exc).__name__}"
    if plain(got) != plain(model):
        return f"gives {_show(got)} where its declared reads give {_show(model)}"
    return None


def _show(value: object) -> str:
    if isinstance(value, (tuple, list)):
        return "(" + ", ".join(_show(v) for v in value) + ("," if len(value) == 1 else "") + ")"
    return repr(value)
