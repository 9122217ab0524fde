"""The fork server's sandbox uids: leased machine-wide, swept before reuse.

Owns: the lease of uids from the pool (``flock`` on root-only lock files, held for the server's
life), the sweeps (a forked helper that, under each uid, kills every process it left and
removes its scratch directory), their batching (``SWEEP_BATCH``, ``SWEEP_AFTER``), and the
removal of scratch directories left by dead servers.

Must not: import ``asyncpool`` or anything outside the standard library (it runs in the fork
server's clean interpreter), nor know about runs: the server (:mod:`asyncpool.sandbox._zygote`) says
which uid was used and when.
"""

from __future__ import annotations

import collections
import contextlib
import fcntl
import math
import os
import random
import shutil
import signal
import stat
import tempfile

from ._zygote_wire import UID_BASE, UID_COUNT, left_by_dead_server

_LOCK_DIRS = (
    "/run/asyncpool-sandbox",
    os.path.join(tempfile.gettempdir(), "asyncpool-sandbox-locks"),
)

#: A uid a run used is swept (every process left under it killed) before it is used again, in
#: batches by one forked helper: when this many wait, or when the oldest has waited this long.
SWEEP_BATCH = 16
SWEEP_AFTER = 0.25
#: How many uids a server leases (and sweeps) at once when it needs more.
LEASE_BATCH = 8
#: After this many failed sweeps of a uid (a leftover process kept killing the helper first),
#: the server keeps it leased but never uses it again.
SWEEP_ATTEMPTS = 10

Work = list[tuple[int, "str | None"]]


def spawn_reaper(work: Work) -> int:
    """Fork a helper that, for each ``(uid, scratch)``, kills every process of ``uid`` and then
    removes ``scratch`` (as root); it exits 0 when everything is done."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the forked child
        try:
            signal.set_wakeup_fd(-1)
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            ok = True
            for uid, scratch in work:
                # Real and effective uid = the sandbox uid, so kill(-1) reaches exactly its
                # processes (no root process); saved uid 0, to come back.
                os.setresuid(uid, uid, 0)
                with contextlib.suppress(ProcessLookupError):
                    os.kill(-1, signal.SIGKILL)
                os.setresuid(0, 0, 0)
                if scratch is not None:
                    shutil.rmtree(scratch, ignore_errors=True)
                    ok = ok and not os.path.lexists(scratch)
        except BaseException:
            os._exit(1)
        os._exit(0 if ok else 1)
    return pid


def remove_stale_scratch_bases() -> None:
    """Remove the scratch directories of servers that died without cleaning up (SIGKILL)."""
    tmp = tempfile.gettempdir()
    for name in os.listdir(tmp):
        if not left_by_dead_server(name, 4):
            continue
        path = os.path.join(tmp, name)
        with contextlib.suppress(OSError):
            st = os.lstat(path)
            if stat.S_ISDIR(st.st_mode) and st.st_uid == os.geteuid():
                shutil.rmtree(path, ignore_errors=True)


def reaper_ok(status: int) -> bool:
    return os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0


def lock_dir() -> str:
    """The machine-wide directory of the fork servers' lock files (root's: the uid leases, the
    CPU lanes), made if missing; root-owned, mode 0700, or ``RuntimeError``."""
    for path in _LOCK_DIRS:
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            pass
        except OSError:
            continue
        st = os.lstat(path)
        if stat.S_ISDIR(st.st_mode) and st.st_uid == 0 and not st.st_mode & 0o077:
            return path
    raise RuntimeError(f"no safe (root-owned, mode 0700) lock directory among {_LOCK_DIRS}")


class Uids:
    """This server's sandbox uids: leased machine-wide (``flock`` on root-only lock files in
    ``directory``, :func:`lock_dir`, held for the server's life), each swept before it is
    handed out again."""

    def __init__(self, directory: str) -> None:
        self.dir = directory
        # Opened now: once the server has isolated itself, the path no longer exists in its
        # mount namespace, and what does is read-only; this descriptor still reaches it.
        self.dir_fd = os.open(self.dir, os.O_RDONLY | os.O_DIRECTORY)
        self.lock_fds: dict[int, int] = {}
        self.free: collections.deque[int] = collections.deque()
        self.dirty: Work = []
        self.dirty_since = math.inf
        self.sweeps: dict[int, tuple[Work, int]] = {}  # helper pid -> (work, attempt)

    def acquire(self) -> int | None:
        """A clean uid (no process runs under it); ``None`` when the pool is exhausted."""
        if not self.free:
            self._lease(LEASE_BATCH)
        return self.free.popleft() if self.free else None

    def _lease(self, n: int) -> None:
        new: list[int] = []
        start = random.randrange(UID_COUNT)
        for i in range(UID_COUNT):
            if len(new) == n:
                break
            uid = UID_BASE + (start + i) % UID_COUNT
            if uid in self.lock_fds:
                continue
            fd = os.open(str(uid), os.O_RDWR | os.O_CREAT, 0o600, dir_fd=self.dir_fd)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                os.close(fd)
                continue
            self.lock_fds[uid] = fd
            new.append(uid)
        # A server that held these before may have died leaving processes: sweep them first.
        for _ in range(SWEEP_ATTEMPTS):
            _, status = os.waitpid(spawn_reaper([(uid, None) for uid in new]), 0)
            if reaper_ok(status):
                self.free.extend(new)
                return

    def used(self, uid: int, now: float) -> None:
        if not self.dirty:
            self.dirty_since = now
        self.dirty.append((uid, None))

    def sweep_due(self, now: float) -> float:
        return self.dirty_since + SWEEP_AFTER if len(self.dirty) < SWEEP_BATCH else now

    def sweep(self, work: Work | None = None, attempt: int = 1) -> None:
        if work is None:
            work, self.dirty, self.dirty_since = self.dirty, [], math.inf
        if work:
            self.sweeps[spawn_reaper(work)] = (work, attempt)

    def sweep_done(self, pid: int, status: int) -> None:
        work, attempt = self.sweeps.pop(pid)
        if reaper_ok(status):
            self.free.extend(uid for uid, _ in work)
        elif attempt < SWEEP_ATTEMPTS:
            self.sweep(work, attempt + 1)
