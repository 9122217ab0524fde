"""Typed stand-ins for the parts of Ray's stubs that mistype what the tests do.

``@ray.remote`` picks its result type by matching the function against ``Callable[[], R]``,
``Callable[[T0], R]``, ... in that order, so a function with defaulted parameters matches
the overload for its *required* ones only: ``sleepy(value, seconds=0.0)`` becomes a
``RemoteFunction0`` whose ``.remote`` takes one argument, and ``sleepy.remote(1, 0.5)`` is
an error to mypy. :func:`remote_task` is ``ray.remote(**options)`` typed with the
function's own signature instead.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ParamSpec, Protocol, TypeVar, cast

import ray

P = ParamSpec("P")
R = TypeVar("R")


class RemoteTask(Protocol[P, R]):
    """A ``@ray.remote`` function whose ``.remote`` takes the function's own parameters."""

    def remote(self, *args: P.args, **kwargs: P.kwargs) -> ray.ObjectRef[R]: ...


def remote_task(**options: Any) -> Callable[[Callable[P, R]], RemoteTask[P, R]]:
    """``@ray.remote(**options)``, the same remote function at run time, typed by ``P``/``R``.

    Ray resolves an ``ObjectRef`` passed as an argument before the call; a parameter that
    receives one is annotated ``object`` (as the tests' ``sleepy`` does with ``after``).
    """

    def decorate(function: Callable[P, R]) -> RemoteTask[P, R]:
        return cast("RemoteTask[P, R]", ray.remote(**options)(function))

    return decorate
