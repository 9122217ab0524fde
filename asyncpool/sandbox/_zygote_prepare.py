"""What the fork server (:mod:`asyncpool.sandbox._zygote`) does once, before its first fork, so
that each fork costs less and each program finds what it would in a normal interpreter: the
standard-library modules programs commonly use, preloaded; the builtins ``site`` adds; the
installed packages on the path; one check served and judged (the warm-up); the C heap trimmed.

Like the server, it must not import ``asyncpool`` nor anything outside the standard library.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import socket
import sys

from . import _zygote_child

#: Standard-library modules preloaded so that programs importing them pay nothing.
_PRELOAD = (
    "abc", "bisect", "collections", "copy", "dataclasses", "datetime", "decimal", "enum",
    "fractions", "functools", "hashlib", "heapq", "io", "itertools", "json", "keyword", "math",
    "operator", "random", "re", "statistics", "string", "textwrap", "traceback", "typing",
)  # fmt: skip
# Not ``threading``: once imported, every fork pays for its after-fork handler (~130 page faults,
# half a millisecond here); programs that use threads import it themselves.


def preload(argv: list[str]) -> None:
    """Import :data:`_PRELOAD`, add ``site``'s builtins, and put the installed packages on the
    path (``--site=`` arguments of ``argv``, else ``site``'s own)."""
    for name in _PRELOAD:
        __import__(name)
    # The builtins ``site`` adds (``exit``, ``quit``, ``help``, ``copyright``...): this -S
    # interpreter has none, so a program's ``exit()`` (how competitive-programming code stops
    # after printing its answer) was a NameError, an honest program's runtime error. Only the
    # builtins: no .pth hook runs.
    import site

    site.setquit()
    site.setcopyright()
    site.sethelper()
    # Installed packages are importable (the caller's site-packages on the path: in a
    # virtualenv, the venv's, which this -S interpreter does not know), but no .pth hook ran.
    sites = [arg.split("=", 1)[1] for arg in argv[2:] if arg.startswith("--site=")]
    if not sites:
        sites = site.getsitepackages()
    for path in sites:
        if os.path.isdir(path) and path not in sys.path:
            sys.path.append(path)


def trim_heap() -> None:
    """Give the C heap's free memory back to the kernel (glibc's ``malloc_trim(0)``), once,
    before the first fork.

    Why: compiling the judge's source (the ``_judge`` package, this interpreter runs with
    ``-B``) at start-up left ~13 MB of C heap free but mapped and resident (glibc trims only the
    heap's top): every fork copied its page-table entries and every exit unmapped them. With the
    trim the server's anonymous memory went from 29.6 to 16.7 MB. A check's CPU (server, run and
    judge together) went from 5.49 to 4.66 ms for ``run_python_bare`` and from 8.63 to 8.41 ms
    for ``run_tests`` with the two versions' servers alternating item by item
    (``benchmarks/bench_sandbox.py --against``, 3 rounds of 328 HumanEval checks); one server
    alone, back to back, showed no difference beyond this machine's noise. Other C libraries
    (musl) have no such call: nothing is trimmed there."""
    try:
        trim = ctypes.CDLL(None).malloc_trim
    except AttributeError:
        return
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    trim(0)


def warm_up() -> bool:
    """Before the first fork, once: one check of the judge's warm-up tests, this process
    serving the solution's side (``_judge.serve_warm_up``, see there why) and a child forked
    for it judging, both on one CPU as a run's two processes are. Whether the tests passed
    (the code ran as a check runs it); the child is reaped, and the CPU affinity and
    ``SIGCHLD``'s disposition restored, before it returns. Never raises: a warm-up that fails
    leaves the server cold.

    Measured with two fork servers, with and without it, side by side (``bench_sandbox
    --against``, HumanEval checks x 3 rounds, four runs over an hour): a ``run_tests`` check
    took 1.6-5 % less wall time and 1-11 % less CPU, ``bare`` unchanged, ``run_tests / bare``
    1.66-1.73x -> 1.59-1.68x; a run's child took 727 -> 662 page faults per check (the
    servers' reaped children). It costs the server's start ~35 ms."""
    judge = _zygote_child.JUDGE
    try:
        cpus = os.sched_getaffinity(0)
    except OSError:
        return False
    # A SIGCHLD its caller ignored is ignored here too (inherited across exec): the kernel
    # would then reap the judge itself, and waitpid fail.
    disposition = signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    try:
        os.sched_setaffinity(0, {min(cpus)})
        ours, theirs = socket.socketpair()
        with ours, theirs:
            pid = os.fork()
            if pid == 0:  # pragma: no cover - runs in the forked child
                code = 3
                try:
                    ours.close()
                    verdict, _ = judge.judge_check(theirs.fileno(), judge.WARM_TESTS, "add")
                    code = 0 if verdict == b"P" else 3
                finally:
                    os._exit(code)
            theirs.close()
            served = judge.serve_warm_up(ours.fileno())
            ours.close()  # the judge's end sees EOF, if it still waits
            if not served:
                os.kill(pid, signal.SIGKILL)
            _, status = os.waitpid(pid, 0)
        return served and os.waitstatus_to_exitcode(status) == 0
    except OSError:
        return False
    finally:
        signal.signal(signal.SIGCHLD, disposition)
        with contextlib.suppress(OSError):
            os.sched_setaffinity(0, cpus)
