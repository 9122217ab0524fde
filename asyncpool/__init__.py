"""asyncpool: async-first actor pools, verification pools and worker groups on Ray."""

from .errors import AsyncPoolError as AsyncPoolError
from .errors import PlacementTimeoutError as PlacementTimeoutError
from .errors import ResourceInsufficientError as ResourceInsufficientError
from .errors import TaskTimeoutError as TaskTimeoutError
from .errors import WorkerFailedError as WorkerFailedError
from .refs import AsCompleted as AsCompleted
from .refs import as_completed as as_completed
from .refs import cancel as cancel
from .refs import gather as gather
from .refs import resolve as resolve
from .runtime import Runtime as Runtime
from .runtime import connect as connect
from .runtime import init as init
from .runtime import run as run

__all__ = [
    "AsCompleted",
    "AsyncPoolError",
    "PlacementTimeoutError",
    "ResourceInsufficientError",
    "Runtime",
    "TaskTimeoutError",
    "WorkerFailedError",
    "as_completed",
    "cancel",
    "connect",
    "gather",
    "init",
    "resolve",
    "run",
]
