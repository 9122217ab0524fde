"""asyncpool: async-first actor pools, verification pools and worker groups on Ray."""

from .actors import ActorPool as ActorPool
from .cluster import VirtualCluster as VirtualCluster
from .errors import AsyncPoolError as AsyncPoolError
from .errors import ClusterStateError as ClusterStateError
from .errors import PlacementTimeoutError as PlacementTimeoutError
from .errors import PoolClosedError as PoolClosedError
from .errors import ResourceInsufficientError as ResourceInsufficientError
from .errors import ResourceStateError as ResourceStateError
from .errors import SandboxError as SandboxError
from .errors import TaskTimeoutError as TaskTimeoutError
from .errors import WorkerFailedError as WorkerFailedError
from .errors import WorkerGroupStateError as WorkerGroupStateError
from .placement import Backoff as Backoff
from .placement import NodeInfo as NodeInfo
from .placement import ReplicaSpec as ReplicaSpec
from .placement import allocate as allocate
from .placement import bundle_node_ip as bundle_node_ip
from .placement import free_port as free_port
from .placement import plan_replica as plan_replica
from .placement import reap as reap
from .placement import topology as topology
from .refs import as_completed as as_completed
from .refs import cancel as cancel
from .refs import gather as gather
from .refs import resolve as resolve
from .refs import wait as wait
from .runtime import Runtime as Runtime
from .runtime import connect as connect
from .runtime import init as init
from .runtime import run as run
from .sandbox import SandboxResult as SandboxResult
from .sandbox import StdioResult as StdioResult
from .sandbox import run_python as run_python
from .sandbox import run_stdio as run_stdio
from .sandbox import run_tests as run_tests
from .sharding import shard as shard
from .sharding import unshard as unshard
from .stats import PoolStats as PoolStats
from .tasks import TaskPool as TaskPool
from .workers import Dispatch as Dispatch
from .workers import WorkerGroup as WorkerGroup

__all__ = [
    "ActorPool",
    "AsyncPoolError",
    "Backoff",
    "ClusterStateError",
    "Dispatch",
    "NodeInfo",
    "PlacementTimeoutError",
    "PoolClosedError",
    "PoolStats",
    "ReplicaSpec",
    "ResourceInsufficientError",
    "ResourceStateError",
    "Runtime",
    "SandboxError",
    "SandboxResult",
    "StdioResult",
    "TaskPool",
    "TaskTimeoutError",
    "VirtualCluster",
    "WorkerFailedError",
    "WorkerGroup",
    "WorkerGroupStateError",
    "allocate",
    "as_completed",
    "bundle_node_ip",
    "cancel",
    "connect",
    "free_port",
    "gather",
    "init",
    "plan_replica",
    "reap",
    "resolve",
    "run",
    "run_python",
    "run_stdio",
    "run_tests",
    "shard",
    "topology",
    "unshard",
    "wait",
]
