"""WorkerGroup: the life cycle of a group of pinned actors and the calls sent to them.

Owns :class:`WorkerGroup`: checking its arguments up front, opening (look-ups side by side,
then every actor, then the ready wait), ``dispatch``/``broadcast`` and ``shutdown``. Must not:
plan layouts (``_plan``), build or kill actors itself (``_build``), collect results
(``_dispatch``), or block the event loop (every Ray call here is a non-blocking submission, or
runs in a worker thread or on the dispatch sender thread).
"""

from __future__ import annotations

import asyncio
import logging
import re
import uuid
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import anyio
import ray
from ray.exceptions import RayError
from ray.util.placement_group import PlacementGroup

from .. import _gcs, _validate
from .._concurrent import side_by_side
from .._resource import Lifecycle
from ..errors import TaskTimeoutError, WorkerGroupStateError
from ..placement import bundle_node_ip, free_port
from ..refs import as_completed
from . import _build, _plan
from ._dispatch import Dispatch, Sent, cancel_quietly, send_off_loop
from ._plan import OnlyOn, WorkerMetadata

if TYPE_CHECKING:
    from ..cluster import VirtualCluster

__all__ = ["WorkerGroup"]

log = logging.getLogger("asyncpool.workers")

Ref = Any


class WorkerGroup(Lifecycle):
    """Ray actors pinned to the bundles of a VirtualCluster; see :mod:`asyncpool.workers`.

    ``WorkerGroup(cluster, worker_cls, *init_args, name="", workers_per_node=None, tied=None,
    env=None, runtime_env=None, **init_kwargs)``: ``worker_cls`` is a class (plain or
    ``@ray.remote``) or a ``"module.Class"`` string; ``init_args``/``init_kwargs`` go to its
    constructor on every worker. Every argument is checked here, before anything is created
    (``TypeError``/``ValueError``). The cluster must be open when the group opens.

    Other actor options (``max_concurrency``, ``max_restarts``, ...) come from an
    ``@ray.remote(...)`` class: the group only sets the name, CPU/GPU amounts, scheduling
    strategy and ``runtime_env`` of each worker on top of them.
    """

    state_error = WorkerGroupStateError

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
        from ..cluster import VirtualCluster

        self._cluster: VirtualCluster = _validate.instance(cluster, "cluster", VirtualCluster)
        self._wc = _build.WorkerClass.of(worker_cls)
        _validate.instance(name, "name", str)
        if name and not re.fullmatch(r"[\w.\-]+", name):
            raise ValueError(f"name must hold only letters, digits, '_', '-' and '.', got {name!r}")
        self._name = name or f"{self._wc.name}-{uuid.uuid4().hex[:6]}"
        self._slots = _plan.plan(cluster.bundles_per_node, workers_per_node, tied)
        self._tied = _plan.tied_ranks(self._slots)
        base_env = dict(_validate.instance(runtime_env or {}, "runtime_env", Mapping, "a mapping"))
        env_vars = _plan.check_env(base_env.pop("env_vars", None), "runtime_env['env_vars']")
        self._caller_env = {**env_vars, **_plan.check_env(env, "env")}
        self._runtime_env = base_env
        self._init_args = init_args
        self._init_kwargs = init_kwargs
        self._handles: list[Any] = []
        self._metadata: list[WorkerMetadata] = []
        self._last_send: Sent | None = None

    # ---------------------------------------------------------------- properties

    @property
    def name(self) -> str:
        """The group's name (the ``name`` argument, or the class name with a unique suffix)."""
        return self._name

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
            f"WorkerGroup({self._name!r}, {self._wc.name}, {len(self._slots)} workers, "
            f"state={self._state!r})"
        )

    # ---------------------------------------------------------------- opening

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
        scope = self._begin_open()
        created: list[Any] = [None] * len(self._slots)
        try:
            with scope:
                specs = await self._prepare()
                await _build.create_actors(self._wc, self._init_args, specs, created, self._name)
                await _build.await_ready(created, self._metadata, self._name)
            self._check_still_opening()
        except BaseException:
            with anyio.CancelScope(shield=True):
                await _build.kill([h for h in created if h is not None])
            if self._state == "opening":
                self._metadata = []
            self._open_failed()
            raise
        self._handles = created
        self._set_open()
        log.debug("WorkerGroup %r open: %d workers", self._name, len(created))

    async def _prepare(self) -> list[_plan.Spec]:
        """The look-ups an opening needs, side by side, then every worker's spec and metadata:
        the string worker's description (a task in its ``runtime_env``), the master address
        (a task on rank 0's bundle), the node of every bundle (a GCS read in a thread)."""
        cluster = self._cluster
        pgs = cluster.placement_groups  # ClusterStateError unless open
        share = 1.0 / cluster.max_colocated if cluster.use_gpus else 0.0
        calls = _plan.hook_calls(self._slots, share)
        found: dict[str, Any] = {"hooks": None}

        async def describe() -> None:
            if self._wc.path is not None:
                found["hooks"] = await _build.describe_remote(
                    self._wc,
                    calls,
                    self._base_runtime_env(),
                    pgs[self._slots[0].node_idx],
                    self._slots[0].bundle_index,
                )
            elif self._wc.hook is not None:
                found["hooks"] = [self._wc.hook(num_gpus=g, bundle_indices=b) for g, b in calls]

        async def master() -> None:
            found["master"] = await self._master_address(pgs)

        async def nodes() -> None:
            found["nodes"] = await _gcs.bundle_nodes_async(pgs)

        await side_by_side([describe, master, nodes])
        ctx = _plan.Context(
            group=self._name,
            cls_name=self._wc.name,
            pgs=pgs,
            bundle=cluster.bundle(),
            share=share,
            master=found["master"],
            caller_env=self._caller_env,
            runtime_env=self._runtime_env,
            init_kwargs=self._init_kwargs,
        )
        specs = _plan.worker_specs(self._slots, ctx, found["hooks"])
        node_ids: list[dict[int, str]] = found["nodes"]
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
        return specs

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

    # ---------------------------------------------------------------- dispatch

    def _send(
        self, method: str, targets: list[list[int]], args_of: Any, kwargs: Mapping[str, Any]
    ) -> Dispatch:
        """Send the calls from the sender thread (never on the event loop); see Dispatch."""
        wc, handles = self._wc, list(self._handles)

        def send() -> list[list[Ref]]:
            refs: list[list[Ref]] = []
            try:
                for key, ranks in enumerate(targets):
                    args = args_of(key, len(ranks))
                    group = [_build.call(wc, handles[r], method, *args, **kwargs) for r in ranks]
                    refs.append(group)
            except BaseException:
                cancel_quietly([ref for group in refs for ref in group])
                raise
            return refs

        self._last_send = send_off_loop(send)
        metas = [[self._metadata[r] for r in ranks] for ranks in targets]
        return Dispatch(method, self._last_send, metas)

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

        Not a coroutine: the calls are sent at once, by the dispatch sender thread (shards are
        serialised and put off the event loop); await or iterate the Dispatch for the results
        (cancellation is described there).
        """
        self._require_open("dispatch")
        method = self._wc.check_method(method)
        targets = _plan.targets(only_on, self._slots, self._tied)
        if isinstance(shards, str | bytes | Mapping) or not isinstance(shards, Sequence):
            raise TypeError(
                f"shards must be a sequence with one shard per target, got "
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
        shards = list(shards)

        def args_of(key: int, fanout: int) -> tuple[Any, ...]:
            shard = shards[key]
            return (ray.put(shard),) if fanout > 1 else (shard,)

        return self._send(method, targets[:n], args_of, common_kwargs)

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
        once (from the sender thread); cancellation is described in :class:`Dispatch`.
        """
        self._require_open("broadcast")
        method = self._wc.check_method(method)
        targets = _plan.targets(only_on, self._slots, self._tied)
        return self._send(method, targets, lambda key, fanout: args, kwargs)

    # ---------------------------------------------------------------- shutdown

    async def aclose(self) -> None:
        """:meth:`shutdown` with its defaults (what ``async with`` does on exit): every actor
        is killed, whatever ended the block.

        Cancellation: the kill still happens (it is shielded); only the wait for the actors'
        deaths is cut short.
        """
        await self.shutdown()

    async def shutdown(self, cleanup: str | None = None, timeout: float | None = 30.0) -> None:
        """Stop the group: call ``cleanup`` on every worker (if given), then kill every actor.

        ``cleanup`` (a method name) runs on all workers at once, after every call already
        dispatched was sent; whatever has not finished after ``timeout`` seconds (``None``: no
        limit) is cancelled, and its error or timeout is logged, not raised. Then every actor
        is killed (``ray.kill(no_restart=True)``) and its death awaited (up to 10 s, a warning
        otherwise), so its resources are free again when this returns. Idempotent: a closed (or
        never opened) group returns at once; a group still opening stops waiting for its
        workers at once, and that opening kills what it made and raises
        :class:`WorkerGroupStateError`. An unknown ``cleanup`` name is an
        ``AttributeError``, raised after the actors were killed.

        Cancellation: the kill is shielded and always happens; cancelling stops the waiting
        (for the cleanup calls, which are cancelled, and for the deaths).
        """
        seconds = _validate.timeout(timeout)
        if self._state in ("closed", "closing"):
            return
        if self._state in ("unopened", "opening"):
            # An opening in progress is cancelled, sees the new state and kills what it made.
            self._set_closed()
            return
        self._state = "closing"
        handles, self._handles = self._handles, []
        bad_cleanup: AttributeError | None = None
        try:
            if cleanup is not None:
                try:
                    self._wc.check_method(cleanup)
                except AttributeError as exc:
                    bad_cleanup = exc
                else:
                    await self._cleanup(handles, cleanup, seconds)
        finally:
            self._set_closed()
            await _build.kill(handles)
        if bad_cleanup is not None:
            raise bad_cleanup

    async def _cleanup(self, handles: list[Any], method: str, timeout: float | None) -> None:
        if self._last_send is not None:  # keep the order: dispatched calls first
            await asyncio.shield(asyncio.wrap_future(self._last_send))
        refs = [_build.call(self._wc, h, method) for h in handles]
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
