"""CPU lanes (:mod:`asyncpool.sandbox._cpu_lanes`): a judged run's CPU is one no other fork
server's run holds.

Record locks belong to a process, so "another fork server" is another process here: a helper
interpreter holding lanes, or the test process itself when the fork server is the other side.
The end-to-end cases start a fork server of their own in a fresh interpreter, on a lock file of
their own (``ASYNCPOOL_SANDBOX_CPU_LANES``), so that fork servers of other test sessions on this
machine cannot take part.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from asyncpool.sandbox import _cpu_lanes
from asyncpool.sandbox._cpu_lanes import CpuLanes

# The holder loads the module by path in a bare interpreter (it is standard library only, as
# the fork server loads it): no ``asyncpool`` import, hence no Ray, in each helper.
_HOLDER = """
import importlib.util, sys
spec = importlib.util.spec_from_file_location("_cpu_lanes", {module!r})
lanes_module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(lanes_module)
lanes = lanes_module.CpuLanes({cpus!r}, {path!r})
taken = [lanes.take() for _ in range({count})]
print(" ".join(map(str, taken)), "/", " ".join(map(str, sorted(lanes.locked))), flush=True)
sys.stdin.read()  # hold the lanes until the test closes stdin (or kills this process)
"""

_PROBE = """
import fcntl, os, sys
fd = os.open({path!r}, os.O_RDWR | os.O_CREAT, 0o600)
free = []
for cpu in {cpus!r}:
    try:
        fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, cpu)
    except OSError:
        continue
    free.append(cpu)
print(" ".join(map(str, free)))
"""


def _lockable(path: Path, cpus: list[int]) -> list[int]:
    """The lanes of ``cpus`` no process holds now, as a third process sees them."""
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-c", _PROBE.format(path=str(path), cpus=cpus)],
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    return [int(c) for c in done.stdout.split()]


class _Holder:
    """Another fork server's side: a process that took ``count`` lanes and holds them."""

    def __init__(self, path: Path, cpus: list[int], count: int = 1) -> None:
        code = _HOLDER.format(module=_cpu_lanes.__file__, cpus=cpus, path=str(path), count=count)
        self.proc = subprocess.Popen(
            [sys.executable, "-I", "-S", "-c", code],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        assert self.proc.stdout is not None
        taken, _, locked = self.proc.stdout.readline().partition("/")
        self.taken = [int(c) for c in taken.split()]
        self.locked = [int(c) for c in locked.split()]
        assert len(self.taken) == count

    def kill(self) -> None:
        self.proc.kill()
        self.proc.wait(timeout=30)
        assert self.proc.stdin is not None
        assert self.proc.stdout is not None
        self.proc.stdin.close()
        self.proc.stdout.close()


@pytest.fixture
def holders() -> Iterator[list[_Holder]]:
    made: list[_Holder] = []
    yield made
    for holder in made:
        if holder.proc.poll() is None:
            holder.kill()


def test_a_lane_another_server_holds_is_not_taken_and_is_free_once_that_server_dies(
    tmp_path: Path, holders: list[_Holder]
) -> None:
    path = tmp_path / "lanes"
    holder = _Holder(path, [0, 1])
    holders.append(holder)
    assert holder.locked == holder.taken
    ours = CpuLanes([0, 1], str(path))
    other = 1 - holder.taken[0]
    assert ours.take() == other
    assert ours.locked == {other}
    assert _lockable(path, [0, 1]) == []
    ours.give_back(other)
    assert _lockable(path, [0, 1]) == [other]
    # Killed, not closed cleanly: the kernel drops a dead process's record locks.
    holder.kill()
    assert _lockable(path, [0, 1]) == [0, 1]


def test_a_server_keeps_its_lane_while_nobody_else_wants_it(
    tmp_path: Path, holders: list[_Holder]
) -> None:
    path = tmp_path / "lanes"
    ours = CpuLanes([0, 1, 2, 3], str(path))
    first = ours.take()
    for _ in range(5):
        ours.give_back(first)
        assert ours.take() == first
    ours.give_back(first)
    holders.append(_Holder(path, [first, (first + 1) % 4]))
    assert holders[0].locked == [first]
    moved = ours.take()
    assert moved != first
    assert ours.locked == {moved}


def test_concurrent_runs_of_one_server_take_different_lanes_then_share_the_least_used(
    tmp_path: Path,
) -> None:
    path = tmp_path / "lanes"
    ours = CpuLanes([0, 1, 2], str(path))
    taken = [ours.take() for _ in range(3)]
    assert sorted(taken) == [0, 1, 2]
    assert ours.locked == {0, 1, 2}
    fourth = ours.take()  # every CPU has one run of this server: one of them gets a second
    assert ours.held == {0: 1, 1: 1, 2: 1, fourth: 2}
    spare = next(cpu for cpu in taken if cpu != fourth)
    ours.give_back(spare)
    assert _lockable(path, [0, 1, 2]) == [spare]
    assert ours.take() == spare  # the lane a run left is the least used again
    for cpu in [*taken, fourth]:
        ours.give_back(cpu)
    assert ours.held == {}
    assert ours.locked == set()
    assert _lockable(path, [0, 1, 2]) == [0, 1, 2]


def test_when_every_lane_is_held_elsewhere_the_run_still_gets_one_and_nothing_waits(
    tmp_path: Path, holders: list[_Holder]
) -> None:
    path = tmp_path / "lanes"
    holder = _Holder(path, [0, 1], count=2)
    holders.append(holder)
    assert holder.locked == [0, 1]
    ours = CpuLanes([0, 1], str(path))
    a, b = ours.take(), ours.take()
    assert {a, b} == {0, 1}  # shared, the one this server uses least in turn
    assert ours.locked == set()
    ours.give_back(a)
    ours.give_back(b)
    holder.kill()
    taken = ours.take()
    assert ours.locked == {taken}
    assert _lockable(path, [0, 1]) == [1 - taken]


def test_a_lock_file_behind_a_symlink_is_not_used_and_lanes_are_round_robin(
    tmp_path: Path,
) -> None:
    target = tmp_path / "elsewhere"
    target.write_bytes(b"")
    link = tmp_path / "lanes"
    link.symlink_to(target)
    lanes = CpuLanes([0, 1], str(link))
    assert lanes.fd == -1
    assert lanes.refused  # the server says so on stderr
    turns = []
    for _ in range(4):
        cpu = lanes.take()
        turns.append(cpu)
        lanes.give_back(cpu)
    assert turns == [0, 1, 0, 1]
    assert _lockable(target, [0, 1]) == [0, 1]


@pytest.mark.skipif(os.geteuid() != 0, reason="making a file of another uid needs root")
def test_a_lock_file_of_another_uid_is_not_used(tmp_path: Path) -> None:
    path = tmp_path / "lanes"
    path.write_bytes(b"")
    os.chown(path, 65534, 65534)
    assert CpuLanes([0, 1], str(path)).fd == -1


def test_one_cpu_needs_no_lock_file(tmp_path: Path) -> None:
    lanes = CpuLanes([3], str(tmp_path / "lanes"))
    assert lanes.fd == -1
    assert not lanes.refused
    assert [lanes.take(), lanes.take()] == [3, 3]
    assert not (tmp_path / "lanes").exists()


# -- end to end: the fork server pins a judged run's solution to its lane ------------------------

_END_TO_END = """
import fcntl, json, os, sys
from asyncpool.sandbox import run_tests

path = os.environ["ASYNCPOOL_SANDBOX_CPU_LANES"]
cpus = sorted(os.sched_getaffinity(0))[:2]
# The fork server (started by the first check) inherits this: its lanes are these two CPUs,
# however many the machine has.
os.sched_setaffinity(0, cpus)
solution = "import os\\ndef cpus():\\n    return sorted(os.sched_getaffinity(0))\\n"

def on(cpu):
    return run_tests(solution, f"assert cpus() == [{{cpu}}]").status

out = {{}}
if {lanes_on!r}:
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    for held, free in ((cpus[0], cpus[1]), (cpus[1], cpus[0])):
        # This process holds a lane, as another fork server with a run on it would.
        fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, held)
        out[f"held {{held}}"] = [on(free), on(held)]
        fcntl.lockf(fd, fcntl.LOCK_UN, 1, held)
else:
    fd = os.open({other!r}, os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, cpus[0])
    out["round-robin"] = [on(cpus[0]), on(cpus[1]), on(cpus[0])]
print(json.dumps(out))
"""


def _fresh_caller(code: str, lanes: str, cwd: Path | None = None) -> tuple[str, str]:
    """Run ``code`` in a fresh interpreter (its own fork server) with
    ``ASYNCPOOL_SANDBOX_CPU_LANES=lanes``; its last line of stdout, and its stderr."""
    env = {**os.environ, "ASYNCPOOL_SANDBOX_CPU_LANES": lanes}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env,
        check=False, cwd=cwd,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1], done.stderr


def _end_to_end(lanes: str, lanes_on: bool, other: str, cwd: Path | None = None) -> Any:
    code = textwrap.dedent(_END_TO_END.format(lanes_on=lanes_on, other=other))
    return json.loads(_fresh_caller(code, lanes, cwd)[0])


needs_two_cpus = pytest.mark.skipif(
    len(os.sched_getaffinity(0)) < 2, reason="lanes need two CPUs"
)


@needs_two_cpus
@pytest.mark.parametrize("relative", [False, True], ids=["absolute path", "relative path"])
def test_a_judged_run_is_pinned_to_the_cpu_no_other_server_holds(
    tmp_path: Path, relative: bool
) -> None:
    # A relative ASYNCPOOL_SANDBOX_CPU_LANES is the caller's, though the server runs in /.
    if relative:
        out = _end_to_end("lanes", True, "", cwd=tmp_path)
    else:
        out = _end_to_end(str(tmp_path / "lanes"), True, "")
    assert out == {key: ["passed", "failed"] for key in out}
    assert len(out) == 2


@needs_two_cpus
def test_a_lock_file_the_server_cannot_use_is_said_on_stderr_and_checks_still_run(
    tmp_path: Path,
) -> None:
    (tmp_path / "elsewhere").write_bytes(b"")
    (tmp_path / "lanes").symlink_to(tmp_path / "elsewhere")
    code = (
        "from asyncpool.sandbox import run_tests;"
        "print(run_tests('def f():\\n    return 1\\n', 'assert f() == 1').status)"
    )
    last, stderr = _fresh_caller(code, str(tmp_path / "lanes"))
    assert last == "passed"
    assert f"no CPU lanes ({tmp_path / 'lanes'} is not a usable lock file)" in stderr


@needs_two_cpus
def test_with_lanes_off_each_server_goes_round_robin_whatever_others_hold(
    tmp_path: Path,
) -> None:
    out = _end_to_end("0", False, str(tmp_path / "lanes"))
    assert out == {"round-robin": ["passed", "passed", "passed"]}
