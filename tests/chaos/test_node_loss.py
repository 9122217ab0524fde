"""A node lost in the middle of a map costs only its in-flight work: every item, exactly once."""

from __future__ import annotations

import asyncio
import collections
import time
from collections.abc import Iterator
from typing import Any

import pytest
import ray

from asyncpool import ActorPool, TaskPool
from tests.chaos._util import live_actors, live_tasks, report, settle
from tests.conftest import SessionCluster, async_wait_for

pytestmark = [pytest.mark.slow, pytest.mark.chaos, pytest.mark.multinode]

ITEMS = 2000


def where(x: int) -> tuple[int, str]:
    time.sleep(0.005)
    return x, ray.get_runtime_context().get_node_id()


class Verifier:
    async def check(self, x: int) -> tuple[int, str]:
        await asyncio.sleep(0.005)
        return x, ray.get_runtime_context().get_node_id()


@pytest.fixture
def doomed(ray_cluster: SessionCluster) -> Iterator[Any]:
    """An extra node for this test only; the test removes it mid-map."""
    # Ray's node start registers signal handlers, so it runs here on the main thread.
    node = ray_cluster.cluster.add_node(num_cpus=2)
    ray_cluster.cluster.wait_for_nodes()
    yield node
    if any(n is node for n in ray_cluster.cluster.worker_nodes):
        ray_cluster.cluster.remove_node(node)


async def _consume_losing_the_node(
    ray_cluster: SessionCluster, doomed: Any, stream: Any, label: str
) -> None:
    seen: collections.Counter[int] = collections.Counter()
    nodes: set[str] = set()
    removal: asyncio.Task[None] | None = None
    last = 0.0
    worst_gap = 0.0
    async with stream:
        async for index, (value, node) in stream:
            now = time.monotonic()
            assert index == value
            seen[index] += 1
            nodes.add(node)
            if removal is not None:
                worst_gap = max(worst_gap, now - last)
            last = now
            if removal is None and len(seen) == ITEMS // 4:
                assert doomed.node_id in nodes, "no work landed on the node to be lost"
                removal = asyncio.create_task(
                    asyncio.to_thread(ray_cluster.cluster.remove_node, doomed)
                )
    assert removal is not None
    await removal
    duplicates = sum(c - 1 for c in seen.values())
    missing = ITEMS - len(seen)
    # Time to recover: the longest pause between two results after the node was removed.
    report(label, items_in=ITEMS, items_out=sum(seen.values()), duplicates=duplicates,
           missing=missing, recovery_s=round(worst_gap, 2))
    assert missing == 0
    assert duplicates == 0


@pytest.mark.asyncio(loop_factories=["uvloop"])
async def test_task_pool_map_loses_a_node_and_yields_every_item_once(
    ray_cluster: SessionCluster, doomed: Any
) -> None:
    async with TaskPool(where, max_in_flight=16, retries=5) as pool:
        # A new node starts its first worker process last; on a loaded machine the others can
        # finish a quarter of the map before it runs anything, so wait until it has run a task.
        async def ran_on_doomed() -> bool:
            async with pool.map(range(48)) as warm:
                return doomed.node_id in {node async for _, (_, node) in warm}

        deadline = time.monotonic() + 90
        while not await ran_on_doomed():
            assert time.monotonic() < deadline, "no task of the pool ran on the new node"
        before = pool.stats.completed
        await _consume_losing_the_node(
            ray_cluster, doomed, pool.map(range(ITEMS)), "node loss / TaskPool.map"
        )
        stats = pool.stats
    assert stats.completed - before == ITEMS
    assert stats.in_flight == 0
    await settle(lambda: live_tasks("asyncpool_where"))


@pytest.mark.asyncio(loop_factories=["uvloop"])
async def test_actor_pool_map_loses_a_node_and_replaces_its_actors(
    ray_cluster: SessionCluster, doomed: Any
) -> None:
    async with ActorPool(Verifier, size=6, max_concurrency=4, retries=3, num_cpus=0.5) as pool:
        # The actor on the new node starts last (a new node starts its first worker process):
        # on a loaded machine the others can finish a quarter of the map before it answers, so
        # wait until it has answered once rather than assume it will have by then.
        async def answered_from_doomed() -> bool:
            async with pool.map("check", range(24)) as warm:
                return doomed.node_id in {node async for _, (_, node) in warm}

        deadline = time.monotonic() + 90
        while not await answered_from_doomed():
            assert time.monotonic() < deadline, "no actor of the pool answered from the new node"
        before = pool.stats.completed
        await _consume_losing_the_node(
            ray_cluster, doomed, pool.map("check", range(ITEMS)), "node loss / ActorPool.map"
        )
        stats = pool.stats
        assert pool.replaced >= 1
        await async_wait_for(lambda: pool.size == 6)
    assert stats.completed - before == ITEMS
    await settle(lambda: live_actors("Verifier"))
