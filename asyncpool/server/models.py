"""The wire formats of ``asyncpool serve``, as pydantic models.

SandboxFusion's ``/run_code`` models keep SandboxFusion's own field names, defaults and enum
values (its ``sandbox/server/sandbox_api.py`` and ``sandbox/runners/types.py``), so that a client
written for SandboxFusion sends and reads the same JSON here. Like SandboxFusion, unknown
request fields are ignored.

NeMo-Gym's ``/verify`` models follow its ``code_gen`` resource server
(``CompCodingVerifyRequest`` / ``CompCodingVerifyResponse``); the OpenAI objects it carries
(``responses_create_params``, ``response``) are kept as the JSON objects they are and echoed
back unchanged: only the output text of ``response`` is read.
"""

from __future__ import annotations

from enum import Enum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "CommandRunResult",
    "CommandRunStatus",
    "RunCodeRequest",
    "RunCodeResponse",
    "RunStatus",
    "SANDBOXFUSION_LANGUAGES",
    "StdioChecker",
    "UnitTests",
    "VerifyLanguage",
    "VerifyRequest",
    "VerifyResponse",
]

#: The languages SandboxFusion knows; ``asyncpool serve`` runs ``python``, ``cpp``, ``java``,
#: ``go``, ``nodejs`` and ``rust`` (:data:`asyncpool.server.sandboxfusion.LANGUAGES`) and answers
#: the others with a ``SandboxError`` response that says so. ``language`` stays a ``str`` (not
#: SandboxFusion's ``Literal``) so that such a language gets that answer rather than a 422.
SANDBOXFUSION_LANGUAGES = (
    "python", "cpp", "nodejs", "go", "go_test", "java", "php", "csharp", "bash", "typescript",
    "sql", "rust", "cuda", "lua", "R", "perl", "D_ut", "ruby", "scala", "julia", "pytest",
    "junit", "kotlin_script", "jest", "verilog", "python_gpu", "lean", "swift", "racket",
)  # fmt: skip


# --------------------------------------------------------------------------- SandboxFusion


class CommandRunStatus(str, Enum):
    """How one command ended (SandboxFusion's enum)."""

    Finished = "Finished"
    Error = "Error"
    TimeLimitExceeded = "TimeLimitExceeded"


class CommandRunResult(BaseModel):
    """One command's outcome: ``return_code`` is ``None`` when it did not exit by itself."""

    status: CommandRunStatus
    execution_time: float | None = None
    return_code: int | None = None
    stdout: str | None = None
    stderr: str | None = None


class RunStatus(str, Enum):
    """The request's outcome (SandboxFusion's enum): ``Failed`` is a non-zero exit or a time
    limit, ``SandboxError`` means the sandbox could not judge the program."""

    Success = "Success"
    Failed = "Failed"
    SandboxError = "SandboxError"


class RunCodeRequest(BaseModel):
    """``POST /run_code``: SandboxFusion's ``RunCodeRequest``, field for field."""

    model_config = ConfigDict(extra="ignore")

    compile_timeout: float = Field(10, description="compile timeout for compiled languages")
    run_timeout: float = Field(10, description="code run timeout")
    memory_limit_MB: int = Field(-1, description="maximum memory allowed in megabytes")
    code: str = Field(..., examples=['print("hello")'], description="the code to run")
    stdin: str | None = Field(None, examples=[""], description="optional string for stdin")
    language: str = Field(..., examples=["python"], description="the language to run")
    files: dict[str, str | None] = Field(
        {}, description="a dict from file path to base64 encoded file content"
    )
    fetch_files: list[str] = Field(
        [], description="a list of file paths to fetch after code execution"
    )


class RunCodeResponse(BaseModel):
    """SandboxFusion's ``RunCodeResponse``, field for field."""

    status: RunStatus
    message: str
    compile_result: CommandRunResult | None = None
    run_result: CommandRunResult | None = None
    executor_pod_name: str | None = None
    files: dict[str, str] = {}


# --------------------------------------------------------------------------- NeMo-Gym


#: The comparison modes of stdin/stdout tests (:data:`asyncpool.sandbox._checkers.CHECKERS`,
#: spelled out here so that the server's models do not import the sandbox).
StdioChecker = Literal["exact", "tokens", "float", "case_insensitive"]

#: The languages of stdin/stdout tests' solutions (:data:`asyncpool.sandbox._languages.LANGUAGES`,
#: spelled out for the same reason).
VerifyLanguage = Literal["python", "cpp", "java", "go", "nodejs", "rust"]


class UnitTests(BaseModel):
    """LiveCodeBench's test format: ``fn_name`` ``None`` means stdin/stdout cases (each input
    is the program's stdin, each output its expected stdout); otherwise each input holds one
    JSON value per line (the call's arguments) and each output one JSON value (its result).

    An extension for datasets whose stdin/stdout tests are judged by a checker (Codeforces'
    "1e-6 absolute or relative" ones): ``checker`` is how an output is compared with the
    expected one (:func:`asyncpool.sandbox.run_stdio`'s modes: ``"exact"``, the default, is
    LiveCodeBench's comparison, :func:`asyncpool.server.nemo_gym.lcb_stdio_equal`, lines
    stripped and compared as text or as decimal numbers; ``"tokens"``, ``"float"``,
    ``"case_insensitive"`` are ``run_stdio``'s), and
    ``abs_tol``/``rel_tol`` the tolerances of ``"float"`` (finite, ``>= 0``, default 1e-6). A
    custom checker is Python code, so it is never taken from a request. Call-based tests
    (``fn_name`` set) compare JSON values and take no checker.

    A second extension, for stdin/stdout tests whose solutions are not Python: ``language`` is
    the solution's language (SandboxFusion's names, as ``/run_code``'s: ``"python"``, the
    default, ``"cpp"``, ``"java"``, ``"go"``, ``"nodejs"``, ``"rust"``; one this server has no
    toolchain for, or does not serve, is refused, never judged). Call-based tests are Python
    only.
    """

    model_config = ConfigDict(strict=True)

    inputs: list[str]
    outputs: list[str]
    fn_name: str | None = None
    checker: StdioChecker = "exact"
    abs_tol: float = Field(1e-6, ge=0, allow_inf_nan=False)
    rel_tol: float = Field(1e-6, ge=0, allow_inf_nan=False)
    language: VerifyLanguage = "python"


class VerifyRequest(BaseModel):
    """``POST /verify``: NeMo-Gym's ``CompCodingVerifyRequest``.

    ``verifier_metadata.unit_tests`` (:class:`UnitTests`) is required to verify a response
    that has text; ``verifier_metadata.difficulty`` is echoed as ``difficulty``.
    """

    model_config = ConfigDict(extra="allow")

    responses_create_params: dict[str, Any]
    response: dict[str, Any]
    verifier_metadata: dict[str, Any] | None = None


class VerifyResponse(VerifyRequest):
    """NeMo-Gym's ``CompCodingVerifyResponse``: the request echoed, plus the verdict.

    ``result`` is LiveCodeBench's per-case list: ``true`` for each case that passed, in order,
    up to the first that did not, which is reported by its code and ends the list (``-2`` wrong
    answer, ``-3`` time limit exceeded, ``-4`` runtime error), as LiveCodeBench's ``run_test``
    does. ``reward`` is 1.0 when every case passed.
    """

    reward: float
    extracted_model_output: str | None = None
    extracted_model_code: str | None = None
    result: list[int | bool] | None = None
    metadata: dict[str, Any] | None = None
    unit_tests_time_taken: float | None = None
    reasoning_format_violation_rate: float = 0.0
    difficulty: str | None = None

