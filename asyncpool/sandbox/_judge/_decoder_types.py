"""The standard types of the wire's format of values, as the decoder reads them
(:class:`_StandardDecoding`, a base of :class:`._decoder._Decoder`): the standard library's
types that cross as values, numpy's arrays, scalars and dtypes, pandas' values. Each is rebuilt
from its parts by its own constructor, checked.

Must not: unpickle anything, nor build a type not listed in :mod:`._codec`.
"""

from __future__ import annotations

import decimal
import importlib
import types
from datetime import date as _Date  # bound once: the tests' patches of datetime are forwarded
from datetime import datetime as _DateTime
from datetime import time as _Time
from datetime import timedelta as _TimeDelta
from re import compile as _re_compile
from re import error as _re_error
from typing import TYPE_CHECKING, Any

from ._annotations import _typing_value
from ._bounds import CodecError
from ._pandas import _pandas_value
from ._values import (
    _BUILTIN_TYPE_NAMES,
    _CHAIN_MAPS,
    _PATHS,
    _PATTERN_FLAGS,
    _UUID,
    _allowed_dtype,
    _ChainMap,
    _Decimal,
    _Fraction,
    _import_numpy,
    _namedtuple_class,
    _Namespace,
    _plain_name,
    _timezone,
)

if TYPE_CHECKING:
    from ._peer import _Peer


class _StandardDecoding:
    """The decoder's readers of standard types (see the module docstring)."""

    __slots__ = ()

    if TYPE_CHECKING:  # (the decoder's, see _decoder._Decoder)
        data: bytes
        pos: int
        peer: _Peer | None
        refs: list[Any]

        def take(self, n: int) -> bytes: ...
        def length(self) -> int: ...
        def value(self, depth: int = 0) -> Any: ...
        def _note_bytes(self, data: bytes) -> None: ...

    def _namespace(self, depth: int) -> Any:
        out = _Namespace()
        self.refs.append(out)
        attrs = vars(out)
        for _ in range(self.length()):
            name = self.value(depth + 1)
            if type(name) is not str:
                raise CodecError("bad SimpleNamespace name")
            attrs[name] = self.value(depth + 1)
        return out

    def _memoryview(self, depth: int) -> Any:
        (code,) = self.take(1)
        if code not in b"Bbc":
            raise CodecError("bad memoryview format")
        data = bytes(self.take(self.length()))
        self._note_bytes(data)
        view = memoryview(data)
        return view if code == ord("B") else view.cast("b" if code == ord("b") else "c")

    def _uuid(self, depth: int) -> Any:
        n = self.value(depth + 1)
        if type(n) is not int or not 0 <= n < 1 << 128:
            raise CodecError("bad UUID")
        return _UUID(int=n)

    def _normal_dist(self, depth: int) -> Any:
        params = self.value(depth + 1)
        if (
            type(params) is not tuple or len(params) != 2
            or not all(type(p) is float for p in params) or not params[1] >= 0
        ):  # fmt: skip
            raise CodecError("bad NormalDist")
        return importlib.import_module("statistics").NormalDist(*params)

    def _path(self, depth: int) -> Any:
        (code,) = self.take(1)
        text = self.value(depth + 1)
        if code >= len(_PATHS) or type(text) is not str:
            raise CodecError("bad path")
        return _PATHS[code](text)

    def _chainmap(self, depth: int) -> Any:
        maps = self.value(depth + 1)
        if type(maps) is not tuple or not maps or not all(type(m) in _CHAIN_MAPS for m in maps):
            raise CodecError("bad ChainMap")
        return _ChainMap(*maps)

    def _fraction(self, depth: int) -> Any:
        num, den = self.value(depth + 1), self.value(depth + 1)
        if type(num) is not int or type(den) is not int or den <= 0:
            raise CodecError("bad Fraction")
        return _Fraction(num, den)

    def _decimal(self, depth: int) -> Any:
        data = self.take(self.length())
        if len(data) > 100_000 or not data.isascii():
            raise CodecError("bad Decimal")
        try:
            with decimal.localcontext() as ctx:
                ctx.traps[decimal.InvalidOperation] = True
                return _Decimal(data.decode("ascii"))
        except (decimal.InvalidOperation, ValueError) as exc:
            raise CodecError("bad Decimal") from exc

    def _range(self, depth: int) -> Any:
        parts = [self.value(depth + 1) for _ in range(3)]
        if not all(type(p) is int for p in parts) or parts[2] == 0:
            raise CodecError("bad range")
        return range(*parts)

    def _slice(self, depth: int) -> Any:
        parts = [self.value(depth + 1) for _ in range(3)]
        return slice(*parts)

    def _datetime(self, depth: int) -> Any:
        tag = self.data[self.pos - 1 : self.pos]
        fields = self.value(depth + 1)
        if type(fields) is not tuple:
            raise CodecError("bad date/time")
        try:
            if tag == b"V":
                if len(fields) != 3 or not all(type(f) is int for f in fields):
                    raise CodecError("bad timedelta")
                return _TimeDelta(fields[0], fields[1], fields[2])
            if tag == b"Y":
                if len(fields) != 3 or not all(type(f) is int for f in fields):
                    raise CodecError("bad date")
                return _Date(*fields)
            size = 6 if tag == b"H" else 9
            if len(fields) != size or not all(type(f) is int for f in fields[:-1]):
                raise CodecError("bad date/time")
            if tag == b"H" and type(fields[-1]) is str:
                raise CodecError("a time with a zoneinfo zone")
            tz = _timezone(fields[-1])
            *parts, fold = fields[:-1]
            if fold not in (0, 1):
                raise CodecError("bad fold")
            cls: Any = _Time if tag == b"H" else _DateTime
            return cls(*parts, tzinfo=tz, fold=fold)
        except (ValueError, OverflowError, TypeError) as exc:
            if isinstance(exc, CodecError):
                raise
            raise CodecError("bad date/time") from exc

    def _tzinfo(self, depth: int) -> Any:
        tz = _timezone(self.value(depth + 1))
        if tz is None:
            raise CodecError("bad time zone")
        return tz

    def _pattern(self, depth: int) -> Any:
        spec = self.value(depth + 1)
        if (
            type(spec) is not tuple
            or len(spec) != 2
            or type(spec[0]) not in (str, bytes)
            or type(spec[1]) is not int
            or spec[1] & ~_PATTERN_FLAGS
        ):
            raise CodecError("bad regular expression")
        try:
            return _re_compile(spec[0], spec[1])
        except (_re_error, ValueError, TypeError, OverflowError, RecursionError) as exc:
            raise CodecError("bad regular expression") from exc

    def _generic_alias(self, depth: int) -> Any:
        spec = self.value(depth + 1)
        if (
            type(spec) is not tuple
            or len(spec) != 2
            or id(spec[0]) not in _BUILTIN_TYPE_NAMES
            or type(spec[1]) is not tuple
        ):
            raise CodecError("bad generic alias")
        return types.GenericAlias(spec[0], spec[1])

    def _typing(self, depth: int) -> Any:
        return _typing_value(self.value(depth + 1))

    def _namedtuple(self, depth: int) -> Any:
        spec = self.value(depth + 1)
        if type(spec) is not tuple or len(spec) != 3:
            raise CodecError("bad named tuple")
        name, fields, values = spec
        if (
            type(name) is not str
            or type(fields) is not tuple
            or type(values) is not tuple
            or len(fields) != len(values)
            or len(fields) > 1000
            or not all(type(f) is str and _plain_name(f) for f in (name, *fields))
        ):
            raise CodecError("bad named tuple")
        # A value of a class this side sent one of comes back as that class (the tests'
        # ``Point``: ``p._replace(x=1)``, ``sorted(points)``, ``type(p)(1, 2)`` are theirs
        # in-process), made by ``tuple.__new__``: no code of the class runs. A class of the
        # same name and fields the other side made is taken for it (as a value, it is equal).
        own = self.peer.namedtuples.get((name, fields)) if self.peer is not None else None
        if own is not None:
            return tuple.__new__(own, values)
        return _namedtuple_class(name, fields)._make(values)

    # numpy

    def _dtype(self) -> Any:
        name = self.take(self.length())
        _import_numpy()
        dtype = _allowed_dtype(name.decode("ascii", "replace"))
        if dtype is None:
            raise CodecError("numpy dtype not allowed")
        return dtype

    def _raw(self, dtype: Any, count: int) -> bytes:
        data = self.take(self.length())
        if len(data) != count * dtype.itemsize:
            raise CodecError("numpy data of the wrong size")
        if dtype.kind == "b" and data.strip(b"\0\1"):
            raise CodecError("numpy bool that is not 0 or 1")
        if dtype.kind == "U":
            try:  # numpy takes any 32-bit units; str() of one that is no code point raises
                data.decode("utf-32-be" if dtype.str[0] == ">" else "utf-32-le")
            except UnicodeDecodeError:
                raise CodecError("numpy text that is not code points") from None
        return data

    def _ndarray(self, depth: int) -> Any:
        np = _import_numpy()
        dtype = self._dtype()
        shape = self.value(depth + 1)
        order = "C"
        if type(shape) is tuple and len(shape) == 2 and shape[1] is True:
            shape, order = shape[0], "F"
        if (
            type(shape) is not tuple
            or len(shape) > 32
            or not all(type(d) is int and 0 <= d < 1 << 62 for d in shape)
        ):
            raise CodecError("bad numpy shape")
        count = 1
        for d in shape:
            count *= d
        data = self._raw(dtype, count)
        return np.frombuffer(data, dtype=dtype).reshape(shape, order=order).copy(order=order)

    def _array_container(self, depth: int) -> Any:
        slot = len(self.refs)  # numbered before its shape, as the encoder numbers it
        self.refs.append(None)
        self.refs[slot] = out = self._ndarray(depth)
        return out

    def _numpy_dtype(self, depth: int) -> Any:
        name = self.take(self.length())
        np = _import_numpy()
        if name == b"|O":
            return np.dtype(object)
        dtype = _allowed_dtype(name.decode("ascii", "replace"))
        if dtype is None:
            raise CodecError("numpy dtype not allowed")
        return dtype

    def _scalar(self, depth: int) -> Any:
        np = _import_numpy()
        dtype = self._dtype()
        data = self._raw(dtype, 1)
        return np.frombuffer(data, dtype=dtype)[0]

    # pandas

    def _pandas(self, depth: int, frame: bool = False) -> Any:
        spec = self.value(depth + 1)
        if (type(spec) is tuple and spec[:1] in (("F",), ("S",))) is not frame:
            raise CodecError("malformed pandas value")
        try:
            return _pandas_value(spec, 0)
        except CodecError:
            raise
        except Exception as exc:  # pandas refused the parts (lengths, a level, a freq)
            raise CodecError(f"malformed pandas value ({type(exc).__name__})") from None

    def _frame(self, depth: int) -> Any:
        slot = len(self.refs)  # numbered before its contents, as the encoder numbers it
        self.refs.append(None)
        self.refs[slot] = out = self._pandas(depth, frame=True)
        return out
