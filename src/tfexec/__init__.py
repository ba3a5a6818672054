"""tfexec — the reference interpreter of the TileFoundry HIR.

Every program is computed twice: by the evaluator spec's memoised visitor (``evaluate``)
and by a lowering to a forward-only list of typed closures (``lower``); the two are
compared node by node (``check_equivalence``).
"""

import sys
import types
import warnings
from typing import TYPE_CHECKING

# torch warns once at import when numpy is absent; tfexec never needs numpy (its safetensors
# I/O is numpy-free), so that one message is noise on every command-line run.
warnings.filterwarnings("ignore", message="Failed to initialize NumPy", category=UserWarning)


from tfexec.errors import (
    ArgumentTypeError as ArgumentTypeError,
    DimError as DimError,
    EquivalenceError as EquivalenceError,
    EvalError as EvalError,
    IRConstructionError as IRConstructionError,
    LoweringError as LoweringError,
    ModuleLoadError as ModuleLoadError,
    ParseError as ParseError,
    RegistryError as RegistryError,
    TfexecError as TfexecError,
    TypeCheckError as TypeCheckError,
    TypeInferenceError as TypeInferenceError,
    TypeRuleError as TypeRuleError,
)
from tfexec.semantics import rules as _rules  # noqa: F401  (registers the value rules)
from tfexec.semantics.context import EvaluateContext as EvaluateContext
from tfexec.semantics.layouts import as_layout_view as as_layout_view, from_layout_view as from_layout_view
from tfexec.semantics.registry import (
    Arg as Arg,
    Kernel as Kernel,
    eval_registry as eval_registry,
    register_eval as register_eval,
    value_rule as value_rule,
)
from tfexec.semantics.values import TensorValue as TensorValue, TupleValue as TupleValue, Value as Value
from tfexec.evaluator.visitor import EvaluatorVisitor as EvaluatorVisitor, evaluate as evaluate
from tfexec.equivalence import (
    EquivalenceReport as EquivalenceReport,
    assert_equivalent as assert_equivalent,
    check_equivalence as check_equivalence,
)
from tfexec.forward.data import ForwardData as ForwardData
from tfexec.forward.graph import ForwardGraph as ForwardGraph
from tfexec.forward.lower import lower as lower
from tfexec.forward.node import ForwardNode as ForwardNode, Read as Read
from tfexec.infer import infer_types as infer_types
from tfexec.ir.describe import describe_expr as describe_expr
from tfexec.ir.dims import DimExpr as DimExpr, DimVar as DimVar, ShapeDim as ShapeDim, resolve_dim as resolve_dim
from tfexec.ir.dtypes import DType as DType
from tfexec.ir.types import (
    b1 as b1,
    bf16 as bf16,
    f16 as f16,
    f32 as f32,
    f64 as f64,
    i8 as i8,
    i16 as i16,
    i32 as i32,
    i64 as i64,
    u8 as u8,
)
from tfexec.ir.expr import (
    Call as Call,
    Constant as Constant,
    ConstTensor as ConstTensor,
    Expr as Expr,
    Function as Function,
    GridRegionExpr as GridRegionExpr,
    Tuple as Tuple,
    TupleGetItem as TupleGetItem,
    Var as Var,
)
from tfexec.ir.module import IRModule as IRModule
from tfexec.ir.ops.base import Op as Op, Operand as Operand
from tfexec.ir.span import Span as Span
from tfexec.ir.types import (
    Layout as Layout,
    Mesh as Mesh,
    Replicate as Replicate,
    ShardLayout as ShardLayout,
    Split as Split,
    TensorType as TensorType,
    TupleType as TupleType,
    Type as Type,
)
from tfexec.loading import LoadedModule as LoadedModule, load_module as load_module, save_module as save_module
from tfexec.visitor import AnalysisRegistry as AnalysisRegistry, ExprMutator as ExprMutator, ExprVisitor as ExprVisitor
from tfexec import ops as ops
from tfexec.text import parse as parse, parse_function as parse_function, print_ir as print_ir, script as script
from tfexec.validate import ValidationReport as ValidationReport, validate as validate

# -- imported when first used ------------------------------------------------------------
# The mesh evaluator (torch.distributed.tensor, and with it sympy), the explorer, the
# reducer and the dump comparison are tools of their own: ``import tfexec`` (which every
# command-line call pays) does not load them; the first use of one of these names does.
# mypy reads the TYPE_CHECKING imports, so their types are checked as if imported here.
if TYPE_CHECKING:
    from tfexec.compare import compare_tables as compare_tables
    from tfexec.explain import explain as explain
    from tfexec.mesh import evaluate_mesh as evaluate_mesh
    from tfexec.reduce import Reduced as Reduced, reduce_failing as reduce_failing

_LAZY = frozenset({"compare_tables", "explain", "evaluate_mesh", "Reduced", "reduce_failing"})
"""Public names imported on first use (each from the module its TYPE_CHECKING import names)."""

if not TYPE_CHECKING:

    def __getattr__(name: str) -> object:
        """``tfexec.<name>`` for a name of ``_LAZY``: import its module now, and keep the name."""
        match name:
            case "compare_tables":
                from tfexec.compare import compare_tables as value
            case "explain":
                from tfexec.explain import explain as value
            case "evaluate_mesh":
                from tfexec.mesh import evaluate_mesh as value
            case "Reduced":
                from tfexec.reduce import Reduced as value
            case "reduce_failing":
                from tfexec.reduce import reduce_failing as value
            case _:
                raise AttributeError(f"module 'tfexec' has no attribute {name!r}")
        globals()[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(globals()) | _LAZY)


class _Facade(types.ModuleType):
    """The ``tfexec`` module object: importing the package ``tfexec.explain`` does not replace
    the function ``tfexec.explain`` (Python sets a package's name on its parent when it is
    first imported; before, the eager ``from tfexec.explain import explain`` rebound it)."""

    def __setattr__(self, name: str, value: object) -> None:
        if name in _LAZY and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Facade

__all__ = [
    "parse", "parse_function", "print_ir", "script",
    "AnalysisRegistry", "Arg", "ArgumentTypeError", "DimError", "Kernel", "Operand", "Read", "RegistryError",
    "TypeCheckError", "TypeRuleError", "value_rule", "EquivalenceReport", "ForwardData", "ForwardGraph", "ForwardNode", "assert_equivalent", "check_equivalence", "lower", "Call", "ConstTensor", "Constant", "DType", "DimExpr", "DimVar", "EquivalenceError",
    "EvalError", "EvaluateContext", "EvaluatorVisitor", "Expr", "ExprMutator", "ExprVisitor", "Function",
    "GridRegionExpr", "IRConstructionError", "IRModule", "Layout", "LoadedModule", "LoweringError", "Mesh",
    "ModuleLoadError", "Op", "ParseError", "Replicate", "ShapeDim", "ShardLayout", "Span", "Split", "TensorType",
    "TensorValue", "TfexecError", "Tuple", "TupleGetItem", "TupleType", "TupleValue", "Type", "TypeInferenceError",
    "Value", "Var", "as_layout_view", "b1", "bf16", "describe_expr", "eval_registry", "evaluate", "evaluate_mesh", "f16", "f32",
    "f64", "from_layout_view", "i16", "i32", "i64", "i8", "infer_types", "ops", "register_eval", "resolve_dim", "u8",
    "load_module", "save_module",
    "compare_tables", "Reduced", "reduce_failing",
    "ValidationReport", "validate",
    "explain",
]
