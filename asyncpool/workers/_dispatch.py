"""Dispatch: the results of one WorkerGroup.dispatch/broadcast, and the thread that sends it.

Owns :class:`Dispatch` (collecting the calls' results in completion or shard order, failing
with :class:`~asyncpool.errors.WorkerFailedError` on a dead worker after yielding what already
arrived, cancelling what is left when it is left early or dropped) and the one sender thread
that sends every dispatch's calls off the event loop, in the order they were made.
Must not: plan targets or know the group (it gets the refs and each call's
:class:`WorkerMetadata`), or wait for results any other way than through the public
:func:`asyncpool.refs.as_completed`, so that it shares the one completion core of refs and pools.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
from collections import deque
from collections.abc import Callable, Generator, Sequence
from typing import Any, TypeAlias

import anyio
import ray
from ray.exceptions import RayActorError, RayError

from .. import _cancel
from .._resource import AsyncResource
from ..errors import WorkerFailedError, WorkerGroupStateError
from ..refs import AsCompleted, as_completed
from ._plan import WorkerMetadata

__all__ = ["Dispatch", "cancel_quietly", "send_off_loop"]

log = logging.getLogger("asyncpool.workers")

Ref: TypeAlias = "ray.ObjectRef[Any]"
Sent: TypeAlias = "concurrent.futures.Future[list[list[Ref]]]"

_sender: concurrent.futures.ThreadPoolExecutor | None = None
_sender_lock = threading.Lock()


def _the_sender() -> concurrent.futures.ThreadPoolExecutor:
    """One thread per process sends every dispatch (FIFO: the calls keep their order)."""
    global _sender
    with _sender_lock:
        if _sender is None:
            _sender = concurrent.futures.ThreadPoolExecutor(
                max_workers=1, thread_name_prefix="asyncpool-dispatch"
            )
        return _sender


def send_off_loop(send: Callable[[], list[list[Ref]]]) -> Sent:
    """Run ``send`` (serialising arguments, ``ray.put`` of shards, ``.remote`` calls) on the
    sender thread; the future gives its refs. Calls made later are sent after these."""
    return _the_sender().submit(send)


def cancel_quietly(refs: Sequence[Ref]) -> None:
    """Cancel every call (a finished one is left as it is) through the one canceller
    (``_cancel``): returns at once, from any thread, never raises."""
    if refs:
        _cancel.request(list(refs), force=False)


def _cancel_after_send(sent: Sent | list[list[Ref]]) -> None:
    """On the sender thread, after the send (FIFO): cancel the calls it made."""
    if isinstance(sent, concurrent.futures.Future):
        if sent.cancelled() or sent.exception() is not None:
            return  # nothing was sent (a failed send cancels what it made itself)
        sent = sent.result()
    cancel_quietly([ref for group in sent for ref in group])


class Dispatch(AsyncResource):
    """The results of one :meth:`WorkerGroup.dispatch` / :meth:`WorkerGroup.broadcast` call.

    The calls are sent when the Dispatch is made, by a sender thread (so that serialising
    shards never blocks the event loop); this object collects them. Use it one of two ways,
    once (a second use raises :class:`~asyncpool.errors.WorkerGroupStateError`):

    * ``async for shard_index, value in dispatch`` -- results in completion order (preferably
      inside ``async with dispatch:`` so that leaving early cancels the rest);
    * ``values = await dispatch`` -- the values in shard order.

    One result per shard: the worker's return value, or for ``only_on="all_tied_workers"`` the
    tied group's *leader's* value, given once every worker of the group has finished.

    Failures: a worker that died (its process exited, its node was lost) fails the Dispatch with
    :class:`~asyncpool.errors.WorkerFailedError` (``rank``, ``name``, ``node_id`` of that worker;
    the Ray ``ActorDiedError``/``ActorUnavailableError`` as ``__cause__``). An exception raised
    by the method itself is raised as its own type, and so is an error sending the calls (an
    argument Ray cannot serialise). Either way the results that had already arrived are
    yielded first, then the error is raised and the calls still running are cancelled (much as
    a task group cancels the siblings of a failed task: in a collective, the other workers
    would otherwise wait forever for the dead one).

    Cancellation: leaving early -- ``break`` inside ``async with``, an exception, cancellation
    of the consuming task, ``anyio.fail_after`` around it -- cancels the calls still pending
    (``ray.cancel`` through asyncpool's one canceller: a call queued on an actor is dropped; a
    running *sync* method runs to its end, since Ray cannot interrupt an actor task; a running
    ``async def`` method is cancelled). A Dispatch dropped half-consumed is closed the same way
    when the garbage collector reclaims it; one never consumed lets its calls run to completion.
    """

    def __init__(
        self,
        method: str,
        refs: list[list[Ref]] | Sent,
        targets: list[list[WorkerMetadata]],
    ) -> None:
        self._method = method
        self._targets = targets
        self._sent: Sent | None = None
        self._refs: list[list[Ref]] | None = None
        if isinstance(refs, concurrent.futures.Future):
            self._sent = refs
        else:
            self._refs = [list(group) for group in refs]
        self._owner = [(key, m) for key, group in enumerate(targets) for m in range(len(group))]
        self._waiting = [len(group) for group in targets]
        self._leader_values: list[Any] = [None] * len(targets)
        self._stream: AsCompleted[int, Any] | None = None
        self._ready: deque[tuple[int, Any]] = deque()
        self._failure: BaseException | None = None
        self._finished = not self._owner
        self._mode: str | None = None

    # -- information

    @property
    def method(self) -> str:
        return self._method

    @property
    def refs(self) -> list[list[Ref]]:
        """The ObjectRefs of the calls, per shard (one per worker of the shard's target).

        Waits for the sender thread if the calls are still being sent (then it blocks; call
        it after consuming the Dispatch, or accept a short wait), and raises what sending
        raised.
        """
        if self._refs is None:
            assert self._sent is not None
            self._refs = self._sent.result()
        return [list(group) for group in self._refs]

    @property
    def ranks(self) -> list[list[int]]:
        """The ranks each shard was sent to."""
        return [[m.rank for m in group] for group in self._targets]

    def __len__(self) -> int:
        """How many results the Dispatch gives (one per shard)."""
        return len(self._targets)

    def __repr__(self) -> str:
        return f"<Dispatch {self._method!r}: {len(self)} shard(s), ranks {self.ranks}>"

    # -- consumption

    def _begin(self, mode: str) -> None:
        if self._mode is None:
            self._mode = mode
        elif self._mode != mode or mode == "await":
            raise WorkerGroupStateError(
                f"Dispatch {self._method!r} was already consumed: a Dispatch is consumed once "
                "(iterate it with async for, or await it; not both, not twice)"
            )

    def __aiter__(self) -> Dispatch:
        return self

    async def __anext__(self) -> tuple[int, Any]:
        """The next ``(shard_index, value)`` in completion order.

        Cancellation: cancels the calls still pending (see the class docstring).
        """
        if self._mode != "iterate":
            self._begin("iterate")
        return await self._next()

    async def _next(self) -> tuple[int, Any]:
        while not self._ready:
            if self._finished:
                if self._failure is not None:
                    failure, self._failure = self._failure, None
                    raise failure
                raise StopAsyncIteration
            await self._pull()
        return self._ready.popleft()

    async def _started(self) -> AsCompleted[int, Any]:
        """The results stream, made once the calls are sent (awaited off the loop)."""
        if self._stream is None:
            if self._refs is None:
                assert self._sent is not None
                # Shielded: the send goes on (its calls are cancelled by aclose if need be).
                self._refs = await asyncio.shield(asyncio.wrap_future(self._sent))
            flat = [ref for group in self._refs for ref in group]
            self._stream = as_completed(flat, return_exceptions=True)
        return self._stream

    async def _pull(self) -> None:
        """Move the next finished call(s) into ``_ready``; on a failure, drain what arrived."""
        try:
            stream = await self._started()
            index, value = await stream.__anext__()
        except StopAsyncIteration:
            self._finished = True
            return
        except BaseException:
            self._finished = True
            raise
        self._take(index, value)
        if self._failure is None:
            return
        # Failed: take what has already arrived (without waiting), then stop the rest.
        try:
            while True:
                item: tuple[int, Any] | None = None
                with anyio.move_on_after(0):
                    item = await stream.__anext__()
                if item is None:
                    break
                self._take(*item)
        except StopAsyncIteration:
            pass
        finally:
            self._finished = True
            await stream.aclose()

    def _take(self, index: int, value: Any) -> None:
        key, member = self._owner[index]
        if isinstance(value, RayError):
            if self._failure is None:
                self._failure = self._error(key, member, value)
            else:
                log.debug("dispatch %r: further failure after the first: %r", self._method, value)
            return
        if member == 0:
            self._leader_values[key] = value
        self._waiting[key] -= 1
        if self._waiting[key] == 0:
            self._ready.append((key, self._leader_values[key]))
            self._leader_values[key] = None

    def _error(self, key: int, member: int, err: RayError) -> BaseException:
        if not isinstance(err, RayActorError):
            return err  # the method's own exception (as its own type), or a Ray system error
        meta = self._targets[key][member]
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        failed = WorkerFailedError(
            f"worker rank {meta.rank} ({meta.name}, node {meta.node_id}) failed during "
            f"{self._method!r} of shard {key}: {type(err).__name__}: {first}",
            rank=meta.rank,
            name=meta.name,
            node_id=meta.node_id,
        )
        failed.__cause__ = err
        return failed

    async def _collect(self) -> list[Any]:
        self._begin("await")
        out: list[Any] = [None] * len(self)
        try:
            while True:
                try:
                    key, value = await self._next()
                except StopAsyncIteration:
                    return out
                out[key] = value
        finally:
            if not self._finished:
                await self.aclose()

    def __await__(self) -> Generator[Any, None, list[Any]]:
        """``await dispatch``: every value, in shard order.

        Cancellation: cancels the calls still pending; the first failure raises (as for the
        iteration) and cancels the rest.
        """
        return self._collect().__await__()

    async def aclose(self) -> None:
        """Stop collecting; cancel the calls still pending (``ray.cancel``, as described in
        the class docstring). Results and a failure not yet taken are dropped. Idempotent.

        Cancellation: nothing here waits for the workers; the cancel requests are sent (or,
        for calls still being sent, queued behind them on the sender thread) before it returns.
        """
        self._finished = True
        self._ready.clear()
        self._failure = None
        if self._stream is not None:
            await self._stream.aclose()
        else:
            self._cancel_unstarted()

    def _cancel_unstarted(self) -> None:
        sent = self._refs if self._refs is not None else self._sent
        if sent is not None:
            send_cancel = _the_sender().submit(_cancel_after_send, sent)
            send_cancel.add_done_callback(_log_failure)

    def __del__(self) -> None:
        # A Dispatch dropped half-consumed: cancel what is still pending (nothing here may
        # block or raise). Never consumed: its calls run on, as documented.
        if self._mode is None or self._finished:
            return
        self._finished = True
        try:
            if self._refs is not None:
                cancel_quietly([ref for group in self._refs for ref in group])
            elif self._sent is not None:
                _the_sender().submit(_cancel_after_send, self._sent)
        except Exception:  # interpreter shutting down: the canceller or the sender is gone
            pass


def _log_failure(future: concurrent.futures.Future[Any]) -> None:
    if not future.cancelled() and future.exception() is not None:
        log.debug("dispatch: cancelling failed", exc_info=future.exception())
