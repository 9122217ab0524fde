"""The sandbox fork server ("zygote") behind :mod:`asyncpool.sandbox`.

This file is run as a script by a *separate*, clean interpreter
(``python -S -s -B asyncpool/_zygote.py CTL_FD``) that ``asyncpool.sandbox`` starts once per
calling process. It never imports ``asyncpool`` (nor anything outside the standard library), is
single-threaded, preloads the standard-library modules verification programs commonly use, and
then serves requests: for each program it forks one child, which isolates and limits itself and
runs the program. Forking this small, single-threaded, prepared interpreter costs about a
millisecond, against the tens of milliseconds of starting a fresh one; the calling process (maybe
a multi-threaded Ray worker) is never forked.

As root it first moves itself into its namespaces (:func:`_sandbox_ns.isolate_server`: no
network, no System V IPC, a read-only root of system directories only), once.

Protocol (all Unix sockets, all local):

* ``CTL_FD`` is a ``SOCK_SEQPACKET`` socket to the caller. Each request is one record,
  ``REQUEST`` packed, carrying file descriptors (``SCM_RIGHTS``) in this order: a per-run
  ``SOCK_SEQPACKET`` reply socket, the write ends of the stdout and stderr pipes (the same pipe
  twice for one stream), a memfd with the program's UTF-8 source, then, as the flags say, a
  memfd for stdin (``FLAG_STDIN``), a memfd of files to write into the run's directory
  (``FLAG_FILES_IN``), a memfd listing files to read back (``FLAG_FILES_OUT``; the server
  replaces its content by the files), and for a judged run (``FLAG_JUDGE``, see
  :mod:`asyncpool._judge`) a memfd with the entry point, NUL, the tests, and the write end of the
  verdict pipe, both handed to the judge process only. The server never reads stdin, files or
  tests into its own memory (children read them after the fork), so no later fork inherits
  them. End of file on ``CTL_FD`` (the caller exited) makes the server kill every running
  program and exit.
* On the reply socket the server sends ``b"S" + STARTED`` once the child is forked, then
  ``b"R" + RESULT`` when the run is over and cleaned up: its process groups killed and its
  directories removed (when the program left files there and runs as root: only after a
  helper under its uid killed every process of that uid, then removed them), or
  ``b"E" + message`` on an internal error. Otherwise the uids are swept (the same helper, for a
  batch of uids) within ``SWEEP_AFTER`` seconds, and before they are used again in any case.
  The caller closing the reply socket early means "abandon": the run is killed at once.
* Deadlines are on the run's own time (wall-clock time minus run-queue wait, from
  ``/proc/PID/schedstat``): see "Time" in :mod:`asyncpool.sandbox`. ``RESULT`` carries the own
  time, the wall-clock time, the judge's exit and ``RESULT_STARVED`` when the starvation cap
  (:func:`hard_wall_cap`) ended the run without a verdict.

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
from dataclasses import dataclass, field  # noqa: E402
from typing import NoReturn, cast  # noqa: E402

# ---------------------------------------------------------------------------------------------
# Wire format and constants shared with asyncpool.sandbox (which imports this module).
# ---------------------------------------------------------------------------------------------

#: timeout (s), memory limit (bytes), file-size limit (bytes), max processes, flags,
#: wall-clock cap (s, see hard_wall_cap)
REQUEST = struct.Struct("=dqqqId")
#: pid of the forked child, whether the server isolated itself with namespaces
STARTED = struct.Struct("=qB")
#: status code, returncode, returncode-is-None flag, own time (s), wall time (s),
#: judge's exit (exit status or -signal), flags (RESULT_*)
RESULT = struct.Struct("=BqBddqB")

FLAG_LIMITS = 1  #: apply every isolation step and limit; without it: the bare baseline
FLAG_JUDGE = 2  #: run the program as a solution served to a judge process (run_tests)
FLAG_STDIN = 4  #: a memfd for the program's stdin follows the program's memfd
FLAG_FILES_IN = 8  #: a memfd with files to write into the working directory follows
FLAG_FILES_OUT = 16  #: a memfd listing files to read back after the run follows

RESULT_STARVED = 1  #: the machine starved the run past its wall-clock cap: no verdict
RESULT_KILLED_AFTER_JUDGE = 2  #: the solution was killed because the judge was done
RESULT_JUDGE_NONE = -1000  #: the judge's exit when there was no judge

STATUS_PASSED = 0
STATUS_FAILED = 1
STATUS_TIMEOUT = 2
STATUS_MEMORY = 3
STATUS_CRASHED = 4

#: Exit status the child uses to report an uncaught ``MemoryError`` (reported as returncode 1).
MEMORY_EXIT = 231

#: Unprivileged uids (and gids) the sandboxed programs run under when the server runs as root:
#: one uid per running program (its judge runs under ``JUDGE_UID``), leased
#: machine-wide through lock files, so that ``RLIMIT_NPROC`` counts only that program's
#: processes and ``kill(-1, SIGKILL)`` issued under that uid after the run removes every
#: process it left behind, including ones that escaped its process group.
UID_BASE = 1_870_000_000
UID_COUNT = 4096
#: The uid every judge process (trusted code: the tests of ``run_tests``) runs under: outside
#: the pool, so no sandboxed program ever has it. Judges share it (they trust each other) and
#: are non-dumpable, so not even another judge can read their memory.
JUDGE_UID = UID_BASE + UID_COUNT
#: ``RLIMIT_NPROC`` of a judge: counts every judge's processes on the machine (one each).
JUDGE_NPROC = 1 << 16

#: How long after its deadline a run is given to be killed and cleaned up before the caller
#: gives up on the server.
GRACE = 30.0
#: A run the machine starves is given at most ``STARVED_FACTOR * timeout + STARVED_SLACK``
#: seconds of wall-clock time to use its ``timeout`` seconds of own time; past that it is
#: killed and reported starved (never "timeout").
STARVED_FACTOR = 16.0
STARVED_SLACK = 10.0
#: Most names a run may ask to read back, and the bytes of their list.
MAX_FETCH = 256
#: Largest file read back (bigger ones are skipped; RLIMIT_FSIZE keeps them smaller anyway).
FETCH_FILE_LIMIT = 64 * 1024 * 1024


def hard_wall_cap(timeout: float) -> float:
    """Wall-clock seconds after which a run that has not used ``timeout`` of own time is
    declared starved."""
    return STARVED_FACTOR * timeout + STARVED_SLACK


_LOCK_DIRS = (
    "/run/asyncpool-sandbox",
    os.path.join(tempfile.gettempdir(), "asyncpool-sandbox-locks"),
)
#: Size of the tmpfs holding every run's ``/tmp`` and ``/dev/shm`` (shared by the runs of one
#: server; ``RLIMIT_FSIZE`` bounds each file).
TMP_SIZE_MB = 1024
_JUDGE = types.ModuleType("_asyncpool_judge")  # replaced by the real modules in main()
_NS = types.ModuleType("_asyncpool_sandbox_ns")
_SECCOMP = types.ModuleType("_asyncpool_sandbox_seccomp")
_PR_SET_PDEATHSIG = 1
_PR_SET_DUMPABLE = 4
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
    "fractions", "functools", "hashlib", "heapq", "io", "itertools", "json", "keyword", "math",
    "operator", "random", "re", "statistics", "string", "textwrap", "traceback", "typing",
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


def _run_program(source: str, serve_fd: int | None = None, cpu: int | None = None) -> NoReturn:
    """Run ``source`` as ``__main__`` with CPython's exit semantics, then ``_exit``.

    With ``serve_fd`` (a judged run), a program that ran to its end without exiting goes on to
    serve its top-level callables to the judge on that socket (:func:`_judge.serve_solution`)
    instead of exiting.
    """
    import builtins

    main = types.ModuleType("__main__")
    main.__dict__["__builtins__"] = builtins
    sys.modules["__main__"] = main
    rc = 0
    try:
        code = compile(source, "<program>", "exec")
        del source
        exec(code, main.__dict__)
        if serve_fd is not None:
            with contextlib.suppress(BaseException):
                sys.stdout.flush()
                sys.stderr.flush()
            _JUDGE.serve_solution(serve_fd, main.__dict__, cpu)
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
    flags: int
    wall_cap: float

    @property
    def limits(self) -> bool:
        return bool(self.flags & FLAG_LIMITS)

    @property
    def judged(self) -> bool:
        return bool(self.flags & FLAG_JUDGE)


@dataclass
class _Fds:
    """The descriptors of one request (``-1``: absent)."""

    reply: int
    stdout: int
    stderr: int
    program: int
    stdin: int = -1
    files_in: int = -1
    files_out: int = -1
    tests: int = -1
    verdict: int = -1

    def all(self) -> list[int]:
        return [fd for fd in vars(self).values() if fd >= 0]


def _read_fd(fd: int) -> bytes:
    size = os.fstat(fd).st_size
    chunks = []
    offset = 0
    while offset < size:
        chunk = os.pread(fd, size - offset, offset)
        if not chunk:
            break
        chunks.append(chunk)
        offset += len(chunk)
    return b"".join(chunks)


def _close_all_but(keep: tuple[int, ...]) -> None:
    low = 3
    for fd in sorted(k for k in keep if k >= 3):
        os.closerange(low, fd)
        low = fd + 1
    os.closerange(low, 1 << 20)


def _limit(server: _Server, req: _Request, uid: int | None, nproc: int | None = None) -> None:
    """Resource limits, then the uid drop (as root), then the prctl flags. ``nproc`` replaces
    the request's process limit (judges share one uid: theirs counts them all)."""
    cpu = math.ceil(req.timeout) + 1
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    resource.setrlimit(resource.RLIMIT_AS, (req.memory, req.memory))
    resource.setrlimit(resource.RLIMIT_FSIZE, (req.fsize, req.fsize))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))
    if uid is not None:
        limit = req.nproc if nproc is None else nproc
        resource.setrlimit(resource.RLIMIT_NPROC, (limit, limit))
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


def _unpack_files(data: bytes) -> None:
    """Write the caller's files (``[u32 name length][name][u64 size][bytes]...``, names checked
    by the caller: relative, no ``..``) into the working directory, as the program's uid."""
    view = memoryview(data)
    pos = 0
    while pos < len(view):
        (n,) = struct.unpack_from("=I", view, pos)
        name = bytes(view[pos + 4 : pos + 4 + n]).decode("utf-8", "surrogateescape")
        pos += 4 + n
        (size,) = struct.unpack_from("=Q", view, pos)
        pos += 8
        parent = os.path.dirname(name)
        if parent:
            os.makedirs(parent, exist_ok=True)
        fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
        try:
            body = view[pos : pos + size]
            while body:
                body = body[os.write(fd, body) :]
        finally:
            os.close(fd)
        pos += size


def _child(
    server: _Server, req: _Request, fds: _Fds, uid: int | None, scratch: str | None,
    serve_fd: int | None,
) -> NoReturn:  # fmt: skip
    """In the forked child: isolate and limit this process, then run the program (or, in a
    judged run, the solution, then serve it on ``serve_fd``)."""
    try:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        server.ctl.detach()  # the fd is closed below; the object must not close a reused number
        if req.limits:
            os.setsid()  # own session and process group: killed whole
        os.dup2(fds.stdin if fds.stdin >= 0 else server.devnull, 0)
        os.dup2(fds.stdout, 1)
        os.dup2(fds.stderr, 2)
        source = _read_fd(fds.program).decode("utf-8", "surrogatepass")
        files = _read_fd(fds.files_in) if fds.files_in >= 0 else b""
        # Close every inherited fd but the reply socket (for a setup error), the judge's
        # socket and the anchors of the import path (see _anchor_import_path).
        keep = (fds.reply, *_ANCHOR_FDS, *(() if serve_fd is None else (serve_fd,)))
        _close_all_but(keep)
        if req.limits:
            assert scratch is not None
            if server.isolated:
                _NS.private_tmp(f"{scratch}/tmp", f"{scratch}/shm")
                workdir = "/tmp"
            else:
                workdir = f"{scratch}/tmp"
            _limit(server, req, uid)
            _SECCOMP.install()  # last: every later call of the program goes through it
            os.chdir(workdir)
            # The environment is the server's, exactly _ENV (see main): HOME and TMPDIR are
            # not set (putenv in every child costs ~40 page faults); tempfile uses workdir.
            tempfile.tempdir = workdir
        if files:
            _unpack_files(files)
            del files
        # Fresh text streams over fds 1 and 2, now the output pipes (sys.__std*__ wrap the same
        # fds; their buffers are empty: the server never writes them).
        sys.stdout = open(1, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
        sys.stderr = open(  # noqa: SIM115
            2, "w", encoding="utf-8", errors="backslashreplace", buffering=1, closefd=False
        )
        if fds.stdin >= 0:
            sys.stdin = open(0, encoding="utf-8", closefd=False)  # noqa: SIM115
        sys.argv[:] = ["<program>"]
        atexit._clear()
        os.close(fds.reply)  # the program must not be able to talk to the caller
    except MemoryError:
        os._exit(MEMORY_EXIT)  # memory_mb below what the interpreter itself needs: "memory"
    except BaseException as exc:
        try:
            os.write(fds.reply, b"E" + f"sandbox setup failed: {exc!r}".encode()[:4000])
        finally:
            os._exit(1)
    _run_program(source, serve_fd, server.pin_cpu)


def _judge_child(
    server: _Server, req: _Request, fds: _Fds, uid: int | None, sock_fd: int
) -> NoReturn:
    """In the judge's forked child (trusted code): limit, drop to the judge's uid, become
    non-dumpable (no ptrace, no ``/proc/PID/mem`` even for the same uid), run the tests."""
    try:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        server.ctl.detach()
        os.setsid()
        for target in (0, 1, 2):
            os.dup2(server.devnull, target)
        header, _, tests = _read_fd(fds.tests).partition(b"\0")
        entry_point = header.decode() or None
        source = tests.decode("utf-8", "surrogatepass")
        _close_all_but((fds.reply, fds.verdict, sock_fd, *_ANCHOR_FDS))
        os.chdir("/")
        _limit(server, req, uid, nproc=JUDGE_NPROC)
        if server.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_DUMPABLE)")
        sys.argv[:] = ["<tests>"]
        atexit._clear()
        os.close(fds.reply)
    except BaseException as exc:
        try:
            os.write(fds.reply, b"E" + f"judge setup failed: {exc!r}".encode()[:4000])
        finally:
            os._exit(1)
    _JUDGE.judge(sock_fd, fds.verdict, source, entry_point, server.pin_cpu)
    os._exit(1)  # not reached: judge() exits


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
        # Opened now: once the server has isolated itself, the path no longer exists in its
        # mount namespace, and what does is read-only; this descriptor still reaches it.
        self.dir_fd = os.open(self.dir, os.O_RDONLY | os.O_DIRECTORY)
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
            fd = os.open(str(uid), os.O_RDWR | os.O_CREAT, 0o600, dir_fd=self.dir_fd)
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


def _sched(pid: int, threads: bool) -> tuple[float, float]:
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


def _exited(pid: int) -> bool:
    """Whether the child ``pid`` has exited (and not been reaped yet)."""
    try:
        info = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return True
    return info is not None and info.si_pid != 0


@dataclass
class _Job:
    pid: int
    reply_fd: int
    req: _Request
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
        ran, waited = _sched(self.pid, threads=True)
        self.ran, self.waited = max(self.ran, ran), max(self.waited, waited)
        if self.judge_pid is not None:
            ran, waited = _sched(self.judge_pid, threads=False)
            self.judge_ran = max(self.judge_ran, ran)
            self.judge_waited = max(self.judge_waited, waited)

    @property
    def over(self) -> bool:
        return self.status is not None and (self.judge_pid is None or self.judge_status is not None)


class _Server:
    def __init__(self, ctl_fd: int, namespaces: bool = True) -> None:
        self.pid = os.getpid()
        self.ctl = socket.socket(fileno=ctl_fd)
        self.ctl.setblocking(False)
        self.devnull = os.open(os.devnull, os.O_RDWR)
        self.prctl = _libc_prctl()
        self.uids: _Uids | None = None
        self.isolated = False
        if os.geteuid() == 0:
            self._check_uid_map()
            self.uids = _Uids()
            try:
                if namespaces:
                    _NS.isolate_server(tmp_size_mb=TMP_SIZE_MB)
                    self.isolated = True
            except OSError as exc:  # e.g. no CAP_SYS_ADMIN: no namespaces (documented)
                sys.stderr.write(f"asyncpool sandbox: no namespace isolation: {exc}\n")
            if not self.isolated:
                _anchor_import_path()
        self.jobs: dict[int, _Job] = {}  # child pid (program or judge) -> job
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
        if not self.isolated:
            _remove_stale_scratch_bases()
        self.scratch_base = tempfile.mkdtemp(prefix=f"asyncpool-sandbox-{self.pid}-")
        os.chmod(self.scratch_base, 0o711)
        self.scratch_seq = 0
        # A judged run's two processes take turns (each call is a round trip): on one CPU a
        # turn is a local wakeup, across CPUs an inter-processor one, twice as slow here. Own
        # time does not change with it (waiting for the CPU is not counted).
        self.cpus = sorted(os.sched_getaffinity(0))
        self.cpu_turn = 0
        self.pin_cpu: int | None = None  # read by the children of the judged run being forked
        # (each pins itself once its own setup is done, so the two setups still overlap)
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
            req = _Request(*REQUEST.unpack(data)) if len(data) == REQUEST.size else None
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
    def _parse_fds(req: _Request, fds: list[int]) -> _Fds | None:
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
        return _Fds(**dict(zip(names, fds, strict=True)))

    def _give_back(self, uids: list[int], scratch: str | None) -> None:
        """Undo a start that failed before the child existed: free the uids, drop the dirs."""
        if self.uids is not None:
            for uid in uids:
                self.uids.free.appendleft(uid)
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)

    def _start(self, req: _Request, fds: _Fds) -> None:
        uid: int | None = None
        judge_uid: int | None = None
        scratch: str | None = None
        leased: list[int] = []
        fetch: list[str] = []
        if fds.files_out >= 0:
            listing = _read_fd(fds.files_out)[: MAX_FETCH * 4096]
            fetch = [n for n in listing.decode("utf-8", "surrogateescape").split("\0") if n]
            fetch = fetch[:MAX_FETCH]
        if req.limits:
            if self.uids is not None:
                got = self.uids.acquire()
                if got is None:
                    raise RuntimeError("no free sandbox uid")
                leased.append(got)
                uid = got
                judge_uid = JUDGE_UID if req.judged else None
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
        serve_fd = judge_fd = -1
        self.pin_cpu = None
        if req.judged:
            try:
                a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
            except BaseException:
                self._give_back(leased, scratch)
                raise
            serve_fd, judge_fd = a.detach(), b.detach()
            self.pin_cpu = self.cpus[self.cpu_turn % len(self.cpus)]
            self.cpu_turn += 1
        started = time.monotonic()
        try:
            pid = os.fork()
        except BaseException:
            self._give_back(leased, scratch)
            for fd in (serve_fd, judge_fd):
                if fd >= 0:
                    os.close(fd)
            raise
        if pid == 0:  # pragma: no cover - runs in the forked child
            _child(self, req, fds, uid, scratch, serve_fd if req.judged else None)
        job = _Job(pid, fds.reply, req, started, uid, scratch, judge_uid=judge_uid)
        job.files_out, job.fetch = fds.files_out, fetch
        job.next_check = started + min(req.timeout, req.wall_cap) if req.limits else math.inf
        self.jobs[pid] = job
        if req.judged:
            os.close(serve_fd)
            try:
                jpid = os.fork()
            except BaseException:
                self._kill_group(pid)
                job.judge_status = 1 << 8  # as if it had exited 1: the run is "failed"
                jpid = None
            if jpid == 0:  # pragma: no cover - runs in the forked child
                _judge_child(self, req, fds, judge_uid, judge_fd)
            os.close(judge_fd)
            if jpid is not None:
                job.judge_pid = jpid
                self.jobs[jpid] = job
        self.by_reply[fds.reply] = job
        self.poller.register(fds.reply, select.POLLIN)
        self._send(fds.reply, b"S" + STARTED.pack(pid, self.isolated))

    def _on_reply_socket(self, job: _Job) -> None:
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

    def _running(self) -> list[_Job]:
        """Every job with a process not reaped yet, once each."""
        return list({id(job): job for job in self.jobs.values()}.values())

    def _enforce_deadlines(self, now: float) -> None:
        """Kill runs whose own time (wall-clock time minus the time they waited for a CPU)
        reached their timeout, and runs the machine starved past their wall-clock cap."""
        for job in self._running():
            if job.killed_at_deadline or job.starved or now < job.next_check:
                continue
            pids = [p for p in (job.pid, job.judge_pid) if p is not None and p in self.jobs]
            if all(_exited(p) for p in pids):
                continue  # over: reaped next
            job.refresh_waits()
            own = job.own_time(now)
            if own >= job.req.timeout:
                job.killed_at_deadline = True
                job.own_at_kill = own
            elif now - job.started >= job.req.wall_cap:
                job.starved = True
            else:
                # Own time grows at most as fast as wall-clock time: nothing to do before this.
                job.next_check = min(now + (job.req.timeout - own), job.started + job.req.wall_cap)
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
                    self._finish(job)
            elif pid in self.reapers:
                self._job_reaper_done(self.reapers.pop(pid), status)
            elif self.uids is not None and pid in self.uids.sweeps:
                self.uids.sweep_done(pid, status)
            # else: an orphaned descendant of a program, now reaped

    def _finish(self, job: _Job) -> None:
        now = time.monotonic()
        assert job.status is not None
        assert job.usage is not None
        own = max(job.own_at_kill, job.own_time(now)) if job.req.limits else now - job.started
        code, returncode, rc_none = self._classify(job, job.status, job.usage)
        if job.judge_status is None:
            judge = RESULT_JUDGE_NONE
        elif os.WIFSIGNALED(job.judge_status):
            judge = -os.WTERMSIG(job.judge_status)
        else:
            judge = os.WEXITSTATUS(job.judge_status)
        flags = (RESULT_STARVED if job.starved else 0) | (
            RESULT_KILLED_AFTER_JUDGE if job.killed_after_judge else 0
        )
        job.result = b"R" + RESULT.pack(
            code, returncode, rc_none, own, now - job.started, judge, flags
        )
        if job.files_out >= 0:
            if job.scratch is not None:
                with contextlib.suppress(OSError):
                    self._fetch(job)
            os.close(job.files_out)
            job.files_out = -1
        if job.scratch is not None:
            try:  # the common case: the program left no file
                for sub in ("tmp", "shm", ""):
                    os.rmdir(f"{job.scratch}/{sub}".rstrip("/"))
            except OSError:
                if job.uid is not None:
                    self._start_job_reaper(job)  # kill its uid's processes, then rmtree
                    return
                shutil.rmtree(job.scratch, ignore_errors=True)
        self._release_uids(job)
        self._done(job)

    def _release_uids(self, job: _Job) -> None:
        if self.uids is not None and job.uid is not None:
            self.uids.used(job.uid, time.monotonic())

    def _fetch(self, job: _Job) -> None:
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

    @staticmethod
    def _classify(job: _Job, status: int, usage: resource.struct_rusage) -> tuple[int, int, int]:
        """(status code, returncode, returncode-is-None)."""
        if os.WIFSIGNALED(status):
            sig = os.WTERMSIG(status)
            cpu = usage.ru_utime + usage.ru_stime
            cpu_soft = math.ceil(job.req.timeout) + 1 if job.req.limits else math.inf
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
        for pid, job in list(self.jobs.items()):
            job.abandoned = True
            self._kill_group(pid)
        deadline = time.monotonic() + 10.0
        while time.monotonic() < deadline:
            self._reap()
            if self.uids is not None and self.uids.dirty and not self.jobs:
                self.uids.sweep()
            if not (self.jobs or self.reapers or (self.uids is not None and self.uids.sweeps)):
                break
            time.sleep(0.002)
        shutil.rmtree(self.scratch_base, ignore_errors=True)


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
    for name in _PRELOAD:
        __import__(name)
    import site

    # Installed packages are importable (site-packages on the path), but no .pth hook ran.
    for path in site.getsitepackages():
        if os.path.isdir(path) and path not in sys.path:
            sys.path.append(path)
    os.environ.clear()
    os.environ.update(_ENV)
    global _JUDGE, _NS, _SECCOMP
    _JUDGE = _load_sibling("_judge")
    _NS = _load_sibling("_sandbox_ns")
    _SECCOMP = _load_sibling("_sandbox_seccomp")
    server = _Server(int(argv[1]), namespaces="--no-namespaces" not in argv[2:])
    gc.collect()
    gc.freeze()  # keep the preloaded heap out of the children's collections: fewer COW copies
    server.serve()


if __name__ == "__main__":
    main(sys.argv)
