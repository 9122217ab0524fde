"""The shape of the cluster and how one tensor-parallel replica fits it.

Owns :class:`NodeInfo` and :func:`topology` (the alive nodes from their *total* resources),
:class:`ReplicaSpec` and :func:`plan_replica` (one node when one is big enough, else the smallest
even split), and :data:`WORKER_LABEL`. All are re-exported by :mod:`asyncpool.placement`, their
public home. Must not: allocate anything or touch the event loop (``plan_replica`` is pure;
``topology`` is one blocking GCS read, documented as such for synchronous callers).

Worker-node label. :func:`plan_replica` with ``ignore_head=True`` keeps replicas off the head
node by giving every bundle the label selector :data:`WORKER_LABEL`
(``{"asyncpool-role": "worker"}``). The worker nodes of your cluster must carry that label:
``ray start --address=... --labels="asyncpool-role=worker"`` (or ``labels=`` of
``ray.cluster_utils.Cluster.add_node``); pass ``worker_label=`` to use a label of your own.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Final, Literal

from . import _gcs, _validate
from .errors import ResourceInsufficientError

__all__ = ["WORKER_LABEL", "NodeInfo", "ReplicaSpec", "plan_replica", "topology"]

#: The label worker (non-head) nodes must carry for ``plan_replica(..., ignore_head=True)``.
WORKER_LABEL: Final[Mapping[str, str]] = MappingProxyType({"asyncpool-role": "worker"})


@dataclass(frozen=True)
class NodeInfo:
    """One alive node, from its *total* resources (what it has, not what is free now).

    ``labels`` are the node's Ray labels (they do not take part in equality or hashing).
    """

    node_id: str
    ip: str
    num_gpus: float
    num_cpus: float
    is_head: bool
    labels: Mapping[str, str] = field(
        default_factory=lambda: MappingProxyType({}), compare=False, hash=False
    )


def topology(ignore_head: bool = False) -> list[NodeInfo]:
    """The alive nodes of the cluster, from their total resources, head node first.

    ``ignore_head=True`` leaves the head node out (it usually runs the GCS and the driver and
    has no GPUs to spare). This is a quick but blocking GCS call; from async code run it as
    ``await anyio.to_thread.run_sync(topology)``.
    """
    _gcs.require_ray()
    return [
        NodeInfo(
            node_id=n.node_id,
            ip=n.ip,
            num_gpus=n.resources.get("GPU", 0.0),
            num_cpus=n.resources.get("CPU", 0.0),
            is_head=n.is_head,
            labels=MappingProxyType(dict(n.labels)),
        )
        for n in _gcs.alive_nodes()
        if not (ignore_head and n.is_head)
    ]


@dataclass(frozen=True)
class ReplicaSpec:
    """How to place one tensor-parallel replica: pass it on to :func:`allocate`.

    * ``strategy == "STRICT_PACK"`` (``nnodes == 1``): one bundle per GPU, all on one node.
    * ``strategy == "STRICT_SPREAD"``: one bundle per node, each holding that node's even share
      of the GPUs (``gpus_per_node``); ``STRICT_SPREAD`` puts every bundle on a distinct node,
      so the share of a node cannot be split into per-GPU bundles. Workers then use
      ``num_gpus=1`` each inside their node's bundle.

    ``label_selector`` (one selector per bundle, or ``None``) keeps the bundles off the head
    node when the plan was made with ``ignore_head=True``.
    ``await allocate(**spec.allocate_kwargs())`` allocates it.
    """

    bundles: list[dict[str, float]]
    strategy: Literal["STRICT_PACK", "STRICT_SPREAD"]
    nnodes: int
    label_selector: list[dict[str, str]] | None = None

    @property
    def gpus_per_node(self) -> float:
        """GPUs the replica uses on each of its nodes."""
        return sum(b.get("GPU", 0.0) for b in self.bundles) / self.nnodes

    def allocate_kwargs(self) -> dict[str, Any]:
        """``bundles``, ``strategy`` and ``label_selector`` as keyword arguments of allocate."""
        return {
            "bundles": [dict(b) for b in self.bundles],
            "strategy": self.strategy,
            "label_selector": None
            if self.label_selector is None
            else [dict(s) for s in self.label_selector],
        }


def plan_replica(
    tp_size: int,
    nodes: Sequence[NodeInfo],
    *,
    ignore_head: bool = False,
    worker_label: Mapping[str, str] = WORKER_LABEL,
    cpus_per_gpu: float = 0.0,
) -> ReplicaSpec:
    """Plan the placement of one replica of ``tp_size`` tied GPUs (pure logic, no Ray calls).

    One node when a node has ``tp_size`` GPUs (``STRICT_PACK``). Otherwise the smallest even
    split: the smallest ``nnodes`` with ``tp_size % nnodes == 0`` and at least ``nnodes`` nodes
    that each have ``tp_size / nnodes`` GPUs (``STRICT_SPREAD``). An uneven split (1 + 3 GPUs
    for ``tp_size=4``) is never planned: tensor-parallel shards must be equal.
    :class:`~asyncpool.errors.ResourceInsufficientError` when no plan exists.

    ``ignore_head=True`` leaves head nodes out of ``nodes`` and gives every bundle the label
    selector ``worker_label`` (see the module docstring for the label your worker nodes must
    carry). ``cpus_per_gpu`` adds that many CPUs per GPU to the bundles.
    """
    tp_size = _validate.positive_int(tp_size, "tp_size")
    if isinstance(nodes, str | bytes) or not isinstance(nodes, Sequence):
        raise TypeError(f"nodes must be a sequence of NodeInfo, got {type(nodes).__name__}")
    for i, n in enumerate(nodes):
        if not isinstance(n, NodeInfo):
            raise TypeError(f"nodes[{i}] must be a NodeInfo, got {type(n).__name__}")
    cpus_per_gpu = _validate.non_negative_number(cpus_per_gpu, "cpus_per_gpu")
    selector = _validate.str_mapping(worker_label, "worker_label") if ignore_head else None

    usable = [n for n in nodes if not (ignore_head and n.is_head)]
    gpus = [math.floor(n.num_gpus + 1e-9) for n in usable]

    def bundle(n_gpus: int) -> dict[str, float]:
        b = {"GPU": float(n_gpus)}
        if cpus_per_gpu:
            b["CPU"] = float(cpus_per_gpu * n_gpus)
        return b

    def spec(bundles: list[dict[str, float]], strategy: Any, nnodes: int) -> ReplicaSpec:
        selectors = None if selector is None else [dict(selector) for _ in bundles]
        return ReplicaSpec(bundles, strategy, nnodes, selectors)

    if any(g >= tp_size for g in gpus):
        return spec([bundle(1) for _ in range(tp_size)], "STRICT_PACK", 1)
    for nnodes in range(2, tp_size + 1):
        if tp_size % nnodes:
            continue
        share = tp_size // nnodes
        if sum(1 for g in gpus if g >= share) >= nnodes:
            return spec([bundle(share) for _ in range(nnodes)], "STRICT_SPREAD", nnodes)
    where = "worker nodes" if ignore_head else "nodes"
    raise ResourceInsufficientError(
        f"no even placement of a tensor-parallel replica of GPU={tp_size}: requested GPU={tp_size} "
        f"on one node or split evenly over nodes (tp_size % nnodes == 0); available GPUs per "
        f"{where}: {sorted(gpus, reverse=True) or '[] (no nodes)'} (GPU={sum(gpus)} in all)"
    )
