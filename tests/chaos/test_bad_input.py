"""A table of bad inputs across the public API: each a clear error before anything is submitted.

After every case the cluster holds no new placement group and no pool has submitted anything.
"""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
import ray

import asyncpool
from asyncpool import (
    ActorPool,
    AsyncPoolError,
    Backoff,
    NodeInfo,
    ResourceInsufficientError,
    TaskPool,
    VirtualCluster,
    WorkerGroup,
    allocate,
    as_completed,
    cancel,
    gather,
    plan_replica,
    reap,
    resolve,
    run_python,
    shard,
)
from tests.conftest import SessionCluster

pytestmark = [pytest.mark.slow, pytest.mark.chaos]


def double(x: int) -> int:
    return 2 * x


class Echo:
    def echo(self, x: object) -> object:
        return x

    @ray.method(num_returns=2)
    def split(self, x: int) -> tuple[int, int]:
        return x, x


def _lock_holder() -> Callable[[int], int]:
    lock = threading.Lock()

    def holds_a_lock(x: int) -> int:  # a closure: pickled by value, lock and all
        with lock:
            return x

    return holds_a_lock


_holds_a_lock = _lock_holder()


GPU_NODES = [NodeInfo("a", "10.0.0.1", 1, 8, False), NodeInfo("b", "10.0.0.2", 3, 8, False)]

Case = Callable[[], Any]

# (label, the call, the error it must raise)
CASES: list[tuple[str, Case, type[BaseException]]] = [
    ("resolve a str", lambda: resolve("ref"), TypeError),  # type: ignore[arg-type]
    ("resolve negative timeout", lambda: resolve(ray.put(1), timeout=-1), ValueError),
    ("resolve timeout as str", lambda: resolve(ray.put(1), timeout="1"), TypeError),  # type: ignore[arg-type]
    ("gather an int", lambda: gather(42), TypeError),
    ("gather a list with a non-ref", lambda: gather([ray.put(1), 2]), TypeError),
    ("gather a lone ref", lambda: gather(ray.put(1)), TypeError),
    ("gather NaN timeout", lambda: gather([ray.put(1)], timeout=float("nan")), ValueError),
    ("as_completed non-refs", lambda: as_completed([1, 2]), TypeError),
    ("cancel force not bool", lambda: cancel([ray.put(1)], force="yes"), TypeError),  # type: ignore[arg-type]
    ("init address not str", lambda: asyncpool.init(address=123), TypeError),  # type: ignore[arg-type]
    ("init empty address", lambda: asyncpool.init(address="  "), ValueError),
    ("init negative cpus", lambda: asyncpool.init(num_cpus=-1), ValueError),
    ("TaskPool of an int", lambda: TaskPool(42), TypeError),  # type: ignore[arg-type]
    ("TaskPool of a class", lambda: TaskPool(Echo), TypeError),
    ("TaskPool max_in_flight 0", lambda: TaskPool(double, max_in_flight=0), ValueError),
    ("TaskPool max_in_flight -3", lambda: TaskPool(double, max_in_flight=-3), ValueError),
    ("TaskPool batch_size 0", lambda: TaskPool(double, batch_size=0), ValueError),
    ("TaskPool batch_size str", lambda: TaskPool(double, batch_size="big"), TypeError),  # type: ignore[arg-type]
    ("TaskPool timeout 0", lambda: TaskPool(double, timeout=0), ValueError),
    ("TaskPool retries -1", lambda: TaskPool(double, retries=-1), ValueError),
    ("TaskPool unknown Ray option", lambda: TaskPool(double, no_such_option=1), ValueError),
    ("ActorPool size 0", lambda: ActorPool(Echo, size=0), ValueError),
    ("ActorPool size min > max", lambda: ActorPool(Echo, size=(3, 1)), ValueError),
    ("ActorPool size triple", lambda: ActorPool(Echo, size=(1, 2, 3)), ValueError),  # type: ignore[arg-type]
    ("ActorPool max_concurrency 0", lambda: ActorPool(Echo, size=1, max_concurrency=0), ValueError),
    ("ActorPool of a function", lambda: ActorPool(double, size=1), TypeError),  # type: ignore[arg-type]
    ("TaskPool NaN timeout", lambda: TaskPool(double, timeout=float("nan")), ValueError),
    ("TaskPool timeout as str", lambda: TaskPool(double, timeout="1"), TypeError),  # type: ignore[arg-type]
    ("TaskPool metrics not bool", lambda: TaskPool(double, metrics=1), TypeError),  # type: ignore[arg-type]
    ("TaskPool name not str", lambda: TaskPool(double, name=7), TypeError),  # type: ignore[arg-type]
    ("TaskPool unserialisable function", lambda: TaskPool(_holds_a_lock), TypeError),
    ("ActorPool timeout 0", lambda: ActorPool(Echo, size=1, timeout=0), ValueError),
    ("ActorPool retries -1", lambda: ActorPool(Echo, size=1, retries=-1), ValueError),
    ("ActorPool idle_timeout negative", lambda: ActorPool(Echo, size=(1, 2), idle_timeout=-1),
     ValueError),
    ("ActorPool size True", lambda: ActorPool(Echo, size=True), TypeError),
    ("shard into 0", lambda: shard([1, 2, 3], 0), ValueError),
    ("shard ragged columns", lambda: shard({"a": [1], "b": [1, 2]}, 2), ValueError),
    ("shard an int", lambda: shard(42, 2), TypeError),
    ("allocate no bundles", lambda: allocate([]), ValueError),
    ("allocate negative GPU", lambda: allocate([{"GPU": -1}]), ValueError),
    ("allocate unknown strategy", lambda: allocate([{"CPU": 1}], strategy="WEIRD"), ValueError),
    ("allocate zero timeout", lambda: allocate([{"CPU": 1}], timeout=0), ValueError),
    ("allocate 1000 GPUs", lambda: allocate([{"GPU": 1000}]), ResourceInsufficientError),
    ("allocate STRICT_PACK larger than a node",
     lambda: allocate([{"GPU": 1}] * 6, strategy="STRICT_PACK"), ResourceInsufficientError),
    ("allocate STRICT_SPREAD over too many nodes",
     lambda: allocate([{"CPU": 0.1}] * 9, strategy="STRICT_SPREAD"), ResourceInsufficientError),
    ("plan_replica tp 0", lambda: plan_replica(0, GPU_NODES), ValueError),
    ("plan_replica uneven split", lambda: plan_replica(4, GPU_NODES), ResourceInsufficientError),
    ("reap empty prefix", lambda: reap(""), ValueError),
    ("Backoff factor < 1", lambda: Backoff(factor=0.5), ValueError),
    ("VirtualCluster no nodes", lambda: VirtualCluster([]), ValueError),
    ("VirtualCluster negative bundles", lambda: VirtualCluster([2, -1]), ValueError),
    ("VirtualCluster max_colocated 0", lambda: VirtualCluster([2], max_colocated=0), ValueError),
    ("WorkerGroup reserved env", lambda: WorkerGroup(VirtualCluster([1]), Echo,
                                                     env={"RANK": "3"}), ValueError),
    ("WorkerGroup bad class string", lambda: WorkerGroup(VirtualCluster([1]), "no_dots"),
     ValueError),
    ("run_python non-str program", lambda: run_python(123), TypeError),  # type: ignore[arg-type]
    ("run_python zero timeout", lambda: run_python("pass", timeout=0), ValueError),
]


async def _invoke(call: Case) -> None:
    result = call()
    if isinstance(result, Awaitable):
        await result


def _our_groups() -> int:
    return sum(1 for pg in ray.util.placement_group_table().values() if pg["state"] != "REMOVED")


@pytest.mark.asyncio(loop_factories=["uvloop"])
async def test_every_bad_input_raises_a_clear_error_before_submitting(
    ray_cluster: SessionCluster,
) -> None:
    assert len(CASES) >= 30
    groups_before = _our_groups()
    for label, call, error in CASES:
        with pytest.raises(error) as info:
            await _invoke(call)
        assert isinstance(info.value, TypeError | ValueError | AsyncPoolError), label
        assert str(info.value), f"{label}: the error says nothing"
    assert _our_groups() == groups_before


@pytest.mark.asyncio(loop_factories=["uvloop"])
async def test_bad_calls_on_open_pools_submit_nothing(ray_cluster: SessionCluster) -> None:
    async with TaskPool(double) as pool:
        with pytest.raises(TypeError):
            pool.map(42)  # type: ignore[arg-type]
        with pytest.raises(TypeError):
            pool.map("abc")
        with pytest.raises(TypeError):
            await pool.submit(threading.Lock())  # type: ignore[arg-type]
        assert pool.stats.submitted == 0
        assert await pool.submit(21) == 42  # and the pool still works
    async with ActorPool(Echo, size=1, num_cpus=0) as actors:
        with pytest.raises(AttributeError, match="Echo"):
            await actors.call("nosuch")
        with pytest.raises(TypeError):
            await actors.call(123)  # type: ignore[arg-type]
        with pytest.raises(AttributeError):
            actors.map("_hidden", [1])
        with pytest.raises(TypeError, match="num_returns"):
            await actors.call("split", 1)
        with pytest.raises(TypeError, match=r"Echo\.echo"):
            await actors.call("echo", threading.Lock())
        with pytest.raises(TypeError):
            actors.map("echo", [1], ordered="yes")  # type: ignore[arg-type]
        assert actors.stats.submitted == 0
