"""An actor pool's routing: its least-loaded live actor in O(1), actors of equal load in turn.

Owns: :class:`LeastLoaded`, the pool's live and ready actors by the number of calls each is
running, and :func:`shift`, a change of one actor's load by one call.

Must not: decide which actors are live (that is the pool's, in :mod:`asyncpool.actors`, which
adds an actor once it answers and removes it when it dies or leaves), nor talk to Ray.

Why hand-written: an :class:`~asyncpool.actors.ActorPool` sends every call to the actor with
the fewest calls running. A scan of every actor per call cost 0.4 µs at 4 actors, 1.2 µs at
16, 8.5 µs at 64 and 33 µs at 256 (a call's own Ray submission costs the driver ~80 µs), and a
heap would pay O(log n) per change and carry stale entries. A load only ever changes by one,
so the actors are kept in buckets by load, each an insertion-ordered ``dict`` (an actor that
enters a bucket goes last: actors of equal load take calls in turn), with the index of the
lowest bucket that holds one. A pick and a load change are O(1); removing the last actor of
the lowest bucket looks upward for the next one that holds an actor (at most as many buckets as
an actor's ``max_concurrency``, and only when an actor dies or leaves).
"""

from __future__ import annotations

from ._actor_member import Member

__all__ = ["LeastLoaded", "shift"]


class LeastLoaded:
    """The live, ready actors of one pool by load (see the module docstring).

    Each actor in it has ``member.router`` set to it; an actor out of it (dead, leaving, not
    ready yet) has ``None`` there, and its load changes with :func:`shift` all the same.
    """

    __slots__ = ("_buckets", "_low", "_size")

    def __init__(self) -> None:
        #: ``_buckets[n]``: the actors with ``n`` calls running, in the order they got there.
        self._buckets: list[dict[Member, None]] = []
        #: The lowest load any actor here has (0 when there is none).
        self._low = 0
        self._size = 0

    def __len__(self) -> int:
        return self._size

    def add(self, member: Member) -> None:
        """Route calls to ``member`` too (at its load now). It must not be here already."""
        if member.router is not None:
            raise ValueError(f"actor {member.index} is routed already")
        self._bucket(member.load)[member] = None
        member.router = self
        if self._size == 0 or member.load < self._low:
            self._low = member.load
        self._size += 1

    def remove(self, member: Member) -> None:
        """Route no more calls to ``member`` (its running calls keep their load). Idempotent."""
        if member.router is not self:
            return
        member.router = None
        del self._buckets[member.load][member]
        self._size -= 1
        if self._size == 0:
            self._low = 0
            return
        buckets = self._buckets
        while not buckets[self._low]:
            self._low += 1

    def pick(self) -> Member | None:
        """The actor with the fewest calls running (of those with as few: the one that has
        had that load longest), or None when there is none. Changes nothing."""
        if not self._size:
            return None
        return next(iter(self._buckets[self._low]))

    def _bucket(self, load: int) -> dict[Member, None]:
        buckets = self._buckets
        while len(buckets) <= load:
            buckets.append({})
        return buckets[load]


def shift(member: Member, delta: int) -> None:
    """``member`` has ``delta`` (+1 or -1) more calls running, wherever it is routed."""
    old = member.load
    new = member.load = old + delta
    router = member.router
    if router is None:
        return
    buckets = router._buckets
    del buckets[old][member]
    if new == len(buckets):
        buckets.append({})
    buckets[new][member] = None
    if new < router._low:
        router._low = new
    elif old == router._low and not buckets[old]:
        router._low = new  # one more call: ``new`` is old + 1, and holds ``member`` now
