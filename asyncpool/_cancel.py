"""Cancelling Ray work: the one place asyncpool calls ``ray.cancel``.

:func:`request` costs O(1) per ref on the caller's thread and never blocks it: the refs go on a
queue that one daemon thread per process (``asyncpool-cancel``) drains in chunks, issuing
``ray.cancel`` off the event loop however many refs a storm cancels at once. :func:`cancel`
does the same and waits (without blocking the loop) until the cancels were issued.

``force=True`` kills the worker running a normal task (a plain ``ray.cancel`` does not
interrupt a task blocked in C code such as ``time.sleep``, Ray issue 32954); Ray refuses force
for actor tasks, which are then cancelled without it (a running *sync* actor method finishes).

Ray's completion race: in Ray 2.60 a ``ray.cancel`` that reaches a normal task in the instant
between its worker's reply being taken off the executing set and the task being completed
(``NormalTaskSubmitter::PushNormalTask``'s callback releases its lock before
``CompletePendingTask``) fails the task, and the completion that follows aborts the *driver*
(``task_manager.cc: Check failed: it != submissible_tasks_.end() Tried to complete task that was
not pending``; the same race as ray-project/ray PR 54798's "retry" variant). On a loaded machine
that instant stretches to hundreds of milliseconds, and closing a pool of fast tasks cancels
many of them in it. So a cancel is issued only after :data:`_GRACE_S`, and only for the refs
that one ``ray.wait(timeout=0)`` then finds unfinished: a task that was finishing has finished
by then and is left alone. The grace delays only the Ray-side stop; callers already got their
error (a timeout, a closed pool) when they asked.

Lost cancels: a cancel that reaches a task while it is between scheduling states can be dropped
(Ray issues 24359, 52703), and the task then runs to its end. Every cancelled ref is therefore
*followed*: when its retry time comes, one ``ray.wait(timeout=0)`` over only the refs that are
due tells which settled (dropped from the book) and which did not (cancelled again, next retry
after twice the delay, up to ``_MAX_DELAY_S``), for at most ``_HORIZON_S`` seconds. The book
holds at most ``_MAX_FOLLOWED`` refs: beyond that the oldest are dropped first and counted
(``stats()["dropped"]``). So memory is bounded by the cap and the work per ref by the number of
backoff steps, never a re-scan of every cancelled ref.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, TypeAlias

import ray
from ray import ObjectRef, ObjectRefGenerator

from ._completion import ray_session
from ._per_process import PerProcess

__all__ = ["cancel", "request", "stats"]

Cancellable: TypeAlias = "ObjectRef[Any] | ObjectRefGenerator[Any]"

#: ``ray.cancel`` calls issued between two looks at the follow-up book and the waiters.
_CHUNK = 256
#: How long after it was asked for a cancel is issued (see the module docstring).
_GRACE_S = 0.2
#: How many cancelled refs are followed at most (the oldest are dropped first beyond it).
_MAX_FOLLOWED = 10_000
#: First check of a cancelled ref, then twice as late each time, up to _MAX_DELAY_S.
_FIRST_DELAY_S = 0.5
_MAX_DELAY_S = 8.0
#: A ref still running this long after its first cancel is given up on.
_HORIZON_S = 60.0


def _cancel_one(ref: Cancellable, force: bool) -> None:
    """``ray.cancel`` quietly: forced when asked and allowed, plain for actor tasks."""
    try:
        ray.cancel(ref, force=force, recursive=True)
    except ValueError:
        # force=True is not supported for actor tasks: cancel those without it.
        with contextlib.suppress(Exception):
            ray.cancel(ref, force=False, recursive=True)
    except Exception:
        # Ray raises for refs it cannot cancel (already freed, put objects, Ray gone);
        # there is nothing left to stop then.
        pass


@dataclass(eq=False)
class _Followed:
    ref: ObjectRef[Any]
    force: bool
    first: float
    due: float
    delay: float


class _Book:
    """Cancelled refs not known to have settled, with their next check time.

    Pure bookkeeping (no Ray calls, an explicit clock) so that its bounds can be checked
    directly: at most ``cap`` entries (oldest dropped first, counted), and :meth:`due` returns
    only entries whose time has come.
    """

    def __init__(
        self,
        cap: int = _MAX_FOLLOWED,
        *,
        first_delay: float = _FIRST_DELAY_S,
        max_delay: float = _MAX_DELAY_S,
        horizon: float = _HORIZON_S,
    ) -> None:
        self.cap = cap
        self.first_delay = first_delay
        self.max_delay = max_delay
        self.horizon = horizon
        self._entries: OrderedDict[ObjectRef[Any], _Followed] = OrderedDict()
        self._heap: list[tuple[float, int, _Followed]] = []
        self._seq = 0
        self.dropped = 0  # followed refs pushed out by the cap
        self.expired = 0  # refs still unsettled at the horizon
        self.checked = 0  # ref checks done, in all

    def __len__(self) -> int:
        return len(self._entries)

    def add(self, ref: ObjectRef[Any], force: bool, now: float) -> None:
        old = self._entries.pop(ref, None)
        entry = _Followed(ref, force, now if old is None else old.first, now, self.first_delay)
        entry.due = now + entry.delay
        self._entries[ref] = entry
        self._push(entry)
        while len(self._entries) > self.cap:
            self._entries.popitem(last=False)
            self.dropped += 1
        if len(self._heap) > 2 * self.cap + 64:  # stale heap entries of dropped refs
            self._heap = [(e.due, s, e) for _, s, e in self._heap if self._live(e)]
            heapq.heapify(self._heap)

    def _push(self, entry: _Followed) -> None:
        self._seq += 1
        heapq.heappush(self._heap, (entry.due, self._seq, entry))

    def _live(self, entry: _Followed) -> bool:
        return self._entries.get(entry.ref) is entry

    def next_due(self) -> float | None:
        while self._heap and not self._live(self._heap[0][2]):
            heapq.heappop(self._heap)
        return self._heap[0][0] if self._heap else None

    def due(self, now: float, limit: int) -> list[_Followed]:
        """Up to ``limit`` entries whose check time has come (taken off the schedule)."""
        out: list[_Followed] = []
        while self._heap and len(out) < limit and self._heap[0][0] <= now:
            _, _, entry = heapq.heappop(self._heap)
            if self._live(entry) and entry.due <= now:
                out.append(entry)
        self.checked += len(out)
        return out

    def settled(self, entry: _Followed) -> None:
        if self._live(entry):
            del self._entries[entry.ref]

    def again(self, entry: _Followed, now: float) -> bool:
        """Reschedule an unsettled entry; False (and forgotten) once past the horizon."""
        if not self._live(entry):
            return False
        if now - entry.first >= self.horizon:
            del self._entries[entry.ref]
            self.expired += 1
            return False
        entry.delay = min(self.max_delay, entry.delay * 2)
        entry.due = now + entry.delay
        self._push(entry)
        return True

    def clear(self) -> None:
        self._entries.clear()
        self._heap.clear()


class _Canceller:
    """The queue, the thread that drains it, and the follow-up book."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        #: (ref, force, not before): FIFO, so ``not before`` only grows along the queue.
        self._queue: deque[tuple[Cancellable, bool, float]] = deque()
        self._enqueued = 0
        self._issued = 0
        self._waiters: list[tuple[int, int, Callable[[], None]]] = []
        self._waiter_seq = 0
        self._book = _Book()
        self._thread: threading.Thread | None = None

    def request(self, refs: Iterable[Cancellable], force: bool) -> int:
        """Queue the refs; return the ticket that :meth:`when_issued` can wait for."""
        with self._lock:
            before = len(self._queue)
            not_before = time.monotonic() + _GRACE_S
            self._queue.extend((ref, force, not_before) for ref in refs)
            self._enqueued += len(self._queue) - before
            ticket = self._enqueued
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="asyncpool-cancel", daemon=True
                )
                self._thread.start()
            else:
                self._wake.notify()
            return ticket

    def when_issued(self, ticket: int, callback: Callable[[], None]) -> bool:
        """Run ``callback`` (in the thread) once ``ticket`` is issued; False if it already is."""
        with self._lock:
            if self._issued >= ticket:
                return False
            self._waiter_seq += 1
            heapq.heappush(self._waiters, (ticket, self._waiter_seq, callback))
            return True

    def stats(self) -> dict[str, int]:
        with self._lock:
            return {
                "queued": len(self._queue),
                "issued": self._issued,
                "followed": len(self._book),
                "dropped": self._book.dropped,
                "expired": self._book.expired,
                "checked": self._book.checked,
            }

    def _run(self) -> None:
        while True:
            with self._lock:
                while True:
                    now = time.monotonic()
                    ready_at = self._queue[0][2] if self._queue else None
                    if ready_at is not None and ready_at <= now:
                        break
                    next_due = self._book.next_due()
                    if next_due is not None and next_due <= now:
                        break
                    wakes = [t for t in (ready_at, next_due) if t is not None]
                    self._wake.wait(min(wakes) - now if wakes else None)
                chunk: list[tuple[Cancellable, bool, float]] = []
                while self._queue and len(chunk) < _CHUNK and self._queue[0][2] <= now:
                    chunk.append(self._queue.popleft())
            # Under Ray's init/shutdown lock, including where this thread may drop the last
            # reference to a ref (the book forgetting one).
            with ray_session():
                alive = ray.is_initialized()  # never auto-connect from this thread
                unfinished = _unfinished(chunk) if alive and chunk else []
                for ref, force in unfinished:
                    _cancel_one(ref, force)
                done: list[Callable[[], None]] = []
                with self._lock:
                    self._issued += len(chunk)
                    now = time.monotonic()
                    if alive:
                        for ref, force in unfinished:
                            if isinstance(ref, ObjectRef):
                                self._book.add(ref, force, now)
                    else:
                        self._book.clear()
                    while self._waiters and self._waiters[0][0] <= self._issued:
                        done.append(heapq.heappop(self._waiters)[2])
                    due = self._book.due(now, _CHUNK)
                del chunk, unfinished
                for callback in done:
                    callback()
                if due:
                    self._follow_up(due)
                del due

    def _follow_up(self, due: list[_Followed]) -> None:
        refs = [entry.ref for entry in due]
        try:
            with ray_session():
                if not ray.is_initialized():  # never auto-connect from this thread
                    raise RuntimeError("Ray is not initialized")
                ready, _ = ray.wait(refs, num_returns=len(refs), timeout=0, fetch_local=False)
        except Exception:  # Ray gone: nothing to follow any more
            with self._lock:
                self._book.clear()
            return
        settled = set(ready)
        again: list[_Followed] = []
        with self._lock:
            now = time.monotonic()
            for entry in due:
                if entry.ref in settled:
                    self._book.settled(entry)
                elif self._book.again(entry, now):
                    again.append(entry)
        with ray_session():
            if not ray.is_initialized():
                return
            for entry in again:
                _cancel_one(entry.ref, entry.force)


def _unfinished(chunk: list[tuple[Cancellable, bool, float]]) -> list[tuple[Cancellable, bool]]:
    """The entries whose task has not finished (all of them when Ray cannot tell)."""
    plain = list(dict.fromkeys(ref for ref, _, _ in chunk if isinstance(ref, ObjectRef)))
    try:
        ready, _ = (
            ray.wait(plain, num_returns=len(plain), timeout=0, fetch_local=False)
            if plain else ([], [])
        )
    except Exception:
        ready = []
    finished = set(ready)
    return [(ref, force) for ref, force, _ in chunk
            if not (isinstance(ref, ObjectRef) and ref in finished)]


_CANCELLER: PerProcess[_Canceller] = PerProcess(_Canceller)


def _canceller() -> _Canceller:
    return _CANCELLER.get()


def request(refs: Iterable[Cancellable], *, force: bool) -> None:
    """Cancel ``refs`` soon, from the canceller thread; returns at once (any thread).

    O(1) per ref here. Refs that already finished are left alone; actor tasks are cancelled
    without force. Each plain ref is followed until it settles (see the module docstring).
    """
    _canceller().request(refs, force)


async def cancel(refs: Iterable[Cancellable], *, force: bool) -> None:
    """Cancel ``refs`` and wait until every ``ray.cancel`` was issued (not until the tasks
    stopped: a task stops at Ray's pace). Never blocks the event loop.

    Cancellation: the cancels are issued anyway; only the wait is abandoned.
    """
    canceller = _canceller()
    ticket = canceller.request(refs, force)
    loop = asyncio.get_running_loop()
    issued: asyncio.Future[None] = loop.create_future()

    def wake() -> None:
        with contextlib.suppress(RuntimeError):  # a closed loop: nobody waits any more
            loop.call_soon_threadsafe(_resolve, issued)

    if canceller.when_issued(ticket, wake):
        await issued


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


def stats() -> dict[str, int]:
    """Counters of the canceller (queued, issued, followed, dropped, expired, checked)."""
    return _canceller().stats()


def helper_threads() -> list[threading.Thread]:
    """The canceller's live thread, if any (for tests and benchmarks that count threads)."""
    canceller = _CANCELLER.peek()
    thread = canceller._thread if canceller is not None else None
    return [thread] if thread is not None and thread.is_alive() else []
