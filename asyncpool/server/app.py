"""The FastAPI app behind ``asyncpool serve``: both protocols on one verification pool.

Routes: ``POST /run_code`` (SandboxFusion, :mod:`.sandboxfusion`), ``POST /verify``,
``POST /seed_session`` and ``GET /`` (NeMo-Gym, :mod:`.nemo_gym`), ``GET /health`` and
``GET /metrics`` (operations).

What it guarantees:

* Handlers only *await* the pool: nothing blocks the event loop, and ``GET /health`` never
  touches Ray, so it answers while every core verifies.
* Bounded admission: beyond ``max_pending`` verifications admitted at once, a request is
  answered ``503`` with ``Retry-After`` at once instead of queueing without bound.
* Bad input is a 4xx with a ``message`` saying what is wrong (the input itself is never
  echoed): a body over ``max_body_bytes`` is 413 (declared or streamed), anything that is not
  a valid request (not JSON, a missing field, a wrong type, a bad base64 file, a path outside
  the working directory, a time limit over the cap...) is 422.
* A client that disconnects before its answer cancels its verification (the Ray task is
  cancelled, its pool slot given back); ``/metrics`` counts it as ``cancelled``.
* ``/run_code`` answers SandboxFusion's JSON for every program, including a ``SandboxError``
  response for a language other than python; the sandbox failing to judge a ``/verify`` task
  (never a verdict) is a 503 with ``Retry-After``.
"""

# No ``from __future__ import annotations``: FastAPI reads the endpoint annotations at runtime.

import asyncio
import dataclasses
import importlib.metadata
import logging
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response

import asyncpool
from asyncpool.tasks import TaskPool

from . import nemo_gym, sandboxfusion
from ._limits import BodyLimit, client_gone
from ._worker import run_job
from .metrics import CONTENT_TYPE_LATEST, ServerMetrics
from .models import RunCodeRequest, RunCodeResponse, VerifyRequest, VerifyResponse

__all__ = ["Settings", "create_app", "package_version"]

log = logging.getLogger("asyncpool.serve")

#: Status of "the client closed the connection before the answer" (nginx's; only in logs).
CLIENT_CLOSED_REQUEST = 499


@dataclasses.dataclass(frozen=True)
class Settings:
    """How one ``asyncpool serve`` process runs (the command line's flags)."""

    address: str | None = None
    max_in_flight: int | None = None
    max_pending: int = 1024
    max_body_bytes: int = 32 << 20
    run_code: sandboxfusion.Limits = dataclasses.field(default_factory=sandboxfusion.Limits)
    verify_timeout: float = 10.0
    verify_memory_mb: int = 1024
    max_cases: int = 1000
    max_output_chars: int = 1 << 20

    def __post_init__(self) -> None:
        for name in ("max_pending", "max_body_bytes", "max_cases", "max_output_chars"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be an int >= 1, got {value!r}")
        if self.max_in_flight is not None and (
            isinstance(self.max_in_flight, bool)
            or not isinstance(self.max_in_flight, int)
            or self.max_in_flight < 1
        ):
            raise ValueError(f"max_in_flight must be an int >= 1, got {self.max_in_flight!r}")
        if not (isinstance(self.verify_timeout, int | float) and self.verify_timeout > 0):
            raise ValueError(f"verify_timeout must be > 0, got {self.verify_timeout!r}")


@dataclasses.dataclass
class _State:
    pool: TaskPool[..., dict[str, Any]] | None = None
    pending: int = 0
    started: float = dataclasses.field(default_factory=time.monotonic)


class _Refused(Exception):
    """Answer the request with ``response`` now (overload, cancellation, sandbox failure)."""

    def __init__(self, response: Response, outcome: str) -> None:
        super().__init__(outcome)
        self.response = response
        self.outcome = outcome


def package_version() -> str:
    """asyncpool's installed version (``0+unknown`` when run from a bare source tree)."""
    try:
        return importlib.metadata.version("asyncpool")
    except importlib.metadata.PackageNotFoundError:  # pragma: no cover
        return "0+unknown"


def _message(status: int, message: str, **headers: str) -> JSONResponse:
    return JSONResponse(
        {"detail": message, "message": message}, status_code=status, headers=headers or None
    )


def create_app(settings: Settings | None = None) -> FastAPI:
    """The app; its lifespan connects to Ray (``asyncpool.connect``) and opens the pool."""
    settings = settings or Settings()
    state = _State()
    metrics = ServerMetrics()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async with (
            asyncpool.connect(settings.address, log_to_driver=False) as rt,
            TaskPool(run_job, max_in_flight=settings.max_in_flight, retries=2) as pool,
        ):
            state.pool = pool
            log.info(
                "verification pool on Ray cluster %s (%s), max_in_flight=%d",
                rt.address,
                rt.source,
                pool.max_in_flight,
            )
            try:
                yield
            finally:
                state.pool = None

    app = FastAPI(
        title="asyncpool serve",
        summary="SandboxFusion /run_code and NeMo-Gym /verify on a Ray cluster",
        version=package_version(),
        lifespan=lifespan,
    )

    def count(request: Request, outcome: str) -> None:
        metrics.requests.labels(request.url.path, outcome).inc()

    @app.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, exc: RequestValidationError) -> JSONResponse:
        count(request, "rejected")
        errors = [
            {
                "loc": [str(p) for p in e.get("loc", ())],
                "msg": str(e.get("msg", "")).removeprefix("Value error, "),
                "type": e.get("type"),
            }
            for e in exc.errors()
        ]
        message = "; ".join(
            ".".join(p for p in e["loc"] if p != "body") + ": " + e["msg"]
            if len(e["loc"]) > 1
            else e["msg"]
            for e in errors
        )
        if any(e["type"] == "json_invalid" for e in errors):
            message = "the request body is not valid JSON"
        return JSONResponse({"detail": errors, "message": message}, status_code=422)

    async def on_pool(request: Request, route: str, kind: str, job: Any) -> dict[str, Any]:
        """Run one job on the pool for this request; raises :class:`_Refused` to answer now.

        Cancellation: the client leaving (or this task being cancelled) cancels the Ray task.
        """
        pool = state.pool
        if pool is None:  # pragma: no cover - only between lifespan steps
            raise _Refused(_message(503, "the verification pool is not open"), "overloaded")
        if state.pending >= settings.max_pending:
            raise _Refused(
                _message(
                    503,
                    f"overloaded: {state.pending} verifications pending",
                    **{"Retry-After": "1"},
                ),
                "overloaded",
            )
        state.pending += 1
        t0 = time.monotonic()
        work = asyncio.ensure_future(pool.submit(kind, job))
        gone = asyncio.ensure_future(client_gone(request.receive))
        try:
            await asyncio.wait((work, gone), return_when=asyncio.FIRST_COMPLETED)
        finally:
            state.pending -= 1
            gone.cancel()
            if not work.done():
                work.cancel()  # the client left (or we are cancelled): cancel the Ray task
        if work.cancelled() or not work.done():
            raise _Refused(Response(status_code=CLIENT_CLOSED_REQUEST), "cancelled")
        try:
            outcome: dict[str, Any] = work.result()
        except Exception as exc:
            log.warning("%s: the verification could not run: %r", route, exc)
            raise _Refused(
                _message(
                    503,
                    f"the verification could not run: {type(exc).__name__}: {exc}"[:1000],
                    **{"Retry-After": "1"},
                ),
                "error",
            ) from None
        metrics.latency.labels(route).observe(time.monotonic() - t0)
        return outcome

    @app.get("/health")
    async def health() -> dict[str, Any]:
        """Liveness for load balancers: never touches Ray."""
        return {
            "status": "ok" if state.pool is not None else "starting",
            "uptime_s": round(time.monotonic() - state.started, 3),
            "pending": state.pending,
        }

    @app.get("/metrics")
    async def prometheus() -> Response:
        pool = state.pool
        body = metrics.render(
            state.pending,
            pool.stats if pool is not None else None,
            pool.max_in_flight if pool is not None else 0,
        )
        return Response(body, media_type=CONTENT_TYPE_LATEST)

    @app.post("/run_code", response_model=RunCodeResponse)
    async def run_code(body: RunCodeRequest, request: Request) -> Any:
        """SandboxFusion's ``/run_code`` (python)."""
        unsupported = sandboxfusion.unsupported_language(body)
        if unsupported is not None:
            count(request, "ok")
            return unsupported
        try:
            job = sandboxfusion.prepare(body, settings.run_code)
        except sandboxfusion.BadRequest as exc:
            count(request, "rejected")
            return _message(422, str(exc))
        try:
            outcome = await on_pool(request, "/run_code", "run_code", job)
        except _Refused as refused:
            count(request, refused.outcome)
            return refused.response
        response = sandboxfusion.respond(job, outcome, list(body.fetch_files))
        if response.run_result is not None and response.run_result.status == "TimeLimitExceeded":
            metrics.timeouts.labels("/run_code").inc()
        count(request, "ok")
        return response

    @app.post("/verify", response_model=VerifyResponse)
    async def verify(body: VerifyRequest, request: Request) -> Any:
        """NeMo-Gym's resource-server ``/verify`` for code (``code_gen``'s task shape)."""
        text = nemo_gym.output_text(body.response)
        if len(text) > settings.max_output_chars:
            count(request, "rejected")
            return _message(
                422, f"response: output text over {settings.max_output_chars} characters"
            )
        code = nemo_gym.extract_code(text) if text.strip() else ""
        try:
            tests = nemo_gym.unit_tests_of(body, settings.max_cases) if code else None
        except nemo_gym.BadRequest as exc:
            count(request, "rejected")
            return _message(422, str(exc))
        if tests is None:  # no text, or no fenced code: a model failure, nothing to run
            count(request, "ok")
            return nemo_gym.respond(body, text=text, code=None, outcome=None, violation=False)
        job = nemo_gym.prepare(code, tests, settings.verify_timeout, settings.verify_memory_mb)
        try:
            outcome = await on_pool(request, "/verify", "verify", job)
        except _Refused as refused:
            count(request, refused.outcome)
            return refused.response
        if "sandbox_error" in outcome:
            count(request, "error")
            return _message(
                503,
                f"the sandbox could not judge this task: {outcome['sandbox_error']}"[:1000],
                **{"Retry-After": "1"},
            )
        if nemo_gym.TIME_LIMIT in outcome["result"]:
            metrics.timeouts.labels("/verify").inc()
        violation = nemo_gym.reasoning_format_violation(body.response, text)
        count(request, "ok")
        return nemo_gym.respond(body, text=text, code=code, outcome=outcome, violation=violation)

    @app.post("/seed_session")
    async def seed_session(request: Request) -> dict[str, Any]:
        """NeMo-Gym's session seeding: this server keeps no session state."""
        return {}

    @app.get("/")
    async def liveness() -> dict[str, str]:
        """NeMo-Gym's liveness probe."""
        return {"status": "ok"}

    def on_reject(path: str) -> None:
        metrics.requests.labels(path, "rejected").inc()

    app.add_middleware(BodyLimit, max_bytes=settings.max_body_bytes, on_reject=on_reject)
    return app
