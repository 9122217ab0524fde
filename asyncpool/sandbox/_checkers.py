"""How :func:`asyncpool.sandbox.run_stdio` compares a program's output with the expected one.

Owns: the comparison modes (``"exact"``, ``"tokens"``, ``"float"``, ``"case_insensitive"``, or a
trusted custom checker), their argument checks, and the mapping of a run's status to the
verdict a judge reports (:func:`verdict_of`). Pure functions of bytes: they run in the
*caller's* process, on its thread, after the jailed program has exited; nothing here ever runs
in the sandbox, and the expected output never enters it.

The modes, all on raw bytes (no decoding, so invalid UTF-8 cannot make a comparison fail or
pass by accident):

* ``"exact"``: :func:`normalize_output` of both sides equal (line by line, ``\\r\\n`` read as
  ``\\n``, trailing whitespace of every line and trailing empty lines ignored).
* ``"tokens"``: the whitespace-separated tokens equal (:func:`tokens`: space, ``\\t``,
  ``\\n``, ``\\r``, as testlib reads them; ``\\v`` and ``\\f`` are part of a token), so
  line breaks and runs of spaces do not matter.
* ``"case_insensitive"``: tokens equal after ASCII lower-casing (``YES`` = ``yes``), as testlib
  checkers do; non-ASCII bytes compare exactly.
* ``"float"``: tokens, the same count on both sides; a pair of tokens that are both decimal
  numbers (:data:`NUMBER`: ``[+-]digits[.digits][e[+-]digits]``, ASCII only: no ``nan``,
  ``inf``, ``0x..``, ``1_000`` or Unicode digits, all of which ``float()`` would take) is equal
  when ``|out - exp| <= abs_tol`` **or** ``|out - exp| <= rel_tol * |exp|`` (relative to the
  *expected* value, as testlib's ``doubleCompare`` that Codeforces checkers use, with its
  ``1e-15`` allowance for the rounding of decimal to binary when a tolerance is non-zero); any
  other pair must be the identical token. So ``nan`` and ``inf`` are words, never numbers: they
  never equal a number, however close, and a number too large for a double (``1e999``)
  equals only the identical token (two infinities are never "within tolerance").
* a custom checker: a callable ``check(input: bytes, expected: bytes, output: bytes) -> bool``
  given by the caller (trusted code: the caller's own), called with the case's stdin, its
  expected output and the program's raw stdout. Only ``True`` (a real ``bool``) accepts; any
  other return value, or an exception it raises, is a wrong answer whose reason says so (a
  broken checker never accepts). A ``BaseException`` that is not an ``Exception``
  (``KeyboardInterrupt``) propagates.

Must not: import the sandbox's runner (this module is pure, its tests need no sandbox), or
evaluate anything from the program's output beyond these parses.
"""

from __future__ import annotations

import inspect
import math
import re
from collections.abc import Callable
from typing import Literal, TypeAlias

__all__ = [
    "CHECKERS",
    "DEFAULT_TOLERANCE",
    "NUMBER",
    "CheckFunction",
    "Checker",
    "CheckerName",
    "Verdict",
    "compare",
    "float_tokens_equal",
    "normalize_output",
    "resolve_checker",
    "tolerance",
    "verdict_of",
]

CheckerName: TypeAlias = Literal["exact", "tokens", "float", "case_insensitive"]
#: The names of the built-in comparison modes.
CHECKERS: tuple[CheckerName, ...] = ("exact", "tokens", "float", "case_insensitive")
#: A trusted custom checker: ``check(input, expected, output) -> bool``.
CheckFunction: TypeAlias = Callable[[bytes, bytes, bytes], bool]
#: What ``run_stdio``'s ``checker=`` (and a case's third item) accepts.
Checker: TypeAlias = CheckerName | CheckFunction

#: What a judge reports for one case ("compile_error": a whole run_stdio of another language
#: whose compile did not succeed, asyncpool.sandbox._languages; no case ran).
Verdict: TypeAlias = Literal[
    "accepted", "wrong_answer", "time_limit", "memory_limit", "runtime_error", "compile_error"
]

#: The default absolute and relative tolerance of ``"float"`` (Codeforces' usual 1e-6).
DEFAULT_TOLERANCE = 1e-6
#: A decimal number token of ``"float"`` (ASCII digits only: ``rb"\\d"`` is ASCII in a bytes
#: pattern). Anything else is compared as a word.
NUMBER = re.compile(rb"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
#: testlib's allowance for a decimal value's rounding to a double (``doubleCompare``).
_ROUNDING = 1e-15
#: The longest token quoted in a reason.
_QUOTE = 40


_SEPARATORS = re.compile(rb"[ \t\r\n]+")


def tokens(data: bytes) -> list[bytes]:
    """The whitespace-separated tokens of ``data`` as testlib's checkers read them: separated
    by space, tab, ``\\r`` and ``\\n`` only. ``bytes.split()`` also separates at ``\\v``
    and ``\\f``, which would accept ``1\\v2`` for ``1 2``; it is used (at C speed) when
    neither is in ``data``."""
    if b"\x0b" not in data and b"\x0c" not in data:
        return data.split()
    return [token for token in _SEPARATORS.split(data) if token]


def normalize_output(data: bytes) -> list[bytes]:
    """The comparison form of a program's output in ``"exact"`` mode: ``\\r\\n`` read as
    ``\\n``, trailing whitespace (spaces, tabs, ``\\r``...) stripped from every line, and
    trailing empty lines dropped. Leading whitespace and blank lines inside are kept."""
    lines = [line.rstrip() for line in data.replace(b"\r\n", b"\n").split(b"\n")]
    while lines and not lines[-1]:
        lines.pop()
    return lines


# -- argument checks (before anything runs) ----------------------------------------------------


def resolve_checker(name: str, checker: object) -> Checker:
    """``checker`` checked: one of :data:`CHECKERS` or a callable taking three positional
    arguments. Raises ``ValueError`` for an unknown name, ``TypeError`` for anything else
    (including a callable whose signature cannot take ``(input, expected, output)``)."""
    if isinstance(checker, str):
        if checker not in CHECKERS:
            raise ValueError(
                f"{name} must be one of {', '.join(CHECKERS)} or a callable, got {checker[:64]!r}"
            )
        return checker  # narrowed to CheckerName by the membership test
    if not callable(checker):
        raise TypeError(
            f"{name} must be one of {', '.join(CHECKERS)} or a callable "
            f"check(input, expected, output) -> bool, not {type(checker).__name__}"
        )
    try:
        signature = inspect.signature(checker)
    except (TypeError, ValueError):  # some built-ins have none: they are tried as they are
        return checker
    try:
        signature.bind(b"", b"", b"")
    except TypeError:
        raise TypeError(
            f"{name} must accept three positional arguments (input, expected, output), "
            f"its signature is {signature}"
        ) from None
    return checker


def tolerance(name: str, value: object) -> float:
    """A tolerance of ``"float"`` checked: a real number, finite, ``>= 0``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be a number, not {type(value).__name__}")
    if not (math.isfinite(value) and value >= 0):
        raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
    return float(value)


# -- the comparisons ---------------------------------------------------------------------------


def _quote(token: bytes) -> str:
    return repr(token[:_QUOTE]) + ("..." if len(token) > _QUOTE else "")


def _first_difference(
    expected: list[bytes], output: list[bytes], same: Callable[[bytes, bytes], bool], what: str
) -> str:
    """Why two token (or line) lists differ, or ``""`` when they do not."""
    if len(expected) != len(output):
        return f"expected {len(expected)} {what}s, got {len(output)}"
    for i, (e, o) in enumerate(zip(expected, output, strict=True)):
        if not same(e, o):
            return f"{what} {i + 1}: expected {_quote(e)}, got {_quote(o)}"
    return ""


def _within(exp: float, out: float, abs_tol: float, rel_tol: float) -> bool:
    if not (math.isfinite(exp) and math.isfinite(out)):
        return False  # an overflowed token: only the identical text equals it
    diff = abs(out - exp)
    if diff == 0.0:
        return True
    if abs_tol > 0.0 and diff <= abs_tol + _ROUNDING:
        return True
    return rel_tol > 0.0 and diff <= rel_tol * abs(exp) + _ROUNDING


def float_tokens_equal(expected: bytes, output: bytes, abs_tol: float, rel_tol: float) -> bool:
    """Whether two tokens are equal in ``"float"`` mode (see the module docstring)."""
    if expected == output:
        return True
    if NUMBER.fullmatch(expected) is None or NUMBER.fullmatch(output) is None:
        return False
    return _within(float(expected), float(output), abs_tol, rel_tol)


def _same_ignoring_case(expected: bytes, output: bytes) -> bool:
    return expected.lower() == output.lower()


def _float_difference(
    expected: list[bytes], output: list[bytes], abs_tol: float, rel_tol: float
) -> str:
    """:func:`_first_difference` of ``"float"``, with :func:`float_tokens_equal` written out
    in the loop (a quarter less CPU per token on long outputs than calling it)."""
    if len(expected) != len(output):
        return f"expected {len(expected)} tokens, got {len(output)}"
    number = NUMBER.fullmatch
    for i, (e, o) in enumerate(zip(expected, output, strict=True)):
        if e == o or (
            number(e) is not None
            and number(o) is not None
            and _within(float(e), float(o), abs_tol, rel_tol)
        ):
            continue
        return f"token {i + 1}: expected {_quote(e)}, got {_quote(o)}"
    return ""


def compare(
    checker: Checker,
    stdin: bytes,
    expected: bytes,
    output: bytes,
    *,
    abs_tol: float = DEFAULT_TOLERANCE,
    rel_tol: float = DEFAULT_TOLERANCE,
) -> tuple[bool, str]:
    """``(accepted, reason)``: whether ``output`` is an accepted answer for ``expected`` under
    ``checker`` (already checked by :func:`resolve_checker`), and, when it is not, why."""
    if checker == "exact":
        e_lines, o_lines = normalize_output(expected), normalize_output(output)
        if e_lines == o_lines:
            return True, ""
        return False, _first_difference(e_lines, o_lines, bytes.__eq__, "line")
    if isinstance(checker, str):
        e_tokens, o_tokens = tokens(expected), tokens(output)
        if e_tokens == o_tokens:  # the common case, at C speed
            return True, ""
        if checker == "float":
            reason = _float_difference(e_tokens, o_tokens, abs_tol, rel_tol)
        elif checker == "case_insensitive":
            if [t.lower() for t in e_tokens] == [t.lower() for t in o_tokens]:
                return True, ""
            reason = _first_difference(e_tokens, o_tokens, _same_ignoring_case, "token")
        else:  # "tokens"
            reason = _first_difference(e_tokens, o_tokens, bytes.__eq__, "token")
        return not reason, reason
    try:
        verdict = checker(stdin, expected, output)
    except Exception as exc:  # a broken checker never accepts
        try:
            detail = str(exc)[:200]
        except Exception:  # an exception whose __str__ raises too
            detail = "(no message)"
        return False, f"the checker raised {type(exc).__name__}: {detail}"
    if verdict is True:
        return True, ""
    if verdict is False:
        return False, "the checker rejected the output"
    return False, f"the checker returned {type(verdict).__name__}, not a bool"


def verdict_of(status: str, accepted: bool) -> Verdict:
    """The judge's verdict for a case whose run ended with sandbox ``status`` and whose output
    was (``accepted``) or was not accepted: a program that exited 0 is accepted or a wrong
    answer; ``"timeout"`` is a time limit, ``"memory"`` a memory limit, a non-zero exit or a
    death by signal (``"failed"``, ``"crashed"``) a runtime error."""
    if status == "passed":
        return "accepted" if accepted else "wrong_answer"
    if status == "timeout":
        return "time_limit"
    if status == "memory":
        return "memory_limit"
    return "runtime_error"
