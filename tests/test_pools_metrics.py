"""Pool metrics through ``ray.util.metrics``, and ``batch_size="auto"`` sized from worker time."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator

import pytest
import ray

from asyncpool import ActorPool, TaskPool
from asyncpool.tasks import AUTO_MAX_BATCH, AUTO_TARGET_S, _Clock, auto_batch_size
from tests.conftest import SessionCluster, async_wait_for


def maybe_fail(x: int) -> int:
    if x % 4 == 0:
        raise ValueError(x)
    return x


class Echo:
    async def echo(self, x: int) -> int:
        return x


def _scrape(url: str) -> str:
    with urllib.request.urlopen(url) as response:
        return str(response.read().decode())


def _metric(text: str, name: str, pool: str) -> float | None:
    for line in text.splitlines():
        if line.startswith(name) and f'pool="{pool}"' in line:
            return float(line.rsplit(" ", 1)[1])
    return None


@pytest.mark.asyncio(loop_factories=["uvloop"])
@pytest.mark.slow
async def test_pool_statistics_reach_rays_prometheus_export_tagged_by_name(
    ray_cluster: SessionCluster,
) -> None:
    name = f"metrics-{os.getpid()}-{time.monotonic_ns()}"
    async with TaskPool(maybe_fail, name=name, max_in_flight=4) as pool:
        results = [v async for _, v in pool.map(range(40), return_exceptions=True)]
        assert sum(isinstance(v, ValueError) for v in results) == 10
        assert pool.stats.name == name
        reporter = pool._engine.metrics if pool._engine is not None else None
        assert reporter is not None
        await async_wait_for(lambda: reporter.sent["completed"] == 30)
        assert reporter.sent["submitted"] == 40
        assert reporter.sent["failed"] == 10
        assert reporter.sent["latencies"] == 40
    head = next(n for n in ray.nodes() if n["NodeID"] == ray_cluster.head_node_id)
    url = f"http://{head['NodeManagerAddress']}:{head['MetricsExportPort']}/metrics"
    # Ray's export lands every few seconds, later on a loaded machine, and need not carry
    # every metric in the same scrape: poll until all three are there with the final count
    # (the suite's per-test timeout bounds a hang), then check the other two.
    keys = ("completed", "failed", "latency_seconds_count")
    while True:
        text = await asyncio.to_thread(_scrape, url)
        got = {key: _metric(text, f"ray_asyncpool_pool_{key}", name) for key in keys}
        if got["completed"] == 30 and None not in got.values():
            break
        await asyncio.sleep(0.5)
    assert got == {"completed": 30, "failed": 10, "latency_seconds_count": 40}


@pytest.mark.asyncio
async def test_metrics_false_reports_nothing_and_actor_pools_report_too(
    ray_cluster: SessionCluster,
) -> None:
    async with TaskPool(maybe_fail, metrics=False) as pool:
        assert await pool.submit(1) == 1
        assert pool._engine is not None
        assert pool._engine.metrics is None
        assert pool.stats.completed == 1
    async with ActorPool(Echo, size=1, num_cpus=0, name="echoes") as actors:
        assert await actors.call("echo", 3) == 3
        reporter = actors._engine.metrics if actors._engine is not None else None
        assert reporter is not None
        await async_wait_for(lambda: reporter.sent["completed"] == 1)
        assert actors.stats.name == "echoes"


class _CountingInstrument:
    """Stands in for a Ray metric object: counts the calls made on it (pure logic, no Ray)."""

    def __init__(self) -> None:
        self.calls = 0

    def inc(self, *args: object, **kwargs: object) -> None:
        self.calls += 1

    set = observe = inc


def test_metrics_cost_a_few_calls_per_flush_not_per_item(monkeypatch: pytest.MonkeyPatch) -> None:
    from asyncpool import _metrics
    from asyncpool.stats import _Recorder

    counters = {key: _CountingInstrument() for key in _metrics.COUNTERS}
    gauges = {key: _CountingInstrument() for key in _metrics.GAUGES}
    latency = _CountingInstrument()
    monkeypatch.setattr(_metrics, "_instruments", _metrics._Instruments(counters, gauges, latency))

    def calls() -> tuple[int, int, int]:
        return (sum(c.calls for c in counters.values()), sum(g.calls for g in gauges.values()),
                latency.calls)  # fmt: skip

    async def run() -> tuple[tuple[int, int, int], tuple[int, int, int]]:
        rec = _Recorder("cost", keep_unreported=True)
        reporter = _metrics._Reporter(rec, waiting=lambda: 0, loop=asyncio.get_running_loop())
        for i in range(10_000):
            rec.on_submit()
            rec.on_finish(ok=i % 10 != 0, latency=0.01)
        while_recording = calls()
        reporter.close()
        assert reporter.sent["completed"] == 9_000
        assert reporter.sent["failed"] == 1_000
        return while_recording, calls()

    while_recording, after_flush = asyncio.run(run())
    # Recording is plain counters: no metric call at all per item.
    assert while_recording == (0, 0, 0)
    # The flush: one call per counter that moved and per gauge, and one histogram observation
    # per latency (Ray's Histogram has no batch form).
    assert after_flush[0] <= len(counters)
    assert after_flush[0] >= 3  # submitted, completed, failed
    assert after_flush[1] == len(gauges)
    assert after_flush[2] == 10_000


@pytest.fixture
def busy_neighbour() -> Iterator[int]:
    """Pin this thread and a busy process to one CPU, so this thread waits for it half the time."""
    cpu = sorted(os.sched_getaffinity(0))[0]
    before = os.sched_getaffinity(0)
    hog = subprocess.Popen(
        [sys.executable, "-c", f"import os; os.sched_setaffinity(0, {{{cpu}}})\nwhile True: pass"]
    )
    os.sched_setaffinity(0, {cpu})
    try:
        yield cpu
    finally:
        os.sched_setaffinity(0, before)
        hog.kill()
        hog.wait()


def _burn(seconds: float) -> None:
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


def test_auto_batching_counts_a_cpu_bound_items_cpu_not_its_wait_for_a_cpu(
    busy_neighbour: int,
) -> None:
    clock = _Clock()
    wall = time.perf_counter()
    _burn(0.2)
    wall = time.perf_counter() - wall
    cost = clock.cost()
    # Sharing the CPU makes the wall time ~2x the work; the cost stays the work.
    assert wall > 0.3, "the neighbour did not compete for the CPU"
    assert 0.15 < cost < 0.3, (cost, wall)


def test_auto_batching_counts_time_an_item_spends_waiting_on_io() -> None:
    clock = _Clock()
    time.sleep(0.1)
    assert clock.cost() >= 0.09


def test_auto_batch_size_targets_tens_of_milliseconds_per_task() -> None:
    assert auto_batch_size(None) >= 1
    assert auto_batch_size(0.001) == int(AUTO_TARGET_S / 0.001)
    assert auto_batch_size(10.0) == 1
    assert auto_batch_size(0.0) == AUTO_MAX_BATCH
