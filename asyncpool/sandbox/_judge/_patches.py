"""The tests' patches as the judge watches them: ``unittest.mock``'s patches of a module's or a
library class's attribute (:func:`_watch_patches`), the tests' changes of logging levels and of
warning filters (:func:`_watch_logging`, :func:`_watch_warnings`), each counted
(:data:`_PATCH_COUNT`); and which modules and attributes never reach the solution
(:data:`_UNFORWARDED`, :data:`_UNFORWARDED_ATTRS`) or only as an inert mock
(:data:`_STRICT_MODULES`).

Must not: forward anything (:mod:`._forwarded` does).
"""

from __future__ import annotations

import importlib
import types
import warnings
from typing import Any

from ._exceptions import _named_class

#: The tests' ``unittest.mock`` patches of a module's attribute in force, in the order they
#: began: ``(patch, module, attribute)``, kept by :func:`_watch_patches`; ``_PATCH_COUNT[0]``
#: counts their changes (a request carries them only after one).
_PATCHES: list[tuple[Any, Any, str]] = []  # (its target: a module or a library's class)
_PATCH_COUNT = [0]
#: Modules whose patches stay the tests' own: ``sys`` (the solution's output already reaches
#: the tests' ``sys.stdout``), the judge's (each of its modules, by its name in the fork server)
#: and the tests', and every module whose attributes the solution's side of the wire uses as it
#: runs (the codec builds ``decimal.Decimal``, ``fractions.Fraction``...; ``datetime``'s classes
#: it binds at import, so the tests' ``patch("datetime.date", ...)`` reaches the solution):
#: patched there, they would break the wire, not the solution (a test checks that this names
#: every module of the judge, and that this and :data:`_UNFORWARDED_ATTRS` cover every such use
#: in them).
_UNFORWARDED = frozenset({
    "sys", "__main__", "decimal", "fractions",
    "pathlib", "zoneinfo", "struct", "io", "collections", "operator", "weakref", "types",
    "contextlib", "traceback", "keyword", "importlib", "dataclasses", "inspect", "array",
    "copy", "tempfile", "unittest", "asyncio", "_thread",
    "dis", "opcode",  # the judge's reading of the tests' code (_attribute_roots)
    "typing",  # the annotations that cross as values (_typing_spec)
    "doctest",  # the tests' doctest of the solution (_doctest_in_solution)
    # the judge's own modules, by their names in the fork server
    "_asyncpool_zygote._judge",
    *(f"_asyncpool_zygote._judge.{name}" for name in (
        "_ambient", "_annotations", "_bounds", "_check", "_code_texts", "_codec", "_decoder",
        "_decoder_types", "_described", "_encoder", "_exceptions", "_forwarded", "_framing",
        "_guard", "_handle_ids", "_harness", "_kept", "_notices", "_ops", "_pandas", "_patches",
        "_peer", "_peer_channels", "_peer_classes", "_peer_exceptions", "_peer_kept",
        "_peer_perform", "_peer_relay", "_peer_state", "_proxies", "_proxy_backed",
        "_proxy_classes", "_proxy_coroutines", "_proxy_functions", "_pytest_fixtures",
        "_pytest_marks", "_resent", "_serve", "_solution_side", "_stand_ins", "_tests_code",
        "_tests_namespace", "_tests_type", "_values",
    )),
})  # fmt: skip
#: Attributes likewise: the wire's ``os`` calls, and ``builtins.input`` (the solution's
#: ``input`` asks the judge's already, see :meth:`_Peer.serve_input`).
_UNFORWARDED_ATTRS = frozenset({
    ("os", "read"), ("os", "write"), ("os", "_exit"), ("os", "environ"),
    ("os", "sched_setaffinity"), ("builtins", "input"),
    ("uuid", "UUID"),  # the class its values cross as (uuid4, uuid1 may be patched)
    ("random", "_inst"),  # the generator a change of the solution's starts anew (_reseed)
    # the solution's warnings and log records (see _Peer.reissue) and the levels and filters
    # that decide which are sent
    ("logging", "Formatter"), ("logging", "LogRecord"), ("logging", "Logger"),
    ("logging", "disable"), ("logging", "root"), ("warnings", "filters"),
    ("warnings", "showwarning"), ("warnings", "simplefilter"), ("warnings", "warn_explicit"),
    ("warnings", "catch_warnings"), ("warnings", "filterwarnings"),  # filterwarnings marks
    ("abc", "ABCMeta"),  # the stand-ins of the solution's abstract classes (_stand_in_class)
    ("abc", "ABC"),  # a base a library class may have (_library_class)
    # the judge's guard (guard_judge: in judges only; the solution's eval and pickle are its own)
    ("builtins", "eval"), ("builtins", "exec"), ("builtins", "compile"),
    ("pickle", "Unpickler"), ("pickle", "UnpicklingError"),
    # a seeded generator's state (see _SEEDED): read in the judge, set in the solution
    ("random", "getstate"), ("random", "setstate"),
})  # fmt: skip
#: Patched attributes that reach the solution only as an inert mock (:func:`_inert_mock`), the
#: tests' own function (:func:`_tests_callable`) or a spy (:func:`_spy`): called with the
#: solution's arguments, a real function of the judge's could open, run or read, in the judge,
#: what the solution chose (``open("/proc/self/mem")`` through a spy of the real ``open``).
_STRICT_MODULES = frozenset({
    "os", "posixpath", "os.path", "shutil", "io", "pathlib", "subprocess", "glob", "socket",
    "importlib", "ctypes", "pickle", "marshal",
})  # fmt: skip
_STRICT_BUILTINS = frozenset({
    "open", "exec", "eval", "compile", "__import__", "getattr", "setattr", "delattr", "vars",
    "globals", "locals", "dir", "breakpoint",
})  # fmt: skip


def _watch_patches() -> None:
    """Record the tests' ``unittest.mock.patch``es of a module's or a library class's
    attribute (``patch("random.randint", return_value=3)``, ``patch("builtins.open",
    mock_open(...))``, ``patch("solution.fetch")``, :func:`_patch_target`), however they are
    used (``with``, a decorator, ``start()``), by wrapping ``_patch.__enter__``/``__exit__``
    once per process: in-process they patch the solution's module too, so each request of the
    judge carries them (see :func:`_forwarded_patches`)."""
    import unittest.mock

    cls: Any = getattr(unittest.mock, "_patch", None)
    if cls is None or getattr(cls, "_asyncpool_watched", False):
        return
    enter, leave = cls.__enter__, cls.__exit__

    def __enter__(self: Any) -> Any:
        result = enter(self)
        target = getattr(self, "target", None)
        if _patch_target(target) and type(self.attribute) is str:
            _PATCHES.append((self, target, self.attribute))
            _PATCH_COUNT[0] += 1
        return result

    def __exit__(self: Any, *exc_info: Any) -> Any:
        try:
            return leave(self, *exc_info)
        finally:
            for i, entry in enumerate(_PATCHES):
                if entry[0] is self:
                    del _PATCHES[i]
                    _PATCH_COUNT[0] += 1
                    break

    cls.__enter__, cls.__exit__ = __enter__, __exit__
    cls._asyncpool_watched = True
    # ``patch.dict(os.environ, ...)``: the environment crosses whole (see _forwarded_patches)
    dict_cls: Any = getattr(unittest.mock, "_patch_dict", None)
    if dict_cls is not None:
        for method in ("_patch_dict", "_unpatch_dict"):
            setattr(dict_cls, method, _counting(getattr(dict_cls, method)))


def _counting(function: Any) -> Any:
    """``function``, counting each call as a change of the tests' patches (see
    :data:`_PATCH_COUNT`), whether it returns or raises."""

    def counted(*args: Any, **kwargs: Any) -> Any:
        try:
            return function(*args, **kwargs)
        finally:
            _PATCH_COUNT[0] += 1

    return counted


#: The name of the logging levels among the patches of a request (see _watch_logging), and
#: of ``logging.disable``'s level among them.
_LOGGING = "<logging>"
_DISABLE = "<disable>"
#: Whether this process counts the tests' changes of logging levels (see _watch_logging).
_LOGGING_WATCHED: list[bool] = []


def _watch_logging() -> None:
    """Count the tests' changes of logging levels (``Logger.setLevel``, ``logging.disable``:
    ``caplog.set_level``/``at_level``, ``assertLogs``, ``basicConfig(level=...)`` use them) as
    changes of their patches, once per process: the levels then reach the solution's loggers
    with the next request (:func:`_forwarded_patches`), as in-process, where a logger the
    tests set to ``INFO`` is the solution's."""
    if _LOGGING_WATCHED:
        return
    logging: Any = importlib.import_module("logging")
    logging.Logger.setLevel = _counting(logging.Logger.setLevel)
    logging.disable = _counting(logging.disable)
    _LOGGING_WATCHED.append(True)


#: The name of the warnings state among the patches of a request (see _watch_warnings).
_WARNINGS = "<warnings>"
#: Whether this process counts the tests' changes of warning filters, and (when it does) the
#: filters, ``showwarning`` and ``_showwarnmsg_impl`` at the start of the check.
_WARNINGS_WATCHED: list[bool] = []
_WARNINGS_AT_START: list[Any] = []
#: Python's own filters (as the fork server has them): a solution process's, unless its code
#: adds its own.
_DEFAULT_FILTERS = tuple(warnings.filters)
_ALWAYS = ("always", None, Warning, None, 0)
#: The solution's side: its filters and ``showwarning`` while :class:`_WarningsForwarding` is
#: on (empty while off).
_SAVED_WARNINGS: list[Any] = []


def _watch_warnings() -> None:
    """Count the tests' changes of warning filters (``catch_warnings``, ``simplefilter``,
    ``filterwarnings``: ``pytest.warns``, ``recwarn`` use them) as changes of their patches,
    once per process (``warnings._filters_mutated``, which each of them calls). While the
    tests' warnings state differs from the check's start (:func:`_warnings_changed`), the
    solution sends every warning of its calls to the judge (:class:`_WarningsForwarding`),
    whose filters then decide, as in-process where they are the tests'. Otherwise the
    solution's warnings are its own, shown on its stderr by the same default filters."""
    if not _WARNINGS_WATCHED:
        module: Any = warnings
        module._filters_mutated = _counting(module._filters_mutated)
        _WARNINGS_WATCHED.append(True)


def _warnings_changed() -> bool:
    module: Any = warnings
    filters, show, impl = _WARNINGS_AT_START
    return bool(
        module.filters != filters or module.showwarning is not show
        or module._showwarnmsg_impl is not impl
    )  # fmt: skip


def _patch_target(target: Any) -> bool:
    """Whether a patch of ``target``'s attribute may reach the solution: a module's, or a
    library's class's (:func:`_named_class`: not the tests' or the judge's; the solution's
    classes are handles, patched through them)."""
    return isinstance(target, types.ModuleType) or (
        isinstance(target, type) and _named_class(target) is not None
    )
