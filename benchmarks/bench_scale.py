"""Scale: queued submissions, thousands of concurrent streams, and the event loop under both.

Issue 11's "Must show", measured side by side in one run, each method against its baseline
in the same round (rounds interleave the methods, rotating their order, so that machine noise
hits them alike), reported as ratios:

(a) ``N`` queued ``TaskPool.submit`` through 4 slots (``max_in_flight=4``), for N in
    ``--queued`` (default 2k, 10k, 100k): event-loop CPU per 1k acquires (flat from 2k to
    100k means O(1) per queued caller) and total time against the same items sent as
    ``await fn.remote(x)`` under an ``asyncio.Semaphore(4)`` (target: <= 1.1x).
(b) ``--streams`` (default 10,000) concurrent ``gather([ref])`` and ``as_completed([ref])``
    streams against as many concurrent ``await ref``: peak extra OS threads (target <= 4) and
    rate (target >= 0.9x of ``await ref``).
(c) event-loop lag p99 (target < 50 ms) while (a) and (b) run, from a ticker started before
    anything is submitted; and the largest lag of each method, also net of the cyclic garbage
    collector's pauses within it (a full collection walks every live object of the process,
    the callers' own tasks included: its pause is the interpreter's, paid by the baseline's
    callers as by the pool's).

    python -m benchmarks.bench_scale [--quick] [--rounds 3] [--address ADDR] [--json out.json]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import statistics
import sys
import threading
import time
import traceback
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import ray

import asyncpool
from asyncpool import TaskPool, _cancel, _completion, as_completed, gather

A = TypeVar("A")

SLOTS = 4
TICK_S = 0.005
#: A loop that has not ticked for this long is a stall: its stack is recorded.
STALL_S = 0.1


def noop(x: int) -> int:
    return x


_noop_remote = ray.remote(noop)


@dataclass
class Stall:
    """One stretch of more than ``STALL_S`` in which the loop did not tick, and where the loop
    thread was when the watchdog first saw it (innermost frames last)."""

    at_s: float
    duration_s: float
    stack: list[str]
    #: The method being measured when it began (``_PHASE``).
    phase: str = ""


@dataclass
class _Ticker:
    """Event-loop lag: how late a ``sleep(TICK_S)`` wakes up, sampled for the whole run; and a
    watchdog thread that, when the loop has not ticked for ``STALL_S``, records the loop
    thread's stack (``sys._current_frames``), so that a stall names the code that caused it."""

    lags: list[float] = field(default_factory=list)
    #: Each tick's lag less the garbage collector's pauses during it (``_GC_PAUSED_S``).
    net_of_gc: list[float] = field(default_factory=list)
    stalls: list[Stall] = field(default_factory=list)
    peak_threads: int = 0
    _stop: asyncio.Event = field(default_factory=asyncio.Event)
    _task: asyncio.Task[None] | None = None
    _last_tick: float = 0.0
    _loop_ident: int = 0
    _started: float = 0.0
    _watching: bool = False
    _pending: Stall | None = None
    _watchdog: threading.Thread | None = None

    def start(self) -> None:
        self._started = self._last_tick = time.perf_counter()
        self._loop_ident = threading.get_ident()
        self._watching = True
        self._watchdog = threading.Thread(
            target=self._watch, name="bench-stall-watchdog", daemon=True
        )
        self._watchdog.start()
        self._task = asyncio.create_task(self._run())

    async def _run(self) -> None:
        while not self._stop.is_set():
            t0 = time.perf_counter()
            paused = _GC_PAUSED_S[0]
            await asyncio.sleep(TICK_S)
            now = time.perf_counter()
            self._last_tick = now
            lag = now - t0 - TICK_S
            self.lags.append(lag)
            self.net_of_gc.append(max(0.0, lag - (_GC_PAUSED_S[0] - paused)))
            stall = self._pending
            if stall is not None:
                self._pending = None
                stall.duration_s = now - t0 - TICK_S
                self.stalls.append(stall)
            self.peak_threads = max(self.peak_threads, threading.active_count())

    def _watch(self) -> None:
        while self._watching:
            time.sleep(STALL_S / 5)
            last = self._last_tick
            if self._pending is None and time.perf_counter() - last > STALL_S:
                frame = sys._current_frames().get(self._loop_ident)
                stack = traceback.format_stack(frame) if frame is not None else []
                # Drop the frame now: kept, it is this thread that would free the loop frame's
                # locals (ObjectRefs among them) when it next wakes, possibly after
                # ray.shutdown(), which makes Ray end the process ("The core worker has
                # already been shutdown"): what lost two 100k runs' figures.
                del frame
                self._pending = Stall(last - self._started, 0.0, stack, _PHASE[0])

    def mark(self) -> int:
        return len(self.lags)

    def reset_peak(self) -> None:
        self.peak_threads = threading.active_count()

    async def stop(self) -> None:
        self._watching = False
        self._stop.set()
        if self._task is not None:
            await self._task
        if self._watchdog is not None:
            await asyncio.to_thread(self._watchdog.join)  # gone before Ray shuts down


#: What the run is measuring now (a method's name, or "between"): the GC clock and the lag
#: figures are kept per method, so that a pause can be put on asyncpool or on its baseline.
_PHASE = ["warm-up"]
#: The garbage collector's pauses so far, in all (any thread's collection stops the loop too).
_GC_PAUSED_S = [0.0]


class _GcClock:
    """The cyclic garbage collector's pauses (``gc.callbacks``), per generation and per method
    being measured: a stall whose stack shows no slow code of its own is often a full
    collection over the run's live tasks, and the per-method figures say whose tasks."""

    def __init__(self) -> None:
        self.pauses: dict[int, list[float]] = {0: [], 1: [], 2: []}
        self.by_phase: dict[str, list[float]] = {}
        self._t0 = 0.0

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._t0 = time.perf_counter()
        else:
            pause = time.perf_counter() - self._t0
            _GC_PAUSED_S[0] += pause
            self.pauses[info["generation"]].append(pause)
            self.by_phase.setdefault(_PHASE[0], []).append(pause)

    def __enter__(self) -> _GcClock:
        gc.callbacks.append(self)
        return self

    def __exit__(self, *exc: object) -> None:
        gc.callbacks.remove(self)

    def summary(self) -> dict[str, dict[str, float]]:
        return {f"gen{g}": _pause_figures(p) for g, p in self.pauses.items()}

    def phase_summary(self) -> dict[str, dict[str, float]]:
        return {phase: _pause_figures(p) for phase, p in self.by_phase.items()}


def _pause_figures(pauses: list[float]) -> dict[str, float]:
    return {"count": len(pauses), "total_s": round(sum(pauses), 3),
            "max_ms": round(max(pauses, default=0.0) * 1000, 1)}  # fmt: skip


def _p99(values: list[float]) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]


# --------------------------------------------------------------------------- (a) queued submits


#: Callers are started this many at a time, yielding to the loop between: starting 100k
#: tasks in one ``asyncio.gather(*(...))`` call runs their first steps in one loop iteration,
#: which the stall finder showed as 1-7 s stalls of the benchmark's own code (for the
#: semaphore baseline as for the pool), not of what is measured.
SPAWN_CHUNK = 500


async def _spawned(args: Sequence[A], call: Callable[[A], Awaitable[int]]) -> list[int]:
    """``call(arg)`` for every arg, as concurrent tasks started ``SPAWN_CHUNK`` at a time."""
    tasks: list[asyncio.Future[int]] = []
    for start in range(0, len(args), SPAWN_CHUNK):
        tasks.extend(asyncio.ensure_future(call(a)) for a in args[start : start + SPAWN_CHUNK])
        await asyncio.sleep(0)
    return await asyncio.gather(*tasks)


async def _callers(n: int, call: Callable[[int], Awaitable[int]]) -> list[int]:
    return await _spawned(range(n), call)


async def a_pool(n: int, pool: TaskPool[[int], int]) -> None:
    results = await _callers(n, pool.submit)
    assert results[-1] == n - 1


async def a_semaphore(n: int, remote: Any) -> None:
    sem = asyncio.Semaphore(SLOTS)

    async def one(i: int) -> int:
        async with sem:
            return await remote.remote(i)  # type: ignore[no-any-return]

    results = await _callers(n, one)
    assert results[-1] == n - 1


# --------------------------------------------------------------------------- (b) streams


async def _submit(remote: Any, n: int, chunk: int = 256) -> list[ray.ObjectRef[int]]:
    """``n`` tasks, yielding to the loop between chunks (as a well-behaved caller does), so
    that the lag figures measure the waiting, not one long synchronous submission."""
    refs: list[ray.ObjectRef[int]] = []
    for start in range(0, n, chunk):
        refs.extend(remote.remote(i) for i in range(start, min(n, start + chunk)))
        await asyncio.sleep(0)
    return refs


async def _streams(
    refs: list[ray.ObjectRef[int]], one: Callable[[ray.ObjectRef[int]], Awaitable[int]]
) -> None:
    """``one(ref)`` for every ref, started like (a)'s callers (:func:`_spawned`: 10k started in
    one call were 0.4-0.9 s stalls of this code, for ``await ref`` as for asyncpool)."""
    await _spawned(refs, one)


async def b_await_ref(refs: list[ray.ObjectRef[int]]) -> None:
    async def one(ref: ray.ObjectRef[int]) -> int:
        return await ref

    await _streams(refs, one)


async def b_gather(refs: list[ray.ObjectRef[int]]) -> None:
    async def one(ref: ray.ObjectRef[int]) -> int:
        (value,) = await gather([ref])
        return value  # type: ignore[no-any-return]

    await _streams(refs, one)


async def b_as_completed(refs: list[ray.ObjectRef[int]]) -> None:
    async def one(ref: ray.ObjectRef[int]) -> int:
        async with as_completed([ref]) as stream:
            async for _, value in stream:
                return value  # type: ignore[no-any-return]
        raise AssertionError("empty stream")

    await _streams(refs, one)


B_METHODS: dict[str, Callable[[list[ray.ObjectRef[int]]], Awaitable[None]]] = {
    "await_ref": b_await_ref,
    "gather([ref])": b_gather,
    "as_completed([ref])": b_as_completed,
}


# --------------------------------------------------------------------------- the run


async def measure(queued: list[int], streams: int, rounds: int) -> dict[str, Any]:
    ticker = _Ticker()
    ticker.start()  # before anything is submitted
    remote = _noop_remote.options(scheduling_strategy="SPREAD", max_retries=3)
    a_rows: dict[tuple[str, int], dict[str, list[float]]] = {}
    b_rows: dict[str, dict[str, list[float]]] = {m: {"s": [], "threads": []} for m in B_METHODS}
    lag_marks: dict[str, list[float]] = {"a": [], "b": []}
    lag_by_method: dict[str, list[float]] = {}
    net_by_method: dict[str, list[float]] = {}
    async with TaskPool(noop, max_in_flight=SLOTS, name="bench_scale") as pool:
        # Warm-up: workers started, functions exported, both paths exercised once.
        await a_pool(min(200, queued[0]), pool)
        await a_semaphore(min(200, queued[0]), remote)
        for fn in B_METHODS.values():
            await fn(await _submit(remote, min(200, streams)))
        for r in range(rounds):
            for n in queued:
                order: list[tuple[str, Callable[[int, Any], Awaitable[None]], Any]] = [
                    ("pool", a_pool, pool), ("semaphore", a_semaphore, remote)
                ]
                if r % 2:
                    order.reverse()
                for name, fn_a, arg in order:
                    start_mark = ticker.mark()
                    _PHASE[0] = "TaskPool.submit" if name == "pool" else "Semaphore(4)+await"
                    cpu0, t0 = time.thread_time(), time.perf_counter()
                    await fn_a(n, arg)
                    wall, cpu = time.perf_counter() - t0, time.thread_time() - cpu0
                    _PHASE[0] = "between"
                    lag_by_method.setdefault(f"(a) {name}", []).extend(ticker.lags[start_mark:])
                    net_by_method.setdefault(f"(a) {name}", []).extend(
                        ticker.net_of_gc[start_mark:]
                    )
                    row = a_rows.setdefault((name, n), {"s": [], "cpu_per_1k": []})
                    row["s"].append(wall)
                    row["cpu_per_1k"].append(cpu / n * 1000)
                    lag_marks["a"].extend(ticker.lags[start_mark:])
            names = list(B_METHODS)
            names = names[r % len(names) :] + names[: r % len(names)]
            for name in names:
                refs = await _submit(remote, streams)  # submitted, then awaited
                before = threading.active_count()
                ticker.reset_peak()
                start_mark = ticker.mark()
                _PHASE[0] = name
                t0 = time.perf_counter()
                await B_METHODS[name](refs)
                b_rows[name]["s"].append(time.perf_counter() - t0)
                _PHASE[0] = "between"
                lag_by_method.setdefault(f"(b) {name}", []).extend(ticker.lags[start_mark:])
                net_by_method.setdefault(f"(b) {name}", []).extend(ticker.net_of_gc[start_mark:])
                b_rows[name]["threads"].append(
                    max(ticker.peak_threads, threading.active_count()) - before
                )
                lag_marks["b"].extend(ticker.lags[start_mark:])
    await ticker.stop()
    helpers = [t.name for t in _completion.helper_threads() + _cancel.helper_threads()]
    return {"helpers": helpers, "a": a_rows, "b": b_rows, "lags": ticker.lags,
            "lag_marks": lag_marks, "lag_by_method": lag_by_method,
            "net_by_method": net_by_method, "queued": queued,
            "streams": streams,
            "stalls": ticker.stalls}


def report(data: dict[str, Any]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    a = data["a"]
    for n in data["queued"]:
        base = statistics.median(a[("semaphore", n)]["s"])
        for name in ("pool", "semaphore"):
            got = a[(name, n)]
            med = statistics.median(got["s"])
            rows.append({
                "part": "a", "method": f"TaskPool.submit x{n}" if name == "pool"
                else f"Semaphore(4)+await x{n}",
                "items": n, "median_s": round(med, 3),
                "loop_cpu_ms_per_1k": round(statistics.median(got["cpu_per_1k"]) * 1000, 2),
                "time_vs_baseline": round(med / base, 3), "target": "<= 1.1x" if name == "pool"
                else "baseline",
            })
    b = data["b"]
    base = statistics.median(b["await_ref"]["s"])
    for name, got in b.items():
        med = statistics.median(got["s"])
        rows.append({
            "part": "b", "method": f"{name} x{data['streams']}", "items": data["streams"],
            "median_s": round(med, 3), "per_second": round(data["streams"] / med, 1),
            "rate_vs_await_ref": round(base / med, 3),
            "peak_extra_threads": max(got["threads"]),
            "target": "baseline" if name == "await_ref" else ">= 0.9x, <= 4 threads",
        })
    for part in ("a", "b"):
        lags = data["lag_marks"][part]
        rows.append({"part": "c", "method": f"loop lag during ({part})",
                     "p99_ms": round(_p99(lags) * 1000, 2),
                     "max_ms": round(max(lags, default=0.0) * 1000, 2),
                     "ticks": len(lags), "target": "p99 < 50 ms"})
    for method, lags in data["lag_by_method"].items():
        net = data["net_by_method"][method]
        rows.append({"part": "c", "method": f"  lag during {method}",
                     "p99_ms": round(_p99(lags) * 1000, 2),
                     "max_ms": round(max(lags, default=0.0) * 1000, 2),
                     "max_net_of_gc_ms": round(max(net, default=0.0) * 1000, 2),
                     "ticks": len(lags), "target": "max < 100 ms"})
    return rows


def _print(rows: list[dict[str, Any]]) -> None:
    print(f"{'part':<5}{'method':<34}{'median s':>10}{'loop ms/1k':>12}{'ratio':>8}"
          f"{'threads':>9}{'p99 ms':>9}{'max ms':>9}{'-gc ms':>9}  target")
    for row in rows:
        ratio = row.get("time_vs_baseline", row.get("rate_vs_await_ref", ""))
        print(f"{row['part']:<5}{row['method']:<34}{row.get('median_s', ''):>10}"
              f"{row.get('loop_cpu_ms_per_1k', ''):>12}{ratio:>8}"
              f"{row.get('peak_extra_threads', ''):>9}{row.get('p99_ms', ''):>9}"
              f"{row.get('max_ms', ''):>9}{row.get('max_net_of_gc_ms', ''):>9}  {row['target']}")


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes: a smoke run")
    ap.add_argument("--queued", type=int, nargs="+", default=None)
    ap.add_argument("--streams", type=int, default=None)
    ap.add_argument("--rounds", type=int, default=None)
    ap.add_argument(
        "--address", default="local",
        help="cluster to run on (default: a new embedded one, so other clusters are not disturbed)",
    )
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    queued = args.queued or ([200, 1000, 2000] if args.quick else [2000, 10_000, 100_000])
    streams = args.streams or (500 if args.quick else 10_000)
    rounds = args.rounds or (1 if args.quick else 3)
    rt = asyncpool.init(args.address, log_to_driver=False)
    try:
        with _GcClock() as gc_clock:
            data = asyncpool.run(measure, queued, streams, rounds)
    except BaseException:
        traceback.print_exc()  # before Ray's shutdown, whatever it does to the process
        sys.stdout.flush()
        raise
    finally:
        rt.shutdown()
    rows = report(data)
    _print(rows)
    print(f"asyncpool helper threads alive at the end: {len(data['helpers'])} {data['helpers']}")
    stalls: list[Stall] = data["stalls"]
    gc_summary = gc_clock.summary()
    print("garbage collector pauses (the loop thread's included): " + ", ".join(
        f"{g}: {v['count']} x, {v['total_s']} s total, max {v['max_ms']} ms"
        for g, v in gc_summary.items()))  # fmt: skip
    print("garbage collector pauses per method measured (all generations):")
    for phase, v in gc_clock.phase_summary().items():
        print(f"  {phase:<24} {v['count']:>6} x, {v['total_s']:>7} s total, max {v['max_ms']} ms")
    print(f"loop stalls > {STALL_S * 1000:.0f} ms: {len(stalls)}")
    for stall in sorted(stalls, key=lambda s: -s.duration_s)[:5]:
        print(f"  {stall.duration_s * 1000:.0f} ms at {stall.at_s:.1f} s, during {stall.phase}; "
              "the loop thread was in:")
        for line in stall.stack[-6:]:
            print("    " + line.rstrip().replace("\n", "\n    "))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"ray_version": ray.__version__, "rounds": rounds, "rows": rows,
                       "helper_threads": data["helpers"], "gc": gc_summary,
                       "gc_by_method": gc_clock.phase_summary(),
                       "stalls": [vars(s) for s in stalls]}, fh, indent=2)


if __name__ == "__main__":
    main()
