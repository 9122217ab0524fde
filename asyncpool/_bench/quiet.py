"""What is still running when a workload of the bench starts, and waiting until it is gone.

A full ``asyncpool bench`` runs its workloads one after another on one cluster. What an earlier
workload started (its actors, Ray Data's actor pools, the math workers, the sandbox's fork
servers inside Ray workers) may still be alive, or still exiting, when the next one starts, and
its CPU then falls on the next workload's methods: on a 2-core machine that alone moves a ratio
by tens of percent. So before each workload the harness calls :func:`settle`: it waits until
no CPU of the cluster is held by a Ray task or actor and the driver's descendant processes (the
embedded cluster: raylet, GCS, workers and what they started) have used less than
:data:`QUIET_CORES` of a core over a short window, or until :data:`SETTLE_TIMEOUT_S` passes;
and it reports what it found at the start and at the end of the wait (:class:`Noise`, with the
rest of the machine's CPU beside it for context: other users' load is not ours to wait for).

Hand-written over ``/proc`` (Linux) rather than psutil: psutil is not among the dependencies,
and the figures needed are two sums of ``utime + stime``. Elsewhere the figures are ``None``
and only the Ray-resource half of the wait applies.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

import anyio
import ray

#: The cluster's processes together may use this much of one core and still count as quiet
#: (Ray's own daemons tick: raylet, GCS, the dashboard agent, idle workers).
QUIET_CORES = 0.3
#: The window each CPU reading is taken over.
WINDOW_S = 0.5
#: The longest :func:`settle` waits; past it the workload starts anyway, and the noise is told.
SETTLE_TIMEOUT_S = 30.0
#: Ray's own per-node daemons that run as ``ray::`` processes: not workers.
_DAEMONS = frozenset({"ray::DashboardAgent", "ray::RuntimeEnvAgent", "ray::IDLE"})
_HAVE_PROC = os.path.isdir("/proc/self")


@dataclass(frozen=True)
class Noise:
    """The machine around the driver over one window.

    ``cluster_cores``: CPU used by the driver's descendants (an embedded cluster's every
    process), in cores; ``machine_cores``: by every other process of the machine (``None``
    without ``/proc``). ``ray_workers``: the descendants that are Ray workers (``ray::...``),
    of which ``busy`` run a task or an actor (not ``ray::IDLE``). ``held_cpus``: the
    cluster's CPUs held by tasks and actors (Ray's resources, total minus available).
    """

    cluster_cores: float | None
    machine_cores: float | None
    ray_workers: int
    busy: tuple[str, ...]
    held_cpus: float

    def describe(self) -> str:
        def cores(v: float | None) -> str:
            return "?" if v is None else f"{v:.2f}"

        names = ", ".join(sorted(set(self.busy))[:4]) or "none"
        return (f"cluster processes {cores(self.cluster_cores)} cores ({self.ray_workers} Ray "
                f"workers, {len(self.busy)} busy: {names}), {self.held_cpus:g} CPUs held; "
                f"rest of the machine {cores(self.machine_cores)} cores")


def _ticks() -> dict[int, tuple[int, int, str]]:
    """pid -> (parent pid, utime + stime in clock ticks, name) for every readable process."""
    out: dict[int, tuple[int, int, str]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                stat = fh.read()
            with open(f"/proc/{entry}/cmdline", "rb") as fh:
                cmd = fh.read(256)
        except OSError:
            continue  # gone meanwhile, or not ours to read
        # The name is in parentheses and may hold spaces: the fields start after the last ')'.
        fields = stat[stat.rfind(b")") + 2 :].split()
        name = cmd.split(b"\0", 1)[0].decode(errors="replace")
        out[int(entry)] = (int(fields[1]), int(fields[11]) + int(fields[12]), name)
    return out


def _descendants(table: dict[int, tuple[int, int, str]], root: int) -> set[int]:
    children: dict[int, list[int]] = {}
    for pid, (ppid, _, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    found: set[int] = set()
    todo = [root]
    while todo:
        for child in children.get(todo.pop(), ()):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def _held_cpus() -> float:
    total = ray.cluster_resources().get("CPU", 0.0)
    free = ray.available_resources().get("CPU", 0.0)
    return max(0.0, float(total) - float(free))


async def measure(window_s: float = WINDOW_S) -> Noise:
    """What runs beside the driver over ``window_s`` (see :class:`Noise`)."""
    have_proc = _HAVE_PROC
    before = await anyio.to_thread.run_sync(_ticks) if have_proc else {}
    t0 = time.perf_counter()
    await anyio.sleep(window_s)
    after = await anyio.to_thread.run_sync(_ticks) if have_proc else {}
    elapsed = time.perf_counter() - t0
    me = os.getpid()
    ours = _descendants(after, me)
    scale = os.sysconf("SC_CLK_TCK") * elapsed
    cluster = machine = 0
    for pid, (_, ticks, _) in after.items():
        if pid == me or pid not in before or ticks < before[pid][1]:
            continue  # a process that started during the window counts from the next one
        if pid in ours:
            cluster += ticks - before[pid][1]
        else:
            machine += ticks - before[pid][1]
    workers = [
        after[pid][2]
        for pid in ours
        if after[pid][2].startswith("ray::") and not after[pid][2].endswith("Agent")
    ]
    return Noise(
        cluster_cores=cluster / scale if have_proc else None,
        machine_cores=machine / scale if have_proc else None,
        ray_workers=len(workers),
        busy=tuple(w for w in workers if w not in _DAEMONS),
        held_cpus=await anyio.to_thread.run_sync(_held_cpus),
    )


@dataclass(frozen=True)
class Settled:
    """What :func:`settle` found before one workload: the noise when it began waiting, when
    it stopped, and the seconds it waited (``quiet``: whether it stopped because all was)."""

    workload: str
    start: Noise
    end: Noise
    waited_s: float
    quiet: bool

    def line(self) -> str:
        verdict = "quiet" if self.quiet else f"NOT quiet after {self.waited_s:.0f} s"
        return (f"before {self.workload}: {self.start.describe()}; waited {self.waited_s:.1f} s "
                f"({verdict}): {self.end.describe()}")


def _quiet(noise: Noise) -> bool:
    cpu_quiet = noise.cluster_cores is None or noise.cluster_cores < QUIET_CORES
    return cpu_quiet and noise.held_cpus == 0


async def settle(workload: str, timeout_s: float = SETTLE_TIMEOUT_S) -> Settled:
    """Wait until the cluster is quiet (nothing holds a CPU; its processes use less than
    :data:`QUIET_CORES`) or ``timeout_s`` passes, and say what was found (:class:`Settled`).
    Cancellation: returns nothing, changes nothing (it only reads)."""
    t0 = time.perf_counter()
    first = last = await measure()
    while not _quiet(last) and time.perf_counter() - t0 < timeout_s:
        last = await measure()
    return Settled(workload, first, last, time.perf_counter() - t0, _quiet(last))
