"""WorkerGroup: Ray actors pinned to the bundles of a VirtualCluster, driven from async code.

A :class:`WorkerGroup` is what NeMo-RL calls a ``RayWorkerGroup`` and verl a ``RayWorkerGroup``:
one actor per bundle of a :class:`~asyncpool.cluster.VirtualCluster` (or per ``workers_per_node``,
or per bundle of explicit *tied groups*), each pinned to its bundle, each told its place in the
job through the usual torch.distributed variables, all driven by one controller that shards a
batch over them and collects the results.

Layout and ranks
    * default: one worker on every bundle of every virtual node, ranks in node then bundle
      order; every worker is its own tied group (of one).
    * ``workers_per_node=k`` (an int: bundles ``0..k-1`` of every node) or a list with one count
      per virtual node (``0`` leaves a node out); each count must fit that node's bundles.
    * ``tied=[(node_idx, [bundle, ...]), ...]``: one tied group per entry (a tensor-parallel
      group: its workers act together on one shard), on the given bundles of one virtual node.
      Ranks are given in the order of the list, then of the bundles. The first worker of a tied
      group is its *leader*. A bundle appears at most once in a group.

Environment of every worker (``runtime_env`` ``env_vars``)
    ``RANK`` (0..N-1), ``WORLD_SIZE`` (N), ``LOCAL_RANK`` (position among this group's workers
    on the same virtual node, in rank order), ``NODE_RANK`` (the virtual nodes hosting this
    group, numbered in the order of their first rank: the node of rank 0 is 0, and with the
    default layout ``NODE_RANK == node_idx``), ``MASTER_ADDR``/``MASTER_PORT`` (one address for
    the whole group: :meth:`VirtualCluster.master_address` -- bundle 0 of node 0 -- when rank 0
    sits there, as it does in every default layout, otherwise a free port on rank 0's bundle, so
    that ``torch.distributed``'s ``env://`` store is where rank 0 runs). The caller's ``env`` and
    ``runtime_env["env_vars"]`` come on top; setting one of the six reserved names there is a
    ``ValueError``. Nothing is copied from the driver's ``os.environ``; Ray-internal variables
    (:data:`RAY_INTERNAL_ENV_VARS`: ``RAY_JOB_ID``, ``RAY_RAYLET_PID``, ``RAY_CLIENT_MODE``, ...)
    found in the caller's ``env`` are dropped with a warning -- Ray sets the right ones itself,
    and a driver's copy would point the worker at the wrong job or raylet.

Resources
    Each worker takes one CPU of its bundle and ``1 / cluster.max_colocated`` of its GPU (no GPU
    when the cluster was made with ``use_gpus=False``), so ``max_colocated`` groups can share
    the bundles. Child tasks and actors a worker starts are captured by the placement group.

The ``configure_worker`` hook
    A worker class may define a ``staticmethod``/``classmethod``
    ``configure_worker(num_gpus, bundle_indices) -> (resources, env, init_kwargs)`` (NeMo-RL's
    protocol). It is called once per worker before anything is created; ``bundle_indices`` is
    ``(node_idx, [bundles of the tied group])`` for the leader of each tied group and ``None``
    for the others. ``resources`` may set ``num_gpus``/``num_cpus`` (within one bundle),
    ``env`` adds environment variables (not the six reserved ones) and ``init_kwargs`` adds
    constructor keyword arguments; each of the three may be ``None``. The hook wins over the
    caller; a warning names every setting of the caller (or default resource) it overrides.

String workers
    ``worker_cls`` may be ``"package.module.Class"`` (or ``"package.module:Class"``): the class is
    imported inside the worker's own ``runtime_env`` -- it need not be importable by the driver
    (another virtualenv via ``py_executable``, ``py_modules``, a ``PYTHONPATH`` in ``env``...).
    A small host actor, shipped by value (it needs nothing of asyncpool on the worker side),
    imports and instantiates it. Before the actors are made, one zero-CPU task in the same
    ``runtime_env`` imports the class, reports its methods (so that :meth:`WorkerGroup.dispatch`
    can check a method name before sending) and runs its ``configure_worker`` hook.
    ``group.workers`` then holds the host actors' handles: call a method of the class with
    ``handle.call.remote("method", *args, **kwargs)``. If the class has ``async def`` methods
    the host is an async actor that awaits them, as Ray would make the class itself.

Names
    Actors are Ray named actors (in the driver's namespace) called
    ``f"{group}-rank{rank}-node{node_idx}-bundle{bundle}"``. The group name is ``name`` when
    given -- then two live groups of the same name are a ``ValueError`` when the second one
    opens -- and otherwise the class name with a short unique suffix.

Life cycle
    ``unopened -> opening -> open -> closed``. ``async with WorkerGroup(...) as group`` opens it:
    all actors are started concurrently (actor creation, a GCS round trip each for named actors,
    runs in worker threads side by side) and the group is ready when every one of them answered a
    ready ping (awaited without blocking the event loop). A failed or cancelled opening kills
    every actor it made (and waits for their death) and leaves the group ``unopened``. Leaving
    the block runs :meth:`WorkerGroup.shutdown`. Opening twice, reopening a closed group or
    using a closed one raises :class:`WorkerGroupStateError`.

Dispatch
    :meth:`WorkerGroup.dispatch` and :meth:`WorkerGroup.broadcast` return a :class:`Dispatch`
    (see there): an async iterator of ``(shard_index, value)`` in completion order, awaitable for
    the values in shard order. With ``only_on="all_tied_workers"`` the result of a tied group is
    its *leader's* value (every worker of the group must finish; the others' values are dropped:
    tensor-parallel ranks return the same output, as NeMo-RL assumes when it keeps the leader's).
"""

from __future__ import annotations

import contextlib
import functools
import logging
import math
import re
import uuid
from collections import deque
from collections.abc import Awaitable, Callable, Generator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, TypeAlias, cast

import anyio
import anyio.abc
import anyio.to_thread
import ray
from ray.exceptions import RayActorError, RayError
from ray.util.placement_group import PlacementGroup, placement_group_table
from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy

from ._resource import AsyncResource
from .errors import TaskTimeoutError, WorkerFailedError, WorkerGroupStateError
from .placement import bundle_node_ip, free_port
from .refs import AsCompleted, as_completed

if TYPE_CHECKING:
    from .cluster import VirtualCluster

__all__ = ["Dispatch", "WorkerGroup", "WorkerGroupStateError", "WorkerMetadata"]

log = logging.getLogger(__name__)

Ref: TypeAlias = "ray.ObjectRef[Any]"
OnlyOn: TypeAlias = Literal["all", "tied_leader", "all_tied_workers"]
State: TypeAlias = Literal["unopened", "opening", "open", "closing", "closed"]

#: The variables a WorkerGroup sets on every worker; a caller's ``env`` may not set them.
RESERVED_ENV_VARS: tuple[str, ...] = (
    "RANK",
    "LOCAL_RANK",
    "WORLD_SIZE",
    "NODE_RANK",
    "MASTER_ADDR",
    "MASTER_PORT",
)

#: Ray-internal variables never passed on to a worker (Ray sets its own in every worker).
RAY_INTERNAL_ENV_VARS: frozenset[str] = frozenset(
    {
        "RAY_JOB_ID",
        "RAY_RAYLET_PID",
        "RAY_OVERRIDE_NODE_ID_FOR_TESTING",
        "RAY_CLIENT_MODE",
        "RAY_ADDRESS",
        "RAY_NODE_ID",
        "RAY_LD_PRELOAD_ON_WORKERS",
        "RAY_JOB_CONFIG_JSON_ENV_VAR",
    }
)

_ONLY_ON: tuple[str, ...] = ("all", "tied_leader", "all_tied_workers")
_HOOK_RESOURCES = ("num_gpus", "num_cpus")
#: How long shutdown (and a failed opening) waits for Ray to report killed actors dead.
_DEATH_WAIT_S = 10.0
_STRING_WORKER = re.compile(r"^[A-Za-z_][\w]*(\.[A-Za-z_]\w*)*[.:][A-Za-z_]\w*$")


@dataclass(frozen=True)
class WorkerMetadata:
    """Where one worker of a group sits and what it is called.

    ``rank``/``local_rank``/``node_rank`` are the values of its ``RANK``/``LOCAL_RANK``/
    ``NODE_RANK``; ``node_idx`` and ``bundle_index`` its virtual node and bundle in the
    :class:`~asyncpool.cluster.VirtualCluster`; ``node_id`` the Ray node (hex) holding that
    bundle; ``tied_group`` the index of its tied group and ``tied_rank`` its position in it
    (``0``: the leader); ``name`` its Ray actor name.
    """

    rank: int
    local_rank: int
    node_idx: int
    node_id: str
    bundle_index: int
    tied_group: int
    name: str
    node_rank: int = 0
    tied_rank: int = 0

    @property
    def is_leader(self) -> bool:
        """Whether this worker leads its tied group."""
        return self.tied_rank == 0


@dataclass(frozen=True)
class _Slot:
    """A worker of the plan, before anything exists."""

    rank: int
    node_idx: int
    bundle_index: int
    tied_group: int
    tied_rank: int
    local_rank: int
    node_rank: int


# --------------------------------------------------------------------------------------------
# validation and planning (pure)
# --------------------------------------------------------------------------------------------


def _int(value: object, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{what} must be an int, not {type(value).__name__}")
    return value


def _plan_groups(
    bundles_per_node: Sequence[int],
    workers_per_node: int | Sequence[int] | None,
    tied: Sequence[tuple[int, Sequence[int]]] | None,
) -> list[list[tuple[int, int]]]:
    """The tied groups as lists of ``(node_idx, bundle_index)``; raises on a bad spec."""
    nodes = len(bundles_per_node)
    if tied is not None and workers_per_node is not None:
        raise ValueError("give either workers_per_node or tied, not both")
    if tied is not None:
        return _check_tied(bundles_per_node, tied)
    if workers_per_node is None:
        counts = list(bundles_per_node)
    elif isinstance(workers_per_node, int) and not isinstance(workers_per_node, bool):
        if workers_per_node < 1:
            raise ValueError(f"workers_per_node must be >= 1, got {workers_per_node}")
        short = [i for i, n in enumerate(bundles_per_node) if n < workers_per_node]
        if short:
            raise ValueError(
                f"workers_per_node={workers_per_node}, but node(s) {short} have only "
                f"{[bundles_per_node[i] for i in short]} bundle(s) "
                f"(bundles per node: {list(bundles_per_node)})"
            )
        counts = [workers_per_node] * nodes
    elif isinstance(workers_per_node, Sequence) and not isinstance(workers_per_node, str | bytes):
        counts = [_int(c, f"workers_per_node[{i}]") for i, c in enumerate(workers_per_node)]
        if len(counts) != nodes:
            raise ValueError(
                f"workers_per_node has {len(counts)} entries for a cluster of {nodes} node(s) "
                f"(bundles per node: {list(bundles_per_node)})"
            )
        for i, (c, n) in enumerate(zip(counts, bundles_per_node, strict=True)):
            if not 0 <= c <= n:
                raise ValueError(
                    f"workers_per_node[{i}]={c}, but node {i} has {n} bundle(s); "
                    f"each count must be in 0..{n}"
                )
        if sum(counts) == 0:
            raise ValueError("workers_per_node places no worker at all")
    else:
        raise TypeError(
            "workers_per_node must be None, an int or a list of ints, "
            f"not {type(workers_per_node).__name__}"
        )
    return [[(node, b)] for node, c in enumerate(counts) for b in range(c)]


def _check_tied(bundles_per_node: Sequence[int], tied: object) -> list[list[tuple[int, int]]]:
    if isinstance(tied, str | bytes | Mapping) or not isinstance(tied, Sequence):
        raise TypeError("tied must be a list of (node_idx, [bundle, ...]) pairs")
    if not tied:
        raise ValueError("tied must name at least one tied group")
    groups: list[list[tuple[int, int]]] = []
    seen: dict[tuple[int, int], int] = {}
    for g, entry in enumerate(tied):
        if isinstance(entry, str | bytes) or not isinstance(entry, Sequence) or len(entry) != 2:
            raise ValueError(f"tied[{g}] must be a (node_idx, [bundle, ...]) pair, got {entry!r}")
        node = _int(entry[0], f"tied[{g}] node_idx")
        bundles = entry[1]
        if isinstance(bundles, str | bytes) or not isinstance(bundles, Sequence):
            raise ValueError(f"tied[{g}] bundles must be a list of ints, got {bundles!r}")
        if not 0 <= node < len(bundles_per_node):
            raise ValueError(
                f"tied[{g}]: node_idx {node} out of range "
                f"(the cluster has {len(bundles_per_node)} node(s))"
            )
        if not bundles:
            raise ValueError(f"tied[{g}]: a tied group needs at least one bundle")
        group = []
        for b in bundles:
            b = _int(b, f"tied[{g}] bundle")
            if not 0 <= b < bundles_per_node[node]:
                raise ValueError(
                    f"tied[{g}]: bundle {b} out of range "
                    f"(node {node} has {bundles_per_node[node]} bundle(s))"
                )
            if (node, b) in seen:
                raise ValueError(
                    f"tied[{g}]: bundle {b} of node {node} is already used by "
                    f"tied[{seen[(node, b)]}]; each bundle holds at most one worker of a group"
                )
            seen[(node, b)] = g
            group.append((node, b))
        groups.append(group)
    return groups


def _plan(groups: list[list[tuple[int, int]]]) -> list[_Slot]:
    slots: list[_Slot] = []
    local: dict[int, int] = {}
    node_rank: dict[int, int] = {}
    for g, members in enumerate(groups):
        for t, (node, b) in enumerate(members):
            node_rank.setdefault(node, len(node_rank))
            slots.append(
                _Slot(
                    rank=len(slots),
                    node_idx=node,
                    bundle_index=b,
                    tied_group=g,
                    tied_rank=t,
                    local_rank=local.get(node, 0),
                    node_rank=node_rank[node],
                )
            )
            local[node] = local.get(node, 0) + 1
    return slots


def _check_env(env: object, what: str) -> dict[str, str]:
    """A copy of ``env`` with Ray-internal names dropped; reserved names are a ValueError."""
    if env is None:
        return {}
    if not isinstance(env, Mapping):
        raise TypeError(f"{what} must be a mapping of str to str, not {type(env).__name__}")
    out: dict[str, str] = {}
    for key, value in env.items():
        if not isinstance(key, str) or not isinstance(value, str):
            raise TypeError(
                f"{what} must map str to str; {key!r}: {type(value).__name__} is not "
                "(environment values are strings: use str(value))"
            )
        out[key] = value
    reserved = sorted(set(out) & set(RESERVED_ENV_VARS))
    if reserved:
        raise ValueError(
            f"{what} sets {reserved}: the worker group sets {list(RESERVED_ENV_VARS)} on every "
            "worker itself"
        )
    internal = sorted(set(out) & RAY_INTERNAL_ENV_VARS)
    if internal:
        log.warning("%s: dropping Ray-internal variable(s) %s; Ray sets its own", what, internal)
        for key in internal:
            del out[key]
    return out


def _hook_of(cls: type) -> Any:
    """The ``configure_worker`` hook of ``cls`` (a static/classmethod), or None."""
    for klass in cls.__mro__:
        raw = klass.__dict__.get("configure_worker")
        if raw is None:
            continue
        if not isinstance(raw, staticmethod | classmethod):
            raise TypeError(
                f"{cls.__name__}.configure_worker must be a staticmethod or classmethod "
                "(it is called on the class, before any worker exists)"
            )
        return cls.configure_worker  # type: ignore[attr-defined]
    return None


def _public_methods(cls: type) -> set[str]:
    return {
        name
        for name in dir(cls)
        if not (name.startswith("__") and name.endswith("__"))
        and callable(getattr(cls, name, None))
    }


# --------------------------------------------------------------------------------------------
# remote helpers for string workers (shipped by value: nothing of asyncpool needed remotely)
# --------------------------------------------------------------------------------------------

_remote_helpers: tuple[Any, Any, Any] | None = None


def _helpers() -> tuple[Any, Any, Any]:
    """``(describe task, sync host actor class, async host actor class)``, made once."""
    global _remote_helpers
    if _remote_helpers is not None:
        return _remote_helpers

    class _Import:
        @staticmethod
        def load(path: str) -> Any:
            import importlib

            if ":" in path:
                module_name, _, qual = path.partition(":")
            else:
                module_name, _, qual = path.rpartition(".")
            obj: Any = importlib.import_module(module_name)
            for part in qual.split("."):
                obj = getattr(obj, part)
            meta = getattr(obj, "__ray_metadata__", None)  # an @ray.remote class
            if meta is not None:
                obj = meta.modified_class
            if not isinstance(obj, type):
                raise TypeError(f"{path} is a {type(obj).__name__}, not a class")
            return obj

    def describe(path: str, calls: list[tuple[float, Any]]) -> dict[str, Any]:
        import inspect

        cls = _Import.load(path)
        methods = sorted(
            n
            for n in dir(cls)
            if not (n.startswith("__") and n.endswith("__")) and callable(getattr(cls, n, None))
        )
        is_async = any(
            inspect.iscoroutinefunction(getattr(cls, n))
            or inspect.isasyncgenfunction(getattr(cls, n))
            for n in methods
        )
        hook_results = None
        raw = None
        for klass in cls.__mro__:
            if "configure_worker" in klass.__dict__:
                raw = klass.__dict__["configure_worker"]
                break
        if raw is not None:
            if not isinstance(raw, staticmethod | classmethod):
                raise TypeError(
                    f"{cls.__name__}.configure_worker must be a staticmethod or classmethod"
                )
            hook_results = [cls.configure_worker(num_gpus=g, bundle_indices=b) for g, b in calls]
        return {
            "name": cls.__qualname__,
            "methods": methods,
            "is_async": is_async,
            "hook": hook_results,
        }

    class AsyncpoolHost:
        """Hosts an instance of a class imported inside the worker (sync methods)."""

        def __init__(self, _asyncpool_path: str, *args: Any, **kwargs: Any) -> None:
            self._obj = _Import.load(_asyncpool_path)(*args, **kwargs)

        def call(self, _asyncpool_method: str, *args: Any, **kwargs: Any) -> Any:
            return getattr(self._obj, _asyncpool_method)(*args, **kwargs)

    class AsyncpoolAsyncHost:
        """Hosts an instance of a class with ``async def`` methods, and awaits them."""

        def __init__(self, _asyncpool_path: str, *args: Any, **kwargs: Any) -> None:
            self._obj = _Import.load(_asyncpool_path)(*args, **kwargs)

        async def call(self, _asyncpool_method: str, *args: Any, **kwargs: Any) -> Any:
            import inspect

            result = getattr(self._obj, _asyncpool_method)(*args, **kwargs)
            if inspect.isawaitable(result):
                result = await result
            return result

    _remote_helpers = (
        ray.remote(num_cpus=0, max_retries=0)(describe),
        ray.remote(AsyncpoolHost),
        ray.remote(AsyncpoolAsyncHost),
    )
    return _remote_helpers


# --------------------------------------------------------------------------------------------
# Dispatch
# --------------------------------------------------------------------------------------------


class Dispatch(AsyncResource):
    """The results of one :meth:`WorkerGroup.dispatch` / :meth:`WorkerGroup.broadcast` call.

    The calls were sent when the Dispatch was made; this object only collects them. Use it
    one of two ways (once):

    * ``async for shard_index, value in dispatch`` -- results in completion order (preferably
      inside ``async with dispatch:`` so that leaving early cancels the rest);
    * ``values = await dispatch`` -- the values in shard order.

    One result per shard: the worker's return value, or for ``only_on="all_tied_workers"`` the
    tied group's *leader's* value, given once every worker of the group has finished.

    Failures: a worker that died (its process exited, its node was lost) fails the Dispatch with
    :class:`~asyncpool.errors.WorkerFailedError` (``rank``, ``name``, ``node_id`` of that worker;
    the Ray ``ActorDiedError``/``ActorUnavailableError`` as ``__cause__``). An exception raised
    by the method itself is raised as its own type. Either way the results that had already
    arrived are yielded first, then the error is raised and the calls still running are
    cancelled (much as a task group cancels the siblings of a failed task: in a collective, the
    other workers would otherwise wait forever for the dead one).

    Cancellation: leaving early -- ``break`` inside ``async with``, an exception, cancellation
    of the consuming task, ``anyio.fail_after`` around it -- cancels the calls still pending
    with ``ray.cancel`` (a call queued on an actor is dropped; a running *sync* method runs to
    its end, since Ray cannot interrupt an actor task; a running ``async def`` method is
    cancelled). A Dispatch dropped half-consumed is closed the same way by the garbage collector;
    one never consumed lets its calls run to completion.
    """

    def __init__(
        self,
        method: str,
        refs: list[list[Ref]],
        targets: list[list[WorkerMetadata]],
    ) -> None:
        self._method = method
        self._refs = refs
        self._targets = targets
        flat: list[Ref] = []
        self._owner: list[tuple[int, int]] = []
        for key, group in enumerate(refs):
            for member, ref in enumerate(group):
                flat.append(ref)
                self._owner.append((key, member))
        self._waiting = [len(group) for group in refs]
        self._leader_values: list[Any] = [None] * len(refs)
        self._stream: AsCompleted[int, Any] = as_completed(flat, return_exceptions=True)
        self._ready: deque[tuple[int, Any]] = deque()
        self._failure: BaseException | None = None
        self._finished = not flat
        self._mode: str | None = None

    # -- information

    @property
    def method(self) -> str:
        return self._method

    @property
    def refs(self) -> list[list[Ref]]:
        """The ObjectRefs of the calls, per shard (one per worker of the shard's target)."""
        return [list(group) for group in self._refs]

    @property
    def ranks(self) -> list[list[int]]:
        """The ranks each shard was sent to."""
        return [[m.rank for m in group] for group in self._targets]

    def __len__(self) -> int:
        """How many results the Dispatch gives (one per shard)."""
        return len(self._refs)

    def __repr__(self) -> str:
        return f"<Dispatch {self._method!r}: {len(self._refs)} shard(s), ranks {self.ranks}>"

    # -- consumption

    def _begin(self, mode: str) -> None:
        if self._mode is None:
            self._mode = mode
        elif self._mode != mode or mode == "await":
            raise RuntimeError(
                "a Dispatch is consumed once: iterate it (async for) or await it, not both "
                "and not twice"
            )

    def __aiter__(self) -> Dispatch:
        return self

    async def __anext__(self) -> tuple[int, Any]:
        """The next ``(shard_index, value)`` in completion order.

        Cancellation: cancels the calls still pending (see the class docstring).
        """
        if self._mode != "iterate":
            self._begin("iterate")
        return await self._next()

    async def _next(self) -> tuple[int, Any]:
        while not self._ready:
            if self._finished:
                if self._failure is not None:
                    failure, self._failure = self._failure, None
                    raise failure
                raise StopAsyncIteration
            await self._pull()
        return self._ready.popleft()

    async def _pull(self) -> None:
        """Move the next finished call(s) into ``_ready``; on a failure, drain what arrived."""
        try:
            index, value = await self._stream.__anext__()
        except StopAsyncIteration:
            self._finished = True
            return
        except BaseException:
            self._finished = True
            raise
        self._take(index, value)
        if self._failure is None:
            return
        # Failed: take what has already arrived (without waiting), then stop the rest.
        try:
            while True:
                item: tuple[int, Any] | None = None
                with anyio.move_on_after(0):
                    item = await self._stream.__anext__()
                if item is None:
                    break
                self._take(*item)
        except StopAsyncIteration:
            pass
        finally:
            self._finished = True
            await self._stream.aclose()

    def _take(self, index: int, value: Any) -> None:
        key, member = self._owner[index]
        if isinstance(value, RayError):
            if self._failure is None:
                self._failure = self._error(key, member, value)
            else:
                log.debug("dispatch %r: further failure after the first: %r", self._method, value)
            return
        if member == 0:
            self._leader_values[key] = value
        self._waiting[key] -= 1
        if self._waiting[key] == 0:
            self._ready.append((key, self._leader_values[key]))
            self._leader_values[key] = None

    def _error(self, key: int, member: int, err: RayError) -> BaseException:
        if not isinstance(err, RayActorError):
            return err  # the method's own exception (as its own type), or a Ray system error
        meta = self._targets[key][member]
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        failed = WorkerFailedError(
            f"worker rank {meta.rank} ({meta.name}, node {meta.node_id}) failed during "
            f"{self._method!r} of shard {key}: {type(err).__name__}: {first}",
            rank=meta.rank,
            name=meta.name,
            node_id=meta.node_id,
        )
        failed.__cause__ = err
        return failed

    async def _collect(self) -> list[Any]:
        self._begin("await")
        out: list[Any] = [None] * len(self._refs)
        try:
            while True:
                try:
                    key, value = await self._next()
                except StopAsyncIteration:
                    return out
                out[key] = value
        finally:
            if not self._finished:
                await self.aclose()

    def __await__(self) -> Generator[Any, None, list[Any]]:
        """``await dispatch``: every value, in shard order.

        Cancellation: cancels the calls still pending; the first failure raises (as for the
        iteration) and cancels the rest.
        """
        return self._collect().__await__()

    async def aclose(self) -> None:
        """Stop collecting; cancel the calls still pending (``ray.cancel``, as described in
        the class docstring). Results and a failure not yet taken are dropped. Idempotent.

        Cancellation: nothing here waits; the cancel requests are sent before it returns.
        """
        self._finished = True
        self._ready.clear()
        self._failure = None
        await self._stream.aclose()



# --------------------------------------------------------------------------------------------
# WorkerGroup
# --------------------------------------------------------------------------------------------


@dataclass
class _Spec:
    """Everything needed to create one worker."""

    slot: _Slot
    name: str
    options: dict[str, Any]
    init_kwargs: dict[str, Any]


class WorkerGroup(AsyncResource):
    """A group of Ray actors pinned to the bundles of a VirtualCluster; see the module docstring.

    ``WorkerGroup(cluster, worker_cls, *init_args, name="", workers_per_node=None, tied=None,
    env=None, runtime_env=None, **init_kwargs)``: ``worker_cls`` is a class (plain or
    ``@ray.remote``) or a ``"module.Class"`` string; ``init_args``/``init_kwargs`` go to its
    constructor on every worker. Every argument is checked here, before anything is created
    (``TypeError``/``ValueError``). The cluster must be open when the group opens.

    Other actor options (``max_concurrency``, ``max_restarts``, ...) come from an
    ``@ray.remote(...)`` class: the group only sets the name, CPU/GPU amounts, scheduling
    strategy and ``runtime_env`` of each worker on top of them.
    """

    def __init__(
        self,
        cluster: VirtualCluster,
        worker_cls: type | str | Any,
        *init_args: Any,
        name: str = "",
        workers_per_node: int | Sequence[int] | None = None,
        tied: Sequence[tuple[int, Sequence[int]]] | None = None,
        env: Mapping[str, str] | None = None,
        runtime_env: Mapping[str, Any] | None = None,
        **init_kwargs: Any,
    ) -> None:
        from .cluster import VirtualCluster

        if not isinstance(cluster, VirtualCluster):
            raise TypeError(f"cluster must be a VirtualCluster, not {type(cluster).__name__}")
        self._cluster = cluster
        self._path: str | None = None
        self._cls: type | None = None
        self._actor_cls: Any = None
        if isinstance(worker_cls, str):
            if not _STRING_WORKER.match(worker_cls):
                raise ValueError(f"worker_cls {worker_cls!r} is not a 'package.module.Class' path")
            self._path = worker_cls
            cls_name = re.split(r"[.:]", worker_cls)[-1]
        elif isinstance(worker_cls, ray.actor.ActorClass):
            self._actor_cls = worker_cls
            meta: Any = getattr(worker_cls, "__ray_metadata__", None)
            self._cls = cast(type, meta.modified_class)
            cls_name = self._cls.__name__
        elif isinstance(worker_cls, type):
            self._cls = worker_cls
            cls_name = worker_cls.__name__
        else:
            raise TypeError(
                "worker_cls must be a class, an @ray.remote class or a 'module.Class' string, "
                f"not {type(worker_cls).__name__}"
            )
        self._cls_name = cls_name
        self._hook = _hook_of(self._cls) if self._cls is not None else None

        if not isinstance(name, str):
            raise TypeError(f"name must be a str, not {type(name).__name__}")
        if name and not re.fullmatch(r"[\w.\-]+", name):
            raise ValueError(f"name {name!r} may only hold letters, digits, '_', '-' and '.'")
        self._name = name or f"{cls_name}-{uuid.uuid4().hex[:6]}"

        self._slots = _plan(_plan_groups(cluster.bundles_per_node, workers_per_node, tied))
        self._tied: list[list[int]] = []
        for slot in self._slots:
            if slot.tied_rank == 0:
                self._tied.append([])
            self._tied[-1].append(slot.rank)

        if runtime_env is not None and not isinstance(runtime_env, Mapping):
            raise TypeError(f"runtime_env must be a mapping, not {type(runtime_env).__name__}")
        base_env = dict(runtime_env or {})
        env_vars = _check_env(base_env.pop("env_vars", None), "runtime_env['env_vars']")
        caller_env = _check_env(env, "env")
        self._caller_env = {**env_vars, **caller_env}
        self._runtime_env = base_env
        self._init_args = init_args
        self._init_kwargs = init_kwargs

        self._state: State = "unopened"
        self._handles: list[Any] = []
        self._metadata: list[WorkerMetadata] = []
        self._methods: set[str] | None = (
            _public_methods(self._cls) if self._cls is not None else None
        )
        self._host_async = False

    # ---------------------------------------------------------------- properties

    @property
    def name(self) -> str:
        """The group's name (the ``name`` argument, or the class name with a unique suffix)."""
        return self._name

    @property
    def state(self) -> State:
        return self._state

    @property
    def cluster(self) -> VirtualCluster:
        return self._cluster

    @property
    def world_size(self) -> int:
        """The number of workers (known before the group opens)."""
        return len(self._slots)

    @property
    def tied_groups(self) -> list[list[int]]:
        """The ranks of each tied group (leader first); known before the group opens."""
        return [list(g) for g in self._tied]

    @property
    def workers(self) -> list[Any]:
        """The actor handles, in rank order (host actors for a string ``worker_cls``)."""
        self._require_open("workers")
        return list(self._handles)

    @property
    def metadata(self) -> list[WorkerMetadata]:
        """One :class:`WorkerMetadata` per worker, in rank order (stays readable after
        shutdown)."""
        if not self._metadata:
            raise WorkerGroupStateError(
                f"WorkerGroup {self._name!r} is {self._state}: metadata needs an opened group"
            )
        return list(self._metadata)

    def layout(self) -> str:
        """The cluster's grid with this group's workers (``cluster.layout(self)``)."""
        return self._cluster.layout(self)

    def __len__(self) -> int:
        return len(self._slots)

    def __repr__(self) -> str:
        return (
            f"WorkerGroup({self._name!r}, {self._cls_name}, {len(self._slots)} workers, "
            f"state={self._state!r})"
        )

    def _require_open(self, what: str) -> None:
        if self._state != "open":
            raise WorkerGroupStateError(
                f"WorkerGroup {self._name!r} is {self._state}: {what} needs an open group "
                "(use `async with WorkerGroup(...) as group`)"
            )

    # ---------------------------------------------------------------- opening

    async def aclose(self) -> None:
        """:meth:`shutdown` with its defaults (what ``async with`` does on exit): every actor
        is killed, whatever ended the block.

        Cancellation: the kill still happens (it is shielded); only the wait for the actors'
        deaths is cut short.
        """
        await self.shutdown()

    async def open(self) -> None:
        """Create every worker, concurrently, and wait until each answers (``async with``).

        Raises :class:`WorkerGroupStateError` unless the group is unopened,
        ``ClusterStateError`` when the cluster is not open, ``ValueError`` for a bad
        ``configure_worker`` result or a group name already taken by live actors, and
        :class:`WorkerFailedError` (rank, name, node id; the Ray error as ``__cause__``) when a
        worker could not start -- its constructor raised, or its process died.

        An actor that cannot be scheduled (its bundle is already taken by other groups beyond
        ``max_colocated``) waits for its resources: bound the opening with
        ``anyio.fail_after``.

        Cancellation: safe at any point; every actor made so far is killed (the kill is
        shielded from the cancellation) and the group is ``unopened`` again.
        """
        if self._state != "unopened":
            raise WorkerGroupStateError(
                f"WorkerGroup {self._name!r} is {self._state}; it can be opened once only"
            )
        self._state = "opening"
        created: list[Any] = [None] * len(self._slots)
        try:
            await self._start(created)
            if self._state != "opening":
                raise WorkerGroupStateError(
                    f"WorkerGroup {self._name!r} was shut down while it was being opened"
                )
        except BaseException:
            made = [h for h in created if h is not None]
            with anyio.CancelScope(shield=True):
                await _kill(made, wait=True)
            if self._state == "opening":
                self._state = "unopened"
                self._metadata = []
            raise
        self._handles = created
        self._state = "open"
        log.debug("WorkerGroup %r open: %d workers", self._name, len(created))

    async def _start(self, created: list[Any]) -> None:
        cluster = self._cluster
        pgs = cluster.placement_groups  # ClusterStateError unless open
        bundle = cluster.bundle()
        share = 1.0 / cluster.max_colocated if cluster.use_gpus else 0.0

        calls = [
            (share, (s.node_idx, [self._slots[r].bundle_index for r in self._tied[s.tied_group]]))
            if s.tied_rank == 0
            else (share, None)
            for s in self._slots
        ]
        # Independent look-ups, side by side: the string worker's description (a task in
        # its runtime_env), the master address (a task on rank 0's bundle), the bundles' nodes.
        found: dict[str, Any] = {}

        async def describe_worker() -> None:
            if self._path is None:
                return
            describe, _, _ = _helpers()
            found["info"] = await describe.options(
                runtime_env=self._base_runtime_env(),
                scheduling_strategy=PlacementGroupSchedulingStrategy(
                    placement_group=pgs[self._slots[0].node_idx],
                    placement_group_bundle_index=self._slots[0].bundle_index,
                ),
            ).remote(self._path, calls)

        async def master_address() -> None:
            found["master"] = await self._master_address(pgs)

        async def node_ids_of_bundles() -> None:
            found["node_ids"] = await anyio.to_thread.run_sync(_bundle_node_ids, pgs)

        await _concurrently([describe_worker, master_address, node_ids_of_bundles])

        hooks: list[Any] | None = None
        if "info" in found:
            info = found["info"]
            self._methods = set(info["methods"])
            self._host_async = bool(info["is_async"])
            self._cls_name = str(info["name"])
            hooks = info["hook"]
        elif self._hook is not None:
            hooks = [self._hook(num_gpus=g, bundle_indices=b) for g, b in calls]
        master: tuple[str, int] = found["master"]
        node_ids: list[dict[int, str]] = found["node_ids"]
        specs = self._specs(pgs, bundle, share, master, hooks)
        self._metadata = [
            WorkerMetadata(
                rank=s.slot.rank,
                local_rank=s.slot.local_rank,
                node_idx=s.slot.node_idx,
                node_id=node_ids[s.slot.node_idx].get(s.slot.bundle_index, ""),
                bundle_index=s.slot.bundle_index,
                tied_group=s.slot.tied_group,
                name=s.name,
                node_rank=s.slot.node_rank,
                tied_rank=s.slot.tied_rank,
            )
            for s in specs
        ]

        if self._path is not None:
            _, sync_host, async_host = _helpers()
            actor_cls = async_host if self._host_async else sync_host
            args: tuple[Any, ...] = (self._path, *self._init_args)
        else:
            assert self._cls is not None
            actor_cls = self._actor_cls or ray.remote(self._cls)
            args = self._init_args

        def create(i: int) -> None:
            spec = specs[i]
            try:
                created[i] = actor_cls.options(**spec.options).remote(*args, **spec.init_kwargs)
            except ValueError as exc:
                if "already taken" in str(exc) or "already exists" in str(exc):
                    raise ValueError(
                        f"an actor named {spec.name!r} already exists: is another WorkerGroup "
                        f"named {self._name!r} open? Pick another name"
                    ) from exc
                raise

        # Named-actor creation is a GCS round trip each: run them side by side in threads.
        # (A thread is never abandoned: a cancelled opening still learns of every actor made.)
        await _concurrently(
            [functools.partial(anyio.to_thread.run_sync, create, i) for i in range(len(specs))]
        )

        ready = [h.__ray_ready__.remote() for h in created]
        async with as_completed(ready, return_exceptions=True) as stream:
            async for rank, value in stream:
                if isinstance(value, RayError):
                    meta = self._metadata[rank]
                    raise WorkerFailedError(
                        f"worker rank {rank} ({meta.name}) of WorkerGroup {self._name!r} could "
                        f"not start: {value}",
                        rank=rank,
                        name=meta.name,
                        node_id=meta.node_id,
                    ) from value

    def _base_runtime_env(self) -> dict[str, Any]:
        env = dict(self._runtime_env)
        if self._caller_env:
            env["env_vars"] = dict(self._caller_env)
        return env

    async def _master_address(self, pgs: list[PlacementGroup]) -> tuple[str, int]:
        first = self._slots[0]
        if (first.node_idx, first.bundle_index) == (0, 0):
            return await self._cluster.master_address()
        pg = pgs[first.node_idx]
        return await bundle_node_ip(pg, first.bundle_index), await free_port(pg, first.bundle_index)

    def _specs(
        self,
        pgs: list[PlacementGroup],
        bundle: Mapping[str, float],
        share: float,
        master: tuple[str, int],
        hooks: list[Any] | None,
    ) -> list[_Spec]:
        """The options of every worker, the hook's results folded in (raises before any
        actor exists)."""
        overrides: dict[str, list[int]] = {}
        specs = []
        for slot in self._slots:
            resources: dict[str, Any] = {"num_cpus": 1.0, "num_gpus": share}
            env = dict(self._caller_env)
            kwargs = dict(self._init_kwargs)
            if hooks is not None:
                h_res, h_env, h_kwargs = self._check_hook_result(hooks[slot.rank], slot.rank)
                for key, value in h_res.items():
                    if resources.get(key) != value:
                        overrides.setdefault(f"resource {key}={value!r}", []).append(slot.rank)
                    resources[key] = value
                for key, text in h_env.items():
                    if key in env and env[key] != text:
                        overrides.setdefault(f"env {key}={text!r}", []).append(slot.rank)
                    env[key] = text
                for key, arg in h_kwargs.items():
                    if key in kwargs and kwargs[key] != arg:
                        overrides.setdefault(f"init kwarg {key}={arg!r}", []).append(slot.rank)
                    kwargs[key] = arg
            for key, have in (
                ("num_cpus", bundle.get("CPU", 0.0)),
                ("num_gpus", bundle.get("GPU", 0.0)),
            ):
                if resources[key] > have + 1e-9:
                    raise ValueError(
                        f"configure_worker of {self._cls_name} asks {key}={resources[key]} for "
                        f"rank {slot.rank}, more than one bundle holds ({have})"
                    )
            name = f"{self._name}-rank{slot.rank}-node{slot.node_idx}-bundle{slot.bundle_index}"
            env.update(
                RANK=str(slot.rank),
                LOCAL_RANK=str(slot.local_rank),
                WORLD_SIZE=str(len(self._slots)),
                NODE_RANK=str(slot.node_rank),
                MASTER_ADDR=master[0],
                MASTER_PORT=str(master[1]),
            )
            options = {
                "name": name,
                **resources,
                "scheduling_strategy": PlacementGroupSchedulingStrategy(
                    placement_group=pgs[slot.node_idx],
                    placement_group_bundle_index=slot.bundle_index,
                    placement_group_capture_child_tasks=True,
                ),
                "runtime_env": {**self._runtime_env, "env_vars": env},
            }
            specs.append(_Spec(slot, name, options, kwargs))
        for what, ranks in overrides.items():
            log.warning(
                "configure_worker of %s overrides the caller's setting: %s on rank(s) %s",
                self._cls_name,
                what,
                ranks,
            )
        return specs

    def _check_hook_result(
        self, result: object, rank: int
    ) -> tuple[dict[str, float], dict[str, str], dict[str, Any]]:
        what = f"configure_worker of {self._cls_name} (rank {rank})"
        if not isinstance(result, tuple | list) or len(result) != 3:
            raise TypeError(f"{what} must return (resources, env, init_kwargs), got {result!r}")
        res, env, kwargs = result
        for part, label in ((res, "resources"), (env, "env"), (kwargs, "init_kwargs")):
            if part is not None and not isinstance(part, Mapping):
                raise TypeError(f"{what}: {label} must be a dict or None, got {part!r}")
        resources: dict[str, float] = {}
        for key, value in dict(res or {}).items():
            if key not in _HOOK_RESOURCES:
                raise ValueError(
                    f"{what}: resources may set {list(_HOOK_RESOURCES)} only, not {key!r} "
                    "(a worker lives inside one placement-group bundle)"
                )
            if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
                raise ValueError(f"{what}: resources[{key!r}] must be a number >= 0")
            resources[key] = float(value)
        return resources, _check_env(env, f"{what} env"), dict(kwargs or {})

    # ---------------------------------------------------------------- dispatch

    def _targets(self, only_on: str) -> list[list[int]]:
        if only_on == "all":
            return [[s.rank] for s in self._slots]
        if only_on == "tied_leader":
            return [[g[0]] for g in self._tied]
        if only_on == "all_tied_workers":
            return [list(g) for g in self._tied]
        raise ValueError(f"only_on must be one of {list(_ONLY_ON)}, got {only_on!r}")

    def _check_method(self, method: object) -> str:
        if not isinstance(method, str):
            raise TypeError(f"method must be a method name (str), not {type(method).__name__}")
        if self._methods is not None and method not in self._methods:
            raise AttributeError(
                f"worker class {self._cls_name} has no method {method!r}",
                name=method,
            )
        return method

    def _submit(
        self, rank: int, method: str, args: tuple[Any, ...], kwargs: Mapping[str, Any]
    ) -> Ref:
        handle = self._handles[rank]
        if self._path is not None:
            ref: Ref = handle.call.remote(method, *args, **kwargs)
        else:
            ref = getattr(handle, method).remote(*args, **kwargs)
        return ref

    def _send(
        self, method: str, targets: list[list[int]], args_of: Any, kwargs: Mapping[str, Any]
    ) -> Dispatch:
        refs: list[list[Ref]] = []
        try:
            for key, ranks in enumerate(targets):
                args = args_of(key, len(ranks))
                refs.append([self._submit(r, method, args, kwargs) for r in ranks])
        except BaseException:
            for group in refs:
                for ref in group:
                    with contextlib.suppress(Exception):
                        ray.cancel(ref)
            raise
        metas = [[self._metadata[r] for r in ranks] for ranks in targets]
        return Dispatch(method, refs, metas)

    def dispatch(
        self,
        method: str,
        shards: Sequence[Any],
        *,
        only_on: OnlyOn = "all",
        **common_kwargs: Any,
    ) -> Dispatch:
        """Call ``method(shards[i], **common_kwargs)`` on target ``i``; see :class:`Dispatch`.

        Targets: worker ``i`` (``only_on="all"``), the leader of tied group ``i``
        (``"tied_leader"``), or every worker of tied group ``i`` (``"all_tied_workers"``, one
        result per tied group: the leader's value). Fewer shards than targets use the first
        targets (logged); more is a ``ValueError``; an unknown ``method`` is an
        ``AttributeError`` naming the worker class; a closed or unopened group is a
        :class:`WorkerGroupStateError` -- all raised before anything is sent. A shard sent to
        several workers of a tied group is put in the object store once.

        Not a coroutine: the calls are sent at once; await or iterate the Dispatch for the
        results (cancellation is described there).
        """
        self._require_open("dispatch")
        method = self._check_method(method)
        targets = self._targets(only_on)
        if isinstance(shards, str | bytes | Mapping) or not isinstance(shards, Sequence):
            raise TypeError(
                f"shards must be a sequence with one shard per target, not "
                f"{type(shards).__name__} (use asyncpool.sharding.shard to split a batch)"
            )
        n = len(shards)
        if n > len(targets):
            raise ValueError(
                f"{n} shards for {len(targets)} target(s) of WorkerGroup {self._name!r} "
                f"(only_on={only_on!r}); give at most one shard per target"
            )
        if n < len(targets):
            log.info(
                "dispatch %r on %r: %d shard(s) for %d target(s) (only_on=%r); "
                "the first %d target(s) get one, the rest nothing",
                method,
                self._name,
                n,
                len(targets),
                only_on,
                n,
            )
        targets = targets[:n]

        def args_of(key: int, fanout: int) -> tuple[Any, ...]:
            shard = shards[key]
            return (ray.put(shard),) if fanout > 1 else (shard,)

        return self._send(method, targets, args_of, common_kwargs)

    def broadcast(
        self,
        method: str,
        *args: Any,
        only_on: OnlyOn = "all",
        **kwargs: Any,
    ) -> Dispatch:
        """Call ``method(*args, **kwargs)`` on every selected worker; see :meth:`dispatch`.

        One result per target: per worker (``"all"``), per tied group (``"tied_leader"``,
        ``"all_tied_workers"`` -- the leader's value). Not a coroutine: the calls are sent at
        once; cancellation is described in :class:`Dispatch`.
        """
        self._require_open("broadcast")
        method = self._check_method(method)
        targets = self._targets(only_on)
        return self._send(method, targets, lambda key, fanout: args, kwargs)

    # ---------------------------------------------------------------- shutdown

    async def shutdown(self, cleanup: str | None = None, timeout: float = 30.0) -> None:
        """Stop the group: call ``cleanup`` on every worker (if given), then kill every actor.

        ``cleanup`` (a method name) runs on all workers at once; whatever has not finished
        after ``timeout`` seconds is cancelled, and its error or timeout is logged, not
        raised. Then every actor is killed (``ray.kill(no_restart=True)``) and its death
        awaited (up to 10 s, a warning otherwise), so its resources are free again when this
        returns. Idempotent: a closed (or never opened) group returns at once. An unknown
        ``cleanup`` name is an ``AttributeError``, raised after the actors were killed.

        Cancellation: the kill is shielded and always happens; cancelling stops the waiting
        (for the cleanup calls, which are cancelled, and for the deaths).
        """
        if isinstance(timeout, bool) or not isinstance(timeout, int | float):
            raise TypeError("timeout must be a number of seconds")
        if math.isnan(timeout) or timeout < 0:
            raise ValueError(f"timeout must be >= 0, got {timeout}")
        if self._state in ("closed", "closing"):
            return
        if self._state in ("unopened", "opening"):
            # An opening in progress sees the new state and kills what it made.
            self._state = "closed"
            return
        self._state = "closing"
        handles, self._handles = self._handles, []
        bad_cleanup: AttributeError | None = None
        try:
            if cleanup is not None:
                try:
                    self._check_method(cleanup)
                except AttributeError as exc:
                    bad_cleanup = exc
                else:
                    await self._cleanup(handles, cleanup, timeout)
        finally:
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(_kill_now, handles)
            self._state = "closed"
        await _wait_dead(handles)
        if bad_cleanup is not None:
            raise bad_cleanup

    async def _cleanup(self, handles: list[Any], method: str, timeout: float) -> None:
        if self._path is not None:
            refs = [h.call.remote(method) for h in handles]
        else:
            refs = [getattr(h, method).remote() for h in handles]
        try:
            async with as_completed(refs, timeout=timeout, return_exceptions=True) as stream:
                async for rank, value in stream:
                    if isinstance(value, RayError):
                        log.warning(
                            "WorkerGroup %r: %s failed on rank %d: %s",
                            self._name,
                            method,
                            rank,
                            value,
                        )
        except TaskTimeoutError:
            log.warning(
                "WorkerGroup %r: %s did not finish on every worker within %ss; killing them",
                self._name,
                method,
                timeout,
            )


# --------------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------------


async def _concurrently(fns: Sequence[Callable[[], Awaitable[Any]]]) -> None:
    """Run ``fns`` side by side; on the first failure cancel the others and raise it as is
    (not wrapped in an exception group)."""
    errors: list[Exception] = []

    async def run(fn: Callable[[], Awaitable[Any]], tg: anyio.abc.TaskGroup) -> None:
        try:
            await fn()
        except Exception as exc:
            errors.append(exc)
            tg.cancel_scope.cancel()

    async with anyio.create_task_group() as tg:
        for fn in fns:
            tg.start_soon(run, fn, tg)
    if errors:
        raise errors[0]


def _bundle_node_ids(pgs: Sequence[PlacementGroup]) -> list[dict[int, str]]:
    """The node id of every bundle of every group (a blocking GCS read: run in a thread)."""
    out = []
    for pg in pgs:
        info = placement_group_table(pg) or {}
        where: Mapping[int, Any] = info.get("bundles_to_node_id") or {}
        out.append({int(i): str(node) for i, node in where.items()})
    return out


def _kill_now(handles: Sequence[Any]) -> None:
    for handle in handles:
        try:
            ray.kill(handle, no_restart=True)
        except Exception:  # already dead, or Ray shutting down
            log.debug("ray.kill failed", exc_info=True)


async def _wait_dead(handles: Sequence[Any], bound: float = _DEATH_WAIT_S) -> None:
    """Await the death of killed actors: a ping to a dead actor fails with ActorDiedError."""
    if not handles or not ray.is_initialized():
        return
    pending = list(handles)
    deadline = anyio.current_time() + bound
    while pending:
        remaining = deadline - anyio.current_time()
        if remaining <= 0:
            log.warning("%d killed worker(s) not reported dead within %ss", len(pending), bound)
            return
        pings = [h.__ray_ready__.remote() for h in pending]
        alive = []
        try:
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


async def _kill(handles: Sequence[Any], *, wait: bool) -> None:
    if not handles:
        return
    await anyio.to_thread.run_sync(_kill_now, handles)
    if wait:
        await _wait_dead(handles)
