"""What a forked child of the fork server does: isolate and limit itself, then run.

Owns: the per-run setup of a program's child (:func:`run_child`: own session, its pipes, every
other descriptor closed, private ``/tmp``, resource limits, the uid drop, seccomp, then the
program as ``__main__`` with CPython's exit semantics), and the steps a judge's child shares
with it (:func:`_limit`, leaving the server's signal plumbing), as the docstring of
:mod:`asyncpool.sandbox` describes them; the judges themselves are
:mod:`asyncpool.sandbox._zygote_judges`.

Must not: import ``asyncpool`` or anything outside the standard library (it runs in the fork
server's clean interpreter, loaded as a sibling of :mod:`asyncpool.sandbox._zygote`), nor hold any
state of the server: what it needs from the server comes in the ``server`` argument, and the
helper modules (:mod:`asyncpool.sandbox._judge`, :mod:`asyncpool.sandbox._ns`,
:mod:`asyncpool.sandbox._seccomp`) are set on :data:`JUDGE`, :data:`NS` and :data:`SECCOMP` by
the server's ``main`` before it forks anything.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import io
import math
import os
import re
import resource
import signal
import stat
import struct
import sys
import tempfile
import types
from typing import TYPE_CHECKING, Any, NoReturn, Protocol, TextIO

from ._cgroup import join as join_cgroup
from ._zygote_wire import (
    ADDRESS_HEADROOM,
    HELD_PROCESSES,
    JUDGE_ADDRESS_FLOOR,
    MEMORY_EXIT,
    STACK_LIMIT,
    Fds,
    Request,
)

if TYPE_CHECKING:
    import socket
    from collections.abc import Callable


class ServerView(Protocol):
    """What a child reads of the fork server that forked it (the server's ``_Server``): it
    takes these, and nothing else, from the server's state it inherited."""

    pid: int
    ctl: socket.socket
    devnull: int
    isolated: bool
    pin_cpu: int | None
    # The run's cgroups (descriptor, file to write 0 to), joined before anything of the program
    cgroup_joins: tuple[tuple[int, str], ...]
    netns_fd: int  # the run's network namespace from the server's pool (-1: a new one)
    # Whether the run's cgroup holds its memory (all its processes together): see _limit
    memory_held: bool
    prctl: Callable[[int, int, int, int, int], int]
    # Text streams over fds 1 and 2 as a child makes them over pipes (premade_streams), or None
    streams: tuple[TextIO, TextIO] | None


#: The sandbox's helper modules, set by the server's ``main`` (the package is never imported
#: there: the judge is a package of its stand-in package, the others are loaded by file path);
#: placeholders until then.
JUDGE = types.ModuleType("_asyncpool_zygote._judge")
NS = types.ModuleType("_asyncpool_ns")
SECCOMP = types.ModuleType("_asyncpool_seccomp")
#: ``O_PATH`` descriptors of import directories every child keeps (see
#: :func:`anchor_import_path`).
ANCHOR_FDS: list[int] = []
_PR_SET_PDEATHSIG = 1
_PR_SET_DUMPABLE = 4


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


#: The file classes whose objects a program's ``__main__`` may hold open at exit (see
#: :func:`_run_program`): ``open()``'s and ``os.fdopen``'s in each mode.
_FILE_TYPES = frozenset({io.TextIOWrapper, io.BufferedWriter, io.BufferedRandom, io.FileIO})
#: A program that opens its stdout or stderr as a file of its own (``open(1, "w")``,
#: ``os.fdopen(sys.stdout.fileno(), "wb")``, ``io.FileIO(1, "w")``): only then does its exit
#: look for every open file, wherever the program holds it (see :func:`_opens_output`).
_OPENS_OUTPUT = re.compile(r"(?:open|FileIO)\s*\(\s*(?:[12]\s*[,)]|[\w.]*fileno\s*\(\s*\))")


def _opens_output(source: str) -> bool:
    """Whether ``source`` opens fd 1 or 2 as a file (:data:`_OPENS_OUTPUT`) outside a comment
    (no ``#`` before it on its line). Most programs name neither ``open`` nor ``FileIO``: a
    substring test, ~1 µs, where the search costs ~6 µs per KiB of text (a HumanEval program:
    8 µs; with the comment test in the pattern, 24 µs)."""
    if "open" not in source and "FileIO" not in source:
        return False
    for match in _OPENS_OUTPUT.finditer(source):
        line = source.rfind("\n", 0, match.start()) + 1
        if "#" not in source[line : match.start()]:
            return True
    return False


def _run_program(
    source: str, serve_fd: int | None = None, cpu: int | None = None,
    main_file: str | None = None,
) -> NoReturn:  # fmt: skip
    """Run ``source`` as ``__main__`` with CPython's exit semantics, then ``_exit``.

    With ``serve_fd`` (a judged run), the module is named ``solution``, not ``__main__`` (as
    in-process harnesses exec it: an ``if __name__ == "__main__":`` block reading stdin does
    not run under function-style tests), and a program that ran to its end without exiting
    goes on to serve its top-level callables to the judge on that socket
    (:func:`_judge.serve_solution`) instead of exiting. With ``main_file`` (the program
    written in its working directory, :func:`_main_file`), ``__file__``, ``sys.argv[0]`` and
    ``sys.path[0]`` are as ``python main.py`` there sets them.
    """
    import builtins

    main = types.ModuleType("__main__" if serve_fd is None else "solution")
    main.__dict__["__builtins__"] = builtins
    if main_file is not None:
        main.__dict__["__file__"] = main_file
        sys.argv[:] = [main_file]
        sys.path.insert(0, os.path.dirname(main_file))
    sys.modules["__main__"] = sys.modules[main.__name__] = main
    rc = 0
    opens_output = False
    try:
        # dont_inherit: not this module's ``from __future__ import annotations`` (every
        # program's annotations were strings, where ``python prog.py`` evaluates them).
        code = compile(source, "<program>", "exec", dont_inherit=True)
        opens_output = serve_fd is None and _opens_output(source)
        del source
        if serve_fd is not None:
            JUDGE.judged_stdin()
            JUDGE.judged_namespace(main.__dict__, code)
        exec(code, main.__dict__)
        if serve_fd is not None:
            with contextlib.suppress(BaseException):
                sys.stdout.flush()
                sys.stderr.flush()
            JUDGE.serve_solution(serve_fd, main.__dict__, cpu)
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
        # As CPython's exit: a stdout the program closed or set to None is not flushed (no
        # error), and a flush that fails is status 120.
        if not _closed(sys.stdout):
            sys.stdout.flush()
    except BaseException:
        rc = rc or 120
    # What CPython's finalisation flushes too: the original streams when the program put
    # others in their place (a StringIO), stderr, and then, as it clears ``__main__``, the
    # files the program left open there (``out = open(1, "w")`` written and never closed).
    # Only the module's own names, by exact type: a few µs, where finding every open file
    # (``gc.get_objects()``) cost 0.7 ms for a trivial program and 78 ms for 200k objects.
    # That search is made only for a program that opened its own output (``_OPENS_OUTPUT``),
    # whose file may be held anywhere: in a list, a class, a closure, a bound ``write``
    # (``w = open(1, "w").write``), all of them written out by CPython's exit and lost here.
    for stream in (sys.__stdout__, sys.stderr, sys.__stderr__):
        with contextlib.suppress(BaseException):
            stream.flush()  # type: ignore[union-attr]
    for value in _open_files(main, everywhere=opens_output):
        if type(value) in _FILE_TYPES:
            with contextlib.suppress(BaseException):
                value.flush()
    os._exit(rc)


#: The most memory blocks a program may hold for its exit to search its objects for open files
#: (:func:`_open_files`): the search lists every object the collector tracks, 8 bytes each, at
#: most 4 MB here. A program of 2 million lists near its memory limit that named
#: ``open(sys.stdout.fileno()`` was a memory limit with no bound (17 MB more: helper 42).
_SEARCHED_BLOCKS = 500_000


def _open_files(main: types.ModuleType, everywhere: bool) -> list[Any]:
    """What ``main``'s names hold (the caller keeps the files among them), or, ``everywhere``,
    every file object of the program still alive (the server's frozen heap is not searched:
    ``gc.get_objects`` leaves out the permanent generation) while the program holds at most
    :data:`_SEARCHED_BLOCKS` blocks."""
    if everywhere and sys.getallocatedblocks() <= _SEARCHED_BLOCKS:
        import gc

        with contextlib.suppress(MemoryError):
            return [obj for obj in gc.get_objects() if type(obj) in _FILE_TYPES]
    return list(vars(main).values())


def _closed(stream: object) -> bool:
    """Whether CPython's exit would skip flushing ``stream``: ``None``, or its ``closed`` says so
    (an error reading it counts as open, as ``file_is_closed`` in CPython does)."""
    if stream is None:
        return True
    try:
        return bool(getattr(stream, "closed"))  # noqa: B009 - any error: open
    except Exception:
        return False


def count_user_tasks(uid: int) -> int:
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


def read_fd(fd: int) -> bytes:
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


def _judge_address_limit(memory: int) -> int:
    """A judge's ``RLIMIT_AS`` for a check of the run memory limit ``memory``: its address
    space now plus ``memory``, at least :data:`JUDGE_ADDRESS_FLOOR` (``/proc/self/statm``)."""
    with open("/proc/self/statm", "rb") as fh:
        size = int(fh.read().split()[0]) * resource.getpagesize()
    return size + max(memory, JUDGE_ADDRESS_FLOOR)


def _limit(server: ServerView, req: Request, uid: int | None, nproc: int | None = None) -> None:
    """Resource limits, then the uid drop (as root), then the prctl flags. ``nproc`` is given
    for a judge only and replaces the request's process limit (judges share one uid: theirs
    counts them all); a judge's address space is :func:`_judge_address_limit`'s. A run whose
    memory its cgroup holds (all its processes together; never a judge, which is not the
    run's) gets :data:`ADDRESS_HEADROOM` more address space and at least
    :data:`HELD_PROCESSES` processes: neither can then take more memory than its limit."""
    cpu = math.ceil(req.timeout) + 1
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    held = server.memory_held
    if nproc is not None:  # a judge
        memory = _judge_address_limit(req.memory)
    else:
        memory = req.memory + (ADDRESS_HEADROOM if held else 0)
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    if nproc is None:
        # The hard limit stays the server's (as a shell leaves it: unlimited, usually), so that
        # the competitive programmer's ``resource.setrlimit(RLIMIT_STACK, (RLIM_INFINITY,
        # RLIM_INFINITY))`` before a deep recursion works as under ``python prog.py``: with
        # hard = soft it was a ValueError, a runtime error of an honest program. A stack grows
        # only within ``RLIMIT_AS`` and the run's memory cgroup, whatever its limit says.
        _, hard = resource.getrlimit(resource.RLIMIT_STACK)
        stack = min(req.resident, STACK_LIMIT)
        stack = stack if hard == resource.RLIM_INFINITY else min(stack, hard)
        resource.setrlimit(resource.RLIMIT_STACK, (stack, hard))
    resource.setrlimit(resource.RLIMIT_FSIZE, (req.fsize, req.fsize))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))
    if uid is not None:
        limit = req.nproc if nproc is None else nproc
        if held:
            limit = max(limit, HELD_PROCESSES)
        resource.setrlimit(resource.RLIMIT_NPROC, (limit, limit))
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
    else:
        # Not root: the program keeps the caller's uid, whose other processes count too.
        nproc = count_user_tasks(os.getuid()) + req.nproc
        resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))
    _bind_to_server(server)


def _bind_to_server(server: ServerView) -> None:
    """After the uid change (which clears the death signal): die with the server (and exit at
    once if it is already gone). (Never gaining privileges again, ``PR_SET_NO_NEW_PRIVS``, is
    the server's, inherited by every fork: see ``_zygote._Server``.)"""
    if server.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG)")
    if os.getppid() != server.pid:
        os._exit(1)


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


def _main_file(source: str) -> str | None:
    """Write the program into its working directory, as ``main.py`` (``__program__.py`` when
    the run's files hold a ``main.py``), and return its path; None if it cannot be written.

    Why: ``python main.py`` gives a program ``__file__``, ``sys.argv[0]`` and ``sys.path[0]``
    (``os.path.dirname(__file__)`` finds the files it was given, ``import helper`` one of
    them: a NameError and a ModuleNotFoundError here before), and ``multiprocessing``'s spawn
    and forkserver start methods run that file again in their workers: a ``__file__`` that
    named no file made every worker fail and the run hang to its time limit (helper 42). A
    few µs (tmpfs), as the program's uid, within ``RLIMIT_FSIZE``."""
    data = source.encode("utf-8", "surrogatepass")
    for name in ("main.py", "__program__.py"):
        try:
            fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
        except FileExistsError:
            continue
        except OSError:
            return None
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
        except OSError:
            os.close(fd)
            with contextlib.suppress(OSError):
                os.unlink(name)
            return None
        os.close(fd)
        return os.path.join(os.getcwd(), name)
    return None


def run_child(
    server: ServerView, req: Request, fds: Fds, uid: int | None, scratch: str | None,
    serve_fd: int | None,
) -> NoReturn:  # fmt: skip
    """In the forked child: isolate and limit this process, then run the program (or, in a
    judged run, the solution, then serve it on ``serve_fd``)."""
    try:
        _leave_server(server)
        if req.limits:
            os.setsid()  # own session and process group: killed whole
            # All the run's processes die before its verdict, and share its memory limit.
            join_cgroup(server.cgroup_joins)
        os.dup2(fds.stdin if fds.stdin >= 0 else server.devnull, 0)
        os.dup2(fds.stdout, 1)
        os.dup2(fds.stderr, 2)
        source = read_fd(fds.program).decode("utf-8", "surrogatepass")
        files = read_fd(fds.files_in) if fds.files_in >= 0 else b""
        # Close every inherited fd but the reply socket (for a setup error), the judge's
        # socket and the anchors of the import path (see _anchor_import_path).
        netns = server.netns_fd if req.limits and server.isolated else -1
        keep = (fds.reply, *ANCHOR_FDS, *(() if serve_fd is None else (serve_fd,)))
        keep += () if netns < 0 else (netns,)
        _close_all_but(keep)
        if req.limits:
            assert scratch is not None
            if server.isolated:
                NS.private_tmp(f"{scratch}/tmp", f"{scratch}/shm", netns, same_path=req.shared)
                # A run that shares its files with its judge works where the judge does, by
                # the same path (see FLAG_SHARED_FS); others in their /tmp.
                workdir = f"{scratch}/tmp" if req.shared else "/tmp"
            else:
                workdir = f"{scratch}/tmp"
            _limit(server, req, uid)
            SECCOMP.install()  # last: every later call of the program goes through it
            os.chdir(workdir)
            # The environment is the server's, exactly ENV (see main): HOME and TMPDIR are
            # not set (putenv in every child costs ~40 page faults); tempfile uses workdir.
            tempfile.tempdir = workdir
        if files:
            _unpack_files(files)
            del files
        main_file = _main_file(source) if req.limits and not req.judged else None
        # Fresh text streams over fds 1 and 2, now the output pipes: the server's premade
        # ones where the fd is a pipe (see premade_streams), else made here. ``sys.__std*__``
        # are the same objects, as in a fresh interpreter: the server's own (over the same
        # fds) were never flushed at exit, and the competitive programmer's atexit trick
        # (print into a StringIO, write it to ``sys.__stdout__`` at exit) lost its answer.
        streams = server.streams
        if streams is None or not _fifos((1, 2)):
            streams = (_stdout(), _stderr())
        sys.stdout, sys.stderr = streams
        sys.__stdout__, sys.__stderr__ = streams  # type: ignore[misc,assignment]  # typeshed: Final
        if fds.stdin >= 0:
            # As CPython makes it here (locale C.UTF-8, see ENV): split at "\n" only (a
            # "\r" is the program's to see), undecodable bytes as surrogates, not an error.
            sys.stdin = open(  # noqa: SIM115
                0, encoding="utf-8", errors="surrogateescape", newline="\n", closefd=False
            )
            sys.__stdin__ = sys.stdin  # type: ignore[misc]  # typeshed: Final
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
    _run_program(source, serve_fd, server.pin_cpu, main_file)


#: The C module under :mod:`signal` (``signal`` imported it), whose functions take and return
#: plain ints; and the two signals a child resets, as ints.
_C_SIGNAL = sys.modules["_signal"]
_SIGCHLD = int(signal.SIGCHLD)
_SIGINT = int(signal.SIGINT)


def _stdout() -> TextIO:
    # CPython's own under the C.UTF-8 locale (see ENV): lone surrogates written as their bytes.
    return open(1, "w", encoding="utf-8", errors="surrogateescape", closefd=False)


def _stderr() -> TextIO:
    return open(
        2, "w", encoding="utf-8", errors="backslashreplace", buffering=1, closefd=False
    )


def _fifos(fds: tuple[int, ...]) -> bool:
    try:
        return all(stat.S_ISFIFO(os.fstat(fd).st_mode) for fd in fds)
    except OSError:
        return False


def premade_streams() -> tuple[TextIO, TextIO] | None:
    """``sys.stdout`` and ``sys.stderr`` for every child whose fds 1 and 2 are pipes, made once
    by the server, exactly as the child would make them (the same ``open`` calls while fds 1
    and 2 are, for that moment, a pipe: the same buffer size, not a tty, not seekable), and
    never written by the server. Why: making them in each freshly forked child cost it about
    180 µs of CPU, every run (timed inside the child; the io machinery's first use writes
    30-50 pages of the server's memory, each a copy-on-write fault). ``None`` when fds 1 and
    2 cannot be moved aside (then each child makes its own)."""
    saved: list[int] = []  # dups of fds 1 and 2, in that order, as far as they were made
    r, w = os.pipe()
    try:
        # One at a time: if fd 2 cannot be dup'ed (EBADF), fd 1's dup is still put back.
        saved.append(os.dup(1))
        saved.append(os.dup(2))
        os.dup2(w, 1)
        os.dup2(w, 2)
        return _stdout(), _stderr()
    except OSError:
        return None
    finally:
        for fd, old in zip((1, 2), saved, strict=False):
            os.dup2(old, fd)
        for fd in (r, w, *saved):
            os.close(fd)


def _leave_server(server: ServerView) -> None:
    """What every forked child does first: drop the server's signal plumbing (its wakeup fd,
    its SIGCHLD handler; SIGINT raises again) and let go of its control socket object (the fd
    is closed later; the object must not close a number reused by then).

    Through ``_signal`` (:data:`_C_SIGNAL`), with plain ints: ``signal.signal`` turns the
    previous handler into a ``Handlers`` enum member, and for the server's handler (a
    function) that lookup fails with a formatted ``ValueError``; in a freshly forked child
    that machinery wrote 56 pages (copy-on-write), ~200 µs of its CPU, the largest single
    step of its setup."""
    _C_SIGNAL.set_wakeup_fd(-1)
    _C_SIGNAL.signal(_SIGCHLD, _C_SIGNAL.SIG_DFL)
    _C_SIGNAL.signal(_SIGINT, _C_SIGNAL.default_int_handler)
    server.ctl.detach()


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


def anchor_import_path() -> None:
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
            ANCHOR_FDS.append(fd)
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
