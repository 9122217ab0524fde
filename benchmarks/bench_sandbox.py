"""Per-check cost of the sandbox: a fresh interpreter, ``run_python``, and the bare fork.

The same HumanEval items (canonical solutions and broken variants) are checked three ways,
interleaved round by round so that machine noise hits them alike:

* ``fresh``: a new ``python -I -`` subprocess per check (the program on stdin), no limits;
* ``fresh_S``: the same with ``-S`` (no ``site``): on a machine whose site-packages carry
  ``.pth`` hooks that import packages at every start, ``fresh`` pays for them and this does not;
* ``run_python``: the sandbox with every limit and isolation step;
* ``bare``: ``run_python_bare``, the same fork server with no limits at all (the "fork a
  prepared interpreter" floor the benchmark's ``limit`` method is built on).

Each check counts as correct when its verdict (exit 0 or not) matches the item's label.

    python -m benchmarks.bench_sandbox [--items 200] [--rounds 3] [--threads 1] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from asyncpool.sandbox import run_python, run_python_bare
from benchmarks.humaneval import VerificationItem, items

Check = Callable[[VerificationItem], bool]


def _fresh(item: VerificationItem, *flags: str) -> bool:
    proc = subprocess.run(
        [sys.executable, *flags, "-"],
        input=item.program.encode(),
        capture_output=True,
        timeout=10,
        check=False,
    )
    return (proc.returncode == 0) == item.expected


def check_fresh(item: VerificationItem) -> bool:
    return _fresh(item, "-I")


def check_fresh_nosite(item: VerificationItem) -> bool:
    return _fresh(item, "-I", "-S")


def check_sandbox(item: VerificationItem) -> bool:
    return run_python(item.program, timeout=10).passed == item.expected


def check_bare(item: VerificationItem) -> bool:
    return run_python_bare(item.program).passed == item.expected


METHODS: dict[str, Check] = {
    "fresh": check_fresh,
    "fresh_S": check_fresh_nosite,
    "run_python": check_sandbox,
    "bare": check_bare,
}


def _time(check: Check, work: list[VerificationItem], threads: int) -> tuple[float, int]:
    start = time.perf_counter()
    if threads == 1:
        correct = sum(check(item) for item in work)
    else:
        with ThreadPoolExecutor(threads) as pool:
            correct = sum(pool.map(check, work))
    return time.perf_counter() - start, correct


def main(argv: list[str] | None = None) -> dict[str, object]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=200, help="checks per method and round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1, help="concurrent checks")
    parser.add_argument("--json", help="write the figures here")
    args = parser.parse_args(argv)

    work = items(args.items)
    for check in METHODS.values():  # warm-up: starts the fork server, fills caches
        _time(check, work[:10], 1)
    seconds: dict[str, list[float]] = {m: [] for m in METHODS}
    correct: dict[str, int] = dict.fromkeys(METHODS, 0)
    for r in range(args.rounds):
        for name, check in METHODS.items():
            elapsed, ok = _time(check, work, args.threads)
            seconds[name].append(elapsed)
            correct[name] += ok
        print(
            f"round {r + 1}/{args.rounds}: "
            + ", ".join(f"{m} {seconds[m][-1] / len(work) * 1e3:.2f} ms" for m in METHODS),
            file=sys.stderr,
        )

    total = len(work) * args.rounds
    ms = {m: statistics.median(s) / len(work) * 1e3 for m, s in seconds.items()}
    print(
        f"\n{len(work)} HumanEval checks x {args.rounds} rounds, {args.threads} thread(s), "
        f"{os.cpu_count()} CPUs, median round\n"
    )
    print(
        f"{'method':<12}{'ms/check':>10}{'checks/s':>10}{'correct':>12}"
        f"{'vs fresh':>10}{'vs fresh_S':>12}"
    )
    for m in METHODS:
        print(
            f"{m:<12}{ms[m]:>10.2f}{1e3 / ms[m]:>10.0f}{f'{correct[m]}/{total}':>12}"
            f"{ms['fresh'] / ms[m]:>9.1f}x{ms['fresh_S'] / ms[m]:>11.1f}x"
        )
    print(
        f"\nrun_python costs {ms['run_python'] / ms['bare']:.2f}x the bare fork and is "
        f"{ms['fresh'] / ms['run_python']:.1f}x faster than a fresh `python -I` "
        f"({ms['fresh_S'] / ms['run_python']:.1f}x than `python -I -S`)"
    )
    report: dict[str, object] = {
        "items": len(work),
        "rounds": args.rounds,
        "threads": args.threads,
        "cpus": os.cpu_count(),
        "ms_per_check": ms,
        "correct": correct,
        "checks": total,
        "ratios": {
            "fresh_over_run_python": ms["fresh"] / ms["run_python"],
            "fresh_S_over_run_python": ms["fresh_S"] / ms["run_python"],
            "run_python_over_bare": ms["run_python"] / ms["bare"],
            "fresh_over_bare": ms["fresh"] / ms["bare"],
        },
    }
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(report, fh, indent=2)
    return report


if __name__ == "__main__":
    main()
