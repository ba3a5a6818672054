"""Checking a constant's data against its declared type, and spelling dtypes and shapes in messages."""


import torch

from tfexec.errors import ModuleLoadError
from tfexec.ir.dims import DimExpr, DimVar, ShapeDim, resolve_dim
from tfexec.ir.dtypes import DType
from tfexec.ir.types import TensorType
from tfexec.wording import a

# -- shapes and types ---------------------------------------------------------------------


def shape_matches(declared: tuple[ShapeDim, ...], found: tuple[int, ...], dims: dict[str, int]) -> bool:
    """Whether ``found`` has the declared shape; ``DimVar``s bind (consistently) into ``dims``."""
    if len(declared) != len(found):
        return False
    bound = dict(dims)
    for want, size in zip(declared, found):
        if isinstance(want, int):
            if want != size:
                return False
        elif isinstance(want, DimVar):
            if bound.setdefault(want.name, size) != size:
                return False
    for want, size in zip(declared, found):
        if isinstance(want, DimExpr):
            try:
                if resolve_dim(want, bound) != size:
                    return False
            except ValueError:
                pass  # depends on a dim no constant binds: any size fits
    dims.update(bound)
    return True


def spell(dtype: DType | str, shape: tuple[int, ...]) -> str:
    name = dtype.value if isinstance(dtype, DType) else dtype
    return f"{name}[{', '.join(str(s) for s in shape) or '()'}]"


def spell_tensor(data: torch.Tensor) -> str:
    try:
        name: DType | str = DType.from_torch(data.dtype)
    except TypeError:
        name = str(data.dtype)
    return spell(name, tuple(data.shape))


def check_declared(name: str, t: TensorType, data: object, where: str, dims: dict[str, int]) -> torch.Tensor:
    """``data`` as constant ``name`` of type ``t``, or a ``ModuleLoadError`` naming declared vs found."""
    if not isinstance(data, torch.Tensor):
        raise ModuleLoadError(f"constant {name}: declared {t}, but {where} holds {a(type(data).__name__)}, not a tensor")
    if data.dtype != t.dtype.torch or not shape_matches(t.shape, tuple(data.shape), dims):
        raise ModuleLoadError(f"constant {name}: declared {t}, found {spell_tensor(data)} in {where}")
    return data


