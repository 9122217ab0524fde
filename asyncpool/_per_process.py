"""One lazily built object per process, rebuilt in a forked child.

The completion core and the canceller each own a helper thread; a forked child inherits the
objects but not their threads, so it must build its own. This module owns only that: building
once under a lock, and forgetting the parent's object after ``fork``. Hand-written because
neither the standard library nor anyio has a fork-aware lazy singleton.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")

__all__ = ["PerProcess"]


class PerProcess(Generic[T]):
    """``get()`` builds the object on first use (once, whatever the threads); ``peek()`` never
    builds. After ``fork`` the child starts with none."""

    def __init__(self, factory: Callable[[], T]) -> None:
        self._factory = factory
        self._value: T | None = None
        self._lock = threading.Lock()
        os.register_at_fork(after_in_child=self._forget)

    def get(self) -> T:
        value = self._value
        if value is None:
            with self._lock:
                if self._value is None:
                    self._value = self._factory()
                value = self._value
        return value

    def peek(self) -> T | None:
        return self._value

    def _forget(self) -> None:
        self._value = None
        self._lock = threading.Lock()
