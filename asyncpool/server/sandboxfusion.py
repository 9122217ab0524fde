"""SandboxFusion's ``POST /run_code`` on asyncpool's sandbox: ``python``, ``cpp``, ``java``,
``go``, ``nodejs``, ``rust`` (SandboxFusion's own names; it accepts no aliases, nor does this).

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

A compiled language (``cpp``, ``java``, ``go``, ``rust``) is compiled in the same jail first
(:mod:`asyncpool.sandbox._languages`: SandboxFusion's commands, ``compile_timeout`` of the
compiler's own time, the binary cached by a hash of the source and toolchain); how the compile
ended is ``compile_result``, mapped as ``run_result`` is (``Finished`` with the compiler's exit
status, or ``TimeLimitExceeded``). A compile that does not succeed leaves ``run_result``
``None`` and the request ``Failed``, as SandboxFusion's ``run_commands`` does. A compile served
from the cache reports the first compile's output and an ``execution_time`` of 0. The compile's
memory limit is the sandbox's compile default (2048 MB), not ``memory_limit_MB``, which bounds
the program. ``python``
and ``nodejs`` have no compile step (SandboxFusion's neither): ``compile_result`` is ``None`` and
``compile_timeout`` is accepted and unused. The request's ``status`` follows SandboxFusion's
``parse_run_status``: ``Failed`` if either step hit its time limit or exited non-zero, else
``Success``.

Which languages a server answers is decided at its start (:func:`discover`): those it serves
(``asyncpool serve --languages``, default all) whose toolchain is on the server's machine. A
language it does not know, does not serve, or has no toolchain for gets a ``SandboxError``
response saying which (for a missing toolchain: the Debian package to install), as
SandboxFusion answers a runner that cannot run. On a cluster of several machines, a worker's
machine without the toolchain answers the same ``SandboxError`` from the worker.

``memory_limit_MB`` of ``-1`` (SandboxFusion's
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

from asyncpool.sandbox import _languages

from .models import (
    SANDBOXFUSION_LANGUAGES,
    CommandRunResult,
    CommandRunStatus,
    RunCodeRequest,
    RunCodeResponse,
    RunStatus,
)

__all__ = [
    "LANGUAGES",
    "BadRequest",
    "Limits",
    "RunCodeJob",
    "Toolchains",
    "check_languages",
    "discover",
    "execute",
    "prepare",
    "respond",
    "unsupported_language",
]

#: The languages ``/run_code`` can answer (SandboxFusion's names), when their toolchains are here.
LANGUAGES: tuple[str, ...] = _languages.LANGUAGES


class BadRequest(ValueError):
    """A request that is well-formed JSON but cannot be run: answered 422 with this message."""


@dataclass(frozen=True)
class Limits:
    """The server's caps on one ``/run_code`` request."""

    max_run_timeout: float = 60.0
    max_compile_timeout: float = 60.0
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
    language: str = "python"
    compile_timeout: float = 10.0


def check_languages(names: object) -> tuple[str, ...]:
    """``names`` (an iterable of language names) checked against :data:`LANGUAGES`, without
    duplicates, in the order given; ``TypeError``/``ValueError`` saying what is wrong."""
    if isinstance(names, str | bytes) or not hasattr(names, "__iter__"):
        raise TypeError(f"languages must be a sequence of names, not {type(names).__name__}")
    out: list[str] = []
    for name in names:
        if not isinstance(name, str):
            raise TypeError(f"a language name must be a str, not {type(name).__name__}")
        if name not in LANGUAGES:
            raise ValueError(
                f"unknown language {name[:64]!r}: asyncpool serve can serve "
                f"{', '.join(LANGUAGES)} (SandboxFusion's names)"
            )
        if name not in out:
            out.append(name)
    if not out:
        raise ValueError(f"languages: name at least one of {', '.join(LANGUAGES)}")
    return tuple(out)


@dataclass(frozen=True)
class Toolchains:
    """What a server found at its start: ``versions`` of the languages it serves and can run,
    ``missing`` (served, but no toolchain here: why, naming the package), ``not_served`` (known
    but left out by ``--languages``)."""

    versions: dict[str, str]
    missing: dict[str, str]
    not_served: tuple[str, ...]

    def as_json(self) -> dict[str, Any]:
        """``GET /languages``'s body."""
        return {
            "languages": dict(self.versions),
            "unavailable": dict(self.missing),
            "not_served": list(self.not_served),
        }


def discover(served: tuple[str, ...] | None = None) -> Toolchains:
    """Find the toolchain of each served language (default: all of :data:`LANGUAGES`) on this
    machine. Blocking (runs ``--version`` commands, a second or two for the JDK): call it once
    at start, off the event loop."""
    from asyncpool.errors import SandboxError

    names = LANGUAGES if served is None else check_languages(served)
    versions: dict[str, str] = {}
    missing: dict[str, str] = {}
    for name in names:
        try:
            versions[name] = _languages.toolchain(name).version
        except SandboxError as exc:
            missing[name] = str(exc)
    return Toolchains(versions, missing, tuple(n for n in LANGUAGES if n not in names))


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


def unsupported_language(
    request: RunCodeRequest, toolchains: Toolchains | None = None
) -> RunCodeResponse | None:
    """The ``SandboxError`` answer for a language this server cannot run (unknown, not served,
    or without its toolchain, see :class:`Toolchains`); ``None`` when it can. Without
    ``toolchains``, only ``python`` is taken as runnable."""
    language = request.language
    shown = repr(language[:64])
    runnable = toolchains.versions if toolchains is not None else {"python": ""}
    if language in runnable:
        return None
    if toolchains is not None and language in toolchains.missing:
        message = f"language {shown} cannot run on this server: {toolchains.missing[language]}"
    elif toolchains is not None and language in toolchains.not_served:
        message = (
            f"language {shown} is not served by this server (asyncpool serve --languages "
            f"{','.join(toolchains.versions) or '...'}); it serves "
            f"{', '.join(sorted(runnable))}"
        )
    else:
        known = (
            "one SandboxFusion supports"
            if language in SANDBOXFUSION_LANGUAGES
            else "not a SandboxFusion language either"
        )
        message = (
            f"language {shown} is not supported by asyncpool serve, which runs "
            f"{', '.join(sorted(runnable))} ({known})"
        )
    return RunCodeResponse(status=RunStatus.SandboxError, message=message)


def prepare(request: RunCodeRequest, limits: Limits) -> RunCodeJob:
    """Check and decode a request in a language the server runs (see
    :func:`unsupported_language`); raises :class:`BadRequest` with what is wrong."""
    timeout = request.run_timeout
    if not (math.isfinite(timeout) and 0 < timeout <= limits.max_run_timeout):
        raise BadRequest(
            f"run_timeout: must be > 0 and <= {limits.max_run_timeout:g} seconds, got {timeout!r}"
        )
    spec = _languages.check_language(request.language)
    compile_timeout = request.compile_timeout
    if spec.compiled and not (
        math.isfinite(compile_timeout) and 0 < compile_timeout <= limits.max_compile_timeout
    ):
        raise BadRequest(
            f"compile_timeout: must be > 0 and <= {limits.max_compile_timeout:g} seconds, "
            f"got {compile_timeout!r}"
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
    if spec.name != "python":
        for path in (*files, *fetch):
            if path == spec.artefact or path.startswith(spec.artefact + "/"):
                raise BadRequest(
                    f"files, fetch_files: {path[:200]!r} is where the {spec.name} program "
                    "itself is put"
                )
    return RunCodeJob(
        code=request.code,
        stdin=(request.stdin or "").encode("utf-8", "surrogatepass"),
        files=files,
        fetch_files=fetch,
        timeout=float(timeout),
        memory_mb=memory_mb,
        language=spec.name,
        compile_timeout=float(compile_timeout) if spec.compiled else 10.0,
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
            language=job.language,
            compile_timeout=job.compile_timeout,
        )
    except SandboxError as exc:
        return {"sandbox_error": str(exc), "pod": os.environ.get("MY_POD_NAME")}
    compiled = getattr(result, "compile_result", None)
    compile_outcome = None
    if compiled is not None:
        compile_outcome = {
            "status": compiled.status,
            "returncode": compiled.returncode,
            "stdout": compiled.stdout,
            "stderr": compiled.stderr,
            "duration": compiled.duration,
        }
        if not compiled.passed:  # nothing was run
            return {"compile": compile_outcome, "pod": os.environ.get("MY_POD_NAME")}
    return {
        "compile": compile_outcome,
        "status": result.status,
        "returncode": result.returncode,
        "stdout": result.stdout,
        "stderr": result.stderr,
        "duration": result.duration,
        "files": dict(result.files),
        "pod": os.environ.get("MY_POD_NAME"),
    }


def _command_result(outcome: dict[str, Any]) -> CommandRunResult | None:
    """One step's (compile's or run's) verdict as SandboxFusion's ``CommandRunResult``;
    ``None`` when the sandbox lost the process (its supervisor died: not judged)."""
    status: str = outcome["status"]
    returncode: int | None = outcome["returncode"]
    if status == "timeout":
        return CommandRunResult(
            status=CommandRunStatus.TimeLimitExceeded,
            execution_time=outcome["duration"],
            stdout=outcome["stdout"],
            stderr=outcome["stderr"],
        )
    if returncode is None:
        return None
    if status != "passed" and returncode == 0:
        returncode = 1  # a verdict that is not a pass never reads as exit 0
    return CommandRunResult(
        status=CommandRunStatus.Finished,
        execution_time=outcome["duration"],
        return_code=returncode,
        stdout=outcome["stdout"],
        stderr=outcome["stderr"],
    )


def _ok(result: CommandRunResult | None) -> bool:
    return result is None or (
        result.status == CommandRunStatus.Finished and result.return_code == 0
    )


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
    lost = RunCodeResponse(
        status=RunStatus.SandboxError,
        message="the sandbox lost the program (its supervisor died); it was not judged",
        executor_pod_name=pod,
    )
    compile_result = None
    if outcome.get("compile") is not None:
        compile_result = _command_result(outcome["compile"])
        if compile_result is None:
            return lost
        if "status" not in outcome:  # the compile did not succeed: nothing was run
            return RunCodeResponse(
                status=RunStatus.Failed,
                message="",
                compile_result=compile_result,
                executor_pod_name=pod,
            )
    run = _command_result(outcome)
    if run is None:
        return lost
    fetched: dict[str, bytes] = outcome["files"]
    files = {
        name: base64.b64encode(fetched[path]).decode("ascii")
        for name, path in zip(fetch_names, job.fetch_files, strict=True)
        if path in fetched
    }
    return RunCodeResponse(
        status=RunStatus.Success if _ok(compile_result) and _ok(run) else RunStatus.Failed,
        message="",
        compile_result=compile_result,
        run_result=run,
        executor_pod_name=pod,
        files=files,
    )
