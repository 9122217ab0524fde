"""The decoder of the wire's format of values (see :mod:`._codec`): :class:`_Decoder`, one
message, and :func:`decode`. Strict: exact types only, every length and number checked.

Must not: use ``pickle`` or ``marshal`` (they must never read untrusted bytes).
"""

from __future__ import annotations

import collections
import keyword
from array import array as _array
from math import nan as _MATH_NAN  # bound once: the tests' patches of math are forwarded
from typing import TYPE_CHECKING, Any

from . import _resent
from ._bounds import _SHALLOW, MAX_DEPTH, MAX_ITEMS, CodecError
from ._code_texts import could_be_code, could_be_code_bytes
from ._codec import (
    _ARRAY_CODES,
    _C128,
    _F64,
    _PACK_MIN,
    _U32,
    _deepened,
    _numpy_nan,
    _unpacked_numbers,
)
from ._decoder_types import _StandardDecoding
from ._described import _PLAIN_MAX, _PLAIN_TYPES, MAX_MODULE_NAME, _loaded_module
from ._exceptions import (
    _PASSED_THROUGH,
    _standard_class,
    _TestsText,
)
from ._proxies import _PROXY_TYPES
from ._proxy_backed import _BACKED_CLASS_OF
from ._proxy_classes import _proxy_class
from ._values import (
    _BUILTIN_TYPES,
    _FACTORIES,
    _Counter,
    _defaultdict,
    _deque,
    _OrderedDict,
)

if TYPE_CHECKING:
    from ._peer import _Peer



class _Decoder(_StandardDecoding):
    """One message being decoded: builds only the types listed in the module docstring.

    ``peer`` resolves handles (``None``: none may appear). ``back`` are the containers of the
    request this message answers, by number."""

    __slots__ = ("back", "count", "data", "deep", "peer", "pos", "refs")

    def __init__(self, data: bytes, peer: _Peer | None, back: list[Any] | None = None) -> None:
        self.data = data
        self.pos = 0
        self.count = 0
        self.deep = False  # within a value nested past _SHALLOW (see _deepened)
        self.peer = peer
        self.back = back or []
        self.refs: list[Any] = []

    def take(self, n: int) -> bytes:
        end = self.pos + n
        if n < 0 or end > len(self.data):
            raise CodecError("truncated message")
        chunk = self.data[self.pos : end]
        self.pos = end
        return chunk

    def length(self) -> int:
        n: int = _U32.unpack(self.take(4))[0]
        if n > len(self.data) - self.pos:  # every item takes at least one byte
            raise CodecError("length past the end of the message")
        return n

    def end(self) -> None:
        if self.pos != len(self.data):
            raise CodecError("trailing bytes")

    def number(self) -> int:
        n: int = _U32.unpack(self.take(4))[0]
        return n

    def value(self, depth: int = 0) -> Any:
        self.count += 1
        if self.count > MAX_ITEMS:
            raise CodecError("too many items")
        if depth > _SHALLOW:
            if depth > MAX_DEPTH:
                raise CodecError("nested too deep")
            if not self.deep:
                return _deepened(self, lambda: self.value(depth))
        tag = self.take(1)
        handler = _TAGS.get(tag)
        if handler is None:
            raise CodecError(f"unknown tag {tag!r}")
        return handler(self, depth)

    # scalars

    def _none(self, depth: int) -> Any:
        return None

    def _true(self, depth: int) -> Any:
        return True

    def _ellipsis(self, depth: int) -> Any:
        return Ellipsis

    def _text(self, depth: int) -> Any:
        number = self.number()
        if self.peer is None:
            raise CodecError("a text of the tests where none may be")
        if self.peer.trusted:
            return self.peer.docs.get(number, "a text of the tests")
        text = _TestsText()
        text.number = number
        return text

    def _not_implemented(self, depth: int) -> Any:
        return NotImplemented

    def _false(self, depth: int) -> Any:
        return False

    def _int(self, depth: int) -> Any:
        n = self.length()
        if n == 0:
            raise CodecError("empty int")
        return int.from_bytes(self.take(n), "big", signed=True)

    def _float(self, depth: int) -> Any:
        return _F64.unpack(self.take(8))[0]

    def _nan(self, depth: int) -> Any:
        """``math.nan`` or ``numpy.nan`` of this side (see :func:`_nan_singleton`); a new NaN
        for ``numpy.nan`` when this side has not imported numpy (nothing here can hold its
        ``nan`` to compare with)."""
        code = self.take(1)
        if code == b"\x00":
            return _MATH_NAN
        if code != b"\x01":
            raise CodecError("malformed NaN")
        nan = _numpy_nan()
        return nan if type(nan) is float else float("nan")

    def _complex(self, depth: int) -> Any:
        real, imag = _C128.unpack(self.take(16))
        return complex(real, imag)

    def _str(self, depth: int) -> Any:
        try:
            text = self.take(self.length()).decode("utf-8", "surrogatepass")
        except UnicodeDecodeError as exc:
            raise CodecError("invalid UTF-8") from exc
        peer = self.peer
        if peer is not None and peer.trusted and could_be_code(text):
            peer.note_text(text)
        return text

    def _bytes(self, depth: int) -> Any:
        data = self.take(self.length())
        self._note_bytes(data)
        return data

    def _note_bytes(self, data: bytes) -> None:
        """Bytes of the solution's that could be code, remembered as its texts are (see
        :meth:`_str`): ``eval``, ``exec`` and ``compile`` take bytes, a ``bytearray`` and a
        ``memoryview`` too (``eval(solve())`` of its ``b"__import__('os')..."`` ran in the
        judge)."""
        peer = self.peer
        if peer is not None and peer.trusted and could_be_code_bytes(data):
            peer.note_text(data.decode("utf-8", "replace"))

    def _bytearray(self, depth: int) -> Any:
        data = self.take(self.length())
        self._note_bytes(data)
        out = bytearray(data)
        self.refs.append(out)
        return out

    def _array(self, depth: int) -> Any:
        code = self.take(1).decode("ascii", "replace")
        data = self.take(self.length())
        if code not in _ARRAY_CODES or len(data) % _array(code).itemsize:
            raise CodecError("malformed array")
        out = _array(code)
        out.frombytes(data)
        self.refs.append(out)
        return out

    # containers

    def _items(self, target: Any, add: Any, depth: int) -> Any:
        self.refs.append(target)
        for _ in range(self.length()):
            add(self.value(depth + 1))
        return target

    def _list(self, depth: int) -> Any:
        out: list[Any] = []
        return self._items(out, out.append, depth)

    def _packed(self) -> list[Any]:
        """The items of a packed list or tuple (see :meth:`_Encoder.packed`)."""
        code = self.take(1)
        n = self.number()
        if n < _PACK_MIN:
            raise CodecError("malformed packed items")
        if code in (b"L", b"T"):
            return self._packed_rows(n, code == b"L")
        self.count += n
        if self.count > MAX_ITEMS:
            raise CodecError("too many items")
        data = self.take(self.length())
        if code == b"s":
            try:
                items = data.decode("utf-8", "surrogatepass").split("\0")
            except UnicodeDecodeError as exc:
                raise CodecError("invalid UTF-8") from exc
            if len(items) != n:
                raise CodecError("malformed packed items")
            peer = self.peer
            if peer is not None and peer.trusted:
                for text in items:
                    if could_be_code(text):
                        peer.note_text(text)
            return items
        return _unpacked_numbers(code, data, n)

    def _packed_rows(self, n: int, lists: bool) -> list[Any]:
        """``n`` packed rows (see :meth:`_Encoder.packed_rows`); lists are numbered, in
        order, after the container that holds them (numbered before its items are read)."""
        lengths = _array("I")
        lengths.frombytes(self.take(4 * n))
        total = sum(lengths)
        self.count += n + total
        if self.count > MAX_ITEMS:
            raise CodecError("too many items")
        code = self.take(1)
        flat = _unpacked_numbers(code, self.take(self.length()), total, "rows")
        rows: list[Any] = []
        start = 0
        for length in lengths:
            end = start + length
            rows.append(flat[start:end] if lists else tuple(flat[start:end]))
            start = end
        if lists:
            self.refs.extend(rows)
        return rows

    def _packed_list(self, depth: int) -> Any:
        out: list[Any] = []
        self.refs.append(out)
        out[:] = self._packed()
        return out

    def _into_slot(self, depth: int) -> Any:
        """A list of the judge's request, kept in a slot of this side (see :mod:`._resent`)."""
        peer = self.peer
        if peer is None or peer.trusted:
            raise CodecError("a slot where none may be")
        slot = self.number()
        if slot >= _resent.SLOTS or self.take(1) != b"]":
            raise CodecError("malformed slot")
        if self.data[self.pos : self.pos + 1] not in (b"q", b"d", b"s"):
            raise CodecError("malformed slot")
        out = self._packed_list(depth)
        peer.list_slots[slot] = out
        return out

    def _slot(self, depth: int) -> Any:
        """The list a slot of this side holds, as the judge's request names it."""
        peer = self.peer
        if peer is None or peer.trusted:
            raise CodecError("a slot where none may be")
        slot = self.number()
        out = peer.list_slots[slot] if slot < _resent.SLOTS else None
        if out is None:
            raise CodecError("an empty slot")
        self.refs.append(out)
        return out

    def _packed_tuple(self, depth: int) -> Any:
        return tuple(self._packed())

    def _set(self, depth: int) -> Any:
        out: set[Any] = set()
        try:
            return self._items(out, out.add, depth)
        except TypeError as exc:
            raise CodecError("unhashable set member") from exc

    def _deque(self, depth: int) -> Any:
        maxlen = self.value(depth + 1)
        if maxlen is not None and (type(maxlen) is not int or maxlen < 0):
            raise CodecError("bad deque maxlen")
        out: collections.deque[Any] = _deque(maxlen=maxlen)
        return self._items(out, out.append, depth)

    def _tuple(self, depth: int) -> Any:
        return tuple([self.value(depth + 1) for _ in range(self.length())])

    def _frozenset(self, depth: int) -> Any:
        items = [self.value(depth + 1) for _ in range(self.length())]
        try:
            return frozenset(items)
        except TypeError as exc:
            raise CodecError("unhashable set member") from exc

    def _pairs(self, target: Any, depth: int) -> Any:
        self.refs.append(target)
        for _ in range(self.length()):
            key = self.value(depth + 1)
            item = self.value(depth + 1)
            try:
                dict.__setitem__(target, key, item)
            except TypeError as exc:
                raise CodecError("unhashable dict key") from exc
        return target

    def _dict(self, depth: int) -> Any:
        return self._pairs({}, depth)

    def _counter(self, depth: int) -> Any:
        return self._pairs(_Counter(), depth)

    def _ordered(self, depth: int) -> Any:
        out: collections.OrderedDict[Any, Any] = _OrderedDict()
        self.refs.append(out)
        for _ in range(self.length()):
            key = self.value(depth + 1)
            item = self.value(depth + 1)
            try:
                out[key] = item
            except TypeError as exc:
                raise CodecError("unhashable dict key") from exc
        return out

    def _defaultdict(self, depth: int) -> Any:
        (code,) = self.take(1)
        if code >= len(_FACTORIES):
            raise CodecError("bad defaultdict factory")
        return self._pairs(_defaultdict(_FACTORIES[code]), depth)

    def _view_items(self, depth: int) -> tuple[Any, ...]:
        items = self.value(depth + 1)
        if type(items) is not tuple:
            raise CodecError("bad dict view")
        return items

    def _keys(self, depth: int) -> Any:
        try:
            return dict.fromkeys(self._view_items(depth)).keys()
        except TypeError as exc:
            raise CodecError("unhashable dict key") from exc

    def _items_view(self, depth: int) -> Any:
        out: dict[Any, Any] = {}
        for pair in self._view_items(depth):
            if type(pair) is not tuple or len(pair) != 2:
                raise CodecError("bad dict items view")
            try:
                dict.__setitem__(out, pair[0], pair[1])
            except TypeError as exc:
                raise CodecError("unhashable dict key") from exc
        return out.items()

    def _values(self, depth: int) -> Any:
        return dict(enumerate(self._view_items(depth))).values()

    def _repeat(self, depth: int) -> Any:
        n = self.number()
        if n >= len(self.refs):
            raise CodecError("reference to no container")
        return self.refs[n]

    def _back(self, depth: int) -> Any:
        n = self.number()
        if n >= len(self.back):
            raise CodecError("reference to no container of the request")
        return self.back[n]

    # handles

    def _shared(self, depth: int) -> Any:
        if self.peer is None or self.peer.trusted:
            raise CodecError("a shared object where none may be")
        n = self.number()
        return self.peer.shared(n, self.value(depth + 1))

    def _module(self, depth: int) -> Any:
        """A module by name (see :func:`._described._module_name`): this side's own, else the
        handle that follows it."""
        n = self.length()
        if n > MAX_MODULE_NAME:
            raise CodecError("a module's name too long")
        named = self.take(n).decode("utf-8", "replace")
        handle = self.value(depth + 1)
        if type(handle) not in _PROXY_TYPES:
            raise CodecError("a module's name without its handle")
        found = _loaded_module(named)
        return handle if found is None else found

    def _standard(self, depth: int) -> Any:
        named = self.take(self.length()).decode("utf-8", "replace")
        handle = self.value(depth + 1)
        return _standard_class(named, handle)

    def _theirs(self, depth: int) -> Any:
        if self.peer is None:
            raise CodecError("a handle where none may be")
        n = self.number()
        name = self.take(self.length())
        return self.peer.proxy(n, _proxy_class(name))

    def _theirs_plain(self, depth: int) -> Any:
        """A handle of the other side's object with its hash and plain attributes (see
        :func:`._described._handle_extras`)."""
        peer = self.peer
        if peer is None:
            raise CodecError("plain attributes where none may be")
        proxy = self._theirs(depth)
        extras = self.value(depth + 1)
        if type(extras) is not tuple or len(extras) != 3:
            raise CodecError("malformed plain attributes")
        known, plain, finalizes = extras
        if (
            (known is not None and type(known) is not int) or type(finalizes) is not bool
            or (known is None and not plain and not finalizes)
        ):  # fmt: skip
            raise CodecError("malformed plain attributes")
        if type(plain) is not tuple or len(plain) > _PLAIN_MAX or not all(
            type(pair) is tuple and len(pair) == 2 and type(pair[0]) is str
            and type(pair[1]) in _PLAIN_TYPES
            for pair in plain
        ):  # fmt: skip
            raise CodecError("malformed plain attributes")
        if known is not None:
            object.__setattr__(proxy, "_hash", known)
        if plain:
            object.__setattr__(proxy, "_seen", (peer.epoch, dict(plain)))
        if finalizes:
            object.__setattr__(proxy, "_fin", True)
        return proxy

    def _mine(self, depth: int) -> Any:
        if self.peer is None:
            raise CodecError("a handle where none may be")
        return self.peer.own(self.number())

    def _builtin_type(self, depth: int) -> Any:
        found = _BUILTIN_TYPES.get(self.take(self.length()).decode("ascii", "replace"))
        if found is None:
            raise CodecError("not a built-in class")
        return found

    def _exception(self, depth: int) -> Any:
        if self.peer is None or not self.peer.trusted:
            raise CodecError("an exception object where none may be")
        spec = self.value(depth + 1)
        if (
            type(spec) is not tuple
            or len(spec) != 2
            or type(spec[0]) is not str
            or spec[0] not in _PASSED_THROUGH
            or type(spec[1]) is not tuple
            or len(spec[1]) > 64
        ):
            raise CodecError("bad exception")
        try:
            return _PASSED_THROUGH[spec[0]](*spec[1])
        except Exception as exc:  # its constructor refused those arguments
            raise CodecError(f"bad exception ({type(exc).__name__})") from None

    def _exception_class(self, depth: int) -> Any:
        if self.peer is None or not self.peer.trusted:
            raise CodecError("an exception class where none may be")
        n = self.number()
        spec = self.value(depth + 1)
        if (
            type(spec) is not tuple
            or len(spec) != 3
            or type(spec[0]) is not str
            or not spec[0].isidentifier()
            or keyword.iskeyword(spec[0])
            or type(spec[1]) is not str
            or spec[1] not in _PASSED_THROUGH
            or type(spec[2]) is not tuple
            or not all(
                type(b) is not tuple or (len(b) == 2 and all(type(p) is str for p in b))
                for b in spec[2]
            )
        ):
            raise CodecError("bad exception class")
        return self.peer.mirror(n, *spec)

    def _backed(self, depth: int) -> Any:
        if self.peer is None:
            raise CodecError("a handle where none may be")
        n = self.number()
        base = self.value(depth + 1)
        cls = _BACKED_CLASS_OF.get(type(base))
        if cls is None:
            raise CodecError("a value-backed handle without a base value")
        return self.peer.backed(n, base, cls)


_TAGS: dict[bytes, Any] = {
    b"N": _Decoder._none, b"T": _Decoder._true, b"F": _Decoder._false, b"i": _Decoder._int,
    b"f": _Decoder._float, b"c": _Decoder._complex, b"s": _Decoder._str, b"b": _Decoder._bytes,
    b"~": _Decoder._nan,
    b"B": _Decoder._bytearray, b"l": _Decoder._list, b"S": _Decoder._set, b"Q": _Decoder._deque,
    b"t": _Decoder._tuple, b"z": _Decoder._frozenset, b"d": _Decoder._dict,
    b"C": _Decoder._counter, b"O": _Decoder._ordered, b"D": _Decoder._defaultdict,
    b"@": _Decoder._repeat, b"a": _Decoder._back, b"r": _Decoder._fraction,
    b"m": _Decoder._decimal, b"g": _Decoder._range, b"x": _Decoder._slice,
    b"W": _Decoder._datetime, b"Y": _Decoder._datetime, b"H": _Decoder._datetime,
    b"V": _Decoder._datetime, b"n": _Decoder._ndarray, b"k": _Decoder._scalar,
    b"h": _Decoder._theirs, b"+": _Decoder._theirs_plain, b"y": _Decoder._mine,
    b"u": _Decoder._namedtuple,
    b"K": _Decoder._keys, b"J": _Decoder._items_view, b"L": _Decoder._values,
    b"v": _Decoder._backed, b"e": _Decoder._builtin_type, b"A": _Decoder._array,
    b"M": _Decoder._chainmap, b"G": _Decoder._namespace, b"U": _Decoder._uuid,
    b"P": _Decoder._path, b"w": _Decoder._memoryview, b"E": _Decoder._exception_class,
    b"Z": _Decoder._tzinfo, b"I": _Decoder._pattern, b"X": _Decoder._generic_alias,
    b"p": _Decoder._frame, b"q": _Decoder._pandas, b"o": _Decoder._shared,
    b"R": _Decoder._array_container, b"j": _Decoder._numpy_dtype, b".": _Decoder._ellipsis,
    b"!": _Decoder._not_implemented, b"%": _Decoder._normal_dist,
    b"]": _Decoder._packed_list, b")": _Decoder._packed_tuple, b"[": _Decoder._into_slot,
    b"=": _Decoder._slot, b"#": _Decoder._typing,
    b"&": _Decoder._exception, b"^": _Decoder._standard, b"$": _Decoder._text,
    b"*": _Decoder._module,
}  # fmt: skip


def decode(data: bytes) -> Any:
    """The value :func:`encode` made; :class:`CodecError` for anything else."""
    dec = _Decoder(data, None)
    value = dec.value()
    dec.end()
    return value
