"""The engine's slots: a FIFO counting limit whose waiters cost one future each.

Written by hand instead of using :class:`anyio.CapacityLimiter` (which the engine used before)
because of what a *queued* caller costs there. anyio's asyncio limiter keeps, for each waiter,
an :class:`asyncio.Event` (with its own deque and future), an entry in an ordered dict, two
coroutines of its own, and the ``WouldBlock`` it raised with its traceback, alive for the whole
wait: about 20 objects the cyclic garbage collector tracks per queued ``submit`` (measured:
20.8 per caller with 10,000 queued). With 100,000 queued callers every full collection walks
two million objects, which showed as 600 ms event-loop stalls in ``bench_scale`` and as twice
the collections of the ``asyncio.Semaphore`` baseline. Here a waiter is one future in a deque
(``asyncio.Semaphore``'s own design) and the caller's coroutine.

What is kept of the limiter's contract: FIFO (a free slot is not taken past a queued caller),
borrower tokens (releasing a token that is not held is an error), a settable total (an
elastic pool grows and shrinks it; lowering it below what is held takes nothing back), and
cancellation that never loses a slot (a caller cancelled just after being handed a slot gives
it straight back). Added: :meth:`Slots.fail`, which makes every queued caller raise at once
(the pool closing, or an actor pool with no actor that can start).
"""

from __future__ import annotations

import asyncio
import math
from collections import deque
from collections.abc import Callable


class Slots:
    """``total`` slots, handed out in arrival order, each as a token to give back once."""

    __slots__ = ("_held", "_loop", "_total", "_waiters", "_waiting")

    def __init__(self, total: float, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._total = self._checked(total)
        self._held: set[object] = set()
        self._waiters: deque[asyncio.Future[object]] = deque()
        self._waiting = 0  # the futures in ``_waiters`` not yet done (cancelled ones linger)

    @staticmethod
    def _checked(total: float) -> float:
        if not (total >= 0 and (math.isinf(total) or total == int(total))):
            raise ValueError(f"total must be a whole number >= 0 or math.inf, got {total!r}")
        return total

    @property
    def total(self) -> float:
        return self._total

    @total.setter
    def total(self, total: float) -> None:
        self._total = self._checked(total)
        self._grant()

    @property
    def borrowed(self) -> int:
        """Slots held now."""
        return len(self._held)

    @property
    def waiting(self) -> int:
        """Callers queued for a slot."""
        return self._waiting

    def free(self) -> bool:
        """Whether :meth:`take` would get a slot now, without waiting."""
        return not self._waiting and len(self._held) < self._total

    def take_nowait(self) -> object | None:
        """A slot's token if one is free and nobody is queued before us, else ``None``."""
        if not self.free():
            return None
        token = object()
        self._held.add(token)
        return token

    async def take(self) -> object:
        """A slot's token, waiting in line for it.

        Cancellation: no slot is taken (one handed over in the same instant is given back).
        Raises what :meth:`fail` says when it is called while waiting.
        """
        token = self.take_nowait()
        if token is not None:
            return token
        fut: asyncio.Future[object] = self._loop.create_future()
        self._waiters.append(fut)
        self._waiting += 1
        try:
            return await fut
        except asyncio.CancelledError:
            if not fut.done():
                fut.cancel()
            if fut.cancelled():
                self._waiting -= 1
            elif fut.exception() is None:  # a slot was handed over as we were cancelled
                self.release(fut.result())
            raise

    def release(self, token: object) -> None:
        """Give back the slot ``token`` stands for (a ``RuntimeError`` if it is not held)."""
        try:
            self._held.remove(token)
        except KeyError:
            raise RuntimeError("this token does not hold a slot") from None
        self._grant()

    def fail(self, make_error: Callable[[], BaseException]) -> None:
        """Every caller queued now raises ``make_error()``; later callers queue again."""
        waiters, self._waiters = self._waiters, deque()
        self._waiting = 0
        for fut in waiters:
            if not fut.done():
                fut.set_exception(make_error())

    def _grant(self) -> None:
        while self._waiters and len(self._held) < self._total:
            fut = self._waiters.popleft()
            if fut.done():  # cancelled while queued
                continue
            token = object()
            self._held.add(token)
            self._waiting -= 1
            fut.set_result(token)
