"""The one exception tree of asyncpool.

::

    AsyncPoolError                 base of everything asyncpool raises on purpose
    ├── ResourceStateError         (also RuntimeError) a resource used in a state that forbids it
    │   ├── PoolClosedError        a pool (or a stream of one) used while not open
    │   ├── ClusterStateError      a VirtualCluster used in the wrong state
    │   └── WorkerGroupStateError  a WorkerGroup or a Dispatch used in the wrong state
    ├── ResourceInsufficientError  no layout of the cluster could ever hold the request
    ├── PlacementTimeoutError      (also TimeoutError) a feasible request stayed busy too long
    ├── TaskTimeoutError           (also TimeoutError) a Ray task ran too long; it was cancelled
    ├── WorkerFailedError          an actor/worker died; the Ray error is ``__cause__``
    └── SandboxError               the sandbox could not run or judge a program (never a verdict)

Bad arguments are plain ``TypeError`` / ``ValueError``, raised before anything is submitted.
A user function's own exception is re-raised as its own type (Ray's ``as_instanceof_cause``),
never wrapped in one of these.
"""

from __future__ import annotations

__all__ = [
    "AsyncPoolError",
    "ClusterStateError",
    "PlacementTimeoutError",
    "PoolClosedError",
    "ResourceInsufficientError",
    "ResourceStateError",
    "SandboxError",
    "TaskTimeoutError",
    "WorkerFailedError",
    "WorkerGroupStateError",
]


class AsyncPoolError(Exception):
    """Base class of every error asyncpool raises on purpose."""


class ResourceStateError(AsyncPoolError, RuntimeError):
    """A resource (pool, stream, cluster, worker group) used in a state that does not allow it.

    Every asyncpool resource is unopened, open or closed, and opens once: make a new one
    instead of reopening a closed one. Catch this to handle all of them alike.
    """


class ClusterStateError(ResourceStateError):
    """A :class:`VirtualCluster` was used in a state that does not allow it.

    For example opened twice, reopened after it was closed, or asked for its placement groups
    before it was opened.
    """


class PoolClosedError(ResourceStateError):
    """A pool (TaskPool, ActorPool) used while it is not open: not entered yet, or closed.

    Also what a call still waiting for a slot, or still running, gets when the pool closes
    under it (Ray's cancellation error, if any, is the ``__cause__``). A pool opens once; make
    a new one instead of reopening a closed one.
    """


class WorkerGroupStateError(ResourceStateError):
    """A :class:`WorkerGroup` or a :class:`Dispatch` used in a state that does not allow it.

    Opened twice, reopened after it was closed, used before it was opened or after it was
    shut down; a ``Dispatch`` consumed twice.
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


class SandboxError(AsyncPoolError):
    """The sandbox itself could not run or judge a program.

    For example the fork server could not start, or the machine starved the run so long that
    its own time could not be established. It is never a verdict on the program: a caller
    computing rewards retries or drops the item, it does not score it.
    """


def _rebuild_worker_failed(
    message: str, rank: int | None, name: str | None, node_id: str | None
) -> WorkerFailedError:
    return WorkerFailedError(message, rank=rank, name=name, node_id=node_id)
