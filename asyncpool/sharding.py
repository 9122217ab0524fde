"""Split a batch into near-equal contiguous shards for a worker group, and join them back.

A *batch* is either a sequence (a list, a tuple, anything sliceable with a length -- but not a
``str``/``bytes``) or a *columnar batch*: a mapping of column name to a sequence, every column
of the same length (``{"input_ids": [...], "labels": [...]}``; the columns may also be NumPy
arrays or torch tensors, anything ``len()``-able and sliceable).

``shard(batch, n)`` cuts it into ``n`` contiguous pieces whose lengths differ by at most one:
the first ``len(batch) % n`` shards are one item longer than the others. Each shard is a slice
of the input (``batch[a:b]``, column by column for a mapping), so a list gives lists, a tuple
tuples and an array arrays. When ``n > len(batch)`` the last ``n - len(batch)`` shards are
*empty* (same type as the input): a worker group of ``n`` workers can always be handed ``n``
shards, and a worker that gets an empty one has nothing to do. ``n < 1`` is a ``ValueError``;
a mapping whose columns have different lengths is a ``ValueError`` naming the lengths.

``unshard(parts)`` is the inverse: ``unshard(shard(batch, n)) == batch`` for a list (and
column-wise for a mapping of lists). Lists are concatenated into one list, tuples into one
tuple, mappings column by column (every part must have the same keys); NumPy-array columns are
joined with ``numpy.concatenate`` and torch tensors with ``torch.cat``.

Pure functions: no Ray, no I/O; this module must not grow any (it is what a worker group's
caller runs on the driver, between two dispatches).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar, overload

from . import _validate

__all__ = ["shard", "unshard"]

T = TypeVar("T")
S = TypeVar("S", bound=Sequence[Any])


def _bounds(length: int, n: int) -> list[tuple[int, int]]:
    """``n`` contiguous ``(start, stop)`` ranges over ``length`` items, near-equal in size."""
    base, extra = divmod(length, n)
    out = []
    start = 0
    for i in range(n):
        stop = start + base + (1 if i < extra else 0)
        out.append((start, stop))
        start = stop
    return out


def _is_sequence_like(value: object) -> bool:
    if isinstance(value, str | bytes | bytearray | Mapping):
        return False
    return hasattr(value, "__len__") and hasattr(value, "__getitem__")


def _column_lengths(batch: Mapping[Any, Any]) -> dict[Any, int]:
    lengths: dict[Any, int] = {}
    for key, column in batch.items():
        if not _is_sequence_like(column):
            raise TypeError(
                f"column {key!r} of a columnar batch must be a sequence (list, tuple, array), "
                f"not {type(column).__name__}"
            )
        lengths[key] = len(column)
    return lengths


@overload
def shard(batch: Mapping[str, Any], n: int) -> list[dict[str, Any]]: ...


@overload
def shard(batch: S, n: int) -> list[S]: ...


def shard(batch: Any, n: int) -> list[Any]:
    """``n`` near-equal contiguous shards of ``batch`` (a sequence or a columnar mapping).

    The first ``len(batch) % n`` shards hold one item more than the rest; when
    ``n > len(batch)`` the trailing shards are empty. See the module docstring.
    """
    n = _validate.positive_int(n, "n")
    if isinstance(batch, Mapping):
        lengths = _column_lengths(batch)
        if len(set(lengths.values())) > 1:
            detail = ", ".join(f"{k!r}: {v}" for k, v in lengths.items())
            raise ValueError(f"the columns of a columnar batch must have one length; got {detail}")
        length = next(iter(lengths.values()), 0)
        return [{k: col[a:b] for k, col in batch.items()} for a, b in _bounds(length, n)]
    if not _is_sequence_like(batch):
        raise TypeError(
            "batch must be a sequence (list, tuple, array) or a mapping of equal-length "
            f"sequences, not {type(batch).__name__}"
        )
    return [batch[a:b] for a, b in _bounds(len(batch), n)]


def _join(pieces: Sequence[Any], what: str) -> Any:
    """Concatenate same-kind sequences: lists, tuples, NumPy arrays, torch tensors."""
    first = pieces[0]
    module = type(first).__module__.split(".", 1)[0]
    if module == "numpy" and hasattr(first, "shape"):
        import numpy

        return numpy.concatenate(list(pieces))
    if module == "torch" and hasattr(first, "shape"):
        import torch  # type: ignore[import-not-found]

        return torch.cat(list(pieces))
    for piece in pieces:
        if not _is_sequence_like(piece):
            raise TypeError(f"{what}: cannot join a {type(piece).__name__}; expected sequences")
    if all(isinstance(p, tuple) for p in pieces):
        return tuple(itertools.chain.from_iterable(pieces))
    return list(itertools.chain.from_iterable(pieces))


def unshard(parts: Sequence[Any]) -> Any:
    """Join shards back in order: lists/tuples end to end, mappings column by column.

    ``unshard(shard(batch, n))`` gives the batch back (a list for list columns). An empty
    ``parts`` gives ``[]``. Parts that mix mappings and sequences are a ``TypeError``; mappings
    with different keys are a ``ValueError``.
    """
    if isinstance(parts, str | bytes) or not isinstance(parts, Sequence):
        raise TypeError(f"parts must be a sequence of shards, not {type(parts).__name__}")
    if not parts:
        return []
    mappings = [isinstance(p, Mapping) for p in parts]
    if any(mappings) and not all(mappings):
        raise TypeError("parts mix mappings and sequences; unshard joins shards of one kind")
    if not all(mappings):
        return _join(parts, "unshard")
    keys = list(parts[0].keys())
    for i, part in enumerate(parts[1:], start=1):
        if set(part.keys()) != set(keys):
            raise ValueError(
                f"parts[{i}] has columns {sorted(map(str, part.keys()))}, "
                f"parts[0] has {sorted(map(str, keys))}; they must match"
            )
    return {k: _join([p[k] for p in parts], f"column {k!r}") for k in keys}
