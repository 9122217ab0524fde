"""ActorPool: an async pool of stateful Ray actors (judges, rollout workers, reward models).

Calls go to the least-loaded live actor; at most ``size x max_concurrency`` calls run at
once (the pool's slots, shared by every caller); a dead actor is replaced and its calls fail
with :class:`WorkerFailedError`, or are re-sent to another actor when ``retries > 0``.
``size=(min, max)`` makes the pool elastic: it grows while calls queue for a slot and shrinks
back to ``min`` when actors have been idle for ``idle_timeout`` seconds.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import itertools
import logging
import math
import time
from collections.abc import AsyncIterable, Callable, Iterable, Iterator
from typing import Any, Generic, TypeVar

import anyio.to_thread
import ray
from ray.actor import ActorClass, ActorHandle

from . import _cancel, _validate, runtime
from ._actor_member import ACTOR_DEATH, Member, died, kill, node_of, python_class
from ._dispatch import (
    Engine,
    PoolBase,
    State,
    _Call,
    check_serialisable,
    serialisation_error,
)
from ._least_loaded import LeastLoaded, shift
from ._map_stream import MapStream, _StreamCore
from .errors import PoolClosedError, TaskTimeoutError, WorkerFailedError
from .refs import gather

__all__ = ["ActorPool"]

log = logging.getLogger(__name__)

A = TypeVar("A")

#: A replacement actor that has not answered by then counts as a failed start.
_START_TIMEOUT_S = 60.0


class ActorPool(PoolBase, Generic[A]):
    """A pool of ``size`` actors of ``actor_cls`` (a class or a Ray actor class).

    ``size`` is an int, or ``(min, max)`` for an elastic pool. ``max_concurrency`` calls run
    on each actor at once (give an ``async def`` method and a larger value for I/O-bound
    work such as a remote judge). ``strategy`` places the actors (``"SPREAD"`` by default);
    ``retries`` re-sends a call whose actor died to another actor (default 0: the call fails
    with :class:`WorkerFailedError`). ``timeout`` is per call and fails the caller at the
    deadline with :class:`TaskTimeoutError`: an ``async def`` method is cancelled; a sync
    method (which Ray cannot interrupt) has its actor killed and replaced, and the other
    calls on that actor are retried or fail with :class:`WorkerFailedError` as for any dead
    actor. When no actor is alive and a replacement fails to start, the calls waiting for a
    slot fail with :class:`WorkerFailedError` (a replacement is still tried, with backoff).
    Methods returning several objects (``@ray.method(num_returns=2)``) or streaming are
    refused with ``TypeError`` before anything is sent.

    ``batch_size=n`` (a plain class only) makes :meth:`map` send up to ``n`` items per Ray
    call (``call`` and ``broadcast`` still send one): on the actor, an ``async def`` method runs
    the batch's items concurrently (``asyncio.gather``), a sync one in turn; each item still
    gets its own result or exception. A Ray call costs the driver about 0.2-0.3 ms of CPU
    whatever it carries, so a latency-bound judge at hundreds of calls per second is bounded
    by the driver, not the judge: batches remove that bound. ``max_concurrency`` counts Ray
    calls, so up to ``size x max_concurrency x n`` items run at once; a ``timeout`` applies to
    the batch's call (its items fail together), and a batch whose actor died is re-sent whole
    (no item was delivered).

    ``name`` labels the pool in its statistics and metrics; ``metrics=False`` keeps them out of
    Ray's metrics. ``actor_options`` go to Ray's ``.options`` (``num_cpus``, ``num_gpus``,
    ``runtime_env``...).

    States: unopened → open → closed (``async with`` opens and closes); a closed pool cannot
    be reopened. A pool is used from the event loop it was opened on.
    """

    def __init__(
        self,
        actor_cls: type[A] | ActorClass[A],
        *init_args: Any,
        size: int | tuple[int, int],
        max_concurrency: int = 1,
        strategy: Any = "SPREAD",
        retries: int = 0,
        timeout: float | None = None,
        idle_timeout: float = 30.0,
        init_kwargs: dict[str, Any] | None = None,
        name: str | None = None,
        metrics: bool = True,
        batch_size: int = 1,
        **actor_options: Any,
    ) -> None:
        if isinstance(size, tuple):
            if len(size) != 2:
                raise ValueError(f"size as a tuple must be (min, max), got {size!r}")
            low = _validate.positive_int(size[0], "size min")
            high = _validate.positive_int(size[1], "size max")
            if low > high:
                raise ValueError(f"size must be (min, max) with min <= max, got {size!r}")
        else:
            low = high = _validate.positive_int(size, "size")
        _validate.positive_int(max_concurrency, "max_concurrency")
        self.timeout = _validate.timeout(timeout)
        idle = _validate.timeout(idle_timeout, "idle_timeout")
        _validate.non_negative_int(retries, "retries")
        _validate.boolean(metrics, "metrics")
        self.batch_size = _validate.positive_int(batch_size, "batch_size")
        if name is not None and not isinstance(name, str):
            raise TypeError(f"name must be a str, got {name!r} ({type(name).__name__})")
        batch_async = False
        if isinstance(actor_cls, ActorClass):
            if self.batch_size > 1:
                raise ValueError(
                    "batch_size > 1 needs the plain class (ActorPool adds the method that runs "
                    "a batch), not a ray.remote one: pass the class and its Ray options to "
                    "ActorPool"
                )
            self._cls: type[Any] | None = python_class(actor_cls)
            remote_cls: Any = actor_cls
        elif isinstance(actor_cls, type):
            self._cls = actor_cls
            check_serialisable(actor_cls, f"ActorPool class {actor_cls.__qualname__}")
            if self.batch_size > 1:
                batch_async = _is_async_class(actor_cls)
                remote_cls = ray.remote(_batched_class(actor_cls, batch_async))
            else:
                remote_cls = ray.remote(actor_cls)
        else:
            raise TypeError(
                f"actor_cls must be a class, got {actor_cls!r} ({type(actor_cls).__name__})"
            )
        try:
            self._remote = remote_cls.options(
                max_concurrency=max_concurrency,
                scheduling_strategy=strategy,
                max_restarts=0,
                **actor_options,
            )
        except (ValueError, TypeError) as exc:
            raise ValueError(f"invalid Ray options for ActorPool: {exc}") from exc
        self.min_size, self.max_size = low, high
        self.max_concurrency = max_concurrency
        self.retries = retries
        self.idle_timeout = idle if idle is not None else math.inf
        self.name = name if name is not None else f"ActorPool({self._cls_name})"
        self._metrics = metrics
        self._init_args = init_args
        self._init_kwargs = dict(init_kwargs or {})
        self._members: list[Member] = []
        self._starting = 0
        self._counter = itertools.count()
        self._router = LeastLoaded()
        self._state: State = "unopened"
        self._engine: Engine | None = None
        self._background: set[asyncio.Task[Any]] = set()
        # The batch method: cancelled at a timeout when async, as the methods it runs.
        self._methods: dict[str, bool] = {_BATCH: batch_async}
        self.replaced = 0

    # -- lifecycle

    @property
    def size(self) -> int:
        """Live (ready) actors: those the routing sends calls to (O(1): a saturated pool asks
        at every call that waits for a slot, to grow)."""
        return len(self._router)

    @property
    def actors(self) -> list[ActorHandle[Any]]:
        return [m.handle for m in self._members if m.alive and m.ready]

    async def open(self) -> None:
        """Start ``min`` actors (concurrently) and wait until each answers.

        Cancellation: actors already started are killed.
        """
        if self._state != "unopened":
            raise PoolClosedError(f"ActorPool is {self._state}; a pool opens only once")
        if not ray.is_initialized():
            await anyio.to_thread.run_sync(runtime.init)
        self._engine = Engine(0, name=self.name, metrics=self._metrics)
        self._engine.on_wait = self._maybe_grow
        self._state = "open"
        try:
            self._starting += self.min_size
            await asyncio.gather(
                *(self._start_member(keep_trying=False) for _ in range(self.min_size))
            )
        except BaseException:
            await self.aclose()
            raise
        if self.max_size > self.min_size:
            self._spawn(self._shrink_loop())

    async def aclose(self, *, timeout: float = 10.0) -> None:
        """Close: submit nothing more (callers waiting for a slot fail with
        :class:`PoolClosedError`), cancel the running calls and kill every actor (so every
        call ends; its caller gets :class:`PoolClosedError` with Ray's error as
        ``__cause__``), then wait up to ``timeout`` for the calls to settle. Idempotent.

        Cancellation: the actors are already killed.
        """
        wait = _validate.positive_number(timeout, "timeout")
        if self._state == "closed":
            return
        self._state = "closed"
        for task in list(self._background):
            task.cancel()
        if self._engine is not None:
            self._engine.close()
        for member in self._members:
            self._retire(member)
            kill(member.handle)
        if self._engine is not None:
            await self._engine.wait_settled(wait)

    @property
    def _cls_name(self) -> str:
        return self._cls.__name__ if self._cls is not None else "actor"

    def _check_method(self, method: object) -> str:
        """The method name, checked once per name; remembers whether it is ``async``."""
        if not isinstance(method, str):
            raise TypeError(f"method must be a method name (str), got {method!r} "
                            f"({type(method).__name__})")
        if method.startswith("_"):
            raise AttributeError(f"{self._cls_name} has no public method {method!r}")
        if method in self._methods:
            return method
        is_async = False
        if self._cls is not None:
            fn = getattr(self._cls, method, None)
            if not callable(fn):
                raise AttributeError(f"{self._cls_name} has no public method {method!r}")
            num_returns = getattr(fn, "__ray_num_returns__", None)
            if num_returns not in (None, 1) or inspect.isgeneratorfunction(fn) or (
                inspect.isasyncgenfunction(fn)
            ):
                raise TypeError(
                    f"{self._cls_name}.{method} returns several objects or a stream "
                    f"(num_returns={num_returns!r}); ActorPool calls take methods with one "
                    "return value: return a tuple, or call it on pool.actors directly"
                )
            is_async = inspect.iscoroutinefunction(fn)
        self._methods[method] = is_async
        return method

    def _spawn(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    # -- membership

    def _grow_by_one(self) -> None:
        # Counted as starting before the task runs, so two triggers cannot both grow.
        self._starting += 1
        self._spawn(self._start_member())

    async def _start_member(self, *, keep_trying: bool = True) -> None:
        """Start one actor (already counted in ``_starting``) and add it once it answers.

        A replacement that fails to start (its node died under it, its ``__init__`` raised,
        it could not be placed within ``_START_TIMEOUT_S``) is tried again with a capped
        backoff for as long as the pool is open; while no actor is alive, each failure also
        fails the calls waiting for a slot. The pool's first actors (``keep_trying=False``)
        fail ``open`` instead.
        """
        delay = 0.2
        try:
            while True:
                engine = self._engine
                if self._state != "open" or engine is None:
                    return
                handle = self._remote.remote(*self._init_args, **self._init_kwargs)
                member = Member(handle, next(self._counter))
                self._members.append(member)
                try:
                    ready = handle.__ray_ready__.remote()
                    if keep_trying:
                        await asyncio.wait_for(_awaited(ready), _START_TIMEOUT_S)
                    else:
                        await ready
                except Exception as exc:
                    self._retire(member)
                    kill(handle)
                    self._members.remove(member)
                    if not keep_trying or self._state != "open":
                        raise
                    if self.size == 0:
                        engine.fail_waiters(functools.partial(self._no_actor_error, exc))
                    log.warning("starting a %s actor failed (%s); retrying in %.1fs",
                                self._cls_name, exc, delay)
                    await asyncio.sleep(delay)
                    delay = min(delay * 2, 5.0)
                    continue
                except BaseException:
                    self._retire(member)
                    kill(handle)
                    raise
                member.ready = True
                member.idle_since = time.monotonic()
                if self._state == "open":
                    self._router.add(member)
                    engine.set_capacity(self.size * self.max_concurrency)
                else:
                    self._retire(member)
                    kill(handle)
                return
        finally:
            self._starting -= 1

    def _no_actor_error(self, cause: BaseException) -> WorkerFailedError:
        error = WorkerFailedError(
            f"{self.name} has no live actor and a replacement failed to start ({cause}); "
            "the pool keeps trying to start one",
            name=self._cls_name,
        )
        error.__cause__ = cause
        return error

    def _maybe_grow(self) -> None:
        if self._state != "open":
            return
        if self.size + self._starting < self.max_size:
            self._grow_by_one()

    def _on_member_death(self, member: Member, cause: BaseException) -> None:
        """Declare an actor dead: kill it (so every call on it ends) and replace it."""
        if not member.alive:
            return
        self._retire(member)
        kill(member.handle)
        self._members = [m for m in self._members if m.alive or m.load]
        log.warning("actor %d of %s declared dead (%s); replacing it",
                    member.index, self._cls_name, cause)
        engine = self._engine
        if engine is not None:
            engine.set_capacity(self.size * self.max_concurrency)
        if self._state == "open" and self.size + self._starting < self.min_size:
            self.replaced += 1
            self._grow_by_one()

    async def _shrink_loop(self) -> None:
        while self._state == "open":
            await asyncio.sleep(max(0.05, min(self.idle_timeout / 4, 60.0)))
            now = time.monotonic()
            for member in list(self._members):
                if self.size <= self.min_size:
                    break
                idle = member.alive and member.ready and member.load == 0
                if idle and now - member.idle_since >= self.idle_timeout:
                    self._retire(member)
                    assert self._engine is not None
                    self._engine.set_capacity(self.size * self.max_concurrency)
                    kill(member.handle)
            self._members = [m for m in self._members if m.alive or m.load]

    def _pick(self) -> Member:
        """The live actor with the least calls running; ties in turn (O(1): see
        :mod:`asyncpool._least_loaded`)."""
        best = self._router.pick()
        if best is None:
            raise WorkerFailedError(f"no live actor in {self.name}", name=self._cls_name)
        return best

    def _retire(self, member: Member) -> None:
        """``member`` takes no more calls (it died, or leaves): out of the routing."""
        member.alive = False
        self._router.remove(member)

    # -- calls

    async def call(self, method: str, *args: Any, **kwargs: Any) -> Any:
        """Call ``method`` on the least-loaded live actor and return its result.

        Raises before anything is sent for an unknown or multi-return method, an argument
        that cannot be serialised (``TypeError``), or a call from another thread or event
        loop. At ``timeout``, :class:`TaskTimeoutError` at once (see the class).

        Cancellation: the actor task is cancelled (an ``async`` method is interrupted; a sync
        one finishes in the background, holding its slot until it does).
        """
        engine = self._require_open()
        method = self._check_method(method)
        return await self._call(engine, method, args, kwargs)

    def _send(
        self,
        engine: Engine,
        token: object,
        method: str,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        finish: Callable[[_Call, Any, BaseException | None], None],
    ) -> _Call:
        """Send one call (its slot ``token`` already taken) to the least-loaded live actor;
        ``finish(call, value, error)`` gets its outcome, ``call.ctx`` being the member it went
        to. No closure per call: the member travels as the call's context."""
        member = self._pick()
        try:
            ref = getattr(member.handle, method).remote(*args, **kwargs)
        except Exception as exc:
            raise serialisation_error(f"{self._cls_name}.{method}", exc) from None
        shift(member, 1)
        expire: Callable[[_Call], None] | None = None
        if self.timeout is not None:

            def expire(call: _Call) -> None:
                if self._methods.get(method, False):
                    _cancel.request([call.ref], force=False)
                else:
                    # Ray cannot interrupt a running sync method: the actor goes instead.
                    self._on_member_death(member, TaskTimeoutError(
                        f"{self._cls_name}.{method} ran past its timeout of {self.timeout:g}s"))

        return engine.launch(ref, token, finish, timeout=self.timeout, on_expire=expire,
                             on_settle=self._settled, ctx=member)  # fmt: skip

    @staticmethod
    def _settled(call: _Call) -> None:
        member: Member = call.ctx
        shift(member, -1)
        if member.load == 0:
            member.idle_since = time.monotonic()

    def _failure(
        self, engine: Engine, method: str, error: BaseException, member: Member, call: _Call,
        *, retry: bool, n: int = 1,
    ) -> BaseException | None:
        """Book a failed call (of ``n`` items); the error to report, or None when it will be
        retried."""
        latency = time.monotonic() - call.started
        if isinstance(error, ACTOR_DEATH):
            self._on_member_death(member, error)
            if retry and self._state == "open" and not call.abandoned and not engine.closing:
                engine.stats.on_retry(n)
                return None
            engine.stats.on_finish(ok=False, latency=latency, n=n)
            failed = WorkerFailedError(
                f"{self._cls_name} actor {member.index} died during {method!r}",
                rank=member.index,
                name=self._cls_name,
                node_id=node_of(error),
            )
            failed.__cause__ = error
            return failed
        engine.stats.on_finish(ok=False, latency=latency, n=n, timed_out=call.timed_out)
        return error

    async def _call(
        self, engine: Engine, method: str, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Any:
        for attempt in range(self.retries + 1):
            try:
                token = await engine.acquire()
            except BaseException:
                if attempt:  # submitted before, failed while waiting to be re-sent
                    engine.stats.on_finish(ok=False, latency=0.0)
                raise
            fut: asyncio.Future[tuple[Any, BaseException | None, Member]] = (
                engine.loop.create_future()
            )

            def finish(
                call: _Call, value: Any, error: BaseException | None,
                fut: asyncio.Future[tuple[Any, BaseException | None, Member]] = fut,
            ) -> None:
                # Not the call itself: call -> finish -> fut -> result -> call would be a
                # cycle, and every call cyclic garbage.
                if not fut.done():
                    fut.set_result((value, error, call.ctx))

            try:
                call = self._send(engine, token, method, args, kwargs, finish)
            except BaseException:
                engine.release(token)
                if attempt:
                    engine.stats.on_finish(ok=False, latency=0.0)
                raise
            if not attempt:
                engine.stats.on_submit()
            try:
                value, error, member = await fut
            except asyncio.CancelledError:
                engine.abandon(call)
                engine.stats.on_finish(ok=False, latency=time.monotonic() - call.started)
                raise
            if error is None:
                engine.stats.on_finish(ok=True, latency=time.monotonic() - call.started)
                return value
            report = self._failure(
                engine, method, error, member, call, retry=attempt < self.retries
            )
            if report is not None:
                raise report
        raise AssertionError("unreachable")  # pragma: no cover

    def map(
        self,
        method: str,
        items: Iterable[Any] | AsyncIterable[Any],
        *,
        ordered: bool = False,
        return_exceptions: bool = False,
    ) -> MapStream[Any]:
        """Stream ``(index, actor.method(item))`` for every item; see ``TaskPool.map``.

        Items wait for a free slot of the pool (``size x max_concurrency``, shared with
        every other caller). A call whose actor died is re-sent to another actor while it
        has ``retries`` left; otherwise it fails with :class:`WorkerFailedError`.

        Cancellation: leaving early stops taking items and cancels this map's calls.
        """
        engine = self._require_open()
        method = self._check_method(method)
        _validate.items(items)
        _validate.boolean(ordered, "ordered")
        _validate.boolean(return_exceptions, "return_exceptions")

        def launch(
            core: _StreamCore, chunk: list[tuple[int, Any]], attempt: int, token: object
        ) -> None:
            """Send ``chunk`` (``(index, item)`` pairs) on the slot ``token``: one item as a
            call of ``method``, several as one batch call; a call whose actor died is sent
            again whole while retries are left (none of its items was delivered)."""
            n = len(chunk)

            def finish(call: _Call, value: Any, error: BaseException | None) -> None:
                member: Member = call.ctx
                core.calls.discard(call)
                latency = time.monotonic() - call.started
                if error is None:
                    if n == 1:
                        engine.stats.on_finish(ok=True, latency=latency)
                        core.deliver(chunk[0][0], value, False)
                        return
                    outcomes = _outcomes(value, n)
                    if outcomes is None:
                        error = TypeError(f"a batch of {n} answered {type(value).__name__}")
                    else:
                        failed = 0
                        for (index, _), (ok, result) in zip(chunk, outcomes, strict=True):
                            failed += not ok
                            core.deliver(index, result, not ok)
                        engine.stats.on_chunk(ok=n - failed, failed=failed, latency=latency)
                        return
                report = self._failure(
                    engine, method, error, member, call, retry=attempt < self.retries, n=n
                )
                if report is not None:
                    for index, _ in chunk:
                        core.deliver(index, report, True)
                    return

                async def again() -> None:
                    try:
                        token = await engine.acquire()
                    except (PoolClosedError, WorkerFailedError) as exc:
                        engine.stats.on_finish(ok=False, latency=0.0, n=n)
                        for index, _ in chunk:
                            core.deliver(index, exc, True)
                        return
                    launch(core, chunk, attempt + 1, token)

                core.spawn(again())

            try:
                if n == 1:
                    call = self._send(engine, token, method, (chunk[0][1],), {}, finish)
                else:
                    batch = [item for _, item in chunk]
                    call = self._send(engine, token, _BATCH, ((method, batch),), {}, finish)
                core.calls.add(call)
            except Exception as exc:
                if n == 1:
                    engine.release(token)
                    engine.stats.on_finish(ok=False, latency=0.0)
                    core.deliver(chunk[0][0], exc, True)
                    return
                # An item that cannot be serialised fails alone, as unbatched: the batch's
                # items go one by one (the first on this slot, the others as slots free up).
                launch(core, chunk[:1], attempt, token)
                for pair in chunk[1:]:
                    core.spawn(alone(core, pair, attempt))

        async def alone(core: _StreamCore, pair: tuple[int, Any], attempt: int) -> None:
            try:
                token = await engine.acquire()
            except (PoolClosedError, WorkerFailedError) as exc:
                engine.stats.on_finish(ok=False, latency=0.0)
                core.deliver(pair[0], exc, True)
                return
            launch(core, [pair], attempt, token)

        def submit_chunk(core: _StreamCore, chunk: list[tuple[int, Any]], token: object
                         ) -> None:
            engine.stats.on_submit(len(chunk))
            launch(core, chunk, 0, token)

        batch_size = self.batch_size
        return MapStream(
            items,
            submit_chunk=submit_chunk,
            chunk_size=lambda: batch_size,
            # Up to the largest the pool may grow to: items then queue for slots, which is
            # what makes an elastic pool grow.
            window=lambda: batch_size
            * max(1, engine.capacity, self.max_size * self.max_concurrency),
            ordered=ordered,
            return_exceptions=return_exceptions,
            engine=engine,
            check_open=self._check_open,
        )

    async def broadcast(self, method: str, *args: Any, **kwargs: Any) -> list[Any]:
        """Call ``method`` on every live actor (outside the slots: a control call, such as
        loading new weights) and return the results in actor order.

        Cancellation: the calls still running are cancelled.
        """
        self._require_open()
        method = self._check_method(method)
        members = [m for m in self._members if m.alive and m.ready]
        try:
            refs = [getattr(m.handle, method).remote(*args, **kwargs) for m in members]
        except Exception as exc:
            raise serialisation_error(f"{self._cls_name}.{method}", exc) from None
        try:
            return await gather(refs, timeout=self.timeout)
        except ACTOR_DEATH as exc:
            failed = next((m for m, r in zip(members, refs, strict=True) if died(r)), None)
            raise WorkerFailedError(
                f"an actor of {self._cls_name} died during broadcast of {method!r}",
                rank=failed.index if failed else None,
                name=self._cls_name,
                node_id=node_of(exc),
            ) from exc


async def _awaited(ref: Any) -> Any:
    return await ref


#: The method ActorPool adds to a class made with ``batch_size > 1``: runs one batch.
_BATCH = "__asyncpool_batch__"


def _is_async_class(cls: type) -> bool:
    """Whether Ray makes ``cls`` an async actor (it has an ``async def`` method)."""
    return any(
        inspect.iscoroutinefunction(fn) or inspect.isasyncgenfunction(fn)
        for _, fn in inspect.getmembers(cls, inspect.isfunction)
    )


def _outcomes(value: Any, n: int) -> list[tuple[bool, Any]] | Iterator[tuple[bool, Any]] | None:
    """A batch's answer (see :func:`_batched_class`) as ``n`` ``(ok, value or exception)``
    pairs, or None when it is not a batch's answer of ``n``."""
    if type(value) is list and len(value) == n:
        return zip(itertools.repeat(True), value)
    if (
        type(value) is tuple
        and len(value) == 2
        and value[0] == _FAILED
        and type(value[1]) is list
        and len(value[1]) == n
    ):
        return value[1]
    return None


#: Marks a batch's answer in which an item failed: ``(_FAILED, [(ok, value), ...])``.
_FAILED = "__asyncpool_failed__"


def _answer(outcomes: list[tuple[bool, Any]]) -> Any:
    """A batch's answer: its values, a plain list (what crosses most often, and cheapest to
    serialise), or, when an item failed, ``(_FAILED, outcomes)``."""
    if all(ok for ok, _ in outcomes):
        return [value for _, value in outcomes]
    return (_FAILED, outcomes)


def _batched_class(cls: type, is_async: bool) -> type:
    """A subclass of ``cls`` with :data:`_BATCH`, ``async`` exactly when ``cls`` is an async
    actor (an ``async def`` added to a sync class would make Ray run all its methods on an
    event loop). It takes ``(method, items)`` as one argument (one serialisation per call,
    not two) and answers with :func:`_answer`: one item's exception does not cost the others
    their results."""
    if is_async:

        async def run_batch(self: Any, job: tuple[str, list[Any]]) -> Any:
            method, items = job
            fn = getattr(self, method)

            async def one(item: Any) -> tuple[bool, Any]:
                try:
                    value = fn(item)
                    if inspect.isawaitable(value):
                        value = await value
                    return True, value
                except Exception as exc:
                    return False, exc

            return _answer(list(await asyncio.gather(*(one(item) for item in items))))

        body: Any = run_batch
    else:

        def run_batch_sync(self: Any, job: tuple[str, list[Any]]) -> Any:
            method, items = job
            fn = getattr(self, method)
            out: list[tuple[bool, Any]] = []
            for item in items:
                try:
                    out.append((True, fn(item)))
                except Exception as exc:
                    out.append((False, exc))
            return _answer(out)

        body = run_batch_sync
    return type(cls.__name__, (cls,), {_BATCH: body, "__module__": cls.__module__,
                                       "__qualname__": cls.__qualname__})
