"""asyncpool.workers: WorkerGroup on the session's multi-node cluster with fake GPUs.

The session cluster has two worker nodes of 2 CPUs and 4 fake GPUs each. A bundle of
``VirtualCluster`` is ``{"CPU": 1, "GPU": 1}``, so ``[2, 2]`` takes every CPU of both worker
nodes: a test releases its actors and placement groups before it ends, the next one needs them.

Most dispatch tests share one open group (a class-scoped fixture: starting actors costs seconds
on a loaded machine); the tests that kill, shut down or fail to start workers make their own.
"""

from __future__ import annotations

import asyncio
import gc
import importlib.util
import logging
import os
import subprocess
import sys
import threading
import time
import uuid
import weakref
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import pytest
import ray
from ray.exceptions import RayActorError, TaskCancelledError

from asyncpool.cluster import VirtualCluster
from asyncpool.errors import ResourceStateError, WorkerFailedError, WorkerGroupStateError
from asyncpool.workers import Dispatch, WorkerGroup, WorkerMetadata
from tests.conftest import SessionCluster, async_wait_for, require_free_cluster

REPO = Path(__file__).resolve().parents[1]
SIX = ("RANK", "LOCAL_RANK", "WORLD_SIZE", "NODE_RANK", "MASTER_ADDR", "MASTER_PORT")


# --------------------------------------------------------------------------------------------
# worker classes (imported by the workers from this module)
# --------------------------------------------------------------------------------------------


def _rank() -> int:
    return int(os.environ["RANK"])


class Probe:
    """The shared group's worker: an async actor, so that a running nap can be cancelled."""

    def __init__(self, tag: str = "") -> None:
        self.tag = tag
        self.calls = 0
        self.last: Any = None

    @staticmethod
    def configure_worker(
        num_gpus: float, bundle_indices: tuple[int, list[int]] | None
    ) -> tuple[None, dict[str, str], None]:
        lead = "" if bundle_indices is None else f"{bundle_indices[0]}:{bundle_indices[1]}"
        return None, {"PROBE_LEADS": lead}, None

    async def env(self) -> dict[str, Any]:
        ctx = ray.get_runtime_context()
        return {
            **{k: os.environ.get(k) for k in (*SIX, "PROBE_FOO", "PROBE_LEADS", "RAY_JOB_ID")},
            "node_id": ctx.get_node_id(),
            "gpus": len(ray.get_gpu_ids()),
            "in_placement_group": ray.util.get_current_placement_group() is not None,
            "resources": ctx.get_assigned_resources(),
            "tag": self.tag,
        }

    async def nap(self, seconds: float) -> tuple[int, float]:
        self.calls += 1
        await asyncio.sleep(seconds)
        return _rank(), seconds

    async def record(self, shard: Any) -> tuple[int, Any]:
        self.calls += 1
        self.last = shard
        return _rank(), shard

    async def last_seen(self) -> Any:
        return self.last

    async def call_count(self) -> int:
        return self.calls

    async def fail(self, message: str) -> None:
        raise KeyError(message)


class Traced:
    """A shard that records which thread serialised it (unpickled, it is just its text)."""

    seen: ClassVar[list[str]] = []

    def __init__(self, text: str) -> None:
        self.text = text

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        Traced.seen.append(threading.current_thread().name)
        return (str, (self.text,))


class Mortal:
    async def step(self, die_after: float | None) -> int:
        if die_after is None:
            return _rank()
        await asyncio.sleep(die_after)
        os._exit(1)


class Closer:
    def __init__(self, marker_dir: str) -> None:
        self.marker_dir = marker_dir

    async def ping(self) -> int:
        return _rank()

    def _mark(self) -> None:
        Path(self.marker_dir, f"cleaned-{_rank()}").write_text("ok")

    async def cleanup(self) -> None:
        self._mark()
        if _rank() == 1:
            await asyncio.sleep(120)  # overruns the shutdown timeout: force-killed


class Fragile:
    def __init__(self) -> None:
        if _rank() == 1:
            raise RuntimeError("rank 1 cannot start")

    def ping(self) -> int:
        return _rank()


class Stuck:
    """Rank 1's constructor never returns: its group's opening waits on it."""

    def __init__(self) -> None:
        if _rank() == 1:
            time.sleep(3600)

    def ping(self) -> int:
        return _rank()


class NotStatic:
    def configure_worker(self, num_gpus: float, bundle_indices: Any) -> Any:
        return None, None, None


# --------------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------------


def _dashboard_address() -> str | None:
    try:
        url = ray._private.worker.get_dashboard_url()
    except Exception:
        return None
    if not url:
        return None
    return url if "://" in url else f"http://{url}"


def live_actor_names(prefix: str) -> set[str]:
    """Names of the live (not DEAD) actors starting with ``prefix``, from Ray's own state.

    ``ray.util.state.list_actors`` through the session cluster's dashboard; without a dashboard
    (a cluster started without one) the GCS actor table, the same data read directly. Named
    actors are also checked through ``ray.util.list_named_actors``.
    """
    names: set[str] = set()
    address = _dashboard_address()
    if address is not None:
        from ray.util.state import list_actors

        rows = list_actors(
            address=address,
            filters=[("state", "!=", "DEAD")],
            limit=10_000,
            raise_on_missing_output=False,
        )
        names |= {r.name for r in rows if r.name is not None and r.name.startswith(prefix)}
    else:
        from ray._private import state as gcs_state

        for info in gcs_state.actors().values():
            if str(info.get("Name", "")).startswith(prefix) and info.get("State") != "DEAD":
                names.add(str(info["Name"]))
    names |= {
        a["name"]
        for a in ray.util.list_named_actors(all_namespaces=True)
        if a["name"].startswith(prefix)
    }
    return names


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:6]}"


@asynccontextmanager
async def opened(group: WorkerGroup) -> AsyncIterator[WorkerGroup]:
    """Open ``group`` inside its (open) cluster, and shut it down whatever happens."""
    try:
        async with group:
            yield group
    finally:
        await group.shutdown()


@dataclass
class Shared:
    cluster: VirtualCluster
    group: WorkerGroup


@pytest.fixture(scope="class")
def shared(ray_cluster: SessionCluster) -> Iterator[Shared]:
    """One open group of two tied pairs, [(0, [0, 1]), (1, [0, 1])], over both GPU nodes."""
    require_free_cluster()
    cluster = VirtualCluster([2, 2], name=unique("wg-shared"))
    group = WorkerGroup(
        cluster,
        Probe,
        name=unique("probe"),
        tied=[(0, [0, 1]), (1, [0, 1])],
        env={"PROBE_FOO": "bar", "RAY_JOB_ID": "copied-from-the-driver"},
        tag="shared",
    )

    async def open_() -> None:
        await cluster.open()
        try:
            await group.open()
        except BaseException:
            await cluster.close()
            raise

    async def close() -> None:
        await group.shutdown()
        await cluster.close()

    asyncio.run(open_())
    try:
        yield Shared(cluster, group)
    finally:
        asyncio.run(close())


# --------------------------------------------------------------------------------------------
# the shared open group
# --------------------------------------------------------------------------------------------


@pytest.mark.multinode
class TestOpenGroup:
    @pytest.mark.asyncio
    async def test_every_worker_has_its_six_distributed_variables_and_sits_on_its_bundle(
        self, shared: Shared, ray_cluster: SessionCluster
    ) -> None:
        group = shared.group
        envs = await group.broadcast("env")
        assert [e["RANK"] for e in envs] == ["0", "1", "2", "3"]
        assert {e["WORLD_SIZE"] for e in envs} == {"4"}
        assert [e["LOCAL_RANK"] for e in envs] == ["0", "1", "0", "1"]
        assert [e["NODE_RANK"] for e in envs] == ["0", "0", "1", "1"]
        assert len({(e["MASTER_ADDR"], e["MASTER_PORT"]) for e in envs}) == 1
        assert all(e["MASTER_ADDR"] and int(e["MASTER_PORT"]) > 0 for e in envs)
        # The caller's env reaches every worker; the driver's Ray-internal copy does not.
        assert {e["PROBE_FOO"] for e in envs} == {"bar"}
        assert all(e["RAY_JOB_ID"] != "copied-from-the-driver" for e in envs)
        # Pinned: on the node of its bundle, one fake GPU each, inside the placement group.
        meta = group.metadata
        assert [e["node_id"] for e in envs] == [m.node_id for m in meta]
        assert {m.node_id for m in meta} == set(ray_cluster.worker_node_ids)
        assert meta[0].node_id == meta[1].node_id != meta[2].node_id == meta[3].node_id
        assert all(e["gpus"] == 1 and e["in_placement_group"] for e in envs)
        assert {e["tag"] for e in envs} == {"shared"}
        # configure_worker saw (node, bundles) for each tied leader and None for the others.
        assert [e["PROBE_LEADS"] for e in envs] == ["0:[0, 1]", "", "1:[0, 1]", ""]

    @pytest.mark.asyncio
    async def test_metadata_names_and_ranks_follow_the_tied_layout(self, shared: Shared) -> None:
        group = shared.group
        meta = group.metadata
        assert [m.rank for m in meta] == [0, 1, 2, 3]
        assert [(m.node_idx, m.bundle_index) for m in meta] == [(0, 0), (0, 1), (1, 0), (1, 1)]
        assert [m.tied_group for m in meta] == [0, 0, 1, 1]
        assert [m.is_leader for m in meta] == [True, False, True, False]
        assert group.tied_groups == [[0, 1], [2, 3]]
        assert len({m.name for m in meta}) == 4
        assert all(m.name.startswith(group.name) for m in meta)
        assert meta[3].name.endswith("rank3-node1-bundle1")
        assert len(group.workers) == 4
        assert live_actor_names(group.name) == {m.name for m in meta}

    @pytest.mark.asyncio
    async def test_dispatch_yields_results_in_completion_order(self, shared: Shared) -> None:
        order = []
        async with shared.group.dispatch("nap", [0.9, 0.0, 0.6, 0.3]) as results:
            async for index, (rank, _seconds) in results:
                assert rank == index  # shard i went to worker i
                order.append(index)
        assert order == [1, 3, 2, 0]

    @pytest.mark.asyncio
    async def test_awaited_dispatch_gives_values_in_shard_order(self, shared: Shared) -> None:
        values = await shared.group.dispatch("nap", [0.3, 0.2, 0.1, 0.0])
        assert values == [(0, 0.3), (1, 0.2), (2, 0.1), (3, 0.0)]

    @pytest.mark.asyncio
    async def test_tied_leader_sends_shard_i_to_the_leader_of_tied_group_i(
        self, shared: Shared
    ) -> None:
        tag = uuid.uuid4().hex
        values = await shared.group.dispatch(
            "record", [f"{tag}-a", f"{tag}-b"], only_on="tied_leader"
        )
        assert values == [(0, f"{tag}-a"), (2, f"{tag}-b")]
        seen = await shared.group.broadcast("last_seen")
        assert seen[0] == f"{tag}-a"
        assert seen[2] == f"{tag}-b"
        assert seen[1] != f"{tag}-a"
        assert seen[3] != f"{tag}-b"

    @pytest.mark.asyncio
    async def test_all_tied_workers_runs_every_member_and_returns_the_leaders_value(
        self, shared: Shared
    ) -> None:
        tag = uuid.uuid4().hex
        dispatch = shared.group.dispatch(
            "record", [f"{tag}-a", f"{tag}-b"], only_on="all_tied_workers"
        )
        assert len(dispatch) == 2
        assert dispatch.ranks == [[0, 1], [2, 3]]
        assert await dispatch == [(0, f"{tag}-a"), (2, f"{tag}-b")]
        seen = await shared.group.broadcast("last_seen")
        assert seen == [f"{tag}-a", f"{tag}-a", f"{tag}-b", f"{tag}-b"]
        # broadcast with a tied mode: one result per tied group, the leader's.
        ranks = await shared.group.broadcast("record", "x", only_on="all_tied_workers")
        assert ranks == [(0, "x"), (2, "x")]

    @pytest.mark.asyncio
    async def test_fewer_shards_than_workers_use_the_first_workers_and_log_it(
        self, shared: Shared, caplog: pytest.LogCaptureFixture
    ) -> None:
        with caplog.at_level(logging.INFO, logger="asyncpool.workers"):
            values = await shared.group.dispatch("nap", [0.0, 0.0])
        assert values == [(0, 0.0), (1, 0.0)]
        assert "2 shard(s) for 4 target(s)" in caplog.text

    @pytest.mark.asyncio
    async def test_too_many_shards_and_unknown_methods_raise_before_anything_is_sent(
        self, shared: Shared
    ) -> None:
        group = shared.group
        before = await group.broadcast("call_count")
        with pytest.raises(ValueError, match="5 shards for 4 target"):
            group.dispatch("record", [1, 2, 3, 4, 5])
        with pytest.raises(ValueError, match="3 shards for 2 target"):
            group.dispatch("record", [1, 2, 3], only_on="tied_leader")
        with pytest.raises(AttributeError, match="Probe has no method 'recrod'"):
            group.dispatch("recrod", [1])
        with pytest.raises(AttributeError, match="Probe"):
            group.broadcast("no_such_method")
        with pytest.raises(ValueError, match="only_on"):
            group.dispatch("record", [1], only_on="everyone")  # type: ignore[arg-type]
        with pytest.raises(TypeError, match="sequence"):
            group.dispatch("record", {"a": 1})  # type: ignore[arg-type]
        assert await group.broadcast("call_count") == before

    @pytest.mark.asyncio
    async def test_leaving_a_dispatch_early_cancels_the_calls_still_running(
        self, shared: Shared
    ) -> None:
        dispatch = shared.group.dispatch("nap", [0.0, 60.0, 60.0, 60.0])
        async with dispatch:
            async for index, _ in dispatch:
                assert index == 0
                break
        pending = [group[0] for group in dispatch.refs[1:]]
        await async_wait_for(
            lambda: len(ray.wait(pending, num_returns=3, timeout=0)[0]) == 3, timeout=20
        )
        for ref in pending:
            with pytest.raises(TaskCancelledError):
                ray.get(ref, timeout=5)
        assert await shared.group.dispatch("nap", [0.0] * 4) == [(r, 0.0) for r in range(4)]

    @pytest.mark.asyncio
    async def test_an_exception_raised_by_a_worker_method_is_raised_as_its_own_type(
        self, shared: Shared
    ) -> None:
        with pytest.raises(KeyError, match="no such key"):
            await shared.group.dispatch("fail", ["no such key"])

    @pytest.mark.asyncio
    async def test_shards_are_serialised_and_sent_off_the_event_loop(self, shared: Shared) -> None:
        Traced.seen.clear()
        one = [Traced(f"one-{i}") for i in range(4)]
        tied = [Traced(f"tied-{i}") for i in range(2)]
        assert [v for _, v in await shared.group.dispatch("record", one)] == [
            f"one-{i}" for i in range(4)
        ]
        values = await shared.group.dispatch("record", tied, only_on="all_tied_workers")
        assert [v for _, v in values] == ["tied-0", "tied-1"]  # ray.put once, then shared
        assert len(Traced.seen) >= 6
        loop_thread = threading.current_thread().name
        assert loop_thread not in Traced.seen
        assert {name.split("_")[0] for name in Traced.seen} == {"asyncpool-dispatch"}

    @pytest.mark.asyncio
    async def test_a_dropped_half_consumed_dispatch_is_collected_and_cancels_its_calls(
        self, shared: Shared
    ) -> None:
        dispatch = shared.group.dispatch("nap", [0.0, 60.0, 60.0, 60.0])
        assert (await dispatch.__anext__())[0] == 0
        pending = [group[0] for group in dispatch.refs[1:]]
        dropped = weakref.ref(dispatch)
        del dispatch
        gc.collect()
        assert dropped() is None
        await async_wait_for(
            lambda: len(ray.wait(pending, num_returns=3, timeout=0)[0]) == 3, timeout=20
        )
        for ref in pending:
            with pytest.raises(TaskCancelledError):
                ray.get(ref, timeout=5)

    @pytest.mark.asyncio
    async def test_a_dispatch_is_consumed_once(self, shared: Shared) -> None:
        dispatch = shared.group.broadcast("call_count")
        assert isinstance(dispatch, Dispatch)
        await dispatch
        with pytest.raises(WorkerGroupStateError, match="consumed once") as err:
            await dispatch
        assert isinstance(err.value, ResourceStateError)
        with pytest.raises(WorkerGroupStateError, match="consumed once"):
            async for _ in dispatch:
                pass

    @pytest.mark.asyncio
    async def test_layout_shows_each_worker_of_the_group_on_its_cell(self, shared: Shared) -> None:
        text = shared.group.layout()
        rows = [" ".join(line.split()) for line in text.splitlines()]
        assert f"{shared.group.name} 0 1" in rows
        assert f"{shared.group.name} 2 3" in rows

    @pytest.mark.asyncio
    async def test_opening_an_open_group_again_is_a_state_error(self, shared: Shared) -> None:
        with pytest.raises(WorkerGroupStateError, match="opened once"):
            await shared.group.open()


# --------------------------------------------------------------------------------------------
# groups of their own
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="class")
def pair(ray_cluster: SessionCluster) -> Iterator[VirtualCluster]:
    """One open VirtualCluster([1, 1]) for the tests that make groups of their own."""
    require_free_cluster()
    cluster = VirtualCluster([1, 1], name=unique("wg-pair"))
    asyncio.run(cluster.open())
    try:
        yield cluster
    finally:
        asyncio.run(cluster.aclose())


@pytest.mark.multinode
class TestGroupsOfTheirOwn:
    """Each test opens (and shuts down) a group of its own on the shared pair of nodes."""

    @pytest.mark.asyncio
    @pytest.mark.slow
    async def test_a_worker_that_exits_mid_dispatch_fails_it_after_the_others_results(
        self, pair: VirtualCluster,
    ) -> None:
        cluster = pair
        group = WorkerGroup(cluster, Mortal, name=unique("mortal"))
        async with opened(group):
            got: list[tuple[int, Any]] = []

            async def consume() -> None:
                async with group.dispatch("step", [None, 0.5]) as results:
                    async for index, value in results:
                        got.append((index, value))

            with pytest.raises(WorkerFailedError) as info:
                await consume()
            assert got == [(0, 0)]
            dead = group.metadata[1]
            assert info.value.rank == 1
            assert info.value.name == dead.name
            assert info.value.node_id == dead.node_id
            assert isinstance(info.value.__cause__, RayActorError)
        assert live_actor_names(group.name) == set()

    @pytest.mark.asyncio
    @pytest.mark.slow
    async def test_shutdown_runs_cleanup_force_kills_overrunning_workers_and_leaves_none_alive(
        self, pair: VirtualCluster, tmp_path: Path
    ) -> None:
        cluster = pair
        group = WorkerGroup(cluster, Closer, str(tmp_path), name=unique("closer"))
        async with opened(group):
            assert await group.broadcast("ping") == [0, 1]
            assert len(live_actor_names(group.name)) == 2
            started = time.monotonic()
            await group.shutdown(cleanup="cleanup", timeout=1.0)
            assert time.monotonic() - started < 15
            assert sorted(os.listdir(tmp_path)) == ["cleaned-0", "cleaned-1"]
            assert live_actor_names(group.name) == set()
            await group.shutdown()  # idempotent
            assert group.state == "closed"
            with pytest.raises(WorkerGroupStateError, match="closed"):
                group.dispatch("ping", [])
            with pytest.raises(WorkerGroupStateError, match="closed"):
                _ = group.workers
            with pytest.raises(WorkerGroupStateError, match="once"):
                await group.open()
            assert [m.rank for m in group.metadata] == [0, 1]  # still readable

    @pytest.mark.asyncio
    async def test_a_worker_that_cannot_start_fails_the_opening_and_nothing_is_left(
        self, pair: VirtualCluster,
    ) -> None:
        cluster = pair
        group = WorkerGroup(cluster, Fragile, name=unique("fragile"))
        with pytest.raises(WorkerFailedError, match="rank 1 cannot start") as info:
            await group.open()
        assert info.value.rank == 1
        assert group.state == "unopened"
        assert live_actor_names(group.name) == set()

    @pytest.mark.asyncio
    async def test_shutting_down_a_group_while_it_opens_ends_the_opening_and_kills_its_workers(
        self, pair: VirtualCluster,
    ) -> None:
        group = WorkerGroup(pair, Stuck, name=unique("stuck"))
        task = asyncio.create_task(group.open())
        await async_wait_for(lambda: len(live_actor_names(group.name)) == 2)
        await group.shutdown()
        # Rank 1 never answers: the shutdown, not the constructor, ends the opening.
        with pytest.raises(WorkerGroupStateError, match="closed while it was being opened"):
            await task
        assert group.state == "closed"
        await async_wait_for(lambda: live_actor_names(group.name) == set())

    @pytest.mark.asyncio
    @pytest.mark.slow
    async def test_a_module_class_string_worker_is_imported_inside_the_workers_environment(
        self, pair: VirtualCluster, tmp_path: Path, caplog: pytest.LogCaptureFixture
    ) -> None:
        module = f"apw_string_worker_{uuid.uuid4().hex[:8]}"
        (tmp_path / f"{module}.py").write_text(
            "import os\n"
            "class Greeter:\n"
            "    def __init__(self, greeting, suffix=''):\n"
            "        self.greeting, self.suffix = greeting, suffix\n"
            "    @staticmethod\n"
            "    def configure_worker(num_gpus, bundle_indices):\n"
            "        return {'num_gpus': num_gpus}, {'GREETER_HOOK': 'on'}, {'suffix': '!'}\n"
            "    def greet(self, who):\n"
            "        return f\"{self.greeting} {who}{self.suffix} from {os.environ['RANK']}\"\n"
            "    def hooked(self):\n"
            "        return os.environ.get('GREETER_HOOK')\n"
        )
        assert importlib.util.find_spec(module) is None  # the driver cannot import it
        cluster = pair
        missing = WorkerGroup(
            cluster,
            f"{module}.Nope",
            name=unique("nope"),
            runtime_env={"env_vars": {"PYTHONPATH": str(tmp_path)}},
        )
        with pytest.raises(AttributeError, match="Nope"):
            await missing.open()
        assert missing.state == "unopened"
        group = WorkerGroup(
            cluster,
            f"{module}.Greeter",
            "hi",
            suffix="?",
            name=unique("greeter"),
            runtime_env={"env_vars": {"PYTHONPATH": str(tmp_path)}},
        )
        with caplog.at_level(logging.WARNING, logger="asyncpool.workers"):
            async with opened(group):
                assert await group.dispatch("greet", ["ann", "bob"]) == [
                    "hi ann! from 0",
                    "hi bob! from 1",
                ]
                assert await group.broadcast("hooked") == ["on", "on"]
                with pytest.raises(AttributeError, match="Greeter has no method 'greeet'"):
                    group.dispatch("greeet", ["x"])
                handle = group.workers[0]
                assert await handle.call.remote("greet", "cy") == "hi cy! from 0"
        assert "overrides the caller's setting: init kwarg suffix='!'" in caplog.text
        assert live_actor_names(group.name) == set()


@ray.remote(num_cpus=0)
def _settle(value: int, fail: bool) -> int:
    if fail:
        raise ValueError(f"shard {value} failed")
    return value


@pytest.mark.multinode
@pytest.mark.asyncio
async def test_results_that_arrived_with_a_failure_are_yielded_before_it_is_raised(
    ray_cluster: SessionCluster,
) -> None:
    # Both calls have finished before the Dispatch looks: they arrive in one batch, the
    # failure first. The success must still be yielded, then the failure raised.
    refs = [[_settle.remote(0, True)], [_settle.remote(1, False)]]
    ray.wait([r[0] for r in refs], num_returns=2, timeout=30)
    meta = [
        [
            WorkerMetadata(
                rank=i,
                local_rank=0,
                node_idx=0,
                node_id="n",
                bundle_index=i,
                tied_group=i,
                name=f"w{i}",
            )
        ]
        for i in range(2)
    ]
    got: list[tuple[int, Any]] = []

    async def consume() -> None:
        async with Dispatch("settle", refs, meta) as results:
            async for item in results:
                got.append(item)  # noqa: PERF401 - kept item by item: an error ends the loop

    with pytest.raises(ValueError, match="shard 0 failed"):
        await consume()
    assert got == [(1, 1)]


@pytest.mark.multinode
@pytest.mark.asyncio
async def test_colocated_groups_share_a_gpu_and_a_name_in_use_is_refused(
    ray_cluster: SessionCluster,
) -> None:
    async with VirtualCluster([1], max_colocated=2) as cluster:
        name = unique("twin")
        first = WorkerGroup(cluster, Probe, name=name)
        async with opened(first):
            envs = await first.broadcast("env")
            assert envs[0]["resources"]["GPU"] == pytest.approx(0.5)
            assert envs[0]["resources"]["CPU"] == pytest.approx(1.0)
            second = WorkerGroup(cluster, Probe, name=name)
            with pytest.raises(ValueError, match="already exists"):
                await second.open()
            assert second.state == "unopened"
            assert live_actor_names(name) == {first.metadata[0].name}
    assert live_actor_names(name) == set()


# --------------------------------------------------------------------------------------------
# bad arguments: raised by the constructor, before anything exists
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"env": {"RANK": "3"}}, ValueError, r"sets \['RANK'\]"),
        ({"env": {"MASTER_PORT": "1", "X": "y"}}, ValueError, "MASTER_PORT"),
        ({"runtime_env": {"env_vars": {"WORLD_SIZE": "8"}}}, ValueError, "WORLD_SIZE"),
        ({"env": {"X": 1}}, TypeError, r"env\['X'\] must be a str key with a str value"),
        ({"workers_per_node": 3}, ValueError, r"node\(s\) \[0\] have only \[2\]"),
        ({"workers_per_node": 0}, ValueError, ">= 1"),
        ({"workers_per_node": [1]}, ValueError, "1 entries for a cluster of 2"),
        ({"workers_per_node": [2, 4]}, ValueError, r"workers_per_node\[1\] must be in 0..3"),
        ({"workers_per_node": [0, 0]}, ValueError, "no worker"),
        ({"workers_per_node": "2"}, TypeError, "workers_per_node"),
        ({"tied": [(2, [0])]}, ValueError, "node_idx 2 out of range"),
        ({"tied": [(0, [0, 2])]}, ValueError, "bundle 2 out of range"),
        ({"tied": [(0, [0, 1]), (0, [1])]}, ValueError, "already used by tied"),
        ({"tied": [(0, [])]}, ValueError, "at least one bundle"),
        ({"tied": []}, ValueError, "at least one tied group"),
        ({"tied": [(0,)]}, ValueError, "pair"),
        ({"tied": [(0, [0])], "workers_per_node": 1}, ValueError, "not both"),
        ({"name": "bad name!"}, ValueError, "letters"),
    ],
)
def test_bad_arguments_raise_in_the_constructor(
    kwargs: dict[str, Any], error: type[Exception], match: str
) -> None:
    cluster = VirtualCluster([2, 3])
    with pytest.raises(error, match=match):
        WorkerGroup(cluster, Probe, **kwargs)


def test_bad_worker_classes_raise_in_the_constructor() -> None:
    cluster = VirtualCluster([1])
    with pytest.raises(TypeError, match="staticmethod or classmethod"):
        WorkerGroup(cluster, NotStatic)
    with pytest.raises(ValueError, match=r"module\.Class"):
        WorkerGroup(cluster, "no_dots")
    with pytest.raises(TypeError, match="worker_cls"):
        WorkerGroup(cluster, 42)
    with pytest.raises(TypeError, match="VirtualCluster"):
        WorkerGroup(object(), Probe)  # type: ignore[arg-type]


def test_a_group_that_is_not_open_refuses_to_dispatch() -> None:
    group = WorkerGroup(VirtualCluster([2]), Probe, workers_per_node=[1])
    assert group.world_size == 1
    assert group.state == "unopened"
    with pytest.raises(WorkerGroupStateError, match="unopened"):
        group.dispatch("record", [1])
    with pytest.raises(WorkerGroupStateError, match="unopened"):
        group.broadcast("record", 1)
    with pytest.raises(WorkerGroupStateError):
        _ = group.metadata


def test_the_default_layout_and_workers_per_node_give_ranks_in_node_order() -> None:
    cluster = VirtualCluster([2, 3])
    assert WorkerGroup(cluster, Probe).tied_groups == [[0], [1], [2], [3], [4]]
    assert WorkerGroup(cluster, Probe, workers_per_node=[0, 2]).world_size == 2
    group = WorkerGroup(cluster, Probe, tied=[(1, [2, 0]), (0, [1])])
    assert group.tied_groups == [[0, 1], [2]]


def test_the_string_worker_helpers_are_shipped_by_value_and_need_no_asyncpool_remotely() -> None:
    from asyncpool.workers import _build, _remote

    _build._remote_helpers()  # registers _remote to be pickled by value
    payload = ray.cloudpickle.dumps((_remote.describe, _remote.AsyncpoolHost))
    script = (
        "import sys; sys.modules['asyncpool'] = None  # importing asyncpool now fails\n"
        "import ray.cloudpickle as cp\n"
        "describe, host = cp.loads(sys.stdin.buffer.read())\n"
        "info = describe('collections.OrderedDict', [])\n"
        "assert 'move_to_end' in info['methods'] and info['hook'] is None, info\n"
        "assert host('collections.Counter', 'aab').call('most_common', 1) == [('a', 2)]\n"
        "print('ok')\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script], input=payload, capture_output=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]
    assert proc.stdout.decode().strip() == "ok"


# --------------------------------------------------------------------------------------------
# the example
# --------------------------------------------------------------------------------------------


@pytest.mark.timeout(300)
@pytest.mark.slow
def test_the_worker_group_example_runs_as_is(ray_cluster: SessionCluster) -> None:
    # A separate driver process joining the session's cluster the way a user's would (through
    # ASYNCPOOL_ADDRESS): it needs 4 CPUs, and starting a cluster of its own would cost a
    # minute on a loaded machine.
    env = {k: v for k, v in os.environ.items() if k not in ("RAY_ADDRESS", "ASYNCPOOL_ADDRESS")}
    env["ASYNCPOOL_ADDRESS"] = ray_cluster.address
    proc = subprocess.run(
        [sys.executable, str(REPO / "examples" / "worker_group.py")],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "VirtualCluster 'example'" in proc.stdout
    assert "scores in batch order" in proc.stdout
