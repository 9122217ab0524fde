"""Runtime resolution: explicit address, env vars, tagged reuse, refusal of untagged clusters.

Resolution happens once per process, so every case that needs a fresh process runs its
driver in a subprocess; those subprocesses are ended by their own pid.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator

import pytest

import asyncpool
from asyncpool import runtime
from tests.conftest import SessionCluster

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

PROBE = textwrap.dedent(
    """
    import json, sys
    import asyncpool
    rt = asyncpool.init(tag=sys.argv[1] if len(sys.argv) > 1 else None, num_cpus=1,
                        log_to_driver=False)
    print(json.dumps({"address": rt.address, "started": rt.started, "source": rt.source}))
    rt.shutdown()
    """
)

HOLDER = textwrap.dedent(
    """
    import json, sys
    import asyncpool
    rt = asyncpool.init(tag=sys.argv[1], num_cpus=1, log_to_driver=False)
    print(json.dumps({"address": rt.address, "started": rt.started, "source": rt.source}),
          flush=True)
    sys.stdin.read()  # hold the cluster until the test closes our stdin
    rt.shutdown()
    """
)

# Unique per run: another engineer's test run on this machine holds a cluster of its own.
HOLDER_TAG = f"asyncpool-test-tag-{os.getpid()}"


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("RAY_ADDRESS", "ASYNCPOOL_ADDRESS")}
    env["PYTHONPATH"] = REPO + os.pathsep + env.get("PYTHONPATH", "")
    env.update(extra)
    return env


def _probe(*args: str, **env: str) -> dict[str, object]:
    out = subprocess.run(
        [sys.executable, "-c", PROBE, *args],
        env=_env(**env),
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def holder(ray_cluster: SessionCluster) -> Iterator[dict[str, object]]:
    """A separate driver process that ran ``init(tag=HOLDER_TAG)`` while the session cluster
    (a local cluster carrying no tag) was running, and holds what it got.

    Started once for the module: its own start is the untagged-refusal case, and the cluster
    it holds is the tagged cluster the reuse case joins (each local cluster start costs
    seconds on this machine, so the two cases share one instead of starting two holders).
    """
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, HOLDER_TAG],
        env=_env(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        yield json.loads(line)
    finally:
        assert proc.stdin is not None
        assert proc.stdout is not None
        proc.stdin.close()
        proc.stdout.close()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


@pytest.mark.slow
def test_init_reuses_a_local_cluster_carrying_its_tag(
    ray_cluster: SessionCluster, holder: dict[str, object]
) -> None:
    got = _probe(HOLDER_TAG)
    assert got == {"address": holder["address"], "started": False,
                   "source": "tagged local cluster"}


def test_init_refuses_an_untagged_cluster_and_starts_its_own(
    ray_cluster: SessionCluster, holder: dict[str, object]
) -> None:
    # The session cluster is a local cluster that carries no tag, found by init's scan of
    # this machine's raylets; the holder's init refused it and started its own.
    assert ray_cluster.address in runtime._local_clusters_with({"CPU"})
    assert holder["address"] in runtime._local_clusters_with({runtime.tag_resource(HOLDER_TAG)})
    assert holder["started"] is True
    assert holder["source"] == "new local cluster"
    assert holder["address"] != ray_cluster.address


def test_asyncpool_address_wins_over_ray_address(ray_cluster: SessionCluster) -> None:
    got = _probe(ASYNCPOOL_ADDRESS=ray_cluster.address, RAY_ADDRESS="127.0.0.1:1")
    assert got == {
        "address": ray_cluster.address,
        "started": False,
        "source": "ASYNCPOOL_ADDRESS",
    }


def test_init_is_idempotent_in_one_process(ray_cluster: SessionCluster) -> None:
    first = asyncpool.init()
    assert asyncpool.init(address="127.0.0.1:1") is first
    assert runtime.current() is first
    assert first.started is False


def test_default_tag_follows_sorted_cuda_visible_devices(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3,1")
    one = runtime.default_tag()
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "1,3")
    assert runtime.default_tag() == one == "cvd_1_3"
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")
    assert runtime.default_tag() != one


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"address": 123}, TypeError),
        ({"address": "  "}, ValueError),
        ({"num_cpus": -1}, ValueError),
        ({"num_gpus": "2"}, TypeError),
        ({"tag": ""}, ValueError),
    ],
)
def test_init_rejects_bad_arguments(kwargs: dict[str, object], error: type[Exception]) -> None:
    with pytest.raises(error):
        asyncpool.init(**kwargs)  # type: ignore[arg-type]


def test_run_uses_uvloop_when_installed_and_asyncio_when_asked() -> None:
    async def loop_module() -> str:
        return type(asyncio.get_running_loop()).__module__

    assert asyncpool.run(loop_module).startswith("uvloop")
    assert asyncpool.run(loop_module, uvloop=False).startswith("asyncio")


def test_run_rejects_a_non_callable() -> None:
    with pytest.raises(TypeError):
        asyncpool.run(42)  # type: ignore[arg-type]


CONCURRENT_CONNECTS = textwrap.dedent(
    """
    import asyncio, json, sys
    import ray
    import asyncpool
    from asyncpool import runtime

    async def main(address):
        entered, both, first_left = [], asyncio.Event(), asyncio.Event()
        seen = {}

        async def block(name):
            async with asyncpool.connect(address, log_to_driver=False) as rt:
                entered.append(name)
                if len(entered) == 2:
                    both.set()
                await both.wait()
                if name == "second":
                    await first_left.wait()
                    seen["second_connected"] = rt.connected and ray.is_initialized()
                    if seen["second_connected"]:
                        seen["second_put_get"] = await ray.put(7) == 7
            if name == "first":
                first_left.set()

        # Both enter at once: neither block exists yet when the other decides.
        await asyncio.gather(block("first"), block("second"))
        seen["after_all"] = ray.is_initialized() or runtime.current() is not None
        print(json.dumps(seen))

    asyncpool.run(main, sys.argv[1])
    """
)


def test_concurrent_connect_blocks_first_to_exit_does_not_disconnect_the_other(
    ray_cluster: SessionCluster,
) -> None:
    out = subprocess.run(
        [sys.executable, "-c", CONCURRENT_CONNECTS, ray_cluster.address],
        env=_env(),
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert seen == {"second_connected": True, "second_put_get": True, "after_all": False}
