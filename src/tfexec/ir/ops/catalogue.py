"""The op catalogue: every op class, family by family (each family module lists its classes in
a ``*_OPS`` tuple), and by text spelling. ``tfexec.ops``, the text form, docs/ops.md and the
tests that cover every op all read ``ALL_OPS``."""

from tfexec.ir.ops.activation import ACTIVATION_OPS
from tfexec.ir.ops.aggregate import AGGREGATE_OPS
from tfexec.ir.ops.attention import ATTENTION_OPS
from tfexec.ir.ops.base import Op
from tfexec.ir.ops.channel_norm import CHANNEL_NORM_OPS
from tfexec.ir.ops.conv import CONV_OPS
from tfexec.ir.ops.creation import Arange, Full
from tfexec.ir.ops.dimarith import DIM_OPS
from tfexec.ir.ops.distribution import Local, Reshard
from tfexec.ir.ops.elementwise import BINARY_OPS, UNARY_OPS, Cast, Where
from tfexec.ir.ops.indexing import INDEXING_OPS
from tfexec.ir.ops.integer import INTEGER_OPS
from tfexec.ir.ops.linalg import LINALG_V2_OPS, MatMul
from tfexec.ir.ops.norm import LayerNorm, RmsNorm, Softmax
from tfexec.ir.ops.pool import POOL_OPS
from tfexec.ir.ops.rearrange import REARRANGE_OPS
from tfexec.ir.ops.reduction import ArgMax, Reduce
from tfexec.ir.ops.rounding import ROUNDING_OPS
from tfexec.ir.ops.scan import SCAN_OPS
from tfexec.ir.ops.shape import BroadcastTo, Concat, Reshape, Slice, Take, Transpose
from tfexec.ir.ops.sorting import SORTING_OPS
from tfexec.ir.ops.unary_math import UNARY_MATH_OPS

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
    *ROUNDING_OPS,
    *UNARY_MATH_OPS,
    *ACTIVATION_OPS,
    *INTEGER_OPS,
    *SCAN_OPS,
    *INDEXING_OPS,
    *REARRANGE_OPS,
    *SORTING_OPS,
    *AGGREGATE_OPS,
    *CONV_OPS,
    *POOL_OPS,
    *CHANNEL_NORM_OPS,
    *ATTENTION_OPS,
    *LINALG_V2_OPS,
)


OPS_BY_NAME: dict[str, type[Op]] = {cls.name: cls for cls in ALL_OPS}
