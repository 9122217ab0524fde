"""Run untrusted Python (a model's completion plus its unit tests) in an isolated, limited process.

``run_python(program)`` runs ``program`` as ``__main__`` in a separate process and returns a
:class:`SandboxResult` whose ``status`` is one of:

``"passed"``
    it exited with status 0;
``"failed"``
    it exited with a non-zero status: an uncaught exception (``AssertionError``, ``SyntaxError``
    ...), ``sys.exit(n)``, or ``os._exit(n)`` - any exit the program chose;
``"timeout"``
    it ran past ``timeout`` seconds of wall-clock time, or hit its CPU-time limit;
``"memory"``
    it hit its address-space limit: an uncaught ``MemoryError``, or death by ``SIGKILL``,
    ``SIGSEGV``, ``SIGBUS`` or ``SIGABRT`` after using at least 90 % of ``memory_mb``;
``"crashed"``
    it was killed by any other signal (segfault, abort, ``os.kill(os.getpid(), 9)``), or the
    sandbox's own supervisor died under it.

Exit status 231 is reserved: the sandbox reports an uncaught ``MemoryError`` with it (as
``status="memory", returncode=1``); a program exiting with 231 itself is reported "memory" too.
``returncode`` follows :mod:`subprocess`: the exit status, or ``-signal`` when killed by one.
``stdout_tail`` is the last :data:`OUTPUT_TAIL_BYTES` bytes of the program's stdout and stderr
(one stream, interleaved as written), decoded as UTF-8 with replacement; everything before is
read and discarded, never buffered. ``duration`` is the program's wall-clock time, fork to exit.

How it runs (the hot path of every verification, so it forks, it does not start interpreters)
-------------------------------------------------------------------------------------------
Each calling process lazily starts one fork server (:mod:`asyncpool._zygote`): a clean
interpreter (``python -S -s -B``, an environment built from scratch, the standard library's
common modules preloaded, site-packages on ``sys.path`` but no ``.pth`` hook run),
single-threaded. Each run sends the program to it (a memfd, over a Unix socket); the server
forks one child, which, before running the program:

* starts its own session and process group (``setsid``); stdin is ``/dev/null``; stdout and
  stderr go to a pipe the *calling thread* reads (keeping only the tail);
* closes every other inherited file descriptor;
* ``chdir``s to a fresh scratch directory (where :mod:`tempfile` puts its files too), removed
  before ``run_python`` returns;
* sets ``RLIMIT_CPU`` (``ceil(timeout) + 1`` s soft, one more hard), ``RLIMIT_AS``
  (``memory_mb``, which includes the interpreter's own ~25 MiB), ``RLIMIT_FSIZE``
  (:data:`FILE_SIZE_LIMIT`), ``RLIMIT_NPROC`` (:data:`MAX_PROCESSES`, threads count too),
  ``RLIMIT_NOFILE`` (256) and ``RLIMIT_CORE`` (0);
* **when the caller runs as root** (as in our containers and Ray clusters): drops to an
  unprivileged uid/gid of its own, leased machine-wide for the run from a pool
  (``1870000000 + 0..4095``, lock files in ``/run/asyncpool-sandbox``), with no supplementary
  groups. Root ignores ``RLIMIT_NPROC``; a dedicated uid makes it count exactly that program's
  processes (so a fork bomb stops at :data:`MAX_PROCESSES`), and leaves the program unable to
  signal or ptrace the caller, the server or any other sandbox, and unable to read root's
  files (when Python itself is installed under such a directory, e.g. pyenv in ``/root``, the
  server keeps ``O_PATH`` descriptors to the import directories so that imports still work,
  see ``_zygote._anchor_import_path``);
* sets ``PR_SET_NO_NEW_PRIVS`` (setuid binaries grant nothing) and ``PR_SET_PDEATHSIG`` (it
  dies with the server);
* gets an environment built from scratch (``PATH``, ``LANG``/``LC_ALL=C.UTF-8``,
  ``PYTHONHASHSEED=0``, ``PYTHONDONTWRITEBYTECODE=1``; no ``HOME``): nothing of the caller's
  environment, so no secret in it, reaches the program.

When the program exits or its wall-clock ``timeout`` passes, its whole process group gets
``SIGKILL``; the server is a child subreaper and reaps every descendant: no zombie is left. As
root, a uid is used again only after a helper running under it did ``kill(-1, SIGKILL)``
(batched: within :data:`asyncpool._zygote.SWEEP_AFTER` s, or at once when the program left
files to remove), so a process that escaped its process group (``setsid`` after a double fork)
dies within a fraction of a second, and can never meet a later program. Nothing the program
does reaches the caller: killing its parent kills the server at most (only when not root), which
is then restarted transparently and that run reported "crashed"; the caller also never waits
longer than ``timeout + 30`` s on a server that stopped answering.

What it does NOT protect against - it is not a container
---------------------------------------------------------
* No network isolation: the program can open sockets and reach anything the machine can.
* No filesystem isolation beyond its working directory and uid: it can read every
  world-readable file and write every world-writable place (``/tmp``, ``/dev/shm``), within
  ``RLIMIT_FSIZE`` per file but not in total (no disk quota).
* Shared kernel: no seccomp, no namespaces; a kernel exploit escapes it.
* Memory is limited per process (``RLIMIT_AS``), so a program can hold up to
  ``MAX_PROCESSES * memory_mb`` in total; there is no cgroup.
* When the caller is **not** root, the program runs under the caller's own uid: it can then
  signal or ptrace the caller's other processes (``os.kill(-1, 9)`` kills the caller!), read
  its files, and processes that escape the process group outlive the run. ``RLIMIT_NPROC`` is
  then set to the uid's current task count plus :data:`MAX_PROCESSES`. Run it as root (or in a
  container) for the guarantees above.
* Under a sandbox uid, ``sys.executable`` and ``sys.prefix`` may be unreadable (pyenv in
  ``/root``): a program cannot start a new interpreter there (``subprocess``,
  ``multiprocessing`` "spawn"); ``fork`` works.
* A program that exits 0 before its tests run (``os._exit(0)`` in the completion) "passes":
  append a check the program cannot skip (e.g. print a secret nonce after the tests and look for
  it in ``stdout_tail``) when that matters.
* Linux only (``memfd_create``, ``prctl``, ``/proc``).

Concurrency: ``run_python`` may be called from many threads at once; each call blocks only its
own thread. ``run_python_async`` runs it in a worker thread (``anyio.to_thread``); cancelling the
awaiting task kills the program's process group at once and raises the cancellation. A process
that forks (e.g. ``multiprocessing``) gets its own fork server in the child.
"""

from __future__ import annotations

import array
import atexit
import contextlib
import functools
import math
import os
import select
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from typing import Literal

import anyio
import anyio.to_thread

from asyncpool import _zygote

# The limits (FILE_SIZE_LIMIT, MAX_PROCESSES, OUTPUT_TAIL_BYTES) are public but reached through
# the module, so that a re-export of __all__ by the package stays small.
__all__ = [
    "SandboxResult",
    "SandboxStatus",
    "run_python",
    "run_python_async",
    "run_python_bare",
]

SandboxStatus = Literal["passed", "failed", "timeout", "memory", "crashed"]

#: How many bytes of combined stdout/stderr ``SandboxResult.stdout_tail`` keeps.
OUTPUT_TAIL_BYTES = 4096
#: ``RLIMIT_FSIZE``: the largest file the program may write.
FILE_SIZE_LIMIT = 16 * 1024 * 1024
#: ``RLIMIT_NPROC``: processes plus threads the program may have at once, itself included.
MAX_PROCESSES = 16

_STATUSES: tuple[SandboxStatus, ...] = ("passed", "failed", "timeout", "memory", "crashed")
_READ_CHUNK = 1 << 16
_ZYGOTE_PATH = _zygote.__file__


@dataclass(frozen=True, slots=True)
class SandboxResult:
    """The verdict on one program."""

    status: SandboxStatus
    returncode: int | None
    stdout_tail: str
    duration: float

    @property
    def passed(self) -> bool:
        return self.status == "passed"


class _ZygoteGone(Exception):
    """The fork server died before it started the program: safe to retry on a new one."""


class _Cancel:
    """Lets another thread abandon a run: shuts its reply socket, so the server kills it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sock: socket.socket | None = None
        self.cancelled = False

    def attach(self, sock: socket.socket | None) -> None:
        with self._lock:
            self._sock = sock
            if sock is not None and self.cancelled:
                self._shut(sock)

    def cancel(self) -> None:
        with self._lock:
            self.cancelled = True
            if self._sock is not None:
                self._shut(self._sock)

    @staticmethod
    def _shut(sock: socket.socket) -> None:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)


class _Zygote:
    """One running fork server and the control socket to it."""

    def __init__(self) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-S", "-s", "-B", _ZYGOTE_PATH, str(theirs.fileno())],
                pass_fds=(theirs.fileno(),),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                env=dict(_zygote._ENV),
                cwd="/",
                start_new_session=True,
            )
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        self.ctl = ours
        self.owner = os.getpid()
        self.send_lock = threading.Lock()

    @property
    def alive(self) -> bool:
        return self.owner == os.getpid() and self.proc.poll() is None

    def send(self, header: bytes, fds: list[int]) -> None:
        with self.send_lock:
            self.ctl.sendmsg(
                [header], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))]
            )

    def close(self, kill: bool = False) -> None:
        """Close the control socket (the server then exits); reap it."""
        with contextlib.suppress(OSError):
            self.ctl.close()
        if self.owner != os.getpid():
            return
        if kill:
            with contextlib.suppress(OSError):
                self.proc.kill()
        try:
            self.proc.wait(timeout=5.0)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(OSError):
                self.proc.kill()
            self.proc.wait()


_lock = threading.Lock()
_current: _Zygote | None = None


def _get_zygote() -> _Zygote:
    global _current
    with _lock:
        z = _current
        if z is None or not z.alive:
            if z is not None:
                z.close(kill=True)
            z = _current = _Zygote()
        return z


def _discard_zygote(z: _Zygote) -> None:
    """Forget ``z`` (it died or stopped answering) so the next run starts a new one."""
    global _current
    with _lock:
        if _current is z:
            _current = None
    z.close(kill=True)


def _zygote_pid() -> int | None:
    """The current fork server's pid (for tests and diagnostics), ``None`` if none runs."""
    with _lock:
        z = _current
        return z.proc.pid if z is not None and z.alive else None


def _after_fork_in_child() -> None:
    # A forked caller gets its own fork server; it must not share (or hold open) the parent's.
    global _lock, _current
    _lock = threading.Lock()
    z, _current = _current, None
    if z is not None:
        with contextlib.suppress(OSError):
            z.ctl.close()


def _at_exit() -> None:
    global _current
    z, _current = _current, None
    if z is not None:
        z.close()


os.register_at_fork(after_in_child=_after_fork_in_child)
atexit.register(_at_exit)


def _validate(program: object, timeout: object, memory_mb: object) -> None:
    if not isinstance(program, str):
        raise TypeError(f"program must be a str, not {type(program).__name__}")
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)):
        raise TypeError(f"timeout must be a number of seconds, not {type(timeout).__name__}")
    if not (timeout > 0 and math.isfinite(timeout)):
        raise ValueError(f"timeout must be a finite number of seconds > 0, got {timeout!r}")
    if isinstance(memory_mb, bool) or not isinstance(memory_mb, int):
        raise TypeError(f"memory_mb must be an int, not {type(memory_mb).__name__}")
    if memory_mb < 16:
        raise ValueError(f"memory_mb must be >= 16, got {memory_mb!r}")


def _append_tail(tail: bytearray, chunk: memoryview) -> None:
    if len(chunk) >= OUTPUT_TAIL_BYTES:
        tail[:] = chunk[-OUTPUT_TAIL_BYTES:]
    else:
        tail += chunk
        if len(tail) > 4 * OUTPUT_TAIL_BYTES:
            del tail[:-OUTPUT_TAIL_BYTES]


def _run_once(
    program: bytes, timeout: float, memory_mb: int, limits: bool, cancel: _Cancel | None
) -> SandboxResult:
    z = _get_zygote()
    header = _zygote.REQUEST.pack(
        timeout,
        memory_mb * 1024 * 1024,
        FILE_SIZE_LIMIT,
        MAX_PROCESSES,
        _zygote.FLAG_LIMITS if limits else 0,
    )
    memfd = os.memfd_create("asyncpool-program", os.MFD_CLOEXEC)
    out_r = out_w = -1
    ours = theirs = None
    try:
        view = memoryview(program)
        while view:
            view = view[os.write(memfd, view) :]
        out_r, out_w = os.pipe()
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        if cancel is not None:
            cancel.attach(ours)
        try:
            z.send(header, [theirs.fileno(), out_w, memfd])
        except OSError as exc:
            _discard_zygote(z)
            raise _ZygoteGone from exc
        os.close(memfd)
        memfd = -1
        os.close(out_w)
        out_w = -1
        theirs.close()
        theirs = None
        return _collect(z, ours, out_r, timeout + _zygote.GRACE if limits else None, cancel)
    finally:
        if cancel is not None:
            cancel.attach(None)
        for fd in (memfd, out_r, out_w):
            if fd >= 0:
                os.close(fd)
        for sock in (ours, theirs):
            if sock is not None:
                sock.close()


def _collect(
    z: _Zygote, sock: socket.socket, out_r: int, patience: float | None, cancel: _Cancel | None
) -> SandboxResult:
    """Read the output (keeping its tail) until the server's verdict arrives."""
    os.set_blocking(out_r, False)
    poller = select.poll()
    poller.register(out_r, select.POLLIN)
    poller.register(sock.fileno(), select.POLLIN)
    buf = bytearray(_READ_CHUNK)
    mv = memoryview(buf)
    tail = bytearray()
    started = False
    give_up = None if patience is None else time.monotonic() + patience
    out_open = True
    while True:
        wait_ms = -1 if give_up is None else max(0, math.ceil((give_up - time.monotonic()) * 1e3))
        events = poller.poll(wait_ms)
        if not events:
            # The server stopped answering: abandon the run (closing our socket kills it) and
            # replace the server.
            _discard_zygote(z)
            return SandboxResult("timeout", None, _decode(tail), patience or 0.0)
        for fd, _ in events:
            if fd == out_r and out_open:
                out_open = _read_some(out_r, mv, tail)
                if not out_open:
                    poller.unregister(out_r)
        if any(fd == sock.fileno() for fd, _ in events):
            try:
                msg = sock.recv(8192)
            except OSError:
                msg = b""
            if msg[:1] == b"S":
                started = True
                continue
            if msg[:1] == b"E":
                raise RuntimeError(msg[1:].decode("utf-8", "replace"))
            if msg[:1] == b"R":
                code, returncode, rc_none, duration = _zygote.RESULT.unpack(msg[1:])
                if out_open:  # what is still in the pipe; bounded: every writer is dead
                    for _ in range(64):
                        if not _read_some(out_r, mv, tail):
                            break
                return SandboxResult(
                    _STATUSES[code], None if rc_none else returncode, _decode(tail), duration
                )
            # End of file: the server died (or the run was cancelled).
            if cancel is not None and cancel.cancelled:
                return SandboxResult("crashed", None, _decode(tail), 0.0)
            _discard_zygote(z)
            if not started:
                raise _ZygoteGone
            return SandboxResult("crashed", None, _decode(tail), 0.0)


def _read_some(fd: int, mv: memoryview, tail: bytearray) -> bool:
    """Read what is available into ``tail``; ``False`` at end of file."""
    try:
        n = os.readv(fd, [mv])
    except BlockingIOError:
        return True
    except InterruptedError:  # pragma: no cover - PEP 475 retries already
        return True
    except OSError:  # pragma: no cover - EIO and the like: treat as closed
        return False
    if n == 0:
        return False
    _append_tail(tail, mv[:n])
    return True


def _decode(tail: bytearray) -> str:
    return bytes(tail[-OUTPUT_TAIL_BYTES:]).decode("utf-8", "replace")


def _run(
    program: str, timeout: float, memory_mb: int, limits: bool, cancel: _Cancel | None = None
) -> SandboxResult:
    data = program.encode("utf-8", "surrogatepass")
    attempts = 3
    while True:
        attempts -= 1
        try:
            return _run_once(data, float(timeout), memory_mb, limits, cancel)
        except _ZygoteGone as exc:
            if attempts == 0 or (cancel is not None and cancel.cancelled):
                msg = "the sandbox fork server died before it ran the program"
                raise RuntimeError(msg) from exc


def run_python(program: str, *, timeout: float = 10.0, memory_mb: int = 512) -> SandboxResult:
    """Run ``program`` in the sandbox (see the module docstring) and return its verdict.

    Blocks the calling thread (only) for at most about ``timeout`` seconds plus the cleanup.
    Thread-safe. Raises ``TypeError``/``ValueError`` on bad arguments before anything runs, and
    ``RuntimeError`` only when the sandbox itself cannot work (e.g. cannot start its server).
    """
    _validate(program, timeout, memory_mb)
    return _run(program, timeout, memory_mb, limits=True)


async def run_python_async(
    program: str,
    *,
    timeout: float = 10.0,
    memory_mb: int = 512,
) -> SandboxResult:
    """``run_python`` in a worker thread (``anyio.to_thread.run_sync``), for event loops.

    At most anyio's default thread limiter (40) runs at once per event loop. Cancelling the
    awaiting task kills the program's process group at once and re-raises the cancellation.
    """
    _validate(program, timeout, memory_mb)
    cancel = _Cancel()
    job = functools.partial(_run, program, timeout, memory_mb, True, cancel)
    try:
        return await anyio.to_thread.run_sync(job, abandon_on_cancel=True)
    except BaseException:
        cancel.cancel()
        raise


def run_python_bare(program: str) -> SandboxResult:
    """The barest isolation, the baseline of the benchmark's ``limit`` method.

    Forks the same prepared interpreter and runs ``program`` in the child with *no* limits, no
    timeout, no uid change, no scratch directory, no new session: only the fork, the exit
    status and the captured output. Never use it on untrusted code.
    """
    if not isinstance(program, str):
        raise TypeError(f"program must be a str, not {type(program).__name__}")
    return _run(program, math.inf, 1 << 20, limits=False)
