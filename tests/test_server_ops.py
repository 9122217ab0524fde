"""``asyncpool serve`` under operations: admission (503 + Retry-After), a client that leaves
cancels its verification, Prometheus metrics, ``/health`` while the pool is saturated, and
verification running below the server's CPU priority.

Its own server, with a pool of one slot and room for two admitted verifications, so that
saturation takes two slow programs.
"""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.conftest import SessionCluster
from tests.test_server import ServeProcess, run_code, serving, start_serve, stop

pytestmark = pytest.mark.timeout(300)

SLOW = "import time\nprint('started', flush=True)\ntime.sleep(25)\n"


@pytest.fixture(scope="module")
def small_server(ray_cluster: SessionCluster) -> Iterator[ServeProcess]:
    with serving(
        ["--address", ray_cluster.address, "--max-in-flight", "1", "--max-pending", "2"],
        "asyncpool-serve-ops-",
    ) as srv:
        yield srv


def _metric(text: str, name: str, **labels: str) -> float:
    """The value of one sample of the Prometheus text ``text`` (0 when absent)."""
    wanted = ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
    pattern = re.escape(name) + (r"\{" + re.escape(wanted) + r"\}" if labels else "") + r" (\S+)"
    found = re.search(r"^" + pattern + r"$", text, re.MULTILINE)
    return float(found.group(1)) if found else 0.0


def _metric_delta(before: str, after: str, name: str, **labels: str) -> float:
    """How much one sample grew between two scrapes."""
    return _metric(after, name, **labels) - _metric(before, name, **labels)


async def _poll(client: httpx.AsyncClient, predicate: object) -> dict[str, float]:
    """Poll ``/health`` until ``predicate`` holds; the test's own timeout is the hang guard."""
    while True:
        health = (await client.get("/health")).json()
        if predicate(health):  # type: ignore[operator]
            return health  # type: ignore[no-any-return]
        await asyncio.sleep(0.1)


def test_saturated_server_answers_503_with_retry_after_and_leaving_clients_cancel(
    small_server: ServeProcess,
) -> None:
    """(One event loop is enough for the clients: this test runs once, not on both loops.)"""
    asyncio.run(_saturate_then_leave(small_server))


async def _saturate_then_leave(small_server: ServeProcess) -> None:
    async with httpx.AsyncClient(base_url=small_server.url, timeout=None) as probe:
        before = (await probe.get("/metrics")).text
        # Two slow programs fill the pool's slot and the admission bound.
        slow_clients = [httpx.AsyncClient(base_url=small_server.url, timeout=None)
                        for _ in range(2)]  # fmt: skip
        slow = [
            asyncio.ensure_future(c.post("/run_code", json={"code": SLOW, "language": "python",
                                                             "run_timeout": 28}))
            for c in slow_clients
        ]  # fmt: skip
        try:
            await _poll(probe, lambda h: h["pending"] == 2)
            # Both are in a Ray task or waiting for one (in one batch or two): the gauges say so.
            text = (await probe.get("/metrics")).text
            assert _metric(text, "asyncpool_serve_pending") == 2
            assert _metric(text, "asyncpool_serve_pool_in_flight") + _metric(
                text, "asyncpool_serve_queue_depth") == 2
            r = await probe.post("/run_code", json={"code": "print(1)", "language": "python"})
            # At once means without waiting for a slot: both slow programs still hold theirs.
            assert not any(task.done() for task in slow), "admission waited for a slot"
            assert r.status_code == 503, r.text
            assert r.headers["retry-after"] == "1"
            assert "overloaded" in r.json()["message"]
            assert (await probe.get("/health")).status_code == 200
            assert not any(task.done() for task in slow), "/health waited for a slot"
        finally:
            # The clients leave before their verdicts (25 s away): their Ray tasks are cancelled.
            for task in slow:
                task.cancel()
            for c in slow_clients:
                await c.aclose()
        await _poll(probe, lambda h: h["pending"] == 0)
        while True:
            text = (await probe.get("/metrics")).text
            if _metric(text, "asyncpool_serve_pool_in_flight") == 0:
                break
            await asyncio.sleep(0.1)
        # The slot came back because the Ray work was cancelled, not because the programs slept
        # their 25 s out: the pool completed nothing since the first scrape.
        assert _metric_delta(before, text, "asyncpool_serve_pool_completed") == 0
        r = await probe.post("/run_code", json={"code": "print(2)", "language": "python"})
        assert r.status_code == 200, f"{r.text}\n{small_server.log_tail()}"
        assert r.json()["run_result"]["stdout"] == "2\n"
    key = {"route": "/run_code"}
    total = "asyncpool_serve_requests_total"
    assert _metric_delta(before, text, total, outcome="cancelled", **key) == 2
    assert _metric_delta(before, text, total, outcome="overloaded", **key) == 1


def test_metrics_are_prometheus_text_counting_routes_outcomes_and_latency(
    small_server: ServeProcess,
) -> None:
    with httpx.Client(base_url=small_server.url, timeout=None) as client:
        before = client.get("/metrics").text
        run_code(small_server, code="print('ok')")
        run_code(small_server, code="import time; time.sleep(5)", run_timeout=0.5)
        client.post("/run_code", json={"language": "python"})  # 422
        r = client.get("/metrics")
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/plain")
    text = r.text

    def delta(name: str, **labels: str) -> float:
        return _metric_delta(before, text, name, **labels)

    assert delta("asyncpool_serve_requests_total", route="/run_code", outcome="ok") == 2
    assert delta("asyncpool_serve_requests_total", route="/run_code", outcome="rejected") == 1
    assert delta("asyncpool_serve_verification_seconds_count", route="/run_code") == 2
    assert delta("asyncpool_serve_timeouts_total", route="/run_code") == 1
    assert _metric(text, "asyncpool_serve_pool_max_in_flight") == 1
    for gauge in ("asyncpool_serve_pending", "asyncpool_serve_queue_depth",
                  "asyncpool_serve_pool_in_flight"):  # fmt: skip
        assert f"\n{gauge} " in text


def test_sandboxed_programs_run_below_the_servers_cpu_priority(
    small_server: ServeProcess,
) -> None:
    server_nice = os.getpriority(os.PRIO_PROCESS, small_server.proc.pid)
    got = run_code(small_server, code="import os\nprint(os.getpriority(os.PRIO_PROCESS, 0))")
    assert got["status"] == "Success", got
    assert int(got["run_result"]["stdout"]) > server_nice


def test_two_servers_share_one_cluster_and_both_verify(
    small_server: ServeProcess, ray_cluster: SessionCluster, tmp_path: Path
) -> None:
    """Several ``asyncpool serve`` processes (behind a load balancer) on one Ray cluster."""
    other = start_serve(["--address", ray_cluster.address], tmp_path)
    try:

        async def both() -> list[httpx.Response]:
            async with httpx.AsyncClient(timeout=None) as client:
                return list(await asyncio.gather(*(
                    client.post(srv.url + "/run_code",
                                json={"code": f"print({i} * 2)", "language": "python"})
                    # two each: the small server admits two at once
                    for i, srv in enumerate([small_server, other] * 2)
                )))  # fmt: skip

        answers = asyncio.run(both())
        assert [a.json()["run_result"]["stdout"] for a in answers] == [
            f"{i * 2}\n" for i in range(4)
        ]
        # Stopping one leaves the cluster to the other.
    finally:
        stop(other.proc)
    assert run_code(small_server, code="print('still here')")["status"] == "Success"
