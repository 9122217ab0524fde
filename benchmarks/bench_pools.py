"""TaskPool and ActorPool against what users write today, side by side in one run.

Two scenarios, each reported as items per minute and as ratios from the same run:

* **latency-bound** (each item waits 50 ms, as a call to a remote judge does; 512 in flight):
  ``executor`` — ``async with sem: await loop.run_in_executor(None, ray.get, f.remote(x))``
  with SPREAD tasks, the common pattern; ``actor_pool`` — :class:`ActorPool` of async judge
  actors (reporting to Ray's metrics, the default); ``actor_pool_no_metrics`` — the same
  with ``metrics=False`` (what the metrics cost); ``ray_actors`` — the same actors called raw
  and collected with one ``ray.get`` (the ceiling).
* **tiny** (microseconds of work per item): ``per_item_tasks`` — one Ray task per item,
  collected with ``ray.get``; ``task_pool_auto`` — :class:`TaskPool` with ``batch_size="auto"``.

    python -m benchmarks.bench_pools [--judge-items 2048] [--tiny-items 20000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from collections.abc import Awaitable, Callable

import ray

import asyncpool
from asyncpool import ActorPool, TaskPool

JUDGE_S = 0.05
IN_FLIGHT = 512
JUDGE_ACTORS = 4


def judge_task(x: int) -> int:
    time.sleep(JUDGE_S)
    return x + 1


class Judge:
    async def score(self, x: int) -> int:
        await asyncio.sleep(JUDGE_S)
        return x + 1


def tiny(x: int) -> bool:
    return (x * 2654435761) % 97 != 1000


async def executor_pattern(n: int) -> int:
    remote = ray.remote(judge_task).options(scheduling_strategy="SPREAD", num_cpus=0)
    loop = asyncio.get_running_loop()
    sem = asyncio.Semaphore(IN_FLIGHT)

    async def one(x: int) -> int:
        async with sem:
            value: int = await loop.run_in_executor(None, ray.get, remote.remote(x))
            return value

    values = await asyncio.gather(*(one(x) for x in range(n)))
    return sum(v == x + 1 for x, v in enumerate(values))


def make_judge_methods(
    pool: ActorPool[Judge], quiet: ActorPool[Judge]
) -> dict[str, Callable[[int], Awaitable[int]]]:
    async def actor_pool(n: int) -> int:
        return sum([v == x + 1 async for x, v in pool.map("score", range(n))])

    async def actor_pool_no_metrics(n: int) -> int:
        return sum([v == x + 1 async for x, v in quiet.map("score", range(n))])

    async def ray_actors(n: int) -> int:
        actors = pool.actors
        refs = [actors[x % len(actors)].score.remote(x) for x in range(n)]
        values: list[int] = ray.get(refs)
        return sum(v == x + 1 for x, v in enumerate(values))

    return {"actor_pool": actor_pool, "actor_pool_no_metrics": actor_pool_no_metrics,
            "ray_actors": ray_actors}


async def per_item_tasks(n: int) -> int:
    remote = ray.remote(tiny)
    return sum(ray.get([remote.remote(x) for x in range(n)]))


async def task_pool_auto(n: int) -> int:
    async with TaskPool(tiny, batch_size="auto") as pool:
        return sum([v async for _, v in pool.map(range(n))])


async def timed(fn: Callable[[int], Awaitable[int]], n: int) -> tuple[float, int]:
    t0 = time.perf_counter()
    correct = await fn(n)
    return time.perf_counter() - t0, correct


async def measure(judge_items: int, executor_items: int, tiny_items: int, rounds: int
                  ) -> list[dict[str, object]]:
    totals: dict[tuple[str, str], list[float]] = {}

    def add(scenario: str, method: str, n: int, seconds: float, correct: int) -> None:
        t = totals.setdefault((scenario, method), [0.0, 0.0, 0.0])
        t[0] += n
        t[1] += seconds
        t[2] += correct

    per_actor = IN_FLIGHT // JUDGE_ACTORS
    async with ActorPool(
        Judge, size=JUDGE_ACTORS, max_concurrency=per_actor, num_cpus=0, name="bench-judge"
    ) as pool, ActorPool(
        Judge, size=JUDGE_ACTORS, max_concurrency=per_actor, num_cpus=0, metrics=False
    ) as quiet:
        methods = make_judge_methods(pool, quiet)
        await methods["actor_pool"](64)  # warm-up
        await methods["actor_pool_no_metrics"](64)
        await per_item_tasks(200)
        await task_pool_auto(2000)
        for r in range(rounds):
            order = ["executor", "actor_pool", "actor_pool_no_metrics", "ray_actors"]
            order = order[r % 4 :] + order[: r % 4]
            for name in order:
                if name == "executor":
                    seconds, correct = await timed(executor_pattern, executor_items)
                    add("latency_bound", name, executor_items, seconds, correct)
                else:
                    seconds, correct = await timed(methods[name], judge_items)
                    add("latency_bound", name, judge_items, seconds, correct)
            tiny_methods = [("per_item_tasks", per_item_tasks), ("task_pool_auto", task_pool_auto)]
            if r % 2:
                tiny_methods.reverse()
            for name, fn in tiny_methods:
                n = tiny_items if name == "task_pool_auto" else max(1, tiny_items // 10)
                seconds, correct = await timed(fn, n)
                add("tiny", name, n, seconds, correct)
    rows: list[dict[str, object]] = []
    for (scenario, method), (count, total_s, right) in totals.items():
        rows.append({"scenario": scenario, "method": method, "items": int(count),
                     "seconds": round(total_s, 3), "per_minute": round(count / total_s * 60, 1),
                     "correct": int(right)})
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--judge-items", type=int, default=2048)
    ap.add_argument("--executor-items", type=int, default=256,
                    help="the executor pattern is slow by design; fewer of the same items")
    ap.add_argument("--tiny-items", type=int, default=50_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--address", default=None)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    rt = asyncpool.init(args.address, log_to_driver=False)
    try:
        rows = asyncpool.run(measure, args.judge_items, args.executor_items, args.tiny_items,
                             args.rounds)
    finally:
        rt.shutdown()
    rate = {(str(r["scenario"]), str(r["method"])): float(str(r["per_minute"])) for r in rows}
    print(f"{'scenario':<15}{'method':<16}{'items':>8}{'per minute':>14}{'correct':>9}")
    for r in rows:
        print(f"{r['scenario']!s:<15}{r['method']!s:<16}{r['items']!s:>8}"
              f"{r['per_minute']!s:>14}{r['correct']!s:>9}")
    ratios = {
        "actor_pool / executor": rate[("latency_bound", "actor_pool")]
        / rate[("latency_bound", "executor")],
        "actor_pool / ray_actors": rate[("latency_bound", "actor_pool")]
        / rate[("latency_bound", "ray_actors")],
        "actor_pool / actor_pool_no_metrics": rate[("latency_bound", "actor_pool")]
        / rate[("latency_bound", "actor_pool_no_metrics")],
        "task_pool_auto / per_item_tasks": rate[("tiny", "task_pool_auto")]
        / rate[("tiny", "per_item_tasks")],
    }
    for name, value in ratios.items():
        print(f"{name:<36}{value:8.2f}×")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"ray_version": ray.__version__, "rows": rows,
                       "ratios": {k: round(v, 3) for k, v in ratios.items()}}, fh, indent=2)


if __name__ == "__main__":
    main()
