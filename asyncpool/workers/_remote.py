"""The worker-side half of string workers, and the class inspection both sides share.

Owns what must run inside a worker's own ``runtime_env`` for ``worker_cls="package.module.Class"``:
importing the class (:func:`load`), describing it (:func:`describe`: its methods, whether any
is ``async``, its ``configure_worker`` results) and hosting an instance
(:class:`AsyncpoolHost`, :class:`AsyncpoolAsyncHost`). :func:`hook_of` and
:func:`public_methods` are the one definition of "the hook" and "the methods" of a worker
class, used by the driver for a class it holds and by :func:`describe` for one it cannot
import.

Must not: import anything of asyncpool, or anything beyond the standard library. The module is
registered with cloudpickle to be shipped *by value* (:func:`remote_helpers`), so a worker
needs nothing of asyncpool installed, only the user's class.
"""

from __future__ import annotations

import importlib
import inspect
from typing import Any

__all__ = ["AsyncpoolAsyncHost", "AsyncpoolHost", "describe", "hook_of", "load", "public_methods"]


def hook_of(cls: type) -> Any:
    """The ``configure_worker`` hook of ``cls`` (a static/classmethod), or ``None``.

    ``TypeError`` when it is a plain method: it is called on the class, before any worker
    exists.
    """
    for klass in cls.__mro__:
        raw = klass.__dict__.get("configure_worker")
        if raw is None:
            continue
        if not isinstance(raw, staticmethod | classmethod):
            raise TypeError(
                f"{cls.__name__}.configure_worker must be a staticmethod or classmethod "
                "(it is called on the class, before any worker exists)"
            )
        return cls.configure_worker  # type: ignore[attr-defined]
    return None


def public_methods(cls: type) -> list[str]:
    """The callable attributes of ``cls`` a dispatch may name (dunder names excluded)."""
    return sorted(
        name
        for name in dir(cls)
        if not (name.startswith("__") and name.endswith("__"))
        and callable(getattr(cls, name, None))
    )


def load(path: str) -> type:
    """Import ``"package.module.Class"`` (or ``"package.module:Class"``); unwrap ``@ray.remote``."""
    if ":" in path:
        module_name, _, qual = path.partition(":")
    else:
        module_name, _, qual = path.rpartition(".")
    obj: Any = importlib.import_module(module_name)
    for part in qual.split("."):
        obj = getattr(obj, part)
    meta = getattr(obj, "__ray_metadata__", None)  # an @ray.remote class
    if meta is not None:
        obj = meta.modified_class
    if not isinstance(obj, type):
        raise TypeError(f"{path} is a {type(obj).__name__}, not a class")
    return obj


def describe(path: str, calls: list[tuple[float, Any]]) -> dict[str, Any]:
    """What the driver needs of a class it cannot import: name, methods, async-ness, and the
    results of its ``configure_worker`` hook for each ``(num_gpus, bundle_indices)``."""
    cls = load(path)
    methods = public_methods(cls)
    is_async = any(
        inspect.iscoroutinefunction(getattr(cls, n)) or inspect.isasyncgenfunction(getattr(cls, n))
        for n in methods
    )
    hook = hook_of(cls)
    results = None if hook is None else [hook(num_gpus=g, bundle_indices=b) for g, b in calls]
    return {"name": cls.__qualname__, "methods": methods, "is_async": is_async, "hook": results}


class AsyncpoolHost:
    """Hosts an instance of a class imported inside the worker (sync methods)."""

    def __init__(self, _asyncpool_path: str, *args: Any, **kwargs: Any) -> None:
        self._obj = load(_asyncpool_path)(*args, **kwargs)

    def call(self, _asyncpool_method: str, *args: Any, **kwargs: Any) -> Any:
        return getattr(self._obj, _asyncpool_method)(*args, **kwargs)


class AsyncpoolAsyncHost:
    """Hosts an instance of a class with ``async def`` methods, and awaits them."""

    def __init__(self, _asyncpool_path: str, *args: Any, **kwargs: Any) -> None:
        self._obj = load(_asyncpool_path)(*args, **kwargs)

    async def call(self, _asyncpool_method: str, *args: Any, **kwargs: Any) -> Any:
        result = getattr(self._obj, _asyncpool_method)(*args, **kwargs)
        if inspect.isawaitable(result):
            result = await result
        return result
