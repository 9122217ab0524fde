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
from collections.abc import AsyncIterable, Callable, Iterable
from typing import Any, Generic, Literal, ParamSpec, TypeVar

import anyio.to_thread
import ray
from ray.remote_function import RemoteFunction

from . import runtime
from ._dispatch import (
    Engine,
    MapStream,
    PoolBase,
    State,
    _Call,
    check_items,
    check_positive_int,
    check_timeout,
    default_capacity,
)
from .errors import PoolClosedError

__all__ = ["TaskPool"]

P = ParamSpec("P")
R = TypeVar("R")

#: ``batch_size="auto"`` sizes batches so one Ray task carries about this much work.
AUTO_TARGET_S = 0.03
AUTO_FIRST_BATCH = 8
AUTO_MAX_BATCH = 8192


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


def _run_calls(
    fn: Callable[..., Any], calls: list[tuple[tuple[Any, ...], dict[str, Any]]]
) -> tuple[int, float, list[tuple[bool, Any]]]:
    """Run each call; a user exception fails its own item only and is never retried."""
    started = time.perf_counter()
    results: list[tuple[bool, Any]] = []
    is_async = asyncio.iscoroutinefunction(fn)
    for args, kwargs in calls:
        args = tuple(ray.get(a) if isinstance(a, ray.ObjectRef) else a for a in args)
        try:
            value = asyncio.run(fn(*args, **kwargs)) if is_async else fn(*args, **kwargs)
            results.append((True, value))
        except Exception as exc:
            if hasattr(exc, "add_note"):
                exc.add_note("remote traceback:\n" + traceback.format_exc())
            results.append((False, _portable(exc)))
    return _attempt_number(), time.perf_counter() - started, results


def _make_runner(fn: Callable[..., Any]) -> Callable[..., Any]:
    def run(calls: list[tuple[tuple[Any, ...], dict[str, Any]]]) -> Any:
        return _run_calls(fn, calls)

    name = getattr(fn, "__name__", "fn")
    run.__name__ = run.__qualname__ = f"asyncpool_{name}"
    return run


# --------------------------------------------------------------------------- the pool


class TaskPool(PoolBase, Generic[P, R]):
    """A bounded pool of Ray tasks running ``fn``.

    ``fn`` is a plain function (or ``async def``: each batch runs it on a fresh loop in the
    worker) or a Ray remote function (its options are kept, ours and ``ray_options`` win).
    ``max_in_flight`` bounds how many Ray tasks of this pool exist at once, across every
    caller (default: twice the cluster's CPUs). ``strategy`` is a Ray scheduling strategy
    (``"SPREAD"`` by default). ``timeout`` is per item: the task is force-cancelled and the
    item fails with :class:`TaskTimeoutError`. ``retries`` is Ray's ``max_retries`` for
    system failures (worker crash, node death, lost object); a user exception is never
    retried. ``batch_size=n`` (or ``"auto"``, which targets ~30 ms tasks) sends n items of a
    ``map`` per Ray task and still yields per item; ``submit`` always sends one.

    Use it as ``async with TaskPool(fn) as pool``. States: unopened → open → closed; using
    a pool that is not open raises :class:`PoolClosedError`.
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
        **ray_options: Any,
    ) -> None:
        check_positive_int("max_in_flight", max_in_flight, allow_none=True)
        check_timeout(timeout)
        if isinstance(retries, bool) or not isinstance(retries, int):
            raise TypeError(f"retries must be an int, not {type(retries).__name__}")
        if retries < 0:
            raise ValueError(f"retries must be >= 0, got {retries}")
        if batch_size != "auto":
            check_positive_int("batch_size", batch_size)
        options: dict[str, Any] = {}
        if isinstance(fn, RemoteFunction):
            options.update(getattr(fn, "_default_options", {}) or {})
            target = fn._function
        elif callable(fn):
            target = fn
        else:
            raise TypeError(
                f"fn must be a function or a Ray remote function, not {type(fn).__name__}"
            )
        if isinstance(target, type):
            raise TypeError("fn must be a function; for a class use ActorPool")
        options.update(ray_options)
        options.update(
            scheduling_strategy=strategy, max_retries=retries, retry_exceptions=False
        )
        try:
            self._remote = ray.remote(_make_runner(target)).options(**options)
        except (ValueError, TypeError) as exc:
            raise ValueError(f"invalid Ray options for TaskPool: {exc}") from exc
        self.fn = target
        self.timeout = timeout
        self.retries = retries
        self.batch_size = batch_size
        self._max_in_flight = max_in_flight
        self._state: State = "unopened"
        self._engine: Engine | None = None
        self._per_item_s: float | None = None

    # -- lifecycle

    @property
    def max_in_flight(self) -> int:
        """The bound in force (resolved from the cluster when the pool opened)."""
        if self._engine is not None:
            return self._engine.slots.capacity
        return self._max_in_flight or 0

    async def open(self) -> None:
        """Open the pool (``async with`` does this); starts Ray through ``asyncpool.init``
        if nobody did yet. A pool opens once."""
        if self._state != "unopened":
            raise PoolClosedError(f"TaskPool is {self._state}; a pool opens only once")
        if not ray.is_initialized():
            await anyio.to_thread.run_sync(runtime.init)
        capacity = self._max_in_flight or default_capacity()
        self._engine = Engine(capacity, name=f"TaskPool({getattr(self.fn, '__name__', 'fn')})")
        self._state = "open"

    async def aclose(self, *, timeout: float = 10.0) -> None:
        """Close: cancel the Ray tasks still running and wait (up to ``timeout``) until they
        settled. Idempotent. Cancellation: the cancel requests are already sent."""
        if self._state == "closed":
            return
        self._state = "closed"
        if self._engine is not None:
            self._engine.cancel_all()
            await self._engine.wait_settled(timeout)

    # -- one item

    async def submit(self, *args: P.args, **kwargs: P.kwargs) -> R:
        """Run ``fn(*args, **kwargs)`` as one Ray task and return its result.

        Waits for a free slot first (the pool-wide bound). An argument that cannot be
        serialised raises ``TypeError`` and nothing is submitted.

        Cancellation: cancelling the caller cancels the Ray task (forced, so it stops even
        in C code); the slot is given back once Ray confirms it stopped. The item counts as
        failed in the statistics, unless the task had already finished when the cancel
        reached it (then it counts as completed, its result unused).
        """
        engine = self._require_open()
        await engine.slots.acquire()
        try:
            ref = self._remote.remote([(args, kwargs)])
        except BaseException as exc:
            engine.slots.release()
            if isinstance(exc, Exception) and not isinstance(exc, TypeError | ValueError):
                raise TypeError(f"cannot submit this call: {exc}") from exc
            raise
        engine.stats.on_submit()
        fut: asyncio.Future[Any] = engine.loop.create_future()

        def done(call: _Call, value: Any, error: BaseException | None) -> None:
            ok, result = self._record(engine, call, value, error, 1)[0]
            if fut.done():
                return
            if ok:
                fut.set_result(result)
            else:
                fut.set_exception(result)

        call = engine.launch(ref, done, timeout=self.timeout)
        try:
            return await fut  # type: ignore[no-any-return]
        except asyncio.CancelledError:
            engine.abandon(call)
            raise

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
        attempt, elapsed, results = value
        results = list(results)
        if attempt:
            engine.stats.on_retry(attempt * n)
        if self.batch_size == "auto" and results:
            sample = elapsed / len(results)
            prev = self._per_item_s
            self._per_item_s = sample if prev is None else 0.7 * prev + 0.3 * sample
        ok_count = sum(1 for ok, _ in results if ok)
        if ok_count:
            engine.stats.on_finish(ok=True, latency=latency, n=ok_count)
        if ok_count != len(results):
            engine.stats.on_finish(ok=False, latency=latency, n=len(results) - ok_count)
        return results

    # -- many items

    def _chunk_size(self) -> int:
        if self.batch_size != "auto":
            return self.batch_size
        if self._per_item_s is None:
            return AUTO_FIRST_BATCH
        size = int(AUTO_TARGET_S / max(self._per_item_s, 1e-7))
        return max(1, min(AUTO_MAX_BATCH, size))

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
        submitted is lost.

        Cancellation: leaving the stream early (break inside ``async with``, an exception,
        cancelling the consumer) stops taking items and cancels this map's running tasks.
        """
        engine = self._require_open()
        check_items(items)
        if not isinstance(ordered, bool) or not isinstance(return_exceptions, bool):
            raise TypeError("ordered and return_exceptions must be bools")
        stream: MapStream[R]

        def submit_chunk(chunk: list[tuple[int, Any]]) -> None:
            indices = [i for i, _ in chunk]
            try:
                ref = self._remote.remote([((item,), {}) for _, item in chunk])
            except Exception as exc:
                engine.slots.release()
                err = exc if isinstance(exc, TypeError) else TypeError(f"cannot submit: {exc}")
                engine.stats.on_submit(len(chunk))
                engine.stats.on_finish(ok=False, latency=0.0, n=len(chunk))
                for i in indices:
                    stream.deliver(i, err, True)
                return
            engine.stats.on_submit(len(chunk))

            def done(call: _Call, value: Any, error: BaseException | None) -> None:
                stream.calls.discard(call)
                results = self._record(engine, call, value, error, len(indices))
                for i, (ok, result) in zip(indices, results, strict=True):
                    stream.deliver(i, result, not ok)

            timeout = None if self.timeout is None else self.timeout * len(chunk)
            stream.calls.add(engine.launch(ref, done, timeout=timeout))

        stream = MapStream(
            items,
            submit_chunk=submit_chunk,
            chunk_size=self._chunk_size,
            window=lambda: engine.slots.capacity * self._chunk_size(),
            ordered=ordered,
            return_exceptions=return_exceptions,
            engine=engine,
            check_open=self._check_open,
        )
        return stream

