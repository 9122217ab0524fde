"""The benchmark harness: every method of every workload verifies correctly, rows and ratios
are well formed, and ``asyncpool bench --workload humaneval`` runs as a user runs it."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from asyncpool._bench import harness
from tests.conftest import SessionCluster
from tests.test_cli import _run as _run_cli

# --------------------------------------------------------------------------- no Ray needed


def _row(workload: str, method: str, per_minute: float) -> harness.Row:
    return harness.Row(workload, method, 10, 1.0, per_minute, 10, 0)


def test_ratios_are_against_the_baseline_and_the_ceiling_of_the_same_run() -> None:
    rows = [
        _row("humaneval", "sequential", 100.0),
        _row("humaneval", "executor", 150.0),
        _row("humaneval", "asyncpool", 180.0),
        _row("humaneval", "limit", 200.0),
        _row("noop", "ray_get", 50.0),
        _row("noop", "asyncpool_gather", 49.0),
    ]
    rel, top = harness.ratios(rows), harness.ceiling_ratios(rows)
    assert rel[("humaneval", "sequential")] == 1.0
    assert rel[("humaneval", "asyncpool")] == 1.8
    assert top[("humaneval", "asyncpool")] == 0.9
    assert top[("humaneval", "limit")] == 1.0
    assert rel[("noop", "asyncpool_gather")] == 0.98
    assert ("noop", "asyncpool_gather") not in top  # noop's baseline is its ceiling


def test_slow_methods_run_a_bounded_prefix_of_the_same_items() -> None:
    executor = harness.JUDGE.method("executor")
    assert executor.max_items is not None
    assert harness.method_items(executor, 10) == 10
    assert harness.method_items(executor, 10**6) == executor.max_items
    assert harness.method_items(harness.JUDGE.method("asyncpool"), 10**6) == 10**6


def test_every_workload_names_a_baseline_and_ceiling_among_its_methods() -> None:
    assert set(harness.WORKLOADS) == {"humaneval", "judge", "noop"}
    for workload in harness.WORKLOADS.values():
        names = [m.name for m in workload.methods]
        assert workload.baseline in names
        assert workload.ceiling is None or workload.ceiling in names
        assert 0 < workload.quick_items <= workload.items
        assert all(m.describe for m in workload.methods)
    assert [m.name for m in harness.HUMANEVAL.methods] == [
        "sequential", "executor", "asyncpool", "limit"
    ]
    assert [m.name for m in harness.JUDGE.methods] == ["executor", "asyncpool", "ray_actors"]


def test_the_bench_starts_its_own_cluster_unless_told_otherwise(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("ASYNCPOOL_ADDRESS", raising=False)
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    assert harness.bench_address(None) == "local"
    assert harness.bench_address("10.0.0.1:6379") == "10.0.0.1:6379"
    monkeypatch.setenv("RAY_ADDRESS", "10.0.0.2:6379")
    assert harness.bench_address(None) == "10.0.0.2:6379"
    monkeypatch.setenv("ASYNCPOOL_ADDRESS", "10.0.0.3:6379")
    assert harness.bench_address(None) == "10.0.0.3:6379"


# --------------------------------------------------------------------------- on the cluster


def _check_rows(rows: list[harness.Row], workload: harness.Workload, n: int) -> None:
    assert [r.method for r in rows] == [m.name for m in workload.methods]
    for r in rows:
        assert r.workload == workload.name
        assert r.items == harness.method_items(workload.method(r.method), n)
        assert (r.correct, r.errors) == (r.items, 0), r
        assert r.seconds > 0
        assert math.isfinite(r.per_minute)
        assert r.per_minute > 0
    rel, top = harness.ratios(rows), harness.ceiling_ratios(rows)
    assert rel[(workload.name, workload.baseline)] == 1.0
    assert all(math.isfinite(v) and v > 0 for v in rel.values())
    assert set(rel) == {(workload.name, m.name) for m in workload.methods}
    assert workload.ceiling is not None
    assert top[(workload.name, workload.ceiling)] == 1.0
    assert set(top) == set(rel)


@pytest.mark.asyncio
async def test_humaneval_every_method_verifies_every_item(ray_cluster: SessionCluster) -> None:
    n = 12
    rows = await harness.run_workloads([harness.HUMANEVAL], n, quick=True, show_progress=False,
                                       rounds=1)
    _check_rows(rows, harness.HUMANEVAL, n)
    limit = next(r for r in rows if r.method == "limit")
    cores = harness.limit_cores()
    # The test cluster's raylets share this machine: its cores count once.
    assert cores == min(ray_cluster.total_cpus, os.cpu_count() or 1)
    # limit's rate is cores x its own sequential rate, up to the rounding of the row's
    # seconds (4 decimals) and rate (1 decimal).
    rate = cores * limit.items * 60
    low = rate / (limit.seconds + 5e-5) - 0.05
    high = rate / (limit.seconds - 5e-5) + 0.05
    assert low <= limit.per_minute <= high


@pytest.mark.asyncio
async def test_judge_every_method_returns_the_expected_scores(
    ray_cluster: SessionCluster, tmp_path: Path
) -> None:
    n = 40
    rows = await harness.run_workloads([harness.JUDGE], n, quick=True, show_progress=False,
                                       rounds=1)
    _check_rows(rows, harness.JUDGE, n)
    # The report writers take the same rows.
    out = tmp_path / "judge.json"
    harness.write_json(str(out), rows)
    doc = json.loads(out.read_text())
    assert doc["rows"] == [
        {"workload": r.workload, "method": r.method, "items": r.items, "seconds": r.seconds,
         "per_minute": r.per_minute, "correct": r.correct, "errors": r.errors}
        for r in rows
    ]
    assert doc["methods"]["judge"]["baseline"] == "executor"
    assert doc["methods"]["judge"]["ceiling"] == "ray_actors"
    ratios = {(x["workload"], x["method"]): x for x in doc["ratios"]}
    assert ratios[("judge", "ray_actors")]["vs_ceiling"] == 1.0
    assert ratios[("judge", "executor")]["vs_baseline"] == 1.0


def test_cli_humaneval_json(ray_cluster: SessionCluster, tmp_path: Path) -> None:
    out = tmp_path / "he.json"
    proc = _run_cli(
        "bench", "--address", ray_cluster.address, "--workload", "humaneval", "--items", "20",
        "--rounds", "1", "--no-progress", "--json", str(out),
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    doc = json.loads(out.read_text())
    assert {"ray_version", "cpus", "rows"} <= set(doc)
    assert doc["cpus"] == ray_cluster.total_cpus
    assert [r["method"] for r in doc["rows"]] == ["sequential", "executor", "asyncpool", "limit"]
    for row in doc["rows"]:
        assert set(row) == {"workload", "method", "items", "seconds", "per_minute", "correct",
                            "errors"}
        assert (row["workload"], row["items"], row["correct"], row["errors"]) == (
            "humaneval", 20, 20, 0)
    assert "limit" in doc["methods"]["humaneval"]
    assert "verifications per minute" in proc.stdout


def test_the_wheel_ships_the_harness_and_no_top_level_benchmarks_and_bench_runs_from_it(
    ray_cluster: SessionCluster, tmp_path: Path
) -> None:
    """A regular (non-editable) wheel, installed into a fresh venv, runs ``asyncpool bench``
    from its own copy of the package; its only top-level package is ``asyncpool``."""
    repo = Path(__file__).resolve().parents[1]
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", str(repo), "--no-deps", "-q", "-w",
         str(tmp_path / "dist")],
        capture_output=True, text=True, timeout=300, check=False,
    )
    assert build.returncode == 0, build.stderr[-2000:]
    (wheel,) = (tmp_path / "dist").glob("asyncpool-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert {n.split("/")[0] for n in names} == {"asyncpool", wheel.name.split("-py")[0] +
                                                ".dist-info"}
    assert "asyncpool/_bench/harness.py" in names
    assert "asyncpool/_bench/humaneval.py" in names
    # A fresh venv that sees the dependencies (ray, rich...) but gets asyncpool from the wheel.
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)],
                   check=True, timeout=120)
    py, exe = venv / "bin" / "python", venv / "bin" / "asyncpool"
    subprocess.run([str(py), "-m", "pip", "install", "-q", "--no-deps", str(wheel)],
                   check=True, timeout=300, capture_output=True)
    where = subprocess.run(
        [str(py), "-c", "import asyncpool._bench.harness as h; print(h.__file__)"],
        capture_output=True, text=True, timeout=120, check=True, cwd=tmp_path,
    ).stdout.strip()
    assert Path(where).is_relative_to(venv), where
    assert not list((venv / "lib").glob("python*/site-packages/benchmarks"))
    out = tmp_path / "noop.json"
    env = {k: v for k, v in os.environ.items() if k not in ("RAY_ADDRESS", "ASYNCPOOL_ADDRESS")}
    proc = subprocess.run(
        [str(exe), "bench", "--address", ray_cluster.address, "--workload", "noop", "--items",
         "50", "--rounds", "1", "--no-progress", "--json", str(out)],
        capture_output=True, text=True, timeout=240, check=False, cwd=tmp_path, env=env,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    doc = json.loads(out.read_text())
    assert {r["method"] for r in doc["rows"]} >= {"ray_get", "asyncpool_gather"}
    assert all(r["correct"] == r["items"] == 50 for r in doc["rows"])
