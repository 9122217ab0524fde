"""A node lost under a WorkerGroup.dispatch: WorkerFailedError names rank and node, and the
results that had already arrived are kept.

The group lives on a node added for this test only (a VirtualCluster whose bundles need three
CPUs, which only that node has), never on the session's shared nodes; the test removes it
while one worker is still working.
"""

from __future__ import annotations

import asyncio
import os
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
import ray
from ray.exceptions import RayActorError

from asyncpool import VirtualCluster, WorkerFailedError, WorkerGroup
from tests.chaos._util import live_actors, report, settle
from tests.conftest import WORKER_CPUS, SessionCluster

pytestmark = [pytest.mark.slow, pytest.mark.chaos, pytest.mark.multinode]

#: More CPUs per bundle than any session node has: the group can only land on the doomed node.
BUNDLE_CPUS = WORKER_CPUS + 1


class Stepper:
    """Rank 0 answers at once; rank 1 works until its node is gone."""

    async def step(self, seconds: float) -> tuple[int, str]:
        await asyncio.sleep(seconds)
        return int(os.environ["RANK"]), ray.get_runtime_context().get_node_id()


@pytest.fixture
def doomed(ray_cluster: SessionCluster) -> Iterator[Any]:
    """An extra node for this test only; the test removes it mid-dispatch."""
    # Ray's node start registers signal handlers, so it runs here on the main thread.
    node = ray_cluster.cluster.add_node(num_cpus=2 * BUNDLE_CPUS)
    ray_cluster.cluster.wait_for_nodes()
    yield node
    if any(n is node for n in ray_cluster.cluster.worker_nodes):
        ray_cluster.cluster.remove_node(node)


@pytest.mark.asyncio(loop_factories=["uvloop"])
async def test_a_node_lost_under_a_dispatch_fails_it_naming_rank_and_node_and_keeps_results(
    ray_cluster: SessionCluster, doomed: Any
) -> None:
    name = f"chaos-node-{uuid.uuid4().hex[:6]}"
    cluster = VirtualCluster([2], use_gpus=False, max_colocated=BUNDLE_CPUS, name=name)
    async with cluster, WorkerGroup(cluster, Stepper, name=name) as group:
        assert {m.node_id for m in group.metadata} == {doomed.node_id}
        got: list[tuple[int, Any]] = []
        removals: list[asyncio.Task[None]] = []

        async def consume() -> None:
            async with group.dispatch("step", [0.0, 120.0]) as results:
                async for index, value in results:
                    got.append((index, value))
                    # The first result is in; rank 1 is still working: lose its node.
                    removals.append(
                        asyncio.create_task(
                            asyncio.to_thread(ray_cluster.cluster.remove_node, doomed)
                        )
                    )

        started = time.monotonic()
        with pytest.raises(WorkerFailedError) as info:
            await consume()
        failed_after = time.monotonic() - started
        assert len(removals) == 1
        await removals[0]
        assert got == [(0, (0, doomed.node_id))]  # the result that arrived is kept
        err = info.value
        assert err.rank == 1
        assert err.node_id == doomed.node_id
        assert err.name == group.metadata[1].name
        assert "rank 1" in str(err)
        assert doomed.node_id in str(err)
        assert isinstance(err.__cause__, RayActorError)
    report(
        "node removed / WorkerGroup.dispatch",
        items_in=2,
        items_out=len(got),
        error=type(err).__name__,
        rank=err.rank,
        failed_after_s=round(failed_after, 1),
    )
    await settle(lambda: live_actors("Stepper"))
