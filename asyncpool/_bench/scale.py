"""``asyncpool bench --scale``: how the driver's cost grows with the work.

One workload (no-op items, where the driver's own work is all there is to measure) at 1,000,
10,000 and, without ``--quick``, 100,000 items; for each size and method, the wall time and the
driver process's CPU time (``time.process_time``: every thread of the driver, Ray's own core
worker threads included), each per item. Flat per-item CPU means the driver's cost is linear
in the work; a rising one means something in the driver scans or sorts what is pending.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any

import numpy as np
import ray

from asyncpool import refs
from asyncpool.tasks import TaskPool

from .core import ALTERNATIVES, Kind, Outcome, drain_in_thread, ignore_progress
from .workloads._ray_data import quiet_ray_data
from .workloads.noop import noop_refs

SIZES = (1_000, 10_000, 100_000)
QUICK_SIZES = (1_000, 10_000)


def _identity(i: int) -> int:
    return i


def _data_identity(batch: dict[str, np.ndarray[Any, Any]]) -> dict[str, np.ndarray[Any, Any]]:
    return batch


@dataclass(frozen=True)
class ScaleMethod:
    name: str
    run: Callable[[TaskPool[[int], int], int], Awaitable[Outcome]]
    describe: str
    kind: Kind


@dataclass(frozen=True)
class ScaleRow:
    method: str
    items: int
    seconds: float
    driver_cpu_s: float
    wall_us_per_item: float
    cpu_us_per_item: float
    correct: int
    errors: int


def _exact(values: Sequence[Any], n: int) -> Outcome:
    return Outcome(n if sorted(values) == list(range(n)) else 0, 0)


async def _count_identities(
    opened: AbstractAsyncContextManager[AsyncIterator[tuple[int, Any]]],
) -> Outcome:
    """Drain a stream of ``(index, value)`` pairs; correct where the value is its index."""
    correct = 0
    async with opened as stream:
        async for i, value in stream:
            correct += i == value
    return Outcome(correct, 0)


async def _asyncpool_map(pool: TaskPool[[int], int], n: int) -> Outcome:
    return await _count_identities(pool.map(range(n)))


async def _asyncpool_as_completed(pool: TaskPool[[int], int], n: int) -> Outcome:
    return await _count_identities(refs.as_completed(noop_refs(n)))


async def _asyncio(pool: TaskPool[[int], int], n: int) -> Outcome:
    return _exact(await asyncio.gather(*noop_refs(n)), n)


async def _ray_map_unordered(pool: TaskPool[[int], int], n: int) -> Outcome:
    from .workloads.noop import _noop

    return _exact(
        await drain_in_thread(
            lambda: ray.util.map_unordered(_noop, range(n)),  # type: ignore[arg-type]
            ignore_progress,
        ),
        n,
    )


async def _ray_data(pool: TaskPool[[int], int], n: int) -> Outcome:
    ds = ray.data.range(n).map_batches(_data_identity)
    rows = await drain_in_thread(ds.iter_rows, ignore_progress)
    return _exact([int(r["id"]) for r in rows], n)


METHODS = (
    ScaleMethod("asyncpool_map", _asyncpool_map,
                'TaskPool(identity, batch_size="auto").map(range(n))', "asyncpool"),
    ScaleMethod("asyncpool_as_completed", _asyncpool_as_completed,
                "n no-op tasks, async for over asyncpool.as_completed(refs)", "asyncpool"),
    ScaleMethod("asyncio", _asyncio,
                "n no-op tasks, await asyncio.gather(*refs) (hand-written)", "handwritten"),
    ScaleMethod("ray_map_unordered", _ray_map_unordered,
                "ray.util.map_unordered(noop, range(n)), in a thread", "peer"),
    ScaleMethod("ray_data", _ray_data,
                "ray.data.range(n).map_batches(identity), iter_rows() in a thread", "peer"),
)


async def run_scale(sizes: Sequence[int]) -> list[ScaleRow]:
    """Every method at every size, once, in an order rotated per size (warm-up untimed)."""
    quiet_ray_data()
    rows: list[ScaleRow] = []
    async with TaskPool(_identity, batch_size="auto") as pool:
        for m in METHODS:  # warm-up: workers, the auto batch size, Ray Data's executor
            await m.run(pool, 500)
        for k, n in enumerate(sizes):
            order = list(METHODS[k % len(METHODS):]) + list(METHODS[: k % len(METHODS)])
            for m in order:
                cpu0, t0 = time.process_time(), time.perf_counter()
                try:
                    outcome = await m.run(pool, n)
                except Exception:
                    outcome = Outcome(0, n)
                seconds, cpu = time.perf_counter() - t0, time.process_time() - cpu0
                rows.append(ScaleRow(m.name, n, round(seconds, 4), round(cpu, 4),
                                     round(seconds / n * 1e6, 2), round(cpu / n * 1e6, 2),
                                     outcome.correct, outcome.errors))
    order_names = [m.name for m in METHODS]
    rows.sort(key=lambda r: (order_names.index(r.method), r.items))
    return rows


def best_peer(rows: Sequence[ScaleRow], n: int) -> str | None:
    """The alternative to asyncpool with the least wall time per item at ``n`` items."""
    kinds = {m.name: m.kind for m in METHODS}
    peers = [r for r in rows if r.items == n and kinds[r.method] in ALTERNATIVES]
    return min(peers, key=lambda r: r.wall_us_per_item).method if peers else None


def cpu_growth(rows: Sequence[ScaleRow], method: str) -> float | None:
    """Per-item driver CPU at the largest size over that at the smallest (1.0 = flat)."""
    mine = sorted((r for r in rows if r.method == method), key=lambda r: r.items)
    if len(mine) < 2 or mine[0].cpu_us_per_item <= 0:
        return None
    return round(mine[-1].cpu_us_per_item / mine[0].cpu_us_per_item, 3)
