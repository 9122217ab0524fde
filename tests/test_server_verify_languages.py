"""``/verify``'s stdin/stdout tests in the compiled languages (``unit_tests.language``), over HTTP,
against a real ``asyncpool serve`` (issue 23 item 4).

The server is started as :mod:`tests.test_server` starts its own (``serving``: ``python -m
asyncpool serve`` on a free port, joined to the session cluster, stopped by its pid), serving
every language whose toolchain is here except Java (``--languages``), so that a language it does
not serve is answered by the same server. Real compilers run in the jail; a language whose
toolchain is absent on this machine skips naming the package (``.ci/run`` installs them all, so
CI runs every test). The expected results are LiveCodeBench's codes, worked out by hand.
"""

from __future__ import annotations

import typing
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from asyncpool.server.models import VerifyLanguage
from tests.conftest import SessionCluster
from tests.test_server import (
    CREATE_PARAMS,
    ServeProcess,
    responses_object,
    serving,
)
from tests.test_server_languages import PACKAGES, serving_without


def _available() -> dict[str, str]:
    from asyncpool.sandbox import _languages

    return _languages.available()


#: What the module's server serves: every language found here but Java (the one left out).
NOT_SERVED = "java"


@pytest.fixture(scope="module")
def server(ray_cluster: SessionCluster) -> Iterator[ServeProcess]:
    served = [name for name in _available() if name != NOT_SERVED]
    with serving(
        ["--address", ray_cluster.address, "--verify-timeout", "5",
         "--languages", ",".join(served)],
        "asyncpool-serve-verify-lang-",
    ) as srv:  # fmt: skip
        # The pool's first verification starts a Ray worker and its sandbox: paid here, once,
        # rather than by whichever test comes first.
        echo = body("print(input())", {"inputs": ["1\n"], "outputs": ["1\n"]})
        r = httpx.post(srv.url + "/verify", json=echo, timeout=None)
        assert (r.status_code, r.json()["reward"]) == (200, 1.0), r.text[:500]
        yield srv


@pytest.fixture(scope="module")
def client(server: ServeProcess) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, timeout=None) as http:
        yield http


def needs(language: str) -> None:
    """Skip, naming the package, when this machine has no toolchain for ``language``."""
    if language not in _available():
        pytest.skip(f"no {language} toolchain here: install the Debian package "
                    f"{PACKAGES[language]}")  # fmt: skip


def body(code: str, unit_tests: dict[str, Any], fence: str = "```") -> dict[str, Any]:
    text = f"Here is my solution.\n{fence}\n{code}\n```\n"
    return {
        "responses_create_params": CREATE_PARAMS,
        "response": responses_object(text),
        "verifier_metadata": {"unit_tests": unit_tests},
    }


def verify(client: httpx.Client, code: str, unit_tests: dict[str, Any],
           fence: str = "```") -> dict[str, Any]:  # fmt: skip
    r = client.post("/verify", json=body(code, unit_tests, fence))
    assert r.status_code == 200, r.text[:500]
    got: dict[str, Any] = r.json()
    assert got["verifier_metadata"]["unit_tests"] == unit_tests  # echoed as sent
    return got


SUM_TESTS = {"inputs": ["2 0\n", "1 1\n", "10 -3\n"], "outputs": ["2\n", "2\n", "7\n"],
             "fn_name": None}  # fmt: skip

# <cstdio>, not <iostream>: g++ compiles it in a fraction of the time.
CPP_SUM = """#include <cstdio>
int main() {
    long a, b;
    if (scanf("%ld %ld", &a, &b) != 2) return 1;
    printf("%ld\\n", a + b);
    return 0;
}
"""
NODE_SUM = """const [a, b] = require('fs').readFileSync(0, 'utf8').trim().split(/\\s+/).map(Number);
console.log(a + b);
"""


def test_the_models_language_names_are_the_sandboxes() -> None:
    from asyncpool.sandbox._languages import LANGUAGES

    assert typing.get_args(VerifyLanguage) == LANGUAGES


# --------------------------------------------------------------------------- C++


def test_cpp_correct_solution_gets_reward_one_with_every_case_true(client: httpx.Client) -> None:
    needs("cpp")
    got = verify(client, CPP_SUM, {**SUM_TESTS, "language": "cpp"}, fence="```cpp")
    assert (got["reward"], got["result"]) == (1.0, [True, True, True]), got["metadata"]
    assert got["extracted_model_code"] == CPP_SUM  # as written: no Python imports added
    assert got["unit_tests_time_taken"] >= 0


def test_cpp_wrong_answer_is_minus_two_at_the_first_wrong_case(client: httpx.Client) -> None:
    needs("cpp")
    # a - b: right on "2 0", wrong on "1 1". A ```python fence: the tests say the language.
    got = verify(client, CPP_SUM.replace("a + b", "a - b"), {**SUM_TESTS, "language": "cpp"},
                 fence="```python")  # fmt: skip
    assert (got["reward"], got["result"]) == (0.0, [True, -2])
    assert got["metadata"]["error_code"] == -2
    assert (got["metadata"]["expected"], got["metadata"]["output"]) == ("2\n", "0\n")


def test_cpp_compile_error_is_minus_four_with_the_compilers_output(client: httpx.Client) -> None:
    needs("cpp")
    code = f"// {uuid.uuid4().hex}\nint main() {{\n    object i = ?;\n    return 0;\n}}\n"
    got = verify(client, code, {**SUM_TESTS, "language": "cpp"})
    # LiveCodeBench's code for a program that cannot run, as for a Python SyntaxError.
    assert (got["reward"], got["result"]) == (0.0, [-4])
    metadata = got["metadata"]
    assert (metadata["error_code"], metadata["error_message"]) == (-4, "Compilation Error")
    assert metadata["compile_status"] == "failed"
    assert "error" in metadata["compile_output"]
    assert "object" in metadata["compile_output"]


def test_cpp_float_checker_accepts_what_exact_rejects(client: httpx.Client) -> None:
    needs("cpp")
    code = '#include <cstdio>\n#include <cmath>\nint main() {\n    int n;\n    scanf("%d", &n);\n' \
           '    printf("%.10f\\n", sqrt((double)n));\n}\n'  # fmt: skip
    tests = {"inputs": ["2\n", "3\n"], "outputs": ["1.414214\n", "1.732051\n"], "fn_name": None,
             "language": "cpp"}  # fmt: skip
    assert (verify(client, code, tests)["result"]) == [-2]  # LiveCodeBench's exact rule
    got = verify(client, code, {**tests, "checker": "float"})
    assert (got["reward"], got["result"]) == (1.0, [True, True])


@pytest.mark.slow  # a 5 s time limit of the program's own time
def test_cpp_time_limit_and_runtime_error_keep_their_codes(client: httpx.Client) -> None:
    needs("cpp")
    tests = {**SUM_TESTS, "language": "cpp"}
    spin = "int main() {\n    volatile unsigned long x = 0;\n    for (;;) x++;\n}\n"
    assert verify(client, spin, tests)["result"] == [-3]
    crash = "#include <cstdlib>\nint main() {\n    abort();\n}\n"
    assert verify(client, crash, tests)["result"] == [-4]


# --------------------------------------------------------------------------- other languages


def test_nodejs_correct_and_wrong_solutions(client: httpx.Client) -> None:
    needs("nodejs")
    tests = {**SUM_TESTS, "language": "nodejs"}
    got = verify(client, NODE_SUM, tests, fence="```javascript")
    assert (got["reward"], got["result"]) == (1.0, [True, True, True]), got["metadata"]
    got = verify(client, NODE_SUM.replace("a + b", "a * b"), tests)
    # 2 * 0 = 0, not 2: wrong on the first case.
    assert (got["reward"], got["result"]) == (0.0, [-2])


GO_SUM = 'package main\n\nimport "fmt"\n\nfunc main() {\n    var a, b int\n    fmt.Scan(&a, &b)\n' \
         '    fmt.Println(a + b)\n}\n'  # fmt: skip
RUST_SUM = "use std::io::Read;\n\nfn main() {\n    let mut s = String::new();\n" \
           "    std::io::stdin().read_to_string(&mut s).unwrap();\n" \
           "    let v: Vec<i64> = s.split_whitespace().map(|t| t.parse().unwrap()).collect();\n" \
           '    println!("{}", v[0] + v[1]);\n}\n'  # fmt: skip


@pytest.mark.slow  # go build and rustc: seconds each under load
@pytest.mark.parametrize(("language", "code"), [("go", GO_SUM), ("rust", RUST_SUM)])
def test_go_and_rust_correct_and_wrong_solutions(
    client: httpx.Client, language: str, code: str
) -> None:
    needs(language)
    tests = {**SUM_TESTS, "language": language}
    got = verify(client, code, tests)
    assert (got["reward"], got["result"]) == (1.0, [True, True, True]), got["metadata"]
    got = verify(client, code.replace("a + b", "a - b").replace("v[0] + v[1]", "v[0] - v[1]"),
                 tests)  # fmt: skip
    assert (got["reward"], got["result"]) == (0.0, [True, -2])


# --------------------------------------------------------------------------- refused


#: unit_tests -> part of the 422's message
BAD_LANGUAGES: dict[str, tuple[dict[str, Any], str]] = {
    "unknown": ({**SUM_TESTS, "language": "brainfuck"}, "unit_tests.language: Input should be"),
    # A SandboxFusion language asyncpool does not run is no different.
    "sandboxfusion_only": (
        {**SUM_TESTS, "language": "php"}, "unit_tests.language: Input should be",
    ),
    "not_a_string": ({**SUM_TESTS, "language": 1}, "unit_tests.language: Input should be"),
    "call_based": (
        {"inputs": ["1\n2"], "outputs": ["3"], "fn_name": "add", "language": "cpp"},
        "unit_tests.language: 'cpp' applies to stdin/stdout tests (fn_name null); call-based "
        "tests are Python",
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(BAD_LANGUAGES))
def test_a_bad_language_is_a_422_with_a_message(client: httpx.Client, case: str) -> None:
    unit_tests, message = BAD_LANGUAGES[case]
    r = client.post("/verify", json=body("print(1)", unit_tests))
    assert r.status_code == 422, r.text[:300]
    assert message in r.json()["message"], r.json()["message"]


def test_a_language_not_served_is_a_503_without_retry_after_never_a_reward(
    client: httpx.Client,
) -> None:
    code = "public class Main { public static void main(String[] a) { System.out.println(2); } }"
    r = client.post("/verify", json=body(code, {**SUM_TESTS, "language": NOT_SERVED}))
    assert r.status_code == 503, r.text[:300]
    assert "reward" not in r.json()
    message = r.json()["message"]
    assert f"unit_tests.language '{NOT_SERVED}' is not served by this server" in message
    assert "python" in message
    assert "retry-after" not in r.headers  # asking this server again cannot help
    # Python is judged whatever --languages names.
    got = verify(client, "a, b = map(int, input().split())\nprint(a + b)", SUM_TESTS)
    assert got["reward"] == 1.0


@pytest.mark.slow  # a second server process
def test_a_language_without_its_toolchain_is_a_503_naming_the_package(
    ray_cluster: SessionCluster,
) -> None:
    with serving_without("rustc", ray_cluster.address) as srv:
        rust = body("fn main() {}", {**SUM_TESTS, "language": "rust"})
        r = httpx.post(srv.url + "/verify", json=rust, timeout=None)
        assert r.status_code == 503, r.text[:300]
        message = r.json()["message"]
        assert "unit_tests.language 'rust' cannot be judged on this server" in message
        assert "apt-get install rustc" in message
        assert "retry-after" not in r.headers
