"""SandboxFusion's ``POST /run_code`` for ``language="python"``, on asyncpool's sandbox.

The request is checked and decoded on the server (:func:`prepare`: a clear 422 before anything
is submitted), run in a Ray worker (:func:`execute`, through
:func:`asyncpool.sandbox.run_program`), and the verdict is mapped to SandboxFusion's response
(:func:`respond`) the way SandboxFusion maps its own runs (``parse_run_status``):

=================================  ===============================  =================
sandbox verdict                    ``run_result``                   ``status``
=================================  ===============================  =================
exit 0 (``passed``)                ``Finished``, ``return_code`` 0  ``Success``
non-zero exit, memory limit,       ``Finished``, the exit status    ``Failed``
killed by a signal                 (``-signal`` when killed)
time limit (``timeout``)           ``TimeLimitExceeded``,           ``Failed``
                                   ``return_code`` ``None``
the sandbox could not judge it     ``None``                         ``SandboxError``
=================================  ===============================  =================

Python has no compile step in SandboxFusion either: ``compile_result`` is always ``None`` and
``compile_timeout`` is accepted and unused. ``memory_limit_MB`` of ``-1`` (SandboxFusion's
default, "no limit") means the server's ``--memory-mb``; the sandbox always has a limit.
``files`` are written (base64-decoded) under the program's working directory before it starts;
``fetch_files`` are read from there after it exits and returned base64-encoded, a file that does
not exist being left out, as SandboxFusion does. ``executor_pod_name`` is the ``MY_POD_NAME``
environment variable of the node that ran the program (SandboxFusion's convention), else ``None``.
"""

from __future__ import annotations

import base64
import binascii
import math
import os
import posixpath
from dataclasses import dataclass
from typing import Any

from .models import (
    SANDBOXFUSION_LANGUAGES,
    CommandRunResult,
    CommandRunStatus,
    RunCodeRequest,
    RunCodeResponse,
    RunStatus,
)

__all__ = [
    "BadRequest",
    "Limits",
    "RunCodeJob",
    "execute",
    "prepare",
    "respond",
    "unsupported_language",
]


class BadRequest(ValueError):
    """A request that is well-formed JSON but cannot be run: answered 422 with this message."""


@dataclass(frozen=True)
class Limits:
    """The server's caps on one ``/run_code`` request."""

    max_run_timeout: float = 60.0
    default_memory_mb: int = 1024
    max_memory_mb: int = 8192
    max_code_chars: int = 1 << 20
    max_files: int = 64
    max_file_bytes: int = 4 << 20
    max_stdin_chars: int = 4 << 20


@dataclass(frozen=True)
class RunCodeJob:
    """What a Ray worker needs to run one ``/run_code`` program (picklable, decoded)."""

    code: str
    stdin: bytes
    files: dict[str, bytes]
    fetch_files: tuple[str, ...]
    timeout: float
    memory_mb: int


def _relative_path(path: str, what: str) -> str:
    """A path inside the program's working directory, normalised; else :class:`BadRequest`."""
    if not isinstance(path, str) or not path or "\x00" in path:
        raise BadRequest(f"{what}: a file path must be a non-empty string without NUL bytes")
    norm = posixpath.normpath(path)
    if posixpath.isabs(path) or norm == ".." or norm.startswith("../") or norm == ".":
        raise BadRequest(
            f"{what}: {path[:200]!r} is not a relative path inside the working directory"
        )
    return norm


def unsupported_language(request: RunCodeRequest) -> RunCodeResponse | None:
    """The ``SandboxError`` answer for any language but python; ``None`` for python."""
    if request.language == "python":
        return None
    known = "one SandboxFusion supports" if request.language in SANDBOXFUSION_LANGUAGES else (
        "not a SandboxFusion language either"
    )
    return RunCodeResponse(
        status=RunStatus.SandboxError,
        message=(
            f"language {request.language[:64]!r} is not supported by asyncpool serve, which "
            f"runs only 'python' ({known})"
        ),
    )


def prepare(request: RunCodeRequest, limits: Limits) -> RunCodeJob:
    """Check and decode a python request; raises :class:`BadRequest` with what is wrong."""
    timeout = request.run_timeout
    if not (math.isfinite(timeout) and 0 < timeout <= limits.max_run_timeout):
        raise BadRequest(
            f"run_timeout: must be > 0 and <= {limits.max_run_timeout:g} seconds, got {timeout!r}"
        )
    memory_mb = request.memory_limit_MB
    if memory_mb == -1 or memory_mb == 0:
        memory_mb = limits.default_memory_mb
    elif not 16 <= memory_mb <= limits.max_memory_mb:
        raise BadRequest(
            f"memory_limit_MB: must be -1 (the server's default) or between 16 and "
            f"{limits.max_memory_mb}, got {memory_mb}"
        )
    if len(request.code) > limits.max_code_chars:
        raise BadRequest(f"code: at most {limits.max_code_chars} characters")
    if request.stdin is not None and len(request.stdin) > limits.max_stdin_chars:
        raise BadRequest(f"stdin: at most {limits.max_stdin_chars} characters")
    if len(request.files) > limits.max_files or len(request.fetch_files) > limits.max_files:
        raise BadRequest(f"files, fetch_files: at most {limits.max_files} each")
    files: dict[str, bytes] = {}
    for name, content in request.files.items():
        if content is None:  # SandboxFusion skips these
            continue
        path = _relative_path(name, "files")
        try:
            data = base64.b64decode(content, validate=True)
        except (binascii.Error, ValueError):
            raise BadRequest(f"files[{name[:200]!r}]: not valid base64") from None
        if len(data) > limits.max_file_bytes:
            raise BadRequest(f"files[{name[:200]!r}]: over {limits.max_file_bytes} bytes")
        files[path] = data
    fetch = tuple(_relative_path(name, "fetch_files") for name in request.fetch_files)
    return RunCodeJob(
        code=request.code,
        stdin=(request.stdin or "").encode("utf-8", "surrogatepass"),
        files=files,
        fetch_files=fetch,
        timeout=float(timeout),
        memory_mb=memory_mb,
    )


def execute(job: RunCodeJob) -> dict[str, Any]:
    """Runs in a Ray worker: the program in the sandbox; a picklable summary of its verdict.

    A :class:`asyncpool.errors.SandboxError` (the sandbox could not judge the program) is
    returned as ``{"sandbox_error": message}``, so that the server answers SandboxFusion's
    ``SandboxError`` rather than an HTTP error.
    """
    from asyncpool import sandbox
    from asyncpool.errors import SandboxError

    try:
        result = sandbox.run_program(
            job.code,
            stdin=job.stdin,
            files=job.files,
            fetch_files=job.fetch_files,
            timeout=job.timeout,
            memory_mb=job.memory_mb,
        )
    except SandboxError as exc:
        return {"sandbox_error": str(exc), "pod": os.environ.get("MY_POD_NAME")}
    return {
        "status": result.status,
        "returncode": result.returncode,
        "stdout": result.stdout,
        "stderr": result.stderr,
        "duration": result.duration,
        "files": dict(result.files),
        "pod": os.environ.get("MY_POD_NAME"),
    }


def respond(job: RunCodeJob, outcome: dict[str, Any], fetch_names: list[str]) -> RunCodeResponse:
    """SandboxFusion's response for a verdict from :func:`execute`.

    ``fetch_names`` are the ``fetch_files`` as the client wrote them: the response's ``files``
    are keyed by those names, as SandboxFusion's are.
    """
    pod = outcome.get("pod")
    if "sandbox_error" in outcome:
        return RunCodeResponse(
            status=RunStatus.SandboxError,
            message=f"the sandbox could not judge the program: {outcome['sandbox_error']}",
            executor_pod_name=pod,
        )
    status: str = outcome["status"]
    returncode: int | None = outcome["returncode"]
    if status == "timeout":
        run = CommandRunResult(
            status=CommandRunStatus.TimeLimitExceeded,
            execution_time=outcome["duration"],
            stdout=outcome["stdout"],
            stderr=outcome["stderr"],
        )
    elif returncode is None:  # the sandbox's own supervisor died under the program
        return RunCodeResponse(
            status=RunStatus.SandboxError,
            message="the sandbox lost the program (its supervisor died); it was not judged",
            executor_pod_name=pod,
        )
    else:
        if status != "passed" and returncode == 0:
            returncode = 1  # a verdict that is not a pass never reads as exit 0
        run = CommandRunResult(
            status=CommandRunStatus.Finished,
            execution_time=outcome["duration"],
            return_code=returncode,
            stdout=outcome["stdout"],
            stderr=outcome["stderr"],
        )
    fetched: dict[str, bytes] = outcome["files"]
    files = {
        name: base64.b64encode(fetched[path]).decode("ascii")
        for name, path in zip(fetch_names, job.fetch_files, strict=True)
        if path in fetched
    }
    ok = run.status == CommandRunStatus.Finished and run.return_code == 0
    return RunCodeResponse(
        status=RunStatus.Success if ok else RunStatus.Failed,
        message="",
        run_result=run,
        executor_pod_name=pod,
        files=files,
    )
