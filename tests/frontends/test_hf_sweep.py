"""Under ``-m slow``: the sweep over transformers' causal-LM list (``hf_sweep.py``): no
architecture imports and gives a value other than PyTorch's; each either matches or is refused
with a reason (or its own tiny config cannot be built, which is not the import's outcome); a
``TIE`` (torch's open choice among equal ``topk`` elements) is reported by the sweep."""

import pytest

pytest.importorskip("transformers", reason="the sweep needs transformers (the dev extra)")

from frontends import hf_sweep  # noqa: E402


def _names() -> list[str]:
    try:
        return hf_sweep.architectures(6)
    except ImportError:
        return []


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("name", _names())
def test_architecture_matches_or_is_refused(name: str) -> None:
    outcome = hf_sweep.run_one(name)
    assert outcome.verdict != "WRONG", outcome
    assert outcome.verdict in ("MATCH", "REFUSED", "TIE", "SETUP")
    if outcome.verdict == "REFUSED":
        assert outcome.detail.strip()
