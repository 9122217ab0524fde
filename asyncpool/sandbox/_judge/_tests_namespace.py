"""The judge's side of the solution's greeting: which of its names, modules and top-level values
the tests' namespace holds (:func:`_greeting`, :func:`_ask_constants`, :func:`_for_tests`), the
standard modules the judge imports for the tests (:data:`TEST_MODULES`), the solution's recursion
and int digit limits (:func:`_take_solution_settings`).

Must not: let a name of the solution's shadow a built-in, a dunder or a standard module the tests
use.
"""

from __future__ import annotations

import builtins
import contextlib
import importlib
import keyword
import sys
import types
from typing import TYPE_CHECKING, Any

from ._ambient import _int_digits, _set_int_max_str_digits
from ._bounds import MAX_NAMES, CodecError
from ._described import _library_module
from ._exceptions import _Mirror, _standard_class_name
from ._kept import _watch_mark
from ._proxies import _PROXY_TYPES, _peer
from ._proxy_backed import _BACKED_CLASSES
from ._tests_code import _code_objects
from ._values import _BUILTIN_TYPE_NAMES, _import_numpy

if TYPE_CHECKING:
    from ._peer import _Peer


#: Standard modules the judge imports for the tests when the solution imported them.
TEST_MODULES = frozenset({
    "array", "bisect", "cmath", "collections", "copy", "datetime", "decimal", "fractions",
    "functools", "heapq", "itertools", "json", "math", "numpy", "operator", "random", "re",
    "statistics", "string", "sys", "typing",
})  # fmt: skip


def _may_proxy(name: str) -> bool:
    """Whether a name the solution announced may stand in the tests' namespace: never one
    that would shadow a built-in (a solution defining ``abs`` must not change the tests'
    ``abs``), a dunder, or a keyword."""
    return (
        name.isidentifier()
        and not keyword.iskeyword(name)
        and not name.startswith("__")
        and not hasattr(builtins, name)
    )


def _greeting(
    value: Any,
) -> tuple[dict[str, Any], dict[str, str], dict[str, str], tuple[Any, ...]]:
    if type(value) is not tuple or len(value) != 6 or type(value[4]) not in _PROXY_TYPES:
        raise CodecError("malformed greeting")
    names, standard, modules, constants, evaluator, settings = value
    _take_solution_settings(settings)
    peer = _peer()
    peer.evaluator = evaluator
    if constants != () and (
        type(constants) is not tuple
        or len(constants) != 2
        or type(constants[0]) is not tuple
        or not all(type(n) is str for n in constants[0])
        or type(constants[1]) not in _PROXY_TYPES
    ):
        raise CodecError("malformed greeting")
    for table in (names, standard, modules):
        if type(table) is not dict or not all(type(k) is str for k in table):
            raise CodecError("malformed greeting")
    # A top-level callable is a handle, or a built-in class under another name (typing's
    # ``Text`` is ``str``: crossed as the judge's own class), or a standard class the solution
    # imported (``from collections.abc import Set``: the judge's own, see _standard_class), or
    # a value-backed handle, or one of the solution's exception classes (the judge's class for
    # it, see _Peer.mirror).
    if not all(
        type(v) in _PROXY_TYPES or type(v) in _BACKED_CLASSES or id(v) in _BUILTIN_TYPE_NAMES
        or type(v) is _Mirror or _standard_class_name(v) is not None
        for v in names.values()
    ):
        raise CodecError("a top-level callable that is not a handle")
    if not all(type(v) is str for v in (*standard.values(), *modules.values())):
        raise CodecError("malformed greeting")
    return names, standard, modules, constants


#: The most recursion limit a solution's ``sys.setrecursionlimit`` gives the tests (see
#: :func:`_take_solution_settings`): past any depth a stack reaches, and far enough below
#: ``INT_MAX`` that the judge's own temporary raise (:func:`_deepened`) cannot overflow.
MAX_RECURSION_LIMIT = 100_000_000


def _take_solution_settings(settings: Any) -> None:
    """The judge's side, at the greeting: the process-wide settings the solution's top level
    made that in-process are the tests' too (the solution's code runs first, in the one
    interpreter), given to the tests: its ``sys.setrecursionlimit(10_000)`` when higher than
    the judge's (the tests' own recursion then goes as deep; a lower one is not taken: only the
    limit the tests' code runs under is at stake, never the judge's footing), at most
    :data:`MAX_RECURSION_LIMIT`; its ``sys.set_int_max_str_digits(0)`` (the tests' ``str()`` of a
    big result). Either only harms the check that takes it (a crash, a slow conversion: a
    judge that dies gives no "passed"); a changed digit limit retires a long-lived judge as the
    tests' own does (see ``_zygote_judges._interpreter_settings``)."""
    if (
        type(settings) is not tuple
        or len(settings) != 2
        or type(settings[0]) is not int
        or not (settings[1] is None or type(settings[1]) is int)
    ):
        raise CodecError("malformed greeting")
    limit, digits = settings
    limit = min(limit, MAX_RECURSION_LIMIT)
    if limit > sys.getrecursionlimit():
        sys.setrecursionlimit(limit)
        _peer().limit = limit  # the solution's own: nothing to send it back
    if digits is not None and digits != _int_digits() and _set_int_max_str_digits is not None:
        with contextlib.suppress(ValueError):  # below the minimum: the solution could not
            _set_int_max_str_digits(digits)


def _import_submodules(modules: Any, used: frozenset[str]) -> None:
    """Load here a library's submodules the solution imported under a top-level name (``import
    matplotlib.pyplot as plt``) when the tests name that library: in-process, the tests'
    ``import matplotlib`` then finds ``matplotlib.axes`` and ``matplotlib.figure`` loaded by the
    solution's import (BigCodeBench's ``assertIsInstance(ax, matplotlib.axes.Axes)``). Library
    modules only (:func:`_library_module`: nothing of the standard library, the judge, pytest),
    at most :data:`MAX_NAMES`; one that fails to load here is left out."""
    for module in list(modules)[:MAX_NAMES]:
        if (
            "." in module
            and module.partition(".")[0] in used
            and _library_module(module)
            and module not in sys.modules
        ):
            with contextlib.suppress(Exception):
                importlib.import_module(module)


def _reached_modules(
    modules: dict[str, str], used: frozenset[str], held: dict[str, Any]
) -> dict[str, Any]:
    """The standard modules the solution imported that the tests reach through the
    ``solution`` module (``patch("solution.os.path.exists")``, ``patch("solution.time.sleep")``,
    ``solution.shutil``), not among :data:`TEST_MODULES`: the judge's own module of that name,
    already loaded here (never imported for this: the name is the solution's claim), under the
    solution's alias, when the tests name that alias and ``held`` has nothing of that name.
    Only the ``solution`` module holds them (the tests' namespace does not: they import their
    own); a patch through one patches the judge's module, which reaches the solution as the
    tests' patch of that module does (see :func:`_forwarded_patches`)."""
    found: dict[str, Any] = {}
    for alias, name in list(modules.items())[:MAX_NAMES]:
        if (
            alias in used
            and alias not in held
            and _may_proxy(alias)
            and name.partition(".")[0] in sys.stdlib_module_names
            and type(module := sys.modules.get(name)) is types.ModuleType
        ):
            found[alias] = module
    return found


def _for_tests(name: str, value: Any) -> Any:
    """What the tests' namespace holds under a name of the solution's: never the solution's
    object under the name of a standard module (tests that use ``math`` without importing it
    get the judge's math, not a ``math = Fake()`` whose ``isclose`` is always true)."""
    return _import(name) if name in TEST_MODULES else value


def _ask_constants(
    peer: _Peer, constants: tuple[Any, ...], used: frozenset[str], namespace: dict[str, Any],
    code: types.CodeType | None = None,
) -> None:
    """Put the solution's top-level values that the tests name (and that nothing else of the
    namespace holds) in the tests' namespace, as in-process where the tests share the
    solution's globals: one request, only when the tests name one; kept current after that
    (:meth:`_Peer.update_constants`). Asking is an answer of the solution to the tests (see
    ``answered``) only when the tests' ``code`` names one of the values in its bytecode, not
    only in a string: DS-1000's solution computes ``result`` and its tests read it, with no
    call at all."""
    if not constants:
        return
    held, ask = constants
    wanted = tuple(
        n for n in held[:MAX_NAMES] if n in used and n not in namespace and _may_proxy(n)
    )
    if not wanted:
        return
    answered = peer.answered
    values = ask(wanted)
    peer.answered = answered
    if code is not None and any(
        name in current.co_names for current in _code_objects(code) for name in wanted
    ):
        peer.answered += 1
    if type(values) is not tuple or len(values) != len(wanted):
        peer.fail("the solution answered the request for its values with something else")
    for name, value in zip(wanted, values, strict=True):
        namespace[name] = peer.live[name] = _for_tests(name, value)
        peer.live_marks[name] = _watch_mark(peer.live[name])


def _import(module: str) -> Any:
    return _import_numpy() if module == "numpy" else importlib.import_module(module)


def _standard(module: str, name: str) -> Any:
    """The judge's own ``module.name`` when it is a public callable of a module of
    :data:`TEST_MODULES`, else None."""
    if module not in TEST_MODULES or not name.isidentifier() or name.startswith("_"):
        return None
    value = getattr(_import(module), name, None)
    return value if callable(value) else None
