"""asyncpool.cluster.VirtualCluster: one placement group per node, life cycle, layout grid.

The Ray tests run on the session's multi-node cluster: a CPU-only head (2 CPUs) and two worker
nodes with 2 CPUs and 4 fake GPUs each. A bundle of ``VirtualCluster`` is
``{"CPU": max_colocated, "GPU": 1}``, so ``[2, 2]`` fills the CPUs of both worker nodes.
"""

from __future__ import annotations

import asyncio
import functools
import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest
import ray
from ray.util.placement_group import (
    PlacementGroup,
    placement_group_table,
    remove_placement_group,
)

from asyncpool._concurrent import side_by_side
from asyncpool.cluster import VirtualCluster
from asyncpool.errors import (
    AsyncPoolError,
    ClusterStateError,
    PlacementTimeoutError,
    ResourceInsufficientError,
)
from asyncpool.placement import Backoff, allocate
from tests.conftest import WORKER_GPUS, SessionCluster, async_wait_for, require_free_cluster

LIVE = {"PENDING", "PREPARED", "CREATED", "RESCHEDULING"}


@dataclass
class Worker:
    rank: int
    node_idx: int
    bundle_index: int


@dataclass
class StandInGroup:
    """What a WorkerGroup will offer to ``layout``: a name and per-worker metadata."""

    name: str
    metadata: list[Any] = field(default_factory=list)


def spanning(name: str, bundles_per_node: Sequence[int]) -> StandInGroup:
    """One worker per bundle, ranks in node order: the usual worker group."""
    workers, rank = [], 0
    for node, n in enumerate(bundles_per_node):
        for b in range(n):
            workers.append(Worker(rank, node, b))
            rank += 1
    return StandInGroup(name, workers)


def words(text: str) -> list[str]:
    """The lines of ``text`` with runs of spaces collapsed (column widths aside)."""
    return [" ".join(line.split()) for line in text.splitlines()]


def live_groups(prefix: str) -> dict[str, str]:
    return {
        pg_id: info["state"]
        for pg_id, info in placement_group_table().items()
        if str(info.get("name", "")).startswith(prefix) and info["state"] in LIVE
    }


def states_of(prefix: str) -> set[str]:
    return {
        info["state"]
        for info in placement_group_table().values()
        if str(info.get("name", "")).startswith(prefix)
    }


@pytest.fixture
def prefix(ray_cluster: SessionCluster) -> Iterator[str]:
    """A unique group-name prefix; after the test no group of it may be left alive. Before it,
    every GPU must be free (the clusters here take up to all of them)."""
    require_free_cluster()
    p = f"c{uuid.uuid4().hex[:10]}"
    yield p
    leftovers = live_groups(p)
    for pg_id in leftovers:
        remove_placement_group(PlacementGroup(ray.PlacementGroupID.from_hex(pg_id)))
    assert not leftovers, f"the test left placement groups behind: {leftovers}"


# ------------------------------------------------------------------------------- pure


def test_virtual_cluster_sizes_are_known_before_it_is_opened() -> None:
    vc = VirtualCluster([2, 2], name="train")
    assert vc.world_size == 4
    assert vc.node_count == 2
    assert vc.bundles_per_node == (2, 2)
    assert vc.state == "unopened"
    assert vc.bundle() == {"CPU": 1.0, "GPU": 1.0}
    assert VirtualCluster([1], use_gpus=False, max_colocated=3).bundle() == {"CPU": 3.0}
    assert vc.group_name(1) == "train-node1"
    assert VirtualCluster([1]).group_name(0) == ""


@pytest.mark.parametrize(
    ("args", "kwargs", "error"),
    [
        (([],), {}, ValueError),
        (([2, 0],), {}, ValueError),
        (([2, 1.5],), {}, TypeError),
        (("22",), {}, TypeError),
        (([2],), {"max_colocated": 0}, ValueError),
        (([2],), {"strategy": "TIGHT"}, ValueError),
        (([2],), {"timeout": 0}, ValueError),
        (([2],), {"use_gpus": "yes"}, TypeError),
        (([2],), {"backoff": 3}, TypeError),
        (([2],), {"name": None}, TypeError),
    ],
)
def test_virtual_cluster_rejects_bad_arguments(
    args: tuple[Any, ...], kwargs: dict[str, Any], error: type[Exception]
) -> None:
    with pytest.raises(error):
        VirtualCluster(*args, **kwargs)


@pytest.mark.asyncio
async def test_side_by_side_raises_the_first_error_unwrapped_and_cancels_the_others() -> None:
    # The helper VirtualCluster.open and WorkerGroup.open run their steps with.
    cancelled: list[str] = []

    async def slow() -> None:
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            cancelled.append("slow")
            raise

    async def fails() -> None:
        await asyncio.sleep(0.01)
        raise ResourceInsufficientError("the first error")

    async def fails_later() -> None:
        try:
            await asyncio.sleep(60)
        finally:
            raise ValueError("a consequence, dropped")

    started = time.monotonic()
    with pytest.raises(ResourceInsufficientError, match="the first error"):
        await side_by_side([slow, fails, fails_later])
    assert cancelled == ["slow"]
    assert time.monotonic() - started < 60  # before fails_later's own end
    done: list[int] = []

    async def record(i: int) -> None:
        done.append(i)

    await side_by_side([functools.partial(record, i) for i in range(3)])
    assert sorted(done) == [0, 1, 2]


def test_unopened_cluster_refuses_what_needs_placement_groups() -> None:
    vc = VirtualCluster([2, 2])
    with pytest.raises(ClusterStateError, match="unopened") as err:
        _ = vc.placement_groups
    assert isinstance(err.value, AsyncPoolError)
    assert isinstance(err.value, RuntimeError)
    with pytest.raises(ClusterStateError):
        vc.node_ips()


def test_layout_shows_which_worker_of_each_group_sits_on_which_gpu() -> None:
    vc = VirtualCluster([2, 2], name="train")
    policy = spanning("policy", [2, 2])
    colocated = StandInGroup(
        "generation",
        [
            {"rank": 0, "node_idx": 0, "bundle_index": 0},  # mappings work as metadata too
            {"rank": 1, "node_idx": 0, "bundle_index": 0},
            Worker(2, 1, 1),
        ],
    )
    assert vc.layout(policy, colocated) == "\n".join(
        [
            "VirtualCluster 'train': 2 nodes, 4 GPUs (bundles [2, 2]), up to 1 worker(s) per GPU;"
            " cells: node.gpu",
            "node 0        0.0  0.1",
            "  policy      0    1",
            "  generation  0,1  .",
            "node 1        1.0  1.1",
            "  policy      2    3",
            "  generation  .    2",
        ]
    )


def test_layout_of_no_group_is_the_bare_grid_of_cells() -> None:
    text = VirtualCluster([3, 1], use_gpus=False).layout()
    assert words(text)[1:] == ["node 0 0.0 0.1 0.2", "node 1 1.0"]
    assert "cells: node.bundle" in text


@pytest.mark.parametrize(
    ("worker", "message"),
    [
        (Worker(0, 2, 0), "node_idx 2 out of range"),
        (Worker(0, 1, 2), "bundle_index 2 out of range"),
        (Worker(0, -1, 0), "node_idx -1 out of range"),
    ],
)
def test_layout_rejects_workers_outside_the_cluster(worker: Worker, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        VirtualCluster([2, 2]).layout(StandInGroup("bad", [worker]))


def test_layout_rejects_metadata_without_ints() -> None:
    with pytest.raises(TypeError, match="rank"):
        VirtualCluster([1]).layout(StandInGroup("bad", [{"node_idx": 0, "bundle_index": 0}]))


# ------------------------------------------------------------------------------- on Ray


@pytest.mark.multinode
@pytest.mark.asyncio
async def test_virtual_cluster_2_2_holds_one_group_per_node_and_removes_them_on_exit(
    prefix: str, ray_cluster: SessionCluster
) -> None:
    vc = VirtualCluster([2, 2], name=prefix)
    async with vc as cluster:
        assert cluster is vc
        assert vc.state == "open"
        assert (vc.world_size, vc.node_count) == (4, 2)
        groups = vc.placement_groups
        assert len(groups) == 2
        nodes = []
        for i, pg in enumerate(groups):
            info = placement_group_table(pg)
            assert info["name"] == f"{prefix}-node{i}"
            assert info["state"] == "CREATED"
            assert info["strategy"] == "STRICT_PACK"
            assert list(info["bundles"].values()) == [{"CPU": 1.0, "GPU": 1.0}] * 2
            where = set(info["bundles_to_node_id"].values())
            assert len(where) == 1, "STRICT_PACK: all bundles of a virtual node on one node"
            nodes.append(where.pop())
        assert sorted(nodes) == sorted(ray_cluster.worker_node_ids)

        address = {n["NodeID"]: n["NodeManagerAddress"] for n in ray.nodes()}
        ip, port = await vc.master_address()
        assert ip == address[nodes[0]]
        assert 0 < port < 65536
        assert vc.node_ips() == [address[n] for n in nodes]

        text = vc.layout(spanning("policy", [2, 2]))
        assert words(text)[1:] == [
            f"node 0 @ {address[nodes[0]]} 0.0 0.1",
            "policy 0 1",
            f"node 1 @ {address[nodes[1]]} 1.0 1.1",
            "policy 2 3",
        ]
        with pytest.raises(ClusterStateError, match="open"):
            await vc.open()
    # mypy keeps the narrowing to "open" across the exit that closed it
    assert vc.state == "closed"  # type: ignore[comparison-overlap]
    assert live_groups(prefix) == {}
    assert states_of(prefix) == {"REMOVED"}
    with pytest.raises(ClusterStateError, match="closed"):
        _ = vc.placement_groups
    with pytest.raises(ClusterStateError, match="closed"):
        await vc.master_address()
    with pytest.raises(ClusterStateError, match="closed"):
        async with vc:
            pass
    await vc.close()  # idempotent
    assert vc.layout().startswith("VirtualCluster")  # still describes its shape


@pytest.mark.multinode
@pytest.mark.asyncio
async def test_virtual_cluster_without_gpus_makes_cpu_only_bundles(prefix: str) -> None:
    async with VirtualCluster([1, 1], use_gpus=False, name=prefix, strategy="PACK") as vc:
        for pg in vc.placement_groups:
            info = placement_group_table(pg)
            assert list(info["bundles"].values()) == [{"CPU": 1.0}]
            assert info["strategy"] == "PACK"
    assert live_groups(prefix) == {}


@pytest.mark.multinode
@pytest.mark.parametrize(
    ("bundles_per_node", "kwargs", "figures"),
    [
        # Totals fit (GPU 6 of 8, CPU 6 of 6), but only the 2 worker nodes take a group.
        ([2, 2, 2], {}, ["3 STRICT_PACK group(s)", "GPU=6, CPU=6 in all", "cannot be packed"]),
        ([5], {"use_gpus": False}, ["STRICT_PACK needs CPU=5", "CPU=2"]),
        ([3], {}, ["STRICT_PACK needs GPU=3, CPU=3", "CPU=2"]),
        ([2, 2], {"max_colocated": 2}, ["CPU=8 in all", "CPU=6 in all"]),
    ],
)
@pytest.mark.asyncio
async def test_virtual_cluster_that_could_never_fit_fails_at_once(
    prefix: str, bundles_per_node: list[int], kwargs: dict[str, Any], figures: list[str]
) -> None:
    vc = VirtualCluster(bundles_per_node, name=prefix, **kwargs)
    with pytest.raises(ResourceInsufficientError) as err:
        async with vc:
            pytest.fail("must not open")
    # At once: refused from the cluster's figures, without a placement group ever tried.
    assert states_of(prefix) == set()
    for f in figures:
        assert f in str(err.value), str(err.value)
    assert vc.state == "unopened"
    assert live_groups(prefix) == {}, "an impossible cluster leaves no group behind"


async def hog_worker_gpus(prefix: str, node_id: str) -> PlacementGroup:
    """Take all GPUs (not the CPUs) of one worker node."""
    return await allocate(
        [{"GPU": WORKER_GPUS}],
        name=prefix + "hog",
        label_selector={"ray.io/node-id": node_id},
        timeout=None,  # the GPUs are free (require_free_cluster): it fits, at Ray's pace
    )


@pytest.mark.multinode
@pytest.mark.asyncio
@pytest.mark.slow
async def test_virtual_cluster_removes_the_groups_it_made_when_another_times_out(
    prefix: str, ray_cluster: SessionCluster
) -> None:
    hog = await hog_worker_gpus(prefix, ray_cluster.worker_node_ids[0])
    vc = VirtualCluster([2, 2], name=prefix + "vc", timeout=2)
    try:
        with pytest.raises(PlacementTimeoutError):
            async with vc:
                pytest.fail("must not open")
        # One virtual node fitted on the free worker; it is removed with the failure.
        assert "CREATED" not in states_of(prefix + "vc")
        assert live_groups(prefix + "vc") == {}
        assert vc.state == "unopened"
    finally:
        remove_placement_group(hog)
    assert live_groups(prefix) == {}


@pytest.mark.multinode
@pytest.mark.asyncio
async def test_cancelled_opening_leaves_no_group_and_can_be_retried(
    prefix: str, ray_cluster: SessionCluster
) -> None:
    hog = await hog_worker_gpus(prefix, ray_cluster.worker_node_ids[0])
    # No timeout of its own: the reopening below waits at Ray's pace (the per-test timeout
    # bounds a hang); 60 s was a guess that a loaded machine can outlast.
    vc = VirtualCluster([2, 2], name=prefix + "vc", timeout=None, backoff=Backoff(initial=0.3))
    try:
        task = asyncio.create_task(vc.open())
        await async_wait_for(lambda: "PENDING" in states_of(prefix + "vc"))
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert live_groups(prefix + "vc") == {}
        assert vc.state == "unopened"
    finally:
        remove_placement_group(hog)
    async with vc:  # the resources are free now: the same cluster opens
        assert len(vc.placement_groups) == 2
    assert live_groups(prefix) == {}


@pytest.mark.multinode
@pytest.mark.asyncio
async def test_closing_a_cluster_while_it_opens_fails_the_opening_and_leaves_nothing(
    prefix: str,
) -> None:
    vc = VirtualCluster([2, 2], name=prefix)
    task = asyncio.create_task(vc.open())
    await asyncio.sleep(0)  # the opening has started
    assert vc.state == "opening"
    await vc.close()
    with pytest.raises(ClusterStateError, match="closed while it was being opened"):
        await task
    # mypy keeps the narrowing to "opening" across the close() that changed it
    assert vc.state == "closed"  # type: ignore[comparison-overlap]
    assert live_groups(prefix) == {}


@pytest.mark.multinode
@pytest.mark.asyncio
async def test_closing_a_cluster_that_waits_for_gpus_ends_its_opening_without_waiting_them_out(
    prefix: str, ray_cluster: SessionCluster
) -> None:
    hog = await hog_worker_gpus(prefix, ray_cluster.worker_node_ids[0])
    # One virtual node cannot be placed while the hog holds its GPUs; the opening waits.
    vc = VirtualCluster([2, 2], name=prefix + "vc", timeout=600)
    try:
        task = asyncio.create_task(vc.open())
        await async_wait_for(lambda: "PENDING" in states_of(prefix + "vc"))
        await vc.close()
        # Not its 600 s timeout, nor until the hog goes: the close cancels the waiting.
        with pytest.raises(ClusterStateError, match="closed while it was being opened"):
            await task
        assert vc.state == "closed"
        assert live_groups(prefix + "vc") == {}
    finally:
        remove_placement_group(hog)
    assert live_groups(prefix) == {}
