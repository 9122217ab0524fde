"""The async ObjectRef layer: await Ray results without blocking the event loop.

``resolve`` awaits one ref natively (Ray's own completion callback, no thread).
``as_completed`` and ``gather`` wait on many refs through *batched* ``ray.wait`` calls in one
helper thread per stream, handing each batch of finished results to the event loop in a single
wake-up; the results are fetched and deserialised in that thread too, so the event loop only
ever sees finished values. A stream therefore costs about what one ``ray.get`` of the whole list
costs, whatever its length, and never touches the default executor (whose few threads cap
the ``run_in_executor(None, ray.get, ref)`` pattern).

Shared semantics:

* a user exception is raised as its own type (Ray's ``as_instanceof_cause``: a ``KeyError``
  raised in the task is caught by ``except KeyError``);
* ``timeout`` (seconds, for the whole call) cancels the Ray tasks still pending and raises
  :class:`~asyncpool.errors.TaskTimeoutError`;
* cancellation of the awaiting task (``task.cancel()``, an anyio cancel scope,
  ``anyio.fail_after``) cancels the Ray tasks it was waiting for, exactly as a timeout does.

Cancelling a Ray task is done with ``force=True`` for normal tasks, because a plain
``ray.cancel`` does not interrupt a task blocked in C code such as ``time.sleep`` (Ray issue
32954): a verification that timed out must stop burning its CPU. Ray does not support forcing
actor tasks; those are cancelled without force (a running *sync* actor method then finishes).
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import threading
import time
import weakref
from collections import deque
from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import Any, Generic, TypeAlias, TypeVar, overload

import anyio
import anyio.lowlevel
import ray
from ray import ObjectRef, ObjectRefGenerator
from ray.exceptions import RayError

from ._resource import AsyncResource
from .errors import TaskTimeoutError

Ref: TypeAlias = "ObjectRef[Any]"

__all__ = ["AsCompleted", "as_completed", "cancel", "gather", "resolve"]

K = TypeVar("K", bound=Hashable)
T = TypeVar("T")

#: How long the waiter thread blocks in one ``ray.wait`` before it looks at its stop flag.
_SLICE_S = 0.1
#: Once something finished, how long to keep collecting before handing the batch over.
_WINDOW_S = 0.005
_WINDOW_PER_REF_S = 2e-5
_MAX_WINDOW_S = 0.1
#: How many refs to cancel between two yields to the event loop.
_CANCEL_CHUNK = 256


# --------------------------------------------------------------------------- validation


def _check_timeout(timeout: float | None) -> None:
    if timeout is None:
        return
    if isinstance(timeout, bool) or not isinstance(timeout, int | float):
        raise TypeError(
            f"timeout must be a number of seconds or None, not {type(timeout).__name__}"
        )
    if math.isnan(timeout) or timeout < 0:
        raise ValueError(f"timeout must be >= 0 seconds, got {timeout}")


def _check_ref(ref: object, where: str = "ref") -> Ref:
    if not isinstance(ref, ObjectRef):
        raise TypeError(f"{where} must be a ray.ObjectRef, not {type(ref).__name__}")
    return ref


def _split(
    refs: object,
) -> tuple[list[Any], list[Ref], bool]:
    """Keys, refs, and whether the input was a mapping; raises before anything is awaited."""
    if isinstance(refs, ObjectRef):
        raise TypeError(
            "expected a sequence or mapping of ObjectRefs, got a single Ref; "
            "use resolve() for one ref"
        )
    if isinstance(refs, Mapping):
        keys = list(refs.keys())
        values = [_check_ref(refs[k], f"refs[{k!r}]") for k in keys]
        return keys, values, True
    if isinstance(refs, str | bytes) or not isinstance(refs, Iterable):
        raise TypeError(
            f"refs must be a sequence or mapping of ObjectRefs, not {type(refs).__name__}"
        )
    values = [_check_ref(r, f"refs[{i}]") for i, r in enumerate(refs)]
    return list(range(len(values))), values, False


# --------------------------------------------------------------------------- cancellation


def _cancel_one(ref: Ref | ObjectRefGenerator, force: bool) -> None:
    try:
        ray.cancel(ref, force=force, recursive=True)
    except ValueError:
        # force=True is not supported for actor tasks: cancel those without it.
        with contextlib.suppress(Exception):
            ray.cancel(ref, force=False, recursive=True)
    except Exception:
        # Ray raises for refs it cannot cancel (already freed, put objects in some
        # versions); there is nothing left to stop then.
        pass


class _Follower:
    """Re-sends ``ray.cancel`` to cancelled refs that have not settled yet.

    A cancel that reaches a task while it is between scheduling states can be dropped
    (Ray issues 24359, 52703): the task then runs to its end. One daemon thread per process
    looks at the refs it was given every ``interval`` seconds and cancels again whatever is
    still not finished, for at most ``horizon`` seconds, so a cancelled task really stops.
    """

    interval = 0.5
    horizon = 60.0

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._items: dict[Ref, tuple[bool, float]] = {}
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None

    def add(self, refs: Iterable[Ref], force: bool) -> None:
        until = time.monotonic() + self.horizon
        with self._lock:
            for ref in refs:
                self._items[ref] = (force, until)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(
                    target=self._run, name="asyncpool-cancel-follower", daemon=True
                )
                self._thread.start()

    def _run(self) -> None:
        while True:
            self._wake.wait(self.interval)
            with self._lock:
                if not self._items:
                    self._thread = None
                    return
                items = dict(self._items)
            try:
                if not ray.is_initialized():
                    with self._lock:
                        self._items.clear()
                    continue
                refs = list(items)
                ready, _ = ray.wait(refs, num_returns=len(refs), timeout=0, fetch_local=False)
            except Exception:  # pragma: no cover - Ray shutting down under us
                with self._lock:
                    self._items.clear()
                continue
            now = time.monotonic()
            settled = set(ready)
            with self._lock:
                for ref, (_, until) in items.items():
                    if ref in settled or now > until:
                        self._items.pop(ref, None)
            for ref, (force, until) in items.items():
                if ref not in settled and now <= until:
                    _cancel_one(ref, force)


_follower = _Follower()


def _cancel_now(refs: Iterable[Ref | ObjectRefGenerator], *, force: bool) -> None:
    """Cancel without yielding; quiet about refs that are done or not tasks' returns.

    Plain refs are also handed to the follower thread, which re-cancels them until they
    settle (a first cancel can be lost in a race inside Ray).
    """
    plain: list[Ref] = []
    for ref in refs:
        _cancel_one(ref, force)
        if isinstance(ref, ObjectRef):
            plain.append(ref)
    if plain:
        _follower.add(plain, force)


async def cancel(
    refs: Ref | ObjectRefGenerator | Sequence[Ref] | Mapping[Any, Ref],
    *,
    force: bool = False,
) -> None:
    """Cancel the Ray tasks behind ``refs`` (one ref, a generator, a sequence or a mapping).

    ``force=True`` kills the worker running a normal task (needed to stop a task blocked in
    C code); actor tasks are always cancelled without force, as Ray requires. Refs that are
    already finished are left alone. Never blocks the event loop for more than a slice.

    Cancellation: being cancelled midway leaves the refs seen so far cancelled.
    """
    if not isinstance(force, bool):
        raise TypeError(f"force must be a bool, not {type(force).__name__}")
    single = isinstance(refs, ObjectRef | ObjectRefGenerator)
    items: list[Ref | ObjectRefGenerator] = [refs] if single else list(_split(refs)[1])
    for start in range(0, len(items), _CANCEL_CHUNK):
        _cancel_now(items[start : start + _CANCEL_CHUNK], force=force)
        await anyio.lowlevel.checkpoint()


# --------------------------------------------------------------------------- resolve


async def resolve(ref: Ref, *, timeout: float | None = None) -> Any:
    """Await one ObjectRef natively and return its value.

    Raises the task's own exception type for a user error, and Ray's error for a system one.
    ``timeout``: the task is cancelled (forced for normal tasks) and
    :class:`TaskTimeoutError` raised.

    Cancellation: cancelling the awaiting task cancels the Ray task too; the exception
    propagates unchanged.
    """
    _check_ref(ref)
    _check_timeout(timeout)
    scope = anyio.move_on_after(math.inf if timeout is None else timeout)
    try:
        with scope:
            return await ref
    except anyio.get_cancelled_exc_class():
        _cancel_now([ref], force=True)
        raise
    finally:
        if scope.cancelled_caught:
            _cancel_now([ref], force=True)
    # Only reached when the deadline cancelled the await.
    raise TaskTimeoutError(f"ObjectRef {ref.hex()} not ready within {timeout}s; task cancelled")


# --------------------------------------------------------------------------- streaming


class _Waiter:
    """The thread side of a stream: batched ``ray.wait`` over the refs still pending.

    Holds no reference to the :class:`AsCompleted` that owns it, so that dropping an
    un-exhausted stream lets the finaliser stop the thread and cancel what is pending.
    """

    def __init__(
        self, keyed: dict[Ref, Any], loop: asyncio.AbstractEventLoop, *, streaming: bool = True
    ) -> None:
        self.pending = keyed
        self.streaming = streaming
        self.loop = loop
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.deliver: Any = None  # set by the owner: callable(list[(key, value, is_error)])
        self.thread: threading.Thread | None = None

    def start(self) -> None:
        self.thread = threading.Thread(target=self._run, name="asyncpool-as-completed", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        flowing = False
        try:
            while not self.stop.is_set():
                with self.lock:
                    refs = list(self.pending)
                if not refs:
                    return
                if self.streaming:
                    # Block until one is ready (unless results are flowing already), then
                    # gather what finishes within a short window: prompt results, in batches.
                    # Each ray.wait scans every pending ref, so a long list waits a little
                    # longer per batch: the scans then cost a bounded share of CPU.
                    window = min(_MAX_WINDOW_S, max(_WINDOW_S, len(refs) * _WINDOW_PER_REF_S))
                    if not (flowing and len(refs) > 1):
                        ready, _ = ray.wait(
                            refs, num_returns=1, timeout=_SLICE_S, fetch_local=True
                        )
                    if (flowing or ready) and len(refs) > 1:
                        ready, _ = ray.wait(
                            refs, num_returns=len(refs), timeout=window, fetch_local=True
                        )
                else:
                    # gather wants everything: one wait for all per slice, as cheap as a plain
                    # ray.get(list), while still noticing failures and stops slice by slice.
                    ready, _ = ray.wait(
                        refs, num_returns=len(refs), timeout=_SLICE_S, fetch_local=True
                    )
                flowing = bool(ready)
                if not ready:
                    continue
                batch = self._fetch(ready)
                with self.lock:
                    if self.stop.is_set():
                        return
                    for ref in ready:
                        self.pending.pop(ref, None)
                self._post(batch)
        except BaseException as exc:  # pragma: no cover - Ray itself failing in the thread
            self._post(exc)

    def _fetch(self, ready: list[Ref]) -> list[tuple[Any, Any, bool]]:
        keys = [self.pending[r] for r in ready]
        try:
            values = ray.get(ready)
            return [(k, v, False) for k, v in zip(keys, values, strict=True)]
        except RayError:
            pass
        out: list[tuple[Any, Any, bool]] = []
        for key, ref in zip(keys, ready, strict=True):
            try:
                out.append((key, ray.get(ref), False))
            except RayError as exc:  # already as_instanceof_cause for task errors
                out.append((key, exc, True))
        return out

    def _post(self, item: object) -> None:
        try:
            self.loop.call_soon_threadsafe(self.deliver, item)
        except RuntimeError:  # the loop is closed: nobody is listening any more
            self.stop.set()

    def close(self, *, cancel_pending: bool) -> None:
        """Stop the thread; cancel (forced) the refs not yet delivered. Idempotent."""
        with self.lock:
            already = self.stop.is_set()
            self.stop.set()
            leftover = list(self.pending)
            self.pending.clear()
        if cancel_pending and not already:
            _cancel_now(leftover, force=True)


class AsCompleted(AsyncResource, Generic[K, T]):
    """An async iterator of ``(key, value)`` in completion order; also an async context manager.

    Leaving early — ``break`` inside ``async with``, an exception, cancellation, or the
    timeout — cancels the Ray tasks still pending. An item that failed raises its exception
    (``return_exceptions=False``) and closes the stream, cancelling the rest, much as an
    error in a task group cancels its siblings; with ``return_exceptions=True`` the exception
    object is yielded as the value instead. A stream dropped without being closed is closed
    by the garbage collector, with the same effect.
    """

    def __init__(
        self,
        keys: list[K],
        refs: list[Ref] | None,
        generator: ObjectRefGenerator | None,
        *,
        timeout: float | None,
        return_exceptions: bool,
    ) -> None:
        self._keys = keys
        self._refs = refs
        self._generator = generator
        self._timeout = timeout
        self._return_exceptions = return_exceptions
        self._buffer: deque[tuple[Any, Any, bool]] = deque()
        self._remaining = len(refs) if refs is not None else -1
        self._deadline: float | None = None
        self._waiter: _Waiter | None = None
        self._wakeup: asyncio.Future[None] | None = None
        self._failure: BaseException | None = None
        self._closed = False
        self._gen_index = 0
        self._finalizer: weakref.finalize[Any, Any] | None = None
        #: False for gather, which wants everything and no early batches.
        self._streaming = True

    # -- lifecycle

    async def open(self) -> None:
        """Start waiting (``async with`` calls this; the first ``__anext__`` would too)."""
        self._start()

    async def aclose(self) -> None:
        """Stop waiting and cancel whatever is still pending. Idempotent."""
        self._close(cancel_pending=True)

    def _close(self, *, cancel_pending: bool) -> None:
        if self._closed:
            return
        self._closed = True
        if self._finalizer is not None:
            self._finalizer.detach()
        if self._waiter is not None:
            self._waiter.close(cancel_pending=cancel_pending)
        elif self._generator is not None and cancel_pending:
            _cancel_now([self._generator], force=True)
        elif self._refs is not None and cancel_pending and self._remaining:
            _cancel_now(self._refs, force=True)

    def _start(self) -> None:
        if self._deadline is not None or self._closed:
            return
        loop = asyncio.get_running_loop()
        self._deadline = loop.time() + (math.inf if self._timeout is None else self._timeout)
        if self._refs is None or not self._refs:
            return
        waiter = _Waiter(
            dict(zip(self._refs, self._keys, strict=True)), loop, streaming=self._streaming
        )
        if len(waiter.pending) != len(self._refs):
            # The same ref twice: wait once, hand the value to every key.
            waiter.pending = {}
            self._dupes: dict[Ref, list[Any]] = {}
            for ref, key in zip(self._refs, self._keys, strict=True):
                self._dupes.setdefault(ref, []).append(key)
                waiter.pending[ref] = ref
        else:
            self._dupes = {}
        waiter.deliver = self._deliver
        self._waiter = waiter
        self._finalizer = weakref.finalize(self, waiter.close, cancel_pending=True)
        waiter.start()

    def _deliver(self, item: object) -> None:
        if isinstance(item, BaseException):
            self._failure = item
        else:
            assert isinstance(item, list)
            if self._dupes:
                for ref, value, err in item:
                    self._buffer.extend((key, value, err) for key in self._dupes[ref])
            else:
                self._buffer.extend(item)
        if self._wakeup is not None and not self._wakeup.done():
            self._wakeup.set_result(None)

    # -- iteration

    def __aiter__(self) -> AsCompleted[K, T]:
        return self

    async def __anext__(self) -> tuple[K, T]:
        if self._generator is not None:
            return await self._next_from_generator()
        while not self._buffer:
            await self._fill()
        key, value, err = self._buffer.popleft()
        self._remaining -= 1
        if self._remaining == 0:
            self._close(cancel_pending=False)
        if err and not self._return_exceptions:
            self._close(cancel_pending=True)
            raise value
        return key, value

    async def _fill(self) -> None:
        """Wait until the buffer has something; raise StopAsyncIteration when all is done."""
        if self._closed and not self._buffer:
            raise StopAsyncIteration
        self._start()
        if self._remaining == 0:
            raise StopAsyncIteration
        if self._failure is not None:
            failure, self._failure = self._failure, None
            self._close(cancel_pending=True)
            raise failure
        loop = asyncio.get_running_loop()
        assert self._deadline is not None
        self._wakeup = loop.create_future()
        scope = anyio.move_on_after(self._deadline - loop.time())
        try:
            with scope:
                await self._wakeup
        except BaseException:
            self._close(cancel_pending=True)
            raise
        finally:
            self._wakeup = None
        if scope.cancelled_caught:
            self._raise_timeout()

    def _raise_timeout(self) -> None:
        pending = self._remaining - len(self._buffer)
        self._close(cancel_pending=True)
        raise TaskTimeoutError(
            f"{pending} of {len(self._keys)} refs not ready within {self._timeout}s; "
            "pending tasks cancelled"
        )

    async def _next_from_generator(self) -> tuple[K, T]:
        assert self._generator is not None
        if self._closed:
            raise StopAsyncIteration
        self._start()
        loop = asyncio.get_running_loop()
        assert self._deadline is not None
        scope = anyio.move_on_after(self._deadline - loop.time())
        try:
            with scope:
                try:
                    ref = await self._generator.__anext__()
                except StopAsyncIteration:
                    self._close(cancel_pending=False)
                    raise
                try:
                    value = await ref
                except RayError as exc:
                    if not self._return_exceptions:
                        raise
                    value = exc
                except Exception as exc:
                    if not self._return_exceptions:
                        raise
                    value = exc
        except StopAsyncIteration:
            raise
        except BaseException:
            self._close(cancel_pending=True)
            raise
        if scope.cancelled_caught:
            self._close(cancel_pending=True)
            raise TaskTimeoutError(f"generator not exhausted within {self._timeout}s; cancelled")
        index = self._gen_index
        self._gen_index += 1
        return index, value  # type: ignore[return-value]

    async def _collect(self) -> list[tuple[Any, Any]]:
        """Everything, as ``(key, value)`` in completion order (used by :func:`gather`)."""
        out: list[tuple[Any, Any]] = []
        if self._generator is not None:
            return [item async for item in self]
        try:
            while True:
                while self._buffer:
                    key, value, err = self._buffer.popleft()
                    self._remaining -= 1
                    if err and not self._return_exceptions:
                        self._close(cancel_pending=True)
                        raise value
                    out.append((key, value))
                if self._remaining == 0:
                    self._close(cancel_pending=False)
                    return out
                await self._fill()
        except StopAsyncIteration:
            return out


@overload
def as_completed(  # type: ignore[overload-overlap]
    refs: Mapping[K, Ref],
    *,
    timeout: float | None = None,
    return_exceptions: bool = False,
) -> AsCompleted[K, Any]: ...


@overload
def as_completed(
    refs: Sequence[Ref] | Iterable[Ref] | ObjectRefGenerator,
    *,
    timeout: float | None = None,
    return_exceptions: bool = False,
) -> AsCompleted[int, Any]: ...


def as_completed(
    refs: Any,
    *,
    timeout: float | None = None,
    return_exceptions: bool = False,
) -> AsCompleted[Any, Any]:
    """Stream ``(key, value)`` pairs as the refs complete (key: index, or the mapping's key).

    ``refs`` is a sequence, an iterable, a mapping of ObjectRefs, or an ObjectRefGenerator
    (a streaming generator task: its items stream in order as they are produced).
    Arguments are checked here, before anything is awaited. ``timeout`` covers the whole
    stream, from the first ``__anext__`` (or ``__aenter__``).

    Use it as ``async with as_completed(refs) as stream: async for key, value in stream``
    so that leaving early cancels what is pending; a plain ``async for`` works too.

    Cancellation: cancelling the consuming task cancels every Ray task still pending;
    the values already yielded are the caller's.
    """
    _check_timeout(timeout)
    if not isinstance(return_exceptions, bool):
        raise TypeError("return_exceptions must be a bool")
    if isinstance(refs, ObjectRefGenerator):
        return AsCompleted([], None, refs, timeout=timeout, return_exceptions=return_exceptions)
    keys, values, _ = _split(refs)
    return AsCompleted(keys, values, None, timeout=timeout, return_exceptions=return_exceptions)


@overload
async def gather(  # type: ignore[overload-overlap]
    refs: Mapping[K, Ref],
    *,
    timeout: float | None = None,
    return_exceptions: bool = False,
) -> dict[K, Any]: ...


@overload
async def gather(
    refs: Sequence[Ref] | Iterable[Ref] | ObjectRefGenerator,
    *,
    timeout: float | None = None,
    return_exceptions: bool = False,
) -> list[Any]: ...


async def gather(
    refs: Any,
    *,
    timeout: float | None = None,
    return_exceptions: bool = False,
) -> list[Any] | dict[Any, Any]:
    """All values: a list in input order, or a dict with the mapping's keys.

    The first failure raises (its own type) and cancels the rest, unless
    ``return_exceptions=True``, which puts the exception objects in their places.
    ``timeout`` cancels what is pending and raises :class:`TaskTimeoutError`.

    Cancellation: cancelling the awaiting task cancels every Ray task still pending.
    """
    _check_timeout(timeout)
    if not isinstance(return_exceptions, bool):
        raise TypeError("return_exceptions must be a bool")
    if isinstance(refs, ObjectRefGenerator):
        stream: AsCompleted[Any, Any] = AsCompleted(
            [], None, refs, timeout=timeout, return_exceptions=return_exceptions
        )
        return [v for _, v in await stream._collect()]
    keys, values, is_mapping = _split(refs)
    stream = AsCompleted(keys, values, None, timeout=timeout, return_exceptions=return_exceptions)
    stream._streaming = False
    pairs = await stream._collect()
    if is_mapping:
        got = dict(pairs)
        return {k: got[k] for k in keys}
    ordered: list[Any] = [None] * len(keys)
    for index, value in pairs:
        ordered[index] = value
    return ordered
