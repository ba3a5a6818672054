"""Element types (types §1): ``DType``, and its ``torch.dtype`` both ways.

The short spellings that build tensor types (``f32[B, 64]``) live with ``TensorType`` in
``ir.types``, which this module sits below.
"""

import builtins
import enum
import torch as _torch


class DType(enum.Enum):
    """An element type of the IR; each member maps one-to-one onto a ``torch.dtype``."""

    bool = "b1"
    int8 = "i8"
    int16 = "i16"
    int32 = "i32"
    int64 = "i64"
    uint8 = "u8"
    float16 = "f16"
    bfloat16 = "bf16"
    float32 = "f32"
    float64 = "f64"

    @property
    def torch(self) -> _torch.dtype:
        """The matching ``torch.dtype``."""
        return _TO_TORCH[self]

    @property
    def short(self) -> str:
        """The text-format spelling (``f32``)."""
        return self.value

    @property
    def is_floating(self) -> builtins.bool:
        return self in _FLOATING

    @property
    def is_integral(self) -> builtins.bool:
        """True for integer types (not ``bool``)."""
        return self in _INTEGRAL

    @staticmethod
    def from_torch(dtype: _torch.dtype) -> "DType":
        """The ``DType`` of a ``torch.dtype``; a dtype the IR does not name is a ``TypeError``."""
        try:
            return _FROM_TORCH[dtype]
        except KeyError:
            names = ", ".join(str(d) for d in _FROM_TORCH)
            raise TypeError(f"torch dtype {dtype} has no HIR DType; supported: {names}") from None

    @staticmethod
    def from_short(name: str) -> "DType":
        """The ``DType`` spelled ``name`` in the text form (``f32``)."""
        for member in DType:
            if member.value == name:
                return member
        raise ValueError(f"unknown dtype {name!r}; expected one of {', '.join(d.value for d in DType)}")

    def __str__(self) -> str:
        return self.value

    def __repr__(self) -> str:
        return f"DType.{self.name}"


_TO_TORCH: dict[DType, _torch.dtype] = {
    DType.bool: _torch.bool,
    DType.int8: _torch.int8,
    DType.int16: _torch.int16,
    DType.int32: _torch.int32,
    DType.int64: _torch.int64,
    DType.uint8: _torch.uint8,
    DType.float16: _torch.float16,
    DType.bfloat16: _torch.bfloat16,
    DType.float32: _torch.float32,
    DType.float64: _torch.float64,
}
_FROM_TORCH: dict[_torch.dtype, DType] = {v: k for k, v in _TO_TORCH.items()}
_FLOATING = frozenset({DType.float16, DType.bfloat16, DType.float32, DType.float64})
_INTEGRAL = frozenset({DType.int8, DType.int16, DType.int32, DType.int64, DType.uint8})
