"""A cgroup per sandboxed run: every process the run started is dead before its verdict.

Why: a program that double-forks a ``setsid`` daemon leaves its process group and its parent;
killing the run's process group does not reach it, and the uid sweep
(:mod:`asyncpool.sandbox._zygote_uids`) reaches it only after the verdict. A cgroup cannot be
left by an unprivileged process (its files are root's; the jail's ``/sys`` is read-only), and
whatever the run forks is born in it. So the fork server makes one cgroup per run, the run's
child moves itself into it (:func:`join`, as root, before it runs anything of the program), and
when the run is over the server kills the cgroup's processes and removes it; the verdict is sent
only once the removal succeeded, i.e. once the kernel counts no live task in it (a task leaves
its cgroup in ``do_exit`` after its files, sockets included, are closed).

Mechanisms, the first one usable at the server's start:

* **cgroup v2** (``cgroup.kill``, Linux 5.14+): one write kills every process of the cgroup,
  atomically with respect to forks inside it. Used when the server's own cgroup in the v2
  hierarchy (pure v2 hosts, or the ``unified`` hierarchy of hybrid hosts) accepts a
  sub-directory: root, or a subtree delegated to the server's uid. When that hierarchy delegates
  the ``memory`` controller, it is enabled for the runs' cgroups and :func:`RunCgroup.memory_peak`
  reads the run's peak memory (``memory.peak``, resident memory of all its processes).
* **cgroup v1 freezer**: freeze, ``SIGKILL`` every pid in ``cgroup.procs``, thaw; repeated until
  the cgroup can be removed.
* Neither (no cgroup hierarchy writable, e.g. a container without cgroup access): the caller
  (:mod:`asyncpool.sandbox._zygote`) falls back to killing every process of the run's uid before
  the verdict (a forked helper, see :mod:`asyncpool.sandbox._zygote_uids`).

Not a PID namespace per run: its init would be the program itself (another process in between
costs one more fork of the server), and an init ignores the signals it sends itself
(``os.kill(os.getpid(), SIGTERM)`` would do nothing), which changes what programs do.

Cost (measured on this machine, kernel 6.18, at load ~25 on 2 cores; figures per run): ``mkdir``
~40 µs and ``rmdir`` ~30 µs in the server, the child's move into the cgroup ~60-80 µs while runs
follow one another within an RCU grace period, but one grace period (ms, ~12 ms at that load) of
latency (not CPU) when the kernel's cgroup rw-semaphore went idle since the last move (sparse
runs); ``cgroup.kill`` ~40 µs.

Must not: import ``asyncpool`` or anything outside the standard library (it runs in the fork
server's clean interpreter); hold any run's state but its cgroup.
"""

from __future__ import annotations

import contextlib
import errno
import os
import signal
from dataclasses import dataclass

from ._zygote_wire import LEFTOVER_PREFIX, left_by_dead_server

_V2 = "v2"
_V1_FREEZER = "v1-freezer"


def _own_cgroups() -> dict[str, str]:
    """``/proc/self/cgroup``: hierarchy key (``""`` for v2, else its controllers) -> path."""
    out: dict[str, str] = {}
    with open("/proc/self/cgroup") as fh:
        for line in fh:
            parts = line.rstrip("\n").split(":", 2)
            if len(parts) == 3:
                out[parts[1]] = parts[2]
    return out


def _mounts() -> list[tuple[str, str, str, str]]:
    """``(root, mount point, fstype, super options)`` of every mount (``/proc/self/mountinfo``)."""
    out = []
    with open("/proc/self/mountinfo") as fh:
        for line in fh:
            left, _, right = line.partition(" - ")
            fields, rfields = left.split(), right.split()
            if len(fields) >= 5 and len(rfields) >= 3:
                out.append((fields[3], fields[4], rfields[0], rfields[2]))
    return out


def _dir_of(root: str, mountpoint: str, path: str) -> str | None:
    """Where the cgroup ``path`` (as ``/proc/self/cgroup`` names it) is under a mount of the
    hierarchy whose root is ``root``; ``None`` when that mount does not show it."""
    root = root.rstrip("/")
    if root and not (path == root or path.startswith(root + "/")):
        return None
    rel = path[len(root) :].lstrip("/")
    mp = mountpoint.replace("\\040", " ")
    return os.path.join(mp, rel) if rel else mp


def _write(dir_fd: int, name: str, data: bytes) -> None:
    fd = os.open(name, os.O_WRONLY | os.O_CLOEXEC, dir_fd=dir_fd)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


def _read(dir_fd: int, name: str) -> str:
    fd = os.open(name, os.O_RDONLY | os.O_CLOEXEC, dir_fd=dir_fd)
    try:
        chunks = []
        while chunk := os.read(fd, 65536):
            chunks.append(chunk)
        return b"".join(chunks).decode()
    finally:
        os.close(fd)


def join(dir_fd: int) -> None:
    """In a run's child, as root, before anything of the program runs: move this process into
    the run's cgroup (``dir_fd``); everything it forks from now on is born there."""
    _write(dir_fd, "cgroup.procs", b"0")


def _remove_stale_bases(kind: str, parent_fd: int) -> None:
    """Remove the bases (and their runs' cgroups, killing what is left in them) of servers
    that died without cleaning up (SIGKILL)."""
    for name in os.listdir(parent_fd):
        if not left_by_dead_server(name, 3):
            continue
        with contextlib.suppress(OSError):
            base = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC, dir_fd=parent_fd)
            try:
                for run_name in os.listdir(base):
                    with contextlib.suppress(OSError):
                        if not os.path.isdir(f"/proc/self/fd/{base}/{run_name}"):
                            continue
                        fd = os.open(run_name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=base)
                        run = RunCgroup(kind, run_name, fd)
                        with contextlib.suppress(OSError):
                            run.kill()
                        os.close(fd)
                        os.rmdir(run_name, dir_fd=base)
            finally:
                os.close(base)
            os.rmdir(name, dir_fd=parent_fd)


@dataclass
class RunCgroup:
    """One run's cgroup: its name under the server's base and a descriptor of its directory."""

    kind: str
    name: str
    fd: int
    memory: bool = False

    def kill(self) -> None:
        """``SIGKILL`` every process in the cgroup (v1: frozen first, so none forks meanwhile;
        one that was not frozen yet is killed by the next call, see :meth:`Cgroups.remove`)."""
        if self.kind == _V2:
            _write(self.fd, "cgroup.kill", b"1")
            return
        with contextlib.suppress(OSError):
            _write(self.fd, "freezer.state", b"FROZEN")
        try:
            for pid in _read(self.fd, "cgroup.procs").split():
                with contextlib.suppress(OSError):
                    os.kill(int(pid), signal.SIGKILL)
        finally:
            with contextlib.suppress(OSError):
                _write(self.fd, "freezer.state", b"THAWED")

    def memory_peak(self) -> int | None:
        """Peak memory of the run's processes together (bytes, the memory controller's
        ``memory.peak``: resident and page-cache memory charged to the cgroup), or ``None``
        when the memory controller is not delegated here. Read it before the cgroup is
        removed."""
        if not self.memory:
            return None
        try:
            return int(_read(self.fd, "memory.peak").split()[0])
        except (OSError, ValueError, IndexError):
            return None


class Cgroups:
    """The server's cgroup base (``asyncpool-sandbox-PID`` below its own cgroup) and the runs'
    cgroups below it. Opened before the server enters its namespaces: the base's descriptor keeps
    reaching the (writable) cgroup mount once the jail's ``/sys`` is read-only."""

    def __init__(self, kind: str, parent: str) -> None:
        self.kind = kind
        self.name = f"{LEFTOVER_PREFIX}{os.getpid()}"
        parent_fd = os.open(parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            _remove_stale_bases(kind, parent_fd)
            with contextlib.suppress(FileExistsError):
                os.mkdir(self.name, 0o755, dir_fd=parent_fd)
            self.base = os.open(self.name, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC,
                                dir_fd=parent_fd)  # fmt: skip
        finally:
            os.close(parent_fd)
        self.parent = parent
        self.memory = False
        if kind == _V2:
            with contextlib.suppress(OSError):
                if "memory" in _read(self.base, "cgroup.controllers").split():
                    _write(self.base, "cgroup.subtree_control", b"+memory")
                    self.memory = True
        self.seq = 0

    def new_run(self) -> RunCgroup:
        self.seq += 1
        name = str(self.seq)
        os.mkdir(name, 0o755, dir_fd=self.base)
        try:
            fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC, dir_fd=self.base)
        except BaseException:
            os.rmdir(name, dir_fd=self.base)
            raise
        return RunCgroup(self.kind, name, fd, self.memory)

    def remove(self, run: RunCgroup) -> bool:
        """Kill what is left in ``run`` and remove it; ``True`` once removed (no live task was
        left in it), ``False`` while some task has yet to exit (call again)."""
        with contextlib.suppress(OSError):
            run.kill()
        try:
            os.rmdir(run.name, dir_fd=self.base)
        except OSError as exc:
            if exc.errno == errno.ENOENT:
                pass
            elif exc.errno == errno.EBUSY:
                return False
            else:
                raise
        os.close(run.fd)
        run.fd = -1
        return True

    def close(self) -> None:
        """Remove the base (every run's cgroup must be gone)."""
        with contextlib.suppress(OSError):
            os.close(self.base)
        with contextlib.suppress(OSError):
            os.rmdir(os.path.join(self.parent, self.name))


def open_cgroups() -> Cgroups | None:
    """The first usable mechanism (see the module docstring), or ``None``."""
    try:
        own = _own_cgroups()
        mounts = _mounts()
    except OSError:
        return None
    candidates: list[tuple[str, str]] = []
    v2_path = own.get("")
    if v2_path is not None:
        for root, mountpoint, fstype, _ in mounts:
            if fstype == "cgroup2":
                where = _dir_of(root, mountpoint, v2_path)
                if where is not None and os.path.exists(os.path.join(where, "cgroup.kill")):
                    candidates.append((_V2, where))
                    break
    freezer_path = next((p for k, p in own.items() if "freezer" in k.split(",")), None)
    if freezer_path is not None:
        for root, mountpoint, fstype, options in mounts:
            if fstype == "cgroup" and "freezer" in options.split(","):
                where = _dir_of(root, mountpoint, freezer_path)
                if where is not None:
                    candidates.append((_V1_FREEZER, where))
                    break
    for kind, where in candidates:
        try:
            cgroups = Cgroups(kind, where)
        except OSError:
            continue
        if _trial(cgroups):
            return cgroups
        cgroups.close()
    return None


def _trial(cgroups: Cgroups) -> bool:
    """Whether a run's cgroup can be made, joined by a forked child, and removed (the
    hierarchy may refuse children or moves, e.g. a threaded or a foreign-owned one)."""
    try:
        run = cgroups.new_run()
    except OSError:
        return False
    pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the forked child
        try:
            join(run.fd)
        except BaseException:
            os._exit(1)
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    try:
        removed = cgroups.remove(run)
    except OSError:
        removed = False
    return removed and os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
