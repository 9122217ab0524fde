"""The async ObjectRef layer: await Ray results without blocking the event loop.

``resolve`` awaits one ref natively (Ray's own completion callback, no thread).
``as_completed``, ``gather`` and ``wait`` subscribe their refs to the process's one completion core
(:mod:`asyncpool._completion`): a single helper thread multiplexes *batched* ``ray.wait`` over
the refs of every open stream, fetches and deserialises finished results there, and hands each
batch to the event loop in one wake-up. A stream therefore costs about what one ``ray.get`` of
the whole list costs, whatever its length, a process runs the same few helper threads however
many streams are open, and nothing touches the default executor (whose few threads cap the
``run_in_executor(None, ray.get, ref)`` pattern).

Shared semantics:

* a user exception is raised as its own type (Ray's ``as_instanceof_cause``: a ``KeyError``
  raised in the task is caught by ``except KeyError``);
* ``timeout`` (``None`` or seconds > 0, for the whole call) cancels the Ray tasks still pending
  and raises :class:`~asyncpool.errors.TaskTimeoutError`;
* cancellation of the awaiting task (``task.cancel()``, an anyio cancel scope,
  ``anyio.fail_after``) cancels the Ray tasks it was waiting for, exactly as a timeout does.

``wait`` is the exception, as ``ray.wait`` is: it only observes. Its ``timeout`` returns the
partial split, and cancelling it cancels no Ray work.

Cancelling goes through :mod:`asyncpool._cancel` (off the event loop, lost cancels followed):
``force=True`` for normal tasks, because a plain ``ray.cancel`` does not interrupt a task
blocked in C code such as ``time.sleep`` (Ray issue 32954): a verification that timed out must
stop burning its CPU. Ray does not support forcing actor tasks; those are cancelled without
force (a running *sync* actor method then finishes).
"""

from __future__ import annotations

import asyncio
import math
import weakref
from collections import deque
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import Any, Generic, TypeAlias, TypeVar, overload

import anyio
import ray
from ray import ObjectRef, ObjectRefGenerator
from ray.exceptions import RayError

from . import _cancel, _completion, _validate
from ._resource import AsyncResource
from .errors import TaskTimeoutError

Ref: TypeAlias = "ObjectRef[Any]"

__all__ = ["AsCompleted", "as_completed", "cancel", "gather", "resolve", "wait"]

K = TypeVar("K", bound=Hashable)
T = TypeVar("T")


# --------------------------------------------------------------------------- validation


def _check_ref(ref: object, where: str = "ref") -> Ref:
    if not isinstance(ref, ObjectRef):
        raise TypeError(f"{where} must be a ray.ObjectRef, got {type(ref).__name__}")
    return ref


def _split(
    refs: object,
) -> tuple[list[Any], list[Ref], bool]:
    """Keys, refs, and whether the input was a mapping; raises before anything is awaited."""
    if isinstance(refs, ObjectRef):
        raise TypeError(
            "refs must be a sequence or mapping of ObjectRefs, got a single ObjectRef; "
            "use resolve() for one ref"
        )
    if isinstance(refs, Mapping):
        keys = list(refs.keys())
        values = [_check_ref(refs[k], f"refs[{k!r}]") for k in keys]
        return keys, values, True
    if isinstance(refs, str | bytes) or not isinstance(refs, Iterable):
        raise TypeError(
            f"refs must be a sequence or mapping of ObjectRefs, got {type(refs).__name__}"
        )
    values = [_check_ref(r, f"refs[{i}]") for i, r in enumerate(refs)]
    return list(range(len(values))), values, False


# --------------------------------------------------------------------------- cancellation


async def cancel(
    refs: Ref | ObjectRefGenerator | Sequence[Ref] | Mapping[Any, Ref],
    *,
    force: bool = False,
) -> None:
    """Cancel the Ray tasks behind ``refs`` (one ref, a generator, a sequence or a mapping).

    ``force=True`` kills the worker running a normal task (needed to stop a task blocked in
    C code); actor tasks are always cancelled without force, as Ray requires. Refs that are
    already finished are left alone. Returns once every ``ray.cancel`` was issued (by the
    canceller thread, so a storm of cancels never blocks the event loop); a cancel that Ray
    loses is sent again until the task settles.

    Cancellation: the cancels are issued anyway; only the wait for them is abandoned.
    """
    _validate.boolean(force, "force")
    single = isinstance(refs, ObjectRef | ObjectRefGenerator)
    items: list[Ref | ObjectRefGenerator] = [refs] if single else list(_split(refs)[1])
    await _cancel.cancel(items, force=force)


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
    timeout = _validate.timeout(timeout)
    scope = anyio.move_on_after(math.inf if timeout is None else timeout)
    try:
        with scope:
            return await ref
    except anyio.get_cancelled_exc_class():
        _cancel.request([ref], force=True)
        raise
    finally:
        if scope.cancelled_caught:
            _cancel.request([ref], force=True)
    # Only reached when the deadline cancelled the await.
    raise TaskTimeoutError(f"ObjectRef {ref.hex()} not ready within {timeout}s; task cancelled")


# --------------------------------------------------------------------------- streaming


def _weak_deliver(stream: AsCompleted[Any, Any]) -> Callable[[list[_completion.Item]], None]:
    """A ``deliver`` for the completion core that does not keep ``stream`` alive."""
    ref = weakref.ref(stream)

    def deliver(batch: list[_completion.Item]) -> None:
        target = ref()
        if target is not None:
            target._deliver(batch)

    return deliver


def _abandon(sub: _completion.Subscription, refs: list[Ref]) -> None:
    """Close ``sub`` and cancel (forced) what it had not delivered; safe on any thread."""
    left = sub.close()
    if left:
        _cancel.request([refs[i] for i in left], force=True)


class AsCompleted(AsyncResource, Generic[K, T]):
    """An async iterator of ``(key, value)`` in completion order; also an async context manager.

    Leaving early — ``break`` inside ``async with``, an exception, cancellation, or the
    timeout — cancels the Ray tasks still pending. An item that failed raises its exception
    (``return_exceptions=False``) and closes the stream, cancelling the rest, much as an
    error in a task group cancels its siblings; with ``return_exceptions=True`` the exception
    object is yielded as the value instead. A stream dropped without being closed is closed
    when the garbage collector frees it (the completion core holds it only weakly), with the
    same effect: its pending Ray tasks are cancelled.
    """

    def __init__(
        self,
        keys: list[K],
        refs: list[Ref] | None,
        generator: ObjectRefGenerator | None,
        *,
        timeout: float | None,
        return_exceptions: bool,
        everything: bool = False,
    ) -> None:
        self._keys = keys
        self._refs = refs
        self._generator = generator
        self._timeout = timeout
        self._return_exceptions = return_exceptions
        #: gather: wait for everything per slice, no early batches, no finaliser needed
        #: (the awaiting coroutine always closes it).
        self._everything = everything
        self._buffer: deque[tuple[Any, Any, bool]] = deque()
        self._remaining = len(refs) if refs is not None else -1
        self._deadline: float | None = None
        self._sub: _completion.Subscription | None = None
        self._wakeup: asyncio.Future[None] | None = None
        self._closed = False
        self._gen_index = 0
        self._finalizer: weakref.finalize[Any, Any] | None = None

    # -- lifecycle

    async def open(self) -> None:
        """Start waiting (``async with`` calls this; the first ``__anext__`` would too)."""
        self._start()

    async def aclose(self) -> None:
        """Stop waiting and cancel whatever is still pending. Idempotent; never blocks (the
        cancels are issued by the canceller thread)."""
        self._close(cancel_pending=True)

    def _close(self, *, cancel_pending: bool) -> None:
        if self._closed:
            return
        self._closed = True
        if self._finalizer is not None:
            self._finalizer.detach()
        if self._sub is not None:
            left = self._sub.close()
            if cancel_pending and left and self._refs is not None:
                _cancel.request([self._refs[i] for i in left], force=True)
        elif self._generator is not None and cancel_pending:
            _cancel.request([self._generator], force=True)
        elif self._refs is not None and cancel_pending and self._remaining:
            _cancel.request(self._refs, force=True)

    def _start(self) -> None:
        if self._deadline is not None or self._closed:
            return
        loop = asyncio.get_running_loop()
        self._deadline = loop.time() + (math.inf if self._timeout is None else self._timeout)
        if not self._refs:
            return
        self._sub = _completion.subscribe(
            self._refs, _weak_deliver(self), loop=loop, everything=self._everything
        )
        if not self._everything:
            self._finalizer = weakref.finalize(self, _abandon, self._sub, self._refs)

    def _deliver(self, batch: list[_completion.Item]) -> None:
        keys = self._keys
        self._buffer.extend((keys[position], value, err) for position, value, err in batch)
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
    Arguments are checked here, before anything is awaited. ``timeout`` (``None`` or seconds
    > 0) covers the whole stream, from the first ``__anext__`` (or ``__aenter__``).

    Use it as ``async with as_completed(refs) as stream: async for key, value in stream``
    so that leaving early cancels what is pending; a plain ``async for`` works too (a stream
    dropped half-consumed is closed, and its pending tasks cancelled, when it is collected).

    Order and latency: the first result is handed over as soon as it is ready; after that,
    while results flow, they come in batches (within a batch, in the order the refs were given),
    a few milliseconds apart while few refs are pending and at most 50 ms apart while many are
    (the shared waiter's scans cost O(pending refs), so each is made to serve many results:
    the stream keeps pace with one ``ray.get`` of the whole list). A pool (``TaskPool.map``,
    ``ActorPool.map``) hands each result over as it finishes while few calls are in flight, and
    within 20 ms while many are, since its next call waits on a slot.

    Cancellation: cancelling the consuming task cancels every Ray task still pending;
    the values already yielded are the caller's.
    """
    timeout = _validate.timeout(timeout)
    _validate.boolean(return_exceptions, "return_exceptions")
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

    Costs about one ``ray.get`` of the whole list, on the shared completion core (no thread
    of its own, however many gathers run at once). The first failure raises (its own type)
    and cancels the rest, unless ``return_exceptions=True``, which puts the exception objects
    in their places. ``timeout`` (``None`` or seconds > 0) cancels what is pending and raises
    :class:`TaskTimeoutError`.

    Cancellation: cancelling the awaiting task cancels every Ray task still pending.
    """
    timeout = _validate.timeout(timeout)
    _validate.boolean(return_exceptions, "return_exceptions")
    if isinstance(refs, ObjectRefGenerator):
        stream: AsCompleted[Any, Any] = AsCompleted(
            [], None, refs, timeout=timeout, return_exceptions=return_exceptions
        )
        return [v for _, v in await stream._collect()]
    keys, values, is_mapping = _split(refs)
    stream = AsCompleted(
        keys, values, None, timeout=timeout, return_exceptions=return_exceptions, everything=True
    )
    pairs = await stream._collect()
    if is_mapping:
        got = dict(pairs)
        return {k: got[k] for k in keys}
    ordered: list[Any] = [None] * len(keys)
    for index, value in pairs:
        ordered[index] = value
    return ordered


# --------------------------------------------------------------------------- wait


def _wait_refs(refs: object) -> list[Ref]:
    """``ray.wait``'s checks of ``ray_waitables``, in its order, with asyncpool's messages."""
    if isinstance(refs, ObjectRef | ObjectRefGenerator):
        raise TypeError(
            f"refs must be a list of ObjectRefs, got a single {type(refs).__name__}; "
            "wrap it in a list"
        )
    if not isinstance(refs, list):
        raise TypeError(f"refs must be a list of ObjectRefs, got {type(refs).__name__}")
    return refs


def _wait_timeout(value: object) -> float | None:
    """``ray.wait``'s timeout: ``None`` or seconds >= 0 (``0`` is a poll; ``inf`` is None)."""
    if value is None:
        return None
    what = "None or a number of seconds >= 0"
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"timeout must be {what}, got {value!r} ({type(value).__name__})")
    if math.isnan(value) or value < 0:
        raise ValueError(f"timeout must be {what}, got {value!r}")
    return None if math.isinf(value) else float(value)


def _split_ready(
    refs: list[Ref], ready: set[int] | list[bool], num_returns: int
) -> tuple[list[Ref], list[Ref]]:
    """``ray.wait``'s answer: at most ``num_returns`` ready refs, the first ones in input
    order; every other ref (ready or not) in ``not_ready``, in input order."""
    ready_refs: list[Ref] = []
    not_ready: list[Ref] = []
    is_ready = ready.__getitem__ if isinstance(ready, list) else ready.__contains__
    for i, ref in enumerate(refs):
        if len(ready_refs) < num_returns and is_ready(i):
            ready_refs.append(ref)
        else:
            not_ready.append(ref)
    return ready_refs, not_ready


async def wait(
    refs: list[Ref],
    *,
    num_returns: int = 1,
    timeout: float | None = None,
    fetch_local: bool = True,
) -> tuple[list[Ref], list[Ref]]:
    """``ray.wait``, awaitable: ``(ready, not_ready)`` once ``num_returns`` refs are ready.

    The contract is ``ray.wait``'s. ``refs`` is a list of unique ObjectRefs; ``ready`` holds at
    most ``num_returns`` refs, ``not_ready`` every other ref; both keep the input order. When
    more than ``num_returns`` are ready, ``ready`` holds the first of them in input order
    (``ray.wait`` leaves which ones open: its pick follows a hash set). ``timeout`` (seconds,
    ``None`` for none) returns the partial split when it passes, never raises; ``timeout=0``
    answers at once with what is ready now (one non-blocking ``ray.wait`` poll).
    ``fetch_local=True`` counts a ref ready once its object is on this node (pulling it here,
    as Ray does); ``fetch_local=False`` counts it ready once it exists anywhere in the cluster
    and pulls nothing to this node. Values are never fetched nor deserialised: call
    :func:`gather` or ``ray.get`` on ``ready``. A failed task's ref is ready (its error is its
    value). An empty list gives ``([], [])``.

    Bad input raises what ``ray.wait`` raises, before anything is awaited: ``TypeError`` for a
    single ref, a non-list or an item that is not an ObjectRef (an ``ObjectRefGenerator`` is
    not accepted: iterate it with :func:`as_completed`), ``ValueError`` for duplicate refs,
    ``num_returns`` outside ``1..len(refs)`` or a negative ``timeout``. If Ray shuts down
    under a pending ``wait``, it raises :class:`~asyncpool.errors.AsyncPoolError`.

    The waiting is done by the process's one completion core (no thread, no executor per
    call; 10,000 concurrent waits add no thread); the readiness it reports lags Ray's by at
    most one of the core's slices, so at the deadline ``ready`` may miss a ref that became
    ready within that slice.

    Cancellation: ``wait`` only observes. A cancelled ``wait`` (``task.cancel()``, a cancel
    scope) stops watching the refs at once and raises the cancellation; it cancels no Ray
    work and leaves the refs usable. ``anyio.fail_after`` around it therefore behaves like
    ``timeout=``, except that it raises ``TimeoutError`` instead of returning the split:
    nothing is cancelled in Ray either way.
    """
    items = _wait_refs(refs)
    timeout = _wait_timeout(timeout)
    for i, item in enumerate(items):
        if isinstance(item, ObjectRefGenerator):
            raise TypeError(
                f"refs[{i}] must be a ray.ObjectRef, got ObjectRefGenerator; iterate a "
                "streaming generator with asyncpool.as_completed"
            )
        _check_ref(item, f"refs[{i}]")
    if isinstance(num_returns, bool) or not isinstance(num_returns, int):
        raise TypeError(
            f"num_returns must be an int, got {num_returns!r} ({type(num_returns).__name__})"
        )
    _validate.boolean(fetch_local, "fetch_local")
    if not items:
        return [], []
    if len(set(items)) != len(items):
        raise ValueError("refs must be unique ObjectRefs (ray.wait's rule), got duplicates")
    if not 1 <= num_returns <= len(items):
        raise ValueError(
            f"num_returns must be between 1 and len(refs) = {len(items)}, got {num_returns}"
        )
    items = list(items)  # the caller may mutate its list while this waits
    if timeout == 0:
        # A poll: Ray answers from what it knows now, without blocking.
        ready, _ = ray.wait(items, num_returns=len(items), timeout=0, fetch_local=fetch_local)
        done = set(ready)
        return _split_ready(items, [ref in done for ref in items], num_returns)

    loop = asyncio.get_running_loop()
    seen: set[int] = set()
    enough: asyncio.Future[None] = loop.create_future()

    def deliver(batch: list[_completion.Item]) -> None:
        if enough.done():
            return
        for position, value, is_error in batch:
            if is_error:  # only the core's own failure (Ray went away): no value is fetched
                enough.set_exception(value)
                return
            seen.add(position)
        if len(seen) >= num_returns:
            enough.set_result(None)

    sub = _completion.subscribe(
        items, deliver, loop=loop, values=False, fetch_local=fetch_local, prompt=True
    )
    try:
        with anyio.move_on_after(math.inf if timeout is None else timeout):
            await enough
    finally:
        # Stop watching (cancelled or not); what is still running is left alone.
        sub.close()
    return _split_ready(items, seen, num_returns)
