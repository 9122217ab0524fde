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
  sub-directory (root, or a subtree delegated to the server's uid) that has ``cgroup.kill``.
  That file is looked for in the server's base, not in its own cgroup: a root cgroup (a hybrid
  host's unified hierarchy, where the server often sits at ``/``) has none on any kernel.
* **cgroup v1 freezer**: freeze, ``SIGKILL`` every pid in ``cgroup.procs``, thaw; repeated until
  the cgroup can be removed. A cgroup with no process left (most runs) is not frozen: each
  freeze and thaw flips a kernel static key, which patches code on every CPU with IPIs.
* On a hybrid host (a v2 hierarchy without the ``memory`` controller beside v1 ones), the v1
  freezer comes first when v1 ``cpuacct`` is mounted too: v2 would add nothing to what v1 gives
  there, and a v2 run costs an RCU grace period of latency after an idle spell (below).
* Neither (no cgroup hierarchy writable, e.g. a container without cgroup access): the caller
  (:mod:`asyncpool.sandbox._zygote`) falls back to killing every process of the run's uid before
  the verdict (a forked helper, see :mod:`asyncpool.sandbox._zygote_uids`).

Memory, beside either mechanism: each run's resident memory (all its processes together, page
cache it dirtied included) is limited by the memory controller when one is usable: the v2
hierarchy's when it delegates ``memory`` (``memory.max``, no swap), else a v1 ``memory``
hierarchy (``memory.limit_in_bytes``, and ``memory.memsw.limit_in_bytes`` where swap is
accounted), where the run gets a second cgroup of the same name that its child joins too. Why:
``RLIMIT_AS`` bounds address space, not memory, so runtimes that reserve much more than they use
(the JVM, Go, V8) cannot be held to a run's ``memory_mb`` by it; the controller holds every run
to it, whatever its runtime. A run over its limit is killed by the kernel's OOM killer inside its
cgroup (``memory.events``/``memory.oom_control`` count ``oom_kill``), which
:meth:`RunCgroup.oom_killed` reports, so its verdict is "memory"; the controller's peak of it
(:meth:`RunCgroup.memory_peak`) is the run's reported peak memory. A run the controller holds
gets ``RLIMIT_AS`` only as a backstop (``memory_mb`` plus
:data:`~asyncpool.sandbox._zygote_wire.ADDRESS_HEADROOM`). Without a usable controller (the
server logs it) ``RLIMIT_AS`` at ``memory_mb`` and the runtimes' own heap flags are the only
bounds.

CPU, likewise: :meth:`RunCgroup.cpu_seconds` is the CPU time of all the run's processes together
(v2 ``cpu.stat``, kept in every v2 cgroup; on v1 a ``cpuacct`` cgroup of the run's own). The fork
server counts it as own time (:mod:`asyncpool.sandbox._zygote`): a run whose processes spin (a
fork bomb) starves its first process, whose own time alone would crawl to the wall-clock cap.

Not a PID namespace per run: its init would be the program itself (another process in between
costs one more fork of the server), and an init ignores the signals it sends itself
(``os.kill(os.getpid(), SIGTERM)`` would do nothing), which changes what programs do.

Cost (measured on this machine, kernel 6.18, at load ~25 on 2 cores; figures per run): ``mkdir``
~40 µs and ``rmdir`` ~30 µs in the server, ``cgroup.kill`` ~40 µs. The child's move: through a
v2 ``cgroup.procs`` ~60-80 µs while runs follow one another within an RCU grace period, but one
grace period of latency (not CPU: 5-25 ms, more on a loaded machine) when the kernel's global
threadgroup rw-semaphore went idle since the last move; through a v1 ``tasks`` file 0.09-0.14
ms however sparse the runs (see :func:`join`). A sandboxed check 50 ms after the last one, on a
hybrid host: ``run_tests`` 18.7-19.9 ms with the v2 move, 6.3-6.9 ms without (medians of 60).
On a pure v2 host the move cannot avoid the semaphore; mounting cgroup2 with ``favordynmods``
(Linux 6.0+) keeps it in the mode that needs no grace period, at some cost to every fork and
exit of the host: an operator's choice, not made here.

Must not: import ``asyncpool`` or anything outside the standard library (it runs in the fork
server's clean interpreter); hold any run's state but its cgroup.
"""

from __future__ import annotations

import contextlib
import errno
import os
import signal
from dataclasses import dataclass, field

from ._zygote_wire import LEFTOVER_PREFIX, left_by_dead_server

_V2 = "v2"
_V1 = "v1-"
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


#: A cgroup to join: a descriptor of its directory and the file its child writes ``0`` to.
Join = tuple[int, str]


def join(targets: tuple[Join, ...]) -> None:
    """In a run's child, as root, before anything of the program runs: move this process into
    the run's cgroups (:attr:`RunCgroup.joins`); everything it forks from now on is born there.

    A v1 cgroup is joined through ``tasks`` (this thread), not ``cgroup.procs`` (the whole
    thread group): the child is one thread (a fork copies only the forking one), so both move
    the same, but the kernel takes its global threadgroup rw-semaphore for writing only for the
    latter, and taking it after it went idle waits for an RCU grace period: 5.7-14 ms against
    0.09-0.14 ms for ``tasks`` (this machine, a forked child each time, 80 ms apart). v2 has no
    such file for a domain cgroup (``cgroup.threads`` moves threads only inside a threaded
    subtree), see the module docstring.
    """
    for fd, name in targets:
        _write(fd, name, b"0")


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
    memory: bool = False  # the v2 memory controller is enabled in ``fd``
    # controller -> the run's cgroup in that v1 hierarchy ("memory", "cpuacct")
    v1: dict[str, int] = field(default_factory=dict)
    peak: int | None = None  # memory_peak(), read by Cgroups.remove(peak=True)

    @property
    def joins(self) -> tuple[Join, ...]:
        """Every cgroup of the run, for its child to :func:`join`."""
        first = "cgroup.procs" if self.kind == _V2 else "tasks"
        return ((self.fd, first), *((fd, "tasks") for fd in self.v1.values()))

    def kill(self) -> None:
        """``SIGKILL`` every process in the cgroup (v1: frozen first, so none forks meanwhile;
        one that was not frozen yet is killed by the next call, see :meth:`Cgroups.remove`).

        v1 freezes only a cgroup that has a process: an empty one can get none (only a task
        inside forks into it, and only the run's child ever joined it), and each freeze and
        thaw flips a kernel static key (code patched on every CPU, with IPIs), the largest part
        of a run's cgroup cost. Most runs leave nothing behind.
        """
        if self.kind == _V2:
            _write(self.fd, "cgroup.kill", b"1")
            return
        if not _read(self.fd, "cgroup.procs").split():
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

    def pids(self) -> list[int]:
        """The processes in the cgroup (empty when it cannot be read)."""
        try:
            return [int(pid) for pid in _read(self.fd, "cgroup.procs").split()]
        except (OSError, ValueError):
            return []

    def cpu_seconds(self) -> float | None:
        """CPU time used by every process the run started, together (v2 ``cpu.stat``, kept in
        every v2 cgroup; on v1 the run's ``cpuacct`` cgroup); ``None`` without either."""
        try:
            if self.kind == _V2:
                for line in _read(self.fd, "cpu.stat").splitlines():
                    key, _, value = line.partition(" ")
                    if key == "usage_usec":
                        return int(value) / 1e6
            elif "cpuacct" in self.v1:
                return int(_read(self.v1["cpuacct"], "cpuacct.usage")) / 1e9
        except (OSError, ValueError):
            pass
        return None

    def limit_memory(self, limit: int) -> bool:
        """Hold the run's processes together to ``limit`` bytes of memory, without swap;
        ``True`` when a memory controller took the limit."""
        if self.memory:
            _write(self.fd, "memory.max", str(limit).encode())
            with contextlib.suppress(OSError):  # absent without swap accounting
                _write(self.fd, "memory.swap.max", b"0")
            return True
        fd = self.v1.get("memory", -1)
        if fd >= 0:
            _write(fd, "memory.limit_in_bytes", str(limit).encode())
            with contextlib.suppress(OSError):  # absent without swap accounting
                _write(fd, "memory.memsw.limit_in_bytes", str(limit).encode())
            return True
        return False

    def memory_peak(self) -> int | None:
        """The most memory the run's processes held together, in bytes: what the memory
        limit counts (pages charged to the run: what it allocated or copied on write, page
        cache it brought in; not the fork server's preloaded interpreter, which a forked child
        shares until it writes). v2 ``memory.peak``, v1 ``memory.max_usage_in_bytes``;
        ``None`` without a memory controller. Exact once every process of the run is dead."""
        try:
            if self.memory:
                return int(_read(self.fd, "memory.peak"))
            fd = self.v1.get("memory", -1)
            if fd >= 0:
                return int(_read(fd, "memory.max_usage_in_bytes"))
        except (OSError, ValueError):
            pass
        return None

    def oom_killed(self) -> bool:
        """Whether the kernel's OOM killer killed a process of the run because the run was
        over its memory limit. Read it before the cgroup is removed."""
        try:
            if self.memory:
                text = _read(self.fd, "memory.events")
            elif "memory" in self.v1:
                text = _read(self.v1["memory"], "memory.oom_control")
            else:
                return False
        except OSError:
            return False
        for line in text.splitlines():
            key, _, value = line.partition(" ")
            if key == "oom_kill":
                return value.strip() not in ("", "0")
        return False


class Cgroups:
    """The server's cgroup base (``asyncpool-sandbox-PID`` below its own cgroup) and the runs'
    cgroups below it; on v1, also a base in the ``memory`` and ``cpuacct`` hierarchies (see the
    module docstring) when they are mounted and the v2 hierarchy does not give what they give.
    Opened before the server enters its namespaces: the bases' descriptors keep reaching the
    (writable) cgroup mounts once the jail's ``/sys`` is read-only."""

    def __init__(self, kind: str, parent: str, v1_parents: dict[str, str] | None = None) -> None:
        self.kind = kind
        self.name = f"{LEFTOVER_PREFIX}{os.getpid()}"
        self.base = _open_base(kind, parent, self.name)
        self.parent = parent
        self.memory = False
        if kind == _V2:
            with contextlib.suppress(OSError):
                if "memory" in _read(self.base, "cgroup.controllers").split():
                    _write(self.base, "cgroup.subtree_control", b"+memory")
                    self.memory = True
        # controller -> (its v1 directory of this process, the server's base there)
        self.v1: dict[str, tuple[str, int]] = {}
        for controller, where in (v1_parents or {}).items():
            if (controller == "memory" and self.memory) or (controller == "cpuacct" and
                                                             kind == _V2):  # fmt: skip
                continue  # the v2 hierarchy gives it
            with contextlib.suppress(OSError):
                self.v1[controller] = (where, _open_base(_V1 + controller, where, self.name))
        self.seq = 0

    def give_up(self, controller: str) -> None:
        """Use the v1 ``controller`` hierarchy no more (it refused a run's cgroup, a limit or a
        move); ``"memory"`` also gives up the v2 memory controller."""
        if controller == "memory":
            self.memory = False
        entry = self.v1.pop(controller, None)
        if entry is not None:
            where, base = entry
            with contextlib.suppress(OSError):
                os.close(base)
            with contextlib.suppress(OSError):
                os.rmdir(os.path.join(where, self.name))

    @property
    def limits_memory(self) -> bool:
        """Whether runs' memory is limited by a memory controller (see the module docstring)."""
        return self.memory or "memory" in self.v1

    def new_run(self) -> RunCgroup:
        self.seq += 1
        name = str(self.seq)
        run = RunCgroup(self.kind, name, _make_run_dir(self.base, name), self.memory)
        try:
            for controller, (_, base) in self.v1.items():
                run.v1[controller] = _make_run_dir(base, name)
        except BaseException:
            self.remove(run)
            raise
        return run

    def remove(self, run: RunCgroup, peak: bool = False) -> bool:
        """Kill what is left in ``run`` and remove it; ``True`` once removed (no live task was
        left in it), ``False`` while some task has yet to exit (call again). With ``peak``,
        :attr:`RunCgroup.peak` is :meth:`RunCgroup.memory_peak` read last before the memory
        cgroup went: after the kill, so no process of the run could allocate any more."""
        if run.fd >= 0:
            with contextlib.suppress(OSError):
                run.kill()
            if peak and run.memory:
                run.peak = run.memory_peak()
            if not _remove_run_dir(self.base, run.name):
                return False
            os.close(run.fd)
            run.fd = -1
        for controller, fd in list(run.v1.items()):
            # Every task of the run is gone (its cgroup above was removed): nothing is left
            # here but, for a moment, tasks still leaving.
            if peak and controller == "memory":
                run.peak = run.memory_peak()
            if not _remove_run_dir(self.v1[controller][1], run.name):
                return False
            os.close(fd)
            del run.v1[controller]
        return True

    def close(self) -> None:
        """Remove the bases (every run's cgroup must be gone)."""
        for controller in list(self.v1):
            self.give_up(controller)
        with contextlib.suppress(OSError):
            os.close(self.base)
        with contextlib.suppress(OSError):
            os.rmdir(os.path.join(self.parent, self.name))


def _open_base(kind: str, parent: str, name: str) -> int:
    """Make (after removing dead servers' ones) and open the server's base ``name`` below the
    cgroup directory ``parent``."""
    parent_fd = os.open(parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        _remove_stale_bases(kind, parent_fd)
        with contextlib.suppress(FileExistsError):
            os.mkdir(name, 0o755, dir_fd=parent_fd)
        return os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC, dir_fd=parent_fd)
    finally:
        os.close(parent_fd)


def _make_run_dir(base: int, name: str) -> int:
    os.mkdir(name, 0o755, dir_fd=base)
    try:
        return os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC, dir_fd=base)
    except BaseException:
        os.rmdir(name, dir_fd=base)
        raise


def _remove_run_dir(base: int, name: str) -> bool:
    """``rmdir`` a run's cgroup; ``False`` while a task is still in it."""
    try:
        os.rmdir(name, dir_fd=base)
    except OSError as exc:
        if exc.errno == errno.EBUSY:
            return False
        if exc.errno != errno.ENOENT:
            raise
    return True


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
                if where is not None:
                    # Whether the kernel has cgroup.kill is seen in the server's base, not
                    # here: a root cgroup (a hybrid host's unified hierarchy) has no such file.
                    candidates.append((_V2, where))
                    break
    freezer = _v1_dir(own, mounts, "freezer")
    v1 = {c: d for c in ("memory", "cpuacct") if (d := _v1_dir(own, mounts, c)) is not None}
    if freezer is not None:
        if candidates and "cpuacct" in v1 and "memory" not in _v2_controllers(candidates[0][1]):
            # A v2 hierarchy without the memory controller (a hybrid host's unified one) gives
            # cgroup.kill and CPU time; the v1 freezer and cpuacct give the same, and each of
            # their runs is joined through ``tasks`` (see join), never through v2's
            # cgroup.procs: no RCU grace period of latency for a run after an idle spell.
            candidates.insert(0, (_V1_FREEZER, freezer))
        else:
            candidates.append((_V1_FREEZER, freezer))
    for kind, where in candidates:
        try:
            cgroups = Cgroups(kind, where, v1)
        except OSError:
            continue
        if (kind != _V2 or _has(cgroups.base, "cgroup.kill")) and _trial(cgroups):
            return cgroups
        cgroups.close()
    return None


def _v2_controllers(where: str) -> list[str]:
    """The controllers the v2 cgroup ``where`` can give its children (on a hybrid host's
    unified hierarchy, none or few, never ``memory``); ``[]`` if unreadable."""
    try:
        with open(os.path.join(where, "cgroup.controllers"), "rb") as fh:
            return fh.read().decode().split()
    except OSError:
        return []


def _has(dir_fd: int, name: str) -> bool:
    try:
        os.stat(name, dir_fd=dir_fd)
    except OSError:
        return False
    return True


def _v1_dir(
    own: dict[str, str], mounts: list[tuple[str, str, str, str]], controller: str
) -> str | None:
    """This process's cgroup directory in the v1 hierarchy of ``controller``, if mounted."""
    path = next((p for k, p in own.items() if controller in k.split(",")), None)
    if path is None:
        return None
    for root, mountpoint, fstype, options in mounts:
        if fstype == "cgroup" and controller in options.split(","):
            where = _dir_of(root, mountpoint, path)
            if where is not None:
                return where
    return None


def _trial(cgroups: Cgroups) -> bool:
    """Whether a run's cgroup can be made, limited, joined by a forked child, and removed (the
    hierarchy may refuse children or moves, e.g. a threaded or a foreign-owned one). A v1
    accounting hierarchy (or the v2 memory controller) that refuses any of it is given up, not
    the mechanism."""
    for _ in range(3):  # at most: as made, without memory, without cpuacct
        try:
            run = cgroups.new_run()
        except OSError:
            return False
        try:
            run.limit_memory(1 << 30)
        except OSError:
            cgroups.remove(run)
            cgroups.give_up("memory")
            continue
        extra = list(run.v1)
        joins = run.joins
        pid = os.fork()
        if pid == 0:  # pragma: no cover - runs in the forked child
            for k, target in enumerate(joins):
                try:
                    join((target,))
                except BaseException:
                    os._exit(1 + k)
            os._exit(0)
        _, status = os.waitpid(pid, 0)
        try:
            removed = cgroups.remove(run)
        except OSError:
            removed = False
        code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else -1
        if code >= 2 and code - 2 < len(extra):
            cgroups.give_up(extra[code - 2])
            continue
        return removed and code == 0
    return False
