"""``math``: short checks (a few milliseconds) of math answers with math-verify, where
per-task overhead and batching decide the rate.

Items: :mod:`asyncpool._bench.math_answers` (generated, labelled by construction, half right);
correct when math-verify's verdict matches the label. Baseline ``asyncio`` (one Ray task per
item under a semaphore, hand-written), ceiling ``limit`` (the cores times the in-process
sequential rate). The methods are described in :data:`MATH`.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np
import ray

from asyncpool.tasks import TaskPool

from .. import math_answers
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

_check_task = ray.remote(scheduling_strategy="SPREAD")(math_answers.check_pair)


def _data_check(batch: dict[str, np.ndarray[Any, Any]]) -> dict[str, np.ndarray[Any, Any]]:
    """Ray Data's ``map_batches`` function: the verdicts of a batch of pairs."""
    verdicts = [math_answers.check(g, a) for g, a in zip(batch["gold"], batch["answer"],
                                                          strict=True)]
    return {"i": batch["i"], "verdict": np.array(verdicts)}


@dataclass
class MathSession:
    pairs: list[tuple[str, str]]
    expected: list[bool]
    auto: TaskPool[[tuple[str, str]], bool]
    single: TaskPool[[tuple[str, str]], bool]
    cores: int
    limit: int

    def correct(self, i: int, verdict: Any) -> bool:
        return bool(verdict) == self.expected[i]


@asynccontextmanager
async def math_session(n: int) -> AsyncIterator[MathSession]:
    work = math_answers.items(n)
    async with (
        ray_data_session(),
        TaskPool(math_answers.check_pair, batch_size="auto") as auto,
        TaskPool(math_answers.check_pair) as single,
    ):
        s = MathSession(
            pairs=[(it.gold, it.answer) for it in work],
            expected=[it.expected for it in work],
            auto=auto,
            single=single,
            cores=limit_cores(),
            limit=2 * cluster_cpus(),
        )
        # Warm-up, untimed: math-verify imported in the driver and the workers, the pools'
        # workers started (and the auto pool's batch size measured), Ray Data's executor.
        k = min(n, 16 * cluster_cpus())
        await _sequential(s, 12, ignore_progress)
        await _asyncio(s, k, ignore_progress)
        await _pool(s.single, s, k, ignore_progress)
        await _pool(s.auto, s, 4 * k, ignore_progress)
        await _ray_data(s, k, ignore_progress)
        yield s


def _loop(s: MathSession, n: int, progress: Progress, scale: float) -> Outcome:
    correct = errors = 0
    for i in range(n):
        try:
            correct += s.correct(i, math_answers.check_pair(s.pairs[i]))
        except Exception:
            errors += 1
        progress(1)
    return Outcome(correct, errors, scale=scale)


async def _sequential(s: MathSession, n: int, progress: Progress) -> Outcome:
    return await asyncio.to_thread(_loop, s, n, progress, 1.0)


async def _limit(s: MathSession, n: int, progress: Progress) -> Outcome:
    return await asyncio.to_thread(_loop, s, n, progress, float(s.cores))


async def _asyncio(s: MathSession, n: int, progress: Progress) -> Outcome:
    async def call(i: int) -> bool:
        verdict: bool = await _check_task.remote(s.pairs[i])
        return verdict

    return count(await handwritten(n, s.limit, call, progress), s.correct)


async def _pool(
    pool: TaskPool[[tuple[str, str]], bool], s: MathSession, n: int, progress: Progress
) -> Outcome:
    correct = errors = 0
    async with pool.map(s.pairs[:n], return_exceptions=True) as stream:
        async for i, verdict in stream:
            if isinstance(verdict, BaseException):
                errors += 1
            else:
                correct += s.correct(i, verdict)
            progress(1)
    return Outcome(correct, errors)


async def _asyncpool_auto(s: MathSession, n: int, progress: Progress) -> Outcome:
    return await _pool(s.auto, s, n, progress)


async def _asyncpool_single(s: MathSession, n: int, progress: Progress) -> Outcome:
    return await _pool(s.single, s, n, progress)


async def _ray_data(s: MathSession, n: int, progress: Progress) -> Outcome:
    ds = ray.data.from_items(
        [{"i": i, "gold": g, "answer": a} for i, (g, a) in enumerate(s.pairs[:n])]
    ).map_batches(_data_check)
    rows = await drain_in_thread(ds.iter_rows, progress)
    return Outcome(sum(s.correct(int(r["i"]), r["verdict"]) for r in rows), 0)


_PER_TASK = ("one Ray task per ~ms item: Ray's per-task CPU (driver, raylet, worker) competes "
             "with the checks")
_DRIVER = "runs in the driver process, which competes with everything else for a core"

MATH = Workload(
    name="math",
    baseline="asyncio",
    ceiling="limit",
    methods=(
        Method("asyncio", _asyncio,
               "hand-written: await check_task.remote((gold, answer)) (one SPREAD Ray task "
               "per item) under an asyncio.Semaphore(2 x CPUs), asyncio.gather (the baseline)",
               kind="handwritten", load_note=_PER_TASK),
        Method("sequential", _sequential,
               "math_verify.verify(parse(gold), parse(answer)) in a loop in the driver",
               kind="reference", load_note=_DRIVER),
        Method("asyncpool", _asyncpool_auto,
               "TaskPool(check, batch_size=\"auto\").map(items)", kind="asyncpool"),
        Method("asyncpool_batch1", _asyncpool_single,
               "TaskPool(check).map(items): one Ray task per item (batch_size=1)",
               kind="asyncpool", load_note=_PER_TASK),
        Method("ray_data", _ray_data,
               "ray.data.from_items(items).map_batches(check) (tasks, Ray Data's default "
               "batch size), iter_rows() in a thread", kind="peer",
               load_note="Ray Data's streaming executor runs in the driver process"),
        Method("limit", _limit,
               "the ceiling: cores x the in-process sequential rate (the same loop as "
               "sequential; per_minute = cores x items / seconds)", kind="ceiling",
               load_note=_DRIVER),
    ),
    # Full: 2,000 items per round; 10,000 made 3 rounds of it alone ~15 min (six methods,
    # about 30 ms of machine time per item across them, Ray Data's row the slowest).
    items=2_000,
    quick_items=600,
    describe="math-verify checks of generated answers (fractions, decimals, radicals, "
             "percentages, solution lists; half wrong); correct = verdict matches the label",
    session=math_session,
)
