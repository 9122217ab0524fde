"""The stream behind ``pool.map``: :class:`MapStream` and the core it runs on.

It owns streaming over the engine (:mod:`asyncpool._dispatch`): the input is consumed lazily
(never more than the window ahead of what was yielded), an async input in one task of its own;
items are submitted in the background, in chunks, through the pool's ``SubmitChunk``; results
are yielded as ``(index, value)`` as they arrive or in input order. A stream dropped without
being closed is closed by its finalizer (feeders cancelled, its Ray tasks cancelled).

It must not take slots, submit or settle Ray work itself (the engine and the pool do), nor
hold a reference from its core to the :class:`MapStream` (so that a dropped stream can be
collected).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import sys
import time
import weakref
from collections import deque
from collections.abc import AsyncIterable, Awaitable, Callable, Iterable, Iterator
from typing import Any, Generic, TypeVar

from ._dispatch import Engine, _Call
from ._resource import AsyncResource
from .errors import PoolClosedError

if sys.version_info < (3, 11):  # anyio depends on the backport there
    from exceptiongroup import BaseExceptionGroup

T = TypeVar("T")

#: A feeder submits for at most this long before it lets the event loop run other callbacks.
_FEED_SLICE_S = 0.0005
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
        # The window, read once per chunk rather than per item (it changes only as an
        # elastic pool grows or shrinks): per item it was half of this function's cost.
        limit = max(size, self.window())
        chunk: list[tuple[int, Any]] = []
        while len(chunk) < size:
            if sync_iter is not None:
                if self.outstanding >= limit:
                    if chunk:
                        break
                    await self._wait_room(size)
                    limit = max(size, self.window())
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
