"""A worker SIGKILLed from outside (as the OOM killer does) mid-dispatch or mid-map.

The dispatch fails with WorkerFailedError naming the rank, actor name and node; every result
that arrived before is delivered; the group then shuts down with no actor left. An ActorPool
map re-sends the dead actor's calls (``retries``) and delivers every item exactly once.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
import uuid
from typing import Any

import pytest
from ray.exceptions import RayActorError

from asyncpool import ActorPool, VirtualCluster, WorkerFailedError, WorkerGroup
from tests.chaos._util import live_actors, report, settle
from tests.conftest import SessionCluster

pytestmark = [pytest.mark.slow, pytest.mark.chaos, pytest.mark.multinode]


class Trainer:
    def pid(self) -> int:
        return os.getpid()

    async def step(self, seconds: float) -> int:
        await asyncio.sleep(seconds)
        return int(os.environ["RANK"])


@pytest.mark.asyncio(loop_factories=["uvloop"])
async def test_a_killed_worker_fails_the_dispatch_after_earlier_results(
    ray_cluster: SessionCluster,
) -> None:
    async with VirtualCluster([2, 2], use_gpus=False) as cluster:
        group = WorkerGroup(cluster, Trainer, name=f"chaos-{uuid.uuid4().hex[:6]}")
        def ours() -> list[Any]:
            return [a for a in live_actors("Trainer") if group.name in (a.name or "")]

        async with group:
            assert len(await asyncio.to_thread(ours)) == 4  # the leak check sees the group
            pids = await group.broadcast("pid")
            victim = 2
            got: list[tuple[int, Any]] = []
            started = time.monotonic()

            async def consume() -> None:
                async with group.dispatch("step", [0.0, 0.1, 30.0, 30.0]) as results:
                    async for index, value in results:
                        got.append((index, value))
                        if len(got) == 2:
                            os.kill(pids[victim], signal.SIGKILL)

            with pytest.raises(WorkerFailedError) as info:
                await consume()
            detected = time.monotonic() - started
            dead = group.metadata[victim]
            assert sorted(got) == [(0, 0), (1, 1)]
            assert info.value.rank == victim
            assert info.value.name == dead.name
            assert info.value.node_id == dead.node_id
            assert isinstance(info.value.__cause__, RayActorError)
        # Leaving the block shut the group down: nothing of it is alive.
        await settle(ours)
    report("worker SIGKILL / WorkerGroup.dispatch", items_in=4, items_out=len(got),
           duplicates=0, leaked_actors=0, failed_rank=victim, recovery_s=round(detected, 2))


class Scorer:
    def pid(self) -> int:
        return os.getpid()

    async def score(self, x: int) -> int:
        await asyncio.sleep(0.01)
        return x


@pytest.mark.asyncio(loop_factories=["uvloop"])
async def test_an_actor_pool_loses_a_sigkilled_actor_mid_map_and_delivers_every_item_once(
    ray_cluster: SessionCluster,
) -> None:
    items = 400
    async with ActorPool(Scorer, size=3, max_concurrency=4, retries=2, num_cpus=0) as pool:
        pids = await pool.broadcast("pid")
        seen: dict[int, int] = {}
        started = time.monotonic()
        killed_at = 0.0
        async with pool.map("score", range(items)) as stream:
            async for index, value in stream:
                assert index == value
                seen[index] = seen.get(index, 0) + 1
                if len(seen) == items // 4:
                    os.kill(pids[1], signal.SIGKILL)
                    killed_at = time.monotonic()
        recovered = time.monotonic() - killed_at
        assert sorted(seen) == list(range(items))
        assert set(seen.values()) == {1}
        assert pool.replaced >= 1
        stats = pool.stats
        assert stats.completed == items
        assert stats.in_flight == 0
    await settle(lambda: live_actors("Scorer"))
    report("worker SIGKILL / ActorPool.map", items_in=items, items_out=len(seen), duplicates=0,
           retried=stats.retried, leaked_actors=0, recovery_s=round(recovered, 2),
           total_s=round(time.monotonic() - started, 2))
