"""The per-test timeout for async tests, on both loops.

pytest-timeout's default ``signal`` method raises its failure from a ``SIGALRM`` handler. On the
standard asyncio loop that exception leaves ``select()`` and ends the test. On uvloop the handler
runs inside one of libuv's callbacks, and uvloop catches the exception there: the test goes on
waiting, and a hung test hangs the whole run. CI run 118 sat in
``test_cancelled_opening_leaves_no_group_and_can_be_retried[uvloop]`` until the job's limit.
Seen by hand (not a test: it would hang): without the guard, a 3 s timeout ends such a test
on asyncio and not on uvloop, where it awaits an event nobody sets until it is killed.
``test_hang_guard`` shows the guard ends it on both loops.

The guard wraps each async test in :func:`asyncio.timeout`, which cancels the test's task
through the loop itself and so works on every loop. It fires a little before pytest-timeout's
own alarm (which still guards synchronous code and fixtures) and fails the test with the stack
of the ``await`` it was stuck in. It reads the same settings as pytest-timeout (the ``timeout``
marker, ``--timeout``, ``PYTEST_TIMEOUT``, the ini value), so there is one bound per test.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
from collections.abc import Callable, Coroutine
from typing import Any

import pytest


def item_timeout(item: pytest.Item) -> float | None:
    """The per-test timeout pytest-timeout applies to ``item``, in seconds (None: none)."""
    import pytest_timeout

    marker = item.get_closest_marker("timeout")
    if marker is not None:
        value = marker.args[0] if marker.args else marker.kwargs.get("timeout")
        if value is not None:
            return float(value)
    value = pytest_timeout.get_env_settings(item.config).timeout
    return None if value is None else float(value)


def guard_lead(timeout: float) -> float:
    """How long before pytest-timeout's alarm the guard fires: a tenth, at most 5 s."""
    return min(5.0, timeout / 10)


def guarded(
    test: Callable[..., Coroutine[Any, Any, Any]], timeout: float
) -> Callable[..., Coroutine[Any, Any, Any]]:
    """``test``, failed (not left hanging) when it runs longer than ``timeout`` seconds.

    Only the guard's own expiry becomes the failure: a ``TimeoutError`` the test raises or
    expects itself passes through unchanged.
    """
    budget = timeout - guard_lead(timeout)

    @functools.wraps(test)
    async def guard(*args: Any, **kwargs: Any) -> Any:
        deadline = asyncio.timeout(budget)
        try:
            async with deadline:
                return await test(*args, **kwargs)
        except TimeoutError:
            if deadline.expired():
                pytest.fail(
                    f"async test timed out after {budget:g} s (the hang guard, "
                    f"{guard_lead(timeout):g} s before the {timeout:g} s per-test timeout); "
                    "the await it was stuck in is in the traceback above"
                )
            raise

    return guard


def install(items: list[pytest.Item]) -> None:
    """Wrap every coroutine test among ``items`` in :func:`guarded`."""
    for item in items:
        if not isinstance(item, pytest.Function) or item.get_closest_marker("asyncio") is None:
            continue
        test = item.obj
        if not inspect.iscoroutinefunction(test):
            continue
        timeout = item_timeout(item)
        if timeout is not None and timeout > 0:
            item.obj = guarded(test, timeout)
