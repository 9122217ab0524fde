"""The proxy classes made to the measure of the other side's classes (:func:`_proxy_class`):
named as the class, with the protocols it has, a dataclass's fields, a library class's
``__class__``; and the ``__class__`` and truth their handles answer.

Must not: make more than 1,000 of them, nor one for a name that is no identifier.
"""

from __future__ import annotations

import dataclasses
import sys
from typing import Any

from . import _proxies  # (its _PEER, read at each use: it is set there)
from ._described import (
    _ABC_SHIFT,
    _ABCS,
    _ASYNC_GENERATOR_NAME,
    _CAPABILITIES,
    _FUNCTION_NAME,
    _GENERATOR_NAME,
    _STANDS_FOR,
    _UNHASHABLE,
    _library_class_getter,
    _standing_module,
)
from ._proxies import _PROXY_TYPES, _FullProxy, _peer, _Proxy, _slots_forwarded
from ._proxy_coroutines import (
    _AsyncGeneratorProxy,
    _CopiedOnlyByCopy,
    _CoroutineProxy,
    _GeneratorProxy,
)
from ._proxy_functions import _function_code, _function_type, _tests_signature
from ._tests_type import _type_of
from ._values import _made_once

_PROXY_CLASSES: dict[bytes, type[_Proxy]] = {}


def _truthy(self: Any) -> bool:
    """``bool()`` of a handle whose object's class has neither ``__bool__`` nor ``__len__``:
    True, as in-process, where no code of the class runs for it; asked of nobody (``while
    node:`` over a linked list of the other side's was a third of each step's requests). An
    object the solution computed from a value of the tests still asks (see _Peer.derive); a
    solution that says its class has no ``__bool__`` when it has one only gets True, which it
    could answer anyway."""
    peer = _peer()
    if peer.computed and peer.is_derived(self):
        return _Proxy.__bool__(self)
    return True


def _class_type(self: Any) -> type:
    """The ``__class__`` of a class's handle in the judge: ``type`` (``isinstance(A, type)``,
    ``inspect.isclass``, ``inspect.isabstract`` then read the class's flags, a request); in the
    solution, a handle of the tests' class stays what it is."""
    peer = _proxies._PEER
    return type if peer is not None and peer.trusted else type(self)


#: Code of the judge's process whose reads of a handle's ``__class__`` are answered with the
#: solution's class (see :func:`_instance_class`): the tests' own, and ``dataclasses.replace``.
_CLASS_READERS = frozenset({"<tests>", dataclasses.__file__})
#: ... and of the solution's process (its program's, ``dataclasses.replace``'s): the class
#: handle of the tests' class (``node.__class__(5)``), when the judge says it (see
#: :func:`_tests_class_object`).
_SOLUTION_CLASS_READERS = frozenset({"<program>", dataclasses.__file__})


def _instance_class(self: Any) -> Any:
    """The ``__class__`` of an instance's handle in the judge: read by the tests' own code (or
    ``dataclasses.replace``), the class handle of the solution's class (``p.__class__.X``,
    ``p.__class__(1)``, as in-process); read by any other code, this proxy class, so that the
    ABC machinery (which passes ``__class__`` to ``issubclass``, wanting a class) and the
    judge's own checks see a class."""
    peer = _proxies._PEER
    if peer is None:
        return type(self)
    caller = sys._getframe(1).f_code.co_filename
    if caller not in (_CLASS_READERS if peer.trusted else _SOLUTION_CLASS_READERS):
        return type(self)
    return _type_of(self)


#: Classes of the other side's functions (by name; see :func:`_proxy_class`).
_FUNCTION_CLASS_NAMES = frozenset({
    "function", "builtin_function_or_method", "method", "partial",
    "_lru_cache_wrapper", "cython_function_or_method",
})  # fmt: skip


def _proxy_class(name: bytes) -> type[_Proxy] | None:
    """The proxy class named as the other side's class ``name`` (``type(r).__name__`` and
    ``r.__class__.__name__`` are the solution's, as in-process: ``"Node"``, ``"generator"``),
    made once per name, at most 1,000 (then, or for a name that is no identifier, None: the
    :class:`_FullProxy`). A subclass with nothing of its own: it behaves as ``_Proxy`` with
    the protocol methods the name's capabilities list (before the name, see
    :func:`_class_name`; all of them, :class:`_FullProxy`, for a class's handle), and a
    dataclass's field names (after the name) give it the ``__dataclass_fields__`` of a
    dataclass of those fields made here: ``asdict(r)`` then reads each field of the handle
    (requests, as ``r.x`` is)."""
    found: type[_Proxy] | None = _PROXY_CLASSES.get(name)  # the path of every handle
    if found is not None:
        return found
    key, capabilities, own_truth = name, None, True
    if name[:1] in (b"\2", b"\3") and len(name) >= 3:
        own_truth = name[:1] == b"\3"
        capabilities, name = int.from_bytes(name[1:3], "big"), name[3:]
    head, _, fields = name.partition(b"\0")
    head, _, where = head.partition(b"\1")
    text = head.decode("utf-8", "replace")
    if not text.isidentifier():
        return None

    def make() -> type[_Proxy]:
        namespace: dict[str, Any] = {
            "__slots__": (), "__module__": "solution", "__doc__": vars(_Proxy)["__doc__"]
        }
        if fields:
            try:
                names = fields.decode("ascii").split("\0")
                model: Any = dataclasses.make_dataclass(text, names)
                namespace["__dataclass_fields__"] = dict(model.__dataclass_fields__)
            except (TypeError, ValueError):  # not identifiers, keywords, duplicates
                pass
        module, _, qualname = where.decode("utf-8", "replace").partition(":")
        if _standing_module(module) and all(p.isidentifier() for p in qualname.split(".")):
            namespace["__class__"] = property(_library_class_getter(module, qualname))
            namespace[_STANDS_FOR] = (module, qualname)
        if name == _FUNCTION_NAME:
            namespace["__class__"] = property(_function_type)
            namespace["__code__"] = property(_function_code)
            namespace["__signature__"] = property(_tests_signature)
        elif (
            capabilities is None
            and "__class__" not in namespace
            and name not in (_GENERATOR_NAME, _ASYNC_GENERATOR_NAME)
            and text != "coroutine"
        ):
            # a class's handle (the name of an object whose class is a metaclass: no
            # capabilities, see _class_name): a class to isinstance(A, type), inspect.isclass
            namespace["__class__"] = property(_class_type)
        elif capabilities is not None and "__class__" not in namespace:
            namespace["__class__"] = property(_instance_class)
        if text in _FUNCTION_CLASS_NAMES and capabilities is None:
            # Not iterable, as a function is not: libraries tell a function from a list of
            # them by ``__iter__`` (pandas' ``is_list_like``: ``s.apply(fn)`` with the other
            # side's ``fn`` iterated it and failed); ``iter()`` of it is a TypeError.
            namespace["__iter__"] = None
        base: type[_Proxy] = (
            _GeneratorProxy if name == _GENERATOR_NAME
            else _AsyncGeneratorProxy if name == _ASYNC_GENERATOR_NAME
            else _CoroutineProxy if text == "coroutine"
            else _FullProxy if capabilities is None
            else _Proxy
        )  # fmt: skip
        if base is _Proxy and capabilities is not None:
            # just the protocols of the other side's class (see _capabilities)
            full = vars(_FullProxy)
            for i, method in enumerate(_CAPABILITIES):
                if capabilities & 1 << i:
                    namespace[method] = full[method]
            if capabilities & _UNHASHABLE:
                namespace["__hash__"] = None
            if not own_truth and "__len__" not in namespace:
                namespace["__bool__"] = _truthy
            if "__next__" in namespace:
                namespace["__copy__"] = _CopiedOnlyByCopy()
        made = type(text, (base,), namespace)
        _slots_forwarded(made)
        number = (capabilities or 0) >> _ABC_SHIFT
        if 0 < number <= len(_ABCS):
            _ABCS[number - 1].register(made)
        _PROXY_TYPES.add(made)
        return made

    found = _made_once(_PROXY_CLASSES, key, make)
    return found
