"""An actor pool's routing per call: the O(1) buckets (:mod:`asyncpool._least_loaded`) against
the scan of every actor the pool made before (kept here as the baseline, as it was).

Each call picks the least-loaded actor and adds one to its load; calls end in the order they
started once ``in_flight`` are running (a pool's steady state: ``max_concurrency`` per actor,
all busy). Both routings see the same calls, interleaved round by round so that machine noise
hits them alike; each is reported in µs per call (a pick, a start and an end) with the ratio of
the scan to the buckets, per pool size. No Ray: this is the driver's own work per call, which
adds to Ray's submission (~80 µs of driver CPU per call).

    python -m benchmarks.bench_routing [--calls 200000] [--rounds 5] [--concurrency 4]
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import time
from collections import deque
from collections.abc import Callable

from asyncpool._actor_member import Member
from asyncpool._least_loaded import LeastLoaded, shift


def _members(n: int) -> list[Member]:
    return [Member(handle=None, index=i, ready=True) for i in range(n)]  # type: ignore[arg-type]


def scan_routing(n: int) -> tuple[Callable[[], Member], Callable[[Member, int], None]]:
    """The routing ``ActorPool._pick`` did before: every actor scanned per call, ties by a
    rotating start."""
    members = _members(n)
    rr = itertools.count()

    def pick() -> Member:
        offset = next(rr)
        best: Member | None = None
        for k in range(n):
            member = members[(offset + k) % n]
            if member.alive and member.ready and (best is None or member.load < best.load):
                best = member
        assert best is not None
        return best

    def change(member: Member, delta: int) -> None:
        member.load += delta

    return pick, change


def bucket_routing(n: int) -> tuple[Callable[[], Member], Callable[[Member, int], None]]:
    router = LeastLoaded()
    for member in _members(n):
        router.add(member)

    def pick() -> Member:
        best = router.pick()
        assert best is not None
        return best

    return pick, shift


def run(
    routing: tuple[Callable[[], Member], Callable[[Member, int], None]], calls: int,
    in_flight: int,
) -> float:  # fmt: skip
    """µs per call: ``calls`` calls routed, at most ``in_flight`` running, oldest ends first."""
    pick, change = routing
    running: deque[Member] = deque()
    t0 = time.perf_counter()
    for _ in range(calls):
        if len(running) >= in_flight:
            change(running.popleft(), -1)
        member = pick()
        change(member, 1)
        running.append(member)
    return (time.perf_counter() - t0) / calls * 1e6


def main(calls: int, rounds: int, concurrency: int) -> None:
    print(f"routing per call, µs, median of {rounds} rounds of {calls} calls "
          f"({concurrency} calls in flight per actor) [min-max]")  # fmt: skip
    print(f"{'actors':>7} {'scan':>22} {'buckets':>22} {'scan / buckets':>15}")
    for n in (4, 16, 64, 256):
        times: dict[str, list[float]] = {"scan": [], "buckets": []}
        for _ in range(rounds):
            times["scan"].append(run(scan_routing(n), calls, n * concurrency))
            times["buckets"].append(run(bucket_routing(n), calls, n * concurrency))
        med = {k: statistics.median(v) for k, v in times.items()}
        cells = [f"{med[k]:7.2f} [{min(v):.2f}-{max(v):.2f}]" for k, v in times.items()]
        print(f"{n:>7} {cells[0]:>22} {cells[1]:>22} {med['scan'] / med['buckets']:>14.1f}x")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=200_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--concurrency", type=int, default=4)
    args = parser.parse_args()
    main(args.calls, args.rounds, args.concurrency)
