"""Pool lifecycle: closing stops submission, dead pools fail fast, streams are collected,
inputs are consumed in one task, and the errors a user meets are asyncpool's."""

from __future__ import annotations

import asyncio
import contextvars
import gc
import itertools
import os
import tempfile
import threading
import time
import weakref
from collections.abc import AsyncIterator, Iterator

import anyio
import anyio.lowlevel
import pytest
import ray
from ray.exceptions import ActorUnavailableError, TaskCancelledError

from asyncpool import ActorPool, PoolClosedError, TaskPool, WorkerFailedError
from tests.chaos._util import live_tasks, settle
from tests.conftest import SessionCluster, async_wait_for


def hang(seconds: float) -> float:
    time.sleep(seconds)
    return seconds


def lifecycle_nap(seconds: float) -> float:
    time.sleep(seconds)
    return seconds


def square(x: int) -> int:
    return x * x


class Pair:
    @ray.method(num_returns=2)
    def two(self, x: int) -> tuple[int, int]:
        return x, x + 1

    def one(self, x: int) -> int:
        return x

    async def nap(self, seconds: float) -> float:
        await asyncio.sleep(seconds)
        return seconds


class Fragile:
    """Starts once; every later instance fails in ``__init__`` while ``marker`` exists."""

    def __init__(self, marker: str) -> None:
        if os.path.exists(marker):
            raise RuntimeError("cannot start: marker present")

    def ping(self) -> str:
        return "pong"


@pytest.mark.asyncio
async def test_aclose_fails_waiting_and_running_callers_with_pool_closed_error_and_leaves_no_task(
    ray_cluster: SessionCluster,
) -> None:
    pool = TaskPool(hang, max_in_flight=2)
    async with pool:
        callers = [asyncio.create_task(pool.submit(60.0)) for _ in range(4)]
        await async_wait_for(lambda: pool.stats.in_flight == 2 and pool.stats.waiting == 2)
        started = time.monotonic()
        await pool.aclose()
        closing_took = time.monotonic() - started
        outcomes = await asyncio.gather(*callers, return_exceptions=True)
    # Shorter than the tasks' own 60 s: aclose cancelled them instead of waiting them out.
    assert closing_took < 60.0
    errors = [o for o in outcomes if isinstance(o, PoolClosedError)]
    assert len(errors) == 4, outcomes
    running = [o for o in errors if o.__cause__ is not None]
    assert len(running) == 2
    assert all(isinstance(o.__cause__, TaskCancelledError) for o in running)
    assert pool.stats.submitted == 2  # the two waiting calls were never sent
    await settle(lambda: live_tasks("asyncpool_hang"), timeout=60)


@pytest.mark.asyncio
@pytest.mark.slow
async def test_a_map_stops_submitting_when_another_task_closes_its_pool(
    ray_cluster: SessionCluster,
) -> None:
    pulled = 0

    def endless() -> Iterator[float]:
        nonlocal pulled
        for _ in itertools.count():
            pulled += 1
            yield 0.05

    pool = TaskPool(lifecycle_nap, max_in_flight=4)
    async with pool:
        got = 0
        closer: list[asyncio.Task[None]] = []

        async def consume() -> None:
            nonlocal got
            async for _ in pool.map(endless()):
                got += 1
                if got == 10:
                    closer.append(asyncio.create_task(pool.aclose()))

        with pytest.raises(PoolClosedError):
            await consume()
        await closer[0]
        at_close = pulled
        await asyncio.sleep(0.5)
        assert pulled == at_close
        assert pool.stats.in_flight == 0
    assert pulled <= got + 3 * 4 + 2
    await settle(lambda: live_tasks("asyncpool_lifecycle_nap"), timeout=60)


@pytest.mark.asyncio
async def test_a_pool_with_no_live_actor_and_no_possible_replacement_fails_calls_fast(
    ray_cluster: SessionCluster,
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        marker = os.path.join(tmp, "broken")
        async with ActorPool(Fragile, marker, size=1, num_cpus=0) as pool:
            assert await pool.call("ping") == "pong"
            await anyio.Path(marker).touch()
            actor = pool.actors[0]
            ray.kill(actor, no_restart=True)
            # ray.kill is asynchronous: wait until the actor is seen dead, or the pool's next
            # call could still reach it alive.
            # Polled until then; the test's own timeout is the hang guard.
            while True:
                try:
                    await actor.ping.remote()
                except ray.exceptions.RayActorError:
                    break
                await asyncio.sleep(0.05)
            with pytest.raises(WorkerFailedError):
                await pool.call("ping")  # lands on the dead one
            # Fast means without waiting for a replacement that can never start (its __init__
            # fails on the marker): the error says so, instead of the call hanging until the
            # test's timeout.
            with pytest.raises(WorkerFailedError, match="no live actor") as info:
                await pool.call("ping")
            assert info.value.__cause__ is not None


@pytest.mark.asyncio
async def test_multi_return_methods_are_refused_before_anything_is_sent(
    ray_cluster: SessionCluster,
) -> None:
    async with ActorPool(Pair, size=1, num_cpus=0) as pool:
        with pytest.raises(TypeError, match="num_returns"):
            await pool.call("two", 1)
        with pytest.raises(TypeError, match="num_returns"):
            pool.map("two", [1])
        assert pool.stats.submitted == 0
        assert await pool.call("one", 5) == 5
        assert pool._members[0].load == 0


@pytest.mark.asyncio
@pytest.mark.slow
async def test_an_actor_declared_dead_on_unavailable_is_killed_so_its_calls_end(
    ray_cluster: SessionCluster,
) -> None:
    async with ActorPool(Pair, size=1, max_concurrency=2, num_cpus=0) as pool:
        call = asyncio.create_task(pool.call("nap", 60.0))
        await async_wait_for(lambda: pool.stats.in_flight == 1)
        member = pool._members[0]
        pool._on_member_death(member, ActorUnavailableError("unreachable", None))
        with pytest.raises(WorkerFailedError):
            await call
        await async_wait_for(lambda: pool.size == 1)
        assert await pool.call("one", 1) == 1


@pytest.mark.asyncio
async def test_a_dropped_half_consumed_map_is_collected_and_its_tasks_cancelled(
    ray_cluster: SessionCluster,
) -> None:
    async with TaskPool(lifecycle_nap, max_in_flight=4) as pool:
        stream = pool.map([0.0, 60.0, 60.0, 60.0])
        await stream.__anext__()
        ref = weakref.ref(stream)
        del stream
        gc.collect()
        assert ref() is None
        await async_wait_for(lambda: pool.stats.in_flight == 0)
        assert await pool.submit(0.0) == 0.0


_label: contextvars.ContextVar[str] = contextvars.ContextVar("label", default="unset")


@pytest.mark.asyncio
async def test_an_async_generator_input_keeps_its_cancel_scope_and_contextvar_across_yields(
    ray_cluster: SessionCluster,
) -> None:
    seen: list[str] = []

    async def produce() -> AsyncIterator[int]:
        _label.set("producer")
        with anyio.CancelScope():
            for i in range(20):
                await anyio.lowlevel.checkpoint()
                seen.append(_label.get())
                yield i

    async def produce_forever() -> AsyncIterator[int]:
        async with anyio.create_task_group():
            for i in itertools.count():
                yield i

    async with TaskPool(square, max_in_flight=4) as pool:
        got = {i: v async for i, v in pool.map(produce())}
        assert got == {i: i * i for i in range(20)}
        assert seen == ["producer"] * 20
        # Leaving early closes the generator in the task that stepped it. Closing a generator
        # suspended inside a task group raises a BaseExceptionGroup of GeneratorExit (anyio
        # wraps it), which is a clean close: the stream's exit must not raise it. Whether the
        # close meets the generator at its yield or in a cancellation depends on timing, so
        # the early leave is repeated.
        for _ in range(5):
            async with pool.map(produce_forever()) as stream:
                async for _ in stream:
                    break


@pytest.mark.asyncio
async def test_a_map_feeder_lets_the_loop_run_between_submissions(
    ray_cluster: SessionCluster,
) -> None:
    jumps: list[int] = []
    async with TaskPool(square, max_in_flight=600, metrics=False) as pool:
        done = False

        async def ticker() -> None:
            last = 0
            while not done:
                now = pool.stats.submitted
                jumps.append(now - last)
                last = now
                await asyncio.sleep(0)

        tick = asyncio.create_task(ticker())
        assert len([v async for _, v in pool.map(range(600))]) == 600
        done = True
        await tick
    # Today's feeder submitted all 600 back to back; it now yields every ~0.5 ms.
    assert max(jumps) < 300, max(jumps)


def test_an_unserialisable_function_is_refused_at_construction_naming_it() -> None:
    lock = threading.Lock()

    def holds_a_lock(x: int) -> int:
        with lock:
            return x

    with pytest.raises(TypeError, match="holds_a_lock"):
        TaskPool(holds_a_lock)

    class HoldsALock:
        guard = lock

        def f(self) -> None:
            pass

    with pytest.raises(TypeError, match="HoldsALock"):
        ActorPool(HoldsALock, size=1)


@pytest.mark.asyncio
async def test_an_unserialisable_argument_is_refused_naming_the_users_function(
    ray_cluster: SessionCluster,
) -> None:
    async with TaskPool(square) as pool:
        with pytest.raises(TypeError, match="square") as info:
            await pool.submit(threading.Lock())  # type: ignore[arg-type]
        assert "asyncpool_" not in str(info.value)
        assert pool.stats.submitted == 0
    async with ActorPool(Pair, size=1, num_cpus=0) as actors:
        with pytest.raises(TypeError, match=r"Pair\.one"):
            await actors.call("one", threading.Lock())
        assert actors.stats.submitted == 0
        assert actors._members[0].load == 0
