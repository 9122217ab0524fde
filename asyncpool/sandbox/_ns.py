"""Kernel namespaces for the sandbox's fork server: built once per server, inherited by forks.

Loaded by the fork server (:mod:`asyncpool.sandbox._zygote`) by file path, standard library only,
through ``ctypes`` (``os.unshare`` and ``os.pivot_root`` do not exist in Python 3.11). As root,
:func:`isolate_server` moves the server into

* an empty **network** namespace (only a loopback interface, down: no route anywhere, not even
  to the Ray cluster on this machine);
* its own **IPC** namespace where System V IPC cannot be created at all (``msgmni``,
  ``shmmni`` and ``sem`` set to 0, ``shm_rmid_forced`` on), so nothing persists between runs;
* its own **mount** namespace whose root is a fresh, read-only tmpfs holding read-only binds of
  only what programs need: ``/usr``, ``/bin``, ``/sbin``, ``/lib*``, ``/etc``, ``/sys``,
  ``/dev`` (with its own empty ``/dev/shm``), Python's prefixes and the caller's environment
  (a virtualenv's directory: so ``sys.executable``, a venv's ``bin/python`` symlink included,
  and the caller's site-packages work, wherever the interpreter lives, a 0700 home included),
  a ``/proc`` mounted with ``hidepid=invisible`` (a program sees only the
  processes of its own uid), and a writable ``/tmp`` tmpfs for the per-run directories. Nothing
  else of the machine exists there: not ``/root`` (beyond the Python prefix when it lives
  there), not ``/home``, not ``/tmp/ray`` (Ray's session directory), not the caller's checkout.

Namespaces cost milliseconds to create and nothing to inherit, so the server does this once;
each run only adds a mount namespace of its own and enters a network namespace no other live
run has (:func:`private_tmp`): its ``/tmp`` and ``/dev/shm`` are bind mounts of two directories
made for that run and removed after it, and no abstract Unix socket name or loopback is shared
with another run (abstract names are scoped to the network namespace). Network namespaces are
reused (:class:`NetnsPool`): measured here (kernel 6.18, load ~25 on 2 cores), a new one cost
the run's child ~0.6 ms of CPU in ``setup_net`` (its teardown more, later, in a kernel worker);
a reused one costs a ``setns`` in the child and, in the server, a ``setns`` there and back and
a few reads of ``/proc/self/net`` to check that the previous run left no socket.
"""

from __future__ import annotations

import ctypes
import os
import sys

CLONE_NEWNS = 0x00020000
CLONE_NEWIPC = 0x08000000
CLONE_NEWNET = 0x40000000
MS_RDONLY = 1
MS_NOSUID = 2
MS_NODEV = 4
MS_NOEXEC = 8
MS_BIND = 4096
MS_REC = 0x4000
MS_PRIVATE = 1 << 18
MNT_DETACH = 2
MOUNT_ATTR_RDONLY = 1
AT_FDCWD = -100
AT_RECURSIVE = 0x8000
_SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41}.get(os.uname().machine, 155)
_SYS_MOUNT_SETATTR = 442  # every architecture since Linux 5.12

#: Directories of the machine visible (read-only) to programs, besides Python's prefixes.
VISIBLE = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/usr", "/etc", "/sys", "/dev")

_libc = ctypes.CDLL(None, use_errno=True)


class _MountAttr(ctypes.Structure):
    _fields_ = [
        ("attr_set", ctypes.c_uint64),
        ("attr_clr", ctypes.c_uint64),
        ("propagation", ctypes.c_uint64),
        ("userns_fd", ctypes.c_uint64),
    ]


def _check(result: int, what: str) -> None:
    if result != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"{what}: {os.strerror(errno)}")


def unshare(flags: int) -> None:
    _check(_libc.unshare(ctypes.c_int(flags)), "unshare")


def mount(source: str | None, target: str, fstype: str | None, flags: int, data: str = "") -> None:
    _check(
        _libc.mount(
            source.encode() if source else None,
            target.encode(),
            fstype.encode() if fstype else None,
            ctypes.c_ulong(flags),
            data.encode() if data else None,
        ),
        f"mount {target}",
    )


def _set_readonly(path: str, readonly: bool, recursive: bool) -> None:
    attr = _MountAttr(MOUNT_ATTR_RDONLY if readonly else 0, 0 if readonly else MOUNT_ATTR_RDONLY)
    _check(
        _libc.syscall(
            ctypes.c_long(_SYS_MOUNT_SETATTR),
            ctypes.c_int(AT_FDCWD),
            path.encode(),
            ctypes.c_uint(AT_RECURSIVE if recursive else 0),
            ctypes.byref(attr),
            ctypes.c_size_t(ctypes.sizeof(attr)),
        ),
        f"mount_setattr {path}",
    )


def _sysctl(name: str, value: str) -> None:
    with open(f"/proc/sys/kernel/{name}", "w") as fh:
        fh.write(value)


def _python_dirs(prefixes: tuple[str, ...] = ()) -> list[str]:
    """The interpreter's prefixes, the caller's environment (``prefixes``: a virtualenv's
    directory, whose ``bin/python`` is the ``sys.executable`` programs see), and every import
    path outside them, each by its real path. A prefix under a directory the sandbox uid cannot
    traverse (pyenv or conda under a 0700 home) is bound alone: the tmpfs root's directories
    leading to it are 0755 and hold nothing else."""
    seen = (sys.prefix, sys.base_prefix, sys.exec_prefix, *prefixes)
    dirs = {os.path.realpath(p) for p in seen}
    # The path programs run (a venv's bin/python, a symlink into the base prefix) must exist.
    exe_dir = os.path.dirname(os.path.abspath(sys.executable))
    for entry in (exe_dir, *sys.path):
        real = os.path.realpath(entry) if entry else ""
        inside = (*dirs, *VISIBLE)
        if real and os.path.isdir(real) and not any(real.startswith(d + "/") for d in inside):
            dirs.add(real)
    # Under /tmp a directory cannot be shown: the jail's root is a tmpfs mounted over /tmp,
    # and each run's own /tmp hides it again. An environment there (a venv made under /tmp)
    # still isolates; its programs see only the base interpreter's packages.
    dirs = {d for d in dirs if d != "/tmp" and not d.startswith("/tmp/")}
    # Innermost last, so that a prefix inside another is bound over it, never hidden by it.
    return sorted(dirs, key=len)


def isolate_server(tmp_size_mb: int, prefixes: tuple[str, ...] = ()) -> None:
    """Move this (root, single-threaded) process into the namespaces described above.

    Raises ``OSError`` when the kernel refuses (no ``CAP_SYS_ADMIN``, e.g. a default Docker
    container); the process is then left in whatever namespaces it got so far.
    """
    unshare(CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC)
    mount(None, "/", None, MS_REC | MS_PRIVATE)
    for name, value in (
        ("shm_rmid_forced", "1"), ("msgmni", "0"), ("shmmni", "0"), ("sem", "0 0 0 0"),
    ):  # fmt: skip
        _sysctl(name, value)
    new_root = "/tmp"  # a tmpfs over /tmp, in this namespace only, becomes the new root
    mount("tmpfs", new_root, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=1m")
    for path in (*VISIBLE, *_python_dirs(prefixes)):
        if os.path.islink(path) and path in VISIBLE:
            os.symlink(os.readlink(path), new_root + path)  # e.g. /bin -> usr/bin
        elif os.path.isdir(path) and not os.path.islink(path):
            os.makedirs(new_root + path, 0o755, exist_ok=True)
            mount(path, new_root + path, None, MS_BIND | MS_REC)
    mount("tmpfs", new_root + "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "mode=0711,size=1m")
    os.makedirs(new_root + "/proc", 0o755, exist_ok=True)
    mount("proc", new_root + "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, "hidepid=invisible")
    os.makedirs(new_root + "/tmp", 0o755, exist_ok=True)
    mount(
        "tmpfs", new_root + "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, f"mode=0711,size={tmp_size_mb}m"
    )
    os.makedirs(new_root + "/.old", 0o700)
    _check(
        _libc.syscall(
            ctypes.c_long(_SYS_PIVOT_ROOT), new_root.encode(), (new_root + "/.old").encode()
        ),
        "pivot_root",
    )
    os.chdir("/")
    _check(_libc.umount2(b"/.old", ctypes.c_int(MNT_DETACH)), "umount2 /.old")
    os.rmdir("/.old")
    _set_readonly("/", readonly=True, recursive=True)
    _set_readonly("/tmp", readonly=False, recursive=False)


def setns(fd: int, nstype: int) -> None:
    _check(_libc.setns(ctypes.c_int(fd), ctypes.c_int(nstype)), "setns")


def private_tmp(tmp_dir: str, shm_dir: str, netns: int = -1, same_path: bool = False) -> None:
    """In a run's child (still root): a mount namespace of its own whose ``/tmp`` and
    ``/dev/shm`` are ``tmp_dir`` and ``shm_dir``, and a network namespace no other live run
    has (empty: a loopback, down), so that no two runs share an abstract Unix socket name or a
    loopback: ``netns``, one the server's :class:`NetnsPool` gave this run (``setns``), else a
    new one (one ``unshare`` for both). ``same_path``: ``tmp_dir``, the path its judge knows
    it by, names it here too (its directories made in the new ``/tmp``, see
    ``_zygote_wire.shared_dirs``, and a bind of it onto the deepest)."""
    if netns >= 0:
        unshare(CLONE_NEWNS)
        setns(netns, CLONE_NEWNET)
        os.close(netns)
    else:
        unshare(CLONE_NEWNS | CLONE_NEWNET)
    mount(shm_dir, "/dev/shm", None, MS_BIND)  # first: both paths are below /tmp
    _tmp_is(tmp_dir, same_path)


def _tmp_is(tmp_dir: str, same_path: bool) -> None:
    """This mount namespace's ``/tmp`` is ``tmp_dir``; ``same_path``: which keeps its own path
    too (its directories made in the new ``/tmp``, ``exist_ok``: a run and its judge make the
    same ones, in either order; then a bind of ``/tmp`` onto the deepest)."""
    mount(tmp_dir, "/tmp", None, MS_BIND)
    if same_path and tmp_dir.startswith("/tmp/"):
        os.makedirs(tmp_dir, 0o755, exist_ok=True)  # now below the new /tmp
        mount("/tmp", tmp_dir, None, MS_BIND)


def judge_tmp(tmp_dir: str) -> None:
    """In a judge that shares a run's files (``FLAG_SHARED_FS``; still root): a mount namespace
    of its own whose ``/tmp`` is the run's ``tmp_dir``, by both paths, as in the run's (see
    :func:`private_tmp`), so that a literal ``/tmp/...`` path names the same file on both
    sides, as in-process. The judge's Python environment is outside ``/tmp`` (the jail shows
    none inside it), so its later imports are unaffected."""
    unshare(CLONE_NEWNS)
    _tmp_is(tmp_dir, True)


#: ``sockstat`` and ``sockstat6`` counters that must be zero in a namespace to reuse: every
#: socket a process created in it (any family, bound or not, in flight or orphaned: ``sockets:
#: used`` counts them until they are freed), TCP time-waits (v4 and v6 share the count), and
#: pending IP fragments.
_SOCKSTAT_COUNTERS = {"sockets:": ("used",), "TCP:": ("tw",), "FRAG:": ("inuse",),
                      "FRAG6:": ("inuse",)}  # fmt: skip


def no_sockets() -> bool:
    """Whether the calling thread's network namespace holds no socket at all (see
    :data:`_SOCKSTAT_COUNTERS`; two reads, ~50 µs). A counter missing counts as not zero."""
    for name in ("sockstat", "sockstat6"):
        try:
            # os.open and one read, not open(): 3 system calls, not 7; the file is a few short
            # lines, which the first read returns whole.
            fd = os.open(f"/proc/self/net/{name}", os.O_RDONLY | os.O_CLOEXEC)
        except FileNotFoundError:  # no IPv6
            continue
        try:
            text = os.read(fd, 1 << 16).decode("ascii", "replace")
        finally:
            os.close(fd)
        for row in text.splitlines():
            words = row.split()
            for counter in _SOCKSTAT_COUNTERS.get(words[0], ()) if words else ():
                if counter not in words[:-1] or words[words.index(counter) + 1] != "0":
                    return False
    return True


class NetnsPool:
    """Network namespaces for runs, reused (issue 21 item 3): a new one costs ~0.6 ms of CPU
    in ``setup_net`` (and its teardown more in a kernel worker), a reused one a ``setns``.

    The fork server (root, single-threaded) creates one when none is spare (``unshare`` of its
    own network namespace, a descriptor of the new one kept, then ``setns`` back home) and
    hands it to one run. It takes one back (:meth:`give_back`) only once every process of that
    run is dead (its cgroup removed) and only when the namespace holds no socket at all
    (:func:`no_sockets`, read from inside it): a socket kept alive after its processes died (in
    flight in a Unix socket's queue, a TCP time-wait) makes it discarded. What else a network
    namespace holds (interfaces, addresses, routes, sysctls, firewall rules) needs
    ``CAP_NET_ADMIN``, which no run has. At most ``size`` spare ones are kept."""

    def __init__(self, size: int) -> None:
        self.home = os.open("/proc/self/ns/net", os.O_RDONLY | os.O_CLOEXEC)
        self.size = size
        self.spare: list[int] = []
        self.created = 0
        self.reused = 0
        self.discarded = 0

    def take(self) -> int:
        """A namespace no live run has (a descriptor the caller owns)."""
        if self.spare:
            self.reused += 1
            return self.spare.pop()
        unshare(CLONE_NEWNET)
        try:
            fd = os.open("/proc/self/ns/net", os.O_RDONLY | os.O_CLOEXEC)
        finally:
            self._home()
        self.created += 1
        return fd

    def give_back(self, fd: int) -> None:
        """``fd``'s run is over and all its processes are dead: keep it if it is clean."""
        if len(self.spare) < self.size:
            setns(fd, CLONE_NEWNET)
            try:
                clean = no_sockets()
            finally:
                self._home()
            if clean:
                self.spare.append(fd)
                return
        self.discarded += 1
        os.close(fd)

    def _home(self) -> None:
        try:
            setns(self.home, CLONE_NEWNET)
        except OSError:  # pragma: no cover - never seen; a server left in a run's namespace
            os._exit(70)  # must not go on: its caller starts a new one
