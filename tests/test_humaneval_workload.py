"""The HumanEval workload: its data, its items, and every label checked through the sandbox."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from asyncpool._bench import humaneval
from asyncpool.sandbox import SandboxResult, run_python


def test_problems_are_read_from_the_installed_package() -> None:
    problems = humaneval.load_problems()
    assert len(problems) == 164
    assert humaneval.load_problems() is problems  # cached
    first = problems["HumanEval/0"]
    assert first["entry_point"] == "has_close_elements"
    assert {"prompt", "canonical_solution", "test", "entry_point"} <= set(first)


def test_program_for_joins_prompt_completion_tests_and_check() -> None:
    p = humaneval.load_problems()["HumanEval/0"]
    program = humaneval.program_for("HumanEval/0", "    return True\n")
    assert program == f"{p['prompt']}    return True\n\n{p['test']}\ncheck(has_close_elements)\n"
    with pytest.raises(KeyError):
        humaneval.program_for("HumanEval/999", "")


def test_items_pair_each_problem_with_a_broken_variant_and_cycle() -> None:
    base = humaneval.base_items()
    assert len(base) == 328
    assert sum(item.expected for item in base) == 164
    assert {item.task_id for item in base if item.expected} == set(humaneval.load_problems())
    assert {item.task_id for item in base if not item.expected} == set(humaneval.load_problems())
    many = humaneval.items(700, seed=3)
    assert len(many) == 700
    assert many[:328] == many[328:656]  # cycled
    assert set(many[:328]) == set(base)
    assert humaneval.items(50, seed=3) == many[:50]
    assert humaneval.items(50, seed=4) != many[:50]
    assert 10 < sum(item.expected for item in many[:50]) < 40  # a prefix mixes both labels
    assert humaneval.items(0) == []


@pytest.mark.parametrize(("n", "error"), [(-1, ValueError), (2.0, TypeError), (True, TypeError)])
def test_items_rejects_bad_sizes(n: object, error: type) -> None:
    with pytest.raises(error):
        humaneval.items(n)  # type: ignore[arg-type]


def test_every_canonical_solution_passes_and_every_broken_variant_fails() -> None:
    base = humaneval.base_items()
    with ThreadPoolExecutor(4) as pool:
        results: list[SandboxResult] = list(pool.map(lambda i: run_python(i.program), base))
    wrong = [
        (item.task_id, item.expected, result.status, result.stdout_tail[-300:])
        for item, result in zip(base, results, strict=True)
        if result.status != ("passed" if item.expected else "failed")
    ]
    assert wrong == []
    # The broken variants fail on an assertion of the tests, not on some other error.
    broken_tails = [r.stdout_tail for i, r in zip(base, results, strict=True) if not i.expected]
    assert sum("AssertionError" in tail for tail in broken_tails) >= 150


def test_verify_says_whether_the_verdict_matches_the_label() -> None:
    good, bad = humaneval.base_items()[:2]
    assert good.expected
    assert not bad.expected
    assert humaneval.verify(good)
    assert humaneval.verify(bad)
    mislabelled = humaneval.VerificationItem(bad.task_id, bad.program, True)
    assert not humaneval.verify(mislabelled)


def test_run_tests_judges_every_canonical_solution_passed_and_every_broken_variant_failed() -> None:
    """The bench's check: each item split into solution, tests and entry point for
    ``sandbox.run_tests`` gets the verdict its label says."""
    base = humaneval.base_items()
    assert all(i.solution and i.tests and i.entry_point for i in base)
    assert all(i.program == humaneval.program_for(i.task_id, i.solution.removeprefix(
        humaneval.load_problems()[i.task_id]["prompt"])) for i in base)
    with ThreadPoolExecutor(4) as pool:
        statuses = list(pool.map(humaneval.judge, base))
    wrong = [(i.task_id, i.expected, status) for i, status in zip(base, statuses, strict=True)
             if status != ("passed" if i.expected else "failed")]
    assert wrong == []
