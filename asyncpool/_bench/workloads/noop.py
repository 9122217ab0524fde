"""``noop``: collecting the results of no-op tasks, where only the collecting costs anything.

Baseline ``asyncio`` (the refs awaited natively, gathered), ceiling ``ray_get`` (one blocking
``ray.get(list)``), against asyncpool's ``gather`` and ``as_completed`` and Ray's own
``ray.util.as_completed`` / ``ray.util.map_unordered`` (Ray 2.60 ships both, as alpha APIs).
"""

from __future__ import annotations

import asyncio
from typing import Any

import ray

from asyncpool import refs

from ..core import Method, Outcome, Progress, Workload, drain_in_thread


@ray.remote
def _noop(i: int) -> int:
    return i


def noop_refs(n: int) -> list[Any]:
    return [_noop.remote(i) for i in range(n)]


async def _ray_get(ctx: None, n: int, progress: Progress) -> Outcome:
    values = ray.get(noop_refs(n))
    progress(n)
    return Outcome(sum(v == i for i, v in enumerate(values)), 0)


async def _asyncio(ctx: None, n: int, progress: Progress) -> Outcome:
    values = await asyncio.gather(*noop_refs(n))
    progress(n)
    return Outcome(sum(v == i for i, v in enumerate(values)), 0)


async def _gather(ctx: None, n: int, progress: Progress) -> Outcome:
    values = await refs.gather(noop_refs(n))
    progress(n)
    return Outcome(sum(v == i for i, v in enumerate(values)), 0)


async def _as_completed(ctx: None, n: int, progress: Progress) -> Outcome:
    correct = 0
    async with refs.as_completed(noop_refs(n)) as stream:
        async for index, value in stream:
            correct += index == value
            progress(1)
    return Outcome(correct, 0)


async def _ray_as_completed(ctx: None, n: int, progress: Progress) -> Outcome:
    # Values come without their index: each no-op returns its own, so the set must be exact.
    values = await drain_in_thread(lambda: ray.util.as_completed(noop_refs(n)), progress)
    return Outcome(n if sorted(values) == list(range(n)) else 0, 0)


async def _ray_map_unordered(ctx: None, n: int, progress: Progress) -> Outcome:
    values = await drain_in_thread(
        lambda: ray.util.map_unordered(_noop, range(n)),  # type: ignore[arg-type]
        progress,
    )
    return Outcome(n if sorted(values) == list(range(n)) else 0, 0)


NOOP = Workload(
    name="noop",
    baseline="asyncio",
    ceiling="ray_get",
    methods=(
        Method("asyncio", _asyncio,
               "await asyncio.gather(*refs): every ref awaited natively (the baseline; no "
               "semaphore: no-op tasks need no bound)", kind="handwritten"),
        Method("asyncpool_gather", _gather, "await asyncpool.gather(refs)", kind="asyncpool"),
        Method("asyncpool_as_completed", _as_completed,
               "async for over asyncpool.as_completed(refs)", kind="asyncpool"),
        Method("ray_as_completed", _ray_as_completed,
               "for v in ray.util.as_completed(refs) (default chunk_size=10), in a thread",
               kind="peer"),
        Method("ray_map_unordered", _ray_map_unordered,
               "for v in ray.util.map_unordered(noop, items) (default backpressure 100), in a "
               "thread", kind="peer"),
        Method("ray_get", _ray_get, "one blocking ray.get(list) of no-op tasks (the ceiling)",
               kind="ceiling"),
    ),
    # Full: 5,000 per round, about 1.5 min for 3 rounds across the six methods.
    items=5_000,
    quick_items=2_000,
    describe="no-op tasks: collecting results (plain ray.get(list) is the ceiling)",
)
