"""The one function the server's :class:`~asyncpool.TaskPool` runs in Ray workers.

Both protocols share one pool (one bound on verifications in flight, one queue), so the work
is named by ``kind``. The server batches requests through one ``pool.map``
(:mod:`._batcher`), whose items are ``(seq, kind, job)``: :func:`run_item` runs one and echoes
``seq`` beside the verdict, so the server can check each verdict reaches its own request.
Workers import only this module, the protocol modules and the sandbox: nothing of FastAPI.
"""

from __future__ import annotations

import os
from typing import Any, Literal

__all__ = ["WORKER_NICE", "run_item", "run_job"]

#: The nice value verification runs at in a Ray worker (Ray's own default for workers is 15;
#: a cluster started otherwise may run them at 0). The sandboxed programs inherit it.
WORKER_NICE = 15

_lowered = False


def _lower_priority() -> None:
    """Run this worker thread (and the sandbox fork server it starts) at :data:`WORKER_NICE`.

    Nice values count within a scheduling autogroup (Linux gives each session one): when Ray
    runs in the server's own session (an embedded cluster), this keeps verification below the
    server's event loop. Raising one's own nice value needs no privilege; lowering never
    happens here.
    """
    global _lowered
    if _lowered:
        return
    _lowered = True
    try:
        current = os.getpriority(os.PRIO_PROCESS, 0)
        if current < WORKER_NICE:
            os.setpriority(os.PRIO_PROCESS, 0, WORKER_NICE)
    except OSError:  # pragma: no cover - a platform without it
        pass


def run_job(kind: Literal["run_code", "verify"], job: Any) -> dict[str, Any]:
    """Runs in a Ray worker: one ``/run_code`` program or one ``/verify`` task."""
    _lower_priority()
    if kind == "run_code":
        from .sandboxfusion import execute

        return execute(job)
    if kind == "verify":
        from .nemo_gym import execute as verify

        return verify(job)
    raise ValueError(f"unknown job kind {kind!r}")


def run_item(item: tuple[int, Literal["run_code", "verify"], Any]) -> tuple[int, dict[str, Any]]:
    """Runs in a Ray worker: one item of the server's map, ``(seq, kind, job)`` ->
    ``(seq, outcome)``. An exception fails this item only, not the rest of its batch."""
    seq, kind, job = item
    return seq, run_job(kind, job)
