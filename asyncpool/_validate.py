"""One rule per kind of argument, the same message shape everywhere.

Every public entry point checks its arguments here, before anything is submitted to Ray, so
that bad input is a ``TypeError`` (wrong kind) or a ``ValueError`` (right kind, bad value) whose
message reads ``"<name> must be <what>, got <value>"``. This module must not import Ray or
anything of asyncpool beyond the standard library: it is pure and cheap.
"""

from __future__ import annotations

import math
from collections.abc import AsyncIterable, Iterable, Mapping
from typing import Any, NoReturn

__all__ = [
    "boolean",
    "instance",
    "items",
    "non_negative_int",
    "non_negative_number",
    "one_of",
    "positive_int",
    "positive_number",
    "str_mapping",
    "timeout",
]


def _shown(value: object) -> str:
    text = repr(value)
    if len(text) > 80:
        text = text[:77] + "..."
    return f"{text} ({type(value).__name__})"


def _type_error(name: str, what: str, value: object) -> NoReturn:
    raise TypeError(f"{name} must be {what}, got {_shown(value)}")


def _value_error(name: str, what: str, value: object) -> NoReturn:
    raise ValueError(f"{name} must be {what}, got {value!r}")


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def timeout(value: object, name: str = "timeout") -> float | None:
    """The one timeout rule: ``None`` (no deadline) or a number of seconds > 0.

    ``math.inf`` means no deadline too. ``0``, negatives and NaN are refused: a deadline that
    has already passed is a mistake, not a poll.
    """
    if value is None:
        return None
    what = "None or a number of seconds > 0"
    if not _is_number(value):
        _type_error(name, what, value)
    assert isinstance(value, int | float)
    if math.isnan(value) or value <= 0:
        _value_error(name, what, value)
    return None if math.isinf(value) else float(value)


def _finite(value: object, name: str, *, above_zero: bool) -> float:
    what = "a finite number > 0" if above_zero else "a finite number >= 0"
    if not _is_number(value):
        _type_error(name, what, value)
    assert isinstance(value, int | float)
    if not math.isfinite(value) or value < 0 or (above_zero and value == 0):
        _value_error(name, what, value)
    return float(value)


def positive_number(value: object, name: str) -> float:
    """A finite number > 0 (seconds, factors, fractions)."""
    return _finite(value, name, above_zero=True)


def non_negative_number(value: object, name: str) -> float:
    """A finite number >= 0 (resource amounts, fractions that may be zero)."""
    return _finite(value, name, above_zero=False)


def one_of(value: object, name: str, choices: tuple[Any, ...]) -> Any:
    """One of a fixed set of choices (strategies, modes); a wrong type is a ``TypeError``
    only when no choice has that type."""
    if value in choices and type(value) in {type(c) for c in choices}:
        return value
    what = "one of " + ", ".join(repr(c) for c in choices)
    if not any(isinstance(value, type(c)) for c in choices):
        _type_error(name, what, value)
    _value_error(name, what, value)


def _int_from(value: object, name: str, minimum: int) -> int:
    what = f"an int >= {minimum}"
    if isinstance(value, bool) or not isinstance(value, int):
        _type_error(name, what, value)
    if value < minimum:
        _value_error(name, what, value)
    return value


def positive_int(value: object, name: str) -> int:
    """An ``int`` >= 1 (a ``bool`` is refused: ``True`` is not a count)."""
    return _int_from(value, name, 1)


def non_negative_int(value: object, name: str) -> int:
    """An ``int`` >= 0 (retries, indices)."""
    return _int_from(value, name, 0)


def boolean(value: object, name: str) -> bool:
    """Exactly ``True`` or ``False`` (``0``/``1``/``None`` are refused)."""
    if not isinstance(value, bool):
        _type_error(name, "a bool", value)
    return value


def instance(value: object, name: str, kind: type[Any], what: str = "") -> Any:
    """An instance of ``kind`` (``what`` describes it in the message; by default ``a <kind>``)."""
    if not isinstance(value, kind):
        _type_error(name, what or f"a {kind.__name__}", value)
    return value


def str_mapping(value: object, name: str) -> dict[str, str]:
    """A mapping of ``str`` to ``str`` (environment variables, labels); ``None`` is empty."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        _type_error(name, "a mapping of str to str", value)
    out: dict[str, str] = {}
    for key, item in value.items():
        if not isinstance(key, str) or not isinstance(item, str):
            _type_error(f"{name}[{key!r}]", "a str key with a str value", item)
        out[key] = item
    return out


def items(value: object, name: str = "items") -> Iterable[Any] | AsyncIterable[Any]:
    """An iterable or async iterable of items (a ``str``/``bytes`` is refused: one item, not
    many, is almost always what was meant)."""
    if isinstance(value, str | bytes):
        _type_error(name, "an iterable or async iterable of items, not a str/bytes", value)
    if not isinstance(value, Iterable | AsyncIterable):
        _type_error(name, "an iterable or async iterable", value)
    return value
