"""CPU lanes: the CPU a judged run's two processes share, chosen so that the runs of different
fork servers on one machine do not share a CPU while another one has none.

Why: a judged run is a conversation. The judge and the solution take turns (each call of the
tests is a round trip), and the fork server pins both to one CPU, where a turn is a local wakeup
instead of an inter-processor one (:mod:`asyncpool.sandbox._judge._solution_side`, ``_pin``).
Each server used to pick that CPU round-robin on its own. Two servers (two Ray workers checking
at once on a two-CPU machine, one fork server each) then put both conversations on the same CPU
about half of the time, while the other CPU idled.

How: the fork servers of one uid share a lock file (root's in the root-only directory of the
uid leases, :func:`asyncpool.sandbox._zygote_uids.lock_dir`; another uid's in ``/dev/shm``,
:func:`lock_path`); a server holding a POSIX record lock on
byte ``i`` has a judged run on CPU ``i``. A server takes a lane no other server holds, the one
it took last first (it keeps its lane while nobody else wants it, so its caller and judges stay
on one CPU too), and gives it back when the run is over; when every CPU is held, it shares the
one its own runs use least (nothing ever waits for a lane). Record locks rather than a shared
counter: the kernel drops a process's locks when it dies, so a server that crashed or was
killed leaves no stale claim behind; a lock or an unlock is one ``fcntl``.

Measured (two processes, each with its fork server, 300 judged HumanEval checks each, 2 CPUs,
alternating runs): round-robin per server 10.5-12.4k checks a minute with the machine 74-77 %
busy; lanes taken round-robin 13.2-14.3k, 82-88 % busy; sticky lanes 12.8-15.0k, 87-89 % busy.
One process alone: no change (6.5-8.1k either way). Four processes: 10.3-10.8k -> 12.1-12.4k.

Why hand-written: the choice must be made in the fork server's clean interpreter (standard
library only), per run, across processes that share nothing else.

Must not: import ``asyncpool`` or anything outside the standard library (it runs in the fork
server); open the lock file a second time in the server (closing any descriptor of a file drops
every record lock the process holds on it).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import stat


def lock_path(uid: int) -> str:
    """The lock file shared by the fork servers of ``uid`` on this machine, when ``uid`` is
    not root (root's servers use their root-only lock directory)."""
    base = "/dev/shm" if os.path.isdir("/dev/shm") else "/tmp"
    return f"{base}/asyncpool-cpu-lanes-{uid}"


def _open(path: str) -> int:
    """The lock file, or -1 when it cannot be used (then lanes are round-robin per server).

    Never follows a symbolic link, and refuses a file that is not a regular one of this uid: a
    file another user made there must not decide (nor see) where this server's runs go."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
    except OSError:
        return -1
    try:
        info = os.fstat(fd)
    except OSError:
        os.close(fd)
        return -1
    if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid():
        os.close(fd)
        return -1
    return fd


class CpuLanes:
    """One fork server's side of the lanes: :meth:`take` a CPU for a judged run, then
    :meth:`give_back` it once the run is over. Single-threaded, like the server."""

    def __init__(self, cpus: list[int], path: str | None) -> None:
        if not cpus:
            raise ValueError("no CPU to run on")
        self.cpus = list(cpus)
        self.turn = 0
        #: CPU -> this server's runs on it now.
        self.held: dict[int, int] = {}
        #: The lanes this server holds the lock of (the others it shares, every CPU being held).
        self.locked: set[int] = set()
        self.fd = _open(path) if path is not None and len(self.cpus) > 1 else -1
        #: A lock file was wanted and cannot be used: the server says so (lanes are then
        #: round-robin per server).
        self.refused = path is not None and len(self.cpus) > 1 and self.fd < 0

    def take(self) -> int:
        """A CPU no other server's run holds, the one this server took last first (a server
        keeps its lane while nobody else wants it); else the one this server's own runs use
        least."""
        n = len(self.cpus)
        order = [self.cpus[(self.turn + i) % n] for i in range(n)]
        if self.fd >= 0:
            for cpu in order:
                if not self.held.get(cpu) and self._lock(cpu):
                    self.held[cpu] = 1
                    self.locked.add(cpu)
                    self.turn = self.cpus.index(cpu)
                    return cpu
        cpu = min(order, key=lambda c: self.held.get(c, 0))
        self.held[cpu] = self.held.get(cpu, 0) + 1
        self.turn = (self.cpus.index(cpu) + 1) % n
        return cpu

    def give_back(self, cpu: int) -> None:
        left = self.held.get(cpu, 0) - 1
        if left > 0:
            self.held[cpu] = left
            return
        self.held.pop(cpu, None)
        if cpu in self.locked:
            self.locked.discard(cpu)
            with contextlib.suppress(OSError):
                fcntl.lockf(self.fd, fcntl.LOCK_UN, 1, cpu)

    def _lock(self, cpu: int) -> bool:
        try:
            fcntl.lockf(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, cpu)
        except OSError:  # another server's run is on it (EAGAIN / EACCES)
            return False
        return True

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
        self.held.clear()
        self.locked.clear()
