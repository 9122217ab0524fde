"""The one bounded-submission engine that TaskPool and ActorPool share.

It owns:

* **bounded submission**: anyio's :class:`~anyio.CapacityLimiter` (O(1) per acquire however
  many callers wait, a settable capacity for elastic actor pools, over-release is an error).
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
  ``ray.util.metrics`` in batches (:mod:`asyncpool._metrics`);
* **streaming**: :class:`MapStream`, the async iterator behind ``pool.map``: it consumes its
  input lazily (never more than its window ahead of what was yielded), an async input in one
  task of its own, submits in the background, and yields ``(index, value)`` as results arrive
  or in input order.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import math
import sys
import time
import weakref
from collections import deque
from collections.abc import AsyncIterable, Awaitable, Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar

import anyio
import ray
from ray.exceptions import RayTaskError

from . import _cancel, _completion
from ._metrics import _Reporter
from ._resource import AsyncResource
from .errors import PoolClosedError, ResourceStateError, TaskTimeoutError
from .stats import PoolStats, _Recorder

if sys.version_info < (3, 11):  # anyio depends on the backport there
    from exceptiongroup import BaseExceptionGroup

T = TypeVar("T")

State = Literal["unopened", "open", "closed"]

#: A feeder submits for at most this long before it lets the event loop run other callbacks.
_FEED_SLICE_S = 0.0005


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


@dataclass(eq=False)
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
    subscription: _completion.Subscription | None = None


class Engine:
    """Bounded submission, completion, timeouts, cancellation and statistics for one pool.

    Created on the event loop the pool is used from; every method must be called there
    (:meth:`check_loop` says so clearly otherwise).
    """

    def __init__(self, capacity: int, *, name: str, metrics: bool = False) -> None:
        self.name = name
        self.loop = asyncio.get_running_loop()
        self.limiter = anyio.CapacityLimiter(capacity)
        self.stats = _Recorder(name, keep_unreported=metrics)
        #: Called whenever an acquire has to wait (an elastic pool grows on it).
        self.on_wait: Callable[[], None] | None = None
        self.closing = False
        self._fail_generation = 0
        self._fail: Callable[[], BaseException] = self._closed_error
        self._calls: set[_Call] = set()
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
        total = self.limiter.total_tokens
        return int(total) if math.isfinite(total) else 0

    def set_capacity(self, capacity: int) -> None:
        if not self.closing:
            self.limiter.total_tokens = capacity

    @property
    def waiting(self) -> int:
        """Callers queued for a slot."""
        return self.limiter.statistics().tasks_waiting

    def _closed_error(self) -> BaseException:
        return PoolClosedError(f"{self.name} is closed; nothing more is submitted")

    def try_acquire(self) -> object | None:
        """A slot's borrower token if one is free right now (no waiting, no yield), else None."""
        token = object()
        try:
            self.limiter.acquire_on_behalf_of_nowait(token)
        except anyio.WouldBlock:
            return None
        if self.closing:
            self.limiter.release_on_behalf_of(token)
            raise self._closed_error()
        return token

    async def acquire(self) -> object:
        """Take a slot (FIFO) and return its borrower token, to hand to :meth:`launch`.

        A free slot is taken without yielding. Raises :class:`PoolClosedError` when the pool
        closes first, or the error of :meth:`fail_waiters`. Cancellation: no slot is taken.
        """
        token = self.try_acquire()
        if token is not None:
            return token
        if self.closing:
            raise self._closed_error()
        if self.on_wait is not None:
            self.on_wait()
        token = object()
        generation = self._fail_generation
        await self.limiter.acquire_on_behalf_of(token)
        if generation != self._fail_generation:
            self.limiter.release_on_behalf_of(token)
            raise self._fail()
        return token

    def release(self, token: object) -> None:
        """Give back a slot that was not handed to :meth:`launch` (an error if not held)."""
        self.limiter.release_on_behalf_of(token)

    def fail_waiters(self, make_error: Callable[[], BaseException]) -> None:
        """Every caller waiting for a slot now raises ``make_error()``; later ones wait again."""
        self._fail_generation += 1
        self._fail = make_error
        total = self.limiter.total_tokens
        # Hands every waiter a token at once (anyio wakes them in order); each gives it back.
        self.limiter.total_tokens = math.inf
        if not self.closing:
            self.limiter.total_tokens = total

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
    ) -> _Call:
        """Track a just-submitted ref holding the slot ``token``.

        ``on_result(call, value, error)`` runs once for every call, abandoned ones too
        (``call.abandoned`` tells), so that statistics always add up: when the ref settles,
        or at the deadline with a :class:`TaskTimeoutError`. ``on_settle(call)`` runs when the
        ref settles, after its slot is back. At the deadline ``on_expire(call)`` stops the
        work (default: a forced cancel).
        """
        call = _Call(ref, token, time.monotonic(), on_result, on_settle, on_expire, timeout)
        self._calls.add(call)
        self._idle.clear()
        if timeout is not None:
            call.timer = self.loop.call_later(timeout, self._expire, call)
        def deliver(batch: list[tuple[int, Any, bool]]) -> None:
            _, value, is_error = batch[0]
            self._settle(call, value, is_error)

        call.subscription = _completion.subscribe([ref], deliver, loop=self.loop)
        return call

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
        self._calls.discard(call)
        if call.timer is not None:
            call.timer.cancel()
        self.limiter.release_on_behalf_of(call.token)
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
        calls = list(self._calls)
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
        return self._idle.is_set()


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


# --------------------------------------------------------------------------- streaming


_END = object()
#: How long an async input may take to produce the next item of a chunk being filled.
_LINGER_S = 0.002

SubmitChunk = Callable[["_StreamCore", list[tuple[int, Any]], object], None]


async def _close_quietly(aclose: Callable[[], Awaitable[Any]]) -> None:
    """Close an async input the stream stopped early; what closing it raises is not the
    consumer's concern, except a cancellation.

    A generator suspended inside an anyio task group (or a trio nursery) does not raise the
    ``GeneratorExit`` that ``aclose`` expects: the group wraps it in a ``BaseExceptionGroup``.
    That is a clean close too.
    """
    try:
        await aclose()
    except Exception:
        pass
    except BaseExceptionGroup as group:
        _, rest = group.split((GeneratorExit, Exception))
        if rest is not None:
            raise rest from None


class _StreamCore:
    """Everything a :class:`MapStream` runs on, with no reference to the stream itself.

    The feeder tasks and the pool's completion handlers hold this core, never the
    :class:`MapStream`, so a stream dropped by its consumer can be collected, and its
    finalizer closes the core (cancels the feeders and this stream's Ray tasks).
    """

    def __init__(
        self,
        items: Iterable[Any] | AsyncIterable[Any],
        *,
        submit_chunk: SubmitChunk,
        chunk_size: Callable[[], int],
        window: Callable[[], int],
        ordered: bool,
        return_exceptions: bool,
        engine: Engine,
    ) -> None:
        self.items = items
        self.submit_chunk = submit_chunk
        self.chunk_size = chunk_size
        self.window = window
        self.ordered = ordered
        self.return_exceptions = return_exceptions
        self.engine = engine
        self.ready: deque[tuple[int, Any, bool]] = deque()
        self.by_index: dict[int, tuple[Any, bool]] = {}
        self.next_index = 0
        self.outstanding = 0  # taken from the input and not yet yielded
        self.room = asyncio.Event()
        self.room.set()
        self.pulled: deque[Any] = deque()  # async input taken, not yet in a chunk
        self.pulled_event = asyncio.Event()
        self.pull_done = False
        self.wakeup: asyncio.Future[None] | None = None
        self.input_done = False
        self.input_error: BaseException | None = None
        self.closed = False
        self.calls: set[_Call] = set()
        self.tasks: set[asyncio.Task[Any]] = set()
        self.puller: asyncio.Task[None] | None = None

    # -- results (called by the pool's completion handlers)

    def deliver(self, index: int, value: Any, is_error: bool) -> None:
        if self.closed:
            return
        if self.ordered:
            self.by_index[index] = (value, is_error)
        else:
            self.ready.append((index, value, is_error))
        self.wake()

    def wake(self) -> None:
        if self.wakeup is not None and not self.wakeup.done():
            self.wakeup.set_result(None)

    def spawn(self, coro: Any) -> asyncio.Task[Any]:
        task = self.engine.loop.create_task(coro)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        return task

    # -- feeding

    def start(self) -> None:
        if isinstance(self.items, AsyncIterable):
            self.puller = self.spawn(self._pull(self.items))
        self.spawn(self._feed())

    def _has_room(self, size: int) -> bool:
        return self.outstanding < max(size, self.window())

    async def _wait_room(self, size: int) -> None:
        while not self._has_room(size):
            self.room.clear()
            await self.room.wait()

    async def _pull(self, source: AsyncIterable[Any]) -> None:
        """Consume an async input in this one task (its cancel scopes and contextvars hold
        across its yields), never more than the window ahead of what was yielded."""
        iterator = source.__aiter__()
        exhausted = False
        try:
            while True:
                await self._wait_room(self.chunk_size())
                try:
                    item = await iterator.__anext__()
                except StopAsyncIteration:
                    exhausted = True
                    break
                self.outstanding += 1
                self.pulled.append(item)
                self.pulled_event.set()
        except asyncio.CancelledError:
            raise
        except BaseException as exc:
            exhausted = True
            self.input_error = exc
        finally:
            self.pull_done = True
            self.pulled_event.set()
            aclose = getattr(iterator, "aclose", None)
            if not exhausted and aclose is not None:
                # Closed here, in the task that stepped it: a cancel scope it holds exits
                # in the task that entered it.
                await _close_quietly(aclose)

    async def _next_chunk(self, sync_iter: Iterator[Any] | None, index: Iterator[int]
                          ) -> tuple[list[tuple[int, Any]], bool]:
        """The next chunk of ``(index, item)`` and whether the input has ended.

        A partial chunk is sent rather than held back when the window is full or an async
        input has nothing more ready within ``_LINGER_S``, so a slow producer (a rollout
        loop) is never waited on while items it already gave sit unsubmitted.
        """
        size = max(1, self.chunk_size())
        chunk: list[tuple[int, Any]] = []
        while len(chunk) < size:
            if sync_iter is not None:
                if not self._has_room(size):
                    if chunk:
                        break
                    await self._wait_room(size)
                    continue
                try:
                    item = next(sync_iter, _END)
                except Exception as exc:
                    self.input_error = exc
                    return chunk, True
                if item is _END:
                    return chunk, True
                self.outstanding += 1
                chunk.append((next(index), item))
                continue
            if self.pulled:
                chunk.append((next(index), self.pulled.popleft()))
                continue
            if self.pull_done:
                return chunk, True
            self.pulled_event.clear()
            if not chunk:
                await self.pulled_event.wait()
                continue
            try:
                async with asyncio.timeout(_LINGER_S):
                    await self.pulled_event.wait()
            except TimeoutError:
                break
        return chunk, False

    async def _feed(self) -> None:
        index = itertools.count()
        sync_iter = None if isinstance(self.items, AsyncIterable) else iter(self.items)
        engine = self.engine
        chunk: list[tuple[int, Any]] = []
        last_yield = time.perf_counter()
        try:
            ended = False
            while not ended:
                chunk, ended = await self._next_chunk(sync_iter, index)
                if not chunk:
                    continue
                token = engine.try_acquire()
                if token is None:
                    try:
                        token = await engine.acquire()
                    except PoolClosedError:
                        raise
                    except Exception as exc:
                        # No slot could be had for these items (a pool of actors with none
                        # alive and none that can start): they fail, the map goes on.
                        for i, _ in chunk:
                            self.deliver(i, exc, True)
                        chunk = []
                        continue
                    last_yield = time.perf_counter()
                # Ray serialises arguments at submission; an item that cannot be
                # serialised fails alone, and everything before it stays in flight.
                self.submit_chunk(self, chunk, token)
                chunk = []
                if time.perf_counter() - last_yield > _FEED_SLICE_S:
                    await asyncio.sleep(0)
                    last_yield = time.perf_counter()
        except asyncio.CancelledError:
            raise
        except PoolClosedError as exc:
            # The pool closed under this map: what was taken and not sent fails, and the
            # stream ends with the error once everything sent has been delivered.
            if self.puller is not None:
                self.puller.cancel()
            for i, _ in chunk:
                self.deliver(i, PoolClosedError(str(exc)), True)
            base = next(index)
            while self.pulled:
                self.pulled.popleft()
                self.deliver(base, PoolClosedError(str(exc)), True)
                base = next(index)
            self.input_error = exc
        except BaseException as exc:
            for i, _ in chunk:  # taken from the input, never sent
                self.deliver(i, exc, True)
            self.input_error = exc
        finally:
            self.input_done = True
            if self.puller is not None:
                self.puller.cancel()
            self.wake()

    # -- closing

    def close_now(self) -> None:
        """Stop feeding and cancel this stream's running Ray tasks (sync, on the loop)."""
        if self.closed:
            return
        self.closed = True
        for task in list(self.tasks):
            task.cancel()
        for call in list(self.calls):
            self.engine.abandon(call)
        self.wake()


def _finalize_core(core: _StreamCore) -> None:
    """A :class:`MapStream` was collected without being closed: close its core on its loop."""
    loop = core.engine.loop
    if loop.is_closed():
        return
    try:
        running = asyncio.get_running_loop()
    except RuntimeError:
        running = None
    if running is loop:
        core.close_now()
    else:
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(core.close_now)


class MapStream(AsyncResource, Generic[T]):
    """``(index, result)`` pairs of a ``pool.map``; an async iterator and context manager.

    The input is consumed lazily by a background feeder: it takes an item only when the
    stream's window has room (at most ``window`` items submitted and not yet yielded) and
    the pool has a free slot, so an endless or slow input never runs ahead. An async input
    is stepped in one task of its own (its cancel scopes and contextvars hold across its
    yields) and closed there if the stream stops before it ends. ``ordered=True`` yields in
    input order; otherwise in completion order.

    Leaving early (``break`` inside ``async with``, an exception, cancellation) stops the
    feeder and cancels the Ray tasks of this stream still running; a stream dropped without
    being closed is closed the same way when it is garbage-collected. With
    ``return_exceptions=False`` the first failed item raises its exception (its own type)
    and closes the stream; with ``True`` the exception object is yielded as that item's
    result. When the pool closes under a stream, the items it had taken and not sent fail
    with :class:`PoolClosedError`, and so does the stream once the rest is delivered.
    """

    def __init__(
        self,
        items: Iterable[Any] | AsyncIterable[Any],
        *,
        submit_chunk: SubmitChunk,
        chunk_size: Callable[[], int],
        window: Callable[[], int],
        ordered: bool,
        return_exceptions: bool,
        engine: Engine,
        check_open: Callable[[], None],
    ) -> None:
        self._core = _StreamCore(
            items,
            submit_chunk=submit_chunk,
            chunk_size=chunk_size,
            window=window,
            ordered=ordered,
            return_exceptions=return_exceptions,
            engine=engine,
        )
        self._check_open = check_open
        self._started = False
        self._finalizer: weakref.finalize[Any, Any] | None = None

    def _start(self) -> None:
        if self._started or self._core.closed:
            return
        self._check_open()
        self._started = True
        self._core.start()
        self._finalizer = weakref.finalize(self, _finalize_core, self._core)

    async def open(self) -> None:
        """Start consuming the input (``async with`` calls this; so does the first item)."""
        self._start()

    async def aclose(self) -> None:
        """Stop consuming the input and cancel this stream's running Ray tasks. Idempotent.

        Cancellation: the Ray tasks are already cancelled when this is interrupted.
        """
        core = self._core
        if core.closed:
            return
        if self._finalizer is not None:
            self._finalizer.detach()
        tasks = list(core.tasks)
        core.close_now()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    def __aiter__(self) -> MapStream[T]:
        return self

    async def __anext__(self) -> tuple[int, T]:
        self._start()
        core = self._core
        while True:
            item = self._pop()
            if item is not None:
                index, value, is_error = item
                core.outstanding -= 1
                core.room.set()
                if is_error and not core.return_exceptions:
                    await self.aclose()
                    raise value
                return index, value
            if core.closed:
                raise StopAsyncIteration
            if core.input_done and core.outstanding == 0:
                await self.aclose()
                if core.input_error is not None:
                    raise core.input_error
                raise StopAsyncIteration
            core.wakeup = core.engine.loop.create_future()
            try:
                await core.wakeup
            except BaseException:
                await self.aclose()
                raise
            finally:
                core.wakeup = None

    def _pop(self) -> tuple[int, Any, bool] | None:
        core = self._core
        if core.ordered:
            got = core.by_index.pop(core.next_index, None)
            if got is None:
                return None
            core.next_index += 1
            return (core.next_index - 1, got[0], got[1])
        return core.ready.popleft() if core.ready else None


# --------------------------------------------------------------------------- helpers


def default_capacity() -> int:
    """Twice the cluster's CPUs (at least 2). A blocking Ray call: run it off the loop."""
    cpus = ray.cluster_resources().get("CPU", 1)
    return max(2, int(2 * cpus))
