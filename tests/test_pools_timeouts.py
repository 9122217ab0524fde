"""Timeouts fail the caller at the deadline: per item in batches, and on actors' sync methods."""

from __future__ import annotations

import asyncio
import os
import time
from typing import Any

import pytest

from asyncpool import ActorPool, TaskPool, TaskTimeoutError, WorkerFailedError
from tests.conftest import SessionCluster, async_wait_for


def nap(seconds: float) -> float:
    time.sleep(seconds)
    return seconds


class Sleeper:
    def block(self, seconds: float) -> float:
        time.sleep(seconds)
        return seconds

    async def wait(self, seconds: float) -> float:
        await asyncio.sleep(seconds)
        return seconds

    def pid(self) -> int:
        return os.getpid()


@pytest.mark.asyncio
@pytest.mark.slow
async def test_a_hanging_item_of_a_batch_fails_alone_at_its_own_deadline(
    ray_cluster: SessionCluster,
) -> None:
    delays = [0.05, 0.05, 0.05, 60.0, 0.05, 0.05, 0.05, 0.05]
    async with TaskPool(nap, timeout=2.0, batch_size=8, max_in_flight=2) as pool:
        # Warm workers: the batch sent again after the cancel starts on one at once.
        assert [v async for _, v in pool.map([0.0] * 16)] == [0.0] * 16
        started = time.monotonic()
        arrived: dict[int, float] = {}
        results: dict[int, Any] = {}
        async with pool.map(delays, return_exceptions=True) as stream:
            async for index, value in stream:
                assert index not in results, "an item was delivered twice"
                results[index] = value
                arrived[index] = time.monotonic() - started
        stats = pool.stats
    assert sorted(results) == list(range(8))
    assert isinstance(results[3], TaskTimeoutError)
    assert {i: v for i, v in results.items() if i != 3} == {
        i: d for i, d in enumerate(delays) if i != 3
    }
    # Its own deadline: never before one timeout from the map's start, and about one timeout
    # after the item before it, not 8 timeouts, not 60 s (the batch itself may wait for a
    # worker on a busy machine). Item 2's result reaches the driver a little after item 3
    # starts in the worker, so the gap between their arrivals can be a little under 2 s.
    assert arrived[3] >= 2.0, arrived
    assert 1.5 <= arrived[3] - arrived[2] < 5.0, arrived
    assert (stats.timed_out, stats.completed, stats.failed, stats.in_flight) == (1, 23, 1, 0)


@pytest.mark.asyncio
async def test_slow_batches_under_a_timeout_count_each_item_from_its_own_start(
    ray_cluster: SessionCluster,
) -> None:
    # 6 items of 0.3 s in one batch take 1.8 s, past a 1.5 s timeout counted per batch.
    async with TaskPool(nap, timeout=1.5, batch_size=6, max_in_flight=1) as pool:
        results = {i: v async for i, v in pool.map([0.3] * 6, return_exceptions=True)}
    assert results == dict.fromkeys(range(6), 0.3)


# Killing and replacing the actor (seconds of Ray's time) is the same on either loop; the
# deadline timers themselves are checked on both loops by the batch and async-method tests.
@pytest.mark.one_loop
@pytest.mark.asyncio
@pytest.mark.slow
async def test_a_sync_actor_method_past_its_timeout_fails_at_the_deadline_and_the_actor_goes(
    ray_cluster: SessionCluster,
) -> None:
    async with ActorPool(Sleeper, size=1, max_concurrency=2, timeout=5.0, num_cpus=0) as pool:
        (old_pid,) = await pool.broadcast("pid")
        started = time.monotonic()
        hung = asyncio.create_task(pool.call("block", 60.0))
        await asyncio.sleep(1.5)
        # Sent later, still running on the same actor when the first one's deadline comes,
        # and 3.5 s from its own (Ray may take a while to report the death on a busy machine).
        neighbour = asyncio.create_task(pool.call("block", 60.0))
        with pytest.raises(TaskTimeoutError):
            await hung
        assert time.monotonic() - started < 60.0  # at its deadline, not at its own end
        # The other call on the killed actor fails as on any dead actor (retries=0).
        with pytest.raises(WorkerFailedError):
            await neighbour
        await async_wait_for(lambda: pool.size == 1)
        assert pool.replaced == 1
        (new_pid,) = await pool.broadcast("pid")
        assert new_pid != old_pid
        assert await pool.call("block", 0.0) == 0.0
        stats = pool.stats
    assert stats.timed_out == 1


# Killing and replacing the actor (seconds of Ray's time) is the same on either loop; the
# deadline timers themselves are checked on both loops by the batch and async-method tests.
@pytest.mark.one_loop
@pytest.mark.asyncio
@pytest.mark.slow
async def test_calls_beside_a_timed_out_sync_call_are_retried_when_retries_allow(
    ray_cluster: SessionCluster,
) -> None:
    async with ActorPool(
        Sleeper, size=1, max_concurrency=2, timeout=4.0, retries=1, num_cpus=0
    ) as pool:
        hung = asyncio.create_task(pool.call("block", 60.0))
        await asyncio.sleep(2.0)
        neighbour = asyncio.create_task(pool.call("block", 3.0))
        with pytest.raises(TaskTimeoutError):
            await hung
        assert await neighbour == 3.0
        assert pool.stats.retried == 1


@pytest.mark.asyncio
async def test_an_async_actor_method_past_its_timeout_is_cancelled_and_the_actor_kept(
    ray_cluster: SessionCluster,
) -> None:
    async with ActorPool(Sleeper, size=1, max_concurrency=4, timeout=0.5, num_cpus=0) as pool:
        started = time.monotonic()
        with pytest.raises(TaskTimeoutError):
            await pool.call("wait", 60.0)
        assert time.monotonic() - started < 60.0  # at its deadline, not at its own end
        await async_wait_for(lambda: pool.stats.in_flight == 0)
        assert pool.replaced == 0
        # Kept and serving: asked directly, so that the pool's own 0.5 s timeout (which a loaded
        # machine can outrun on any call) is not what this checks.
        assert await pool.actors[0].wait.remote(0.0) == 0.0
