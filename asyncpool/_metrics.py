"""Pool statistics reported through Ray's metrics (``ray.util.metrics``), in batches.

A cluster's Prometheus (and Ray's dashboard) then shows every pool of every driver, tagged by
the pool's ``name``. Nothing is sent per item: the pool's recorder is read every
``FLUSH_S`` seconds (and once more when the pool closes) and the differences since the last
flush are added to the counters; the latencies collected meanwhile go to the histogram in the
same flush. The metric objects are made once per process and shared by every pool.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .stats import _Recorder

#: Seconds between two flushes of a pool's statistics to Ray's metrics.
FLUSH_S = 1.0
#: Latency histogram boundaries, in seconds.
LATENCY_BOUNDARIES = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
                      30.0, 60.0, 300.0]
COUNTERS = ("submitted", "completed", "failed", "retried", "timed_out")
GAUGES = ("in_flight", "waiting")
PREFIX = "asyncpool_pool_"


@dataclass
class _Instruments:
    counters: dict[str, Any]
    gauges: dict[str, Any]
    latency: Any


_instruments: _Instruments | None = None


def _get_instruments() -> _Instruments:
    """The process's metric objects (Ray registers a metric name once per process)."""
    global _instruments
    if _instruments is None:
        from ray.util.metrics import Counter, Gauge, Histogram

        tags = ("pool",)
        _instruments = _Instruments(
            counters={
                key: Counter(f"{PREFIX}{key}", f"asyncpool pool items {key}", tag_keys=tags)
                for key in COUNTERS
            },
            gauges={
                key: Gauge(f"{PREFIX}{key}", f"asyncpool pool items {key} now", tag_keys=tags)
                for key in GAUGES
            },
            latency=Histogram(
                f"{PREFIX}latency_seconds",
                "asyncpool pool item latency (submission to result), seconds",
                boundaries=LATENCY_BOUNDARIES,
                tag_keys=tags,
            ),
        )
    return _instruments


class _Reporter:
    """Flushes one pool's :class:`_Recorder` to Ray's metrics every ``FLUSH_S`` on its loop.

    ``sent`` holds what was reported so far (counter totals, the last gauge values and the
    number of latencies observed): the figures Prometheus will show, for tests and ``/stats``.
    """

    def __init__(
        self,
        recorder: _Recorder,
        *,
        waiting: Callable[[], int],
        loop: asyncio.AbstractEventLoop,
    ) -> None:
        self._recorder = recorder
        self._waiting = waiting
        self._loop = loop
        self._tags = {"pool": recorder.name}
        self._instruments = _get_instruments()
        self.sent: dict[str, float] = dict.fromkeys((*COUNTERS, *GAUGES, "latencies"), 0)
        self._timer: asyncio.TimerHandle | None = loop.call_later(FLUSH_S, self._tick)

    def _tick(self) -> None:
        self.flush()
        self._timer = self._loop.call_later(FLUSH_S, self._tick)

    def flush(self) -> None:
        """Report what changed since the last flush (a handful of Ray metric calls)."""
        rec = self._recorder
        counters = self._instruments.counters
        for key in COUNTERS:
            now = getattr(rec, key)
            delta = now - self.sent[key]
            if delta > 0:
                counters[key].inc(delta, tags=self._tags)
                self.sent[key] = now
        gauges = {
            "in_flight": rec.submitted - rec.completed - rec.failed,
            "waiting": self._waiting(),
        }
        for key, value in gauges.items():
            self._instruments.gauges[key].set(value, tags=self._tags)
            self.sent[key] = value
        pending = rec.unreported
        if pending:
            observe = self._instruments.latency.observe
            tags = self._tags
            count = len(pending)
            while pending:
                observe(pending.popleft(), tags=tags)
            self.sent["latencies"] += count

    def close(self) -> None:
        """Stop the timer and report the last figures."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self.flush()
