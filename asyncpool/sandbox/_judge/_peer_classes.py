"""Classes made for one check by :class:`._peer._Peer`: the judge's mirrors of the
solution's exception classes, its stand-ins for the solution's classes the tests derive
from, and the solution's classes for those tests' classes.

Must not: make more than :data:`._values.MAX_MADE_CLASSES` of them.
"""

from __future__ import annotations

import contextlib
import importlib
from typing import Any

from ._bounds import CodecError
from ._exceptions import (
    _PASSED_THROUGH,
    _PASSED_THROUGH_CLASSES,
    _imported_by_tests,
    _Mirror,
    _mirror_str,
    _standard_exception_class,
)
from ._peer_state import _PeerState
from ._proxies import _PROXY_TYPES, _Proxy
from ._proxy_backed import _HANDLE, _handle_getattr
from ._stand_ins import _STAND_INS, _shared_class, _stand_in_class
from ._values import MAX_MADE_CLASSES


class _PeerClasses(_PeerState):
    """The classes a :class:`._peer._Peer` makes for the other side's."""

    def mirror(self, n: int, name: str, base: str, bases: tuple[Any, ...]) -> type:
        """The judge's class standing for the solution's exception class ``n`` (made once per
        check, at most :data:`MAX_MADE_CLASSES`): named as it, derived from the judge's classes
        for its own bases and from the built-in ones among :data:`_PASSED_THROUGH` (else from
        ``base``, the nearest of those), so that ``except InvalidInput`` in the tests catches
        what the solution raised, and ``except AppError`` its subclasses, as in-process."""
        mirrors = self.mirrors
        found = mirrors.get(n)
        if found is not None:
            return found
        if len(mirrors) >= MAX_MADE_CLASSES:
            raise CodecError(f"more than {MAX_MADE_CLASSES} exception classes")
        parents: tuple[type, ...] = ()
        for b in bases:
            if type(b) is tuple:  # a class of a library, by name: the judge's own
                found = _standard_exception_class(*b)
                if found is None and _imported_by_tests(b[0], self.tests):
                    # made before the tests ran (a name of the solution's): their import now
                    with contextlib.suppress(Exception):
                        importlib.import_module(b[0])
                    found = _standard_exception_class(*b)
                parents += () if found is None else (found,)
            elif (type(b) is type and b in _PASSED_THROUGH_CLASSES) or self.mirrored(b):
                parents += (b,)
        namespace = {
            "__module__": "solution", "__qualname__": name, "__getattr__": _handle_getattr,
            "__str__": _mirror_str, _HANDLE: self.proxy(n),
        }  # fmt: skip
        try:
            made = _Mirror(name, parents or (_PASSED_THROUGH[base],), namespace)
        except TypeError:  # bases repeated, or whose layouts or orders conflict
            made = _Mirror(name, (_PASSED_THROUGH[base],), namespace)
        mirrors[n] = made
        return made

    def stand_in(self, proxy: _Proxy) -> type:
        """The judge's class standing for the solution's class ``proxy`` as a base of a class of
        the tests (made once per check, at most :data:`MAX_MADE_CLASSES`): its methods,
        ``staticmethod``s, ``classmethod``s, properties and ``__init__``, ``__repr__``,
        ``__str__``, ``__len__``, ``__iter__`` and ``__getitem__`` call the solution's with the
        tests' instance (or class) as a handle; its other values are the class's own; its
        abstract methods are abstract here too (``abc.ABCMeta``: an incomplete subclass cannot
        be instantiated). Never its comparisons, ``__hash__``, ``__bool__`` or ``__exit__``:
        how the tests' objects compare and whether their failures pass stays the tests'."""
        n = object.__getattribute__(proxy, "_id")
        found = self.stand_ins.get(n)
        if found is not None:
            return found
        if len(self.stand_ins) + len(self.mirrors) >= MAX_MADE_CLASSES:
            raise TypeError(f"more than {MAX_MADE_CLASSES} classes of the solution")
        described = self.request("members", proxy)
        made = _stand_in_class(described, proxy)
        bases = tuple(b for b in described[3] if type(b) in _PROXY_TYPES)
        self.stand_ins[n] = made
        self.stand_in_of[made] = proxy
        # the classes of its MRO, by number (issubclass(Mine, Base) for the solution's Base)
        self.stand_in_bases[made] = bases
        _STAND_INS.add(made)
        return made

    def shared_base(self, kind: type) -> _Proxy | None:
        """The judge's side: the solution's class that ``kind`` (a class of the tests) derives
        from through its stand-in, if any."""
        for k in kind.__mro__:
            found = self.stand_in_of.get(k)
            if found is not None:
                return found
        return None

    def shared(self, n: int, spec: Any) -> Any:
        """The solution's side: the judge's object ``n``, an instance of a tests' class derived
        from the solution's class ``cls``: an instance of a class of the solution's made for
        it (:func:`_shared_class`), so that the solution's methods run on it as on their own
        (``isinstance(self, Shape)``, ``super()``, ``type(self)(...)``), while its state and
        the tests' own attributes stay in the judge (every read and write a request)."""
        if (
            type(spec) is not tuple
            or len(spec) != 4
            or not isinstance(spec[0], type)
            or type(spec[1]) not in _PROXY_TYPES
            or type(spec[2]) is not str
            or type(spec[3]) is not tuple
            or not all(type(name) is str and name.isidentifier() for name in spec[3])
        ):
            raise CodecError("malformed shared object")
        found = None if self.proxies is None else self.proxies.get(n)
        if found is not None:
            return found
        try:
            local = self.shared_class(*spec)
        except TypeError:  # a class that cannot be derived from here (a layout, a final)
            return self.proxy(n)

        def make() -> Any:
            made: Any = object.__new__(local)
            object.__setattr__(made, "_id", n)
            object.__setattr__(made, "_owner", self)
            return made

        try:
            return self._hold(n, make)
        except TypeError:  # a built-in base (dict): object.__new__ refuses it, a plain handle
            return self.proxy(n)

    def shared_class(
        self, cls: type, tests_class: Any, class_name: str, names: tuple[str, ...],
        kwargs: dict[str, Any] | None = None,
    ) -> type:  # fmt: skip
        """The solution's side: the class of its own made for the tests' class ``tests_class``
        (a handle) derived from ``cls`` (:func:`_shared_class`), once per check: made when the
        tests' class is (see :func:`_stand_in_class`), so that ``cls.__init_subclass__`` runs
        then, with the tests' class keywords, as in-process (a registry of subclasses)."""
        key = (id(cls), object.__getattribute__(tests_class, "_id"), names)
        local = self.shared_classes.get(key)
        if local is None:
            local = _shared_class(cls, tests_class, class_name, names, kwargs or {})
            self.shared_classes[key] = local
        return local

    def mirrored(self, cls: Any) -> bool:
        """Whether ``cls`` is one of this check's :meth:`mirror` classes."""
        proxy = vars(cls).get(_HANDLE) if type(cls) is _Mirror else None
        return proxy is not None and self.mirrors.get(object.__getattribute__(proxy, "_id")) is cls
