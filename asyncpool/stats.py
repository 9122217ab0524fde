"""Pool statistics: a frozen snapshot (:class:`PoolStats`) and the cheap recorder behind it."""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass

__all__ = ["PoolStats"]

#: The sliding window ``per_minute`` is computed over, in seconds.
WINDOW_S = 60.0
#: Finished items are counted in buckets this wide: the window's memory is bounded
#: (``WINDOW_S / BUCKET_S`` buckets) however many items finish, and its edge is exact to this.
BUCKET_S = 0.25
#: How many recent latencies the percentiles are computed from.
LATENCY_SAMPLES = 4096
#: At most this many latencies wait for the metrics reporter between two flushes.
UNREPORTED_LATENCIES = 65536


@dataclass(frozen=True)
class PoolStats:
    """A consistent snapshot of one pool, as anyio's ``statistics()`` objects are.

    Counts are of items (one ``submit``/``call`` or one element of a ``map``):
    ``submitted = completed + failed + in_flight`` at every snapshot, where ``failed``
    includes ``timed_out``. ``retried`` counts re-executions (Ray's own task retries of
    system failures, or an ActorPool call re-sent after its actor died). ``waiting`` is the
    number of callers queued for a slot (not yet submitted: what a server watches to shed
    load). ``per_minute`` is the rate of finished items (completed or failed) over a sliding
    window of the last minute (or since the pool opened, if that is shorter); latencies are in
    seconds, over recent items. ``name`` is the pool's label (``name=``).
    """

    submitted: int = 0
    completed: int = 0
    failed: int = 0
    retried: int = 0
    timed_out: int = 0
    in_flight: int = 0
    waiting: int = 0
    per_minute: float = 0.0
    latency_p50: float = 0.0
    latency_p95: float = 0.0
    latency_p99: float = 0.0
    name: str = ""


def _quantile(ordered: list[float], q: float) -> float:
    if not ordered:
        return 0.0
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


class _Recorder:
    """Mutable counters updated on the event loop thread; O(1) time and bounded memory per event.

    Finished items go into ``BUCKET_S``-wide buckets of a deque that never holds more than
    the window's worth of buckets. With ``keep_unreported`` the latencies are also kept (up to
    ``UNREPORTED_LATENCIES``) for the metrics reporter to take in one batch.
    """

    def __init__(self, name: str = "", *, keep_unreported: bool = False) -> None:
        self.name = name
        self.submitted = 0
        self.completed = 0
        self.failed = 0
        self.retried = 0
        self.timed_out = 0
        self._opened = time.monotonic()
        self._buckets: deque[list[float]] = deque()  # [bucket start, items finished]
        self._latencies: deque[float] = deque(maxlen=LATENCY_SAMPLES)
        self.unreported: deque[float] | None = (
            deque(maxlen=UNREPORTED_LATENCIES) if keep_unreported else None
        )

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
        buckets = self._buckets
        if buckets and now - buckets[-1][0] < BUCKET_S:
            buckets[-1][1] += n
        else:
            buckets.append([now, n])
            self._trim(now)
        self._latencies.append(latency)
        if self.unreported is not None:
            self.unreported.append(latency)

    def on_chunk(self, *, ok: int, failed: int, latency: float) -> None:
        """A chunk's items (a TaskPool chunk, an ActorPool batch), booked at once: ``ok``
        completed and ``failed`` failed, all with the chunk's latency."""
        if ok:
            self.on_finish(ok=True, latency=latency, n=ok)
        if failed:
            self.on_finish(ok=False, latency=latency, n=failed)

    def on_retry(self, n: int = 1) -> None:
        self.retried += n

    def _trim(self, now: float) -> None:
        cutoff = now - WINDOW_S
        buckets = self._buckets
        while buckets and buckets[0][0] < cutoff:
            buckets.popleft()

    def snapshot(self, *, waiting: int = 0) -> PoolStats:
        now = time.monotonic()
        self._trim(now)
        span = min(WINDOW_S, max(now - self._opened, 1e-9))
        finished = sum(n for _, n in self._buckets)
        ordered = sorted(self._latencies)
        return PoolStats(
            submitted=self.submitted,
            completed=self.completed,
            failed=self.failed,
            retried=self.retried,
            timed_out=self.timed_out,
            in_flight=self.submitted - self.completed - self.failed,
            waiting=waiting,
            per_minute=finished * 60.0 / span,
            latency_p50=_quantile(ordered, 0.50),
            latency_p95=_quantile(ordered, 0.95),
            latency_p99=_quantile(ordered, 0.99),
            name=self.name,
        )
