"""``id`` of a handle as in-process (:func:`_handle_id`): its owner's ``id`` of the object,
in a range of its own on both sides.

Must not: take an ``id`` no object of the solution's can have, or one another live
handle has.
"""

from __future__ import annotations

from typing import Any

from ._proxies import _PROXY_TYPES, _peer

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
