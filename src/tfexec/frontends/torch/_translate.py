"""Translate one exported FX graph into an HIR ``Function`` and its weights.

The walk is one pass over the graph's nodes in order:

* a user-input placeholder becomes a parameter ``Var`` typed from its FakeTensor (symbolic
  sizes as ``DimVar``s); a parameter, buffer or lifted constant becomes a ``ConstTensor``
  named by its ``state_dict`` key, and its tensor goes into the weights;
* a node whose value is a size (``sym_size``, SymInt arithmetic) becomes a ``ShapeDim``,
  materialised as a rank-0 ``i64`` only where a tensor op reads it;
* an ATen call is translated by its rule (``_registry.RULES``); its result's HIR type is
  checked against torch's (dtype, rank, and every size, symbolically); a size that is equal
  but spelled differently (``S + S`` against ``2 * S``) is re-spelled with a ``reshape``;
* runtime assertions (``_assert_scalar``…) are dropped: HIR checks sizes where it binds them.

Problems are collected, not raised one by one: an op without a rule, a rule refusing a case,
a type disagreement. A node reading a failed node is skipped silently (its problem is
already reported), so one ``TorchImportError`` lists every unsupported op of the program.
"""

import operator
from collections.abc import Mapping, Sequence
from typing import Any

import torch

import tfexec.ops as hir
from tfexec.errors import TfexecError
from tfexec.frontends.torch import (  # noqa: F401  (registers the rules)
    _aten_attention,
    _aten_create,
    _aten_elementwise,
    _aten_index,
    _aten_math,
    _aten_order,
    _aten_shape,
    _aten_vision,
)
from tfexec.frontends.torch._context import NodeContext, RuleError, fake_type, is_expr
from tfexec.frontends.torch._custom_ops import CUSTOM_RULES, decomposable, opaque_reason, qualified_name
from tfexec.frontends.torch._dims import UnsupportedSize, same_dim, sym_dim
from tfexec.frontends.torch._mutation import MUTATED_OUTPUTS, mutates, mutation_reason
from tfexec.frontends.torch._provenance import node_span, source_text
from tfexec.frontends.torch._refusals import DATA_DEPENDENT, reads_any, refusal
from tfexec.frontends.torch._registry import RULES, op_name
from tfexec.frontends.torch._report import Problem
from tfexec.frontends.torch._typing import children_of, is_size_op, type_of_node
from tfexec.ir.dims import DimExpr, DimVar, ShapeDim, dim_vars
from tfexec.ir.dtypes import DType
from tfexec.ir.expr import Call, Constant, ConstTensor, Expr, Function, Tuple, Var
from tfexec.ir.module import IRModule
from tfexec.ir.span import Span
from tfexec.ir.types import TensorType, TupleType, Type

_NO_TRACE_FILE = "<torch.export>"

_DROPPED = frozenset(
    {
        "aten._assert_scalar.default",
        "aten._assert_tensor_metadata.default",
        "aten.sym_constrain_range.default",
        "aten.sym_constrain_range_for_size.default",
        "aten._assert_async.msg",
        "aten._assert_async.default",
    }
)
"""Runtime assertions torch.export inserts: dropped (HIR checks sizes where it binds them)."""


class _Poison:
    """The value of a node that failed (its problem is reported once, at that node)."""


_POISON = _Poison()


class GraphTranslator:
    """Translate one ``ExportedProgram`` (see the module docstring)."""

    def __init__(
        self, program: Any, symbols: Mapping[str, str], name: str, param_names: Sequence[str] | None = None,
        weight_prefix: str = "",
    ) -> None:
        self.program = program
        self.weight_prefix = weight_prefix  # stripped from state_dict names (a wrapper's submodule name)
        self.symbols = symbols
        self.name = name
        self.param_names = list(param_names) if param_names is not None else None
        self.env: dict[Any, object] = {}
        self.problems: list[Problem] = []
        self.params: list[Var] = []
        self.constants: dict[str, TensorType] = {}
        self.weights: dict[str, torch.Tensor] = {}
        self.sizes: dict[ShapeDim, Expr] = {}
        self.unnamed: dict[Any, Span | None] = {}  # multi-output node -> the span its rule used
        self.data_dependent: set[Any] = set()  # nodes whose value is a tensor's data read as a number

    # -- the walk --------------------------------------------------------------------------

    def translate(self) -> tuple[IRModule, dict[str, torch.Tensor]] | None:
        """The module and its weights, or None when ``problems`` were found."""
        specs = {spec.arg.name: spec for spec in self.program.graph_signature.input_specs if hasattr(spec.arg, "name")}
        output: Any = None
        for node in self.program.graph.nodes:
            if node.op == "placeholder":
                self.placeholder(node, specs.get(node.name))
            elif node.op == "call_function":
                self.call(node)
            elif node.op == "output":
                output = node
            else:
                self.problem(node, f"FX {node.op} {node.target}", f"FX {node.op} nodes are not supported")
                self.env[node] = _POISON
        body = self.outputs(output)
        self.check_bindable()
        if self.problems or body is None:
            return None
        fn = Function(self.name, tuple(self.params), body, ret_type=body.checked_type)
        return IRModule({self.name: fn}, dict(self.constants), entry=self.name), self.weights

    def node_values(self) -> dict[str, Expr]:
        """Each FX node translated to one HIR value, by node name: the HIR node that *is* its
        value (an identity op's is its operand's; a multi-output node has none, its
        ``getitem``s do). ``check_against_torch`` pairs the two with it."""
        return {node.name: value for node, value in self.env.items() if is_expr(value)}

    def placeholder(self, node: Any, spec: Any) -> None:
        kind = getattr(getattr(spec, "kind", None), "name", None)
        val = node.meta.get("val")
        if kind == "USER_INPUT":
            try:
                t = fake_type(val, self.symbols, f"input {node.name}")
            except RuleError as exc:
                self.problem(node, "input", str(exc))
                self.env[node] = _POISON
                return
            index = len(self.params)
            name = node.name
            if self.param_names is not None and index < len(self.param_names):
                name = self.param_names[index]
            var = Var(name, t)
            var.with_checked_type(t)
            self.params.append(var)
            self.env[node] = var
            return
        if kind in ("PARAMETER", "BUFFER", "CONSTANT_TENSOR"):
            target = spec.target
            tensor = self.program.state_dict.get(target)
            if tensor is None:
                tensor = self.program.constants.get(target)
            target = target.removeprefix(self.weight_prefix)
            try:
                t = fake_type(val if isinstance(val, torch.Tensor) else tensor, {}, f"constant {target}")
            except RuleError as exc:
                self.problem(node, f"constant {target}", str(exc))
                self.env[node] = _POISON
                return
            if not isinstance(tensor, torch.Tensor):
                self.problem(node, f"constant {target}", "its value is not a tensor")
                self.env[node] = _POISON
                return
            const = ConstTensor(target, t)
            const.with_checked_type(t)
            self.constants[target] = t
            self.weights[target] = tensor.detach()
            self.env[node] = const
            return
        self.problem(node, f"input {node.name}", f"a {kind or 'non-tensor'} input has no HIR parameter kind")
        self.env[node] = _POISON

    def check_bindable(self) -> None:
        """Every symbolic size must be some input axis's whole size: HIR binds a ``DimVar``
        from an axis of exactly that size (an axis of size ``2 * S`` checks ``S``, it does
        not bind it)."""
        bound = {d.name for p in self.params if isinstance(p.type, TensorType) for d in p.type.shape if isinstance(d, DimVar)}
        for p in self.params:
            assert isinstance(p.type, TensorType)
            for axis, d in enumerate(p.type.shape):
                free = sorted(dim_vars(d) - bound)
                if free:
                    self.problems.append(Problem(
                        f"input {p.name}", f"axis {axis}",
                        f"its size {d} uses {', '.join(free)}, which is not the whole size of any input axis "
                        "(HIR binds a size only from an axis of exactly that size; mark such an axis dynamic too)",
                    ))

    def call(self, node: Any) -> None:
        target = node.target
        name = op_name(target)
        if name in _DROPPED:
            return
        val = node.meta.get("val")
        if target is operator.getitem:
            self.getitem(node)
            return
        if mutates(target):  # before any rule: a write in place is never translated as a value
            self.problem(node, name, mutation_reason(target))
            self.env[node] = _POISON
            return
        if reads_any(node, self.data_dependent):  # refused once, where the value was read
            self.data_dependent.add(node)
            self.env[node] = _POISON
            return
        refused = refusal(name, val)
        if refused is not None:
            if refused is DATA_DEPENDENT:
                self.data_dependent.add(node)
            self.problem(node, name, refused)
            self.env[node] = _POISON
            return
        rule = RULES.get(target)
        custom = qualified_name(target)
        if rule is None and custom is not None:
            rule = CUSTOM_RULES.get(custom)
            if rule is None:  # one torch can decompose has no reason yet: the import decomposes it
                self.problem(node, name, None if decomposable(target) else opaque_reason(target))
                self.env[node] = _POISON
                return
        if rule is None:
            if is_size_op(target) and isinstance(val, (int, torch.SymInt)) and not isinstance(val, bool):
                self.size_node(node, val)
                return
            self.problem(node, name, None)
            self.env[node] = _POISON
            return
        span = self.span(node, binding=None)
        try:
            ctx = NodeContext(node, self.bind(node), span, self.symbols, self.size_value, self.infer, self.weights)
            self.env[node] = self.finish(node, ctx, rule(ctx), span)
        except _Skip:
            self.env[node] = _POISON
        except RuleError as exc:
            self.problem(node, name, str(exc))
            self.env[node] = _POISON
        except (TfexecError, TypeError, ValueError) as exc:  # a builder refusing what a rule built
            self.problem(node, name, f"cannot translate: {exc}")
            self.env[node] = _POISON

    def size_node(self, node: Any, val: object) -> None:
        try:
            self.env[node] = sym_dim(val, self.symbols)
        except UnsupportedSize as exc:
            self.problem(node, op_name(node.target), str(exc))
            self.env[node] = _POISON

    def getitem(self, node: Any) -> None:
        source, index = node.args
        value = self.env.get(source)
        if value is _POISON:
            self.env[node] = _POISON
            return
        if not isinstance(value, list) or not isinstance(index, int) or not -len(value) <= index < len(value):
            self.problem(node, "operator.getitem", f"projection [{index}] of a value that is not a list of outputs")
            self.env[node] = _POISON
            return
        item = value[index]
        if item is None:
            self.problem(node, op_name(source.target), f"output {index} is not provided by the translation")
            self.env[node] = _POISON
            return
        assert is_expr(item)
        named = self.rename(item, self.span(node, binding=node.name), self.unnamed.get(source))
        value[index] = named
        self.env[node] = named

    # -- arguments -------------------------------------------------------------------------

    def bind(self, node: Any) -> dict[str, object]:
        """The node's arguments by schema name, defaults included, FX nodes replaced by values."""
        schema = node.target._schema
        out: dict[str, object] = {}
        positional = [a for a in schema.arguments if not a.kwarg_only]
        for arg, value in zip(positional, node.args):
            out[arg.name] = self.value(value)
        for key, value in node.kwargs.items():
            out[key] = self.value(value)
        for arg in schema.arguments:
            if arg.name not in out and arg.has_default_value():
                out[arg.name] = arg.default_value
        return out

    def value(self, value: object) -> object:
        if isinstance(value, torch.fx.Node):
            found = self.env.get(value, _POISON)
            if found is _POISON:
                raise _Skip
            if isinstance(found, list):
                raise RuleError(f"it reads all outputs of {value.name} at once (only their projections are supported)")
            return found
        if isinstance(value, (list, tuple)):
            return [self.value(v) for v in value]
        return value

    # -- results ---------------------------------------------------------------------------

    def finish(self, node: Any, ctx: NodeContext, result: object, span: Span | None) -> object:
        """Check the rule's result against torch's types and give it the node's name."""
        named = self.span(node, binding=node.name)
        val = node.meta.get("val")
        if isinstance(result, tuple):
            if not isinstance(val, (list, tuple)) or len(val) != len(result):
                raise RuleError("the rule's outputs do not match the node's")
            outs: list[Expr | None] = []
            for i, (item, v) in enumerate(zip(result, val)):
                outs.append(None if item is None else self.checked(item, fake_type(v, self.symbols, f"output {i}")))
            self.unnamed[node] = span  # getitem names the output it projects
            return outs
        assert is_expr(result)
        return self.rename(self.checked(result, ctx.out), named, span)

    def checked(self, expr: Expr, want: TensorType) -> Expr:
        have = self.infer(expr)
        if have == want:
            return expr
        if (
            not isinstance(have, TensorType)
            or have.dtype != want.dtype
            or len(have.shape) != len(want.shape)
            or not all(same_dim(a, b) for a, b in zip(have.shape, want.shape))
        ):
            raise RuleError(f"the translation computes {have} where torch computes {want}")
        respelled = hir.reshape(expr, shape=want.shape, span=expr.span)
        respelled.with_checked_type(want)
        return respelled

    def rename(self, expr: Expr, named: Span | None, unnamed: Span | None) -> Expr:
        """``expr`` bound to the FX node's name when the rule made it (identity ops keep
        their operand's name)."""
        if named is None or unnamed is None or not isinstance(expr, Call) or expr.span is not unnamed:
            return expr
        out = Call(expr.target, expr.args, span=named)
        out.with_checked_type(expr.checked_type)
        return out

    def outputs(self, output: Any) -> Expr | None:
        if output is None:
            self.problems.append(Problem(_NO_TRACE_FILE, "output", "the graph has no output node"))
            return None
        user: list[Expr] = []
        (values,) = output.args
        results = list(values) if isinstance(values, (list, tuple)) else [values]
        specs = list(self.program.graph_signature.output_specs)
        for i, value in enumerate(results):
            kind = getattr(getattr(specs[i], "kind", None), "name", "USER_OUTPUT") if i < len(specs) else "USER_OUTPUT"
            if kind != "USER_OUTPUT":
                self.mutated_output(value, kind, getattr(specs[i], "target", None))
                continue
            found = self.env.get(value, _POISON) if isinstance(value, torch.fx.Node) else value
            if found is _POISON:
                continue
            if not is_expr(found):
                self.problem(output, "output", f"output {i} is {type(found).__name__}, not a tensor")
                continue
            user.append(found)
        if len(user) != len(results) or self.problems:
            return None
        if len(user) == 1:
            return user[0]
        body = Tuple(tuple(user))
        body.with_checked_type(TupleType(tuple(self.infer(u) for u in user)))
        return body

    def mutated_output(self, value: object, kind: str, target: object) -> None:
        """Refuse a write to program state that torch.export made an extra output (a buffer
        the model assigns into, an input it mutates): at the line that computed the new value."""
        what = MUTATED_OUTPUTS.get(kind, kind)
        node = value if isinstance(value, torch.fx.Node) else None
        reason = (
            f"the program writes into the {what} {target} in place (torch.export: {kind}); an HIR program "
            "returns values and has no state to write, so the write is refused rather than dropped (clone the "
            f"{what} and write into the clone, or return the new value)"
        )
        if node is None:
            self.problems.append(Problem(_NO_TRACE_FILE, "output", reason))
        else:
            self.problem(node, f"write to {what} {target}", reason)

    # -- helpers ---------------------------------------------------------------------------

    def span(self, node: Any, binding: str | None) -> Span:
        """The node's span: its user's source line, or ``<torch.export>:0:0`` without a trace.

        Every call gets a fresh ``Span``: a rule's nodes are recognised by carrying it.
        """
        span = node_span(node.meta.get("stack_trace"), binding)
        return span if span is not None else Span(_NO_TRACE_FILE, 0, 0, binding)

    def problem(self, node: Any, op: str, reason: str | None) -> None:
        """Record that ``node`` (at its user's source line) could not be translated."""
        trace = node.meta.get("stack_trace")
        span = node_span(trace, node.name)
        where = f"{span.location() if span is not None else _NO_TRACE_FILE} {node.name} ="
        self.problems.append(Problem(where, op, reason, source_text(trace)))

    def size_value(self, dim: ShapeDim, span: Span | None) -> Expr:
        """``dim`` as a rank-0 ``i64`` computed at run time: a ``DimVar`` as the sum of a
        ``full`` of ones of that size, a ``DimExpr`` with the ``dim_*`` ops."""
        if isinstance(dim, int):
            c = Constant(dim, TensorType((), DType.int64), weak=True)
            c.with_checked_type(c.type)
            return c
        found = self.sizes.get(dim)
        if found is not None:
            return found
        where = span or Span(_NO_TRACE_FILE, 0, 0)
        out: Expr
        if isinstance(dim, DimVar):
            ones = hir.full(shape=(dim,), value=1, dtype=DType.int64, span=Span(where.file, where.line, where.column))
            out = hir.reduce(ones, kind="sum", span=Span(where.file, where.line, where.column, f"size_{dim.name}"))
        else:
            assert isinstance(dim, DimExpr)
            build = {
                "add": hir.dim_add, "sub": hir.dim_sub, "mul": hir.dim_mul, "floordiv": hir.dim_floordiv,
                "mod": hir.dim_mod, "min": hir.dim_min, "max": hir.dim_max,
            }[dim.op]
            out = build(self.size_value(dim.lhs, span), self.size_value(dim.rhs, span), span=Span(where.file, where.line, where.column))
        self.infer(out)
        self.sizes[dim] = out
        return out

    def infer(self, root: Expr) -> Type:
        """The HIR type of ``root``, inferring (and recording) the types of the nodes a rule
        built; operands translated earlier are typed already."""
        stack: list[tuple[Expr, bool]] = [(root, False)]
        while stack:
            node, ready = stack.pop()
            if node.checked_type is not None:
                continue
            if not ready:
                stack.append((node, True))
                stack.extend((c, False) for c in children_of(node) if c.checked_type is None)
                continue
            node.with_checked_type(type_of_node(node))
        assert root.checked_type is not None
        return root.checked_type


class _Skip(Exception):
    """A node reads a failed node: skip it (the failure is reported where it happened)."""
