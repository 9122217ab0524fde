"""The command line, run as a user runs it: a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import SessionCluster


def _run(*args: str, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("RAY_ADDRESS", "ASYNCPOOL_ADDRESS")}
    return subprocess.run(
        [sys.executable, "-m", "asyncpool", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        check=False,
    )


def test_bench_noop_writes_json_rows_and_a_plot(
    ray_cluster: SessionCluster, tmp_path: Path
) -> None:
    out, png = tmp_path / "out.json", tmp_path / "out.png"
    proc = _run(
        "bench", "--address", ray_cluster.address, "--workload", "noop", "--items", "300",
        "--rounds", "1", "--no-progress", "--json", str(out), "--plot", str(png),
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    doc = json.loads(out.read_text())
    # The contract's keys, plus the harness's own additions (limit_cores, ratios, methods).
    assert {"ray_version", "cpus", "rows"} <= set(doc)
    methods = {row["method"] for row in doc["rows"]}
    assert methods == {"ray_get", "asyncpool_gather", "asyncpool_as_completed"}
    for row in doc["rows"]:
        assert row["items"] == 300
        assert row["correct"] == 300
        assert row["errors"] == 0
        assert row["per_minute"] > 0
    assert png.read_bytes().startswith(b"\x89PNG")
    assert "verifications per minute" in proc.stdout


def test_bench_rejects_an_unknown_workload() -> None:
    proc = _run("bench", "--workload", "nosuch", "--no-progress", timeout=60)
    assert proc.returncode != 0
    assert "unknown workload" in proc.stderr + proc.stdout


@pytest.mark.parametrize("items", ["0", "-3", "x"])
def test_bench_rejects_a_bad_item_count(items: str) -> None:
    proc = _run("bench", "--items", items, timeout=60)
    assert proc.returncode == 2
