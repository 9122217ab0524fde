"""The ``stdio`` bench workload: its problem set (reference outputs, six solutions per problem,
each solution getting the verdict its kind must get) and one run through the harness."""

from __future__ import annotations

import contextlib
import io
import math
import os
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

import asyncpool
from asyncpool._bench import harness
from asyncpool._bench import stdio_problems as sp
from asyncpool._bench.workloads import stdio
from asyncpool.sandbox import run_stdio
from asyncpool.sandbox._checkers import compare, resolve_checker
from tests.conftest import SessionCluster


def _run_in_process(source: str, stdin: str) -> str:
    """A Python solution run in this process with ``stdin`` (``sys.stdin.read``, ``.buffer``
    and ``readline`` all work) and its printed output."""
    out = io.StringIO()
    old = sys.stdin
    sys.stdin = io.TextIOWrapper(io.BytesIO(stdin.encode()))
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(source, "<solution>", "exec"), {"__name__": "__main__"})
    finally:
        sys.stdin = old
    return out.getvalue()


def _accepted(problem: sp.Problem, stdin: str, expected: str, output: str) -> bool:
    checker = resolve_checker("checker", problem.checker)
    return compare(checker, stdin.encode(), expected.encode(), output.encode())[0]


# --------------------------------------------------------------------------- no Ray needed


def test_every_problem_has_a_correct_wrong_and_slow_solution_in_cpp_and_python() -> None:
    problems = sp.problems()
    assert len(problems) == sp.PROBLEM_COUNT >= 20
    assert len({p.name for p in problems}) == len(problems)
    assert sum(p.checker == "float" for p in problems) >= 3
    for p in problems:
        assert set(p.solutions) == {(lang, kind) for lang in ("cpp", "python")
                                    for kind in ("correct", "wrong", "slow")}, p.name
        assert len(set(p.solutions.values())) == 6, p.name  # six different programs
        assert len(p.cases) >= 3, p.name
        # Smallest first: the largest case, the one that makes slow solutions hopeless, last.
        assert len(p.cases[-1][0]) == max(len(c[0]) for c in p.cases), p.name
    assert sp.problems() is problems  # built once per process


def test_reference_outputs_agree_with_the_python_correct_solutions_run_in_process() -> None:
    for p in sp.problems():
        for i, (stdin, expected) in enumerate(p.cases):
            output = _run_in_process(p.solution("python", "correct"), stdin)
            assert _accepted(p, stdin, expected, output), (p.name, i, output[:200])


def test_python_wrong_solutions_answer_some_case_wrongly_in_process() -> None:
    for p in sp.problems():
        verdicts = [_accepted(p, stdin, expected, _run_in_process(p.solution("python", "wrong"),
                                                                  stdin))
                    for stdin, expected in p.cases]  # fmt: skip
        assert not all(verdicts), p.name


def test_python_slow_solutions_are_right_on_the_first_case_in_process() -> None:
    for p in sp.problems():
        stdin, expected = p.cases[0]
        output = _run_in_process(p.solution("python", "slow"), stdin)
        assert _accepted(p, stdin, expected, output), (p.name, output[:200])


def test_items_go_problem_by_problem_correct_wrong_slow_and_repeat() -> None:
    n = 3 * sp.PROBLEM_COUNT
    cpp = stdio.items("cpp", n + 4)
    assert cpp[:4] == [(0, "cpp", "correct"), (0, "cpp", "wrong"), (0, "cpp", "slow"),
                       (1, "cpp", "correct")]  # fmt: skip
    assert cpp[n:] == cpp[:4]
    assert len(set(cpp[:n])) == n
    assert [it[1:] for it in stdio.items("python", 3)] == [
        ("python", "correct"), ("python", "wrong"), ("python", "slow")
    ]
    assert stdio.items("cpp", 0) == []


@pytest.mark.parametrize(
    ("language", "n", "error"),
    [("java", 3, ValueError), ("cpp", -1, ValueError), ("cpp", 2.0, TypeError),
     ("cpp", True, TypeError)],
)  # fmt: skip
def test_items_refuse_an_unknown_language_and_bad_sizes(
    language: str, n: object, error: type[Exception]
) -> None:
    with pytest.raises(error):
        stdio.items(language, n)  # type: ignore[arg-type]


def test_all_leaves_the_stdio_workload_out_and_it_runs_by_name() -> None:
    assert stdio.STDIO not in harness.select("all")
    assert harness.select("stdio") == [stdio.STDIO]
    assert harness.WORKLOADS["stdio"] is stdio.STDIO
    assert [m.name for m in stdio.STDIO.methods] == [
        "asyncpool_cpp", "asyncpool_python", "limit_cpp", "limit_python"
    ]
    assert stdio.STDIO.method(stdio.STDIO.ceiling or "").kind == "ceiling"
    assert 0 < stdio.STDIO.quick_items <= stdio.STDIO.items == 3 * sp.PROBLEM_COUNT


def test_a_bare_python_run_gets_each_kinds_verdict() -> None:
    p = sp.problems()[0]
    got = {kind: stdio.bare_verdict([sys.executable, "-I", "-S", "-c", p.solution("python", kind)],
                                    p)
           for kind in sp.KINDS}  # fmt: skip
    assert got == {"correct": "accepted", "wrong": "wrong_answer", "slow": "time_limit"}
    assert stdio.bare_verdict([sys.executable, "-c", "raise SystemExit(3)"], p) == "runtime_error"


# --------------------------------------------------------------------------- the sandbox


@pytest.mark.timeout(900)
@pytest.mark.slow
def test_every_solution_gets_its_kinds_verdict_through_run_stdio() -> None:
    jobs = [(p, lang, kind) for p in sp.problems() for lang in sp.LANGUAGES for kind in sp.KINDS]

    def verdict(job: tuple[sp.Problem, str, str]) -> str:
        p, lang, kind = job
        return run_stdio(p.solution(lang, kind), list(p.cases), language=lang,
                         checker=p.checker, timeout=sp.TIME_LIMIT,
                         compile_timeout=stdio.COMPILE_TIMEOUT).verdict  # fmt: skip

    with ThreadPoolExecutor(3) as pool:
        got = list(pool.map(verdict, jobs))
    wrong = [(p.name, lang, kind, v) for (p, lang, kind), v in zip(jobs, got, strict=True)
             if v != sp.EXPECTED_VERDICT[kind]]  # fmt: skip
    assert not wrong


@pytest.mark.timeout(600)
@pytest.mark.slow
def test_a_stdio_run_of_two_problems_through_the_harness_matches_every_verdict(
    ray_cluster: SessionCluster,
) -> None:
    n = 6  # two problems, three solutions each, per language
    rows = asyncpool.run(harness.run_workloads, [stdio.STDIO], n, True, False, 1)
    assert [r.method for r in rows] == [m.name for m in stdio.STDIO.methods]
    for row in rows:
        assert (row.items, row.correct, row.errors) == (n, n, 0), (
            row, stdio.LAST_STATS.get("mismatches")
        )
        assert row.seconds > 0
        assert row.per_minute > 0
    limit = next(r for r in rows if r.method == "limit_cpp")
    cores = harness.limit_cores()
    assert cores == min(ray_cluster.total_cpus, os.cpu_count() or 1)
    rate = cores * n * 60
    assert rate / (limit.seconds + 5e-5) - 0.05 <= limit.per_minute
    assert limit.per_minute <= rate / (limit.seconds - 5e-5) + 0.05
    stats = stdio.LAST_STATS
    # One round: every C++ verdict of the timed round is counted, hits among them.
    assert stats["cpp_verdicts_timed"] == n
    assert 0 <= stats["cache_hits_timed"] <= n
    assert stats["cache_hit_rate_timed"] == round(stats["cache_hits_timed"] / n, 4)
    assert stats["cpp_verdicts_all"] > n  # the warm-up judged C++ solutions too
    for key in ("run_stdio_case_ms", "bare_exec_ms"):
        assert math.isfinite(stats[key])
        assert stats[key] > 0
    assert stats["extra_ms"] == pytest.approx(stats["run_stdio_case_ms"] - stats["bare_exec_ms"],
                                              abs=0.02)  # fmt: skip
