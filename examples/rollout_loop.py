"""Rollout collection: policy workers generate, a verification pool scores, as one stream.

    python examples/rollout_loop.py --n 200 --out rollouts.jsonl [--seed 0] [--address ADDR]

The shape of an RL rollout loop, on asyncpool:

* **generation**: an :class:`asyncpool.ActorPool` of ``Policy`` actors. The policy is a
  deterministic stand-in for a model: for a HumanEval prompt it "writes" the canonical
  solution or a broken variant of it (``benchmarks.humaneval.broken_completion``), chosen by
  ``--seed`` and the rollout's index (so a run is reproducible whatever actor serves which
  prompt), after a simulated generation delay. Each actor serves several prompts at once
  (``max_concurrency``), as a batching inference server would.
* **verification**: a :class:`asyncpool.TaskPool` whose Ray tasks run each completion
  against the problem's unit tests in the sandbox (``asyncpool.sandbox.run_python``).
* between the two, a **bounded queue** (an anyio memory object stream of ``--queue`` items):
  candidates are verified as they arrive; when verification falls behind, the queue fills,
  generation waits, and nothing piles up in memory. Both pools' ``map`` are lazy, so the
  backpressure goes all the way back to the prompts.

Every rollout is written to ``--out`` (JSONL) as soon as it is verified: prompt id,
completion, expected reward (1.0 for the canonical solution, 0.0 for the broken one), reward,
sandbox status, the generation start/end and verification start/end times (``time.time()``
on the worker that did the work), and the nodes that did it. The run ends with a summary:
rollouts per minute, and the overlap of the two stages (when the first verification started
against when the last generation ended). A progress bar shows both stages on stderr; the
summary is printed on stdout, its last line as JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import ray
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
)

import asyncpool
from asyncpool.sandbox import run_python
from benchmarks.humaneval import broken_completion, load_problems, program_for


def _node_id() -> str:
    return str(ray.get_runtime_context().get_node_id())


# --------------------------------------------------------------------------- the two stages


class Policy:
    """A deterministic stand-in for a policy model (one actor; async, so it serves many)."""

    def __init__(self, seed: int, p_correct: float, delay: tuple[float, float]) -> None:
        self.seed = seed
        self.p_correct = p_correct
        self.delay = delay
        self.problems = load_problems()
        self.node_id = _node_id()

    async def generate(self, prompt: tuple[int, str]) -> dict[str, Any]:
        index, task_id = prompt
        rng = random.Random(f"{self.seed}:{index}")  # the same answer whichever actor serves it
        correct = rng.random() < self.p_correct
        gen_start = time.time()
        await asyncio.sleep(rng.uniform(*self.delay))  # "decoding"
        completion = (
            self.problems[task_id]["canonical_solution"] if correct else broken_completion(task_id)
        )
        return {
            "index": index,
            "prompt_id": task_id,
            "completion": completion,
            "label": "canonical" if correct else "broken",
            "expected_reward": 1.0 if correct else 0.0,
            "gen_start": gen_start,
            "gen_end": time.time(),
            "policy_node": self.node_id,
        }


def verify(candidate: dict[str, Any]) -> dict[str, Any]:
    """A Ray task: run the candidate against its problem's tests in the sandbox."""
    verify_start = time.time()
    result = run_python(program_for(candidate["prompt_id"], candidate["completion"]))
    return {
        "reward": 1.0 if result.passed else 0.0,
        "status": result.status,
        "sandbox_s": round(result.duration, 6),
        "verify_start": verify_start,
        "verify_end": time.time(),
        "verify_node": _node_id(),
    }


# --------------------------------------------------------------------------- the loop


def prompts(n: int, seed: int) -> list[tuple[int, str]]:
    """``n`` (index, task_id): every problem once in a seeded order, then again, and so on."""
    ids = sorted(load_problems(), key=lambda t: int(t.rsplit("/", 1)[1]))
    random.Random(seed).shuffle(ids)
    return [(i, ids[i % len(ids)]) for i in range(n)]


async def collect(args: argparse.Namespace) -> dict[str, Any]:
    console = Console(stderr=True)
    progress = Progress(
        TextColumn("{task.description:<12}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[info]}"),
        TimeElapsedColumn(),
        console=console,
        disable=args.no_progress,
    )
    out_path = Path(args.out)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    send, receive = anyio.create_memory_object_stream[dict[str, Any]](args.queue)
    async with (
        asyncpool.connect(args.address, log_to_driver=False) as rt,
        asyncpool.ActorPool(
            Policy,
            args.seed,
            args.p_correct,
            (args.min_delay, args.max_delay),
            size=args.policies,
            max_concurrency=args.policy_concurrency,
            retries=1,  # a dead policy actor's prompts are re-sent to another one
            num_cpus=0,  # the stand-in only sleeps; a real policy would ask for num_gpus=1
        ) as policies,
        asyncpool.TaskPool(verify, max_in_flight=args.verifiers) as verifiers,
    ):
        console.print(
            f"ray: {rt.address} ({rt.source}); {policies.size} policy actors x "
            f"{args.policy_concurrency}, verification max_in_flight {verifiers.max_in_flight}, "
            f"queue {args.queue}"
        )
        candidates: dict[int, dict[str, Any]] = {}  # queued for verification, by position
        counts = {"rows": 0, "matched": 0, "passed": 0, "errors": 0}
        timings: list[tuple[float, float, float]] = []  # (gen_end, verify_start, verify_end)
        gen_bar = progress.add_task("generated", total=args.n, info="")
        ver_bar = progress.add_task("verified", total=args.n, info="")

        async def generate() -> None:
            """Stage 1: policy outputs into the bounded queue, as they complete."""
            async with send, policies.map("generate", prompts(args.n, args.seed)) as stream:
                async for _, candidate in stream:
                    progress.advance(gen_bar)
                    await send.send(candidate)  # waits while the queue is full
                    depth = send.statistics().current_buffer_used
                    progress.update(gen_bar, info=f"queue {depth}/{args.queue}")

        async def queued() -> AsyncIterator[dict[str, Any]]:
            """The queue as the verification pool's (lazy) input."""
            position = 0
            async with receive:
                async for candidate in receive:
                    candidates[position] = candidate
                    position += 1
                    yield candidate

        t0 = time.time()
        async with await anyio.open_file(out_path, "w", encoding="utf-8") as out:
            with progress:
                async with anyio.create_task_group() as tg:
                    tg.start_soon(generate)
                    # Stage 2: verify as candidates arrive; write each rollout once scored.
                    async with verifiers.map(queued(), return_exceptions=True) as results:
                        async for position, verdict in results:
                            row = _row(candidates.pop(position), verdict, counts)
                            await out.write(json.dumps(row) + "\n")
                            if "verify_start" in row:
                                timings.append(
                                    (row["gen_end"], row["verify_start"], row["verify_end"])
                                )
                            progress.advance(ver_bar)
                            rate = counts["rows"] / max(time.time() - t0, 1e-9) * 60
                            progress.update(ver_bar, info=f"{rate:,.0f}/min")
        elapsed = time.time() - t0

    summary = _summarize(out_path, elapsed, counts, timings, t0)
    summary["ray_address"] = rt.address
    return summary


def _row(candidate: dict[str, Any], verdict: Any, counts: dict[str, int]) -> dict[str, Any]:
    counts["rows"] += 1
    if isinstance(verdict, BaseException):
        counts["errors"] += 1
        verdict = {"reward": None, "status": f"error: {type(verdict).__name__}: {verdict}"}
    row = {**candidate, **verdict}
    counts["passed"] += row["reward"] == 1.0
    counts["matched"] += row["reward"] == row["expected_reward"]
    return row


def _summarize(
    path: Path,
    elapsed: float,
    counts: dict[str, int],
    timings: list[tuple[float, float, float]],
    t0: float,
) -> dict[str, Any]:
    first_verify_start = min((v for _, v, _ in timings), default=t0)
    last_gen_end = max((g for g, _, _ in timings), default=t0)
    return {
        "n": counts["rows"],
        "out": str(path),
        "elapsed_s": round(elapsed, 3),
        "rollouts_per_min": round(counts["rows"] / max(elapsed, 1e-9) * 60, 1),
        "passed": counts["passed"],
        "rewards_match_labels": counts["matched"],
        "errors": counts["errors"],
        "first_verify_start_s": round(first_verify_start - t0, 3),
        "last_gen_end_s": round(last_gen_end - t0, 3),
        # > 0: verification was already running this long before generation finished.
        "overlap_s": round(last_gen_end - first_verify_start, 3),
        "verified_before_generation_ended": sum(1 for _, _, v in timings if v < last_gen_end),
    }


# --------------------------------------------------------------------------- command line


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description="Collect HumanEval rollouts: generate, verify, log.")
    p.add_argument("--n", type=int, default=200, help="rollouts to collect")
    p.add_argument("--out", default="rollouts.jsonl", help="JSONL output path")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--address", default=None, help="Ray address (default: asyncpool's resolution)")
    p.add_argument("--policies", type=int, default=2, help="policy actors")
    p.add_argument("--policy-concurrency", type=int, default=4, help="prompts per actor at once")
    p.add_argument("--verifiers", type=int, default=None, help="verification tasks at once")
    p.add_argument("--queue", type=int, default=8, help="bounded queue between the stages")
    p.add_argument("--p-correct", type=float, default=0.5, help="share of canonical answers")
    p.add_argument("--min-delay", type=float, default=0.05, help="generation time, seconds")
    p.add_argument("--max-delay", type=float, default=0.25)
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    args = p.parse_args(argv)
    if args.n < 1 or args.queue < 1 or args.policies < 1 or args.policy_concurrency < 1:
        p.error("--n, --queue, --policies and --policy-concurrency must be >= 1")
    if not 0.0 <= args.p_correct <= 1.0 or not 0.0 <= args.min_delay <= args.max_delay:
        p.error("need 0 <= --p-correct <= 1 and 0 <= --min-delay <= --max-delay")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    summary = asyncpool.run(collect, args)
    print(
        f"{summary['n']} rollouts in {summary['elapsed_s']:.1f}s: "
        f"{summary['rollouts_per_min']:,.0f} rollouts/min; "
        f"{summary['passed']} passed, {summary['rewards_match_labels']}/{summary['n']} rewards "
        f"match their labels, {summary['errors']} errors; first verification started at "
        f"+{summary['first_verify_start_s']:.2f}s, last generation ended at "
        f"+{summary['last_gen_end_s']:.2f}s ({summary['verified_before_generation_ended']} "
        f"rollouts verified before generation finished); written to {summary['out']}"
    )
    print(json.dumps(summary), flush=True)
    return 0 if summary["errors"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
