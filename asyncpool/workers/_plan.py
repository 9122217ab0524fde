"""Where each worker of a group goes and what it is told: pure planning, no Ray calls.

Owns the layout rules (default, ``workers_per_node``, ``tied``), the ranks and the six
distributed variables, the environment checks, the ``configure_worker`` result check, the
per-worker actor options (:func:`worker_specs`) and the dispatch targets (:func:`targets`).
Must not: call Ray, create anything, or touch the event loop: every function here is pure, so
that a bad layout is refused in the constructor, before anything exists.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from ray.util.placement_group import PlacementGroup
from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy

from .. import _validate

__all__ = [
    "RAY_INTERNAL_ENV_VARS",
    "RESERVED_ENV_VARS",
    "OnlyOn",
    "Slot",
    "Spec",
    "WorkerMetadata",
    "Context",
    "check_env",
    "hook_calls",
    "plan",
    "tied_ranks",
    "targets",
    "worker_specs",
]

log = logging.getLogger("asyncpool.workers")

OnlyOn: TypeAlias = Literal["all", "tied_leader", "all_tied_workers"]
_ONLY_ON: tuple[str, ...] = ("all", "tied_leader", "all_tied_workers")
_HOOK_RESOURCES = ("num_gpus", "num_cpus")

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
class Slot:
    """A worker of the plan, before anything exists."""

    rank: int
    node_idx: int
    bundle_index: int
    tied_group: int
    tied_rank: int
    local_rank: int
    node_rank: int


@dataclass
class Spec:
    """Everything needed to create one worker."""

    slot: Slot
    name: str
    options: dict[str, Any]
    init_kwargs: dict[str, Any]


# --------------------------------------------------------------------------------------------
# layout
# --------------------------------------------------------------------------------------------


def plan(
    bundles_per_node: Sequence[int],
    workers_per_node: int | Sequence[int] | None,
    tied: Sequence[tuple[int, Sequence[int]]] | None,
) -> list[Slot]:
    """Every worker's slot, in rank order; raises on a bad layout (see the package docs)."""
    if tied is not None and workers_per_node is not None:
        raise ValueError("give either workers_per_node or tied, not both")
    if tied is not None:
        groups = _tied_groups(bundles_per_node, tied)
    else:
        counts = _counts(bundles_per_node, workers_per_node)
        groups = [[(node, b)] for node, c in enumerate(counts) for b in range(c)]
    slots: list[Slot] = []
    local: dict[int, int] = {}
    node_rank: dict[int, int] = {}
    for g, members in enumerate(groups):
        for t, (node, b) in enumerate(members):
            node_rank.setdefault(node, len(node_rank))
            slots.append(
                Slot(
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


def _counts(bundles_per_node: Sequence[int], workers_per_node: object) -> list[int]:
    """Workers per virtual node for the default layout or ``workers_per_node``."""
    shape = f"(bundles per node: {list(bundles_per_node)})"
    if workers_per_node is None:
        return list(bundles_per_node)
    if isinstance(workers_per_node, int) and not isinstance(workers_per_node, bool):
        k = _validate.positive_int(workers_per_node, "workers_per_node")
        short = [i for i, n in enumerate(bundles_per_node) if n < k]
        if short:
            raise ValueError(
                f"workers_per_node={k}, but node(s) {short} have only "
                f"{[bundles_per_node[i] for i in short]} bundle(s) {shape}"
            )
        return [k] * len(bundles_per_node)
    if isinstance(workers_per_node, str | bytes) or not isinstance(workers_per_node, Sequence):
        raise TypeError(
            "workers_per_node must be None, an int or a list of ints, "
            f"got {workers_per_node!r} ({type(workers_per_node).__name__})"
        )
    counts = [
        _validate.non_negative_int(c, f"workers_per_node[{i}]")
        for i, c in enumerate(workers_per_node)
    ]
    if len(counts) != len(bundles_per_node):
        raise ValueError(
            f"workers_per_node has {len(counts)} entries for a cluster of "
            f"{len(bundles_per_node)} node(s) {shape}"
        )
    for i, (c, n) in enumerate(zip(counts, bundles_per_node, strict=True)):
        if c > n:
            raise ValueError(f"workers_per_node[{i}] must be in 0..{n} (node {i}), got {c}")
    if sum(counts) == 0:
        raise ValueError(f"workers_per_node must place some worker, got {counts} (no worker)")
    return counts


def _tied_groups(bundles_per_node: Sequence[int], tied: object) -> list[list[tuple[int, int]]]:
    """The tied groups as lists of ``(node_idx, bundle_index)``."""
    if isinstance(tied, str | bytes | Mapping) or not isinstance(tied, Sequence):
        raise TypeError(f"tied must be a list of (node_idx, [bundle, ...]) pairs, got {tied!r}")
    if not tied:
        raise ValueError("tied must name at least one tied group, got []")
    groups: list[list[tuple[int, int]]] = []
    seen: dict[tuple[int, int], int] = {}
    for g, entry in enumerate(tied):
        if isinstance(entry, str | bytes) or not isinstance(entry, Sequence) or len(entry) != 2:
            raise ValueError(f"tied[{g}] must be a (node_idx, [bundle, ...]) pair, got {entry!r}")
        node = _validate.non_negative_int(entry[0], f"tied[{g}] node_idx")
        bundles = entry[1]
        if isinstance(bundles, str | bytes) or not isinstance(bundles, Sequence):
            raise ValueError(f"tied[{g}] bundles must be a list of ints, got {bundles!r}")
        if node >= len(bundles_per_node):
            raise ValueError(
                f"tied[{g}]: node_idx {node} out of range "
                f"(the cluster has {len(bundles_per_node)} node(s))"
            )
        if not bundles:
            raise ValueError(f"tied[{g}]: a tied group needs at least one bundle")
        group = []
        for b in bundles:
            b = _validate.non_negative_int(b, f"tied[{g}] bundle")
            if b >= bundles_per_node[node]:
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


def tied_ranks(slots: Sequence[Slot]) -> list[list[int]]:
    """The ranks of each tied group, leader first."""
    out: list[list[int]] = []
    for slot in slots:
        if slot.tied_rank == 0:
            out.append([])
        out[-1].append(slot.rank)
    return out


def targets(
    only_on: object, slots: Sequence[Slot], tied: Sequence[Sequence[int]]
) -> list[list[int]]:
    """The ranks of each dispatch target for ``only_on``."""
    mode = _validate.one_of(only_on, "only_on", _ONLY_ON)
    if mode == "all":
        return [[s.rank] for s in slots]
    if mode == "tied_leader":
        return [[g[0]] for g in tied]
    return [list(g) for g in tied]


# --------------------------------------------------------------------------------------------
# environment and the configure_worker hook
# --------------------------------------------------------------------------------------------


def check_env(env: object, what: str) -> dict[str, str]:
    """A copy of ``env`` with Ray-internal names dropped; reserved names are a ValueError."""
    out = _validate.str_mapping(env, what)
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


def _hook_result(
    result: object, what: str
) -> tuple[dict[str, float], dict[str, str], dict[str, Any]]:
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
        resources[key] = _validate.non_negative_number(value, f"{what}: resources[{key!r}]")
    return resources, check_env(env, f"{what} env"), dict(kwargs or {})


def hook_calls(slots: Sequence[Slot], share: float) -> list[tuple[float, Any]]:
    """The ``(num_gpus, bundle_indices)`` of each worker's ``configure_worker`` call:
    ``(node_idx, [bundles of its tied group])`` for a leader, ``None`` for the others."""
    tied = tied_ranks(slots)
    return [
        (share, (s.node_idx, [slots[r].bundle_index for r in tied[s.tied_group]]))
        if s.tied_rank == 0
        else (share, None)
        for s in slots
    ]


# --------------------------------------------------------------------------------------------
# per-worker actor options
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Context:
    """What :func:`worker_specs` needs beyond the slots (all known once the cluster is open)."""

    group: str
    cls_name: str
    pgs: Sequence[PlacementGroup]
    bundle: Mapping[str, float]
    share: float
    master: tuple[str, int]
    caller_env: Mapping[str, str]
    runtime_env: Mapping[str, Any]
    init_kwargs: Mapping[str, Any]


def worker_specs(slots: Sequence[Slot], ctx: Context, hooks: Sequence[Any] | None) -> list[Spec]:
    """The options of every worker, the hook's results folded in (raises before any actor
    exists); a warning names every caller setting a hook overrides."""
    overrides: dict[str, list[int]] = {}
    specs = []
    for slot in slots:
        resources: dict[str, float] = {"num_cpus": 1.0, "num_gpus": ctx.share}
        env = dict(ctx.caller_env)
        kwargs = dict(ctx.init_kwargs)
        if hooks is not None:
            what = f"configure_worker of {ctx.cls_name} (rank {slot.rank})"
            h_res, h_env, h_kwargs = _hook_result(hooks[slot.rank], what)
            merges: list[tuple[str, dict[str, Any], Mapping[str, Any]]] = [
                ("resource", resources, h_res),
                ("env", env, h_env),
                ("init kwarg", kwargs, h_kwargs),
            ]
            for label, mine, theirs in merges:
                for key, value in theirs.items():
                    if key in mine and mine[key] != value:
                        overrides.setdefault(f"{label} {key}={value!r}", []).append(slot.rank)
                    mine[key] = value
        for key, resource in (("num_cpus", "CPU"), ("num_gpus", "GPU")):
            have = ctx.bundle.get(resource, 0.0)
            if resources[key] > have + 1e-9:
                raise ValueError(
                    f"configure_worker of {ctx.cls_name} asks {key}={resources[key]} for "
                    f"rank {slot.rank}, more than one bundle holds ({have})"
                )
        specs.append(_spec(slot, ctx, len(slots), resources, env, kwargs))
    for what, ranks in overrides.items():
        log.warning(
            "configure_worker of %s overrides the caller's setting: %s on rank(s) %s",
            ctx.cls_name,
            what,
            ranks,
        )
    return specs


def _spec(
    slot: Slot,
    ctx: Context,
    world: int,
    resources: Mapping[str, float],
    env: dict[str, str],
    kwargs: dict[str, Any],
) -> Spec:
    name = f"{ctx.group}-rank{slot.rank}-node{slot.node_idx}-bundle{slot.bundle_index}"
    env.update(
        RANK=str(slot.rank),
        LOCAL_RANK=str(slot.local_rank),
        WORLD_SIZE=str(world),
        NODE_RANK=str(slot.node_rank),
        MASTER_ADDR=ctx.master[0],
        MASTER_PORT=str(ctx.master[1]),
    )
    options = {
        "name": name,
        **resources,
        "scheduling_strategy": PlacementGroupSchedulingStrategy(
            placement_group=ctx.pgs[slot.node_idx],
            placement_group_bundle_index=slot.bundle_index,
            placement_group_capture_child_tasks=True,
        ),
        "runtime_env": {**ctx.runtime_env, "env_vars": env},
    }
    return Spec(slot, name, options, kwargs)
