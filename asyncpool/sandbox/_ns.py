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
each run only adds a mount namespace and a network namespace of its own (:func:`private_tmp`,
one ``unshare``): its ``/tmp`` and ``/dev/shm`` are bind mounts of two directories made for that
run and removed after it, and no abstract Unix socket name or loopback is shared with another
run (abstract names are scoped to the network namespace). Measured here (kernel 6.18, load ~25
on 2 cores): ``unshare(CLONE_NEWNET)`` in the child ~0.5-0.65 ms of wall time (median), its
teardown later in a kernel worker; end to end, sequential ``run_python("pass")`` at load 10-20
went from ~9.2 to ~11.1 ms (median of 4 rounds of 80; the per-run cgroup alone was within the
noise), more than a ~1 ms budget. A pool of reused namespaces (``setns`` ~35-70 µs in the
child) would need a check that the previous run left no socket alive (~0.2-0.3 ms in the server,
whose time every run shares); not built yet: each run gets a new one.
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


def private_tmp(tmp_dir: str, shm_dir: str) -> None:
    """In a run's child (still root): a mount namespace of its own whose ``/tmp`` and
    ``/dev/shm`` are ``tmp_dir`` and ``shm_dir``, and a network namespace of its own (empty:
    a loopback, down), so that no two runs share an abstract Unix socket name or a loopback.
    One ``unshare`` for both."""
    unshare(CLONE_NEWNS | CLONE_NEWNET)
    mount(shm_dir, "/dev/shm", None, MS_BIND)  # first: both paths are below /tmp
    mount(tmp_dir, "/tmp", None, MS_BIND)
