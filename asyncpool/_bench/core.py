"""What every workload of the bench is made of: methods, workloads, rounds and rows, and the
helpers the methods share (the cluster's cores, counting verdicts, the hand-written asyncio
pattern).

A row is the *median* of its method's rounds, with the rounds' spread (lowest and highest) and
every round's own figure: a shared, noisy machine makes single rounds swing, and a median
with its spread says both what is typical and whether it held in every round. Rounds of the
methods of a workload are interleaved, so round ``r`` of two methods saw the same machine and a
per-round ratio pairs like with like (:func:`round_ratios`)."""

from __future__ import annotations

import asyncio
import os
import statistics
from collections import defaultdict
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

import ray

T = TypeVar("T")

Progress = Callable[[int], None]


def ignore_progress(_: int) -> None:
    """The progress callback of warm-up runs."""


#: What a method is, for the table, the plot and the "best peer" figure:
#: ``asyncpool`` - this library; ``handwritten`` - the best asyncio code a user would write
#: (each workload's baseline); ``today`` - the executor pattern users have today; ``peer`` -
#: what Ray itself ships for the job (Ray Data, ray.util...); ``reference`` - in-process
#: sequential work; ``ceiling`` - what the hardware or Ray allows.
Kind = Literal["asyncpool", "handwritten", "today", "peer", "reference", "ceiling"]
#: The kinds a user would pick instead of asyncpool (the "best peer" is the fastest of these).
ALTERNATIVES: tuple[Kind, ...] = ("handwritten", "today", "peer")


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
    kind: Kind = "peer"
    #: Why a loaded machine (other processes wanting the cores) hurts this row more than
    #: others, if it does; the table's footer lists these.
    load_note: str = ""


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
    #: The method that is the ceiling (what the hardware or Ray allows), if any.
    ceiling: str | None = None
    #: ``session(n)``: an async context manager yielding what the methods share (items,
    #: pools, actors); entered before timing, warmed up inside, left after the last round.
    session: Callable[[int], AbstractAsyncContextManager[Any]] = field(default=_no_session)

    def method(self, name: str) -> Method:
        return next(m for m in self.methods if m.name == name)


@dataclass(frozen=True)
class Round:
    """One method's one round: what it did and how long it took."""

    items: int
    seconds: float
    correct: int
    errors: int
    #: The round's rate is ``scale x items / seconds`` (the ``limit`` method: the cores).
    scale: float = 1.0

    @property
    def per_minute(self) -> float:
        return self.scale * self.items / self.seconds * 60.0 if self.seconds > 0 else 0.0


@dataclass(frozen=True)
class Row:
    """One method of one workload over its rounds.

    ``items`` is per round; ``seconds`` and ``per_minute`` are the medians of the rounds'
    (``per_minute`` is the median of the rounds' own rates, not the rate of the median time);
    ``correct`` and ``errors`` count every round. ``per_minute_rounds`` and ``seconds_rounds``
    hold each round's figure in round order (a row made by hand with neither has one round: its
    own figures).
    """

    workload: str
    method: str
    items: int
    seconds: float
    per_minute: float
    correct: int
    errors: int
    per_minute_rounds: tuple[float, ...] = ()
    seconds_rounds: tuple[float, ...] = ()

    def __post_init__(self) -> None:
        if not self.per_minute_rounds:
            object.__setattr__(self, "per_minute_rounds", (self.per_minute,))
        if not self.seconds_rounds:
            object.__setattr__(self, "seconds_rounds", (self.seconds,))

    @property
    def rounds(self) -> int:
        return len(self.per_minute_rounds)

    @property
    def per_minute_min(self) -> float:
        return min(self.per_minute_rounds)

    @property
    def per_minute_max(self) -> float:
        return max(self.per_minute_rounds)


def summarize(workload: str, method: str, rounds: Sequence[Round]) -> Row:
    """The row of ``rounds`` (one method's, in round order): medians, the spread, each round.

    Rates keep one decimal and seconds four, as the table and the JSON show them; the median
    is taken of the unrounded figures.
    """
    if not rounds:
        raise ValueError("a row needs at least one round")
    if len({r.items for r in rounds}) != 1:
        raise ValueError(f"every round of a method runs the same items, got {rounds}")
    rates = [r.per_minute for r in rounds]
    seconds = [r.seconds for r in rounds]
    return Row(
        workload,
        method,
        rounds[0].items,
        round(statistics.median(seconds), 4),
        round(statistics.median(rates), 1),
        sum(r.correct for r in rounds),
        sum(r.errors for r in rounds),
        tuple(round(x, 1) for x in rates),
        tuple(round(x, 4) for x in seconds),
    )


def round_ratios(row: Row, reference: Row) -> tuple[float, ...]:
    """``row``'s rate over ``reference``'s, round by round (the same round of an interleaved
    run saw the same machine); rounds where the reference did nothing are left out."""
    return tuple(
        round(a / b, 3)
        for a, b in zip(row.per_minute_rounds, reference.per_minute_rounds, strict=False)
        if b > 0
    )


def cluster_cpus() -> int:
    return max(1, int(ray.cluster_resources().get("CPU", 1)))


def limit_cores() -> int:
    """The cores the ``limit`` methods multiply by: the cluster's CPUs, where the CPUs of the
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


def count(results: Sequence[Any], check: Callable[[int, Any], bool]) -> Outcome:
    """Errors (exceptions among ``results``) and correct verdicts (``check(index, value)``)."""
    errors = sum(isinstance(v, BaseException) for v in results)
    correct = sum(
        1 for i, v in enumerate(results) if not isinstance(v, BaseException) and check(i, v)
    )
    return Outcome(correct, errors)


async def handwritten(
    n: int, limit: int, call: Callable[[int], Awaitable[T]], progress: Progress
) -> list[T | BaseException]:
    """The best asyncio code a Ray user writes by hand, every workload's baseline:
    ``await call(i)`` (an ObjectRef, awaited natively) for every item under an
    ``asyncio.Semaphore(limit)``, all gathered; results in input order, exceptions kept.
    Cancelling it cancels every pending ``call`` (what ``asyncio.gather`` does; Ray cancels
    a task whose awaited ref is cancelled only if the call does so itself)."""
    sem = asyncio.Semaphore(limit)

    async def one(i: int) -> T:
        async with sem:
            value = await call(i)
        progress(1)
        return value

    return await asyncio.gather(*(one(i) for i in range(n)), return_exceptions=True)


async def drain_in_thread(
    iterate: Callable[[], Any], progress: Progress
) -> list[Any]:
    """Run a peer's blocking iterator (Ray's ``as_completed``, ``Pool.imap_unordered``, Ray
    Data's ``iter_rows``...) to its end in a worker thread, as an async program must (it
    cannot block its event loop), counting progress per element. Cancelling the awaiting task
    does not stop the thread: the iterator runs to its end (the bench never cancels one)."""

    def loop() -> list[Any]:
        out = []
        for value in iterate():
            out.append(value)
            progress(1)
        return out

    return await asyncio.to_thread(loop)
