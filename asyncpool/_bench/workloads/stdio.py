"""``stdio``: competitive-programming solutions in C++ and Python judged by ``run_stdio``.

Items: for each problem of :mod:`asyncpool._bench.stdio_problems` (in order), its correct, wrong
and too-slow solution; a C++ row and a Python row judge the same problems' solutions in their
language. Each item is one :func:`asyncpool.sandbox.run_stdio` call over all the problem's cases
(``stop_on_failure``: a wrong or slow solution stops at its first failing case), each case
limited to :data:`~asyncpool._bench.stdio_problems.TIME_LIMIT` of own time. A verification is
correct when the verdict is the one its kind must get: accepted, wrong_answer, time_limit.

Rows:

* ``asyncpool_cpp`` / ``asyncpool_python``: ``TaskPool(judge, SPREAD, batch_size=3).map(items)``,
  as the ``humaneval`` workload dispatches its sandboxed checks. An item names its solution by
  ``(problem, language, kind)``; each Ray worker builds the problem set itself, once (it is
  deterministic), so several megabytes of stdin are not shipped with every task. C++ is
  compiled in the worker's jail on its first use there and served from that worker's compile
  cache afterwards: the session compiles every source in every worker before timing.
* ``limit_cpp``: the physical ceiling: cores x the rate of a bare fork+exec
  (``subprocess.run``, no jail, no limits but a wall-clock time limit) of the very binaries the
  compile cache holds (compiled once in the driver's jail, copied out), run sequentially on the
  same items and cases in the driver, compared by the same checkers.
* ``limit_python``: the same with ``python -I -S -c solution`` (an exec'd interpreter; the
  sandbox instead forks one that is already running, so ``asyncpool_python`` can exceed it).

The table's ratios: ``x baseline`` is to ``limit_python`` and means something for the Python
row only, ``x ceiling`` is to ``limit_cpp`` and means something for the C++ row only.

The session prints, and keeps in :data:`LAST_STATS`, the workers' compile-cache hit rate (from
each C++ verdict's ``compile_result.cached``: in the timed rounds, and overall with the warm-up)
and the cost of one C++ stdio case: ``run_stdio`` of a correct solution on one small case
against a bare fork+exec of the same binary, medians of :data:`COST_SAMPLES` runs each.

Not part of ``all`` (``asyncpool bench --workload stdio``): a too-slow solution costs its whole
time limit in every row, so a quick run takes minutes, longer than the rest of ``--quick``.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from asyncpool.sandbox import run_stdio
from asyncpool.sandbox._checkers import compare, resolve_checker
from asyncpool.tasks import TaskPool

from .. import stdio_problems as sp
from ..core import Method, Outcome, Progress, Workload, cluster_cpus, ignore_progress, limit_cores

#: Items per Ray task of the asyncpool rows: one problem's three solutions.
STDIO_BATCH = 3
#: Compile limit of own time: generous, so that a loaded machine never turns a compile into a
#: verdict (compiles happen in the untimed warm-up).
COMPILE_TIMEOUT = 120.0
#: Runs of each side of the per-case cost measurement.
COST_SAMPLES = 30

#: ``(problem index, language, kind)``.
Item = tuple[int, str, str]

#: What the last session measured besides the rows (see the module docstring).
LAST_STATS: dict[str, Any] = {}


def items(language: str, n: int) -> list[Item]:
    """The first ``n`` items of ``language``: problem by problem, correct, wrong, slow; the set
    repeats when ``n`` is larger than it."""
    if language not in sp.LANGUAGES:
        raise ValueError(f"language must be one of {sp.LANGUAGES}, not {language!r}")
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"n must be an int, not {type(n).__name__}")
    if n < 0:
        raise ValueError(f"n must be >= 0, not {n}")
    base = [(i, language, k) for i in range(len(sp.problems())) for k in sp.KINDS]
    return [base[j % len(base)] for j in range(n)]


#: ``judge``'s answer: the verdict, whether the compile came from the cache (``None``: not
#: compiled), and when the verdict is not the one the item's kind expects, what the first case
#: that decided it reported (``""`` otherwise).
Judged = tuple[str, bool | None, str]


def judge(item: Item) -> Judged:
    """What the asyncpool rows run in a Ray worker: ``run_stdio`` of the item's solution on its
    problem's cases (see :data:`Judged`)."""
    index, language, kind = item
    problem = sp.problems()[index]
    result = run_stdio(
        problem.solution(language, kind), list(problem.cases), language=language,
        checker=problem.checker, timeout=sp.TIME_LIMIT, compile_timeout=COMPILE_TIMEOUT,
    )  # fmt: skip
    compiled = getattr(result, "compile_result", None)
    detail = ""
    if result.verdict != sp.EXPECTED_VERDICT[kind]:
        case = next((c for c in result.cases if not c.passed), None)
        detail = "no case ran" if case is None else (
            f"case {result.cases.index(case)} of {len(problem.cases)}: {case.verdict}/"
            f"{case.status}, own {case.duration:.3f} s, cpu {case.cpu_time} s, wall "
            f"{case.wall_time:.3f} s, rc {case.returncode}, {case.reason!r}, "
            f"stderr {case.stderr[-200:]!r}"
        )
        if compiled is not None and not result.cases:
            detail += f"; compile: {compiled.status}, {compiled.stderr[-300:]!r}"
    return result.verdict, (None if compiled is None else bool(compiled.cached)), detail


def compile_all(indices: Sequence[int]) -> int:
    """In a Ray worker (warm-up): the problem set built and every C++ solution of ``indices``
    compiled into this worker's cache; how many sources."""
    from asyncpool.sandbox import _languages

    count = 0
    for i in indices:
        for kind in sp.KINDS:
            _languages.prepare("cpp", sp.problems()[i].solution("cpp", kind),
                               compile_timeout=COMPILE_TIMEOUT)  # fmt: skip
            count += 1
    return count


def bare_verdict(argv: Sequence[str], problem: sp.Problem) -> str:
    """The verdict of a bare run of ``argv`` on ``problem``'s cases (no jail; the time limit is
    wall-clock time, the run killed when it is reached), stopping at the first failing case."""
    checker = resolve_checker("checker", problem.checker)
    for stdin, expected in problem.cases:
        data = stdin.encode()
        try:
            done = subprocess.run(list(argv), input=data, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, timeout=sp.TIME_LIMIT, check=False)
        except subprocess.TimeoutExpired:
            return "time_limit"
        if done.returncode != 0:
            return "runtime_error"
        accepted, _ = compare(checker, data, expected.encode(), done.stdout)
        if not accepted:
            return "wrong_answer"
    return "accepted"


@dataclass
class StdioSession:
    items: dict[str, list[Item]]
    pool: TaskPool[[Item], Judged]
    #: ``item -> argv`` of its bare run (the limit rows).
    bare: dict[Item, list[str]]
    cores: int
    timed: bool = False
    #: Every asyncpool-row verdict that was not its kind's, with what decided it.
    mismatches: list[str] = field(default_factory=list)
    #: ``phase -> [cache hits, C++ verdicts]``; phase "warm-up" or "timed".
    cache: dict[str, list[int]] = field(default_factory=lambda: {"warm-up": [0, 0],
                                                                 "timed": [0, 0]})

    @staticmethod
    def correct(item: Item, verdict: Any) -> bool:
        return bool(verdict == sp.EXPECTED_VERDICT[item[2]])

    def note_compile(self, cached: bool | None) -> None:
        if cached is not None:
            tally = self.cache["timed" if self.timed else "warm-up"]
            tally[0] += cached
            tally[1] += 1


def stdio_pool() -> TaskPool[[Item], Judged]:
    """The TaskPool the asyncpool rows use (what a user would write)."""
    return TaskPool(judge, strategy="SPREAD", batch_size=STDIO_BATCH)


def _prepare_bare(work: list[Item], directory: str) -> dict[Item, list[str]]:
    """The limit rows' commands: each C++ solution's artefact from the driver's compile cache
    (compiled in the jail, as the workers do) copied to ``directory``; Python's interpreter."""
    from asyncpool.sandbox import _languages

    def one(item: Item) -> tuple[Item, list[str]]:
        index, language, kind = item
        source = sp.problems()[index].solution(language, kind)
        if language == "python":
            return item, [sys.executable, "-I", "-S", "-c", source]
        prepared = _languages.prepare("cpp", source, compile_timeout=COMPILE_TIMEOUT)
        if not isinstance(prepared, _languages.Prepared):
            raise RuntimeError(f"{item}: the compile failed: {prepared.stderr[-2000:]}")
        path = os.path.join(directory, f"{index}-{kind}")
        with open(path, "wb") as fh:
            fh.write(prepared.artefact)
        os.chmod(path, 0o700)
        return item, [path]

    with ThreadPoolExecutor(max(2, os.cpu_count() or 1)) as ex:
        return dict(ex.map(one, dict.fromkeys(work)))


def _case_cost(argv: list[str]) -> dict[str, float]:
    """Milliseconds of one C++ stdio case, run_stdio against a bare fork+exec of the same
    binary (medians; the first problem's correct solution on its first case)."""
    problem = sp.problems()[0]
    source = problem.solution("cpp", "correct")
    case = [problem.cases[0]]
    data = case[0][0].encode()

    def timed(fn: Callable[[], object]) -> float:
        t0 = time.perf_counter()
        fn()
        return (time.perf_counter() - t0) * 1000

    def sandboxed() -> object:
        return run_stdio(source, case, language="cpp", timeout=sp.TIME_LIMIT,
                         compile_timeout=COMPILE_TIMEOUT)

    def bare() -> object:
        return subprocess.run(argv, input=data, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, timeout=10, check=True)

    sandboxed()
    bare()
    run_ms = statistics.median(timed(sandboxed) for _ in range(COST_SAMPLES))
    bare_ms = statistics.median(timed(bare) for _ in range(COST_SAMPLES))
    return {"run_stdio_case_ms": round(run_ms, 2), "bare_exec_ms": round(bare_ms, 2),
            "extra_ms": round(run_ms - bare_ms, 2)}  # fmt: skip


def _report(s: StdioSession) -> dict[str, Any]:
    def rate(tally: list[int]) -> float | None:
        return round(tally[0] / tally[1], 4) if tally[1] else None

    overall = [s.cache["timed"][0] + s.cache["warm-up"][0],
               s.cache["timed"][1] + s.cache["warm-up"][1]]  # fmt: skip
    return {
        "cache_hits_timed": s.cache["timed"][0], "cpp_verdicts_timed": s.cache["timed"][1],
        "cache_hit_rate_timed": rate(s.cache["timed"]),
        "cache_hits_all": overall[0], "cpp_verdicts_all": overall[1],
        "cache_hit_rate_all": rate(overall),
    }  # fmt: skip


@asynccontextmanager
async def stdio_session(n: int) -> AsyncIterator[StdioSession]:
    work = {lang: items(lang, n) for lang in sp.LANGUAGES}
    await asyncio.to_thread(sp.problems)
    cpus = cluster_cpus()
    directory = tempfile.mkdtemp(prefix="asyncpool-bench-stdio-")
    LAST_STATS.clear()
    try:
        bare = await asyncio.to_thread(_prepare_bare, work["cpp"] + work["python"], directory)
        async with stdio_pool() as pool, TaskPool(compile_all, strategy="SPREAD") as warm:
            session = StdioSession(work, pool, bare, limit_cores())
            # Warm-up, untimed: every C++ source compiled in (likely) every worker that will
            # judge (2 x CPUs spread tasks, each compiling all of them), the workers' problem
            # sets built, the fork servers started; the per-case cost measured.
            indices = sorted({i for i, _, _ in work["cpp"]})
            await _gather(warm, [indices] * (2 * cpus))
            k = min(n, 2 * STDIO_BATCH)
            for language in sp.LANGUAGES:
                await _asyncpool(language)(session, k, ignore_progress)
                await _limit(language)(session, k, ignore_progress)
            cost = await asyncio.to_thread(_case_cost, bare[(0, "cpp", "correct")])
            session.timed = True
            yield session
            LAST_STATS.update(cost, **_report(session), mismatches=session.mismatches)
            print(
                f"stdio: compile cache hit rate {LAST_STATS['cache_hit_rate_timed']} in the "
                f"timed rounds ({LAST_STATS['cache_hits_timed']}/"
                f"{LAST_STATS['cpp_verdicts_timed']} C++ verdicts), "
                f"{LAST_STATS['cache_hit_rate_all']} with the warm-up; one C++ stdio case: "
                f"{cost['run_stdio_case_ms']} ms through run_stdio vs {cost['bare_exec_ms']} ms "
                f"bare fork+exec (+{cost['extra_ms']} ms)"
            )
    finally:
        shutil.rmtree(directory, ignore_errors=True)


async def _gather(pool: TaskPool[[list[int]], int], args: list[list[int]]) -> None:
    """Every call of ``pool`` on ``args`` done (results dropped)."""
    async with pool.map(args) as stream:
        async for _ in stream:
            pass


def _asyncpool(language: str) -> Callable[[StdioSession, int, Progress], Any]:
    async def run(s: StdioSession, n: int, progress: Progress) -> Outcome:
        work = s.items[language][:n]
        correct = errors = 0
        async with s.pool.map(work, return_exceptions=True) as stream:
            async for i, value in stream:
                if isinstance(value, BaseException):
                    errors += 1
                else:
                    verdict, cached, detail = value
                    if s.correct(work[i], verdict):
                        correct += 1
                    else:
                        s.mismatches.append(f"{work[i]}: {verdict} ({detail})")
                    s.note_compile(cached)
                progress(1)
        return Outcome(correct, errors)

    return run


def _limit(language: str) -> Callable[[StdioSession, int, Progress], Any]:
    async def run(s: StdioSession, n: int, progress: Progress) -> Outcome:
        work = s.items[language][:n]

        def loop() -> Outcome:
            correct = errors = 0
            for item in work:
                try:
                    verdict = bare_verdict(s.bare[item], sp.problems()[item[0]])
                    correct += s.correct(item, verdict)
                except Exception:
                    errors += 1
                progress(1)
            return Outcome(correct, errors, scale=float(s.cores))

        return await asyncio.to_thread(loop)

    return run


_DRIVER = "runs in the driver process, which competes with everything else for a core"

STDIO = Workload(
    name="stdio",
    baseline="limit_python",
    ceiling="limit_cpp",
    methods=(
        Method("asyncpool_cpp", _asyncpool("cpp"),
               f"TaskPool(run_stdio judge, SPREAD, batch_size={STDIO_BATCH}).map(C++ items): "
               "compiled once per worker in the jail, every case a jailed run of the cached "
               "binary", kind="asyncpool"),
        Method("asyncpool_python", _asyncpool("python"),
               f"TaskPool(run_stdio judge, SPREAD, batch_size={STDIO_BATCH}).map(Python items)",
               kind="asyncpool"),
        Method("limit_cpp", _limit("cpp"),
               "the C++ ceiling: cores x the rate of a bare subprocess.run of the same cached "
               "binaries (no jail; wall-clock time limit), sequentially in the driver; "
               "per_minute = cores x items / seconds", kind="ceiling", load_note=_DRIVER),
        Method("limit_python", _limit("python"),
               "the Python ceiling: cores x the rate of bare `python -I -S -c solution` runs, "
               "sequentially in the driver", kind="ceiling", load_note=_DRIVER),
    ),
    # Full: every problem's three solutions; quick: the first 8 problems'.
    items=3 * sp.PROBLEM_COUNT,
    quick_items=24,
    describe="competitive-programming solutions (correct, wrong, too slow) in C++ and Python "
             "judged by sandbox.run_stdio; correct = verdict matches the kind; x baseline is "
             "to limit_python (Python rows), x ceiling to limit_cpp (C++ rows); opt-in, not "
             "part of all",
    session=stdio_session,
)
