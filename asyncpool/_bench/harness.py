"""The harness behind ``asyncpool bench``: verifications per minute, side by side in one run.

Each workload has a baseline method (the best asyncio code a Ray user writes by hand), the
methods compared against it (asyncpool; the executor pattern users have today; what Ray
itself ships for the job: Ray Data, ``ray.util.multiprocessing.Pool``, ``ray.util.ActorPool``,
``ray.util.as_completed``...) and, for most, a *ceiling* method (what the hardware or Ray
allows). Every method of a workload gets the same items, in the same run, on the same
cluster, interleaved round by round, so the ratios mean something on a shared, noisy machine
where absolute times do not. Before any timing, each workload warms up untimed (Ray workers
started, fork servers, actors, Ray Data's executor), so the rounds measure steady state.

Workloads (:mod:`asyncpool._bench.workloads`): ``humaneval`` (CPU-bound sandboxed programs),
``math`` (millisecond math-verify checks), ``judge`` (50 ms latency-bound actor calls),
``noop`` (collecting no-op results). ``--scale`` (:mod:`asyncpool._bench.scale`) measures
instead how the driver's per-item cost grows from 1,000 to 100,000 items.

Each row is the median of its method's rounds (``--rounds``: 3 with ``--quick``, 5 for a full
run) with the lowest and highest round beside it, and every ratio is of the medians, with the
same ratio's lowest and highest within one round: whether a ratio held "in every run" can be
read off one report.

Output (:mod:`asyncpool._bench.report`): a live progress bar, the table (its footer: what each
method is, asyncpool against the best alternative, which rows a loaded machine hurts, the load
average), ``--json`` (medians, spreads and every round's figures) and ``--plot``.

The commands a measurement needs::

    asyncpool bench --quick --json quick.json --plot quick.png      # a few minutes
    asyncpool bench --json full.json --plot full.png                # 5 rounds of ~3x quick
    asyncpool bench --scale --json scale.json --plot scale.png      # 1k, 10k, 100k items
    asyncpool bench --quick --load 4 --json loaded.json --plot loaded.png  # + 4 busy processes
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from typing import Any

if sys.version_info < (3, 11):  # pragma: no cover - the backport on older Pythons
    from exceptiongroup import BaseExceptionGroup

import asyncpool

from . import quiet
from .core import Method, Outcome, Round, Row, Workload, limit_cores, round_ratios, summarize
from .quiet import Settled
from .report import (
    Machine,
    ceiling_ratios,
    machine_now,
    print_table,
    ratios,
    versus_best_peer,
    write_json,
    write_plot,
)
from .scale import QUICK_SIZES, SIZES, ScaleRow, run_scale
from .workloads import HUMANEVAL, JUDGE, MATH, NOOP, OPT_IN, WORKLOADS
from .workloads.noop import noop_refs

__all__ = [
    "FULL_ROUNDS", "HUMANEVAL", "JUDGE", "MATH", "NOOP", "QUICK_ROUNDS", "WORKLOADS", "Machine",
    "Method", "Round", "Row", "Workload", "bench_address", "bench_rounds", "ceiling_ratios",
    "limit_cores", "main", "method_items", "ratios", "round_ratios", "run_workloads",
    "scale_sizes", "select", "summarize", "versus_best_peer", "write_json", "write_plot",
]

#: Rounds per method when ``--rounds`` is not given: a median needs three; a full run, whose
#: rounds are ~3x longer, takes five so that two outlying rounds cannot move its median.
QUICK_ROUNDS = 3
FULL_ROUNDS = 5


def bench_rounds(rounds: int | None, quick: bool) -> int:
    """The rounds a run makes: ``--rounds``, else :data:`QUICK_ROUNDS` / :data:`FULL_ROUNDS`."""
    if rounds is not None:
        return rounds
    return QUICK_ROUNDS if quick else FULL_ROUNDS


async def _warm_up() -> None:
    await asyncpool.gather(noop_refs(200))


def method_items(method: Method, n: int) -> int:
    """The items per round ``method`` runs when its workload runs ``n``."""
    return n if method.max_items is None else min(n, method.max_items)


async def run_workloads(
    workloads: Sequence[Workload],
    items: int | None,
    quick: bool,
    show_progress: bool,
    rounds: int = 3,
    settled: list[Settled] | None = None,
) -> list[Row]:
    """Run every method of every workload ``rounds`` times, interleaved round by round.

    Each round of each method is timed on its own; a row is the median of its method's
    rounds with their spread (:func:`~asyncpool._bench.core.summarize`). Interleaving (each
    round starts with the next method) makes machine noise fall on every method of a
    workload alike, and pairs round ``r`` of two methods for per-round ratios. The progress
    callbacks only bump a counter; a ticker redraws the bar, so drawing costs the measured
    methods nothing per item.
    """
    import anyio
    from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
    from rich.progress import Progress as RichProgress

    await _warm_up()
    rows: list[Row] = []
    with RichProgress(
        TextColumn("{task.description:<34}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        disable=not show_progress,
    ) as bar:
        for workload in workloads:
            n = items or (workload.quick_items if quick else workload.items)
            counts = {m.name: method_items(m, n) for m in workload.methods}
            done = {m.name: 0 for m in workload.methods}
            measured: dict[str, list[Round]] = {m.name: [] for m in workload.methods}
            warming = bar.add_task(f"{workload.name}: warming up", total=None)
            tasks = {
                m.name: bar.add_task(f"{workload.name}/{m.name}", total=counts[m.name] * rounds)
                for m in workload.methods
            }

            async def redraw(done: dict[str, int] = done, tasks: dict[str, Any] = tasks) -> None:
                while True:
                    for name, task in tasks.items():
                        bar.update(task, completed=done[name])
                    await anyio.sleep(0.1)

            # Each workload starts from a quiet cluster: what an earlier one started (its
            # actors, Ray Data's pools, fork servers) is gone, or the report says it was not.
            found = await quiet.settle(workload.name)
            if settled is not None:
                settled.append(found)
            async with workload.session(n) as ctx:
                bar.update(warming, total=1, completed=1)
                async with anyio.create_task_group() as tg:
                    tg.start_soon(redraw)
                    for r in range(rounds):
                        order = list(workload.methods)
                        shift = r % len(order)
                        for method in order[shift:] + order[:shift]:

                            def advance(
                                k: int, name: str = method.name, done: dict[str, int] = done
                            ) -> None:
                                done[name] += k

                            t0 = time.perf_counter()
                            try:
                                outcome = await method.run(ctx, counts[method.name], advance)
                            except Exception as exc:  # one failing method must not end the run
                                print(f"{workload.name}/{method.name} failed: {exc!r}",
                                      file=sys.stderr)
                                outcome = Outcome(0, counts[method.name])
                            measured[method.name].append(
                                Round(counts[method.name], time.perf_counter() - t0,
                                      outcome.correct, outcome.errors, outcome.scale)
                            )
                    tg.cancel_scope.cancel()
            bar.remove_task(warming)
            for name, task in tasks.items():
                bar.update(task, completed=done[name])
            rows += [summarize(workload.name, m.name, measured[m.name]) for m in workload.methods]
    return rows


def select(spec: str) -> list[Workload]:
    if spec == "all":
        return [w for name, w in WORKLOADS.items() if name not in OPT_IN]
    chosen = [s.strip() for s in spec.split(",") if s.strip()]
    unknown = [s for s in chosen if s not in WORKLOADS]
    if unknown or not chosen:
        raise SystemExit(
            f"unknown workload(s) {unknown}; choose from {', '.join(WORKLOADS)} or all"
        )
    return [WORKLOADS[s] for s in chosen]


def bench_address(address: str | None) -> str:
    """Where to run: ``--address``, else ``ASYNCPOOL_ADDRESS`` / ``RAY_ADDRESS``, else a new
    embedded local cluster of this machine's CPUs. Unlike ``asyncpool.init``, the bench never
    joins a tagged local cluster it happens to find: that one belongs to someone else (a test
    session, a service) whose shape and load would become part of the measurement."""
    return (
        address
        or os.environ.get("ASYNCPOOL_ADDRESS")
        or os.environ.get("RAY_ADDRESS")
        or "local"
    )


def scale_sizes(items: int | None, quick: bool) -> tuple[int, ...]:
    """The sizes ``--scale`` runs: 1k, 10k and 100k items (``--quick``: 1k and 10k), or
    ``--items N``: N and 10 x N (a smoke run)."""
    if items:
        return (items, 10 * items)
    return QUICK_SIZES if quick else SIZES


def _die_with_parent() -> None:
    """In a busy child, before exec: SIGKILL it when the bench process dies, even by SIGKILL
    (Linux ``PR_SET_PDEATHSIG``), so a killed bench never leaves spinning processes."""
    if sys.platform == "linux":
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


class _BusyProcesses:
    """``--load N``: N processes spinning on a core each, at normal priority, for the whole
    run: the loaded-machine variant of a measurement, reproducible on a quiet machine. Ended
    (by their own pids) when the run ends, however it ends; killed by the kernel if the bench
    itself is killed.

    Each runs in its own session, as unrelated jobs on a shared node do. In the bench's own
    session they would share its scheduling autogroup, where nice values count: Ray starts
    its workers at nice 15, so every Ray worker got about 1 % of a core against them and a
    quick run did not end within 15 minutes, a starvation no real neighbour causes."""

    def __init__(self, n: int) -> None:
        self.procs = [
            subprocess.Popen([sys.executable, "-c", "while True: pass"],
                             preexec_fn=_die_with_parent, start_new_session=True)
            for _ in range(n)
        ]

    def close(self) -> None:
        for p in self.procs:
            p.kill()
        for p in self.procs:
            p.wait()


class _StopSignals:
    """SIGTERM (and SIGINT) end the run as Ctrl-C does: a ``KeyboardInterrupt``, then the
    ``finally`` blocks (busy processes, pools, Ray) and a one-line message, exit 128 + signal.

    Ray's driver turns SIGTERM into ``sys.exit(15)`` wherever the main thread is, which inside
    the harness's task groups surfaced as a traceback of an exception group; this handler is
    installed after ``ray.init`` so that it replaces Ray's."""

    def __init__(self) -> None:
        self.signum: int | None = None
        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, self._handle)

    def _handle(self, signum: int, frame: object) -> None:
        if self.signum is None:
            self.signum = signum
            raise KeyboardInterrupt
        # A second signal while the run unwinds: let the unwinding finish.


def _is_interrupt(exc: BaseException) -> bool:
    """A stop signal's ``KeyboardInterrupt``, possibly wrapped by task groups with the
    cancellations it caused."""
    if isinstance(exc, BaseExceptionGroup):
        return all(_is_interrupt(e) for e in exc.exceptions)
    return isinstance(exc, (KeyboardInterrupt, SystemExit, asyncio.CancelledError))


def main(args: argparse.Namespace) -> int:
    workloads = [] if args.scale else select(args.workload)
    rt = asyncpool.init(bench_address(args.address), log_to_driver=False)
    stop = _StopSignals()
    background = _BusyProcesses(args.load)
    try:
        start = os.getloadavg()[0]
        rows: list[Row] = []
        scale: list[ScaleRow] = []
        settled: list[Settled] = []
        if workloads:
            rows = asyncpool.run(
                run_workloads, workloads, args.items, args.quick, not args.no_progress,
                bench_rounds(args.rounds, args.quick), settled,
            )
        if args.scale:
            scale = asyncpool.run(run_scale, scale_sizes(args.items, args.quick))
        machine = machine_now(start, args.load, settled)
        print_table(rows, machine, scale)
        if args.json:
            write_json(args.json, rows, machine, scale)
        if args.plot:
            write_plot(args.plot, rows, machine, scale)
    except BaseException as exc:
        if stop.signum is None or not _is_interrupt(exc):
            raise
        name = signal.Signals(stop.signum).name
        print(f"asyncpool bench: stopped by {name}; no table written", file=sys.stderr)
        return 128 + stop.signum
    finally:
        background.close()
        rt.shutdown()
    return 0
