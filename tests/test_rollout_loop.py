"""examples/rollout_loop.py end to end, as a subprocess driver on the session cluster.

One small run (40 rollouts, a tight queue and few verifiers so that generation outpaces
verification); the tests read its JSONL and its summary line.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from benchmarks.humaneval import broken_completion, load_problems
from tests.conftest import SessionCluster

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "examples" / "rollout_loop.py"

N = 40
SEED = 3
QUEUE = 4
VERIFIERS = 4
POLICIES = 2
POLICY_CONCURRENCY = 4


@dataclass
class Run:
    rows: list[dict[str, Any]]
    summary: dict[str, Any]
    stdout: str


@pytest.fixture(scope="module")
def run(ray_cluster: SessionCluster, tmp_path_factory: pytest.TempPathFactory) -> Run:
    out = tmp_path_factory.mktemp("rollouts") / "rollouts.jsonl"
    env = {k: v for k, v in os.environ.items() if k not in ("RAY_ADDRESS", "ASYNCPOOL_ADDRESS")}
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.run(
        [
            sys.executable,
            str(SCRIPT),
            "--n",
            str(N),
            "--out",
            str(out),
            "--seed",
            str(SEED),
            "--address",
            ray_cluster.address,
            "--queue",
            str(QUEUE),
            "--verifiers",
            str(VERIFIERS),
            "--policies",
            str(POLICIES),
            "--policy-concurrency",
            str(POLICY_CONCURRENCY),
            "--no-progress",
        ],
        env=env,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=180,  # subprocess.run kills the driver (by its pid) when it overruns
        check=False,
    )
    assert proc.returncode == 0, f"rc {proc.returncode}\n{proc.stdout}\n{proc.stderr[-3000:]}"
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    summary = json.loads(proc.stdout.strip().splitlines()[-1])
    print(f"\n[rollout loop] {proc.stdout.strip().splitlines()[0]}")
    return Run(rows, summary, proc.stdout)


@pytest.mark.slow
def test_every_rollout_is_written_once_with_its_fields(run: Run) -> None:
    assert len(run.rows) == N
    assert sorted(r["index"] for r in run.rows) == list(range(N))
    fields = {
        "prompt_id", "completion", "label", "expected_reward", "reward", "status",
        "gen_start", "gen_end", "verify_start", "verify_end", "policy_node", "verify_node",
    }  # fmt: skip
    for row in run.rows:
        assert fields <= set(row), fields - set(row)
        assert row["gen_start"] <= row["gen_end"] <= row["verify_start"] <= row["verify_end"]
    assert run.summary["n"] == N
    assert run.summary["errors"] == 0


def test_completions_follow_the_seed_and_rewards_match_their_labels(run: Run) -> None:
    problems = load_problems()
    for row in run.rows:
        canonical = random.Random(f"{SEED}:{row['index']}").random() < 0.5
        assert row["label"] == ("canonical" if canonical else "broken")
        expected = (
            problems[row["prompt_id"]]["canonical_solution"]
            if canonical
            else broken_completion(row["prompt_id"])
        )
        assert row["completion"] == expected
        assert row["reward"] == row["expected_reward"] == (1.0 if canonical else 0.0), row
        assert row["status"] == ("passed" if canonical else "failed")
    labels = {r["label"] for r in run.rows}
    assert labels == {"canonical", "broken"}
    assert run.summary["rewards_match_labels"] == N
    assert run.summary["passed"] == sum(r["label"] == "canonical" for r in run.rows)


def test_verification_starts_before_generation_ends(run: Run) -> None:
    first_verify_start = min(r["verify_start"] for r in run.rows)
    last_gen_end = max(r["gen_end"] for r in run.rows)
    overlapped = sum(r["verify_end"] < last_gen_end for r in run.rows)
    print(
        f"\n[rollout loop] first verification started "
        f"{last_gen_end - first_verify_start:.2f}s before the last generation ended; "
        f"{overlapped}/{N} rollouts were verified before generation finished; "
        f"{run.summary['rollouts_per_min']:.0f} rollouts/min"
    )
    assert first_verify_start < last_gen_end
    assert overlapped >= 1
    assert run.summary["overlap_s"] > 0
    assert run.summary["rollouts_per_min"] > 0


def test_the_bounded_queue_holds_generation_back(run: Run) -> None:
    """At no time are more rollouts generated-but-not-yet-verifying than the pipeline holds:
    the policy map's window, the one in the producer's hand, the queue, the verification
    map's window. Without backpressure, generation (fast) would run far ahead."""
    bound = POLICIES * POLICY_CONCURRENCY + 1 + QUEUE + VERIFIERS
    backlog = max(
        sum(1 for r in run.rows if r["gen_end"] <= row["gen_end"] < r["verify_start"])
        for row in run.rows
    )
    print(f"\n[rollout loop] largest backlog between the stages {backlog} (bound {bound})")
    assert backlog <= bound
