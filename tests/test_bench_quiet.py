"""The bench starts each workload from a quiet cluster and says what it found
(:mod:`asyncpool._bench.quiet`): on the session cluster, whose nodes are this process's
descendants as an embedded cluster's are."""

from __future__ import annotations

import asyncio
import json
import os

import pytest
import ray

from asyncpool._bench import quiet, report
from tests.conftest import SessionCluster, async_wait_for


@ray.remote(num_cpus=1)
class QuietHolder:
    """An actor that holds one CPU of the cluster until it is killed (and uses none)."""

    def ready(self) -> bool:
        return True


def test_descendants_follows_every_generation_and_nothing_else() -> None:
    table = {
        10: (1, 0, "driver"),
        11: (10, 0, "raylet"),
        12: (11, 0, "ray::IDLE"),
        13: (12, 0, "fork server"),
        20: (1, 0, "someone else"),
        21: (20, 0, "their child"),
    }
    assert quiet._descendants(table, 10) == {11, 12, 13}
    assert quiet._descendants(table, 13) == set()


def test_the_process_table_has_this_process_with_its_parent_and_cpu() -> None:
    table = quiet._ticks()
    ppid, ticks, _ = table[os.getpid()]
    assert ppid == os.getppid()
    assert ticks >= 0


@pytest.mark.asyncio
async def test_settle_waits_while_an_actor_holds_a_cpu_names_it_and_stops_at_its_timeout(
    ray_cluster: SessionCluster,
) -> None:
    holder = QuietHolder.remote()  # type: ignore[attr-defined]
    try:
        assert await holder.ready.remote()
        found = await quiet.settle("judge", timeout_s=1.0)
        assert not found.quiet
        assert found.waited_s >= 1.0
        assert found.end.held_cpus >= 1
        assert "ray::QuietHolder" in found.end.busy
        assert "NOT quiet" in found.line()
        assert "before judge" in found.line()
    finally:
        ray.kill(holder)
    # Once it is gone nothing of it is held or named (other tests' processes may still tick,
    # so only what this test started is checked).
    deadline = asyncio.get_running_loop().time() + 60
    while True:
        noise = await quiet.measure(0.1)
        if noise.held_cpus == 0 and "ray::QuietHolder" not in noise.busy:
            break
        assert asyncio.get_running_loop().time() < deadline, noise.describe()


@pytest.mark.asyncio
async def test_measure_reports_the_cluster_workers_and_the_cpus_free(
    ray_cluster: SessionCluster,
) -> None:
    await async_wait_for(lambda: ray.available_resources().get("CPU", 0) > 0)
    noise = await quiet.measure(0.2)
    assert noise.cluster_cores is not None
    assert noise.cluster_cores >= 0
    assert noise.machine_cores is not None
    assert noise.machine_cores >= 0
    assert noise.held_cpus <= ray_cluster.total_cpus
    assert "Ray workers" in noise.describe()


def test_the_report_carries_what_each_workload_found() -> None:
    noise = quiet.Noise(0.05, 1.5, 3, ("ray::Judge",), 0.0)
    settled = quiet.Settled("judge", noise, noise, 0.5, True)
    machine = report.Machine(1.0, 2.0, 2, settled=(settled,))
    assert "before judge" in machine.line()
    doc = json.loads(json.dumps(report.json_document([], machine)))
    assert doc["settled"][0]["workload"] == "judge"
    assert doc["settled"][0]["end"]["busy"] == ["ray::Judge"]
