"""A Ray actor whose calls finish only when the test says so.

Tests that must observe something *while* Ray work is still pending hold that work at a gate
instead of making it slow: "slow enough" is a timing assumption a loaded machine breaks.
"""

from __future__ import annotations

import asyncio

import ray


@ray.remote(num_cpus=0)
class Gate:
    """Calls that finish when their key is opened (an async actor: they wait concurrently)."""

    def __init__(self) -> None:
        self._events: dict[str, asyncio.Event] = {}

    def _event(self, key: str) -> asyncio.Event:
        return self._events.setdefault(key, asyncio.Event())

    async def hold(self, key: str, value: object) -> object:
        await self._event(key).wait()
        return value

    async def open(self, *keys: str) -> None:
        for key in keys:
            self._event(key).set()
