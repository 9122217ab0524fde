"""Ray's control plane (the GCS) as placement, cluster and workers use it: off the event loop.

Owns every blocking GCS call of those modules -- the node table (``ray.nodes()``), placement
group creation, removal and table reads, ``ray.available_resources()`` -- each behind an
``async`` function that runs it in a worker thread (``anyio.to_thread.run_sync``), so that no
coroutine of asyncpool blocks its loop on a GCS round trip. The blocking forms stay available
for synchronous callers (``topology()``) and for code already on a worker thread. It also keeps
the latest node snapshot, which lets :func:`asyncpool.placement.allocate` skip a GCS read on its
fast path.

Must not: decide anything (feasibility is ``_feasibility``'s, retries are ``placement``'s),
or leave a placement group it created unowned: :func:`create_group` either returns the group or
removes it before its exception (cancellation included) leaves.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from typing import Any, Final, cast

import anyio
import anyio.to_thread
import ray
from ray.util.placement_group import (
    PlacementGroup,
    placement_group,
    placement_group_table,
    remove_placement_group,
)

from ._feasibility import Node, Request

log = logging.getLogger("asyncpool.placement")

#: The resource Ray gives the head node only.
_HEAD_RESOURCE: Final = "node:__internal_head__"

#: How long a node snapshot may serve the *feasible* fast path of ``allocate``.
NODES_TTL: Final = 10.0
_snapshot: tuple[str, float, list[Node]] | None = None


def require_ray() -> None:
    """``RuntimeError`` naming the fix when this process is not connected to Ray."""
    if not ray.is_initialized():
        raise RuntimeError(
            "Ray is not connected: call asyncpool.runtime.init() "
            "(or `async with asyncpool.runtime.connect()`) first"
        )


def _ray_nodes() -> list[dict[str, Any]]:
    nodes: list[dict[str, Any]] = cast(Any, ray).nodes()
    return nodes


def _cluster_key() -> str:
    try:
        return str(ray.get_runtime_context().gcs_address)
    except Exception:  # pragma: no cover - not connected / client mode
        return ""


def alive_nodes() -> list[Node]:
    """The alive nodes, head first (blocking; remembered as the latest snapshot)."""
    global _snapshot
    nodes = []
    for n in _ray_nodes():
        if not n.get("Alive", n.get("alive", False)):
            continue
        resources = {str(k): float(v) for k, v in (n.get("Resources") or {}).items()}
        nodes.append(
            Node(
                node_id=str(n["NodeID"]),
                ip=str(n.get("NodeManagerAddress", "")),
                resources=resources,
                labels={str(k): str(v) for k, v in (n.get("Labels") or {}).items()},
                is_head=_HEAD_RESOURCE in resources,
            )
        )
    nodes.sort(key=lambda n: (not n.is_head, n.ip, n.node_id))
    _snapshot = (_cluster_key(), time.monotonic(), nodes)
    return nodes


async def alive_nodes_async(*, abandon_on_cancel: bool = False) -> list[Node]:
    """:func:`alive_nodes` in a worker thread.

    Cancellation: waits for the read to finish unless ``abandon_on_cancel`` (the thread then
    still leaves its snapshot behind).
    """
    return await anyio.to_thread.run_sync(alive_nodes, abandon_on_cancel=abandon_on_cancel)


def recent_nodes() -> list[Node] | None:
    """The latest node snapshot of this cluster if younger than :data:`NODES_TTL` seconds."""
    cached = _snapshot
    fresh = cached is not None and time.monotonic() - cached[1] < NODES_TTL
    return cached[2] if fresh and cached is not None and cached[0] == _cluster_key() else None


def forget_nodes() -> None:
    """Drop the node snapshot: the next ``allocate`` reads the node table (a cold start)."""
    global _snapshot
    _snapshot = None


async def available_resources() -> dict[str, float]:
    """``ray.available_resources()`` (what is free now), read in a worker thread."""

    def read() -> dict[str, float]:
        resources: Mapping[str, float] = cast(Any, ray).available_resources()
        return {str(k): float(v) for k, v in resources.items()}

    return await anyio.to_thread.run_sync(read)


def bundle_nodes(groups: Sequence[PlacementGroup]) -> list[dict[int, str]]:
    """For each group, the node id (hex) of each placed bundle (blocking)."""
    out = []
    for pg in groups:
        info = placement_group_table(pg) or {}
        where: Mapping[int, Any] = info.get("bundles_to_node_id") or {}
        out.append({int(i): str(node) for i, node in where.items()})
    return out


async def bundle_nodes_async(groups: Sequence[PlacementGroup]) -> list[dict[int, str]]:
    """:func:`bundle_nodes` in a worker thread."""
    return await anyio.to_thread.run_sync(bundle_nodes, list(groups))


def bundle_ip(pg: PlacementGroup, index: int) -> str:
    """The IP of the node holding bundle ``index`` of a ready ``pg`` (blocking).

    ``ValueError`` when ``index`` is out of range, the group was removed, or its node is gone.
    """
    info = placement_group_table(pg)
    if not info or info.get("state") == "REMOVED":
        raise ValueError(f"placement group {pg.id.hex()} does not exist or was removed")
    where: Mapping[int, str] = info.get("bundles_to_node_id") or {}
    if index >= len(info.get("bundles") or {}):
        raise ValueError(
            f"bundle index {index} out of range: the group has {len(info['bundles'])} bundles"
        )
    node_id = where.get(index)
    for n in _ray_nodes():
        if n.get("NodeID") == node_id:
            return str(n["NodeManagerAddress"])
    raise ValueError(f"bundle {index} of placement group {pg.id.hex()} is on no alive node")


def _create(req: Request, name: str, lifetime: str | None) -> PlacementGroup:
    selectors = None if req.selectors is None else [dict(s) for s in req.selectors]
    try:
        pg: PlacementGroup = placement_group(
            [dict(b) for b in req.bundles],
            strategy=req.strategy,
            name=name,
            lifetime=lifetime,
            bundle_label_selector=selectors,
        )
        return pg
    except Exception as exc:
        if name and "already exists" in str(exc):
            raise ValueError(
                f"a placement group named {name!r} already exists in this namespace; "
                "pick another name, or remove that group (asyncpool.placement.reap)"
            ) from exc
        raise


async def create_group(req: Request, name: str, lifetime: str | None) -> PlacementGroup:
    """Submit a placement group (a GCS round trip, in a worker thread); not awaited ready.

    Cancellation: the thread is never abandoned, so a group it made while the caller was
    being cancelled is known, and removed before the cancellation propagates.
    """
    made: list[PlacementGroup] = []

    def create() -> PlacementGroup:
        made.append(_create(req, name, lifetime))
        return made[0]

    try:
        return await anyio.to_thread.run_sync(create)
    except BaseException:
        if made:
            await remove_groups(made)
        raise


def remove_quietly(groups: Sequence[PlacementGroup]) -> None:
    """Remove every group (blocking); never raises: we are cleaning up."""
    for pg in groups:
        try:
            remove_placement_group(pg)
        except Exception:  # pragma: no cover - e.g. Ray already shut down
            log.warning("could not remove placement group %s", pg.id.hex(), exc_info=True)


async def remove_groups(groups: Sequence[PlacementGroup]) -> None:
    """Remove every group in a worker thread, shielded: a cancelled caller still removes them.

    Cancellation: deferred until the removal requests are sent (one quick GCS call each).
    """
    if not groups:
        return
    with anyio.CancelScope(shield=True):
        await anyio.to_thread.run_sync(remove_quietly, list(groups))
