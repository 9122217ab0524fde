"""A seccomp filter for sandboxed programs: the kernel's rarely needed, often exploited calls
answer ``EPERM``.

Loaded by the fork server (:mod:`asyncpool.sandbox._zygote`) by file path, standard library only.
The filter is a classic BPF program assembled here (libseccomp is not a dependency; the program
is a hundred-odd instructions) and installed with ``prctl(PR_SET_SECCOMP)`` after
``PR_SET_NO_NEW_PRIVS``, in the program's child only, just before the program runs; every
process and thread the program creates inherits it, and nothing can remove it.

It denies what no verification program needs and what sandbox escapes and kernel exploits are
made of: ``ptrace`` and ``process_vm_readv``/``writev`` (reading or writing another process),
new namespaces (``unshare``, ``setns``, ``clone`` with a namespace flag; ``clone3`` answers
``ENOSYS`` so that libc falls back to ``clone``, whose flags the filter can see), ``mount``
and friends, ``bpf``, ``perf_event_open``, ``userfaultfd``, ``io_uring``, kernel keyrings,
modules, ``kexec``, ``reboot``, ``swapon``, ``acct``, ``quotactl``, handle-based opens, and
the x32 ABI. Everything else is allowed: threads, ``fork``, ``subprocess``, ``mmap``, files,
signals. x86-64 only (elsewhere :func:`install` does nothing; the docstring of
:mod:`asyncpool.sandbox` says so).
"""

from __future__ import annotations

import ctypes
import errno
import os
import struct

AUDIT_ARCH_X86_64 = 0xC000003E
X32_SYSCALL_BIT = 0x40000000
_PR_SET_SECCOMP = 22
_SECCOMP_MODE_FILTER = 2
_RET_ALLOW = 0x7FFF0000
_RET_ERRNO = 0x00050000

# BPF opcodes
_LD_W_ABS = 0x20
_JEQ_K = 0x15
_JGE_K = 0x35
_JSET_K = 0x45
_RET_K = 0x06

#: x86-64 numbers of the denied calls.
DENIED = {
    "ptrace": 101, "process_vm_readv": 310, "process_vm_writev": 311,
    "unshare": 272, "setns": 308, "mount": 165, "umount2": 166, "pivot_root": 155,
    "fsopen": 430, "fsmount": 432, "move_mount": 429, "open_tree": 428, "mount_setattr": 442,
    "bpf": 321, "perf_event_open": 298, "userfaultfd": 323,
    "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
    "keyctl": 250, "add_key": 248, "request_key": 249,
    "init_module": 175, "finit_module": 313, "delete_module": 176,
    "kexec_load": 246, "kexec_file_load": 320, "reboot": 169,
    "swapon": 167, "swapoff": 168, "acct": 163, "quotactl": 179,
    "open_by_handle_at": 304, "name_to_handle_at": 303,
}  # fmt: skip
_CLONE = 56
_CLONE3 = 435
#: CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID |
#: CLONE_NEWNET
CLONE_NAMESPACES = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000
CLONE_NAMESPACES |= 0x40000000


def _insn(code: int, jt: int, jf: int, k: int) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k & 0xFFFFFFFF)


#: Most special calls (denied, ``clone``, ``clone3``) tested one by one at a leaf of the
#: filter's search tree (see :func:`program`).
_LEAF = 6


def program() -> bytes:
    """The filter, as ``struct sock_filter[]`` bytes.

    After the ABI checks, a binary search tree on the call number (``JGE`` nodes), whose
    leaves test their few special numbers one by one and end in "allow". Why not one list
    of tests: on installing a filter the kernel runs it once per call number to find the
    calls it always allows (its seccomp cache; those then skip the filter), so a list of
    tests that most numbers walk to its end costs every install that many times over. The
    install (once per run) took 114 µs of the installing process's CPU with the list, 90
    with the tree (medians of 400 installs each, alternating). What it decides is the same,
    number by number (``tests/test_sandbox_isolation`` runs it in a BPF interpreter over
    every call number against the policy).
    """
    eperm = _RET_ERRNO | errno.EPERM
    allow = _insn(_RET_K, 0, 0, _RET_ALLOW)
    actions = {nr: [_insn(_RET_K, 0, 0, eperm)] for nr in DENIED.values()}
    actions[_CLONE3] = [_insn(_RET_K, 0, 0, _RET_ERRNO | errno.ENOSYS)]
    actions[_CLONE] = [
        _insn(_LD_W_ABS, 0, 0, 16),  # seccomp_data.args[0], low 32 bits: clone's flags
        _insn(_JSET_K, 0, 1, CLONE_NAMESPACES),
        _insn(_RET_K, 0, 0, eperm),
        allow,
    ]
    special = sorted(actions)

    def tree(lo: int, hi: int) -> list[bytes]:
        if hi - lo <= _LEAF:
            out: list[bytes] = []
            for nr in special[lo:hi]:
                out += [_insn(_JEQ_K, 0, len(actions[nr]), nr), *actions[nr]]
            return [*out, allow]
        mid = (lo + hi) // 2
        below, above = tree(lo, mid), tree(mid, hi)
        if len(below) > 0xFF:  # pragma: no cover - a jump offset is one byte
            raise ValueError("seccomp filter too large for a one-byte jump")
        return [_insn(_JGE_K, len(below), 0, special[mid]), *below, *above]

    head = [
        _insn(_LD_W_ABS, 0, 0, 4),  # seccomp_data.arch
        _insn(_JEQ_K, 1, 0, AUDIT_ARCH_X86_64),
        _insn(_RET_K, 0, 0, eperm),  # another ABI (i386 int 0x80): nothing of it is allowed
        _insn(_LD_W_ABS, 0, 0, 0),  # seccomp_data.nr
        _insn(_JGE_K, 0, 1, X32_SYSCALL_BIT),
        _insn(_RET_K, 0, 0, eperm),
    ]
    return b"".join(head + tree(0, len(special)))


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


_FILTER = program() if os.uname().machine == "x86_64" else b""
_BUFFER = ctypes.create_string_buffer(_FILTER, len(_FILTER))
_PROG = _SockFprog(len(_FILTER) // 8, ctypes.cast(_BUFFER, ctypes.c_void_p).value)
# Resolved, typed and its argument's address taken here, in the server, once: every run's
# child installs the filter, and there ``_libc.prctl`` (its first lookup makes and caches the
# function object), untyped arguments wrapped per call and ``byref`` wrote ~46 pages
# (copy-on-write faults, ~0.12 ms of the child's CPU); now ~8.
_PRCTL = ctypes.CDLL(None, use_errno=True).prctl
_PRCTL.argtypes = (ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p, ctypes.c_ulong, ctypes.c_ulong)
_PRCTL.restype = ctypes.c_int
_PROG_ADDRESS = ctypes.addressof(_PROG)


def install() -> bool:
    """Install the filter on this thread's process (after ``PR_SET_NO_NEW_PRIVS``); ``False``
    where there is none (not x86-64). ``OSError`` if the kernel refuses it."""
    if not _FILTER:
        return False
    if _PRCTL(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, _PROG_ADDRESS, 0, 0):
        err = ctypes.get_errno()
        raise OSError(err, f"prctl(PR_SET_SECCOMP): {os.strerror(err)}")
    return True
