"""One run as the fork server tracks it, and its own time.

Owns: :class:`Job` (a forked program, its judge, its deadline state and its result) and the
reading of ``/proc/PID/schedstat`` that its own time (wall-clock time minus the time spent
waiting for a CPU, see "Time" in :mod:`asyncpool.sandbox`) is computed from.

Must not: import ``asyncpool`` or anything outside the standard library (it runs in the fork
server's clean interpreter), nor act on a run: killing, reaping and replying are the server's
(:mod:`asyncpool._zygote`).
"""

from __future__ import annotations

import contextlib
import os
import resource
from dataclasses import dataclass, field

from ._zygote_wire import Request


def sched(pid: int, threads: bool) -> tuple[float, float]:
    """(CPU seconds, seconds runnable but waiting for a CPU) of the task ``pid`` from its
    ``schedstat``: with ``threads``, the CPU time of all its threads and the wait of its
    most-waiting one. ``(0, 0)`` when it is gone."""
    paths = [f"/proc/{pid}/schedstat"]
    if threads:
        with contextlib.suppress(OSError):
            paths = [f"/proc/{pid}/task/{t}/schedstat" for t in os.listdir(f"/proc/{pid}/task")]
    ran = waited = 0
    for path in paths:
        try:
            with open(path, "rb") as fh:
                fields = fh.read().split()
            ran += int(fields[0])
            waited = max(waited, int(fields[1]))
        except (OSError, IndexError, ValueError):
            continue
    return ran / 1e9, waited / 1e9


def exited(pid: int) -> bool:
    """Whether the child ``pid`` has exited (and not been reaped yet)."""
    try:
        info = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return True
    return info is not None and info.si_pid != 0


@dataclass
class Job:
    pid: int
    reply_fd: int
    req: Request
    started: float
    uid: int | None
    scratch: str | None
    judge_pid: int | None = None
    judge_uid: int | None = None
    files_out: int = -1
    fetch: list[str] = field(default_factory=list)
    next_check: float = 0.0
    # From schedstat, the largest values seen (seconds): the program's CPU time and the wait
    # of its most-waiting thread; the judge's CPU time and wait.
    ran: float = 0.0
    waited: float = 0.0
    judge_ran: float = 0.0
    judge_waited: float = 0.0
    killed_at_deadline: bool = False
    own_at_kill: float = 0.0
    starved: bool = False
    killed_after_judge: bool = False
    abandoned: bool = False
    reaper_attempts: int = 0
    status: int | None = None  # the program's wait status, once reaped
    usage: resource.struct_rusage | None = None
    judge_status: int | None = None
    result: bytes = b""

    def own_time(self, now: float) -> float:
        """Wall-clock time minus the time spent waiting for a CPU (the program's and the
        judge's: they mostly take turns), and never less than the CPU time they used."""
        wall = now - self.started
        return max(wall - self.waited - self.judge_waited, self.ran + self.judge_ran)

    def refresh_waits(self) -> None:
        ran, waited = sched(self.pid, threads=True)
        self.ran, self.waited = max(self.ran, ran), max(self.waited, waited)
        if self.judge_pid is not None:
            ran, waited = sched(self.judge_pid, threads=False)
            self.judge_ran = max(self.judge_ran, ran)
            self.judge_waited = max(self.judge_waited, waited)

    @property
    def over(self) -> bool:
        return self.status is not None and (self.judge_pid is None or self.judge_status is not None)
