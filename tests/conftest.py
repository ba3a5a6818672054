"""Shared test configuration: hypothesis profiles (small by default, larger under -m slow), and
a failed property test that says how to reproduce it."""

from collections.abc import Generator

import pytest
from hypothesis import HealthCheck, settings

# print_blob: a failure prints the @reproduce_failure(...) line that replays its example.
settings.register_profile(
    "default", max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow], print_blob=True
)
settings.register_profile(
    "slow", max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow], print_blob=True
)
settings.load_profile("default")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """A failed property test's report names the seed Hypothesis drew its examples from (it
    prints it itself only for a flaky failure), so the whole run can be replayed."""
    report = yield
    seed = getattr(getattr(item, "obj", None), "_hypothesis_internal_use_generated_seed", None)
    if report.failed and call.when == "call" and seed is not None:
        report.sections.append(
            ("Hypothesis seed", f"rerun with: pytest '{item.nodeid}' --hypothesis-seed={seed}  (or add @seed({seed}))")
        )
    return report
