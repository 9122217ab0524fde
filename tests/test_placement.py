"""asyncpool.placement: Backoff, allocate, plan_replica, topology, reap, bundle_node_ip, free_port.

The Ray tests run on the session's multi-node cluster (a CPU-only head with 2 CPUs, two worker
nodes with 2 CPUs and 4 fake GPUs each, labelled ``asyncpool-role=worker``). Every group a test
makes is named with the test's unique prefix, and the ``prefix`` fixture checks (and cleans up)
that none of them is left pending or created: the GPUs are shared by the whole session.
"""

from __future__ import annotations

import asyncio
import os
import random
import socket
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
import ray
from ray.util.placement_group import (
    PlacementGroup,
    placement_group,
    placement_group_table,
    remove_placement_group,
)

from asyncpool import _gcs
from asyncpool._feasibility import Node, Request, check_feasible
from asyncpool.errors import AsyncPoolError, PlacementTimeoutError, ResourceInsufficientError
from asyncpool.placement import (
    WORKER_LABEL,
    Backoff,
    NodeInfo,
    ReplicaSpec,
    allocate,
    bundle_node_ip,
    free_port,
    plan_replica,
    reap,
    topology,
)
from tests.conftest import WORKER_GPUS, SessionCluster, async_wait_for, require_free_cluster

LIVE = {"PENDING", "PREPARED", "CREATED", "RESCHEDULING"}
REPO = Path(__file__).resolve().parent.parent


# ------------------------------------------------------------------------------- helpers


def groups_named(prefix: str) -> dict[str, dict[str, Any]]:
    """Every placement group (any namespace, any state) whose name starts with ``prefix``."""
    return {
        pg_id: info
        for pg_id, info in placement_group_table().items()
        if str(info.get("name", "")).startswith(prefix)
    }


def live_groups(prefix: str) -> dict[str, str]:
    """``{id: state}`` of the groups named ``prefix*`` that are pending or created."""
    return {i: g["state"] for i, g in groups_named(prefix).items() if g["state"] in LIVE}


def states_of(name: str) -> set[str]:
    return {g["state"] for g in placement_group_table().values() if g.get("name") == name}


def remove_by_id(pg_id: str) -> None:
    remove_placement_group(PlacementGroup(ray.PlacementGroupID.from_hex(pg_id)))


def node_of_bundle(pg: PlacementGroup, i: int = 0) -> str:
    return str(placement_group_table(pg)["bundles_to_node_id"][i])


@pytest.fixture
def prefix(ray_cluster: SessionCluster) -> Iterator[str]:
    """A unique group-name prefix; after the test no group of it may be left alive. Before it,
    every GPU must be free (the tests here take up to all of them)."""
    require_free_cluster()
    p = f"t{uuid.uuid4().hex[:10]}-"
    yield p
    leftovers = live_groups(p)
    for pg_id in leftovers:
        remove_by_id(pg_id)
    assert not leftovers, f"the test left placement groups behind: {leftovers}"


async def hog_all_gpus(prefix: str) -> PlacementGroup:
    """Take every GPU of the two worker nodes (one group of two 4-GPU bundles)."""
    return await allocate(
        [{"GPU": WORKER_GPUS}, {"GPU": WORKER_GPUS}],
        strategy="STRICT_SPREAD",
        name=prefix + "hog",
        timeout=None,  # the GPUs are free (the prefix fixture's guard): Ray's pace decides
    )


FAST = Backoff(initial=0.3, factor=2.0, maximum=1.0, jitter=0.1)


def node(gpus: float, *, head: bool = False, cpus: float = 8, name: str = "") -> NodeInfo:
    return NodeInfo(
        node_id=name or f"n{random.random()}",
        ip="10.0.0.1",
        num_gpus=gpus,
        num_cpus=cpus,
        is_head=head,
    )


def test_a_held_gpu_fails_the_free_cluster_check_at_once_naming_the_group(prefix: str) -> None:
    """The guard before whole-cluster tests: a group still holding GPUs fails it within its
    short grace, and the failure names the group and the free/total figures."""
    pg = ray.util.placement_group([{"GPU": 1}], name=prefix + "held")
    try:
        ray.get(pg.ready())
        with pytest.raises(pytest.fail.Exception, match=rf"(?s)GPU=7/8.*{prefix}held"):
            require_free_cluster(timeout=0.5, remember=False)
    finally:
        remove_placement_group(pg)


def test_once_a_test_found_the_cluster_held_the_next_fail_at_once_while_nothing_changed(
    prefix: str,
) -> None:
    """A leftover that outlived one test's grace fails the next tests at once (not after their
    own grace each) while the cluster's picture is the same; once something changed (here the
    group is removed) a test gets the grace again."""
    pg = ray.util.placement_group([{"GPU": 1}], name=prefix + "held")
    try:
        ray.get(pg.ready())
        with pytest.raises(pytest.fail.Exception, match=r"after 0\.5 s\)"):
            require_free_cluster(timeout=0.5)
        # No grace now: waiting out 3,600 s would outlast the per-test timeout.
        again = rf"(?s)after 0 s, held as when .*{prefix}held"
        with pytest.raises(pytest.fail.Exception, match=again):
            require_free_cluster(timeout=3600)
    finally:
        remove_placement_group(pg)
    require_free_cluster(timeout=3600)  # the picture changed: the grace again, and it frees up


# ------------------------------------------------------------------------------- Backoff


def test_backoff_windows_grow_exponentially_up_to_the_cap_then_stay() -> None:
    b = Backoff(initial=1.0, factor=2.0, maximum=30.0, jitter=0.0, attempts=6)
    windows = [w for _, w in zip(range(9), b.delays(), strict=False)]
    assert windows == [1, 2, 4, 8, 16, 30, 30, 30, 30]


def test_backoff_attempts_bounds_the_growth_not_the_number_of_windows() -> None:
    b = Backoff(initial=1.0, factor=3.0, maximum=100.0, jitter=0.0, attempts=3)
    windows = [w for _, w in zip(range(6), b.delays(), strict=False)]
    assert windows == [1, 3, 9, 9, 9, 9]


def test_backoff_jitter_stays_within_its_fraction_and_never_exceeds_maximum() -> None:
    b = Backoff(initial=1.0, factor=2.0, maximum=4.0, jitter=0.25, attempts=10)
    rng = random.Random(7)
    for k, w in zip(range(200), b.delays(rng), strict=False):
        base = b.base(k)
        assert base * 0.75 <= w <= min(base * 1.25, 4.0)
    assert len({round(w, 6) for _, w in zip(range(20), b.delays(rng), strict=False)}) > 1


def test_backoff_default_matches_the_contract() -> None:
    assert Backoff() == Backoff(initial=1.0, factor=2.0, maximum=30.0, jitter=0.1, attempts=6)


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"initial": 0}, ValueError),
        ({"initial": -1}, ValueError),
        ({"factor": 0.5}, ValueError),
        ({"maximum": 0.5}, ValueError),
        ({"jitter": 1.0}, ValueError),
        ({"jitter": -0.1}, ValueError),
        ({"attempts": 0}, ValueError),
        ({"attempts": 2.5}, TypeError),
        ({"initial": "1"}, TypeError),
        ({"maximum": float("inf")}, ValueError),
    ],
)
def test_backoff_rejects_invalid_parameters(kwargs: dict[str, Any], error: type[Exception]) -> None:
    with pytest.raises(error):
        Backoff(**kwargs)


# ------------------------------------------------------------------------------- plan_replica


@pytest.mark.parametrize(
    ("tp", "gpus", "strategy", "bundle_gpus"),
    [
        (4, [4, 4], "STRICT_PACK", [1, 1, 1, 1]),
        (8, [4, 4], "STRICT_SPREAD", [4, 4]),
        (6, [4, 4], "STRICT_SPREAD", [3, 3]),
        (2, [1, 1, 1], "STRICT_SPREAD", [1, 1]),
        (6, [2, 2, 2], "STRICT_SPREAD", [2, 2, 2]),
        (8, [8, 4, 4], "STRICT_PACK", [1] * 8),
        (1, [1], "STRICT_PACK", [1]),
    ],
)
def test_plan_replica_prefers_one_node_then_the_smallest_even_split(
    tp: int, gpus: list[int], strategy: str, bundle_gpus: list[int]
) -> None:
    spec = plan_replica(tp, [node(g) for g in gpus])
    assert spec.strategy == strategy
    assert [b["GPU"] for b in spec.bundles] == bundle_gpus
    assert spec.nnodes == (1 if strategy == "STRICT_PACK" else len(bundle_gpus))
    assert spec.gpus_per_node * spec.nnodes == tp
    assert spec.label_selector is None


@pytest.mark.parametrize(
    ("tp", "gpus", "figures"),
    [
        (4, [1, 3], ["GPU=4", "[3, 1]"]),  # never 1 + 3
        (16, [4, 4], ["GPU=16", "[4, 4]", "GPU=8 in all"]),
        (3, [2, 2], ["GPU=3", "[2, 2]"]),  # 3 is prime: no even split over 2 nodes
        (2, [], ["GPU=2", "no nodes"]),
    ],
)
def test_plan_replica_refuses_when_no_even_placement_exists(
    tp: int, gpus: list[int], figures: list[str]
) -> None:
    with pytest.raises(ResourceInsufficientError) as err:
        plan_replica(tp, [node(g) for g in gpus])
    for f in figures:
        assert f in str(err.value)


def test_plan_replica_ignore_head_leaves_the_head_out_and_selects_worker_nodes() -> None:
    nodes = [node(8, head=True), node(4), node(4)]
    assert plan_replica(8, nodes).strategy == "STRICT_PACK"  # the head could hold it
    spec = plan_replica(8, nodes, ignore_head=True)
    assert spec.strategy == "STRICT_SPREAD"
    assert spec.nnodes == 2
    assert spec.label_selector == [dict(WORKER_LABEL)] * 2
    assert spec.allocate_kwargs()["label_selector"] == [{"asyncpool-role": "worker"}] * 2
    custom = plan_replica(4, nodes, ignore_head=True, worker_label={"pool": "gpu"})
    assert custom.strategy == "STRICT_PACK"
    assert custom.label_selector == [{"pool": "gpu"}] * 4
    with pytest.raises(ResourceInsufficientError, match="worker nodes"):
        plan_replica(8, [node(8, head=True), node(4)], ignore_head=True)


def test_plan_replica_cpus_per_gpu_adds_cpus_to_every_bundle() -> None:
    spec = plan_replica(4, [node(2), node(2)], cpus_per_gpu=2)
    assert spec.bundles == [{"GPU": 2.0, "CPU": 4.0}, {"GPU": 2.0, "CPU": 4.0}]


@pytest.mark.parametrize(
    ("args", "kwargs", "error"),
    [
        ((0, []), {}, ValueError),
        ((True, []), {}, TypeError),
        ((2.0, []), {}, TypeError),
        ((2, "nodes"), {}, TypeError),
        ((2, [{"num_gpus": 4}]), {}, TypeError),
        ((2, []), {"cpus_per_gpu": -1}, ValueError),
        ((2, []), {"ignore_head": True, "worker_label": {"a": 1}}, TypeError),
    ],
)
def test_plan_replica_rejects_bad_arguments(
    args: tuple[Any, ...], kwargs: dict[str, Any], error: type[Exception]
) -> None:
    with pytest.raises(error):
        plan_replica(*args, **kwargs)


# ------------------------------------------------------------------------------- feasibility (pure)


def shape(gpus: float, cpus: float = 2, labels: dict[str, str] | None = None) -> Node:
    return Node(
        f"id{random.random()}", "10.0.0.1", {"CPU": cpus, "GPU": gpus}, labels or {}, False
    )


@pytest.mark.parametrize(
    ("bundles", "strategy", "gpus", "feasible"),
    [
        (
            [{"GPU": 3}, {"GPU": 3}, {"GPU": 2}],
            "PACK",
            [4, 4],
            False,
        ),  # totals fit, packing doesn't
        ([{"GPU": 2}] * 4, "PACK", [4, 4], True),
        ([{"GPU": 2}] * 4, "SPREAD", [4, 4], True),
        ([{"GPU": 1}] * 3, "STRICT_SPREAD", [0, 4, 4], False),  # 3 nodes, only 2 with GPUs
        ([{"GPU": 1}] * 2, "STRICT_SPREAD", [0, 4, 4], True),
        ([{"GPU": 1}] * 4, "STRICT_PACK", [2, 2], False),
        ([{"GPU": 0.5}] * 8, "STRICT_PACK", [4], True),
        ([{"GPU": 0.3}] * 10, "PACK", [1, 1, 1], False),  # 3 per node x 3 nodes = 9 < 10
    ],
)
def test_feasibility_check_is_exact_on_small_requests(
    bundles: list[dict[str, float]], strategy: str, gpus: list[float], feasible: bool
) -> None:
    req = Request([{k: float(v) for k, v in b.items()} for b in bundles], strategy, None)
    nodes = [shape(g) for g in gpus]
    if feasible:
        check_feasible(req, nodes)
    else:
        with pytest.raises(ResourceInsufficientError):
            check_feasible(req, nodes)


def test_feasibility_check_honours_label_selectors() -> None:
    nodes = [shape(4, labels={"zone": "a"}), shape(4, labels={"zone": "b"})]
    ok = [{"zone": "a"}, {"zone": "!a"}]
    check_feasible(Request([{"GPU": 4.0}] * 2, "STRICT_SPREAD", ok), nodes)
    check_feasible(Request([{"GPU": 4.0}], "PACK", [{"zone": "in(b,c)"}]), nodes)
    with pytest.raises(ResourceInsufficientError, match="label selector"):
        check_feasible(Request([{"GPU": 1.0}], "PACK", [{"zone": "c"}]), nodes)
    with pytest.raises(ResourceInsufficientError, match=r"GPU=8 in all.*GPU=4 in all"):
        check_feasible(Request([{"GPU": 4.0}] * 2, "PACK", [{"zone": "a"}] * 2), nodes)


# ------------------------------------------------------------------------------- argument errors


@pytest.mark.parametrize(
    ("bundles", "kwargs", "error"),
    [
        ([], {}, ValueError),
        ({"GPU": 1}, {}, TypeError),
        ("GPU", {}, TypeError),
        ([["GPU", 1]], {}, TypeError),
        ([{"GPU": -1}], {}, ValueError),
        ([{"GPU": float("nan")}], {}, ValueError),
        ([{"GPU": True}], {}, TypeError),
        ([{"GPU": 0}], {}, ValueError),
        ([{1: 1}], {}, TypeError),
        ([{"CPU": 1}], {"strategy": "PACKED"}, ValueError),
        ([{"CPU": 1}], {"timeout": 0}, ValueError),
        ([{"CPU": 1}], {"timeout": -5}, ValueError),
        ([{"CPU": 1}], {"timeout": "10"}, TypeError),
        ([{"CPU": 1}], {"lifetime": "forever"}, ValueError),
        ([{"CPU": 1}], {"name": 3}, TypeError),
        ([{"CPU": 1}], {"backoff": 1.0}, TypeError),
        ([{"CPU": 1}], {"label_selector": [{"a": "b"}, {"a": "c"}]}, ValueError),
        ([{"CPU": 1}], {"label_selector": {"a": 1}}, TypeError),
        ([{"CPU": 1}], {"label_selector": "a=b"}, TypeError),
    ],
)
@pytest.mark.asyncio
async def test_allocate_rejects_bad_arguments_before_submitting(
    prefix: str, bundles: Any, kwargs: dict[str, Any], error: type[Exception]
) -> None:
    kwargs = {"name": prefix + "bad", **kwargs}
    with pytest.raises(error):
        await allocate(bundles, **kwargs)
    assert groups_named(prefix) == {}


# ------------------------------------------------------------------------------- allocate on Ray


INFEASIBLE = [
    pytest.param(
        [{"GPU": 1}] * 9, "PACK", None, ["GPU=9 in all", "GPU=8 in all"], id="too-many-gpus"
    ),
    pytest.param(
        [{"GPU": 1}] * 5,
        "STRICT_PACK",
        None,
        ["STRICT_PACK needs GPU=5", "GPU=4"],
        id="strict-pack-bigger-than-largest-node",
    ),
    pytest.param(
        [{"CPU": 0.1}] * 4,
        "STRICT_SPREAD",
        None,
        ["4 distinct nodes", "only 3"],
        id="strict-spread-more-bundles-than-nodes",
    ),
    pytest.param(
        [{"GPU": 1}] * 3,
        "STRICT_SPREAD",
        None,
        ["3 distinct nodes", "at most 2"],
        id="strict-spread-more-bundles-than-gpu-nodes",
    ),
    pytest.param(
        [{"GPU": 6}], "PACK", None, ["GPU=6", "GPU=4"], id="bundle-bigger-than-every-node"
    ),
    pytest.param(
        [{"GPU": 3}, {"GPU": 3}, {"GPU": 2}],
        "PACK",
        None,
        ["cannot be packed", "GPU=8"],
        id="totals-fit-but-no-packing",
    ),
    pytest.param([{"TPU": 1}], "PACK", None, ["TPU=1", "TPU=0"], id="unknown-resource"),
    pytest.param(
        [{"CPU": 1}],
        "PACK",
        {"asyncpool-role": "nobody"},
        ["label selector", "nobody"],
        id="label-selector-matches-no-node",
    ),
]


async def set_node_snapshot(kind: str) -> None:
    """``warm``: a fresh node snapshot is at hand; ``cold``: none (first allocation)."""
    if kind == "warm":
        await anyio.to_thread.run_sync(_gcs.alive_nodes)
    else:
        _gcs.forget_nodes()


@pytest.mark.multinode
@pytest.mark.parametrize("snapshot", ["warm", "cold"])
@pytest.mark.parametrize(("bundles", "strategy", "selector", "figures"), INFEASIBLE)
@pytest.mark.asyncio
async def test_infeasible_request_fails_at_once_with_the_figures(
    prefix: str,
    bundles: list[dict[str, float]],
    strategy: str,
    selector: dict[str, str] | None,
    figures: list[str],
    snapshot: str,
) -> None:
    await set_node_snapshot(snapshot)
    with pytest.raises(ResourceInsufficientError) as err:
        await allocate(bundles, strategy=strategy, name=prefix + "x", label_selector=selector)
    # At once: refused from the cluster's figures (warm), or after one group Ray reported
    # infeasible (cold), never after retries.
    tried = [g for g in placement_group_table().values() if g.get("name") == prefix + "x"]
    assert len(tried) <= 1, tried
    assert isinstance(err.value, AsyncPoolError)
    for f in figures:
        assert f in str(err.value), str(err.value)
    assert live_groups(prefix) == {}, "an impossible request leaves no group behind"
    if snapshot == "warm":
        assert groups_named(prefix) == {}, "with a recent snapshot nothing is even submitted"


@pytest.mark.multinode
@pytest.mark.asyncio
@pytest.mark.parametrize("snapshot", ["warm", "cold"])
async def test_allocate_returns_a_ready_named_group_that_the_caller_owns(
    prefix: str, ray_cluster: SessionCluster, snapshot: str
) -> None:
    await set_node_snapshot(snapshot)
    pg = await allocate([{"GPU": 1}, {"GPU": 1}], strategy="STRICT_PACK", name=prefix + "ok")
    try:
        info = placement_group_table(pg)
        assert info["state"] == "CREATED"
        assert info["name"] == prefix + "ok"
        assert info["strategy"] == "STRICT_PACK"
        assert len(set(info["bundles_to_node_id"].values())) == 1
        assert node_of_bundle(pg) in ray_cluster.worker_node_ids
        with pytest.raises(ValueError, match="already exists"):
            await allocate([{"CPU": 0.1}], name=prefix + "ok")
    finally:
        remove_placement_group(pg)
    assert live_groups(prefix) == {}


@pytest.mark.multinode
@pytest.mark.asyncio
async def test_allocate_passes_label_selectors_through(
    prefix: str, ray_cluster: SessionCluster
) -> None:
    # One selector for all bundles: CPU bundles that could go to the head go to workers only.
    pg = await allocate([{"CPU": 0.5}] * 3, name=prefix + "workers", label_selector=WORKER_LABEL)
    try:
        nodes = set(placement_group_table(pg)["bundles_to_node_id"].values())
        assert nodes <= set(ray_cluster.worker_node_ids)
    finally:
        remove_placement_group(pg)
    # One selector per bundle: pin bundle i to worker node i.
    w0, w1 = ray_cluster.worker_node_ids
    pinned = [{"ray.io/node-id": w0}, {"ray.io/node-id": w1}]
    pg = await allocate(
        [{"GPU": 1}, {"GPU": 1}],
        strategy="STRICT_SPREAD",
        name=prefix + "pin",
        label_selector=pinned,
    )
    try:
        assert placement_group_table(pg)["bundles_to_node_id"] == {0: w0, 1: w1}
    finally:
        remove_placement_group(pg)


@pytest.mark.multinode
@pytest.mark.asyncio
async def test_busy_request_succeeds_once_another_group_is_removed_mid_wait(prefix: str) -> None:
    hog = await hog_all_gpus(prefix)
    hog_nodes = set(placement_group_table(hog)["bundles_to_node_id"].values())
    name = prefix + "want"
    task = asyncio.create_task(
        allocate([{"GPU": 2}], strategy="STRICT_PACK", name=name, timeout=None, backoff=FAST)
    )
    try:
        await async_wait_for(lambda: "PENDING" in states_of(name))
        assert not task.done()
        remove_placement_group(hog)
        pg = await task
    finally:
        remove_placement_group(hog)
        if not task.done():
            task.cancel()
    try:
        assert placement_group_table(pg)["state"] == "CREATED"
        assert node_of_bundle(pg) in hog_nodes
        # Every earlier attempt was removed: exactly one group of that name is alive.
        assert states_of(name) - {"REMOVED"} == {"CREATED"}
    finally:
        remove_placement_group(pg)
    assert live_groups(prefix) == {}


@pytest.mark.multinode
@pytest.mark.asyncio
@pytest.mark.slow
async def test_busy_request_with_timeout_2_raises_placement_timeout_error(prefix: str) -> None:
    hog = await hog_all_gpus(prefix)
    try:
        t0 = time.monotonic()
        with pytest.raises(PlacementTimeoutError) as err:
            await allocate([{"GPU": 2}], name=prefix + "late", timeout=2)
        elapsed = time.monotonic() - t0
    finally:
        remove_placement_group(hog)
    assert isinstance(err.value, TimeoutError)
    assert elapsed >= 1.9, elapsed  # no upper bound to check: the hog never leaves
    message = str(err.value)
    for figure in ("within 2s", "requested GPU=2", "available now GPU=0", "GPU=8 in all"):
        assert figure in message, message
    assert live_groups(prefix) == {}


@pytest.mark.multinode
@pytest.mark.asyncio
async def test_allocate_creates_and_removes_its_groups_off_the_event_loop_thread(
    prefix: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[tuple[str, str]] = []
    # The functions _gcs imports from Ray (whose decorator leaves placement_group untyped).
    create: Callable[..., PlacementGroup] = placement_group
    remove = remove_placement_group

    def traced_create(*args: Any, **kwargs: Any) -> PlacementGroup:
        calls.append(("create", threading.current_thread().name))
        return create(*args, **kwargs)

    def traced_remove(pg: PlacementGroup) -> None:
        calls.append(("remove", threading.current_thread().name))
        remove(pg)

    monkeypatch.setattr(_gcs, "placement_group", traced_create)
    monkeypatch.setattr(_gcs, "remove_placement_group", traced_remove)
    # Busy until its timeout: every attempt is created, then removed when its window passes.
    with pytest.raises(PlacementTimeoutError):
        await allocate(
            [{"GPU": 9}], name=prefix + "offloop", timeout=1, backoff=FAST, precheck=False
        )
    kinds = {kind for kind, _ in calls}
    assert kinds == {"create", "remove"}
    assert threading.current_thread().name not in {thread for _, thread in calls}
    assert live_groups(prefix) == {}


@pytest.mark.multinode
@pytest.mark.asyncio
async def test_precheck_false_waits_for_the_timeout_instead_of_failing_fast(prefix: str) -> None:
    # For autoscaling clusters: an impossible-looking request is left to the timeout.
    with pytest.raises(PlacementTimeoutError, match="GPU=9"):
        await allocate(
            [{"GPU": 9}], name=prefix + "autoscale", timeout=1, backoff=FAST, precheck=False
        )
    assert live_groups(prefix) == {}


@pytest.mark.multinode
@pytest.mark.asyncio
async def test_cancelled_allocation_leaves_no_placement_group(prefix: str) -> None:
    hog = await hog_all_gpus(prefix)
    name = prefix + "cancelled"
    task = asyncio.create_task(allocate([{"GPU": 1}], name=name, timeout=60))
    try:
        await async_wait_for(lambda: "PENDING" in states_of(name))
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert states_of(name) == {"REMOVED"}
    finally:
        remove_placement_group(hog)
    assert live_groups(prefix) == {}


@pytest.mark.multinode
@pytest.mark.asyncio
@pytest.mark.slow
async def test_fail_after_around_allocate_behaves_like_its_timeout(prefix: str) -> None:
    hog = await hog_all_gpus(prefix)
    name = prefix + "scoped"
    try:
        with pytest.raises(TimeoutError):
            with anyio.fail_after(1.0):
                await allocate([{"GPU": 1}], name=name, timeout=60)
        with anyio.move_on_after(0.5) as scope:
            await allocate([{"GPU": 1}], name=name, timeout=60)
        assert scope.cancelled_caught
        assert states_of(name) == {"REMOVED"}
    finally:
        remove_placement_group(hog)
    assert live_groups(prefix) == {}


# ------------------------------------------------------------------------------- reap

ORPHAN_DRIVER = """
import asyncio, sys
import ray
from asyncpool.placement import allocate

address, namespace, prefix, other = sys.argv[1:5]

async def make(names, lifetime):
    for n in names:
        await allocate([{"CPU": 0.01}], name=n, lifetime=lifetime, timeout=30)

ray.init(address=address, namespace=namespace, log_to_driver=False)
asyncio.run(make([prefix + "a", prefix + "b", other + "a"], "detached"))
asyncio.run(make([prefix + "attached"], None))
ray.shutdown()
ray.init(address=address, namespace=namespace + "-elsewhere", log_to_driver=False)
asyncio.run(make([prefix + "elsewhere"], "detached"))
ray.shutdown()
"""


@pytest.mark.multinode
@pytest.mark.asyncio
async def test_reap_removes_exactly_the_detached_groups_with_its_prefix_in_this_namespace(
    prefix: str, ray_cluster: SessionCluster
) -> None:
    other = prefix + "other-"
    mine = prefix + "orphan-"
    namespace = ray.get_runtime_context().namespace
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("RAY_ADDRESS", None)
    done = await anyio.run_process(
        [sys.executable, "-c", ORPHAN_DRIVER, ray_cluster.address, namespace, mine, other],
        env=env,
        check=False,
        cwd=str(REPO),
    )
    try:
        assert done.returncode == 0, done.stderr.decode()[-3000:]
        # The attached group fate-shares with its dead driver; the detached ones stay.
        await async_wait_for(lambda: states_of(mine + "attached") == {"REMOVED"})
        assert sorted(g["name"] for g in groups_named(prefix).values() if g["state"] in LIVE) == [
            mine + "a",
            mine + "b",
            mine + "elsewhere",
            other + "a",
        ]
        assert await reap(mine) == 2
        assert states_of(mine + "a") == {"REMOVED"}
        assert states_of(mine + "b") == {"REMOVED"}
        assert "CREATED" in states_of(mine + "elsewhere"), "another namespace is left alone"
        assert "CREATED" in states_of(other + "a"), "another prefix is left alone"
        assert await reap(mine) == 0
        assert await reap(other) == 1
    finally:
        for pg_id in live_groups(prefix):  # the other namespace's group: remove it by id
            remove_by_id(pg_id)
    assert live_groups(prefix) == {}


@pytest.mark.asyncio
async def test_reap_rejects_an_empty_or_non_str_prefix() -> None:
    with pytest.raises(ValueError, match="empty"):
        await reap("")
    with pytest.raises(TypeError):
        await reap(None)  # type: ignore[arg-type]


# ------------------------------------------------------------------------------- topology, nodes


@pytest.mark.multinode
@pytest.mark.asyncio
async def test_topology_reports_total_resources_even_while_gpus_are_taken(
    prefix: str, ray_cluster: SessionCluster
) -> None:
    hog = await hog_all_gpus(prefix)
    try:
        nodes = await anyio.to_thread.run_sync(topology)
    finally:
        remove_placement_group(hog)
    assert {n.node_id for n in nodes} == set(ray_cluster.node_ids)
    head = nodes[0]
    assert head.node_id == ray_cluster.head_node_id
    assert head.is_head
    assert (head.num_gpus, head.num_cpus) == (0, 2)
    workers = [n for n in nodes if not n.is_head]
    assert [n.num_gpus for n in workers] == [WORKER_GPUS, WORKER_GPUS]
    assert all(dict(n.labels).get("asyncpool-role") == "worker" for n in workers)
    no_head = await anyio.to_thread.run_sync(lambda: topology(ignore_head=True))
    assert {n.node_id for n in no_head} == set(ray_cluster.worker_node_ids)


@pytest.mark.multinode
@pytest.mark.asyncio
async def test_plan_replica_on_the_live_topology_allocates_on_the_worker_nodes(
    prefix: str, ray_cluster: SessionCluster
) -> None:
    nodes = await anyio.to_thread.run_sync(topology)
    spec = plan_replica(8, nodes, ignore_head=True)
    assert spec == ReplicaSpec([{"GPU": 4.0}] * 2, "STRICT_SPREAD", 2, [dict(WORKER_LABEL)] * 2)
    pg = await allocate(**spec.allocate_kwargs(), name=prefix + "tp8")
    try:
        where = placement_group_table(pg)["bundles_to_node_id"]
        assert sorted(where.values()) == sorted(ray_cluster.worker_node_ids)
    finally:
        remove_placement_group(pg)
    assert plan_replica(4, nodes).strategy == "STRICT_PACK"
    with pytest.raises(ResourceInsufficientError):
        plan_replica(16, nodes)


@pytest.mark.multinode
@pytest.mark.asyncio
async def test_bundle_node_ip_and_free_port_are_found_on_the_node_of_each_bundle(
    prefix: str, ray_cluster: SessionCluster
) -> None:
    pg = await allocate(
        [{"GPU": 1}, {"GPU": 1}],
        strategy="STRICT_SPREAD",
        name=prefix + "ports",
        label_selector=WORKER_LABEL,
    )
    try:
        where = placement_group_table(pg)["bundles_to_node_id"]
        assert sorted(where.values()) == sorted(ray_cluster.worker_node_ids)
        address = {n["NodeID"]: n["NodeManagerAddress"] for n in ray.nodes()}
        for i in (0, 1):
            assert await bundle_node_ip(pg, i) == address[where[i]]
            port = await free_port(pg, i)
            assert 0 < port < 65536
            with socket.socket() as s:  # every node of the test cluster is this machine
                s.bind(("", port))
        with pytest.raises(ValueError, match="out of range"):
            await bundle_node_ip(pg, 2)
        with pytest.raises(ValueError, match="out of range"):
            await free_port(pg, 2)
        with pytest.raises(ValueError, match=">= 0"):
            await free_port(pg, -1)
    finally:
        remove_placement_group(pg)
    with pytest.raises(ValueError, match="removed"):
        await bundle_node_ip(pg, 0)


def test_topology_and_plan_replica_work_without_an_event_loop(
    ray_cluster: SessionCluster,
) -> None:
    nodes = topology()
    assert len(nodes) == 3
    assert plan_replica(8, nodes, ignore_head=True).nnodes == 2
