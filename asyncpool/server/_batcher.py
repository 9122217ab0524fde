"""Coalescing the server's concurrent verifications into batched Ray tasks.

One HTTP request is one verification, but one Ray task per verification costs a few ms of
driver and raylet CPU, which on a small machine competes with the programs themselves. So the
server keeps ONE long-lived ``TaskPool.map`` over every request's job (:meth:`Batcher.run`):
the map packs what is ready into Ray tasks of up to the pool's ``batch_size`` items, sends a
partial batch when nothing more arrives within its short linger (so a lone request is never
held back), bounds what is in flight by its window, and yields ``(index, result)`` per item.

How a result finds its request, exactly: the map takes the items of an async input in one
task, in order, and numbers them 0, 1, 2... in the order it takes them. The only input is
:meth:`Batcher._items`, which registers each job under the next number *before* yielding it
(``inside[seq] = job``), with no await between the two, so the job yielded k-th is the map's
index k. The item also carries ``seq`` to the worker, which echoes it back with the verdict;
a verdict whose echo differs from its index is a bug and is delivered as an error, never to
another request.

Hand-written rather than an anyio memory object stream because a job taken from the queue
must never be lost: a cancelled ``receive`` of a memory object stream can drop the item that
was being handed to it, while here a job leaves the deque and is registered in one step.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import anyio

from asyncpool.errors import PoolClosedError
from asyncpool.tasks import TaskPool

__all__ = ["Batcher", "ServerClosing", "Ticket"]

log = logging.getLogger("asyncpool.serve")


class ServerClosing(Exception):
    """The server is shutting down: the verification was not (or will not be) finished."""


@dataclass(eq=False)
class Ticket:
    """One request's verification: what the worker runs and where its verdict goes."""

    kind: str
    job: Any
    future: asyncio.Future[dict[str, Any]]
    #: The map (its generation) that took this job; ``None`` while it waits in the queue.
    generation: int | None = None


@dataclass
class _Map:
    """The state of one run of the long-lived map (a new one after a restart)."""

    generation: int
    inside: dict[int, Ticket] = field(default_factory=dict)  # by the map's index
    live: int = 0  # jobs inside whose request still waits
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)


class Batcher:
    """Feeds every request's job through one long-lived ``pool.map`` and routes the verdicts.

    ``put`` queues a job and returns the future its request awaits; :meth:`run` (a task of the
    server's lifespan) runs the map until :meth:`close`. The pool's function must take one
    ``(seq, kind, job)`` item and return ``(seq, outcome)``.

    What is guaranteed:

    * each request gets its own verdict, or an error meant for it: an item that fails alone
      fails only its own request; a batch that fails as a whole (a worker lost past Ray's
      retries) delivers its error to each of its items;
    * a request whose client leaves before the map took its job runs nothing. Once taken,
      an item cannot be cancelled on its own (it shares its Ray task with others): its verdict
      is dropped when it arrives. When every request inside the map has left, the map is
      closed, which cancels its Ray tasks, and a new one is opened for what comes next;
    * :meth:`close` (and :meth:`fail_waiting`) answer every request still waiting with
      :class:`ServerClosing` at once; nothing waits on a pool that is gone.
    """

    def __init__(self, pool: TaskPool[..., Any]) -> None:
        self.pool = pool
        self.closed = False
        self._queue: deque[Ticket] = deque()
        self._arrived = asyncio.Event()
        self._map: _Map | None = None
        self._generation = 0

    # -- requests

    def put(self, kind: str, job: Any) -> Ticket:
        """Queue one verification; the ticket's future gets its outcome (or its error).

        Raises :class:`ServerClosing` once the batcher is closed. Never blocks: admission
        (the server's ``max_pending``) bounds what is queued.
        """
        if self.closed:
            raise ServerClosing("the server is shutting down")
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        ticket = Ticket(kind, job, future)
        self._queue.append(ticket)
        self._arrived.set()
        return ticket

    def leave(self, ticket: Ticket) -> None:
        """The request of ``ticket`` no longer waits (its client left): drop its verdict.

        A job still queued is skipped when the map reaches it; one inside the map runs on with
        its batch. When no request inside the map waits any more, the map is restarted,
        which cancels its Ray tasks.
        """
        if ticket.future.done():
            return
        ticket.future.cancel()
        current = self._map
        if current is None or ticket.generation != current.generation:
            return  # still queued: skipped when the map reaches it
        current.live -= 1
        if current.live == 0:
            log.info("every request inside the verification map left: cancelling its Ray tasks")
            current.scope.cancel()

    def stop_admitting(self) -> None:
        """``put`` raises :class:`ServerClosing` from now on; what was put still runs."""
        self.closed = True
        self._arrived.set()

    def fail_waiting(self, error: BaseException) -> None:
        """Every request still waiting gets ``error`` now; later ``put`` raise it too."""
        self.closed = True
        self._arrived.set()
        jobs = list(self._queue)
        self._queue.clear()
        if self._map is not None:
            jobs += self._map.inside.values()
            self._map.live = 0
        for job in jobs:
            if not job.future.done():
                job.future.set_exception(error)

    def close(self) -> None:
        """Answer what waits with :class:`ServerClosing` and stop :meth:`run`. Idempotent."""
        self.fail_waiting(ServerClosing("the server is shutting down"))
        if self._map is not None:
            self._map.scope.cancel()

    # -- figures for /metrics

    @property
    def queued(self) -> int:
        """Requests waiting and not yet taken by the map."""
        return sum(1 for job in self._queue if not job.future.done())

    @property
    def taken(self) -> int:
        """Items the map took whose verdict has not come back (left requests' included)."""
        return len(self._map.inside) if self._map is not None else 0

    # -- the map

    async def run(self) -> None:
        """Run the map until :meth:`close` or the pool closes; restart it when every request
        inside it left, or when it failed unexpectedly (logged; its requests get the error).

        Cancellation: the map is closed (its Ray tasks cancelled); waiting requests are left to
        :meth:`close`.
        """
        try:
            while not self.closed:
                self._generation += 1
                current = _Map(self._generation)
                self._map = current
                error: BaseException | None = None
                with current.scope:
                    try:
                        await self._consume(current)
                    except PoolClosedError as exc:
                        error = ServerClosing(f"the verification pool closed: {exc}")
                        self.closed = True
                    except Exception as exc:  # never expected: keep serving
                        log.exception("the verification map failed; restarting it")
                        error = exc
                self._after(current, error)
                if error is not None and not self.closed:
                    await anyio.sleep(0.5)  # a map that keeps failing must not spin
        finally:
            self._map = None

    def _after(self, current: _Map, error: BaseException | None) -> None:
        """What a map that ended leaves behind: requests still waiting inside it get ``error``;
        after a restart (no error, not closing) they go back to the front of the queue. Those
        are jobs the map took after the restart was decided; their batch may have started,
        so such a program can run twice, which a sandboxed run allows."""
        waiting = [t for _, t in sorted(current.inside.items()) if not t.future.done()]
        current.inside.clear()
        if error is None and not self.closed:
            for ticket in reversed(waiting):
                ticket.generation = None
                self._queue.appendleft(ticket)
            if waiting:
                self._arrived.set()
            return
        for ticket in waiting:
            ticket.future.set_exception(error or ServerClosing("the server is shutting down"))

    async def _consume(self, current: _Map) -> None:
        async with self.pool.map(self._items(current), return_exceptions=True) as stream:
            async for index, value in stream:
                job = current.inside.pop(index)
                if job.future.done():  # its client left (or the server is closing)
                    continue
                current.live -= 1
                if isinstance(value, BaseException):
                    job.future.set_exception(value)
                    continue
                seq, outcome = value
                if seq != index:
                    job.future.set_exception(
                        RuntimeError(f"verdict of item {seq} arrived as item {index}")
                    )
                    continue
                job.future.set_result(outcome)
        self.closed = True  # the input ended: only close() ends it

    async def _items(self, current: _Map) -> AsyncIterator[tuple[int, str, Any]]:
        """The map's one input: queued jobs, each registered under the index the map gives it
        (see the module docstring), skipping those whose client already left."""
        seq = 0
        while True:
            while not self._queue:
                if self.closed:
                    return
                self._arrived.clear()
                await self._arrived.wait()
            job = self._queue.popleft()
            if job.future.done():
                continue
            job.generation = current.generation
            current.inside[seq] = job
            current.live += 1
            yield (seq, job.kind, job.job)
            seq += 1

