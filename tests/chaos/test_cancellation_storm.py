"""1,000 consumers cancelled at random moments leave nothing running and a working pool."""

from __future__ import annotations

import asyncio
import random
import threading
import time

import anyio
import pytest
import ray

from asyncpool import ActorPool, TaskPool, _completion, as_completed, gather, resolve
from tests.chaos._util import live_actors, live_tasks, report, settle
from tests.conftest import SessionCluster, async_wait_for

pytestmark = [pytest.mark.slow, pytest.mark.chaos]

CONSUMERS = 1000
LONG = 120.0


def nap(seconds: float) -> float:
    time.sleep(seconds)
    return seconds


class Napper:
    async def nap(self, seconds: float) -> float:
        await asyncio.sleep(seconds)
        return seconds


async def _storm(call: object, rng: random.Random) -> dict[str, int]:
    """Half the consumers run under anyio scopes that expire, half are task.cancel()ed; every
    tenth of the first hundred is left alone and must finish, however slowly a loaded machine
    runs it (``spared`` counts them; ``done`` counts every consumer that finished). The spared
    are among the first submitted, so they do not wait for the storm's queue to drain."""
    outcome = {"done": 0, "cancelled": 0, "scope_expired": 0, "spared": 0}

    async def under_scope(seconds: float, deadline: float) -> None:
        with anyio.move_on_after(deadline) as scope:
            await call(seconds)  # type: ignore[operator]
            outcome["done"] += 1
        if scope.cancelled_caught:
            outcome["scope_expired"] += 1

    async def plain(seconds: float) -> None:
        await call(seconds)  # type: ignore[operator]
        outcome["done"] += 1

    tasks = []
    for i in range(CONSUMERS):
        # LONG outlives the leak checks' patience: a task left running cannot pass them.
        seconds = rng.choice([0.0, 0.0, 0.0, 0.05, 0.2, 1.0, LONG])
        if i < 100 and i % 10 == 0:
            outcome["spared"] += 1
            tasks.append(asyncio.create_task(plain(rng.choice([0.0, 0.05, 0.2]))))
        elif i % 2:
            tasks.append(asyncio.create_task(under_scope(seconds, rng.uniform(0.0, 3.0))))
        else:
            task = asyncio.create_task(plain(seconds))
            asyncio.get_running_loop().call_later(rng.uniform(0.0, 3.0), task.cancel)
            tasks.append(task)
    results = await asyncio.gather(*tasks, return_exceptions=True)
    outcome["cancelled"] = sum(isinstance(r, asyncio.CancelledError) for r in results)
    unexpected = [r for r in results if isinstance(r, BaseException)
                  and not isinstance(r, asyncio.CancelledError)]
    assert not unexpected, unexpected[:3]
    return outcome


@pytest.mark.asyncio(loop_factories=["uvloop"])
async def test_a_cancellation_storm_on_a_task_pool_leaves_nothing_running(
    ray_cluster: SessionCluster,
) -> None:
    rng = random.Random(7)
    async with TaskPool(nap, max_in_flight=24, num_cpus=0) as pool:
        await asyncio.gather(*(pool.submit(0.0) for _ in range(24)))  # workers up
        started = time.monotonic()
        outcome = await _storm(pool.submit, rng)
        await async_wait_for(lambda: pool.stats.in_flight == 0)
        recovery = time.monotonic() - started
        stats = pool.stats
        assert stats.submitted == stats.completed + stats.failed
        assert stats.completed >= outcome["done"] >= outcome["spared"] > 0
        assert outcome["cancelled"] + outcome["scope_expired"] > 0
        assert await pool.submit(0.0) == 0.0  # still serving
        leaked = await settle(lambda: live_tasks("asyncpool_nap"), timeout=60)
    report("cancellation storm / TaskPool", items_in=CONSUMERS, items_out=outcome["done"],
           cancelled=outcome["cancelled"] + outcome["scope_expired"], duplicates=0,
           leaked_tasks=0, settle_s=round(leaked, 2), recovery_s=round(recovery, 2))


@pytest.mark.asyncio(loop_factories=["uvloop"])
async def test_a_cancellation_storm_on_an_actor_pool_leaves_the_pool_serving(
    ray_cluster: SessionCluster,
) -> None:
    rng = random.Random(11)
    async with ActorPool(Napper, size=2, max_concurrency=32, num_cpus=0) as pool:

        async def call(seconds: float) -> float:
            return await pool.call("nap", seconds)  # type: ignore[no-any-return]

        outcome = await _storm(call, rng)
        await async_wait_for(lambda: pool.stats.in_flight == 0)
        stats = pool.stats
        assert stats.submitted == stats.completed + stats.failed
        assert await pool.call("nap", 0.0) == 0.0
        assert pool.size == 2
    await settle(lambda: live_actors("Napper"), timeout=60)
    report("cancellation storm / ActorPool", items_in=CONSUMERS, items_out=outcome["done"],
           cancelled=outcome["cancelled"] + outcome["scope_expired"], duplicates=0,
           leaked_actors=0)


@pytest.mark.asyncio(loop_factories=["uvloop"])
async def test_maps_abandoned_at_random_points_cancel_their_tasks(
    ray_cluster: SessionCluster,
) -> None:
    rng = random.Random(3)
    async with TaskPool(nap, max_in_flight=16, num_cpus=0) as pool:

        async def consume(stop_after: int) -> int:
            got = 0
            # Quick items first, so that a consumer's own long items cannot hold every slot
            # its quick ones wait for (a shared bound with endless tasks would deadlock).
            items = [rng.choice([0.0, 0.1]) for _ in range(3)] + [LONG] * 20
            async with pool.map(items) as stream:
                async for _ in stream:
                    got += 1
                    if got >= stop_after:
                        break
            return got

        counts = await asyncio.gather(*(consume(rng.randint(1, 3)) for _ in range(30)))
        assert all(c >= 1 for c in counts)
        await async_wait_for(lambda: pool.stats.in_flight == 0)
        await settle(lambda: live_tasks("asyncpool_nap"), timeout=60)
        assert await pool.submit(0.0) == 0.0


@ray.remote(num_cpus=0.25)  # 24 at once on the session cluster; the rest wait in Ray's queue
def asyncpool_storm_nap(seconds: float) -> float:
    time.sleep(seconds)
    return seconds


@pytest.mark.asyncio(loop_factories=["uvloop"])
async def test_a_cancellation_storm_on_gather_as_completed_and_resolve_leaves_nothing_running(
    ray_cluster: SessionCluster,
) -> None:
    """1,000 consumers of the ref layer itself, cancelled at random: every Ray task they were
    waiting for is cancelled, no helper thread per consumer, and the core still serves."""
    rng = random.Random(5)
    # Workers up (and the shared completion thread started) before the storm.
    await gather([asyncpool_storm_nap.remote(0.0) for _ in range(24)])
    before = threading.active_count()
    peak = [before]
    sampling = asyncio.Event()

    async def sample() -> None:
        while not sampling.is_set():
            peak[0] = max(peak[0], threading.active_count())
            await asyncio.sleep(0.005)

    async def call(seconds: float) -> float:
        ref = asyncpool_storm_nap.remote(seconds)
        kind = rng.randrange(3)
        if kind == 0:
            return (await gather([ref]))[0]  # type: ignore[no-any-return]
        if kind == 1:
            async with as_completed([ref]) as stream:
                async for _, value in stream:
                    return value  # type: ignore[no-any-return]
            raise AssertionError("as_completed ended without the value")
        return await resolve(ref)  # type: ignore[no-any-return]

    sampler = asyncio.create_task(sample())
    outcome = await _storm(call, rng)
    sampling.set()
    await sampler
    assert outcome["done"] >= outcome["spared"] > 0
    assert outcome["cancelled"] + outcome["scope_expired"] > 0
    # The completion core and the canceller: never a thread per stream.
    assert peak[0] - before <= 1, (before, peak[0])
    leaked = await settle(lambda: live_tasks("asyncpool_storm_nap"), timeout=90)
    assert await gather([asyncpool_storm_nap.remote(0.0)]) == [0.0]  # still serving
    assert len(_completion.helper_threads()) == 1
    report("cancellation storm / refs", items_in=CONSUMERS, items_out=outcome["done"],
           cancelled=outcome["cancelled"] + outcome["scope_expired"], leaked_tasks=0,
           peak_extra_threads=peak[0] - before, settle_s=round(leaked, 2))
