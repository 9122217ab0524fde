"""``asyncpool serve`` batching concurrent requests into shared Ray tasks, over real HTTP.

Its own server with small batches (``--batch-size 4``) and two Ray tasks at once, so that a
few dozen concurrent requests fill several batches: each request must get its own answer
whatever shares its batch, a client that leaves must not disturb the others, and a server
told to stop with requests pending must answer them (503, ``Retry-After``) and exit.
"""

from __future__ import annotations

import asyncio
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import SessionCluster
from tests.test_server import ServeProcess, fenced, responses_object, serving, start_serve, stop
from tests.test_server_ops import _metric, _metric_delta, _poll

BATCH = 4


@pytest.fixture(scope="module")
def batching_server(ray_cluster: SessionCluster) -> Iterator[ServeProcess]:
    with serving(
        ["--address", ray_cluster.address, "--max-in-flight", "2",
         "--batch-size", str(BATCH), "--verify-timeout", "2"],
        "asyncpool-serve-batch-",
    ) as srv:  # fmt: skip
        yield srv


def _program(i: int) -> tuple[dict[str, Any], str, int | None, str]:
    """Request ``i`` of the mix and what it must get: (body, status, return_code, run status).

    Every program prints its own number first, so an answer that reached the wrong request
    shows in its stdout."""
    head = f"print({i}, flush=True)\n"
    match i % 3:
        case 0:
            return {"code": head}, "Success", 0, "Finished"
        case 1:
            code = head + f"import sys\nsys.exit({i % 50 + 1})\n"
            return {"code": code}, "Failed", i % 50 + 1, "Finished"
        case _:
            code = head + "import time\ntime.sleep(30)\n"
            return {"code": code, "run_timeout": 0.5}, "Failed", None, "TimeLimitExceeded"


def _verify_body(i: int) -> tuple[dict[str, Any], float]:
    """A NeMo-Gym stdin/stdout task: doubles its input; odd ``i`` gets a wrong solution."""
    solution = "print(int(input()) * 2)" if i % 2 == 0 else "print(int(input()) * 3)"
    body = {
        "responses_create_params": {"input": [{"role": "user", "content": "double it"}]},
        "response": responses_object(fenced(solution)),
        "verifier_metadata": {"unit_tests": {"inputs": [f"{i}\n"], "outputs": [f"{2 * i}\n"],
                                             "fn_name": None}},
    }  # fmt: skip
    return body, 1.0 if i % 2 == 0 else 0.0


@pytest.mark.slow
def test_concurrent_requests_of_mixed_verdicts_each_get_their_own_answer(
    batching_server: ServeProcess,
) -> None:
    """Passes, failures with their own exit status and time limits interleaved, with
    /verify tasks among them, several times the batch size at once. (One event loop is
    enough for the clients: this test runs once, not on both loops.)"""
    n_run, n_verify = 8 * BATCH, 4

    async def go() -> tuple[list[httpx.Response], list[httpx.Response], str, str]:
        limits = httpx.Limits(max_connections=64)
        async with httpx.AsyncClient(base_url=batching_server.url, timeout=None,
                                     limits=limits) as client:  # fmt: skip
            before = (await client.get("/metrics")).text
            runs = [client.post("/run_code", json={**_program(i)[0], "language": "python"})
                    for i in range(n_run)]  # fmt: skip
            verifies = [client.post("/verify", json=_verify_body(i)[0]) for i in range(n_verify)]
            answers = await asyncio.gather(*runs, *verifies)
            after = (await client.get("/metrics")).text
        return answers[:n_run], answers[n_run:], before, after

    runs, verifies, before, after = asyncio.run(go())
    for i, r in enumerate(runs):
        assert r.status_code == 200, (i, r.text[:300])
        _, status, code, run_status = _program(i)
        got = r.json()
        assert got["run_result"]["stdout"] == f"{i}\n", (i, got)
        assert (got["status"], got["run_result"]["return_code"],
                got["run_result"]["status"]) == (status, code, run_status), (i, got)  # fmt: skip
    for i, r in enumerate(verifies):
        assert r.status_code == 200, (i, r.text[:300])
        assert r.json()["reward"] == _verify_body(i)[1], (i, r.json())

    def delta(name: str, **labels: str) -> float:
        return _metric_delta(before, after, name, **labels)

    assert delta("asyncpool_serve_requests_total", route="/run_code", outcome="ok") == n_run
    assert delta("asyncpool_serve_timeouts_total", route="/run_code") == n_run // 3
    assert delta("asyncpool_serve_pool_completed") == n_run + n_verify
    assert _metric(after, "asyncpool_serve_pending") == 0
    assert _metric(after, "asyncpool_serve_queue_depth") == 0


@pytest.mark.slow
def test_a_client_that_leaves_does_not_disturb_the_others_of_its_batch(
    batching_server: ServeProcess,
) -> None:
    asyncio.run(_one_leaves(batching_server))


async def _one_leaves(srv: ServeProcess) -> None:
    slow = "import time\ntime.sleep(1.5)\nprint({i})\n"
    async with httpx.AsyncClient(base_url=srv.url, timeout=None) as probe:
        before = (await probe.get("/metrics")).text
        clients = [httpx.AsyncClient(base_url=srv.url, timeout=None) for _ in range(2 * BATCH)]
        try:
            posts = [asyncio.ensure_future(c.post(
                "/run_code", json={"code": slow.format(i=i), "language": "python",
                                   "run_timeout": 10}))
                for i, c in enumerate(clients)]  # fmt: skip
            await _poll(probe, lambda h: h["pending"] == 2 * BATCH)
            leaver = 1
            posts[leaver].cancel()  # its client disconnects: the server answers it nothing
            await clients[leaver].aclose()
            answers = await asyncio.gather(*(p for i, p in enumerate(posts) if i != leaver))
        finally:
            for c in clients:
                await c.aclose()
        stayed = [i for i in range(2 * BATCH) if i != leaver]
        for i, r in zip(stayed, answers, strict=True):
            assert r.status_code == 200, r.text
            assert r.json()["run_result"]["stdout"] == f"{i}\n"
        await _poll(probe, lambda h: h["pending"] == 0)
        after = (await probe.get("/metrics")).text
    key = {"route": "/run_code"}
    total = "asyncpool_serve_requests_total"
    assert _metric_delta(before, after, total, outcome="cancelled", **key) == 1
    assert _metric_delta(before, after, total, outcome="ok", **key) == len(stayed)


@pytest.mark.slow
def test_stopping_a_server_with_requests_pending_answers_them_503_and_exits(
    ray_cluster: SessionCluster, tmp_path: Path
) -> None:
    srv = start_serve(
        ["--address", ray_cluster.address, "--max-in-flight", "1", "--batch-size", "2"],
        tmp_path,
    )
    try:
        asyncio.run(_stop_with_pending(srv))
        srv.proc.wait(timeout=60)
        # uvicorn re-raises the signal it handled once it has shut down cleanly.
        assert srv.proc.returncode in (0, -signal.SIGTERM), srv.log_tail()
        log = srv.log.read_text(errors="replace")
        assert "Application shutdown complete" in log, log[-3000:]
        assert "Traceback" not in log, log[-3000:]
    finally:
        stop(srv.proc)


async def _stop_with_pending(srv: ServeProcess) -> None:
    sleeper = {"code": "import time\ntime.sleep(25)\n", "language": "python", "run_timeout": 28}
    async with httpx.AsyncClient(base_url=srv.url, timeout=None) as client:
        # Two in the pool's one Ray task, one waiting for the slot.
        posts = [asyncio.ensure_future(client.post("/run_code", json=sleeper)) for _ in range(3)]
        await _poll(client, lambda h: h["pending"] == 3)
        t0 = time.monotonic()
        srv.proc.send_signal(signal.SIGTERM)
        answers = await asyncio.gather(*posts)
        waited = time.monotonic() - t0
    for r in answers:
        assert r.status_code == 503, r.text
        assert r.headers["retry-after"] == "1"
        assert "shutting down" in r.json()["message"]
    # Answered after the 5 s drain, not after the programs' 25 s.
    assert waited < 20, f"pending requests were answered {waited:.1f}s after SIGTERM"
