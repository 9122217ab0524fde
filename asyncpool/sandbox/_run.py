"""How :mod:`asyncpool.sandbox` runs one program: the client of the fork server.

Owns: this process's fork server (:mod:`asyncpool.sandbox._zygote`: started lazily, one per calling
process, replaced after a fork or when it dies, closed at exit), the description of one run
(:class:`Spec`) and its raw outcome (:class:`Raw`), sending a run to the server and collecting
its output, verdict and files (``_run_once``), and the retries (:func:`run`: on a fresh server
when the old one died before starting the program, again when the machine starved the run),
with :class:`Cancel` to abandon a run from another thread. The limits it applies are public
in :mod:`asyncpool.sandbox` (which re-exports them from here).

Must not: check arguments or shape results for users (that is :mod:`asyncpool.sandbox`), nor
import Ray: it runs inside Ray workers but is as happy in a plain process.
"""

from __future__ import annotations

import array
import atexit
import contextlib
import ctypes
import fcntl
import functools
import math
import os
import re
import select
import socket
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from asyncpool.errors import SandboxError
from asyncpool.sandbox import _zygote, _zygote_wire

SandboxStatus = Literal["passed", "failed", "timeout", "memory", "crashed"]

#: How many bytes of combined stdout/stderr ``SandboxResult.stdout_tail`` keeps.
OUTPUT_TAIL_BYTES = 4096
#: ``RLIMIT_FSIZE``: the largest file the program may write (its stdout included; twice the
#: first bytes kept of it when that is more: ``run_stdio``'s output limit is the one met first).
FILE_SIZE_LIMIT = 16 * 1024 * 1024
#: ``RLIMIT_NPROC``: processes plus threads the program may have at once, itself included
#: (more where the run's memory cgroup holds it: ``_zygote_wire.HELD_PROCESSES``).
MAX_PROCESSES = 16
#: How many times a run the machine starved is tried before ``SandboxError``.
STARVED_ATTEMPTS = 2

_STATUSES: tuple[SandboxStatus, ...] = ("passed", "failed", "timeout", "memory", "crashed")
_READ_CHUNK = 1 << 16
_ZYGOTE_PATH = _zygote.__file__


class _ZygoteGone(Exception):
    """The fork server died before it started the program: safe to retry on a new one."""


class _Starved(Exception):
    """The machine starved the run past its wall-clock cap: no verdict, run it again."""


class Cancel:
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


def _toolchain_dirs() -> list[str]:
    """The compilers' directories the jail must show besides its system directories
    (:func:`asyncpool.sandbox._languages.jail_dirs`; imported here, lazily, because that module
    imports this one)."""
    from asyncpool.sandbox import _languages

    return _languages.jail_dirs()


def _site_dirs() -> list[str]:
    """This environment's site-packages (a virtualenv's own, or the interpreter's)."""
    import site

    dirs = (
        [*site.getsitepackages(), site.getusersitepackages()]
        if site.ENABLE_USER_SITE
        else [*site.getsitepackages()]
    )
    return [d for d in dirs if os.path.isdir(d)]


class _Zygote:
    """One running fork server and the control socket to it."""

    def __init__(self, script: str = _ZYGOTE_PATH) -> None:
        """Start the fork server ``script`` (this package's; ``benchmarks/bench_sandbox.py
        --against`` starts another checkout's, which must speak this one's wire)."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        argv = [sys.executable, "-S", "-s", "-B", script, str(theirs.fileno())]
        # The server runs without ``site`` (-S), so in a virtualenv its own sys.prefix is the
        # base interpreter's: this process's environment (prefix and site-packages) is passed
        # on, so that programs import what the caller can and can run ``sys.executable``.
        argv += [f"--prefix={sys.prefix}", *(f"--site={p}" for p in _site_dirs())]
        # Toolchains installed outside the system directories (rustup's, under a 0700 home)
        # are bound read-only into the jail as the prefixes are.
        argv += [f"--prefix={d}" for d in _toolchain_dirs()]
        if os.environ.get("ASYNCPOOL_SANDBOX_NAMESPACES") == "0":
            argv.append("--no-namespaces")  # see "When the caller is not root"
        lanes = os.environ.get("ASYNCPOOL_SANDBOX_CPU_LANES")
        if lanes:  # see _cpu_lanes: another lock file (the server runs in /), or "0" for none
            argv.append(f"--cpu-lanes={lanes if lanes == '0' else os.path.abspath(lanes)}")
        try:
            self.proc = subprocess.Popen(
                argv,
                pass_fds=(theirs.fileno(),),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                env=dict(_zygote_wire.ENV),
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
        self.isolated: bool | None = None  # learnt from the first run

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


def zygote_pid() -> int | None:
    """The current fork server's pid (for tests and diagnostics), ``None`` if none runs."""
    with _lock:
        z = _current
        return z.proc.pid if z is not None and z.alive else None


def isolated() -> bool | None:
    """Whether the current fork server runs in its own namespaces (``None``: not known yet)."""
    with _lock:
        return None if _current is None else _current.isolated


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


# -- one run -------------------------------------------------------------------------------------


class _Sink:
    """Keeps the first ``head`` bytes, or the last ``tail`` bytes, of what a pipe carries;
    reads and discards the rest, never buffering more than four times its limit."""

    def __init__(self, *, head: int = 0, tail: int = 0) -> None:
        self.head = head
        self.tail = tail
        self.data = bytearray()
        self.truncated = False

    def add(self, chunk: memoryview) -> None:
        if self.head:
            room = self.head - len(self.data)
            if room > 0:
                self.data += chunk[:room]
            if len(chunk) > max(room, 0):
                self.truncated = True
            return
        if len(chunk) >= self.tail:
            self.data[:] = chunk[-self.tail :]
            self.truncated = True
        else:
            self.data += chunk
            if len(self.data) > 4 * self.tail:
                del self.data[: -self.tail]
                self.truncated = True

    def value(self) -> bytes:
        return bytes(self.data if self.head else self.data[-self.tail :])


@dataclass
class Spec:
    """Everything one run sends to the fork server."""

    program: bytes
    timeout: float
    memory_mb: int
    limits: bool = True
    merged_output: bool = True  # stdout and stderr into one pipe (run_python)
    stdout_head: int = 0  # keep the first bytes of stdout (0: keep the tail)
    stdin: bytes | None = None
    files: Mapping[str, bytes] | None = None
    fetch: Sequence[str] = ()
    tests: bytes | None = None  # entry point, NUL, tests source (a judged run)
    nproc: int = MAX_PROCESSES  # RLIMIT_NPROC (more for compilers and threaded runtimes)
    # The run's resident memory, all its processes together (the memory cgroup's limit, where
    # the server has one); None: memory_mb. Below memory_mb for runtimes whose RLIMIT_AS must
    # leave room for the address space they reserve (see _languages).
    resident_mb: int | None = None
    # A trusted toolchain (a compile), whose processes wait for one another in turn: their
    # waits for a CPU are not its own time (_zygote_wire.FLAG_TOOLCHAIN). Never a program's.
    toolchain: bool = False
    # Bytes of the stdout file (stdout_head) allocated by the caller before the run: output up
    # to there is not the run's memory (see _reserve_output).
    output_reserve: int = 0


@dataclass
class Raw:
    """What one run produced, before a public result is made of it."""

    status: SandboxStatus
    returncode: int | None
    duration: float
    wall: float
    judge: int
    flags: int
    stdout: bytes
    stderr: bytes
    verdict: bytes = b""
    files: dict[str, bytes] = field(default_factory=dict)
    cpu: float | None = None  # the program's CPU time (s), when the server reported it
    peak_memory: int | None = None  # its peak resident memory (bytes), likewise


#: The capacity asked of an output pipe (``F_SETPIPE_SZ``), 4x Linux's default. Not more: a
#: user whose pipes hold more than ``pipe-user-pages-soft`` (64 MiB by default) in all gets
#: one-page pipes from then on, so 1 MiB pipes would starve a server of 32 runs at once.
_PIPE_BYTES = 1 << 18


def _pipe() -> tuple[int, int]:
    """An output pipe as large as the kernel grants (64 KiB if it grants nothing more).

    A program whose output fills a pipe waits in ``write`` until this process reads, and a
    program waiting is not waiting for a CPU: that wait counts as its own time (see "Time" in
    :mod:`asyncpool.sandbox`). A larger pipe makes the wait rarer when this process is slow to
    read (a loaded machine, a busy interpreter); outputs that decide verdicts do not use pipes
    at all (:func:`_output_file`).
    """
    r, w = os.pipe()
    with contextlib.suppress(OSError):  # over the user's pipe-user-pages-soft, or an old kernel
        fcntl.fcntl(w, fcntl.F_SETPIPE_SZ, _PIPE_BYTES)
    return r, w


def _output_file(name: str) -> int:
    """A memory file for a program's stdout when only its first bytes are kept (``run_stdio``,
    ``run_program``), and for its stderr there (its last bytes kept): the program never waits
    on this process to read its output.

    Through a pipe, a correct program with 1.3 MB of output was judged ``time_limit`` (own time
    1.0 s, CPU time 0.025 s) whenever the reader was slow, because every full pipe made it wait
    and waiting counts as own time: a verdict that depended on the machine's load. Writes to a
    memory file never wait. Its pages count toward the run's memory cgroup beyond what the
    caller reserved (:func:`_reserve_output`: ``run_stdio``'s expected output; nothing for
    stderr, whose debug lines are the run's memory, at most the file limit), and
    ``RLIMIT_FSIZE`` (:data:`FILE_SIZE_LIMIT`) bounds it; the file is read once every process
    of the run is dead. No seal can be added (``MFD_ALLOW_SEALING`` is not given), so the
    program cannot make it unwritable or unreadable for this process.
    """
    return os.memfd_create(name, os.MFD_CLOEXEC)


_FALLOC_FL_KEEP_SIZE = 1


@functools.cache
def _fallocate() -> Any:
    """libc's ``fallocate``, or None where there is none (looked up once)."""
    try:
        call = ctypes.CDLL(None, use_errno=True).fallocate
    except (OSError, AttributeError):
        return None
    call.argtypes = (ctypes.c_int, ctypes.c_int, ctypes.c_long, ctypes.c_long)
    call.restype = ctypes.c_int
    return call


def _reserve_output(fd: int, size: int) -> None:
    """Allocate the first ``size`` bytes of a stdout memory file here, in the caller, beyond its
    end (``fallocate(FALLOC_FL_KEEP_SIZE)``: its size stays 0), so that output up to there is
    not counted in the run's memory cgroup (a page is charged to the cgroup of the process that
    allocates it).

    Why: ``run_stdio``'s stdout file is memory; its pages, allocated by the program's writes,
    counted toward the run's ``memory_mb``. A correct C++ program holding a 244 MiB array and
    printing 10 MB was "memory" at ``memory_mb=256`` (its resident size 251 MiB; with 1 MB of
    output it passed), where judges do not count output as memory. The reserve is the case's
    expected output and a little more: a correct answer's output is never the run's memory.
    Best effort: without ``fallocate`` (an old kernel, no libc) nothing is reserved."""
    call = _fallocate()
    if call is not None:
        call(fd, _FALLOC_FL_KEEP_SIZE, 0, size)  # an error leaves the file as it was


def _read_output_file(fd: int, head: int) -> bytes:
    """The first ``head`` bytes the program wrote (all of them if fewer)."""
    size = os.fstat(fd).st_size
    return os.pread(fd, min(size, head), 0) if size else b""


def _read_output_tail(fd: int, size: int, tail: int) -> bytes:
    """The last ``tail`` bytes of the ``size`` the program wrote (all of them if fewer)."""
    start = max(0, size - tail)
    return os.pread(fd, size - start, start) if size else b""


def _memfd(name: str, data: bytes, seal: bool = False) -> int:
    fd = os.memfd_create(name, os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.lseek(fd, 0, os.SEEK_SET)
        if seal:  # the program cannot write into it (nothing it writes reaches anyone)
            fcntl.fcntl(
                fd,
                fcntl.F_ADD_SEALS,
                fcntl.F_SEAL_WRITE | fcntl.F_SEAL_GROW | fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_SEAL,
            )
    except BaseException:
        os.close(fd)
        raise
    return fd


def _pack_files(files: Mapping[str, bytes]) -> bytes:
    out = []
    for name, data in files.items():
        encoded = name.encode("utf-8", "surrogateescape")
        out += [struct.pack("=I", len(encoded)), encoded, struct.pack("=Q", len(data)), data]
    return b"".join(out)


def _unpack_files(data: bytes) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    pos = 0
    while pos + 4 <= len(data):
        (n,) = struct.unpack_from("=I", data, pos)
        name = data[pos + 4 : pos + 4 + n].decode("utf-8", "surrogateescape")
        pos += 4 + n
        (size,) = struct.unpack_from("=Q", data, pos)
        pos += 8
        files[name] = data[pos : pos + size]
        pos += size
    return files


def _read_all(fd: int) -> bytes:
    os.lseek(fd, 0, os.SEEK_SET)
    chunks = []
    while chunk := os.read(fd, 1 << 20):
        chunks.append(chunk)
    return b"".join(chunks)


#: Tests that name any of these may hand the solution a file, or read one it wrote: their
#: judge shares the run's working directory (``FLAG_SHARED_FS``: a judge forked for the check,
#: under the run's uid, instead of a long-lived one). Read from the tests' text alone, so the
#: route (and the verdict) never depends on the machine or its load; a false match only costs
#: that fork: HumanEval checks routed so took 8.4-9.2 ms of CPU against 5.4-5.6 ms (3 rounds
#: of 300, alternating; one HumanEval test matches: 141's, which names files). The libraries'
#: own file I/O (``np.save``, ``pd.read_json``, ``df.to_csv``, PIL's ``Image``) and a file name
#: in the text count too: a check of ``np.save("data.npy", a)`` in the tests and ``np.load``
#: in the solution failed ("read-only file system"). ``matplotlib`` too: imported by the tests
#: (BigCodeBench's ``plt.Axes`` checks), it needs a writable directory for its configuration,
#: which a long-lived judge has not (its import raised ``OSError``).
_FILE_USE = re.compile(
    rb"\b(?:tmp_?path\w*|tmpdir\w*|tempfile|open|Path|pathlib|os\.(?:path|remove|unlink|"
    rb"rename|replace|listdir|scandir|walk|makedirs|mkdir|rmdir|stat|getcwd|chdir)|shutil|"
    rb"glob|read_text|write_text|read_bytes|write_bytes|csv|json\.dump|json\.load|pickle|"
    rb"sqlite3|zipfile|tarfile|gzip|bz2|lzma|configparser|fileinput|mmap|matplotlib|"
    # libraries' own file I/O: numpy's, pandas' readers and writers, images, other formats
    rb"np\.(?:save|load)\w*|numpy\.(?:save|load)\w*|savetxt|loadtxt|genfromtxt|fromfile|"
    rb"tofile|memmap|read_\w+|to_(?:csv|json|excel|parquet|pickle|feather|hdf|html|xml|sql|"
    rb"stata|latex|markdown)|savefig|imread|imwrite|imsave|Image|h5py|yaml|ElementTree|"
    rb"openpyxl|xlsxwriter|docx|wave|soundfile|cv2|"
    # os's and io's, imported by name (``from os import listdir``)
    rb"listdir|scandir|isfile|isdir|exists|getsize|access|FileIO)\b"
    # a file name in the text (``"data.npy"``, ``'out.png'``)
    rb"|\w\.(?:npy|npz|png|jpe?g|gif|bmp|tiff?|txt|csv|tsv|json|jsonl|xlsx?|parquet|pkl|"
    rb"pickle|h5|hdf5|ya?ml|xml|html?|log|zip|gz|tar|db|sqlite3?|wav|mp3|pdf|docx?|md|ini|"
    rb"cfg|toml|dat|bin)\b"
)


def _wall_cap(timeout: float) -> float:
    """The starvation cap of a run (a seam for the tests, which cannot reach the server)."""
    return _zygote_wire.hard_wall_cap(timeout)


def _run_once(spec: Spec, cancel: Cancel | None) -> Raw:
    z = _get_zygote()
    flags = _zygote_wire.FLAG_LIMITS if spec.limits else 0
    if spec.toolchain:
        flags |= _zygote_wire.FLAG_TOOLCHAIN
    owned: list[int] = []  # every fd this call opened, closed at the end
    ours = theirs = None

    def new_fd(fd: int) -> int:
        owned.append(fd)
        return fd

    try:
        out_file = -1
        if spec.stdout_head:
            out_file = new_fd(_output_file("asyncpool-stdout"))
            if spec.output_reserve:
                _reserve_output(out_file, spec.output_reserve)
            out_r, out_w = -1, out_file
        else:
            out_r, out_w = (new_fd(fd) for fd in _pipe())
        err_file = -1
        if spec.merged_output:
            err_r, err_w = -1, out_w
        elif spec.stdout_head and not spec.toolchain:
            # A memory file too (see _output_file), of which the tail is kept: a program's
            # debug lines on stderr made it wait for this process to read them, and that
            # wait was its own time. 3.2 MB of them while this process's threads held the GIL
            # (50 ms slices): 0.04-0.07 s of CPU judged ``time_limit`` at 1 s, 2 runs of 2.
            # Not a compiler's (its warnings are no run's answer, and past RLIMIT_FSIZE they
            # would end the compile).
            err_file = new_fd(_output_file("asyncpool-stderr"))
            err_r, err_w = -1, err_file
        else:
            err_r, err_w = (new_fd(fd) for fd in _pipe())
        fds = [out_w, err_w, new_fd(_memfd("asyncpool-program", spec.program))]
        if spec.stdin is not None:
            flags |= _zygote_wire.FLAG_STDIN
            fds.append(new_fd(_memfd("asyncpool-stdin", spec.stdin, seal=True)))
        if spec.files:
            flags |= _zygote_wire.FLAG_FILES_IN
            fds.append(new_fd(_memfd("asyncpool-files", _pack_files(spec.files))))
        files_out = -1
        if spec.fetch:
            flags |= _zygote_wire.FLAG_FILES_OUT
            listing = "\0".join(spec.fetch).encode("utf-8", "surrogateescape")
            files_out = new_fd(_memfd("asyncpool-fetch", listing))
            fds.append(files_out)
        verdict_r = -1
        key = b""
        if spec.tests is not None:
            flags |= _zygote_wire.FLAG_JUDGE
            if _FILE_USE.search(spec.tests):
                flags |= _zygote_wire.FLAG_SHARED_FS
            verdict_r, verdict_w = (new_fd(fd) for fd in os.pipe())
            key = os.urandom(_zygote_wire.VERDICT_KEY_BYTES)
            fds += [new_fd(_memfd("asyncpool-tests", key + spec.tests)), verdict_w]
        wall_cap = _wall_cap(spec.timeout)
        file_limit = max(FILE_SIZE_LIMIT, 2 * spec.stdout_head)
        header = _zygote_wire.REQUEST.pack(
            spec.timeout,
            spec.memory_mb * 1024 * 1024,
            # the output limit a caller keeps to (run_stdio's, twice the expected output and
            # more), not FILE_SIZE_LIMIT, is the one an answer meets first
            file_limit,
            spec.nproc,
            flags,
            wall_cap,
            (spec.memory_mb if spec.resident_mb is None else spec.resident_mb) * 1024 * 1024,
        )
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        if cancel is not None:
            cancel.attach(ours)
        try:
            z.send(header, [theirs.fileno(), *fds])
        except OSError as exc:
            _discard_zygote(z)
            raise _ZygoteGone from exc
        # Only the server (and its children) may hold the write ends now.
        for fd in set(fds) - {files_out, out_file, err_file}:
            os.close(fd)
            owned.remove(fd)
        theirs.close()
        theirs = None
        out = _Sink(head=spec.stdout_head) if spec.stdout_head else _Sink(tail=OUTPUT_TAIL_BYTES)
        err = _Sink(tail=OUTPUT_TAIL_BYTES)
        patience = wall_cap + _zygote_wire.GRACE if spec.limits else None
        raw = _collect(z, ours, (out_r, out), (err_r, err), patience, cancel)
        if out_file >= 0:
            raw.stdout = _read_output_file(out_file, spec.stdout_head)
        if err_file >= 0:
            size = os.fstat(err_file).st_size
            raw.stderr = _read_output_tail(err_file, size, OUTPUT_TAIL_BYTES)
            if size >= file_limit:  # say why its writes failed there
                note = f"[sandbox: stderr reached the {file_limit >> 20} MiB file size limit]\n"
                raw.stderr = note.encode() + raw.stderr[len(note) :]
        if verdict_r >= 0:
            raw.verdict = _keyed_verdict(_read_pipe(verdict_r), key)
        if files_out >= 0:
            raw.files = _unpack_files(_read_all(files_out))
        return raw
    finally:
        if cancel is not None:
            cancel.attach(None)
        for fd in owned:
            with contextlib.suppress(OSError):
                os.close(fd)
        for sock in (ours, theirs):
            if sock is not None:
                sock.close()


def _keyed_verdict(data: bytes, key: bytes) -> bytes:
    """The judge's verdict in what the verdict pipe held (``data``): what follows ``key`` (see
    ``_zygote_wire.VERDICT_KEY_BYTES``), a failure naming the forgery when the pipe does not
    start with it and is not empty (bytes the solution wrote there, through a callable of the
    tests' run in the judge), and nothing (no verdict) when it is empty."""
    if data[: len(key)] == key:
        return data[len(key) :]
    if not data:
        return b""
    return b"Fthe verdict pipe held bytes the judge did not write: no verdict"


def _read_pipe(fd: int) -> bytes:
    """What is in a pipe whose writers are all gone (or the first 64 KiB of it)."""
    os.set_blocking(fd, False)
    data = b""
    with contextlib.suppress(BlockingIOError):
        while len(data) < 1 << 16:
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                break
            data += chunk
    return data


def _collect(
    z: _Zygote,
    sock: socket.socket,
    stdout: tuple[int, _Sink],
    stderr: tuple[int, _Sink],
    patience: float | None,
    cancel: Cancel | None,
) -> Raw:
    """Read the output pipes (each ``(read end, sink)``; ``-1``: not a pipe, its sink stays
    empty) until the server's verdict arrives; the result's stdout and stderr are the sinks'."""
    (_, out), (_, err) = stdout, stderr
    sinks = {fd: sink for fd, sink in (stdout, stderr) if fd >= 0}
    poller = select.poll()
    for fd in sinks:
        os.set_blocking(fd, False)
        poller.register(fd, select.POLLIN)
    poller.register(sock.fileno(), select.POLLIN)
    buf = bytearray(_READ_CHUNK)
    mv = memoryview(buf)
    open_fds = set(sinks)
    started = False
    give_up = None if patience is None else time.monotonic() + patience

    def raw(status: SandboxStatus, rc: int | None = None, duration: float = 0.0) -> Raw:
        return Raw(status, rc, duration, duration, _zygote_wire.RESULT_JUDGE_NONE, 0,
                    out.value(), err.value())  # fmt: skip

    while True:
        wait_ms = -1 if give_up is None else max(0, math.ceil((give_up - time.monotonic()) * 1e3))
        events = poller.poll(wait_ms)
        if not events:
            # The server stopped answering: abandon the run (closing our socket kills it) and
            # replace the server. Not a verdict on the program.
            _discard_zygote(z)
            raise SandboxError(f"the sandbox fork server did not answer within {patience} s")
        for fd, _ in events:
            if fd in open_fds and not _read_some(fd, mv, sinks[fd]):
                open_fds.discard(fd)
                poller.unregister(fd)
        if not any(fd == sock.fileno() for fd, _ in events):
            continue
        try:
            msg = sock.recv(8192)
        except OSError:
            msg = b""
        if msg[:1] == b"S":
            started = True
            _, isolated = _zygote_wire.STARTED.unpack(msg[1:])
            z.isolated = bool(isolated)
            continue
        if msg[:1] == b"E":
            raise SandboxError(msg[1:].decode("utf-8", "replace"))
        if msg[:1] == b"R":
            end = 1 + _zygote_wire.RESULT.size
            code, returncode, rc_none, own, wall, judge, flags = _zygote_wire.RESULT.unpack(
                msg[1:end]
            )
            usage = msg[end:]
            cpu, peak = (
                _zygote_wire.USAGE.unpack(usage)
                if len(usage) == _zygote_wire.USAGE.size
                else (None, None)
            )
            for fd in list(open_fds):  # what is still in the pipes; bounded: writers are dead
                for _ in range(64):
                    if not _read_some(fd, mv, sinks[fd]):
                        break
            return Raw(
                _STATUSES[code], None if rc_none else returncode, own, wall, judge, flags,
                out.value(), err.value(), cpu=cpu, peak_memory=peak,
            )  # fmt: skip
        # End of file: the server died (or the run was cancelled).
        if cancel is not None and cancel.cancelled:
            return raw("crashed")
        _discard_zygote(z)
        if not started:
            raise _ZygoteGone
        return raw("crashed")


def _read_some(fd: int, mv: memoryview, sink: _Sink) -> bool:
    """Read what is available into ``sink``; ``False`` at end of file."""
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
    sink.add(mv[:n])
    return True


def run(spec: Spec, cancel: Cancel | None = None) -> Raw:
    """One run, retried on a fresh fork server when the server died before starting it, and
    run again when the machine starved it (:data:`STARVED_ATTEMPTS` in all)."""
    starved = 0
    crashed_servers = 0
    while True:
        try:
            raw = _run_once(spec, cancel)
        except _ZygoteGone as exc:
            crashed_servers += 1
            if crashed_servers == 3 or (cancel is not None and cancel.cancelled):
                msg = "the sandbox fork server died before it ran the program"
                raise SandboxError(msg) from exc
            continue
        if not raw.flags & _zygote_wire.RESULT_STARVED:
            return raw
        starved += 1
        if starved >= STARVED_ATTEMPTS:
            raise SandboxError(
                f"the machine starved the run: {raw.duration:.2f} s of its own time in "
                f"{raw.wall:.2f} s of wall-clock time, {starved} times; no verdict"
            )
