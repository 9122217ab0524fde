"""The harness behind ``asyncpool bench``: verifications per minute, side by side in one run.

Each workload has a baseline method and the methods compared against it; every method of a
workload gets the same items, in the same run, on the same cluster, so the ratios mean
something on a shared, noisy machine where absolute times do not.

Output: a live progress bar, a final table, and optionally ``--json`` (the rows as
``{"ray_version", "cpus", "rows": [{"workload", "method", "items", "seconds", "per_minute",
"correct", "errors"}, ...]}``) and ``--plot`` (a PNG bar chart with the ratios).
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import ray

import asyncpool
from asyncpool import refs

Progress = Callable[[int], None]


@dataclass(frozen=True)
class Outcome:
    correct: int
    errors: int


@dataclass(frozen=True)
class Method:
    name: str
    run: Callable[[int, Progress], Awaitable[Outcome]]


@dataclass(frozen=True)
class Workload:
    name: str
    baseline: str
    methods: Sequence[Method]
    items: int
    quick_items: int
    describe: str


@dataclass(frozen=True)
class Row:
    workload: str
    method: str
    items: int
    seconds: float
    per_minute: float
    correct: int
    errors: int


# --------------------------------------------------------------------------- noop


@ray.remote
def _noop(i: int) -> int:
    return i


def _noop_refs(n: int) -> list[ray.ObjectRef[int]]:
    return [_noop.remote(i) for i in range(n)]


async def _noop_ray_get(n: int, progress: Progress) -> Outcome:
    values = ray.get(_noop_refs(n))
    progress(n)
    return Outcome(sum(v == i for i, v in enumerate(values)), 0)


async def _noop_gather(n: int, progress: Progress) -> Outcome:
    values = await refs.gather(_noop_refs(n))
    progress(n)
    return Outcome(sum(v == i for i, v in enumerate(values)), 0)


async def _noop_as_completed(n: int, progress: Progress) -> Outcome:
    correct = 0
    async with refs.as_completed(_noop_refs(n)) as stream:
        async for index, value in stream:
            correct += index == value
            progress(1)
    return Outcome(correct, 0)


NOOP = Workload(
    name="noop",
    baseline="ray_get",
    methods=(
        Method("ray_get", _noop_ray_get),
        Method("asyncpool_gather", _noop_gather),
        Method("asyncpool_as_completed", _noop_as_completed),
    ),
    items=10_000,
    quick_items=2_000,
    describe="no-op tasks: collecting results (plain ray.get(list) is the ceiling)",
)

WORKLOADS: dict[str, Workload] = {w.name: w for w in (NOOP,)}


# --------------------------------------------------------------------------- running


async def _warm_up() -> None:
    await refs.gather(_noop_refs(200))


async def run_workloads(
    workloads: Sequence[Workload],
    items: int | None,
    quick: bool,
    show_progress: bool,
    rounds: int = 3,
) -> list[Row]:
    """Run every method of every workload ``rounds`` times, interleaved round by round.

    A row sums its method's rounds (items, seconds, correct, errors), so machine noise
    falls on every method of a workload alike. The progress callbacks only bump a counter;
    a ticker redraws the bar, so drawing costs the measured methods nothing per item.
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
            done = {m.name: 0 for m in workload.methods}
            totals = {m.name: [0.0, 0, 0] for m in workload.methods}
            tasks = {
                m.name: bar.add_task(f"{workload.name}/{m.name}", total=n * rounds)
                for m in workload.methods
            }

            async def redraw(done: dict[str, int] = done, tasks: dict[str, Any] = tasks) -> None:
                while True:
                    for name, task in tasks.items():
                        bar.update(task, completed=done[name])
                    await anyio.sleep(0.1)

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
                        outcome = await method.run(n, advance)
                        total = totals[method.name]
                        total[0] += time.perf_counter() - t0
                        total[1] += outcome.correct
                        total[2] += outcome.errors
                tg.cancel_scope.cancel()
            for name, task in tasks.items():
                bar.update(task, completed=done[name])
            for method in workload.methods:
                seconds, correct, errors = totals[method.name]
                rows.append(
                    Row(workload.name, method.name, n * rounds, round(seconds, 4),
                        round(n * rounds / seconds * 60.0, 1), int(correct), int(errors))
                )
    return rows


def ratios(rows: Sequence[Row]) -> dict[tuple[str, str], float]:
    """Each row's rate over its workload's baseline rate, from the same run."""
    base = {
        r.workload: r.per_minute
        for r in rows
        if r.method == WORKLOADS[r.workload].baseline
    }
    return {
        (r.workload, r.method): round(r.per_minute / base[r.workload], 3)
        for r in rows
        if base.get(r.workload)
    }


def print_table(rows: Sequence[Row]) -> None:
    from rich.console import Console
    from rich.table import Table

    rel = ratios(rows)
    table = Table(title="asyncpool bench: verifications per minute")
    for col in ("workload", "method", "items", "seconds", "per minute", "× baseline",
                "correct", "errors"):
        table.add_column(col, justify="left" if col in ("workload", "method") else "right")
    for r in rows:
        table.add_row(r.workload, r.method, str(r.items), f"{r.seconds:.2f}",
                      f"{r.per_minute:,.0f}", f"{rel.get((r.workload, r.method), 0):.3f}",
                      str(r.correct), str(r.errors))
    console = Console()
    console.width = max(console.width, 110)
    console.print(table)


def write_json(path: str, rows: Sequence[Row]) -> None:
    doc = {
        "ray_version": ray.__version__,
        "cpus": int(ray.cluster_resources().get("CPU", 0)),
        "rows": [asdict(r) for r in rows],
    }
    with open(path, "w") as fh:
        json.dump(doc, fh, indent=2)


def write_plot(path: str, rows: Sequence[Row]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rel = ratios(rows)
    names = list(dict.fromkeys(r.workload for r in rows))
    fig, axes = plt.subplots(1, len(names), figsize=(5 * len(names), 4.2), squeeze=False)
    for ax, workload in zip(axes[0], names, strict=True):
        sub = [r for r in rows if r.workload == workload]
        bars = ax.bar([r.method for r in sub], [r.per_minute for r in sub], color="#4C72B0")
        for bar, r in zip(bars, sub, strict=True):
            ax.annotate(f"{rel.get((workload, r.method), 0):.2f}×",
                        (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                        ha="center", va="bottom", fontsize=9)
        ax.set_title(f"{workload} (ratios vs {WORKLOADS[workload].baseline})")
        ax.set_ylabel("verifications per minute")
        ax.tick_params(axis="x", labelrotation=20)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def select(spec: str) -> list[Workload]:
    if spec == "all":
        return list(WORKLOADS.values())
    chosen = [s.strip() for s in spec.split(",") if s.strip()]
    unknown = [s for s in chosen if s not in WORKLOADS]
    if unknown or not chosen:
        raise SystemExit(
            f"unknown workload(s) {unknown}; choose from {', '.join(WORKLOADS)} or all"
        )
    return [WORKLOADS[s] for s in chosen]


def main(args: argparse.Namespace) -> int:
    workloads = select(args.workload)
    rt = asyncpool.init(args.address, log_to_driver=False)
    try:
        rows = asyncpool.run(
            run_workloads, workloads, args.items, args.quick, not args.no_progress, args.rounds
        )
        print_table(rows)
        if args.json:
            write_json(args.json, rows)
        if args.plot:
            write_plot(args.plot, rows)
    finally:
        rt.shutdown()
    return 0
