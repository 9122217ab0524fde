"""An async resource server that verifies HumanEval completions on a Ray cluster.

    python examples/resource_server.py --port 8000 [--address ADDR] [--host 127.0.0.1]

``POST /verify`` with ``{"task_id": "HumanEval/0", "completion": "<code>"}`` answers
``{"reward": 1.0 | 0.0, "status": "passed" | "failed" | "timeout" | "memory" | "crashed",
"duration_s": ..., "latency_s": ...}``: the completion is appended to the problem's prompt,
followed by its unit tests, and run in the sandbox (``asyncpool.sandbox.run_python``) inside a
Ray task of a :class:`asyncpool.TaskPool`. ``duration_s`` is the program's own run time,
``latency_s`` the whole time the server spent on the request (queueing for a pool slot, Ray,
the sandbox).

``GET /health`` is cheap and never touches Ray: a load balancer can poll it while the server
is saturated. ``GET /stats`` gives the pool's :class:`asyncpool.PoolStats` and the server's
own counters.

What the server guarantees:

* Verifications never block the event loop: handlers only *await* the pool (one Ray task per
  request, bounded by the pool's ``max_in_flight`` across all requests).
* Input is validated with pydantic: an unknown task id, a missing field, a wrong type or an
  unknown field is a 422 whose ``message`` says what is wrong (the offending input is never
  echoed back); a body that is not JSON is a 400; a completion longer than
  ``--max-completion-chars`` is a 422; a body larger than ``--max-body-bytes`` is a 413,
  whether it declares its ``Content-Length`` or streams it chunked.
* Overload is explicit: beyond ``--max-pending`` verifications admitted at once, ``/verify``
  answers 503 with ``Retry-After`` instead of queueing without bound.
* A client that disconnects before its verdict cancels its verification (the Ray task is
  cancelled and its pool slot given back); ``/stats`` counts it under ``cancelled``.
* It binds 127.0.0.1 unless told otherwise (``--host``): it runs untrusted code for whoever
  can reach it.

Ray is found the asyncpool way (``asyncpool.connect``): ``--address``, then
``ASYNCPOOL_ADDRESS``, ``RAY_ADDRESS``, a tagged local cluster, or a new embedded one. The
server runs on uvloop (``asyncpool.run``).
"""

# No ``from __future__ import annotations``: FastAPI reads the endpoint annotations at runtime,
# and the request model is made per app (its completion cap is a setting).

import argparse
import asyncio
import collections
import contextlib
import dataclasses
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from contextlib import asynccontextmanager
from typing import Any, Literal

import uvicorn
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, ConfigDict, Field, field_validator

import asyncpool
from asyncpool.sandbox import SandboxResult, run_python
from benchmarks.humaneval import load_problems, program_for

log = logging.getLogger("resource_server")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

#: Status code for "the client closed the connection before the answer" (nginx's convention;
#: nobody reads it, it only shows in logs).
CLIENT_CLOSED_REQUEST = 499


# --------------------------------------------------------------------------- the Ray task


def verify_completion(
    task_id: str, completion: str, timeout: float, memory_mb: int
) -> SandboxResult:
    """Runs in a Ray worker: the completion against its problem's tests, in the sandbox.

    ``run_python`` uses a fork server per worker process, so one check costs a fork, not a
    Python start-up.
    """
    return run_python(program_for(task_id, completion), timeout=timeout, memory_mb=memory_mb)


# --------------------------------------------------------------------------- settings, models


@dataclasses.dataclass(frozen=True)
class Settings:
    address: str | None = None
    max_body_bytes: int = 512 * 1024
    max_completion_chars: int = 64 * 1024
    sandbox_timeout: float = 10.0
    memory_mb: int = 512
    max_in_flight: int | None = None
    max_pending: int = 4096


@dataclasses.dataclass
class Counters:
    """The server's own counters (the pool counts Ray tasks; these count HTTP requests)."""

    verify_requests: int = 0  # /verify requests that passed validation
    verified: int = 0  # answered with a verdict
    passed: int = 0  # ... whose verdict was "passed"
    rejected: int = 0  # 4xx: invalid JSON, failed validation, body too large
    overloaded: int = 0  # 503: more than max_pending verifications at once
    errors: int = 0  # 5xx: the verification itself could not run
    cancelled: int = 0  # the client left; its verification was cancelled
    pending: int = 0  # admitted and not finished


class LoopLag:
    """Measures how late the event loop wakes up: the proof that nothing blocks it.

    A task sleeps ``interval`` seconds at a time and records how much later than asked it
    woke up, with the CPU time the loop's thread and the whole process used meanwhile: a
    late wake-up with little CPU means the process was waiting for a core (a loaded
    machine: ``runqueue_wait`` says how long the loop's thread was ready but not given a
    CPU, on Linux); with much loop CPU, the loop itself was busy; with much process CPU but
    little loop CPU, other threads (Ray's) held the interpreter.
    """

    def __init__(self, interval: float = 0.02, window: int = 3000) -> None:
        self.interval = interval
        self.lags: collections.deque[tuple[float, ...]] = collections.deque(maxlen=window)

    @staticmethod
    def _runqueue_wait() -> float:
        """Seconds this thread has spent runnable but waiting for a CPU (Linux schedstat)."""
        try:
            with open("/proc/thread-self/schedstat", "rb") as f:
                return int(f.read().split()[1]) / 1e9
        except (OSError, IndexError, ValueError):
            return 0.0

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            t0, c0, p0 = loop.time(), time.thread_time(), time.process_time()
            w0 = self._runqueue_wait()
            await asyncio.sleep(self.interval)
            lag = max(0.0, loop.time() - t0 - self.interval)
            cpu, process_cpu = time.thread_time() - c0, time.process_time() - p0
            self.lags.append((lag, cpu, process_cpu, self._runqueue_wait() - w0))

    def summary(self) -> dict[str, float]:
        if not self.lags:
            return {"samples": 0}
        ordered = sorted(self.lags)
        worst_lag, worst_cpu, worst_process_cpu, worst_wait = ordered[-1]
        return {
            "samples": len(ordered),
            "lag_p50_s": round(ordered[len(ordered) // 2][0], 6),
            "lag_p99_s": round(ordered[min(len(ordered) - 1, round(0.99 * len(ordered)))][0], 6),
            "lag_max_s": round(worst_lag, 6),
            "lag_max_loop_cpu_s": round(worst_cpu, 6),
            "lag_max_process_cpu_s": round(worst_process_cpu, 6),
            "lag_max_runqueue_wait_s": round(worst_wait, 6),
        }


SandboxStatusName = Literal["passed", "failed", "timeout", "memory", "crashed"]


class VerifyResponse(BaseModel):
    reward: float
    status: SandboxStatusName
    duration_s: float
    latency_s: float


def request_model(max_completion_chars: int) -> type[BaseModel]:
    """The ``/verify`` body, with the completion cap of this server."""
    problems = load_problems()
    first, last = min(problems, key=_task_number), max(problems, key=_task_number)

    class VerifyRequest(BaseModel):
        model_config = ConfigDict(strict=True, extra="forbid")

        task_id: str = Field(examples=["HumanEval/0"], max_length=64)
        completion: str = Field(max_length=max_completion_chars)

        @field_validator("task_id")
        @classmethod
        def _known_task(cls, value: str) -> str:
            if value not in problems:
                raise ValueError(
                    f"unknown task id {value[:64]!r}: expected one of {first} .. {last}"
                )
            return value

    return VerifyRequest


def _task_number(task_id: str) -> int:
    return int(task_id.rsplit("/", 1)[-1])


# --------------------------------------------------------------------------- body size cap


class BodyLimit:
    """Pure ASGI middleware: a request body over ``max_bytes`` is a 413, never buffered whole.

    A declared ``Content-Length`` over the cap is refused before anything is read; a body
    without one (chunked) is counted as it streams and refused as soon as it passes the cap.
    The rest of a refused body is read and discarded (up to ``drain_bytes``) before the 413
    goes out, so the client sees the answer rather than a connection reset; the connection
    is then closed. A body within the cap is handed to the app in one piece.
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        max_bytes: int,
        on_reject: Callable[[], None],
        drain_bytes: int = 8 * 1024 * 1024,
    ) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.on_reject = on_reject
        self.drain_bytes = drain_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = _content_length(scope)
        if declared == -1:
            await self._refuse(send, 400, "invalid Content-Length header")
            return
        if declared is not None and declared > self.max_bytes:
            if declared <= self.drain_bytes:
                await _drain(receive, self.drain_bytes)
            await self._refuse(send, 413, self._too_large(declared))
            return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return  # the client left before sending its body; nobody to answer
            body = message.get("body", b"")
            size += len(body)
            if size > self.max_bytes:
                if message.get("more_body", False):
                    await _drain(receive, self.drain_bytes - size)
                await self._refuse(send, 413, self._too_large(None))
                return
            chunks.append(body)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()  # then http.disconnect, as the server reports it

        await self.app(scope, replay, send)

    def _too_large(self, declared: int | None) -> str:
        size = f" of {declared} bytes" if declared is not None else ""
        return f"request body{size} is over the limit of {self.max_bytes} bytes"

    async def _refuse(self, send: Send, status: int, message: str) -> None:
        self.on_reject()
        body = JSONResponse({"detail": message, "message": message}).body
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                    (b"connection", b"close"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body, "more_body": False})


def _content_length(scope: Scope) -> int | None:
    """The declared length; ``None`` when absent, ``-1`` when malformed."""
    for name, value in scope.get("headers", ()):
        if name == b"content-length":
            try:
                n = int(value)
            except ValueError:
                return -1
            return n if n >= 0 else -1
    return None


async def _drain(receive: Receive, budget: int) -> None:
    while budget > 0:
        message = await receive()
        if message["type"] != "http.request":
            return
        budget -= len(message.get("body", b""))
        if not message.get("more_body", False):
            return


async def _client_gone(receive: Receive) -> None:
    """Return when the client disconnects (the body has been read already)."""
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return


# --------------------------------------------------------------------------- the app


def create_app(settings: Settings) -> FastAPI:
    """The FastAPI app; its lifespan connects to Ray and opens the verification pool."""
    counters = Counters()
    started = time.monotonic()
    pool_timeout = settings.sandbox_timeout + 30.0  # a backstop; the sandbox enforces its own
    holder: dict[str, asyncpool.TaskPool[..., SandboxResult]] = {}
    VerifyRequest = request_model(settings.max_completion_chars)
    lag = LoopLag()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        load_problems()  # read the problem set once, before the first request
        monitor = asyncio.ensure_future(lag.run())
        try:
            async with (
                asyncpool.connect(settings.address, log_to_driver=False) as rt,
                asyncpool.TaskPool(
                    verify_completion,
                    max_in_flight=settings.max_in_flight,
                    timeout=pool_timeout,
                    retries=2,
                ) as pool,
            ):
                holder["pool"] = pool
                log.info(
                    "verification pool open on %s (%s), max_in_flight=%d",
                    rt.address,
                    rt.source,
                    pool.max_in_flight,
                )
                try:
                    yield
                finally:
                    holder.clear()
        finally:
            monitor.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await monitor

    app = FastAPI(title="asyncpool HumanEval resource server", lifespan=lifespan)

    @app.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, exc: RequestValidationError) -> JSONResponse:
        counters.rejected += 1
        errors = [
            {
                "loc": list(e.get("loc", ())),
                "msg": str(e.get("msg", "")).removeprefix("Value error, "),
                "type": e.get("type"),
            }
            for e in exc.errors()
        ]
        status = 400 if any(e["type"] == "json_invalid" for e in errors) else 422
        message = "; ".join(
            ".".join(str(part) for part in e["loc"] if part != "body") + ": " + e["msg"]
            if len(e["loc"]) > 1
            else e["msg"]
            for e in errors
        )
        if status == 400:
            message = "the request body is not valid JSON"
        return JSONResponse({"detail": errors, "message": message}, status_code=status)

    @app.get("/health")
    async def health() -> dict[str, Any]:
        return {
            "status": "ok" if "pool" in holder else "starting",
            "uptime_s": round(time.monotonic() - started, 3),
            "pending": counters.pending,
        }

    @app.get("/stats")
    async def stats() -> dict[str, Any]:
        pool = holder.get("pool")
        pool_stats: dict[str, Any] = dataclasses.asdict(pool.stats) if pool else {}
        if pool is not None:
            pool_stats["max_in_flight"] = pool.max_in_flight
        return {
            "pool": pool_stats,
            "server": {
                **dataclasses.asdict(counters),
                "uptime_s": round(time.monotonic() - started, 3),
            },
            "event_loop": lag.summary(),
        }

    @app.post("/verify", response_model=VerifyResponse)
    async def verify(body: VerifyRequest, request: Request) -> Any:
        pool = holder.get("pool")
        if pool is None:  # pragma: no cover - only between lifespan steps
            return _error(503, "the verification pool is not open", counters)
        if counters.pending >= settings.max_pending:
            counters.overloaded += 1
            return JSONResponse(
                {"message": f"overloaded: {counters.pending} verifications pending"},
                status_code=503,
                headers={"Retry-After": "1"},
            )
        counters.verify_requests += 1
        counters.pending += 1
        t0 = time.monotonic()
        task_id: str = body.task_id
        completion: str = body.completion
        work = asyncio.ensure_future(
            pool.submit(task_id, completion, settings.sandbox_timeout, settings.memory_mb)
        )
        gone = asyncio.ensure_future(_client_gone(request.receive))
        try:
            await asyncio.wait((work, gone), return_when=asyncio.FIRST_COMPLETED)
        finally:
            counters.pending -= 1
            gone.cancel()
            if not work.done():
                work.cancel()  # the client left (or we are cancelled): cancel the Ray task
        if work.cancelled() or not work.done():
            counters.cancelled += 1
            return Response(status_code=CLIENT_CLOSED_REQUEST)
        try:
            result = work.result()
        except asyncpool.TaskTimeoutError:
            return _error(504, f"verification did not finish within {pool_timeout}s", counters)
        except Exception as exc:
            log.warning("verification of %s failed: %r", task_id, exc)
            return _error(503, f"verification failed: {type(exc).__name__}: {exc}", counters)
        counters.verified += 1
        counters.passed += result.passed
        return VerifyResponse(
            reward=1.0 if result.passed else 0.0,
            status=result.status,
            duration_s=round(result.duration, 6),
            latency_s=round(time.monotonic() - t0, 6),
        )

    def on_reject() -> None:
        counters.rejected += 1

    app.add_middleware(BodyLimit, max_bytes=settings.max_body_bytes, on_reject=on_reject)
    return app


def _error(status: int, message: str, counters: Counters) -> JSONResponse:
    counters.errors += 1
    return JSONResponse({"message": message}, status_code=status)


# --------------------------------------------------------------------------- command line


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    p.add_argument("--host", default="127.0.0.1", help="interface to bind (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--address", default=None, help="Ray address (default: asyncpool's resolution)")
    p.add_argument("--max-body-bytes", type=int, default=Settings.max_body_bytes)
    p.add_argument("--max-completion-chars", type=int, default=Settings.max_completion_chars)
    p.add_argument("--sandbox-timeout", type=float, default=Settings.sandbox_timeout)
    p.add_argument("--memory-mb", type=int, default=Settings.memory_mb)
    p.add_argument("--max-in-flight", type=int, default=None, help="Ray tasks at once")
    p.add_argument("--max-pending", type=int, default=Settings.max_pending)
    p.add_argument("--keep-alive", type=float, default=75.0, help="idle connection timeout, s")
    p.add_argument("--log-level", default="info")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    logging.basicConfig(level=args.log_level.upper(), format="%(levelname)s %(name)s: %(message)s")
    settings = Settings(
        address=args.address,
        max_body_bytes=args.max_body_bytes,
        max_completion_chars=args.max_completion_chars,
        sandbox_timeout=args.sandbox_timeout,
        memory_mb=args.memory_mb,
        max_in_flight=args.max_in_flight,
        max_pending=args.max_pending,
    )
    config = uvicorn.Config(
        create_app(settings),
        host=args.host,
        port=args.port,
        loop="uvloop",
        lifespan="on",
        log_level=args.log_level,
        access_log=False,
        # Longer than clients keep idle connections (httpx 5 s, aiohttp 15 s, most load
        # balancers 60 s): a server that closes a kept-alive connection first races the
        # client's next request on it, which then fails with a reset instead of an answer.
        timeout_keep_alive=args.keep_alive,
        timeout_graceful_shutdown=5,
    )
    # uvicorn's Server.serve on uvloop; SIGINT/SIGTERM shut it down gracefully (the lifespan
    # closes the pool and disconnects from Ray).
    asyncpool.run(uvicorn.Server(config).serve)


if __name__ == "__main__":
    main()
