"""The delta-debugging search: bisect then linear, each set tested once, 1-minimal results."""

import itertools

import pytest
from hypothesis import given, strategies as st

from tfexec.reduce import Step
from tfexec.reduce._search import Search


def _run(n: int, fails: "set[int] | frozenset[int]", **kw: object) -> tuple[Search, list[tuple[int, ...]]]:
    asked: list[tuple[int, ...]] = []

    def test(kept: tuple[int, ...]) -> bool:
        asked.append(kept)
        return set(fails) <= set(kept)

    search = Search(n, test, **kw)  # type: ignore[arg-type]
    search.run()
    return search, asked


def test_one_culprit_among_many_is_found_by_bisection_in_few_checks() -> None:
    search, asked = _run(200, {137})
    assert search.kept == (137,) and search.phase == "done"
    assert len(asked) <= 2 * 8 + 2  # about two checks per halving, then one linear check


def test_two_distant_culprits_are_both_kept() -> None:
    search, _ = _run(64, {3, 60})
    assert search.kept == (3, 60)


def test_no_set_is_tested_twice_and_the_empty_set_never() -> None:
    _, asked = _run(40, {5, 17, 33})
    assert len(asked) == len(set(asked)) and () not in asked


@given(st.integers(1, 30), st.sets(st.integers(0, 29), min_size=1, max_size=4), st.integers(0, 2**16))
def test_the_result_is_1_minimal_for_any_predicate(n: int, culprits: set[int], seed: int) -> None:
    """A non-monotone predicate (an arbitrary function of the set) too: no single removal
    from the result still fails."""
    culprits = {c % n for c in culprits}

    def fails(kept: tuple[int, ...]) -> bool:
        return culprits <= set(kept) and (hash((seed, len(kept))) % 3 != 0 or len(kept) == n)

    search = Search(n, fails)
    assert search.run()
    result = search.kept
    assert fails(result)
    for i in result:
        rest = tuple(k for k in result if k != i)
        assert not rest or not fails(rest)


def test_progress_reports_phases_and_shrinking() -> None:
    steps: list[Step] = []
    _run(16, {9}, progress=steps.append)
    assert steps[0].phase == "start" and steps[-1].phase == "done"
    assert {s.phase for s in steps} >= {"bisect", "linear"}
    lefts = [s.nodes_left for s in steps]
    assert lefts == sorted(lefts, reverse=True) and lefts[-1] == 1 and all(s.nodes_total == 16 for s in steps)
    assert all(s.shrank == (a.nodes_left > s.nodes_left) for a, s in itertools.pairwise(steps) if s.phase != "done")


def test_a_check_budget_stops_with_the_smallest_failing_set_so_far() -> None:
    search = Search(100, lambda kept: 42 in kept, max_checks=3)
    assert search.run() is False
    assert search.checks == 3 and 42 in search.kept and len(search.kept) < 100


@pytest.mark.parametrize("n", [1, 2, 3])
def test_tiny_sets(n: int) -> None:
    search, _ = _run(n, {n - 1})
    assert search.kept == (n - 1,)
