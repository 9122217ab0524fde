"""The compile cache of :mod:`asyncpool.sandbox._languages`: compiled artefacts by key.

Owns: a private, size-bounded directory of artefacts (created 0700 by ``tempfile.mkdtemp`` on
first use, least recently used out, removed at exit), its in-memory index (name, sha256, size,
the compile's result) and the key (:func:`cache_key`). An artefact whose bytes no longer match
its sha256 is dropped, never returned. One cache per process (:class:`~asyncpool._per_process.
PerProcess`: a forked child starts with none, so it never shares its parent's directory).

A process that is killed (a Ray worker at ``ray.shutdown``, anything ``SIGKILL``-ed) runs no
``atexit``, and its directory would stay: 552 of them, 780 MB, had piled up in this machine's
``/tmp`` over two days of tests and benchmarks. So each directory holds a lock file,
``.owner``, that its process keeps ``flock``-ed while it lives (the kernel drops the lock however
the process ends), and a new cache first removes its parent's cache directories whose lock it can
take: their owner is gone. A directory without ``.owner`` (older releases, or one being made this
instant: the file is locked before it gets that name) is never touched.

Must not: compile or run anything (``_languages`` does, in the jail), nor parse an artefact.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import hashlib
import os
import shutil
import stat
import tempfile
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from asyncpool._per_process import PerProcess

if TYPE_CHECKING:
    from asyncpool.sandbox._languages import CompileResult

#: Default size bound of the compile cache.
CACHE_MAX_BYTES = 512 * 1024 * 1024

_PREFIX = "asyncpool-compile-"
#: The lock file a live cache keeps ``flock``-ed (see the module docstring).
_OWNER = ".owner"


@dataclass
class _Entry:
    path: str
    sha256: str
    size: int
    result: CompileResult


@dataclass
class CompileCache:
    """A private, size-bounded store of compiled artefacts (see the module docstring).

    ``directory`` is created (0700, ``tempfile.mkdtemp``) inside ``parent`` (default: the
    system's temporary directory) on first use and removed at exit. ``compilations`` counts
    compiles this cache asked the jail for, ``hits`` the artefacts it served without one.
    Thread-safe; concurrent requests for the same key compile once.
    """

    max_bytes: int = CACHE_MAX_BYTES
    parent: str | None = None
    compilations: int = 0
    hits: int = 0
    _directory: str | None = None
    _entries: OrderedDict[str, _Entry] = field(default_factory=OrderedDict)
    _size: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _inflight: dict[str, threading.Lock] = field(default_factory=dict)
    _owner_fd: int | None = None

    @property
    def directory(self) -> str:
        with self._lock:
            return self._dir()

    def _dir(self) -> str:
        if self._directory is None:
            parent = self.parent if self.parent is not None else tempfile.gettempdir()
            remove_abandoned(parent)
            directory = tempfile.mkdtemp(prefix=_PREFIX, dir=parent)
            os.chmod(directory, 0o700)
            self._owner_fd = _hold(directory)
            atexit.register(shutil.rmtree, directory, True)
            self._directory = directory
        return self._directory

    @property
    def size(self) -> int:
        return self._size

    def key_lock(self, key: str) -> threading.Lock:
        with self._lock:
            return self._inflight.setdefault(key, threading.Lock())

    def get(self, key: str) -> tuple[bytes, CompileResult] | None:
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                return None
            self._entries.move_to_end(key)
        try:
            with open(entry.path, "rb") as fh:
                data = fh.read(entry.size + 1)
        except OSError:
            data = b""
        if len(data) != entry.size or hashlib.sha256(data).hexdigest() != entry.sha256:
            self._drop(key)  # changed or gone under us: never run it, compile again
            return None
        with self._lock:
            self.hits += 1
        return data, entry.result

    def put(self, key: str, data: bytes, result: CompileResult) -> None:
        if len(data) > self.max_bytes:
            return
        with self._lock:
            path = os.path.join(self._dir(), key)
            fd = os.open(
                path + ".part", os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600
            )
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.replace(path + ".part", path)
            old = self._entries.pop(key, None)
            if old is not None:
                self._size -= old.size
            self._entries[key] = _Entry(path, hashlib.sha256(data).hexdigest(), len(data), result)
            self._size += len(data)
            while self._size > self.max_bytes and self._entries:
                _, evicted = self._entries.popitem(last=False)
                self._size -= evicted.size
                with contextlib.suppress(OSError):
                    os.unlink(evicted.path)

    def _drop(self, key: str) -> None:
        with self._lock:
            entry = self._entries.pop(key, None)
            if entry is not None:
                self._size -= entry.size
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)


def _hold(directory: str) -> int:
    """Create ``directory``'s ``.owner``, locked before it gets its name; the open fd (kept for
    the process's life, close-on-exec so that no program it runs holds it)."""
    temporary = os.path.join(directory, _OWNER + ".new")
    fd = os.open(temporary, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                 0o600)  # fmt: skip
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    os.rename(temporary, os.path.join(directory, _OWNER))
    return fd


def remove_abandoned(parent: str) -> list[str]:
    """Remove the cache directories in ``parent`` whose owner process is gone; their paths.

    Only directories of this uid, named like a cache, not symbolic links, holding an ``.owner``
    whose ``flock`` this call can take (the owner's lock went with it). Never raises for one
    directory it cannot read or remove: it is left for a later sweep.
    """
    removed: list[str] = []
    uid = os.getuid()
    try:
        names = [name for name in os.listdir(parent) if name.startswith(_PREFIX)]
    except OSError:
        return removed
    for name in names:
        path = os.path.join(parent, name)
        try:
            st = os.lstat(path)
            if not stat.S_ISDIR(st.st_mode) or st.st_uid != uid:
                continue
            fd = os.open(os.path.join(path, _OWNER), os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            continue
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                continue  # held: its owner lives
            shutil.rmtree(path, ignore_errors=True)
            if not os.path.lexists(path):
                removed.append(path)
        finally:
            os.close(fd)
    return removed


_CACHE: PerProcess[CompileCache] = PerProcess(CompileCache)


def compile_cache() -> CompileCache:
    """This process's compile cache (a forked child gets a new one: no shared directory)."""
    return _CACHE.get()


def cache_key(language: str, version: str, command: Sequence[str], source: bytes) -> str:
    """sha256 of (language, toolchain version, compile command, source), each length-prefixed."""
    h = hashlib.sha256()
    for part in (language.encode(), version.encode(), "\0".join(command).encode(), source):
        h.update(len(part).to_bytes(8, "little"))
        h.update(part)
    return h.hexdigest()
