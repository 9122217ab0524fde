"""The pools' engine: bounded submission costs, slot accounting, statistics, the loop check."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from asyncpool import ResourceStateError, TaskPool
from asyncpool._dispatch import Engine
from asyncpool.stats import WINDOW_S, _Recorder
from tests.conftest import SessionCluster, async_wait_for


def sleep_for(seconds: float) -> float:
    time.sleep(seconds)
    return seconds


async def _queued_acquire_cpu(n: int) -> float:
    """Event-loop CPU seconds per queued acquire, for ``n`` callers queued on one slot."""
    engine = Engine(1, name="bench", metrics=False)
    held = await engine.acquire()

    async def one() -> None:
        token = await engine.acquire()
        engine.release(token)

    tasks = [asyncio.create_task(one()) for _ in range(n)]
    await async_wait_for(lambda: engine.waiting == n, interval=0.01)
    started = time.thread_time()
    engine.release(held)
    await asyncio.gather(*tasks)
    return (time.thread_time() - started) / n


@pytest.mark.asyncio
async def test_queued_acquires_cost_the_same_per_call_at_1k_and_8k() -> None:
    small = min([await _queued_acquire_cpu(1_000) for _ in range(2)])
    large = min([await _queued_acquire_cpu(8_000) for _ in range(2)])
    # O(1) per acquire: a deque.remove per woken waiter made it ~6x here (quadratic).
    assert large < 3 * small, (small, large)


@pytest.mark.asyncio
async def test_over_release_and_releasing_a_foreign_token_are_errors() -> None:
    engine = Engine(2, name="slots", metrics=False)
    token = await engine.acquire()
    engine.release(token)
    with pytest.raises(RuntimeError):
        engine.release(token)
    with pytest.raises(RuntimeError):
        engine.release(object())
    assert engine.limiter.borrowed_tokens == 0


@pytest.mark.asyncio
async def test_a_cancelled_waiter_takes_no_slot_and_the_next_one_gets_it() -> None:
    engine = Engine(1, name="slots", metrics=False)
    held = await engine.acquire()
    first = asyncio.create_task(engine.acquire())
    second = asyncio.create_task(engine.acquire())
    await async_wait_for(lambda: engine.waiting == 2, interval=0.01)
    first.cancel()
    with pytest.raises(asyncio.CancelledError):
        await first
    engine.release(held)
    token = await second
    assert engine.limiter.borrowed_tokens == 1
    engine.release(token)


@pytest.mark.asyncio
async def test_closing_fails_every_waiter_with_pool_closed_error() -> None:
    from asyncpool import PoolClosedError

    engine = Engine(1, name="slots", metrics=False)
    held = await engine.acquire()
    waiters = [asyncio.create_task(engine.acquire()) for _ in range(3)]
    await async_wait_for(lambda: engine.waiting == 3, interval=0.01)
    engine.close()
    for waiter in waiters:
        with pytest.raises(PoolClosedError):
            await waiter
    with pytest.raises(PoolClosedError):
        await engine.acquire()
    engine.release(held)
    assert engine.limiter.borrowed_tokens == 0


def test_per_minute_is_a_sliding_window_with_bounded_memory(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = [1000.0]
    monkeypatch.setattr(time, "monotonic", lambda: clock[0])
    rec = _Recorder("w")
    for _ in range(100_000):  # 100k items in 10 s
        rec.on_finish(ok=True, latency=0.001)
        clock[0] += 1e-4
    assert len(rec._buckets) <= 10 / 0.25 + 1
    assert rec.snapshot().per_minute == pytest.approx(100_000 * 60 / 10, rel=0.05)
    clock[0] += WINDOW_S - 5  # the first half of the items is now older than a minute
    assert rec.snapshot().per_minute == pytest.approx(50_000, rel=0.05)
    clock[0] += 10
    assert rec.snapshot().per_minute == 0


@pytest.mark.asyncio
@pytest.mark.slow
async def test_waiting_counts_callers_queued_for_a_slot(ray_cluster: SessionCluster) -> None:
    async with TaskPool(sleep_for, max_in_flight=1, name="queue") as pool:
        callers = [asyncio.create_task(pool.submit(0.5)) for _ in range(4)]
        await async_wait_for(lambda: pool.stats.waiting == 3)
        stats = pool.stats
        assert (stats.in_flight, stats.waiting, stats.name) == (1, 3, "queue")
        assert await asyncio.gather(*callers) == [0.5] * 4
        assert pool.stats.waiting == 0


@pytest.mark.asyncio
async def test_a_pool_used_from_another_event_loop_says_how_before_sending_anything(
    ray_cluster: SessionCluster,
) -> None:
    async with TaskPool(sleep_for, max_in_flight=2) as pool:
        errors: list[BaseException] = []

        def elsewhere() -> None:
            try:
                asyncio.run(pool.submit(0.0))
            except BaseException as exc:
                errors.append(exc)
            try:
                pool.map([0.0])
            except BaseException as exc:
                errors.append(exc)

        thread = threading.Thread(target=elsewhere)
        thread.start()
        await asyncio.to_thread(thread.join)
        assert len(errors) == 2
        for error in errors:
            assert isinstance(error, ResourceStateError)
            assert "run_coroutine_threadsafe" in str(error)
            assert "anyio.from_thread" in str(error)
        assert pool.stats.submitted == 0
        # The right way round works.
        loop = asyncio.get_running_loop()
        fut = asyncio.run_coroutine_threadsafe(pool.submit(0.0), loop)
        assert await asyncio.wrap_future(fut) == 0.0
