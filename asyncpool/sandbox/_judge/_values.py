"""The types that cross the wire as values, as both sides check them.

Owns: the tables of the standard types rebuilt as values (:data:`_MUTABLE`, :data:`_BUILTIN_TYPES`,
:data:`_VIEW_TAGS`, the path classes, ``defaultdict``'s factories), the bases of value-backed
handles (:data:`_BACKED_BASES`), numpy's allowed dtypes (:func:`_allowed_dtype`), named tuples,
time zones and regular expressions as they cross, and the classes a receiver makes once
(:func:`_made_once`, :func:`_loaded_class`).

Must not: encode or decode a message (:mod:`._codec` does), nor import numpy unless a value needs
it (:func:`_import_numpy`).
"""

from __future__ import annotations

import builtins
import collections
import decimal
import fractions
import importlib
import keyword
import os
import pathlib
import sys
import types
import uuid
import zoneinfo
from collections.abc import Callable
from datetime import date as _Date  # bound once: the tests' patches of datetime are forwarded
from datetime import datetime as _DateTime
from datetime import time as _Time
from datetime import timedelta as _TimeDelta
from datetime import timezone as _TimeZone
from datetime import tzinfo as _TzInfo
from re import RegexFlag as _RegexFlag
from re import compile as _re_compile
from typing import Any

from ._bounds import CodecError

_Counter = collections.Counter
_OrderedDict = collections.OrderedDict
_defaultdict = collections.defaultdict
_deque = collections.deque
_ChainMap = collections.ChainMap
#: ``types.SimpleNamespace``: a mutable container of its attributes (string names only).
_Namespace = types.SimpleNamespace
_UUID = uuid.UUID
#: Path classes whose objects cross as values (class code, then the path's string).
_PATHS: tuple[type, ...] = (pathlib.PurePosixPath, pathlib.PureWindowsPath, pathlib.PosixPath)
_PATH_CODE = {cls: i for i, cls in enumerate(_PATHS)}
#: The mappings a ``ChainMap`` may chain to cross as a value (a tuple of them, rebuilt as a new
#: ``ChainMap`` of the receiver's; each is a mutable container of the message as any other).
_CHAIN_MAPS = frozenset({dict, _Counter, _OrderedDict, _defaultdict})
_Fraction = fractions.Fraction
_Decimal = decimal.Decimal

#: The ``default_factory`` values a ``defaultdict`` may have to cross as a value (by code).
_FACTORIES: tuple[Any, ...] = (
    None, int, float, complex, str, bytes, list, tuple, dict, set, frozenset, bool,
)  # fmt: skip
_FACTORY_CODE = {id(f): i for i, f in enumerate(_FACTORIES)}

#: numpy dtypes (by name) whose arrays and scalars cross as values: fixed-size numbers and bool.
_NUMPY_DTYPES = (
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64", "complex64", "complex128",
    *(f"{kind}64[{unit}]" for kind in ("datetime", "timedelta")
      for unit in ("Y", "M", "W", "D", "h", "m", "s", "ms", "us", "ns")),
)  # fmt: skip

#: The built-in classes (``int``, ``list``, ``ValueError``...) by name: one crossing is the
#: receiver's own class of that name (``return int`` then ``is int`` holds; a test's ``int``
#: passed to the solution is the solution's ``int``, called there).
_BUILTIN_TYPES: dict[str, type] = {
    name: obj for name, obj in vars(builtins).items()
    if isinstance(obj, type) and not name.startswith("_")
}  # fmt: skip
_BUILTIN_TYPE_NAMES = {id(cls): name.encode("ascii") for name, cls in _BUILTIN_TYPES.items()}

#: A name no namespace holds (``dict.get``'s default where None is a value).
_UNSET = object()

#: Mutable containers: given a number in each message (for aliasing, cycles and write-back).
_MUTABLE = frozenset(
    {list, dict, set, bytearray, _Counter, _OrderedDict, _defaultdict, _deque, _Namespace}
)

#: ``dict`` views cross as values (their items, rebuilt as a view of a new dict of the
#: receiver's): ``d.keys() == {1, 3}`` and ``d.items() & other`` work as in-process; a view no
#: longer follows the sender's dict after it crossed.
_VIEW_TAGS: dict[type, bytes] = {
    type({}.keys()): b"K", type({}.items()): b"J", type({}.values()): b"L",
}  # fmt: skip

#: Built-in types whose *subclasses'* instances (an ``IntEnum`` member, a ``str`` subclass, a
#: ``typing.NamedTuple`` with methods, ``class Path(list)``, a ``defaultdict`` of a lambda)
#: cross as **value-backed handles**: the base value (an exact ``int``, ``str``, ``tuple``,
#: ``list``, ``dict``...) plus a handle. The receiver's object is an instance of its own
#: subclass of that base type (:class:`_BackedInt`...): it compares, hashes, orders and
#: computes as the base value (the sender's ``__eq__`` is never asked, so a subclass whose
#: ``__eq__`` says yes to everything gains nothing: its value is what it is), and attribute
#: reads the base type does not have (``.name``, a field, a method of the class) are requests
#: on the handle. A list, dict, set or bytearray one is kept in step with the sender's object
#: both ways (:meth:`._peer._Peer.backed_changes`); ``defaultdict``'s factory does not cross.
#: ``bool`` has no subclasses.
_BASE_COPIES: tuple[tuple[type, Any], ...] = (
    (int, int.__index__), (float, float.__float__), (complex, complex.__pos__),
    (str, str.__str__), (bytes, lambda v: bytes.__add__(b"", v)),
    (tuple, lambda v: tuple.__getitem__(v, slice(None))), (list, list.copy), (dict, dict.copy),
    (set, set.copy), (frozenset, frozenset.copy), (bytearray, bytearray.copy),
)  # fmt: skip
_BACKED_BASES: tuple[type, ...] = tuple(base for base, _ in _BASE_COPIES)


#: ``collections``' wrapper classes, each with the exact type its ``data`` holds.
_WRAPPERS: tuple[tuple[type, type], ...] = (
    (collections.UserDict, dict), (collections.UserList, list), (collections.UserString, str),
)  # fmt: skip


def _wrapped_data(value: Any) -> Any:
    """The solution's side: a copy of the ``data`` of an instance of a ``UserDict``,
    ``UserList`` or ``UserString`` (or a subclass) when it is of the exact type the wrapper
    holds, else None. Such an object then crosses as a value-backed handle of that value (see
    :data:`_BASE_COPIES`): in-process those classes compare as their data (``UserDict`` through
    ``Mapping.__eq__``, the others through their own), so ``registry == {"a": 0}`` holds; its
    methods stay requests."""
    for wrapper, exact in _WRAPPERS:
        if isinstance(value, wrapper):
            try:
                data = vars(value).get("data")
            except TypeError:  # no __dict__
                return None
            return _base_value(data) if type(data) is exact else None
    return None


def _normal_dist() -> type | None:
    """``statistics.NormalDist`` when ``statistics`` is loaded here (a value of it can only
    exist then), else None."""
    module = sys.modules.get("statistics")
    found = None if module is None else vars(module).get("NormalDist")
    return found if isinstance(found, type) else None


def _base_value(value: Any) -> Any:
    """The exact base-type value of an instance of a subclass of one of :data:`_BACKED_BASES`,
    made by the base type's own method (a subclass's overrides are not called)."""
    for base, copy in _BASE_COPIES:
        if isinstance(value, base):
            return copy(value)
    raise CodecError("not a value-backed type")


def _numpy_dtypes() -> dict[str, Any]:
    """The allowed dtypes of the numpy loaded here, by their ``dtype.str`` ({} without numpy)."""
    np = sys.modules.get("numpy")
    if np is None:
        return {}
    cached = _NP_CACHE.get(id(np))
    if cached is None:
        cached = {np.dtype(n).str: np.dtype(n) for n in _NUMPY_DTYPES}
        _NP_CACHE[id(np)] = cached
    return cached


_NP_CACHE: dict[int, dict[str, Any]] = {}

#: The fixed-width text and bytes dtypes (``np.array(["ab", "c"])`` is ``<U2``), by their
#: ``dtype.str``: of any width from 1 (numpy cannot rebuild width 0 from bytes) to a million.
_NUMPY_TEXT = _re_compile(r"(?:[<>]U|\|S)[1-9][0-9]{0,5}")


def _allowed_dtype(name: str) -> Any:
    """The numpy dtype ``name`` (a ``dtype.str``) if its values may cross, else None: one of
    :data:`_NUMPY_DTYPES` or a fixed-width text or bytes dtype (:data:`_NUMPY_TEXT`)."""
    found = _numpy_dtypes().get(name)
    if found is None and _NUMPY_TEXT.fullmatch(name):
        found = sys.modules["numpy"].dtype(name)
    return found


def _import_numpy() -> Any:
    """numpy, imported in this process on first need (the judge only when a value needs it),
    with its thread pools at one thread: they would count against the process limits."""
    np = sys.modules.get("numpy")
    if np is None:
        for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ.setdefault(var, "1")
        try:
            np = importlib.import_module("numpy")
        except ImportError as exc:
            raise CodecError("a numpy value, and numpy cannot be imported here") from exc
    return np


#: What ``collections.namedtuple`` (or ``typing.NamedTuple``) puts in a class of its own.
_NAMEDTUPLE_ATTRS = frozenset(
    {
        "__doc__", "__slots__", "_fields", "_field_defaults", "__new__", "_make", "_replace",
        "__repr__", "_asdict", "__getnewargs__", "__match_args__", "__module__", "__qualname__",
        "__annotations__", "__orig_bases__", "__dict__", "__weakref__",
    }
)  # fmt: skip


def _plain_namedtuple(kind: type) -> bool:
    """Whether ``kind`` is a named tuple class with nothing of its own but its fields (no
    methods, no ``__eq__``): its values then cross as named tuples the receiver builds."""
    fields = getattr(kind, "_fields", None)
    return (
        kind.__bases__ == (tuple,)
        and type(fields) is tuple
        and all(type(f) is str for f in fields)
        and set(vars(kind)) <= _NAMEDTUPLE_ATTRS | set(fields)
    )


_DATETIME_TAGS: dict[type, bytes] = {
    _DateTime: b"W",
    _Date: b"Y",
    _Time: b"H",
    _TimeDelta: b"V",
}


def _mutable_value(value: Any, kind: type) -> bool:
    """Whether ``value``, of the :data:`_MUTABLE` type ``kind``, crosses as a value: a
    ``defaultdict`` only of a built-in factory, a ``SimpleNamespace`` only with string names."""
    if kind is _defaultdict:
        return id(value.default_factory) in _FACTORY_CODE
    if kind is _Namespace:
        return all(type(k) is str for k in vars(value))
    return True


def _chainable(mapping: Any) -> bool:
    """Whether ``mapping`` crosses as a value a ``ChainMap`` may chain."""
    kind = type(mapping)
    return kind in _CHAIN_MAPS and _mutable_value(mapping, kind)


def _fixed_tz(value: Any) -> bool:
    """Whether a date/time value's time zone (if any) is a ``datetime.timezone`` (a fixed
    offset, rebuilt exactly) or, on a ``datetime``, a ``zoneinfo.ZoneInfo`` of a plain key
    (rebuilt as the receiver's ``ZoneInfo`` of that key, from the system's time zone data);
    any other ``tzinfo`` is code, so the value crosses as a handle."""
    tz = getattr(value, "tzinfo", None)
    return tz is None or (
        _plain_tz(tz) and (type(tz) is not zoneinfo.ZoneInfo or type(value) is _DateTime)
    )


def _plain_tz(tz: Any) -> bool:
    """Whether a time zone crosses (see :func:`_tz_spec`): a ``datetime.timezone``, or a
    ``zoneinfo.ZoneInfo`` of a plain key."""
    return type(tz) is _TimeZone or (
        type(tz) is zoneinfo.ZoneInfo and _zone_key(tz.key) is not None
    )


def _zone_key(key: Any) -> str | None:
    """``key`` if it is a plain IANA key (``Europe/Paris``, ``UTC``), else ``None``: never a
    path (no ``..``, no leading ``/``), so the receiver opens only its time zone files."""
    if type(key) is not str or not 0 < len(key) <= 64 or key.startswith("/"):
        return None
    parts = key.split("/")
    ok = all(p and p not in (".", "..") and p.replace("_", "").replace("-", "").replace(
        "+", "").isalnum() and p.isascii() for p in parts)  # fmt: skip
    return key if ok else None


def _tz_spec(tz: Any) -> Any:
    """A time zone as it crosses (see :func:`_fixed_tz`; rebuilt by :func:`_timezone`): a
    ``ZoneInfo``'s key, or a ``timezone``'s offset and its name when not the default one."""
    if type(tz) is zoneinfo.ZoneInfo:
        return tz.key
    offset = tz.utcoffset(None)
    name = tz.tzname(None)
    default = _TimeZone(offset).tzname(None)
    return (offset.days, offset.seconds, offset.microseconds, None if name == default else name)


#: The flags a compiled regular expression crosses with (as a value, compiled again by the
#: receiver): not ``re.DEBUG``, which prints when compiling, nor the deprecated ``TEMPLATE``.
_PATTERN_FLAGS = int(
    _RegexFlag.IGNORECASE | _RegexFlag.LOCALE | _RegexFlag.MULTILINE | _RegexFlag.DOTALL
    | _RegexFlag.UNICODE | _RegexFlag.VERBOSE | _RegexFlag.ASCII
)


def _datetime_fields(value: Any) -> tuple[Any, ...]:
    if type(value) is _TimeDelta:
        return (value.days, value.seconds, value.microseconds)
    if type(value) is _Date:
        return (value.year, value.month, value.day)
    tz = None if value.tzinfo is None else _tz_spec(value.tzinfo)
    clock = (value.hour, value.minute, value.second, value.microsecond, value.fold, tz)
    if type(value) is _Time:
        return clock
    return (value.year, value.month, value.day, *clock)


def _plain_name(name: str) -> bool:
    return name.isidentifier() and not keyword.iskeyword(name) and not name.startswith("_")


#: Most classes each cache of classes made from the other side's names holds
#: (:func:`_made_once`): a long-lived judge serves many solutions, and none may grow it
#: without end.
MAX_MADE_CLASSES = 1000


def _made_once(cache: dict[Any, Any], key: Any, make: Callable[[], Any]) -> Any:
    """``cache[key]``, made by ``make()`` the first time; None when it is not there and the
    cache already holds :data:`MAX_MADE_CLASSES`."""
    found = cache.get(key)
    if found is None and len(cache) < MAX_MADE_CLASSES:
        found = cache[key] = make()
    return found


_NAMEDTUPLES: dict[tuple[str, tuple[str, ...]], Any] = {}


def _namedtuple_class(name: str, fields: tuple[str, ...]) -> Any:
    """The receiver's own named tuple class of that name and fields (made by
    ``collections.namedtuple`` from checked identifiers; at most 1,000 per process)."""
    try:
        cls = _made_once(_NAMEDTUPLES, (name, fields), lambda: collections.namedtuple(name, fields))
    except ValueError as exc:
        raise CodecError("bad named tuple") from exc
    if cls is None:
        raise CodecError("too many named tuple classes")
    return cls


def _timezone(spec: Any) -> _TzInfo | None:
    if spec is None:
        return None
    if type(spec) is str:
        key = _zone_key(spec)
        if key is None:
            raise CodecError("bad time zone key")
        try:
            return zoneinfo.ZoneInfo(key)
        except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError) as exc:
            raise CodecError("unknown time zone key") from exc
    if type(spec) is not tuple or len(spec) != 4 or not all(type(f) is int for f in spec[:3]):
        raise CodecError("bad time zone")
    if spec[3] is not None and type(spec[3]) is not str:
        raise CodecError("bad time zone name")
    offset = _TimeDelta(spec[0], spec[1], spec[2])
    return _TimeZone(offset) if spec[3] is None else _TimeZone(offset, spec[3])


def _loaded_class(module: str, qualname: str) -> type | None:
    """The class ``qualname`` (dotted: ``Outer.Inner``) of ``module`` as already imported here,
    else None: read through ``vars()``, so nothing is imported for it and no module's or
    class's ``__getattr__`` runs (the names are the solution's)."""
    found: Any = sys.modules.get(module)
    for part in qualname.split("."):
        if found is None or not part.isidentifier():
            return None
        found = vars(found).get(part) if isinstance(found, (types.ModuleType, type)) else None
    return found if isinstance(found, type) else None
