"""Pool statistics: a frozen snapshot (:class:`PoolStats`) and the cheap recorder behind it."""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass

__all__ = ["PoolStats"]

#: The sliding window ``per_minute`` is computed over, in seconds.
WINDOW_S = 60.0
#: How many recent latencies the percentiles are computed from.
LATENCY_SAMPLES = 4096


@dataclass(frozen=True)
class PoolStats:
    """A consistent snapshot of one pool, as anyio's ``statistics()`` objects are.

    Counts are of items (one ``submit``/``call`` or one element of a ``map``):
    ``submitted = completed + failed + in_flight`` at every snapshot, where ``failed``
    includes ``timed_out``. ``retried`` counts re-executions (Ray's own task retries of
    system failures, or an ActorPool call re-sent after its actor died). ``per_minute`` is
    the rate of finished items (completed or failed) over the last minute (or since the
    pool opened, if that is shorter); latencies are in seconds, over recent items.
    """

    submitted: int = 0
    completed: int = 0
    failed: int = 0
    retried: int = 0
    timed_out: int = 0
    in_flight: int = 0
    per_minute: float = 0.0
    latency_p50: float = 0.0
    latency_p95: float = 0.0
    latency_p99: float = 0.0


def _quantile(ordered: list[float], q: float) -> float:
    if not ordered:
        return 0.0
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


class _Recorder:
    """Mutable counters updated on the event loop thread; O(1) per event."""

    def __init__(self) -> None:
        self.submitted = 0
        self.completed = 0
        self.failed = 0
        self.retried = 0
        self.timed_out = 0
        self._opened = time.monotonic()
        self._finished_at: deque[tuple[float, int]] = deque()
        self._latencies: deque[float] = deque(maxlen=LATENCY_SAMPLES)

    def on_submit(self, n: int = 1) -> None:
        self.submitted += n

    def on_finish(self, *, ok: bool, latency: float, n: int = 1, timed_out: bool = False) -> None:
        if ok:
            self.completed += n
        else:
            self.failed += n
            if timed_out:
                self.timed_out += n
        now = time.monotonic()
        self._finished_at.append((now, n))
        self._latencies.append(latency)
        self._trim(now)

    def on_retry(self, n: int = 1) -> None:
        self.retried += n

    def _trim(self, now: float) -> None:
        cutoff = now - WINDOW_S
        while self._finished_at and self._finished_at[0][0] < cutoff:
            self._finished_at.popleft()

    def snapshot(self) -> PoolStats:
        now = time.monotonic()
        self._trim(now)
        span = min(WINDOW_S, max(now - self._opened, 1e-9))
        finished = sum(n for _, n in self._finished_at)
        ordered = sorted(self._latencies)
        return PoolStats(
            submitted=self.submitted,
            completed=self.completed,
            failed=self.failed,
            retried=self.retried,
            timed_out=self.timed_out,
            in_flight=self.submitted - self.completed - self.failed,
            per_minute=finished * 60.0 / span,
            latency_p50=_quantile(ordered, 0.50),
            latency_p95=_quantile(ordered, 0.95),
            latency_p99=_quantile(ordered, 0.99),
        )
