"""NeMo-Gym's resource-server ``POST /verify`` for code, as its ``code_gen`` server defines it.

The model's text is the ``response``'s output text (the ``output_text`` parts of its
``message`` items, joined, as the OpenAI SDK's ``Response.output_text``); its code is the last
fenced block of that text, as LiveCodeBench extracts it (:func:`extract_code`). The tests are
``verifier_metadata.unit_tests`` in LiveCodeBench's format (:class:`~.models.UnitTests`):

* ``fn_name`` ``None``: stdin/stdout cases, judged by :func:`asyncpool.sandbox.run_stdio`,
  with the comparison mode the tests carry (``unit_tests.checker``, ``"exact"`` unless a dataset
  says otherwise, e.g. ``"float"`` with ``abs_tol``/``rel_tol``): the judge's verdict of the
  first case not accepted gives its code (wrong answer -2, time limit -3, runtime error or
  memory limit -4). ``"exact"`` here is LiveCodeBench's comparison (:func:`lcb_stdio_equal`:
  lines stripped, then compared as text or as decimal numbers, ``1.0`` for ``1``), the one
  ``code_gen`` applies, not ``run_stdio``'s own ``"exact"``;
* otherwise call-based: each case calls ``fn_name`` (a method of ``class Solution`` when the code
  defines one, as on LeetCode, else a module-level function) with the case's JSON arguments and
  compares the result with the expected JSON value (a tuple counts as a list, a numpy scalar as
  its Python value; numbers within ``numpy.allclose``'s default tolerance count as equal),
  one :func:`asyncpool.sandbox.run_tests` run per case.

Stdin/stdout tests may name another language than Python (``unit_tests.language``: ``cpp``,
``java``, ``go``, ``nodejs``, ``rust``, SandboxFusion's names, as ``/run_code``'s): the code is
extracted by the same rule (the fence's info string, `````cpp`` or none, is not read: the
tests say the language), compiled once in the jail within the server's compile limit
(``Limits.max_compile_timeout``, the cap of ``/run_code``'s ``compile_timeout``), and each
case runs the program, judged as Python's are. A program that does not compile is LiveCodeBench's
answer for a program that cannot run, a Python ``SyntaxError`` included: ``[-4]``, reward 0, with
``error_message`` ``"Compilation Error"`` and the compiler's output (``compile_output``) in
``metadata``. A language the server has no toolchain for, or does not serve
(``asyncpool serve --languages``), is refused, never judged (:func:`unserved_language`);
call-based tests are Python only.

Like LiveCodeBench, Python code runs after LiveCodeBench's standard imports (``from typing
import *`` and the rest), a stdin program's ``SystemExit`` (``sys.exit(1)``, ``exit("msg")``) ends
it with its output so far judged, whatever its code (LiveCodeBench swallows it), cases run in
order and the first case that does not pass ends the run.
``reward`` is 1.0 when every case passed; like ``code_gen``, a response whose final text
contains ``<think>`` tags (or whose reasoning has more than one of each) gets 0.0 and
``reasoning_format_violation_rate`` 1.0, and a response without text or without a fenced code
block gets 0.0 without running anything.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from .models import StdioChecker, UnitTests, VerifyRequest, VerifyResponse

if TYPE_CHECKING:
    from .sandboxfusion import Toolchains

__all__ = [
    "LCB_IMPORTS",
    "BadRequest",
    "VerifyJob",
    "execute",
    "extract_code",
    "lcb_stdio_equal",
    "output_text",
    "prepare",
    "reasoning_format_violation",
    "request_cases",
    "respond",
    "unit_tests_of",
    "unserved_language",
]

#: LiveCodeBench's ``import_string``: what every solution runs after.
LCB_IMPORTS = (
    "from string import *\nfrom re import *\nfrom datetime import *\nfrom collections import *\n"
    "from heapq import *\nfrom bisect import *\nfrom copy import *\nfrom math import *\n"
    "from random import *\nfrom statistics import *\nfrom itertools import *\n"
    "from functools import *\nfrom operator import *\nfrom io import *\nfrom sys import *\n"
    "from json import *\nfrom builtins import *\nfrom typing import *\nimport string\nimport re\n"
    "import datetime\nimport collections\nimport heapq\nimport bisect\nimport copy\nimport math\n"
    "import random\nimport statistics\nimport itertools\nimport functools\nimport operator\n"
    "import io\nimport sys\nimport json\nsys.setrecursionlimit(50000)\n"
)

WRONG_ANSWER, TIME_LIMIT, RUNTIME_ERROR = -2, -3, -4
#: ``metadata.error_message`` of a program that did not compile (its code is RUNTIME_ERROR).
COMPILE_ERROR_MESSAGE = "Compilation Error"
_MESSAGES = {
    WRONG_ANSWER: "Wrong Answer",
    TIME_LIMIT: "Time Limit Exceeded",
    RUNTIME_ERROR: "Runtime Error",
}


class BadRequest(ValueError):
    """A ``/verify`` request whose tests cannot be run: answered 422 with this message."""


def output_text(response: dict[str, Any]) -> str:
    """The text of an OpenAI Responses object: its ``output_text`` parts, joined."""
    parts: list[str] = []
    for item in response.get("output") or ():
        if not isinstance(item, dict) or item.get("type") != "message":
            continue
        for content in item.get("content") or ():
            if isinstance(content, dict) and content.get("type") == "output_text":
                text = content.get("text")
                if isinstance(text, str):
                    parts.append(text)
    return "".join(parts)


def reasoning_format_violation(response: dict[str, Any], text: str) -> bool:
    """``code_gen``'s check: think tags in the final text, or more than one in the reasoning."""
    if "<think>" in text or "</think>" in text:
        return True
    reasoning = ""
    for item in response.get("output") or ():
        if isinstance(item, dict) and item.get("type") == "reasoning":
            for summary in item.get("summary") or ():
                if isinstance(summary, dict) and isinstance(summary.get("text"), str):
                    reasoning += summary["text"]
    return reasoning.count("<think>") > 1 or reasoning.count("</think>") > 1


def extract_code(text: str) -> str:
    """LiveCodeBench's extraction: the lines between the last two lines that contain ```.

    The same for every language: a fence's info string (`````cpp``, `````python``, none) is not
    read, the tests' ``language`` says what the code is."""
    lines = text.split("\n")
    fences = [i for i, line in enumerate(lines) if "```" in line]
    if len(fences) < 2:
        return ""
    return "\n".join(lines[fences[-2] + 1 : fences[-1]])


def _lcb_lines(text: str) -> list[str]:
    """LiveCodeBench's ``get_stripped_lines``: the text stripped, split at ``\\n``, each line
    stripped (``str.strip``: Unicode whitespace too)."""
    return [line.strip() for line in text.strip().split("\n")]


def _lcb_decimals(line: str) -> list[Decimal] | None:
    """LiveCodeBench's ``convert_line_to_decimals``: the line's tokens as ``Decimal``, or
    ``None`` when one is not a number."""
    try:
        return [Decimal(token) for token in line.split()]
    except (ArithmeticError, ValueError):
        return None


def lcb_stdio_equal(stdin: bytes, expected: bytes, output: bytes) -> bool:
    """LiveCodeBench's stdin/stdout comparison (``grade_stdio``), the one NeMo-Gym's
    ``code_gen`` applies: both texts stripped and split into lines, each line stripped; as many
    lines on both sides, and each pair equal as text or else as the lists of ``Decimal`` of
    their whitespace-separated tokens (``1.0`` is ``1``, ``1e5`` is ``100000``, ``-0`` is
    ``0``, ``2.50`` is ``2.5``; a ``NaN`` is never equal, a signalling one fails as it raises
    there). A trusted checker of :func:`asyncpool.sandbox.run_stdio` (``/verify``'s
    ``"exact"``), run by the caller; undecodable bytes of the output stay apart
    (``surrogateescape``), so they never equal a character of the expected text."""
    got = _lcb_lines(output.decode("utf-8", "surrogateescape"))
    want = _lcb_lines(expected.decode("utf-8", "surrogateescape"))
    if len(got) != len(want):
        return False
    for line, wanted in zip(got, want, strict=True):
        if line == wanted:
            continue
        numbers, wanted_numbers = _lcb_decimals(line), _lcb_decimals(wanted)
        if numbers is None or wanted_numbers is None:
            return False
        try:
            if numbers != wanted_numbers:
                return False
        except ArithmeticError:  # a signalling NaN (InvalidOperation)
            return False
    return True


@dataclass(frozen=True)
class VerifyJob:
    """What a Ray worker needs to judge one ``/verify`` request (picklable)."""

    code: str
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    fn_name: str | None
    timeout: float
    memory_mb: int
    checker: StdioChecker = "exact"  # stdin/stdout tests only
    abs_tol: float = 1e-6
    rel_tol: float = 1e-6
    language: str = "python"  # stdin/stdout tests only
    compile_timeout: float = 10.0  # a compiled language's compile, seconds of its own time


def unit_tests_of(request: VerifyRequest, max_cases: int) -> UnitTests:
    """``verifier_metadata.unit_tests``, checked; raises :class:`BadRequest` with what is wrong."""
    metadata = request.verifier_metadata or {}
    if "unit_tests" not in metadata:
        raise BadRequest("verifier_metadata.unit_tests: Field required")
    try:
        tests = UnitTests.model_validate(metadata["unit_tests"])
    except ValidationError as exc:
        problems = "; ".join(
            "verifier_metadata.unit_tests."
            + ".".join(str(p) for p in e["loc"])
            + ": "
            + e["msg"]
            for e in exc.errors()
        )
        raise BadRequest(problems) from None
    if not tests.inputs:
        raise BadRequest("verifier_metadata.unit_tests.inputs: at least one case is needed")
    if len(tests.inputs) != len(tests.outputs):
        raise BadRequest(
            f"verifier_metadata.unit_tests: {len(tests.inputs)} inputs but "
            f"{len(tests.outputs)} outputs"
        )
    if len(tests.inputs) > max_cases:
        raise BadRequest(f"verifier_metadata.unit_tests: at most {max_cases} cases")
    if tests.fn_name is not None:
        if tests.language != "python":
            raise BadRequest(
                f"verifier_metadata.unit_tests.language: {tests.language!r} applies to "
                "stdin/stdout tests (fn_name null); call-based tests are Python"
            )
        if tests.checker != "exact":
            raise BadRequest(
                f"verifier_metadata.unit_tests.checker: {tests.checker!r} applies to "
                "stdin/stdout tests (fn_name null); call-based tests compare JSON values"
            )
        if not tests.fn_name.isidentifier():
            raise BadRequest(
                f"verifier_metadata.unit_tests.fn_name: {tests.fn_name[:64]!r} is not a name"
            )
        for i, (args, expected) in enumerate(zip(tests.inputs, tests.outputs, strict=True)):
            try:
                for line in args.split("\n"):
                    json.loads(line)
                json.loads(expected)
            except ValueError:
                raise BadRequest(
                    f"verifier_metadata.unit_tests: case {i} of a call-based task is not JSON "
                    "(one JSON value per input line, one for the output)"
                ) from None
    return tests


def unserved_language(language: str, toolchains: Toolchains | None) -> str | None:
    """Why this server does not judge stdin/stdout tests in ``language`` (a name
    :func:`unit_tests_of` accepted), or ``None`` when it does: Python always (the sandbox's own
    language, whatever ``--languages`` says), another language when its toolchain was found at
    start (``toolchains``, as ``/run_code`` serves it). ``/verify`` answers such a request 503,
    without ``Retry-After``: asking this server again cannot help."""
    if language == "python":
        return None
    if toolchains is not None and language in toolchains.versions:
        return None
    shown = f"verifier_metadata.unit_tests.language {language!r}"
    if toolchains is not None and language in toolchains.missing:
        return f"{shown} cannot be judged on this server: {toolchains.missing[language]}"
    served = ["python", *(n for n in toolchains.versions if n != "python")] if toolchains else []
    return (
        f"{shown} is not served by this server (asyncpool serve --languages); it judges "
        f"stdin/stdout tests in {', '.join(served) or 'python'}"
    )


def prepare(
    code: str, tests: UnitTests, timeout: float, memory_mb: int, compile_timeout: float = 10.0
) -> VerifyJob:
    """The job of one request: its extracted code and checked tests, with the server's limits
    (``compile_timeout``: a compiled language's compile)."""
    return VerifyJob(
        code=code,
        inputs=tuple(tests.inputs),
        outputs=tuple(tests.outputs),
        fn_name=tests.fn_name,
        timeout=timeout,
        memory_mb=memory_mb,
        checker=tests.checker,
        abs_tol=tests.abs_tol,
        rel_tol=tests.rel_tol,
        language=tests.language,
        compile_timeout=compile_timeout,
    )


#: The message of the call-based test's failed comparison: how a wrong answer (False) is told
#: apart from the solution raising (-4). The judge's reason comes last in the output tail, after
#: anything the solution printed, so the solution cannot make a wrong answer read otherwise.
_WRONG_ANSWER_MARK = "asyncpool-lcb: wrong answer"
_JUDGE_REASON = "\n--- judge: "


_CALL = "_asyncpool_lcb_call"


def _call_solution(code: str, fn_name: str) -> str:
    """The solution of a call-based task, with one module-level function that makes the call.

    The call is made on the solution's side, as LiveCodeBench's own harness makes it
    (``Solution().fn(*args)``), and its result crosses to the trusted judge, which compares
    its JSON form: a value that has no JSON form (a handle to one of the solution's objects)
    fails the case there, as it fails LiveCodeBench's comparison.
    """
    target = f"Solution().{fn_name}" if "class Solution" in code else fn_name
    return f"{LCB_IMPORTS}{code}\n\n\ndef {_CALL}(*args):\n    return {target}(*args)\n"


def _call_test(args: str, expected: str) -> str:
    """The trusted test of one call-based case (plain asserts, run by the sandbox's judge)."""
    return (
        "import json as _lcb_json\n"
        f"_lcb_args = [_lcb_json.loads(_l) for _l in {args!r}.split(chr(10))]\n"
        f"_lcb_expected = _lcb_json.loads({expected!r})\n"
        f"_lcb_got = {_CALL}(*_lcb_args)\n"
        "if isinstance(_lcb_got, tuple):\n"
        "    _lcb_got = list(_lcb_got)\n"
        # plain JSON values only; a numpy scalar (np.int64(3), np.True_) as its Python value,
        # since LiveCodeBench's ``prediction == expected`` holds for it (an array is still an
        # error: there that comparison's truth is ambiguous and raises)
        "def _lcb_plain(value):\n"
        "    np = __import__('sys').modules.get('numpy')\n"
        "    if np is not None and isinstance(value, np.generic):\n"
        "        return value.item()\n"
        "    raise TypeError(type(value).__name__)\n"
        "_lcb_got = _lcb_json.loads(_lcb_json.dumps(_lcb_got, default=_lcb_plain))\n"
        "_lcb_ok = _lcb_got == _lcb_expected\n"
        "if not _lcb_ok:\n"
        "    try:\n"
        "        _a, _b = float(_lcb_got), float(_lcb_expected)\n"
        "        _lcb_ok = abs(_a - _b) <= 1e-08 + 1e-05 * abs(_b)\n"  # numpy.allclose
        "    except (TypeError, ValueError):\n"
        "        pass\n"
        f"assert _lcb_ok is True, {_WRONG_ANSWER_MARK!r}\n"
    )


def _truncate(text: str, length: int = 300) -> str:
    if len(text) <= length:
        return text
    return text[: length // 2] + "...(truncated) ..." + text[-length // 2 :]


def execute(job: VerifyJob) -> dict[str, Any]:
    """Runs in a Ray worker: the cases in order until the first that does not pass.

    Returns ``{"result": [...], "metadata": {...}, "duration": s}``, or ``{"sandbox_error":
    message}`` when the sandbox could not judge a case (never a verdict).
    """
    from asyncpool import sandbox
    from asyncpool.errors import SandboxError

    solution = job.code
    if job.language == "python":
        solution = LCB_IMPORTS + job.code
        if job.fn_name is None:
            solution = _ending_at_system_exit(solution)
    result: list[int | bool] = []
    duration = 0.0
    try:
        if job.fn_name is None:
            stdio = sandbox.run_stdio(
                solution,
                list(zip(job.inputs, job.outputs, strict=True)),
                timeout=job.timeout,
                memory_mb=job.memory_mb,
                checker=lcb_stdio_equal if job.checker == "exact" else job.checker,
                abs_tol=job.abs_tol,
                rel_tol=job.rel_tol,
                language=job.language,
                compile_timeout=job.compile_timeout,
            )
            duration = stdio.duration
            if stdio.verdict == "compile_error":
                return _compile_failure(getattr(stdio, "compile_result", None), duration)
            for i, case in enumerate(stdio.cases):
                if case.status == "passed" and case.verdict == "accepted":
                    result.append(True)
                    continue
                code = _STDIO_CODES.get(case.verdict, RUNTIME_ERROR)
                result.append(code)
                return _failure(job, i, code, result, duration, getattr(case, "stdout", None))
            if stdio.status != "passed" or len(result) != len(job.inputs):
                # No case failed, yet the run as a whole did not pass: never a pass.
                result.append(RUNTIME_ERROR)
                return _failure(job, min(len(result), len(job.inputs)) - 1, RUNTIME_ERROR,
                                result, duration, None)
        else:
            for i, (args, expected) in enumerate(zip(job.inputs, job.outputs, strict=True)):
                verdict = sandbox.run_tests(
                    _call_solution(job.code, job.fn_name),
                    _call_test(args, expected),
                    timeout=job.timeout,
                    memory_mb=job.memory_mb,
                )
                duration += verdict.duration
                if verdict.status == "passed":
                    result.append(True)
                    continue
                reason = verdict.stdout_tail.rpartition(_JUDGE_REASON)[2]
                code = _code_of(verdict.status, verdict.returncode, stdio=False)
                if code == WRONG_ANSWER and _WRONG_ANSWER_MARK not in reason:
                    code = RUNTIME_ERROR
                result.append(False if code == WRONG_ANSWER else code)
                return _failure(job, i, code, result, duration, None)
    except SandboxError as exc:
        return {"sandbox_error": str(exc)}
    return {"result": result, "metadata": {"execution time": duration}, "duration": duration}


def _ending_at_system_exit(program: str) -> str:
    """``program`` (Python), ending at a ``SystemExit`` as LiveCodeBench's ``call_method``
    ends it: with the output it printed so far judged, whatever the exit's code.

    code_gen's ``grade_stdio`` swallows ``SystemExit`` (``sys.exit(1)``, ``exit("no")``)
    and compares what was printed; ``python main.py`` exits with status 1 there, which
    :func:`asyncpool.sandbox.run_stdio` judges a runtime error: a program that printed the
    right answer and then called ``sys.exit(1)`` got ``[-4]`` here and 1 from code_gen. The
    program still runs as ``__main__``, compiled from its own text under its own name
    (``<program>``: tracebacks and line numbers as before); the names the wrapper needs are
    bound before the program runs, so a program that rebinds ``SystemExit`` or ``exec``
    does not change what ends it. Any other exception is a runtime error, as there.
    """
    # One line of the program per line here: the runner reads the text for the rare program
    # that opens its own stdout (see _zygote_child._opens_output), a line at a time.
    lines = "".join(f"    {line!r},\n" for line in program.splitlines(keepends=True))
    return (
        "def __lcb_call_method(exec=exec, compile=compile, SystemExit=SystemExit, "
        "namespace=globals()):\n"
        "    text = ''.join((\n"
        f"{lines}"
        "    ))\n"
        "    try:\n"
        "        exec(compile(text, '<program>', 'exec', dont_inherit=True), namespace)\n"
        "    except SystemExit:\n"
        "        pass\n"
        "__lcb_call_method()\n"
    )


#: LiveCodeBench's code for a stdin/stdout case's verdict (it has no memory limit code: a
#: program out of memory is a runtime error there).
_STDIO_CODES = {
    "wrong_answer": WRONG_ANSWER,
    "time_limit": TIME_LIMIT,
    "memory_limit": RUNTIME_ERROR,
    "runtime_error": RUNTIME_ERROR,
}


def _code_of(status: str, returncode: int | None, *, stdio: bool) -> int:
    if status == "timeout":
        return TIME_LIMIT
    if status == "failed" and (returncode == 0 or not stdio):
        return WRONG_ANSWER
    return RUNTIME_ERROR


def _failure(
    job: VerifyJob, i: int, code: int, result: list[int | bool], duration: float, out: Any
) -> dict[str, Any]:
    metadata: dict[str, Any] = {
        "inputs": _truncate(job.inputs[i]),
        "expected": _truncate(job.outputs[i]),
        "error_code": code,
        "error_message": _MESSAGES[code],
    }
    if isinstance(out, str):
        metadata["output"] = _truncate(out)
    return {"result": result, "metadata": metadata, "duration": duration}


def _compile_failure(compiled: Any, duration: float) -> dict[str, Any]:
    """A program that did not compile: LiveCodeBench's answer for one that cannot run (a
    Python ``SyntaxError`` exits non-zero and is judged so), ``[-4]``, with what the compiler
    said."""
    metadata: dict[str, Any] = {
        "error_code": RUNTIME_ERROR,
        "error_message": COMPILE_ERROR_MESSAGE,
    }
    if compiled is not None:
        metadata["compile_status"] = compiled.status
        output = "\n".join(t for t in (compiled.stdout, compiled.stderr) if t)
        metadata["compile_output"] = _truncate(output, 2000)
    return {"result": [RUNTIME_ERROR], "metadata": metadata, "duration": duration}


def respond(
    request: VerifyRequest,
    *,
    text: str,
    code: str | None,
    outcome: dict[str, Any] | None,
    violation: bool,
) -> VerifyResponse:
    """The request echoed with the verdict (``outcome`` ``None``: nothing was run)."""
    difficulty = (request.verifier_metadata or {}).get("difficulty")
    echo = request.model_dump()
    if outcome is None:
        return VerifyResponse(
            **echo,
            reward=0.0,
            extracted_model_output=text or None,
            difficulty=difficulty if isinstance(difficulty, str) else None,
        )
    result: list[int | bool] = outcome["result"]
    passed = len(result) == len(request_cases(request)) and all(r is True for r in result)
    return VerifyResponse(
        **echo,
        reward=0.0 if violation else (1.0 if passed else 0.0),
        extracted_model_output=text,
        extracted_model_code=code,
        result=result,
        metadata=outcome["metadata"],
        unit_tests_time_taken=round(outcome["duration"], 6),
        reasoning_format_violation_rate=1.0 if violation else 0.0,
        difficulty=difficulty if isinstance(difficulty, str) else None,
    )


def request_cases(request: VerifyRequest) -> list[Any]:
    """The request's test inputs (already checked by :func:`unit_tests_of`)."""
    return list((request.verifier_metadata or {})["unit_tests"]["inputs"])
