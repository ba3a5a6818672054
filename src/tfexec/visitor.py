"""Visitors and registries (visitor-mutator §1, visitor-registry §2).

``ExprVisitor[T]`` walks a DAG iteratively in post-order, memoised on ``id(expr)``, and
calls ``visit_<ClassName>(node, *args)`` once per node; a handler reads its operands'
results with ``self.result(operand)``. ``ExprMutator`` rebuilds a DAG bottom-up,
preserving sharing and spans. ``AnalysisRegistry[K]`` maps op classes to handlers.
Neither walker recurses over graph depth; loop bodies are walked by a nested call, so
recursion follows only loop nesting.
"""

from collections.abc import Callable
from typing import Any, Generic, TypeVar, assert_never

from tfexec.errors import RegistryError as RegistryError, TfexecError
from tfexec.ir.expr import Call, Constant, ConstTensor, Expr, GridRegionExpr, Tuple, TupleGetItem, Var
from tfexec.ir.graph import post_order

T = TypeVar("T")
H = TypeVar("H")


class ExprVisitor(Generic[T]):
    """Iterative, memoised post-order visitor; subclasses define ``visit_<ClassName>``.

    ``visit(expr, *args)`` computes every node reachable from ``expr`` (operands first)
    that is not yet in ``self.memo`` and returns ``expr``'s result. A ``GridRegionExpr``'s
    body is not walked for it: ``visit_GridRegionExpr`` decides how to walk it.
    """

    def __init__(self) -> None:
        self.memo: dict[int, T] = {}

    def visit(self, expr: Expr, *args: Any) -> T:
        """``expr``'s result, visiting first every node it reads that is not memoised yet.

        The walk stops at memoised nodes: seeding ``self.memo`` (a loop body's frontier,
        say) keeps a nested visit inside its own scope.
        """
        memo = self.memo
        if id(expr) in memo:
            return memo[id(expr)]
        for node in post_order([expr], memo):
            memo[id(node)] = self._dispatch(node, *args)
        return memo[id(expr)]

    def result(self, expr: Expr) -> T:
        """The memoised result of an operand already visited."""
        return self.memo[id(expr)]

    def _dispatch(self, node: Expr, *args: Any) -> T:
        method: Callable[..., T] | None = getattr(self, "visit_" + type(node).__name__, None)
        if method is None:
            raise TfexecError(
                f"{type(self).__name__} has no visit_{type(node).__name__}: define it to visit {type(node).__name__} nodes"
            )
        return method(node, *args)


class ExprMutator:
    """Rebuild a DAG bottom-up, keeping sharing (a node reached twice is rebuilt once) and spans.

    Override ``rewrite_<ClassName>(node)`` to replace a node; operands are already
    rewritten and available through ``self.mutated(operand)``. The default rebuilds a node
    only when one of its operands changed, so an identity pass returns the same DAG.
    Loop bodies and yield values are rewritten by a nested walk; a called ``Function`` is
    a separate scope and is left as it is. A rebuilt node keeps its ``span`` but has no
    ``checked_type`` (run ``infer_types`` again).
    """

    def __init__(self) -> None:
        self.memo: dict[int, Expr] = {}

    def mutate(self, expr: Expr) -> Expr:
        """The rewritten form of ``expr``; every node is rewritten at most once per mutator."""
        memo = self.memo
        if id(expr) in memo:
            return memo[id(expr)]
        for node in post_order([expr], memo):
            method: Callable[[Expr], Expr] | None = getattr(self, "rewrite_" + type(node).__name__, None)
            memo[id(node)] = method(node) if method is not None else self.rebuild(node)
        return memo[id(expr)]

    def mutated(self, expr: Expr) -> Expr:
        """The rewritten form of ``expr`` (rewriting it now if it was not reached yet)."""
        return self.memo[id(expr)] if id(expr) in self.memo else self.mutate(expr)

    def rebuild(self, node: Expr) -> Expr:
        """Rebuild ``node`` over its rewritten operands; return it unchanged if none changed."""
        match node:
            case Var() | Constant() | ConstTensor():
                return node
            case Call():
                args = tuple(self.mutated(a) for a in node.args)
                if all(a is b for a, b in zip(args, node.args)):
                    return node
                return Call(node.target, args, span=node.span)
            case Tuple():
                fields = tuple(self.mutated(f) for f in node.fields)
                if all(a is b for a, b in zip(fields, node.fields)):
                    return node
                return Tuple(fields, span=node.span)
            case TupleGetItem():
                inner = self.mutated(node.tuple)
                return node if inner is node.tuple else TupleGetItem(inner, node.index, span=node.span)
            case GridRegionExpr():
                return self._rebuild_region(node)
            case _:
                assert_never(node)

    def _rebuild_region(self, node: GridRegionExpr) -> Expr:
        inits = tuple(self.mutated(a) for a in node.init_args)
        yields = tuple(self.mutated(y) for y in node.yield_values)
        body = self.mutated(node.body)
        induction = self.mutated(node.induction_var)
        carried = tuple(self.mutated(v) for v in node.carried_args)
        unchanged = (
            body is node.body
            and induction is node.induction_var
            and all(a is b for a, b in zip(inits + yields + carried, node.init_args + node.yield_values + node.carried_args))
        )
        if unchanged:
            return node
        if not isinstance(induction, Var) or not all(isinstance(v, Var) for v in carried):
            raise TfexecError("ExprMutator: a loop's induction variable and carries must stay Vars")
        return GridRegionExpr(
            node.extent, induction, inits, tuple(v for v in carried if isinstance(v, Var)), body, yields, span=node.span
        )




def _require_class(registry: str, key: object) -> None:
    if not isinstance(key, type):
        raise TypeError(f"{registry}: a key must be a class (an Op subclass), got {type(key).__name__} {key!r}")


class AnalysisRegistry(Generic[H]):
    """A typed map from op classes to handlers: MRO lookup, duplicates refused unless ``override``."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._handlers: dict[type, H] = {}
        self.version = 0
        """Bumped by every registration, so callers may cache lookups against it."""

    def register(self, key: type, *, override: bool = False) -> Callable[[H], H]:
        """Decorator registering a handler for ``key``."""

        def decorate(handler: H) -> H:
            self.add(key, handler, override=override)
            return handler

        return decorate

    def add(self, key: type, handler: H, *, override: bool = False) -> None:
        """Register ``handler`` for ``key`` (not as a decorator)."""
        _require_class(self.name, key)
        if key in self._handlers and not override:
            raise RegistryError(
                f"{self.name}: {key.__name__} is already registered; pass override=True to replace it"
            )
        self._handlers[key] = handler
        self.version += 1

    def lookup(self, key: type) -> H | None:
        """The handler for ``key`` or its nearest registered base class, else None."""
        exact = self._handlers.get(key)
        if exact is not None:
            return exact
        _require_class(self.name, key)
        for cls in key.__mro__:
            handler = self._handlers.get(cls)
            if handler is not None:
                return handler
        return None

    def __contains__(self, key: object) -> bool:
        return isinstance(key, type) and self.lookup(key) is not None

    def keys(self) -> list[type]:
        return list(self._handlers)
