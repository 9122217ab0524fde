"""Shared pieces of the chaos suite: Ray-state leak checks and the fault report."""

from __future__ import annotations

import json
import os
import time
from typing import Any

REPORT = os.environ.get("ASYNCPOOL_CHAOS_REPORT", "")

LIVE_TASK_STATES = ("PENDING_ARGS_AVAIL", "PENDING_NODE_ASSIGNMENT", "SUBMITTED_TO_WORKER",
                    "PENDING_ACTOR_TASK_ARGS_FETCH", "PENDING_ACTOR_TASK_ORDERING_OR_CONCURRENCY",
                    "RUNNING", "RUNNING_IN_RAY_GET", "RUNNING_IN_RAY_WAIT",
                    "PENDING_OBJ_STORE_MEM_AVAIL", "GETTING_AND_PINNING_ARGS")


def _address() -> str:
    """This driver's cluster: with several clusters on the machine, auto-detection fails."""
    import ray

    return str(ray.get_runtime_context().gcs_address)


def live_tasks(name_prefix: str) -> list[Any]:
    """Tasks whose function name starts with ``name_prefix`` and that are not finished."""
    from ray.util.state import list_tasks

    rows = list_tasks(
        address=_address(),
        filters=[("state", "!=", "FINISHED"), ("state", "!=", "FAILED")],
        limit=10_000,
        raise_on_missing_output=False,
    )
    return [r for r in rows if (r.func_or_class_name or r.name or "").startswith(name_prefix)
            and r.state in LIVE_TASK_STATES]


def live_actors(class_name: str) -> list[Any]:
    from ray.util.state import list_actors

    rows = list_actors(address=_address(), filters=[("state", "!=", "DEAD")], limit=10_000,
                       raise_on_missing_output=False)
    return [r for r in rows if r.class_name == class_name]


async def settle(check: Any, timeout: float = 30.0) -> float:
    """Poll ``check()`` (an empty result means settled) off the loop; seconds it took."""
    import asyncio

    start = time.monotonic()
    while True:
        left = await asyncio.to_thread(check)
        if not left:
            return time.monotonic() - start
        if time.monotonic() - start > timeout:
            raise AssertionError(f"still live after {timeout}s: {left[:5]}")
        await asyncio.sleep(0.5)


def report(fault: str, **figures: Any) -> None:
    """Print one row of the fault table; also append it to $ASYNCPOOL_CHAOS_REPORT if set."""
    row = {"fault": fault, **figures}
    print("CHAOS", json.dumps(row))
    if REPORT:
        with open(REPORT, "a") as fh:
            fh.write(json.dumps(row) + "\n")
