"""Where the CPU goes in the bench's ``humaneval`` workload, by process role.

Starts its own local Ray cluster (a child tree of this driver), opens the humaneval session
of ``asyncpool bench`` (warm-up included), then runs the chosen methods one after another,
interleaved ``--rounds`` times, and for each run prints the CPU seconds of this driver's
process tree by role, read from ``/proc``: the driver itself; Ray's ``gcs_server`` and
``raylet``; Ray workers; the sandbox fork servers under the workers and under the driver (their
own time, and the time of the runs and judges they forked and reaped: "reaped children").
Processes that start and end between two reads count only through the parent that reaped
them. Run it next to ``asyncpool bench --load N`` or on a loaded machine to see which roles
grow::

    python -m benchmarks.bench_cpu_by_role --items 164 --methods asyncpool,asyncio,mp_pool
"""

from __future__ import annotations

import argparse
import os
import time
from collections import defaultdict

import asyncpool
from asyncpool._bench.core import ignore_progress
from asyncpool._bench.workloads import humaneval as he

_TICK = os.sysconf("SC_CLK_TCK")
_METHODS = {
    "asyncpool": he._asyncpool,
    "asyncpool_auto": he._asyncpool_auto,
    "asyncio": he._asyncio,
    "executor": he._executor,
    "ray_data_tasks": he._data_tasks,
    "ray_data_actors": he._data_actors,
    "mp_pool": he._mp_pool,
    "sequential": he._sequential,
}

# pid -> (ppid, comm, own CPU s, reaped children's CPU s, command line head)
_Proc = tuple[int, str, float, float, str]


def _processes() -> dict[int, _Proc]:
    out: dict[int, _Proc] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as fh:
                stat = fh.read()
            with open(f"/proc/{name}/cmdline", "rb") as fh:
                cmd = fh.read(200).replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        end = stat.rindex(")")
        comm = stat[stat.index("(") + 1 : end]
        f = stat[end + 2 :].split()
        own = (int(f[11]) + int(f[12])) / _TICK
        reaped = (int(f[13]) + int(f[14])) / _TICK
        out[int(name)] = (int(f[1]), comm, own, reaped, cmd)
    return out


def _is_worker(p: _Proc) -> bool:
    return p[1].startswith("ray::") or "default_worker" in p[4]


def _role(table: dict[int, _Proc], pid: int, root: int) -> str | None:
    if pid == root:
        return "driver"
    chain = []
    p = pid
    while p in table and p != root:
        chain.append(table[p])
        p = table[p][0]
    if p != root:
        return None  # not ours
    me = chain[0]
    if "raylet" in me[1]:
        return "raylet"
    if "gcs_server" in me[1]:
        return "gcs"
    if _is_worker(me):
        return "ray worker"
    if any(_is_worker(c) for c in chain[1:]):
        return "worker fork server"
    if len(chain) == 1 and me[1].startswith("python"):
        return "driver fork server"
    return f"other ({me[1][:20]})"


def _cpu_by_role() -> dict[str, float]:
    table, root = _processes(), os.getpid()
    acc: dict[str, float] = defaultdict(float)
    for pid, proc in table.items():
        role = _role(table, pid, root)
        if role is not None:
            acc[f"{role}: own"] += proc[2]
            acc[f"{role}: reaped children"] += proc[3]
    return acc


async def _main(n: int, methods: list[str], rounds: int) -> None:
    async with he.humaneval_session(n) as session:
        for _ in range(rounds):
            for name in methods:
                before, t0, load = _cpu_by_role(), time.perf_counter(), os.getloadavg()[0]
                outcome = await _METHODS[name](session, n, ignore_progress)
                wall = time.perf_counter() - t0
                after = _cpu_by_role()
                delta = {k: v - before.get(k, 0.0) for k, v in after.items()}
                total = sum(delta.values())
                print(f"\n{name}: {n} items in {wall:.1f} s ({outcome.correct} correct), load "
                      f"average {load:.1f}; CPU of this tree {total:.2f} s = "
                      f"{total / n * 1e3:.1f} ms/item")
                for key, v in sorted(delta.items(), key=lambda kv: -kv[1]):
                    if v >= 0.01:
                        print(f"  {key:36} {v:7.2f} s {v / n * 1e3:7.2f} ms/item "
                              f"{100 * v / max(total, 1e-9):5.1f}%")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=164)
    parser.add_argument("--methods", default="asyncpool,asyncpool_auto,asyncio")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    unknown = sorted(set(methods) - set(_METHODS))
    if unknown:
        parser.error(f"unknown method(s) {unknown}; choose from {', '.join(_METHODS)}")
    rt = asyncpool.init("local", log_to_driver=False)
    try:
        asyncpool.run(_main, args.items, methods, args.rounds)
    finally:
        rt.shutdown()


if __name__ == "__main__":
    main()
