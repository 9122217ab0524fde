"""The tests' pytest marks and parametrization, as pytest reads them: ``skip``, ``skipif``,
``xfail`` and their conditions, ``parametrize`` (indirect too, ids, marks of a param), and
which test functions pytest would call.

Must not: evaluate a condition string that is not a string constant of the tests' own code (see
:func:`_condition`).
"""

from __future__ import annotations

import os
import sys
import types
from importlib.util import find_spec as _find_spec  # bound once (the fork server loaded it)
from typing import Any

from ._proxies import _PROXY_TYPES
from ._proxy_functions import _ASYNC_GENERATOR, _COROUTINE, _GENERATOR
from ._tests_code import _CHECK, _COMPILE, _EVAL, _code_objects


def _installed(name: str) -> bool:
    """Whether the module ``name`` can be imported here (``pytest_asyncio``, pytest's
    ``_pytest.subtests``), asked of the real ``find_spec`` bound at load, so that the tests'
    patches of ``importlib.util`` do not answer for the judge. Not cached: a module already
    imported answers from ``sys.modules``, and a long-lived judge must not carry one check's
    answer (under its ``sys.path``) into the next."""
    return _find_spec(name) is not None


def _param_value(value: Any) -> Any:
    """A fixture param as ``request.param`` gives it (a ``pytest.param(v)``'s ``v``)."""
    if _parameter_set(value):
        return value.values[0] if len(value.values) == 1 else value.values
    return value


def _parameter_set(value: Any) -> bool:
    """Whether ``value`` is a ``pytest.param(...)`` of the tests (never asks a handle)."""
    return type(value).__name__ == "ParameterSet" and type(value) not in _PROXY_TYPES


def _param_marks(param: Any) -> list[Any]:
    """The marks of a fixture's param given as ``pytest.param(..., marks=...)``, else none."""
    return _marks(list(param.marks)) if _parameter_set(param) else []


def _mark_class(name: str) -> Any:
    return getattr(sys.modules.get("_pytest.mark.structures"), name, None)


def _marks(value: Any) -> list[Any]:
    """pytest's marks in ``value`` (a ``pytestmark`` list, one mark or one mark decorator),
    as ``Mark`` objects; anything else (a value of the solution's) counts for none."""
    mark_type, decorator_type = _mark_class("Mark"), _mark_class("MarkDecorator")
    if mark_type is None:
        return []
    items = value if type(value) is list else [value]
    out = []
    for item in items:
        if decorator_type is not None and type(item) is decorator_type:
            item = item.mark
        if type(item) is mark_type:
            out.append(item)
    return out


def _condition(mark: Any) -> bool:
    """Whether a ``skipif``/``xfail`` mark applies: no condition, or any of its conditions
    true. A string condition is evaluated as pytest does (``os``, ``sys``, ``platform`` and the
    tests' globals) only when it is a string constant of the tests' own code (see
    :func:`_tests_strings`): then it is code the tests wrote, and equal text is the same code
    whoever made the object. Any other string is refused: it could be a value of the
    solution's (``skipif(solution.FLAG)``), and the judge runs no code the solution wrote."""
    conditions = list(mark.args)
    if "condition" in mark.kwargs:
        conditions.append(mark.kwargs["condition"])
    if not conditions:
        return True
    for condition in conditions:
        if isinstance(condition, str):
            if type(condition) is not str or condition not in _tests_strings():
                raise TypeError(
                    f"a {mark.name} mark with the string condition {condition!r:.200}, which "
                    "is not a string of the tests' code: the judge evaluates no other strings"
                )
            import platform

            scope = {"os": os, "sys": sys, "platform": platform, **_CHECK[1]}
            code = _COMPILE(condition, f"<{mark.name} condition>", "eval", dont_inherit=True)
            condition = _EVAL(code, scope)
        if condition:
            return True
    return False


def _tests_strings() -> frozenset[str]:
    """The string constants of the running check's tests' code, nested code included."""
    code = _CHECK[0]
    if code is None:
        return frozenset()
    return frozenset(
        const for current in _code_objects(code) for const in current.co_consts
        if type(const) is str
    )  # fmt: skip


def _skipped(marks: list[Any]) -> bool:
    """Whether the marks skip the test: a ``skip``, or a ``skipif`` whose condition holds."""
    return any(m.name == "skip" or (m.name == "skipif" and _condition(m)) for m in marks)


#: ``co_flags`` of generator and coroutine functions: a test the judge cannot run to its end
#: by calling it (pytest refuses ``yield`` tests; ``async def`` ones need a plugin); 0x100:
#: an iterable coroutine (``types.coroutine``).
_NOT_CALLABLE_TESTS = _GENERATOR | _COROUTINE | 0x100 | _ASYNC_GENERATOR


def _asyncio_test(marks: list[Any]) -> bool:
    """Whether an ``async def`` test runs as pytest-asyncio runs it (on an event loop of its
    own, as ``asyncio.run`` gives it): it has the ``asyncio`` mark, and the plugin is installed
    (without it pytest runs no coroutine test). Its fixtures stay the plain ones."""
    return any(m.name == "asyncio" for m in marks) and _installed("pytest_asyncio")


def _parameters(fn: Any, bound: bool) -> tuple[list[str], list[str]]:
    """The names of ``fn``'s parameters, and of those without a default. Through a decorator
    that says what it wraps (``functools.wraps``: ``__wrapped__``), the wrapped function's; the
    first ones that ``unittest.mock.patch`` decorators fill (one per patch without ``new``) are
    not the test's, as pytest reads them."""
    wrapped = getattr(fn, "__wrapped__", None)
    if type(wrapped) is types.FunctionType or (
        type(wrapped) is types.MethodType and type(wrapped.__func__) is types.FunctionType
    ):
        patched = _mock_patched(fn)
        params, required = _parameters(wrapped, bound and not isinstance(wrapped, types.MethodType))
        return params[patched:], [r for r in required if r not in params[:patched]]
    code = fn.__code__
    params = list(code.co_varnames[int(bound) : code.co_argcount + code.co_kwonlyargcount])
    defaults = len(fn.__defaults__ or ())
    positional = params[: code.co_argcount - int(bound)]
    kwonly = params[len(positional) :]
    kwdefaults = fn.__kwdefaults__ or {}
    required = positional[: len(positional) - defaults] + [k for k in kwonly if k not in kwdefaults]
    return params, required


class _Indirect:
    """A value of an ``indirect`` parametrize: its fixture's ``request.param``."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value


def _mock_patched(fn: Any) -> int:
    """How many positional arguments ``unittest.mock.patch`` decorators of ``fn`` pass (their
    patchings that make a mock: without ``new``, not ``patch.dict``)."""
    mock = sys.modules.get("unittest.mock")
    default = getattr(mock, "DEFAULT", None)
    patchings = getattr(fn, "patchings", None)
    if mock is None or type(patchings) is not list:
        return 0
    return sum(
        1
        for p in patchings
        if getattr(p, "attribute_name", 1) is None and getattr(p, "new", None) is default
    )


def _parametrized(marks: list[Any]) -> list[tuple[dict[str, Any], list[Any]]]:
    """The keyword sets the ``parametrize`` marks among ``marks`` (a test's, its class's and
    its module's) give (one empty set when none), each with the marks of its
    ``pytest.param(..., marks=...)``."""
    runs: list[tuple[dict[str, Any], list[Any]]] = [({}, [])]
    for mark in marks:
        if mark.name != "parametrize":
            continue
        args, kw = tuple(mark.args), dict(mark.kwargs)
        argnames = args[0] if args else kw.get("argnames")
        argvalues = args[1] if len(args) > 1 else kw.get("argvalues", ())
        # One name in a string takes each value whole; names in a tuple or list unpack each
        # (``("x",)`` with ``[(1,)]`` gives x=1), as pytest reads them.
        unpack = not isinstance(argnames, str)
        indirect = kw.get("indirect", False)
        if isinstance(argnames, str):
            argnames = [a.strip() for a in argnames.split(",") if a.strip()]
        argnames = list(argnames or ())
        sets: list[tuple[dict[str, Any], list[Any]]] = []
        for values in argvalues:
            own: list[Any] = []
            if _parameter_set(values):
                own = _marks(list(values.marks))
                values = values.values
                if len(argnames) == 1:
                    values = values[0]
            elif unpack and len(argnames) == 1:
                values = values[0]
            one = (
                {argnames[0]: values}
                if len(argnames) == 1
                else dict(zip(argnames, values, strict=True))
            )
            if indirect:
                names = one if indirect is True else [n for n in indirect if n in one]
                one = {**one, **{n: _Indirect(one[n]) for n in names}}
            sets.append((one, own))
        runs = [({**run, **one}, before + more) for run, before in runs for one, more in sets]
    return runs
