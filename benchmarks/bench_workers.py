"""WorkerGroup overhead: ``broadcast``/``dispatch`` against the same actor calls and ``ray.get``.

One worker group of 8 actors (a VirtualCluster of two virtual nodes with 4 CPU-only bundles
each) is made once; every round then times, interleaved (the order rotates every round, so that
machine drift hits all methods alike):

* ``ray_get_broadcast``: ``ray.get([w.noop.remote() for w in workers])``;
* ``broadcast``: ``await group.broadcast("noop")``;
* ``ray_get_dispatch``: ``ray.get([w.work.remote(shard_i) for ...])`` with 8 small shards;
* ``dispatch``: ``await group.dispatch("work", shards)`` with the same shards;
* ``dispatch_stream``: ``async for`` over the same dispatch (completion order), for reference.

Reports the median of each and its ratio to the matching ``ray.get`` baseline (target: the
awaited ``broadcast`` and ``dispatch`` within 1.2x).

    python -m benchmarks.bench_workers [--reps 300] [--workers 8] [--json out.json]

Starts its own local Ray (``asyncpool.init(num_cpus=8)`` on a new embedded cluster) unless
``--address`` is given.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Awaitable, Callable
from typing import Any

import ray

import asyncpool
from asyncpool.cluster import VirtualCluster
from asyncpool.sharding import shard
from asyncpool.workers import WorkerGroup


class Worker:
    def noop(self) -> None:
        return None

    def work(self, items: list[int]) -> int:
        return len(items)


Method = Callable[[], Awaitable[Any]]


def methods(group: WorkerGroup, shards: list[list[int]]) -> dict[str, Method]:
    workers = group.workers

    async def ray_get_broadcast() -> Any:
        return ray.get([w.noop.remote() for w in workers])

    async def broadcast() -> Any:
        return await group.broadcast("noop")

    async def ray_get_dispatch() -> Any:
        return ray.get([w.work.remote(s) for w, s in zip(workers, shards, strict=True)])

    async def dispatch() -> Any:
        return await group.dispatch("work", shards)

    async def dispatch_stream() -> Any:
        async with group.dispatch("work", shards) as results:
            return [item async for item in results]

    return {
        "ray_get_broadcast": ray_get_broadcast,
        "broadcast": broadcast,
        "ray_get_dispatch": ray_get_dispatch,
        "dispatch": dispatch,
        "dispatch_stream": dispatch_stream,
    }


BASELINE = {
    "broadcast": "ray_get_broadcast",
    "dispatch": "ray_get_dispatch",
    "dispatch_stream": "ray_get_dispatch",
}


async def measure(reps: int, workers: int) -> dict[str, list[float]]:
    per_node = [workers // 2, workers - workers // 2] if workers > 1 else [1]
    async with (
        VirtualCluster(per_node, use_gpus=False, name="bench-workers") as cluster,
        WorkerGroup(cluster, Worker, name="bench") as group,
    ):
        shards = shard(list(range(64 * workers)), workers)
        table = methods(group, shards)
        for fn in table.values():  # warm-up: methods exported, connections made
            for _ in range(20):
                await fn()
        times: dict[str, list[float]] = {name: [] for name in table}
        items = list(table.items())
        for r in range(reps):
            k = r % len(items)
            for name, fn in items[k:] + items[:k]:
                t0 = time.perf_counter()
                await fn()
                times[name].append(time.perf_counter() - t0)
        return times


def report(times: dict[str, list[float]]) -> list[dict[str, Any]]:
    medians = {name: statistics.median(ts) for name, ts in times.items()}
    rows = []
    for name, med in medians.items():
        base = BASELINE.get(name)
        rows.append(
            {
                "method": name,
                "median_ms": round(med * 1e3, 3),
                "p90_ms": round(statistics.quantiles(times[name], n=10)[-1] * 1e3, 3),
                "baseline": base or "",
                "ratio": round(med / medians[base], 3) if base else 1.0,
            }
        )
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=300)
    ap.add_argument("--workers", type=int, default=8)
    ap.add_argument("--address", default=None, help="an existing cluster (default: start one)")
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    rt = asyncpool.init(args.address or "local", num_cpus=args.workers, log_to_driver=False)
    try:
        times = asyncpool.run(measure, args.reps, args.workers)
    finally:
        rt.shutdown()
    rows = report(times)
    print(f"{args.workers} workers, {args.reps} interleaved reps, Ray {ray.__version__}")
    print(f"{'method':<20}{'median ms':>11}{'p90 ms':>10}   {'× baseline':<30}")
    for row in rows:
        ratio = f"{row['ratio']:.3f} × {row['baseline']}" if row["baseline"] else "(baseline)"
        print(f"{row['method']:<20}{row['median_ms']:>11}{row['p90_ms']:>10}   {ratio:<30}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(
                {"ray_version": ray.__version__, "workers": args.workers, "rows": rows},
                fh,
                indent=2,
            )


if __name__ == "__main__":
    main()
