"""The solution's warnings and log records, issued again in the judge: the solution's side sends
them (:func:`_show_warning`, :func:`_hook_logging`, :func:`_record_value`), the judge's hands them
to the tests' handlers (:func:`_reissue_record`; a warning: ``_Peer.reissue``).

Must not: send an object (plain values only: a message, a category or a level, names, a line), nor
let a record reach ``logging.lastResort`` in the judge.
"""

from __future__ import annotations

import contextlib
import sys
import warnings
from typing import TYPE_CHECKING, Any

from . import _proxies
from ._bounds import CodecError
from ._exceptions import _PASSED_THROUGH, _exception_class_spec, _passed_through_base

if TYPE_CHECKING:
    from ._peer import _Peer


_SHOW_WARNING = warnings.showwarning


def _show_warning(
    message: Any, category: Any, filename: Any, lineno: Any, file: Any = None, line: Any = None
) -> None:
    peer = _proxies._PEER
    if peer is None or peer.trusted or file is not None:
        _SHOW_WARNING(message, category, filename, lineno, file, line)
        return
    try:
        text = str(message)[:100_000]
        kind: Any = category
        name = str(getattr(category, "__name__", ""))
        if _PASSED_THROUGH.get(name) is category:
            kind = name
        elif _exception_class_spec(category) is None:
            kind = _passed_through_base(category) or "UserWarning"
        value = (text, kind, str(filename)[:1000], int(lineno))
    except Exception:
        return
    peer.notify(b"W", value)


def _hook_logging(peer: _Peer) -> None:
    """The solution's side, once it imported ``logging``: each record that passes its
    loggers' levels (which are the tests', see :class:`_LoggingLevels`) is sent to the judge
    too (:func:`_record_value`), for the tests' handlers (``caplog``, ``assertLogs``)."""
    peer.logging_hooked = True
    cls: Any = getattr(sys.modules.get("logging"), "Logger", None)
    original = getattr(cls, "callHandlers", None)
    if original is None:
        return

    def callHandlers(self: Any, record: Any) -> None:
        current = _proxies._PEER
        if current is not None and not current.trusted:
            value = _record_value(record)
            if value is not None:
                current.notify(b"G", value)
        original(self, record)

    cls.callHandlers = callHandlers


def _record_value(record: Any) -> tuple[Any, ...] | None:
    """A log record as it crosses: (logger name, level, message, path, line, function,
    exception text, stack text), its message formatted here."""
    try:
        message = record.getMessage()
        exc_text = record.exc_text
        if record.exc_info and not exc_text:
            logging: Any = sys.modules["logging"]
            exc_text = logging.Formatter().formatException(record.exc_info)
        stack = record.stack_info
        args = record.args if _plain_log_value(record.args, 0) else None
        template = record.msg if type(record.msg) is str and args else None
        extra = {
            k: v for k, v in list(vars(record).items())[:200]
            if type(k) is str and k not in _RECORD_FIELDS and not k.startswith("_")
            and _plain_log_value(v, 0)
        }  # fmt: skip
        return (
            str(record.name)[:1000], int(record.levelno), str(message)[:100_000],
            str(record.pathname)[:1000], int(record.lineno), str(record.funcName)[:1000],
            None if exc_text is None else str(exc_text)[:100_000],
            None if stack is None else str(stack)[:100_000],
            None if template is None else (template[:100_000], args), extra or None,
        )  # fmt: skip
    except Exception:
        return None


#: A log record's own attributes (``extra=`` adds others, which cross when plain values).
_RECORD_FIELDS = frozenset({
    "name", "msg", "args", "levelname", "levelno", "pathname", "filename", "module",
    "exc_info", "exc_text", "stack_info", "lineno", "funcName", "created", "msecs",
    "relativeCreated", "thread", "threadName", "processName", "process", "message", "asctime",
    "taskName",
})  # fmt: skip


def _plain_log_value(value: Any, depth: int) -> bool:
    """Whether a log record's ``args`` or ``extra`` value crosses with it: plain data (numbers,
    text, None, and tuples, lists and dicts of them, small and shallow)."""
    kind = type(value)
    if kind in (str, int, float, bool) or value is None:
        return kind is not str or len(value) <= 10_000
    if depth >= 3 or kind not in (tuple, list, dict) or len(value) > 100:
        return False
    items = [*value.keys(), *value.values()] if kind is dict else value
    return all(_plain_log_value(v, depth + 1) for v in items)


def _reissue_record(value: Any) -> None:
    """The judge's side: a log record of the solution, handled by the handlers of the judge's
    logger of that name (or its nearest ancestor the judge has: none is made for it) and up
    the hierarchy as ``Logger.callHandlers`` does, but never by ``logging.lastResort`` (the
    solution's own process printed it already). The solution applied the levels (the
    tests', forwarded); the logger's own filters apply here."""
    if (
        type(value) is not tuple
        or len(value) != 10
        or not all(type(v) is str for v in (value[0], value[2], value[3], value[5]))
        or type(value[1]) is not int
        or type(value[4]) is not int
        or not all(v is None or type(v) is str for v in value[6:8])
        or not (value[8] is None or (type(value[8]) is tuple and len(value[8]) == 2))
        or not (value[9] is None or type(value[9]) is dict)
    ):
        raise CodecError("malformed log record")
    logging: Any = sys.modules.get("logging")
    if logging is None:
        return
    name, level, message, path, line, function, exc_text, stack, formatted, extra = value
    path = "solution.py" if path == "<program>" else path
    record = logging.LogRecord(name, level, path, line, message, None, None, function, stack)
    if formatted is not None and type(formatted[0]) is str and _plain_log_value(formatted[1], 0):
        # its message and arguments (``caplog.records[0].args``), when they give its text
        with contextlib.suppress(Exception):
            again = logging.LogRecord(name, level, path, line, *formatted, None, function, stack)
            if again.getMessage() == message:
                record = again
    record.exc_text = exc_text
    for key, item in (extra or {}).items():  # ``extra=``: plain values, not the record's own
        own = type(key) is not str or key in _RECORD_FIELDS or key.startswith("_")
        if not own and _plain_log_value(item, 0):
            setattr(record, key, item)
    loggers = logging.Logger.manager.loggerDict
    own = logging.root if name == "root" else loggers.get(name)
    if isinstance(own, logging.Logger):
        if own.disabled or not own.filter(record):
            return
        logger = own
    else:
        logger, prefix = logging.root, name
        while "." in prefix:
            prefix = prefix.rpartition(".")[0]
            found = loggers.get(prefix)
            if isinstance(found, logging.Logger):
                logger = found
                break
    while logger is not None:
        for handler in list(logger.handlers):
            if level >= handler.level:
                with contextlib.suppress(Exception):  # a handler's failure is no answer
                    handler.handle(record)
        if not logger.propagate:
            break
        logger = logger.parent
