"""Big flat lists the tests pass the solution again, unchanged: sent once, then named.

Tests often build one big input and call the solution many times with it (1,000 binary
searches over one 100,000-int list; a stress loop over one array). Sent whole each time, each
call cost ~13 ms of packing, copying through the pipe and unpacking where in-process it costs
nothing: 1,000 such calls took 12.9 s, and an honest program failed its 10 s timeout (helper
43's section 3). In-process the solution gets the tests' own list each time, the same object.

So the judge's requests send a list of :data:`MIN_ITEMS` or more ints, floats or strings (what
crosses as one packed run) once, into one of :data:`SLOTS` slots of the solution's side
(``[`` + slot + the packed run); while that list is the same object holding the same items
(by identity, item by item, as write-back compares), a later request names the slot instead
(``=`` + slot), and the solution's side hands its code the copy it kept there: the same object
as before, as in-process. Anything that changed it on the judge's side (the tests, or a
write-back of the solution's change) makes the next request send it whole again, into the
same slot. Only the judge's requests name slots, and only those of the tests' main thread
(channel 0: its messages are read in the order it decided their slots, where another thread's
could overtake them); the solution's messages never may.

Bounded: at most :data:`SLOTS` lists of at most :data:`MAX_ITEMS` items each are kept on each
side (the oldest slot is reused), so the solution's side holds at most ~1M items more than
in-process, where it holds none.

Must not: import another module of the judge (the codec uses it).
"""

from __future__ import annotations

from operator import is_ as _is  # bound once: the tests' patches are forwarded
from typing import Any

#: Slots on the solution's side.
SLOTS = 4
#: The fewest items of a list sent into a slot: below it, sending it again costs ~0.1 ms.
MIN_ITEMS = 1024
#: The most items of a list sent into a slot.
MAX_ITEMS = 1 << 18


class SentLists:
    """The judge's side: the lists it sent into the solution's slots, each with its items
    then (a shallow copy: the items are ints, floats or strings)."""

    __slots__ = ("_by_id", "_next", "_slots")

    def __init__(self) -> None:
        self._slots: list[tuple[list[Any], list[Any]] | None] = [None] * SLOTS
        self._by_id: dict[int, int] = {}
        self._next = 0

    def slot_of(self, value: list[Any]) -> int | None:
        """The slot holding ``value`` as it is now (same object, same items), or None."""
        slot = self._by_id.get(id(value))
        if slot is None:
            return None
        entry = self._slots[slot]
        assert entry is not None  # (_by_id names filled slots, whose entries hold their lists)
        items = entry[1]
        if len(value) != len(items) or not all(map(_is, value, items)):
            return None
        return slot

    def store(self, value: list[Any]) -> int:
        """The slot ``value`` (about to be sent whole) goes into: its own if it had one, else
        the oldest."""
        slot = self._by_id.get(id(value))
        if slot is None:
            slot = self._next
            self._next = (slot + 1) % SLOTS
            old = self._slots[slot]
            if old is not None:
                del self._by_id[id(old[0])]
            self._by_id[id(value)] = slot
        # The list itself is held too: its id() must not be another list's while the entry lives.
        self._slots[slot] = (value, list(value))
        return slot


def eligible(value: list[Any]) -> bool:
    """Whether a list (about to cross as a packed run of numbers or strings) goes into a slot."""
    return MIN_ITEMS <= len(value) <= MAX_ITEMS
