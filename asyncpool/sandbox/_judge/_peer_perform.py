"""One request of the other side, performed by :class:`._peer._Peer` on its object.

Must not: in the judge, give the solution a hidden attribute or an internal object of the
tests' (:data:`._ops._HIDDEN`, :data:`._ops._INTERNALS`).
"""

from __future__ import annotations

import operator
import types
from typing import Any

from ._described import _PLAIN_TYPES, identity_hashed, note_asked
from ._exceptions import _PASSED_THROUGH, _TextReference
from ._forwarded import _SPIES
from ._handle_ids import _handle_id
from ._ops import _BINARY, _HIDDEN, _INPLACE, _INTERNALS, _NAMES_SHOWN, _REFLECTED, _UNARY
from ._peer_state import _PeerState
from ._proxies import _PROXY_TYPES, _abc_contents, _describe_signature
from ._proxy_coroutines import _anext, _run_coroutine
from ._proxy_functions import _describe_tests_function, _method_of, _tests_function
from ._stand_ins import _members, _mock_signature_set, _shared
from ._values import _BUILTIN_TYPES


class _PeerPerform(_PeerState):
    """The operations a :class:`._peer._Peer` performs for the other side."""

    def perform(self, op: str, obj: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if op == "call":
            return obj(*args, **kwargs)
        if op == "throw":  # a built-in exception the tests throw in (see _GeneratorProxy)
            kind = _BUILTIN_TYPES.get(getattr(args[0], "__name__", "")) if len(args) == 2 else None
            if (
                kind is None
                or kind is not args[0]
                or not issubclass(kind, BaseException)
                or type(args[1]) is not tuple
            ):
                raise TypeError("malformed throw")
            return obj.throw(kind(*args[1]))
        if op in _BINARY or op in _INPLACE:
            if op in _INPLACE and len(args) != 1:
                raise TypeError("malformed in-place operation")
            return getattr(operator, op)(obj, *args[:1])
        if op in _REFLECTED:  # the other operand on the left: ``3 * v``, sum()'s ``0 + v``
            if len(args) != 1:
                raise TypeError("malformed reflected operation")
            return getattr(operator, _REFLECTED[op])(args[0], obj)
        if op == "subclass":  # a class of the tests derived from obj (see _stand_in_class)
            if (
                len(args) != 3
                or not isinstance(obj, type)
                or type(args[0]) not in _PROXY_TYPES
                or type(args[1]) is not str
                or type(args[2]) is not tuple
                or not all(type(n) is str and n.isidentifier() for n in args[2])
            ):
                raise TypeError("malformed subclass request")
            self.shared_class(obj, *args, kwargs)
            return None
        if op in _UNARY:
            return _UNARY[op](obj)
        if op in ("getattr", "setattr", "delattr"):
            name = args[0] if args else None
            if type(name) is not str or (
                self.trusted and name.startswith(_HIDDEN)
                and not (name[:1] == "_" and name[:2] != "__" and _shared(obj))
                and not (op == "getattr" and name in _NAMES_SHOWN)
                and not (op == "getattr" and name == "__doc__" and type(obj) is types.FunctionType)
                and not _mock_signature_set(op, obj, args)
            ):
                raise AttributeError(name if type(name) is str else "?")
            if op == "getattr":
                found = getattr(obj, name)
                if self.trusted and isinstance(found, _INTERNALS):
                    raise AttributeError(name)
                if type(found) in _PLAIN_TYPES:  # (its next handles cross with it)
                    note_asked(type(obj), name)
                if self.trusted and name == "__doc__" and type(found) is str:
                    # the docstring of the tests' function, by number only (see _TestsText)
                    number = self.docs.add(found)
                    if number is None:
                        raise AttributeError(name)
                    return _TextReference(number)
                return found
            if op == "setattr":
                value = args[1]
                if not self.trusted and isinstance(obj, type) and _tests_function(value):
                    value = _method_of(value)
                return setattr(obj, name, value)
            return delattr(obj, name)
        if op == "await":
            return _run_coroutine(obj)
        if op == "dir":
            return sorted(name for name in dir(obj) if type(name) is str)
        if op == "members":
            return _members(obj)
        if op == "collection":
            return _abc_contents(obj)
        if op == "iter":
            return iter(obj)
        if op == "anext":
            return _anext(obj)
        if op == "next":
            if args and not self.trusted:  # a generator's send (see _GeneratorProxy.send)
                return obj.send(args[0])
            return next(obj)
        if op == "len":
            return len(obj)
        if op == "getitem":
            return obj[args[0]]
        if op == "setitem":
            obj[args[0]] = args[1]
            return None
        if op == "delitem":
            del obj[args[0]]
            return None
        if op == "contains":
            return args[0] in obj
        if op == "bool":
            return bool(obj)
        if op == "repr":
            return repr(obj)
        if op == "str":
            return str(obj)
        if op == "format":
            return format(obj, args[0])
        if op == "hash":  # and whether it is its identity's: then the handle keeps it
            note_asked(type(obj), "__hash__")
            return (hash(obj), identity_hashed(type(obj)))
        if op == "id":  # this side's id of its object (see _handle_ids._handle_id)
            return _handle_id(obj)
        if op in ("copy", "deepcopy"):
            import copy

            return copy.copy(obj) if op == "copy" else copy.deepcopy(obj)
        if op == "round":
            return round(obj, *args[:1])
        if op == "signature":  # the judge's of the solution's object, or the other way round
            if self.trusted:  # (only of the tests' plain function: see serve)
                return _describe_tests_function(obj)
            return _describe_signature(obj)
        if op == "enter":
            return obj.__enter__()
        if op == "aenter":  # ``async with`` in the tests: run here, as "await" runs
            return _run_coroutine(obj.__aenter__())
        if op in ("exit", "aexit"):
            if len(args) != 1:
                raise TypeError("malformed exit")
            if self.trusted:  # the solution's exception (see _exit), or None
                told = args[0]
                exc = (
                    None if told is None
                    else GeneratorExit() if told == "GeneratorExit"
                    else self.exception(told)
                )  # fmt: skip
            else:
                cls = _PASSED_THROUGH.get(args[0]) if type(args[0]) is str else None
                exc = cls() if cls is not None else (Exception() if args[0] else None)
            kind = type(exc) if exc is not None else None
            if op == "aexit":
                return _run_coroutine(obj.__aexit__(kind, exc, None))
            return obj.__exit__(kind, exc, None)
        if op == "type":  # the tests' type() of a handle (see _type_of)
            return type(obj)
        if op == "record":  # a call of the solution on a spy of the tests' (see _spy)
            if (
                not self.trusted
                or not any(obj is spy for spy in _SPIES)
                or len(args) != 2
                or type(args[0]) is not tuple
                or type(args[1]) is not dict
                or not all(type(k) is str for k in args[1])
            ):
                raise TypeError("malformed record")
            obj._increment_mock_call(*args[0], **args[1])
            return None
        if op == "isinstance":
            return isinstance(args[0], obj)
        if op == "issubclass":
            return issubclass(args[0], obj)
        raise TypeError(f"unknown request {op}")
