"""The examples end to end: ``examples/resource_server.py`` (``asyncpool serve`` embedded in a
program with a route of its own) as a real server process, and the two protocol clients,
``examples/sandboxfusion_client.py`` and ``examples/nemo_gym_client.py``, run against it as
users run them.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import SessionCluster
from tests.test_server import ServeProcess, start_serve, stop

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples"

@pytest.fixture(scope="module")
def example_server(ray_cluster: SessionCluster) -> Iterator[ServeProcess]:
    with tempfile.TemporaryDirectory(prefix="asyncpool-example-server-") as tmp:
        srv = start_serve(
            ["--address", ray_cluster.address, "--max-in-flight", "4"],
            Path(tmp),
            # start_serve appends "serve --port N": the example takes the same flags.
            command=[sys.executable, str(EXAMPLES / "resource_server.py")],
            subcommand=False,
        )
        try:
            yield srv
            assert srv.proc.poll() is None, f"the server died during the tests:\n{srv.log_tail()}"
        finally:
            stop(srv.proc)


def _client(name: str, url: str, *args: str) -> list[dict[str, Any]]:
    proc = subprocess.run(
        # No client timeout: the test's own timeout is the hang guard.
        [sys.executable, str(EXAMPLES / name), "--url", url, "--http-timeout", "0", *args],
        capture_output=True, text=True, check=False, cwd=REPO,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    return [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]


def test_example_server_keeps_its_own_route_beside_the_protocols(
    example_server: ServeProcess,
) -> None:
    r = httpx.get(example_server.url + "/hello", timeout=None)
    assert r.json() == {"hello": "from your own route"}


@pytest.mark.slow
def test_sandboxfusion_client_example_reads_the_answers_it_expects(
    example_server: ServeProcess,
) -> None:
    lines = _client("sandboxfusion_client.py", example_server.url, "--batch", "24")
    by_name = {line["example"]: line for line in lines if "example" in line}
    assert by_name["hello"]["status"] == "Success"
    assert by_name["hello"]["stdout"] == "hello from the sandbox\n"
    assert by_name["stdin"]["stdout"] == "42\n"
    assert (by_name["failing_test"]["status"], by_name["failing_test"]["return_code"]) == (
        "Failed", 1)  # fmt: skip
    assert (by_name["timeout"]["status"], by_name["timeout"]["run_status"]) == (
        "Failed", "TimeLimitExceeded")  # fmt: skip
    assert by_name["files"]["files"] == {"out.txt": "desserts"}
    assert lines[-1] == {"batch": 24, "as_expected": True}


def test_nemo_gym_client_example_gets_the_rewards_worked_out_by_hand(
    example_server: ServeProcess,
) -> None:
    lines = {line["answer"]: line for line in _client("nemo_gym_client.py", example_server.url)}
    assert (lines["stdio_right"]["reward"], lines["stdio_right"]["result"]) == (1.0, [True, True])
    # a * b: 1 * 2 = 2, not 3: the first case fails as a wrong answer.
    assert (lines["stdio_wrong"]["reward"], lines["stdio_wrong"]["result"]) == (0.0, [-2])
    assert (lines["call_right"]["reward"], lines["call_right"]["result"]) == (1.0, [True, True])
    assert lines["call_right"]["extracted_model_code"].startswith("class Solution:")
    assert lines["no_code"] == {"answer": "no_code", "reward": 0.0, "result": None,
                                "extracted_model_code": None}  # fmt: skip
