"""Loops (hir §1.2): how many times a ``GridRegionExpr`` runs, the same rule on both routes."""

from tfexec.errors import EvalError
from tfexec.ir.describe import describe_expr
from tfexec.ir.dims import DimError, resolve_dim
from tfexec.ir.expr import GridRegionExpr
from tfexec.semantics.context import EvaluateContext


def trip_count(region: GridRegionExpr, ctx: EvaluateContext) -> int:
    """How many times a loop runs; a negative extent, or zero trips without carries, is an error."""
    try:
        n = resolve_dim(region.extent, ctx.dim_bindings)
    except DimError as exc:
        raise EvalError(f"{describe_expr(region)}: extent {region.extent}: {exc}") from None
    if n < 0:
        raise EvalError(f"{describe_expr(region)}: extent {region.extent} = {n} is negative")
    if n == 0 and not region.carried_args:
        raise EvalError(
            f"{describe_expr(region)}: the loop runs zero times and has no carried values, so it has no value"
        )
    return n
