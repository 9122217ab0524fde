"""A SandboxFusion client, pointed at ``asyncpool serve``: nothing in it is asyncpool's.

    python examples/sandboxfusion_client.py --url http://127.0.0.1:8000

The request is the one verl's SandboxFusion reward sends (``code``, ``stdin``,
``compile_timeout``, ``run_timeout``, ``memory_limit_MB``, ``language``, ``files``,
``fetch_files``) and the answer is read the way it reads SandboxFusion's: ``status`` is
``Success`` when the program exited 0, ``run_result`` holds its ``status``
(``Finished``/``TimeLimitExceeded``), ``return_code``, ``stdout`` and ``stderr``. A batch of
checks then goes out concurrently (``httpx.AsyncClient``), as a trainer scoring a batch does.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
from typing import Any

import httpx


def payload(code: str, stdin: str = "", run_timeout: float = 10, **extra: Any) -> dict[str, Any]:
    """SandboxFusion's ``RunCodeRequest`` as verl builds it."""
    return {
        "compile_timeout": 10,
        "run_timeout": run_timeout,
        "code": code,
        "stdin": stdin,
        "memory_limit_MB": 1024,
        "language": "python",
        "files": {},
        "fetch_files": [],
        **extra,
    }


EXAMPLES = {
    "hello": payload("print('hello from the sandbox')"),
    "stdin": payload("a, b = map(int, input().split())\nprint(a * b)", stdin="6 7\n"),
    "failing_test": payload("def add(a, b):\n    return a - b\n\nassert add(2, 2) == 4\n"),
    "timeout": payload("while True:\n    pass", run_timeout=1),
    "files": payload(
        "data = open('input.txt').read()\nopen('out.txt', 'w').write(data[::-1])",
        files={"input.txt": base64.b64encode(b"stressed").decode()},
        fetch_files=["out.txt"],
    ),
}


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    p.add_argument("--url", default="http://127.0.0.1:8000")
    p.add_argument("--batch", type=int, default=32, help="programs in the concurrent batch")
    p.add_argument(
        "--http-timeout", type=float, default=120.0, metavar="SECONDS",
        help="how long to wait for each answer (120; 0: as long as it takes, e.g. on a "
        "machine too loaded to bound it)",
    )  # fmt: skip
    args = p.parse_args(argv)
    url = args.url.rstrip("/")
    timeout = args.http_timeout or None

    with httpx.Client(base_url=url, timeout=timeout) as client:
        for name, body in EXAMPLES.items():
            answer = client.post("/run_code", json=body).raise_for_status().json()
            run = answer["run_result"] or {}
            files = {k: base64.b64decode(v).decode() for k, v in answer["files"].items()}
            print(json.dumps({"example": name, "status": answer["status"],
                              "run_status": run.get("status"),
                              "return_code": run.get("return_code"),
                              "stdout": run.get("stdout"), "files": files}))  # fmt: skip

    async def batch() -> list[str]:
        programs = [payload(f"assert sum(range({n})) == {n * (n - 1) // 2 + (n % 3 == 0)}")
                    for n in range(args.batch)]  # fmt: skip
        async with httpx.AsyncClient(base_url=url, timeout=timeout) as client:
            answers = await asyncio.gather(*(client.post("/run_code", json=b) for b in programs))
        return [a.raise_for_status().json()["status"] for a in answers]

    statuses = asyncio.run(batch())
    # Every third program (n divisible by 3) asserts a wrong sum.
    expected = ["Failed" if n % 3 == 0 else "Success" for n in range(args.batch)]
    print(json.dumps({"batch": len(statuses), "as_expected": statuses == expected}))


if __name__ == "__main__":
    main()
