"""The tests' ``type`` (:class:`_TestsType`): ``type(obj)`` of a handle as in-process, the
class of the solution's object, checked (:func:`_type_of`).

Must not: take a type the solution's object cannot be of (a solution that rewrote its
side of the wire may answer anything).
"""

from __future__ import annotations

import types
from typing import Any

from ._described import _STANDS_FOR, _library_class
from ._proxies import _PROXY_TYPES, _peer
from ._proxy_backed import _BACKED_CLASSES, _HANDLE


def _type_of(obj: Any) -> Any:
    """``type(obj)`` as in-process, for the tests' ``type`` (:class:`_TestsType`): of a handle
    (or a value-backed one) the class of the solution's object, asked of the solution (a class
    handle, the same one the tests name: ``type(p) is Point``), and checked, since a solution
    that rewrote its side of the wire may answer anything (:func:`_possible_type`); a
    generator's, a coroutine's or a function's handle says its type itself; ``type`` itself is
    the tests' ``type``; anything else's real class."""
    kind = type(obj)
    backed = kind in _BACKED_CLASSES
    if backed:
        obj = vars(obj).get(_HANDLE, obj)
        kind = type(obj)
    if kind in _PROXY_TYPES:
        claimed = obj.__class__  # (read here: the proxy class, or what such a handle says)
        if claimed in _SAID_TYPES and not backed:
            return claimed
        peer = _peer()
        if not peer.trusted:  # the solution's type() of the tests' object (judged_namespace)
            try:
                return peer.request("type", obj)
            except TypeError:  # not of a class the tests defined: the proxy class, as before
                return kind
        answer = peer.request("type", obj)
        if not _possible_type(answer, kind, backed):
            stands_for = vars(kind).get(_STANDS_FOR)
            if stands_for is not None and answer is _library_class(*stands_for):
                # The class its handle crossed as (``re.Match``): ``isinstance`` follows that
                # claim, as a ``__class__`` property makes it in-process, but ``type()`` never
                # does (a solution that rewrote its side of the wire may claim any class, which
                # no object but a real ``re.Match`` can in-process: helper 44's T1); the
                # handle's own class, named as the object's, rather than a failed check.
                return kind
            peer.fail("the solution answered type() with a class its object cannot be of")
        kind = answer
    return _TestsType if kind is type or kind is _TestsTypeMeta else kind


#: The types a handle says by itself (its name at crossing: see :data:`_GENERATOR_NAME`); a
#: solution that forges one gains nothing a test could tell by value (the items, the result).
_SAID_TYPES = frozenset({
    types.GeneratorType, types.AsyncGeneratorType, types.CoroutineType, types.FunctionType,
})  # fmt: skip
#: Built-in classes whose objects always cross as values, never as handles: never the type of
#: a handle (a value-backed one's is a strict subclass of its base, a class of the solution or
#: of a library, which crosses as a class handle).
_VALUE_CLASSES = frozenset({
    int, float, complex, bool, str, bytes, bytearray, list, tuple, dict, set, frozenset,
    type(None), range, slice, memoryview, object,
})  # fmt: skip


def _possible_type(answer: Any, kind: type, backed: bool) -> bool:
    """Whether ``answer`` may be the type of the solution's object behind a handle of proxy
    class ``kind``: a class handle or one of this check's classes for the solution's exception
    classes; or, for a handle that is not value-backed, ``type`` (a class's) or a built-in class
    named as the handle's class is (``map``, ``zip``: their objects cross as handles) that is
    none of :data:`_VALUE_CLASSES`. Never a library class the judge has: a solution's class
    renamed as one would otherwise pass for it, which in-process ``type()`` never does."""
    if type(answer) in _PROXY_TYPES or _peer().mirrored(answer):
        return True
    if backed or not isinstance(answer, type):
        return False
    if answer is type:
        return True
    return (
        getattr(answer, "__module__", None) == "builtins"
        and answer not in _VALUE_CLASSES
        and answer.__name__ == kind.__name__
    )


class _TestsTypeMeta(type):
    """The metaclass of :class:`_TestsType`: its one-argument call is :func:`_type_of`, and it
    answers ``isinstance``/``issubclass``/``==`` as ``type`` does. Classes the tests derive
    from it (a metaclass of theirs, ``class Meta(type)``) are made and called as ``type``'s."""

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        if cls is not _TestsType:
            return super().__call__(*args, **kwargs)
        if len(args) == 1 and not kwargs:
            kind = type(args[0])
            if kind in _PROXY_TYPES or kind in _BACKED_CLASSES:
                return _type_of(args[0])
            # (the common case, inline; a metaclass derived from this one's is type's)
            return _TestsType if kind is type or kind is _TestsTypeMeta else kind
        return type(*args, **kwargs)

    def __instancecheck__(cls, obj: Any) -> bool:
        if cls is not _TestsType:
            return type.__instancecheck__(cls, obj)
        kind = _type_of(obj)
        return kind is _TestsType or (isinstance(kind, type) and issubclass(kind, type))

    def __subclasscheck__(cls, sub: Any) -> bool:
        if cls is not _TestsType:
            return type.__subclasscheck__(cls, sub)
        return sub is _TestsType or (isinstance(sub, type) and issubclass(sub, type))

    def __eq__(cls, other: object) -> bool:
        return cls is other or (cls is _TestsType and other is type)

    def __hash__(cls) -> int:
        return hash(type) if cls is _TestsType else type.__hash__(cls)


class _TestsType(type, metaclass=_TestsTypeMeta):
    """The tests' ``type`` (in their namespace when they name it): ``type(obj)`` of a handle
    is the solution's class as the tests see it (its class handle: ``type(p) is Point``,
    ``type(p).count``, ``type(p)(2)``, ``issubclass(type(p), Shape)``), as in-process, where a
    handle's own class is the judge's proxy class. The solution's too, when its code names
    ``type`` (:func:`judged_namespace`): of a handle of an object of a class the tests defined,
    that class's handle (:func:`_tests_class_object`). Else it is ``type``: three-argument calls,
    ``isinstance(cls, type)``, a metaclass derived from it; ``type(int) is type`` holds,
    since :func:`_type_of` answers ``type`` with this class."""


_TestsType.__name__ = _TestsType.__qualname__ = "type"
_TestsType.__module__ = "builtins"
# ``type[int]`` (an annotation, PEP 585) is ``type``'s alone: CPython subscripts only
# ``type`` itself, not a class derived from it.
_TestsType.__class_getitem__ = classmethod(  # type: ignore[attr-defined]
    lambda cls, item: types.GenericAlias(type, item)
)
