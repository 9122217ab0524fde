"""``memory_mb`` bounds a run's memory, all its processes together and whatever its runtime.

``RLIMIT_AS`` bounds one process's address space: several processes each under it, or a runtime
that reserves much more address space than it uses (the JVM, Go, V8 get ``memory_mb`` plus room
for their reservations), could use more than ``memory_mb``. Where the host has a memory
controller (v2 ``memory`` delegated, or a v1 ``memory`` hierarchy, as here) every run is held to
``memory_mb`` of resident memory by its cgroup, and a run the kernel killed there is "memory".
Its address space is then ``memory_mb`` plus a backstop (``ADDRESS_HEADROOM``): what a program
reserves but does not use (a deep-recursion thread's stack, malloc's thread arenas) is not
memory, as under ``python prog.py``.
"""

from __future__ import annotations

import os
import textwrap

import pytest

from asyncpool.sandbox import _cgroup, _languages, run_program, run_python, run_stdio, run_tests
from asyncpool.sandbox._zygote_wire import HELD_PROCESSES
from tests._programs import FLAT_FORK_BOMB

AVAILABLE = _languages.available()


def _memory_controller() -> bool:
    own = _cgroup._own_cgroups()
    mounts = _cgroup._mounts()
    if _cgroup._v1_dir(own, mounts, "memory") is not None:
        return True
    v2 = own.get("")
    for root, mountpoint, fstype, _ in mounts:
        if fstype == "cgroup2" and v2 is not None:
            where = _cgroup._dir_of(root, mountpoint, v2)
            controllers = os.path.join(where or "", "cgroup.controllers")
            if where is not None and os.path.exists(controllers):
                with open(controllers) as fh:
                    return "memory" in fh.read().split()
    return False


pytestmark = pytest.mark.skipif(
    not _memory_controller(), reason="this host has no memory cgroup controller"
)

# Children each touching SIZE MiB, all holding it at once (each says so, then waits for the
# parent's go): every one is far under a 256 MiB RLIMIT_AS; three of 120 MiB together are over
# 256 MiB. The parent lets them go once all are ready or one died, and says how they ended.
def _hogs(children: int, mib: int) -> str:
    return textwrap.dedent(f"""
        import os, select, sys
        N, SIZE = {children}, {mib}
        ready_r, ready_w = os.pipe()
        go_r, go_w = os.pipe()
        kids = []
        for _ in range(N):
            pid = os.fork()
            if pid == 0:
                os.close(ready_r)
                os.close(go_w)
                block = b"x" * (SIZE << 20)
                os.write(ready_w, b"+")
                os.read(go_r, 1)
                os._exit(0)
            kids.append(pid)
        os.close(ready_w)
        os.close(go_r)
        ready, codes = 0, {{}}
        while ready < N and not codes:
            if select.select([ready_r], [], [], 0.1)[0]:
                ready += len(os.read(ready_r, N))
            for pid in kids:
                done, status = os.waitpid(pid, os.WNOHANG)
                if done:
                    codes[pid] = status
        os.close(go_w)
        for pid in kids:
            if pid not in codes:
                codes[pid] = os.waitpid(pid, 0)[1]
        print(sorted(codes.values()))
        sys.exit(0 if all(c == 0 for c in codes.values()) else 1)
    """)


def test_processes_each_under_the_limit_but_over_it_together_are_memory() -> None:
    result = run_python(_hogs(3, 120), memory_mb=256, timeout=20)
    assert result.status == "memory", result


def test_a_run_using_most_of_its_memory_in_one_process_still_passes() -> None:
    # 150 MiB touched under 256 MiB: the forked interpreter's own pages and the run's files do
    # not push an honest run over its limit.
    result = run_python("block = b'x' * (150 << 20)\nprint(len(block) >> 20)", memory_mb=256)
    assert (result.status, result.stdout_tail) == ("passed", "150\n"), result


def test_a_correct_answers_output_is_not_the_runs_memory() -> None:
    # 220 MiB held at memory_mb=256 and 48 MB printed: judges do not count the output as the
    # program's memory (before the stdout file's pages were reserved outside the run, this was
    # "memory": they were charged to the run's cgroup). Past the limit without output it still is.
    line = "123456789\n"
    program = textwrap.dedent("""
        import sys
        block = b"x" * (220 << 20)
        chunk = "123456789\\n" * 1000
        n = int(input())
        for _ in range(n // 1000):
            sys.stdout.write(chunk)
        print(len(block) >> 30, end="")
    """)
    n = 4_800_000
    result = run_stdio(program, [(f"{n}\n", line * n + "0")], memory_mb=256, timeout=30)
    assert (result.status, result.cases[0].verdict) == ("passed", "accepted"), result.cases[0]
    over = program.replace("220 << 20", "300 << 20")
    result = run_stdio(over, [(f"{n}\n", line * n + "0")], memory_mb=256, timeout=30)
    assert result.cases[0].verdict == "memory_limit", result.cases[0]


def test_children_under_the_limit_together_pass() -> None:
    result = run_python(_hogs(2, 60), memory_mb=256, timeout=20)
    assert (result.status, result.stdout_tail) == ("passed", "[0, 0]\n"), result


def test_a_growing_program_is_killed_at_its_limit_of_memory_used() -> None:
    program = "chunks = []\nwhile True:\n    chunks.append(bytearray(10**7))"
    result = run_python(program, memory_mb=256, timeout=20)
    assert (result.status, result.returncode) == ("memory", -9), result
    cases = run_stdio(program, [("", "")], memory_mb=256, timeout=20).cases
    assert (cases[0].verdict, cases[0].status) == ("memory_limit", "memory"), cases


# The competitive programmer's deep recursion in a thread of a big stack: a few MiB used,
# the stack's size reserved (with numpy's import, ~160 MiB more of address space).
THREADED_DFS = """
import sys, threading
{imports}
sys.setrecursionlimit(10 ** 6)
threading.stack_size(2 ** {power})

def main():
    def depth(u):
        return 0 if u == 0 else 1 + depth(u - 1)
    print(depth(50_000))

thread = threading.Thread(target=main)
thread.start()
thread.join()
"""


@pytest.mark.parametrize(
    ("imports", "power", "memory_mb"),
    [("", 28, 256), ("import numpy", 27, 256), ("import numpy", 29, 512), ("", 30, 512)],
)
def test_address_space_reserved_but_not_used_is_not_memory(
    imports: str, power: int, memory_mb: int
) -> None:
    """At ``RLIMIT_AS = memory_mb`` each of these failed ("can't start new thread"), one of
    them only on some fork servers (where glibc's thread arena happened to land)."""
    program = THREADED_DFS.format(imports=imports, power=power)
    result = run_python(program, memory_mb=memory_mb, timeout=20)
    assert (result.status, result.stdout_tail) == ("passed", "50000\n"), result


def test_a_run_held_by_its_cgroup_may_have_a_thread_pools_threads_and_a_bomb_still_stops() -> None:
    """``ThreadPoolExecutor()`` starts up to 32 workers on a machine of 28 CPUs or more (and
    ``min(32, cpus + 4)`` on any): all alive at once here, as a barrier makes them."""
    pool = textwrap.dedent("""
        import threading
        from concurrent.futures import ThreadPoolExecutor
        barrier = threading.Barrier(32, timeout=10)
        with ThreadPoolExecutor(max_workers=32) as pool:
            print(sum(pool.map(lambda i: barrier.wait() * 0 + i, range(64))))
    """)
    result = run_python(pool, timeout=20)
    assert (result.status, result.stdout_tail) == ("passed", "2016\n"), result
    judged = textwrap.dedent("""
        import threading
        from concurrent.futures import ThreadPoolExecutor
        def total():
            barrier = threading.Barrier(32, timeout=10)
            with ThreadPoolExecutor(max_workers=32) as pool:
                return sum(pool.map(lambda i: barrier.wait() * 0 + i, range(64)))
    """)
    result = run_tests(judged, "assert total() == 2016\n", timeout=20)
    assert result.status == "passed", result
    result = run_python(FLAT_FORK_BOMB, timeout=20)
    assert result.status == "passed", result
    assert int(result.stdout_tail.split()[1]) == HELD_PROCESSES - 1, result


def test_a_judged_solution_gets_the_same_room_and_is_memory_when_killed_at_its_limit() -> None:
    deep = textwrap.dedent("""
        import sys, threading
        def depth(n):
            out = []
            def walk(u):
                return 0 if u == 0 else 1 + walk(u - 1)
            sys.setrecursionlimit(10 ** 6)
            threading.stack_size(2 ** 28)
            thread = threading.Thread(target=lambda: out.append(walk(n)))
            thread.start()
            thread.join()
            return out[0]
    """)
    result = run_tests(deep, "assert depth(50_000) == 50_000\n", memory_mb=256, timeout=20)
    assert result.status == "passed", result
    hog = "def f():\n    kept = []\n    while True:\n        kept.append(bytearray(10**7))\n"
    result = run_tests(hog, "assert f() == 1\n", memory_mb=256, timeout=20)
    assert (result.status, result.returncode) == ("memory", -9), result
    assert "killed at its memory limit" in result.stdout_tail


# A runtime that reserves address space (RLIMIT_AS is memory_mb plus room for it) touching
# 400 MiB under memory_mb=256, and the same program touching 64 MiB.
HOGS = {
    "java": """
        public class Main {
            public static void main(String[] args) {
                int n = Integer.parseInt(args.length > 0 ? args[0] : "MIB");
                java.util.List<byte[]> kept = new java.util.ArrayList<>();
                for (int i = 0; i < n; i++) {
                    byte[] b = new byte[1 << 20];
                    java.util.Arrays.fill(b, (byte) 1);
                    kept.add(b);
                }
                System.out.println(kept.size());
            }
        }
    """,
    "go": """
        package main
        import "fmt"
        func main() {
            kept := make([][]byte, 0)
            for i := 0; i < MIB; i++ {
                b := make([]byte, 1<<20)
                for j := range b { b[j] = 1 }
                kept = append(kept, b)
            }
            fmt.Println(len(kept))
        }
    """,
    "nodejs": """
        const kept = [];
        for (let i = 0; i < MIB; i++) kept.push(Buffer.alloc(1 << 20, 1));
        console.log(kept.length);
    """,
}


@pytest.mark.slow
@pytest.mark.parametrize("language", sorted(HOGS))
def test_a_runtime_that_reserves_address_space_is_held_to_memory_mb(language: str) -> None:
    if language not in AVAILABLE:
        pytest.skip(f"no toolchain for {language}")
    source = textwrap.dedent(HOGS[language])
    over = run_program(source.replace("MIB", "400"), language=language, memory_mb=256, timeout=20)
    assert over.status == "memory", over
    under = run_program(source.replace("MIB", "64"), language=language, memory_mb=256, timeout=20)
    assert (under.status, under.stdout) == ("passed", "64\n"), under


@pytest.mark.slow
def test_pandas_strings_then_matplotlib_fit_the_default_address_space() -> None:
    """pyarrow (pandas' string dtype) allocates with malloc in a run (the server's
    ``ARROW_DEFAULT_MEMORY_POOL``): its default mimalloc reserves 1 GiB of address space at the
    first string column, and under ``RLIMIT_AS`` (512 MiB by default) matplotlib's extension
    modules then failed to map (``ImportError``)."""
    pytest.importorskip("pandas")
    pytest.importorskip("matplotlib")
    program = textwrap.dedent("""
        import pandas as pd
        frame = pd.DataFrame({"name": ["a", "b"], "n": [1, 2]})
        assert frame["name"].str.upper().tolist() == ["A", "B"]
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        ax = frame.plot(kind="bar", x="name", y="n")
        assert len(ax.patches) == 2
        print("ok")
    """)
    result = run_python(program, timeout=60)
    assert result.status == "passed", result.stdout_tail[-2000:]
    assert result.stdout_tail.endswith("ok\n")
