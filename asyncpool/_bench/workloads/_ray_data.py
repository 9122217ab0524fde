"""Ray Data as the bench runs it: its progress bars and per-execution logs off (the harness
draws its own bar and prints its own table), and its detached helper actors stopped when the
workload that used it ends; nothing about how it executes changes."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import ray

#: The detached actors Ray Data (2.60) starts on first use and never stops: its stats actor
#: (``ray.data._internal.stats``), actor-location tracker
#: (``..._internal.execution.node_trackers.actor_location``) and autoscaling coordinator
#: (``..._internal.cluster_autoscaler.default_autoscaling_coordinator``), as (name, namespace).
#: Each is got-or-created by name on every use, so a later execution starts it again.
RAY_DATA_ACTORS: tuple[tuple[str, str], ...] = (
    ("datasets_stats_actor", "_dataset_stats_actor"),
    ("ActorLocationTracker", "ActorLocationTracker"),
    ("AutoscalingCoordinator", "AutoscalingCoordinator"),
)


def quiet_ray_data() -> None:
    """Turn off Ray Data's progress bars and its per-execution log lines in this driver."""
    import ray.data

    # Ray Data logs a warning when its bars are turned off; only errors are news here.
    logging.getLogger("ray.data").setLevel(logging.ERROR)
    ctx = ray.data.DataContext.get_current()
    ctx.enable_progress_bars = False
    ctx.enable_operator_progress_bars = False
    ctx.print_on_execution_start = False


def _alive() -> Iterator[tuple[str, Any]]:
    """``(name, handle)`` of each of :data:`RAY_DATA_ACTORS` alive in the cluster now."""
    for name, namespace in RAY_DATA_ACTORS:
        try:
            yield name, ray.get_actor(name, namespace=namespace)
        except ValueError:  # never started, or already gone
            continue


def ray_data_actors() -> frozenset[str]:
    """The names of :data:`RAY_DATA_ACTORS` alive in the cluster now."""
    return frozenset(name for name, _ in _alive())


def stop_ray_data_actors(keep: frozenset[str] = frozenset()) -> list[str]:
    """Kill Ray Data's detached helper actors (:data:`RAY_DATA_ACTORS`) that are alive, but
    those named in ``keep``; return the names of those killed.

    A workload that runs Ray Data (:func:`ray_data_session`) notes which were alive when it
    started and calls this with them when it ends, so that the next workload starts without
    what this one started (each workload starts from a quiet cluster) while a cluster's own,
    started before the bench (``--address``: another driver's Ray Data may be using them), is
    left alone. Idle, the three used 0.14-0.16 of a core together on a 2-core machine (the
    bench's "before judge" lines: 0.18-0.20 cores with them, 0.04 before the first workload).
    """
    killed = []
    for name, handle in _alive():
        if name not in keep:
            ray.kill(handle)
            killed.append(name)
    return killed


@asynccontextmanager
async def ray_data_session() -> AsyncIterator[None]:
    """A workload's use of Ray Data: quiet (:func:`quiet_ray_data`), and on the way out, its
    helper actors that were not alive on the way in stopped (:func:`stop_ray_data_actors`).
    Cancellation: the actors are still stopped (off the loop, in a thread)."""
    quiet_ray_data()
    before = await asyncio.to_thread(ray_data_actors)
    try:
        yield
    finally:
        await asyncio.to_thread(stop_ray_data_actors, before)
