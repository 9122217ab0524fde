"""Where the driver's CPU goes per call: asyncpool against the raw Ray pattern on the same refs.

At ~100k calls a minute the driver is CPU-bound, so what decides throughput is the driver's CPU
per call, not wall time. This measures it directly, which a noisy shared machine disturbs far
less than throughput: for each pattern, the driver process's CPU (``getrusage``: every thread,
Ray's core-worker threads included) and the event-loop thread's own CPU (``time.thread_time``
on the loop), each divided by the number of calls, side by side in one run and interleaved over
rounds. ``--profile PATTERN`` prints the top functions of one pattern's loop thread (cProfile).

Patterns (the same actors or the same remote function for both sides of each pair):

* ``actor_raw_get`` — every ``actor.m.remote`` at once, one ``ray.get(list)`` (the judge
  workload's ``ray_actors`` ceiling: no bound, no streaming); ``actor_raw_window`` —
  ``actor.m.remote`` kept at 512 in flight with ``ray.wait`` (Ray's documented pattern);
  ``actor_pool_map`` — :meth:`ActorPool.map`; ``actor_pool_call`` —
  :meth:`ActorPool.call` from one task per item (a server's handlers), gathered.
* ``actor_pool_map_batched`` — :meth:`ActorPool.map` with ``batch_size=BATCH``;
  ``actor_raw_window_batched`` — the same batching by hand: ``BATCH`` items per call to a
  ``score_many`` method, ``IN_FLIGHT // BATCH`` calls in flight with ``ray.wait`` (the judge
  workload's ``ray_actors_batched``). Per item, not per call.
* ``task_raw_get`` — ``ray.get([f.remote(x) ...])``; ``task_raw_window`` — 512 in flight with
  ``ray.wait``; ``gather`` / ``as_completed`` — :func:`asyncpool.gather` / ``as_completed`` of
  the same refs; ``task_pool_map`` — :meth:`TaskPool.map`.

    python -m benchmarks.bench_driver_cpu [--items 5000] [--rounds 3] [--profile actor_pool_map]
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import io
import os
import pstats
import resource
import statistics
import time
from collections.abc import Awaitable, Callable
from typing import Any

import ray

import asyncpool
from asyncpool import ActorPool, TaskPool

IN_FLIGHT = 512
ACTORS = 4
BATCH = 8


class Echo:
    """An async actor that answers at once: the driver's side is all that is measured."""

    async def score(self, x: int) -> int:
        return x + 1

    async def score_many(self, xs: list[int]) -> list[int]:
        return [x + 1 for x in xs]


def echo(x: int) -> int:
    return x + 1


Pattern = Callable[[int], Awaitable[int]]


def _raw_window(submit: Callable[[int], ray.ObjectRef[Any]], n: int, batch: int = 1) -> int:
    """Ray's documented bounded pattern: keep IN_FLIGHT items in flight, ``ray.wait`` for the
    next. ``submit(x)`` sends item ``x`` (or, with ``batch > 1``, items ``x`` to
    ``x + batch - 1`` in one call answering their list)."""
    pending: list[ray.ObjectRef[Any]] = []
    right = 0
    nxt = 0
    while nxt < n or pending:
        while nxt < n and len(pending) < IN_FLIGHT // batch:
            pending.append(submit(nxt))
            nxt += batch
        ready, pending = ray.wait(pending, num_returns=min(len(pending), 64 // batch), timeout=None)
        done = ray.get(ready)
        right += len(done) if batch == 1 else sum(len(d) for d in done)
    return right


def patterns(
    pool: ActorPool[Echo], batched: ActorPool[Echo], task_pool: TaskPool[[int], int]
) -> dict[str, Pattern]:
    actors = pool.actors
    remote = ray.remote(echo)

    async def actor_raw_get(n: int) -> int:
        return len(ray.get([actors[x % ACTORS].score.remote(x) for x in range(n)]))

    async def actor_raw_window(n: int) -> int:
        return _raw_window(lambda x: actors[x % ACTORS].score.remote(x), n)

    async def actor_pool_map(n: int) -> int:
        return sum([1 async for _ in pool.map("score", range(n))])

    async def actor_pool_map_batched(n: int) -> int:
        return sum([1 async for _ in batched.map("score", range(n))])

    async def actor_raw_window_batched(n: int) -> int:
        return _raw_window(
            lambda x: actors[x // BATCH % ACTORS].score_many.remote(
                list(range(x, min(x + BATCH, n)))
            ),
            n,
            BATCH,
        )

    async def actor_pool_call(n: int) -> int:
        return len(await asyncio.gather(*(pool.call("score", x) for x in range(n))))

    async def task_raw_get(n: int) -> int:
        return len(ray.get([remote.remote(x) for x in range(n)]))

    async def task_raw_window(n: int) -> int:
        return _raw_window(remote.remote, n)

    async def gather(n: int) -> int:
        return len(await asyncpool.gather([remote.remote(x) for x in range(n)]))

    async def as_completed(n: int) -> int:
        async with asyncpool.as_completed([remote.remote(x) for x in range(n)]) as stream:
            return sum([1 async for _ in stream])

    async def task_pool_map(n: int) -> int:
        return sum([1 async for _ in task_pool.map(range(n))])

    return {
        "actor_raw_get": actor_raw_get,
        "actor_raw_window": actor_raw_window,
        "actor_pool_map": actor_pool_map,
        "actor_pool_call": actor_pool_call,
        "actor_pool_map_batched": actor_pool_map_batched,
        "actor_raw_window_batched": actor_raw_window_batched,
        "task_raw_get": task_raw_get,
        "task_raw_window": task_raw_window,
        "gather": gather,
        "as_completed": as_completed,
        "task_pool_map": task_pool_map,
    }


def _process_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _waiter_cpu() -> float:
    """CPU seconds of the completion core's waiter thread so far (0 before it exists)."""
    from asyncpool import _completion

    return sum(
        time.clock_gettime(time.pthread_getcpuclockid(t.ident))
        for t in _completion.helper_threads()
        if t.ident is not None
    )


async def _measure(fn: Pattern, n: int) -> tuple[float, float, float, float]:
    """(process, loop-thread, waiter-thread CPU µs per call, wall s) for one run of ``fn``."""
    p0, t0, c0, w0 = _process_cpu(), time.thread_time(), _waiter_cpu(), time.perf_counter()
    done = await fn(n)
    p1, t1, c1, w1 = _process_cpu(), time.thread_time(), _waiter_cpu(), time.perf_counter()
    assert done == n, (fn, done, n)
    return (p1 - p0) / n * 1e6, (t1 - t0) / n * 1e6, (c1 - c0) / n * 1e6, w1 - w0


async def main(items: int, rounds: int, profile: str | None, only: list[str] | None) -> None:
    async with asyncpool.connect(), ActorPool(
        Echo, size=ACTORS, max_concurrency=IN_FLIGHT // ACTORS, num_cpus=0, metrics=False
    ) as pool, ActorPool(
        Echo, size=ACTORS, max_concurrency=IN_FLIGHT // ACTORS // BATCH, batch_size=BATCH,
        num_cpus=0, metrics=False,
    ) as batched, TaskPool(echo, max_in_flight=IN_FLIGHT, metrics=False) as task_pool:
        table = patterns(pool, batched, task_pool)
        for fn in table.values():
            await fn(min(items, 500))  # warm-up: workers started, code paths compiled
        if profile is not None:
            prof = cProfile.Profile()
            prof.enable()
            await table[profile](items)
            prof.disable()
            out = io.StringIO()
            stats = pstats.Stats(prof, stream=out).sort_stats(os.environ.get("SORT", "tottime"))
            stats.print_stats(int(os.environ.get("TOP", "60")))
            print(out.getvalue())
            return
        names = [n for n in table if only is None or n in only]
        figures: dict[str, list[tuple[float, float, float, float]]] = {k: [] for k in names}
        for r in range(rounds):
            for name in names[r % len(names):] + names[: r % len(names)]:
                figures[name].append(await _measure(table[name], items))
    print(f"driver CPU per call, median of {rounds} rounds of {items} calls [min-max]")
    print(f"{'pattern':<24} {'process µs':>22} {'loop thread µs':>22} {'waiter µs':>10}"
          f" {'calls/s':>9}")
    for name, runs in figures.items():
        proc = [r[0] for r in runs]
        loop = [r[1] for r in runs]
        waiter = statistics.median(r[2] for r in runs)
        rate = items / statistics.median(r[3] for r in runs)
        print(f"{name:<24} {statistics.median(proc):>8.1f} [{min(proc):.0f}-{max(proc):.0f}]"
              f"{'':>4} {statistics.median(loop):>8.1f} [{min(loop):.0f}-{max(loop):.0f}]"
              f"{'':>4} {waiter:>10.1f} {rate:>9.0f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--profile", default=None)
    parser.add_argument("--only", nargs="+", default=None, help="measure only these patterns")
    args = parser.parse_args()
    asyncpool.run(main, args.items, args.rounds, args.profile, args.only)
