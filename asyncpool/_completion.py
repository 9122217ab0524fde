"""The one completion core: every path from a Ray ref to an event loop goes through here.

One daemon thread per process (``asyncpool-completions``) multiplexes batched ``ray.wait``
over the pending refs of every subscriber (``gather``, ``as_completed``, the pools, worker
groups), fetches and deserialises the values that are ready in that thread (one batched
``ray.get``; one ``ray.get`` per ref only when one of the batch failed), and hands them to each
subscriber's event loop in coalesced batches: one ``call_soon_threadsafe`` per loop per batch,
however many subscribers that loop has. The event loop only ever sees finished values.

Why hand-written and not Ray's completion callbacks: a per-ref callback
(``ref.future().add_done_callback``, ``ref._on_completed``) costs about 130-150 us of driver CPU
per ref on Ray 2.60, while a batched ``ray.wait`` costs about 1 us per pending ref per call and
the batched fetch about 28 us per ready ref in all. So the cost is in the scans, and the core
bounds it: the time between two scans (the *slice*) grows with the number of pending refs
(``_FLOOR_S`` for a pool's small in-flight set, ``_PER_REF_S`` more per pending ref), so that
scans take a bounded share of one core whatever the scale. When nothing finished for a few
slices and nothing new was subscribed (a pool's tasks all running long), the blocking wait
stretches up to ``_IDLE_MAX_S`` (a finish still ends it at once: ``ray.wait`` is event-driven);
so a new subscription is picked up within one slice while results flow and within
``_IDLE_MAX_S`` otherwise, and a small idle in-flight set costs well under 1% of a core instead
of a ``ray.wait`` every floor slice. When nothing is pending the thread sleeps on a condition
(no polling). A streaming subscriber's result is handed over as soon as it is ready while fewer
than ``_BATCH_MIN_REFS`` refs are pending, if it is *prompt* (a pool's slot, ``wait``: work
waits on each result); from that many on, a scan collects a batch (an eighth of the pending refs,
or up to ``_BATCH_MAX_S``) before it returns. A finite stream (``as_completed``) waits on no
single result: while results flow it gets them in batches, one slice apart while few are pending
and up to ``_GATHER_MAX_S`` apart while many are, as a gather does, so that the scans' cost is
shared by more results.

The exception is a prompt subscriber's refs while few are pending (a pool's few slots): while
the process has fewer than ``_CALLBACK_MAX`` refs pending in all (scanned or called back),
:meth:`Subscription.extend` hands a prompt subscriber's new refs to Ray's per-ref callback
instead (what ``await ref`` uses), and the scans never see them. There the per-ref cost is
what the hand-written ``Semaphore`` + ``await ref`` pays too, and a result reaches the loop as
soon as Ray has it, where a scan, blocked in ``ray.wait`` on the refs it already had, could not
pick up the ref a freed slot submitted until its slice ended (bench_scale, 10,000 submits
through 4 slots against ``Semaphore(4)`` + ``await ref``, four alternating pairs: 1.05-1.14x
scanned, 0.99-1.09x called back). Where many refs are pending the scans cost less: with the
first 16 refs of every prompt set called back (16 of the 64 calls a batched ``ActorPool.map``
keeps in flight), that map's driver CPU per item was 64-75 us, against 59-62 us with no
callbacks and 54-59 us under this rule (bench_driver_cpu, alternating, a loaded machine). A
callback that Ray never calls (it shut down) is found by the waiter, which checks
``ray.is_initialized`` every ``_CALLBACK_CHECK_S`` while such refs are pending and then fails
them as below.

If Ray is shut down (or ``ray.wait`` fails) under it, every pending subscriber receives an
:class:`~asyncpool.errors.AsyncPoolError` for each position it was still waiting for, and the
core starts afresh. A forked child gets a fresh core (the parent's thread does not exist there).

A subscriber may want readiness only (``asyncpool.wait``): ``values=False`` refs are handed over
as ``(position, None, False)`` and never fetched nor deserialised here, unless another
subscriber wants the same ref's value; ``fetch_local=False`` refs (readiness anywhere in the
cluster, Ray's ``fetch_local=False``) are scanned by a second ``ray.wait`` with
``fetch_local=False`` when no subscriber of theirs needs them local, so the core pulls nothing
to this node for them. Both cost nothing on the scan and hand-over paths while no such
subscription is open.

Subscribers are held only through the ``deliver`` callable they pass: a stream passes a
callable that reaches it through a weak reference, so that a dropped, half-consumed stream can
be collected (and its finaliser close the subscription).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import threading
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager
from typing import Any

import ray
import ray._private.worker as _ray_worker
from ray import ObjectRef
from ray.exceptions import RayError, RayTaskError

from ._per_process import PerProcess
from .errors import AsyncPoolError

__all__ = ["Item", "Subscription", "subscribe"]

#: ``(position in the subscribed refs, value or exception, is_error)``.
Item = tuple[int, Any, bool]
Deliver = Callable[[list[Item]], None]

#: The shortest slice: how promptly a small in-flight set (a pool's 4 slots) is served.
_FLOOR_S = 0.0015
#: The slice grows by this much per pending ref: a scan costs ~1 us per pending ref, so scans
#: take at most ~10-20% of one core (two scans per slice at most) however many refs are pending.
_PER_REF_S = 1e-5
#: The longest blocking wait once nothing finished and nothing new came for a few slices.
_IDLE_MAX_S = 0.01
#: While results flow from at least this many pending refs (a wide pool, a big stream), a scan
#: waits up to ``_BATCH_PER_REF_S`` per pending ref (at most ``_BATCH_MAX_S``; when only
#: gathers wait, which want nothing early, ``_GATHER_MAX_S``) and returns as soon as an eighth
#: of them is ready: one scan per batch of results instead of one per slice. Measured with
#: bench_driver_cpu (ActorPool.map, 512 in flight, loaded machine): ray.wait calls 1819 -> 995
#: and the waiter's ray.wait CPU per result 41 -> 32 us for the same run; a result waits at
#: most ``_BATCH_MAX_S`` longer to be handed over. 32, not 64: ``ActorPool(batch_size=8)`` at
#: 512 items in flight has 64 calls pending (often a few less), whose per-result scans cost
#: the waiter 15 us per item against 6-7 us (bench_driver_cpu, actor_pool_map_batched, 5
#: rounds of 8,000, twice each: items per second 13.1-13.9k -> 14.9k).
_BATCH_MIN_REFS = 32
_BATCH_PER_REF_S = 4e-5
_BATCH_MAX_S = 0.02
#: The same bound when no prompt subscriber waits (gathers and finite streams only).
_GATHER_MAX_S = 0.05
#: Ready refs fetched with one ``ray.get`` at most (bounds the memory of one batch in flight).
_FETCH_CHUNK = 4096
#: A prompt subscriber's refs are served by Ray's per-ref callback while fewer than this many
#: refs are pending in the process in all (see the module docstring); otherwise scanned.
_CALLBACK_MAX = 16
#: While only callback-served refs are pending, how often the waiter checks that Ray is up.
_CALLBACK_CHECK_S = 0.05


class Subscription:
    """One subscriber's refs as the core watches them; made by :func:`subscribe`.

    Thread-safe: :meth:`close` may run on any thread (a garbage-collector finaliser).
    """

    __slots__ = (
        "__weakref__",
        "_called",
        "_closed",
        "_core",
        "_counted",
        "_deliver",
        "_inflight",
        "_local",
        "_loop",
        "_positions",
        "_prompt",
        "_size",
        "_stream",
        "_values",
    )

    def __init__(
        self,
        core: _Core,
        refs: list[ObjectRef[Any]],
        deliver: Deliver,
        loop: asyncio.AbstractEventLoop,
        everything: bool,
        values: bool = True,
        local: bool = True,
        prompt: bool = False,
    ) -> None:
        self._core = core
        #: Whether each result should be handed over as soon as it finishes (see the module
        #: docstring): a stream whose caller waits on each result to do more work.
        self._prompt = prompt and not everything
        #: Whether the core fetches the values (False: readiness only, delivered as None).
        self._values = values
        #: Whether a ref counts as ready only once it is on this node (Ray's fetch_local).
        self._local = local
        self._deliver: Deliver | None = deliver
        self._loop = loop
        #: Whether it wants early batches (a stream) rather than everything at once (gather).
        self._stream = not everything
        #: Whether the core counts it among its streaming subscribers: a stream with positions
        #: still waited for (kept exact as positions are handed over and :meth:`extend` adds).
        self._counted = False
        #: How many positions it has had (the next :meth:`extend` numbers from here).
        self._size = len(refs)
        #: ref -> positions still waited for (a ref given twice has two positions).
        self._positions: dict[ObjectRef[Any], list[int]] = {}
        for position, ref in enumerate(refs):
            self._positions.setdefault(ref, []).append(position)
        #: Batches posted to the loop but not delivered yet.
        self._inflight: list[list[Item]] = []
        #: Its refs that Ray's per-ref callback serves (not scanned), not called back yet.
        self._called: set[ObjectRef[Any]] = set()
        self._closed = False

    @property
    def pending(self) -> int:
        """How many positions have not been handed to ``deliver`` yet."""
        with self._core.lock:
            waiting = sum(len(p) for p in self._positions.values())
            return waiting + sum(len(b) for b in self._inflight)

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def usable(self) -> bool:
        """Open, and watched by this process's core (not one inherited across ``fork``, whose
        thread does not exist in the child): what :meth:`extend` needs."""
        return not self._closed and self._core is _CORE.peek()

    def extend(self, refs: Sequence[ObjectRef[Any]]) -> int:
        """Watch ``refs`` too; they get the positions from the returned one on, in order.

        For a long-lived subscriber that adds refs one call at a time (a pool's engine): one
        subscription for all its calls instead of one per call, so a call costs a few dict
        entries here, and a scan's results reach that subscriber in one batch (one lock and one
        ``deliver`` per batch, not per call). A prompt subscription's refs go to Ray's per-ref
        callback while the process has fewer than ``_CALLBACK_MAX`` refs pending in all (see
        the module docstring). Any thread; raises ``RuntimeError`` once closed.
        """
        core = self._core
        with core.lock:
            if self._closed:
                raise RuntimeError("extend() on a closed subscription")
            first = self._size
            self._size += len(refs)
            positions = self._positions
            new: list[ObjectRef[Any]] = []
            for offset, ref in enumerate(refs):
                held = positions.get(ref)
                if held is None:
                    positions[ref] = [first + offset]
                    new.append(ref)
                else:
                    held.append(first + offset)
            called = core._take_callbacks(self, new) if new and self._prompt else 0
            if called < len(new):
                core._register(self, new[called:])
        for index in range(called):
            ref = new[index]
            try:
                ref._on_completed(functools.partial(self._called_back, ref))
            except Exception:  # Ray is gone: let the waiter find out and fail it clearly
                with core.lock:
                    if core._callback_done(self, ref):
                        core._register(self, [ref])
        return first

    def _called_back(self, ref: ObjectRef[Any], result: Any) -> None:
        """Ray's callback for a ref this subscription took by callback (Ray's own thread)."""
        core = self._core
        if isinstance(result, RayTaskError):
            item: tuple[Any, bool] = (result.as_instanceof_cause(), True)
        else:
            item = (result, isinstance(result, RayError))
        with core.lock:
            if not core._callback_done(self, ref):
                return  # closed, or failed by a shutdown, meanwhile
            positions = self._positions.pop(ref, None)
            if not positions:
                return
            value, is_error = item
            idle = not self._inflight
            self._inflight.append([(p, value, is_error) for p in positions])
            if self._counted and not self._positions:
                core._count(self, -1)
        if idle:  # otherwise a delivery is already on its way and takes this batch too
            core._post({self._loop: [self]})

    def close(self) -> list[int]:
        """Stop watching; ``deliver`` is never called again. Idempotent, any thread.

        Returns the positions whose values were not handed to ``deliver`` (still running,
        or finished but not delivered yet), so the caller can cancel what is left.
        """
        with self._core.lock:
            if self._closed:
                return []
            self._closed = True
            left = [p for positions in self._positions.values() for p in positions]
            left.extend(p for batch in self._inflight for p, _, _ in batch)
            self._core._forget(self)
            self._positions = {}
            self._inflight = []
            self._deliver = None
        left.sort()
        return left

    def __repr__(self) -> str:
        state = "closed" if self._closed else f"{self.pending} pending"
        return f"<Subscription of {self._size} refs, {state}>"


def ray_session() -> AbstractContextManager[Any]:
    """Hold off ``ray.init``/``ray.shutdown`` while a helper thread calls into Ray.

    A call into a core worker that ``ray.shutdown`` is tearing down makes Ray exit the whole
    process ("The core worker has already been shutdown ... The process will exit"), so the
    helper threads take the lock Ray's own ``init``/``shutdown`` hold (a private name of Ray;
    without it, the ``is_initialized`` checks alone remain) around each call.
    """
    lock = getattr(_ray_worker, "_connect_or_shutdown_lock", None)
    return lock if lock is not None else contextlib.nullcontext()


class _RayGone(Exception):
    def __str__(self) -> str:
        return "ray.is_initialized() is False"


def _unwrap(exc: BaseException) -> BaseException:
    """A user exception as its own type (``ray.get`` already does this for task errors)."""
    as_cause = getattr(exc, "as_instanceof_cause", None)
    if isinstance(exc, ray.exceptions.RayTaskError) and as_cause is not None:
        unwrapped: BaseException = as_cause()
        return unwrapped
    return exc


def _scan(
    refs: list[ObjectRef[Any]], first: bool, wait_s: float, *, fetch_local: bool,
    enough: int | None = None,
) -> list[ObjectRef[Any]]:
    """One scan of ``refs``: the ready ones, after at most ``wait_s``.

    ``first``: block until one is ready (event-driven inside Ray) for at most ``wait_s``, so
    that new subscriptions are picked up, then take every ready one; otherwise (results are
    flowing, or only gathers wait) one wait per slice collects a batch and returns early once
    ``enough`` are ready (default: all of them).
    """
    n = len(refs)
    if not n:
        return []
    if first:
        ready, _ = ray.wait(refs, num_returns=1, timeout=wait_s, fetch_local=fetch_local)
        if ready and n > 1:
            ready, _ = ray.wait(refs, num_returns=n, timeout=0, fetch_local=fetch_local)
        return list(ready)
    want = n if enough is None else max(1, min(n, enough))
    ready, _ = ray.wait(refs, num_returns=want, timeout=wait_s, fetch_local=fetch_local)
    if want < n and len(ready) == want:
        # Returned early: take the others that are ready too, in the same scan's batch.
        ready, _ = ray.wait(refs, num_returns=n, timeout=0, fetch_local=fetch_local)
    return list(ready)


def _plan(
    n: int, *, flowing: bool, idle: int, streaming: bool, prompting: bool
) -> tuple[bool, float, int | None]:
    """The next scan of ``n`` pending refs: ``(eager, wait_s, enough)`` for :func:`_scan`.

    ``flowing``: the last scan found results; ``idle``: scans in a row that found none with
    nothing new subscribed; ``streaming`` / ``prompting``: whether a streaming / prompt
    subscriber waits (see the module docstring).
    """
    slice_s = max(_FLOOR_S, n * _PER_REF_S)
    wait_s = max(slice_s, min(_IDLE_MAX_S, _FLOOR_S * 2**idle))
    enough: int | None = None
    # A prompt subscriber of a small set (a pool's few slots) gets each result as it finishes,
    # flowing or not: holding a finished result for the rest of the slice holds its slot too,
    # and the pool ran in lock-step batches. bench_scale, 100k submits through 4 slots against
    # Semaphore(4) + await ref: 1.26x before, 1.18x after (one run each, quiet machine). A
    # scan of fewer than _BATCH_MIN_REFS refs costs little enough to repeat per result. A
    # finite stream's first result is waited for the same way; its tail then comes a slice at
    # a time: per-result scans of a 2,000-ref as_completed's last 64 results had been 97 of
    # its 152 scans.
    eager = streaming and (not flowing or (prompting and n < _BATCH_MIN_REFS))
    if flowing and n >= _BATCH_MIN_REFS:
        # Results flow from a large in-flight set: wait longer per scan but return once an
        # eighth of the set is ready, so a scan's O(n) cost is shared by a batch of results,
        # not paid again every few of them.
        most = _BATCH_MAX_S if prompting else _GATHER_MAX_S
        wait_s = max(wait_s, min(n * _BATCH_PER_REF_S, most))
        enough = n // 8
    return eager, wait_s, enough


def _fetch(ready: list[ObjectRef[Any]]) -> list[tuple[Any, bool]]:
    """The values of refs known to be ready, in order: ``(value or exception, is_error)``."""
    try:
        return [(v, False) for v in ray.get(ready)]
    except Exception:  # one of them failed: find which, one by one
        pass
    out: list[tuple[Any, bool]] = []
    for ref in ready:
        try:
            out.append((ray.get(ref), False))
        except Exception as exc:
            out.append((_unwrap(exc), True))
    return out


class _Core:
    """The waiter thread and what it watches; one per process (see :func:`_core`)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self._wake = threading.Condition(self.lock)
        #: ref -> the subscriptions waiting for it (a dict: O(1) removal when one of many
        #: waiters on a shared ref closes).
        self._watch: dict[ObjectRef[Any], dict[Subscription, None]] = {}
        self._streaming = 0  # open subscriptions that want early batches
        self._prompting = 0  # those of them that are prompt
        self._thread: threading.Thread | None = None
        self._added = False  # a subscription came since the thread last looked
        #: The thread sleeps on ``_wake`` (nothing watched); only then does a new ref notify
        #: it (``Condition.notify`` is Python code: a few us a call on a pool's hot path).
        self._sleeping = False
        #: ... and with no timeout (nothing served by callback either).
        self._sleeping_forever = False
        #: Refs served by Ray's per-ref callback, in all, and the subscriptions that have any.
        self._called_total = 0
        self._called_subs: dict[Subscription, None] = {}
        #: Open subscriptions that want no values / accept readiness anywhere (``wait``);
        #: while both are empty the scan and hand-over paths pay nothing for them.
        self._bare: dict[Subscription, None] = {}
        self._remote: dict[Subscription, None] = {}
        #: ref -> how many of its subscribers accept readiness anywhere: a ref is scanned with
        #: fetch_local=False when that is all of them (O(1) per ref, whatever the fan-in).
        self._remote_refs: dict[ObjectRef[Any], int] = {}
        self._generation = 0  # bumped when the thread resets after a failure

    # -- subscriber side (any thread, under the lock)

    def add(self, sub: Subscription) -> None:
        with self.lock:
            self._register(sub, list(sub._positions))

    def _register(self, sub: Subscription, refs: list[ObjectRef[Any]]) -> None:
        """Watch ``refs``, new to ``sub``, for it; start or wake the thread (lock held)."""
        watch = self._watch
        for ref in refs:
            subs = watch.get(ref)
            if subs is None:
                watch[ref] = {sub: None}
            else:
                subs[sub] = None
        if sub._stream and not sub._counted:
            self._count(sub, 1)
        if not sub._values:
            self._bare[sub] = None
        if not sub._local:
            self._remote[sub] = None
            for ref in refs:
                self._remote_refs[ref] = self._remote_refs.get(ref, 0) + 1
        self._added = True
        if self._thread is None:
            self._start()
        elif self._sleeping:
            self._wake.notify()

    def _start(self) -> None:
        self._thread = threading.Thread(
            target=self._run, args=(self._generation,), name="asyncpool-completions",
            daemon=True,
        )
        self._thread.start()

    def _take_callbacks(self, sub: Subscription, refs: list[ObjectRef[Any]]) -> int:
        """How many of ``refs`` (from the first), new to the prompt ``sub``, Ray's per-ref
        callback serves instead of the scans (while few refs are pending in all); marks them
        so (lock held)."""
        if not (sub._values and sub._local):
            return 0
        taken = min(len(refs), _CALLBACK_MAX - self._called_total - len(self._watch))
        if taken <= 0:
            return 0
        sub._called.update(refs[:taken])
        self._called_total += taken
        self._called_subs[sub] = None
        if sub._stream and not sub._counted:
            self._count(sub, 1)
        # The waiter watches for a shutdown while callbacks are pending (they may never come).
        if self._thread is None:
            self._start()
        elif self._sleeping_forever:
            self._wake.notify()
        return taken

    def _callback_done(self, sub: Subscription, ref: ObjectRef[Any]) -> bool:
        """Unmark a callback-served ref of ``sub``; False if it was not (lock held)."""
        called = sub._called
        if ref not in called:
            return False
        called.discard(ref)
        self._called_total -= 1
        if not called:
            del self._called_subs[sub]
        return True

    def _forget(self, sub: Subscription) -> None:
        """Remove ``sub`` from the watch table (lock held)."""
        for ref in sub._positions:
            subs = self._watch.get(ref)
            if subs is None:
                continue
            subs.pop(sub, None)
            if not subs:
                del self._watch[ref]
        if sub._counted:
            self._count(sub, -1)
        if sub._called:
            self._called_total -= len(sub._called)
            sub._called.clear()
            del self._called_subs[sub]
        self._bare.pop(sub, None)
        if sub in self._remote:
            del self._remote[sub]
            for ref in sub._positions:  # the refs not handed over yet
                count = self._remote_refs.get(ref, 0) - 1
                if count > 0:
                    self._remote_refs[ref] = count
                else:
                    self._remote_refs.pop(ref, None)

    def _count(self, sub: Subscription, delta: int) -> None:
        """Count ``sub`` in (1) or out (-1) of the streaming waiters (lock held)."""
        self._streaming += delta
        if sub._prompt:
            self._prompting += delta
        sub._counted = delta > 0

    def _remote_only(self) -> dict[ObjectRef[Any], None]:
        """The watched refs whose every subscriber accepts readiness anywhere (lock held)."""
        watch = self._watch
        return {
            ref: None
            for ref, count in self._remote_refs.items()
            if ref in watch and count >= len(watch[ref])
        }

    # -- the waiter thread

    def _run(self, generation: int) -> None:
        flowing = False
        idle = 0  # scans in a row that found nothing, with nothing new subscribed
        while True:
            with self.lock:
                gone = False
                while not self._watch:
                    flowing = False
                    self._sleeping = True
                    self._sleeping_forever = not self._called_total
                    try:
                        self._wake.wait(None if self._sleeping_forever else _CALLBACK_CHECK_S)
                    finally:
                        self._sleeping = self._sleeping_forever = False
                    if self._called_total and not ray.is_initialized():
                        gone = True
                        break
                if not gone:
                    refs = list(self._watch)
                    remote = self._remote_only() if self._remote_refs else {}
                    streaming = self._streaming > 0
                    prompting = self._prompting > 0
                    added, self._added = self._added, False
            if gone:  # under refs Ray's callbacks serve, which it may now never call
                self._fail_all(_RayGone(), generation)
                return
            if remote:
                refs = [ref for ref in refs if ref not in remote]
            n = len(refs) + len(remote)
            if added or flowing:
                idle = 0
            eager, wait_s, enough = _plan(
                n, flowing=flowing, idle=idle, streaming=streaming, prompting=prompting
            )
            failure: Exception | None = None
            # Under Ray's init/shutdown lock, including where this thread may drop the last
            # reference to a ref (a subscriber closed meanwhile).
            with ray_session():
                try:
                    if not ray.is_initialized():
                        # Never let ray.wait auto-start or auto-connect Ray from this thread.
                        raise _RayGone()
                    ready = _scan(
                        refs, eager, wait_s, fetch_local=True, enough=enough
                    )
                    if remote:
                        # Blocks only when no local ref is watched: otherwise a poll after
                        # the local scan's slice.
                        ready += _scan(
                            list(remote), eager and not refs,
                            0.0 if refs else wait_s, fetch_local=False,
                        )  # fmt: skip
                except Exception as exc:
                    failure = exc
                    ready = []
                del refs, remote
                flowing = bool(ready)
                idle = 0 if flowing else min(idle + 1, 8)
                for start in range(0, len(ready), _FETCH_CHUNK):
                    self._hand_over(ready[start : start + _FETCH_CHUNK])
                del ready
            if failure is not None:
                self._fail_all(failure, generation)
                return

    def _hand_over(self, ready: list[ObjectRef[Any]]) -> None:
        with self.lock:
            wanted = [ref for ref in ready if ref in self._watch]
            # Refs only readiness-subscribers watch are not fetched (``wait``: no value, and
            # with fetch_local=False not even a copy on this node).
            bare = (
                {ref for ref in wanted if not any(s._values for s in self._watch[ref])}
                if self._bare
                else None
            )
        if not wanted:
            return
        with ray_session():
            if not ray.is_initialized():
                return  # the next scan fails every subscriber
            if bare:
                fetched = iter(_fetch([ref for ref in wanted if ref not in bare]))
                values = [(None, False) if ref in bare else next(fetched) for ref in wanted]
            else:
                values = _fetch(wanted)
        per_loop: dict[asyncio.AbstractEventLoop, list[Subscription]] = {}
        with self.lock:
            touched: dict[Subscription, list[Item]] = {}
            for ref, (value, is_error) in zip(wanted, values, strict=True):
                subs = self._watch.get(ref)
                if not subs:
                    continue
                receivers: Iterable[Subscription] = subs
                if bare and ref in bare and any(s._values for s in subs):
                    # A subscriber that wants the value came after this ref was left unfetched:
                    # hand it to the readiness-only ones; the next scan fetches it for the rest.
                    receivers = self._take_bare(ref, subs)
                else:
                    del self._watch[ref]
                    if self._remote_refs:
                        self._remote_refs.pop(ref, None)
                for sub in receivers:
                    positions = sub._positions.pop(ref, ())
                    items = touched.get(sub)
                    if items is None:
                        items = touched[sub] = []
                    items.extend((p, value, is_error) for p in positions)
            for sub, items in touched.items():
                if not items or sub._closed:
                    continue
                sub._inflight.append(items)
                if sub._counted and not sub._positions:
                    # Fully handed over: it no longer counts as a streaming waiter.
                    self._count(sub, -1)
                per_loop.setdefault(sub._loop, []).append(sub)
        self._post(per_loop)

    def _take_bare(
        self, ref: ObjectRef[Any], subs: dict[Subscription, None]
    ) -> list[Subscription]:
        """Remove and return the readiness-only subscribers of ``ref`` (lock held)."""
        taken = [s for s in subs if not s._values]
        for sub in taken:
            del subs[sub]
            if not sub._local:
                count = self._remote_refs.get(ref, 0) - 1
                if count > 0:
                    self._remote_refs[ref] = count
                else:
                    self._remote_refs.pop(ref, None)
        return taken

    def _post(self, per_loop: dict[asyncio.AbstractEventLoop, list[Subscription]]) -> None:
        for loop, subs in per_loop.items():
            try:
                loop.call_soon_threadsafe(_deliver_batches, subs)
            except RuntimeError:  # the loop is closed: nobody is listening any more
                for sub in subs:
                    sub.close()

    def _fail_all(self, exc: BaseException, generation: int) -> None:
        """``ray.wait`` failed (Ray shut down under us): fail every waiting position, reset."""
        error = AsyncPoolError(
            "Ray was shut down (or its connection failed) while results were still pending: "
            f"{exc!r}"
        )
        error.__cause__ = exc
        per_loop: dict[asyncio.AbstractEventLoop, list[Subscription]] = {}
        with self.lock:
            subs = {s for ss in self._watch.values() for s in ss}
            subs.update(self._called_subs)
            for sub in self._called_subs:
                sub._called.clear()
            self._called_subs.clear()
            self._called_total = 0
            self._watch.clear()
            self._streaming = self._prompting = 0
            self._bare.clear()
            self._remote.clear()
            self._remote_refs.clear()
            for sub in subs:
                items = [(p, error, True) for ps in sub._positions.values() for p in ps]
                sub._positions = {}
                sub._counted = False
                if items and not sub._closed:
                    sub._inflight.append(items)
                    per_loop.setdefault(sub._loop, []).append(sub)
            if self._generation == generation:
                self._generation += 1
                self._thread = None
        self._post(per_loop)


def _deliver_batches(subs: list[Subscription]) -> None:
    """On the subscribers' loop: hand each its batches (unless it closed meanwhile)."""
    for sub in subs:
        with sub._core.lock:
            if sub._closed or not sub._inflight:
                continue
            batches, sub._inflight = sub._inflight, []
            deliver = sub._deliver
        assert deliver is not None
        for batch in batches:
            try:
                deliver(batch)
            except Exception as exc:  # one subscriber's bug must not starve the others
                sub._loop.call_exception_handler(
                    {"message": "asyncpool completion delivery failed", "exception": exc}
                )


_CORE: PerProcess[_Core] = PerProcess(_Core)


def _core() -> _Core:
    return _CORE.get()


def subscribe(
    refs: Sequence[ObjectRef[Any]],
    deliver: Deliver,
    *,
    loop: asyncio.AbstractEventLoop | None = None,
    everything: bool = False,
    values: bool = True,
    fetch_local: bool = True,
    prompt: bool = False,
) -> Subscription:
    """Watch ``refs``; ``deliver(batch)`` runs on ``loop`` with the items as they finish.

    ``batch`` is a list of ``(position in refs, value or exception, is_error)``; every position
    is delivered exactly once unless the subscription is closed first. An exception is the
    user's own type for a task error (``as_instanceof_cause``), Ray's error for a system one,
    an :class:`AsyncPoolError` if Ray went away under the core. ``loop`` defaults to the
    running loop. ``everything=True`` (gather) lets the core wait for all the refs within a
    slice instead of streaming early batches. The same ref may appear several times.
    ``values=False``: readiness only; each item's value is ``None`` (an error too is just
    "ready") and nothing is fetched for this subscription. ``fetch_local=False`` (requires
    ``values=False``): a ref is ready once it exists anywhere in the cluster, and this
    subscription never makes the core pull it to this node. ``prompt=True`` (a stream whose
    caller waits on each result to do more work: a pool's slots, ``wait``): each result is
    handed over as it finishes while few refs are pending, and within ``_BATCH_MAX_S`` while
    many are; otherwise a stream's results may wait up to a slice (few pending) or
    ``_GATHER_MAX_S`` (many) to be handed over in a batch.

    Costs O(len(refs)) on the caller's thread; never blocks on Ray.
    """
    if not fetch_local and values:
        raise ValueError("fetch_local=False needs values=False: a value is fetched to this node")
    if loop is None:
        loop = asyncio.get_running_loop()
    refs = list(refs)
    core = _core()
    sub = Subscription(core, refs, deliver, loop, everything, values, fetch_local, prompt)
    if refs:
        core.add(sub)
    return sub


def helper_threads() -> list[threading.Thread]:
    """The completion core's live threads (for tests and benchmarks that count threads)."""
    core = _CORE.peek()
    thread = core._thread if core is not None else None
    return [thread] if thread is not None and thread.is_alive() else []
