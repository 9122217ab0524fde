"""``asyncpool serve``: a drop-in verification server for the RL frameworks people already run.

It speaks SandboxFusion's ``POST /run_code`` (python) and NeMo-Gym's resource-server
``POST /verify`` for code, on a :class:`~asyncpool.TaskPool` over a Ray cluster, so that a
trainer written for either (verl, SkyRL, ROLL; NeMo-Gym's ``code_gen`` environment) points
its URL here unchanged and its verifications spread over every node of the cluster.

Needs the ``[server]`` extra (FastAPI, uvicorn, prometheus-client). From the command line::

    asyncpool serve --port 8000 [--address ADDR] [--max-in-flight N] [--batch-size N|auto]

or from Python: ``asyncpool.server.serve(Settings(...), host=..., port=...)``, or mount
``create_app(Settings(...))`` in your own ASGI server.
"""

from __future__ import annotations

import asyncio
import socket

from .app import Settings, create_app, package_version

__all__ = ["Settings", "create_app", "serve"]


def serve(
    settings: Settings | None = None,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    log_level: str = "info",
    keep_alive: float = 75.0,
) -> None:
    """Run the server on uvicorn (uvloop) until SIGINT/SIGTERM; then close the pool and Ray.

    On SIGTERM/SIGINT it stops listening and admitting, gives the verifications in progress
    ``settings.drain_s`` seconds, answers those still waiting ``503`` with ``Retry-After``
    (a load balancer sends them elsewhere), then closes the pool. Binds 127.0.0.1 unless
    told otherwise: it runs untrusted code for whoever can reach it. Blocks the calling
    thread.
    """
    import uvicorn

    from asyncpool.runtime import run

    settings = settings or Settings()
    app = create_app(settings)

    class _Server(uvicorn.Server):
        """uvicorn's server, draining the app while it waits for its connections: uvicorn
        would otherwise cut the requests still running at its grace timeout, unanswered."""

        async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
            drain = asyncio.ensure_future(app.state.drain())
            try:
                await super().shutdown(sockets)
            finally:
                drain.cancel()
                await asyncio.wait([drain])  # ended before the loop closes

    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        loop="uvloop",
        lifespan="on",
        log_level=log_level,
        access_log=False,
        # Longer than clients keep idle connections (httpx 5 s, aiohttp 15 s, most load
        # balancers 60 s): a server that closes a kept-alive connection first races the
        # client's next request on it, which then fails with a reset instead of an answer.
        timeout_keep_alive=int(keep_alive),
        # A backstop: the drain answers what waits after settings.drain_s.
        timeout_graceful_shutdown=int(settings.drain_s) + 10,
        server_header=False,
    )
    run(_Server(config).serve)


__version__ = package_version()
