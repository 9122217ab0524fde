"""Value-backed handles (:class:`_Backed`): the receiver's object for the other side's
object of a built-in base (an ``IntEnum`` member, ``class Stack(list)``), a value of
the base with the other side's object behind it.
"""

from __future__ import annotations

from typing import Any

#: Where a value-backed handle keeps its :class:`_Proxy` (in the instance's ``__dict__``: the
#: subclasses of ``int``, ``bytes`` and ``tuple`` cannot have slots).
_HANDLE = "_asyncpool_handle"


def _handle_getattr(self: Any, name: str) -> Any:
    """``__getattr__`` of the judge's objects that stand for one of the other side's and keep
    its handle in ``_HANDLE`` (value-backed handles, the solution's exceptions): an attribute
    they do not have here (``.name``, ``e.code``), not a special name, is read from there."""
    proxy = vars(self).get(_HANDLE)
    if proxy is None or name.startswith("__"):
        raise AttributeError(name)
    return getattr(proxy, name)


class _Backed:
    """The receiver's side of a value-backed handle (see :data:`_BACKED_BASES`): mixed into a
    subclass of the base type, so equality, hashing, ordering and arithmetic are the base
    value's; attribute reads the base type does not answer (not special names), ``repr`` and
    ``str`` go to the other side's object, as a :class:`_Proxy`'s do."""

    __getattr__ = _handle_getattr

    def __repr__(self) -> str:
        return repr(vars(self)[_HANDLE])

    def __str__(self) -> str:
        return str(vars(self)[_HANDLE])


class _BackedInt(_Backed, int):
    def __contains__(self, item: Any) -> bool:
        """``in``, which ``int`` lacks: the other side's object's own (an ``IntFlag``'s
        ``P.A in flags``; ``TypeError`` from an ``IntEnum`` member, as in-process), as a
        :class:`_Proxy`'s ``in`` is."""
        handle = vars(self)[_HANDLE]
        from ._proxies import _checked, _peer  # (_proxies imports this module)

        answer = _peer().request("contains", handle, (item,))
        return bool(_checked(answer, bool, "in"))


class _BackedFloat(_Backed, float):
    pass


class _BackedComplex(_Backed, complex):
    pass


class _BackedStr(_Backed, str):
    pass


class _BackedBytes(_Backed, bytes):
    pass


class _BackedTuple(_Backed, tuple):  # type: ignore[type-arg]
    pass


class _BackedList(_Backed, list):  # type: ignore[type-arg]
    pass


class _BackedDict(_Backed, dict):  # type: ignore[type-arg]
    def __missing__(self, key: Any) -> Any:
        """A key the value lacks: asked of the other side's object, whose class may answer
        it (its own ``__missing__``, a dict with defaults) or raise ``KeyError``, as
        in-process; when that added the key there (a ``defaultdict``), it is added here too,
        with the same answer, so ``len`` and ``dict()`` of this copy see it, as in-process."""
        from ._proxies import _peer  # (_proxies imports this module)

        peer, handle = _peer(), vars(self)[_HANDLE]
        value = peer.request("getitem", handle, (key,))
        if peer.request("contains", handle, (key,)) is True:
            dict.__setitem__(self, key, value)
        return value


class _BackedSet(_Backed, set):  # type: ignore[type-arg]
    pass


class _BackedFrozenset(_Backed, frozenset):  # type: ignore[type-arg]
    pass


class _BackedBytearray(_Backed, bytearray):
    pass


_BACKED_CLASS_OF: dict[type, type] = {
    int: _BackedInt, float: _BackedFloat, complex: _BackedComplex, str: _BackedStr,
    bytes: _BackedBytes, tuple: _BackedTuple, list: _BackedList, dict: _BackedDict,
    set: _BackedSet, frozenset: _BackedFrozenset, bytearray: _BackedBytearray,
}  # fmt: skip
_BACKED_CLASSES = frozenset(_BACKED_CLASS_OF.values())
