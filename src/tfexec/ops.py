"""Every op of the catalogue (hir.md §ops): its builder and its class, and what builders share.

Nothing here is written by hand: an op's builder lives beside its class in
``tfexec.ir.ops.<family>`` (one module per family, each listing its classes in a
``*_OPS`` tuple that ``tfexec.ir.ops.catalogue.ALL_OPS`` gathers), and this module re-exports
every family's builders and classes, so every builder is ``tfexec.ops.NAME``.

Operands are positional, attributes keyword-only. A Python ``bool``/``int``/``float``
operand becomes a weak rank-0 ``Constant`` (``b1``/``i64``/``f32``) that promotes like a
torch Python scalar. Builders build; they never type-check (``infer_types`` does) and the
``dim_*`` builders never fold. What they do check at once is the *kind* of each argument:
an operand that is neither an ``Expr`` nor a Python scalar is an ``IRConstructionError``
naming the operand, and a malformed attribute is a ``TypeError`` naming the attribute
(raised by the op class).
"""

from tfexec.ir.ops.activation import *  # noqa: F403
from tfexec.ir.ops.aggregate import *  # noqa: F403
from tfexec.ir.ops.attention import *  # noqa: F403
from tfexec.ir.ops.catalogue import ALL_OPS as _ALL_OPS
from tfexec.ir.ops.channel_norm import *  # noqa: F403
from tfexec.ir.ops.conv import *  # noqa: F403
from tfexec.ir.ops.creation import *  # noqa: F403
from tfexec.ir.ops.dimarith import *  # noqa: F403
from tfexec.ir.ops.distribution import *  # noqa: F403
from tfexec.ir.ops.elementwise import *  # noqa: F403
from tfexec.ir.ops.indexing import *  # noqa: F403
from tfexec.ir.ops.integer import *  # noqa: F403
from tfexec.ir.ops.linalg import *  # noqa: F403
from tfexec.ir.ops.norm import *  # noqa: F403
from tfexec.ir.ops.pool import *  # noqa: F403
from tfexec.ir.ops.rearrange import *  # noqa: F403
from tfexec.ir.ops.reduction import *  # noqa: F403
from tfexec.ir.ops.rounding import *  # noqa: F403
from tfexec.ir.ops.scan import *  # noqa: F403
from tfexec.ir.ops.shape import *  # noqa: F403
from tfexec.ir.ops.sorting import *  # noqa: F403
from tfexec.ir.ops.unary_math import *  # noqa: F403

# Last: a family module's own ``Operand`` (what a type rule sees) must not replace the builders' one.
from tfexec.ir.operands import DTypeLike as DTypeLike, Operand as Operand, apply as apply, as_dtype as as_dtype  # noqa: E402
from tfexec.ir.operands import as_expr as as_expr, call as call  # noqa: E402
from tfexec.ir.ops.base import Op as Op  # noqa: E402

__all__ = [
    "Operand", "DTypeLike", "as_expr", "as_dtype", "apply", "call", "Op",
    *(cls.name for cls in _ALL_OPS),
    *(cls.__name__ for cls in _ALL_OPS),
]
"""Computed from the catalogue: the helpers, then every op's builder (named as the op) and class."""
