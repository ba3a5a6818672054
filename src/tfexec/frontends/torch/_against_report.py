"""What ``check_against_torch`` returns: the per-node comparison, the unpaired nodes of
each side, and how close the closest call came (the worst ``|Δ|`` relative to its
tolerance)."""

from dataclasses import dataclass

import torch

from tfexec.compare import ComparisonReport, NodeComparison, Tolerance
from tfexec.frontends.torch._pairing import Pairing, Unpaired
from tfexec.ir.span import display_location


@dataclass(frozen=True, slots=True)
class Margin:
    """The worst element of one node: ``|actual - expected| / (atol + rtol * |expected|)``
    (0 when equal; above 1 is beyond the tolerance; ``inf`` for a difference an exact dtype
    does not allow, or a dtype or shape that differs)."""

    key: str
    ratio: float


def margin(expected: torch.Tensor, actual: torch.Tensor, tolerance: Tolerance) -> float:
    """The ``Margin.ratio`` of ``actual`` against ``expected``."""
    if expected.dtype != actual.dtype or expected.shape != actual.shape:
        return float("inf")
    if expected.numel() == 0:
        return 0.0
    e, a = expected.detach().cpu(), actual.detach().cpu()
    if not e.dtype.is_floating_point:
        return 0.0 if torch.equal(e, a) else float("inf")
    e64, a64 = e.double(), a.double()
    same = (e64 == a64) | (e64.isnan() & a64.isnan())
    bound = tolerance.atol + tolerance.rtol * e64.abs()
    diff = (a64 - e64).abs()
    ratio = torch.where(same, torch.zeros_like(diff), diff / bound)  # 0 / 0 only where equal
    return float(torch.nan_to_num(ratio, nan=float("inf"), posinf=float("inf")).max())


@dataclass(frozen=True)
class TorchCheckReport:
    """The outcome of ``check_against_torch``.

    ``comparison`` is the per-node table (``tfexec.compare.ComparisonReport``: expected is
    PyTorch, actual is tfexec; rows in FX graph order, each with the user's source line);
    ``pairing`` says which FX node each row's HIR node came from and lists the nodes with no
    counterpart; ``worst`` is the node closest to (or furthest beyond) its tolerance.
    """

    comparison: ComparisonReport
    pairing: Pairing
    worst: Margin | None

    @property
    def ok(self) -> bool:
        """Whether every paired node agrees within its dtype's tolerance (and one was compared)."""
        return self.comparison.ok

    @property
    def first_divergence(self) -> NodeComparison | None:
        """The first paired node, in topological order, whose values diverge."""
        return self.comparison.first_divergence

    @property
    def unpaired(self) -> tuple[Unpaired, ...]:
        """The HIR nodes with no FX node of their own, then the FX nodes with no HIR node."""
        return self.pairing.unpaired_hir + self.pairing.unpaired_fx

    def __str__(self) -> str:
        lines = [str(self.comparison), ""]
        for side, title in (("hir", "HIR nodes with no FX node of their own"), ("fx", "FX nodes with no HIR node of their own")):
            rows = [u for u in self.unpaired if u.side == side]
            if rows:
                lines.append(f"unpaired (not compared, not failures): {len(rows)} {title}")
                lines.extend(f"  {u.name}  {u.op}  {display_location(u.location)}  {u.why}".rstrip() for u in rows)
        lines.append(self.summary())
        first = self.first_divergence
        if first is not None and first.source:
            lines.append(f"  {first.location} | {first.source}")
        return "\n".join(lines)

    def summary(self) -> str:
        """The verdict line: paired nodes compared, divergences, the worst margin, unpaired counts."""
        c = self.comparison
        verdict = "OK" if c.ok else "MISMATCH"
        text = f"{verdict} against PyTorch: {c.compared} paired node(s) compared, {len(c.mismatches)} diverge"
        if self.worst is not None and self.worst.ratio == 0:
            text += "; every compared value is equal to PyTorch's"
        elif self.worst is not None:
            text += f"; worst |Δ| is {self.worst.ratio:.3g} of its tolerance (at {self.worst.key})"
        hir, fx = len(self.pairing.unpaired_hir), len(self.pairing.unpaired_fx)
        text += f"; unpaired: {hir} HIR node(s), {fx} FX node(s) (listed, not failures)"
        if c.compared == 0:
            text += "; nothing was compared"
        return text + c.divergence_clause()
