"""``asyncpool serve``'s ``/run_code`` beyond Python, end to end over HTTP (issue 23 item 4).

Real server processes (started as an operator would, joined to the session's cluster, stopped
by their pid: :mod:`tests.test_server`'s helpers), real compilers in the jail. The programs and
the expected answers are SandboxFusion's own runner tests for these languages
(``sandbox/tests/runners/test_{cpp,java,go,nodejs,rust}.py``): the same status strings, the
same ``compile_result``/``run_result`` shapes. A language whose toolchain is absent on this
machine skips with the package to install (``.ci/run`` installs them all, so CI runs every one).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import SessionCluster
from tests.test_server import (
    RESPONSE_KEYS,
    RESULT_KEYS,
    ServeProcess,
    run_code,
    serving,
    start_serve,
    stop,
)

#: Each language's Debian package (the README's table).
PACKAGES = {"cpp": "g++", "java": "default-jdk-headless", "go": "golang", "nodejs": "nodejs",
            "rust": "rustc"}  # fmt: skip


@pytest.fixture(scope="module")
def server(ray_cluster: SessionCluster) -> Iterator[ServeProcess]:
    with serving(
        ["--address", ray_cluster.address, "--max-run-timeout", "30"], "asyncpool-serve-lang-"
    ) as srv:
        # The pool's first verification starts a Ray worker and its sandbox: paid here, once,
        # rather than by whichever test comes first, within the same budget as the server's
        # own start (a CI run beside 8 busy processes took more than 60 s for it).
        assert run_code(srv, code="print(1)")["status"] == "Success"
        yield srv


@pytest.fixture(scope="module")
def languages(server: ServeProcess) -> dict[str, Any]:
    r = httpx.get(server.url + "/languages", timeout=None)
    assert r.status_code == 200, r.text[:500]
    return r.json()  # type: ignore[no-any-return]


def needs(languages: dict[str, Any], language: str) -> None:
    """Skip, naming the package, when this machine has no toolchain for ``language``."""
    if language not in languages["languages"]:
        pytest.skip(
            f"no {language} toolchain here: install the Debian package {PACKAGES[language]} "
            f"({languages['unavailable'].get(language, 'not listed')})"
        )


def needs_library(languages: dict[str, Any], language: str, name: str, package: str) -> None:
    """Skip, naming the package, when ``language``'s toolchain (:func:`needs`) or the library
    ``name`` SandboxFusion's image ships is not here: a file or directory named ``name`` in the
    sandbox's own :data:`~asyncpool.sandbox._languages.LIBRARIES` for the language (``.ci/run``
    installs it, so CI runs the test)."""
    from asyncpool.sandbox._languages import LIBRARIES

    needs(languages, language)
    found = [path for root in LIBRARIES[language]
             for path in (root, os.path.join(root, name))
             if os.path.basename(path).startswith(name) and os.path.exists(path)]  # fmt: skip
    if not found:
        pytest.skip(f"{language} library {name} absent: install the Debian package {package}")


def unique(code: str) -> str:
    """``code`` with a fresh comment, so that it is compiled now, not taken from the cache."""
    return f"// {uuid.uuid4().hex}\n{code}"


def check_shape(got: dict[str, Any]) -> None:
    assert set(got) == RESPONSE_KEYS
    for step in ("compile_result", "run_result"):
        if got[step] is not None:
            assert set(got[step]) == RESULT_KEYS


CPP_ECHO = """
#include <iostream>
int main() {
    int num;
    std::cin >> num;
    std::cout << num << std::endl;
    return 0;
}
"""


# --------------------------------------------------------------------------- /languages


def test_languages_route_lists_each_toolchain_found_with_its_version(
    languages: dict[str, Any],
) -> None:
    from asyncpool.sandbox import _languages

    # This process looks for the same toolchains on the same machine and PATH.
    assert languages["languages"] == _languages.available()
    assert languages["not_served"] == []
    assert "python" in languages["languages"]
    for language, why in languages["unavailable"].items():
        assert PACKAGES[language] in why


# --------------------------------------------------------------------------- C++


@pytest.mark.slow  # g++ on <iostream>: 4-8 s under this machine's load
def test_cpp_reads_stdin_and_answers_success_with_a_compile_result(
    server: ServeProcess, languages: dict[str, Any]
) -> None:
    needs(languages, "cpp")
    got = run_code(server, language="cpp", code=CPP_ECHO, stdin="65535", run_timeout=5)
    check_shape(got)
    assert (got["status"], got["message"]) == ("Success", "")
    compiled = got["compile_result"]
    assert (compiled["status"], compiled["return_code"]) == ("Finished", 0)
    run = got["run_result"]
    assert (run["status"], run["return_code"], run["stdout"]) == ("Finished", 0, "65535\n")
    assert run["execution_time"] >= 0


@pytest.mark.slow  # 3-5 s measured at load 10-26 (the first g++ of the default tier)
def test_cpp_compile_error_is_failed_with_the_compilers_stderr_and_no_run(
    server: ServeProcess, languages: dict[str, Any]
) -> None:
    needs(languages, "cpp")
    code = "int main() {\n    object i = ?;\n    return 0;\n}\n"
    got = run_code(server, language="cpp", code=code)
    check_shape(got)
    assert got["status"] == "Failed"
    compiled = got["compile_result"]
    assert compiled["status"] == "Finished"
    assert compiled["return_code"] not in (0, None)
    assert "error" in compiled["stderr"]
    assert "object" in compiled["stderr"]
    assert got["run_result"] is None  # SandboxFusion's run_commands runs nothing either


def test_cpp_failed_assertion_is_failed_with_the_message_on_stderr(
    server: ServeProcess, languages: dict[str, Any]
) -> None:
    needs(languages, "cpp")
    code = "#include <cassert>\nint main() {\n    assert(1 == 2);\n    return 0;\n}\n"
    got = run_code(server, language="cpp", code=code)
    check_shape(got)
    assert got["status"] == "Failed"
    assert got["compile_result"]["return_code"] == 0
    run = got["run_result"]
    assert run["status"] == "Finished"
    assert run["return_code"] not in (0, None)
    assert "Assertion" in run["stderr"]


def test_cpp_past_run_timeout_is_time_limit_exceeded_and_failed(
    server: ServeProcess, languages: dict[str, Any]
) -> None:
    needs(languages, "cpp")
    code = "#include <cstdio>\nint main() {\n    puts(\"start\"); fflush(stdout);\n" \
           "    volatile unsigned long x = 0;\n    for (;;) x++;\n}\n"  # fmt: skip
    got = run_code(server, language="cpp", code=code, run_timeout=0.5, compile_timeout=20)
    check_shape(got)
    assert got["status"] == "Failed"
    assert got["compile_result"]["status"] == "Finished"
    run = got["run_result"]
    assert (run["status"], run["return_code"]) == ("TimeLimitExceeded", None)
    assert run["stdout"] == "start\n"
    assert run["execution_time"] >= 0.5


def test_cpp_compile_past_compile_timeout_is_time_limit_exceeded_and_nothing_runs(
    server: ServeProcess, languages: dict[str, Any]
) -> None:
    needs(languages, "cpp")
    # <iostream> alone takes g++ far more than 10 ms; a fresh source so the cache cannot answer.
    got = run_code(server, language="cpp", code=unique(CPP_ECHO), compile_timeout=0.01)
    check_shape(got)
    assert got["status"] == "Failed"
    compiled = got["compile_result"]
    assert (compiled["status"], compiled["return_code"]) == ("TimeLimitExceeded", None)
    assert got["run_result"] is None


def test_compile_timeout_over_the_servers_cap_is_a_422(
    server: ServeProcess, languages: dict[str, Any]
) -> None:
    needs(languages, "cpp")
    r = httpx.post(server.url + "/run_code", timeout=None,
                   json={"language": "cpp", "code": CPP_ECHO, "compile_timeout": 1e6})  # fmt: skip
    assert r.status_code == 422
    assert "compile_timeout" in r.json()["message"]


def test_a_file_named_like_the_compiled_program_is_a_422(
    server: ServeProcess, languages: dict[str, Any]
) -> None:
    needs(languages, "cpp")
    body = {"language": "cpp", "code": CPP_ECHO, "files": {"main": "AAAA"}}
    r = httpx.post(server.url + "/run_code", timeout=None, json=body)
    assert r.status_code == 422
    assert "where the cpp program itself is put" in r.json()["message"]


# --------------------------------------------------------------------------- other languages


@pytest.mark.slow  # javac and a JVM start: seconds under load
def test_java_reads_stdin_and_prints(server: ServeProcess, languages: dict[str, Any]) -> None:
    needs(languages, "java")
    code = """
import java.util.Scanner;

public class Main {
    public static void main(String[] args) {
        Scanner scanner = new Scanner(System.in);
        int number = scanner.nextInt();
        System.out.println(number);
    }
}
"""
    got = run_code(server, language="java", code=code, stdin="65535", run_timeout=10,
                   compile_timeout=30)  # fmt: skip
    check_shape(got)
    assert got["status"] == "Success", got
    assert got["compile_result"]["status"] == "Finished"
    assert (got["run_result"]["status"], got["run_result"]["stdout"]) == ("Finished", "65535\n")


@pytest.mark.slow  # javac and a JVM start: seconds under load
def test_java_assertion_error_is_failed_with_the_exception_on_stderr(
    server: ServeProcess, languages: dict[str, Any]
) -> None:
    needs(languages, "java")
    code = """
public class Main {
    public static void main(String[] args) {
        throw new AssertionError("Intentional assertion error");
    }
}
"""
    got = run_code(server, language="java", code=code, run_timeout=10, compile_timeout=30)
    check_shape(got)
    assert got["status"] == "Failed"
    assert got["run_result"]["status"] == "Finished"
    assert got["run_result"]["return_code"] not in (0, None)
    assert "java.lang.AssertionError" in got["run_result"]["stderr"]


@pytest.mark.slow  # javac and a JVM start: seconds under load
def test_java_external_jar_javatuples_is_on_the_class_path_as_in_sandboxfusion(
    server: ServeProcess, languages: dict[str, Any]
) -> None:
    needs_library(languages, "java", "javatuples", "libjavatuples-java")
    code = """
import org.javatuples.Pair;
import org.javatuples.Triplet;

public class Main {
    public static void main(String[] args) {
        Pair<String, Integer> pair = Pair.with("apple", 1);
        System.out.println("Fruit: " + pair.getValue0() + ", Quantity: " + pair.getValue1());
        Triplet<String, Integer, Double> triplet = Triplet.with("banana", 2, 0.99);
        System.out.println("Fruit: " + triplet.getValue0() + ", Quantity: "
                           + triplet.getValue1() + ", Price: " + triplet.getValue2());
    }
}
"""
    got = run_code(server, language="java", code=unique(code), compile_timeout=30)
    check_shape(got)
    assert got["status"] == "Success", got
    assert got["run_result"]["status"] == "Finished"
    assert "Fruit: banana, Quantity: 2, Price: 0.99" in got["run_result"]["stdout"]


def test_nodejs_lodash_dep_is_found_as_in_sandboxfusion(
    server: ServeProcess, languages: dict[str, Any]
) -> None:
    needs_library(languages, "nodejs", "lodash", "node-lodash")
    code = """
const _ = require("lodash");
const assert = require('assert');

assert(_.isEqual(1, 1))
console.log(_.chunk([1, 2, 3, 4, 5], 2).length)
"""
    got = run_code(server, language="nodejs", code=code, run_timeout=5)
    check_shape(got)
    assert got["status"] == "Success", got
    assert got["run_result"]["stdout"] == "3\n"
    # The same program without the library is an ordinary failure, not an error of the server.
    missing = run_code(server, language="nodejs", code='require("no-such-module-here")')
    assert missing["status"] == "Failed"
    assert "Cannot find module" in missing["run_result"]["stderr"]


def test_nodejs_reads_stdin_and_has_no_compile_result(
    server: ServeProcess, languages: dict[str, Any]
) -> None:
    needs(languages, "nodejs")
    code = """
process.stdin.on('data', (input) => {
    const num = parseInt(input.toString());
    console.log(num);
    process.exit();
});
"""
    got = run_code(server, language="nodejs", code=code, stdin="65535", run_timeout=5)
    check_shape(got)
    assert got["status"] == "Success", got
    assert got["compile_result"] is None
    assert (got["run_result"]["status"], got["run_result"]["stdout"]) == ("Finished", "65535\n")


def test_nodejs_failed_assert_is_failed_with_assertion_error(
    server: ServeProcess, languages: dict[str, Any]
) -> None:
    needs(languages, "nodejs")
    code = "const assert = require('assert');\nassert.strictEqual(1, 2, '1 !== 2');\n"
    got = run_code(server, language="nodejs", code=code)
    check_shape(got)
    assert got["status"] == "Failed"
    assert got["run_result"]["status"] == "Finished"
    assert "AssertionError" in got["run_result"]["stderr"]


def test_rust_reads_stdin_and_prints(server: ServeProcess, languages: dict[str, Any]) -> None:
    needs(languages, "rust")
    code = """
use std::io;

fn main() {
    let mut input = String::new();
    io::stdin().read_line(&mut input).expect("Failed to read line");
    let num: i32 = input.trim().parse().expect("Invalid input");
    println!("{}", num);
}
"""
    got = run_code(server, language="rust", code=code, stdin="65535", compile_timeout=30)
    check_shape(got)
    assert got["status"] == "Success", got
    assert got["compile_result"]["status"] == "Finished"
    assert got["compile_result"]["return_code"] == 0
    assert (got["run_result"]["status"], got["run_result"]["stdout"]) == ("Finished", "65535\n")


def test_rust_compile_error_is_failed_with_no_run(
    server: ServeProcess, languages: dict[str, Any]
) -> None:
    needs(languages, "rust")
    code = 'fn main() {\n    let x: u32 = "Hello, world!";\n    println!("{}", x);\n}\n'
    got = run_code(server, language="rust", code=code, compile_timeout=30)
    check_shape(got)
    assert got["status"] == "Failed"
    assert got["compile_result"]["status"] == "Finished"
    assert got["compile_result"]["return_code"] not in (0, None)
    assert "mismatched types" in got["compile_result"]["stderr"]
    assert got["run_result"] is None


def test_go_reads_stdin_and_prints(server: ServeProcess, languages: dict[str, Any]) -> None:
    needs(languages, "go")
    code = """
package main

import "fmt"

func main() {
    var num int
    fmt.Scan(&num)
    fmt.Println(num)
}
"""
    got = run_code(server, language="go", code=code, stdin="65535", run_timeout=5,
                   compile_timeout=30)  # fmt: skip
    check_shape(got)
    assert got["status"] == "Success", got
    assert got["compile_result"]["status"] == "Finished"
    assert (got["run_result"]["status"], got["run_result"]["stdout"]) == ("Finished", "65535\n")


def test_go_past_run_timeout_is_time_limit_exceeded(
    server: ServeProcess, languages: dict[str, Any]
) -> None:
    needs(languages, "go")
    code = "package main\n\nfunc main() {\n    x := 0\n    for {\n        x++\n    }\n}\n"
    got = run_code(server, language="go", code=code, run_timeout=0.5, compile_timeout=30)
    check_shape(got)
    assert got["status"] == "Failed"
    assert got["run_result"]["status"] == "TimeLimitExceeded"


# --------------------------------------------------------------------------- what is served


@pytest.mark.slow  # a second server process
def test_languages_flag_limits_what_is_served_and_the_rest_get_sandbox_error(
    ray_cluster: SessionCluster,
) -> None:
    from asyncpool.sandbox import _languages

    if "cpp" not in _languages.available():
        pytest.skip("no g++ here: install the Debian package g++")
    with serving(
        ["--address", ray_cluster.address, "--languages", "cpp,python"], "asyncpool-serve-only-"
    ) as srv:
        listed = httpx.get(srv.url + "/languages", timeout=None).json()
        assert set(listed["languages"]) == {"cpp", "python"}
        assert set(listed["not_served"]) == {"java", "go", "nodejs", "rust"}
        assert run_code(srv, language="cpp", code=CPP_ECHO, stdin="7")["run_result"][
            "stdout"
        ] == "7\n"
        assert run_code(srv, code="print(6 * 7)")["run_result"]["stdout"] == "42\n"
        got = run_code(srv, language="nodejs", code="console.log(1)")
        check_shape(got)
        assert got["status"] == "SandboxError"
        assert "not served by this server" in got["message"]
        assert got["run_result"] is None
        assert got["compile_result"] is None


def _path_without(tool: str) -> str | None:
    """``PATH`` with every directory that holds ``tool`` left out, or ``None`` when ``tool`` is
    still found through it (then the case cannot be set up here)."""
    dirs = [d for d in os.environ.get("PATH", "").split(os.pathsep)
            if d and not os.access(os.path.join(d, tool), os.X_OK)]  # fmt: skip
    path = os.pathsep.join(dirs)
    return path if shutil.which(tool, path=path) is None else None


@contextlib.contextmanager
def serving_without(tool: str, address: str) -> Iterator[ServeProcess]:
    """A second server, started with ``tool`` hidden from its ``PATH`` (skips where it cannot
    be hidden), stopped by its pid after the block."""
    path = _path_without(tool)
    if path is None:
        pytest.skip(f"{tool} cannot be hidden from PATH here")
    with tempfile.TemporaryDirectory(prefix=f"asyncpool-serve-no-{tool}-") as tmp:
        srv = start_serve(["--address", address], Path(tmp), env_extra={"PATH": path})
        try:
            yield srv
        finally:
            stop(srv.proc)


@pytest.mark.slow  # a second server process
def test_a_language_without_its_toolchain_gets_sandbox_error_naming_the_package(
    ray_cluster: SessionCluster,
) -> None:
    with serving_without("rustc", ray_cluster.address) as srv:
        listed = httpx.get(srv.url + "/languages", timeout=None).json()
        assert "rust" not in listed["languages"]
        assert "rustc" in listed["unavailable"]["rust"]
        got = run_code(srv, language="rust", code="fn main() {}")
        check_shape(got)
        assert got["status"] == "SandboxError"
        assert "apt-get install rustc" in got["message"]
        assert got["run_result"] is None
        assert run_code(srv, code="print(1)")["status"] == "Success"  # still serving


def test_languages_flag_rejects_an_unknown_name_before_starting(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from asyncpool.cli import main

    with pytest.raises(SystemExit) as exited:
        main(["serve", "--languages", "cpp,brainfuck"])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert "--languages" in err
    assert "'brainfuck'" in err
    assert "python,cpp,java,go,nodejs,rust" in err


def test_languages_flag_naming_a_language_without_its_toolchain_exits_naming_the_package() -> None:
    path = _path_without("rustc")
    if path is None:
        pytest.skip("rustc cannot be hidden from PATH here")
    done = subprocess.run(
        [sys.executable, "-m", "asyncpool", "serve", "--languages", "python,rust",
         "--port", "1"],
        capture_output=True, check=False, env={**os.environ, "PATH": path},
    )  # fmt: skip
    assert done.returncode == 2
    assert "apt-get install rustc" in done.stderr.decode()
