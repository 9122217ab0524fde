"""The one bounded-submission engine that TaskPool and ActorPool share.

It owns:

* **bounded submission** — :class:`_Slots`, a FIFO counting semaphore whose capacity can
  change (elastic actor pools). A slot is taken before a Ray task is submitted and given
  back only when that task has *settled* (finished, failed, or been cancelled and seen to
  stop), so ``max_in_flight`` bounds the Ray tasks that exist, across every caller;
* **completion** — :class:`_Completions` registers Ray's own completion callback on each
  ref (the value is fetched and deserialised on Ray's thread, not the event loop) and hands
  finished results to the loop in coalesced batches: one loop wake-up for many results;
* **timeouts and cancellation** — a per-call timer force-cancels the Ray task and fails the
  item with :class:`TaskTimeoutError`; a cancelled caller cancels its Ray task;
* **statistics** — :class:`~asyncpool.stats._Recorder`;
* **streaming** — :class:`MapStream`, the async iterator behind ``pool.map``: it consumes
  its input lazily (never more than its window ahead of what was yielded), submits in
  the background, and yields ``(index, value)`` as results arrive or in input order.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import threading
import time
import weakref
from collections import deque
from collections.abc import AsyncIterable, AsyncIterator, Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar

import ray
from ray.exceptions import RayTaskError

from ._resource import AsyncResource
from .errors import PoolClosedError, TaskTimeoutError
from .refs import _cancel_now
from .stats import PoolStats, _Recorder

T = TypeVar("T")

State = Literal["unopened", "open", "closed"]


# --------------------------------------------------------------------------- slots


class _Slots:
    """A FIFO counting semaphore with a capacity that may change while it is in use."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.in_use = 0
        self._waiters: deque[asyncio.Future[None]] = deque()
        #: Called whenever an acquire has to wait (an elastic pool grows on it).
        self.on_wait: Callable[[], None] | None = None

    @property
    def waiting(self) -> int:
        return sum(1 for w in self._waiters if not w.done())

    def try_acquire(self) -> bool:
        if self.in_use < self.capacity and not self.waiting:
            self.in_use += 1
            return True
        return False

    async def acquire(self) -> None:
        """Take a slot, waiting in FIFO order. Cancellation: no slot is taken."""
        if self.try_acquire():
            return
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(fut)
        if self.on_wait is not None:
            self.on_wait()
        try:
            await fut
        except BaseException:
            if fut.done() and not fut.cancelled():
                # We were handed a slot just as we were cancelled: pass it on.
                self.release()
            raise
        finally:
            with contextlib.suppress(ValueError):
                self._waiters.remove(fut)

    def release(self) -> None:
        self.in_use -= 1
        self._wake()

    def set_capacity(self, capacity: int) -> None:
        self.capacity = capacity
        self._wake()

    def _wake(self) -> None:
        while self._waiters and self.in_use < self.capacity:
            fut = self._waiters.popleft()
            if not fut.done():
                self.in_use += 1
                fut.set_result(None)


# --------------------------------------------------------------------------- completions


class _Completions:
    """Ray completion callbacks, delivered to one event loop in coalesced batches."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._lock = threading.Lock()
        self._buffer: list[tuple[Callable[[Any], None], Any]] = []
        self._scheduled = False

    def watch(self, ref: ray.ObjectRef[Any], handler: Callable[[Any], None]) -> None:
        """Call ``handler(value_or_exception)`` on the loop once ``ref`` is ready."""

        def on_ready(value: Any) -> None:
            with self._lock:
                self._buffer.append((handler, value))
                if self._scheduled:
                    return
                self._scheduled = True
            # A closed loop means nobody is waiting any more.
            with contextlib.suppress(RuntimeError):
                self._loop.call_soon_threadsafe(self._drain)

        ref._on_completed(on_ready)

    def _drain(self) -> None:
        with self._lock:
            batch, self._buffer = self._buffer, []
            self._scheduled = False
        for handler, value in batch:
            handler(value)


def _as_exception(value: Any) -> BaseException | None:
    """The exception a completion callback carries, unwrapped to the user's own type."""
    if isinstance(value, RayTaskError):
        cause: BaseException = value.as_instanceof_cause()
        return cause
    if isinstance(value, BaseException):
        return value
    return None


# --------------------------------------------------------------------------- engine


@dataclass(eq=False)
class _Call:
    """One Ray task launched by the engine, until it settles."""

    ref: ray.ObjectRef[Any]
    started: float
    on_result: Callable[[_Call, Any, BaseException | None], None]
    timer: asyncio.TimerHandle | None = None
    timed_out: bool = False
    abandoned: bool = False
    settled: bool = False


class Engine:
    """Bounded submission, completion, timeouts, cancellation and statistics for one pool.

    Created on the event loop the pool is used from; every method must be called there.
    """

    def __init__(self, capacity: int, *, name: str) -> None:
        self.name = name
        self.slots = _Slots(capacity)
        self.stats = _Recorder()
        self._loop = asyncio.get_running_loop()
        self._completions = _Completions(self._loop)
        self._calls: set[_Call] = set()

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        return self._loop

    def launch(
        self,
        ref: ray.ObjectRef[Any],
        on_result: Callable[[_Call, Any, BaseException | None], None],
        *,
        timeout: float | None,
    ) -> _Call:
        """Track a just-submitted ref that holds one slot; ``on_result`` runs once it settles.

        The slot is released when the ref settles, not before, whatever happened to the
        caller. ``on_result(call, value, error)`` runs for every call, abandoned ones too
        (``call.abandoned`` tells), so that statistics always add up.
        """
        call = _Call(ref, time.monotonic(), on_result)
        self._calls.add(call)
        if timeout is not None:
            call.timer = self._loop.call_later(timeout, self._expire, call)
        self._completions.watch(ref, lambda value: self._settle(call, value))
        return call

    def _expire(self, call: _Call) -> None:
        if call.settled:
            return
        call.timed_out = True
        _cancel_now([call.ref], force=True)

    def abandon(self, call: _Call) -> None:
        """The caller no longer wants the result: cancel the Ray task (forced when possible)."""
        if call.settled:
            return
        call.abandoned = True
        _cancel_now([call.ref], force=True)

    def _settle(self, call: _Call, value: Any) -> None:
        if call.settled:
            return
        call.settled = True
        self._calls.discard(call)
        if call.timer is not None:
            call.timer.cancel()
        self.slots.release()
        error = _as_exception(value)
        if call.timed_out and error is not None:
            error = TaskTimeoutError(
                f"task {call.ref.task_id().hex()} ran past its timeout; it was cancelled"
            )
        call.on_result(call, value, error)

    def cancel_all(self) -> None:
        """Cancel every call still running (used when the pool closes)."""
        for call in list(self._calls):
            self.abandon(call)

    async def wait_settled(self, timeout: float) -> bool:
        """Wait until every launched call settled; False if ``timeout`` ran out first."""
        deadline = self._loop.time() + timeout
        while self._calls:
            if self._loop.time() >= deadline:
                return False
            await asyncio.sleep(0.02)
        return True


# --------------------------------------------------------------------------- pools


class PoolBase(AsyncResource):
    """State, statistics and the open check that TaskPool and ActorPool share."""

    _state: State
    _engine: Engine | None

    @property
    def state(self) -> State:
        """``"unopened"``, ``"open"`` or ``"closed"``."""
        return self._state

    @property
    def stats(self) -> PoolStats:
        """A snapshot of the pool's statistics."""
        return self._engine.stats.snapshot() if self._engine is not None else PoolStats()

    def _require_open(self) -> Engine:
        if self._state != "open" or self._engine is None:
            kind = type(self).__name__
            raise PoolClosedError(
                f"{kind} is {self._state}; use it inside `async with {kind}(...) as pool`"
            )
        return self._engine

    def _check_open(self) -> None:
        self._require_open()


# --------------------------------------------------------------------------- streaming


_END = object()
#: How long an async input may take to produce the next item of a chunk being filled.
_LINGER_S = 0.002


async def _anext_or_end(iterator: AsyncIterator[Any]) -> Any:
    try:
        return await iterator.__anext__()
    except StopAsyncIteration:
        return _END


class MapStream(AsyncResource, Generic[T]):
    """``(index, result)`` pairs of a ``pool.map``; an async iterator and context manager.

    The input is consumed lazily by a background feeder task: it takes an item only when
    the stream's window has room (at most ``window`` items submitted and not yet yielded)
    and the pool has a free slot, so an endless or slow input never runs ahead.
    ``ordered=True`` yields in input order; otherwise in completion order.

    Leaving early (``break`` inside ``async with``, an exception, cancellation) stops the
    feeder and cancels the Ray tasks of this stream still running; a stream dropped without
    being closed is closed by the garbage collector. With ``return_exceptions=False`` the
    first failed item raises its exception (its own type) and closes the stream; with
    ``True`` the exception object is yielded as that item's result.
    """

    def __init__(
        self,
        items: Iterable[Any] | AsyncIterable[Any],
        *,
        submit_chunk: Callable[[list[tuple[int, Any]]], Any],
        chunk_size: Callable[[], int],
        window: Callable[[], int],
        ordered: bool,
        return_exceptions: bool,
        engine: Engine,
        check_open: Callable[[], None],
    ) -> None:
        self._items = items
        self._submit_chunk = submit_chunk
        self._chunk_size = chunk_size
        self._window = window
        self._ordered = ordered
        self._return_exceptions = return_exceptions
        self._engine = engine
        self._check_open = check_open
        self._ready: deque[tuple[int, Any, bool]] = deque()
        self._by_index: dict[int, tuple[Any, bool]] = {}
        self._next_index = 0
        self._outstanding = 0  # submitted (or being submitted) and not yet yielded
        self._room = asyncio.Event()
        self._room.set()
        self._wakeup: asyncio.Future[None] | None = None
        self._feeder: asyncio.Task[None] | None = None
        self._input_done = False
        self._input_error: BaseException | None = None
        self._closed = False
        self.calls: set[_Call] = set()
        self.tasks: set[asyncio.Task[Any]] = set()
        self._finalizer: weakref.finalize[Any, Any] | None = None

    # -- results (called by the pool's completion handlers)

    def deliver(self, index: int, value: Any, is_error: bool) -> None:
        if self._closed:
            return
        if self._ordered:
            self._by_index[index] = (value, is_error)
        else:
            self._ready.append((index, value, is_error))
        self._wake()

    def _wake(self) -> None:
        if self._wakeup is not None and not self._wakeup.done():
            self._wakeup.set_result(None)

    # -- the feeder

    async def _feed(self) -> None:
        index = itertools.count()
        try:
            async for chunk in self._chunks(index):
                # Ray serialises arguments at submission; an item that cannot be
                # serialised fails alone, and everything before it stays in flight.
                self._submit_chunk(chunk)
        except asyncio.CancelledError:
            raise
        except BaseException as exc:
            self._input_error = exc
        finally:
            self._input_done = True
            self._wake()

    async def _chunks(self, index: Iterator[int]) -> AsyncIterator[list[tuple[int, Any]]]:
        """Chunks of ``(index, item)`` to submit, each holding one pool slot when yielded.

        A partial chunk is sent rather than held back when the window is full or an async
        input has nothing more ready within ``_LINGER_S``, so a slow producer (a rollout
        loop) is never waited on while items it already gave sit unsubmitted.
        """
        source = self._items
        sync_iter: Iterator[Any] | None = None
        async_iter: AsyncIterator[Any] | None = None
        if isinstance(source, AsyncIterable):
            async_iter = source.__aiter__()
        else:
            sync_iter = iter(source)
        pending: asyncio.Future[Any] | None = None
        ended = False
        try:
            while not ended:
                size = max(1, self._chunk_size())
                chunk: list[tuple[int, Any]] = []
                while len(chunk) < size:
                    if self._outstanding >= max(size, self._window()):
                        if chunk:
                            break
                        # Backpressure: wait until the consumer takes results.
                        self._room.clear()
                        await self._room.wait()
                        continue
                    if sync_iter is not None:
                        item = next(sync_iter, _END)
                    else:
                        assert async_iter is not None
                        if pending is None:
                            pending = asyncio.ensure_future(_anext_or_end(async_iter))
                        if chunk:
                            done, _ = await asyncio.wait({pending}, timeout=_LINGER_S)
                            if not done:
                                break
                        item = await pending
                        pending = None
                    if item is _END:
                        ended = True
                        break
                    self._outstanding += 1
                    chunk.append((next(index), item))
                if chunk:
                    # Then a free slot of the pool, shared with every other caller.
                    await self._engine.slots.acquire()
                    yield chunk
        finally:
            if pending is not None and not pending.done():
                pending.cancel()

    # -- lifecycle

    def _start(self) -> None:
        if self._feeder is not None or self._closed:
            return
        self._check_open()
        self._feeder = asyncio.get_running_loop().create_task(self._feed())
        self._finalizer = weakref.finalize(
            self, _close_stream_state, self._feeder, self.calls, self.tasks, self._engine
        )

    async def open(self) -> None:
        """Start consuming the input (``async with`` calls this; so does the first item)."""
        self._start()

    async def aclose(self) -> None:
        """Stop consuming the input and cancel this stream's running Ray tasks. Idempotent."""
        if self._closed:
            return
        self._closed = True
        if self._finalizer is not None:
            self._finalizer.detach()
        if self._feeder is not None:
            _close_stream_state(self._feeder, self.calls, self.tasks, self._engine)
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._feeder

    def __aiter__(self) -> MapStream[T]:
        return self

    async def __anext__(self) -> tuple[int, T]:
        self._start()
        while True:
            item = self._pop()
            if item is not None:
                index, value, is_error = item
                self._outstanding -= 1
                self._room.set()
                if is_error and not self._return_exceptions:
                    await self.aclose()
                    raise value
                return index, value
            if self._closed:
                raise StopAsyncIteration
            if self._input_done and self._outstanding == 0:
                await self.aclose()
                if self._input_error is not None:
                    raise self._input_error
                raise StopAsyncIteration
            if self._input_error is not None and self._outstanding == 0:
                await self.aclose()
                raise self._input_error
            self._wakeup = asyncio.get_running_loop().create_future()
            try:
                await self._wakeup
            except BaseException:
                await self.aclose()
                raise
            finally:
                self._wakeup = None

    def _pop(self) -> tuple[int, Any, bool] | None:
        if self._ordered:
            got = self._by_index.pop(self._next_index, None)
            if got is None:
                return None
            self._next_index += 1
            return (self._next_index - 1, got[0], got[1])
        return self._ready.popleft() if self._ready else None


def _close_stream_state(
    feeder: asyncio.Task[None],
    calls: set[_Call],
    tasks: set[asyncio.Task[Any]],
    engine: Engine,
) -> None:
    if not feeder.done():
        feeder.cancel()
    for task in list(tasks):
        task.cancel()
    for call in list(calls):
        engine.abandon(call)


# --------------------------------------------------------------------------- helpers


def check_positive_int(name: str, value: object, *, allow_none: bool = False) -> None:
    if value is None and allow_none:
        return
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, not {type(value).__name__}")
    if value < 1:
        raise ValueError(f"{name} must be >= 1, got {value}")


def check_timeout(timeout: object) -> None:
    if timeout is None:
        return
    if isinstance(timeout, bool) or not isinstance(timeout, int | float):
        raise TypeError(f"timeout must be seconds or None, not {type(timeout).__name__}")
    if not timeout > 0:
        raise ValueError(f"timeout must be > 0 seconds, got {timeout}")


def check_items(items: object) -> None:
    if isinstance(items, str | bytes):
        raise TypeError("items must be an iterable of items, not a str/bytes")
    if not isinstance(items, Iterable | AsyncIterable):
        raise TypeError(f"items must be an iterable or async iterable, not {type(items).__name__}")


def default_capacity() -> int:
    """Twice the cluster's CPUs (at least 2)."""
    cpus = ray.cluster_resources().get("CPU", 1)
    return max(2, int(2 * cpus))

