"""The sandbox fork server ("zygote") behind :mod:`asyncpool.sandbox`.

This file is run as a script by a *separate*, clean interpreter
(``python -S -s -B asyncpool/sandbox/_zygote.py CTL_FD``) that ``asyncpool.sandbox`` starts once per
calling process. It never imports ``asyncpool`` (nor anything outside the standard library), is
single-threaded, preloads the standard-library modules verification programs commonly use, and
then serves requests: for each program it forks one child, which isolates and limits itself and
runs the program. Forking this small, single-threaded, prepared interpreter costs about a
millisecond, against the tens of milliseconds of starting a fresh one; the calling process (maybe
a multi-threaded Ray worker) is never forked.

As root it first moves itself into its namespaces (:func:`_ns.isolate_server`: no
network, no System V IPC, a read-only root of system directories only), once.

The wire protocol is described in :mod:`asyncpool.sandbox._zygote_wire`. This module owns the
server: its loop, the requests it accepts, the runs it tracks (deadlines on own time, results,
clean-up) and its own start-up; the child's setup is :mod:`asyncpool.sandbox._zygote_child`,
the judges' :mod:`asyncpool.sandbox._zygote_judges`, the uid leases
:mod:`asyncpool.sandbox._zygote_uids`, one run's bookkeeping
:mod:`asyncpool.sandbox._zygote_job`, what it does once before its first fork
:mod:`asyncpool.sandbox._zygote_prepare`.
It must not import ``asyncpool`` (it is a script in a clean interpreter) nor anything outside
the standard library; its siblings are imported as modules of a stand-in package.

The per-run isolation (what the child does before running the program) is described in the
docstring of :mod:`asyncpool.sandbox`.
"""

from __future__ import annotations

import os
import sys
import types

# Run as a script: Python put this file's directory (asyncpool/sandbox/) first on sys.path.
# Programs must not be able to import the package's modules as top-level ones. The siblings
# this server is made of are imported (relatively) as modules of a stand-in package whose path
# is this directory: the ``asyncpool`` package (and Ray) is never imported here.
_HERE = os.path.dirname(os.path.abspath(__file__))
if __name__ == "__main__":
    if sys.path and os.path.abspath(sys.path[0] or ".") == _HERE:
        del sys.path[0]
    _STAND_IN = types.ModuleType("_asyncpool_zygote")
    _STAND_IN.__path__ = [_HERE]
    sys.modules[_STAND_IN.__name__] = _STAND_IN
    __package__ = _STAND_IN.__name__

import array  # noqa: E402
import contextlib  # noqa: E402
import ctypes  # noqa: E402
import gc  # noqa: E402
import math  # noqa: E402
import select  # noqa: E402
import shutil  # noqa: E402
import signal  # noqa: E402
import socket  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from typing import TYPE_CHECKING, cast  # noqa: E402

from . import _zygote_child, _zygote_prepare  # noqa: E402

if TYPE_CHECKING:
    from ._ns import NetnsPool
from ._cgroup import Cgroups, RunCgroup, open_cgroups  # noqa: E402
from ._cpu_lanes import CpuLanes, lock_path  # noqa: E402
from ._zygote_child import (  # noqa: E402
    anchor_import_path,
    premade_streams,
    read_fd,
    run_child,
)
from ._zygote_job import (  # noqa: E402
    FIRST_READING,
    OTHERS_SAMPLE,
    Job,
    classify,
    exited,
    fetch_files,
    remove_scratch,
    sched,
)
from ._zygote_judges import run_judge_child, run_judge_server  # noqa: E402
from ._zygote_uids import (  # noqa: E402
    SWEEP_ATTEMPTS,
    Uids,
    lock_dir,
    reaper_ok,
    remove_stale_scratch_bases,
    spawn_reaper,
)
from ._zygote_wire import (  # noqa: E402
    ENV,
    FLAG_FILES_IN,
    FLAG_FILES_OUT,
    FLAG_JUDGE,
    FLAG_STDIN,
    JUDGE_DONE,
    JUDGE_JOB,
    JUDGE_POOL,
    JUDGE_UID,
    LEFTOVER_PREFIX,
    MAX_FETCH,
    REQUEST,
    RESULT,
    RESULT_JUDGE_NONE,
    RESULT_KILLED_AFTER_JUDGE,
    RESULT_STARVED,
    STARTED,
    STATUS_MEMORY,
    UID_BASE,
    USAGE,
    Fds,
    Request,
)

#: Size of the tmpfs holding every run's ``/tmp`` and ``/dev/shm`` (shared by the runs of one
#: server; ``RLIMIT_FSIZE`` bounds each file).
TMP_SIZE_MB = 1024
_PR_SET_CHILD_SUBREAPER = 36
_PR_SET_NO_NEW_PRIVS = 38
#: Most unused network namespaces the server keeps for later runs (see _ns.NetnsPool).
NETNS_SPARE = 16
class _PooledJudge:
    """A long-lived judge (``_zygote_judges.run_judge_server``): its pid, the server's end of its
    control socket, the job it is judging (None: idle) and that job's token (see
    ``_zygote_wire.JUDGE_JOB``), whether it retires after that one."""

    def __init__(self, pid: int, sock: socket.socket) -> None:
        self.pid = pid
        self.sock = sock
        self.ctl = sock.fileno()
        self.job: Job | None = None
        self.token = 0
        self.retired = False


def _libc_prctl() -> Callable[[int, int, int, int, int], int]:
    libc = ctypes.CDLL(None, use_errno=True)
    fn = libc.prctl
    fn.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    fn.restype = ctypes.c_int
    return cast("Callable[[int, int, int, int, int], int]", fn)


class _Server:
    def __init__(
        self,
        ctl_fd: int,
        namespaces: bool = True,
        prefixes: tuple[str, ...] = (),
        lanes: str | None = None,
    ) -> None:
        self.pid = os.getpid()
        self.ctl = socket.socket(fileno=ctl_fd)
        self.ctl.setblocking(False)
        self.devnull = os.open(os.devnull, os.O_RDWR)
        self.streams = premade_streams()  # the children's sys.stdout and sys.stderr
        self.prctl = _libc_prctl()
        self.uids: Uids | None = None
        self.isolated = False
        # A cgroup per run (read by the run's child, see _cgroup): opened before the namespaces,
        # whose /sys is read-only. None: no usable hierarchy (see _kill_leftovers' fallback).
        self.cgroups: Cgroups | None = open_cgroups()
        # The run being forked's cgroups, for its child to join (_cgroup.join).
        self.cgroup_joins: tuple[tuple[int, str], ...] = ()
        self.netns_fd = -1  # the network namespace of the run being forked, for its child
        # Whether the run being forked has its memory held by its cgroup (see
        # _zygote_child._limit: its address space and process count are then wider).
        self.memory_held = False
        self.netns: NetnsPool | None = None  # reused network namespaces, once isolated
        if self.cgroups is None:
            sys.stderr.write("asyncpool sandbox: no cgroup per run: a uid sweep per run instead\n")
        elif not self.cgroups.limits_memory:
            sys.stderr.write("asyncpool sandbox: no memory controller: runs' memory is bounded by "
                             "RLIMIT_AS and runtimes' heap flags only\n")  # fmt: skip
        # A judged run's two processes take turns (each call is a round trip): on one CPU a
        # turn is a local wakeup, across CPUs an inter-processor one, twice as slow here. Own
        # time does not change with it (waiting for the CPU is not counted). Which CPU: a lane
        # no other fork server's run holds (see _cpu_lanes); its lock file is opened before
        # the namespaces, which hide the host's lock directories.
        self.cpus = sorted(os.sched_getaffinity(0))
        # Root's machine-wide lock directory, shared by the uid leases and the lanes.
        locks = lock_dir() if os.geteuid() == 0 else None
        if lanes is None:
            lanes = lock_path(os.geteuid()) if locks is None else f"{locks}/cpu-lanes"
        self.lanes = CpuLanes(self.cpus, None if lanes == "0" else lanes)
        if self.lanes.refused:
            sys.stderr.write(f"asyncpool sandbox: no CPU lanes ({lanes} is not a usable lock "
                             "file): each judged run's CPU is chosen round-robin by this server "
                             "alone\n")  # fmt: skip
        self.pin_cpu: int | None = None  # read by the children of the judged run being forked
        # (each pins itself once its own setup is done, so the two setups still overlap)
        if locks is not None:
            self._check_uid_map()
            self.uids = Uids(locks)
            try:
                if namespaces:
                    _zygote_child.NS.isolate_server(tmp_size_mb=TMP_SIZE_MB, prefixes=prefixes)
                    self.isolated = True
                    # A run's namespace is reused only once its cgroup is gone (all its
                    # processes dead): without cgroups each run gets a new one.
                    if self.cgroups is not None:
                        self.netns = _zygote_child.NS.NetnsPool(NETNS_SPARE)
            except OSError as exc:  # e.g. no CAP_SYS_ADMIN: no namespaces (documented)
                sys.stderr.write(f"asyncpool sandbox: no namespace isolation: {exc}\n")
            if not self.isolated:
                anchor_import_path()
        self.jobs: dict[int, Job] = {}  # child pid (program or judge) -> job
        self.by_reply: dict[int, Job] = {}  # reply fd -> job
        self.reapers: dict[int, Job] = {}  # helper pid -> job whose scratch was not empty
        self.answering: list[Job] = []  # finished runs whose verdict waits for a reap (_answer)
        self.draining: list[Job] = []  # over, waiting for their cgroup's last task to exit
        # Long-lived judges (as root only: they need the judge's own uid), by pid and by the
        # server's end of their control socket.
        self.judges: dict[int, _PooledJudge] = {}
        self.judge_by_fd: dict[int, _PooledJudge] = {}
        self.wake_r, self.wake_w = os.pipe()
        os.set_blocking(self.wake_r, False)
        os.set_blocking(self.wake_w, False)
        signal.signal(signal.SIGCHLD, lambda signum, frame: None)
        signal.set_wakeup_fd(self.wake_w, warn_on_full_buffer=False)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGPIPE, signal.SIG_IGN)
        # Orphaned descendants of the programs are re-parented here and reaped: no zombies.
        self.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
        # No process of this server's tree ever gains privileges by execve (setuid binaries
        # grant nothing): set here, once, since every fork inherits it and nothing clears it,
        # rather than by a prctl in each run's child (~11 pages of copy-on-write faults there).
        # The server itself never executes anything.
        if self.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")
        # Scratch directories are made in one directory of this server's (searchable, not
        # listable, by the sandbox uids): a mkdir per run, no random names.
        if not self.isolated:
            remove_stale_scratch_bases()
        self.scratch_base = tempfile.mkdtemp(prefix=f"{LEFTOVER_PREFIX}{self.pid}-")
        os.chmod(self.scratch_base, 0o711)
        self.scratch_seq = 0
        self.poller = select.poll()
        self.poller.register(self.ctl.fileno(), select.POLLIN)
        self.poller.register(self.wake_r, select.POLLIN)

    @staticmethod
    def _check_uid_map() -> None:
        try:
            with open("/proc/self/uid_map") as fh:
                ranges = [tuple(int(x) for x in line.split()) for line in fh if line.strip()]
        except OSError:  # pragma: no cover - not Linux
            return
        lo, hi = UID_BASE, JUDGE_UID + 1
        if not any(start <= lo and hi <= start + count for start, _, count in ranges):
            raise RuntimeError(f"sandbox uids {lo}..{hi - 1} are not mapped in this namespace")

    def _next_wakeup(self, now: float) -> int:
        due = math.inf
        for job in self._running():
            if not (job.killed_at_deadline or job.starved):
                due = min(due, job.next_check)
        if self.uids is not None and self.uids.dirty:
            due = min(due, self.uids.sweep_due(now))
        if self.draining:
            due = min(due, now + 0.001)
        return -1 if due == math.inf else max(0, math.ceil((due - now) * 1000))

    def serve(self) -> None:
        while True:
            try:
                events = self.poller.poll(self._next_wakeup(time.monotonic()))
            except InterruptedError:  # pragma: no cover
                continue
            for fd, _ in events:
                if fd == self.ctl.fileno():
                    if not self._on_control():
                        self._shutdown()
                        return
                elif fd == self.wake_r:
                    self._drain_wakeup()
                elif fd in self.by_reply:
                    self._on_reply_socket(self.by_reply[fd])
                elif fd in self.judge_by_fd:
                    self._on_judge(self.judge_by_fd[fd])
            self._reap()
            if self.draining:
                self._drain()
            now = time.monotonic()
            self._enforce_deadlines(now)
            if self.uids is not None and self.uids.dirty and self.uids.sweep_due(now) <= now:
                self.uids.sweep()
            self._answer()

    # -- requests ------------------------------------------------------------------------------

    def _on_control(self) -> bool:
        """Accept every queued request; ``False`` when the caller is gone."""
        fd_size = array.array("i").itemsize
        while True:
            try:
                data, anc, flags, _ = self.ctl.recvmsg(
                    REQUEST.size, socket.CMSG_SPACE(9 * fd_size), socket.MSG_CMSG_CLOEXEC
                )
            except BlockingIOError:
                return True
            except OSError:
                return False
            if not data:
                return False
            fds = array.array("i")
            for level, kind, payload in anc:
                if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                    fds.frombytes(payload[: len(payload) - len(payload) % fd_size])
            req = Request(*REQUEST.unpack(data)) if len(data) == REQUEST.size else None
            parsed = self._parse_fds(req, list(fds)) if req is not None else None
            if req is None or parsed is None or flags & socket.MSG_CTRUNC:
                for fd in fds:
                    os.close(fd)
                continue
            try:
                self._start(req, parsed)
            except Exception as exc:
                message = f"sandbox could not start the program: {exc!r}"
                self._send(parsed.reply, b"E" + message.encode())
                for fd in (parsed.reply, parsed.files_out):
                    if fd >= 0:
                        os.close(fd)
                parsed.files_out = -1
            finally:
                for fd in parsed.all():
                    if fd != parsed.reply and fd != parsed.files_out:
                        os.close(fd)

    @staticmethod
    def _parse_fds(req: Request, fds: list[int]) -> Fds | None:
        optional = [
            (FLAG_STDIN, ("stdin",)),
            (FLAG_FILES_IN, ("files_in",)),
            (FLAG_FILES_OUT, ("files_out",)),
            (FLAG_JUDGE, ("tests", "verdict")),
        ]
        names = ["reply", "stdout", "stderr", "program"]
        for flag, fields in optional:
            if req.flags & flag:
                names += fields
        if len(fds) != len(names):
            return None
        return Fds(**dict(zip(names, fds, strict=True)))

    def _give_back(
        self,
        uids: list[int],
        scratch: str | None,
        cgroup: RunCgroup | None = None,
        netns: int = -1,
    ) -> None:
        """Undo a start that failed before the child existed: free the uids, drop the dirs."""
        if netns >= 0:
            os.close(netns)  # no process ever entered it; not worth keeping
        if cgroup is not None and self.cgroups is not None:
            with contextlib.suppress(OSError):
                self.cgroups.remove(cgroup)
        if self.uids is not None:
            for uid in uids:
                self.uids.free.appendleft(uid)
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)

    def _start(self, req: Request, fds: Fds) -> None:
        uid: int | None = None
        judge_uid: int | None = None
        scratch: str | None = None
        leased: list[int] = []
        fetch: list[str] = []
        if fds.files_out >= 0:
            listing = read_fd(fds.files_out)[: MAX_FETCH * 4096]
            fetch = [n for n in listing.decode("utf-8", "surrogateescape").split("\0") if n]
            fetch = fetch[:MAX_FETCH]
        if req.limits:
            if self.uids is not None:
                got = self.uids.acquire()
                if got is None:
                    raise RuntimeError("no free sandbox uid")
                leased.append(got)
                uid = got
                # A judge that shares the run's files runs under the run's uid (see
                # FLAG_SHARED_FS); every other under the judges' own.
                judge_uid = (uid if req.shared else JUDGE_UID) if req.judged else None
            try:
                self.scratch_seq += 1
                scratch = f"{self.scratch_base}/{self.scratch_seq}"
                os.mkdir(scratch, 0o711)
                for sub in ("tmp", "shm"):
                    os.mkdir(f"{scratch}/{sub}", 0o700)
                    if uid is not None:
                        os.chown(f"{scratch}/{sub}", uid, uid)
            except BaseException:
                self._give_back(leased, scratch)
                raise
        cgroup = None
        self.memory_held = False
        if req.limits and self.cgroups is not None:
            try:
                cgroup = self.cgroups.new_run()
            except BaseException:
                self._give_back(leased, scratch)
                raise
            with contextlib.suppress(OSError):  # RLIMIT_AS still holds; the trial wrote one
                self.memory_held = cgroup.limit_memory(req.resident)
        netns = -1
        if req.limits and self.netns is not None:
            try:
                netns = self.netns.take()
            except OSError:  # the child makes a new one itself
                netns = -1
        serve_fd = judge_fd = -1
        self.pin_cpu = None
        if req.judged:
            try:
                a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
            except BaseException:
                self._give_back(leased, scratch, cgroup, netns)
                raise
            serve_fd, judge_fd = a.detach(), b.detach()
            self.pin_cpu = self.lanes.take()
        started = time.monotonic()
        self.cgroup_joins = () if cgroup is None else cgroup.joins
        self.netns_fd = netns
        try:
            pid = os.fork()
        except BaseException:
            self.cgroup_joins, self.netns_fd, self.memory_held = (), -1, False
            self._give_back(leased, scratch, cgroup, netns)
            for fd in (serve_fd, judge_fd):
                if fd >= 0:
                    os.close(fd)
            if self.pin_cpu is not None:
                self.lanes.give_back(self.pin_cpu)
            raise
        if pid == 0:  # pragma: no cover - runs in the forked child
            run_child(self, req, fds, uid, scratch, serve_fd if req.judged else None)
        # the judge (trusted) is not of the run
        self.cgroup_joins, self.netns_fd, self.memory_held = (), -1, False
        job = Job(pid, fds.reply, req, started, uid, scratch, judge_uid=judge_uid)
        job.cgroup, job.netns, job.lane = cgroup, netns, self.pin_cpu
        job.files_out, job.fetch = fds.files_out, fetch
        # Own time grows at most as fast as every CPU together (the run's processes' CPU time
        # counts, see _enforce_deadlines): no deadline before this. A toolchain's run still
        # going after FIRST_READING is read then too, for the waits of its other processes (a
        # compiler's passes, Job.refresh_others), which are lost once they exit.
        first = min(req.timeout / len(self.cpus), req.wall_cap)
        if req.toolchain:
            first = min(first, FIRST_READING)
        job.next_check = started + first if req.limits else math.inf
        self.jobs[pid] = job
        if req.judged:
            os.close(serve_fd)
            if req.shared or not self._pooled_judge(job, fds, judge_fd):
                # A judge under the run's uid (FLAG_SHARED_FS) joins the run's cgroup: then
                # every process of that uid is of the run, and dead when the cgroup is empty.
                if req.shared and cgroup is not None:
                    self.cgroup_joins = cgroup.joins
                try:
                    jpid = os.fork()
                except BaseException:
                    self._kill_group(pid)
                    job.judge_status = 1 << 8  # as if it had exited 1: the run is "failed"
                    jpid = None
                if jpid == 0:  # pragma: no cover - runs in the forked child
                    shared = f"{scratch}/tmp" if req.shared and scratch is not None else None
                    run_judge_child(self, req, fds, judge_uid, judge_fd, shared)
                self.cgroup_joins = ()
                if jpid is not None:
                    job.judge_pid = jpid
                    self.jobs[jpid] = job
            os.close(judge_fd)
        self.by_reply[fds.reply] = job
        self.poller.register(fds.reply, select.POLLIN)
        self._send(fds.reply, b"S" + STARTED.pack(pid, self.isolated))

    # -- long-lived judges -----------------------------------------------------------------------

    def _pooled_judge(self, job: Job, fds: Fds, judge_fd: int) -> bool:
        """Hand the judged ``job`` to an idle long-lived judge (forking one when fewer than
        ``JUDGE_POOL`` exist); ``False`` when none can take it (not root, all busy, or the hand-
        over failed): the caller forks a judge for this check alone."""
        if self.uids is None:
            return False
        judge = next((j for j in self.judges.values() if j.job is None and not j.retired), None)
        if judge is None:
            if len(self.judges) >= JUDGE_POOL:
                return False
            judge = self._fork_judge()
            if judge is None:
                return False
        token = int.from_bytes(os.urandom(8), "little")
        header = JUDGE_JOB.pack(
            job.req.timeout, job.req.memory, -1 if self.pin_cpu is None else self.pin_cpu, token
        )
        ran, waited = sched(judge.pid, threads=False)
        try:
            socket.send_fds(judge.sock, [header], [fds.tests, fds.verdict, judge_fd])
        except OSError:
            judge.retired = True
            self._kill_group(judge.pid)
            return False
        judge.job, judge.token = job, token
        job.judge_pid = judge.pid
        job.judge_ran0, job.judge_waited0 = ran, waited
        self.jobs[judge.pid] = job
        return True

    def _fork_judge(self) -> _PooledJudge | None:
        try:
            ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        except OSError:
            return None
        try:
            pid = os.fork()
        except OSError:
            ours.close()
            theirs.close()
            return None
        if pid == 0:  # pragma: no cover - runs in the forked child
            run_judge_server(self, theirs.detach(), JUDGE_UID)
        theirs.close()
        ours.setblocking(False)
        judge = _PooledJudge(pid, ours)
        self.judges[pid] = judge
        self.judge_by_fd[judge.ctl] = judge
        self.poller.register(judge.ctl, select.POLLIN)
        return judge

    def _forget_judge(self, judge: _PooledJudge) -> None:
        """Stop using ``judge``: its control socket closed, never handed a check again."""
        judge.retired = True
        if self.judges.get(judge.pid) is judge:
            del self.judges[judge.pid]
        if self.judge_by_fd.get(judge.ctl) is judge:
            del self.judge_by_fd[judge.ctl]
            self.poller.unregister(judge.ctl)
            judge.sock.close()

    def _on_judge(self, judge: _PooledJudge) -> None:
        """A long-lived judge finished its check (``D`` with the check's token), or hung up (it
        is exiting: reaped)."""
        try:
            msg = judge.sock.recv(64)
        except BlockingIOError:
            return
        except OSError:
            msg = b""
        done = JUDGE_DONE.unpack(msg) if len(msg) == JUDGE_DONE.size else None
        if done is None or done[0] != b"D" or judge.job is None or done[2] != judge.token:
            # EOF, nonsense, or a "done" without this check's token (forged by the solution
            # through a callable of the tests': see JUDGE_JOB): never used again; killed, and
            # its check (if any) ends when it is reaped, as a judge of its own that died.
            self._forget_judge(judge)
            self._kill_group(judge.pid)
            return
        judge.retired = judge.retired or done[1] != 0
        job, judge.job = judge.job, None
        if job is None or self.jobs.get(judge.pid) is not job:
            return
        # The check is over: as when a judge of its own exits 0 (see _reap).
        if job.req.timeout != math.inf:
            job.refresh_waits()
        del self.jobs[judge.pid]
        job.judge_pid = None
        job.judge_status = 0
        if job.status is None and job.pid in self.jobs:
            job.killed_after_judge = not job.killed_at_deadline
            self._kill_group(job.pid)
        if job.over:
            self._end(job)

    def _on_reply_socket(self, job: Job) -> None:
        """The caller closed (or wrote to) its reply socket: abandon the run."""
        with contextlib.suppress(OSError):
            os.read(job.reply_fd, 64)
        job.abandoned = True
        self.poller.unregister(job.reply_fd)
        del self.by_reply[job.reply_fd]
        for pid in (job.pid, job.judge_pid):
            if pid is not None and pid in self.jobs:
                self._kill_group(pid)

    @staticmethod
    def _send(fd: int, msg: bytes) -> None:
        with contextlib.suppress(OSError):
            os.write(fd, msg)

    @staticmethod
    def _kill_group(pid: int) -> None:
        with contextlib.suppress(OSError):
            os.killpg(pid, signal.SIGKILL)
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)

    def _running(self) -> list[Job]:
        """Every job with a process not reaped yet, once each."""
        return list({id(job): job for job in self.jobs.values()}.values())

    def _enforce_deadlines(self, now: float) -> None:
        """Kill runs whose own time (wall-clock time minus the time they waited for a CPU)
        reached their timeout, and runs the machine starved past their wall-clock cap."""
        for job in self._running():
            if job.killed_at_deadline or job.starved or now < job.next_check:
                continue
            pids = [p for p in (job.pid, job.judge_pid) if p is not None and p in self.jobs]
            if all(exited(p) for p in pids):
                continue  # over: reaped next
            job.refresh_waits()
            others = False
            if job.cgroup is not None:
                # The CPU time of every process the run started counts too: a run whose
                # processes spin (a fork bomb) starves its first one, whose own time would then
                # crawl to the wall-clock cap; with it the run ends when it used its timeout of
                # CPU. A toolchain's passes' waits do not count (Job.refresh_others).
                spent = job.cgroup.cpu_seconds()
                if spent is not None and spent > job.spent:
                    job.spent = spent
                if job.req.toolchain:
                    others = job.refresh_others(job.cgroup.pids())
            own = job.own_time(now)
            if own >= job.req.timeout:
                job.killed_at_deadline = True
                job.own_at_kill = own
            elif now - job.started >= job.req.wall_cap:
                job.starved = True
            else:
                # Own time grows at most as fast as every CPU together: nothing to do before.
                job.next_check = min(now + (job.req.timeout - own) / len(self.cpus),
                                     job.started + job.req.wall_cap)  # fmt: skip
                if others:
                    job.next_check = min(job.next_check, now + OTHERS_SAMPLE)
                continue
            for target in (job.pid, job.judge_pid):
                if target is not None and target in self.jobs:
                    self._kill_group(target)

    # -- children ------------------------------------------------------------------------------

    def _drain_wakeup(self) -> None:
        try:
            while os.read(self.wake_r, 4096):
                pass
        except BlockingIOError:
            pass

    def _reap(self) -> None:
        while True:
            try:
                info = os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
            except ChildProcessError:
                return
            if info is None or info.si_pid == 0:
                return
            pid = info.si_pid
            job = self.jobs.pop(pid, None)
            if job is not None and job.req.limits:
                # Still a zombie, so the pid (= its process group id) cannot have been reused.
                if job.req.timeout != math.inf:
                    job.refresh_waits()
                with contextlib.suppress(OSError):
                    os.killpg(pid, signal.SIGKILL)
            _, status, usage = os.wait4(pid, 0)
            pooled = self.judges.get(pid)
            if pooled is not None:
                self._forget_judge(pooled)
            if job is not None:
                if pid == job.pid:
                    job.status, job.usage = status, usage
                else:
                    job.judge_status = status
                    if job.status is None and job.pid in self.jobs:
                        # The judge is done: the solution has nothing left to do.
                        job.killed_after_judge = not job.killed_at_deadline
                        self._kill_group(job.pid)
                if job.over:
                    self._end(job)
            elif pid in self.reapers:
                self._job_reaper_done(self.reapers.pop(pid), status)
            elif self.uids is not None and pid in self.uids.sweeps:
                self.uids.sweep_done(pid, status)
            # else: an orphaned descendant of a program, now reaped

    def _end(self, job: Job) -> None:
        """The program (and its judge) have exited: kill whatever else the run started; its
        verdict (:meth:`_finish`) waits until every one of those processes is gone."""
        job.ended = time.monotonic()
        assert job.status is not None
        if job.cgroup is not None and job.status != 0:
            # Read only for a run that did not exit 0: the verdict of one that did ignores it.
            job.oom_killed = job.cgroup.oom_killed()
        if job.cgroup is not None and job.others:
            # The CPU time of all its processes floors its own time (Job.refresh_others).
            spent = job.cgroup.cpu_seconds()
            if spent is not None and spent > job.spent:
                job.spent = spent
        if job.cgroup is not None and not self._remove_cgroup(job):
            self.draining.append(job)
            return
        self._finish(job)

    def _remove_cgroup(self, job: Job) -> bool:
        assert job.cgroup is not None
        assert self.cgroups is not None
        try:
            if not self.cgroups.remove(job.cgroup, peak=not job.req.judged):
                return False
            job.all_dead = True
            job.peak = job.cgroup.peak
        except OSError:  # not removable (never seen): leave it, do not hold the verdict back
            if job.netns >= 0:  # some process of the run may be alive: never reuse it
                os.close(job.netns)
                job.netns = -1
        job.cgroup = None
        return True

    def _drain(self) -> None:
        """Finish the runs whose cgroup is now empty (the kill is repeated on each try)."""
        waiting, self.draining = self.draining, []
        for job in waiting:
            if self._remove_cgroup(job):
                self._finish(job)
            else:
                self.draining.append(job)

    def _finish(self, job: Job) -> None:
        now = time.monotonic() if job.ended is None else job.ended
        if job.netns >= 0:
            # Its cgroup is gone: every process of the run is dead (see _ns.NetnsPool).
            assert self.netns is not None
            netns, job.netns = job.netns, -1
            try:
                self.netns.give_back(netns)
            except OSError:
                os.close(netns)
        assert job.status is not None
        assert job.usage is not None
        own = max(job.own_at_kill, job.own_time(now)) if job.req.limits else now - job.started
        code, returncode, rc_none = classify(job, job.status, job.usage)
        if job.judge_status is None:
            judge = RESULT_JUDGE_NONE
        elif os.WIFSIGNALED(job.judge_status):
            judge = -os.WTERMSIG(job.judge_status)
        else:
            judge = os.WEXITSTATUS(job.judge_status)
        flags = (RESULT_STARVED if job.starved else 0) | (
            RESULT_KILLED_AFTER_JUDGE if job.killed_after_judge and code != STATUS_MEMORY else 0
        )
        job.result = (
            b"R"
            + RESULT.pack(code, returncode, rc_none, own, now - job.started, judge, flags)
            + USAGE.pack(
                job.usage.ru_utime + job.usage.ru_stime,
                job.usage.ru_maxrss * 1024 if job.peak is None else job.peak,
            )
        )
        if job.files_out >= 0:
            if job.scratch is not None:
                with contextlib.suppress(OSError):
                    fetch_files(job)
            os.close(job.files_out)
            job.files_out = -1
        if job.scratch is not None and job.uid is not None and self.cgroups is None:
            # No cgroup: every process of the run's uid is killed (a forked helper) before
            # the verdict, so none that escaped its process group outlives the run.
            self._start_job_reaper(job)
            return
        if job.scratch is not None and not remove_scratch(job.scratch, job.req, self.isolated):
            if job.uid is not None:
                self._start_job_reaper(job)  # kill its uid's processes, then rmtree
                return
            shutil.rmtree(job.scratch, ignore_errors=True)
        self._release_uids(job)
        self._done(job)

    def _release_uids(self, job: Job) -> None:
        """The run's uid may serve again: at once when its cgroup is gone (every process the run
        started, hence every process of that uid, was in it - the child joined it before
        dropping to the uid, and nothing leaves a cgroup unprivileged - and the kernel counted
        none alive), else after a sweep under it (``kill(-1, SIGKILL)``, batched)."""
        if self.uids is not None and job.uid is not None:
            if job.all_dead:
                self.uids.free.append(job.uid)
            else:
                self.uids.used(job.uid, time.monotonic())

    def _start_job_reaper(self, job: Job) -> None:
        assert job.uid is not None
        job.reaper_attempts += 1
        self.reapers[spawn_reaper([(job.uid, job.scratch)])] = job

    def _job_reaper_done(self, job: Job, status: int) -> None:
        if reaper_ok(status):
            assert job.uid is not None
            assert self.uids is not None
            self.uids.free.append(job.uid)  # swept just now
        elif job.reaper_attempts < SWEEP_ATTEMPTS:
            self._start_job_reaper(job)  # a leftover process killed the helper first: again
            return
        self._done(job)  # after too many attempts: the uid stays leased, unused

    def _done(self, job: Job) -> None:
        if job.lane is not None:
            self.lanes.give_back(job.lane)
            job.lane = None
        self.answering.append(job)

    def _answer(self) -> None:
        """Send the verdicts of the runs finished in this turn of the loop, each after a reap
        of every child that has exited: a verdict means every process of its run is gone,
        zombies too. A run's process that died before the run's end (its program killed its
        children and exited without waiting for them) is no longer in the run's cgroup, but
        is a zombie whose parent is now this server (the subreaper): the run could finish
        (cgroup empty and removed) within one :meth:`_reap` before that loop waited for it
        (11 of 200 such runs, ``test_sandbox_run_isolation``; a C++ ptrace attack's test saw
        one under load). While every run whose program left a file waited for a forked helper,
        that helper's few milliseconds hid it."""
        while self.answering:
            self._reap()
            finished, self.answering = self.answering, []
            for job in finished:
                self._reply(job)

    def _reply(self, job: Job) -> None:
        if not job.abandoned:
            self._send(job.reply_fd, job.result)
            self.poller.unregister(job.reply_fd)
            del self.by_reply[job.reply_fd]
        os.close(job.reply_fd)

    def _shutdown(self) -> None:
        """The caller is gone: kill every program, sweep every uid, then return."""
        for pid, job in list(self.jobs.items()):
            job.abandoned = True
            self._kill_group(pid)
        for pid in list(self.judges):
            self._kill_group(pid)
        deadline = time.monotonic() + 10.0
        while time.monotonic() < deadline:
            self._reap()
            if self.uids is not None and self.uids.dirty and not self.jobs:
                self.uids.sweep()
            self._drain()
            self._answer()
            if not (
                self.jobs
                or self.reapers
                or self.draining
                or (self.uids is not None and self.uids.sweeps)
            ):
                break
            time.sleep(0.002)
        shutil.rmtree(self.scratch_base, ignore_errors=True)
        if self.cgroups is not None:
            self.cgroups.close()
        self.lanes.close()


def _load_sibling(name: str) -> types.ModuleType:
    """A module of this directory, loaded by path (the package itself is never imported)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(f"_asyncpool{name}", f"{_HERE}/{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def main(argv: list[str]) -> None:
    _zygote_prepare.preload(argv)
    prefixes = [arg.split("=", 1)[1] for arg in argv[2:] if arg.startswith("--prefix=")]
    lanes = [arg.split("=", 1)[1] for arg in argv[2:] if arg.startswith("--cpu-lanes=")]
    os.environ.clear()
    os.environ.update(ENV)
    from . import _judge  # (the stand-in package's: see the top of this file)

    _zygote_child.JUDGE = _judge
    _zygote_child.JUDGE.prepare_server()
    _zygote_prepare.warm_up()
    _zygote_child.NS = _load_sibling("_ns")
    _zygote_child.SECCOMP = _load_sibling("_seccomp")
    server = _Server(
        int(argv[1]),
        namespaces="--no-namespaces" not in argv[2:],
        prefixes=tuple(prefixes),
        lanes=lanes[-1] if lanes else None,
    )
    gc.collect()
    _zygote_prepare.trim_heap()
    gc.freeze()  # keep the preloaded heap out of the children's collections: fewer COW copies
    server.serve()


if __name__ == "__main__":
    main(sys.argv)
