"""The math workload's items: a gold answer, a model's answer, and whether they agree.

Items are generated, not collected: item ``i`` of a seed is a pure function of ``(seed, i)``,
so any number of items costs nothing to store; each kind draws from thousands of numbers or
more, so a checker's per-process caches rarely see the same pair twice in a run. Each
kind writes the gold answer one way and the model's answer another, as models do (a decimal
for a fraction, an unreduced fraction, ``\\boxed{}`` inside prose, a radical written
differently, solutions listed in another order, a percentage); half the items are right and
half wrong, and every label follows from the arithmetic by which the item was built
(``fractions.Fraction``), not from the checker: ``tests/test_math_workload.py`` checks that
math-verify agrees with every label.

The check itself is :func:`check`: ``math_verify.verify(parse(gold), parse(answer))``, about a
millisecond on a quiet core, the size of check where per-task overhead and batching decide
the rate.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

__all__ = ["KINDS", "MathItem", "check", "check_pair", "item", "items"]


@dataclass(frozen=True, slots=True)
class MathItem:
    """A gold answer, a model's answer to compare with it, and whether they agree."""

    kind: str
    gold: str
    answer: str
    expected: bool


_Maker = Callable[[random.Random, bool], tuple[str, str]]

#: Denominators whose fractions have a terminating decimal (exact, no rounding question).
_TERMINATING = (2, 4, 5, 8, 10, 16, 20, 25, 40, 50, 80, 125)
_SQUARE_FREE = (2, 3, 5, 6, 7, 10, 11, 13, 14, 15, 17, 19, 21, 22, 23, 26, 29, 30, 31, 33, 34,
                35, 37, 38, 39, 41, 42, 43, 46, 47)


def _fraction(rng: random.Random) -> Fraction:
    q = rng.choice(_TERMINATING)
    while True:
        f = Fraction(rng.randint(1, 10 * q), q)
        if f.denominator > 1:
            return f


def _decimal(f: Fraction) -> str:
    """The exact decimal of a fraction whose denominator divides a power of ten."""
    digits = 0
    while (f * 10**digits).denominator != 1:
        digits += 1
    whole = f * 10**digits
    text = str(int(whole)).rjust(digits + 1, "0")
    return f"{text[:-digits]}.{text[-digits:]}" if digits else text


def _frac_decimal(rng: random.Random, right: bool) -> tuple[str, str]:
    f = _fraction(rng)
    shown = f if right else f + Fraction(rng.choice((-1, 1)), 100)
    return f"$\\frac{{{f.numerator}}}{{{f.denominator}}}$", f"${_decimal(shown)}$"


def _frac_unreduced(rng: random.Random, right: bool) -> tuple[str, str]:
    f = _fraction(rng)
    k = rng.randint(2, 9)
    p, q = f.numerator * k, f.denominator * k
    if not right:
        p += rng.choice((-1, 1))  # (kp +- 1) / kq != p / q: kq does not divide +-1
    return (f"$\\frac{{{f.numerator}}}{{{f.denominator}}}$",
            f"We simplify and get $\\frac{{{p}}}{{{q}}}$.")


def _integer_boxed(rng: random.Random, right: bool) -> tuple[str, str]:
    n = rng.randint(-999, 9999)
    shown = n if right else n + rng.choice((-10, -1, 1, 2, 10))
    return f"${n}$", f"Adding the cases, the final answer is $\\boxed{{{shown}}}$."


def _solutions(rng: random.Random, right: bool) -> tuple[str, str]:
    # A list of solutions, compared as a set: "3, -1" against "-1, 3". (math-verify's
    # \\{...\\} sets cost 25-35 ms a check, out of this workload's size class.)
    values = rng.sample(range(-20, 40), rng.randint(2, 3))
    shown = values[::-1]
    if not right:
        shown[rng.randrange(len(shown))] = rng.choice(
            [v for v in range(-20, 40) if v not in values]
        )
    return f"${', '.join(map(str, values))}$", f"${', '.join(map(str, shown))}$"


def _radical(rng: random.Random, right: bool) -> tuple[str, str]:
    a, b = rng.randint(2, 99), rng.choice(_SQUARE_FREE)
    if right:
        return f"${a}\\sqrt{{{b}}}$", f"$\\sqrt{{{a * a * b}}}$"
    return f"${a}\\sqrt{{{b}}}$", f"${a + rng.choice((-1, 1))}\\sqrt{{{b}}}$"


def _percent(rng: random.Random, right: bool) -> tuple[str, str]:
    p = Fraction(rng.randint(1, 9999), 100)
    shown = p if right else p + Fraction(rng.choice((-100, -1, 1, 100)), 100)
    return f"${_decimal(p)}\\%$", f"The probability is ${_decimal(shown)}\\%$."


#: Every kind of item, by name: ``maker(rng, right) -> (gold, answer)``.
KINDS: dict[str, _Maker] = {
    "fraction_as_decimal": _frac_decimal,
    "unreduced_fraction": _frac_unreduced,
    "boxed_integer_in_prose": _integer_boxed,
    "solutions_in_another_order": _solutions,
    "radical": _radical,
    "percent": _percent,
}
_NAMES = tuple(KINDS)


def item(i: int, seed: int = 0) -> MathItem:
    """Item ``i`` of ``seed``: kind ``i mod len(KINDS)``, right when ``(i // len(KINDS))`` is
    even, its numbers drawn from a generator seeded by ``(seed, i)``."""
    kind = _NAMES[i % len(_NAMES)]
    right = (i // len(_NAMES)) % 2 == 0
    gold, answer = KINDS[kind](random.Random(f"{seed}:{i}"), right)
    return MathItem(kind, gold, answer, right)


def items(n: int, seed: int = 0) -> list[MathItem]:
    """The first ``n`` items of ``seed`` (every prefix of twelve or more mixes every kind, right
    and wrong)."""
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"n must be an int, not {type(n).__name__}")
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    return [item(i, seed) for i in range(n)]


def _quiet_math_verify() -> None:
    # The checks run with math-verify's signal-based timeouts off (signals work only in a
    # process's main thread; the harness runs checks in threads and in Ray workers), which it
    # logs as a warning once per process. The items are generated and small: nothing to time out.
    for name in ("math_verify", "math_verify.parser", "math_verify.grader"):
        logging.getLogger(name).setLevel(logging.ERROR)


def check(gold: str, answer: str) -> bool:
    """Whether ``answer`` states the same mathematical object as ``gold`` (math-verify)."""
    from math_verify import parse, verify

    _quiet_math_verify()
    return bool(
        verify(parse(gold, parsing_timeout=None), parse(answer, parsing_timeout=None),
               timeout_seconds=None)
    )


def check_pair(pair: tuple[str, str]) -> bool:
    """:func:`check` of a ``(gold, answer)`` pair: the one-argument form pools map over."""
    return check(*pair)
