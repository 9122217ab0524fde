"""A verification server for RL training: ``asyncpool serve``, embedded in your own program.

The server is part of asyncpool (``pip install 'asyncpool[server]'``); the command line is
all most deployments need::

    asyncpool serve --port 8000 [--address ADDR] [--max-in-flight N]

It speaks SandboxFusion's ``POST /run_code`` (so verl, SkyRL and ROLL point their
SandboxFusion URL at it unchanged) and NeMo-Gym's resource-server ``POST /verify`` for code
(NeMo-Gym's ``code_gen`` environment), with ``GET /health`` (never touches Ray) and
``GET /metrics`` (Prometheus). Verifications run in asyncpool's sandbox on a ``TaskPool``
spread over the Ray cluster.

This example does what the command does, from Python: it builds the app with
``asyncpool.server.create_app(Settings(...))`` and runs it on uvicorn with uvloop, the way
you would mount it beside routes of your own::

    python examples/resource_server.py --port 8000 [--address ADDR] [--host 127.0.0.1]

Clients for each protocol: ``examples/sandboxfusion_client.py`` and
``examples/nemo_gym_client.py``. It binds 127.0.0.1 unless told otherwise: it runs untrusted
code for whoever can reach it.
"""

from __future__ import annotations

import argparse
import logging

import uvicorn

import asyncpool
from asyncpool.server import Settings, create_app
from asyncpool.server.sandboxfusion import Limits


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    p.add_argument("--host", default="127.0.0.1", help="interface to bind (127.0.0.1)")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--address", default=None, help="Ray address (default: asyncpool's order)")
    p.add_argument("--max-in-flight", type=int, default=None, help="verifications at once")
    p.add_argument("--max-run-timeout", type=float, default=60.0, help="/run_code cap, s")
    p.add_argument("--verify-timeout", type=float, default=10.0, help="/verify per case, s")
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    app = create_app(
        Settings(
            address=args.address,
            max_in_flight=args.max_in_flight,
            run_code=Limits(max_run_timeout=args.max_run_timeout),
            verify_timeout=args.verify_timeout,
        )
    )

    @app.get("/hello")  # your own routes sit beside the protocol ones
    async def hello() -> dict[str, str]:
        return {"hello": "from your own route"}

    config = uvicorn.Config(app, host=args.host, port=args.port, loop="uvloop",
                            lifespan="on", access_log=False)  # fmt: skip
    # SIGINT/SIGTERM shut it down gracefully: the pool closes and Ray disconnects.
    asyncpool.run(uvicorn.Server(config).serve)


if __name__ == "__main__":
    main()
