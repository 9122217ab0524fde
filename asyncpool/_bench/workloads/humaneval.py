"""``humaneval``: CPU-bound checks, HumanEval solutions judged in the sandbox.

Items: each problem's canonical solution (expected to pass) and a broken variant (expected to
fail), see :mod:`asyncpool._bench.humaneval`, judged by :func:`asyncpool.sandbox.run_tests`
(the solution jailed, the problem's ``check`` run by a trusted judge); a verification is
correct when the verdict matches the label. Baseline ``asyncio`` (the best hand-written
asyncio code), ceiling ``limit`` (the cores times the barest fork-and-run rate). The methods
are described in :data:`HUMANEVAL`.

``asyncpool`` sends :data:`HUMANEVAL_BATCH` items per Ray task: a Ray task costs about 1-2 ms
of CPU here (driver, raylet, worker) on top of the check (a few to tens of ms), so batches
make Ray's share a few per cent. The Ray Data and ``multiprocessing.Pool`` peers get the same
batch (``batch_size``, ``chunksize``), so every batched row pays the same per-task share.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np
import ray
from ray.util.multiprocessing import Pool

from asyncpool.sandbox import run_python_bare, run_tests
from asyncpool.tasks import TaskPool

from .. import humaneval
from ..core import (
    Method,
    Outcome,
    Progress,
    Workload,
    cluster_cpus,
    count,
    drain_in_thread,
    handwritten,
    ignore_progress,
    limit_cores,
)
from ._ray_data import ray_data_session

#: Items per Ray task of the ``asyncpool`` method and of the batched peers.
HUMANEVAL_BATCH = 16


#: What one check takes: ``(solution, tests, entry_point)``.
Case = tuple[str, str, str]


def sandbox_status(case: Case) -> str:
    """The check every method runs (in a Ray worker or the driver): the verdict of
    ``run_tests(solution, tests, entry_point=...)``."""
    solution, tests, entry_point = case
    return run_tests(solution, tests, entry_point=entry_point).status


def _indexed_status(pair: tuple[int, Case]) -> tuple[int, str]:
    return pair[0], sandbox_status(pair[1])


def _data_check(batch: dict[str, np.ndarray[Any, Any]]) -> dict[str, np.ndarray[Any, Any]]:
    """Ray Data's ``map_batches`` function: the statuses of a batch of solutions."""
    cases = zip(batch["solution"], batch["tests"], batch["entry_point"], strict=True)
    return {"i": batch["i"], "status": np.array([sandbox_status(c) for c in cases])}


class _DataChecker:
    """The same check as a callable class, for Ray Data's actor pool."""

    def __call__(self, batch: dict[str, np.ndarray[Any, Any]]) -> dict[str, np.ndarray[Any, Any]]:
        return _data_check(batch)


_sandbox_task = ray.remote(scheduling_strategy="SPREAD")(sandbox_status)


@dataclass
class HumanEvalSession:
    cases: list[Case]
    #: The same items as whole self-checking programs, for the ``limit`` method.
    programs: list[str]
    expected: list[bool]
    pool: TaskPool[[Case], str]
    auto: TaskPool[[Case], str]
    mp_pool: Any
    cores: int
    cpus: int
    executor_limit: int

    def correct(self, i: int, status: Any) -> bool:
        return bool((status == "passed") == self.expected[i])


def humaneval_pool() -> TaskPool[[Case], str]:
    """The TaskPool the ``asyncpool`` method uses (and what a user would write)."""
    return TaskPool(sandbox_status, strategy="SPREAD", batch_size=HUMANEVAL_BATCH)


@asynccontextmanager
async def humaneval_session(n: int) -> AsyncIterator[HumanEvalSession]:
    work = humaneval.items(n)
    cpus = cluster_cpus()
    mp_pool = await asyncio.to_thread(Pool, cpus)
    try:
        async with (
            ray_data_session(),
            humaneval_pool() as pool,
            TaskPool(sandbox_status, strategy="SPREAD", batch_size="auto") as auto,
        ):
            session = HumanEvalSession(
                cases=[(it.solution, it.tests, it.entry_point) for it in work],
                programs=[it.program for it in work],
                expected=[it.expected for it in work],
                pool=pool,
                auto=auto,
                mp_pool=mp_pool,
                cores=limit_cores(),
                cpus=cpus,
                executor_limit=2 * cpus,
            )
            # Warm-up, untimed: the driver's fork server, Ray's workers and each worker's
            # fork server (every method then reuses them), Ray Data's executor, the Pool's
            # actors.
            k = min(n, 8 * cpus)
            await _sequential(session, 4, ignore_progress)
            await _limit(session, 4, ignore_progress)
            await _executor(session, k, ignore_progress)
            await _asyncio(session, k, ignore_progress)
            await _asyncpool(session, 4 * k, ignore_progress)
            await _asyncpool_auto(session, 4 * k, ignore_progress)
            await _data_tasks(session, k, ignore_progress)
            await _mp_pool(session, k, ignore_progress)
            yield session
    finally:
        await asyncio.to_thread(mp_pool.terminate)


async def _sequential(s: HumanEvalSession, n: int, progress: Progress) -> Outcome:
    def loop() -> Outcome:
        correct = errors = 0
        for i in range(n):
            try:
                correct += s.correct(i, sandbox_status(s.cases[i]))
            except Exception:
                errors += 1
            progress(1)
        return Outcome(correct, errors)

    return await asyncio.to_thread(loop)


async def _limit(s: HumanEvalSession, n: int, progress: Progress) -> Outcome:
    def loop() -> Outcome:
        correct = errors = 0
        for i in range(n):
            try:
                correct += s.correct(i, run_python_bare(s.programs[i]).status)
            except Exception:
                errors += 1
            progress(1)
        return Outcome(correct, errors, scale=float(s.cores))

    return await asyncio.to_thread(loop)


async def _executor(s: HumanEvalSession, n: int, progress: Progress) -> Outcome:
    loop = asyncio.get_running_loop()

    async def call(i: int) -> str:
        status: str = await loop.run_in_executor(
            None, ray.get, _sandbox_task.remote(s.cases[i])
        )
        return status

    return count(await handwritten(n, s.executor_limit, call, progress), s.correct)


async def _asyncio(s: HumanEvalSession, n: int, progress: Progress) -> Outcome:
    async def call(i: int) -> str:
        status: str = await _sandbox_task.remote(s.cases[i])
        return status

    return count(await handwritten(n, s.executor_limit, call, progress), s.correct)


async def _asyncpool(s: HumanEvalSession, n: int, progress: Progress) -> Outcome:
    return await _map(s.pool, s, n, progress)


async def _asyncpool_auto(s: HumanEvalSession, n: int, progress: Progress) -> Outcome:
    return await _map(s.auto, s, n, progress)


async def _map(
    pool: TaskPool[[Case], str], s: HumanEvalSession, n: int, progress: Progress
) -> Outcome:
    correct = errors = 0
    async with pool.map(s.cases[:n], return_exceptions=True) as stream:
        async for i, status in stream:
            if isinstance(status, BaseException):
                errors += 1
            else:
                correct += s.correct(i, status)
            progress(1)
    return Outcome(correct, errors)


def _dataset(s: HumanEvalSession, n: int) -> Any:
    return ray.data.from_items([
        {"i": i, "solution": c[0], "tests": c[1], "entry_point": c[2]}
        for i, c in enumerate(s.cases[:n])
    ])


async def _data_rows(s: HumanEvalSession, ds: Any, progress: Progress) -> Outcome:
    rows = await drain_in_thread(ds.iter_rows, progress)
    return Outcome(sum(s.correct(int(r["i"]), str(r["status"])) for r in rows), 0)


async def _data_tasks(s: HumanEvalSession, n: int, progress: Progress) -> Outcome:
    ds = _dataset(s, n).map_batches(_data_check, batch_size=HUMANEVAL_BATCH)
    return await _data_rows(s, ds, progress)


async def _data_actors(s: HumanEvalSession, n: int, progress: Progress) -> Outcome:
    ds = _dataset(s, n).map_batches(
        _DataChecker,
        batch_size=HUMANEVAL_BATCH,
        compute=ray.data.ActorPoolStrategy(size=s.cpus),
    )
    return await _data_rows(s, ds, progress)


async def _mp_pool(s: HumanEvalSession, n: int, progress: Progress) -> Outcome:
    pairs = await drain_in_thread(
        lambda: s.mp_pool.imap_unordered(
            _indexed_status, enumerate(s.cases[:n]), chunksize=HUMANEVAL_BATCH
        ),
        progress,
    )
    return Outcome(sum(s.correct(i, status) for i, status in pairs), 0)


_PER_TASK = ("one Ray task per item: Ray's per-task CPU (driver, raylet, worker) competes with "
             "the checks")
_DRIVER = "runs in the driver process, which competes with everything else for a core"

HUMANEVAL = Workload(
    name="humaneval",
    baseline="asyncio",
    ceiling="limit",
    methods=(
        Method("asyncio", _asyncio,
               "hand-written: await check_task.remote(item) (one SPREAD Ray task per item) "
               "under an asyncio.Semaphore(2 x CPUs), asyncio.gather (the baseline)",
               kind="handwritten", load_note=_PER_TASK),
        Method("sequential", _sequential,
               "run_tests in a loop in the driver, one at a time", kind="reference",
               load_note=_DRIVER),
        Method("executor", _executor,
               "the pattern users have today: one SPREAD Ray task per item, await "
               "run_in_executor(None, ray.get, ref) under a semaphore of 2 x CPUs",
               kind="today", load_note=_PER_TASK),
        Method("asyncpool", _asyncpool,
               f"TaskPool(run_tests check, SPREAD, batch_size={HUMANEVAL_BATCH}).map(items)",
               kind="asyncpool"),
        Method("asyncpool_auto", _asyncpool_auto,
               'TaskPool(run_tests check, SPREAD, batch_size="auto").map(items): batches '
               "sized from the workers' CPU time per item", kind="asyncpool"),
        Method("ray_data_tasks", _data_tasks,
               "ray.data.from_items(items).map_batches(check, "
               f"batch_size={HUMANEVAL_BATCH}) (tasks), iter_rows() in a thread", kind="peer",
               load_note="Ray Data's streaming executor runs in the driver process"),
        Method("ray_data_actors", _data_actors,
               "ray.data.from_items(items).map_batches(Checker, "
               f"batch_size={HUMANEVAL_BATCH}, compute=ActorPoolStrategy(size=CPUs)) (an "
               "actor pool as large as the cluster, started by each execution), iter_rows() "
               "in a thread", kind="peer",
               load_note="Ray Data's streaming executor runs in the driver process"),
        Method("mp_pool", _mp_pool,
               "ray.util.multiprocessing.Pool(CPUs).imap_unordered(check, items, "
               f"chunksize={HUMANEVAL_BATCH}), in a thread", kind="peer"),
        Method("limit", _limit,
               "the physical ceiling: cores x the rate of run_python_bare (fork the prepared "
               "interpreter, no limits, no separate judge: prompt, completion and tests as one "
               "program) run sequentially on the same items in the driver; "
               "seconds are the real sequential seconds, per_minute = cores x items / seconds",
               kind="ceiling", load_note=_DRIVER),
    ),
    # Full: every HumanEval problem 3 times per round; 10x quick took ~8 min of a 3-round
    # full run alone (nine methods, about 0.1 s of machine time per item across them).
    items=492,
    quick_items=164,
    describe="HumanEval solutions judged by sandbox.run_tests; correct = verdict matches the "
             "label",
    session=humaneval_session,
)
