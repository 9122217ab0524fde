"""A real FastAPI handler awaiting ``gather`` of 1,000 refs keeps the server answering."""

from __future__ import annotations

import asyncio
import socket

import httpx
import pytest
import ray
import uvicorn
from fastapi import FastAPI

from asyncpool import gather
from tests._gate import Gate
from tests.conftest import SessionCluster


# One CPU each: the session cluster's 6 CPUs run them on workers that already exist, where
# num_cpus=0 had Ray start dozens of new worker processes (20 s on 2 cores) for no part of what
# this test checks.
@ray.remote(num_cpus=1)
def work(i: int) -> int:
    return i


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


#: Pings answered while the gather is held open.
PINGS = 20


# The same property (waiting on refs never holds the loop) is checked on both loops by
# tests/test_refs.py's 1,000-ref gather; this heavier server scenario runs once.
@pytest.mark.one_loop
@pytest.mark.asyncio
async def test_a_handler_awaiting_gather_of_1000_refs_leaves_the_server_responsive(
    ray_cluster: SessionCluster,
) -> None:
    """A handler awaits ``gather`` of 1,000 refs whose last is held at a gate; the server
    answers pings meanwhile, and only then does the test open the gate and get the sum.

    The client and the server share this test's event loop, so a handler that held the loop
    while it waited (a blocking ``ray.get``) would leave every ping unanswered and the gate
    closed: the test would fail on its timeout. Nothing here depends on how fast the machine is
    (an earlier form compared ping latencies with the gather's time, and a garbage collection
    on a loaded machine decided it).
    """
    gate = Gate.remote()  # type: ignore[attr-defined]
    app = FastAPI()

    @app.get("/ping")
    async def ping() -> dict[str, bool]:
        return {"ok": True}

    submitted = asyncio.Event()

    @app.get("/gather")
    async def gather_1000() -> dict[str, int]:
        refs = [work.remote(i) for i in range(999)] + [gate.hold.remote("last", 999)]
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
            while not server.started:  # the per-test timeout bounds a server that never starts
                await asyncio.sleep(0.05)
            slow = asyncio.create_task(client.get("/gather"))
            await submitted.wait()
            for _ in range(PINGS):
                reply = await client.get("/ping")
                assert reply.json() == {"ok": True}
            assert not slow.done()  # the gate is still closed
            await gate.open.remote("last")
            assert (await slow).json() == {"sum": sum(range(1000))}
    finally:
        server.should_exit = True
        await serving
        ray.kill(gate)
