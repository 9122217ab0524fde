"""WorkerGroup: Ray actors pinned to the bundles of a VirtualCluster, driven from async code.

The package is split along its seams: ``_plan`` (layouts, ranks, environment, actor options:
pure), ``_build`` (the worker class, string workers, making and killing actors), ``_remote``
(what string workers run remotely, shipped by value), ``_dispatch`` (:class:`Dispatch` and the
sender thread) and ``_group`` (:class:`WorkerGroup`). Import from here; the private modules
may change. Nothing in this package blocks the event loop.

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
    using a closed one raises :class:`~asyncpool.errors.WorkerGroupStateError` (a
    ``ResourceStateError``).

Dispatch
    :meth:`WorkerGroup.dispatch` and :meth:`WorkerGroup.broadcast` return a :class:`Dispatch`
    (see there): an async iterator of ``(shard_index, value)`` in completion order, awaitable for
    the values in shard order. With ``only_on="all_tied_workers"`` the result of a tied group is
    its *leader's* value (every worker of the group must finish; the others' values are dropped:
    tensor-parallel ranks return the same output, as NeMo-RL assumes when it keeps the leader's).
"""
from __future__ import annotations

from ..errors import WorkerGroupStateError as WorkerGroupStateError
from ._dispatch import Dispatch
from ._group import WorkerGroup
from ._plan import RAY_INTERNAL_ENV_VARS as RAY_INTERNAL_ENV_VARS
from ._plan import RESERVED_ENV_VARS as RESERVED_ENV_VARS
from ._plan import OnlyOn as OnlyOn
from ._plan import WorkerMetadata

__all__ = ["Dispatch", "WorkerGroup", "WorkerMetadata"]
