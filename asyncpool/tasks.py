"""TaskPool: semaphore-bounded, SPREAD-scheduled Ray tasks that async code awaits.

The pool replaces ``async with sem: await loop.run_in_executor(None, ray.get, f.remote(x))``:
no executor thread per call, one bound on the Ray tasks that exist across every caller,
Ray's own retries for system failures, and per-item timeouts that really stop the task.
"""

from __future__ import annotations

import asyncio
import pickle
import time
import traceback
from collections.abc import AsyncIterable, Callable, Iterable, Iterator
from typing import Any, Generic, Literal, ParamSpec, TypeVar

import anyio.to_thread
import ray
from ray.remote_function import RemoteFunction

from . import _validate, runtime
from ._dispatch import (
    Engine,
    PoolBase,
    State,
    _Call,
    check_serialisable,
    default_capacity,
    serialisation_error,
)
from ._map_stream import MapStream, _StreamCore
from .errors import PoolClosedError, TaskTimeoutError

__all__ = ["TaskPool"]

P = ParamSpec("P")
R = TypeVar("R")

#: ``batch_size="auto"`` sizes batches so one Ray task carries about this much worker time.
AUTO_TARGET_S = 0.03
AUTO_FIRST_BATCH = 8
AUTO_MAX_BATCH = 8192
#: How long a batch under a per-item timeout may wait for Ray to start it, beyond the timeout.
START_GRACE_S = 30.0

Calls = list[tuple[tuple[Any, ...], dict[str, Any]]]


# --------------------------------------------------------------------------- worker side


def _attempt_number() -> int:
    try:
        worker: Any = ray._private.worker.global_worker
        return int(worker.core_worker.get_current_task_attempt_number())
    except Exception:  # pragma: no cover - internal API moved: retries are not counted
        return 0


def _portable(exc: BaseException) -> BaseException:
    """The exception itself when it pickles, else a RuntimeError that says what it was."""
    try:
        pickle.loads(pickle.dumps(exc))
    except Exception:
        exc = RuntimeError(f"{type(exc).__qualname__}: {exc} (the exception could not be pickled)")
    return exc


def _run_queue_wait_s() -> float | None:
    """Seconds this thread has spent runnable but waiting for a CPU (Linux schedstat)."""
    try:
        with open("/proc/thread-self/schedstat", "rb") as fh:
            return int(fh.read().split()[1]) / 1e9
    except (OSError, ValueError, IndexError):
        return None


class _Clock:
    """The worker time a batch cost: wall time minus the time spent waiting for a CPU.

    That is what ``batch_size="auto"`` sizes from. On a loaded machine a task's wall time
    grows with the run queue, and sizing from it shrinks batches exactly when per-task
    overhead hurts most; the time spent waiting for a CPU is taken out, so a CPU-bound item
    costs its CPU time, while an item waiting on I/O still costs its wait. Where the run-queue
    figure is not available the thread's CPU time is used.
    """

    def __init__(self) -> None:
        self.wall = time.perf_counter()
        self.cpu = time.thread_time()
        self.queued = _run_queue_wait_s()

    def cost(self) -> float:
        queued = _run_queue_wait_s()
        if self.queued is not None and queued is not None:
            wall = time.perf_counter() - self.wall
            return max(0.0, wall - (queued - self.queued))
        return time.thread_time() - self.cpu


def _run_one(fn: Callable[..., Any], is_async: bool, args: tuple[Any, ...],
             kwargs: dict[str, Any]) -> tuple[bool, Any]:
    args = tuple(ray.get(a) if isinstance(a, ray.ObjectRef) else a for a in args)
    try:
        value = asyncio.run(fn(*args, **kwargs)) if is_async else fn(*args, **kwargs)
        return True, value
    except Exception as exc:
        if hasattr(exc, "add_note"):
            exc.add_note("remote traceback:\n" + traceback.format_exc())
        return False, _portable(exc)


def _run_calls(fn: Callable[..., Any], calls: Calls) -> tuple[int, float, list[tuple[bool, Any]]]:
    """Run each call; a user exception fails its own item only and is never retried.

    Returns the attempt number, the worker time it cost (see :class:`_Clock`), the results.
    """
    clock = _Clock()
    is_async = asyncio.iscoroutinefunction(fn)
    results = [_run_one(fn, is_async, args, kwargs) for args, kwargs in calls]
    return _attempt_number(), clock.cost(), results


def _run_items(fn: Callable[..., Any], items: list[Any]) -> list[Any]:
    """:func:`_run_calls` for calls of one positional argument each (``map``, and ``submit``
    of one argument), sent as a plain list of the arguments and answered as lists.

    Why a second shape: Ray packs task arguments and results with msgpack in strict mode,
    where a tuple (or anything not a list, dict or scalar) goes to pickle instead. A list of
    ``((item,), {})`` tuples cost the driver a pickle per task on the way out and another
    on the way back; plain lists of plain items cost none.
    """
    clock = _Clock()
    is_async = asyncio.iscoroutinefunction(fn)
    results = [list(_run_one(fn, is_async, (item,), {})) for item in items]
    return [_attempt_number(), clock.cost(), results]


def _stream_calls(fn: Callable[..., Any], calls: Calls
                  ) -> Iterator[tuple[int, float, bool, Any] | None]:
    """As :func:`_run_calls`, yielding ``None`` when the task starts, then each item's outcome
    as soon as it is known, so the driver can time every item against its own deadline."""
    yield None
    is_async = asyncio.iscoroutinefunction(fn)
    for args, kwargs in calls:
        clock = _Clock()
        ok, value = _run_one(fn, is_async, args, kwargs)
        yield _attempt_number(), clock.cost(), ok, value


def _make_runner(
    fn: Callable[..., Any], *, stream: bool, items: bool = False
) -> Callable[..., Any]:
    # The Ray task is named asyncpool_<fn> so that a user (and the leak checks) can tell
    # a pool's tasks apart in `ray list tasks`.
    run: Callable[..., Any]
    if stream:
        def run(calls: Calls) -> Iterator[tuple[int, float, bool, Any] | None]:
            yield from _stream_calls(fn, calls)
    elif items:
        def run(calls: list[Any]) -> list[Any]:
            return _run_items(fn, calls)
    else:
        def run(calls: Calls) -> tuple[int, float, list[tuple[bool, Any]]]:
            return _run_calls(fn, calls)

    name = getattr(fn, "__name__", "fn")
    run.__name__ = run.__qualname__ = f"asyncpool_{name}"
    return run


# --------------------------------------------------------------------------- the pool


class TaskPool(PoolBase, Generic[P, R]):
    """A bounded pool of Ray tasks running ``fn``.

    ``fn`` is a plain function (or ``async def``: each batch runs it on a fresh loop in the
    worker) or a Ray remote function (its options are kept, ours and ``ray_options`` win);
    one that cannot be serialised is refused here. ``max_in_flight`` bounds how many Ray
    tasks of this pool exist at once, across every caller (default: twice the cluster's
    CPUs). ``strategy`` is a Ray scheduling strategy (``"SPREAD"`` by default). ``timeout`` is
    per item: at its deadline the item fails with :class:`TaskTimeoutError` and its task is
    force-cancelled (in a batch, the rest of the batch is sent again and still delivered
    once). ``retries`` is Ray's ``max_retries`` for system failures (worker crash, node death,
    lost object); a user exception is never retried. ``batch_size=n`` (or ``"auto"``, which
    targets tasks of ~30 ms of the workers' own time, not counting time spent waiting for a
    CPU) sends n items of a ``map`` per Ray task and still yields per item; ``submit`` always
    sends one. ``name`` labels the pool in its statistics and metrics; ``metrics=False``
    keeps its statistics out of Ray's metrics.

    Use it as ``async with TaskPool(fn) as pool``, on one event loop. States: unopened →
    open → closed; using a pool that is not open raises :class:`PoolClosedError`.
    """

    def __init__(
        self,
        fn: Callable[P, R],
        *,
        max_in_flight: int | None = None,
        strategy: Any = "SPREAD",
        timeout: float | None = None,
        retries: int = 3,
        batch_size: int | Literal["auto"] = 1,
        name: str | None = None,
        metrics: bool = True,
        **ray_options: Any,
    ) -> None:
        if max_in_flight is not None:
            _validate.positive_int(max_in_flight, "max_in_flight")
        self.timeout = _validate.timeout(timeout)
        _validate.non_negative_int(retries, "retries")
        if batch_size != "auto":
            if isinstance(batch_size, str):
                raise TypeError(f"batch_size must be an int >= 1 or 'auto', got {batch_size!r}")
            _validate.positive_int(batch_size, "batch_size")
        _validate.boolean(metrics, "metrics")
        if name is not None and not isinstance(name, str):
            raise TypeError(f"name must be a str, got {name!r} ({type(name).__name__})")
        options: dict[str, Any] = {}
        if isinstance(fn, RemoteFunction):
            options.update(getattr(fn, "_default_options", {}) or {})
            target = fn._function
        elif callable(fn):
            target = fn
        else:
            raise TypeError(
                f"fn must be a function or a Ray remote function, got {fn!r} "
                f"({type(fn).__name__})"
            )
        if isinstance(target, type):
            raise TypeError("fn must be a function; for a class use ActorPool")
        label = str(getattr(target, "__qualname__", None) or getattr(target, "__name__", "fn"))
        check_serialisable(target, f"TaskPool function {label}")
        options.update(ray_options)
        options.update(
            scheduling_strategy=strategy, max_retries=retries, retry_exceptions=False
        )
        try:
            self._remote = ray.remote(_make_runner(target, stream=False)).options(**options)
            self._remote_items = ray.remote(
                _make_runner(target, stream=False, items=True)
            ).options(**options)
            self._remote_stream = ray.remote(_make_runner(target, stream=True)).options(
                **options
            )
        except (ValueError, TypeError) as exc:
            raise ValueError(f"invalid Ray options for TaskPool: {exc}") from exc
        self.fn = target
        self.name = name if name is not None else f"TaskPool({label})"
        self._label = label
        self.retries = retries
        self.batch_size = batch_size
        self._metrics = metrics
        self._max_in_flight = max_in_flight
        self._state: State = "unopened"
        self._engine: Engine | None = None
        self._per_item_s: float | None = None

    # -- lifecycle

    @property
    def max_in_flight(self) -> int:
        """The bound in force (resolved from the cluster when the pool opened)."""
        if self._engine is not None:
            return self._engine.capacity
        return self._max_in_flight or 0

    async def open(self) -> None:
        """Open the pool (``async with`` does this); starts Ray through ``asyncpool.init``
        if nobody did yet. A pool opens once. Ray is asked for its resources off the loop.

        Cancellation: the pool stays unopened.
        """
        if self._state != "unopened":
            raise PoolClosedError(f"TaskPool is {self._state}; a pool opens only once")
        if not ray.is_initialized():
            await anyio.to_thread.run_sync(runtime.init)
        capacity = self._max_in_flight
        if capacity is None:
            capacity = await anyio.to_thread.run_sync(default_capacity)
        self._engine = Engine(capacity, name=self.name, metrics=self._metrics)
        self._state = "open"

    async def aclose(self, *, timeout: float = 10.0) -> None:
        """Close: submit nothing more (callers still waiting for a slot, and items a map
        has not sent, fail with :class:`PoolClosedError`), force-cancel the Ray tasks still
        running (their callers get :class:`PoolClosedError`, Ray's error as ``__cause__``),
        and wait up to ``timeout`` until Ray confirms they stopped. Idempotent.

        Cancellation: the cancels are already sent; the tasks stop without us.
        """
        wait = _validate.positive_number(timeout, "timeout")
        if self._state == "closed":
            return
        self._state = "closed"
        if self._engine is not None:
            self._engine.close()
            await self._engine.wait_settled(wait)

    # -- one item

    def _submit_error(self, exc: BaseException) -> BaseException:
        if isinstance(exc, Exception):
            return serialisation_error(self._label, exc)
        return exc

    async def submit(self, *args: P.args, **kwargs: P.kwargs) -> R:
        """Run ``fn(*args, **kwargs)`` as one Ray task and return its result.

        Waits for a free slot first (the pool-wide bound). An argument that cannot be
        serialised raises ``TypeError`` and nothing is submitted. Called from another
        thread or event loop it raises before anything is sent. At ``timeout`` it raises
        :class:`TaskTimeoutError` at once (the task is force-cancelled); when the pool
        closes under it, :class:`PoolClosedError`.

        Cancellation: cancelling the caller cancels the Ray task (forced, so it stops even
        in C code); the slot is given back once Ray confirms it stopped. The item counts as
        failed in the statistics, unless the task had already finished when the cancel
        reached it (then it counts as completed, its result unused).
        """
        engine = self._require_open()
        token = await engine.acquire()
        try:
            if len(args) == 1 and not kwargs:
                ref = self._remote_items.remote([args[0]])
            else:
                ref = self._remote.remote([(args, kwargs)])
        except BaseException as exc:
            engine.release(token)
            raise self._submit_error(exc) from None
        engine.stats.on_submit()
        fut: asyncio.Future[Any] = engine.loop.create_future()
        call = engine.launch(ref, token, self._submitted_done, timeout=self.timeout, ctx=fut)
        try:
            return await fut  # type: ignore[no-any-return]
        except asyncio.CancelledError:
            engine.abandon(call)
            raise

    def _submitted_done(self, call: _Call, value: Any, error: BaseException | None) -> None:
        """A ``submit``'s outcome into its future, ``call.ctx``.

        A method, not a closure in ``submit``: a closure's cells (``self``, the engine, the
        future) are made when ``submit`` starts, so every caller queued for a slot held three
        more objects for the cyclic garbage collector to walk (11 per queued caller instead of
        8; with 100,000 queued, 300,000 more on every full collection).
        """
        engine = self._engine
        assert engine is not None  # set when the pool opened, never unset
        ok, result = self._record(engine, call, value, error, 1)[0]
        fut: asyncio.Future[Any] = call.ctx
        if fut.done():
            return
        if ok:
            fut.set_result(result)
        else:
            fut.set_exception(result)

    def _record(
        self,
        engine: Engine,
        call: _Call,
        value: Any,
        error: BaseException | None,
        n: int,
    ) -> list[tuple[bool, Any]]:
        """Statistics for a settled call; returns its per-item (ok, value-or-exception)."""
        latency = time.monotonic() - call.started
        if error is not None:
            engine.stats.on_finish(ok=False, latency=latency, n=n, timed_out=call.timed_out)
            return [(False, error)] * n
        attempt, cost, results = value
        results = list(results)
        if attempt:
            engine.stats.on_retry(attempt * n)
        if results:
            self._sample(cost / len(results))
        ok_count = sum(1 for ok, _ in results if ok)
        engine.stats.on_chunk(ok=ok_count, failed=len(results) - ok_count, latency=latency)
        return results

    def _sample(self, per_item_s: float) -> None:
        if self.batch_size == "auto":
            prev = self._per_item_s
            self._per_item_s = per_item_s if prev is None else 0.7 * prev + 0.3 * per_item_s

    # -- many items

    def _chunk_size(self) -> int:
        if self.batch_size != "auto":
            return self.batch_size
        return auto_batch_size(self._per_item_s)

    def map(
        self,
        items: Iterable[Any] | AsyncIterable[Any],
        *,
        ordered: bool = False,
        return_exceptions: bool = False,
    ) -> MapStream[R]:
        """Stream ``(index, fn(item))`` for every item, as they complete (or in order).

        ``items`` may be an iterable or an async iterable and is consumed lazily: never
        more than ``max_in_flight`` tasks' worth of items is taken ahead of what was
        yielded. Several concurrent maps and submits share the pool's bound. An item whose
        argument cannot be serialised fails alone (``TypeError``); nothing already
        submitted is lost. With a ``timeout`` every item has its own deadline, counted from
        when it could start (batches stream their items back one by one).

        Cancellation: leaving the stream early (break inside ``async with``, an exception,
        cancelling the consumer) stops taking items and cancels this map's running tasks.
        """
        engine = self._require_open()
        _validate.items(items)
        _validate.boolean(ordered, "ordered")
        _validate.boolean(return_exceptions, "return_exceptions")

        def window() -> int:
            return engine.capacity * self._chunk_size()

        return MapStream(
            items,
            submit_chunk=self._submit_chunk,
            chunk_size=self._chunk_size,
            window=window,
            ordered=ordered,
            return_exceptions=return_exceptions,
            engine=engine,
            check_open=self._check_open,
        )

    def _submit_chunk(
        self, core: _StreamCore, chunk: list[tuple[int, Any]], token: object, *,
        resent: bool = False,
    ) -> None:
        engine = core.engine
        if self.timeout is not None and len(chunk) > 1:
            self._submit_streamed(core, chunk, token, resent=resent)
            return
        indices = [i for i, _ in chunk]
        try:
            ref = self._remote_items.remote([item for _, item in chunk])
        except Exception as exc:
            self._refuse(core, indices, token, exc, resent=resent)
            return
        if not resent:
            engine.stats.on_submit(len(chunk))

        def done(call: _Call, value: Any, error: BaseException | None) -> None:
            core.calls.discard(call)
            results = self._record(engine, call, value, error, len(indices))
            for i, (ok, result) in zip(indices, results, strict=True):
                core.deliver(i, result, not ok)

        core.calls.add(engine.launch(ref, token, done, timeout=self.timeout))

    def _refuse(self, core: _StreamCore, indices: list[int], token: object, exc: Exception,
                *, resent: bool) -> None:
        engine = core.engine
        engine.release(token)
        if not resent:
            engine.stats.on_submit(len(indices))
        engine.stats.on_finish(ok=False, latency=0.0, n=len(indices))
        for i in indices:
            core.deliver(i, serialisation_error(self._label, exc), True)

    def _submit_streamed(
        self, core: _StreamCore, chunk: list[tuple[int, Any]], token: object, *, resent: bool
    ) -> None:
        """A batch under a per-item timeout: its items come back one by one, each timed
        against its own deadline. At the first item past its deadline the batch is
        force-cancelled, that item fails with :class:`TaskTimeoutError`, and the items after
        it are sent again (none was delivered yet, so none is delivered twice)."""
        engine = core.engine
        try:
            gen = self._remote_stream.remote([((item,), {}) for _, item in chunk])
        except Exception as exc:
            self._refuse(core, [i for i, _ in chunk], token, exc, resent=resent)
            return
        if not resent:
            engine.stats.on_submit(len(chunk))
        # The engine holds the slot until the generator task has settled.
        holder = engine.launch(gen.completed(), token, lambda *_: None, timeout=None)
        core.calls.add(holder)
        core.spawn(self._read_stream(core, chunk, gen, holder))

    async def _read_stream(
        self, core: _StreamCore, chunk: list[tuple[int, Any]], gen: Any, holder: _Call
    ) -> None:
        """Deliver a streamed batch's items as they come, each against its own deadline:
        ``timeout`` after it could start (the batch task's start for its first item, the
        previous item's result for the others). Ray's scheduling delay (a worker to start on
        a busy machine) is not counted, up to ``START_GRACE_S``: a batch that has not started
        within ``timeout + START_GRACE_S`` of being sent fails its first item."""
        engine = core.engine
        loop = engine.loop
        timeout = self.timeout
        assert timeout is not None
        position = 0
        since = loop.time()
        started = False
        try:
            while position < len(chunk):
                index = chunk[position][0]
                deadline = since + timeout if started else since + timeout + START_GRACE_S
                try:
                    async with asyncio.timeout_at(deadline):
                        ref = await gen.__anext__()
                        outcome = await ref
                except TimeoutError:
                    engine.abandon(holder)
                    engine.stats.on_finish(ok=False, latency=loop.time() - since,
                                           timed_out=True)
                    what = "ran past" if started else "did not start within"
                    core.deliver(index, TaskTimeoutError(
                        f"{self.name}: an item {what} its timeout of {timeout:g}s; its task "
                        "was cancelled"), True)
                    rest = chunk[position + 1:]
                    if rest:
                        core.spawn(self._resend(core, rest))
                    return
                except StopAsyncIteration:
                    self._fail_rest(core, chunk[position:],
                                    RuntimeError("the batch ended early"), since)
                    return
                except Exception as exc:
                    error: BaseException = exc
                    if engine.closing:
                        error = PoolClosedError(f"{self.name} closed while this item was running")
                        error.__cause__ = exc
                    self._fail_rest(core, chunk[position:], error, since)
                    return
                if outcome is None:  # the task started: the first item's clock starts now
                    started = True
                    since = loop.time()
                    continue
                attempt, cost, ok, value = outcome
                if attempt:
                    engine.stats.on_retry()
                self._sample(cost)
                engine.stats.on_finish(ok=ok, latency=loop.time() - since)
                core.deliver(index, value, not ok)
                position += 1
                since = loop.time()
        except asyncio.CancelledError:
            engine.abandon(holder)
            raise

    def _fail_rest(self, core: _StreamCore, rest: list[tuple[int, Any]], error: BaseException,
                   since: float) -> None:
        core.engine.stats.on_finish(ok=False, latency=core.engine.loop.time() - since,
                                    n=len(rest))
        for index, _ in rest:
            core.deliver(index, error, True)

    async def _resend(self, core: _StreamCore, rest: list[tuple[int, Any]]) -> None:
        try:
            token = await core.engine.acquire()
        except PoolClosedError as exc:
            self._fail_rest(core, rest, exc, core.engine.loop.time())
            return
        self._submit_chunk(core, rest, token, resent=True)


def auto_batch_size(per_item_s: float | None) -> int:
    """How many items a ``batch_size="auto"`` task carries, from the measured worker time of
    one item (``None``: nothing measured yet)."""
    if per_item_s is None:
        return AUTO_FIRST_BATCH
    size = int(AUTO_TARGET_S / max(per_item_s, 1e-7))
    return max(1, min(AUTO_MAX_BATCH, size))
