"""The wire's format of values: what both of its ends share (the packed runs of numbers, the
NaN singletons, the room a deeply nested value is given); :class:`._encoder._Encoder` writes a
message, :class:`._decoder._Decoder` reads one. The decoder is strict: exact types only, every
length and number checked.

Must not: use ``pickle`` or ``marshal`` (they must never read untrusted bytes), nor send a handle
without a peer to number it.
"""

from __future__ import annotations

import _thread
import struct
import sys
from array import array as _array
from collections.abc import Callable
from itertools import chain as _chain  # bound once: the tests' patches are forwarded
from math import nan as _MATH_NAN  # bound once: the tests' patches of math are forwarded
from typing import TYPE_CHECKING, Any

from ._bounds import _SHALLOW, MAX_DEPTH, CodecError

if TYPE_CHECKING:
    pass


_U32 = struct.Struct(">I")
_F64 = struct.Struct(">d")


def _numpy_nan() -> Any:
    """``numpy.nan`` when numpy is imported here (nothing is imported for it), else None."""
    np = sys.modules.get("numpy")
    return None if np is None else np.__dict__.get("nan")


def _nan_singleton(value: float) -> bytes | None:
    """``value``'s code when it is ``math.nan`` (0) or ``numpy.nan`` (1), else None.

    In-process ``[math.nan] == [math.nan]`` holds: a list compares its items by identity
    first, and NaN equals nothing, itself included, by value. A NaN that crossed as a value
    was a new float, and the honest result ``[math.nan]`` compared unequal to the tests'
    ``[math.nan]`` (helper 43's probes). Each side maps the two singletons to its own."""
    if value is _MATH_NAN:
        return b"\x00"
    nan = _numpy_nan()
    return b"\x01" if nan is not None and value is nan else None


def _holds_nan_singleton(items: Any) -> bool:
    """Whether ``items`` (floats) holds ``math.nan`` or ``numpy.nan`` (by identity: NaN is
    equal to nothing), which a packed run would cross as new floats."""
    if _MATH_NAN in items:
        return True
    nan = _numpy_nan()
    return nan is not None and nan in items
_C128 = struct.Struct(">dd")
_DEEPENED_LOCK = _thread.allocate_lock()


def _deepened(codec: Any, again: Callable[[], Any]) -> Any:
    """``again()``, the encoding or decoding of one value nested past :data:`_SHALLOW` levels
    (up to :data:`MAX_DEPTH`), by ``codec`` (an :class:`_Encoder` or :class:`_Decoder`, whose
    count of it is undone: ``again`` counts it), with room for its recursion: the recursion
    limit raised while it runs and set back after, so that neither side's code ever runs under
    it (in-process, a 1,000-deep list crosses no wire). The codec's recursion is Python calls
    only, which Python 3.11+ runs without C stack; a value nested so deep is rare, and pays
    this alone."""
    codec.count -= 1
    codec.deep = True
    with _DEEPENED_LOCK:  # threads crossing deep values at once: raised by the first, set
        if not _DEEPENED:  # back by the last (one's restore must not land while another is deep)
            _DEEPENED.append(sys.getrecursionlimit())
            sys.setrecursionlimit(_DEEPENED[0] + 3 * (MAX_DEPTH - _SHALLOW))
        _DEEPENED.append(0)
    try:
        return again()
    finally:
        with _DEEPENED_LOCK:
            _DEEPENED.pop()
            if len(_DEEPENED) == 1:
                sys.setrecursionlimit(_DEEPENED.pop())
        codec.deep = False


#: The recursion limit before :func:`_deepened` raised it, then one entry per value being
#: crossed deep (in any thread).
_DEEPENED: list[int] = []


_chain_items = _chain.from_iterable


def _packed_numbers(kind: type, items: Any) -> tuple[bytes, bytes] | None:
    """``items``, all of ``kind`` (``int`` or ``float``), as a packed run's type code and
    bytes (64-bit ints, doubles); None when an int needs more than 64 bits."""
    code = "q" if kind is int else "d"
    try:
        return code.encode(), _array(code, items).tobytes()
    except OverflowError:
        return None


def _unpacked_numbers(code: bytes, data: bytes, n: int, what: str = "items") -> list[Any]:
    """The ``n`` numbers of a packed run (see :func:`_packed_numbers`), checked (``what``:
    the run's kind, for the error)."""
    if code not in (b"q", b"d") or len(data) != 8 * n:
        raise CodecError(f"malformed packed {what}")
    numbers = _array(code.decode())
    numbers.frombytes(data)
    return numbers.tolist()


#: A message's one-byte tag (``bytes``, which is a method's name in :class:`_Encoder`).
_Tag = bytes


#: The fewest items of a list or tuple sent packed (:meth:`_Encoder.packed`): below it the
#: check of their types costs about what packing saves.
_PACK_MIN = 16
#: ``array.array`` type codes that cross as values (both processes run on one machine: the
#: same item sizes and byte order), rebuilt with ``frombytes``: numbers only (no ``u``).
_ARRAY_CODES = frozenset("bBhHiIlLqQfd")
