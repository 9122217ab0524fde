"""The async ObjectRef layer against the real session cluster."""

from __future__ import annotations

import asyncio
import gc
import threading
import time
import weakref
from typing import Any

import anyio
import pytest
import ray

from asyncpool import TaskTimeoutError, as_completed, cancel, gather, resolve
from tests._gate import Gate
from tests._typing import remote_task
from tests.conftest import SessionCluster, async_wait_for


@remote_task(num_cpus=0)  # defaulted parameters: see tests/_typing.py
def sleepy(value: object, seconds: float = 0.0, after: object = None) -> object:
    """``value`` after ``seconds``; ``after`` (a ref) makes it start only once that one is done."""
    time.sleep(seconds)
    return value


@ray.remote(num_cpus=0)
def raise_key_error(key: str) -> None:
    raise KeyError(key)


@ray.remote(num_cpus=0)
def count_up(n: int):  # type: ignore[no-untyped-def]
    for i in range(n):  # noqa: UP028 - Ray's generator tasks call .send(), range has none
        yield i


def _cancelled(ref: ray.ObjectRef[Any]) -> bool:
    try:
        ray.get(ref, timeout=0)
    except ray.exceptions.TaskCancelledError:
        return True
    except Exception:
        return False
    return False


@pytest.mark.asyncio
async def test_resolve_returns_the_value(ray_cluster: SessionCluster) -> None:
    assert await resolve(sleepy.remote({"a": 1})) == {"a": 1}


@pytest.mark.asyncio
async def test_user_key_error_arrives_as_key_error(ray_cluster: SessionCluster) -> None:
    with pytest.raises(KeyError, match="missing"):
        await resolve(raise_key_error.remote("missing"))
    with pytest.raises(KeyError):
        await gather([sleepy.remote(1), raise_key_error.remote("x")])


@pytest.mark.asyncio
async def test_gather_keeps_input_order_and_mapping_keys(ray_cluster: SessionCluster) -> None:
    refs = [sleepy.remote(i, 0.3 - 0.1 * i) for i in range(3)]
    assert await gather(refs) == [0, 1, 2]
    assert await gather({"b": sleepy.remote("B"), "a": sleepy.remote("A")}) == {
        "b": "B",
        "a": "A",
    }
    assert await gather([]) == []


@pytest.mark.asyncio
async def test_gather_same_ref_twice_gives_the_value_twice(ray_cluster: SessionCluster) -> None:
    ref = sleepy.remote(7)
    assert await gather([ref, sleepy.remote(8), ref]) == [7, 8, 7]


@pytest.mark.asyncio
async def test_as_completed_yields_in_completion_order(ray_cluster: SessionCluster) -> None:
    # Chained through their arguments, so the completion order is 1, 2, 0 however loaded
    # the machine is (no reliance on when each worker happens to start).
    first = sleepy.remote(1, 0.1)
    second = sleepy.remote(2, 0.1, first)
    refs = [sleepy.remote(0, 0.1, second), first, second]
    async with as_completed(refs) as stream:
        keys = [key async for key, _ in stream]
    assert keys == [1, 2, 0]


@pytest.mark.asyncio
async def test_as_completed_over_a_mapping_yields_its_keys(ray_cluster: SessionCluster) -> None:
    got = {k: v async for k, v in as_completed({"x": sleepy.remote(1), "y": sleepy.remote(2)})}
    assert got == {"x": 1, "y": 2}


@pytest.mark.asyncio
async def test_return_exceptions_puts_the_error_in_its_place(ray_cluster: SessionCluster) -> None:
    values = await gather([sleepy.remote(1), raise_key_error.remote("k")], return_exceptions=True)
    assert values[0] == 1
    assert isinstance(values[1], KeyError)


@pytest.mark.asyncio
async def test_resolve_timeout_raises_and_cancels_the_task(ray_cluster: SessionCluster) -> None:
    ref = sleepy.remote(None, 30)
    started = time.monotonic()
    with pytest.raises(TaskTimeoutError):
        await resolve(ref, timeout=0.5)
    assert time.monotonic() - started < 30  # at its deadline, not at the task's own end
    with pytest.raises(ray.exceptions.TaskCancelledError):
        await asyncio.to_thread(ray.get, ref)


@pytest.mark.asyncio
async def test_gather_timeout_cancels_every_pending_task(ray_cluster: SessionCluster) -> None:
    done = sleepy.remote("fast")
    assert await resolve(done) == "fast"
    slow = [sleepy.remote(None, 30) for _ in range(3)]
    started = time.monotonic()
    with pytest.raises(TaskTimeoutError, match="3 of 4"):
        await gather([done, *slow], timeout=0.5)
    assert time.monotonic() - started < 30  # at its deadline, not at the tasks' own end
    await async_wait_for(lambda: all(_cancelled(r) for r in slow))
    assert ray.get(done) == "fast"


@pytest.mark.asyncio
async def test_timeout_error_is_also_a_builtin_timeout_error(ray_cluster: SessionCluster) -> None:
    with pytest.raises(TimeoutError):
        await resolve(sleepy.remote(None, 30), timeout=0.2)


@pytest.mark.asyncio
async def test_cancelling_the_awaiting_task_cancels_the_ray_task(
    ray_cluster: SessionCluster,
) -> None:
    ref = sleepy.remote(None, 30)
    waiter = asyncio.create_task(resolve(ref))
    await asyncio.sleep(0.3)
    waiter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiter
    await async_wait_for(lambda: _cancelled(ref))


@pytest.mark.asyncio
async def test_fail_after_around_gather_behaves_like_its_timeout(
    ray_cluster: SessionCluster,
) -> None:
    refs = [sleepy.remote(None, 30) for _ in range(2)]
    with pytest.raises(TimeoutError):
        with anyio.fail_after(0.3):
            await gather(refs)
    await async_wait_for(lambda: all(_cancelled(r) for r in refs))


@pytest.mark.asyncio
async def test_leaving_as_completed_early_cancels_what_is_pending(
    ray_cluster: SessionCluster,
) -> None:
    fast = sleepy.remote("first")
    slow = [sleepy.remote(None, 30) for _ in range(3)]
    async with as_completed([fast, *slow]) as stream:
        async for key, value in stream:
            assert (key, value) == (0, "first")
            break
    await async_wait_for(lambda: all(_cancelled(r) for r in slow))


@pytest.mark.asyncio
async def test_an_error_in_as_completed_cancels_the_rest(ray_cluster: SessionCluster) -> None:
    slow = [sleepy.remote(None, 30) for _ in range(2)]
    with pytest.raises(KeyError):
        async for _ in as_completed([raise_key_error.remote("k"), *slow]):
            pass
    await async_wait_for(lambda: all(_cancelled(r) for r in slow))


@pytest.mark.asyncio
async def test_object_ref_generator_streams_through_as_completed_and_gather(
    ray_cluster: SessionCluster,
) -> None:
    assert [v async for _, v in as_completed(count_up.remote(4))] == [0, 1, 2, 3]
    assert await gather(count_up.remote(3)) == [0, 1, 2]


@pytest.mark.asyncio
async def test_cancel_stops_a_sleeping_task_with_force(ray_cluster: SessionCluster) -> None:
    ref = sleepy.remote(None, 30)
    await cancel(ref, force=True)
    await async_wait_for(lambda: _cancelled(ref))


@pytest.mark.parametrize(
    ("call", "error"),
    [
        (lambda: resolve("not a ref"), TypeError),  # type: ignore[arg-type]
        (lambda: resolve(ray.put(1), timeout=-1), ValueError),
        # The one timeout rule: None or > 0; a deadline of 0 is refused, not a poll.
        (lambda: resolve(ray.put(1), timeout=0), ValueError),
        (lambda: gather([ray.put(1)], timeout=0), ValueError),
        (lambda: gather([ray.put(1)], return_exceptions=1), TypeError),  # type: ignore[call-overload]
        (lambda: resolve(ray.put(1), timeout="1"), TypeError),  # type: ignore[arg-type]
        (lambda: gather([ray.put(1), 2]), TypeError),
        (lambda: gather(ray.put(1)), TypeError),
        (lambda: gather([ray.put(1)], timeout=float("nan")), ValueError),
        (lambda: gather(42), TypeError),
        (lambda: cancel([ray.put(1)], force="yes"), TypeError),  # type: ignore[arg-type]
    ],
)
@pytest.mark.asyncio
async def test_bad_arguments_raise_before_anything_is_awaited(
    ray_cluster: SessionCluster, call: object, error: type[Exception]
) -> None:
    with pytest.raises(error):
        await call()  # type: ignore[operator]


def test_as_completed_checks_its_arguments_when_called(ray_cluster: SessionCluster) -> None:
    with pytest.raises(TypeError):
        as_completed([1, 2])
    with pytest.raises(ValueError, match="timeout"):
        as_completed([ray.put(1)], timeout=-0.1)
    with pytest.raises(ValueError, match=r"timeout must be None or a number of seconds > 0"):
        as_completed([ray.put(1)], timeout=0)


# One CPU each: run by the workers the session cluster already has. As zero-CPU tasks, 1,000
# at once had Ray start dozens of new worker processes (seconds on 2 cores), no part of this.
@ray.remote(num_cpus=1)
def _short(value: int) -> int:
    return value


@pytest.mark.asyncio
async def test_gather_of_1000_refs_does_not_stall_the_event_loop(
    ray_cluster: SessionCluster,
) -> None:
    """While ``gather`` waits on 1,000 refs the loop runs other work: the last ref is held at a
    gate that only this test, running on the same loop, opens. A gather that held the loop
    while it waited (a blocking ``ray.get``) could never let the test reach the gate, and the
    test would fail on its timeout; no figure of the machine's speed decides it."""
    gate = Gate.remote()  # type: ignore[attr-defined]
    try:
        refs = [_short.remote(i) for i in range(999)] + [gate.hold.remote("last", 999)]
        gathering = asyncio.ensure_future(gather(refs))
        for _ in range(5):
            await asyncio.sleep(0.01)  # other work of the loop, while the gather waits
        assert not gathering.done()
        await gate.open.remote("last")
        assert await gathering == list(range(1000))
    finally:
        ray.kill(gate)


# --------------------------------------------------------------------------- issue 11 regressions


@ray.remote(num_cpus=0, resources={"asyncpool_test_never": 1})
def never() -> None:
    """A task no node can run: it stays pending until cancelled (cheap to have 20k of)."""


async def _sample_threads(peak: list[int], stop: asyncio.Event) -> None:
    while not stop.is_set():
        peak[0] = max(peak[0], threading.active_count())
        await asyncio.sleep(0.001)


# Threads per call are the completion core's property, not the loop's (the lighter gather
# tests above run on both loops): one loop.
@pytest.mark.one_loop
@pytest.mark.asyncio
@pytest.mark.slow
async def test_two_thousand_concurrent_gathers_start_no_thread_per_call(
    ray_cluster: SessionCluster,
) -> None:
    # Before issue 11 each gather started its own ray.wait thread: 500 of them, 489 threads.
    await gather([ray.put(0)])  # the shared core's thread exists from here on
    refs = [sleepy.remote(i, 0.5) for i in range(20)]  # few workers; each ref in 100 gathers
    before = threading.active_count()
    peak, stop = [before], asyncio.Event()
    sampler = asyncio.create_task(_sample_threads(peak, stop))
    results = await asyncio.gather(*(gather([refs[i % 20]]) for i in range(2000)))
    stop.set()
    await sampler
    assert results == [[i % 20] for i in range(2000)]
    # At most the canceller may start meanwhile; never one thread per gather.
    assert peak[0] - before <= 1, (before, peak[0])


@pytest.mark.asyncio
async def test_a_dropped_half_consumed_stream_is_collected_and_its_tasks_cancelled(
    ray_cluster: SessionCluster,
) -> None:
    fast = sleepy.remote("first")
    slow = [sleepy.remote(None, 60) for _ in range(3)]
    stream = as_completed([fast, *slow])
    assert await stream.__anext__() == (0, "first")
    alive = weakref.ref(stream)
    del stream
    gc.collect()
    assert alive() is None, gc.get_referrers(alive())
    await async_wait_for(lambda: all(_cancelled(r) for r in slow))


@pytest.mark.asyncio
async def test_breaking_out_of_a_plain_async_for_cancels_the_rest(
    ray_cluster: SessionCluster,
) -> None:
    slow = [sleepy.remote(None, 60) for _ in range(3)]
    async for key, _ in as_completed([ray.put("now"), *slow]):
        assert key == 0
        break
    gc.collect()
    await async_wait_for(lambda: all(_cancelled(r) for r in slow))


@pytest.mark.asyncio
async def test_fail_after_around_as_completed_behaves_like_its_timeout(
    ray_cluster: SessionCluster,
) -> None:
    slow = [sleepy.remote(None, 30) for _ in range(2)]

    async def consume() -> None:
        with anyio.fail_after(0.3):
            async with as_completed([ray.put(1), *slow]) as stream:
                async for _ in stream:
                    pass

    with pytest.raises(TimeoutError):
        await consume()
    await async_wait_for(lambda: all(_cancelled(r) for r in slow))


# Scale test of the canceller thread (20,000 pending tasks); cancelling on both loops is
# checked by the lighter cancel tests above: one loop.
@pytest.mark.slow  # a scale test
@pytest.mark.one_loop
@pytest.mark.asyncio
async def test_cancelling_twenty_thousand_refs_does_not_stall_the_event_loop(
    ray_cluster: SessionCluster,
) -> None:
    # Before issue 11 closing a stream called ray.cancel on every pending ref on the loop
    # (and the cancel follower re-scanned all of them every 0.5 s): seconds of blocked loop.
    refs = [never.remote() for _ in range(20_000)]
    lags: list[float] = []
    stop = asyncio.Event()

    async def ticker() -> None:
        while not stop.is_set():
            t0 = time.perf_counter()
            await asyncio.sleep(0.005)
            lags.append(time.perf_counter() - t0 - 0.005)

    tick = asyncio.create_task(ticker())
    await asyncio.sleep(0.05)
    stream = as_completed(refs)
    await stream.open()
    started = time.perf_counter()
    await stream.aclose()  # returns at once; the canceller thread issues the cancels
    closing = time.perf_counter() - started
    await cancel(refs[:100], force=True)  # waits until these (queued later) were issued too
    ready, _ = await asyncio.to_thread(
        ray.wait, refs, num_returns=len(refs), fetch_local=False
    )
    storm = time.perf_counter() - started
    stop.set()
    await tick
    assert len(ready) == len(refs)  # every one of them settled: cancelled
    assert all(_cancelled(r) for r in refs[::2000])
    assert len(lags) > 10
    # Judged against the storm itself, so that a loaded machine (slower everything) does not
    # decide: cancelling on the loop holds it for about the whole storm; issuing the cancels
    # from the canceller thread leaves the loop a few milliseconds per tick.
    assert closing < 0.2 * storm, (closing, storm)
    assert max(lags) < 0.5 * storm, (sorted(lags)[-5:], storm)


@pytest.mark.asyncio
async def test_fail_after_around_resolve_behaves_like_its_timeout(
    ray_cluster: SessionCluster,
) -> None:
    ref = sleepy.remote(None, 30)

    async def wait() -> None:
        with anyio.fail_after(0.3):
            await resolve(ref)

    with pytest.raises(TimeoutError):
        await wait()
    await async_wait_for(lambda: _cancelled(ref))
