"""``run_stdio``'s comparison modes and judge-grade verdicts.

The first half tests :mod:`asyncpool.sandbox._checkers` as the pure functions they are (no
sandbox); the second runs real programs through :func:`asyncpool.sandbox.run_stdio` in the
real jail: the issue's float example, one verdict of each kind, the per-case CPU time, wall
time and peak memory, and a custom checker that proves it runs in this process.
"""

from __future__ import annotations

import os
import random
import threading
from typing import Any

import pytest

from asyncpool.sandbox import DEFAULT_TOLERANCE, OUTPUT_LIMIT_BYTES, run_stdio
from asyncpool.sandbox._checkers import (
    CHECKERS,
    compare,
    float_tokens_equal,
    resolve_checker,
    tolerance,
    verdict_of,
)

MIB = 1024 * 1024


def accepts(checker: Any, expected: bytes, output: bytes, **tol: float) -> bool:
    ok, reason = compare(checker, b"", expected, output, **tol)
    assert ok == (reason == ""), (ok, reason)  # a rejection always says why, a pass never
    return ok


# -- the modes, as pure functions ----------------------------------------------------------------


def test_exact_ignores_trailing_whitespace_and_blank_lines_but_not_inner_ones() -> None:
    assert accepts("exact", b"1 2\n3\n", b"1 2  \r\n3\t\n\n\n")
    assert not accepts("exact", b"1 2\n3\n", b"1  2\n3\n")
    assert not accepts("exact", b"1\n2\n", b"1\n\n2\n")
    assert not accepts("exact", b"a\n", b" a\n")


def test_exact_reason_names_the_first_differing_line() -> None:
    ok, reason = compare("exact", b"", b"1\n2\n3\n", b"1\n5\n3\n")
    assert not ok
    assert reason == "line 2: expected b'2', got b'5'"
    assert compare("exact", b"", b"1\n2\n", b"1\n")[1] == "expected 2 lines, got 1"


def test_tokens_ignore_line_breaks_and_runs_of_whitespace() -> None:
    assert accepts("tokens", b"1 2\n3\n", b"1\n2\t\t3   ")
    assert accepts("tokens", b"1 2\n3\n", b"\n\n1 2 3\r\n")
    assert not accepts("tokens", b"1 2 3", b"1 2")
    assert not accepts("tokens", b"1 2 3", b"1 2 3 4")
    assert not accepts("tokens", b"YES", b"yes")
    assert not accepts("tokens", b"1.0", b"1")  # tokens are text


@pytest.mark.parametrize("checker", ["tokens", "case_insensitive", "float"])
def test_vertical_tab_and_form_feed_are_part_of_a_token_as_testlib_reads_them(
    checker: str,
) -> None:
    assert not accepts(checker, b"1 2\n", b"1\x0b2\n")
    assert not accepts(checker, b"1 2\n", b"1 2\x0c\n")
    assert accepts(checker, b"a\x0bb 2\n", b"a\x0bb\n2")


def test_case_insensitive_tokens_ignore_ascii_case_only() -> None:
    assert accepts("case_insensitive", b"YES\nNo", b"yes no")
    assert not accepts("case_insensitive", b"YES", b"NO")
    assert not accepts("case_insensitive", b"YES", b"YES YES")
    # Non-ASCII bytes compare exactly: no Unicode folding (\xc3\x89 is "É", \xc3\xa9 "é").
    assert not accepts("case_insensitive", b"\xc3\x89", b"\xc3\xa9")
    assert accepts("case_insensitive", b"\xc3\xa9A", b"\xc3\xa9a")


def test_float_accepts_the_issues_example_that_exact_rejects() -> None:
    assert accepts("float", b"1.414214\n", b"1.4142135624\n")
    assert not accepts("exact", b"1.414214\n", b"1.4142135624\n")
    assert not accepts("tokens", b"1.414214\n", b"1.4142135624\n")


def test_float_rejects_answers_outside_both_tolerances() -> None:
    assert not accepts("float", b"1.414214", b"1.4142")  # off by 1.4e-5
    assert not accepts("float", b"0", b"0.0000011")
    assert accepts("float", b"0", b"0.0000009")


def test_float_tolerance_is_absolute_or_relative_to_the_expected_value() -> None:
    # 1e9 +- 500: 5e-7 relative, far beyond 1e-6 absolute.
    assert accepts("float", b"1000000000", b"1000000500")
    assert not accepts("float", b"1000000000", b"1000000500", rel_tol=0.0)
    assert not accepts("float", b"1000000000", b"1000002000")
    # Relative to the expected value, not the larger one: with rel_tol 0.5, 2 is within 0.5 of
    # 4 (relative to 4) but 4 is not within 0.5 of 2.
    assert accepts("float", b"4", b"2", abs_tol=0.0, rel_tol=0.5)
    assert not accepts("float", b"2", b"4", abs_tol=0.0, rel_tol=0.5)
    # Zero tolerances: only the same number.
    assert accepts("float", b"0.5", b".50", abs_tol=0.0, rel_tol=0.0)
    assert not accepts("float", b"0.5", b"0.5000000001", abs_tol=0.0, rel_tol=0.0)


def test_float_boundary_follows_testlib_rounding_allowance() -> None:
    # 0.300001 - 0.3 is 1e-6 exactly in decimal, 1.0000000000287557e-06 in binary: accepted,
    # as testlib's doubleCompare accepts it; a hair more is not.
    assert accepts("float", b"0.3", b"0.300001")
    assert not accepts("float", b"0.3", b"0.3000010001", rel_tol=0.0)


def test_float_number_spellings_that_are_the_same_value() -> None:
    for out in (b"+1", b"1.", b"1.000", b"1e0", b"10E-1", b"0.1e+1"):
        assert accepts("float", b"1", out, abs_tol=0.0, rel_tol=0.0), out
    assert accepts("float", b"0", b"-0", abs_tol=0.0, rel_tol=0.0)


def test_float_nan_and_inf_are_words_that_never_equal_a_number() -> None:
    for word in (b"nan", b"NaN", b"-nan", b"inf", b"-inf", b"Infinity"):
        assert not accepts("float", b"1.5", word), word
        assert not accepts("float", word, b"1.5"), word
    # A word is equal only to the same word.
    assert accepts("float", b"nan", b"nan")
    assert not accepts("float", b"nan", b"NaN")
    assert not accepts("float", b"inf", b"1e999")
    # Numbers too large for a double: only the identical token, never "two infinities".
    assert accepts("float", b"1e999", b"1e999")
    assert not accepts("float", b"1e999", b"2e999")
    assert not accepts("float", b"-1e999", b"-3e999")
    assert not accepts("float", b"1e308", b"-1e308")


def test_float_spellings_float_would_take_are_not_numbers() -> None:
    assert float("1_000") == 1000.0
    assert float("\u0661") == 1.0
    assert not accepts("float", b"1000", b"1_000")
    assert not accepts("float", b"1", "\u0661".encode())  # ARABIC-INDIC DIGIT ONE
    assert not accepts("float", b"16", b"0x10")
    assert not accepts("float", b"1", b"1e")
    assert not accepts("float", b"1", b"e1")
    assert not accepts("float", b"1", b"1.0.0")


def test_float_token_counts_and_words_must_match() -> None:
    assert not accepts("float", b"1 2", b"1 2 3")
    assert not accepts("float", b"1 2", b"1")
    assert not accepts("float", b"1", b"")
    assert accepts("float", b"Case #1: 0.5", b"Case #1: 0.5000001")
    assert not accepts("float", b"Case #1: 0.5", b"case #1: 0.5")
    ok, reason = compare("float", b"", b"1 2 3", b"1 2.5 3")
    assert reason == "token 2: expected b'2', got b'2.5'"
    assert not ok


def test_float_agrees_with_exact_decimal_arithmetic_on_random_answers() -> None:
    """A correct answer printed with more or fewer digits passes, one off by 10x the
    tolerance does not, over many magnitudes (fixed seed)."""
    rng = random.Random(21)
    for _ in range(2000):
        value = rng.uniform(-1, 1) * 10 ** rng.randint(-8, 12)
        expected = f"{value:.6f}".encode()
        assert accepts("float", expected, f"{value:.12f}".encode()), (value, expected)
        assert accepts("float", expected, repr(value).encode()), (value, expected)
        off = value + 10 * max(DEFAULT_TOLERANCE, abs(value) * DEFAULT_TOLERANCE)
        assert not accepts("float", expected, f"{off:.12f}".encode()), (value, off)


def test_float_mode_agrees_token_by_token_with_float_tokens_equal() -> None:
    tokens = [b"1", b"1.0000005", b"1.000002", b"-1", b"0", b"-0", b"1e999", b"nan", b"inf",
              b"x", b"X", b"1_0", b"10", b"1e1", b".1", b"0.1000001", b"1e-7", b"0"]  # fmt: skip
    for e in tokens:
        for o in tokens:
            whole = compare("float", b"", b"a " + e + b" b", b"a " + o + b" b")
            assert whole[0] == float_tokens_equal(e, o, DEFAULT_TOLERANCE, DEFAULT_TOLERANCE)


def test_case_insensitive_reason_quotes_the_tokens_as_printed() -> None:
    assert compare("case_insensitive", b"", b"Yes No", b"YES YES") == (
        False, "token 2: expected b'No', got b'YES'",
    )  # fmt: skip


def test_custom_checker_whose_exception_cannot_be_printed_is_still_a_wrong_answer() -> None:
    class Unprintable(Exception):
        def __str__(self) -> str:
            raise RuntimeError("no")

    def check(stdin: bytes, expected: bytes, output: bytes) -> bool:
        raise Unprintable

    reason = "the checker raised Unprintable: (no message)"
    assert compare(check, b"", b"1", b"1") == (False, reason)


def test_float_tokens_equal_is_false_for_a_number_against_a_word() -> None:
    assert not float_tokens_equal(b"1", b"one", 1.0, 1.0)
    assert float_tokens_equal(b"one", b"one", 0.0, 0.0)


def test_custom_checker_sees_raw_bytes_and_only_true_accepts() -> None:
    seen: list[tuple[bytes, bytes, bytes]] = []

    def check(stdin: bytes, expected: bytes, output: bytes) -> bool:
        seen.append((stdin, expected, output))
        return sorted(output.split()) == sorted(expected.split())

    assert compare(check, b"in", b"1 2", b"2 1  \r\n") == (True, "")
    assert seen == [(b"in", b"1 2", b"2 1  \r\n")]
    assert compare(check, b"in", b"1 2", b"2 2") == (False, "the checker rejected the output")


@pytest.mark.parametrize(
    ("returns", "kind"), [(1, "int"), ("yes", "str"), (None, "NoneType"), ([True], "list")]
)
def test_custom_checker_returning_a_non_bool_is_a_wrong_answer(returns: object, kind: str) -> None:
    broken: Any = lambda i, e, o: returns  # noqa: E731  # a checker with a bug
    ok, reason = compare(broken, b"", b"1", b"1")
    assert not ok
    assert reason == f"the checker returned {kind}, not a bool"


def test_custom_checker_that_raises_is_a_wrong_answer_with_the_reason() -> None:
    def check(stdin: bytes, expected: bytes, output: bytes) -> bool:
        return float(output) > 0  # the output is not a number

    ok, reason = compare(check, b"", b"1", b"abc")
    assert not ok
    assert reason.startswith("the checker raised ValueError: could not convert")


def test_resolve_checker_refuses_unknown_names_and_non_callables() -> None:
    for name in CHECKERS:
        assert resolve_checker("checker", name) == name
    with pytest.raises(ValueError, match="must be one of exact, tokens, float, case_insensitive"):
        resolve_checker("checker", "floats")
    with pytest.raises(ValueError, match="must be one of"):
        resolve_checker("checker", "EXACT")
    for bad in (42, None, b"exact", 1.5, ["exact"]):
        with pytest.raises(TypeError, match=r"must be one of .* or a callable"):
            resolve_checker("checker", bad)


def test_resolve_checker_refuses_a_callable_that_cannot_take_three_arguments() -> None:
    with pytest.raises(TypeError, match="three positional arguments"):
        resolve_checker("checker", lambda output: True)
    with pytest.raises(TypeError, match="three positional arguments"):
        resolve_checker("checker", lambda a, b, c, d: True)
    with pytest.raises(TypeError, match="three positional arguments"):
        resolve_checker("checker", lambda *, a, b, c: True)

    def flexible(*args: bytes, strict: bool = False) -> bool:
        return True

    assert resolve_checker("checker", flexible) is flexible


def test_tolerance_must_be_a_finite_non_negative_number() -> None:
    assert tolerance("abs_tol", 0) == 0.0
    assert tolerance("abs_tol", 1e-9) == 1e-9
    for bad in (-1e-6, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="abs_tol must be a finite number >= 0"):
            tolerance("abs_tol", bad)
    for wrong in (True, "1e-6", None):
        with pytest.raises(TypeError, match="abs_tol must be a number"):
            tolerance("abs_tol", wrong)


def test_verdict_of_maps_every_sandbox_status_to_a_judge_verdict() -> None:
    assert verdict_of("passed", True) == "accepted"
    assert verdict_of("passed", False) == "wrong_answer"
    assert verdict_of("timeout", False) == "time_limit"
    assert verdict_of("memory", False) == "memory_limit"
    assert verdict_of("failed", False) == "runtime_error"
    assert verdict_of("crashed", False) == "runtime_error"
    # A run that did not exit 0 is never accepted, whatever the comparison said.
    assert verdict_of("failed", True) == "runtime_error"


# -- real runs through run_stdio -----------------------------------------------------------------

SQRT = "import math\nprint(f'{math.sqrt(int(input())):.10f}')\n"


def test_run_stdio_float_checker_accepts_what_exact_calls_a_wrong_answer() -> None:
    cases = [("2\n", "1.414214\n"), ("3\n", "1.732051\n")]
    exact = run_stdio(SQRT, cases)
    assert (exact.status, exact.verdict) == ("failed", "wrong_answer")
    assert exact.cases[0].verdict == "wrong_answer"
    assert exact.cases[0].reason == "line 1: expected b'1.414214', got b'1.4142135624'"
    floats = run_stdio(SQRT, cases, checker="float")
    assert (floats.status, floats.verdict) == ("passed", "accepted")
    assert [c.verdict for c in floats.cases] == ["accepted", "accepted"]
    assert [c.stdout for c in floats.cases] == ["1.4142135624\n", "1.7320508076\n"]
    tight = run_stdio(SQRT, cases, checker="float", abs_tol=1e-12, rel_tol=1e-12)
    assert tight.verdict == "wrong_answer"


#: One program, five behaviours chosen by its input.
JUDGED = """\
import os, signal
cmd = input().strip()
if cmd == "ok":
    print(42)
elif cmd == "wa":
    print(41)
elif cmd == "tle":
    while True:
        pass
elif cmd == "mle":
    hog = b"x" * (10 << 30)
elif cmd == "re":
    raise ValueError("boom")
elif cmd == "exit3":
    raise SystemExit(3)
elif cmd == "segv":
    os.kill(os.getpid(), signal.SIGSEGV)
"""


def test_each_case_gets_its_judge_verdict_and_the_sandbox_status_stays() -> None:
    # The time limit is the next test's (its own time makes it slow on a loaded machine).
    names = ["ok", "wa", "mle", "re", "exit3", "segv"]
    result = run_stdio(
        JUDGED, [(n, "42") for n in names], timeout=5.0, memory_mb=256, stop_on_failure=False
    )
    got = {n: (c.verdict, c.status, c.returncode) for n, c in zip(names, result.cases, strict=True)}
    assert got == {
        "ok": ("accepted", "passed", 0),
        "wa": ("wrong_answer", "failed", 0),
        "mle": ("memory_limit", "memory", 1),  # an uncaught MemoryError
        "re": ("runtime_error", "failed", 1),
        "exit3": ("runtime_error", "failed", 3),
        "segv": ("runtime_error", "crashed", -11),
    }
    assert "ValueError: boom" in result.cases[names.index("re")].stderr
    assert result.cases[names.index("wa")].reason == "line 1: expected b'42', got b'41'"
    # The run's verdict is the first case that did not pass.
    assert (result.status, result.verdict) == ("failed", "wrong_answer")
    # Only wrong answers carry a comparison's reason.
    assert [bool(c.reason) for c in result.cases] == [n == "wa" for n in names]


def test_a_time_limit_ends_the_run_and_names_its_verdict() -> None:
    result = run_stdio(JUDGED, [("ok", "42"), ("tle", "42"), ("ok", "42")], timeout=0.5)
    assert [c.verdict for c in result.cases] == ["accepted", "time_limit"]
    assert (result.status, result.verdict) == ("timeout", "time_limit")
    tle = result.cases[1]
    assert tle.returncode is not None
    assert tle.returncode < 0
    assert tle.duration >= 0.5  # its own time reached the limit
    assert tle.cpu_time is not None
    assert tle.cpu_time <= tle.wall_time + 0.01


def test_cpu_wall_and_peak_memory_are_measured_per_case() -> None:
    heavy = (
        "import time\n"
        "blob = b'x' * (96 << 20)\n"  # 96 MiB, every page written
        "start = time.process_time()\n"
        "while time.process_time() - start < 0.3:\n"
        "    pass\n"
        "print(len(blob))\n"
    )
    light = run_stdio("print(input())", [("hi", "hi")], memory_mb=512).cases[0]
    big = run_stdio(heavy, [("", str(96 << 20))], memory_mb=512).cases[0]
    assert (light.verdict, big.verdict) == ("accepted", "accepted")
    for case in (light, big):
        assert case.cpu_time is not None
        assert case.peak_memory is not None
        assert case.wall_time > 0
        # CPU time is the program's own, one thread: never more than the wall-clock time.
        assert case.cpu_time <= case.wall_time + 0.01
        assert case.peak_memory < 512 * MIB
    assert light.cpu_time is not None
    assert big.cpu_time is not None
    assert light.peak_memory is not None
    assert big.peak_memory is not None
    # An interpreter that printed a line: under 1 MiB of its own in a memory cgroup (the
    # pages it shares with the fork server are not its own), ~20 MiB of ru_maxrss without.
    assert 0 < light.peak_memory < 64 * MIB
    assert big.peak_memory >= 96 * MIB
    assert big.peak_memory - light.peak_memory >= 90 * MIB
    assert big.cpu_time >= 0.3  # it spun until its own CPU clock said 0.3 s
    assert light.cpu_time < big.cpu_time
    assert big.wall_time >= big.duration - 0.01 >= 0.29  # own time: wall-clock less waiting


def test_custom_checker_runs_in_the_calling_process_and_thread() -> None:
    calls: list[tuple[int, int, bytes, bytes, bytes]] = []

    def check(stdin: bytes, expected: bytes, output: bytes) -> bool:
        calls.append((os.getpid(), threading.get_ident(), stdin, expected, output))
        return sorted(output.split()) == sorted(expected.split())

    # Any order of the input's words is a right answer: exact comparison cannot say that.
    solution = "print(*reversed(input().split()))"
    result = run_stdio(solution, [("a b c", "c b a"), (b"x y", b"x y")], checker=check)
    assert [c.verdict for c in result.cases] == ["accepted", "accepted"]
    me = (os.getpid(), threading.get_ident())
    assert calls == [(*me, b"a b c", b"c b a", b"c b a\n"), (*me, b"x y", b"x y", b"y x\n")]


def test_custom_checker_that_raises_gives_a_wrong_answer_never_accepted() -> None:
    def check(stdin: bytes, expected: bytes, output: bytes) -> bool:
        raise RuntimeError("checker bug")

    result = run_stdio("print(1)", [("", "1")], checker=check)
    case = result.cases[0]
    assert (case.status, case.verdict, result.status) == ("failed", "wrong_answer", "failed")
    assert case.reason == "the checker raised RuntimeError: checker bug"


def test_a_case_may_carry_its_own_mode() -> None:
    echo = "print(input())"
    cases: list[Any] = [
        ("YES", "yes", "case_insensitive"),
        ("1.0000001", "1", "float"),
        ("a  b", "a b", "tokens"),
        ("same", "same", None),  # the run's mode
        ("odd", "anything", lambda i, e, o: o == b"odd\n"),
    ]
    assert run_stdio(echo, cases).verdict == "accepted"
    assert run_stdio(echo, [("YES", "yes")]).verdict == "wrong_answer"  # exact by default
    assert run_stdio(echo, [("YES", "yes", "exact")], checker="case_insensitive").verdict == (
        "wrong_answer"
    )


def test_bad_checkers_are_refused_before_anything_runs() -> None:
    calls: list[bytes] = []

    def record(stdin: bytes, expected: bytes, output: bytes) -> bool:
        calls.append(output)
        return True

    # The first case is valid and would call the recorder: nothing runs, so it is never called.
    with pytest.raises(TypeError, match=r"cases\[1\]\[2\] must be one of"):
        run_stdio("print(1)", [("", "1", record), ("", "1", 42)])  # type: ignore[list-item]
    with pytest.raises(ValueError, match=r"cases\[1\]\[2\] must be one of"):
        run_stdio("print(1)", [("", "1", record), ("", "1", "fuzzy")])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="three positional arguments"):
        run_stdio("print(1)", [("", "1", record)], checker=lambda out: True)  # type: ignore[arg-type,misc]
    with pytest.raises(ValueError, match="rel_tol must be a finite number >= 0"):
        run_stdio("print(1)", [("", "1", record)], rel_tol=-1.0)
    with pytest.raises(TypeError, match="abs_tol must be a number"):
        run_stdio("print(1)", [("", "1", record)], abs_tol="1e-6")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"cases\[0\] must be a"):
        run_stdio("print(1)", [("", "1", "exact", "extra")])  # type: ignore[list-item]
    assert calls == []


def test_an_output_too_long_is_a_wrong_answer_that_no_checker_sees() -> None:
    seen: list[int] = []

    def lenient(stdin: bytes, expected: bytes, output: bytes) -> bool:
        seen.append(len(output))
        return True

    flood = f"import sys\nsys.stdout.write('1' * {OUTPUT_LIMIT_BYTES + 100})\n"
    result = run_stdio(flood, [("", "1")], checker=lenient)
    case = result.cases[0]
    assert (case.status, case.verdict) == ("failed", "wrong_answer")
    assert case.reason == f"the output is longer than {OUTPUT_LIMIT_BYTES + 2} bytes"
    assert seen == []


def test_a_programs_stdout_is_a_file_so_its_writes_never_wait_for_the_reader() -> None:
    """``run_stdio`` gives the program a memory file for stdout, not a pipe: a write to a full
    pipe waits for the reader, and that wait counts as the program's own time."""
    program = "import os, stat\nprint(stat.S_ISREG(os.fstat(1).st_mode))\n"
    assert run_stdio(program, [("", "True")]).verdict == "accepted"
