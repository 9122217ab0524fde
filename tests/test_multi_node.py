"""The same asyncpool code on a real multi-node Ray cluster: separate ``ray start`` processes.

The test starts a head (``ray start --head --block``) and two worker nodes
(``ray start --address=... --block``) on this machine, each its own process group with its own
``--temp-dir``, ports and a custom resource naming it, with token authentication on (a fresh
token for this cluster, handed to every process in ``RAY_AUTH_TOKEN``). Drivers are
subprocesses (this test process is already connected to the session cluster) that find the
cluster through ``ASYNCPOOL_ADDRESS`` alone. Nodes start one after another; a node whose
``ray start`` gives up at Ray's fixed 30 s wait for its raylet to register (a loaded machine,
as in CI) is killed whole and started again.

Teardown never runs ``ray stop`` (it would stop every Ray cluster on the machine): it kills the
process groups it started, every descendant of them, and every process carrying this cluster's
marker in its environment, then checks that none is left.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
MARK_VAR = "ASYNCPOOL_MULTINODE_TEST"
WORKERS = 2
NODE_RESOURCE = "asyncpool_mn_node_{}"

pytestmark = [pytest.mark.slow]

PROBE = textwrap.dedent(
    """
    import asyncio, collections, json, sys, time
    import ray
    import asyncpool

    def where(i):
        time.sleep(0.2)
        return ray.get_runtime_context().get_node_id()

    async def main():
        expected, n = int(sys.argv[1]), int(sys.argv[2])
        async with asyncpool.connect(log_to_driver=False) as rt:  # ASYNCPOOL_ADDRESS
            deadline = time.monotonic() + 60
            while True:
                nodes = [x for x in await asyncio.to_thread(ray.nodes) if x["Alive"]]
                if len(nodes) >= expected:
                    break
                if time.monotonic() > deadline:
                    sys.exit(f"only {len(nodes)} of {expected} nodes alive")
                await asyncio.sleep(0.2)
            async with asyncpool.TaskPool(where, strategy="SPREAD") as pool:
                async with pool.map(range(n)) as stream:
                    done = collections.Counter([node async for _, node in stream])
            names = {
                x["NodeID"]: sorted(k for k in x["Resources"] if k.startswith("asyncpool_mn_"))
                for x in nodes
            }
            print(json.dumps({"source": rt.source, "address": rt.address,
                              "nodes": names, "tasks_per_node": done}))

    asyncpool.run(main)
    """
)


@dataclass
class RayStartCluster:
    address: str  # what drivers are given (loopback)
    env: dict[str, str]
    marker: str
    root: Path
    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def log_tail(self, n: int = 15) -> str:
        out = []
        for log in sorted(self.root.glob("*.log")):
            lines = log.read_text(errors="replace").splitlines()[-n:]
            out.append(f"--- {log.name}\n" + "\n".join(lines))
        return "\n".join(out)


def _free_ports(n: int) -> list[int]:
    socks = []
    try:
        for _ in range(n):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [int(s.getsockname()[1]) for s in socks]
    finally:
        for s in socks:
            s.close()


def _proc_table() -> dict[int, int]:
    """pid -> parent pid, for every process on the machine."""
    table = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # "pid (comm) state ppid ...": comm may hold spaces and parentheses.
        table[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    return table


def _descendants(roots: set[int]) -> set[int]:
    table = _proc_table()
    found = set(roots)
    changed = True
    while changed:
        changed = False
        for pid, ppid in table.items():
            if ppid in found and pid not in found:
                found.add(pid)
                changed = True
    return found - roots


def _marked(marker: str) -> set[int]:
    """Processes whose environment carries this cluster's marker (Ray passes it down)."""
    needle = f"{MARK_VAR}={marker}".encode()
    pids = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                if needle in (entry / "environ").read_bytes():
                    pids.add(int(entry.name))
            except OSError:
                continue
    return pids


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _kill_all(cluster: RayStartCluster) -> set[int]:
    """Kill what we started: the ``ray start`` process groups, their descendants and every
    process with our marker; returns the pids still alive after a deadline."""
    victims = _descendants({p.pid for p in cluster.procs}) | _marked(cluster.marker)
    for p in cluster.procs:
        if p.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, signal.SIGKILL)  # start_new_session: pgid == pid
    for pid in victims:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    for p in cluster.procs:
        with contextlib.suppress(subprocess.TimeoutExpired):
            p.wait(timeout=20)
    deadline = time.monotonic() + 20
    while True:
        left = {pid for pid in victims | _marked(cluster.marker) if _alive(pid)}
        if not left or time.monotonic() > deadline:
            return left
        for pid in left:  # started after the snapshot (a worker being spawned)
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.1)  # reaping is not instantaneous; polled with a deadline


# What ``ray start`` prints when its raylet has not registered with the GCS within Ray's own
# fixed 30 s (``raylet_start_wait_time_s`` in ray/_private/node.py, no setting): a loaded
# machine's startup, not a failure of the cluster under test.
RAY_START_TIMED_OUT = "timed out during startup"
START_ATTEMPTS = 4


def _start_node(
    cluster: RayStartCluster, index: int, head_port: int | None, attempt: int
) -> subprocess.Popen[bytes]:
    agent, agent_grpc, runtime_env, metrics, dashboard, client = _free_ports(6)
    temp = cluster.root / f"node{index}-{attempt}"
    temp.mkdir()
    args = [
        sys.executable, "-m", "ray.scripts.scripts", "start", "--block",
        "--node-ip-address", "127.0.0.1",
        "--num-cpus", "1", "--num-gpus", "0",
        "--resources", json.dumps({NODE_RESOURCE.format(index): 1}),
        "--object-store-memory", str(100 * 1024 * 1024),
        "--temp-dir", str(temp),
        "--dashboard-agent-listen-port", str(agent),
        "--dashboard-agent-grpc-port", str(agent_grpc),
        "--runtime-env-agent-port", str(runtime_env),
        "--metrics-export-port", str(metrics),
        "--disable-usage-stats",
    ]  # fmt: skip
    if head_port is None:
        port = int(cluster.address.rsplit(":", 1)[1])
        args += [
            "--head", "--port", str(port), "--include-dashboard", "false",
            "--dashboard-port", str(dashboard), "--ray-client-server-port", str(client),
        ]  # fmt: skip
    else:
        args += ["--address", f"127.0.0.1:{head_port}"]
    with (cluster.root / f"node{index}-{attempt}.log").open("wb") as log:
        proc = subprocess.Popen(
            args,
            env=cluster.env,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,  # its own process group, killed whole
        )
    cluster.procs.append(proc)
    return proc


def _group_alive(pgid: int) -> bool:
    """Whether a process of group ``pgid`` is alive (a zombie is not: it runs nothing)."""
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[2]) == pgid and fields[0] != "Z":
                return True
    return False


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    """Kill a failed ``ray start``'s process group (its raylet outlives it) and wait until
    nothing of it runs, so a late registration cannot add a second node of the same name."""
    deadline = time.monotonic() + 20
    while True:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)  # start_new_session: pgid == pid
        proc.poll()  # reaps ray start itself
        if not _group_alive(proc.pid):
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"process group {proc.pid} of a failed ray start still runs")
        time.sleep(0.1)  # reaping is not instantaneous; polled with a deadline


def _started(
    cluster: RayStartCluster, index: int, attempt: int, proc: subprocess.Popen[bytes]
) -> bool:
    """Wait until ``ray start`` of node ``index`` says it started (True) or exits: False when
    it hit Ray's own startup limit (see ``RAY_START_TIMED_OUT``), an error otherwise. The
    test's timeout is the guard of the wait."""
    log = cluster.root / f"node{index}-{attempt}.log"
    while "Ray runtime started" not in log.read_text(errors="replace"):
        if proc.poll() is not None:
            if RAY_START_TIMED_OUT in log.read_text(errors="replace"):
                return False
            raise AssertionError(f"ray start of node {index} exited:\n{cluster.log_tail()}")
        time.sleep(0.1)
    return True


def _start_and_wait(cluster: RayStartCluster, index: int, head_port: int | None) -> bool:
    """Start node ``index`` and wait for it, again from a fresh temp dir when Ray's startup
    limit was hit (then True); nodes are started one after another so that they do not
    compete."""
    for attempt in range(START_ATTEMPTS):
        proc = _start_node(cluster, index, head_port, attempt)
        if _started(cluster, index, attempt, proc):
            return attempt > 0
        _kill_group(proc)
    raise AssertionError(
        f"ray start of node {index} timed out {START_ATTEMPTS} times:\n{cluster.log_tail()}"
    )


NODES_PROBE = textwrap.dedent(
    """
    import sys, time
    import ray

    ray.init(log_to_driver=False)  # RAY_ADDRESS
    while sorted(r for x in ray.nodes() if x["Alive"] for r in x["Resources"]
                 if r.startswith("asyncpool_mn_")) != sys.argv[1:]:
        time.sleep(0.2)  # polled; the test's timeout is the guard
    """
)


def _wait_for_exact_nodes(cluster: RayStartCluster) -> None:
    """Until the GCS lists one live node per name: a node killed after a failed start may
    have registered late, and is listed alive until the GCS's health check finds it dead."""
    names = [NODE_RESOURCE.format(i) for i in range(WORKERS + 1)]
    subprocess.run(
        [sys.executable, "-c", NODES_PROBE, *names],
        env={**cluster.env, "RAY_ADDRESS": cluster.address},
        check=True,
    )


@pytest.fixture(scope="module")
def ray_start_cluster() -> Iterator[RayStartCluster]:
    (head_port,) = _free_ports(1)
    # Short path: Ray's Unix sockets live under the temp dir (108-byte limit on their paths).
    root = Path(tempfile.mkdtemp(prefix="apmn-", dir="/tmp"))
    marker = uuid.uuid4().hex
    env = {k: v for k, v in os.environ.items() if k not in ("RAY_ADDRESS", "ASYNCPOOL_ADDRESS")}
    env.update(
        {
            "PYTHONPATH": str(REPO) + os.pathsep + env.get("PYTHONPATH", ""),
            # Token auth, as `ray start --head` turns on by itself when ~/.ray/auth_token
            # exists; every node and driver must then say so (an explicit address never
            # turns it on) and hold the token. This cluster gets its own token.
            "RAY_AUTH_MODE": "token",
            "RAY_AUTH_TOKEN": secrets.token_hex(32),
            MARK_VAR: marker,
        }
    )
    cluster = RayStartCluster(f"127.0.0.1:{head_port}", env, marker, root)
    try:
        restarted = _start_and_wait(cluster, 0, None)
        for i in range(1, WORKERS + 1):
            restarted |= _start_and_wait(cluster, i, head_port)
        if restarted:
            _wait_for_exact_nodes(cluster)
        yield cluster
    finally:
        left = _kill_all(cluster)
        shutil.rmtree(root, ignore_errors=True)
        assert not left, f"processes of the test cluster still alive: {sorted(left)}"


def _driver_env(cluster: RayStartCluster) -> dict[str, str]:
    return {**cluster.env, "ASYNCPOOL_ADDRESS": cluster.address}


def test_taskpool_spread_lands_work_on_every_ray_start_node(
    ray_start_cluster: RayStartCluster,
) -> None:
    cluster = ray_start_cluster
    out = subprocess.run(
        [sys.executable, "-c", PROBE, str(WORKERS + 1), "24"],
        env=_driver_env(cluster),
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode == 0, f"{out.stdout}\n{out.stderr[-3000:]}\n{cluster.log_tail()}"
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["source"] == "ASYNCPOOL_ADDRESS"
    assert got["address"].endswith(cluster.address.rsplit(":", 1)[1])
    names = {node: res[0] for node, res in got["nodes"].items()}
    assert sorted(names.values()) == [NODE_RESOURCE.format(i) for i in range(WORKERS + 1)]
    counts = got["tasks_per_node"]
    print(
        "\n[multi-node] tasks per node: "
        + ", ".join(f"{names[n]} {n}: {c}" for n, c in sorted(counts.items()))
    )
    assert sum(counts.values()) == 24
    assert set(counts) == set(names), f"no work on {set(names) - set(counts)}"


def test_rollout_loop_runs_unchanged_on_the_ray_start_cluster(
    ray_start_cluster: RayStartCluster, tmp_path: Path
) -> None:
    cluster = ray_start_cluster
    out_file = tmp_path / "rollouts.jsonl"
    command = [sys.executable, str(REPO / "examples" / "rollout_loop.py"), "--n", "24"]
    out = subprocess.run(
        [*command, "--out", str(out_file), "--no-progress"],
        env=_driver_env(cluster),
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode == 0, f"{out.stdout}\n{out.stderr[-3000:]}\n{cluster.log_tail()}"
    rows = [json.loads(line) for line in out_file.read_text().splitlines()]
    assert len(rows) == 24
    assert all(r["reward"] == r["expected_reward"] for r in rows)
    verify_nodes = {r["verify_node"] for r in rows}
    print(
        f"\n[multi-node] rollout loop: {out.stdout.strip().splitlines()[0]}\n"
        f"[multi-node] verified on {len(verify_nodes)} nodes: {sorted(verify_nodes)}"
    )
    assert len(verify_nodes) >= 2
