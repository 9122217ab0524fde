"""VirtualCluster: one placement group per (virtual) node, and the layout grid of its workers.

Owns :class:`VirtualCluster`: reserving, describing and releasing the placement groups a
training job's worker groups share. Must not: create actors (``asyncpool.workers`` does), judge
feasibility itself (``_feasibility``), or call Ray on the event loop (``_gcs``, ``placement``).

A :class:`VirtualCluster` reserves the GPUs a training job's worker groups will share: one
placement group per entry of ``bundles_per_node`` -- a *virtual node* -- each with that many
bundles of ``{"CPU": max_colocated, "GPU": 1}``, ``STRICT_PACK`` by default (all bundles of a
virtual node on one physical node). Several worker groups may be colocated on the same
bundles (``max_colocated`` of them: each worker then takes ``1 / max_colocated`` of the GPU and
one of the bundle's CPUs).

Like NeMo-RL's ``RayVirtualCluster``, two virtual nodes may land on the same physical node when
it is big enough; :meth:`VirtualCluster.layout` shows where each one went.

Guarantees:

* ``async with`` allocates every group through :func:`asyncpool.placement.allocate` (so with
  its fail-fast feasibility check, backoff and timeout), concurrently; if one fails or the
  opening is cancelled, the groups already made are removed before the error propagates.
  Before anything is submitted, the whole cluster is checked against the nodes' totals: a set
  of groups that could never be held together fails at once with ``ResourceInsufficientError``.
* Leaving the block (or :meth:`VirtualCluster.aclose`) removes every group.
* The life cycle is explicit (the shared ``unopened -> opening -> open -> closed``). Opening
  twice, reopening a closed cluster, or asking an unopened/closed cluster for its placement
  groups raises :class:`~asyncpool.errors.ClusterStateError` (a ``ResourceStateError``). A failed
  or cancelled opening returns the cluster to ``unopened``: it may be tried again.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ray.util.placement_group import PlacementGroup

from . import _gcs, _validate
from ._concurrent import side_by_side
from ._feasibility import Request, check_feasible, fmt, total
from ._resource import Lifecycle
from .errors import ClusterStateError
from .placement import STRATEGIES, Backoff, allocate, bundle_node_ip, free_port

__all__ = ["VirtualCluster"]

log = logging.getLogger(__name__)

_DEFAULT_BACKOFF = Backoff()  # frozen: safe to share as a default


class _LayoutWorker(Protocol):
    """Where one worker sits: its rank, its virtual node and its bundle in that node's group."""

    @property
    def rank(self) -> int: ...

    @property
    def node_idx(self) -> int: ...

    @property
    def bundle_index(self) -> int: ...


class _LayoutGroup(Protocol):
    """What :meth:`VirtualCluster.layout` needs of a worker group (a WorkerGroup has it).

    ``metadata`` entries are :class:`_LayoutWorker`-like objects, or mappings with the keys
    ``rank``, ``node_idx`` and ``bundle_index``.
    """

    @property
    def name(self) -> str: ...

    @property
    def metadata(self) -> Sequence[_LayoutWorker | Mapping[str, Any]]: ...


@dataclass(frozen=True)
class _Placement:
    """Where the bundles of one virtual node's group landed (filled in when opened)."""

    node_ids: tuple[str, ...]
    ips: tuple[str, ...]


class VirtualCluster(Lifecycle):
    """One placement group per virtual node; see the module docstring for the guarantees.

    ``bundles_per_node[i]`` is the number of bundles (GPUs) of virtual node ``i``; ``world_size``
    is their sum. ``use_gpus=False`` makes CPU-only bundles ``{"CPU": max_colocated}``.
    ``name`` names the groups ``f"{name}-node{i}"`` (handy for
    :func:`asyncpool.placement.reap`); ``timeout`` and ``backoff`` go to every ``allocate``.
    Every argument is checked here, before anything is allocated.
    """

    state_error = ClusterStateError

    def __init__(
        self,
        bundles_per_node: Sequence[int],
        *,
        use_gpus: bool = True,
        max_colocated: int = 1,
        strategy: str = "STRICT_PACK",
        name: str = "",
        timeout: float | None = 180.0,
        backoff: Backoff = _DEFAULT_BACKOFF,
    ) -> None:
        if isinstance(bundles_per_node, str | bytes) or not isinstance(bundles_per_node, Sequence):
            raise TypeError(
                f"bundles_per_node must be a sequence of ints (e.g. [4, 4]), "
                f"got {bundles_per_node!r}"
            )
        if not bundles_per_node:
            raise ValueError("bundles_per_node must be a non-empty sequence of ints, got []")
        self._bundles_per_node = tuple(
            _validate.positive_int(n, f"bundles_per_node[{i}]")
            for i, n in enumerate(bundles_per_node)
        )
        self._use_gpus = _validate.boolean(use_gpus, "use_gpus")
        self._max_colocated = _validate.positive_int(max_colocated, "max_colocated")
        self._strategy: str = _validate.one_of(strategy, "strategy", STRATEGIES)
        self._name: str = _validate.instance(name, "name", str)
        self._timeout = _validate.timeout(timeout)
        self._backoff: Backoff = _validate.instance(backoff, "backoff", Backoff)
        self._groups: list[PlacementGroup] = []
        self._placements: list[_Placement] = []

    # ---------------------------------------------------------------- static properties

    @property
    def bundles_per_node(self) -> tuple[int, ...]:
        return self._bundles_per_node

    @property
    def world_size(self) -> int:
        """Number of bundles (GPUs) in all: the size of one worker group spanning the cluster."""
        return sum(self._bundles_per_node)

    @property
    def node_count(self) -> int:
        """Number of virtual nodes (placement groups)."""
        return len(self._bundles_per_node)

    @property
    def max_colocated(self) -> int:
        return self._max_colocated

    @property
    def use_gpus(self) -> bool:
        return self._use_gpus

    @property
    def name(self) -> str:
        return self._name

    @property
    def strategy(self) -> str:
        return self._strategy

    def bundle(self) -> dict[str, float]:
        """The resources of one bundle."""
        b = {"CPU": float(self._max_colocated)}
        if self._use_gpus:
            b["GPU"] = 1.0
        return b

    def group_name(self, node_idx: int) -> str:
        """The placement-group name of virtual node ``node_idx`` ('' when unnamed)."""
        return f"{self._name}-node{node_idx}" if self._name else ""

    # ---------------------------------------------------------------- open state

    @property
    def placement_groups(self) -> list[PlacementGroup]:
        """The placement group of each virtual node, in node order (a copy)."""
        self._require_open("placement_groups")
        return list(self._groups)

    def node_ips(self) -> list[str]:
        """The IP of the physical node under bundle 0 of each virtual node."""
        self._require_open("node_ips")
        return [p.ips[0] for p in self._placements]

    async def master_address(self) -> tuple[str, int]:
        """``(ip, port)`` for ``MASTER_ADDR``/``MASTER_PORT``: bundle 0 of virtual node 0.

        The port is free on that node when found; each call finds a fresh one (so that
        colocated worker groups each get their own).

        Cancellation: safe; the port-finding task is cancelled with the caller.
        """
        self._require_open("master_address")
        pg = self._groups[0]
        ip = await bundle_node_ip(pg, 0)
        port = await free_port(pg, 0)
        return ip, port

    # ---------------------------------------------------------------- life cycle

    async def open(self) -> None:
        """Allocate one placement group per virtual node (what ``async with`` does).

        Raises ``ResourceInsufficientError`` at once when the cluster could never hold all
        the groups, ``PlacementTimeoutError`` after ``timeout``; :class:`ClusterStateError`
        unless the cluster is unopened.

        Cancellation: safe; every group made or pending is removed, and the cluster is
        ``unopened`` again.
        """
        scope = self._begin_open()
        groups: list[PlacementGroup | None] = [None] * self.node_count
        made: list[PlacementGroup] = []
        placements: list[_Placement] = []
        try:
            with scope:
                _gcs.require_ray()
                await self._precheck()
                await side_by_side(
                    functools.partial(self._allocate, i, groups) for i in range(self.node_count)
                )
                made = [g for g in groups if g is not None]
                placements = await _read_placements(made)
            self._check_still_opening()
        except BaseException:
            await _gcs.remove_groups([g for g in groups if g is not None])
            self._open_failed()
            raise
        self._groups, self._placements = made, placements
        self._set_open()
        log.debug("VirtualCluster %r open: %s", self._name, self._bundles_per_node)

    async def aclose(self) -> None:
        """Remove every placement group; the cluster is ``closed`` afterwards. Idempotent.

        Removing is a quick request to the GCS (sent from a worker thread); the GPUs are free
        again shortly after. Closing a cluster that another task is opening makes that opening
        stop waiting at once and fail with :class:`ClusterStateError` (removing what it made),
        however long its placement groups would have waited.

        Cancellation: the removal is shielded; the groups are always removed.
        """
        groups, self._groups = self._groups, []
        self._placements = []
        self._set_closed()
        await _gcs.remove_groups(groups)

    async def close(self) -> None:
        """:meth:`aclose` (the name earlier releases used)."""
        await self.aclose()

    async def _allocate(self, i: int, into: list[PlacementGroup | None]) -> None:
        into[i] = await allocate(
            [self.bundle() for _ in range(self._bundles_per_node[i])],
            strategy=self._strategy,
            name=self.group_name(i),
            timeout=self._timeout,
            backoff=self._backoff,
        )

    async def _precheck(self) -> None:
        """Fail at once when all the groups together could never fit the nodes' totals.

        Each group is checked again by ``allocate``; this adds the check of the set: with
        ``STRICT_PACK`` every group is one item that must fit a node (several may share one).
        """
        nodes = await _gcs.alive_nodes_async()
        bundle = self.bundle()
        if self._strategy == "STRICT_PACK":
            items = [{k: v * n for k, v in bundle.items()} for n in self._bundles_per_node]
        else:
            items = [dict(bundle) for _ in range(self.world_size)]
        if len(items) > 1:
            # Groups of any strategy may share nodes, so the set is checked as a PACK request
            # whose items are the groups (STRICT_PACK) or their bundles (other strategies).
            unit = "STRICT_PACK group(s)" if self._strategy == "STRICT_PACK" else "bundle(s)"
            intro = (
                f"VirtualCluster {list(self._bundles_per_node)} of {len(items)} {unit}, "
                f"bundles of {fmt(bundle)}, {fmt(total(items))} in all"
            )
            check_feasible(Request(items, "PACK", None), nodes, intro=intro)

    # ---------------------------------------------------------------- layout

    def layout(self, *groups: _LayoutGroup) -> str:
        """A text grid of ``node.gpu`` cells showing which worker of each group sits where.

        One block per virtual node: a header row of its cells (``node.gpu``, or ``node.bundle``
        without GPUs) and one row per group, each cell holding the ranks of that group's workers
        on that bundle (``.`` when none). When the cluster is open the header also names the
        physical node. Example::

            VirtualCluster 'train': 2 nodes, 4 GPUs (bundles [2, 2]), up to 1 worker per GPU
            node 0 @ 10.0.0.1   0.0  0.1
              policy            0    1
              reference         0,1  .
            node 1 @ 10.0.0.2   1.0  1.1
              policy            2    3
              reference         .    .

        ``ValueError`` when a worker claims a node or bundle the cluster does not have.
        Pure: no Ray calls.
        """
        names: list[str] = []
        body: list[list[list[str]]] = [[] for _ in range(self.node_count)]  # node, group, cell
        for g in groups:
            gname = str(getattr(g, "name", "") or f"group{len(names)}")
            names.append(gname)
            for node, cells in enumerate(self._cells(gname, g)):
                body[node].append([",".join(map(str, sorted(c))) or "." for c in cells])
        unit = "gpu" if self._use_gpus else "bundle"
        placed = self._state == "open" and len(self._placements) == self.node_count
        titles = [
            f"node {node}"
            + (" @ " + ",".join(sorted(set(self._placements[node].ips))) if placed else "")
            for node in range(self.node_count)
        ]
        heads = [[f"{node}.{b}" for b in range(n)] for node, n in enumerate(self._bundles_per_node)]
        label_w = max(
            [len(t) for t in titles] + [len(n) + 2 for n in names] + [len(f"node.{unit}")]
        )
        cell_w = max(
            [len(c) for h in heads for c in h]
            + [len(c) for rows in body for row in rows for c in row]
        )

        def line(label: str, row: Sequence[str]) -> str:
            return (label.ljust(label_w) + "  " + "  ".join(c.ljust(cell_w) for c in row)).rstrip()

        gpus = "GPUs" if self._use_gpus else "bundles"
        per = "GPU" if self._use_gpus else "bundle"
        out = [
            f"VirtualCluster {self._name!r}: {self.node_count} nodes, {self.world_size} {gpus} "
            f"(bundles {list(self._bundles_per_node)}), up to {self._max_colocated} "
            f"worker(s) per {per}; cells: node.{unit}"
        ]
        for node in range(self.node_count):
            out.append(line(titles[node], heads[node]))
            for gname, row in zip(names, body[node], strict=True):
                out.append(line("  " + gname, row))
        return "\n".join(out)

    def _cells(self, gname: str, group: _LayoutGroup) -> list[list[list[int]]]:
        """The ranks of ``group`` on each bundle of each node; ``ValueError`` for a worker the
        cluster does not have a place for."""
        ranks: list[list[list[int]]] = [[[] for _ in range(n)] for n in self._bundles_per_node]
        for entry in group.metadata:
            rank = _meta(entry, "rank")
            node = _meta(entry, "node_idx")
            b = _meta(entry, "bundle_index")
            if not 0 <= node < self.node_count:
                raise ValueError(
                    f"group {gname!r} rank {rank}: node_idx {node} out of range "
                    f"(the cluster has {self.node_count} nodes)"
                )
            if not 0 <= b < self._bundles_per_node[node]:
                raise ValueError(
                    f"group {gname!r} rank {rank}: bundle_index {b} out of range "
                    f"(node {node} has {self._bundles_per_node[node]} bundles)"
                )
            ranks[node][b].append(rank)
        return ranks

    def __repr__(self) -> str:
        return (
            f"VirtualCluster({list(self._bundles_per_node)}, name={self._name!r}, "
            f"state={self._state!r})"
        )


def _meta(entry: object, key: str) -> int:
    value = entry.get(key) if isinstance(entry, Mapping) else getattr(entry, key, None)
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"worker metadata {entry!r}: {key} must be an int, got {value!r}")
    return value


async def _read_placements(groups: Sequence[PlacementGroup]) -> list[_Placement]:
    """Which physical node holds each bundle (GCS reads, in worker threads)."""
    ips = {n.node_id: n.ip for n in await _gcs.alive_nodes_async()}
    out = []
    for where in await _gcs.bundle_nodes_async(groups):
        node_ids = tuple(where[i] for i in sorted(where))
        out.append(_Placement(node_ids, tuple(ips.get(n, "?") for n in node_ids)))
    return out
