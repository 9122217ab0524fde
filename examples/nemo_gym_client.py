"""A NeMo-Gym resource-server client for code, pointed at ``asyncpool serve``.

    python examples/nemo_gym_client.py --url http://127.0.0.1:8000

NeMo-Gym's rollout loop seeds a session (``POST /seed_session``), has the policy answer, then
asks the resource server to ``POST /verify`` the answer. The body is ``code_gen``'s task shape:
the ``responses_create_params`` the policy got, its ``response`` (an OpenAI Responses object;
the model's text is its output text) and ``verifier_metadata.unit_tests`` in LiveCodeBench's
format (``fn_name`` null: stdin/stdout cases; a name: call-based). The answer is the request
echoed with ``reward`` (1.0 when every case passed), ``extracted_model_code`` (the last fenced
block of the text) and LiveCodeBench's per-case ``result``.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

import httpx

PROMPT = "Read two integers and print their sum. Answer with a ```python block."


def responses_object(text: str) -> dict[str, Any]:
    """The policy's answer as the OpenAI Responses API returns it."""
    return {
        "id": "resp_0",
        "object": "response",
        "created_at": 0.0,
        "model": "policy",
        "output": [
            {
                "id": "msg_0",
                "type": "message",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": text, "annotations": []}],
            }
        ],
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
    }


STDIO = {"inputs": ["1 2\n", "10 -4\n"], "outputs": ["3\n", "6\n"], "fn_name": None}
CALL = {"inputs": ["[1,2,3]", "[]"], "outputs": ["6", "0"], "fn_name": "total"}

ANSWERS = {
    "stdio_right": ("```python\na, b = map(int, input().split())\nprint(a + b)\n```", STDIO),
    "stdio_wrong": ("```python\na, b = map(int, input().split())\nprint(a * b)\n```", STDIO),
    "call_right": (
        "```python\nclass Solution:\n    def total(self, xs):\n        return sum(xs)\n```", CALL,
    ),
    "no_code": ("The sum is a + b.", STDIO),
}  # fmt: skip


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    p.add_argument("--url", default="http://127.0.0.1:8000")
    p.add_argument(
        "--http-timeout", type=float, default=120.0, metavar="SECONDS",
        help="how long to wait for each answer (120; 0: as long as it takes, e.g. on a "
        "machine too loaded to bound it)",
    )  # fmt: skip
    args = p.parse_args(argv)
    timeout = args.http_timeout or None
    with httpx.Client(base_url=args.url.rstrip("/"), timeout=timeout) as client:
        assert client.get("/").json() == {"status": "ok"}
        client.post("/seed_session", json={}).raise_for_status()
        for name, (text, tests) in ANSWERS.items():
            body = {
                "responses_create_params": {"input": [{"role": "user", "content": PROMPT}]},
                "response": responses_object(text),
                "verifier_metadata": {"unit_tests": tests},
            }
            answer = client.post("/verify", json=body).raise_for_status().json()
            print(json.dumps({"answer": name, "reward": answer["reward"],
                              "result": answer["result"],
                              "extracted_model_code": answer["extracted_model_code"]}))  # fmt: skip


if __name__ == "__main__":
    main()
