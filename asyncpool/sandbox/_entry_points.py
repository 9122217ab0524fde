"""The sandbox's entry points (:mod:`asyncpool.sandbox`): their argument checks, then the run.

How one run is carried out (the fork server of this process, sending the run, collecting its
output, the retries) is :mod:`asyncpool.sandbox._run`; this module must not reach past it to
the fork server.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence

import anyio
import anyio.to_thread

from asyncpool.sandbox import _languages, _zygote_wire
from asyncpool.sandbox._arguments import _as_bytes, _check_relative_path, _check_str, _validate
from asyncpool.sandbox._checkers import (
    DEFAULT_TOLERANCE,
    Checker,
    compare,
    resolve_checker,
    tolerance,
    verdict_of,
)
from asyncpool.sandbox._judge import entry_steps
from asyncpool.sandbox._results import (
    OUTPUT_LIMIT_BYTES,
    ProgramResult,
    SandboxResult,
    StdioCaseResult,
    StdioResult,
    _decode,
)
from asyncpool.sandbox._run import OUTPUT_TAIL_BYTES, Cancel, Raw, SandboxStatus, Spec, run


def run_python(program: str, *, timeout: float = 10.0, memory_mb: int = 512) -> SandboxResult:
    """Run ``program`` in the sandbox (see :mod:`asyncpool.sandbox`) and return its verdict.

    The verdict is the program's exit: use it only for programs you trust to report their own
    result; to judge untrusted code against tests use :func:`run_tests` or :func:`run_stdio`.
    Blocks the calling thread (only) for about ``timeout`` seconds of the program's own time
    plus the cleanup. Thread-safe. Raises ``TypeError``/``ValueError`` on bad arguments before
    anything runs, and :class:`~asyncpool.errors.SandboxError` when the sandbox itself cannot
    work or the machine starved the run too long to judge it.
    """
    _validate(program, timeout, memory_mb)
    raw = run(Spec(program.encode("utf-8", "surrogatepass"), float(timeout), memory_mb))
    return SandboxResult(raw.status, raw.returncode, _decode(raw.stdout), raw.duration)


async def run_python_async(
    program: str,
    *,
    timeout: float = 10.0,
    memory_mb: int = 512,
) -> SandboxResult:
    """``run_python`` in a worker thread (``anyio.to_thread.run_sync``), for event loops.

    At most anyio's default thread limiter (40) runs at once per event loop. Cancelling the
    awaiting task kills the program's process group at once and re-raises the cancellation.
    """
    _validate(program, timeout, memory_mb)
    cancel = Cancel()
    spec = Spec(program.encode("utf-8", "surrogatepass"), float(timeout), memory_mb)
    job = functools.partial(run, spec, cancel)
    try:
        raw = await anyio.to_thread.run_sync(job, abandon_on_cancel=True)
    except BaseException:
        cancel.cancel()
        raise
    return SandboxResult(raw.status, raw.returncode, _decode(raw.stdout), raw.duration)


def run_python_bare(program: str) -> SandboxResult:
    """The barest isolation, the baseline of the benchmark's ``limit`` method.

    Forks the same prepared interpreter and runs ``program`` in the child with *no* limits, no
    timeout, no uid change, no scratch directory, no new session: only the fork, the exit
    status and the captured output (it still runs in the server's namespaces, which cost
    nothing per run). Never use it on untrusted code.
    """
    if not isinstance(program, str):
        raise TypeError(f"program must be a str, not {type(program).__name__}")
    raw = run(Spec(program.encode("utf-8", "surrogatepass"), math.inf, 1 << 20, limits=False))
    return SandboxResult(raw.status, raw.returncode, _decode(raw.stdout), raw.duration)


def run_program(
    code: str,
    *,
    stdin: bytes | str = b"",
    files: Mapping[str, bytes] | None = None,
    fetch_files: Sequence[str] = (),
    timeout: float = 10.0,
    memory_mb: int = 512,
    language: str = "python",
    compile_timeout: float = 10.0,
) -> ProgramResult:
    """Run ``code`` with ``stdin``, ``files`` written into its working directory (``/tmp``)
    first, and ``fetch_files`` (paths relative to it) read back after: SandboxFusion's
    ``/run_code``.

    ``status`` is "passed" when the program exited 0 (its own word: nothing is judged here).
    ``stdout`` and ``stderr`` are separate, each its first :data:`OUTPUT_LIMIT_BYTES` bytes
    (UTF-8, invalid bytes replaced). ``files`` holds each fetched path that exists after the run
    and is a regular file (read without following any symlink, at most
    :data:`asyncpool.sandbox._zygote_wire.FETCH_FILE_LIMIT` bytes; ``RLIMIT_FSIZE`` keeps files
    smaller anyway). ``duration`` is the program's own time. Thread-safe; blocks the calling thread.

    ``language`` (``"cpp"``, ``"java"``, ``"go"``, ``"nodejs"``, ``"rust"``; default
    ``"python"``): ``code`` is compiled in the jail first (within ``compile_timeout`` of its own
    time; cached, compiled once per source) and the result also carries ``compile_result``
    (:mod:`asyncpool.sandbox._languages`); ``ValueError`` for an unknown language,
    :class:`~asyncpool.errors.SandboxError` naming the package when its toolchain is missing.
    """
    _validate(code, timeout, memory_mb, name="code")
    data = _as_bytes("stdin", stdin)
    if files is None:
        files = {}
    if not isinstance(files, Mapping):
        raise TypeError(f"files must be a mapping of path to bytes, not {type(files).__name__}")
    checked: dict[str, bytes] = {}
    for path, content in files.items():
        _check_relative_path("files key", path)
        if not isinstance(content, (bytes, bytearray, memoryview)):
            raise TypeError(f"files[{path!r}] must be bytes, not {type(content).__name__}")
        checked[path] = bytes(content)
    if isinstance(fetch_files, (str, bytes)) or not isinstance(fetch_files, Sequence):
        raise TypeError("fetch_files must be a sequence of relative paths")
    fetch = [_check_relative_path("fetch_files item", p) for p in fetch_files]
    if len(fetch) > _zygote_wire.MAX_FETCH:
        raise ValueError(f"fetch_files may name at most {_zygote_wire.MAX_FETCH} paths")
    if language != "python":
        return _languages.run_program(
            code, language=language, stdin=data, files=checked, fetch=fetch,
            timeout=float(timeout), memory_mb=memory_mb, compile_timeout=compile_timeout,
        )  # fmt: skip
    raw = run(
        Spec(
            code.encode("utf-8", "surrogatepass"), float(timeout), memory_mb,
            merged_output=False, stdout_head=OUTPUT_LIMIT_BYTES, stdin=data, files=checked,
            fetch=fetch,
        )
    )  # fmt: skip
    return ProgramResult(
        raw.status, raw.returncode, _decode(raw.stdout), _decode(raw.stderr), raw.duration,
        {name: raw.files[name] for name in fetch if name in raw.files},
    )  # fmt: skip


def run_tests(
    solution: str,
    tests: str,
    *,
    entry_point: str | None = None,
    timeout: float = 10.0,
    memory_mb: int = 512,
) -> SandboxResult:
    """Judge ``solution`` against ``tests`` (see "How ``run_tests`` judges" in
    :mod:`asyncpool.sandbox`); "passed" only when the trusted judge ran every test to its end.

    ``tests`` either defines ``check(candidate)``, called with the solution's ``entry_point``
    (HumanEval; a name, or a chain of names and calls such as LeetCodeDataset's
    ``"Solution().twoSum"``), or, with ``entry_point=None``, is plain code (MBPP's asserts)
    calling the solution's top-level functions by name (and reading its other top-level
    names, ``MOD``, as in-process). Names ``tests`` defines itself take precedence
    over the solution's: put trusted helpers there (e.g. HumanEval's prompt, whose ``poly``
    HumanEval/32's check calls), or the solution defines them. ``timeout`` bounds the own time
    of the whole judged run (solution and tests); ``memory_mb`` applies to each process (a
    solution the kernel killed at it is "memory").
    ``stdout_tail`` is the solution's output tail, then the judge's reason when it failed.
    Thread-safe; blocks the calling thread. Raises ``TypeError``/``ValueError`` before
    anything runs, :class:`~asyncpool.errors.SandboxError` when no verdict can be had.
    """
    _validate(solution, timeout, memory_mb, name="solution")
    _check_str("tests", tests)
    if entry_point is not None:
        _check_str("entry_point", entry_point)
        entry_steps(entry_point)
    payload = (entry_point or "").encode() + b"\0" + tests.encode("utf-8", "surrogatepass")
    raw = run(
        Spec(solution.encode("utf-8", "surrogatepass"), float(timeout), memory_mb, tests=payload)
    )
    return _judged(raw)


def _judged(raw: Raw) -> SandboxResult:
    output = _decode(raw.stdout)
    if raw.verdict == b"P" and raw.judge == 0:
        return SandboxResult("passed", raw.returncode, output, raw.duration)
    killed_by_us = bool(raw.flags & _zygote_wire.RESULT_KILLED_AFTER_JUDGE)
    status: SandboxStatus = "failed"
    if raw.status in ("timeout", "memory", "crashed") and not killed_by_us:
        status = raw.status
    reason = _decode(raw.verdict[1:]) if raw.verdict[:1] == b"F" else ""
    if not reason:
        reason = "the judge was killed" if status == "timeout" else "no verdict from the judge"
    if status == "memory":
        reason = f"the run was killed at its memory limit; {reason}"
    tail = (output + "\n--- judge: " + reason)[-OUTPUT_TAIL_BYTES:]
    return SandboxResult(status, raw.returncode, tail, raw.duration)


def run_stdio(
    solution: str,
    cases: Sequence[
        tuple[bytes | str, bytes | str] | tuple[bytes | str, bytes | str, Checker | None]
    ],
    *,
    timeout: float = 10.0,
    memory_mb: int = 512,
    stop_on_failure: bool = True,
    checker: Checker = "exact",
    abs_tol: float = DEFAULT_TOLERANCE,
    rel_tol: float = DEFAULT_TOLERANCE,
    language: str = "python",
    compile_timeout: float = 10.0,
) -> StdioResult:
    """Judge a stdin/stdout ``solution`` (Codeforces, LiveCodeBench, APPS style).

    Each case ``(stdin, expected_stdout)``, or ``(stdin, expected_stdout, checker)`` to give
    that case its own comparison mode (``None``: the run's), runs the solution once, in a
    fresh sandbox, with that stdin; the jailed program only produces bytes and the comparison
    happens here, on the caller's side (the expected output never enters the sandbox).

    ``checker`` is the comparison mode (:mod:`asyncpool.sandbox._checkers` says exactly how
    each compares): ``"exact"`` (the default: :func:`normalize_output` of both equal),
    ``"tokens"`` (whitespace-separated tokens equal), ``"float"`` (tokens; two decimal numbers
    are equal within ``abs_tol`` *or* ``rel_tol`` of the expected one, default 1e-6 as
    Codeforces' checkers; ``nan``/``inf`` are words, never numbers; the token counts must
    match), ``"case_insensitive"`` (tokens, ASCII case ignored), or a trusted callable
    ``check(input: bytes, expected: bytes, output: bytes) -> bool`` called here, in the
    calling thread, with the case's stdin, expected output and the program's raw stdout: only
    ``True`` accepts; an exception or a non-bool is a wrong answer with the reason in
    ``reason``. ``abs_tol``/``rel_tol`` apply to every ``"float"`` case of the run.

    A case is "passed" (``verdict`` "accepted") when the program exited 0 and its output was
    accepted; otherwise its status is the program's ("timeout", "memory", "crashed", "failed")
    or "failed" for a wrong answer or an output longer than twice the expected one plus
    :data:`OUTPUT_LIMIT_BYTES` (never shown to a checker; a wrong answer however the program
    then ended, an exec'd program killed by ``SIGXFSZ`` past twice that limit too); see
    :class:`StdioCaseResult` for the verdicts and the per-case CPU time, wall time and peak
    memory. ``timeout`` is per case. The verdict is "passed" only when every case passed, else
    the status of the first case that did not; with ``stop_on_failure`` (the default) the cases
    after it are not run (``cases`` is then shorter). ``duration`` is the sum of the cases' own
    times (a checker's time is not counted). Thread-safe; blocks the calling thread. Bad
    arguments (an unknown mode, a checker that is not callable or cannot take three arguments, a
    negative or non-finite tolerance) raise ``TypeError``/``ValueError`` before anything runs.

    ``language`` (``"cpp"``, ``"java"``, ``"go"``, ``"nodejs"``, ``"rust"``; default
    ``"python"``): the solution is compiled once, in the jail (``compile_timeout`` of its own
    time; cached), and every case runs the compiled program; the result also carries
    ``compile_result``, and a compile that does not succeed is "failed" with verdict
    "compile_error" and no case run (:mod:`asyncpool.sandbox._languages`).
    """
    _validate(solution, timeout, memory_mb, name="solution")
    default = resolve_checker("checker", checker)
    abs_tol = tolerance("abs_tol", abs_tol)
    rel_tol = tolerance("rel_tol", rel_tol)
    if isinstance(cases, (str, bytes)) or not isinstance(cases, Sequence):
        raise TypeError("cases must be a sequence of (stdin, expected_stdout) pairs")
    if not cases:
        raise ValueError("cases must not be empty: nothing would be judged")
    checked: list[tuple[bytes, bytes, Checker]] = []
    for i, case in enumerate(cases):
        if not isinstance(case, (tuple, list)) or len(case) not in (2, 3):
            raise TypeError(
                f"cases[{i}] must be a (stdin, expected_stdout) pair or a "
                "(stdin, expected_stdout, checker) triple"
            )
        mode = default
        if len(case) == 3 and case[2] is not None:
            mode = resolve_checker(f"cases[{i}][2]", case[2])
        checked.append(
            (_as_bytes(f"cases[{i}][0]", case[0]), _as_bytes(f"cases[{i}][1]", case[1]), mode)
        )
    code = solution.encode("utf-8", "surrogatepass")
    prepared = None
    if language != "python":
        ready = _languages.prepare_stdio(language, solution, compile_timeout)
        if not isinstance(ready, _languages.Prepared):
            return ready  # the compile did not succeed: nothing ran
        prepared = ready
    results: list[StdioCaseResult] = []
    for stdin, expected, mode in checked:
        limit = OUTPUT_LIMIT_BYTES + 2 * len(expected)
        # The expected output and a page more, allocated outside the run: see _reserve_output.
        reserve = len(expected) + 4096
        raw = run(
            Spec(code, float(timeout), memory_mb, merged_output=False, stdout_head=limit + 1,
                  stdin=stdin, output_reserve=reserve)
            if prepared is None
            else prepared.case_spec(stdin, float(timeout), memory_mb, stdout_head=limit + 1,
                                    output_reserve=reserve)
        )  # fmt: skip
        if prepared is not None:  # a runtime that said it ran out of memory: "memory"
            raw.status = prepared.status(raw.status, raw.stderr)
        status = ended = raw.status
        accepted, reason = False, ""
        if len(raw.stdout) > limit and status in ("passed", "failed", "crashed"):
            # Past the output limit, however the program ended then (exit 0, an error from
            # RLIMIT_FSIZE, killed by SIGXFSZ): a wrong answer.
            reason = f"the output is longer than {limit} bytes"
            status, ended = "failed", "passed"
        elif status == "passed":
            accepted, reason = compare(
                mode, stdin, expected, raw.stdout, abs_tol=abs_tol, rel_tol=rel_tol
            )
            if not accepted:
                status = "failed"
        results.append(
            StdioCaseResult(
                status, raw.returncode, _decode(raw.stdout), _decode(raw.stderr), raw.duration,
                verdict_of(ended, accepted), raw.cpu, raw.wall, raw.peak_memory, reason,
            )
        )  # fmt: skip
        if status != "passed" and stop_on_failure:
            break
    first = next((r for r in results if r.status != "passed"), None)
    total = sum(r.duration for r in results)
    if first is None:
        return _with_compile(StdioResult("passed", results, total, "accepted"), prepared)
    return _with_compile(StdioResult(first.status, results, total, first.verdict), prepared)


def _with_compile(result: StdioResult, prepared: _languages.Prepared | None) -> StdioResult:
    if prepared is None:
        return result
    return _languages.with_compile(result, prepared)
