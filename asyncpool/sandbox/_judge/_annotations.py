"""Annotations on the wire: ``typing``'s aliases (``Optional[int]``, ``List[str]``) as their name
and arguments (:func:`_typing_spec`), subscripted again by the receiver (:func:`_typing_value`).

Must not: look up anything the sender names but ``typing``'s own aliases (:data:`_TYPING_NAMES`).
"""

from __future__ import annotations

import types
import typing
from typing import Any

from ._bounds import CodecError
from ._values import _BUILTIN_TYPE_NAMES

#: ``typing``'s generic aliases that cross as values, by name (``typing.List[int]``: the
#: receiver subscripts its own ``typing.List``), besides ``Union`` (``Optional``), ``Literal``,
#: ``Any`` and ``X | Y``.
_TYPING_NAMES = frozenset({
    "List", "Dict", "Set", "FrozenSet", "Tuple", "Type", "DefaultDict", "OrderedDict", "Counter",
    "Deque", "ChainMap", "Iterable", "Iterator", "Generator", "Sequence", "MutableSequence",
    "Mapping", "MutableMapping", "AbstractSet", "MutableSet", "Collection", "Container",
    "Callable", "Awaitable", "Coroutine", "AsyncIterator", "AsyncIterable", "AsyncGenerator",
    "Hashable", "Sized", "Reversible",
})  # fmt: skip
#: The classes of the ``typing`` objects :func:`_typing_spec` describes (exact types).
_TYPING_KINDS = frozenset(
    kind
    for kind in (
        getattr(typing, "_GenericAlias", None), getattr(typing, "_CallableGenericAlias", None),
        getattr(typing, "_SpecialGenericAlias", None), getattr(typing, "_UnionGenericAlias", None),
        getattr(typing, "_LiteralGenericAlias", None), getattr(types, "UnionType", None),
        type(typing.Any),
    )
    if isinstance(kind, type)
)  # fmt: skip


def _typing_arg(arg: Any, literal: bool = False) -> bool:
    """Whether ``arg`` may be an argument of a ``typing`` alias that crosses as a value: a
    built-in class, None, ``...``, such an alias, ``list[int]``, a list of those (a
    ``Callable``'s parameters), or (``literal``) a plain value. Exact types: a handle is none
    of these (the alias then crosses as a handle)."""
    kind = type(arg)
    if arg is None or arg is Ellipsis or arg is type(None):
        return True
    if literal:
        return kind in (int, str, bytes, bool)
    if kind is type:
        return id(arg) in _BUILTIN_TYPE_NAMES
    if kind is list:
        return len(arg) <= 64 and all(_typing_arg(a) for a in arg)
    if kind is types.GenericAlias:
        return id(arg.__origin__) in _BUILTIN_TYPE_NAMES and all(
            _typing_arg(a) for a in arg.__args__
        )
    return kind in _TYPING_KINDS and _typing_spec(arg, kind) is not None


def _typing_spec(value: Any, kind: type) -> tuple[str, tuple[Any, ...] | None] | None:
    """How a ``typing`` annotation crosses (``f.__annotations__ == {"x": Optional[int]}``,
    ``get_type_hints(f)``): ``(name, args)``, which :func:`_typing_value` subscripts again on
    the receiver's side (args None: the bare alias, ``typing.List``); ``None`` for any other
    (a user's generic class, a forward reference: it crosses as a handle)."""
    name: Any
    if value is typing.Any:
        return ("Any", ())
    if kind is getattr(types, "UnionType", None):
        name = "|"
    elif kind is getattr(typing, "_UnionGenericAlias", None):
        name = "Union"
    elif kind is getattr(typing, "_LiteralGenericAlias", None):
        name = "Literal"
    else:
        name = getattr(value, "_name", None)
        if name not in _TYPING_NAMES or type(name) is not str:
            return None
        if kind is getattr(typing, "_SpecialGenericAlias", None):
            return (name, None) if value is getattr(typing, name) else None
    args = tuple(None if a is type(None) else a for a in typing.get_args(value))
    if len(args) > 64 or not all(_typing_arg(a, name == "Literal") for a in args):
        return None
    return (name, args)


def _typing_value(spec: Any) -> Any:
    """The ``typing`` annotation :func:`_typing_spec` described (checked: allowed names and
    arguments only, subscripted by ``typing`` itself)."""
    if type(spec) is not tuple or len(spec) != 2 or type(spec[0]) is not str:
        raise CodecError("bad typing annotation")
    name, args = spec
    if name == "Any" and args == ():
        return typing.Any
    if args is None and name in _TYPING_NAMES:
        return getattr(typing, name)
    if type(args) is not tuple or len(args) > 64 or not (args or name == "Tuple"):
        raise CodecError("bad typing annotation")
    if not all(_typing_arg(a, name == "Literal") for a in args):
        raise CodecError("bad typing annotation argument")
    try:
        if name == "|":
            union: Any = args[0]
            for arg in args[1:]:
                union = union | arg
            return union
        if name in ("Union", "Literal"):
            return getattr(typing, name)[args]
        if name in _TYPING_NAMES:
            return getattr(typing, name)[args if args else ()]
    except TypeError as exc:  # typing refused them (Callable's parameters not a list...)
        raise CodecError(f"bad typing annotation ({exc})") from None
    raise CodecError("bad typing annotation")
