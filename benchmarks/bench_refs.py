"""Collecting no-op task results: asyncpool's ref layer against plain ``ray.get(list)``.

Every method submits the same number of the same no-op tasks and collects them; the methods
are interleaved round by round so that machine noise hits them alike, and each is reported as
a rate and as a ratio to ``ray_get`` from the same run.

    python -m benchmarks.bench_refs [--tasks 4000] [--rounds 5] [--json out.json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from collections.abc import Awaitable, Callable

import ray

import asyncpool
from asyncpool import refs


@ray.remote
def _noop(i: int) -> int:
    return i


def _submit(n: int) -> list[ray.ObjectRef[int]]:
    return [_noop.remote(i) for i in range(n)]


async def m_ray_get(n: int) -> None:
    ray.get(_submit(n))


async def m_asyncpool_gather(n: int) -> None:
    await refs.gather(_submit(n))


async def m_asyncpool_as_completed(n: int) -> None:
    async with refs.as_completed(_submit(n)) as stream:
        async for _ in stream:
            pass


async def m_asyncio_gather(n: int) -> None:
    await asyncio.gather(*_submit(n))


async def m_executor(n: int, limit: int = 512) -> None:
    loop = asyncio.get_running_loop()
    sem = asyncio.Semaphore(limit)

    async def one(i: int) -> int:
        async with sem:
            value: int = await loop.run_in_executor(None, ray.get, _noop.remote(i))
            return value

    await asyncio.gather(*(one(i) for i in range(n)))


METHODS: dict[str, Callable[[int], Awaitable[None]]] = {
    "ray_get": m_ray_get,
    "asyncpool_gather": m_asyncpool_gather,
    "asyncpool_as_completed": m_asyncpool_as_completed,
    "asyncio_gather": m_asyncio_gather,
    "executor": m_executor,
}


async def measure(tasks: int, rounds: int) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {m: [] for m in METHODS}
    for fn in METHODS.values():  # warm-up: workers started, functions exported
        await fn(min(tasks, 200))
    for r in range(rounds):
        order = list(METHODS.items())
        order = order[r % len(order) :] + order[: r % len(order)]
        for name, fn in order:
            t0 = time.perf_counter()
            await fn(tasks)
            times[name].append(time.perf_counter() - t0)
    return times


def report(times: dict[str, list[float]], tasks: int) -> list[dict[str, float | str]]:
    base = statistics.median(times["ray_get"])
    rows: list[dict[str, float | str]] = []
    for name, ts in times.items():
        med = statistics.median(ts)
        rows.append(
            {
                "method": name,
                "tasks": tasks,
                "median_s": round(med, 4),
                "per_second": round(tasks / med, 1),
                "ratio_vs_ray_get": round(base / med, 3),
            }
        )
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", type=int, default=4000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument(
        "--address", default="local",
        help="cluster to run on (default: a new embedded one, so other clusters are not disturbed)",
    )
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    rt = asyncpool.init(args.address, log_to_driver=False)
    try:
        times = asyncpool.run(measure, args.tasks, args.rounds)
    finally:
        rt.shutdown()
    rows = report(times, args.tasks)
    print(f"{'method':<24}{'tasks/s':>10}{'× ray_get':>11}")
    for row in rows:
        print(f"{row['method']:<24}{row['per_second']:>10}{row['ratio_vs_ray_get']:>11}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"ray_version": ray.__version__, "rows": rows}, fh, indent=2)


if __name__ == "__main__":
    main()
