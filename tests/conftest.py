"""Shared test harness: one multi-node Ray cluster for the whole session, both event loops.

The session cluster is made of several raylets on this one machine
(``ray.cluster_utils.Cluster``): a CPU-only head and two worker nodes with 4 fake GPUs each.
It is started once per test process; every Ray test shares it. Tests that need a cluster of
another shape, or a fresh process (``init`` resolution), run in a subprocess.
"""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import time
import zipfile
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import pytest

if TYPE_CHECKING:
    from ray._private.node import Node

HEAD_CPUS = 2
WORKER_CPUS = 2
WORKER_GPUS = 4
WORKER_NODES = 2
WORKER_LABEL = {"asyncpool-role": "worker"}


def pytest_configure(config: pytest.Config) -> None:
    """Ray's workers run at the driver's priority in the tests' clusters.

    Ray starts every worker process at nice 15 (``RAY_worker_niceness``) so that its raylet and
    GCS stay responsive. Beside other CPU-bound work at nice 0 that starves them: with 8 such
    processes on 2 cores a nice-15 worker gets well under 1 % of a core, and the suite ran about
    20x slower than on a quiet machine (its tasks, actors and sandboxes all run in workers). The
    tests check asyncpool's behaviour under contention, not Ray's choice of priority, so every
    cluster they start (this process's, and the ``ray start``, ``asyncpool bench`` and
    ``asyncpool serve`` subprocesses, which inherit the environment) competes for the cores on
    equal terms. A value already set in the environment wins.
    """
    os.environ.setdefault("RAY_worker_niceness", "0")


def pytest_asyncio_loop_factories(config: pytest.Config, item: pytest.Item) -> Mapping[str, Any]:
    """Every async test runs on the standard asyncio loop and on uvloop.

    A test marked ``one_loop`` runs on uvloop only: a scale, stress or chaos test whose point
    is a property of asyncpool (not of the loop) pays its cost once, while lighter tests of the
    same code keep both loops. Which tier runs which loop: :func:`pytest_collection_modifyitems`.
    """
    import uvloop

    if item.get_closest_marker("one_loop") is not None:
        return {"uvloop": uvloop.new_event_loop}
    return {"asyncio": asyncio.new_event_loop, "uvloop": uvloop.new_event_loop}


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The default tier runs each async test on uvloop; the slow tier runs it on asyncio too.

    uvloop is the loop ``asyncpool.run`` and ``asyncpool serve`` run on, so the default tier
    (the README's ``python -m pytest``, under 5 minutes on a quiet 2-core machine) checks every
    behaviour once there; the standard loop's variant of each async test is marked ``slow``
    (CI runs both tiers, so every test still runs on both loops there). Measured at 9120ea9 on
    a quiet machine: the default tier took 354 s with both loops, of which the asyncio variants
    were 99 s and the uvloop ones 81 s. ``tryfirst``: the marks must be on the items before
    ``-m`` deselects by them.

    Every async test also gets :mod:`tests._hang_guard`: pytest-timeout alone does not end a
    hung test on uvloop.
    """
    from . import _hang_guard

    _hang_guard.install(items)
    slow = pytest.mark.slow
    for item in items:
        callspec = getattr(item, "callspec", None)
        if callspec is not None and any(
            value is asyncio.new_event_loop for value in callspec.params.values()
        ):
            item.add_marker(slow)


def _cluster_picture() -> str:
    """What the connected cluster holds now: resources free of total, and the placement groups
    that are not removed (name, state, bundles). Read from the GCS; never raises."""
    import ray
    from ray.util import placement_group_table

    try:
        total, free = ray.cluster_resources(), ray.available_resources()
        keys = sorted(k for k in total if k in ("CPU", "GPU"))
        figures = ", ".join(f"{k}={free.get(k, 0):g}/{total[k]:g}" for k in keys)
        lines = [f"resources free/total: {figures}"]
        for pg_id, info in placement_group_table().items():
            if info.get("state") != "REMOVED":
                bundles = list((info.get("bundles") or {}).values())
                name = info.get("name") or pg_id
                lines.append(f"placement group {name!r}: {info.get('state')} {bundles}")
        return "\n".join(lines)
    except Exception as exc:  # a report helper: the test's own failure is what matters
        return f"(cluster not readable: {exc!r})"


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """A failed test on a connected cluster gets a section with what the cluster held.

    Tests share one session cluster: when one fails because resources are taken (a group left by
    an earlier test, or a reservation Ray did not release), this names what holds them.
    """
    report = yield
    if report.failed:
        import ray

        if ray.is_initialized():
            report.sections.append(("ray cluster at failure", _cluster_picture()))
    return report


@dataclass
class _Held:
    """What a test found holding the cluster past its grace: the test, and the picture."""

    test: str
    picture: str


#: Set when a test found the cluster held past its grace; cleared once it is free.
_HELD: list[_Held] = []


def require_free_cluster(
    *, cpus: bool = False, timeout: float = 20.0, remember: bool = True
) -> None:
    """Fail now, naming what holds them, unless every GPU of the session cluster (and every CPU,
    when ``cpus``) is free and no placement group is left alive.

    Called before the tests that need the whole cluster: a leftover of an earlier test (or a
    reservation Ray did not release) then fails the test that meets it with the cluster's
    picture, instead of each later test waiting out its own timeout. Resources an earlier test
    is still releasing get ``timeout`` seconds (polled, not slept). Once a test has found the
    cluster held past that, the next tests fail at once while the cluster's picture is the
    same (nothing was released since), and get the grace again when it changed (run 13, beside
    8 busy processes: Ray kept 2 CPUs and 2 GPUs of a removed group, and 20 s for every later
    test added up to minutes). ``remember=False``: a failure here is not remembered (the
    guard's own test, which holds a GPU on purpose).
    """
    import ray
    from ray.util import placement_group_table

    keys = ("GPU", "CPU") if cpus else ("GPU",)

    def free() -> bool:
        total, avail = ray.cluster_resources(), ray.available_resources()
        groups = [i for i in placement_group_table().values() if i.get("state") != "REMOVED"]
        return not groups and all(avail.get(k, 0.0) >= total.get(k, 0.0) for k in keys)

    def fail(after: float, picture: str, since: str = "") -> None:
        pytest.fail(
            f"the session cluster's {'/'.join(keys)} are not all free before this test "
            f"(after {after:g} s{since}): a leftover holds them\n{picture}",
            pytrace=False,
        )

    if free():
        _HELD.clear()
        return
    if _HELD and _cluster_picture() == _HELD[0].picture:
        fail(0, _HELD[0].picture, f", held as when {_HELD[0].test} found it")
    deadline = time.monotonic() + timeout
    while not free():
        if time.monotonic() > deadline:
            picture = _cluster_picture()
            if remember:
                test = os.environ.get("PYTEST_CURRENT_TEST", "?").split(" ")[0]
                _HELD[:] = [_Held(test, picture)]
            fail(timeout, picture)
        time.sleep(0.1)
    _HELD.clear()


@dataclass
class SessionCluster:
    cluster: Any
    address: str
    head_node_id: str
    worker_node_ids: list[str]

    @property
    def node_ids(self) -> list[str]:
        return [self.head_node_id, *self.worker_node_ids]

    @property
    def total_cpus(self) -> int:
        return HEAD_CPUS + WORKER_CPUS * len(self.worker_node_ids)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="session")
def ray_cluster() -> Iterator[SessionCluster]:
    """The session's multi-node cluster, connected through ``asyncpool.init``."""
    import ray
    from ray.cluster_utils import Cluster

    import asyncpool.runtime as runtime

    os.environ.setdefault("RAY_DEDUP_LOGS", "0")
    cluster = Cluster(
        initialize_head=True,
        # The dashboard serves ray.util.state, which tests use to check nothing of ours is left.
        head_node_args={
            "num_cpus": HEAD_CPUS,
            "num_gpus": 0,
            "include_dashboard": True,
            "dashboard_port": _free_port(),  # 8265 may belong to another cluster here
        },
    )
    workers = [
        cluster.add_node(num_cpus=WORKER_CPUS, num_gpus=WORKER_GPUS, labels=dict(WORKER_LABEL))
        for _ in range(WORKER_NODES)
    ]
    cluster.wait_for_nodes()
    rt = runtime.init(address=cluster.address, log_to_driver=False)
    assert not rt.started
    # Ray's Cluster leaves head_node untyped, so mypy takes it for the None its __init__ sets;
    # initialize_head has made it the head's Node.
    head_id = cast("Node", cluster.head_node).node_id
    sc = SessionCluster(cluster, cluster.address, head_id, [w.node_id for w in workers])
    wait_for(lambda: len([n for n in ray.nodes() if n["Alive"]]) == 1 + WORKER_NODES, 60)
    try:
        yield sc
    finally:
        rt.shutdown()
        cluster.shutdown()


@dataclass(frozen=True)
class InstalledWheel:
    """This checkout as a regular (non-editable) wheel, installed into a fresh venv."""

    wheel: Path
    #: The paths inside the wheel.
    names: list[str]
    venv: Path
    python: Path
    #: The venv's ``asyncpool`` console script.
    exe: Path


def make_venv(venv: Path, *, with_pip: bool = False) -> Path:
    """A fresh virtualenv that sees the *running* environment's packages; returns its python.

    ``--system-site-packages`` would give it the base interpreter's site-packages, which in a
    virtualenv (where users install asyncpool) hold none of the dependencies. Instead a ``.pth``
    file lists this environment's site-packages as plain paths: they come after the venv's own
    (a package installed into the venv is the one imported), and their own ``.pth`` hooks, such
    as an editable install of this checkout, do not run there.
    """
    import site
    import sysconfig

    argv = [sys.executable, "-m", "venv", str(venv)]
    subprocess.run(argv if with_pip else [*argv, "--without-pip"], check=True, timeout=300)
    scheme = {"base": str(venv), "platbase": str(venv)}
    own = Path(sysconfig.get_path("purelib", vars=scheme))
    theirs = [p for p in site.getsitepackages() if Path(p).is_dir() and Path(p) != own]
    (own / "_asyncpool_tests_parent_env.pth").write_text("".join(f"{p}\n" for p in theirs))
    return venv / "bin" / "python"


@pytest.fixture(scope="session")
def installed_wheel(tmp_path_factory: pytest.TempPathFactory) -> InstalledWheel:
    """Built once per session (``pip wheel . --no-deps``) for the tests that prove a wheel
    install works; the venv sees the running environment's packages (:func:`make_venv`, a venv
    inside a venv included) for the dependencies but gets asyncpool from the wheel."""
    repo = Path(__file__).resolve().parents[1]
    tmp = tmp_path_factory.mktemp("wheel")
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", str(repo), "--no-deps", "-q", "-w",
         str(tmp / "dist")],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert build.returncode == 0, build.stderr[-2000:]
    (wheel,) = (tmp / "dist").glob("asyncpool-*.whl")
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
    venv = tmp / "venv"
    py = make_venv(venv, with_pip=True)
    subprocess.run([str(py), "-m", "pip", "install", "-q", "--no-deps", str(wheel)],
                   check=True, timeout=300, capture_output=True)  # fmt: skip
    return InstalledWheel(wheel, names, venv, py, venv / "bin" / "asyncpool")


def wait_for(
    predicate: Callable[[], object], timeout: float | None = None, interval: float = 0.05
) -> None:
    """Poll ``predicate`` until it is true; fail the test after ``timeout`` seconds.

    Without ``timeout`` the poll has no deadline of its own: the test's per-test timeout
    (pytest-timeout) is the only hang guard. Use that for a condition that waits on Ray's
    progress (a worker or an actor starting, a cancellation being confirmed), whose time
    depends on the machine's load and is not what the test checks."""
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        if predicate():
            return
        if deadline is not None and time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout}s: {predicate}")
        time.sleep(interval)


async def async_wait_for(
    predicate: Callable[[], object], timeout: float | None = None, interval: float = 0.05
) -> None:
    """The async twin of :func:`wait_for`: poll without blocking the event loop."""
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        if predicate():
            return
        if deadline is not None and time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout}s: {predicate}")
        await asyncio.sleep(interval)
