"""The command line, run as a user runs it: a subprocess."""

from __future__ import annotations

import importlib.metadata
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.conftest import SessionCluster


def _run(*args: str, timeout: float | None = None) -> subprocess.CompletedProcess[str]:
    """``asyncpool ARGS``; no timeout of its own by default (the test's timeout is the guard)."""
    env = {k: v for k, v in os.environ.items() if k not in ("RAY_ADDRESS", "ASYNCPOOL_ADDRESS")}
    return subprocess.run(
        [sys.executable, "-m", "asyncpool", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        check=False,
    )


@pytest.mark.slow
def test_bench_noop_writes_json_rows_and_a_plot(
    ray_cluster: SessionCluster, tmp_path: Path
) -> None:
    out, png = tmp_path / "out.json", tmp_path / "out.png"
    proc = _run(
        "bench", "--address", ray_cluster.address, "--workload", "noop", "--items", "100",
        "--rounds", "1", "--no-progress", "--json", str(out), "--plot", str(png),
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    doc = json.loads(out.read_text())
    # The contract's keys, plus the harness's own additions (limit_cores, ratios, methods).
    assert {"ray_version", "cpus", "rows"} <= set(doc)
    methods = {row["method"] for row in doc["rows"]}
    assert methods >= {"ray_get", "asyncpool_gather", "asyncpool_as_completed"}
    for row in doc["rows"]:
        assert row["items"] == 100
        assert row["correct"] == 100
        assert row["errors"] == 0
        assert row["per_minute"] > 0
    assert png.read_bytes().startswith(b"\x89PNG")
    assert "verifications per minute" in proc.stdout


def test_bench_rejects_an_unknown_workload() -> None:
    proc = _run("bench", "--workload", "nosuch", "--no-progress")
    assert proc.returncode != 0
    assert "unknown workload" in proc.stderr + proc.stdout


@pytest.mark.parametrize("items", ["0", "-3", "x"])
def test_bench_rejects_a_bad_item_count(items: str) -> None:
    proc = _run("bench", "--items", items)
    assert proc.returncode == 2


def _run_without_cluster(*args: str) -> subprocess.CompletedProcess[str]:
    """``asyncpool ARGS`` where no cluster can be found: no address, and a tag (from
    ``CUDA_VISIBLE_DEVICES``) that no local cluster carries."""
    env = {k: v for k, v in os.environ.items() if k not in ("RAY_ADDRESS", "ASYNCPOOL_ADDRESS")}
    env["CUDA_VISIBLE_DEVICES"] = "7919"
    return subprocess.run(
        [sys.executable, "-m", "asyncpool", *args],
        capture_output=True, text=True, env=env, check=False,
    )  # fmt: skip


@pytest.mark.parametrize("args", [("status",), ("reap", "orphan-")])
def test_status_and_reap_without_a_cluster_say_so_and_exit_1(args: tuple[str, ...]) -> None:
    proc = _run_without_cluster(*args)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "no Ray cluster to attach to" in proc.stderr
    assert "--address" in proc.stderr
    assert "Started a local Ray instance" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr


def test_status_reports_the_cluster_it_is_given(ray_cluster: SessionCluster) -> None:
    proc = _run("status", "--address", ray_cluster.address)
    assert proc.returncode == 0, proc.stderr[-2000:]
    doc = json.loads(proc.stdout)
    assert doc["address"] == ray_cluster.address
    assert doc["source"] == "argument"
    assert len(doc["nodes"]) == len(ray_cluster.node_ids)


def test_help_lists_commands_and_workloads_without_markup() -> None:
    proc = _run("--help")
    assert proc.returncode == 0
    text = proc.stdout
    for command in ("bench", "serve", "status", "reap"):
        assert f"  {command}  " in text
    for workload in ("humaneval", "judge", "noop"):
        assert f"  {workload} " in text
    for markup in ("``", ":class:", ":func:", ":mod:", ":data:"):
        assert markup not in text
    serve = _run("serve", "--help")
    assert serve.returncode == 0
    assert "--max-in-flight" in serve.stdout
    assert "``" not in serve.stdout


def test_version_prints_the_installed_version() -> None:
    proc = _run("--version")
    assert proc.returncode == 0
    assert proc.stdout.strip() == f"asyncpool {importlib.metadata.version('asyncpool')}"


@pytest.mark.slow
def test_serve_on_its_embedded_cluster_starts_without_warnings_and_stops_quietly(
    tmp_path: Path,
) -> None:
    """``asyncpool serve`` with no address starts its own cluster (with a tag no other cluster
    here carries), answers, and on SIGTERM shuts down gracefully, stopping that cluster, with
    no "SIGTERM received" stack dump and no warnings."""
    from asyncpool.runtime import _local_clusters_with, tag_resource
    from tests.test_server import start_serve

    tag = tag_resource("cvd_4241")
    srv = start_serve([], tmp_path, env_extra={"CUDA_VISIBLE_DEVICES": "4241"})
    assert _local_clusters_with({tag}), "the server did not start its own tagged cluster"
    r = httpx.post(srv.url + "/run_code", json={"code": "print(1)", "language": "python"},
                   timeout=None)  # fmt: skip
    assert r.json()["run_result"]["stdout"] == "1\n"
    srv.proc.send_signal(signal.SIGTERM)
    # uvicorn shuts down gracefully, then exits by the signal it caught (as a service should).
    assert srv.proc.wait() in (0, -signal.SIGTERM)
    log = srv.log.read_text(errors="replace")
    assert "Application shutdown complete" in log, log[-3000:]
    assert "SIGTERM received" not in log, log[-3000:]
    assert "WARNING" not in log, log[-3000:]
    assert "Traceback" not in log, log[-3000:]
    deadline = time.monotonic() + 30
    while _local_clusters_with({tag}):  # the raylets exit with the server
        assert time.monotonic() < deadline, "the embedded cluster outlived its server"
        time.sleep(0.2)


STATE_PROBE = """
import json, os, subprocess, sys, time
import ray
import asyncpool
from ray.util.state import list_tasks

rt = asyncpool.init(tag=sys.argv[1], num_cpus=1, log_to_driver=False)
assert rt.started

@ray.remote
def asyncpool_state_probe():
    return 1

assert ray.get(asyncpool_state_probe.remote()) == 1
name = [("func_or_class_name", "=", "asyncpool_state_probe")]
# Task events reach the state API asynchronously (flushed about every second): poll.
deadline = time.monotonic() + 90
while True:
    api = [t.state for t in list_tasks(address=rt.address, filters=name)]
    if api == ["FINISHED"] or time.monotonic() > deadline:
        break
    time.sleep(0.5)
# The ray script of this interpreter's environment: a venv run without activating it (its
# python called by path) has no ray on PATH.
ray_cli = os.path.join(os.path.dirname(sys.executable), "ray")
cli = subprocess.run(
    [ray_cli, "list", "tasks", "--address", rt.address, "--format", "json",
     "--filter", "func_or_class_name=asyncpool_state_probe"],
    capture_output=True, text=True,
)
rt.shutdown()
print(json.dumps({"api": api, "cli_rc": cli.returncode, "cli": json.loads(cli.stdout or "[]")}))
"""


@pytest.mark.slow
def test_ray_state_api_and_ray_list_tasks_work_on_a_local_cluster_asyncpool_starts() -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("RAY_ADDRESS", "ASYNCPOOL_ADDRESS")}
    proc = subprocess.run(
        [sys.executable, "-c", STATE_PROBE, "asyncpool-cli-state-test"],
        capture_output=True, text=True, env=env, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert got["api"] == ["FINISHED"]
    assert got["cli_rc"] == 0
    assert [t["state"] for t in got["cli"]] == ["FINISHED"]


def _readme_python_blocks() -> list[str]:
    text = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    return [block.split("```", 1)[0] for block in text.split("```python\n")[1:]]


@pytest.mark.parametrize("index", range(len(_readme_python_blocks())))
@pytest.mark.slow
def test_readme_python_snippet_runs_as_written(ray_cluster: SessionCluster, index: int) -> None:
    """Each ```python block of the README is a whole program; it runs on the session cluster
    (through ASYNCPOOL_ADDRESS, as a user's would on theirs)."""
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    env["ASYNCPOOL_ADDRESS"] = ray_cluster.address
    proc = subprocess.run(
        [sys.executable, "-c", _readme_python_blocks()[index]],
        capture_output=True, text=True, env=env, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
