"""The Prometheus metrics of one ``asyncpool serve`` process (prometheus-client).

Each app has its own registry (two apps in one process never share counters). Served as
Prometheus text at ``GET /metrics``; the gauges are read from the pool at scrape time.
"""

from __future__ import annotations

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)

from asyncpool.stats import PoolStats

__all__ = ["CONTENT_TYPE_LATEST", "ServerMetrics"]

#: Latency buckets (seconds): a fork-speed verification is a few ms; a queued one under load
#: seconds; a slow test suite up to minutes.
_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300)


class ServerMetrics:
    """Counters of requests by route and outcome, verification latency, pool gauges."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.requests = Counter(
            "asyncpool_serve_requests",
            "HTTP requests answered, by route and outcome (ok, rejected = 4xx, "
            "overloaded = 503 at admission, error = the verification could not run, "
            "cancelled = the client left first)",
            ["route", "outcome"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "asyncpool_serve_verification_seconds",
            "Time from admission to verdict of each verification (queueing included)",
            ["route"],
            buckets=_BUCKETS,
            registry=self.registry,
        )
        self.timeouts = Counter(
            "asyncpool_serve_timeouts",
            "Verifications whose program hit its time limit",
            ["route"],
            registry=self.registry,
        )
        self.pending = Gauge(
            "asyncpool_serve_pending",
            "Verifications admitted and not finished",
            registry=self.registry,
        )
        self.in_flight = Gauge(
            "asyncpool_serve_pool_in_flight",
            "Verifications inside the pool's Ray tasks now (a task carries up to batch_size)",
            registry=self.registry,
        )
        self.waiting = Gauge(
            "asyncpool_serve_queue_depth",
            "Verifications admitted and not yet inside a Ray task",
            registry=self.registry,
        )
        self.max_in_flight = Gauge(
            "asyncpool_serve_pool_max_in_flight",
            "The verification pool's bound on Ray tasks (batches) at once",
            registry=self.registry,
        )
        self.pool_completed = Gauge(
            "asyncpool_serve_pool_completed",
            "Items the pool completed since it opened",
            registry=self.registry,
        )
        self.pool_failed = Gauge(
            "asyncpool_serve_pool_failed",
            "Items the pool failed (errors, cancellations, timeouts) since it opened",
            registry=self.registry,
        )

    def render(
        self, pending: int, stats: PoolStats | None, max_in_flight: int, queue_depth: int
    ) -> bytes:
        """The Prometheus text exposition, with the gauges read now."""
        self.pending.set(pending)
        self.in_flight.set(stats.in_flight if stats is not None else 0)
        self.waiting.set(queue_depth)
        self.max_in_flight.set(max_in_flight)
        if stats is not None:
            self.pool_completed.set(stats.completed)
            self.pool_failed.set(stats.failed)
        return generate_latest(self.registry)
