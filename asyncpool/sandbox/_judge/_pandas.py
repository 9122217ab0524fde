"""pandas values on the wire: a ``DataFrame``, ``Series``, ``Index`` or pandas scalar as the values
and arrays that describe it (:func:`_pandas_spec`, the sender's side), rebuilt by pandas' own
constructors (:func:`_pandas_value`, the receiver's), of the dtypes of :data:`_PANDAS_DTYPES`.

Must not: unpickle anything, nor import pandas unless a value needs it (:func:`_import_pandas`).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from typing import Any

from ._bounds import CodecError
from ._values import _import_numpy, _numpy_dtypes, _plain_tz, _timezone, _tz_spec

#: pandas dtypes (by name) whose columns, Series and Index cross as values, besides numpy's
#: (:data:`_NUMPY_DTYPES`): Python objects, strings, and the nullable numbers and bool (their
#: missing values cross as None). ``category`` crosses too, as its codes, its categories (an
#: index of these dtypes, or of intervals) and whether they are ordered, and times in a time
#: zone of :func:`_plain_tz`'s, as their instants and the zone, and periods, as their ordinals
#: and dtype (see :func:`_pandas_column`).
_PANDAS_DTYPES = frozenset({
    "object", "str", "string", "boolean", "Float32", "Float64",
    *(f"{u}Int{bits}" for u in ("", "U") for bits in (8, 16, 32, 64)),
})  # fmt: skip


def _pandas_column(pd: Any, values: Any) -> tuple[str, Any] | None:
    """A Series' or Index's ``(dtype name, values)``: a numpy array of an allowed dtype, else
    a tuple of its Python values (``NA``/``NaT`` as None); None when its dtype crosses not."""
    dtype = values.dtype
    name = str(dtype)
    np: Any = sys.modules.get("numpy")
    if isinstance(dtype, np.dtype) and dtype.str in _numpy_dtypes():
        return name, values.to_numpy(copy=False)
    if isinstance(dtype, pd.CategoricalDtype):
        # pd.cut's bins, a column read as categories: BigCodeBench's tests compare such frames
        # with assert_frame_equal, which a handle (another class) fails.
        categorical = values.array
        categories = _pandas_index(pd, categorical.categories)
        if categories is None or type(categorical.codes) is not np.ndarray:
            return None
        return "category", (categorical.codes, categories, bool(categorical.ordered))
    if isinstance(dtype, pd.DatetimeTZDtype):
        # Times in a time zone (pd.to_datetime(..., utc=True), dt.tz_convert): their instants
        # (datetime64 in UTC) and the zone (see _tz_spec).
        if not _plain_tz(dtype.tz):
            return None
        instants = values.array.asi8.view(f"M8[{dtype.unit}]")
        return "datetimetz", (instants, _tz_spec(dtype.tz))
    if isinstance(dtype, pd.PeriodDtype):
        # Periods (pd.period_range, dt.to_period): their ordinals and the dtype's name.
        return "period", (values.array.asi8, name)
    if name not in _PANDAS_DTYPES:
        return None
    missing = (pd.NA, pd.NaT)
    return name, tuple(None if v is missing[0] or v is missing[1] else v for v in values)


def _pandas_index(pd: Any, index: Any) -> tuple[Any, ...] | None:
    kind = type(index)
    if kind is pd.RangeIndex:
        return ("R", index.start, index.stop, index.step, index.name)
    if kind is pd.MultiIndex:
        return ("X", tuple(index), tuple(index.names))
    if kind is pd.IntervalIndex:
        left, right = _pandas_column(pd, index.left), _pandas_column(pd, index.right)
        if left is None or right is None or index.left.dtype.kind not in "iufmM":
            return None
        return ("V", left, right, index.closed, index.name)
    if kind not in (
        pd.Index, pd.DatetimeIndex, pd.TimedeltaIndex, pd.CategoricalIndex, pd.PeriodIndex
    ):
        return None
    column = _pandas_column(pd, index)
    if column is None:
        return None
    timed = kind in (pd.DatetimeIndex, pd.TimedeltaIndex)
    freq = getattr(index, "freqstr", None) if timed else None
    return ("I", *column, index.name, freq)


def _pandas_spec(value: Any, kind: type) -> tuple[Any, ...] | None:
    """How a pandas ``DataFrame``, ``Series`` or ``Index`` (exactly those classes, of the
    dtypes of :data:`_NUMPY_DTYPES` and :data:`_PANDAS_DTYPES`), a ``Timestamp`` (in a time
    zone of :func:`_plain_tz`'s, or none) or ``Timedelta``, ``NaT``, ``NA``, a ``Period``, an
    ``Interval`` (of numbers or times, :func:`_interval_bound`) or a ``Categorical`` crosses:
    as a value (a tuple of names, dtypes, numpy arrays and plain values, :func:`_pandas_value`
    rebuilds it), never pickled; None for anything else (it crosses as a handle). ``attrs``
    cross when they are a few plain values (:func:`_pandas_attrs`); flags stay."""
    pd = sys.modules.get("pandas")
    if pd is None or not isinstance(pd.__dict__.get("DataFrame"), type):
        return None
    if kind is pd.DataFrame:
        columns = _pandas_index(pd, value.columns)
        index = _pandas_index(pd, value.index)
        data = [_pandas_column(pd, value.iloc[:, i]) for i in range(value.shape[1])]
        if columns is None or index is None or None in data:
            return None
        return ("F", columns, index, tuple(data), *_pandas_attrs(value))
    if kind is pd.Series:
        index = _pandas_index(pd, value.index)
        column = _pandas_column(pd, value)
        if index is None or column is None:
            return None
        return ("S", *column, index, value.name, *_pandas_attrs(value))
    if kind in (
        pd.Index, pd.RangeIndex, pd.MultiIndex, pd.DatetimeIndex, pd.TimedeltaIndex,
        pd.CategoricalIndex, pd.IntervalIndex, pd.PeriodIndex,
    ):  # fmt: skip
        return _pandas_index(pd, value)
    if kind in (pd.Timestamp, pd.Timedelta) and getattr(value, "tz", None) is None:
        kind_name = "T" if kind is pd.Timestamp else "D"
        raw = value.to_datetime64() if kind is pd.Timestamp else value.to_timedelta64()
        return (kind_name, raw)
    if kind is pd.Timestamp and _plain_tz(value.tzinfo):
        # its instant (UTC) and its time zone (see _tz_spec): rebuilt converted to that zone
        return ("T", value.to_datetime64(), _tz_spec(value.tzinfo))
    if kind is pd.Interval and _interval_bound(pd, value.left):
        return ("v", value.left, value.right, value.closed)
    if kind is pd.Categorical:  # pd.cut of a list or an array
        column = _pandas_column(pd, pd.Series(value, copy=False))
        return None if column is None or column[0] != "category" else ("C", column[1])
    if kind is pd.Period:
        return ("P", value.ordinal, value.freqstr)
    if value is pd.NaT:
        return ("NaT",)
    if value is pd.NA:
        return ("NA",)
    return None


#: The most entries of a DataFrame's or Series' ``attrs`` that cross with it.
_MAX_ATTRS = 100
#: What an ``attrs`` entry may hold to cross (its key a string): plain immutable values.
_ATTR_TYPES = (str, int, float, bool, type(None))


def _plain_attrs(attrs: Any) -> bool:
    """Whether ``attrs`` may cross: a dict of at most :data:`_MAX_ATTRS` string keys to
    :data:`_ATTR_TYPES` values (what the sender sends and the receiver accepts alike)."""
    return (
        type(attrs) is dict and len(attrs) <= _MAX_ATTRS
        and all(type(k) is str and type(v) in _ATTR_TYPES for k, v in attrs.items())
    )  # fmt: skip


def _pandas_attrs(value: Any) -> tuple[dict[str, Any], ...]:
    """A DataFrame's or Series' ``attrs`` as the last item of its spec when they are a few
    entries of plain values (``df.attrs["source"] = "x"``), else nothing (they stay behind)."""
    attrs = getattr(value, "attrs", None)
    return (dict(attrs),) if attrs and _plain_attrs(attrs) else ()


def _set_attrs(target: Any, attrs: Any) -> Any:
    """``target`` with the ``attrs`` a spec carried (checked by :func:`_plain_attrs`)."""
    if not _plain_attrs(attrs):
        raise CodecError("malformed pandas attrs")
    target.attrs = attrs
    return target


#: The sides a pandas interval may be closed on.
_INTERVAL_CLOSED = ("left", "right", "both", "neither")


def _interval_bound(pd: Any, bound: Any) -> bool:
    """Whether ``bound`` may bound a ``pd.Interval`` that crosses as a value: an ``int`` or a
    ``float``, a numpy number, a ``Timestamp`` without a time zone or a ``Timedelta`` (exact
    types: nothing of the other side is asked)."""
    np: Any = sys.modules.get("numpy")
    kind = type(bound)
    if kind in (int, float, pd.Timedelta):
        return True
    if kind is pd.Timestamp:
        return bound.tz is None
    return np is not None and issubclass(kind, (np.integer, np.floating))


#: What to run once pandas is imported here for a value (the judge's guard of pandas'
#: ``eval``, set per check by :func:`._check.judge_check` when the tests may evaluate with it).
AFTER_IMPORT: list[Callable[[], None]] = []


def _import_pandas() -> Any:
    np = _import_numpy()  # and its thread pools at one thread
    del np
    try:
        pd = importlib.import_module("pandas")
    except ImportError as exc:
        raise CodecError("a pandas value, and pandas cannot be imported here") from exc
    for then in AFTER_IMPORT:
        then()
    return pd


def _vector(value: Any, kinds: str) -> bool:
    """Whether ``value`` is a one-dimensional numpy array of one of the dtype ``kinds``."""
    np: Any = sys.modules.get("numpy")
    return (
        np is not None
        and type(value) is np.ndarray
        and value.ndim == 1
        and value.dtype.kind in kinds
    )


def _pandas_array(pd: Any, dtype: Any, values: Any, depth: int) -> Any:
    """The values of a column (see :func:`_pandas_column`) as an array of that dtype."""
    np = _import_numpy()
    if type(dtype) is not str:
        raise CodecError("malformed pandas dtype")
    if type(values) is np.ndarray:
        if values.ndim != 1 or str(values.dtype) != dtype:
            raise CodecError("malformed pandas column")
        return values
    if dtype == "category":
        if (
            type(values) is not tuple
            or len(values) != 3
            or not _vector(values[0], "i")
            or type(values[2]) is not bool
        ):
            raise CodecError("malformed pandas categorical")
        categories = _pandas_value(values[1], depth + 1)
        if not isinstance(categories, pd.Index) or isinstance(categories, pd.MultiIndex):
            raise CodecError("malformed pandas categorical")
        # from_codes refuses a code out of range and categories that repeat
        return pd.Categorical.from_codes(values[0], categories=categories, ordered=values[2])
    if dtype == "datetimetz":
        if (
            type(values) is not tuple
            or len(values) != 2
            or not _vector(values[0], "M")
            or values[0].dtype.str not in _numpy_dtypes()
        ):
            raise CodecError("malformed pandas times in a time zone")
        tz = _timezone(values[1])
        if tz is None:
            raise CodecError("malformed pandas times in a time zone")
        return pd.DatetimeIndex(values[0]).tz_localize("UTC").tz_convert(tz).array
    if dtype == "period":
        if (
            type(values) is not tuple
            or len(values) != 2
            or not _vector(values[0], "i")
            or values[0].dtype != np.int64
            or type(values[1]) is not str
            or not (len(values[1]) <= 40 and values[1].isascii())
            or not (values[1].startswith("period[") and values[1].endswith("]"))
        ):
            raise CodecError("malformed pandas periods")
        period = pd.api.types.pandas_dtype(values[1])
        if not isinstance(period, pd.PeriodDtype):
            raise CodecError("malformed pandas periods")
        return pd.arrays.PeriodArray(values[0], dtype=period)
    if type(values) is not tuple or dtype not in _PANDAS_DTYPES:
        raise CodecError("pandas dtype not allowed")
    if dtype == "object":
        array = np.empty(len(values), dtype=object)
        array[:] = values
        return array
    return pd.array(list(values), dtype=dtype)


def _pandas_value(spec: Any, depth: int) -> Any:
    """The pandas value :func:`_pandas_spec` described, rebuilt by pandas' constructors from
    plain values and numpy arrays (checked: dtypes from the allowed lists only)."""
    pd = _import_pandas()
    if type(spec) is not tuple or not spec or type(spec[0]) is not str or depth > 2:
        raise CodecError("malformed pandas value")
    kind, rest = spec[0], spec[1:]
    if kind in ("F", "S") and len(rest) == (4 if kind == "F" else 5):
        return _set_attrs(_pandas_value((kind, *rest[:-1]), depth), rest[-1])
    if kind == "F" and len(rest) == 3 and type(rest[2]) is tuple:
        columns = _pandas_value(rest[0], depth + 1)
        index = _pandas_value(rest[1], depth + 1)
        arrays = {}
        for i, column in enumerate(rest[2]):
            if type(column) is not tuple or len(column) != 2:
                raise CodecError("malformed pandas column")
            arrays[i] = _pandas_array(pd, column[0], column[1], depth)
        frame = pd.DataFrame(arrays, index=index)
        frame.columns = columns
        return frame
    if kind == "S" and len(rest) == 4:
        index = _pandas_value(rest[2], depth + 1)
        return pd.Series(_pandas_array(pd, rest[0], rest[1], depth), index=index, name=rest[3])
    if kind == "I" and len(rest) == 4 and (rest[3] is None or type(rest[3]) is str):
        array = _pandas_array(pd, rest[0], rest[1], depth)
        if rest[3] is not None:
            dated = rest[0].startswith("datetime64") or rest[0] == "datetimetz"
            maker = pd.DatetimeIndex if dated else pd.TimedeltaIndex
            return maker(array, freq=rest[3][:100], name=rest[2])
        return pd.Index(array, name=rest[2], tupleize_cols=False)
    if (
        kind == "V"
        and len(rest) == 4
        and all(type(side) is tuple and len(side) == 2 for side in rest[:2])
        and rest[2] in _INTERVAL_CLOSED
    ):
        left = _pandas_array(pd, rest[0][0], rest[0][1], depth)
        right = _pandas_array(pd, rest[1][0], rest[1][1], depth)
        if not _vector(left, "iufmM"):
            raise CodecError("malformed pandas IntervalIndex")
        return pd.IntervalIndex.from_arrays(left, right, closed=rest[2], name=rest[3])
    if kind == "C" and len(rest) == 1:
        return _pandas_array(pd, "category", rest[0], depth)
    if kind == "R" and len(rest) == 4 and all(type(v) is int for v in rest[:3]):
        return pd.RangeIndex(rest[0], rest[1], rest[2], name=rest[3])
    if kind == "X" and len(rest) == 2 and type(rest[0]) is tuple and type(rest[1]) is tuple:
        if not all(type(t) is tuple for t in rest[0]):
            raise CodecError("malformed pandas MultiIndex")
        return pd.MultiIndex.from_tuples(list(rest[0]), names=list(rest[1]))
    np = _import_numpy()
    if kind in ("T", "D") and len(rest) == 1 and isinstance(rest[0], np.generic):
        wanted = np.datetime64 if kind == "T" else np.timedelta64
        if not isinstance(rest[0], wanted):
            raise CodecError("malformed pandas time")
        return (pd.Timestamp if kind == "T" else pd.Timedelta)(rest[0])
    if kind == "T" and len(rest) == 2 and isinstance(rest[0], np.datetime64):
        tz = _timezone(rest[1])
        if tz is None:
            raise CodecError("malformed pandas time")
        return pd.Timestamp(rest[0]).tz_localize("UTC").tz_convert(tz)
    if (
        kind == "v"
        and len(rest) == 3
        and _interval_bound(pd, rest[0])
        and _interval_bound(pd, rest[1])
        and rest[2] in _INTERVAL_CLOSED
    ):
        return pd.Interval(rest[0], rest[1], closed=rest[2])
    if (
        kind == "P"
        and len(rest) == 2
        and type(rest[0]) is int
        and type(rest[1]) is str
        and len(rest[1]) <= 32
        and rest[1].isascii()
    ):
        return pd.Period(ordinal=rest[0], freq=rest[1])
    if kind == "NaT" and not rest:
        return pd.NaT
    if kind == "NA" and not rest:
        return pd.NA
    raise CodecError("malformed pandas value")
