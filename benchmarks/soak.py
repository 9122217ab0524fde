"""Soak: ``TaskPool.map`` over a million tiny items streamed from a generator.

Checks, and prints as one JSON line: every item came back exactly once, the driver's memory
grew by less than the budget, and the pool never had more Ray tasks in flight than its bound.

    python -m benchmarks.soak [--items 1000000] [--address ADDR]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import sys
import time
from collections.abc import Iterator
from typing import Any

import asyncpool
from asyncpool import TaskPool


def check(x: int) -> int:
    return x ^ 0x5A5A


def rss_mb() -> float:
    """The process's resident memory now (Linux /proc), in MiB."""
    with open("/proc/self/statm") as fh:
        pages = int(fh.read().split()[1])
    return pages * resource.getpagesize() / 2**20


async def soak(items: int, max_in_flight: int = 8) -> dict[str, Any]:
    def source() -> Iterator[int]:
        yield from range(items)

    seen = bytearray(items)
    duplicates = wrong = 0
    peak_tasks = 0
    rss_start = rss_mb()
    rss_peak = rss_start
    started = time.monotonic()
    async with TaskPool(check, batch_size="auto", max_in_flight=max_in_flight) as pool:
        engine = pool._engine
        assert engine is not None
        async for index, value in pool.map(source()):
            if seen[index]:
                duplicates += 1
            seen[index] = 1
            wrong += value != index ^ 0x5A5A
            peak_tasks = max(peak_tasks, engine.slots.borrowed)
            if index % 50_000 == 0:
                rss_peak = max(rss_peak, rss_mb())
                await asyncio.sleep(0)
        stats = pool.stats
    rss_peak = max(rss_peak, rss_mb())
    return {
        "items_in": items,
        "items_out": sum(seen),
        "duplicates": duplicates,
        "wrong": wrong,
        "seconds": round(time.monotonic() - started, 1),
        "per_minute": round(items / (time.monotonic() - started) * 60),
        "rss_start_mb": round(rss_start, 1),
        "rss_growth_mb": round(rss_peak - rss_start, 1),
        "peak_tasks_in_flight": peak_tasks,
        "max_in_flight": max_in_flight,
        "completed": stats.completed,
        "failed": stats.failed,
    }


def verdict(result: dict[str, Any], budget_mb: float = 200.0) -> list[str]:
    problems = []
    if result["items_out"] != result["items_in"]:
        problems.append("items missing")
    if result["duplicates"] or result["wrong"] or result["failed"]:
        problems.append("duplicates, wrong values or failures")
    if result["rss_growth_mb"] >= budget_mb:
        problems.append(f"memory grew {result['rss_growth_mb']} MB >= {budget_mb} MB")
    if result["peak_tasks_in_flight"] > result["max_in_flight"]:
        problems.append("in-flight bound exceeded")
    return problems


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", type=int, default=1_000_000)
    ap.add_argument("--address", default=None)
    args = ap.parse_args()
    rt = asyncpool.init(args.address, log_to_driver=False)
    try:
        result = asyncpool.run(soak, args.items)
    finally:
        rt.shutdown()
    problems = verdict(result)
    print(json.dumps({**result, "ok": not problems, "problems": problems}))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
