"""The sandbox against ordinary and hostile programs (no Ray needed).

Every hostile program must get its status within its timeout plus one second of its own time
(wall-clock time minus the time the machine made it wait for a CPU, so these hold on a loaded
machine too; in wall-clock time, within the sandbox's starvation cap), and the caller must stay
alive and able to run the next program. The fork bombs are bounded by their own
code (at most ~2000 processes even with no limit at all), so a broken limit cannot take the
machine down.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from asyncpool.sandbox import (
    MAX_PROCESSES,
    OUTPUT_TAIL_BYTES,
    SandboxResult,
    _zygote_child,
    _zygote_wire,
    run_program,
    run_python,
    run_python_async,
    run_python_bare,
    run_stdio,
    run_tests,
)
from asyncpool.sandbox import _run as _sandbox_run
from asyncpool.sandbox._zygote_wire import HELD_PROCESSES
from tests._programs import FLAT_FORK_BOMB
from tests.conftest import async_wait_for, wait_for

ROOT = os.geteuid() == 0
root_only = pytest.mark.skipif(not ROOT, reason="uid separation needs the caller to be root")


def _within(timeout: float) -> float:
    """The longest a run of ``timeout`` may take in wall-clock time on a loaded machine."""
    return _zygote_wire.hard_wall_cap(timeout) + 2.0


def _run_timed(program: str, **kwargs: float) -> tuple[SandboxResult, float]:
    start = time.monotonic()
    result = run_python(textwrap.dedent(program), **kwargs)  # type: ignore[arg-type]
    return result, time.monotonic() - start


def _proc_status(pid: str) -> dict[str, str]:
    try:
        with open(f"/proc/{pid}/status") as fh:
            return dict(line.rstrip("\n").split(":\t", 1) for line in fh if ":\t" in line)
    except OSError:
        return {}


def _live_processes() -> Iterator[tuple[int, dict[str, str]]]:
    for name in os.listdir("/proc"):
        if name.isdigit():
            status = _proc_status(name)
            if status and not status.get("State", "").startswith("Z"):
                yield int(name), status


def _processes_of_uid(uid: int) -> list[int]:
    return [pid for pid, st in _live_processes() if int(st["Uid"].split()[0]) == uid]


def _program_processes() -> list[int]:
    """Live children of this process's fork server that run a program (not its helpers: the
    root ones, and the long-lived judges under ``JUDGE_UID`` that outlive a check by design)."""
    zpid = _sandbox_run.zygote_pid()
    if zpid is None:
        return []
    return [
        pid
        for pid, st in _live_processes()
        if st.get("PPid") == str(zpid)
        and (not ROOT or int(st["Uid"].split()[0]) not in (0, _zygote_wire.JUDGE_UID))
    ]


def _zombie_children_of_fork_server() -> list[int]:
    zpid = str(_sandbox_run.zygote_pid())
    out = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            st = _proc_status(name)
            if st.get("PPid") == zpid and st.get("State", "").startswith("Z"):
                out.append(int(name))
    return out


def _first_line_uid(result: SandboxResult) -> int:
    return int(result.stdout_tail.split()[0])


@pytest.fixture(autouse=True)
def _caller_still_works() -> Iterator[None]:
    """After every test: the caller is alive and the next program runs normally."""
    yield
    result = run_python("print('next')")
    assert result.status == "passed", result
    assert result.stdout_tail == "next\n"


# -- ordinary programs ----------------------------------------------------------------------


def test_passing_program_is_passed_with_its_output() -> None:
    result = run_python("from typing import List\nprint('hello', sum([1, 2]))")
    assert result == SandboxResult("passed", 0, "hello 3\n", result.duration)
    assert 0 < result.duration < 5


def test_assertion_failure_is_failed_with_the_traceback() -> None:
    result = run_python("def f():\n    return 1\nassert f() == 2, 'wrong'\n")
    assert result.status == "failed"
    assert result.returncode == 1
    assert "AssertionError: wrong" in result.stdout_tail
    assert 'File "<program>", line 3' in result.stdout_tail


@pytest.mark.parametrize(
    ("program", "returncode", "tail"),
    [
        ("import sys\nsys.exit(4)", 4, ""),
        ("import sys\nsys.exit('boom')", 1, "boom\n"),
        ("raise SystemExit(None)", 0, ""),
        ("def f(:\n  pass", 1, "SyntaxError"),
        ("input()", 1, "EOFError"),
        # site's builtins, as under `python program.py` (the fork server runs with -S)
        ("print(5)\nexit()", 0, "5\n"),
        ("quit(3)", 3, ""),
        ("exit('bye')", 1, "bye\n"),
    ],
)
def test_exit_statuses_follow_cpython(program: str, returncode: int, tail: str) -> None:
    result = run_python(program)
    assert result.returncode == returncode
    assert result.status == ("passed" if returncode == 0 else "failed")
    assert tail in result.stdout_tail


def test_program_runs_as_main_module_with_threads_joined_and_atexit_run() -> None:
    program = """
        import atexit, pickle, sys, threading, time
        def square(x):
            return x * x
        assert __name__ == "__main__" and sys.modules["__main__"].square is square
        assert pickle.loads(pickle.dumps(square))(3) == 9
        atexit.register(lambda: print("atexit ran"))
        threading.Thread(target=lambda: (time.sleep(0.05), print("thread joined"))).start()
    """
    result, _ = _run_timed(program)
    assert result.status == "passed", result
    assert result.stdout_tail == "thread joined\natexit ran\n"


def test_a_program_is_main_py_beside_its_files_as_python_main_py_runs_it() -> None:
    """The program is written as ``main.py`` in its working directory, which is first on
    ``sys.path``, and ``__file__`` and ``sys.argv[0]`` name it: ``os.path.dirname(__file__)``
    finds the files it was given, ``import helper`` one of them and ``open(__file__)`` its own
    text, as ``python main.py`` beside them (a NameError and a ModuleNotFoundError before). A
    given ``main.py`` is left as it is: the program is then ``__program__.py``."""
    program = textwrap.dedent("""
        import os, sys
        import helper
        here = os.path.dirname(os.path.abspath(__file__))
        assert here == os.getcwd() and sys.path[0] == here, (here, sys.path[0])
        assert sys.argv == [__file__] and os.path.basename(__file__) == NAME
        assert open(__file__).read().startswith("\\nimport os, sys")
        print(helper.VALUE, open(os.path.join(here, "data.txt")).read())
    """)
    files = {"helper.py": b"VALUE = 42\n", "data.txt": b"hello"}
    for name, extra in (("main.py", {}), ("__program__.py", {"main.py": b"mine"})):
        given = program.replace("NAME", repr(name))
        result = run_program(given, files={**files, **extra}, timeout=10)
        assert (result.status, result.stdout) == ("passed", "42 hello\n"), result


@pytest.mark.slow
@pytest.mark.parametrize("method", ["spawn", "forkserver"])
def test_a_program_whose_pool_spawns_its_workers_runs_as_under_python_main_py(
    method: str,
) -> None:
    """``multiprocessing``'s spawn and forkserver workers run the main module's file again:
    with a ``__file__`` that named no file every worker failed and the run waited to its time
    limit (helper 42's probe)."""
    program = textwrap.dedent(f"""
        import math, multiprocessing as mp
        if __name__ == "__main__":
            with mp.get_context({method!r}).Pool(2) as pool:
                print(sum(pool.map(math.factorial, range(5))))
    """)
    result = run_stdio(program, [("", "34\n")], timeout=20, memory_mb=1024)
    assert result.verdict == "accepted", result


def test_annotations_are_evaluated_as_python_does_without_a_future_import() -> None:
    """The program is compiled without inheriting the sandbox's own ``from __future__ import
    annotations``: its annotations are objects, as under ``python prog.py``, and a name an
    annotation uses must exist."""
    program = """
        from dataclasses import dataclass, fields
        def f(x: int) -> list[int]:
            return [x]
        @dataclass
        class P:
            x: int
        assert f.__annotations__ == {"x": int, "return": list[int]}, f.__annotations__
        assert fields(P)[0].type is int
        try:
            def g(x: NotDefinedAnywhere): pass
        except NameError:
            print("evaluated")
    """
    result, _ = _run_timed(program)
    assert result.status == "passed", result
    assert result.stdout_tail == "evaluated\n"


def test_unicode_output_round_trips() -> None:
    result = run_python("print('h\\u00e9llo \\u2713')")
    assert result.stdout_tail == "h\u00e9llo \u2713\n"


STREAMS = """
import sys
def shape(s):
    raw = s.buffer.raw
    return (s.fileno(), s.encoding, s.errors, s.line_buffering, s.write_through, s.seekable(),
            s.isatty(), raw.closefd, raw._blksize, type(s).__name__)
print(shape(sys.stdout), shape(sys.stderr), file=sys.stderr)
sys.stdout.reconfigure(encoding="latin-1", line_buffering=True)
"""


def test_the_programs_stdout_and_stderr_are_fresh_text_streams_over_its_own_fds() -> None:
    # What open(1, "w", encoding="utf-8", errors="surrogateescape", closefd=False) and
    # open(2, ..., buffering=1, errors="backslashreplace") make in the child (CPython's own
    # under the C.UTF-8 locale): over pipes (run_python) and with stdout a memory file
    # (run_program: seekable, stderr too); a change one program makes is not the next's.
    out = "(1, 'utf-8', 'surrogateescape', False, False, {}, False, False, 4096, 'TextIOWrapper')"
    err = "(2, 'utf-8', 'backslashreplace', True, False, {}, False, False, 4096, "
    err += "'TextIOWrapper')"
    for _ in range(2):
        python = run_python(STREAMS)
        assert python.status == "passed", python
        assert python.stdout_tail == f"{out.format(False)} {err.format(False)}\n"
        program = run_program(STREAMS)
        assert program.status == "passed", program
        assert program.stderr == f"{out.format(True)} {err.format(True)}\n"


def test_a_caller_with_its_stderr_closed_still_gets_its_programs_output(tmp_path: Path) -> None:
    # A daemonized caller may have no fd 2: its fork server starts without one, and the
    # streams it makes for its children (premade_streams) must not depend on it.
    script = tmp_path / "caller.py"
    script.write_text(
        "import os, sys\n"
        "os.close(2)\n"
        f"sys.path.insert(0, {str(Path(__file__).resolve().parents[1])!r})\n"
        "from asyncpool.sandbox import run_python, run_tests\n"
        "program = 'import sys\\nprint(\"out\", flush=True)\\nprint(\"err\", file=sys.stderr)'\n"
        "print(repr(run_python(program).stdout_tail))\n"
        "print(run_tests('def f():\\n    return 1\\n', 'assert f() == 1').status)\n"
    )
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done
    assert done.stdout.splitlines() == ["'out\\nerr\\n'", "passed"]


def test_stdout_tail_is_capped_to_the_last_bytes() -> None:
    result = run_python("for i in range(100_000):\n    print(i)\n")
    assert result.status == "passed"
    assert len(result.stdout_tail.encode()) <= OUTPUT_TAIL_BYTES
    assert len(result.stdout_tail.encode()) > OUTPUT_TAIL_BYTES - 10
    assert result.stdout_tail.endswith("\n99998\n99999\n")


def test_stderr_and_stdout_share_the_tail() -> None:
    result = run_python("import sys\nprint('out', flush=True)\nprint('err', file=sys.stderr)")
    assert result.stdout_tail == "out\nerr\n"


def test_private_tmp_is_the_working_directory_and_removed_after() -> None:
    program = """
        import os, tempfile
        print(os.getcwd(), sorted(os.listdir(".")), sorted(os.listdir("/dev/shm")))
        with open("data.txt", "w") as fh:
            fh.write("x" * 1000)
        os.mkdir("sub")
        open("sub/more", "w").close()
        open("/dev/shm/left", "w").close()
        assert tempfile.gettempdir() == os.getcwd()
        assert "HOME" not in os.environ
    """
    for _ in range(2):  # the second run sees nothing of the first, only its own program
        result, _ = _run_timed(program)
        assert result.status == "passed", result
        cwd, *listings = result.stdout_tail.split(maxsplit=1)
        assert listings == ["['main.py'] []\n"]
        if ROOT:
            assert cwd == "/tmp"
        assert not os.path.exists(cwd) or cwd == "/tmp"
    if ROOT:  # nothing of the runs reached the machine's /tmp or /dev/shm
        assert not os.path.exists("/tmp/data.txt")
        assert not os.path.exists("/dev/shm/left")


def test_a_check_sharing_files_leaves_no_directory_and_the_next_check_starts_empty() -> None:
    # The tests use files (their judge shares the run's directory): what both sides wrote
    # there, and the run's own path to it, are gone with the run; the next check sees nothing.
    solution = "import os\ndef files():\n    return sorted(os.listdir('.'))\n"
    solution += "def where():\n    print(os.getcwd(), flush=True)\n    return os.getcwd()\n"
    tests = """
        import os
        assert where() == os.getcwd()  # one directory, by one path
        assert sorted(os.listdir(".")) == files()
        mine = [n for n in files() if not n.startswith("asyncpool-sandbox-")]
        assert mine == [], mine
        with open("left.txt", "w") as fh:
            fh.write("x")
        os.mkdir("sub")
        assert "left.txt" in files() and "sub" in files()
    """
    for _ in range(2):  # the second check sees nothing of the first
        result = run_tests(solution, textwrap.dedent(tests), timeout=30)
        assert result.status == "passed", result.stdout_tail
    if ROOT:  # the run's directory, seen from the fork server's namespace, is gone
        server = _sandbox_run._get_zygote().proc.pid
        workdir = result.stdout_tail.split()[0]  # the solution's print
        assert workdir.startswith("/tmp/asyncpool-sandbox-"), result.stdout_tail
        assert os.path.isdir(f"/proc/{server}/root/tmp")
        assert not os.path.exists(f"/proc/{server}/root{os.path.dirname(workdir)}")


def test_shared_dirs_name_the_runs_path_inside_its_own_tmp() -> None:
    assert _zygote_wire.shared_dirs("/tmp/asyncpool-sandbox-7-x/3/tmp") == [
        "asyncpool-sandbox-7-x/3/tmp", "asyncpool-sandbox-7-x/3", "asyncpool-sandbox-7-x",
    ]  # fmt: skip
    assert _zygote_wire.shared_dirs("/var/scratch/3/tmp") == []


# -- hostile programs ----------------------------------------------------------------------


def test_infinite_loop_times_out_within_timeout_plus_one_second() -> None:
    result, elapsed = _run_timed("while True:\n    pass\n", timeout=2.0)
    assert result.status == "timeout"
    assert result.returncode == -signal.SIGKILL
    assert 2.0 <= result.duration <= 3.0
    assert 2.0 <= elapsed <= _within(2.0)


def test_sleeping_program_times_out_on_wall_clock() -> None:
    result, elapsed = _run_timed(
        "import time\nprint('start', flush=True)\ntime.sleep(60)", timeout=1
    )
    assert result.status == "timeout"
    assert result.stdout_tail == "start\n"
    assert 1.0 <= result.duration <= 2.0
    assert 1.0 <= elapsed <= _within(1.0)


def test_cpu_limit_signal_is_reported_as_timeout() -> None:
    result = run_python("import os, signal\nos.kill(os.getpid(), signal.SIGXCPU)")
    assert result.status == "timeout"
    assert result.returncode == -signal.SIGXCPU


def test_one_allocation_past_all_reason_is_a_memory_error_and_memory() -> None:
    result, elapsed = _run_timed("x = bytearray(10**10)", timeout=5, memory_mb=256)
    assert result.status == "memory", result
    assert result.returncode == 1
    assert "MemoryError" in result.stdout_tail
    assert elapsed <= _within(5.0)


def test_a_growing_memory_bomb_is_memory() -> None:
    """Stopped by the run's memory cgroup where the host has a memory controller (killed: see
    test_sandbox_memory), else by ``RLIMIT_AS`` (an uncaught ``MemoryError``)."""
    program = "chunks = []\nwhile True:\n    chunks.append(bytearray(10**7))"
    result, elapsed = _run_timed(program, timeout=5, memory_mb=256)
    assert result.status == "memory", result
    assert (result.returncode, "MemoryError" in result.stdout_tail) in ((-9, False), (1, True))
    assert elapsed <= _within(5.0)


def test_memory_limit_leaves_room_for_ordinary_programs() -> None:
    result = run_python("x = bytearray(100 * 2**20)\nprint(len(x))", memory_mb=256)
    assert result.status == "passed", result


def test_flat_fork_bomb_is_stopped_at_the_process_limit() -> None:
    result, elapsed = _run_timed(FLAT_FORK_BOMB, timeout=10)
    assert result.status == "passed", result
    forks = int(result.stdout_tail.split()[1])
    # MAX_PROCESSES, or more where the run's memory cgroup holds it (see test_sandbox_memory)
    assert 1 <= forks <= max(MAX_PROCESSES, HELD_PROCESSES) - 1
    assert elapsed <= _within(10.0)
    # The sleeping children were in its process group: killed with it, and reaped.
    wait_for(lambda: not _processes_of_uid(_first_line_uid(result)))
    wait_for(lambda: not _zombie_children_of_fork_server())


def test_tree_fork_bomb_is_killed_whole_on_timeout() -> None:
    # Every process forks again, 10 levels deep: at most 1024 processes even without a limit.
    program = """
        import os, time
        print(os.getuid(), flush=True)
        for depth in range(10):
            try:
                os.fork()
            except OSError:
                pass
        time.sleep(60)
    """
    result, elapsed = _run_timed(program, timeout=2)
    assert result.status == "timeout"
    assert elapsed <= _within(2.0)
    wait_for(lambda: not _processes_of_uid(_first_line_uid(result)))
    wait_for(lambda: not _zombie_children_of_fork_server())


def test_os_exit_with_odd_code_is_failed() -> None:
    result, elapsed = _run_timed("import os\nprint('bye', flush=True)\nos._exit(3)")
    assert (result.status, result.returncode, result.stdout_tail) == ("failed", 3, "bye\n")
    assert elapsed <= _within(10.0)


def test_killing_itself_by_signal_is_crashed() -> None:
    result = run_python("import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)")
    assert (result.status, result.returncode) == ("crashed", -signal.SIGSEGV)


def test_killing_the_parent_does_not_stop_the_caller() -> None:
    pid_before = _sandbox_run.zygote_pid()
    result, elapsed = _run_timed("import os, signal\nos.kill(os.getppid(), signal.SIGKILL)")
    assert elapsed <= _within(10.0)
    if ROOT:  # the program runs under another uid: it may not signal its parent
        assert result.status == "failed"
        assert "PermissionError" in result.stdout_tail
        assert _sandbox_run.zygote_pid() == pid_before
    else:  # it kills the fork server, which is replaced
        assert result.status == "crashed"


@root_only
def test_kill_minus_one_reaches_only_the_programs_own_processes() -> None:
    pid_before = _sandbox_run.zygote_pid()
    result = run_python("import os, signal\nos.kill(-1, signal.SIGKILL)\nprint('alive')")
    assert result.status == "passed"
    assert _sandbox_run.zygote_pid() == pid_before


@root_only
def test_process_escaping_its_group_is_killed_after_the_run() -> None:
    program = """
        import os, time
        print(os.getuid(), flush=True)
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                time.sleep(60)
            os._exit(0)
    """
    result, _ = _run_timed(program)
    assert result.status == "passed"
    uid = _first_line_uid(result)
    wait_for(lambda: not _processes_of_uid(uid))


@root_only
def test_escaped_process_writing_forever_does_not_hold_the_caller() -> None:
    program = """
        import os, sys, time
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                deadline = time.monotonic() + 20
                while time.monotonic() < deadline:
                    sys.stdout.write("y" * 4096)
            os._exit(0)
        time.sleep(0.2)
    """
    result, elapsed = _run_timed(program, timeout=5)
    assert result.status == "passed"
    assert elapsed <= _within(5.0)
    # The writer was re-parented to the fork server (a subreaper); it is killed and reaped.
    wait_for(lambda: not _program_processes())
    wait_for(lambda: not _zombie_children_of_fork_server())


def test_gigabyte_of_output_is_read_and_discarded() -> None:
    program = "import sys\nfor _ in range(1000):\n    sys.stdout.write('x' * 10**6)\nprint('end')"
    result, elapsed = _run_timed(program, timeout=20)
    assert result.status == "passed", result
    assert result.stdout_tail == "x" * (OUTPUT_TAIL_BYTES - 4) + "end\n"
    assert elapsed <= _within(20.0)


def test_writing_a_huge_file_is_stopped_by_the_file_size_limit() -> None:
    program = """
        with open("big", "wb") as fh:
            for _ in range(1000):
                fh.write(b"x" * 10**6)
    """
    result, elapsed = _run_timed(program, timeout=5)
    assert result.status == "failed"
    assert "File too large" in result.stdout_tail
    assert elapsed <= _within(5.0)


def test_environment_secrets_are_not_visible(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASYNCPOOL_TEST_SECRET", "s3cret")
    program = f"""
        import os
        print(repr(os.environ.get("ASYNCPOOL_TEST_SECRET")), sorted(os.environ))
        try:
            print(open("/proc/{os.getpid()}/environ", "rb").read())
        except OSError as exc:
            print(type(exc).__name__)
    """
    result, _ = _run_timed(program)
    assert result.status == "passed"
    assert "s3cret" not in result.stdout_tail
    assert result.stdout_tail.startswith("None ")
    if ROOT:  # another uid's process: invisible in the sandbox's /proc
        assert "FileNotFoundError" in result.stdout_tail or "PermissionError" in result.stdout_tail


@root_only
def test_program_runs_unprivileged_and_cannot_read_roots_files() -> None:
    program = """
        import os
        print(os.getuid(), os.getgid(), os.getgroups())
        try:
            open("/proc/1/environ").read()
        except (PermissionError, FileNotFoundError):
            print("denied")
    """
    result, _ = _run_timed(program)
    uid, gid, *_ = result.stdout_tail.split()
    assert _zygote_wire.UID_BASE <= int(uid) < _zygote_wire.UID_BASE + _zygote_wire.UID_COUNT
    assert uid == gid
    assert result.stdout_tail.endswith("[]\ndenied\n")


# -- the caller's side -----------------------------------------------------------------------


@pytest.mark.slow
def test_concurrent_calls_from_8_threads_are_all_correct() -> None:
    programs = {
        "passed": "import math\nprint(math.factorial(5))",
        "failed": "assert 1 + 1 == 3",
        "timeout": "while True:\n    pass",
        "memory": "x = bytearray(10**10)",
    }
    results: dict[int, tuple[str, SandboxResult]] = {}

    def worker(i: int) -> None:
        for j in range(6):
            expected = list(programs)[(i + j) % len(programs)]
            results[i * 100 + j] = (expected, run_python(programs[expected], timeout=1))

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    start = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 48
    for expected, result in results.values():
        assert result.status == expected, result
        if expected == "passed":
            assert result.stdout_tail == "120\n"
    assert time.monotonic() - start < 6 * _within(1.0)  # six runs in a row per thread


def test_fork_server_is_restarted_after_being_killed() -> None:
    assert run_python("pass").status == "passed"
    old = _sandbox_run.zygote_pid()
    assert old is not None
    os.kill(old, signal.SIGKILL)
    result = run_python("print('again')")
    assert (result.status, result.stdout_tail) == ("passed", "again\n")
    new = _sandbox_run.zygote_pid()
    assert new is not None
    assert new != old


def test_fork_server_exits_when_its_caller_is_killed(tmp_path: Path) -> None:
    script = tmp_path / "caller.py"
    script.write_text(
        "import sys, time\n"
        f"sys.path.insert(0, {str(Path(__file__).resolve().parents[1])!r})\n"
        "from asyncpool import sandbox\n"
        "from asyncpool.sandbox import _run as _sandbox_run\n"
        "sandbox.run_python('pass')\n"
        "print(_sandbox_run.zygote_pid(), flush=True)\n"
        "time.sleep(60)\n"
    )
    command = [sys.executable, str(script)]
    with subprocess.Popen(command, stdout=subprocess.PIPE, text=True) as caller:
        try:
            assert caller.stdout is not None
            server = int(caller.stdout.readline())
            assert _proc_status(str(server))
        finally:
            caller.kill()
    gone = ("", "Z")
    wait_for(lambda: _proc_status(str(server)).get("State", "")[:1] in gone)


def test_count_of_user_tasks_for_the_unprivileged_fallback() -> None:
    assert _zygote_child.count_user_tasks(os.getuid()) >= threading.active_count()
    assert _zygote_child.count_user_tasks(_zygote_wire.JUDGE_UID + 1) == 0  # a uid no process has


def test_bare_run_forks_without_limits() -> None:
    result = run_python_bare("import os, resource\nprint(os.getuid(), os.getcwd())")
    assert result.status == "passed"
    assert result.stdout_tail.split() == [str(os.getuid()), "/"]
    assert run_python_bare("assert False").status == "failed"


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"program": b"print(1)"}, TypeError),
        ({"program": None}, TypeError),
        ({"program": "pass", "timeout": 0}, ValueError),
        ({"program": "pass", "timeout": -1.0}, ValueError),
        ({"program": "pass", "timeout": float("nan")}, ValueError),
        ({"program": "pass", "timeout": "1"}, TypeError),
        ({"program": "pass", "memory_mb": 15}, ValueError),
        ({"program": "pass", "memory_mb": 64.0}, TypeError),
    ],
)
def test_bad_arguments_raise_before_anything_runs(kwargs: dict[str, object], error: type) -> None:
    program = kwargs.pop("program")
    with pytest.raises(error):
        run_python(program, **kwargs)  # type: ignore[arg-type]
    with pytest.raises(error):
        asyncio.run(run_python_async(program, **kwargs))  # type: ignore[arg-type]


@pytest.mark.asyncio
async def test_async_wrapper_runs_programs_concurrently() -> None:
    results = await asyncio.gather(
        *(run_python_async(f"import time\ntime.sleep(0.3)\nprint({i})") for i in range(4))
    )
    assert [r.stdout_tail for r in results] == ["0\n", "1\n", "2\n", "3\n"]
    assert all(r.status == "passed" for r in results)


@pytest.mark.asyncio
async def test_cancelling_the_async_wrapper_kills_the_program() -> None:
    await run_python_async("pass")  # make sure the fork server runs
    task = asyncio.ensure_future(run_python_async("import time\ntime.sleep(60)", timeout=60))
    await async_wait_for(_program_processes)
    start = time.monotonic()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await async_wait_for(lambda: not _program_processes())
    assert time.monotonic() - start < 60  # killed, not slept out
