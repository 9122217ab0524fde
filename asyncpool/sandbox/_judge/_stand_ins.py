"""The tests' classes derived from the solution's, and what the solution may do to the tests'
objects: the judge's stand-in for a class of the solution (:func:`_stand_in_class`), the solution's
subclass for the tests' instances of it (:func:`_shared_class`), which attributes of the tests'
objects the solution may set (:func:`_settable`), the tests' mocks that do nothing of the judge's
(:func:`_inert_mock`).

Must not: let the solution set a method, a class-wide value, or anything of a class, a module or a
function of the tests.
"""

from __future__ import annotations

import abc
import sys
import types
import weakref
from typing import Any

from ._proxies import _PROXY_TYPES, _peer, _Proxy

#: Dunder methods of the solution's class a stand-in forwards (see _Peer.stand_in); those of
#: :data:`_PAIRED_DUNDERS` only when the other operand is the solution's too.
_PAIRED_DUNDERS = frozenset({
    "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__add__", "__sub__",
    "__mul__", "__truediv__", "__floordiv__", "__mod__", "__pow__", "__and__", "__or__",
    "__xor__", "__matmul__",
})  # fmt: skip
_FORWARDED_DUNDERS = _PAIRED_DUNDERS | {
    "__init__", "__repr__", "__str__", "__len__", "__iter__", "__next__", "__getitem__",
    "__setitem__", "__delitem__", "__contains__", "__bool__", "__hash__", "__call__",
    "__neg__", "__pos__", "__abs__", "__invert__",
}
#: The judge's stand-ins for classes of the solution (see _Peer.stand_in): an instance of a
#: tests' class derived from one is shared with the solution (its methods set its state).
_STAND_INS: weakref.WeakSet[type] = weakref.WeakSet()


def _members(cls: Any) -> tuple[Any, ...]:
    """The solution's side of :meth:`_Peer.stand_in`: ``(name, abstract names, members)``,
    each member ``(name, kind, value)``: ``function``, ``static``, ``class`` (the function),
    ``property`` (getter, setter, deleter) or ``value``, from the class and its bases but
    ``object``, the nearest first."""
    if not isinstance(cls, type):
        raise TypeError(f"cannot derive a class from a {type(cls).__name__}")
    out: list[tuple[str, str, Any]] = []
    seen: set[str] = set()
    for klass in cls.__mro__[:-1]:
        for name, raw in list(vars(klass).items()):
            if type(name) is not str or name in seen:
                continue
            seen.add(name)
            if name.startswith("__") and name not in _FORWARDED_DUNDERS:
                continue
            if isinstance(raw, staticmethod):
                out.append((name, "static", raw.__func__))
            elif isinstance(raw, classmethod):
                out.append((name, "class", raw.__func__))
            elif isinstance(raw, property):
                out.append((name, "property", (raw.fget, raw.fset, raw.fdel)))
            elif isinstance(raw, types.FunctionType):
                out.append((name, "function", raw))
            elif not hasattr(type(raw), "__get__"):  # not another kind of descriptor
                out.append((name, "value", raw))
    abstract = tuple(sorted(n for n in getattr(cls, "__abstractmethods__", ()) if type(n) is str))
    mro = tuple(k for k in cls.__mro__[:-1] if k.__module__ != "builtins")
    return (cls.__name__, abstract, tuple(out), mro)


def _forwarding(function: Any, abstract: bool, paired: bool = False) -> Any:
    """A method of a stand-in: the solution's ``function`` called with the instance first;
    ``paired`` (a comparison, an arithmetic operator): only when the other operand is the
    solution's too (a handle, or another such instance), else ``NotImplemented``, as a
    handle's (:class:`_Proxy`): the solution never decides how the tests' objects compare
    with a value of the tests."""

    def method(self: Any, /, *args: Any, **kwargs: Any) -> Any:
        if paired and not (
            len(args) == 1 and (type(args[0]) in _PROXY_TYPES or _shared(args[0]))
        ):
            return NotImplemented
        return function(self, *args, **kwargs)

    if abstract:
        method.__isabstractmethod__ = True  # type: ignore[attr-defined]
    return method


def _stand_in_class(described: Any, proxy: Any) -> type:
    """The stand-in class :func:`_members` described (checked: names, kinds, handles) for the
    solution's class ``proxy``. A class of the tests derived from it is made there too when
    it is made here (:meth:`_Peer.shared_class`): the solution's ``__init_subclass__`` runs,
    with the class's keywords (``class Mine(Plugin, name="x")``), as in-process."""
    if (
        type(described) is not tuple
        or len(described) != 4
        or type(described[0]) is not str
        or not described[0].isidentifier()
        or type(described[1]) is not tuple
        or not all(type(n) is str for n in described[1])
        or type(described[2]) is not tuple
        or len(described[2]) > 10_000
    ):
        raise TypeError("the solution described its class wrongly")
    name, abstract, members, _ = described

    def __init_subclass__(klass: type, /, **kwargs: Any) -> None:
        names = _own_names(klass)
        _peer().request("subclass", proxy, (klass, str(klass.__name__)[:200], names), **kwargs)

    namespace: dict[str, Any] = {
        "__module__": "solution", "__qualname__": name,
        "__init_subclass__": classmethod(__init_subclass__),
    }  # fmt: skip
    for member in members:
        if type(member) is not tuple or len(member) != 3 or type(member[0]) is not str:
            raise TypeError("the solution described its class wrongly")
        key, kind, value = member
        if not key.isidentifier() or (key.startswith("__") and key not in _FORWARDED_DUNDERS):
            raise TypeError("the solution described its class wrongly")
        handle = type(value) in _PROXY_TYPES
        if kind == "function" and handle:
            namespace[key] = _forwarding(value, key in abstract, key in _PAIRED_DUNDERS)
        elif kind == "value" and key == "__hash__" and value is None:  # __eq__ without it
            namespace[key] = None
        elif kind == "static" and handle:
            namespace[key] = staticmethod(value)
        elif kind == "class" and handle:
            namespace[key] = classmethod(_forwarding(value, False))
        elif kind == "property" and type(value) is tuple and len(value) == 3 and all(
            v is None or type(v) in _PROXY_TYPES for v in value
        ):
            parts = [None if v is None else _forwarding(v, key in abstract) for v in value]
            namespace[key] = property(*parts)
        elif kind == "value" and not key.startswith("__"):
            namespace[key] = value
        else:
            raise TypeError("the solution described its class wrongly")
    return abc.ABCMeta(name, (), namespace) if abstract else type(name, (), namespace)


def _own_names(kind: type) -> tuple[str, ...]:
    """The public and ``_private`` names the tests' classes of ``kind``'s MRO define before
    the first stand-in: on the solution's side they are read from the tests' object."""
    names: set[str] = set()
    for k in kind.__mro__:
        if k in _STAND_INS:
            break
        names.update(n for n in vars(k) if type(n) is str and not n.startswith("__"))
    return tuple(sorted(n for n in names if n.isidentifier()))


def _forwarded_attribute(name: str) -> property:
    def get(self: Any) -> Any:
        return _peer().request("getattr", self, (name,))

    def put(self: Any, value: Any) -> None:
        _peer().request("setattr", self, (name, value))

    return property(get, put)


_IMMUTABLE_DEFAULTS = frozenset(
    {type(None), bool, int, float, complex, str, bytes, tuple, frozenset}
)


def _shared_class(
    cls: type, tests_class: Any, class_name: str, names: tuple[str, ...], kwargs: dict[str, Any]
) -> type:
    """The solution's side of :meth:`_Peer.shared`: a subclass of ``cls`` for instances of the
    tests' ``tests_class`` (a handle) derived from it. The names the tests' classes define read
    the tests' object (their overrides, their values); every other attribute the solution's
    class does not have, and every write, is a request to the judge, where the object's state
    lives. Made (``type(self)(...)``) it is made by the tests' class, in the judge; its
    ``__init__`` here does nothing (the judge's ran the solution's)."""

    def __new__(klass: Any, *args: Any, **kwargs: Any) -> Any:
        return tests_class(*args, **kwargs)

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        pass

    def __getattr__(self: Any, name: str) -> Any:
        return _peer().request("getattr", self, (name,))

    def __setattr__(self: Any, name: str, value: Any) -> None:
        _peer().request("setattr", self, (name, value))

    def __delattr__(self: Any, name: str) -> None:
        _peer().request("delattr", self, (name,))

    namespace: dict[str, Any] = {
        "__new__": __new__, "__init__": __init__, "__getattr__": __getattr__,
        "__setattr__": __setattr__, "__delattr__": __delattr__, "__del__": _Proxy.__del__,
        "__module__": "__main__",
    }  # fmt: skip
    # The class's immutable data defaults too (a dataclass's ``y: int = 0``): the instance's
    # own value, if any, is the judge's. (A class-wide list stays the class's, shared.)
    defaults = {
        n for k in cls.__mro__[:-1] for n, v in vars(k).items()
        if type(n) is str and not n.startswith("__") and n.isidentifier()
        and type(v) in _IMMUTABLE_DEFAULTS
    }  # fmt: skip
    for name in {*names, *defaults}:
        namespace[name] = _forwarded_attribute(name)
    name = class_name if class_name.isidentifier() else cls.__name__
    made = type(cls)(name, (cls,), namespace, **kwargs)
    _PROXY_TYPES.add(made)
    return made


def _shared(obj: Any) -> bool:
    """Whether ``obj`` (of the tests) is an instance of a class derived from a stand-in."""
    return any(k in _STAND_INS for k in type(obj).__mro__)


def _plain_tests_object(obj: Any, shared: bool) -> bool:
    """Whether ``obj`` is an instance of the tests' own plain classes (see :func:`_settable`;
    ``shared``: :func:`_shared` of it)."""
    mro = type(obj).__mro__
    metaclasses = (type, abc.ABCMeta) if shared else (type,)  # a stand-in's may be ABCMeta
    return mro[-1] is object and all(
        k in _STAND_INS or (type(k) in metaclasses and vars(k).get("__module__") == "__main__")
        for k in mro[:-1]
    )


def _settable(op: str, obj: Any, args: tuple[Any, ...]) -> bool:
    """Whether the solution may set (or delete) this attribute of one of the tests' objects:
    public data of an instance of the tests' own plain classes, as LeetCode's linked lists and
    trees want (``head.next = prev`` on the tests' ``ListNode``s), or a new public name
    (``node.seen = True``). Never anything of a class, a module or a function; never a name
    the class itself has but a slot (so neither a test's method, property or other
    descriptor, nor a class-wide setting such as a tolerance, changes for the tests); never an
    attribute whose value is callable (a test's ``self.check = ...``); never an instance of a
    class with a metaclass, or deriving from anything but the tests' classes and ``object``.

    An instance of a tests' class derived from a class of the solution (its stand-in, see
    :meth:`_Peer.stand_in`) is the solution's object too: its methods keep their state there,
    so its ``_private`` names are settable, and a data default of the solution's class may be
    shadowed, as in-process; its methods and the tests' class-wide values still may not."""
    if op not in ("setattr", "delattr") or not args or type(args[0]) is not str:
        return False
    name: str = args[0]
    if isinstance(obj, type):
        return False
    shared = _shared(obj)
    if not name.isidentifier() or name.startswith("__" if shared else "_"):
        return False
    if not _plain_tests_object(obj, shared):
        return False
    mro = type(obj).__mro__
    own = getattr(obj, "__dict__", None)
    if type(own) is dict and name in own:
        return not callable(own[name])
    for k in mro:
        if name in vars(k):
            held = vars(k)[name]
            if shared and k in _STAND_INS:  # a default of the solution's class
                return not callable(held) and not hasattr(type(held), "__get__")
            slot = type(held) is types.MemberDescriptorType
            return slot and not callable(getattr(obj, name, None))
    return True


def _mock_class() -> Any:
    """``unittest.mock.NonCallableMock`` (every mock's base) where the tests imported
    ``unittest.mock``, else None."""
    base = getattr(sys.modules.get("unittest.mock"), "NonCallableMock", None)
    return base if isinstance(base, type) else None


_LIST_ITERATORS: tuple[type, ...] = (type(iter([])), type(iter(())))


def _inert_mock(value: Any) -> bool:
    """Whether ``value`` is a mock that does nothing of the judge's whatever it is called with:
    ``mock_open``'s, a plain ``MagicMock``, one whose ``side_effect`` is an exception or a
    list. Not one that wraps a real function or calls one of the tests'."""
    base = _mock_class()
    if base is None or not isinstance(value, base):
        return False
    if vars(value).get("_mock_wraps") is not None:
        return False
    effect = vars(value).get("_mock_side_effect")
    return (
        effect is None
        or isinstance(effect, BaseException)
        or (isinstance(effect, type) and issubclass(effect, BaseException))
        or type(effect) in _LIST_ITERATORS  # side_effect=[...]: the tests' values in turn
        or getattr(effect, "__module__", None) == "unittest.mock"  # mock_open's own
    )


def _mock_signature_set(op: str, obj: Any, args: tuple[Any, ...] = ()) -> bool:
    """Whether the solution may set this object of the tests' ``__signature__``: one of
    ``unittest.mock``'s (matplotlib's ``switch_backend`` sets ``pyplot.show``'s, which the tests
    patched: ``@patch("matplotlib.pyplot.show")``, BigCodeBench's most common decorator, failed
    the first ``plt.figure()``). A mock's signature is no record of its calls
    (``assert_called_once`` reads none of it)."""
    base = _mock_class()
    if base is None or not isinstance(obj, base):
        return False
    return op == "setattr" and args[:1] == ("__signature__",)
