"""``/verify`` with a dataset's checker mode, over HTTP, against a real ``asyncpool serve``.

The server is started as :mod:`tests.test_server` starts its own (``serving``: ``python -m
asyncpool serve`` on a free port, joined to the session cluster, stopped by its pid). Stdin tests
carry ``unit_tests.checker`` (``"float"`` with ``abs_tol``/``rel_tol``, ``"tokens"``,
``"case_insensitive"``); without one they are LiveCodeBench's exact comparison, as before.
"""

from __future__ import annotations

import dataclasses
import json
import os
import typing
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from asyncpool.sandbox._checkers import CHECKERS
from asyncpool.server import nemo_gym
from asyncpool.server.models import StdioChecker
from tests.conftest import SessionCluster
from tests.test_server import CREATE_PARAMS, fenced, responses_object, serving

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module")
def client(ray_cluster: SessionCluster) -> Iterator[httpx.Client]:
    with (
        serving(
            ["--address", ray_cluster.address, "--max-in-flight", str(2 * (os.cpu_count() or 1)),
             "--verify-timeout", "2"],
            "asyncpool-serve-checkers-",
        ) as srv,
        httpx.Client(base_url=srv.url, timeout=None) as http,
    ):  # fmt: skip
        yield http


SQRT = "import math\nprint(f'{math.sqrt(int(input())):.10f}')"
#: The issue's example: the program prints 1.4142135624, the dataset holds 1.414214.
SQRT_TESTS: dict[str, Any] = {"inputs": ["2\n", "3\n"], "outputs": ["1.414214\n", "1.732051\n"],
                              "fn_name": None}  # fmt: skip


def verify(client: httpx.Client, code: str, unit_tests: dict[str, Any]) -> httpx.Response:
    body = {
        "responses_create_params": CREATE_PARAMS,
        "response": responses_object(fenced(code)),
        "verifier_metadata": {"unit_tests": unit_tests},
    }
    return client.post("/verify", json=body)


def verdict(client: httpx.Client, code: str, unit_tests: dict[str, Any]) -> tuple[float, Any]:
    r = verify(client, code, unit_tests)
    assert r.status_code == 200, r.text[:500]
    got = r.json()
    assert got["verifier_metadata"]["unit_tests"] == unit_tests  # echoed as sent
    return got["reward"], got["result"]


def test_the_models_checker_names_are_the_sandboxes() -> None:
    assert typing.get_args(StdioChecker) == CHECKERS


#: (expected, output, whether LiveCodeBench's grade_stdio, NeMo-Gym code_gen's, accepts it)
LCB_PAIRS: dict[str, tuple[str, str, bool]] = {
    "same text": ("3\n", "3\n", True),
    "a float for an int": ("1\n", "1.0\n", True),
    "trailing zeros": ("2.5\n", "2.50\n", True),
    "exponent": ("100000\n", "1e5\n", True),
    "negative zero": ("0\n", "-0\n", True),
    "leading spaces": ("5\n", "  5\n", True),
    "a leading blank line": ("5\n", "\n5\n", True),
    "numbers apart by two spaces": ("1 2\n", "1  2\n", True),
    "crlf and no final newline": ("1\n2\n", "1\r\n2", True),
    "a trailing no-break space": ("5\n", "5\u00a0\n", True),
    "more digits": ("1.414214\n", "1.4142135624\n", False),
    "case": ("YES\n", "yes\n", False),
    "words apart by two spaces": ("a b\n", "a  b\n", False),
    "a blank line inside": ("1\n2\n", "1\n\n2\n", False),
    "lines joined": ("1\n2\n", "1 2\n", False),
    "nan as text": ("nan\n", "nan\n", True),
    "nan as a number": ("nan\n", "NaN\n", False),
    "a signalling nan": ("1\n", "sNaN\n", False),
    "an undecodable byte": ("\ufffd\n", "", False),
}


@pytest.mark.parametrize("case", sorted(LCB_PAIRS))
def test_verify_exact_is_livecodebenchs_line_and_decimal_comparison(case: str) -> None:
    expected, output, accepted = LCB_PAIRS[case]
    raw = b"\xff\n" if case == "an undecodable byte" else output.encode()
    assert nemo_gym.lcb_stdio_equal(b"", expected.encode(), raw) is accepted


def test_a_verify_job_judges_exact_as_livecodebench_does() -> None:
    # run_stdio's "exact" rejected "1.0" for "1" and " 5" for "5": reward 0 where code_gen's
    # grade_stdio gives 1 (no Ray, no HTTP: the worker's own function).
    job = nemo_gym.VerifyJob(
        code="x = int(input())\nprint(float(x) if x == 1 else ' ' + str(x))",
        inputs=("1\n", "5\n"), outputs=("1\n", "5\n"), fn_name=None, timeout=5.0,
        memory_mb=512,
    )  # fmt: skip
    assert nemo_gym.execute(job)["result"] == [True, True]
    wrong = dataclasses.replace(job, outputs=("1\n", "6\n"))
    assert nemo_gym.execute(wrong)["result"] == [True, -2]


#: Programs that end by SystemExit, and what code_gen's grade_stdio (LiveCodeBench's, which
#: swallows SystemExit) gives them on the inputs 1 and 5, expecting 2 and 10: each result
#: below is what that function returned, run on these programs.
SYSTEM_EXITS: dict[str, tuple[str, list[Any]]] = {
    "sys.exit(1) after the answer": (
        "import sys\nx = int(input())\nprint(x * 2)\nsys.exit(1)", [True, True]),
    "exit with a message after the answer": (
        'x = int(input())\nprint(x * 2)\nexit("bye")', [True, True]),
    "a wrong answer, then SystemExit(0)": (
        "x = int(input())\nprint(x * 3)\nraise SystemExit(0)", [-2]),
    "an exception after the answer": (
        "def f():\n    raise ValueError(1)\nx = int(input())\nprint(x * 2)\nf()", [-4]),
    "SystemExit and exec rebound by the program": (
        "SystemExit = 5\nexec = None\nimport sys\nprint(int(input()) * 2)\nsys.exit(3)",
        [True, True]),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(SYSTEM_EXITS))
def test_a_verify_job_ends_a_python_program_at_system_exit_as_code_gen_does(case: str) -> None:
    # run_stdio judges python's exit status: sys.exit(1) after the right answer was a runtime
    # error ([-4]) where code_gen gives 1 (no Ray, no HTTP: the worker's own function).
    code, expected = SYSTEM_EXITS[case]
    job = nemo_gym.VerifyJob(
        code=code, inputs=("1\n", "5\n"), outputs=("2\n", "10\n"), fn_name=None,
        timeout=5.0, memory_mb=512,
    )  # fmt: skip
    assert nemo_gym.execute(job)["result"] == expected


def test_the_system_exit_wrapper_compiles_the_programs_own_text_one_line_per_line() -> None:
    text = 'a = 1\r\nb = "x\\ny"  # c\n\tout = open(1, "w")\u2028\x0c\'\'\'\n'
    wrapper = nemo_gym._ending_at_system_exit(text)
    compiled: list[str] = []

    def compile_(source: str, *args: Any, **kwargs: Any) -> str:
        compiled.append(source)
        return source

    namespace: dict[str, Any] = {"compile": compile_, "exec": lambda code, space: None}
    exec(wrapper, namespace)
    assert compiled == [text]
    own_line = """    '\\tout = open(1, "w")\\u2028',"""  # as in the program, on a line of its own
    assert [line for line in wrapper.splitlines() if "open(1" in line] == [own_line]


def test_float_checker_accepts_the_issues_example_that_exact_rejects(
    client: httpx.Client,
) -> None:
    assert verdict(client, SQRT, SQRT_TESTS) == (0.0, [-2])  # LiveCodeBench's exact rule
    assert verdict(client, SQRT, {**SQRT_TESTS, "checker": "exact"}) == (0.0, [-2])
    assert verdict(client, SQRT, {**SQRT_TESTS, "checker": "float"}) == (1.0, [True, True])
    tight = {**SQRT_TESTS, "checker": "float", "abs_tol": 1e-9, "rel_tol": 0}
    assert verdict(client, SQRT, tight) == (0.0, [-2])
    loose = {**SQRT_TESTS, "outputs": ["1.41\n", "1.73\n"], "checker": "float", "abs_tol": 0.01}
    assert verdict(client, SQRT, loose) == (1.0, [True, True])


def test_a_wrong_float_answer_stays_wrong_and_reports_where(client: httpx.Client) -> None:
    off = "import math\nprint(math.sqrt(int(input())) + 1e-4)"
    r = verify(client, off, {**SQRT_TESTS, "checker": "float"})
    assert r.status_code == 200, r.text[:500]
    got = r.json()
    assert (got["reward"], got["result"]) == (0.0, [-2])
    assert got["metadata"]["error_code"] == -2
    assert got["metadata"]["expected"] == "1.414214\n"
    assert got["metadata"]["output"].startswith("1.4143")


def test_tokens_and_case_insensitive_checkers(client: httpx.Client) -> None:
    words = {"inputs": ["1 2 3\n"], "outputs": ["1\n2\n3\n"], "fn_name": None}
    spaced = "print(*input().split())"
    assert verdict(client, spaced, words) == (0.0, [-2])
    assert verdict(client, spaced, {**words, "checker": "tokens"}) == (1.0, [True])
    yes = {"inputs": ["\n"], "outputs": ["YES\n"], "fn_name": None}
    assert verdict(client, "print('yes')", {**yes, "checker": "tokens"}) == (0.0, [-2])
    assert verdict(client, "print('yes')", {**yes, "checker": "case_insensitive"}) == (
        1.0, [True],
    )  # fmt: skip
    assert verdict(client, "print('no')", {**yes, "checker": "case_insensitive"}) == (0.0, [-2])


@pytest.mark.slow  # a 2 s time limit of own time, plus a memory hog
def test_a_checker_keeps_the_other_verdict_codes(client: httpx.Client) -> None:
    tests = {**SQRT_TESTS, "checker": "float"}
    assert verdict(client, "raise ValueError('no')", tests) == (0.0, [-4])
    assert verdict(client, "while True:\n    pass", tests) == (0.0, [-3])
    # Out of memory is LiveCodeBench's runtime error (it has no memory-limit code). The hog
    # reserves memory it never writes (``bytes(n)`` is calloc'd: fresh pages, untouched), so it
    # meets the address-space limit after milliseconds of CPU. One that wrote its memory
    # (``bytearray(n)`` zero-fills it: a second of page faults per GiB) met the 2 s CPU limit
    # first on a loaded machine (-3): a timing assumption, gone.
    hog = "hog = []\nwhile True:\n    hog.append(bytes(256 << 20))"
    assert verdict(client, hog, tests) == (0.0, [-4])
    # The first case right, the second wrong: the list stops at the wrong one.
    half = "n = int(input())\nprint(1.4142135 if n == 2 else 0)"
    assert verdict(client, half, tests) == (0.0, [True, -2])


#: unit_tests -> part of the 422's message
BAD_CHECKERS: dict[str, tuple[dict[str, Any], str]] = {
    "unknown_mode": ({**SQRT_TESTS, "checker": "fuzzy"}, "unit_tests.checker: Input should be"),
    "mode_not_a_string": ({**SQRT_TESTS, "checker": 1}, "unit_tests.checker: Input should be"),
    "code_as_checker": (
        {**SQRT_TESTS, "checker": "lambda i, e, o: True"}, "unit_tests.checker: Input should be",
    ),
    "negative_tolerance": (
        {**SQRT_TESTS, "checker": "float", "abs_tol": -1e-6}, "unit_tests.abs_tol: Input should be",
    ),
    "tolerance_as_string": (
        {**SQRT_TESTS, "checker": "float", "rel_tol": "1e-6"},
        "unit_tests.rel_tol: Input should be",
    ),
    "call_based_with_checker": (
        {"inputs": ["1\n2"], "outputs": ["3"], "fn_name": "add", "checker": "float"},
        "applies to stdin/stdout tests",
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(BAD_CHECKERS))
def test_a_bad_checker_is_a_422_with_a_message_and_nothing_runs(
    client: httpx.Client, case: str
) -> None:
    unit_tests, message = BAD_CHECKERS[case]
    r = verify(client, "print(1)", unit_tests)
    assert r.status_code == 422, r.text[:300]
    assert message in r.json()["message"], r.json()["message"]


def test_a_non_finite_tolerance_is_refused(client: httpx.Client) -> None:
    # JSON has no NaN or Infinity, but Python's json (the server's parser) reads them.
    for value in ("NaN", "Infinity"):
        body = {
            "responses_create_params": CREATE_PARAMS,
            "response": responses_object(fenced(SQRT)),
            "verifier_metadata": {"unit_tests": {**SQRT_TESTS, "checker": "float",
                                                 "abs_tol": "@TOL@"}},
        }  # fmt: skip
        raw = json.dumps(body).replace('"@TOL@"', value).encode()
        r = client.post("/verify", content=raw, headers={"content-type": "application/json"})
        assert r.status_code == 422, r.text[:300]
        assert "unit_tests.abs_tol: Input should be a finite number" in r.json()["message"]
    assert client.get("/health").status_code == 200
