"""One run as the fork server tracks it: its own time, its verdict, the files it leaves.

Owns: :class:`Job` (a forked program, its judge, its deadline state and its result), the
reading of ``/proc/PID/schedstat`` that its own time (wall-clock time minus the time spent
waiting for a CPU, see "Time" in :mod:`asyncpool.sandbox`) is computed from, the status a
finished run is given (:func:`classify`), the copy of the files the caller asked for out of
the run's directory (:func:`fetch_files`), and that directory's removal when the run left
nothing of its own in it (:func:`remove_scratch`).

Must not: import ``asyncpool`` or anything outside the standard library (it runs in the fork
server's clean interpreter), nor act on a run: killing, reaping and replying are the server's
(:mod:`asyncpool.sandbox._zygote`).
"""

from __future__ import annotations

import contextlib
import math
import os
import resource
import signal
import stat
import struct
from dataclasses import dataclass, field

from ._cgroup import RunCgroup
from ._zygote_wire import (
    FETCH_FILE_LIMIT,
    MEMORY_EXIT,
    STATUS_CRASHED,
    STATUS_FAILED,
    STATUS_MEMORY,
    STATUS_PASSED,
    STATUS_TIMEOUT,
    Request,
    shared_dirs,
)


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
            # os.open and one read, not open(): 3 system calls, not 7 (a few per judged run).
            # A schedstat file is one short line, which the first read returns whole.
            fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
            try:
                fields = os.read(fd, 4096).split()
            finally:
                os.close(fd)
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


#: Seconds between two readings of the waits of a toolchain's other processes while it has
#: some (see :meth:`Job.refresh_others`).
OTHERS_SAMPLE = 0.1
#: Seconds of wall-clock time after which a toolchain's run still going is read (and then as
#: often as its deadline or its other processes need), whatever its timeout.
FIRST_READING = 1.0


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
    # A long-lived judge's schedstat when it took this check (its counters are cumulative).
    judge_ran0: float = 0.0
    judge_waited0: float = 0.0
    # A toolchain's other processes (its cgroup's, but the first one): pid -> the wait of its
    # most-waiting thread, the largest seen (see refresh_others); and the CPU time of all the
    # run's processes together, the largest seen (its cgroup's).
    others: dict[int, float] = field(default_factory=dict)
    spent: float = 0.0
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
    # The run's cgroup (see _cgroup) until it is removed; when the program (and judge) ended,
    # the moment its own and wall-clock times stop (the verdict waits for the cgroup).
    cgroup: RunCgroup | None = None
    # The run's network namespace from the server's pool (-1: none, or its own new one).
    netns: int = -1
    # A judged run's CPU lane (see _cpu_lanes), given back when the run is done.
    lane: int | None = None
    # Its cgroup was removed: the kernel counted no live task of the run (see _cgroup).
    all_dead: bool = False
    # The kernel's OOM killer killed a process of the run at its memory cgroup's limit.
    oom_killed: bool = False
    # The most memory its processes held together (its memory cgroup's peak, bytes); None:
    # no memory cgroup, or a judged run (which reports no memory figure).
    peak: int | None = None
    ended: float | None = None

    def own_time(self, now: float) -> float:
        """Wall-clock time minus the time spent waiting for a CPU (the program's and the
        judge's, which mostly take turns, and a toolchain's passes'), and never less than the
        CPU time they used (all the run's processes')."""
        wall = now - self.started
        waited = self.waited + self.judge_waited + sum(self.others.values())
        return max(wall - waited, self.ran + self.judge_ran, self.spent)

    def refresh_waits(self) -> None:
        ran, waited = sched(self.pid, threads=True)
        self.ran, self.waited = max(self.ran, ran), max(self.waited, waited)
        if self.judge_pid is not None:
            ran, waited = sched(self.judge_pid, threads=False)
            self.judge_ran = max(self.judge_ran, ran - self.judge_ran0)
            self.judge_waited = max(self.judge_waited, waited - self.judge_waited0)

    def refresh_others(self, pids: list[int]) -> bool:
        """Read the waits of a toolchain's processes ``pids`` (its run's cgroup's) other than
        its first one; whether there is one.

        Why: a compiler's driver (``g++``, ``go build``) forks its passes and waits for each in
        turn (``cc1plus``, ``as``, ``ld``), so the first process's own wait is almost none of
        the run's: on a loaded machine a compile's own time was its wall-clock time (1.4 s of
        ``g++`` took 8-9 s of "own time" beside 8 busy processes), and a compile that fits its
        ``compile_timeout`` on an idle machine was a "compile_error" on a busy one. The passes'
        waits add up (they run one after another); the CPU time of all the run's processes
        (``spent``) stays own time's floor. A process that exits between two readings loses its
        wait since the last one (:data:`OTHERS_SAMPLE` seconds before, or
        :data:`FIRST_READING` after the run started): own time errs long, never short.

        Only for a trusted toolchain (``Request.toolchain``), never for a program: the waits
        of a program's other processes are not its own time only while its first process
        waits for them, and it may instead sleep on its own (a program that sleeps past its
        timeout beside a busy child would pass on a loaded machine and fail on an idle one).
        A compiler's driver does nothing but wait for its passes."""
        seen = False
        for pid in pids:
            if pid == self.pid or pid == self.judge_pid:
                continue
            seen = True
            _, waited = sched(pid, threads=True)
            if waited > self.others.get(pid, 0.0):
                self.others[pid] = waited
        return seen

    @property
    def over(self) -> bool:
        return self.status is not None and (self.judge_pid is None or self.judge_status is not None)


def classify(job: Job, status: int, usage: resource.struct_rusage) -> tuple[int, int, int]:
    """(status code, returncode, returncode-is-None)."""
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        cpu = usage.ru_utime + usage.ru_stime
        cpu_soft = math.ceil(job.req.timeout) + 1 if job.req.limits else math.inf
        if job.oom_killed and sig == signal.SIGKILL and not job.killed_at_deadline:
            # The run's memory cgroup's limit; in a judged run too, whose judge can answer
            # (the wire's end) before the solution the kernel killed is reaped.
            return STATUS_MEMORY, -sig, 0
        if job.killed_after_judge and not job.killed_at_deadline:
            return STATUS_FAILED, 0, 1  # nothing to say about the solution itself
        if job.killed_at_deadline or sig == signal.SIGXCPU:
            return STATUS_TIMEOUT, -sig, 0
        if job.req.limits and sig == signal.SIGKILL and cpu >= cpu_soft:
            return STATUS_TIMEOUT, -sig, 0  # the hard CPU limit
        crash_signals = (signal.SIGKILL, signal.SIGSEGV, signal.SIGBUS, signal.SIGABRT)
        if (
            job.req.limits
            and sig in crash_signals
            and usage.ru_maxrss * 1024 >= (0.9 * job.req.memory)
        ):
            return STATUS_MEMORY, -sig, 0
        return STATUS_CRASHED, -sig, 0
    code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else 255
    if job.killed_at_deadline:
        return STATUS_TIMEOUT, code, 0
    if code == 0:
        return STATUS_PASSED, 0, 0
    if code == MEMORY_EXIT and job.req.limits:
        return STATUS_MEMORY, 1, 0
    if job.oom_killed:
        return STATUS_MEMORY, code, 0  # a process of the run died at the run's memory limit
    return STATUS_FAILED, code, 0


def fetch_files(job: Job) -> None:
    """Copy the files the caller asked for from the run's directory into ``files_out``
    (``[u32 name length][name][u64 size][bytes]...``): each path component opened with
    ``O_NOFOLLOW`` below the run's directory (no symlink leads out of it), regular files
    only, kernel to kernel (``sendfile``: the server's memory never holds them, so no later
    fork inherits them)."""
    out = job.files_out
    os.ftruncate(out, 0)
    os.lseek(out, 0, os.SEEK_SET)
    base = os.open(f"{job.scratch}/tmp", os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        for name in job.fetch:
            fd = _open_below(base, name)
            if fd < 0:
                continue
            try:
                size = os.fstat(fd).st_size
                encoded = name.encode("utf-8", "surrogateescape")
                header = struct.pack("=I", len(encoded)) + encoded
                os.write(out, header + struct.pack("=Q", size))
                sent = 0
                while sent < size:
                    n = os.sendfile(out, fd, sent, size - sent)
                    if n == 0:
                        break
                    sent += n
                if sent < size:  # shrank meanwhile: pad, so the record stays well-formed
                    os.write(out, b"\0" * (size - sent))
            finally:
                os.close(fd)
    finally:
        os.close(base)


#: Most entries the server removes itself from a finished run's ``tmp`` and ``shm`` (files and
#: symlinks at their top); a run that left more, or a directory, is cleaned up by the helper.
SCRATCH_ENTRIES = 16


def remove_scratch(scratch: str, req: Request, isolated: bool) -> bool:
    """Remove a run's directory (``scratch``: ``tmp``, ``shm``, and the directories a run sharing
    its files with its judge made in its own mount namespace, ``isolated``, see
    ``shared_dirs``) when what the run left there is at most :data:`SCRATCH_ENTRIES` files at
    the top of ``tmp`` and ``shm``, and say whether it did. ``False`` leaves it to a forked
    helper that kills the run's uid's processes and then removes the tree as root (the
    server's ``_start_job_reaper``), a fork of the server and the helper's exit, ~4-5 ms of CPU:
    every unjudged Python run writes its program as ``main.py`` and every compiled program's
    run is given its binary, so before this each such run paid for one (``run_python`` cost
    1.8x a bare fork's wall time on HumanEval, 1.25x without).

    Safe against what the run left: ``scratch`` is the server's (root, 0711), so the run cannot
    replace ``tmp`` or ``shm``, which are opened without following a symlink; ``unlink`` by
    name relative to them removes a symlink, never what it names, and refuses a directory
    (then the helper removes the tree). A file a live process of the run still holds open is
    only unlinked; the uid's processes are ended as before (the run's cgroup, else a sweep),
    and what they write after that goes nowhere. Bounded, so that a run that left a million
    files does not hold up the server's other runs."""
    tmp = f"{scratch}/tmp"
    nested = shared_dirs(tmp) if req.shared and isolated else []
    try:
        # In tmp, the top of a shared run's own path to it is removed below, not unlinked.
        budget = _unlink_files(tmp, SCRATCH_ENTRIES, keep=nested[-1:])
        _unlink_files(f"{scratch}/shm", budget, keep=[])
        for sub in nested:
            os.rmdir(f"{tmp}/{sub}")
        for sub in ("tmp", "shm", ""):
            os.rmdir(f"{scratch}/{sub}".rstrip("/"))
    except OSError:
        return False
    return True


def _unlink_files(directory: str, budget: int, keep: list[str]) -> int:
    """Unlink every entry at the top of ``directory`` but the names in ``keep`` (at most
    ``budget``); what is left of the budget. ``OSError`` for a directory (other than those
    kept) or when there are more."""
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        names: list[str] = []
        with os.scandir(fd) as entries:  # read no further than the budget
            for entry in entries:
                if entry.name in keep:
                    continue
                if len(names) == budget:
                    raise OSError("more entries than the server removes itself")
                names.append(entry.name)
        for name in names:
            os.unlink(name, dir_fd=fd)  # IsADirectoryError for a directory: the helper's
        return budget - len(names)
    finally:
        os.close(fd)


def _open_below(base: int, name: str) -> int:
    """``name`` (relative) opened for reading below the directory ``base`` without following
    any symlink; ``-1`` when it is missing, not a regular file, or too big."""
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if not parts or ".." in parts:
        return -1
    fds: list[int] = []
    try:
        current = base
        for part in parts[:-1]:
            current = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=current)
            fds.append(current)
        fd = os.open(parts[-1], os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=current)
    except OSError:
        return -1
    finally:
        for d in fds:
            os.close(d)
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode) or st.st_size > FETCH_FILE_LIMIT:
        os.close(fd)
        return -1
    return fd
