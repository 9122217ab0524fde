"""The sandbox fork server ("zygote") behind :mod:`asyncpool.sandbox`.

This file is run as a script by a *separate*, clean interpreter
(``python -S -s -B asyncpool/_zygote.py CTL_FD``) that ``asyncpool.sandbox`` starts once per
calling process. It never imports ``asyncpool`` (nor anything outside the standard library), is
single-threaded, preloads the standard-library modules verification programs commonly use, and
then serves requests: for each program it forks one child, which isolates and limits itself and
runs the program. Forking this small, single-threaded, prepared interpreter costs about a
millisecond, against the tens of milliseconds of starting a fresh one; the calling process (maybe
a multi-threaded Ray worker) is never forked.

Protocol (all Unix sockets, all local):

* ``CTL_FD`` is a ``SOCK_SEQPACKET`` socket to the caller. Each request is one record,
  ``REQUEST`` packed, carrying three file descriptors (``SCM_RIGHTS``): a per-run
  ``SOCK_SEQPACKET`` reply socket, the write end of the caller's output pipe, and a memfd with
  the program's UTF-8 source. End of file on ``CTL_FD`` (the caller exited) makes the server
  kill every running program and exit.
* On the reply socket the server sends ``b"S" + STARTED`` once the child is forked, then
  ``b"R" + RESULT`` when the program is over and cleaned up: its process group killed and its
  scratch directory removed (when the program left files there and runs as root: only after a
  helper under its uid killed every process of that uid, then removed them), or
  ``b"E" + message`` on an internal error. Otherwise the uid is swept (the same helper, for a
  batch of uids) within ``SWEEP_AFTER`` seconds, and before it is used again in any case.
  The caller closing the reply socket early means "abandon": the program's process group is
  killed at once.

The per-run isolation (what the child does before running the program) is described in the
docstring of :mod:`asyncpool.sandbox`.
"""

from __future__ import annotations

import os
import sys

# Run as a script: Python put this file's directory (the asyncpool package) first on sys.path.
# Programs must not be able to import the package's modules as top-level ones.
_HERE = os.path.dirname(os.path.abspath(__file__))
if __name__ == "__main__" and sys.path and os.path.abspath(sys.path[0] or ".") == _HERE:
    del sys.path[0]

import array  # noqa: E402
import atexit  # noqa: E402
import collections  # noqa: E402
import contextlib  # noqa: E402
import ctypes  # noqa: E402
import fcntl  # noqa: E402
import gc  # noqa: E402
import math  # noqa: E402
import random  # noqa: E402
import resource  # noqa: E402
import select  # noqa: E402
import shutil  # noqa: E402
import signal  # noqa: E402
import socket  # noqa: E402
import stat  # noqa: E402
import struct  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import types  # noqa: E402
from collections.abc import Callable  # noqa: E402
from dataclasses import dataclass  # noqa: E402
from typing import NoReturn, cast  # noqa: E402

# ---------------------------------------------------------------------------------------------
# Wire format and constants shared with asyncpool.sandbox (which imports this module).
# ---------------------------------------------------------------------------------------------

#: timeout (s), memory limit (bytes), file-size limit (bytes), max processes, flags
REQUEST = struct.Struct("=dqqqI")
#: pid of the forked child
STARTED = struct.Struct("=q")
#: status code, returncode, returncode-is-None flag, duration (s)
RESULT = struct.Struct("=BqBd")

FLAG_LIMITS = 1  #: apply every isolation step and limit; without it: the bare baseline

STATUS_PASSED = 0
STATUS_FAILED = 1
STATUS_TIMEOUT = 2
STATUS_MEMORY = 3
STATUS_CRASHED = 4

#: Exit status the child uses to report an uncaught ``MemoryError`` (reported as returncode 1).
MEMORY_EXIT = 231

#: Unprivileged uids (and gids) the sandboxed programs run under when the server runs as root:
#: one uid per running program, leased machine-wide through lock files, so that
#: ``RLIMIT_NPROC`` counts only that program's processes and ``kill(-1, SIGKILL)`` issued under
#: that uid after the run removes every process it left behind, including ones that escaped
#: its process group.
UID_BASE = 1_870_000_000
UID_COUNT = 4096

#: How long after its deadline a run is given to be killed and cleaned up before the caller
#: gives up on the server.
GRACE = 30.0

_LOCK_DIRS = (
    "/run/asyncpool-sandbox",
    os.path.join(tempfile.gettempdir(), "asyncpool-sandbox-locks"),
)
_PR_SET_PDEATHSIG = 1
_ANCHOR_FDS: list[int] = []  # O_PATH fds of import directories (see _anchor_import_path)
_PR_SET_NO_NEW_PRIVS = 38
_PR_SET_CHILD_SUBREAPER = 36
_ENV = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
    "PYTHONHASHSEED": "0",
    "PYTHONDONTWRITEBYTECODE": "1",
}
#: Standard-library modules preloaded so that programs importing them pay nothing.
_PRELOAD = (
    "abc", "bisect", "collections", "copy", "dataclasses", "datetime", "decimal", "enum",
    "fractions", "functools", "hashlib", "heapq", "io", "itertools", "json", "math", "operator",
    "random", "re", "statistics", "string", "textwrap", "traceback", "typing",
)  # fmt: skip
# Not ``threading``: once imported, every fork pays for its after-fork handler (~130 page faults,
# half a millisecond here); programs that use threads import it themselves.


def _libc_prctl() -> Callable[[int, int, int, int, int], int]:
    libc = ctypes.CDLL(None, use_errno=True)
    fn = libc.prctl
    fn.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    fn.restype = ctypes.c_int
    return cast("Callable[[int, int, int, int, int], int]", fn)


# ---------------------------------------------------------------------------------------------
# In the child: isolate, limit, run.
# ---------------------------------------------------------------------------------------------


def _exit_status(exc: SystemExit) -> int:
    code = exc.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    with contextlib.suppress(BaseException):  # best effort, like CPython
        sys.stderr.write(f"{code}\n")
    return 1


def _print_exception(exc: BaseException) -> None:
    import traceback

    with contextlib.suppress(BaseException):  # e.g. MemoryError while printing
        tb = exc.__traceback__.tb_next if exc.__traceback__ is not None else None
        traceback.print_exception(type(exc), exc, tb)


def _run_program(source: str) -> NoReturn:
    """Run ``source`` as ``__main__`` with CPython's exit semantics, then ``_exit``."""
    import builtins

    main = types.ModuleType("__main__")
    main.__dict__["__builtins__"] = builtins
    sys.modules["__main__"] = main
    rc = 0
    try:
        code = compile(source, "<program>", "exec")
        del source
        exec(code, main.__dict__)
    except SystemExit as exc:
        rc = _exit_status(exc)
    except MemoryError as exc:
        _print_exception(exc)
        rc = MEMORY_EXIT
    except BaseException as exc:
        _print_exception(exc)
        rc = 1
    try:
        threading = sys.modules.get("threading")
        if threading is not None:
            threading._shutdown()  # join non-daemon threads, as CPython does at exit
        atexit._run_exitfuncs()
    except MemoryError:
        rc = rc or MEMORY_EXIT
    except BaseException:
        pass
    try:
        sys.stdout.flush()
    except BaseException:
        rc = rc or 120  # like CPython when flushing fails
    with contextlib.suppress(BaseException):
        sys.stderr.flush()
    os._exit(rc)


def _count_user_tasks(uid: int) -> int:
    """Tasks (processes and threads) of ``uid``: what ``RLIMIT_NPROC`` counts."""
    total = 0
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/status", "rb") as fh:
                text = fh.read()
        except OSError:
            continue
        uid_line = text.split(b"\nUid:", 1)[1].split(None, 1)[0] if b"\nUid:" in text else b""
        if uid_line == str(uid).encode():
            threads = text.split(b"\nThreads:", 1)[1].split(None, 1)[0]
            total += int(threads)
    return total


@dataclass
class _Request:
    timeout: float
    memory: int
    fsize: int
    nproc: int
    limits: bool


def _child(
    server: _Server, req: _Request, reply_fd: int, out_fd: int, prog_fd: int,
    uid: int | None, scratch: str | None,
) -> NoReturn:  # fmt: skip
    """In the forked child: isolate and limit this process, then run the program."""
    try:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        server.ctl.detach()  # the fd is closed below; the object must not close a reused number
        if req.limits:
            os.setsid()  # own session and process group: killed whole
        os.dup2(server.devnull, 0)
        os.dup2(out_fd, 1)
        os.dup2(out_fd, 2)
        size = os.fstat(prog_fd).st_size
        chunks = []
        offset = 0
        while offset < size:
            chunk = os.pread(prog_fd, size - offset, offset)
            if not chunk:
                break
            chunks.append(chunk)
            offset += len(chunk)
        source = b"".join(chunks).decode("utf-8", "surrogatepass")
        # Close every inherited fd but the reply socket (for a setup error) and the anchors of
        # the import path (see _anchor_import_path).
        low = 3
        for keep in sorted((reply_fd, *_ANCHOR_FDS)):
            os.closerange(low, keep)
            low = keep + 1
        os.closerange(low, 1 << 20)
        if req.limits:
            assert scratch is not None
            os.chdir(scratch)
            cpu = math.ceil(req.timeout) + 1
            resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
            resource.setrlimit(resource.RLIMIT_AS, (req.memory, req.memory))
            resource.setrlimit(resource.RLIMIT_FSIZE, (req.fsize, req.fsize))
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
            resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))
            if uid is not None:
                resource.setrlimit(resource.RLIMIT_NPROC, (req.nproc, req.nproc))
                os.setgroups([])
                os.setresgid(uid, uid, uid)
                os.setresuid(uid, uid, uid)
            else:
                # Not root: the program keeps the caller's uid, whose other processes count too.
                nproc = _count_user_tasks(os.getuid()) + req.nproc
                resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))
            # After the uid change (which clears it): die with the server.
            if server.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
                raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG)")
            if os.getppid() != server.pid:
                os._exit(1)
            if server.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
                raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")
            # The environment is the server's, exactly _ENV (see main): HOME and TMPDIR are not
            # set (putenv in every child costs ~40 page faults); tempfile uses the scratch dir.
            tempfile.tempdir = scratch
        # Fresh text streams over fds 1 and 2, now the output pipe (sys.__std*__ wrap the same
        # fds; their buffers are empty: the server never writes them). stdin stays the server's
        # /dev/null stream.
        sys.stdout = open(1, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
        sys.stderr = open(  # noqa: SIM115
            2, "w", encoding="utf-8", errors="backslashreplace", buffering=1, closefd=False
        )
        sys.argv[:] = ["<program>"]
        atexit._clear()
        os.close(reply_fd)  # the program must not be able to talk to the caller
    except MemoryError:
        os._exit(MEMORY_EXIT)  # memory_mb below what the interpreter itself needs: "memory"
    except BaseException as exc:
        try:
            os.write(reply_fd, b"E" + f"sandbox setup failed: {exc!r}".encode()[:4000])
        finally:
            os._exit(1)
    _run_program(source)


# ---------------------------------------------------------------------------------------------
# The server.
# ---------------------------------------------------------------------------------------------

#: A uid a run used is swept (every process left under it killed) before it is used again, in
#: batches by one forked helper: when this many wait, or when the oldest has waited this long.
SWEEP_BATCH = 16
SWEEP_AFTER = 0.25
#: How many uids a server leases (and sweeps) at once when it needs more.
LEASE_BATCH = 8
#: After this many failed sweeps of a uid (a leftover process kept killing the helper first),
#: the server keeps it leased but never uses it again.
SWEEP_ATTEMPTS = 10

_Work = list[tuple[int, "str | None"]]


def _spawn_reaper(work: _Work) -> int:
    """Fork a helper that, for each ``(uid, scratch)``, kills every process of ``uid`` and then
    removes ``scratch`` (as root); it exits 0 when everything is done."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the forked child
        try:
            signal.set_wakeup_fd(-1)
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            ok = True
            for uid, scratch in work:
                # Real and effective uid = the sandbox uid, so kill(-1) reaches exactly its
                # processes (no root process); saved uid 0, to come back.
                os.setresuid(uid, uid, 0)
                with contextlib.suppress(ProcessLookupError):
                    os.kill(-1, signal.SIGKILL)
                os.setresuid(0, 0, 0)
                if scratch is not None:
                    shutil.rmtree(scratch, ignore_errors=True)
                    ok = ok and not os.path.lexists(scratch)
        except BaseException:
            os._exit(1)
        os._exit(0 if ok else 1)
    return pid


def _remove_stale_scratch_bases() -> None:
    """Remove the scratch directories of servers that died without cleaning up (SIGKILL)."""
    tmp = tempfile.gettempdir()
    for name in os.listdir(tmp):
        parts = name.split("-")
        if len(parts) != 4 or parts[:2] != ["asyncpool", "sandbox"] or not parts[2].isdigit():
            continue
        if os.path.exists(f"/proc/{parts[2]}"):
            continue  # its server (or at least a process with that pid) is alive
        path = os.path.join(tmp, name)
        with contextlib.suppress(OSError):
            st = os.lstat(path)
            if stat.S_ISDIR(st.st_mode) and st.st_uid == os.geteuid():
                shutil.rmtree(path, ignore_errors=True)


def _reaper_ok(status: int) -> bool:
    return os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0


class _Uids:
    """This server's sandbox uids: leased machine-wide (``flock`` on root-only lock files, held
    for the server's life), each swept before it is handed out again."""

    def __init__(self) -> None:
        self.dir = self._lock_dir()
        self.lock_fds: dict[int, int] = {}
        self.free: collections.deque[int] = collections.deque()
        self.dirty: _Work = []
        self.dirty_since = math.inf
        self.sweeps: dict[int, tuple[_Work, int]] = {}  # helper pid -> (work, attempt)

    @staticmethod
    def _lock_dir() -> str:
        for path in _LOCK_DIRS:
            try:
                os.mkdir(path, 0o700)
            except FileExistsError:
                pass
            except OSError:
                continue
            st = os.lstat(path)
            if stat.S_ISDIR(st.st_mode) and st.st_uid == 0 and not st.st_mode & 0o077:
                return path
        raise RuntimeError(f"no safe (root-owned, mode 0700) lock directory among {_LOCK_DIRS}")

    def acquire(self) -> int | None:
        """A clean uid (no process runs under it); ``None`` when the pool is exhausted."""
        if not self.free:
            self._lease(LEASE_BATCH)
        return self.free.popleft() if self.free else None

    def _lease(self, n: int) -> None:
        new: list[int] = []
        start = random.randrange(UID_COUNT)
        for i in range(UID_COUNT):
            if len(new) == n:
                break
            uid = UID_BASE + (start + i) % UID_COUNT
            if uid in self.lock_fds:
                continue
            fd = os.open(os.path.join(self.dir, str(uid)), os.O_RDWR | os.O_CREAT, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                os.close(fd)
                continue
            self.lock_fds[uid] = fd
            new.append(uid)
        # A server that held these before may have died leaving processes: sweep them first.
        for _ in range(SWEEP_ATTEMPTS):
            _, status = os.waitpid(_spawn_reaper([(uid, None) for uid in new]), 0)
            if _reaper_ok(status):
                self.free.extend(new)
                return

    def used(self, uid: int, now: float) -> None:
        if not self.dirty:
            self.dirty_since = now
        self.dirty.append((uid, None))

    def sweep_due(self, now: float) -> float:
        return self.dirty_since + SWEEP_AFTER if len(self.dirty) < SWEEP_BATCH else now

    def sweep(self, work: _Work | None = None, attempt: int = 1) -> None:
        if work is None:
            work, self.dirty, self.dirty_since = self.dirty, [], math.inf
        if work:
            self.sweeps[_spawn_reaper(work)] = (work, attempt)

    def sweep_done(self, pid: int, status: int) -> None:
        work, attempt = self.sweeps.pop(pid)
        if _reaper_ok(status):
            self.free.extend(uid for uid, _ in work)
        elif attempt < SWEEP_ATTEMPTS:
            self.sweep(work, attempt + 1)


@dataclass
class _Job:
    pid: int
    reply_fd: int
    req: _Request
    started: float
    deadline: float
    uid: int | None
    scratch: str | None
    killed_at_deadline: bool = False
    abandoned: bool = False
    reaper_attempts: int = 0
    result: bytes = b""


class _Server:
    def __init__(self, ctl_fd: int) -> None:
        self.pid = os.getpid()
        self.ctl = socket.socket(fileno=ctl_fd)
        self.ctl.setblocking(False)
        self.devnull = os.open(os.devnull, os.O_RDWR)
        self.prctl = _libc_prctl()
        self.uids: _Uids | None = None
        if os.geteuid() == 0:
            self._check_uid_map()
            self.uids = _Uids()
        self.jobs: dict[int, _Job] = {}  # child pid -> job
        self.by_reply: dict[int, _Job] = {}  # reply fd -> job
        self.reapers: dict[int, _Job] = {}  # helper pid -> job whose scratch was not empty
        self.wake_r, self.wake_w = os.pipe()
        os.set_blocking(self.wake_r, False)
        os.set_blocking(self.wake_w, False)
        signal.signal(signal.SIGCHLD, lambda signum, frame: None)
        signal.set_wakeup_fd(self.wake_w, warn_on_full_buffer=False)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGPIPE, signal.SIG_IGN)
        # Orphaned descendants of the programs are re-parented here and reaped: no zombies.
        self.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
        # Scratch directories are made in one directory of this server's (searchable, not
        # listable, by the sandbox uids): a mkdir per run, no random names.
        _remove_stale_scratch_bases()
        self.scratch_base = tempfile.mkdtemp(prefix=f"asyncpool-sandbox-{self.pid}-")
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
        lo, hi = UID_BASE, UID_BASE + UID_COUNT
        if not any(start <= lo and hi <= start + count for start, _, count in ranges):
            raise RuntimeError(f"sandbox uids {lo}..{hi - 1} are not mapped in this namespace")

    def _next_wakeup(self, now: float) -> int:
        due = math.inf
        for job in self.jobs.values():
            if not job.killed_at_deadline:
                due = min(due, job.deadline)
        if self.uids is not None and self.uids.dirty:
            due = min(due, self.uids.sweep_due(now))
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
            self._reap()
            now = time.monotonic()
            self._enforce_deadlines(now)
            if self.uids is not None and self.uids.dirty and self.uids.sweep_due(now) <= now:
                self.uids.sweep()

    # -- requests ------------------------------------------------------------------------------

    def _on_control(self) -> bool:
        """Accept every queued request; ``False`` when the caller is gone."""
        fd_size = array.array("i").itemsize
        while True:
            try:
                data, anc, flags, _ = self.ctl.recvmsg(
                    REQUEST.size, socket.CMSG_SPACE(3 * fd_size), socket.MSG_CMSG_CLOEXEC
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
            if len(fds) != 3 or len(data) != REQUEST.size or flags & socket.MSG_CTRUNC:
                for fd in fds:
                    os.close(fd)
                continue
            timeout, memory, fsize, nproc, rflags = REQUEST.unpack(data)
            req = _Request(timeout, memory, fsize, nproc, bool(rflags & FLAG_LIMITS))
            try:
                self._start(req, fds[0], fds[1], fds[2])
            except Exception as exc:
                self._send(fds[0], b"E" + f"sandbox could not start the program: {exc!r}".encode())
                os.close(fds[0])
            finally:
                os.close(fds[1])
                os.close(fds[2])

    def _give_back(self, uid: int | None, scratch: str | None) -> None:
        """Undo a start that failed before the child existed: free the uid, drop the dir."""
        if uid is not None and self.uids is not None:
            self.uids.free.appendleft(uid)
        if scratch is not None:
            os.rmdir(scratch)

    def _start(self, req: _Request, reply_fd: int, out_fd: int, prog_fd: int) -> None:
        uid: int | None = None
        scratch: str | None = None
        if req.limits:
            if self.uids is not None:
                uid = self.uids.acquire()
                if uid is None:
                    raise RuntimeError("no free sandbox uid")
            try:
                self.scratch_seq += 1
                scratch = f"{self.scratch_base}/{self.scratch_seq}"
                os.mkdir(scratch, 0o700)
                if uid is not None:
                    os.chown(scratch, uid, uid)
            except BaseException:
                self._give_back(uid, scratch)
                raise
        started = time.monotonic()
        try:
            pid = os.fork()
        except BaseException:
            self._give_back(uid, scratch)
            raise
        if pid == 0:  # pragma: no cover - runs in the forked child
            _child(self, req, reply_fd, out_fd, prog_fd, uid, scratch)
        deadline = started + req.timeout if req.limits else math.inf
        job = _Job(pid, reply_fd, req, started, deadline, uid, scratch)
        self.jobs[pid] = job
        self.by_reply[reply_fd] = job
        self.poller.register(reply_fd, select.POLLIN)
        self._send(reply_fd, b"S" + STARTED.pack(pid))

    def _on_reply_socket(self, job: _Job) -> None:
        """The caller closed (or wrote to) its reply socket: abandon the run."""
        with contextlib.suppress(OSError):
            os.read(job.reply_fd, 64)
        job.abandoned = True
        self.poller.unregister(job.reply_fd)
        del self.by_reply[job.reply_fd]
        if job.pid in self.jobs:
            self._kill_group(job.pid)

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

    def _enforce_deadlines(self, now: float) -> None:
        for job in self.jobs.values():
            if not job.killed_at_deadline and now >= job.deadline:
                job.killed_at_deadline = True
                self._kill_group(job.pid)

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
                with contextlib.suppress(OSError):
                    os.killpg(pid, signal.SIGKILL)
            _, status, usage = os.wait4(pid, 0)
            if job is not None:
                self._finish(job, status, usage)
            elif pid in self.reapers:
                self._job_reaper_done(self.reapers.pop(pid), status)
            elif self.uids is not None and pid in self.uids.sweeps:
                self.uids.sweep_done(pid, status)
            # else: an orphaned descendant of a program, now reaped

    def _finish(self, job: _Job, status: int, usage: resource.struct_rusage) -> None:
        duration = time.monotonic() - job.started
        job.result = b"R" + RESULT.pack(*self._classify(job, status, usage), duration)
        if job.scratch is not None:
            try:
                os.rmdir(job.scratch)  # the common case: the program left no file
            except OSError:
                if job.uid is not None:
                    self._start_job_reaper(job)  # kill its uid's processes, then rmtree
                    return
                shutil.rmtree(job.scratch, ignore_errors=True)
        if job.uid is not None and self.uids is not None:
            self.uids.used(job.uid, time.monotonic())
        self._done(job)

    @staticmethod
    def _classify(job: _Job, status: int, usage: resource.struct_rusage) -> tuple[int, int, int]:
        """(status code, returncode, returncode-is-None)."""
        if os.WIFSIGNALED(status):
            sig = os.WTERMSIG(status)
            cpu = usage.ru_utime + usage.ru_stime
            cpu_soft = math.ceil(job.req.timeout) + 1
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
        return STATUS_FAILED, code, 0

    def _start_job_reaper(self, job: _Job) -> None:
        assert job.uid is not None
        job.reaper_attempts += 1
        self.reapers[_spawn_reaper([(job.uid, job.scratch)])] = job

    def _job_reaper_done(self, job: _Job, status: int) -> None:
        if _reaper_ok(status):
            assert job.uid is not None
            assert self.uids is not None
            self.uids.free.append(job.uid)  # swept just now
        elif job.reaper_attempts < SWEEP_ATTEMPTS:
            self._start_job_reaper(job)  # a leftover process killed the helper first: again
            return
        self._done(job)  # after too many attempts: the uid stays leased, unused

    def _done(self, job: _Job) -> None:
        if not job.abandoned:
            self._send(job.reply_fd, job.result)
            self.poller.unregister(job.reply_fd)
            del self.by_reply[job.reply_fd]
        os.close(job.reply_fd)

    def _shutdown(self) -> None:
        """The caller is gone: kill every program, sweep every uid, then return."""
        for job in list(self.jobs.values()):
            job.abandoned = True
            self._kill_group(job.pid)
        deadline = time.monotonic() + 10.0
        while time.monotonic() < deadline:
            self._reap()
            if self.uids is not None and self.uids.dirty and not self.jobs:
                self.uids.sweep()
            if not (self.jobs or self.reapers or (self.uids is not None and self.uids.sweeps)):
                break
            time.sleep(0.002)
        shutil.rmtree(self.scratch_base, ignore_errors=True)


def _world_readable_dir(path: str) -> bool:
    """Whether any uid can list ``path`` (every ancestor searchable by others)."""
    try:
        if not stat.S_IMODE(os.stat(path).st_mode) & stat.S_IROTH:
            return False
        while True:
            if not os.stat(path).st_mode & stat.S_IXOTH:
                return False
            parent = os.path.dirname(path)
            if parent == path:
                return True
            path = parent
    except OSError:
        return False


def _anchor_import_path() -> None:
    """Keep the import path usable by programs that run under an unprivileged uid.

    When Python is installed under a directory other users cannot search (pyenv in ``/root``,
    mode 0700), a program that dropped to a sandbox uid could import nothing that was not
    preloaded. For each such import directory the server keeps an ``O_PATH`` descriptor and
    replaces the directory, in ``sys.path`` and in every loaded package's ``__path__``, by
    ``/proc/self/fd/N``: the children inherit the descriptor, and a path walk from it checks
    only the directories below it (which are world-readable), never its ancestors. It grants
    nothing else: ``..`` from there still stops at the unsearchable ancestor.
    """
    anchors: dict[str, str] = {}
    for entry in sys.path:
        path = os.path.abspath(entry) if entry else ""
        if not path or path in anchors or not os.path.isdir(path) or _world_readable_dir(path):
            continue
        if not _world_readable_dir(path) and stat.S_IMODE(os.stat(path).st_mode) & 0o005 == 0o005:
            fd = os.open(path, os.O_PATH | os.O_DIRECTORY)
            _ANCHOR_FDS.append(fd)
            anchors[path] = f"/proc/self/fd/{fd}"
    if not anchors:
        return
    by_length = sorted(anchors, key=len, reverse=True)

    def rewrite(path: str) -> str:
        for old in by_length:
            if path == old or path.startswith(old + "/"):
                return anchors[old] + path[len(old) :]
        return path

    sys.path[:] = [rewrite(p) for p in sys.path]
    for module in list(sys.modules.values()):
        search = getattr(module, "__path__", None)
        if isinstance(search, list):
            search[:] = [rewrite(p) if isinstance(p, str) else p for p in search]
    sys.path_importer_cache.clear()


def main(argv: list[str]) -> None:
    for name in _PRELOAD:
        __import__(name)
    import site

    # Installed packages are importable (site-packages on the path), but no .pth hook ran.
    for path in site.getsitepackages():
        if os.path.isdir(path) and path not in sys.path:
            sys.path.append(path)
    os.environ.clear()
    os.environ.update(_ENV)
    if os.geteuid() == 0:
        _anchor_import_path()
    server = _Server(int(argv[1]))
    gc.collect()
    gc.freeze()  # keep the preloaded heap out of the children's collections: fewer COW copies
    server.serve()


if __name__ == "__main__":
    main(sys.argv)
