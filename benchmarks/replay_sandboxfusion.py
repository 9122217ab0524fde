"""Replay SandboxFusion's own runner tests, unchanged, over HTTP against ``asyncpool serve``.

Issue 23's must-show: the same status and output as SandboxFusion for every case of its
``sandbox/tests/runners/test_{cpp,java,go,nodejs,rust}.py``. Those files are SandboxFusion's code
(Apache-2.0), so they are not copied here: point ``--repo`` at a checkout of
github.com/bytedance/SandboxFusion. Each file is imported as it is, with the three modules it
imports from SandboxFusion's server answered by asyncpool's own field-for-field models
(:mod:`asyncpool.server.models`), and its ``TestClient(app)`` answered by an ``httpx.Client`` on
the server under test. Every ``test_*`` function then runs as SandboxFusion's CI runs it: its
own asserts are the verdict.

    python -m benchmarks.replay_sandboxfusion --repo PATH [--url http://127.0.0.1:8000]
        [--languages cpp,java,go,nodejs,rust] [--json out.json]

Without ``--url`` a server is started (``asyncpool serve`` on a free loopback port, an embedded
Ray cluster) and stopped by its pid at the end.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import json
import os
import signal
import socket
import subprocess
import sys
import time
import traceback
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx

from asyncpool.server import models

LANGUAGES = ("cpp", "java", "go", "nodejs", "rust")


def _shim(url: str) -> None:
    """Answer the imports of SandboxFusion's runner tests (``sandbox.runners``,
    ``sandbox.server.sandbox_api``, ``sandbox.server.server``, ``fastapi.testclient``)."""
    runners = types.ModuleType("sandbox.runners")
    runners.CommandRunStatus = models.CommandRunStatus  # type: ignore[attr-defined]
    api = types.ModuleType("sandbox.server.sandbox_api")
    api.RunCodeRequest = models.RunCodeRequest  # type: ignore[attr-defined]
    api.RunCodeResponse = models.RunCodeResponse  # type: ignore[attr-defined]
    api.RunStatus = models.RunStatus  # type: ignore[attr-defined]
    server = types.ModuleType("sandbox.server.server")
    server.app = url  # type: ignore[attr-defined]
    testclient = types.ModuleType("fastapi.testclient")

    def client(app: str) -> httpx.Client:
        return httpx.Client(base_url=app, timeout=None)

    testclient.TestClient = client  # type: ignore[attr-defined]
    for name in ("sandbox", "sandbox.server"):
        sys.modules[name] = types.ModuleType(name)
    for module in (runners, api, server, testclient):
        sys.modules[module.__name__] = module


def _tests(path: Path) -> list[tuple[str, Callable[[], Any]]]:
    spec = importlib.util.spec_from_file_location(f"sandboxfusion_{path.stem}", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return [(name, fn) for name, fn in vars(module).items()
            if name.startswith("test_") and callable(fn)]  # fmt: skip


def replay(repo: Path, url: str, languages: list[str]) -> list[dict[str, Any]]:
    """Run every test of each language's runner file; one row per test."""
    _shim(url)
    rows = []
    for language in languages:
        path = repo / "sandbox" / "tests" / "runners" / f"test_{language}.py"
        for name, fn in _tests(path):
            out = io.StringIO()
            t0 = time.perf_counter()
            try:
                with contextlib.redirect_stdout(out):
                    fn()
                verdict, why = "passed", ""
            except Exception as exc:
                verdict = "failed"
                why = "".join(traceback.format_exception_only(exc)).strip()[-400:]
            rows.append({"language": language, "test": name, "verdict": verdict,
                         "seconds": round(time.perf_counter() - t0, 2), "why": why})  # fmt: skip
            print(f"{language:<7}{name:<45}{verdict:<8}{rows[-1]['seconds']:>7}  {why[:120]}",
                  flush=True)
    return rows


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def _server() -> Iterator[str]:
    """A new ``asyncpool serve`` on loopback (embedded Ray), stopped by its pid."""
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "asyncpool", "serve", "--port", str(port)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        while True:  # the server's start is Ray's start: no deadline of ours
            if proc.poll() is not None:
                raise SystemExit(f"asyncpool serve exited with {proc.returncode} at start")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(url + "/health", timeout=None).status_code == 200:
                    break
            time.sleep(0.5)
        yield url
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait()


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--repo", type=Path, required=True, help="a SandboxFusion checkout")
    ap.add_argument("--url", default=None, help="a running asyncpool serve (default: start one)")
    ap.add_argument("--languages", default=",".join(LANGUAGES))
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    languages = [x for x in args.languages.split(",") if x]
    for language in languages:
        if language not in LANGUAGES:
            ap.error(f"unknown language {language!r}; known: {', '.join(LANGUAGES)}")
    if not (args.repo / "sandbox" / "tests" / "runners").is_dir():
        ap.error(f"{args.repo} has no sandbox/tests/runners: not a SandboxFusion checkout")
    with contextlib.ExitStack() as stack:
        url = args.url or stack.enter_context(_server())
        rows = replay(args.repo, url, languages)
    print()
    print(f"{'language':<10}{'passed':>8}{'of':>5}  failed")
    for language in languages:
        mine = [r for r in rows if r["language"] == language]
        passed = sum(r["verdict"] == "passed" for r in mine)
        failed = ", ".join(r["test"] for r in mine if r["verdict"] != "passed") or "-"
        print(f"{language:<10}{passed:>8}{len(mine):>5}  {failed}")
    total = sum(r["verdict"] == "passed" for r in rows)
    print(f"{'all':<10}{total:>8}{len(rows):>5}")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
