"""The FastAPI app behind ``asyncpool serve``: both protocols on one verification pool.

Routes: ``POST /run_code`` (SandboxFusion, :mod:`.sandboxfusion`), ``POST /verify``,
``POST /seed_session`` and ``GET /`` (NeMo-Gym, :mod:`.nemo_gym`), ``GET /health``,
``GET /metrics`` and ``GET /languages`` (operations: what ``/run_code`` can run here, each
language with its toolchain's version, found once at start).

What it guarantees:

* Handlers only *await* the pool: nothing blocks the event loop, and ``GET /health`` never
  touches Ray, so it answers while every core verifies.
* Bounded admission: beyond ``max_pending`` verifications admitted at once, a request is
  answered ``503`` with ``Retry-After`` at once instead of queueing without bound.
* Bad input is a 4xx with a ``message`` saying what is wrong (the input itself is never
  echoed): a body over ``max_body_bytes`` is 413 (declared or streamed), anything that is not
  a valid request (not JSON, a missing field, a wrong type, a bad base64 file, a path outside
  the working directory, a time limit over the cap...) is 422.
* Concurrent verifications are coalesced into batched Ray tasks (``batch_size`` items each,
  :mod:`._batcher`): one long-lived ``pool.map`` over every request's job. Each request gets
  its own verdict; one that fails alone fails only itself; a batch that fails as a whole
  gives its error to each of its requests.
* A client that disconnects before its answer is answered nothing (``/metrics`` counts it as
  ``cancelled``): a job not yet sent to Ray never runs; one already in a batch cannot be
  cancelled on its own, so its verdict is dropped; when every request inside the map has
  left, its Ray tasks are cancelled and their pool slots given back.
* Shutdown: requests still waiting when the pool closes are answered ``503`` with
  ``Retry-After``; under :func:`asyncpool.server.serve` (SIGTERM) verifications in progress
  get ``drain_s`` seconds to finish first, and nothing new is admitted.
* ``/run_code`` answers SandboxFusion's JSON for every program, including a ``SandboxError``
  response for a language it does not serve (``Settings.languages``) or has no toolchain for
  (the answer names the package to install); the sandbox failing to judge a ``/verify`` task
  (never a verdict) is a 503 with ``Retry-After``, and a ``/verify`` task in a language this
  server does not serve or has no toolchain for (``unit_tests.language``) a 503 without it.
"""

# No ``from __future__ import annotations``: FastAPI reads the endpoint annotations at runtime.

import asyncio
import dataclasses
import importlib.metadata
import logging
import math
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, Literal

import anyio
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response

import asyncpool
from asyncpool.tasks import TaskPool

from . import nemo_gym, sandboxfusion
from ._batcher import Batcher, ServerClosing
from ._limits import BodyLimit, client_gone
from ._worker import run_item
from .metrics import CONTENT_TYPE_LATEST, ServerMetrics
from .models import RunCodeRequest, RunCodeResponse, VerifyRequest, VerifyResponse

__all__ = ["Settings", "create_app", "package_version"]

log = logging.getLogger("asyncpool.serve")

#: Status of "the client closed the connection before the answer" (nginx's; only in logs).
CLIENT_CLOSED_REQUEST = 499

#: Default items per Ray task: the batch ``asyncpool bench``'s humaneval rows use, so the
#: server pays the same per-task share (a Ray task costs a few ms of driver and raylet CPU,
#: a HumanEval-size check a few to tens of ms). Batches fill only under load: a request that
#: arrives alone is sent alone once nothing more comes within the map's 2 ms linger. The
#: price under load: the items of a batch run one after another in one worker, so a slow
#: program delays those after it in its batch (``"auto"`` sizes batches from the measured
#: time of an item, small when programs are slow; ``1`` never shares a task).
DEFAULT_BATCH_SIZE = 16


@dataclasses.dataclass(frozen=True)
class Settings:
    """How one ``asyncpool serve`` process runs (the command line's flags).

    ``batch_size``: verifications per Ray task when requests arrive together (an int, or
    ``"auto"``: sized from the measured time of an item), see :data:`DEFAULT_BATCH_SIZE`.
    ``drain_s``: on SIGTERM under :func:`asyncpool.server.serve`, how long verifications in
    progress may take before what still waits is answered 503.
    ``languages``: what ``/run_code`` serves (names of
    :data:`asyncpool.server.sandboxfusion.LANGUAGES`); ``None``: every one whose toolchain is
    found at start. A language named here whose toolchain is missing stops the server at
    start (the operator asked for it); others answer ``SandboxError``. ``/verify`` judges
    stdin/stdout tests in the same languages, and in Python always.
    """

    address: str | None = None
    max_in_flight: int | None = None
    max_pending: int = 1024
    max_body_bytes: int = 32 << 20
    run_code: sandboxfusion.Limits = dataclasses.field(default_factory=sandboxfusion.Limits)
    verify_timeout: float = 10.0
    verify_memory_mb: int = 1024
    max_cases: int = 1000
    max_output_chars: int = 1 << 20
    batch_size: int | Literal["auto"] = DEFAULT_BATCH_SIZE
    drain_s: float = 5.0
    languages: tuple[str, ...] | None = None

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
        if self.batch_size != "auto" and (
            isinstance(self.batch_size, bool)
            or not isinstance(self.batch_size, int)
            or self.batch_size < 1
        ):
            raise ValueError(f"batch_size must be an int >= 1 or 'auto', got {self.batch_size!r}")
        if not (
            isinstance(self.drain_s, int | float)
            and not isinstance(self.drain_s, bool)
            and 0 <= self.drain_s < math.inf
        ):
            raise ValueError(f"drain_s must be a finite number >= 0, got {self.drain_s!r}")
        if self.languages is not None:
            object.__setattr__(self, "languages", sandboxfusion.check_languages(self.languages))


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


class _Server:
    """One app's state and handlers; :func:`create_app` registers its methods as the routes.

    A class rather than closures inside ``create_app`` so each handler reads on its own; the
    state is the app's alone (two apps in one process share nothing but the metric registry).
    """

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.metrics = ServerMetrics()
        self.pool: TaskPool[..., Any] | None = None
        self.batcher: Batcher | None = None
        self.pending = 0
        self.idle: asyncio.Event | None = None  # set while nothing is pending (for the drain)
        self.started = time.monotonic()
        self.toolchains: sandboxfusion.Toolchains | None = None

    @asynccontextmanager
    async def lifespan(self, app: FastAPI) -> AsyncIterator[None]:
        self.idle = asyncio.Event()
        self.idle.set()
        # Toolchains first (a second or two of ``--version`` commands, off the event loop): a
        # language asked for by name but not installed is a misconfiguration, said at once.
        toolchains = await anyio.to_thread.run_sync(sandboxfusion.discover, self.settings.languages)
        if self.settings.languages is not None and toolchains.missing:
            raise RuntimeError(
                "asyncpool serve --languages names a language this machine cannot run: "
                + "; ".join(toolchains.missing.values())
            )
        for message in toolchains.missing.values():
            log.warning("/run_code: %s; it answers SandboxError", message)
        log.info(
            "/run_code languages: %s",
            ", ".join(f"{k} ({v})" for k, v in toolchains.versions.items()),
        )
        self.toolchains = toolchains
        async with (
            asyncpool.connect(self.settings.address, log_to_driver=False) as rt,
            TaskPool(
                run_item,
                max_in_flight=self.settings.max_in_flight,
                retries=2,
                batch_size=self.settings.batch_size,
                name="asyncpool-serve",
            ) as pool,
            anyio.create_task_group() as tg,
        ):
            batcher = Batcher(pool)
            tg.start_soon(batcher.run)
            self.pool, self.batcher = pool, batcher
            log.info(
                "verification pool on Ray cluster %s (%s), max_in_flight=%d, batch_size=%s",
                rt.address,
                rt.source,
                pool.max_in_flight,
                self.settings.batch_size,
            )
            try:
                yield
            finally:
                self.batcher = None
                batcher.close()  # what still waits is answered 503; the map ends
                self.pool = None

    async def drain(self) -> None:
        """Stop admitting; give what is pending ``drain_s`` s; answer the rest 503."""
        batcher = self.batcher
        if batcher is None or batcher.closed:
            return
        batcher.stop_admitting()
        if self.idle is not None and self.pending:
            log.info("shutting down: %d verification(s) pending", self.pending)
            with anyio.move_on_after(self.settings.drain_s):
                await self.idle.wait()
        batcher.fail_waiting(ServerClosing("the server is shutting down"))

    def count(self, request: Request, outcome: str) -> None:
        self.metrics.requests.labels(request.url.path, outcome).inc()

    async def invalid_request(self, request: Request, exc: RequestValidationError) -> JSONResponse:
        self.count(request, "rejected")
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

    def _pending(self, delta: int) -> None:
        self.pending += delta
        if self.idle is not None:
            if self.pending:
                self.idle.clear()
            else:
                self.idle.set()

    async def _on_pool(self, request: Request, route: str, kind: str, job: Any) -> dict[str, Any]:
        """Run one job through the batcher for this request; raises :class:`_Refused` to
        answer now.

        Cancellation: the client leaving (or this task being cancelled) withdraws the job: not
        run if it was still queued; if it is already in a batch, its verdict is dropped (one
        item of a batch cannot be cancelled alone), and once nobody inside the map waits, the
        map's Ray tasks are cancelled.
        """
        batcher = self.batcher
        if batcher is None or batcher.closed:
            raise _Refused(
                _message(503, "the server is not accepting verifications (starting or "
                              "shutting down)", **{"Retry-After": "1"}),
                "overloaded",
            )  # fmt: skip
        if self.pending >= self.settings.max_pending:
            raise _Refused(
                _message(
                    503,
                    f"overloaded: {self.pending} verifications pending",
                    **{"Retry-After": "1"},
                ),
                "overloaded",
            )
        ticket = batcher.put(kind, job)
        self._pending(+1)
        t0 = time.monotonic()
        work = ticket.future
        gone = asyncio.ensure_future(client_gone(request.receive))
        try:
            await asyncio.wait((work, gone), return_when=asyncio.FIRST_COMPLETED)
        finally:
            self._pending(-1)
            gone.cancel()
            if not work.done():
                batcher.leave(ticket)  # the client left (or we are cancelled)
        if work.cancelled() or not work.done():
            raise _Refused(Response(status_code=CLIENT_CLOSED_REQUEST), "cancelled")
        try:
            outcome: dict[str, Any] = work.result()
        except ServerClosing as exc:
            raise _Refused(
                _message(503, str(exc), **{"Retry-After": "1"}), "error"
            ) from None
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
        self.metrics.latency.labels(route).observe(time.monotonic() - t0)
        return outcome

    async def health(self) -> dict[str, Any]:
        """Liveness for load balancers: never touches Ray."""
        return {
            "status": "starting" if self.pool is None
            else "stopping" if self.batcher is None or self.batcher.closed
            else "ok",
            "uptime_s": round(time.monotonic() - self.started, 3),
            "pending": self.pending,
        }

    async def languages(self) -> dict[str, Any]:
        """What ``/run_code`` runs here: ``{"languages": {name: toolchain version},
        "unavailable": {name: why, naming the package}, "not_served": [names]}``."""
        if self.toolchains is None:  # pragma: no cover - routes answer only after the lifespan
            return {"languages": {}, "unavailable": {}, "not_served": []}
        return self.toolchains.as_json()

    async def prometheus(self) -> Response:
        pool, batcher = self.pool, self.batcher
        stats = pool.stats if pool is not None else None
        # Admitted and not yet in a Ray task: still queued, or taken by the map and waiting
        # in a batch for a slot (the map's items minus those in Ray tasks).
        depth = 0
        if batcher is not None and stats is not None:
            depth = batcher.queued + max(0, batcher.taken - stats.in_flight)
        body = self.metrics.render(
            self.pending, stats, pool.max_in_flight if pool is not None else 0, depth
        )
        return Response(body, media_type=CONTENT_TYPE_LATEST)

    async def run_code(self, body: RunCodeRequest, request: Request) -> Any:
        """SandboxFusion's ``/run_code``."""
        unsupported = sandboxfusion.unsupported_language(body, self.toolchains)
        if unsupported is not None:
            self.count(request, "ok")
            return unsupported
        try:
            job = sandboxfusion.prepare(body, self.settings.run_code)
        except sandboxfusion.BadRequest as exc:
            self.count(request, "rejected")
            return _message(422, str(exc))
        try:
            outcome = await self._on_pool(request, "/run_code", "run_code", job)
        except _Refused as refused:
            self.count(request, refused.outcome)
            return refused.response
        response = sandboxfusion.respond(job, outcome, list(body.fetch_files))
        if response.run_result is not None and response.run_result.status == "TimeLimitExceeded":
            self.metrics.timeouts.labels("/run_code").inc()
        self.count(request, "ok")
        return response

    async def verify(self, body: VerifyRequest, request: Request) -> Any:
        """NeMo-Gym's resource-server ``/verify`` for code (``code_gen``'s task shape)."""
        text = nemo_gym.output_text(body.response)
        if len(text) > self.settings.max_output_chars:
            self.count(request, "rejected")
            return _message(
                422, f"response: output text over {self.settings.max_output_chars} characters"
            )
        code = nemo_gym.extract_code(text) if text.strip() else ""
        try:
            tests = nemo_gym.unit_tests_of(body, self.settings.max_cases) if code else None
        except nemo_gym.BadRequest as exc:
            self.count(request, "rejected")
            return _message(422, str(exc))
        if tests is None:  # no text, or no fenced code: a model failure, nothing to run
            self.count(request, "ok")
            return nemo_gym.respond(body, text=text, code=None, outcome=None, violation=False)
        unserved = nemo_gym.unserved_language(tests.language, self.toolchains)
        if unserved is not None:  # the server's refusal, never a verdict (no Retry-After: it
            self.count(request, "error")  # is what this server is, not how busy it is)
            return _message(503, unserved)
        limits = self.settings
        job = nemo_gym.prepare(code, tests, limits.verify_timeout, limits.verify_memory_mb,
                               limits.run_code.max_compile_timeout)  # fmt: skip
        try:
            outcome = await self._on_pool(request, "/verify", "verify", job)
        except _Refused as refused:
            self.count(request, refused.outcome)
            return refused.response
        if "sandbox_error" in outcome:
            self.count(request, "error")
            return _message(
                503,
                f"the sandbox could not judge this task: {outcome['sandbox_error']}"[:1000],
                **{"Retry-After": "1"},
            )
        if nemo_gym.TIME_LIMIT in outcome["result"]:
            self.metrics.timeouts.labels("/verify").inc()
        violation = nemo_gym.reasoning_format_violation(body.response, text)
        self.count(request, "ok")
        return nemo_gym.respond(body, text=text, code=code, outcome=outcome, violation=violation)

    async def seed_session(self, request: Request) -> dict[str, Any]:
        """NeMo-Gym's session seeding: this server keeps no session self."""
        return {}

    async def liveness(self) -> dict[str, str]:
        """NeMo-Gym's liveness probe."""
        return {"status": "ok"}

    def on_reject(self, path: str) -> None:
        self.metrics.requests.labels(path, "rejected").inc()


def create_app(settings: Settings | None = None) -> FastAPI:
    """The app; its lifespan connects to Ray (``asyncpool.connect``), opens the pool and runs
    the batcher's map in a task group until shutdown.

    ``app.state.drain`` is an ``async def drain()`` that a server calls when it starts to shut
    down (before it stops waiting for requests): nothing more is admitted, verifications in
    progress get ``settings.drain_s`` seconds, then what still waits is answered 503.
    """
    server = _Server(settings or Settings())
    app = FastAPI(
        title="asyncpool serve",
        summary="SandboxFusion /run_code and NeMo-Gym /verify on a Ray cluster",
        version=package_version(),
        lifespan=server.lifespan,
    )
    app.state.drain = server.drain
    app.exception_handler(RequestValidationError)(server.invalid_request)
    app.get("/health")(server.health)
    app.get("/metrics")(server.prometheus)
    app.get("/languages")(server.languages)
    app.post("/run_code", response_model=RunCodeResponse)(server.run_code)
    app.post("/verify", response_model=VerifyResponse)(server.verify)
    app.post("/seed_session")(server.seed_session)
    app.get("/")(server.liveness)
    app.add_middleware(BodyLimit, max_bytes=server.settings.max_body_bytes,
                       on_reject=server.on_reject)  # fmt: skip
    return app
