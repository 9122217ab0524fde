"""The math workload's items: generated, labelled by construction, and math-verify agrees with
every label (checked here on enough items to cover every kind many times, right and wrong)."""

from __future__ import annotations

from collections import Counter
from decimal import Decimal
from fractions import Fraction

import pytest

from asyncpool._bench import math_answers


def test_items_are_deterministic_distinct_and_mix_every_kind_right_and_wrong() -> None:
    many = math_answers.items(600)
    assert many == math_answers.items(600)
    assert many[:50] == math_answers.items(50)
    assert math_answers.items(50, seed=1) != many[:50]
    assert len({(it.gold, it.answer) for it in many}) > 590  # (almost) no pair repeats
    assert Counter((it.kind, it.expected) for it in many[:12]) == Counter(
        {(kind, label): 1 for kind in math_answers.KINDS for label in (True, False)}
    )
    assert sum(it.expected for it in many) == 300
    assert math_answers.items(0) == []


@pytest.mark.parametrize(("n", "error"), [(-1, ValueError), (2.0, TypeError), (True, TypeError)])
def test_items_rejects_bad_sizes(n: object, error: type) -> None:
    with pytest.raises(error):
        math_answers.items(n)  # type: ignore[arg-type]


def test_fraction_items_are_labelled_by_exact_arithmetic() -> None:
    """Independently of math-verify: the decimal shown equals the gold fraction exactly when
    the item is labelled right."""
    seen = 0
    for it in math_answers.items(600):
        if it.kind != "fraction_as_decimal":
            continue
        num, den = it.gold.removeprefix("$\\frac{").removesuffix("}$").split("}{")
        shown = Fraction(Decimal(it.answer.strip("$")))
        assert (shown == Fraction(int(num), int(den))) == it.expected, it
        seen += 1
    assert seen == 100


def test_math_verify_agrees_with_every_label() -> None:
    wrong = [
        (it.kind, it.gold, it.answer, it.expected)
        for it in math_answers.items(600)
        if math_answers.check(it.gold, it.answer) != it.expected
    ]
    assert wrong == []


def test_check_pair_is_check_of_the_pair() -> None:
    right, *_ = math_answers.items(1)
    assert right.expected
    assert math_answers.check_pair((right.gold, right.answer)) is True
    assert math_answers.check_pair((right.gold, "$-12345$")) is False
