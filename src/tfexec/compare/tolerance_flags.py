"""The command line's tolerance flags, read by one parser for every command that takes them
(``tfexec check --rtol/--atol``, ``check --against torch --tol``, ``tfexec diff``).

``--rtol``/``--atol`` set every float dtype's tolerance, ``--tol DTYPE=RTOL,ATOL`` one dtype's,
``--exact`` every dtype's to equality. A tolerance is a finite number >= 0: a negative one
would refuse everything, NaN compares with nothing and an infinite one accepts every value,
so each is a mistake on the command line (``ToleranceFlagError``, exit 2), said in one message.
"""

import math
from collections.abc import Sequence

from tfexec.compare._tolerance import DEFAULT_TOLERANCES, EXACT, Tolerance
from tfexec.ir.dtypes import DType

RULE = "a tolerance must be a finite number >= 0"


class ToleranceFlagError(ValueError):
    """A tolerance flag the command line got wrong (the commands exit 2)."""


def checked(value: float | None, flag: str) -> float | None:
    """``value`` of ``flag`` (``--rtol``, say; None when absent) if it is a tolerance."""
    if value is not None and not (math.isfinite(value) and value >= 0):
        raise ToleranceFlagError(f"{flag} {value:g}: {RULE}")
    return value


def parse_tolerances(
    items: Sequence[str], rtol: float | None = None, atol: float | None = None, exact: bool = False
) -> dict[DType, Tolerance]:
    """The tolerance overrides a command line asks for: ``--rtol``/``--atol`` for every float
    dtype (each dtype's default for the one not given), then ``--tol`` items, or ``--exact``."""
    rtol, atol = checked(rtol, "--rtol"), checked(atol, "--atol")
    out: dict[DType, Tolerance] = {}
    for dtype in DType:
        default = DEFAULT_TOLERANCES.get(dtype)
        if exact:
            out[dtype] = EXACT
        elif default is not None and (rtol is not None or atol is not None):
            out[dtype] = Tolerance(default.rtol if rtol is None else rtol, default.atol if atol is None else atol)
    for item in items:
        dtype, tolerance = _dtype_tolerance(item)
        out[dtype] = tolerance
    return out


def _dtype_tolerance(item: str) -> tuple[DType, Tolerance]:
    """One ``--tol DTYPE=RTOL,ATOL``."""
    name, _, values = item.partition("=")
    parts = values.split(",")
    try:
        dtype = DType.from_short(name.strip())
        if len(parts) != 2:
            raise ValueError(item)
        rtol, atol = float(parts[0]), float(parts[1])
    except ValueError:
        raise ToleranceFlagError(f"--tol expects DTYPE=RTOL,ATOL (e.g. bf16=2e-2,1e-3), got {item!r}") from None
    for value in (rtol, atol):
        if not (math.isfinite(value) and value >= 0):
            raise ToleranceFlagError(f"--tol {item}: {RULE}")
    return dtype, Tolerance(rtol, atol)
