"""A real FastAPI handler awaiting ``gather`` of 1,000 refs keeps the server answering."""

from __future__ import annotations

import asyncio
import socket
import time

import httpx
import pytest
import ray
import uvicorn
from fastapi import FastAPI

from asyncpool import gather
from tests.conftest import SessionCluster


# One CPU each: the session cluster's 6 CPUs run them on workers that already exist, where
# num_cpus=0 had Ray start dozens of new worker processes (20 s on 2 cores) for no part of what
# this test checks; the gather still takes long enough for dozens of pings.
@ray.remote(num_cpus=1)
def work(i: int) -> int:
    time.sleep(0.005)
    return i


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# The same property (waiting on refs never holds the loop) is checked on both loops by
# tests/test_refs.py's 1,000-ref gather; this heavier server scenario runs once.
@pytest.mark.one_loop
@pytest.mark.asyncio
async def test_a_handler_awaiting_gather_of_1000_refs_leaves_the_server_responsive(
    ray_cluster: SessionCluster,
) -> None:
    app = FastAPI()

    @app.get("/ping")
    async def ping() -> dict[str, bool]:
        return {"ok": True}

    submitted = asyncio.Event()

    @app.get("/gather")
    async def gather_1000() -> dict[str, int]:
        refs = [work.remote(i) for i in range(1000)]  # synchronous: holds the loop a moment
        submitted.set()
        values = await gather(refs)
        return {"sum": sum(values)}

    port = _free_port()
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="off")
    )
    serving = asyncio.create_task(server.serve())
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=None) as client:
            deadline = time.monotonic() + 30
            while not server.started:
                assert time.monotonic() < deadline, "server did not start"
                await asyncio.sleep(0.05)
            started = time.perf_counter()
            slow = asyncio.create_task(client.get("/gather"))
            await submitted.wait()
            latencies = []
            while not slow.done():
                t0 = time.perf_counter()
                reply = await client.get("/ping")
                latencies.append(time.perf_counter() - t0)
                assert reply.json() == {"ok": True}
                await asyncio.sleep(0.02)
            assert (await slow).json() == {"sum": sum(range(1000))}
            elapsed = time.perf_counter() - started
    finally:
        server.should_exit = True
        await serving
    assert len(latencies) >= 5, "the gather finished before the server could be probed"
    # Submitting 1,000 tasks inside the handler is synchronous work of its own, so pings are
    # timed from when it is done: waiting on the refs never holds the loop. A wait that held
    # it would delay one ping by about the whole gather; judged against the gather's own time
    # so that a loaded machine (where everything is slower) does not decide.
    assert max(latencies) < 0.25 * elapsed, (sorted(latencies)[-3:], elapsed)
