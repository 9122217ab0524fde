"""The judges the fork server forks (trusted code): one for a single check
(:func:`run_judge_child`), or a long-lived one that judges check after check
(:func:`run_judge_server`), retired after any anomaly (:func:`_interpreter_settings`). Each
limits itself, drops to the judge's uid and becomes non-dumpable before it reads the tests.

Like the server, it must not import ``asyncpool`` nor anything outside the standard library.
"""

from __future__ import annotations

import array
import atexit
import ctypes
import math
import os
import resource
import socket as _socket
import sys
import tempfile
from typing import TYPE_CHECKING, NoReturn

from . import _zygote_child  # (its JUDGE and NS, set by the server's main: read at each use)
from ._cgroup import join as join_cgroup
from ._zygote_child import (
    _PR_SET_DUMPABLE,
    ANCHOR_FDS,
    ServerView,
    _bind_to_server,
    _close_all_but,
    _judge_address_limit,
    _leave_server,
    _limit,
    read_fd,
)
from ._zygote_wire import (
    JUDGE_CHECKS,
    JUDGE_DONE,
    JUDGE_JOB,
    JUDGE_NPROC,
    VERDICT_KEY_BYTES,
    Fds,
    Request,
)

if TYPE_CHECKING:
    pass


def _judge_payload(fd: int) -> tuple[bytes, bytes, bytes]:
    """A judged run's tests memfd, as ``_run`` writes it: the caller's verdict key
    (:data:`VERDICT_KEY_BYTES`), the entry point's name (empty: none) and the tests' source,
    the last two still encoded."""
    payload = read_fd(fd)
    header, _, tests = payload[VERDICT_KEY_BYTES:].partition(b"\0")
    return payload[:VERDICT_KEY_BYTES], header, tests


def run_judge_child(
    server: ServerView, req: Request, fds: Fds, uid: int | None, sock_fd: int,
    workdir: str | None = None,
) -> NoReturn:  # fmt: skip
    """In the judge's forked child (trusted code): limit, drop to the judge's uid, become
    non-dumpable (no ptrace, no ``/proc/PID/mem`` even for the same uid), run the tests.

    ``workdir``: a run that shares its files with its judge (``FLAG_SHARED_FS``): ``uid`` is
    the run's own, and the tests work in the run's working directory (their current
    directory, ``tempfile``'s directory and ``tmp_path``'s parent), where the solution works
    too: a file either writes is the other's, as in-process, by a literal ``/tmp/...`` path
    too (the judge's ``/tmp`` is the run's, see ``_ns.judge_tmp``). Same uid as the solution, the
    judge is still non-dumpable (the solution can neither trace it nor read its memory); the
    solution can signal it, which only fails its own check. It joins the run's cgroup, so that
    the run's uid serves again only once it and all it started are dead."""
    judge = _zygote_child.JUDGE
    try:
        _leave_server(server)
        os.setsid()
        if workdir is not None:
            # Of the run (its cgroup, empty only once this judge and all it started are dead):
            # the run's uid is free again only then.
            join_cgroup(server.cgroup_joins)
        for target in (0, 1, 2):
            os.dup2(server.devnull, target)
        key, header, tests = _judge_payload(fds.tests)
        entry_point = header.decode() or None
        source = tests.decode("utf-8", "surrogatepass")
        _close_all_but((fds.reply, fds.verdict, sock_fd, *ANCHOR_FDS))
        os.chdir("/")
        if workdir is not None and server.isolated:
            _zygote_child.NS.judge_tmp(workdir)  # its /tmp is the run's, as the solution's is
        _limit(server, req, uid, nproc=JUDGE_NPROC)
        if server.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_DUMPABLE)")
        if workdir is not None:
            os.chdir(workdir)  # as the run's uid: its directory, nobody else's
            tempfile.tempdir = workdir
        sys.argv[:] = ["<tests>"]
        atexit._clear()
        os.close(fds.reply)
    except BaseException as exc:
        try:
            os.write(fds.reply, b"E" + f"judge setup failed: {exc!r}".encode()[:4000])
        finally:
            os._exit(1)
    judge.guard_judge()
    judge.judge(sock_fd, fds.verdict, key, source, entry_point, server.pin_cpu, workdir)
    os._exit(1)  # not reached: judge() exits


def run_judge_server(server: ServerView, ctl_fd: int, uid: int) -> NoReturn:
    """A long-lived judge (trusted code): set up once as :func:`run_judge_child` does (own
    session, the judge's uid, non-dumpable, ``PR_SET_PDEATHSIG``, every other descriptor
    closed), then judge one check at a time for the server on ``ctl_fd`` (see
    ``_zygote_wire.JUDGE_JOB``), each in a fresh namespace and through a fresh wire
    (:func:`_judge.judge_check`), with that check's CPU and memory limits.

    It retires (exits, so the server forks a fresh one) after ``JUDGE_CHECKS`` checks and after
    any anomaly: one :func:`_judge.judge_check` reports (the solution broke the wire or a bound,
    made a request of the tests' objects, the tests died of a ``BaseException`` or may have
    changed a module's attribute), a thread left running, a built-in, the environment,
    ``sys.path`` or a setting of the interpreter (:func:`_interpreter_settings`: the decimal
    context, the warnings filters...) changed by the tests. The random generator, the
    recursion limit and the working directory are reset before each check, as a fresh fork of
    the server would have them. A check it does not finish (timeout, abandon) is ended by
    killing it."""
    import builtins
    import random

    judge = _zygote_child.JUDGE
    try:
        _leave_server(server)
        os.setsid()
        for target in (0, 1, 2):
            os.dup2(server.devnull, target)
        _close_all_but((ctl_fd, *ANCHOR_FDS))
        os.chdir("/")
        inf = resource.RLIM_INFINITY
        # Per check, the soft CPU and address-space limits are lowered to the check's (below);
        # the hard ones stay open so that the next check can have its own.
        resource.setrlimit(resource.RLIMIT_CPU, (inf, inf))
        resource.setrlimit(resource.RLIMIT_AS, (inf, inf))
        resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 24, 1 << 24))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))
        resource.setrlimit(resource.RLIMIT_NPROC, (JUDGE_NPROC, JUDGE_NPROC))
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
        _bind_to_server(server)
        if server.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_DUMPABLE)")
        sys.argv[:] = ["<tests>"]
        atexit._clear()
        ctl = _socket.socket(fileno=ctl_fd)
        fd_size = array.array("i").itemsize
        random_state = random.getstate()
        recursion_limit = sys.getrecursionlimit()
        judge.guard_judge()
        original = dict(builtins.__dict__)
        environ = dict(os.environ)
        path = list(sys.path)
        settings = _interpreter_settings()
        ctl_file = os.fstat(ctl_fd)
        for served in range(1, JUDGE_CHECKS + 1):
            data, anc, flags, _addr = ctl.recvmsg(JUDGE_JOB.size, _socket.CMSG_SPACE(3 * fd_size))
            if not data:
                os._exit(0)  # the server is gone
            fds = array.array("i")
            for level, kind, payload in anc:
                if level == _socket.SOL_SOCKET and kind == _socket.SCM_RIGHTS:
                    fds.frombytes(payload[: len(payload) - len(payload) % fd_size])
            if len(data) != JUDGE_JOB.size or len(fds) != 3 or flags & _socket.MSG_CTRUNC:
                os._exit(1)
            tests_fd, verdict_fd, sock_fd = fds
            timeout, memory, cpu, token = JUDGE_JOB.unpack(data)
            verdict_file = os.fstat(verdict_fd)
            key, header, tests = _judge_payload(tests_fd)
            os.close(tests_fd)
            random.setstate(random_state)
            sys.setrecursionlimit(recursion_limit)
            os.chdir("/")  # where an earlier check's tests' os.chdir may have left it
            usage = resource.getrusage(resource.RUSAGE_SELF)
            spent = usage.ru_utime + usage.ru_stime
            resource.setrlimit(resource.RLIMIT_CPU, (math.ceil(spent + timeout) + 1, inf))
            resource.setrlimit(resource.RLIMIT_AS, (_judge_address_limit(memory), inf))
            tests_text = tests.decode("utf-8", "surrogatepass")
            del tests
            verdict, anomaly = judge.judge_check(
                sock_fd, tests_text, header.decode() or None, cpu if cpu >= 0 else None
            )
            resource.setrlimit(resource.RLIMIT_AS, (inf, inf))
            os.close(sock_fd)  # the solution sees the end of the wire
            # Only the judge's own code runs from here on. The solution may have closed the
            # verdict pipe or the control socket (through a tests' ``open(fd)``) and had the
            # number reused: then the check has no verdict (this judge exits, the run fails).
            if not judge.same_file(ctl_fd, ctl_file):
                os._exit(1)
            try:
                delivered = judge.deliver_verdict(verdict_fd, verdict_file, key + verdict)
            finally:
                os.close(verdict_fd)
            if not delivered:
                os._exit(1)
            threading = sys.modules.get("threading")
            now = _interpreter_settings()
            anomaly = (
                anomaly
                or (threading is not None and threading.active_count() > 1)
                or len(builtins.__dict__) != len(original)
                or any(builtins.__dict__.get(k) is not v for k, v in original.items())
                or os.environ != environ  # the next check's tests would start from it
                or sys.path != path  # (``sys.path.insert(0, ...)`` in pytest-style tests)
                or _settings_changed(settings, now, "warn" in tests_text)
            )
            settings = now
            retire = anomaly or served >= JUDGE_CHECKS
            ctl.send(JUDGE_DONE.pack(b"D", retire, token))
            if retire:
                os._exit(0)
    except BaseException:
        os._exit(1)
    os._exit(0)


def _settings_changed(
    before: tuple[object, ...], now: tuple[object, ...], warnings_named: bool
) -> bool:
    """Whether the interpreter's settings changed from ``before`` to ``now`` (see
    :func:`_interpreter_settings`). The warnings filters (first) count only when the tests'
    text names ``warn``: importing numpy or pandas adds filters of theirs, which is no reason
    to fork a new judge."""
    return now[1:] != before[1:] or (warnings_named and now[0] != before[0])


def _interpreter_settings() -> tuple[object, ...]:
    """The process-wide settings a check's tests may change and that a later check of the
    same long-lived judge would otherwise run under (``getcontext().prec = 50``,
    ``warnings.simplefilter("error")``, ``sys.set_int_max_str_digits(0)``, ``gc.disable()``,
    ``np.seterr(all="raise")``...): compared before and after each check, a change retires
    the judge, as a changed built-in does. The umask is read by setting it and back: only a
    thread the tests left running could see the moment between, and that retires the judge.
    The decimal contexts, the int digit limit and numpy's error handling (its defaults while
    it is not loaded: the judge keeps it loaded once a check imported it) are read as the
    judge reads the tests' to send them to the solution (``_judge._decimal_spec``,
    ``_int_digits``, ``_numpy_errors``)."""
    import decimal
    import gc
    import locale
    import warnings

    judge = _zygote_child.JUDGE
    umask = os.umask(0o077)
    os.umask(umask)
    return (
        tuple(warnings.filters), judge._decimal_spec(),
        judge._decimal_spec(decimal.DefaultContext),  # (new threads start from it)
        judge._int_digits(), judge._numpy_errors(), warnings.showwarning,
        gc.isenabled(), gc.get_threshold(), sys.getswitchinterval(), umask,
        _socket.getdefaulttimeout(), locale.setlocale(locale.LC_ALL), sys.gettrace(),
        sys.getprofile(),
    )  # fmt: skip
