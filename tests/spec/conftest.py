"""Fixtures of the evaluator-spec tests: every test starts with clean op counters."""

from collections.abc import Iterator

import pytest

import spec_helpers


@pytest.fixture(autouse=True)
def _clean_counters() -> Iterator[None]:
    spec_helpers.reset()
    yield
    spec_helpers.reset()
