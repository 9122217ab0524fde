"""``judge``: latency-bound calls, the stand-in for a remote judge (an LLM, a grader service):
50 ms of waiting that returns a score derived from the item; correct when the score matches.

Baseline ``asyncio`` (hand-written gather of awaited actor refs under a semaphore), ceiling
``ray_actors`` (raw calls on the same actors, all sent at once, one ``ray.get(list)``: it
ignores the 512-in-flight bound every other row keeps); ``ray_wait_window`` is the same raw
calls held to that bound with Ray's documented ``ray.wait`` pattern, the like-for-like
figure for what a bounded caller can get. ``asyncpool_batched`` and ``ray_actors_batched``
send :data:`JUDGE_BATCH` items per Ray call (ActorPool's ``batch_size``, and the same by hand
to a ``score_many`` method), still 512 items in flight: a Ray call costs the driver far more
CPU than a 50 ms judge call costs anyone, so the unbatched rows measure the driver. The
methods are described in :data:`JUDGE`.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import ray

from asyncpool.actors import ActorPool

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
)

#: The judge's latency: a remote judge (an LLM, a grader service) answering in 50 ms.
JUDGE_LATENCY_S = 0.05
#: How many judge calls the concurrent methods keep in flight.
JUDGE_IN_FLIGHT = 512
JUDGE_ACTORS = 4
#: Items per round of the methods that run a few calls at a time by design (``executor``,
#: ``ray_actor_pool``), so that they do not dominate the run.
JUDGE_SLOW_ITEMS = 96
#: Items per Ray call of the batched rows.
JUDGE_BATCH = 8


def judge_score(item: int) -> int:
    """The score the judge gives ``item`` (what every method must return for it)."""
    return (item * 2_654_435_761) % 1_000


class Judge:
    """An async judge actor: each call waits 50 ms, as on a remote judge, then scores."""

    async def score(self, item: int) -> int:
        await asyncio.sleep(JUDGE_LATENCY_S)
        return judge_score(item)

    async def score_many(self, items: list[int]) -> list[int]:
        """The hand-written batch (``ray_actors_batched``): the items scored concurrently."""
        return list(await asyncio.gather(*(self.score(i) for i in items)))


@ray.remote(scheduling_strategy="SPREAD")
def _judge_task(item: int) -> int:
    time.sleep(JUDGE_LATENCY_S)
    return judge_score(item)


def _ok(i: int, value: Any) -> bool:
    return bool(value == judge_score(i))


@dataclass(frozen=True)
class JudgeSession:
    """The judge actors, unbatched (every row but ``asyncpool_batched`` uses these) and the
    batched pool's own."""

    pool: ActorPool[Judge]
    batched: ActorPool[Judge]


@asynccontextmanager
async def judge_session(n: int) -> AsyncIterator[JudgeSession]:
    per_actor = JUDGE_IN_FLIGHT // JUDGE_ACTORS
    async with (
        ActorPool(Judge, size=JUDGE_ACTORS, max_concurrency=per_actor, num_cpus=0) as pool,
        ActorPool(
            Judge, size=JUDGE_ACTORS, max_concurrency=per_actor // JUDGE_BATCH, num_cpus=0,
            batch_size=JUDGE_BATCH,
        ) as batched,
    ):  # fmt: skip
        s = JudgeSession(pool, batched)
        k = min(n, JUDGE_IN_FLIGHT)
        await _executor(s, min(n, 2 * cluster_cpus()), ignore_progress)
        await _asyncio(s, k, ignore_progress)
        await _asyncpool(s, k, ignore_progress)
        await _asyncpool_batched(s, k, ignore_progress)
        await _ray_actor_pool(s, min(n, 2 * JUDGE_ACTORS), ignore_progress)
        await _ray_wait_window(s, k, ignore_progress)
        await _ray_actors(s, k, ignore_progress)
        await _ray_actors_batched(s, k, ignore_progress)
        yield s


async def _executor(s: JudgeSession, n: int, progress: Progress) -> Outcome:
    loop = asyncio.get_running_loop()

    async def call(i: int) -> int:
        value: int = await loop.run_in_executor(None, ray.get, _judge_task.remote(i))
        return value

    return count(await handwritten(n, JUDGE_IN_FLIGHT, call, progress), _ok)


async def _asyncio(s: JudgeSession, n: int, progress: Progress) -> Outcome:
    actors = s.pool.actors

    async def call(i: int) -> int:
        value: int = await actors[i % len(actors)].score.remote(i)
        return value

    return count(await handwritten(n, JUDGE_IN_FLIGHT, call, progress), _ok)


async def _asyncpool(s: JudgeSession, n: int, progress: Progress) -> Outcome:
    return await _map(s.pool, n, progress)


async def _asyncpool_batched(s: JudgeSession, n: int, progress: Progress) -> Outcome:
    return await _map(s.batched, n, progress)


async def _map(pool: ActorPool[Judge], n: int, progress: Progress) -> Outcome:
    correct = errors = 0
    async with pool.map("score", range(n), return_exceptions=True) as stream:
        async for i, value in stream:
            if isinstance(value, BaseException):
                errors += 1
            else:
                correct += _ok(i, value)
            progress(1)
    return Outcome(correct, errors)


async def _ray_actor_pool(s: JudgeSession, n: int, progress: Progress) -> Outcome:
    ray_pool = ray.util.ActorPool(list(s.pool.actors))
    values = await drain_in_thread(
        lambda: ray_pool.map_unordered(lambda actor, i: actor.score.remote(i), list(range(n))),
        progress,
    )
    # ray.util.ActorPool yields values without their item: the scores are right when they
    # are the expected multiset (each missing or wrong one counts as incorrect).
    got = Counter(values)
    return Outcome(sum((got & Counter(judge_score(i) for i in range(n))).values()), 0)


def _windowed(actors: list[Any], n: int, progress: Progress) -> list[Any]:
    """Ray's documented pattern for bounding pending work ("Pattern: Using ray.wait to limit
    the number of pending tasks"): once ``JUDGE_IN_FLIGHT`` calls are pending, ``ray.wait``
    for one before sending the next; blocking, as the pattern is written."""
    values: list[Any] = [None] * n
    pending: list[Any] = []
    index: dict[Any, int] = {}

    def collect(refs: list[Any]) -> None:
        for ref, value in zip(refs, ray.get(refs), strict=True):
            values[index.pop(ref)] = value
        progress(len(refs))

    for i in range(n):
        if len(pending) >= JUDGE_IN_FLIGHT:
            ready, pending = ray.wait(pending, num_returns=1)
            collect(ready)
        ref = actors[i % len(actors)].score.remote(i)
        index[ref] = i
        pending.append(ref)
    collect(pending)
    return values


async def _ray_wait_window(s: JudgeSession, n: int, progress: Progress) -> Outcome:
    values = await asyncio.to_thread(_windowed, s.pool.actors, n, progress)
    return count(values, _ok)


async def _ray_actors(s: JudgeSession, n: int, progress: Progress) -> Outcome:
    actors = s.pool.actors
    values: list[Any] = ray.get([actors[i % len(actors)].score.remote(i) for i in range(n)])
    progress(n)
    return count(values, _ok)


def _windowed_batches(actors: list[Any], n: int, progress: Progress) -> list[Any]:
    """:func:`_windowed` with :data:`JUDGE_BATCH` items per call: at most
    ``JUDGE_IN_FLIGHT`` items (``JUDGE_IN_FLIGHT // JUDGE_BATCH`` calls) pending."""
    values: list[Any] = [None] * n
    pending: list[Any] = []
    chunk_of: dict[Any, list[int]] = {}

    def collect(refs: list[Any]) -> None:
        for ref, scores in zip(refs, ray.get(refs), strict=True):
            chunk = chunk_of.pop(ref)
            for i, score in zip(chunk, scores, strict=True):
                values[i] = score
            progress(len(chunk))

    for c, start in enumerate(range(0, n, JUDGE_BATCH)):
        if len(pending) >= JUDGE_IN_FLIGHT // JUDGE_BATCH:
            ready, pending = ray.wait(pending, num_returns=1)
            collect(ready)
        chunk = list(range(start, min(start + JUDGE_BATCH, n)))
        ref = actors[c % len(actors)].score_many.remote(chunk)
        chunk_of[ref] = chunk
        pending.append(ref)
    collect(pending)
    return values


async def _ray_actors_batched(s: JudgeSession, n: int, progress: Progress) -> Outcome:
    values = await asyncio.to_thread(_windowed_batches, s.pool.actors, n, progress)
    return count(values, _ok)


JUDGE = Workload(
    name="judge",
    baseline="asyncio",
    ceiling="ray_actors",
    methods=(
        Method("asyncio", _asyncio,
               "hand-written: await actor.score.remote(i) (the same async judge actors, "
               f"round-robin) under an asyncio.Semaphore({JUDGE_IN_FLIGHT}), asyncio.gather "
               "(the baseline)", kind="handwritten"),
        Method("executor", _executor,
               "the pattern users have today: SPREAD Ray tasks (default resources: 1 CPU) "
               "that sleep 50 ms, await run_in_executor(None, ray.get, ref) under a semaphore "
               f"of {JUDGE_IN_FLIGHT}; min(executor threads, CPUs) in progress at once (at most "
               f"{JUDGE_SLOW_ITEMS} items per round)",
               max_items=JUDGE_SLOW_ITEMS, kind="today",
               load_note="each call holds a CPU slot and an executor thread"),
        Method("asyncpool", _asyncpool,
               f"ActorPool of {JUDGE_ACTORS} async judge actors x "
               f"{JUDGE_IN_FLIGHT // JUDGE_ACTORS} concurrent calls (num_cpus=0), .map",
               kind="asyncpool"),
        Method("asyncpool_batched", _asyncpool_batched,
               f"ActorPool(..., batch_size={JUDGE_BATCH}) of {JUDGE_ACTORS} actors x "
               f"{JUDGE_IN_FLIGHT // JUDGE_ACTORS // JUDGE_BATCH} concurrent calls of "
               f"{JUDGE_BATCH} items (still {JUDGE_IN_FLIGHT} items in flight), .map",
               kind="asyncpool"),
        Method("ray_actor_pool", _ray_actor_pool,
               "ray.util.ActorPool(the same actors).map_unordered(lambda a, i: "
               "a.score.remote(i), items), in a thread: one call per actor at a time, as "
               f"ray.util.ActorPool schedules (at most {JUDGE_SLOW_ITEMS} items per round)",
               max_items=JUDGE_SLOW_ITEMS, kind="peer"),
        Method("ray_wait_window", _ray_wait_window,
               f"hand-written with Ray's own tools: raw calls on the same actors, at most "
               f"{JUDGE_IN_FLIGHT} pending, ray.wait(num_returns=1) before each further call "
               "(the pattern Ray's docs give for bounding pending tasks), in a thread",
               kind="handwritten"),
        Method("ray_actors", _ray_actors,
               "raw calls on the same actors, one ray.get(list) (the ceiling of unbatched "
               "calls)", kind="ceiling"),
        Method("ray_actors_batched", _ray_actors_batched,
               f"hand-written batching with Ray's tools: raw calls of {JUDGE_BATCH} items each "
               f"to a score_many method on the same actors, at most {JUDGE_IN_FLIGHT} items "
               "pending, ray.wait(num_returns=1) before each further call, in a thread",
               kind="handwritten"),
    ),
    # Full: 10,000 per round, about 1.5 min for 3 rounds; slow rows capped at JUDGE_SLOW_ITEMS.
    items=10_000,
    quick_items=3_000,
    describe="50 ms latency-bound judge calls, 512 in flight; correct = the expected score",
    session=judge_session,
)
