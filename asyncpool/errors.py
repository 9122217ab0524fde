"""The one exception tree of asyncpool.

::

    AsyncPoolError                 base of everything asyncpool raises on purpose
    ├── ClusterStateError          (also RuntimeError) a VirtualCluster used in the wrong state
    ├── PoolClosedError            (also RuntimeError) a pool used while not open
    ├── ResourceInsufficientError  no layout of the cluster could ever hold the request
    ├── PlacementTimeoutError      (also TimeoutError) a feasible request stayed busy too long
    ├── TaskTimeoutError           (also TimeoutError) a Ray task ran too long; it was cancelled
    └── WorkerFailedError          an actor/worker died; the Ray error is ``__cause__``

Bad arguments are plain ``TypeError`` / ``ValueError``, raised before anything is submitted.
A user function's own exception is re-raised as its own type (Ray's ``as_instanceof_cause``),
never wrapped in one of these.
"""

from __future__ import annotations

__all__ = [
    "AsyncPoolError",
    "ClusterStateError",
    "PoolClosedError",
    "PlacementTimeoutError",
    "ResourceInsufficientError",
    "TaskTimeoutError",
    "WorkerFailedError",
]


class AsyncPoolError(Exception):
    """Base class of every error asyncpool raises on purpose."""


class ClusterStateError(AsyncPoolError, RuntimeError):
    """A :class:`VirtualCluster` was used in a state that does not allow it.

    For example opened twice, reopened after it was closed, or asked for its placement groups
    before it was opened.
    """


class PoolClosedError(AsyncPoolError, RuntimeError):
    """A pool (TaskPool, ActorPool) used while it is not open: not entered yet, or closed.

    A pool opens once; make a new one instead of reopening a closed one.
    """


class ResourceInsufficientError(AsyncPoolError):
    """The request can never be satisfied by this cluster, whatever else is running.

    The message names the requested and the available figures.
    """


class PlacementTimeoutError(AsyncPoolError, TimeoutError):
    """A feasible placement request was still pending when its timeout ran out.

    The pending placement group has been removed before this is raised.
    """


class TaskTimeoutError(AsyncPoolError, TimeoutError):
    """A Ray task did not finish within its timeout; it has been cancelled."""


class WorkerFailedError(AsyncPoolError):
    """A worker (Ray actor) died while it held our work.

    ``rank``, ``name`` and ``node_id`` say which one, where known; the Ray error is the
    ``__cause__``.
    """

    def __init__(
        self,
        message: str = "",
        *,
        rank: int | None = None,
        name: str | None = None,
        node_id: str | None = None,
    ) -> None:
        self.rank = rank
        self.name = name
        self.node_id = node_id
        if not message:
            message = f"worker failed (rank={rank}, name={name!r}, node_id={node_id})"
        super().__init__(message)

    def __reduce__(self) -> tuple[object, ...]:
        return (_rebuild_worker_failed, (str(self), self.rank, self.name, self.node_id))


def _rebuild_worker_failed(
    message: str, rank: int | None, name: str | None, node_id: str | None
) -> WorkerFailedError:
    return WorkerFailedError(message, rank=rank, name=name, node_id=node_id)
