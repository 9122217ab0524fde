"""Many allocations fighting over too few GPUs all end, and leave only the winners' groups."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
import time
import uuid

import pytest
import ray
from ray.util.placement_group import PlacementGroup

from asyncpool import Backoff, PlacementTimeoutError, allocate, reap
from tests.chaos._util import report
from tests.conftest import SessionCluster, async_wait_for

pytestmark = [pytest.mark.slow, pytest.mark.chaos, pytest.mark.multinode]

FAST = Backoff(initial=0.2, factor=2.0, maximum=1.0, jitter=0.1)


def _groups(prefix: str) -> dict[str, str]:
    return {
        pg["name"]: pg["state"]
        for pg in ray.util.placement_group_table().values()
        if pg["name"].startswith(prefix) and pg["state"] != "REMOVED"
    }


@pytest.mark.asyncio(loop_factories=["uvloop"])
async def test_competing_allocations_all_end_and_leak_no_group(
    ray_cluster: SessionCluster,
) -> None:
    prefix = f"pressure-{uuid.uuid4().hex[:6]}-"
    # Each request wants a whole 4-GPU node; the cluster has two such nodes.
    bundles = [{"GPU": 1.0}] * 4
    outcomes: dict[str, str] = {}
    winners: list[PlacementGroup] = []

    async def contender(i: int, timeout: float, hold: float) -> None:
        name = f"{prefix}{i}"
        try:
            pg = await allocate(bundles, strategy="STRICT_PACK", name=name, timeout=timeout,
                                backoff=FAST)
        except PlacementTimeoutError:
            outcomes[name] = "timed out"
            return
        except asyncio.CancelledError:
            outcomes[name] = "cancelled"
            raise
        outcomes[name] = "allocated"
        winners.append(pg)
        await asyncio.sleep(hold)
        if i % 3:  # most winners give their node back, so waiters get a turn
            ray.util.remove_placement_group(pg)
            winners.remove(pg)

    # Two blockers hold both nodes while the contenders start, so that each way to end is
    # exercised whatever the scheduling order: no contender is placed before 3 s, every third
    # of those still waiting at 1 s is cancelled (never 4 nor 8, whose 2 s timeouts then
    # expire), and once the blockers go the others take turns at 0.5 s holds (winners with
    # i % 3 == 0 keep their node, and a waiter may then run to its 8 s timeout too).
    blockers: list[PlacementGroup] = []
    tasks: dict[str, asyncio.Task[None]] = {}
    started = time.monotonic()
    try:
        for j in range(2):  # one at a time: a failed second leaks no first (finally below)
            blocker = await allocate(
                bundles, strategy="STRICT_PACK", name=f"{prefix}blocker{j}", timeout=60.0,
                backoff=FAST,
            )
            blockers.append(blocker)
        started = time.monotonic()
        tasks.update({
            f"{prefix}{i}": asyncio.create_task(
                contender(i, timeout=2.0 if i % 4 == 0 else 8.0, hold=0.5))
            for i in range(12)
        })  # fmt: skip
        await asyncio.sleep(1.0)
        assert "allocated" not in outcomes.values(), "the blockers hold both nodes"
        waiting = [name for name, task in tasks.items()
                   if name not in outcomes and not task.done()]
        for name in waiting[::3]:
            tasks[name].cancel()
        # The 2 s timeouts fire before this sleep ends (the loop runs its timers in order).
        await asyncio.sleep(3.0 - (time.monotonic() - started))
        for pg in blockers:
            ray.util.remove_placement_group(pg)
        blockers.clear()
        results = await asyncio.gather(*tasks.values(), return_exceptions=True)
        elapsed = time.monotonic() - started
        unexpected = [r for r in results if isinstance(r, BaseException)
                      and not isinstance(r, asyncio.CancelledError)]
        assert not unexpected
        assert len(outcomes) == 12, "every contender ended one way or another"
        assert {"allocated", "timed out", "cancelled"} <= set(outcomes.values())
        left = _groups(prefix)
        assert set(left) == {pg_name for pg_name, pg in _named(winners)}
        assert all(state == "CREATED" for state in left.values())
    finally:
        # The groups hold whole GPU nodes of the session cluster: a failure here must not
        # leave them to starve every later GPU test.
        for task in tasks.values():
            task.cancel()
        await asyncio.gather(*tasks.values(), return_exceptions=True)
        for pg in [*winners, *blockers]:
            ray.util.remove_placement_group(pg)
    await async_wait_for(lambda: not _groups(prefix))
    counts = {k: list(outcomes.values()).count(k) for k in ("allocated", "timed out", "cancelled")}
    report("placement pressure (12 allocates, 2 nodes)", items_in=12, items_out=len(outcomes),
           duplicates=0, leaked_groups=0, seconds=round(elapsed, 1), **counts)


def _named(pgs: list[PlacementGroup]) -> list[tuple[str, object]]:
    table = ray.util.placement_group_table()
    return [(table[pg.id.hex()]["name"], pg) for pg in pgs]


ORPHAN_DRIVER = textwrap.dedent(
    """
    import sys, time, ray
    from ray.util.placement_group import placement_group
    ray.init(address=sys.argv[1], namespace=sys.argv[2], log_to_driver=False)
    groups = [placement_group([{"CPU": 0.01}], name=f"{sys.argv[3]}{i}", lifetime="detached")
              for i in range(3)]
    ray.get([g.ready() for g in groups])
    print("ready", flush=True)
    time.sleep(600)  # killed by the test before this ends
    """
)


def _start_driver(address: str, namespace: str, prefix: str) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("RAY_ADDRESS", "ASYNCPOOL_ADDRESS")}
    return subprocess.Popen(
        [sys.executable, "-c", ORPHAN_DRIVER, address, namespace, prefix],
        stdout=subprocess.PIPE, text=True, env=env, start_new_session=True,
    )


@pytest.mark.asyncio(loop_factories=["uvloop"])
async def test_reap_removes_the_detached_orphans_of_a_killed_driver(
    ray_cluster: SessionCluster,
) -> None:
    namespace = ray.get_runtime_context().namespace
    prefix = f"orphan-{uuid.uuid4().hex[:6]}-"
    proc = _start_driver(ray_cluster.address, namespace, prefix)
    try:
        assert proc.stdout is not None
        line = await asyncio.to_thread(proc.stdout.readline)
        assert line.strip() == "ready"
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the driver dies without cleaning up
        proc.wait(timeout=30)
        if proc.stdout is not None:
            proc.stdout.close()
    assert len(_groups(prefix)) == 3
    started = time.monotonic()
    assert await reap(prefix) == 3
    await async_wait_for(lambda: not _groups(prefix))
    report("killed driver's detached groups / reap", items_in=3, items_out=3, duplicates=0,
           leaked_groups=0, recovery_s=round(time.monotonic() - started, 2))
