"""Run coroutines side by side; the first error cancels the rest and is raised as it is.

The one place asyncpool says "do these at once, all or nothing" (allocating the placement
groups of a VirtualCluster, creating the actors of a WorkerGroup, the independent look-ups
before them). It is an anyio task group with one difference that callers rely on: the first
``Exception`` is raised as its own type, not wrapped in an ``ExceptionGroup``, so that a
``ResourceInsufficientError`` or a ``ValueError`` reaches the user unchanged. Later errors
(siblings failing while they are cancelled) are dropped: they are consequences of the first.

Must not: hold state, know about Ray, or swallow a cancellation of the caller (a
``BaseException`` that is not an ``Exception`` propagates through the task group as usual).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import Any

import anyio
import anyio.abc

__all__ = ["side_by_side"]


async def side_by_side(fns: Iterable[Callable[[], Awaitable[Any]]]) -> None:
    """Await every ``fn()`` concurrently; on the first failure cancel the others and raise it.

    Returns when all have finished. Cancellation: cancelling the caller cancels every ``fn``
    (each cleans up after itself, as anyio's cancel scopes allow); nothing is left running.
    """
    first: list[Exception] = []

    async def run(fn: Callable[[], Awaitable[Any]], tg: anyio.abc.TaskGroup) -> None:
        try:
            await fn()
        except Exception as exc:
            if not first:
                first.append(exc)
            tg.cancel_scope.cancel()

    async with anyio.create_task_group() as tg:
        for fn in fns:
            tg.start_soon(run, fn, tg)
    if first:
        raise first[0]
