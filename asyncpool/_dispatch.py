"""The one bounded-submission engine that TaskPool and ActorPool share.

It owns:

* **bounded submission**: :class:`~asyncpool._slots.Slots` (FIFO, O(1) per acquire however
  many callers wait, one future per queued caller, a settable capacity for elastic actor
  pools, over-release is an error; why not anyio's ``CapacityLimiter`` is said there).
  Each Ray task holds one token on behalf of its own borrower object, taken before it is
  submitted and given back only when the task has *settled* (finished, failed, or been
  cancelled and seen to stop), so ``max_in_flight`` bounds the Ray tasks that exist, across
  every caller;
* **completion**: through the process's one completion core (:mod:`asyncpool._completion`):
  results reach the event loop in coalesced batches, fetched and deserialised off the loop;
  cancels go through :mod:`asyncpool._cancel` (issued off the loop, lost ones followed up);
* **timeouts**: at a call's deadline its caller fails with :class:`TaskTimeoutError` at once,
  and the Ray work is stopped (force-cancelled, or for a pool of actors whatever the pool
  decides); the slot comes back when the task is seen to stop;
* **closing**: ``close`` stops submission (callers waiting for a slot fail with
  :class:`PoolClosedError`), cancels every running call (its caller gets
  :class:`PoolClosedError` with Ray's error as ``__cause__``), and ``wait_settled`` waits on
  an event, not a poll;
* **statistics and metrics**: :class:`~asyncpool.stats._Recorder`, reported through
  ``ray.util.metrics`` in batches (:mod:`asyncpool._metrics`).

The stream behind ``pool.map`` (:class:`~asyncpool._map_stream.MapStream`) is built on it, in
:mod:`asyncpool._map_stream`; this module must not know about streams, nor about what a pool
submits (a task, an actor method): the pools hand it a call and get its settlement back.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any, Literal

import anyio
import ray
from ray.exceptions import RayTaskError

from . import _cancel, _completion
from ._metrics import _Reporter
from ._resource import AsyncResource
from ._slots import Slots
from .errors import PoolClosedError, ResourceStateError, TaskTimeoutError
from .stats import PoolStats, _Recorder

State = Literal["unopened", "open", "closed"]


# --------------------------------------------------------------------------- completions


def _as_exception(value: Any, is_error: bool) -> BaseException | None:
    """The exception a completion carries, unwrapped to the user's own type."""
    if not is_error:
        return None
    if isinstance(value, RayTaskError):
        cause: BaseException = value.as_instanceof_cause()
        return cause
    if isinstance(value, BaseException):
        return value
    return RuntimeError(f"a Ray task failed with {value!r}")


# --------------------------------------------------------------------------- engine


@dataclass(eq=False, slots=True)
class _Call:
    """One Ray task launched by the engine, until it settles.

    ``delivered``: its caller has had its outcome (result, error, or the timeout at the
    deadline). ``settled``: the Ray task is done and its slot is back. A call is delivered
    once and settled once, in either order.
    """

    ref: Any
    token: object
    started: float
    on_result: Callable[[_Call, Any, BaseException | None], None]
    on_settle: Callable[[_Call], None] | None = None
    on_expire: Callable[[_Call], None] | None = None
    timeout: float | None = None
    timer: asyncio.TimerHandle | None = None
    timed_out: bool = False
    abandoned: bool = False
    closing: bool = False
    delivered: bool = False
    settled: bool = False
    ctx: Any = None  # the pool's own per-call context (an actor pool: the member it went to)
    position: int = -1  # its ref's position in the engine's completion subscription


class Engine:
    """Bounded submission, completion, timeouts, cancellation and statistics for one pool.

    Created on the event loop the pool is used from; every method must be called there
    (:meth:`check_loop` says so clearly otherwise).
    """

    def __init__(self, capacity: int, *, name: str, metrics: bool = False) -> None:
        self.name = name
        self.loop = asyncio.get_running_loop()
        self.slots = Slots(capacity, self.loop)
        self.stats = _Recorder(name, keep_unreported=metrics)
        #: Called whenever an acquire has to wait (an elastic pool grows on it).
        self.on_wait: Callable[[], None] | None = None
        self.closing = False
        #: The calls not settled yet, by their ref's position in :attr:`_sub`.
        self._calls: dict[int, _Call] = {}
        #: One completion subscription for every call of this pool (made at the first launch):
        #: a call adds its ref to it, and a scan's results arrive here in one batch.
        self._sub: _completion.Subscription | None = None
        self._idle = asyncio.Event()
        self._idle.set()
        self.metrics: _Reporter | None = (
            _Reporter(self.stats, waiting=lambda: self.waiting, loop=self.loop)
            if metrics
            else None
        )

    # -- the loop check

    def check_loop(self) -> None:
        """Raise a clear error when called from another thread or event loop, before any
        Ray work is sent (asyncio would only notice when the result arrives)."""
        try:
            loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        if loop is self.loop:
            return
        where = "a thread with no running event loop" if loop is None else "another event loop"
        raise ResourceStateError(
            f"{self.name} belongs to the event loop it was opened on and was used from "
            f"{where}; run the call on the pool's loop: from another thread, "
            "asyncio.run_coroutine_threadsafe(coro, pool_loop) or anyio.from_thread.run(...)"
        )

    # -- slots

    @property
    def capacity(self) -> int:
        total = self.slots.total
        return int(total) if math.isfinite(total) else 0

    def set_capacity(self, capacity: int) -> None:
        if not self.closing:
            self.slots.total = capacity

    @property
    def waiting(self) -> int:
        """Callers queued for a slot."""
        return self.slots.waiting

    def _closed_error(self) -> BaseException:
        return PoolClosedError(f"{self.name} is closed; nothing more is submitted")

    def try_acquire(self) -> object | None:
        """A slot's borrower token if one is free right now (no waiting, no yield), else None."""
        token = self.slots.take_nowait()
        if token is not None and self.closing:
            self.slots.release(token)
            raise self._closed_error()
        return token

    def acquire(self) -> Coroutine[Any, Any, object]:
        """Take a slot (FIFO): ``await engine.acquire()`` gives its borrower token, to hand to
        :meth:`launch`.

        A free slot is taken without yielding. Raises :class:`PoolClosedError` when the pool
        closes first, or the error of :meth:`fail_waiters`. Cancellation: no slot is taken.
        Not itself a coroutine function: a queued caller then holds one coroutine less (see
        :mod:`asyncpool._slots` for why each object per queued caller counts).
        """
        if self.closing:
            raise self._closed_error()
        if self.on_wait is not None and not self.slots.free():
            self.on_wait()
        return self.slots.take()

    def release(self, token: object) -> None:
        """Give back a slot that was not handed to :meth:`launch` (an error if not held)."""
        self.slots.release(token)

    def fail_waiters(self, make_error: Callable[[], BaseException]) -> None:
        """Every caller waiting for a slot now raises ``make_error()``; later ones wait again."""
        self.slots.fail(make_error)

    # -- calls

    def launch(
        self,
        ref: Any,
        token: object,
        on_result: Callable[[_Call, Any, BaseException | None], None],
        *,
        timeout: float | None,
        on_expire: Callable[[_Call], None] | None = None,
        on_settle: Callable[[_Call], None] | None = None,
        ctx: Any = None,
    ) -> _Call:
        """Track a just-submitted ref holding the slot ``token``.

        ``on_result(call, value, error)`` runs once for every call, abandoned ones too
        (``call.abandoned`` tells), so that statistics always add up: when the ref settles,
        or at the deadline with a :class:`TaskTimeoutError`. ``on_settle(call)`` runs when the
        ref settles, after its slot is back. At the deadline ``on_expire(call)`` stops the
        work (default: a forced cancel). ``ctx`` is kept as ``call.ctx`` for the callbacks (a
        pool passes its bound methods and its per-call state there, rather than a closure per
        call).
        """
        call = _Call(
            ref, token, time.monotonic(), on_result, on_settle, on_expire, timeout, ctx=ctx
        )
        sub = self._sub
        if sub is None or not sub.usable:
            sub = self._sub = _completion.subscribe(
                (), self._on_completed, loop=self.loop, prompt=True
            )
        call.position = sub.extend((ref,))
        self._calls[call.position] = call
        self._idle.clear()
        if timeout is not None:
            call.timer = self.loop.call_later(timeout, self._expire, call)
        return call

    def _on_completed(self, batch: list[tuple[int, Any, bool]]) -> None:
        """The completion core's batch for this pool: settle each call it names."""
        calls = self._calls
        for position, value, is_error in batch:
            call = calls.get(position)
            if call is None:
                continue
            try:
                self._settle(call, value, is_error)
            except Exception as exc:  # one callback's bug must not strand the rest's slots
                self.loop.call_exception_handler(
                    {"message": f"{self.name}: settling a call failed", "exception": exc}
                )

    def _expire(self, call: _Call) -> None:
        if call.settled or call.delivered:
            return
        call.timed_out = True
        if call.on_expire is not None:
            call.on_expire(call)
        else:
            _cancel.request([call.ref], force=True)
        self._deliver(
            call,
            None,
            TaskTimeoutError(
                f"{self.name}: a call ran past its timeout of {call.timeout:g}s; it was stopped"
            ),
        )

    def _deliver(self, call: _Call, value: Any, error: BaseException | None) -> None:
        if call.delivered:
            return
        call.delivered = True
        call.on_result(call, value, error)

    def abandon(self, call: _Call) -> None:
        """The caller no longer wants the result: cancel the Ray task (forced when possible)."""
        if call.settled:
            return
        call.abandoned = True
        _cancel.request([call.ref], force=True)

    def _settle(self, call: _Call, value: Any, is_error: bool) -> None:
        if call.settled:
            return
        call.settled = True
        self._calls.pop(call.position, None)
        if call.timer is not None:
            call.timer.cancel()
        self.slots.release(call.token)
        if not self._calls:
            self._idle.set()
        if call.on_settle is not None:
            call.on_settle(call)
        if call.delivered:
            return
        error = _as_exception(value, is_error)
        if error is not None and call.closing:
            closed = PoolClosedError(f"{self.name} closed while this call was running")
            closed.__cause__ = error
            error = closed
        self._deliver(call, value, error)

    # -- closing

    def close(self, *, cancel: bool = True) -> None:
        """Stop submission and cancel every running call (``cancel=False``: the pool stops
        them itself, an actor pool by killing its actors). Idempotent."""
        if self.closing:
            return
        self.closing = True
        self.fail_waiters(self._closed_error)
        calls = list(self._calls.values())
        for call in calls:
            call.closing = True
        if cancel:
            _cancel.request([c.ref for c in calls if not c.settled], force=True)

    async def wait_settled(self, timeout: float) -> bool:
        """Wait until every launched call settled; False if ``timeout`` ran out first."""
        with anyio.move_on_after(timeout):
            await self._idle.wait()
        if self.metrics is not None:
            self.metrics.close()
        idle = self._idle.is_set()
        if idle and self._sub is not None:
            self._sub.close()  # nothing left to watch; ends the engine <-> subscription cycle
            self._sub = None
        return idle


# --------------------------------------------------------------------------- pools


class PoolBase(AsyncResource):
    """State, statistics, the open check and the loop check that TaskPool and ActorPool share."""

    _state: State
    _engine: Engine | None
    name: str

    @property
    def state(self) -> State:
        """``"unopened"``, ``"open"`` or ``"closed"``."""
        return self._state

    @property
    def stats(self) -> PoolStats:
        """A snapshot of the pool's statistics (safe from any state)."""
        engine = self._engine
        if engine is None:
            return PoolStats(name=self.name)
        return engine.stats.snapshot(waiting=engine.waiting)

    def _require_open(self) -> Engine:
        engine = self._engine
        if self._state != "open" or engine is None or engine.closing:
            kind = type(self).__name__
            state = "closing" if self._state == "open" else self._state
            raise PoolClosedError(
                f"{kind} {self.name!r} is {state}; use it inside `async with {kind}(...) as pool`"
            )
        engine.check_loop()
        return engine

    def _check_open(self) -> None:
        self._require_open()


def serialisation_error(what: str, exc: BaseException) -> TypeError:
    """The error for an argument Ray could not serialise, naming the user's callable (Ray's
    own message names our task wrapper; its root cause, e.g. "cannot pickle '_thread.lock'
    object", is what helps)."""
    root = exc
    for _ in range(10):
        nxt = root.__cause__ or root.__context__
        if nxt is None:
            break
        root = nxt
    detail = str(root).splitlines()[0] if str(root) else type(root).__name__
    if "asyncpool_" in detail:
        detail = type(root).__name__
    error = TypeError(f"cannot send a call of {what} to Ray: an argument cannot be serialised "
                      f"({detail}); nothing was submitted")
    error.__cause__ = exc
    return error


def check_serialisable(obj: object, what: str) -> None:
    """Refuse at construction a function or class Ray could not ship to its workers."""
    from ray import cloudpickle

    try:
        cloudpickle.dumps(obj)
    except Exception as exc:
        raise TypeError(
            f"{what} cannot be serialised for Ray's workers ({type(exc).__name__}: {exc}); "
            "define it at module level or drop what it captures (locks, sockets, clients)"
        ) from exc


# --------------------------------------------------------------------------- helpers


def default_capacity() -> int:
    """Twice the cluster's CPUs (at least 2). A blocking Ray call: run it off the loop."""
    cpus = ray.cluster_resources().get("CPU", 1)
    return max(2, int(2 * cpus))
