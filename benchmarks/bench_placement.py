"""Allocation latency on free resources: ``allocate`` against a bare Ray placement group.

Each round times, interleaved (the order rotates every round, so drift hits all alike):

* ``bare``: ``placement_group(...)`` + ``ray.get(pg.ready())`` + ``remove_placement_group``;
* ``bare_await``: the same with ``await pg.ready()`` (what an async caller would hand-write);
* ``allocate``: ``await asyncpool.placement.allocate(...)`` + ``remove_placement_group``
  (argument validation, the feasibility check, the submission and the native await). The
  check uses the node snapshot of a recent allocation when there is one (see
  ``asyncpool.placement._first_check``), as in a job that allocates several groups;
* ``allocate_cold``: the same with no snapshot, so the check first reads ``ray.nodes()`` in a
  worker thread (the first allocation of a job).

Before every measurement the benchmark waits until the cluster shows all its resources free
again (Ray returns a removed group's resources asynchronously), so every figure is a latency on
free resources. Reports medians and the ratio to ``bare`` (target: allocate within 1.2x).

    python -m benchmarks.bench_placement [--reps 40] [--bundles 2] [--strategy PACK] [--json f]

Starts its own local Ray (2 CPUs, 4 fake GPUs) unless ``--address`` is given.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from collections.abc import Awaitable, Callable
from typing import Any

import ray
from ray.util.placement_group import placement_group, remove_placement_group

from asyncpool import _gcs
from asyncpool.placement import allocate


def _resources_free(total: dict[str, float]) -> bool:
    free = ray.available_resources()
    return all(abs(free.get(k, 0.0) - v) < 1e-6 for k, v in total.items())


async def wait_free(total: dict[str, float], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not _resources_free(total):
        if time.monotonic() > deadline:
            raise RuntimeError("resources were not returned in time")
        await asyncio.sleep(0.005)


def make_methods(
    bundles: list[dict[str, float]], strategy: str
) -> dict[str, Callable[[], Awaitable[None]]]:
    async def bare() -> None:
        pg = placement_group(bundles, strategy=strategy)
        ray.get(pg.ready())
        remove_placement_group(pg)

    async def bare_await() -> None:
        pg = placement_group(bundles, strategy=strategy)
        await pg.ready()
        remove_placement_group(pg)

    async def via_allocate() -> None:
        pg = await allocate(bundles, strategy=strategy)
        remove_placement_group(pg)

    async def via_allocate_cold() -> None:
        _gcs.forget_nodes()  # no recent node snapshot: the check asks the GCS
        pg = await allocate(bundles, strategy=strategy)
        remove_placement_group(pg)

    return {
        "bare": bare,
        "bare_await": bare_await,
        "allocate": via_allocate,
        "allocate_cold": via_allocate_cold,
    }


async def measure(
    reps: int, bundles: list[dict[str, float]], strategy: str
) -> dict[str, list[float]]:
    methods = make_methods(bundles, strategy)
    watched = {k for b in bundles for k in b}
    total = {k: v for k, v in ray.cluster_resources().items() if k in watched}
    for fn in methods.values():  # warm-up
        for _ in range(3):
            await wait_free(total)
            await fn()
    times: dict[str, list[float]] = {m: [] for m in methods}
    names = list(methods)
    for r in range(reps):
        order = names[r % len(names) :] + names[: r % len(names)]
        for name in order:
            await wait_free(total)
            t0 = time.perf_counter()
            await methods[name]()
            times[name].append(time.perf_counter() - t0)
    return times


def report(times: dict[str, list[float]]) -> list[dict[str, Any]]:
    base = statistics.median(times["bare"])
    rows = []
    for name, ts in times.items():
        med = statistics.median(ts)
        rows.append(
            {
                "method": name,
                "reps": len(ts),
                "median_ms": round(med * 1e3, 3),
                "p90_ms": round(statistics.quantiles(ts, n=10)[-1] * 1e3, 3),
                "ratio_vs_bare": round(med / base, 3),
            }
        )
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--reps", type=int, default=40)
    ap.add_argument("--bundles", type=int, default=2, help="bundles of {GPU: 1, CPU: 0.5}")
    ap.add_argument("--strategy", default="PACK")
    ap.add_argument("--address", default=None, help="an existing cluster (default: start one)")
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    if args.address:
        ray.init(address=args.address, log_to_driver=False)
    else:
        ray.init(
            address="local", num_cpus=2, num_gpus=4, include_dashboard=False, log_to_driver=False
        )
    bundles = [{"GPU": 1.0, "CPU": 0.5} for _ in range(args.bundles)]
    try:
        times = asyncio.run(measure(args.reps, bundles, args.strategy))
    finally:
        ray.shutdown()
    rows = report(times)
    print(f"{len(bundles)} bundles of {bundles[0]}, {args.strategy}, {args.reps} reps each")
    print(f"{'method':<12}{'median ms':>11}{'p90 ms':>10}{'x bare':>9}")
    for row in rows:
        print(
            f"{row['method']:<12}{row['median_ms']:>11.2f}{row['p90_ms']:>10.2f}"
            f"{row['ratio_vs_bare']:>9.3f}"
        )
    for method in ("allocate", "allocate_cold"):
        ratio = next(r["ratio_vs_bare"] for r in rows if r["method"] == method)
        verdict = "OK" if ratio <= 1.2 else "MISSED"
        print(f"{method} / bare = {ratio:.3f} (target <= 1.2): {verdict}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(
                {"ray_version": ray.__version__, "bundles": bundles, "rows": rows}, fh, indent=2
            )


if __name__ == "__main__":
    main()
