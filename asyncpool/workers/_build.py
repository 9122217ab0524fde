"""Making, reaching and killing the actors of a worker group.

Owns the worker class as the driver knows it (:class:`WorkerClass`: a class, an ``@ray.remote``
class, or a ``"module.Class"`` string imported only inside the workers), the string workers'
remote helpers (shipped by value from ``_remote``), actor creation side by side off the event
loop, the ready wait, method calls on a worker, and killing with a bounded wait for death.
Must not: decide ranks, environment or options (``_plan`` does), or keep group state
(``_group`` does): every function takes what it works on.
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias, cast

import anyio
import anyio.to_thread
import ray
from ray.exceptions import RayError
from ray.util.placement_group import PlacementGroup
from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy

from .._concurrent import side_by_side
from ..errors import TaskTimeoutError, WorkerFailedError
from ..refs import as_completed
from . import _remote
from ._plan import Spec, WorkerMetadata

__all__ = [
    "WorkerClass",
    "await_ready",
    "call",
    "create_actors",
    "describe_remote",
    "kill",
]

log = logging.getLogger("asyncpool.workers")

Ref: TypeAlias = "ray.ObjectRef[Any]"

#: How long shutdown (and a failed opening) waits for Ray to report killed actors dead.
_DEATH_WAIT_S = 10.0
_STRING_WORKER = re.compile(r"^[A-Za-z_][\w]*(\.[A-Za-z_]\w*)*[.:][A-Za-z_]\w*$")


@dataclass
class WorkerClass:
    """The worker class as the driver knows it.

    ``path`` is set for a string worker (``cls`` is then ``None``: the driver need not be able
    to import it); ``methods`` is ``None`` until known (a string worker's are learnt by
    :func:`describe_remote`); ``host_async`` says whether its host actor must await methods.
    """

    name: str
    path: str | None = None
    cls: type | None = None
    actor_cls: Any = None
    hook: Any = None
    methods: frozenset[str] | None = None
    host_async: bool = False

    @classmethod
    def of(cls, worker_cls: object) -> WorkerClass:
        """Check ``worker_cls`` (``TypeError``/``ValueError``) and describe what is known now."""
        if isinstance(worker_cls, str):
            if not _STRING_WORKER.match(worker_cls):
                raise ValueError(
                    f"worker_cls must be a 'package.module.Class' path, got {worker_cls!r}"
                )
            return cls(name=re.split(r"[.:]", worker_cls)[-1], path=worker_cls)
        actor_cls = None
        if isinstance(worker_cls, ray.actor.ActorClass):
            actor_cls = worker_cls
            meta: Any = getattr(worker_cls, "__ray_metadata__", None)
            worker_cls = cast(type, meta.modified_class)
        if not isinstance(worker_cls, type):
            raise TypeError(
                "worker_cls must be a class, an @ray.remote class or a 'module.Class' string, "
                f"got {worker_cls!r} ({type(worker_cls).__name__})"
            )
        return cls(
            name=worker_cls.__name__,
            cls=worker_cls,
            actor_cls=actor_cls,
            hook=_remote.hook_of(worker_cls),
            methods=frozenset(_remote.public_methods(worker_cls)),
        )

    def check_method(self, method: object) -> str:
        """``method`` if the class has it (unknown methods of a string worker pass until its
        description arrived); ``TypeError``/``AttributeError`` otherwise."""
        if not isinstance(method, str):
            raise TypeError(f"method must be a method name (str), got {method!r}")
        if self.methods is not None and method not in self.methods:
            raise AttributeError(f"worker class {self.name} has no method {method!r}", name=method)
        return method

    def actor(self) -> tuple[Any, tuple[Any, ...]]:
        """The Ray actor class to create, and the constructor arguments that lead."""
        if self.path is not None:
            _, sync_host, async_host = _remote_helpers()
            return (async_host if self.host_async else sync_host), (self.path,)
        assert self.cls is not None
        return self.actor_cls or ray.remote(self.cls), ()


_helpers: tuple[Any, Any, Any] | None = None


def _remote_helpers() -> tuple[Any, Any, Any]:
    """``(describe task, sync host actor class, async host actor class)``, made once.

    ``_remote`` is shipped by value, so the workers need nothing of asyncpool installed.
    """
    global _helpers
    if _helpers is None:
        ray.cloudpickle.register_pickle_by_value(_remote)
        _helpers = (
            ray.remote(num_cpus=0, max_retries=0)(_remote.describe),
            ray.remote(_remote.AsyncpoolHost),
            ray.remote(_remote.AsyncpoolAsyncHost),
        )
    return _helpers


async def describe_remote(
    wc: WorkerClass,
    calls: list[tuple[float, Any]],
    runtime_env: Mapping[str, Any],
    pg: PlacementGroup,
    bundle_index: int,
) -> list[Any] | None:
    """Import a string worker inside its ``runtime_env`` (one zero-CPU task on ``pg``'s
    bundle), learn its methods into ``wc``, and return its hook's results for ``calls``.

    Cancellation: the task is left to finish (it is short); its answer is dropped.
    """
    assert wc.path is not None
    describe, _, _ = _remote_helpers()
    info: dict[str, Any] = await describe.options(
        runtime_env=dict(runtime_env),
        scheduling_strategy=PlacementGroupSchedulingStrategy(
            placement_group=pg, placement_group_bundle_index=bundle_index
        ),
    ).remote(wc.path, calls)
    wc.methods = frozenset(info["methods"])
    wc.host_async = bool(info["is_async"])
    wc.name = str(info["name"])
    hooks: list[Any] | None = info["hook"]
    return hooks


async def create_actors(
    wc: WorkerClass,
    init_args: tuple[Any, ...],
    specs: Sequence[Spec],
    created: list[Any],
    group: str,
) -> None:
    """Create one actor per spec into ``created`` (by rank), side by side in worker threads.

    Named-actor creation is a GCS round trip each. A thread is never abandoned, so a cancelled
    or failed call still leaves every actor it made in ``created`` for the caller to kill.
    """
    actor_cls, lead = wc.actor()

    def create(i: int) -> None:
        spec = specs[i]
        try:
            created[i] = actor_cls.options(**spec.options).remote(
                *lead, *init_args, **spec.init_kwargs
            )
        except ValueError as exc:
            if "already taken" in str(exc) or "already exists" in str(exc):
                raise ValueError(
                    f"an actor named {spec.name!r} already exists: is another WorkerGroup "
                    f"named {group!r} open? Pick another name"
                ) from exc
            raise

    await side_by_side(
        functools.partial(anyio.to_thread.run_sync, create, i) for i in range(len(specs))
    )


async def await_ready(
    handles: Sequence[Any], metadata: Sequence[WorkerMetadata], group: str
) -> None:
    """Wait until every actor answered a ready ping; the first that cannot start raises
    :class:`WorkerFailedError` (rank, name, node; the Ray error as ``__cause__``).

    Cancellation: the pings still pending are cancelled.
    """
    ready = [h.__ray_ready__.remote() for h in handles]
    async with as_completed(ready, return_exceptions=True) as stream:
        async for rank, value in stream:
            if isinstance(value, RayError):
                meta = metadata[rank]
                raise WorkerFailedError(
                    f"worker rank {rank} ({meta.name}) of WorkerGroup {group!r} could "
                    f"not start: {value}",
                    rank=rank,
                    name=meta.name,
                    node_id=meta.node_id,
                ) from value


def call(wc: WorkerClass, handle: Any, method: str, *args: Any, **kwargs: Any) -> Ref:
    """Send ``method(*args, **kwargs)`` to one worker (through its host for a string worker)."""
    if wc.path is not None:
        ref: Ref = handle.call.remote(method, *args, **kwargs)
    else:
        ref = getattr(handle, method).remote(*args, **kwargs)
    return ref


def _kill_now(handles: Sequence[Any]) -> None:
    for handle in handles:
        try:
            ray.kill(handle, no_restart=True)
        except Exception:  # already dead, or Ray shutting down
            log.debug("ray.kill failed", exc_info=True)


async def kill(handles: Sequence[Any], *, wait: bool = True) -> None:
    """Kill every actor (``ray.kill(no_restart=True)``, in a worker thread, shielded), then
    with ``wait`` await their deaths for up to 10 s (a warning names how many lived on).

    Cancellation: the kill always happens; only the wait for the deaths is cut short.
    """
    if not handles:
        return
    with anyio.CancelScope(shield=True):
        await anyio.to_thread.run_sync(_kill_now, list(handles))
    if wait:
        await _wait_dead(handles)


async def _wait_dead(handles: Sequence[Any], bound: float = _DEATH_WAIT_S) -> None:
    """Await the death of killed actors: a ping to a dead actor fails with ActorDiedError."""
    if not ray.is_initialized():
        return
    pending = list(handles)
    deadline = anyio.current_time() + bound
    while pending:
        remaining = deadline - anyio.current_time()
        alive = []
        try:
            if remaining <= 0:
                raise TaskTimeoutError
            pings = [h.__ray_ready__.remote() for h in pending]
            async with as_completed(pings, timeout=remaining, return_exceptions=True) as stream:
                async for i, value in stream:
                    if not isinstance(value, RayError):
                        alive.append(pending[i])  # the kill has not landed yet
        except TaskTimeoutError:
            log.warning("%d killed worker(s) not reported dead within %ss", len(pending), bound)
            return
        pending = alive
        if pending:
            await anyio.sleep(0.05)
