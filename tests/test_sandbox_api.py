"""``run_tests``, ``run_stdio`` and ``run_program`` on honest programs, and their argument
checks (no Ray needed; a real fork server and real sandboxed processes)."""

from __future__ import annotations

import textwrap
import threading
from typing import Any

import pytest

from asyncpool.sandbox import (
    OUTPUT_LIMIT_BYTES,
    ProgramResult,
    _zygote_child,
    normalize_output,
    run_program,
    run_stdio,
    run_tests,
)

ADD = "def add(a, b):\n    return a + b\n"
CHECK_ADD = (
    "def check(candidate):\n    assert candidate(1, 2) == 3\n    assert candidate(-1, 1) == 0\n"
)


def _d(text: str) -> str:
    return textwrap.dedent(text)


# -- run_tests -----------------------------------------------------------------------------------


def test_run_tests_passes_a_correct_solution_with_check_and_entry_point() -> None:
    result = run_tests(ADD, CHECK_ADD, entry_point="add")
    assert result.status == "passed", result
    assert 0 < result.duration < 5


def test_run_tests_fails_a_wrong_solution_and_says_why() -> None:
    result = run_tests("def add(a, b):\n    return a - b\n", CHECK_ADD, entry_point="add")
    assert result.status == "failed"
    assert "AssertionError" in result.stdout_tail


def test_run_tests_with_plain_asserts_calls_every_top_level_function() -> None:
    solution = _d("""
        import math
        def area(r):
            return math.pi * r * r
        def words(s):
            return s.split()
    """)
    tests = _d("""
        import math
        assert math.isclose(area(2), 12.566370614359172)
        assert words("a b  c") == ["a", "b", "c"]
    """)
    assert run_tests(solution, tests).status == "passed"
    assert run_tests(solution, tests + "assert words('x') == []\n").status == "failed"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("None", "None"),
        ("(1, [2.5, 'x'], {'k': b'v'})", "(1, [2.5, 'x'], {'k': b'v'})"),
        ("{1, 2}", "{2, 1}"),
        ("frozenset({'a'})", "frozenset({'a'})"),
        ("2 ** 200", "2 ** 200"),
        ("3 + 4j", "3 + 4j"),
        ("True", "True"),
        ("float('-inf')", "float('-inf')"),
        ("'\\u00e9\\u2713'", "'\\u00e9\\u2713'"),
    ],
)
def test_plain_data_of_every_builtin_type_crosses_exactly(value: str, expected: str) -> None:
    solution = f"def f():\n    return {value}\n"
    tests = f"r = f()\nassert r == {expected} and type(r) is type({expected}), r\n"
    assert run_tests(solution, tests).status == "passed"


def test_large_values_cross_intact_both_ways() -> None:
    solution = "def echo(x):\n    return [x, x[::-1]]\n"
    tests = _d("""
        big = "ab" * 3_000_000 + "\u00e9"
        assert echo(big) == [big, big[::-1]]
        many = list(range(20_000))
        assert echo(many) == [many, many[::-1]]
    """)
    assert run_tests(solution, tests, timeout=30).status == "passed"


def test_solution_exceptions_are_raised_as_builtin_types_in_the_tests() -> None:
    solution = _d("""
        def f(x):
            if x < 0:
                raise ValueError("negative")
            return x
        class Mine(Exception):
            pass
        def g():
            raise Mine("own type")
    """)
    tests = _d("""
        try:
            f(-1)
            raise AssertionError("no error")
        except ValueError as exc:
            assert str(exc) == "negative"
        try:
            g()
        except ValueError:
            raise AssertionError("wrong type")
        except Exception as exc:
            # as in-process: its class's name and its message
            assert type(exc).__name__ == "Mine" and str(exc) == "own type"
        assert f(3) == 3
    """)
    result = run_tests(solution, tests)
    assert result.status == "passed", result.stdout_tail


def test_a_solution_that_star_imports_builtins_and_typing_is_judged() -> None:
    # LiveCodeBench's imports (the /verify path): `from builtins import *` makes int, str...
    # top-level callables of the solution; built-in classes cross as the judge's own.
    solution = (
        "from builtins import *\nfrom typing import *\n"
        "def double(s: Text) -> List[Text]:\n    return [str(s), s]\n"
    )
    result = run_tests(solution, "assert double('a') == ['a', 'a'] and Text is str\n")
    assert result.status == "passed", result.stdout_tail


def test_names_the_tests_define_win_over_the_solutions() -> None:
    # HumanEval/32 style: the check calls a helper of the prompt; put the prompt in the tests.
    solution = "def poly(xs, x):\n    return 0\ndef find_zero(xs):\n    return 123.0\n"
    tests = _d("""
        def poly(xs, x):
            return sum(c * x ** i for i, c in enumerate(xs))
        def check(candidate):
            assert abs(poly([-1, 1], candidate([-1, 1]))) < 1e-6
    """)
    assert run_tests(solution, tests, entry_point="find_zero").status == "failed"
    honest = "def find_zero(xs):\n    return -xs[0] / xs[1]\n"
    assert run_tests(honest, tests, entry_point="find_zero").status == "passed"


def test_solution_output_is_kept_in_the_tail() -> None:
    result = run_tests("print('loading')\n" + ADD, CHECK_ADD, entry_point="add")
    assert result.status == "passed"
    assert result.stdout_tail.startswith("loading\n")


def test_what_the_solution_prints_in_its_calls_is_kept_in_the_tail_of_a_passed_check() -> None:
    # Printed to a pipe without a flush: block-buffered in the solution's process, which is
    # killed once the judge is done; the tail must still have it, as running it would.
    solution = "def add(a, b):\n    print('adding', a, b)\n    return a + b\n"
    result = run_tests(solution, "assert add(1, 2) == 3\nassert add(2, 2) == 4\n")
    assert result.status == "passed"
    assert result.stdout_tail == "adding 1 2\nadding 2 2\n", result.stdout_tail


def test_run_tests_from_many_threads_at_once() -> None:
    results: list[str] = []

    def one(i: int) -> None:
        solution = ADD if i % 2 == 0 else "def add(a, b):\n    return 0\n"
        results.append(f"{i % 2}:{run_tests(solution, CHECK_ADD, entry_point='add').status}")

    threads = [threading.Thread(target=one, args=(i,)) for i in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == ["0:passed"] * 8 + ["1:failed"] * 8


# -- run_stdio -----------------------------------------------------------------------------------

SUM = "import sys\nprint(sum(int(x) for x in sys.stdin.read().split()))\n"


def test_run_stdio_passes_when_every_case_matches_after_normalisation() -> None:
    result = run_stdio(SUM, [("1 2\n", "3\n"), (b"5 5 5", b"15   \r\n\n\n"), ("", "0")])
    assert result.status == "passed", result
    assert [c.status for c in result.cases] == ["passed"] * 3
    assert result.cases[1].stdout == "15\n"
    assert result.duration == pytest.approx(sum(c.duration for c in result.cases))


def test_run_stdio_accepts_a_program_that_stops_with_exit_after_its_answer() -> None:
    # Competitive-programming code stops with exit()/quit(), builtins only `site` adds.
    program = "n = int(input())\nif n < 0:\n    print(-1)\n    exit()\nprint(n * 2)\nquit()\n"
    result = run_stdio(program, [("-5\n", "-1\n"), ("4\n", "8\n")])
    assert result.status == "passed", result
    assert [c.verdict for c in result.cases] == ["accepted", "accepted"]


def test_run_stdio_accepts_the_answer_an_atexit_handler_writes_to_sys_stdout_dunder() -> None:
    """The competitive programmer's fast-output trick: print into a StringIO and write it to
    ``sys.__stdout__`` at exit. ``sys.__stdin__``/``__stdout__`` are the program's own
    streams, as under ``python prog.py`` (they were the fork server's: never flushed, and a
    second buffered reader of stdin)."""
    trick = (
        "import atexit, io, sys\nout = io.StringIO()\nsys.stdout = out\n"
        "atexit.register(lambda: sys.__stdout__.write(out.getvalue()))\n"
        "print(int(input()) * 2)\n"
    )
    mixed = (
        "import sys\na = int(input())\nb = int(sys.__stdin__.readline())\n"
        "print(a + b, sys.__stdin__ is sys.stdin, sys.__stdout__ is sys.stdout)\n"
    )
    for program, case in ((trick, ("4\n", "8\n")), (mixed, ("1\n2\n", "3 True True\n"))):
        result = run_stdio(program, [case])
        assert result.status == "passed", result
        assert result.cases[0].verdict == "accepted"


@pytest.mark.parametrize(
    "opened", ["open(1, 'w')", "io.BufferedWriter(io.FileIO(1, 'w'))", "os.fdopen(1, 'wb')"]
)
def test_run_stdio_keeps_what_a_file_left_open_in_main_wrote_after_stdout_as_cpython(
    opened: str,
) -> None:
    """CPython flushes ``sys.stdout`` at exit and then, as it clears ``__main__``, the files
    the program never closed: their output comes after ``print``'s (``python prog.py``
    prints ``b`` then ``a`` here)."""
    text = "'a\\n'" if opened.startswith("open") else "b'a\\n'"
    program = f"import io, os\nout = {opened}\nout.write({text})\nprint('b')\n"
    result = run_stdio(program, [("", "b\na\n")])
    assert result.status == "passed", result
    assert result.cases[0].stdout == "b\na\n"


@pytest.mark.parametrize(
    "program",
    [
        "outs = [open(1, 'w')]\nouts[0].write('7\\n')\n",
        "class IO:\n    out = open(1, 'w')\nIO.out.write('7\\n')\n",
        "def make():\n    f = open(1, 'w')\n    return lambda s: f.write(s)\n"
        "w = make()\nw('7\\n')\n",
        "w = open(1, 'w').write\nw('7\\n')\n",
        "import os, sys\nw = os.fdopen(sys.stdout.fileno(), 'w').write\nw('7\\n')\n",
        "import io\nw = io.BufferedWriter(io.FileIO(1, 'w')).write\nw(b'7\\n')\n",
    ],
    ids=["list", "class", "closure", "bound write", "fdopen of fileno", "FileIO"],
)
def test_run_stdio_keeps_what_its_own_stdout_file_held_anywhere_wrote(program: str) -> None:
    """A program that opens its stdout as a file of its own and holds it elsewhere than a name
    of ``__main__`` (a list, a class, a closure, a bound ``write``) has it written out at
    exit, as CPython's finalisation does; its output was lost ("wrong_answer")."""
    result = run_stdio(program, [("", "7\n")])
    assert result.cases[0].verdict == "accepted", result


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("out = open(1, 'w')", True),
        ("w = os.fdopen(sys.stdout.fileno(), 'wb').write", True),
        ("raw = io.FileIO(2, 'w')", True),
        ("data = open(0).read()", False),
        ("# sys.stdout = open(sys.stdout.fileno(), 'w')", False),
        ("x = 1  # open(1, 'w')", False),
        ("print(open('1.txt').read())", False),
    ],
)
def test_only_a_program_that_opens_its_own_output_has_its_objects_searched_at_exit(
    text: str, found: bool
) -> None:
    """The search of every open file at exit (a list of every object) is made only for a
    program whose code, outside comments, opens fd 1 or 2 as a file."""
    assert _zygote_child._opens_output(text) is found


@pytest.mark.parametrize(
    ("program", "stdin", "stdout"),
    [
        # stdin splits at "\n" only: a "\r" of Windows line ends is the program's to see
        ("print(len(input()))", b"ab\r\n", b"3\n"),
        ("import sys\nprint(repr(sys.stdin.readline()))", b"a\rb\r\n", b"'a\\rb\\r\\n'\n"),
        # bytes that are no UTF-8 read and written back as surrogates, not an error
        ("print(len(input()))", b"caf\xe9\n", b"4\n"),
        ("print(input())", b"caf\xe9\n", b"caf\xe9\n"),
        # a stdout the program closed, or set to None, is not flushed at exit: status 0
        ("import sys\nprint(1)\nsys.stdout.close()", b"", b"1\n"),
        ("import sys\nprint(1)\nsys.stdout.flush()\nsys.stdout = None", b"", b"1\n"),
    ],
)
def test_run_stdio_programs_see_their_streams_as_under_python_prog_py(
    program: str, stdin: bytes, stdout: bytes
) -> None:
    """The standard streams as CPython makes them under the sandbox's locale (C.UTF-8), and
    its exit: what ``python prog.py < input`` prints and its status 0."""
    result = run_stdio(program, [(stdin, stdout)])
    assert result.status == "passed", result
    assert (result.cases[0].returncode, result.cases[0].stdout) == (
        0, stdout.decode("utf-8", "replace")
    )


def test_run_stdio_fails_a_wrong_answer_and_stops_there() -> None:
    result = run_stdio(SUM, [("1 2", "3"), ("1 1", "3"), ("2 2", "4")])
    assert result.status == "failed"
    assert [c.status for c in result.cases] == ["passed", "failed"]
    every = run_stdio(SUM, [("1 2", "3"), ("1 1", "3"), ("2 2", "4")], stop_on_failure=False)
    assert [c.status for c in every.cases] == ["passed", "failed", "passed"]


def test_run_stdio_needs_exit_zero_and_reports_the_programs_status() -> None:
    crash = run_stdio("print(3)\nraise SystemExit(2)", [("", "3")])
    assert (crash.status, crash.cases[0].returncode) == ("failed", 2)
    slow = run_stdio("while True:\n    pass", [("", "")], timeout=1)
    assert slow.status == "timeout"


def test_normalisation_rule() -> None:
    assert normalize_output(b"a  \r\nb\t\n\n\n") == [b"a", b"b"]
    assert normalize_output(b" a\n\nb") == [b" a", b"", b"b"]
    assert normalize_output(b"") == []


# -- run_program ---------------------------------------------------------------------------------


def test_run_program_with_stdin_files_and_fetched_files() -> None:
    code = _d("""
        import os, sys
        data = sys.stdin.read()
        os.makedirs("out", exist_ok=True)
        with open("out/result.txt", "w") as fh:
            fh.write(data.upper() + open("in/data.txt").read())
        os.symlink("/etc/passwd", "link")
        print("to stdout")
        print("to stderr", file=sys.stderr)
    """)
    result = run_program(
        code,
        stdin="hello",
        files={"in/data.txt": b"!"},
        fetch_files=["out/result.txt", "missing.txt", "link"],
    )
    assert result == ProgramResult(
        "passed", 0, "to stdout\n", "to stderr\n", result.duration, {"out/result.txt": b"HELLO!"}
    )


def test_run_program_caps_each_stream_to_its_first_bytes() -> None:
    result = run_program(
        "import sys\nsys.stdout.write('x' * 3_000_000)\nprint('e', file=sys.stderr)"
    )
    assert result.status == "passed"
    assert result.stdout == "x" * OUTPUT_LIMIT_BYTES
    assert result.stderr == "e\n"


def test_run_program_exit_status_is_the_status() -> None:
    result = run_program("import sys\nsys.exit(3)")
    assert (result.status, result.returncode) == ("failed", 3)


# -- bad arguments ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "kwargs", "error"),
    [
        (run_tests, {"solution": b"x", "tests": ""}, TypeError),
        (run_tests, {"solution": "", "tests": None}, TypeError),
        (run_tests, {"solution": "", "tests": "", "entry_point": "not an id"}, ValueError),
        (run_tests, {"solution": "", "tests": "", "entry_point": "Solution(1).f"}, ValueError),
        (run_tests, {"solution": "", "tests": "", "entry_point": "s.__class__"}, ValueError),
        (run_tests, {"solution": "", "tests": "", "entry_point": "fs[0]"}, ValueError),
        (run_tests, {"solution": "", "tests": "", "entry_point": "a" + ".b" * 30}, ValueError),
        (run_tests, {"solution": "", "tests": "", "entry_point": 3}, TypeError),
        (run_tests, {"solution": "", "tests": "", "timeout": 0}, ValueError),
        (run_stdio, {"solution": "", "cases": []}, ValueError),
        (run_stdio, {"solution": "", "cases": "ab"}, TypeError),
        (run_stdio, {"solution": "", "cases": [("a",)]}, TypeError),
        (run_stdio, {"solution": "", "cases": [("a", 3)]}, TypeError),
        (run_stdio, {"solution": "", "cases": [("", "")], "memory_mb": 8}, ValueError),
        (run_program, {"code": "", "stdin": 3}, TypeError),
        (run_program, {"code": "", "files": {"/etc/x": b""}}, ValueError),
        (run_program, {"code": "", "files": {"a/../b": b""}}, ValueError),
        (run_program, {"code": "", "files": {"a": "text"}}, TypeError),
        (run_program, {"code": "", "fetch_files": "a.txt"}, TypeError),
        (run_program, {"code": "", "fetch_files": ["../x"]}, ValueError),
    ],
)
def test_bad_arguments_raise_before_anything_runs(
    call: Any, kwargs: dict[str, Any], error: type[Exception]
) -> None:
    with pytest.raises(error):
        call(**kwargs)
