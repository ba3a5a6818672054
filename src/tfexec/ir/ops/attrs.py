"""Checks of static attributes, shared by the op classes of catalogue v2.

Each op class checks its attributes' kinds when it is built (``__post_init__``) and raises a
``TypeError`` naming the op and the attribute: ``cumsum axis must be an int, got 1.5``.
Values that depend on the operands (an axis in range, a kernel that fits) are the type
rule's business, not these checks'.
"""

from collections.abc import Sequence

from tfexec.ir.dims import ShapeDim, is_shape_dim


def is_int(value: object) -> bool:
    """Whether ``value`` is a Python int and not a bool."""
    return isinstance(value, int) and not isinstance(value, bool)


def check_int(owner: str, field: str, value: object, *, minimum: int | None = None) -> None:
    """``value`` is an int (at least ``minimum`` when given)."""
    if not is_int(value):
        raise TypeError(f"{owner} {field} must be an int, got {value!r}")
    assert isinstance(value, int)
    if minimum is not None and value < minimum:
        raise TypeError(f"{owner} {field} must be at least {minimum}, got {value}")


def check_optional_int(owner: str, field: str, value: object, *, minimum: int | None = None) -> None:
    """``value`` is None or an int (at least ``minimum``)."""
    if value is not None:
        check_int(owner, field, value, minimum=minimum)


def check_ints(owner: str, field: str, value: object, *, minimum: int | None = None, length: int | None = None) -> None:
    """``value`` is a tuple of ints (each at least ``minimum``; ``length`` of them when given)."""
    if not isinstance(value, tuple) or not all(is_int(v) for v in value):
        raise TypeError(f"{owner} {field} must be a tuple of ints, got {value!r}")
    if minimum is not None and any(v < minimum for v in value):
        raise TypeError(f"{owner} {field} must hold ints of at least {minimum}, got {value!r}")
    if length is not None and len(value) != length:
        raise TypeError(f"{owner} {field} must hold {length} int(s), got {value!r}")


def check_optional_ints(owner: str, field: str, value: object, *, minimum: int | None = None) -> None:
    """``value`` is None or a tuple of ints."""
    if value is not None:
        check_ints(owner, field, value, minimum=minimum)


def check_dims(owner: str, field: str, value: object) -> None:
    """``value`` is a tuple of non-negative ``ShapeDim``s."""
    if not isinstance(value, tuple) or not all(is_shape_dim(d) for d in value):
        raise TypeError(f"{owner} {field} must be a tuple of int/DimVar/DimExpr, got {value!r}")
    if any(isinstance(d, int) and d < 0 for d in value):
        raise TypeError(f"{owner} {field} must not contain negative sizes, got {value!r}")


def check_bool(owner: str, field: str, value: object) -> None:
    """``value`` is a bool."""
    if not isinstance(value, bool):
        raise TypeError(f"{owner} {field} must be True or False, got {value!r}")


def check_number(owner: str, field: str, value: object) -> None:
    """``value`` is an int or a float (not a bool)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{owner} {field} must be a number, got {value!r}")


def check_optional_number(owner: str, field: str, value: object) -> None:
    """``value`` is None, an int or a float."""
    if value is not None:
        check_number(owner, field, value)


def check_choice(owner: str, field: str, value: object, choices: Sequence[str]) -> None:
    """``value`` is one of the strings ``choices``."""
    if value not in choices:
        raise TypeError(f"{owner} {field} must be one of {', '.join(repr(c) for c in choices)}, got {value!r}")

