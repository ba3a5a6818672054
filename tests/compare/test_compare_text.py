"""text_mismatch: printed text equal except its numbers, the numbers within a tolerance (the
rule the docs check and the value tests use, so a page's example digits pass on any CPU)."""

import pytest

from tfexec.compare import Tolerance, number_mismatch, text_mismatch

SHOWN = (
    "first at [0, 1]: expected 0.5955779552459717, got 0.5956514477729797 (max |Δ| 0.000233)\n"
    "/path/to/docs.py:12:9 | h = gelu(x)\n"
)


def test_other_last_digits_of_the_same_values_agree() -> None:
    # The digits another CPU printed for the same page (issue #26).
    other = SHOWN.replace("0.5956514477729797", "0.5956515073776245").replace("0.000233", "0.000232")
    assert text_mismatch(SHOWN, other) is None
    assert text_mismatch(SHOWN, SHOWN) is None


def test_a_value_beyond_the_tolerance_is_named_with_its_line() -> None:
    wrong = SHOWN.replace("0.5956514477729797", "0.5966514477729797")
    reason = text_mismatch(SHOWN, wrong)
    assert reason is not None and reason.startswith("line 1: expected 0.5956514477729797, got 0.5966514477729797")


@pytest.mark.parametrize(
    ("changed", "where"),
    [
        ("first at [0, 2]", "line 1: expected"),  # an index is an integer: exact
        ("docs.py:13:9", "line 2: expected"),  # a line number too
        ("h = relu(x)", "line 2: expected '/path/to/docs.py:12:9 | h = gelu(x)'"),  # a word
    ],
)
def test_words_and_integers_must_be_equal(changed: str, where: str) -> None:
    original = {"first at [0, 2]": "first at [0, 1]", "docs.py:13:9": "docs.py:12:9", "h = relu(x)": "h = gelu(x)"}[changed]
    reason = text_mismatch(SHOWN, SHOWN.replace(original, changed))
    assert reason is not None and reason.startswith(where), reason


def test_an_extra_or_missing_line_is_a_difference() -> None:
    assert text_mismatch(SHOWN, SHOWN + "more\n") is not None
    assert text_mismatch(SHOWN + "more\n", SHOWN) is not None


def test_the_printed_precision_counts_a_rounding_boundary_between_two_machines() -> None:
    # 20.749... and 20.751... print as 20.7 and 20.8: one unit apart, the same value.
    assert text_mismatch("worst |Δ| is 20.8 of its tolerance.", "worst |Δ| is 20.7 of its tolerance.") is None
    assert text_mismatch("worst |Δ| is 20.8 of its tolerance.", "worst |Δ| is 20.6 of its tolerance.") is not None
    assert text_mismatch("tensor([0.5957])", "tensor([0.5956])") is None
    assert text_mismatch("tensor([0.5957])", "tensor([0.5954])") is not None


def test_alignment_padding_next_to_a_number_may_differ() -> None:
    assert text_mismatch("tensor([ 0.0000, -1.5000])", "tensor([-0.0000, -1.5000])") is None
    assert text_mismatch("| 0.000233 |", "|  0.00023 |") is None
    assert text_mismatch("a b", "ab") is not None  # spaces between words are not padding


def test_numbers_inside_words_are_words() -> None:
    assert text_mismatch("f32[2]", "f16[2]") is not None
    assert text_mismatch("sha256 2f20cd", "sha256 2f20ce") is not None
    assert text_mismatch("x = f32[2] [-0.5, 0.0]", "x = f32[2] [-0.5, 1e-09]") is None


def test_nan_and_infinities() -> None:
    assert number_mismatch("nan", "nan") is None and number_mismatch("-inf", "-inf") is None
    assert number_mismatch("inf", "-inf") is not None and number_mismatch("nan", "0.0") is not None
    assert number_mismatch("0.0", "nan") is not None


def test_integers_exact_floats_with_their_printed_unit() -> None:
    assert number_mismatch("119", "120") is not None
    assert number_mismatch("0", "2e-07") is None  # '.3g' prints an exact zero as '0'
    assert number_mismatch("1.3e-06", "1.3e-06") is None
    assert number_mismatch("1.0", "1.1", Tolerance(0.0, 0.0)) is not None


def test_a_wildcard_stands_for_any_text_and_within_finds_whole_lines() -> None:
    assert text_mismatch("got 0.5956 (...)", "got 0.59561 (anything here)", wildcard="...") is None
    assert text_mismatch("got 0.5956 (...)", "got 0.5999 (anything here)", wildcard="...") is not None
    printed = "the table\n" + SHOWN.replace("0.000233", "0.000232") + "after\n"
    assert text_mismatch(SHOWN.strip(), printed, within=True) is None
    assert text_mismatch(SHOWN.strip().replace("gelu", "relu"), printed, within=True) is not None
