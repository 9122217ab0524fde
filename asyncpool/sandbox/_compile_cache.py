"""The compile cache of :mod:`asyncpool.sandbox._languages`: compiled artefacts by key.

Owns: a private, size-bounded directory of artefacts (created 0700 by ``tempfile.mkdtemp`` on
first use, least recently used out, removed at exit), its in-memory index (name, sha256, size,
the compile's result) and the key (:func:`cache_key`). An artefact whose bytes no longer match
its sha256 is dropped, never returned. One cache per process (:class:`~asyncpool._per_process.
PerProcess`: a forked child starts with none, so it never shares its parent's directory).

Must not: compile or run anything (``_languages`` does, in the jail), nor parse an artefact.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import os
import shutil
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

    @property
    def directory(self) -> str:
        with self._lock:
            return self._dir()

    def _dir(self) -> str:
        if self._directory is None:
            self._directory = tempfile.mkdtemp(prefix="asyncpool-compile-", dir=self.parent)
            os.chmod(self._directory, 0o700)
            atexit.register(shutil.rmtree, self._directory, True)
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
