"""The benchmark harness: every method of every workload verifies correctly, rows and ratios
are well formed, and ``asyncpool bench --workload humaneval`` runs as a user runs it."""

from __future__ import annotations

import asyncio
import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import asyncpool
from asyncpool._bench import harness, report, scale, workloads
from asyncpool._bench.workloads._ray_data import (
    quiet_ray_data,
    ray_data_actors,
    stop_ray_data_actors,
)
from tests.conftest import InstalledWheel, SessionCluster
from tests.test_cli import _run as _run_cli

if sys.version_info < (3, 11):  # anyio depends on the backport there
    from exceptiongroup import BaseExceptionGroup

# --------------------------------------------------------------------------- no Ray needed


def _row(workload: str, method: str, per_minute: float) -> harness.Row:
    return harness.Row(workload, method, 10, 1.0, per_minute, 10, 0)


def test_ratios_are_against_the_handwritten_baseline_and_the_ceiling_of_the_same_run() -> None:
    rows = [
        _row("humaneval", "asyncio", 100.0),
        _row("humaneval", "executor", 50.0),
        _row("humaneval", "asyncpool", 180.0),
        _row("humaneval", "ray_data_tasks", 150.0),
        _row("humaneval", "limit", 200.0),
        _row("noop", "asyncio", 50.0),
        _row("noop", "asyncpool_gather", 49.0),
        _row("noop", "ray_get", 98.0),
    ]
    rel, top = harness.ratios(rows), harness.ceiling_ratios(rows)
    assert rel[("humaneval", "asyncio")] == 1.0
    assert rel[("humaneval", "asyncpool")] == 1.8
    assert rel[("humaneval", "executor")] == 0.5
    assert top[("humaneval", "asyncpool")] == 0.9
    assert top[("humaneval", "limit")] == 1.0
    assert rel[("noop", "asyncpool_gather")] == 0.98
    assert top[("noop", "asyncpool_gather")] == 0.5


def test_asyncpool_is_compared_with_the_fastest_alternative_not_the_ceiling() -> None:
    rows = [
        _row("humaneval", "asyncio", 100.0),
        _row("humaneval", "executor", 50.0),
        _row("humaneval", "asyncpool", 180.0),
        _row("humaneval", "ray_data_tasks", 150.0),
        _row("humaneval", "mp_pool", 120.0),
        _row("humaneval", "sequential", 300.0),  # a reference, not an alternative
        _row("humaneval", "limit", 400.0),  # the ceiling, not an alternative
        _row("math", "asyncio", 10.0),
        _row("math", "asyncpool", 30.0),
        _row("math", "asyncpool_batch1", 12.0),
        _row("math", "ray_data", 40.0),
    ]
    assert harness.versus_best_peer(rows) == [
        report.Versus("humaneval", "asyncpool", "ray_data_tasks", 1.2, 1.2, 1.2, (1.2,)),
        report.Versus("math", "asyncpool", "ray_data", 0.75, 0.75, 0.75, (0.75,)),
    ]


# ----------------------------------------------------------------- rounds: medians and spread


def _rounds(workload: str, method: str, seconds: list[float], items: int = 60) -> harness.Row:
    """A row of rounds that each did ``items`` correctly in the given seconds."""
    return harness.summarize(
        workload, method, [harness.Round(items, s, items, 0) for s in seconds]
    )


def test_a_row_is_the_median_of_its_rounds_with_the_lowest_and_highest_and_every_round() -> None:
    # 60 items in 2 s = 1,800/min; 1 s = 3,600; 4 s = 900; 3 s = 1,200; 1.5 s = 2,400.
    row = _rounds("noop", "asyncio", [2.0, 1.0, 4.0, 3.0, 1.5])
    assert row.items == 60  # per round
    assert row.per_minute == 1800.0  # the median rate, not the rate of the summed time
    assert row.seconds == 2.0
    assert row.per_minute_rounds == (1800.0, 3600.0, 900.0, 1200.0, 2400.0)  # round order
    assert row.seconds_rounds == (2.0, 1.0, 4.0, 3.0, 1.5)
    assert (row.rounds, row.per_minute_min, row.per_minute_max) == (5, 900.0, 3600.0)
    assert (row.correct, row.errors) == (300, 0)  # every round counts


def test_an_even_number_of_rounds_takes_the_mean_of_the_middle_two() -> None:
    row = _rounds("noop", "asyncio", [1.0, 2.0])  # 3,600 and 1,800 per minute
    assert row.per_minute == 2700.0
    assert row.seconds == 1.5


def test_one_outlying_round_does_not_move_the_median_but_shows_in_the_spread() -> None:
    steady = _rounds("noop", "asyncio", [2.0, 2.0, 2.0])
    stalled = _rounds("noop", "asyncio", [2.0, 60.0, 2.0])
    assert stalled.per_minute == steady.per_minute == 1800.0
    assert stalled.per_minute_min == 60.0
    assert steady.per_minute_min == 1800.0


def test_a_rounds_rate_carries_its_outcome_scale_and_errors() -> None:
    cores = 4.0
    row = harness.summarize(
        "humaneval", "limit",
        [harness.Round(10, 1.0, 9, 1, cores), harness.Round(10, 2.0, 10, 0, cores)],
    )
    assert row.per_minute_rounds == (2400.0, 1200.0)
    assert (row.correct, row.errors) == (19, 1)


def test_summarize_refuses_no_rounds_and_rounds_of_different_sizes() -> None:
    with pytest.raises(ValueError, match="at least one round"):
        harness.summarize("noop", "asyncio", [])
    with pytest.raises(ValueError, match="same items"):
        harness.summarize(
            "noop", "asyncio", [harness.Round(10, 1.0, 10, 0), harness.Round(20, 1.0, 20, 0)]
        )


def _judge_rounds() -> list[harness.Row]:
    """A judge run of three rounds; asyncpool beats ray_wait_window in two rounds of three."""
    per_round = {  # seconds of 60 items per round
        "asyncio": [2.0, 2.0, 2.0],
        "executor": [6.0, 6.0, 6.0],
        "asyncpool": [1.0, 1.2, 0.9],
        "ray_actor_pool": [3.0, 3.0, 3.0],
        "ray_wait_window": [1.1, 1.0, 1.0],
        "ray_actors": [0.95, 1.0, 0.9],
    }
    return [_rounds("judge", m, s) for m, s in per_round.items()]


def test_ratios_are_of_the_medians_with_the_per_round_extremes_of_the_same_ratio() -> None:
    rows = _judge_rounds()
    rel, top = harness.ratios(rows), harness.ceiling_ratios(rows)
    by_method = {r.method: r for r in rows}
    asyncpool, ceiling = by_method["asyncpool"], by_method["ray_actors"]
    assert rel[("judge", "asyncpool")] == round(asyncpool.per_minute / 1800.0, 3) == 2.0
    assert top[("judge", "asyncpool")] == round(asyncpool.per_minute / ceiling.per_minute, 3)
    each = report.ceiling_ratio_rounds(rows)[("judge", "asyncpool")]
    # round by round: 0.95/1.0, 1.0/1.2, 0.9/0.9 (the same round of each, not their medians)
    assert each == (0.95, 0.833, 1.0)
    assert report.ratio_rounds(rows)[("judge", "asyncio")] == (1.0, 1.0, 1.0)


def test_the_best_alternative_line_uses_medians_and_shows_whether_it_held_in_every_round() -> None:
    (versus,) = harness.versus_best_peer(_judge_rounds())
    # Medians: asyncpool 3,600/min (1.0 s), ray_wait_window 3,600/min (1.0 s).
    assert (versus.asyncpool, versus.peer, versus.ratio) == ("asyncpool", "ray_wait_window", 1.0)
    assert versus.rounds == (1.1, 0.833, 1.111)
    assert (versus.low, versus.high) == (0.833, 1.111)


def test_the_best_rows_are_chosen_by_their_medians_not_their_best_round() -> None:
    rows = [
        _rounds("noop", "asyncio", [1.0, 1.0, 1.0]),
        _rounds("noop", "asyncpool_gather", [0.5, 2.0, 2.0]),  # one lucky round
        _rounds("noop", "asyncpool_as_completed", [1.0, 1.0, 1.0]),
        _rounds("noop", "ray_as_completed", [0.25, 4.0, 4.0]),  # one very lucky round
        _rounds("noop", "ray_map_unordered", [2.0, 2.0, 2.0]),
        _rounds("noop", "ray_get", [0.5, 0.5, 0.5]),
    ]
    (versus,) = harness.versus_best_peer(rows)
    assert (versus.asyncpool, versus.peer, versus.ratio) == (
        "asyncpool_as_completed", "asyncio", 1.0
    )


def test_the_json_and_the_table_carry_medians_spreads_and_every_round(
    capsys: pytest.CaptureFixture[str],
) -> None:
    rows = _judge_rounds()
    doc = report.json_document(rows, report.Machine(1.0, 1.0, 2))
    row = next(r for r in doc["rows"] if r["method"] == "asyncpool")
    assert row == {
        "workload": "judge", "method": "asyncpool", "items": 60, "seconds": 1.0,
        "per_minute": 3600.0, "correct": 180, "errors": 0, "rounds": 3,
        "per_minute_min": 3000.0, "per_minute_max": 4000.0,
        "per_minute_rounds": [3600.0, 3000.0, 4000.0], "seconds_rounds": [1.0, 1.2, 0.9],
    }
    ratio = next(r for r in doc["ratios"] if r["method"] == "asyncpool")
    assert ratio["vs_ceiling"] == 0.95
    assert ratio["vs_ceiling_rounds"] == [0.95, 0.833, 1.0]
    assert (ratio["vs_ceiling_min"], ratio["vs_ceiling_max"]) == (0.833, 1.0)
    assert ratio["vs_baseline"] == 2.0
    (versus,) = doc["versus_best_peer"]
    assert (versus["ratio"], versus["low"], versus["high"]) == (1.0, 0.833, 1.111)
    assert json.loads(json.dumps(doc)) == doc  # plain JSON throughout

    report.print_table(rows)
    printed = " ".join(capsys.readouterr().out.split())
    assert "median of 3 round(s)" in printed
    assert "judge: asyncpool = 1.00x ray_wait_window [0.83-1.11]" in printed
    assert "3,600 [3,000-4,000]" in printed  # asyncpool's rate: median [lowest-highest]


def test_rounds_default_to_three_when_quick_and_five_otherwise() -> None:
    assert harness.bench_rounds(None, quick=True) == harness.QUICK_ROUNDS == 3
    assert harness.bench_rounds(None, quick=False) == harness.FULL_ROUNDS == 5
    assert harness.bench_rounds(2, quick=True) == 2
    assert harness.bench_rounds(7, quick=False) == 7


def test_slow_methods_run_a_bounded_prefix_of_the_same_items() -> None:
    for name in ("executor", "ray_actor_pool"):
        slow = harness.JUDGE.method(name)
        assert slow.max_items is not None
        assert harness.method_items(slow, 10) == 10
        assert harness.method_items(slow, 10**6) == slow.max_items
    assert harness.method_items(harness.JUDGE.method("asyncpool"), 10**6) == 10**6


def test_every_workload_has_a_handwritten_baseline_asyncpool_peers_and_a_ceiling() -> None:
    assert set(harness.WORKLOADS) == {"humaneval", "math", "judge", "noop", "stdio"}
    # The opt-in stdio workload compares languages with their ceilings only
    # (tests/test_bench_stdio.py).
    assert set(workloads.OPT_IN) == {"stdio"}  # the set harness.select("all") leaves out
    for workload in harness.select("all"):
        names = [m.name for m in workload.methods]
        assert len(set(names)) == len(names)
        assert workload.method(workload.baseline).kind == "handwritten"
        assert workload.ceiling is not None
        assert workload.method(workload.ceiling).kind == "ceiling"
        kinds = {m.kind for m in workload.methods}
        assert {"asyncpool", "peer", "handwritten", "ceiling"} <= kinds, workload.name
        assert 0 < workload.quick_items <= workload.items
        assert all(m.describe for m in workload.methods)
    assert [m.name for m in harness.HUMANEVAL.methods] == [
        "asyncio", "sequential", "executor", "asyncpool", "asyncpool_auto", "ray_data_tasks",
        "ray_data_actors", "mp_pool", "limit",
    ]
    assert [m.name for m in harness.MATH.methods] == [
        "asyncio", "sequential", "asyncpool", "asyncpool_batch1", "ray_data", "limit"
    ]
    assert [m.name for m in harness.JUDGE.methods] == [
        "asyncio", "executor", "asyncpool", "asyncpool_batched", "ray_actor_pool",
        "ray_wait_window", "ray_actors", "ray_actors_batched",
    ]
    assert [m.name for m in harness.NOOP.methods] == [
        "asyncio", "asyncpool_gather", "asyncpool_as_completed", "ray_as_completed",
        "ray_map_unordered", "ray_get",
    ]


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


def test_busy_processes_of_the_loaded_variant_run_until_closed() -> None:
    busy = harness._BusyProcesses(2)
    try:
        assert len(busy.procs) == 2
        assert all(p.poll() is None for p in busy.procs)
    finally:
        busy.close()
    assert all(p.returncode is not None for p in busy.procs)


def _children(pid: int) -> list[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(c) for c in path.read_text().split()] if path.exists() else []


@pytest.mark.slow
def test_sigterm_stops_a_bench_run_quietly_and_ends_its_busy_processes(
    ray_cluster: SessionCluster,
) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("RAY_ADDRESS", "ASYNCPOOL_ADDRESS")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "asyncpool", "bench", "--address", ray_cluster.address,
         "--workload", "noop", "--items", "20000", "--rounds", "1", "--no-progress",
         "--load", "1"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )
    try:
        # The busy process starts once Ray is attached and the stop handler is in place.
        deadline = time.monotonic() + 120
        busy: list[int] = []
        while not busy:
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the --load process never started"
            busy = [c for c in _children(proc.pid)
                    if b"while True" in Path(f"/proc/{c}/cmdline").read_bytes()]
            time.sleep(0.1)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 128 + signal.SIGTERM, err[-3000:]
    assert "stopped by SIGTERM" in err
    assert "Traceback" not in err, err[-3000:]
    assert "verifications per minute" not in out
    assert not any(Path(f"/proc/{pid}").exists() for pid in busy)


def test_a_stop_signal_wrapped_by_task_groups_still_counts_as_an_interrupt() -> None:
    group = BaseExceptionGroup("run", [KeyboardInterrupt(), asyncio.CancelledError()])
    assert harness._is_interrupt(group)
    assert harness._is_interrupt(SystemExit(15))
    assert not harness._is_interrupt(BaseExceptionGroup("run", [ValueError("bad")]))


def test_scale_sizes_keep_100k_items_out_of_quick_runs() -> None:
    assert harness.scale_sizes(None, quick=False) == (1_000, 10_000, 100_000)
    assert harness.scale_sizes(None, quick=True) == (1_000, 10_000)
    assert harness.scale_sizes(50, quick=False) == (50, 500)


def test_scale_reports_growth_and_the_best_alternative_per_size() -> None:
    rows = [
        scale.ScaleRow("asyncpool_map", 1_000, 1.0, 0.5, 1000.0, 500.0, 1_000, 0),
        scale.ScaleRow("asyncpool_map", 10_000, 10.0, 6.0, 1000.0, 600.0, 10_000, 0),
        scale.ScaleRow("asyncio", 1_000, 2.0, 1.0, 2000.0, 1000.0, 1_000, 0),
        scale.ScaleRow("asyncio", 10_000, 15.0, 20.0, 1500.0, 2000.0, 10_000, 0),
        scale.ScaleRow("ray_map_unordered", 1_000, 1.5, 1.0, 1500.0, 1000.0, 1_000, 0),
        scale.ScaleRow("ray_map_unordered", 10_000, 30.0, 10.0, 3000.0, 1000.0, 10_000, 0),
    ]
    assert scale.cpu_growth(rows, "asyncpool_map") == 1.2
    assert scale.cpu_growth(rows, "asyncio") == 2.0
    assert scale.cpu_growth(rows, "ray_data") is None
    assert scale.best_peer(rows, 1_000) == "ray_map_unordered"
    assert scale.best_peer(rows, 10_000) == "asyncio"


# --------------------------------------------------------------------------- on the cluster


def _check_rows(rows: list[harness.Row], workload: harness.Workload, n: int) -> None:
    assert [r.method for r in rows] == [m.name for m in workload.methods]
    for r in rows:
        assert r.workload == workload.name
        assert r.items == harness.method_items(workload.method(r.method), n)
        assert (r.correct, r.errors) == (r.items * r.rounds, 0), r
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


# The harness runs under asyncpool.run as the command line runs it (uvloop), once per test:
# each workload's session starts Ray Data, pools and actors, too costly to repeat per loop.


def _run(workload: harness.Workload, n: int) -> list[harness.Row]:
    return asyncpool.run(harness.run_workloads, [workload], n, True, False, 1)


def _wait_ray_data_gone(keep: frozenset[str] = frozenset()) -> None:
    """Poll until no Ray Data helper actor but ``keep`` is alive (a kill takes effect
    asynchronously)."""
    deadline = time.monotonic() + 60
    while (alive := ray_data_actors() - keep) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not alive, alive


@pytest.mark.slow
def test_ray_data_helper_actors_are_stopped_but_those_kept_and_ray_data_starts_them_again(
    ray_cluster: SessionCluster,
) -> None:
    import ray.data

    def run_ray_data() -> None:
        quiet_ray_data()
        ds = ray.data.from_items([{"x": i} for i in range(8)]).map_batches(
            lambda b: b, batch_size=4
        )
        assert sorted(r["x"] for r in ds.iter_rows()) == list(range(8))

    run_ray_data()
    started = ray_data_actors()
    assert "datasets_stats_actor" in started, started
    kept = frozenset({"datasets_stats_actor"})
    assert set(stop_ray_data_actors(keep=kept)) == started - kept
    _wait_ray_data_gone(kept)
    assert "datasets_stats_actor" in ray_data_actors()  # the kept one lives
    assert set(stop_ray_data_actors()) == {"datasets_stats_actor"}
    _wait_ray_data_gone()
    run_ray_data()  # Ray Data starts what it needs again
    again = ray_data_actors()
    assert "datasets_stats_actor" in again, again
    assert set(stop_ray_data_actors()) == again
    _wait_ray_data_gone()


@pytest.mark.slow
def test_humaneval_every_method_verifies_every_item(ray_cluster: SessionCluster) -> None:
    n = 12
    stop_ray_data_actors()  # an earlier test's Ray Data helpers: the workload would keep them
    _wait_ray_data_gone()
    rows = _run(harness.HUMANEVAL, n)
    _check_rows(rows, harness.HUMANEVAL, n)
    # What its Ray Data methods started is gone when the workload ends (the next starts quiet).
    _wait_ray_data_gone()
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


@pytest.mark.slow
def test_noop_every_method_collects_every_result(ray_cluster: SessionCluster) -> None:
    n = 60
    rows = _run(harness.NOOP, n)
    _check_rows(rows, harness.NOOP, n)


@pytest.mark.slow
def test_judge_every_method_returns_the_expected_scores_and_the_reports_take_them(
    ray_cluster: SessionCluster, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    n = 40
    rows = _run(harness.JUDGE, n)
    _check_rows(rows, harness.JUDGE, n)
    # The report writers take the same rows.
    machine = report.Machine(3.5, 4.25, 2, background=1)
    out = tmp_path / "judge.json"
    harness.write_json(str(out), rows, machine)
    doc = json.loads(out.read_text())
    assert doc["rows"] == [
        {"workload": r.workload, "method": r.method, "items": r.items, "seconds": r.seconds,
         "per_minute": r.per_minute, "correct": r.correct, "errors": r.errors, "rounds": 1,
         "per_minute_min": r.per_minute, "per_minute_max": r.per_minute,
         "per_minute_rounds": [r.per_minute], "seconds_rounds": [r.seconds]}
        for r in rows
    ]
    assert doc["methods"]["judge"]["baseline"] == "asyncio"
    assert doc["methods"]["judge"]["ceiling"] == "ray_actors"
    assert set(doc["peers"]["judge"]) == {"asyncio", "executor", "ray_actor_pool",
                                          "ray_wait_window", "ray_actors_batched"}
    assert "map_unordered" in doc["peers"]["judge"]["ray_actor_pool"]
    assert doc["kinds"]["judge"]["asyncpool"] == "asyncpool"
    assert doc["load_average"] == {"start": 3.5, "end": 4.25, "cpu_count": 2.0,
                                   "background": 1.0}
    (versus,) = doc["versus_best_peer"]
    assert versus["workload"] == "judge"
    # the faster of the two asyncpool rows (batched or not) against the fastest alternative
    assert versus["asyncpool"] in {"asyncpool", "asyncpool_batched"}
    best = max((r for r in rows if r.method.startswith("asyncpool")), key=lambda r: r.per_minute)
    assert versus["asyncpool"] == best.method
    ratios = {(x["workload"], x["method"]): x for x in doc["ratios"]}
    assert ratios[("judge", "ray_actors")]["vs_ceiling"] == 1.0
    assert ratios[("judge", "asyncio")]["vs_baseline"] == 1.0
    # The table's footer: the load average, asyncpool against the best alternative, and the
    # rows a loaded machine hurts.
    report.print_table(rows, machine)
    printed = capsys.readouterr().out
    assert "load average (1 min) of this machine (2 cores): 3.50 at the start, 4.25 at the end" \
        in " ".join(printed.split())
    assert f"judge: {versus['asyncpool']} = {versus['ratio']:.2f}x {versus['peer']}" in " ".join(
        printed.split()
    )
    assert "judge/executor" in printed
    png = tmp_path / "judge.png"
    harness.write_plot(str(png), rows, machine)
    assert png.read_bytes().startswith(b"\x89PNG")


@pytest.mark.slow
def test_scale_measures_every_method_at_every_size(
    ray_cluster: SessionCluster, tmp_path: Path
) -> None:
    sizes = (60, 240)
    rows = asyncpool.run(scale.run_scale, sizes)
    assert [(r.method, r.items) for r in rows] == [
        (m.name, n) for m in scale.METHODS for n in sizes
    ]
    for r in rows:
        assert (r.correct, r.errors) == (r.items, 0), r
        assert r.seconds > 0
        assert r.driver_cpu_s >= 0
        # per-item figures come from the unrounded seconds (the row keeps 4 decimals)
        slack = 5e-5 / r.items * 1e6 + 0.01
        assert abs(r.wall_us_per_item - r.seconds / r.items * 1e6) <= slack
        assert abs(r.cpu_us_per_item - r.driver_cpu_s / r.items * 1e6) <= slack
    doc = report.json_document([], None, rows)
    assert doc["rows"] == []
    assert doc["scale"]["rows"][0]["method"] == "asyncpool_map"
    assert set(doc["scale"]["cpu_growth"]) == {m.name for m in scale.METHODS}
    png = tmp_path / "scale.png"
    report.write_plot(str(png), [], None, rows)
    assert png.read_bytes().startswith(b"\x89PNG")


@pytest.mark.slow
def test_cli_math_runs_every_method_and_writes_json_with_the_load_average(
    ray_cluster: SessionCluster, tmp_path: Path
) -> None:
    out = tmp_path / "math.json"
    proc = _run_cli(
        # 12 items: every method runs them (sequential ones too); the count is not the point.
        "bench", "--address", ray_cluster.address, "--workload", "math", "--items", "12",
        "--rounds", "1", "--no-progress", "--json", str(out),
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    doc = json.loads(out.read_text())
    assert {"ray_version", "cpus", "rows"} <= set(doc)
    assert doc["cpus"] == ray_cluster.total_cpus
    assert [r["method"] for r in doc["rows"]] == [m.name for m in harness.MATH.methods]
    for row in doc["rows"]:
        assert set(row) == {"workload", "method", "items", "seconds", "per_minute", "correct",
                            "errors", "rounds", "per_minute_min", "per_minute_max",
                            "per_minute_rounds", "seconds_rounds"}
        assert (row["workload"], row["items"], row["correct"], row["errors"]) == (
            "math", 12, 12, 0)
    assert "math_verify" in doc["methods"]["math"]["sequential"]
    assert set(doc["load_average"]) == {"start", "end", "cpu_count", "background"}
    assert "verifications per minute" in proc.stdout
    assert "load average (1 min)" in proc.stdout


@pytest.mark.slow
def test_the_wheel_ships_the_harness_and_no_top_level_benchmarks_and_bench_runs_from_it(
    ray_cluster: SessionCluster, installed_wheel: InstalledWheel, tmp_path: Path
) -> None:
    """A regular (non-editable) wheel, installed into a fresh venv, runs ``asyncpool bench``
    from its own copy of the package; its only top-level package is ``asyncpool``."""
    wheel, names, venv = installed_wheel.wheel, installed_wheel.names, installed_wheel.venv
    py, exe = installed_wheel.python, installed_wheel.exe
    assert {n.split("/")[0] for n in names} == {"asyncpool", wheel.name.split("-py")[0] +
                                                ".dist-info"}
    assert "asyncpool/_bench/harness.py" in names
    assert "asyncpool/_bench/humaneval.py" in names
    where = subprocess.run(
        [str(py), "-c", "import asyncpool._bench.harness as h; print(h.__file__)"],
        capture_output=True, text=True, check=True, cwd=tmp_path,
    ).stdout.strip()
    assert Path(where).is_relative_to(venv), where
    assert not list((venv / "lib").glob("python*/site-packages/benchmarks"))
    out = tmp_path / "noop.json"
    env = {k: v for k, v in os.environ.items() if k not in ("RAY_ADDRESS", "ASYNCPOOL_ADDRESS")}
    proc = subprocess.run(
        [str(exe), "bench", "--address", ray_cluster.address, "--workload", "noop", "--items",
         "50", "--rounds", "1", "--no-progress", "--json", str(out)],
        capture_output=True, text=True, check=False, cwd=tmp_path, env=env,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    doc = json.loads(out.read_text())
    assert {r["method"] for r in doc["rows"]} >= {"ray_get", "asyncpool_gather"}
    assert all(r["correct"] == r["items"] == 50 for r in doc["rows"])


@pytest.mark.slow
def test_cli_two_rounds_of_noop_report_each_rows_median_spread_and_rounds(
    ray_cluster: SessionCluster, tmp_path: Path
) -> None:
    out = tmp_path / "noop.json"
    items = 40
    proc = _run_cli(
        "bench", "--address", ray_cluster.address, "--workload", "noop", "--items", str(items),
        "--rounds", "2", "--no-progress", "--json", str(out),
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    doc = json.loads(out.read_text())
    assert [r["method"] for r in doc["rows"]] == [m.name for m in harness.NOOP.methods]
    for row in doc["rows"]:
        each = row["per_minute_rounds"]
        assert row["rounds"] == len(each) == len(row["seconds_rounds"]) == 2, row
        assert (row["items"], row["correct"], row["errors"]) == (items, 2 * items, 0), row
        assert (row["per_minute_min"], row["per_minute_max"]) == (min(each), max(each))
        # Two rounds: the median is their mean (each figure keeps one decimal).
        assert abs(row["per_minute"] - sum(each) / 2) <= 0.1, row
        assert abs(row["seconds"] - sum(row["seconds_rounds"]) / 2) <= 1e-4, row
        # Each round's rate is its own items over its own time (up to the rounding of the
        # seconds, 4 decimals, and of the rate, 1 decimal).
        for rate, seconds in zip(each, row["seconds_rounds"], strict=True):
            low = items * 60 / (seconds + 5e-5) - 0.05
            high = items * 60 / (seconds - 5e-5) + 0.05
            assert low <= rate <= high, row
    rates = {r["method"]: r["per_minute"] for r in doc["rows"]}
    for ratio in doc["ratios"]:
        assert ratio["vs_baseline"] == round(rates[ratio["method"]] / rates["asyncio"], 3)
        assert len(ratio["vs_baseline_rounds"]) == 2
    (versus,) = doc["versus_best_peer"]
    assert versus["ratio"] == round(rates[versus["asyncpool"]] / rates[versus["peer"]], 3)
    # Of two rounds, the ratio of the means lies between the two rounds' ratios.
    assert versus["low"] - 1e-3 <= versus["ratio"] <= versus["high"] + 1e-3
    assert len(versus["rounds"]) == 2
    printed = " ".join(proc.stdout.split())
    assert "median of 2 round(s)" in printed
    assert f"noop: {versus['asyncpool']} = {versus['ratio']:.2f}x {versus['peer']}" in printed
