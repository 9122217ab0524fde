"""The fork server's wire format and the constants its caller and its children share.

Owns: the records exchanged with :mod:`asyncpool.sandbox._zygote` (``REQUEST``, ``STARTED``,
``RESULT``, the ``FLAG_*``, ``RESULT_*`` and ``STATUS_*`` codes), the sandbox uid range, the
deadlines' constants (:func:`hard_wall_cap`), the environment of the server and its programs, and
the parsed form of one request (:class:`Request`, :class:`Fds`).

Protocol (all Unix sockets, all local):

* ``CTL_FD`` is a ``SOCK_SEQPACKET`` socket to the caller. Each request is one record,
  ``REQUEST`` packed, carrying file descriptors (``SCM_RIGHTS``) in this order: a per-run
  ``SOCK_SEQPACKET`` reply socket, the write ends of the stdout and stderr pipes (the same pipe
  twice for one stream), a memfd with the program's UTF-8 source, then, as the flags say, a memfd
  for stdin (``FLAG_STDIN``), a memfd of files to write into the run's directory
  (``FLAG_FILES_IN``), a memfd listing files to read back (``FLAG_FILES_OUT``; the server replaces
  its content by the files), and for a judged run (``FLAG_JUDGE``, see
  :mod:`asyncpool.sandbox._judge`) a memfd with the entry point, NUL, the tests, and the write end
  of the verdict pipe, both handed to the judge process only. The server never reads stdin, files or
  tests into its own memory (children read them after the fork), so no later fork inherits them. End
  of file on ``CTL_FD`` (the caller exited) makes the server kill every running program and exit.
* On the reply socket the server sends ``b"S" + STARTED`` once the child is forked, then
  ``b"R" + RESULT + USAGE`` when the run is over and cleaned up: its processes dead and waited
  for, its directories removed (when the program left a directory or more than a few files there
  and runs as root: only after a helper under its uid killed every process of that uid, then
  removed them; see ``_zygote_job.remove_scratch``), or
  ``b"E" + message`` on an internal error. Otherwise the uids are swept (the same helper, for a
  batch of uids) within ``SWEEP_AFTER`` seconds, and before they are used again in any case.
  The caller closing the reply socket early means "abandon": the run is killed at once.
* Deadlines are on the run's own time (wall-clock time minus run-queue wait, from
  ``/proc/PID/schedstat``): see "Time" in :mod:`asyncpool.sandbox`. ``RESULT`` carries the own
  time, the wall-clock time, the judge's exit and ``RESULT_STARVED`` when the starvation cap
  (:func:`hard_wall_cap`) ended the run without a verdict.

Must not: import anything outside the standard library, or anything heavier than ``struct``
and ``dataclasses``: it is imported both by :mod:`asyncpool.sandbox` (in the caller, maybe a
Ray worker) and by the fork server's clean interpreter, which never imports ``asyncpool``.
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass

#: timeout (s), memory limit (bytes, ``RLIMIT_AS``; :data:`ADDRESS_HEADROOM` more where the
#: run's cgroup holds its memory), file-size limit (bytes), max processes, flags, wall-clock
#: cap (s, see hard_wall_cap), resident-memory limit of the whole run (bytes, the memory
#: cgroup's, see _cgroup)
REQUEST = struct.Struct("=dqqqIdq")
#: A run's ``RLIMIT_AS`` beyond its memory limit where its memory cgroup holds it to that
#: limit (resident memory, all its processes together): address space reserved but not used
#: is not memory. At ``RLIMIT_AS = memory_mb`` an honest program was refused what ``python
#: prog.py`` gives it in a few MiB of resident memory: the competitive programmer's deep
#: recursion in a thread (``threading.stack_size(2**28)`` at ``memory_mb=256``, or ``2**27``
#: once numpy is imported: "can't start new thread"), a verdict that even depended on which
#: fork server ran it (glibc's 64 MiB-aligned thread arenas land where the layout allows). The
#: cgroup still kills a run at its limit of memory used; this bound is a backstop, so that one
#: allocation past all reason is a ``MemoryError`` at once (``bytearray(10**10)``, ``[0] *
#: 10**9``) and the page tables of a sparse mapping stay small (at most ~8 MiB for 4 GiB).
ADDRESS_HEADROOM = 4 << 30
#: A run's ``RLIMIT_STACK`` at most (its memory limit when that is less), as judges of
#: competitive programming give (Codeforces: the stack is the memory limit): at Linux's
#: default 8 MiB, an honest depth-first search over a path of 10^5-10^6 nodes crashed (C++,
#: Rust: a ``SIGSEGV``, "runtime_error"), so did Python's ``lru_cache`` recursion at
#: ``setrecursionlimit(10**6)`` past ~30,000 and Node past its ``--stack-size``. Stack pages
#: touched are the run's memory (its cgroup counts them). The cost: glibc gives a new thread of
#: an executed program (not of the forked Python, whose default was fixed at the server's start)
#: a stack of this size by default, address space reserved, not memory: a program of more
#: threads than :data:`ADDRESS_HEADROOM` holds stacks of this size is refused the rest.
STACK_LIMIT = 256 << 20
#: A run's ``RLIMIT_NPROC`` (processes and threads) at least, where its memory cgroup holds it
#: (:data:`ADDRESS_HEADROOM`'s condition): room for ``ThreadPoolExecutor()``'s up to 32
#: workers, whatever the machine (``min(32, os.cpu_count() + 4)``; the sandbox's 16 failed it,
#: "can't start new thread", on a machine of 12 CPUs or more, and ``max_workers=16``
#: anywhere), as the threaded runtimes' ``run_nproc`` (see ``_languages``). A fork bomb still
#: stops there; its memory is the run's, and its CPU time counts as the run's own time.
HELD_PROCESSES = 48
#: The address space a judge (the tests' process) may add in one check, at least, whatever the
#: run's memory limit: the tests' own imports reserve address space that is not the
#: solution's doing (pandas and matplotlib, as BigCodeBench's tests import them, reserve ~440
#: MiB for ~140 MiB resident: at ``memory_mb=256`` the judge's import raised ``MemoryError``
#: and the check was "failed"). Counted from the judge's address space when the check begins,
#: so that what a long-lived judge's earlier checks imported does not shrink a later check's
#: room (a check passing 10**6 ints got a ``MemoryError`` in 1-2 of 10 runs after checks that
#: imported pandas, at the default 512 MiB). The judge is trusted and not held by the run's
#: cgroup; this bounds what it may take.
JUDGE_ADDRESS_FLOOR = 1 << 30
#: pid of the forked child, whether the server isolated itself with namespaces
STARTED = struct.Struct("=qB")
#: status code, returncode, returncode-is-None flag, own time (s), wall time (s),
#: judge's exit (exit status or -signal), flags (RESULT_*)
RESULT = struct.Struct("=BqBddqB")
#: Sent right after ``RESULT`` (its own record, so a reader that knows only ``RESULT`` still
#: works): the program's CPU time (s, user + system, from the ``wait4`` rusage of its process: it
#: includes the descendants it waited for) and its peak memory (bytes): the run's memory
#: cgroup's peak when it had one and was not judged, else ``ru_maxrss`` of that rusage.
USAGE = struct.Struct("=dq")

FLAG_LIMITS = 1  #: apply every isolation step and limit; without it: the bare baseline
FLAG_JUDGE = 2  #: run the program as a solution served to a judge process (run_tests)
FLAG_STDIN = 4  #: a memfd for the program's stdin follows the program's memfd
FLAG_FILES_IN = 8  #: a memfd with files to write into the working directory follows
FLAG_FILES_OUT = 16  #: a memfd listing files to read back after the run follows
#: A judged run whose tests use files: its judge is forked for it alone, under the run's own
#: uid, in the run's working directory, which the solution also sees at the judge's path (see
#: shared_dirs), so that a file the tests write is the solution's to read, and back, as
#: in-process.
FLAG_SHARED_FS = 32
#: A trusted toolchain's run (a compile: ``g++`` forks ``cc1plus``, ``as`` and ``ld`` and waits
#: for each in turn): the time its other processes wait for a CPU is not its own time either
#: (see ``Job.refresh_others`` in ``_zygote_job``). Never set for a program's run.
FLAG_TOOLCHAIN = 64

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
#: one uid per running program (its judge runs under ``JUDGE_UID``, or under the program's own
#: uid when the two share files: ``FLAG_SHARED_FS``), leased
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

#: A check handed to a long-lived judge of the fork server (``_zygote_judges.run_judge_server``):
#: timeout (s), memory limit (bytes), CPU to run on (-1: any), the check's token; with it, the
#: tests' memfd, the verdict pipe's write end and the judge's end of the socket to the solution
#: (``SCM_RIGHTS``). The judge answers :data:`JUDGE_DONE`: ``b"D"``, 1 when it retires (exits)
#: after this check, and the token. Why a token: while the judge serves the solution, a tests'
#: callable the solution calls (``open`` handed to it) can write on any descriptor of the
#: judge's, its control socket too; a ``D`` without the token (random, known only to the server
#: and the judge's memory, which no process can read: it is non-dumpable) is a forgery, and the
#: server kills that judge, so a forged "done" can neither end a check early nor be taken for
#: the end of the next check the server would hand the same judge.
JUDGE_JOB = struct.Struct("=dqiQ")
JUDGE_DONE = struct.Struct("=cBQ")
#: The first bytes of a judged run's tests memfd: a secret of the caller's, drawn per run, that
#: the judge writes before its verdict (and only the judge and the caller know: the memfd is
#: closed before the tests run, and the judge's memory cannot be read). A verdict pipe that does
#: not start with it was written by the solution through a callable of the tests' (``open(fd)``
#: in the judge): no verdict.
VERDICT_KEY_BYTES = 16
#: Checks one long-lived judge serves before it is replaced (a fresh fork of the server).
JUDGE_CHECKS = 64
#: Most long-lived judges per fork server (more concurrent checks get a judge forked for them).
JUDGE_POOL = 8

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


#: What a fork server leaves outside its own process (its cgroup base, its scratch directory)
#: is named ``LEFTOVER_PREFIX + "<its pid>"`` (then ``-`` and more, for some), so that a later
#: server can find and remove what a killed one left.
LEFTOVER_PREFIX = "asyncpool-sandbox-"


def left_by_dead_server(name: str, fields: int) -> bool:
    """Whether ``name`` (``fields`` dash-separated fields in all) is a leftover of a fork server
    that is no longer alive: no process has its pid (a live one, or a process that reuses the
    pid, keeps it)."""
    parts = name.split("-")
    if len(parts) != fields or not name.startswith(LEFTOVER_PREFIX) or not parts[2].isdigit():
        return False
    return not os.path.exists(f"/proc/{parts[2]}")


def hard_wall_cap(timeout: float) -> float:
    """Wall-clock seconds after which a run that has not used ``timeout`` of own time is
    declared starved."""
    return STARVED_FACTOR * timeout + STARVED_SLACK

#: The whole environment of the fork server and of every program it runs.
#: ``ARROW_DEFAULT_MEMORY_POOL``: pyarrow (pandas' strings) on malloc, not mimalloc, whose first
#: arena reserves 1 GiB of address space: under a run's ``RLIMIT_AS`` (``memory_mb``, 512 by
#: default) the next ``mmap`` failed (``import matplotlib`` after a DataFrame of strings raised
#: ``ImportError: failed to map segment``); malloc reserves only what it uses.
#: ``MALLOC_ARENA_MAX``: glibc gives each new thread an arena of its own, up to 8 per CPU, each
#: reserving 64 MiB of address space: under a judge's ``RLIMIT_AS`` (``memory_mb``) the tests'
#: 14th thread failed ("can't start new thread": an honest thread-safety test of 16 threads was
#: "failed"), and likewise a run's where no memory cgroup holds it. With two arenas 40 threads
#: fit in ~400 MiB (their 8 MiB stacks).
ENV = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
    "PYTHONHASHSEED": "0",
    "PYTHONDONTWRITEBYTECODE": "1",
    "ARROW_DEFAULT_MEMORY_POOL": "system",
    "MALLOC_ARENA_MAX": "2",
}


def shared_dirs(tmp_dir: str) -> list[str]:
    """The directories, deepest first, that a run sharing its files with its judge
    (``FLAG_SHARED_FS``) has made inside its ``/tmp`` so that ``tmp_dir`` (the judge's path of
    that directory) also names it in the run's own mount namespace; relative to ``tmp_dir``.
    Empty when ``tmp_dir`` is not below ``/tmp`` (no namespace of its own: the path holds)."""
    if not tmp_dir.startswith("/tmp/"):
        return []
    parts = tmp_dir[len("/tmp/") :].split("/")
    return ["/".join(parts[:n]) for n in range(len(parts), 0, -1)]


@dataclass
class Request:
    timeout: float
    memory: int
    fsize: int
    nproc: int
    flags: int
    wall_cap: float
    resident: int

    @property
    def limits(self) -> bool:
        return bool(self.flags & FLAG_LIMITS)

    @property
    def judged(self) -> bool:
        return bool(self.flags & FLAG_JUDGE)

    @property
    def shared(self) -> bool:
        """A judged run that shares its working directory with its judge (FLAG_SHARED_FS)."""
        return bool(self.flags & FLAG_SHARED_FS) and self.judged and self.limits

    @property
    def toolchain(self) -> bool:
        """A trusted toolchain's run (FLAG_TOOLCHAIN)."""
        return bool(self.flags & FLAG_TOOLCHAIN) and self.limits


@dataclass
class Fds:
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
