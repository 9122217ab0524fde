"""Handles of functions: the ``__class__``, ``__code__`` and signature a handle of the
other side's plain function answers, and a tests' function set on a solution's class.

Must not: give the solution anything of the tests' function's code but its parameters
and kind (a built-in annotation at most).
"""

from __future__ import annotations

import types
from typing import Any

from ._proxies import _PROXY_TYPES, _checked, _peer, _signature


def _function_type(self: Any) -> type:
    """The ``__class__`` of a plain function's handle (see :data:`_FUNCTION_NAME`), on both
    sides: in the solution, ``inspect.iscoroutinefunction(callback)`` of the tests' ``async
    def`` then reads :func:`_function_code`'s flags (a decorator that handles coroutine
    functions apart, ``@retry(3)`` on the tests' ``async def flaky``, awaited it only so)."""
    return types.FunctionType


#: ``co_flags`` bits (``inspect.CO_*``; inspect is imported only when needed).
_GENERATOR, _COROUTINE, _ASYNC_GENERATOR, _VARARGS, _VARKEYWORDS = 0x20, 0x80, 0x200, 0x04, 0x08
#: ``co_flags`` a tests' function's description carries: coroutine, generator, async
#: generator (what ``inspect.iscoroutinefunction`` and its kin read).
_FUNCTION_KINDS = _COROUTINE | _GENERATOR | _ASYNC_GENERATOR


def _describe_tests_function(function: types.FunctionType) -> tuple[Any, ...]:
    """The judge's answer to the solution's ``inspect.signature`` of the tests' function (a
    ``def`` or a ``lambda`` passed to it): what a decorator of the solution reads of it
    (``@retry(3)``, ``@validate``, a callback called with one or two arguments as its
    parameters say, a memoizer binding its arguments with ``apply_defaults()``) and nothing
    else their code holds. Per parameter ``(name, kind, has a default, the default, has an
    annotation, the annotation)`` as :func:`_describe_signature` gives them (a default as a
    value or a handle, as in-process the solution reads it; ``__defaults__`` stays hidden), but
    an annotation only when it is a built-in class or ``None`` (``x: int``, ``-> None``: a type
    check of the tests' ``def add(a: int, b: int)``; a class or a text of theirs could carry
    their data); then the return annotation's pair, and the code's kind
    (:data:`_FUNCTION_KINDS`), its name and qualified name."""
    import inspect

    empty = inspect.Parameter.empty

    def shown(note: Any) -> bool:
        return note is None or (type(note) is type and note.__module__ == "builtins")

    params = tuple(
        (p.name, int(p.kind), p.default is not empty, None if p.default is empty else p.default,
         shown(p.annotation), p.annotation if shown(p.annotation) else None)
        for p in inspect.signature(function).parameters.values()
    )  # fmt: skip
    ret = function.__annotations__.get("return", empty)
    code = function.__code__
    return (
        params, shown(ret), ret if shown(ret) else None, code.co_flags & _FUNCTION_KINDS,
        function.__name__, function.__qualname__,
    )  # fmt: skip


def _tests_signature(self: Any) -> Any:
    """``inspect.signature`` of a plain function's handle (see :data:`_FUNCTION_NAME`): in the
    judge, the solution's signature (as any handle's); in the solution, the tests' function's
    as the judge describes it (:func:`_describe_tests_function`)."""
    peer = _peer()
    described = peer.request("signature", self)
    if not peer.trusted and type(described) is tuple and len(described) == 6:
        described = described[:3]
    return _signature(described)


#: Code objects of :func:`_function_code`, per kind of code: compiled once per process.
_CODE_TEMPLATES: dict[int, types.CodeType] = {}


def _function_code(self: Any) -> types.CodeType:
    """``__code__`` of a plain function's handle: in the judge, the solution's (a request, as
    any attribute); in the solution, for the tests' function, a code object made here that
    says its parameters and its kind and holds nothing of the tests' code (its body returns
    None): ``inspect.iscoroutinefunction(cb)``, ``cb.__code__.co_argcount`` answer as
    in-process."""
    peer = _peer()
    if peer.trusted:
        raise AttributeError("__code__")  # (then __getattr__'s request)
    described = peer.request("signature", self)
    try:
        params, _, _, kind, name, qualname = described
        kind = _checked(kind, int, "a function's kind") & _FUNCTION_KINDS
        pairs = [
            (_checked(p[1], int, "a parameter kind"), _checked(p[0], str, "a parameter name"))
            for p in params
        ]
        kinds = [k for k, _ in pairs]
        ordered = [n for k, n in pairs if k in (0, 1)]
        kwonly = [n for k, n in pairs if k == 3]
        rest = [n for k, n in pairs if k == 2] + [n for k, n in pairs if k == 4]
        template = _CODE_TEMPLATES.get(kind)
        if template is None:
            head = "async def" if kind & (_COROUTINE | _ASYNC_GENERATOR) else "def"
            body = "yield" if kind & (_GENERATOR | _ASYNC_GENERATOR) else "pass"
            module = compile(f"{head} f():\n    {body}\n", "<tests' function>", "exec")
            template = next(c for c in module.co_consts if isinstance(c, types.CodeType))
            template = _CODE_TEMPLATES.setdefault(kind, template)
        var_positional, var_keyword = 2, 4  # (inspect.Parameter's kinds, as ints)
        flags = template.co_flags | (_VARARGS if var_positional in kinds else 0)
        flags |= _VARKEYWORDS if var_keyword in kinds else 0
        varnames = (*ordered, *kwonly, *rest)
        return template.replace(
            co_argcount=len(ordered), co_posonlyargcount=kinds.count(0),
            co_kwonlyargcount=len(kwonly), co_nlocals=len(varnames), co_varnames=varnames,
            co_flags=flags, co_name=_checked(name, str, "a name"),
            co_qualname=_checked(qualname, str, "a name"),
        )  # fmt: skip
    except (TypeError, ValueError) as exc:
        raise AttributeError(f"__code__ of the tests' function: {exc}") from None


def _tests_function(value: Any) -> bool:
    """The solution's side: whether ``value`` is a handle of a plain function of the tests
    (a ``def`` or a ``lambda``: its class is named ``function``)."""
    return type(value) in _PROXY_TYPES and type(value).__name__ == "function"


def _method_of(function: Any) -> Any:
    """The solution's side: a function calling the tests' ``function`` (a handle), to be set
    on one of the solution's classes in its place (``Calc.rate = lambda self: 2.0`` in the
    tests): a function binds as a method, the instance its first argument, as the tests'
    function does in-process; the handle itself would not (``Calc().rate()`` called it with
    no ``self``)."""

    def method(*args: Any, **kwargs: Any) -> Any:
        return function(*args, **kwargs)

    return method
