"""``asyncpool serve`` end to end: a real server process, reached over HTTP on 127.0.0.1.

One server per module (it joins the session's cluster with ``--address``), started as an
operator would start it (``python -m asyncpool serve``, its own session), polled on ``/health``
with a deadline, stopped by its pid. The shapes are SandboxFusion's and NeMo-Gym's as they
publish them; the rewards are checked against labels worked out by hand for each program.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import SessionCluster, wait_for

REPO = Path(__file__).resolve().parents[1]
MAX_BODY = 256 * 1024  # small, so the oversized cases stay cheap

pytestmark = pytest.mark.timeout(300)


# --------------------------------------------------------------------------- the server process


@dataclass
class ServeProcess:
    """A running ``asyncpool serve``: its process, its URL and its log."""

    proc: subprocess.Popen[bytes]
    url: str
    log: Path

    def log_tail(self, n: int = 40) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-n:])
        except OSError:
            return "<no log>"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def stop(proc: subprocess.Popen[bytes], grace: float = 30.0) -> None:
    """Stop a process we started, by its pid: SIGTERM, then SIGKILL after ``grace`` s."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


def _healthy(url: str, proc: subprocess.Popen[bytes]) -> bool:
    if proc.poll() is not None:
        raise AssertionError(f"the server exited with {proc.returncode} before it was healthy")
    try:
        r = httpx.get(url + "/health", timeout=None)
    except httpx.TransportError:
        return False
    return r.status_code == 200 and r.json()["status"] == "ok"


def start_serve(
    args: list[str],
    log_dir: Path,
    *,
    command: list[str] | None = None,
    subcommand: bool = True,
    startup: float = 600,
    env_extra: dict[str, str] | None = None,
) -> ServeProcess:
    """Start ``asyncpool serve`` (or ``command`` [serve]) with ``args`` on a free port; return
    once ``/health`` is ok."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("RAY_ADDRESS", "ASYNCPOOL_ADDRESS")}
    env.update(env_extra or {})
    log = log_dir / f"serve-{port}.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [*(command or [sys.executable, "-m", "asyncpool"]), *(["serve"] * subcommand),
             "--port", str(port), *args],
            env=env,
            cwd=log_dir,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own session, as a service runs
        )
    srv = ServeProcess(proc, f"http://127.0.0.1:{port}", log)
    try:
        wait_for(lambda: _healthy(srv.url, proc), timeout=startup, interval=0.2)
    except BaseException as exc:
        stop(proc)
        raise AssertionError(f"{exc}\nserver log:\n{srv.log_tail()}") from None
    return srv


@contextlib.contextmanager
def serving(args: list[str], prefix: str) -> Iterator[ServeProcess]:
    """A test module's server: started in a temporary directory of its own, checked to be
    still alive after the module's tests, stopped by its pid."""
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        srv = start_serve(args, Path(tmp))
        try:
            yield srv
            assert srv.proc.poll() is None, f"the server died during the tests:\n{srv.log_tail()}"
        finally:
            stop(srv.proc)


@pytest.fixture(scope="module")
def server(ray_cluster: SessionCluster) -> Iterator[ServeProcess]:
    with serving(
        [
            "--address", ray_cluster.address,
            "--max-in-flight", str(2 * (os.cpu_count() or 1)),
            "--max-body-bytes", str(MAX_BODY),
            "--verify-timeout", "2",
            "--max-run-timeout", "30",
        ],
        "asyncpool-serve-",
    ) as srv:  # fmt: skip
        yield srv


def run_code(srv: ServeProcess, timeout: float | None = None, **body: Any) -> dict[str, Any]:
    """POST ``/run_code`` and return its answer. No HTTP timeout by default: the test's own
    timeout is the hang guard, and how long a verification takes depends on the load."""
    body.setdefault("language", "python")
    r = httpx.post(srv.url + "/run_code", json=body, timeout=timeout)
    assert r.status_code == 200, r.text[:500]
    return r.json()  # type: ignore[no-any-return]


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


# --------------------------------------------------------------------------- SandboxFusion

RESPONSE_KEYS = {"status", "message", "compile_result", "run_result", "executor_pod_name", "files"}
RESULT_KEYS = {"status", "execution_time", "return_code", "stdout", "stderr"}


def test_run_code_print_answers_sandboxfusions_success_shape(server: ServeProcess) -> None:
    got = run_code(server, code="print('hello')\nimport sys; print('warn', file=sys.stderr)")
    assert set(got) == RESPONSE_KEYS
    assert set(got["run_result"]) == RESULT_KEYS
    assert got["status"] == "Success"
    assert got["message"] == ""
    assert got["compile_result"] is None
    assert got["files"] == {}
    run = got["run_result"]
    assert (run["status"], run["return_code"]) == ("Finished", 0)
    assert run["stdout"] == "hello\n"
    assert run["stderr"] == "warn\n"
    assert 0 <= run["execution_time"] < 30


def test_run_code_passes_stdin_to_the_program(server: ServeProcess) -> None:
    got = run_code(server, code="a, b = map(int, input().split())\nprint(a + b)", stdin="3 4\n")
    assert got["status"] == "Success"
    assert got["run_result"]["stdout"] == "7\n"


def test_run_code_past_run_timeout_is_time_limit_exceeded_and_failed(
    server: ServeProcess,
) -> None:
    t0 = time.monotonic()
    got = run_code(server, code="import time\nprint('start', flush=True)\ntime.sleep(60)",
                   run_timeout=1)  # fmt: skip
    assert time.monotonic() - t0 < 60  # stopped, not slept out
    assert got["status"] == "Failed"
    run = got["run_result"]
    assert run["status"] == "TimeLimitExceeded"
    assert run["return_code"] is None
    assert run["execution_time"] >= 1 - 0.05


def test_run_code_assertion_error_is_failed_with_exit_status_1(server: ServeProcess) -> None:
    got = run_code(server, code="def f():\n    return 1\n\nassert f() == 2, 'f is wrong'\n")
    assert got["status"] == "Failed"
    assert got["message"] == ""
    run = got["run_result"]
    assert (run["status"], run["return_code"]) == ("Finished", 1)
    assert "AssertionError: f is wrong" in run["stderr"]


def test_run_code_syntax_error_is_failed_with_the_error_on_stderr(server: ServeProcess) -> None:
    got = run_code(server, code="def f(:\n    pass\n")
    assert got["status"] == "Failed"
    assert got["run_result"]["return_code"] == 1
    assert "SyntaxError" in got["run_result"]["stderr"]
    assert got["run_result"]["stdout"] == ""


def test_run_code_writes_files_before_the_program_runs(server: ServeProcess) -> None:
    got = run_code(
        server,
        code="print(open('data/in.txt').read().upper(), open('raw.bin', 'rb').read().hex())",
        files={"data/in.txt": b64(b"abc"), "raw.bin": b64(b"\x00\xff"), "skipped.txt": None},
    )
    assert got["status"] == "Success", got
    assert got["run_result"]["stdout"] == "ABC 00ff\n"


def test_run_code_fetch_files_returns_what_exists_base64(server: ServeProcess) -> None:
    got = run_code(
        server,
        code="open('out.txt', 'w').write('result 42')\n"
        "import os; os.makedirs('sub'); open('sub/b.bin', 'wb').write(bytes([1, 2]))",
        fetch_files=["out.txt", "sub/b.bin", "missing.txt"],
    )
    assert got["status"] == "Success", got
    assert got["files"] == {"out.txt": b64(b"result 42"), "sub/b.bin": b64(b"\x01\x02")}


def test_run_code_non_zero_exit_is_failed_with_its_status(server: ServeProcess) -> None:
    got = run_code(server, code="import sys\nprint('bye')\nsys.exit(3)")
    assert got["status"] == "Failed"
    assert got["run_result"]["return_code"] == 3
    assert got["run_result"]["stdout"] == "bye\n"


@pytest.mark.parametrize("language", ["php", "brainfuck"])
def test_run_code_other_languages_get_a_sandbox_error_response(
    server: ServeProcess, language: str
) -> None:
    got = run_code(server, code="int main() { return 0; }", language=language)
    assert set(got) == RESPONSE_KEYS
    assert got["status"] == "SandboxError"
    assert "not supported by asyncpool serve" in got["message"]
    assert got["run_result"] is None


def test_run_code_ignores_unknown_fields_as_sandboxfusion_does(server: ServeProcess) -> None:
    got = run_code(server, code="print(1)", compile_timeout=3, client_extra={"a": 1})
    assert got["status"] == "Success"


# --------------------------------------------------------------------------- NeMo-Gym

CREATE_PARAMS = {"input": [{"role": "user", "content": "Solve it.", "type": "message"}],
                 "temperature": 1.0}  # fmt: skip


def responses_object(text: str, reasoning: str | None = None) -> dict[str, Any]:
    """An OpenAI Responses object whose output text is ``text``."""
    output: list[dict[str, Any]] = []
    if reasoning is not None:
        output.append({"id": "rs_1", "type": "reasoning",
                       "summary": [{"type": "summary_text", "text": reasoning}]})  # fmt: skip
    output.append(
        {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}],
        }
    )
    return {"id": "resp_1", "object": "response", "created_at": 1.0, "model": "policy",
            "output": output, "parallel_tool_calls": True, "tool_choice": "auto",
            "tools": []}  # fmt: skip


def fenced(code: str, before: str = "Here is my solution.\n") -> str:
    return f"{before}```python\n{code}\n```\n"


STDIO_TESTS = {"inputs": ["2 0\n", "1 1\n", "10 -3\n"], "outputs": ["2\n", "2\n", "7\n"],
               "fn_name": None}  # fmt: skip
CALL_TESTS = {"inputs": ["[2,7,11,15]\n9", "[3,2,4]\n6", "[3,3]\n6"],
              "outputs": ["[0,1]", "[1,2]", "[0,1]"], "fn_name": "twoSum"}  # fmt: skip

TWO_SUM = """class Solution:
    def twoSum(self, nums: List[int], target: int) -> List[int]:
        seen = {}
        for i, x in enumerate(nums):
            if target - x in seen:
                return [seen[target - x], i]
            seen[x] = i
"""

#: (model text, unit tests, expected reward, expected result), each worked out by hand.
VERIFY_CASES: dict[str, tuple[str, dict[str, Any], float, list[Any] | None]] = {
    "stdio_correct": (
        fenced("a, b = map(int, input().split())\nprint(a + b)"), STDIO_TESTS, 1.0,
        [True, True, True],
    ),
    # a - b: right on "2 0", wrong on "1 1" (0, not 2): LiveCodeBench stops there.
    "stdio_wrong_answer": (
        fenced("a, b = map(int, input().split())\nprint(a - b)"), STDIO_TESTS, 0.0, [True, -2],
    ),
    "stdio_runtime_error": (fenced("raise ValueError('no')"), STDIO_TESTS, 0.0, [-4]),
    "stdio_time_limit": (fenced("while True:\n    pass"), STDIO_TESTS, 0.0, [-3]),
    "stdio_main_guard": (
        fenced("import sys\ndef main():\n    a, b = map(int, sys.stdin.read().split())\n"
               "    print(a + b)\n\nif __name__ == '__main__':\n    main()"),
        STDIO_TESTS, 1.0, [True, True, True],
    ),
    # Two blocks: LiveCodeBench takes the last one.
    "last_block_counts": (
        fenced("print('draft')") + fenced("a, b = map(int, input().split())\nprint(a + b)",
                                          before="Final:\n"),
        STDIO_TESTS, 1.0, [True, True, True],
    ),
    "call_based_correct": (fenced(TWO_SUM), CALL_TESTS, 1.0, [True, True, True]),
    # Always [0, 1]: right on cases 0, wrong on case 1.
    "call_based_wrong": (
        fenced("class Solution:\n    def twoSum(self, nums, target):\n        return [0, 1]"),
        CALL_TESTS, 0.0, [True, False],
    ),
    # A tuple counts as the list it holds (LiveCodeBench's rule).
    "call_based_tuple": (
        fenced(TWO_SUM.replace("return [seen[target - x], i]", "return (seen[target - x], i)")),
        CALL_TESTS, 1.0, [True, True, True],
    ),
    "call_based_function": (
        fenced("def add(a, b):\n    return a + b"),
        {"inputs": ["1\n2", "0.1\n0.2"], "outputs": ["3", "0.3"], "fn_name": "add"}, 1.0,
        [True, True],
    ),
    "call_based_raises": (
        fenced("class Solution:\n    def twoSum(self, nums, target):\n        return nums[99]"),
        CALL_TESTS, 0.0, [-4],
    ),
    # numpy scalars compare as LiveCodeBench's ``prediction == expected`` compares them...
    "call_based_numpy_scalars": (
        fenced("import numpy as np\n" + TWO_SUM.replace(
            "return [seen[target - x], i]", "return [np.int64(seen[target - x]), np.int64(i)]"
        )),
        CALL_TESTS, 1.0, [True, True, True],
    ),
    # ... and an array is an error there (the truth of ``array == list`` is ambiguous)
    "call_based_numpy_array": (
        fenced("import numpy as np\nclass Solution:\n    def twoSum(self, nums, target):\n"
               "        return np.array([0, 1])"),
        CALL_TESTS, 0.0, [-4],
    ),
}


@pytest.fixture(scope="module")
def verify_client(server: ServeProcess) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, timeout=None) as client:
        yield client


@pytest.mark.parametrize("case", sorted(VERIFY_CASES))
def test_verify_rewards_match_hand_checked_labels(
    verify_client: httpx.Client, case: str
) -> None:
    text, tests, reward, result = VERIFY_CASES[case]
    body = {
        "responses_create_params": CREATE_PARAMS,
        "response": responses_object(text),
        "verifier_metadata": {"unit_tests": tests, "difficulty": "easy"},
    }
    r = verify_client.post("/verify", json=body)
    assert r.status_code == 200, r.text[:500]
    got = r.json()
    assert (got["reward"], got["result"]) == (reward, result), got.get("metadata")
    # The request comes back as it was sent, with the verdict beside it.
    for key in ("responses_create_params", "response", "verifier_metadata"):
        assert got[key] == body[key]
    assert got["extracted_model_output"] == text
    assert got["extracted_model_code"] is not None
    assert got["extracted_model_code"] in text
    assert got["difficulty"] == "easy"
    assert got["reasoning_format_violation_rate"] == 0.0
    assert got["unit_tests_time_taken"] >= 0
    if reward == 0.0:
        assert got["metadata"]["error_code"] in (-2, -3, -4)


def test_verify_without_a_code_block_gets_zero_and_runs_nothing(
    verify_client: httpx.Client,
) -> None:
    body = {"responses_create_params": CREATE_PARAMS,
            "response": responses_object("I think the answer is print(3)."),
            "verifier_metadata": {"unit_tests": STDIO_TESTS}}  # fmt: skip
    got = verify_client.post("/verify", json=body).json()
    assert got["reward"] == 0.0
    assert got["extracted_model_code"] is None
    assert got["result"] is None
    assert got["extracted_model_output"] == "I think the answer is print(3)."


def test_verify_think_tags_in_the_answer_are_penalised_as_code_gen_does(
    verify_client: httpx.Client,
) -> None:
    good = fenced("a, b = map(int, input().split())\nprint(a + b)")
    body = {"responses_create_params": CREATE_PARAMS,
            "response": responses_object("<think>hmm</think>" + good),
            "verifier_metadata": {"unit_tests": STDIO_TESTS}}  # fmt: skip
    got = verify_client.post("/verify", json=body).json()
    assert got["result"] == [True, True, True]
    assert got["reward"] == 0.0
    assert got["reasoning_format_violation_rate"] == 1.0


def test_nemo_gym_liveness_and_seed_session(server: ServeProcess) -> None:
    assert httpx.get(server.url + "/", timeout=None).json() == {"status": "ok"}
    r = httpx.post(server.url + "/seed_session", json={}, timeout=None)
    assert (r.status_code, r.json()) == (200, {})


# --------------------------------------------------------------------------- bad input


def _chunks(total: int, size: int = 16384) -> Iterator[bytes]:
    sent = 0
    while sent < total:
        n = min(size, total - sent)
        sent += n
        yield b"x" * n


GOOD_VERIFY = {"responses_create_params": CREATE_PARAMS,
               "response": responses_object(fenced("print(1)")),
               "verifier_metadata": {"unit_tests": STDIO_TESTS}}  # fmt: skip


def _verify_with(**metadata: Any) -> dict[str, Any]:
    return {**GOOD_VERIFY, "verifier_metadata": metadata}


#: case -> (route, keyword arguments of the POST, expected status, part of the message)
BAD_INPUT: dict[str, tuple[str, Callable[[], dict[str, Any]], int, str]] = {
    "run_code_not_json": ("/run_code", lambda: {"content": b'{"code": '}, 422, "not valid JSON"),
    "run_code_not_an_object": ("/run_code", lambda: {"json": ["print(1)"]}, 422, "dictionary"),
    "run_code_missing_code": (
        "/run_code", lambda: {"json": {"language": "python"}}, 422, "code: Field required",
    ),
    "run_code_missing_language": (
        "/run_code", lambda: {"json": {"code": "print(1)"}}, 422, "language: Field required",
    ),
    "run_code_wrong_type": (
        "/run_code", lambda: {"json": {"code": ["x"], "language": "python"}}, 422,
        "code: Input should be a valid string",
    ),
    "run_code_zero_timeout": (
        "/run_code", lambda: {"json": {"code": "1", "language": "python", "run_timeout": 0}},
        422, "run_timeout: must be > 0",
    ),
    "run_code_timeout_over_cap": (
        "/run_code", lambda: {"json": {"code": "1", "language": "python", "run_timeout": 1e9}},
        422, "<= 30 seconds",
    ),
    "run_code_bad_memory": (
        "/run_code", lambda: {"json": {"code": "1", "language": "python", "memory_limit_MB": 3}},
        422, "memory_limit_MB",
    ),
    "run_code_bad_base64": (
        "/run_code",
        lambda: {"json": {"code": "1", "language": "python", "files": {"a.txt": "%%%"}}},
        422, "not valid base64",
    ),
    "run_code_file_outside": (
        "/run_code",
        lambda: {"json": {"code": "1", "language": "python", "files": {"../a": b64(b"x")}}},
        422, "not a relative path",
    ),
    "run_code_fetch_absolute": (
        "/run_code",
        lambda: {"json": {"code": "1", "language": "python", "fetch_files": ["/etc/passwd"]}},
        422, "not a relative path",
    ),
    "run_code_body_declared_too_large": (
        "/run_code", lambda: {"content": b"x" * (MAX_BODY * 2)}, 413, "over the limit",
    ),
    "run_code_body_streamed_too_large": (
        "/run_code", lambda: {"content": _chunks(MAX_BODY * 3)}, 413, "over the limit",
    ),
    "verify_not_json": ("/verify", lambda: {"content": b"{"}, 422, "not valid JSON"),
    "verify_missing_response": (
        "/verify", lambda: {"json": {"responses_create_params": {}}}, 422,
        "response: Field required",
    ),
    "verify_missing_unit_tests": (
        "/verify", lambda: {"json": _verify_with(difficulty="easy")}, 422,
        "unit_tests: Field required",
    ),
    "verify_unit_tests_wrong_type": (
        "/verify", lambda: {"json": _verify_with(unit_tests={"inputs": "1", "outputs": []})},
        422, "unit_tests.inputs",
    ),
    "verify_cases_mismatch": (
        "/verify",
        lambda: {"json": _verify_with(unit_tests={"inputs": ["1", "2"], "outputs": ["1"]})},
        422, "2 inputs but 1 outputs",
    ),
    "verify_no_cases": (
        "/verify", lambda: {"json": _verify_with(unit_tests={"inputs": [], "outputs": []})},
        422, "at least one case",
    ),
    "verify_call_based_not_json": (
        "/verify",
        lambda: {"json": _verify_with(
            unit_tests={"inputs": ["nope"], "outputs": ["1"], "fn_name": "f"})},
        422, "is not JSON",
    ),
    "verify_bad_fn_name": (
        "/verify",
        lambda: {"json": _verify_with(
            unit_tests={"inputs": ["1"], "outputs": ["1"], "fn_name": "f(); import os"})},
        422, "is not a name",
    ),
    "verify_body_too_large": (
        "/verify", lambda: {"content": b"{" * (MAX_BODY + 1)}, 413, "over the limit",
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(BAD_INPUT))
def test_bad_input_gets_a_4xx_with_a_message_and_the_server_stays_up(
    server: ServeProcess, case: str
) -> None:
    route, make_kwargs, status, message = BAD_INPUT[case]
    with httpx.Client(base_url=server.url, timeout=None) as client:
        r = client.post(route, headers={"content-type": "application/json"}, **make_kwargs())
        assert r.status_code == status, r.text[:300]
        assert message in r.json()["message"], r.json()["message"]
        assert len(r.content) < 4096, "the error echoes the request back"
        assert client.get("/health").status_code == 200
    assert server.proc.poll() is None


def test_a_run_still_works_after_bad_input(server: ServeProcess) -> None:
    with httpx.Client(base_url=server.url, timeout=None) as client:
        for _ in range(3):
            client.post("/run_code", content=b"{", headers={"content-type": "application/json"})
    assert run_code(server, code="print(6 * 7)")["run_result"]["stdout"] == "42\n"


# --------------------------------------------------------------------------- bounded load

LOAD_REQUESTS = 200
LOAD_CONCURRENCY = 64


async def _load(srv: ServeProcess, work: list[Any]) -> tuple[list[Any], float, str]:
    limits = httpx.Limits(max_connections=LOAD_CONCURRENCY,
                          max_keepalive_connections=LOAD_CONCURRENCY)  # fmt: skip
    async with httpx.AsyncClient(base_url=srv.url, limits=limits, timeout=None) as client:

        async def one(program: str) -> httpx.Response:
            return await client.post("/run_code", json={"code": program, "language": "python"})

        t0 = time.perf_counter()
        answers = await asyncio.gather(
            *(one(item.program) for item in work), return_exceptions=True
        )
        wall = time.perf_counter() - t0
        metrics = (await client.get("/metrics")).text
    return answers, wall, metrics


@pytest.mark.slow
def test_200_humaneval_run_codes_at_64_concurrent_all_answered_correctly(
    server: ServeProcess,
) -> None:
    """Loopback only, bounded in count and time: every answer right, no 5xx. (One event loop
    is enough to load the server: this test runs once, not on both loops.)"""
    from asyncpool._bench.humaneval import items

    work = items(LOAD_REQUESTS, seed=3)
    answers, wall, metrics = asyncio.run(_load(server, work))
    failures = [repr(a) for a in answers if isinstance(a, BaseException)]
    assert not failures, failures[:3]
    responses = [a for a in answers if isinstance(a, httpx.Response)]
    bad = [(r.status_code, r.text[:200]) for r in responses if r.status_code != 200]
    assert not bad, f"{len(bad)} non-200 answers, e.g. {bad[:3]}\n{server.log_tail()}"
    wrong = [
        (item.task_id, item.expected, r.json()["status"])
        for item, r in zip(work, responses, strict=True)
        if (r.json()["status"] == "Success") != item.expected
    ]
    assert not wrong, f"{len(wrong)} wrong verdicts, e.g. {wrong[:3]}"
    assert 'asyncpool_serve_requests_total{outcome="error",route="/run_code"}' not in metrics
    print(f"\n[serve] {LOAD_REQUESTS} /run_code at {LOAD_CONCURRENCY} concurrent in {wall:.1f}s: "
          f"{LOAD_REQUESTS / wall * 60:.0f}/min")  # fmt: skip
