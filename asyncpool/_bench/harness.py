"""The harness behind ``asyncpool bench``: verifications per minute, side by side in one run.

Each workload has a baseline method and the methods compared against it (and, for some, a
*ceiling* method: what the hardware or Ray itself allows); every method of a workload gets the
same items, in the same run, on the same cluster, interleaved round by round, so the ratios
mean something on a shared, noisy machine where absolute times do not.

Workloads and methods
---------------------
``humaneval`` (baseline ``sequential``, ceiling ``limit``): HumanEval programs (each problem's
canonical solution, expected to pass, and a broken variant, expected to fail; see
:mod:`asyncpool._bench.humaneval`) run through :func:`asyncpool.sandbox.run_python`. A verification
is correct when its verdict matches the label.

* ``sequential`` - ``run_python`` in a loop in the driver (in one worker thread, so the event
  loop keeps drawing the progress bar): one verification at a time, the baseline.
* ``executor`` - the pattern users write today: one SPREAD Ray task per item calling
  ``run_python``, each awaited with ``await loop.run_in_executor(None, ray.get, ref)`` under an
  ``asyncio.Semaphore`` of twice the cluster's CPUs.
* ``asyncpool`` - a :class:`~asyncpool.TaskPool` of the same check (SPREAD, ``batch_size=``
  :data:`HUMANEVAL_BATCH`: several items per Ray task, each still yielded on its own),
  ``pool.map(items)``. A Ray task costs about 1-2 ms of CPU here (driver, raylet, worker) on
  top of the ~4 ms check, so one task per item would give a third of the machine to Ray;
  16 items (~70 ms) make it a few per cent. ``batch_size="auto"`` aims at ~30 ms tasks from
  the wall time it measures in the workers, which on a loaded machine shrinks the batches
  (to 2-4 items) just when CPU is scarce, so the bench sets the size, as a user who knows
  the cost of a check would.
* ``limit`` - the physical ceiling, measured in the same run: the barest isolation
  (:func:`asyncpool.sandbox.run_python_bare`: fork the prepared interpreter, run the program
  with no limits, wait) on the same items, sequentially in the driver, times the number of
  cores (:func:`limit_cores`). Its row's ``seconds`` are the real seconds of those sequential
  runs and its ``per_minute`` is ``cores x items / seconds x 60``; its ``correct`` comes from
  the bare runs.

``judge`` (baseline ``executor``, ceiling ``ray_actors``): latency-bound items, the stand-in for
a remote judge call: 50 ms of waiting that returns a score derived from the item; correct when
the score matches.

* ``executor`` - SPREAD Ray tasks that ``time.sleep(0.05)``, each awaited with
  ``run_in_executor(None, ray.get, ref)`` under a semaphore of 512, tasks with Ray's default
  resources, as users write it: at most ``min(the default executor's threads, the cluster's
  CPUs)`` calls make progress at once (each task holds one CPU while it sleeps, each awaited
  result holds one executor thread). It is slow by design, so it runs a bounded prefix of the
  items per round (:data:`JUDGE_EXECUTOR_ITEMS`).
* ``asyncpool`` - an :class:`~asyncpool.ActorPool` of async judge actors (4 actors x 128
  concurrent calls, ``num_cpus=0``, ``await asyncio.sleep(0.05)``), ``pool.map``.
* ``ray_actors`` - raw calls on the same actors (round-robin), all collected with one
  ``ray.get(list)``: the ceiling.

``noop`` (baseline ``ray_get``): collecting no-op task results; plain ``ray.get(list)`` is the
ceiling, against ``asyncpool.gather`` and ``asyncpool.as_completed``.

Before any timing, each workload warms up untimed (Ray workers started, their sandbox fork
servers and the driver's started, actors ready), so the rounds measure steady state.

Output: a live progress bar, a final table, and optionally ``--json`` (``{"ray_version",
"cpus", "rows": [{"workload", "method", "items", "seconds", "per_minute", "correct",
"errors"}, ...]}``, plus ``"limit_cores"``, ``"ratios"`` and ``"methods"``, the description of
each method) and ``--plot`` (a PNG bar chart with the ratios).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import time
from collections import defaultdict
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import asdict, dataclass, field
from typing import Any

import ray

import asyncpool
from asyncpool import refs
from asyncpool._bench import humaneval
from asyncpool.actors import ActorPool
from asyncpool.sandbox import run_python, run_python_bare
from asyncpool.tasks import TaskPool

Progress = Callable[[int], None]


@dataclass(frozen=True)
class Outcome:
    correct: int
    errors: int
    #: The row's rate is ``scale x items / seconds`` (the ``limit`` method: the cores).
    scale: float = 1.0


@dataclass(frozen=True)
class Method:
    name: str
    #: ``run(ctx, n, progress)``: process the first ``n`` items of the workload's session.
    run: Callable[[Any, int, Progress], Awaitable[Outcome]]
    describe: str = ""
    #: At most this many items per round (a prefix of the same items): for a method that is
    #: slow by design, so that it does not dominate the run.
    max_items: int | None = None


def _no_session(n: int) -> AbstractAsyncContextManager[Any]:
    @asynccontextmanager
    async def session() -> AsyncIterator[None]:
        yield None

    return session()


@dataclass(frozen=True)
class Workload:
    name: str
    baseline: str
    methods: Sequence[Method]
    items: int
    quick_items: int
    describe: str
    #: The method that is the ceiling (what the hardware or Ray allows), if not the baseline.
    ceiling: str | None = None
    #: ``session(n)``: an async context manager yielding what the methods share (items,
    #: pools, actors); entered before timing, warmed up inside, left after the last round.
    session: Callable[[int], AbstractAsyncContextManager[Any]] = field(default=_no_session)

    def method(self, name: str) -> Method:
        return next(m for m in self.methods if m.name == name)


@dataclass(frozen=True)
class Row:
    workload: str
    method: str
    items: int
    seconds: float
    per_minute: float
    correct: int
    errors: int


def _cluster_cpus() -> int:
    return max(1, int(ray.cluster_resources().get("CPU", 1)))


def limit_cores() -> int:
    """The cores the ``limit`` method multiplies by: the cluster's CPUs, where the CPUs of the
    nodes on this machine (several raylets of a test cluster share one machine) count at most
    ``os.cpu_count()``. Remote nodes count what they declare."""
    here = ray.util.get_node_ip_address()
    by_ip: dict[str, float] = defaultdict(float)
    for node in ray.nodes():
        if node.get("Alive"):
            by_ip[node["NodeManagerAddress"]] += float(node["Resources"].get("CPU", 0.0))
    total = 0.0
    for ip, cpus in by_ip.items():
        total += min(cpus, float(os.cpu_count() or 1)) if ip == here else cpus
    return max(1, int(total))


def _count(results: Sequence[Any], check: Callable[[int, Any], bool]) -> Outcome:
    errors = sum(isinstance(v, BaseException) for v in results)
    correct = sum(
        1 for i, v in enumerate(results) if not isinstance(v, BaseException) and check(i, v)
    )
    return Outcome(correct, errors)


# --------------------------------------------------------------------------- noop


@ray.remote
def _noop(i: int) -> int:
    return i


def _noop_refs(n: int) -> list[ray.ObjectRef[int]]:
    return [_noop.remote(i) for i in range(n)]


async def _noop_ray_get(ctx: None, n: int, progress: Progress) -> Outcome:
    values = ray.get(_noop_refs(n))
    progress(n)
    return Outcome(sum(v == i for i, v in enumerate(values)), 0)


async def _noop_gather(ctx: None, n: int, progress: Progress) -> Outcome:
    values = await refs.gather(_noop_refs(n))
    progress(n)
    return Outcome(sum(v == i for i, v in enumerate(values)), 0)


async def _noop_as_completed(ctx: None, n: int, progress: Progress) -> Outcome:
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
        Method("ray_get", _noop_ray_get, "plain ray.get(list) of no-op tasks (the ceiling)"),
        Method("asyncpool_gather", _noop_gather, "await asyncpool.gather(refs)"),
        Method("asyncpool_as_completed", _noop_as_completed,
               "async for over asyncpool.as_completed(refs)"),
    ),
    items=10_000,
    quick_items=2_000,
    describe="no-op tasks: collecting results (plain ray.get(list) is the ceiling)",
)


# --------------------------------------------------------------------------- humaneval


def sandbox_status(program: str) -> str:
    """The check every method runs (in a Ray worker or the driver): the sandbox's status."""
    return run_python(program).status


def sandbox_statuses(programs: list[str]) -> list[str]:
    return [run_python(p).status for p in programs]


_sandbox_task = ray.remote(scheduling_strategy="SPREAD")(sandbox_status)


@dataclass
class HumanEvalSession:
    programs: list[str]
    expected: list[bool]
    pool: TaskPool[[str], str]
    cores: int
    executor_limit: int

    def correct(self, i: int, status: Any) -> bool:
        return bool((status == "passed") == self.expected[i])


#: Items per Ray task of the ``asyncpool`` method (see the module docstring).
HUMANEVAL_BATCH = 16


def humaneval_pool() -> TaskPool[[str], str]:
    """The TaskPool the ``asyncpool`` method uses (and what a user would write)."""
    return TaskPool(sandbox_status, strategy="SPREAD", batch_size=HUMANEVAL_BATCH)


@asynccontextmanager
async def humaneval_session(n: int) -> AsyncIterator[HumanEvalSession]:
    work = humaneval.items(n)
    async with humaneval_pool() as pool:
        session = HumanEvalSession(
            programs=[it.program for it in work],
            expected=[it.expected for it in work],
            pool=pool,
            cores=limit_cores(),
            executor_limit=2 * _cluster_cpus(),
        )
        # Warm-up, untimed: the driver's fork server, Ray's workers and each worker's fork
        # server (every method then reuses them), the pool's auto batch size.
        k = min(n, 8 * _cluster_cpus())
        ignore: Progress = lambda _: None  # noqa: E731
        await _he_sequential(session, 4, ignore)
        await _he_limit(session, 4, ignore)
        await _he_executor(session, k, ignore)
        await _he_asyncpool(session, 4 * k, ignore)
        yield session


async def _he_sequential(s: HumanEvalSession, n: int, progress: Progress) -> Outcome:
    def loop() -> Outcome:
        correct = errors = 0
        for i in range(n):
            try:
                correct += s.correct(i, sandbox_status(s.programs[i]))
            except Exception:
                errors += 1
            progress(1)
        return Outcome(correct, errors)

    return await asyncio.to_thread(loop)


async def _he_limit(s: HumanEvalSession, n: int, progress: Progress) -> Outcome:
    def loop() -> Outcome:
        correct = errors = 0
        for i in range(n):
            try:
                correct += s.correct(i, run_python_bare(s.programs[i]).status)
            except Exception:
                errors += 1
            progress(1)
        return Outcome(correct, errors, scale=float(s.cores))

    return await asyncio.to_thread(loop)


async def _he_executor(s: HumanEvalSession, n: int, progress: Progress) -> Outcome:
    loop = asyncio.get_running_loop()
    sem = asyncio.Semaphore(s.executor_limit)

    async def one(program: str) -> str:
        async with sem:
            ref = _sandbox_task.remote(program)
            status: str = await loop.run_in_executor(None, ray.get, ref)
        progress(1)
        return status

    results = await asyncio.gather(*(one(p) for p in s.programs[:n]), return_exceptions=True)
    return _count(results, s.correct)


async def _he_asyncpool(s: HumanEvalSession, n: int, progress: Progress) -> Outcome:
    correct = errors = 0
    async with s.pool.map(s.programs[:n], return_exceptions=True) as stream:
        async for i, status in stream:
            if isinstance(status, BaseException):
                errors += 1
            else:
                correct += s.correct(i, status)
            progress(1)
    return Outcome(correct, errors)


HUMANEVAL = Workload(
    name="humaneval",
    baseline="sequential",
    ceiling="limit",
    methods=(
        Method("sequential", _he_sequential,
               "run_python in a loop in the driver, one at a time (the baseline)"),
        Method("executor", _he_executor,
               "one SPREAD Ray task per item, await run_in_executor(None, ray.get, ref) under "
               "a semaphore of 2 x CPUs"),
        Method("asyncpool", _he_asyncpool,
               f"TaskPool(run_python check, SPREAD, batch_size={HUMANEVAL_BATCH}).map(items)"),
        Method("limit", _he_limit,
               "the physical ceiling: cores x the rate of run_python_bare (fork the prepared "
               "interpreter, no limits) run sequentially on the same items in the driver; "
               "seconds are the real sequential seconds, per_minute = cores x items / seconds"),
    ),
    items=1_640,
    quick_items=328,
    describe="HumanEval programs in the sandbox; correct = verdict matches the label",
    session=humaneval_session,
)


# --------------------------------------------------------------------------- judge

#: The judge's latency: a remote judge (an LLM, a grader service) answering in 50 ms.
JUDGE_LATENCY_S = 0.05
#: How many judge calls the ``executor`` and ``asyncpool`` patterns keep in flight.
JUDGE_IN_FLIGHT = 512
JUDGE_ACTORS = 4
#: The ``executor`` method's items per round: it runs a few calls at a time by design.
JUDGE_EXECUTOR_ITEMS = 96


def judge_score(item: int) -> int:
    """The score the judge gives ``item`` (what every method must return for it)."""
    return (item * 2_654_435_761) % 1_000


class Judge:
    """An async judge actor: each call waits 50 ms, as on a remote judge, then scores."""

    async def score(self, item: int) -> int:
        await asyncio.sleep(JUDGE_LATENCY_S)
        return judge_score(item)


@ray.remote(scheduling_strategy="SPREAD")
def _judge_task(item: int) -> int:
    time.sleep(JUDGE_LATENCY_S)
    return judge_score(item)


def _judge_ok(i: int, value: Any) -> bool:
    return bool(value == judge_score(i))


@asynccontextmanager
async def judge_session(n: int) -> AsyncIterator[ActorPool[Judge]]:
    per_actor = JUDGE_IN_FLIGHT // JUDGE_ACTORS
    async with ActorPool(
        Judge, size=JUDGE_ACTORS, max_concurrency=per_actor, num_cpus=0
    ) as pool:
        ignore: Progress = lambda _: None  # noqa: E731
        await _judge_executor(pool, min(n, 2 * _cluster_cpus()), ignore)
        await _judge_asyncpool(pool, min(n, JUDGE_IN_FLIGHT), ignore)
        await _judge_ray_actors(pool, min(n, JUDGE_IN_FLIGHT), ignore)
        yield pool


async def _judge_executor(pool: ActorPool[Judge], n: int, progress: Progress) -> Outcome:
    loop = asyncio.get_running_loop()
    sem = asyncio.Semaphore(JUDGE_IN_FLIGHT)

    async def one(i: int) -> int:
        async with sem:
            ref = _judge_task.remote(i)
            value: int = await loop.run_in_executor(None, ray.get, ref)
        progress(1)
        return value

    results = await asyncio.gather(*(one(i) for i in range(n)), return_exceptions=True)
    return _count(results, _judge_ok)


async def _judge_asyncpool(pool: ActorPool[Judge], n: int, progress: Progress) -> Outcome:
    correct = errors = 0
    async with pool.map("score", range(n), return_exceptions=True) as stream:
        async for i, value in stream:
            if isinstance(value, BaseException):
                errors += 1
            else:
                correct += _judge_ok(i, value)
            progress(1)
    return Outcome(correct, errors)


async def _judge_ray_actors(pool: ActorPool[Judge], n: int, progress: Progress) -> Outcome:
    actors = pool.actors
    values: list[Any] = ray.get([actors[i % len(actors)].score.remote(i) for i in range(n)])
    progress(n)
    return _count(values, _judge_ok)


JUDGE = Workload(
    name="judge",
    baseline="executor",
    ceiling="ray_actors",
    methods=(
        Method("executor", _judge_executor,
               "SPREAD Ray tasks (default resources: 1 CPU) that sleep 50 ms, await "
               f"run_in_executor(None, ray.get, ref) under a semaphore of {JUDGE_IN_FLIGHT}; "
               "min(executor threads, CPUs) in progress at once (the baseline; at most "
               f"{JUDGE_EXECUTOR_ITEMS} items per round)",
               max_items=JUDGE_EXECUTOR_ITEMS),
        Method("asyncpool", _judge_asyncpool,
               f"ActorPool of {JUDGE_ACTORS} async judge actors x "
               f"{JUDGE_IN_FLIGHT // JUDGE_ACTORS} concurrent calls (num_cpus=0), .map"),
        Method("ray_actors", _judge_ray_actors,
               "raw calls on the same actors, one ray.get(list) (the ceiling)"),
    ),
    items=20_000,
    quick_items=3_000,
    describe="50 ms latency-bound judge calls, 512 in flight; correct = the expected score",
    session=judge_session,
)

WORKLOADS: dict[str, Workload] = {w.name: w for w in (HUMANEVAL, JUDGE, NOOP)}


# --------------------------------------------------------------------------- running


async def _warm_up() -> None:
    await refs.gather(_noop_refs(200))


def method_items(method: Method, n: int) -> int:
    """The items per round ``method`` runs when its workload runs ``n``."""
    return n if method.max_items is None else min(n, method.max_items)


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
            counts = {m.name: method_items(m, n) for m in workload.methods}
            done = {m.name: 0 for m in workload.methods}
            totals = {m.name: [0.0, 0, 0, 1.0] for m in workload.methods}
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
                            outcome = await method.run(ctx, counts[method.name], advance)
                            total = totals[method.name]
                            total[0] += time.perf_counter() - t0
                            total[1] += outcome.correct
                            total[2] += outcome.errors
                            total[3] = outcome.scale
                    tg.cancel_scope.cancel()
            bar.remove_task(warming)
            for name, task in tasks.items():
                bar.update(task, completed=done[name])
            for method in workload.methods:
                seconds, correct, errors, scale = totals[method.name]
                m_items = counts[method.name] * rounds
                rows.append(
                    Row(workload.name, method.name, m_items, round(seconds, 4),
                        round(scale * m_items / seconds * 60.0, 1), int(correct), int(errors))
                )
    return rows


def _rates(rows: Sequence[Row], pick: Callable[[Workload], str | None]) -> dict[str, float]:
    out: dict[str, float] = {}
    for r in rows:
        w = WORKLOADS.get(r.workload)
        if w is not None and r.method == pick(w):
            out[r.workload] = r.per_minute
    return out


def ratios(rows: Sequence[Row]) -> dict[tuple[str, str], float]:
    """Each row's rate over its workload's baseline rate, from the same run."""
    base = _rates(rows, lambda w: w.baseline)
    return {
        (r.workload, r.method): round(r.per_minute / base[r.workload], 3)
        for r in rows
        if base.get(r.workload)
    }


def ceiling_ratios(rows: Sequence[Row]) -> dict[tuple[str, str], float]:
    """Each row's rate over its workload's ceiling rate (workloads that have one)."""
    top = _rates(rows, lambda w: w.ceiling)
    return {
        (r.workload, r.method): round(r.per_minute / top[r.workload], 3)
        for r in rows
        if top.get(r.workload)
    }


def print_table(rows: Sequence[Row]) -> None:
    from rich.console import Console
    from rich.table import Table

    rel, top = ratios(rows), ceiling_ratios(rows)
    table = Table(title="asyncpool bench: verifications per minute")
    for col in ("workload", "method", "items", "seconds", "per minute", "× baseline",
                "× ceiling", "correct", "errors"):
        left = col in ("workload", "method")
        table.add_column(col, justify="left" if left else "right", no_wrap=left)
    for r in rows:
        ceiling = top.get((r.workload, r.method))
        table.add_row(r.workload, r.method, str(r.items), f"{r.seconds:.2f}",
                      f"{r.per_minute:,.0f}", f"{rel.get((r.workload, r.method), 0):.3f}",
                      "-" if ceiling is None else f"{ceiling:.3f}",
                      str(r.correct), str(r.errors))
    notes = []
    for name in dict.fromkeys(r.workload for r in rows):
        w = WORKLOADS[name]
        ceiling_note = f", ceiling {w.ceiling}" if w.ceiling else ""
        notes.append(f"{name}: baseline {w.baseline}{ceiling_note}. {w.describe}.")
        notes += [f"  {m.name}: {m.describe}" for m in w.methods if m.describe]
    table.caption = "\n".join(notes)
    table.caption_justify = "left"
    console = Console()
    console.width = max(console.width, 120)
    console.print(table)


def write_json(path: str, rows: Sequence[Row], load: dict[str, float] | None = None) -> None:
    """The rows as the contract's JSON, plus ``limit_cores``, ``ratios``, ``methods`` (what
    each method is) and ``load_average`` (this machine's 1-minute load average when the run
    started and ended: how busy the machine was)."""
    rel, top = ratios(rows), ceiling_ratios(rows)
    names = list(dict.fromkeys(r.workload for r in rows))
    doc = {
        "ray_version": ray.__version__,
        "cpus": int(ray.cluster_resources().get("CPU", 0)),
        "rows": [asdict(r) for r in rows],
        "limit_cores": limit_cores(),
        "load_average": load or {},
        "ratios": [
            {"workload": r.workload, "method": r.method,
             "vs_baseline": rel.get((r.workload, r.method)),
             "vs_ceiling": top.get((r.workload, r.method))}
            for r in rows
        ],
        "methods": {
            name: {
                "baseline": WORKLOADS[name].baseline,
                "ceiling": WORKLOADS[name].ceiling,
                **{m.name: m.describe for m in WORKLOADS[name].methods},
            }
            for name in names
        },
    }
    with open(path, "w") as fh:
        json.dump(doc, fh, indent=2)


def write_plot(path: str, rows: Sequence[Row], load: dict[str, float] | None = None) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    rel, top = ratios(rows), ceiling_ratios(rows)
    names = list(dict.fromkeys(r.workload for r in rows))
    fig, axes = plt.subplots(1, len(names), figsize=(5.2 * len(names), 4.6), squeeze=False)
    for ax, workload in zip(axes[0], names, strict=True):
        w = WORKLOADS[workload]
        sub = [r for r in rows if r.workload == workload]
        colors = [
            "#8C8C8C" if r.method == w.baseline
            else "#DD8452" if r.method == w.ceiling
            else "#4C72B0"
            for r in sub
        ]
        bars = ax.bar([r.method for r in sub], [r.per_minute for r in sub], color=colors)
        rates = [r.per_minute for r in sub if r.per_minute > 0]
        if rates and max(rates) / min(rates) > 30:
            ax.set_yscale("log")
        for bar, r in zip(bars, sub, strict=True):
            label = f"{rel.get((workload, r.method), 0):.2f}×"
            ceiling = top.get((workload, r.method))
            if ceiling is not None and r.method not in (w.ceiling, w.baseline):
                label += f"\n{ceiling:.2f}× {w.ceiling}"
            ax.annotate(label, (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                        ha="center", va="bottom", fontsize=8)
        ax.margins(y=0.18)
        ax.set_title(f"{workload} (ratios vs {w.baseline})", fontsize=10)
        ax.set_ylabel("verifications per minute")
        ax.tick_params(axis="x", labelrotation=20, labelsize=8)
    title = (
        f"asyncpool bench: verifications per minute  ({int(ray.cluster_resources().get('CPU', 0))}"
        f" CPUs, Ray {ray.__version__}"
    )
    if load:
        title += f", load average {load['start']:.1f} → {load['end']:.1f}"
    fig.suptitle(title + ")", fontsize=11)
    fig.legend(
        handles=[Patch(color="#8C8C8C", label="baseline"), Patch(color="#4C72B0", label="compared"),
                 Patch(color="#DD8452", label="ceiling")],
        loc="upper right", fontsize=8, ncol=3, frameon=False,
    )
    fig.tight_layout(rect=(0, 0, 1, 0.94))
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


def main(args: argparse.Namespace) -> int:
    workloads = select(args.workload)
    rt = asyncpool.init(bench_address(args.address), log_to_driver=False)
    try:
        start = os.getloadavg()[0]
        rows = asyncpool.run(
            run_workloads, workloads, args.items, args.quick, not args.no_progress, args.rounds
        )
        load = {"start": start, "end": os.getloadavg()[0], "cpu_count": float(os.cpu_count() or 1)}
        print_table(rows)
        print(
            f"load average (1 min) of this machine ({os.cpu_count()} cores): "
            f"{load['start']:.2f} at the start, {load['end']:.2f} at the end"
        )
        if args.json:
            write_json(args.json, rows, load)
        if args.plot:
            write_plot(args.plot, rows, load)
    finally:
        rt.shutdown()
    return 0
