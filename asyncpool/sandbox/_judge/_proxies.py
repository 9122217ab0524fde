"""The other side's objects on this side: :class:`_Proxy`, a handle whose every use is a request to
the object's owner, and its classes made to the measure of the other side's (:func:`_proxy_class`:
the protocols its class has, a dataclass's fields, a library class's ``__class__``); the handles of
functions, generators, async generators and coroutines; the value-backed handles
(:class:`_Backed`); the tests' ``type`` of a handle (:class:`_TestsType`).

Owns the process's current peer, :data:`_PEER`, which every request of a proxy reads
(:func:`_peer`): set by :mod:`._serve` (the solution's side) and :mod:`._check` (the judge's), read
elsewhere as ``_proxies._PEER``.

Must not: encode or decode (the peer does), nor let a proxy be equal to (or ordered with) a value
of this side: a comparison the other side computes against one is never trusted.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import sys
import types
from collections.abc import Mapping as _AbcMapping  # bound once: the tests' patches are forwarded
from collections.abc import Set as _AbcSet
from threading import Thread as _Thread
from typing import TYPE_CHECKING, Any

from ._bounds import MAX_ITERATION
from ._described import (
    _ABC_SHIFT,
    _ABCS,
    _ASYNC_GENERATOR_NAME,
    _CAPABILITIES,
    _FUNCTION_NAME,
    _GENERATOR_NAME,
    _STANDS_FOR,
    _UNHASHABLE,
    _library_class,
    _library_class_getter,
    _standing_module,
)
from ._ops import _SUBTRACTIONS
from ._values import _BUILTIN_TYPES, _made_once

if TYPE_CHECKING:
    from ._peer import _Peer


def _handle_getattr(self: Any, name: str) -> Any:
    """``__getattr__`` of the judge's objects that stand for one of the other side's and keep
    its handle in ``_HANDLE`` (value-backed handles, the solution's exceptions): an attribute
    they do not have here (``.name``, ``e.code``), not a special name, is read from there."""
    proxy = vars(self).get(_HANDLE)
    if proxy is None or name.startswith("__"):
        raise AttributeError(name)
    return getattr(proxy, name)


#: Marks, in its ``__dict__``, an exception the judge raised because a request to the solution
#: failed (the solution's exception, rebuilt): never suppressed by the solution's context
#: manager (:func:`_suppresses`).
_FROM_SOLUTION = "_asyncpool_from_solution"


def _describe_signature(obj: Any) -> tuple[Any, ...]:
    """``inspect.signature(obj)`` as values and handles: per parameter ``(name, kind, has a
    default, the default, has an annotation, the annotation)``, then the return annotation's
    pair; :func:`_signature` builds the receiver's ``inspect.Signature`` from it."""
    import inspect

    empty = inspect.Parameter.empty
    sig = inspect.signature(obj)
    params = tuple(
        (p.name, int(p.kind), p.default is not empty, None if p.default is empty else p.default,
         p.annotation is not empty, None if p.annotation is empty else p.annotation)
        for p in sig.parameters.values()
    )  # fmt: skip
    ret = sig.return_annotation
    return (params, ret is not empty, None if ret is empty else ret)


def _signature(described: Any) -> Any:
    """The ``inspect.Signature`` :func:`_describe_signature` described; a ``TypeError`` for
    anything else (``Signature`` itself checks names, kinds and their order)."""
    import inspect

    empty = inspect.Parameter.empty
    try:
        params, has_ret, ret = described
        parameters = [
            inspect.Parameter(
                _checked(name, str, "a parameter name in signature()"),
                inspect._ParameterKind(_checked(kind, int, "a parameter kind in signature()")),
                default=default if has_default is True else empty,
                annotation=note if has_note is True else empty,
            )
            for name, kind, has_default, default, has_note, note in _checked(
                params, tuple, "signature()"
            )
        ]
        return inspect.Signature(parameters, return_annotation=ret if has_ret is True else empty)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"signature() of the solution's object: {exc}") from None


_PEER: _Peer | None = None


def _peer() -> _Peer:
    if _PEER is None:
        raise RuntimeError("no other process to ask")
    return _PEER


def _both(a: Any, b: Any) -> bool:
    return type(a) in _PROXY_TYPES and type(b) in _PROXY_TYPES


def _abc_compare(op: str, proxy: Any, other: object) -> Any:
    """A comparison of an object of the solution's with a mapping or a set of the tests, in
    the judge, as in-process when the object's class takes its comparisons from
    ``collections.abc.Mapping`` or ``Set`` (a ``Mapping`` subclass compared with a dict
    literal, a ``keys()`` view): the solution sends what those methods read (a mapping's
    items; a set's length and items: :func:`_abc_contents`) and the judge compares them with
    the tests' value itself. The solution is never asked how it compares with that value (a
    ``Set``'s ``>=`` reads the items, not its ``__contains__``), so a class that only claims
    to be such a collection gains what returning a dict or a set would. Anything else, or
    any other pair: ``NotImplemented``, as before (a handle never equals a value)."""
    peer = _PEER
    if (
        peer is None or not peer.trusted or type(other) in _PROXY_TYPES
        or not isinstance(other, (_AbcMapping, _AbcSet)) or peer.is_derived(proxy)
    ):  # fmt: skip
        return NotImplemented
    contents = peer.request("collection", proxy)
    if contents is None:
        return NotImplemented
    if type(contents) is not tuple or len(contents) != 3 or type(contents[1]) is not int or (
        contents[0] not in ("mapping", "set") or type(contents[2]) is not tuple
    ):
        raise TypeError("the solution described its collection wrongly")
    kind, size, items = contents
    if kind == "mapping":
        if op not in ("eq", "ne") or not isinstance(other, _AbcMapping):
            return NotImplemented
        if not all(type(pair) is tuple and len(pair) == 2 for pair in items):
            raise TypeError("the solution described its mapping wrongly")
        equal = dict(items) == dict(other.items())
        return equal if op == "eq" else not equal
    if not isinstance(other, _AbcSet):
        return NotImplemented
    # The length the comparisons read is the number of items the judge received, each once:
    # the solution's own ``len()`` is only a claim, and a class whose ``__len__`` says 3 while
    # it holds nothing (or whose iteration repeats one item three times) would otherwise equal
    # every 3-item set (``all(...)`` of no items is true).
    try:
        mine: Any = set(items)
        distinct = len(mine)
    except TypeError:  # an unhashable item: compared one by one, as __contains__ would
        mine = items
        distinct = len({id(item) for item in items})  # (no unhashable item is in a set)
    if size != len(items) or distinct != len(items):
        raise TypeError(
            f"the solution's set says it holds {size} items but iterates {len(items)}, "
            f"{distinct} of them distinct"
        )
    if op in ("eq", "ne"):  # Set.__eq__: same length, and every item in the other
        equal = size == len(other) and all(item in other for item in items)
        return equal if op == "eq" else not equal
    if op in ("le", "lt"):
        within = size <= len(other) and all(item in other for item in items)
        return within and (op == "le" or size < len(other))
    covers = size >= len(other) and all(item in mine for item in other)
    return covers and (op == "ge" or size > len(other))


def _abc_contents(obj: Any) -> tuple[str, int, tuple[Any, ...]] | None:
    """The solution's side of :func:`_abc_compare`: ``("mapping", len, items)`` for an object
    whose class's ``__eq__`` is ``collections.abc.Mapping``'s, ``("set", len, items)`` for
    ``Set``'s (as their comparisons read them: ``items()``, ``len()`` and iteration, the
    solution's own methods), else None."""
    eq = getattr(type(obj), "__eq__", None)
    if eq is _AbcMapping.__eq__:
        items = tuple(obj.items())
        return ("mapping", len(items), items)
    if eq is _AbcSet.__eq__:
        return ("set", len(obj), tuple(obj))
    return None


def _checked(value: Any, kind: type, what: str) -> Any:
    if type(value) is not kind:
        raise TypeError(f"{what} of the solution's object returned {type(value).__name__}")
    return value


def _exit_name(kind: Any) -> str | None:
    """What the solution's ``__exit__`` is told of the tests' exception: its class's name
    (rebuilt there only when one of :data:`_PASSED_THROUGH`), never the exception."""
    return kind.__name__ if isinstance(kind, type) else None


def _exit(handle: Any, op: str, kind: Any, exc: Any) -> bool:
    """A handle's ``__exit__``/``__aexit__`` (``op``). In the judge (the tests' ``with`` on
    the solution's context manager): the solution is told the tests' exception's class name
    only, and its answer suppresses only as :func:`_suppresses` allows. In the solution (its
    ``with`` on the tests' context manager): the tests' ``__exit__`` gets the solution's
    exception as the judge rebuilds every exception of the solution's (its class or a stand-in
    of it under its built-in base, its message, its causes: ``pytest.raises(ValueError,
    match=...)``, ``contextlib.suppress(ValueError)`` of a ``json.JSONDecodeError``), and what
    it returns suppresses when true, as in-process: the tests decide about the solution's
    exceptions, never the other way round."""
    peer = _peer()
    if peer.trusted:
        return _suppresses(exc, peer.request(op, handle, (_exit_name(kind),)))
    told: Any = None
    if isinstance(exc, GeneratorExit):  # (a generator of the solution's closed in the block)
        told = "GeneratorExit"
    elif isinstance(exc, BaseException):
        told = peer.describe(exc)
    return bool(peer.request(op, handle, (told,)))


#: Attributes a handle never has here: the array interfaces through which numpy (or another
#: library of the judge's) would read and write memory at an address the object names
#: (``np.asarray(handle)``, ``pytest.approx``, ``np.testing``): the solution's answer would
#: be a pointer into the judge. Without them numpy takes the object through ``__array__`` (an
#: array that crosses as a value, rebuilt here) or as an object scalar.
_RAW_MEMORY = frozenset({
    "__array_interface__", "__array_struct__", "__cuda_array_interface__", "__dlpack__",
    "__dlpack_device__",
})  # fmt: skip


def _suppresses(exc: Any, answer: Any) -> bool:
    """Whether a solution's context manager's answer suppresses the tests' exception ``exc``:
    ``True`` only, and only for an exception of the tests' own code (``with Suppress(KeyError):
    d["x"]``), never for the tests' failures (an ``AssertionError``, anything that is not an
    ``Exception``), an exception the solution raised (a call of the block failed: marked
    :data:`_FROM_SOLUTION`), nor a ``TypeError`` (what a handle compared with or computed with
    a value of the tests raises): otherwise a context manager that says yes to everything
    would end the block at the solution's first failure, skipping the tests' asserts after
    it, and the tests would still run to their end. In-process it could; an honest context
    manager that suppresses its own failures or a ``TypeError`` of the tests is judged
    failed here."""
    if exc is not None and (
        not isinstance(exc, Exception)
        or isinstance(exc, (AssertionError, TypeError))
        or getattr(exc, "__dict__", {}).get(_FROM_SOLUTION)
    ):
        return False
    return answer is True


class _Proxy:
    """An object of the other process, by its number there: every use is a request to it.

    Never equal to (nor ordered with) an object of this process: those methods return
    ``NotImplemented`` unless both operands are proxies (or, for the judge, the solution's
    ``collections.abc`` mapping or set against the tests': see :func:`_abc_compare`), so
    Python falls back to identity (``==`` is ``False``) or raises ``TypeError``. Arithmetic
    with such an object is the owner's, and in the judge gives a derived proxy
    (:meth:`_Peer.derive`). The protocols (calls, iteration, ``len``, indexing, ``in``,
    ``with``) are :class:`_FullProxy`'s, given to each proxy class as its object's class has
    them (:func:`_proxy_class`)."""

    __slots__ = ("__weakref__", "_fin", "_hash", "_id", "_idv", "_owner", "_seen")

    @property
    def __doc__(self) -> Any:  # type: ignore[override]
        """The other side's docstring (``f.__doc__``), not this class's."""
        return _peer().request("getattr", self, ("__doc__",))

    @property
    def __signature__(self) -> Any:
        """``inspect.signature(f)``: the other side's signature, rebuilt here (defaults and
        annotations as values or handles), not this class's ``(*args, **kwargs)``."""
        return _signature(_peer().request("signature", self))

    def __init__(self, n: int, owner: _Peer) -> None:
        object.__setattr__(self, "_id", n)
        # The peer (one check's wire) the number belongs to: a long-lived judge serves many
        # checks, and a proxy of an earlier one that dies late must not release a number of
        # the current one (nor be usable in it).
        object.__setattr__(self, "_owner", owner)
        # The object's plain attributes as its handle crossed with them, and the message count
        # then (see _described._plain_attributes): read here while no message has crossed since.
        object.__setattr__(self, "_seen", None)
        # Its object's hash, when its class's is the identity's, and whether dropping it may
        # run code of the owner's (see _described._handle_extras).
        object.__setattr__(self, "_hash", None)
        object.__setattr__(self, "_fin", False)
        object.__setattr__(self, "_idv", None)  # its object's id, once asked (_handle_id)

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            object.__getattribute__(self, "_owner").release(
                object.__getattribute__(self, "_id"), object.__getattribute__(self, "_fin")
            )

    def __getattr__(self, name: str) -> Any:
        if name in _RAW_MEMORY or name == "__copy__":  # (see _CopiedOnlyByCopy)
            raise AttributeError(name)
        seen = object.__getattribute__(self, "_seen")
        if seen is not None:
            peer: _Peer = object.__getattribute__(self, "_owner")
            if (
                peer is _PEER and seen[0] == peer.epoch and name in seen[1]
                and not (peer.computed and peer.is_derived(self))
            ):  # fmt: skip
                return seen[1][name]
        return _peer().request("getattr", self, (name,))

    def __setattr__(self, name: str, value: Any) -> None:
        _peer().request("setattr", self, (name, value))

    def __delattr__(self, name: str) -> None:
        _peer().request("delattr", self, (name,))

    def __bool__(self) -> bool:
        return bool(_checked(_peer().request("bool", self), bool, "bool()"))

    def __repr__(self) -> str:
        return str(_checked(_peer().request("repr", self), str, "repr()"))

    def __str__(self) -> str:
        return str(_checked(_peer().request("str", self), str, "str()"))

    def __format__(self, spec: str) -> str:
        return str(_checked(_peer().request("format", self, (spec,)), str, "format()"))

    def __hash__(self) -> int:
        """The owner's hash of its object. One that hashes by identity (the same for the
        object's life, no code of its class) is asked once and kept by the handle, or crosses
        with it (``_described._handle_extras``): a ``set`` of the other side's nodes asks
        nothing of a node seen before. An object computed from the tests' values is asked
        each time (and its hash refused where it is a difference, as before)."""
        known = object.__getattribute__(self, "_hash")
        if known is not None:
            peer: _Peer = object.__getattribute__(self, "_owner")
            if peer is _PEER and not (peer.computed and peer.is_derived(self)):
                return int(known)
        answer = _peer().request("hash", self)
        if (
            type(answer) is not tuple or len(answer) != 2
            or type(answer[0]) is not int or type(answer[1]) is not bool
        ):  # fmt: skip
            raise TypeError("hash() of the solution's object returned a malformed answer")
        value: int = answer[0]
        if answer[1]:
            object.__setattr__(self, "_hash", value)
        return value

    def __copy__(self) -> Any:
        return _peer().request("copy", self)

    def __dir__(self) -> list[str]:
        """The solution's ``dir()`` of its object (``MagicMock(spec=Repo)`` reads it)."""
        names = _checked(_peer().request("dir", self), list, "dir()")
        if not all(type(name) is str for name in names):
            raise TypeError("dir() of the solution's object returned a name that is no str")
        return list(names)

    def __deepcopy__(self, memo: Any) -> Any:
        # The copy is the solution's (``copy.deepcopy`` there); ``memo`` keeps one copy per
        # handle within one ``deepcopy`` of the tests, as in-process.
        return _peer().request("deepcopy", self)

    def __instancecheck__(self, obj: Any) -> bool:
        if type(obj) not in _PROXY_TYPES and type(obj) not in _BACKED_CLASSES:
            return self.__subclasscheck__(type(obj))
        return bool(_checked(_peer().request("isinstance", self, (obj,)), bool, "isinstance()"))

    def __subclasscheck__(self, cls: Any) -> bool:
        if type(cls) not in _PROXY_TYPES:
            # a class of the tests derived from this one or a subclass (see __mro_entries__)
            peer = _PEER
            if peer is None or not isinstance(cls, type):
                return False
            n = object.__getattribute__(self, "_id")
            return any(
                object.__getattribute__(base, "_id") == n
                for k in cls.__mro__ for base in peer.stand_in_bases.get(k, ())
            )  # fmt: skip
        return bool(_checked(_peer().request("issubclass", self, (cls,)), bool, "issubclass()"))

    def __mro_entries__(self, bases: tuple[Any, ...]) -> tuple[type, ...]:
        """A class of the tests derived from a class of the solution (``class Square(Shape)``,
        ``class Incomplete(Shape): pass``): derived instead from the judge's stand-in for it
        (:meth:`_Peer.stand_in`), whose methods run in the solution's process on the tests'
        instance (a handle there), as in-process."""
        return (_peer().stand_in(self),)

    def __eq__(self, other: object) -> Any:
        if _both(self, other):
            return _peer().request("eq", self, (other,))
        return _abc_compare("eq", self, other)

    def __ne__(self, other: object) -> Any:
        if _both(self, other):
            return _peer().request("ne", self, (other,))
        return _abc_compare("ne", self, other)

    def __lt__(self, other: object) -> Any:
        if _both(self, other):
            return _peer().request("lt", self, (other,))
        return _abc_compare("lt", self, other)

    def __le__(self, other: object) -> Any:
        if _both(self, other):
            return _peer().request("le", self, (other,))
        return _abc_compare("le", self, other)

    def __gt__(self, other: object) -> Any:
        if _both(self, other):
            return _peer().request("gt", self, (other,))
        return _abc_compare("gt", self, other)

    def __ge__(self, other: object) -> Any:
        if _both(self, other):
            return _peer().request("ge", self, (other,))
        return _abc_compare("ge", self, other)

    def _binary(self, op: str, other: Any) -> Any:
        """Arithmetic with ``other`` on the right. Between two handles: the owner's, as
        in-process. With a value (or an object of the tests): the judge asks the solution
        (``v * 3``, ``money + 5``), and the answer must be an object of the solution's,
        derived (:meth:`_Peer.derive`); the solution asks the judge (``point * 2`` of the
        tests' ``Point``), the tests' own method. Never with a stand-in of a class."""
        peer = _peer()
        if _both(self, other):
            result = peer.request(op, self, (other,))
            if peer.computed and (peer.is_derived(self) or peer.is_derived(other)):
                return peer.derive(result, peer.is_difference(self) or peer.is_difference(other))
            return result
        return self._with_value(op, other)

    def _reflected(self, op: str, other: Any) -> Any:
        """Arithmetic with ``other`` on the left, whose own operator gave up (``3 * v``): as
        :meth:`_binary`, the solution's ``__rmul__``."""
        if type(other) in _PROXY_TYPES:
            return NotImplemented
        return self._with_value(op, other)

    def _with_value(self, op: str, other: Any) -> Any:
        """:meth:`_binary`'s and :meth:`_reflected`'s arithmetic with an operand that is no
        handle: asked of the owner; in the judge, the answer is derived."""
        if isinstance(other, type) or type(other) in _BACKED_CLASSES:
            return NotImplemented
        peer = _peer()
        result = peer.request(op, self, (other,))
        if not peer.trusted:
            return result
        return peer.derive(result, op in _SUBTRACTIONS or peer.is_difference(self))

    def __add__(self, other: Any) -> Any:
        return self._binary("add", other)

    def __radd__(self, other: Any) -> Any:
        """``0 + obj``: how ``sum()`` of the solution's objects starts, as in-process (their
        ``__radd__`` with the int 0, which tells the solution nothing of the tests'), any answer
        (a derived object's: a derived one); with any other value of the tests, the solution's
        ``__radd__`` as :meth:`_reflected`."""
        if type(other) is int and other == 0:
            return _peer().request("radd", self, (0,))
        return self._reflected("radd", other)

    def __rsub__(self, other: Any) -> Any:
        return self._reflected("rsub", other)

    # In-place arithmetic is the object's own (``acc += 5`` may change ``acc`` and return it,
    # so every name bound to it sees the change, as in-process), under :meth:`_binary`'s rule.
    def __iadd__(self, other: Any) -> Any:
        return self._binary("iadd", other)

    def __isub__(self, other: Any) -> Any:
        return self._binary("isub", other)

    def __imul__(self, other: Any) -> Any:
        return self._binary("imul", other)

    def __itruediv__(self, other: Any) -> Any:
        return self._binary("itruediv", other)

    def __ifloordiv__(self, other: Any) -> Any:
        return self._binary("ifloordiv", other)

    def __imod__(self, other: Any) -> Any:
        return self._binary("imod", other)

    def __ipow__(self, other: Any) -> Any:
        return self._binary("ipow", other)

    def __iand__(self, other: Any) -> Any:
        return self._binary("iand", other)

    def __ior__(self, other: Any) -> Any:
        return self._binary("ior", other)

    def __ixor__(self, other: Any) -> Any:
        return self._binary("ixor", other)

    def __ilshift__(self, other: Any) -> Any:
        return self._binary("ilshift", other)

    def __irshift__(self, other: Any) -> Any:
        return self._binary("irshift", other)

    def __imatmul__(self, other: Any) -> Any:
        return self._binary("imatmul", other)

    def __rmul__(self, other: Any) -> Any:
        return self._reflected("rmul", other)

    def __rtruediv__(self, other: Any) -> Any:
        return self._reflected("rtruediv", other)

    def __rfloordiv__(self, other: Any) -> Any:
        return self._reflected("rfloordiv", other)

    def __rmod__(self, other: Any) -> Any:
        return self._reflected("rmod", other)

    def __rpow__(self, other: Any) -> Any:
        return self._reflected("rpow", other)

    def __rand__(self, other: Any) -> Any:
        return self._reflected("rand_", other)

    def __ror__(self, other: Any) -> Any:
        return self._reflected("ror_", other)

    def __rxor__(self, other: Any) -> Any:
        return self._reflected("rxor", other)

    def __rlshift__(self, other: Any) -> Any:
        return self._reflected("rlshift", other)

    def __rrshift__(self, other: Any) -> Any:
        return self._reflected("rrshift", other)

    def __rmatmul__(self, other: Any) -> Any:
        return self._reflected("rmatmul", other)

    def __sub__(self, other: Any) -> Any:
        return self._binary("sub", other)

    def __mul__(self, other: Any) -> Any:
        return self._binary("mul", other)

    def __truediv__(self, other: Any) -> Any:
        return self._binary("truediv", other)

    def __floordiv__(self, other: Any) -> Any:
        return self._binary("floordiv", other)

    def __mod__(self, other: Any) -> Any:
        return self._binary("mod", other)

    def __pow__(self, other: Any) -> Any:
        return self._binary("pow", other)

    def __and__(self, other: Any) -> Any:
        return self._binary("and_", other)

    def __or__(self, other: Any) -> Any:
        return self._binary("or_", other)

    def __xor__(self, other: Any) -> Any:
        return self._binary("xor", other)

    def __lshift__(self, other: Any) -> Any:
        return self._binary("lshift", other)

    def __rshift__(self, other: Any) -> Any:
        return self._binary("rshift", other)

    def __matmul__(self, other: Any) -> Any:
        return self._binary("matmul", other)

    def __neg__(self) -> Any:
        return _peer().request("neg", self)

    def __pos__(self) -> Any:
        return _peer().request("pos", self)

    def __abs__(self) -> Any:
        return _peer().request("abs", self)

    def __invert__(self) -> Any:
        return _peer().request("invert", self)

    def __int__(self) -> int:
        return int(_checked(_peer().request("int", self), int, "int()"))

    def __float__(self) -> float:
        return float(_checked(_peer().request("float", self), float, "float()"))

    def __index__(self) -> int:
        return int(_checked(_peer().request("index", self), int, "index()"))

    def __complex__(self) -> complex:
        return complex(_checked(_peer().request("complex", self), complex, "complex()"))

    def __round__(self, ndigits: Any = None) -> Any:
        return _peer().request("round", self, () if ndigits is None else (ndigits,))

    def __floor__(self) -> Any:
        return _peer().request("floor", self)

    def __ceil__(self) -> Any:
        return _peer().request("ceil", self)

    def __trunc__(self) -> Any:
        return _peer().request("trunc", self)


class _FullProxy(_Proxy):
    """A proxy that answers every protocol: calls, iteration, ``len``, indexing, ``in`` and
    context managers (see :func:`_proxy_class` for the ones made to the other side's class's
    measure: a proxy of an object that is not callable is not, as in-process)."""

    __slots__ = ()
    __doc__ = vars(_Proxy)["__doc__"]

    def __call__(self, /, *args: Any, **kwargs: Any) -> Any:
        return _peer().request("call", self, args, **kwargs)

    def __iter__(self) -> Any:
        return _peer().request("iter", self)

    def __next__(self) -> Any:
        peer = _peer()
        if peer.trusted:
            _count_item(peer, self)
        return peer.request("next", self)

    def __len__(self) -> int:
        n = _checked(_peer().request("len", self), int, "len()")
        return int(n)

    def __getitem__(self, key: Any) -> Any:
        return _peer().request("getitem", self, (key,))

    def __setitem__(self, key: Any, value: Any) -> None:
        _peer().request("setitem", self, (key, value))

    def __delitem__(self, key: Any) -> None:
        _peer().request("delitem", self, (key,))

    def __contains__(self, item: Any) -> bool:
        return bool(_checked(_peer().request("contains", self, (item,)), bool, "in"))

    def __enter__(self) -> Any:
        return _peer().request("enter", self)

    def __exit__(self, kind: Any, exc: Any, tb: Any) -> bool:
        return _exit(self, "exit", kind, exc)

    async def __aenter__(self) -> Any:
        # The solution's coroutine runs to its end in its process (see _CoroutineProxy).
        return _peer().request("aenter", self)

    async def __aexit__(self, kind: Any, exc: Any, tb: Any) -> bool:
        return _exit(self, "aexit", kind, exc)


#: Where a value-backed handle keeps its :class:`_Proxy` (in the instance's ``__dict__``: the
#: subclasses of ``int``, ``bytes`` and ``tuple`` cannot have slots).
_HANDLE = "_asyncpool_handle"


def _slots_forwarded(cls: type) -> None:
    """Let ``handle.__slots__`` reach the other side's object (``Point.__slots__ == ("x",
    "y")``; an ``AttributeError`` there when its class has none), not the tuple a proxy class
    keeps of its own slots: :class:`_Proxy`'s becomes a property that asks, and each subclass's
    entry is removed (it would shadow that property). The slots themselves stay."""
    if cls is _Proxy:
        cls.__slots__ = property(  # type: ignore[assignment]
            lambda self: _peer().request("getattr", self, ("__slots__",))
        )
    elif "__slots__" in vars(cls):
        delattr(cls, "__slots__")


#: :class:`_Proxy` and its subclasses named as the other side's classes (:func:`_proxy_class`).
_PROXY_TYPES: set[type] = {_Proxy, _FullProxy}
_slots_forwarded(_Proxy)
_slots_forwarded(_FullProxy)
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
    peer = _PEER
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
    peer = _PEER
    if peer is None:
        return type(self)
    caller = sys._getframe(1).f_code.co_filename
    if caller not in (_CLASS_READERS if peer.trusted else _SOLUTION_CLASS_READERS):
        return type(self)
    return _type_of(self)


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


class _CoroutineProxy(_FullProxy):
    """A handle of a coroutine of the other side (an ``async def`` of its called): a coroutine
    to this side's ``asyncio`` (``asyncio.run(add(1, 2))``, ``await add(1, 2)`` in a coroutine,
    ``asyncio.gather``). Awaited, it runs to its end in its own process (:func:`_run_coroutine`),
    and its value (or exception) is the await's. Awaited from a running event loop, the request
    is made by a thread of its own (a channel: see :meth:`_Peer.channel`) while the loop goes
    on, so coroutines awaited together run at once, as in-process (``gather`` of two 0.1 s
    sleeps takes 0.1 s, a semaphore of the tests' bounds how many run); this side's coroutines
    they await in turn run on this loop (:meth:`_Peer.awaited_on`)."""

    __slots__ = ()

    def __await__(self) -> Any:
        loop = _running_loop()
        if loop is not None:
            future = _await_in_thread(_peer(), self, loop)
            if future is not None:
                return (yield from future)
        # (a generator, as the yield above makes it: the request runs when the loop steps it)
        return _peer().request("await", self)

    def send(self, value: Any) -> Any:
        """A Task's step (``asyncio.run(coroutine)``, ``gather``): the first yields the future
        of the await made by a thread of its own (see :meth:`__await__`), the next (when it is
        done) ends with its outcome."""
        if value is not None:
            raise TypeError("can't send non-None value to a just-started coroutine")
        peer = _peer()
        with peer.state:
            future = peer.stepped.pop(id(self), None)
        if future is not None:
            raise StopIteration(future.result())
        loop = _running_loop()
        if loop is not None:
            future = _await_in_thread(peer, self, loop)
            if future is not None:
                future._asyncio_future_blocking = True
                with peer.state:
                    peer.stepped[id(self)] = future
                return future
        raise StopIteration(peer.request("await", self))

    def __next__(self) -> Any:  # what a Task's step calls (PyIter_Send) on an iterator
        return self.send(None)

    def throw(self, kind: Any, value: Any = None, tb: Any = None) -> Any:
        self._forget()  # (a Task cancelled between its steps: the await's thread runs on)
        raise kind if value is None else value

    def close(self) -> None:
        self._forget()
        _peer().request("getattr", self, ("close",))()

    def _forget(self) -> None:
        """Drop the future a Task's first step left (see :meth:`send`): keyed by this handle's
        id, it must not be taken by a later handle given the same id."""
        peer = _PEER
        if peer is not None:
            with peer.state:
                peer.stepped.pop(id(self), None)


collections.abc.Coroutine.register(_CoroutineProxy)


def _count_item(peer: _Peer, proxy: _Proxy) -> None:
    """Count one more item the tests take from an iterator of the solution (its bound)."""
    n = object.__getattribute__(proxy, "_id")
    taken = peer.items[n] = peer.items.get(n, 0) + 1
    if taken > MAX_ITERATION:
        peer.fail(f"more than {MAX_ITERATION} items from one iterator of the solution")


class _CopiedOnlyByCopy:
    """``__copy__`` of an iterator's handle: ``copy.copy(it)`` (which looks it up on the
    class) still asks the solution for its copy, as in-process, but the handle itself has no
    ``__copy__``, as generators, ``map`` objects and most iterators have none. Else
    ``itertools.tee(it)`` takes the handle for a copyable iterator and asks the solution for
    copies that fail (a generator) or share one underlying iterator (a ``map``), where
    in-process it buffers the items for each of its iterators."""

    def __get__(self, obj: Any, cls: Any = None) -> Any:
        if obj is None:
            return _Proxy.__copy__
        raise AttributeError("__copy__")


class _GeneratorProxy(_FullProxy):
    """A handle of a generator of the solution: a generator to the tests' type checks
    (``isinstance(g, types.GeneratorType)``, ``inspect.isgenerator(g)``,
    ``collections.abc.Generator``), as in-process; its ``send``, ``throw`` and ``close`` are
    the generator's (requests). Its ``__class__`` says ``GeneratorType`` (as a mock's says its
    spec's); ``type(g)`` is still this proxy class."""

    __slots__ = ()
    __copy__ = _CopiedOnlyByCopy()

    @property  # type: ignore[misc]
    def __class__(self) -> Any:
        return types.GeneratorType

    def send(self, value: Any) -> Any:
        """As ``next``, with a value: the end of the generator is the tests' ``StopIteration``
        (with its return value), as in-process (a call's ``StopIteration`` is not one)."""
        peer = _peer()
        _count_item(peer, self)
        return peer.request("next", self, (value,))

    def throw(self, *args: Any) -> Any:
        """The generator's ``throw``. An exception of a built-in class the tests throw in
        (``it.throw(ValueError("x"))``) crosses as its class and arguments, which cross as
        the tests' other values do, and is made again there (an instance would cross as a
        handle: no exception to the generator, a ``TypeError``, where in-process the generator
        catches it)."""
        if len(args) == 1 and isinstance(args[0], BaseException):
            kind = type(args[0])
            if _BUILTIN_TYPES.get(kind.__name__) is kind:
                return _peer().request("throw", self, (kind, args[0].args))
        return _peer().request("getattr", self, ("throw",))(*args)

    def close(self) -> Any:
        return _peer().request("getattr", self, ("close",))()


collections.abc.Generator.register(_GeneratorProxy)


class _AsyncGeneratorProxy(_FullProxy):
    """A handle of an async generator of the solution: ``async for x in ticks(3)`` in the
    tests' coroutine takes its items one request each; each runs to the item in the solution's
    process, on one event loop of its own there that the generator keeps (:func:`_anext`)."""

    __slots__ = ()

    @property  # type: ignore[misc]
    def __class__(self) -> Any:
        return types.AsyncGeneratorType

    def __aiter__(self) -> Any:
        return self

    async def __anext__(self) -> Any:
        peer = _peer()
        _count_item(peer, self)
        try:
            return peer.request("anext", self)
        except StopIteration:
            raise StopAsyncIteration from None


collections.abc.AsyncGenerator.register(_AsyncGeneratorProxy)
for _kind in (_CoroutineProxy, _GeneratorProxy, _AsyncGeneratorProxy):
    _slots_forwarded(_kind)
del _kind
_ASYNC_LOOP: list[Any] = []


def _anext(obj: Any) -> Any:
    """The solution's side of the tests' ``async for`` over one of its async generators: its
    next item, run on this process's one loop for them (not a new loop per item: closing a
    loop finalises the async generators that ran on it); its end as ``StopIteration``."""
    import asyncio

    if not isinstance(obj, types.AsyncGeneratorType):
        raise TypeError(f"'async for' requires an async generator, got {type(obj).__name__}")
    if not _ASYNC_LOOP:
        _ASYNC_LOOP.append(asyncio.new_event_loop())
    try:
        return _ASYNC_LOOP[0].run_until_complete(obj.__anext__())
    except StopAsyncIteration:
        raise StopIteration from None


def _running_loop() -> Any:
    """This thread's running event loop, or None (asyncio not imported: none)."""
    asyncio = sys.modules.get("asyncio")
    return None if asyncio is None else asyncio._get_running_loop()


def _await_in_thread(peer: _Peer, coroutine: Any, loop: Any) -> Any:
    """The future of ``await coroutine`` (the other side's) on ``loop``, made by a thread of
    its own (see :class:`_CoroutineProxy`); None past this process's thread limit (then the
    await is made here, the loop waiting)."""
    future = loop.create_future()

    def settle(outcome: Any, failed: bool) -> None:
        if future.done():
            return
        if failed:
            future.set_exception(outcome)
        else:
            future.set_result(outcome)

    def run() -> None:
        peer.awaited_on(loop, +1)
        try:
            result = peer.request("await", coroutine)
        except BaseException as exc:  # (SolutionBroke too: raised where the loop awaits)
            outcome, failed = exc, True
        else:
            outcome, failed = result, False
        finally:
            peer.awaited_on(loop, -1)
        with contextlib.suppress(RuntimeError):  # (the loop closed meanwhile)
            loop.call_soon_threadsafe(settle, outcome, failed)

    try:
        _Thread(target=run, daemon=True, name="asyncio-await").start()
    except RuntimeError:
        return None
    return future


def _run_coroutine(obj: Any) -> Any:
    """An ``await`` of one side's coroutine by the other: run it to its end, on the event loop
    of this side that awaits the other side's coroutines while that loop goes on (see
    :meth:`_Peer.awaited_on`: ``gather`` of the tests' coroutines by the solution's, the tests'
    semaphore bounding them, as in-process), else on a new event loop (never one of the other
    side's). The solution's, awaited by the tests; or the tests', awaited by the solution (an
    ``async def`` of the tests it was handed): when the judge's thread is inside the tests' own
    loop (``asyncio.run`` of theirs, waiting for the solution), that loop is set aside while
    the new one runs and restored after."""
    import asyncio

    if not asyncio.iscoroutine(obj):
        raise TypeError(f"object {type(obj).__name__} can't be used in 'await' expression")
    peer = _PEER
    shared = None if peer is None else peer.free_loop()
    if shared is not None:
        return asyncio.run_coroutine_threadsafe(obj, shared).result()
    outer = asyncio._get_running_loop()
    if outer is None:
        return asyncio.run(obj)
    loop = asyncio.new_event_loop()
    asyncio._set_running_loop(None)
    try:
        return loop.run_until_complete(obj)
    finally:
        loop.close()
        asyncio._set_running_loop(outer)


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
        return bool(_checked(_peer().request("contains", handle, (item,)), bool, "in"))


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


#: Where the ``id`` of the solution's objects lies, on both sides (see :func:`_handle_id`): above
#: every address of a process (user space ends below 2**57 on every 64-bit platform), so that
#: it never equals the ``id`` of an object of the judge's.
_HANDLE_ID_BASE = 1 << 62
#: What this process adds to the ``id`` of its own objects: :data:`_HANDLE_ID_BASE` in the
#: solution's (:func:`own_ids_above`), nothing in the judge's.
_OWN_ID_BASE = [0]


def own_ids_above() -> None:
    """In the solution's process, before its code runs: its ``id`` of its own objects is moved
    above the judge's addresses, as the judge's ``id`` of their handles is, so that an ``id``
    the solution computes and hands to the tests is the one the tests get of the same object
    (``{id(node): depth}`` from the solution, looked up as ``dd[id(root)]``; helper 45's
    B3)."""
    _OWN_ID_BASE[0] = _HANDLE_ID_BASE


def _handle_id(obj: Any) -> int:
    """``id(obj)`` as in-process, for the code of either side that names ``id``: of this side's
    object, its own ``id`` (moved above the judge's addresses in the solution's process, see
    :func:`own_ids_above`); of a handle, what its owner's is, asked once per handle.

    Why: a handle dropped and made again (a linked list walked node by node, ``p = p.next``) is
    a new object at a new address, and another node's handle may get the address it had, so
    ``id``-keyed maps over the other side's objects collided (LeetCode 138's serializer
    ``index[id(p)]``, a cycle check by ``id``). The owner's ``id`` is that of the object itself:
    the same for as long as it lives, as in-process. Checked as a solution that rewrote its
    side of the wire may answer anything: the judge takes only an ``id`` in the solution's
    range (never one of the tests' objects'), the same for a handle as long as it lives (asked
    once), and never one another live handle has (helper 45's A4: a constant answer made a
    wrong singleton's two objects one)."""
    if type(obj) not in _PROXY_TYPES:
        return id(obj) + _OWN_ID_BASE[0]
    known: int | None = object.__getattribute__(obj, "_idv")
    if known is not None:
        return known
    peer = _peer()
    answer = peer.request("id", obj)
    low, high = (_HANDLE_ID_BASE, 1 << 63) if peer.trusted else (0, _HANDLE_ID_BASE)
    if type(answer) is not int or not low <= answer < high:
        peer.fail("the solution answered id() with what no id can be")
    if not peer.claim_id(object.__getattribute__(obj, "_id"), answer):
        peer.fail("the solution answered id() of two of its objects with one id")
    object.__setattr__(obj, "_idv", answer)
    return int(answer)


_handle_id.__name__ = _handle_id.__qualname__ = "id"


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
