"""The other side's objects on this side: :class:`_Proxy`, a handle whose every use is a request to
the object's owner, and :class:`_FullProxy`, with every protocol. Beside it: its classes made to
the measure of the other side's (:mod:`._proxy_classes`); the handles of functions
(:mod:`._proxy_functions`), of generators, async generators and coroutines
(:mod:`._proxy_coroutines`); the value-backed handles (:mod:`._proxy_backed`); the tests' ``type``
of a handle (:mod:`._tests_type`) and its ``id`` (:mod:`._handle_ids`).

Owns the process's current peer, :data:`_PEER`, which every request of a proxy reads
(:func:`_peer`): set by :mod:`._serve` (the solution's side) and :mod:`._check` (the judge's), read
elsewhere as ``_proxies._PEER``.

Must not: encode or decode (the peer does), nor let a proxy be equal to (or ordered with) a value
of this side: a comparison the other side computes against one is never trusted.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping as _AbcMapping  # bound once: the tests' patches are forwarded
from collections.abc import Set as _AbcSet
from typing import TYPE_CHECKING, Any

from ._bounds import MAX_ITERATION
from ._ops import _SUBTRACTIONS
from ._proxy_backed import _BACKED_CLASSES

if TYPE_CHECKING:
    from ._peer import _Peer


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


def _count_item(peer: _Peer, proxy: _Proxy) -> None:
    """Count one more item the tests take from an iterator of the solution (its bound)."""
    n = object.__getattribute__(proxy, "_id")
    taken = peer.items[n] = peer.items.get(n, 0) + 1
    if taken > MAX_ITERATION:
        peer.fail(f"more than {MAX_ITERATION} items from one iterator of the solution")
