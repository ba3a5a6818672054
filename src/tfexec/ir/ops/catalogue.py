"""The op catalogue v1: every op class, by text spelling."""

from tfexec.ir.ops.base import Op
from tfexec.ir.ops.creation import Arange, Full
from tfexec.ir.ops.dimarith import DIM_OPS
from tfexec.ir.ops.distribution import Local, Reshard
from tfexec.ir.ops.elementwise import BINARY_OPS, UNARY_OPS, Cast, Where
from tfexec.ir.ops.linalg import MatMul
from tfexec.ir.ops.norm import LayerNorm, RmsNorm, Softmax
from tfexec.ir.ops.reduction import ArgMax, Reduce
from tfexec.ir.ops.shape import BroadcastTo, Concat, Reshape, Slice, Take, Transpose

ALL_OPS: tuple[type[Op], ...] = (
    *BINARY_OPS,
    *UNARY_OPS,
    Cast,
    Where,
    MatMul,
    Reduce,
    ArgMax,
    Softmax,
    RmsNorm,
    LayerNorm,
    Reshape,
    Transpose,
    BroadcastTo,
    Concat,
    Slice,
    Take,
    Full,
    Arange,
    Reshard,
    Local,
    *DIM_OPS,
)

OPS_BY_NAME: dict[str, type[Op]] = {cls.name: cls for cls in ALL_OPS}
