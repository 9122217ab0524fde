"""TaskPool and ActorPool on the real session cluster (a CPU head and two fake-GPU nodes)."""

from __future__ import annotations

import asyncio
import itertools
import os
import threading
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest
import ray

from asyncpool import ActorPool, PoolClosedError, TaskPool, TaskTimeoutError, WorkerFailedError
from tests.conftest import SessionCluster, async_wait_for, require_free_cluster


@ray.remote(num_cpus=0)
class Gauge:
    """Counts how many tasks are inside a section at once, and how often one was entered."""

    def __init__(self) -> None:
        self.now = 0
        self.peak = 0
        self.entered: dict[str, int] = {}

    def enter(self, key: str = "") -> None:
        self.now += 1
        self.peak = max(self.peak, self.now)
        self.entered[key] = self.entered.get(key, 0) + 1

    def leave(self) -> None:
        self.now -= 1

    def read(self) -> tuple[int, int, dict[str, int]]:
        return self.now, self.peak, self.entered


@ray.remote(num_cpus=0)
class Rendezvous:
    """Holds every caller until callers from ``nodes`` distinct nodes have arrived."""

    def __init__(self, nodes: int) -> None:
        self.nodes = nodes
        self.seen: set[str] = set()
        self.everyone = asyncio.Event()

    async def arrive(self, node: str) -> None:
        self.seen.add(node)
        if len(self.seen) >= self.nodes:
            self.everyone.set()
        await self.everyone.wait()


def node_id_once_every_node_arrived(rendezvous: Any) -> str:
    """This task's node, returned only once a task of the same map runs on every node.

    The task waits in ``ray.get``, which hands its CPU back: nodes' capacity never forces the
    tasks apart, only the scheduling strategy does. Tasks that return at once would not do:
    finished tasks' workers are reused for the next ones, and when a new worker on the third
    node starts slower than the others finish the map (a loaded machine), it never gets one.
    """
    node: str = ray.get_runtime_context().get_node_id()
    ray.get(rendezvous.arrive.remote(node))
    return node


def square(x: int) -> int:
    return x * x


def sleep_for(seconds: float) -> float:
    time.sleep(seconds)
    return seconds


def gauged(args: tuple[Any, float]) -> int:
    gauge, seconds = args
    ray.get(gauge.enter.remote())
    time.sleep(seconds)
    ray.get(gauge.leave.remote())
    return 1


def fails_with_key_error(gauge: Any) -> None:
    ray.get(gauge.enter.remote("user-error"))
    raise KeyError("boom")


def dies_on_first_attempt(gauge: Any) -> str:
    _, _, entered = ray.get(gauge.read.remote())
    ray.get(gauge.enter.remote("crash"))
    if entered.get("crash", 0) == 0:
        os._exit(1)
    return "survived"


class Judge:
    def __init__(self, bias: int = 0) -> None:
        self.bias = bias

    async def score(self, x: int) -> int:
        await asyncio.sleep(0.02)
        return x + self.bias

    def pid(self) -> int:
        return os.getpid()


@pytest.mark.asyncio
@pytest.mark.multinode
async def test_spread_places_tasks_on_every_node(ray_cluster: SessionCluster) -> None:
    """TaskPool's default strategy is SPREAD: with 12 tasks held in flight (none finishes
    before every node has one), Ray spreads them over the 3 nodes. A pool that packed them
    would hang here until the per-test timeout."""
    require_free_cluster(cpus=True)  # a task on every node needs a free CPU on every node
    rendezvous = Rendezvous.remote(len(ray_cluster.node_ids))  # type: ignore[attr-defined]
    async with TaskPool(node_id_once_every_node_arrived, max_in_flight=12) as pool:
        seen = {v async for _, v in pool.map([rendezvous] * 12)}
    assert seen == set(ray_cluster.node_ids)


@pytest.mark.asyncio
async def test_submit_returns_the_result_and_user_errors_keep_their_type(
    ray_cluster: SessionCluster,
) -> None:
    async with TaskPool(square) as pool:
        assert await pool.submit(7) == 49
        assert pool.state == "open"
    # mypy keeps the narrowing to "open" across the exit that closed it
    assert pool.state == "closed"  # type: ignore[comparison-overlap]


@pytest.mark.asyncio
async def test_a_user_exception_runs_exactly_once(ray_cluster: SessionCluster) -> None:
    gauge = Gauge.remote()  # type: ignore[attr-defined]
    async with TaskPool(fails_with_key_error, retries=3) as pool:
        with pytest.raises(KeyError, match="boom"):
            await pool.submit(gauge)
        stats = pool.stats
    _, _, entered = ray.get(gauge.read.remote())
    assert entered == {"user-error": 1}
    assert (stats.failed, stats.retried, stats.completed) == (1, 0, 0)


@pytest.mark.asyncio
@pytest.mark.slow
async def test_a_crashed_worker_is_retried_by_ray_and_counted(ray_cluster: SessionCluster) -> None:
    gauge = Gauge.remote()  # type: ignore[attr-defined]
    async with TaskPool(dies_on_first_attempt, retries=2) as pool:
        assert await pool.submit(gauge) == "survived"
        assert pool.stats.retried == 1
    _, _, entered = ray.get(gauge.read.remote())
    assert entered["crash"] == 2


# A stress of the shared bound (280 calls); the bound on each loop is checked by the lighter
# lazy-input and freed-slot tests below: one loop.
@pytest.mark.one_loop
@pytest.mark.asyncio
@pytest.mark.slow
async def test_the_in_flight_bound_holds_across_two_maps_and_200_submits(
    ray_cluster: SessionCluster,
) -> None:
    gauge = Gauge.remote()  # type: ignore[attr-defined]
    bound = 4
    async with TaskPool(gauged, max_in_flight=bound, num_cpus=0) as pool:

        async def drain(n: int) -> int:
            return sum([v async for _, v in pool.map((gauge, 0.02) for _ in range(n))])

        results = await asyncio.gather(
            drain(40),
            drain(40),
            *(pool.submit((gauge, 0.02)) for _ in range(200)),
        )
        assert pool.stats.in_flight == 0
    assert results[:2] == [40, 40]
    assert sum(results[2:]) == 200
    now, peak, _ = ray.get(gauge.read.remote())
    assert now == 0
    assert 2 <= peak <= bound


@pytest.mark.asyncio
async def test_a_lazy_async_input_never_runs_ahead_of_the_bound(
    ray_cluster: SessionCluster,
) -> None:
    pulled = 0
    bound = 3

    async def source() -> AsyncIterator[float]:
        nonlocal pulled
        for _ in range(30):
            pulled += 1
            yield 0.01

    consumed = 0
    async with TaskPool(sleep_for, max_in_flight=bound) as pool, pool.map(source()) as stream:
        async for _ in stream:
            # Everything pulled is either yielded already or among `bound` in flight.
            assert pulled <= consumed + bound + 1, (pulled, consumed)
            consumed += 1
            await asyncio.sleep(0.01)  # a slow consumer
    assert consumed == pulled == 30


@pytest.mark.asyncio
@pytest.mark.slow
async def test_a_timed_out_item_fails_fast_while_the_others_complete(
    ray_cluster: SessionCluster,
) -> None:
    # The timeout counts from submission, so it must leave room for a loaded machine to start
    # workers and run a 0.1 s call; the hanging call's own end (60 s) is far past it.
    async with TaskPool(sleep_for, timeout=5.0, max_in_flight=4) as pool:
        started = time.monotonic()
        results = {
            i: v async for i, v in pool.map([60.0, 0.05, 0.1, 0.05], return_exceptions=True)
        }
        elapsed = time.monotonic() - started
        stats = pool.stats
    assert isinstance(results[0], TaskTimeoutError)
    assert [results[i] for i in (1, 2, 3)] == [0.05, 0.1, 0.05]
    assert elapsed < 60, "the hanging call failed at its deadline, not at its own end"
    assert stats.timed_out == 1


@pytest.mark.asyncio
async def test_ordered_map_yields_in_input_order(ray_cluster: SessionCluster) -> None:
    delays = [0.3, 0.0, 0.2, 0.0, 0.1, 0.0]
    async with TaskPool(sleep_for, max_in_flight=6) as pool:
        indices = [i async for i, _ in pool.map(delays, ordered=True)]
        unordered = [i async for i, _ in pool.map(delays)]
    assert indices == list(range(6))
    assert sorted(unordered) == list(range(6))


@pytest.mark.asyncio
async def test_batched_and_auto_batched_maps_yield_every_item(ray_cluster: SessionCluster) -> None:
    async with TaskPool(square, batch_size=7) as pool:
        got = {i: v async for i, v in pool.map(range(100))}
    assert got == {i: i * i for i in range(100)}
    async with TaskPool(square, batch_size="auto") as pool:
        count = 0
        async for i, v in pool.map(i for i in range(20_000)):
            assert v == i * i
            count += 1
        stats = pool.stats
    assert count == 20_000
    assert stats.completed == stats.submitted == 20_000


@pytest.mark.asyncio
async def test_stats_add_up_after_mixed_outcomes(ray_cluster: SessionCluster) -> None:
    def maybe_fail(x: int) -> int:
        if x % 5 == 0:
            raise ValueError(x)
        return x

    async with TaskPool(maybe_fail) as pool:
        results = [v async for _, v in pool.map(range(50), return_exceptions=True)]
        stats = pool.stats
    assert sum(isinstance(v, ValueError) for v in results) == 10
    assert stats.submitted == 50
    assert stats.completed == 40
    assert stats.failed == 10
    assert stats.in_flight == 0
    assert stats.submitted == stats.completed + stats.failed + stats.in_flight
    assert stats.per_minute > 0
    assert 0 < stats.latency_p50 <= stats.latency_p95 <= stats.latency_p99


@pytest.mark.asyncio
async def test_leaving_a_map_early_cancels_its_running_tasks(ray_cluster: SessionCluster) -> None:
    async with TaskPool(sleep_for, max_in_flight=4) as pool:
        async with pool.map([0.0, 30.0, 30.0, 30.0]) as stream:
            async for _ in stream:
                break
        await async_wait_for(lambda: pool.stats.in_flight == 0)
        assert await pool.submit(0.0) == 0.0


@pytest.mark.asyncio
async def test_cancelling_a_submit_cancels_its_task_and_frees_the_slot(
    ray_cluster: SessionCluster,
) -> None:
    async with TaskPool(sleep_for, max_in_flight=1) as pool:
        waiter = asyncio.create_task(pool.submit(30.0))
        await async_wait_for(lambda: pool.stats.in_flight == 1)
        await asyncio.sleep(0.2)
        waiter.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiter
        # The only slot comes back once Ray confirms the task stopped.
        assert await pool.submit(0.0) == 0.0


@pytest.mark.asyncio
async def test_an_unserialisable_item_fails_alone(ray_cluster: SessionCluster) -> None:
    def identity(x: object) -> object:
        return x

    async with TaskPool(identity) as pool:
        with pytest.raises(TypeError):
            await pool.submit(threading.Lock())
        items: list[object] = [1, threading.Lock(), 3]
        results = {i: v async for i, v in pool.map(items, return_exceptions=True)}
    assert results[0] == 1
    assert results[2] == 3
    assert isinstance(results[1], TypeError)


@pytest.mark.parametrize(
    ("make", "error"),
    [
        (lambda: TaskPool(square, max_in_flight=0), ValueError),
        (lambda: TaskPool(square, max_in_flight=2.5), TypeError),  # type: ignore[arg-type]
        (lambda: TaskPool(42), TypeError),  # type: ignore[arg-type]
        (lambda: TaskPool(square, batch_size=0), ValueError),
        (lambda: TaskPool(square, batch_size="big"), TypeError),  # type: ignore[arg-type]
        (lambda: TaskPool(square, timeout=-1), ValueError),
        (lambda: TaskPool(square, retries=-1), ValueError),
        (lambda: TaskPool(square, no_such_ray_option=1), ValueError),
        (lambda: ActorPool(Judge, size=0), ValueError),
        (lambda: ActorPool(Judge, size=(3, 1)), ValueError),
        (lambda: ActorPool(Judge, size=2, max_concurrency=0), ValueError),
        (lambda: ActorPool(square, size=2), TypeError),  # type: ignore[arg-type]
        (lambda: ActorPool(Judge, size=2, batch_size=0), ValueError),
        # a batch needs the method ActorPool adds to the plain class
        (lambda: ActorPool(ray.remote(Judge), size=2, batch_size=4), ValueError),
    ],
)
def test_bad_construction_arguments_raise_at_once(make: Any, error: type[Exception]) -> None:
    with pytest.raises(error):
        make()


@pytest.mark.asyncio
async def test_a_pool_is_unusable_before_open_and_after_close(ray_cluster: SessionCluster) -> None:
    pool = TaskPool(square)
    with pytest.raises(PoolClosedError):
        await pool.submit(1)
    async with pool:
        pass
    with pytest.raises(PoolClosedError):
        pool.map([1])
    with pytest.raises(PoolClosedError):
        await pool.open()


@pytest.mark.asyncio
async def test_actor_pool_calls_maps_and_broadcasts(ray_cluster: SessionCluster) -> None:
    async with ActorPool(Judge, 10, size=2, max_concurrency=8, num_cpus=0) as pool:
        assert await pool.call("score", 1) == 11
        got = {i: v async for i, v in pool.map("score", range(40))}
        assert got == {i: i + 10 for i in range(40)}
        pids = await pool.broadcast("pid")
        assert len(set(pids)) == 2
        with pytest.raises(AttributeError, match="Judge"):
            await pool.call("no_such_method")
        with pytest.raises(AttributeError):
            pool.map("_private", [1])
        stats = pool.stats
    assert stats.submitted == stats.completed == 41


class Grader:
    """Sync methods only: a sync actor, whose batches run their items in turn."""

    def grade(self, x: int) -> int:
        if x % 10 == 7:
            raise ValueError(f"no grade for {x}")
        return x * 3


class AsyncGrader:
    def __init__(self) -> None:
        self.running = 0
        self.peak = 0

    async def grade(self, x: int) -> int:
        self.running += 1
        self.peak = max(self.peak, self.running)
        await asyncio.sleep(0.05)
        self.running -= 1
        if x % 10 == 7:
            raise ValueError(f"no grade for {x}")
        return x * 3

    def sync_grade(self, x: int) -> int:
        return x * 3

    async def get_peak(self) -> int:
        return self.peak


@pytest.mark.asyncio
@pytest.mark.parametrize("cls", [Grader, AsyncGrader], ids=["sync actor", "async actor"])
async def test_a_batched_map_gives_every_item_its_own_result_or_exception(
    ray_cluster: SessionCluster, cls: type
) -> None:
    pool: ActorPool[Any] = ActorPool(cls, size=2, max_concurrency=2, num_cpus=0, batch_size=5)
    async with pool:
        got: dict[int, Any] = {}
        async with pool.map("grade", range(43), return_exceptions=True) as stream:
            async for i, value in stream:
                assert i not in got
                got[i] = value
        assert set(got) == set(range(43))
        for i, value in got.items():
            if i % 10 == 7:
                assert isinstance(value, ValueError)
                assert str(value) == f"no grade for {i}"
            else:
                assert value == i * 3
        assert await pool.call("grade", 2) == 6  # a single call is not a batch
        with pytest.raises(AttributeError):
            await pool.call("__asyncpool_batch__", "grade", [1])
        stats = pool.stats
    assert stats.submitted == 44
    assert stats.completed == 40
    assert stats.failed == 4


@pytest.mark.asyncio
async def test_an_item_that_cannot_be_serialised_fails_alone_in_a_batch(
    ray_cluster: SessionCluster,
) -> None:
    async with ActorPool(Grader, size=1, num_cpus=0, batch_size=4) as pool:
        items: list[Any] = [1, 2, threading.Lock(), 4, 5]
        got = {i: v async for i, v in pool.map("grade", items, return_exceptions=True)}
        assert isinstance(got.pop(2), TypeError)
        assert got == {0: 3, 1: 6, 3: 12, 4: 15}


@pytest.mark.asyncio
async def test_an_async_actors_batch_runs_its_items_concurrently(
    ray_cluster: SessionCluster,
) -> None:
    async with ActorPool(
        AsyncGrader, size=1, max_concurrency=1, num_cpus=0, batch_size=8
    ) as pool:
        # one Ray call at a time (max_concurrency=1), 8 items in it at once
        assert {i: v async for i, v in pool.map("sync_grade", range(16))} == {
            i: i * 3 for i in range(16)
        }
        got = {i: v async for i, v in pool.map("grade", [1, 2, 3, 4, 5, 6, 8, 9])}
        assert got == {i: v * 3 for i, v in enumerate([1, 2, 3, 4, 5, 6, 8, 9])}
        assert await pool.call("get_peak") == 8


@pytest.mark.asyncio
@pytest.mark.slow
async def test_a_batch_whose_actor_died_is_sent_again_whole_and_nothing_is_delivered_twice(
    ray_cluster: SessionCluster,
) -> None:
    async with ActorPool(
        AsyncGrader, size=2, max_concurrency=2, retries=2, num_cpus=0, batch_size=4
    ) as pool:
        got: dict[int, Any] = {}
        async with pool.map("grade", range(120), return_exceptions=True) as stream:
            async for i, value in stream:
                assert i not in got
                got[i] = value
                if len(got) == 20:
                    ray.kill(pool.actors[0], no_restart=True)
        assert set(got) == set(range(120))
        assert all(v == i * 3 for i, v in got.items() if i % 10 != 7)
        await async_wait_for(lambda: pool.size == 2)
        assert pool.replaced >= 1


@pytest.mark.asyncio
@pytest.mark.slow
async def test_a_batch_past_its_timeout_fails_its_items_together_and_the_pool_goes_on(
    ray_cluster: SessionCluster,
) -> None:
    class Slow:
        async def wait(self, seconds: float) -> float:
            await asyncio.sleep(seconds)
            return seconds

    async with ActorPool(
        Slow, size=1, max_concurrency=4, num_cpus=0, batch_size=3, timeout=1.0
    ) as pool:
        got = {i: v async for i, v in pool.map("wait", [0.0, 30.0, 0.0], return_exceptions=True)}
        assert all(isinstance(v, TaskTimeoutError) for v in got.values()), got
        assert {i: v async for i, v in pool.map("wait", [0.0, 0.0])} == {0: 0.0, 1: 0.0}


@pytest.mark.asyncio
@pytest.mark.slow
async def test_an_actor_killed_mid_map_is_replaced_and_the_map_finishes(
    ray_cluster: SessionCluster,
) -> None:
    async with ActorPool(Judge, size=2, max_concurrency=4, retries=2, num_cpus=0) as pool:
        results: dict[int, int] = {}
        async with pool.map("score", range(200)) as stream:
            async for i, v in stream:
                results[i] = v
                if len(results) == 30:
                    ray.kill(pool.actors[0], no_restart=True)
        assert results == {i: i for i in range(200)}
        await async_wait_for(lambda: pool.size == 2)
        assert pool.replaced >= 1


@pytest.mark.asyncio
async def test_a_dead_actor_fails_its_call_with_worker_failed_error_without_retries(
    ray_cluster: SessionCluster,
) -> None:
    class Sleeper:
        async def nap(self, seconds: float) -> float:
            await asyncio.sleep(seconds)
            return seconds

    async with ActorPool(Sleeper, size=1, num_cpus=0) as pool:
        call = asyncio.create_task(pool.call("nap", 30.0))
        await async_wait_for(lambda: pool.stats.in_flight == 1)
        ray.kill(pool.actors[0], no_restart=True)
        with pytest.raises(WorkerFailedError) as info:
            await call
        assert isinstance(info.value.__cause__, ray.exceptions.RayActorError)
        await async_wait_for(lambda: pool.size == 1)
        assert await pool.call("nap", 0.0) == 0.0


@pytest.mark.asyncio
@pytest.mark.slow
async def test_an_elastic_actor_pool_grows_under_load_and_shrinks_when_idle(
    ray_cluster: SessionCluster,
) -> None:
    async with ActorPool(
        Judge, size=(1, 3), max_concurrency=2, idle_timeout=0.5, num_cpus=0
    ) as pool:
        assert pool.size == 1
        peak = 0
        deadline = time.monotonic() + 120  # actors start slowly on a loaded machine
        # Calls keep queueing (an endless input) until the pool has grown to its max.
        async with pool.map("score", itertools.count()) as stream:
            async for _ in stream:
                peak = max(peak, pool.size)
                if peak == 3 or time.monotonic() > deadline:
                    break
        assert peak == 3
        await async_wait_for(lambda: pool.size == 1)
