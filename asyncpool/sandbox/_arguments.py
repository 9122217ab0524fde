"""The checks of the sandbox's entry points' arguments: a ``TypeError`` or ``ValueError``
before anything runs.
"""

from __future__ import annotations

import math


def _check_str(name: str, value: object) -> None:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, not {type(value).__name__}")


def _validate(program: object, timeout: object, memory_mb: object, name: str = "program") -> None:
    _check_str(name, program)
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)):
        raise TypeError(f"timeout must be a number of seconds, not {type(timeout).__name__}")
    if not (timeout > 0 and math.isfinite(timeout)):
        raise ValueError(f"timeout must be a finite number of seconds > 0, got {timeout!r}")
    if isinstance(memory_mb, bool) or not isinstance(memory_mb, int):
        raise TypeError(f"memory_mb must be an int, not {type(memory_mb).__name__}")
    if memory_mb < 16:
        raise ValueError(f"memory_mb must be >= 16, got {memory_mb!r}")


def _as_bytes(name: str, value: object) -> bytes:
    if isinstance(value, str):
        return value.encode("utf-8", "surrogatepass")
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    raise TypeError(f"{name} must be bytes or a str, not {type(value).__name__}")


def _check_relative_path(name: str, path: object) -> str:
    if not isinstance(path, str):
        raise TypeError(f"{name} must be a str path, not {type(path).__name__}")
    parts = path.split("/")
    if (
        not path
        or path.startswith("/")
        or "\0" in path
        or any(p in ("", ".", "..") for p in parts)
        or len(path.encode("utf-8", "surrogateescape")) > 4000
    ):
        raise ValueError(f"{name} must be a relative path without '.', '..' or '//', got {path!r}")
    return path
