"""Containers kept in step by :class:`._peer._Peer`: kept containers (an attribute the other
side read, a request's container the solution kept), value-backed objects of a mutable
base, and the solution's values the tests read (its constants).

Must not: take a change of a container the other side never had (each checked).
"""

from __future__ import annotations

from typing import Any

from ._bounds import CodecError
from ._kept import (
    MAX_BACKED,
    MAX_HELD,
    MAX_KEPT_ARGS,
    MAX_TESTS_HELD,
    _backed_changed,
    _backed_mark,
    _held_alone,
    _mutable_base,
    _refcounts,
    _refill,
    _refill_backed,
    _same_inner,
    _tests_class_object,
    _watch_changed,
    _watch_mark,
)
from ._peer_state import _PeerState
from ._proxy_backed import _HANDLE
from ._tests_namespace import _for_tests
from ._values import _MUTABLE, _UNSET, _mutable_value


class _PeerKept(_PeerState):
    """The containers a :class:`._peer._Peer` keeps in step with the other side's copies."""

    def backed(self, n: int, base: Any, cls: type) -> Any:
        """The value-backed handle for the other side's object ``n`` (made once)."""
        found = self.backeds.get(n)
        fresh = found is None
        if found is None:
            found = self.backeds[n] = cls(base)
            vars(found)[_HANDLE] = self.proxy(n)
        kind = _mutable_base(found)
        if kind is None:
            return found
        if not fresh:
            _refill_backed(found, kind, base)  # it crossed again: what it holds now
        if n in self.backed_theirs or len(self.backed_theirs) < MAX_BACKED:
            self.backed_theirs[n] = (found, _backed_mark(found))
        return found

    def sent_backed(self, n: int, obj: Any) -> None:
        """This side sent its value-backed object ``obj`` as number ``n`` (with what it holds
        now): kept in step from now on, if of a mutable base (see :meth:`backed_changes`).

        In the judge, only an object of a class the tests' own code defined (``class L(list)``)
        takes the solution's changes: never a library's or a mock's, whose records the solution
        changes only by calling them (``hook.call_args_list.append(call(2))``, a list subclass
        of unittest's, would otherwise write a call the solution never made into the tests'
        mock: the hack of ``test_only_public_containers_...``)."""
        if _mutable_base(obj) is None or (self.trusted and not _tests_class_object(obj)):
            return
        if n in self.backed_mine or len(self.backed_mine) < MAX_BACKED:
            self.backed_mine[n] = (obj, _backed_mark(obj))

    def backed_changes(self) -> tuple[Any, ...]:
        """Either side, for each message: ``()``, or ``(mine, theirs)``: this side's
        value-backed objects that changed since the other side's copy was made or refilled
        (``stack.push(1)`` on a ``class Stack(list)``: in-process the tests' ``len(stack)`` is
        1), and the other side's ones that code here changed in place (the tests'
        ``stack.append(2)``), each as ``(number, base value)``. Before, each side kept the copy
        taken when the object crossed, and an honest program failed (helper 43's D1) while a
        wrong one that emptied its stack passed (A2)."""
        if not self.backed_mine and not self.backed_theirs:
            return ()
        mine = self._backed_scan(self.backed_mine, self.exports)
        theirs = self._backed_scan(self.backed_theirs, self.backeds)
        return (mine, theirs) if mine or theirs else ()

    @staticmethod
    def _backed_scan(watch: dict[int, tuple[Any, Any]], alive: dict[int, Any]) -> tuple[Any, ...]:
        changed: list[tuple[int, Any]] = []
        for n, (obj, mark) in list(watch.items()):
            if alive.get(n) is not obj:
                del watch[n]  # released: no code of either side reaches it through the wire
                continue
            found = _backed_changed(obj, mark)
            if found is not None:
                now, mark = found
                changed.append((n, now))
                watch[n] = (obj, mark)
        return tuple(changed)

    def refill_backed(self, field: Any) -> None:
        """Either side: the other side's :meth:`backed_changes`, each refilled in place by
        its base type's own methods (its own objects sent here, and this side's objects that
        code there changed); one released meanwhile is passed over."""
        if field == ():
            return
        if type(field) is not tuple or len(field) != 2:
            raise CodecError("malformed change of value-backed objects")
        for changes, table, watch in (
            (field[0], self.backeds, self.backed_theirs),
            (field[1], self.exports, self.backed_mine),
        ):
            if type(changes) is not tuple:
                raise CodecError("malformed change of value-backed objects")
            for pair in changes:
                if type(pair) is not tuple or len(pair) != 2 or type(pair[0]) is not int:
                    raise CodecError("malformed change of value-backed objects")
                n, value = pair
                if table is self.backeds and n not in table:  # (held for the peer's life)
                    raise CodecError("a change of a value-backed object never sent")
                obj = table.get(n)
                if obj is None or n not in watch or watch[n][0] is not obj:
                    continue  # released here, or not kept in step (past MAX_BACKED)
                base = _mutable_base(obj)
                if base is None:
                    raise CodecError("a change of an immutable value-backed object")
                _refill_backed(obj, base, value)
                watch[n] = (obj, _backed_mark(obj))

    def update_constants(self, updates: Any) -> None:
        """The judge's side: the solution's values the tests read changed (a reply's
        updates, see :class:`_Constants`): rebind each name, or refill its container in place
        (so that the tests' aliases of it see the change too), where the tests have not
        rebound it themselves. Only names the judge asked for are accepted."""
        if type(updates) is not tuple:
            raise CodecError("malformed updates")
        for entry in updates:
            if (
                type(entry) is not tuple or len(entry) != 3 or type(entry[0]) is not str
                or type(entry[2]) is not tuple
            ):  # fmt: skip
                raise CodecError("malformed updates")
            name, value, same = entry
            if name not in self.live:
                raise CodecError("an update of a value the judge never asked for")
            held = self.live[name]
            spaces = self._holding(name, held)
            if not spaces:
                continue  # the tests rebound (or deleted) it: theirs now
            if type(value) is type(held) and type(held) in _MUTABLE:
                _refill(held, value, same)
            else:
                held = _for_tests(name, value)
                for space in spaces:
                    space[name] = held
                self.live[name] = held
            self.live_marks[name] = _watch_mark(held)

    def watch_attribute(self, value: Any) -> int | None:
        """The number under which the container ``value``, an attribute the other side's code
        read (``stack.items``, ``graph.adj``: see :meth:`serve` for which), is kept in step
        with the other side's copy of it, or None (not a container that crosses as a value, or
        :data:`MAX_HELD` of them already). In-process the tests hold the solution's own object:
        ``stack.items.append(3)`` changes the stack, and ``items = stack.items; stack.push(4)``
        changes ``items``; the solution, given the tests' node, appends to the tests' own
        ``node.children``. Each message carries the kept containers its sender changed since
        (compared as write-back compares, by identity item by item); each side refills its own
        object in place. A change at any depth (a list in a dict in a list) is seen
        (:func:`_watch_mark`), and a refill keeps the inner containers (:func:`_refill`)."""
        key = self.hand_out(value)
        return key[0] if isinstance(key, tuple) else key

    def hand_out(self, value: Any) -> int | tuple[int, Any] | None:
        """:meth:`watch_attribute`, as a reply's key: the number, or ``(number, same)`` when
        the other side's copy holds containers that are still the same objects here (see
        :func:`_refill`)."""
        kind = type(value)
        if kind not in _MUTABLE or not _mutable_value(value, kind):
            return None
        same: Any = ()
        with self.held_lock:
            n = self.held_ids.get(id(value))
            if n is None:
                if len(self.held) >= MAX_HELD or (
                    self.trusted and self.tests_held >= MAX_TESTS_HELD
                ):
                    return None
                n = self.held_next
                self.held_next += 2
                self.tests_held += self.trusted
            elif n in self.held:
                same = _same_inner(value, self.held[n][1])
            self._agree(n, value)
            self.handed[n] = self.handed.get(n, 0) + 1
        return (n, same) if same else n

    def _agree(self, n: int, container: Any) -> None:
        """Record ``container`` as kept container ``n``, holding what both sides now agree it
        holds (a new one within :data:`MAX_HELD`), compared from now on (see held_changes)."""
        with self.held_lock:
            if n not in self.held:
                if len(self.held) >= MAX_HELD:
                    raise CodecError(f"more than {MAX_HELD} kept containers")
                self.held_ids.setdefault(id(container), n)
            self.held[n] = (container, _watch_mark(container))
            self.active[n] = None

    def refcounts(self, received: list[Any]) -> list[int]:
        """:func:`_refcounts` of the request's containers, less the references of this side's
        slots (see _resent): a nested request that fills a slot again during the call drops the
        slot's reference to the list it held, which hid the solution's own new one
        (``self.nums = nums``), and the tests' later change of it never reached the solution
        (helper 45's A2)."""
        counts = _refcounts(received)
        slots = self.list_slots
        return [n - sum(c is s for s in slots) for n, c in zip(counts, received, strict=True)]

    def keep_received(
        self, received: list[Any], counts: list[int], result: Any, kwargs: Any
    ) -> list[tuple[int, int]]:
        """The solution's side, after a call: the request's containers (the tests', copied
        here) that the solution kept a reference to (``self.xs = xs`` in a constructor), each
        as ``(its index in the request, its number)``: in-process the solution's object holds
        the tests' own list, so ``xs.append(3)`` in the tests later reaches it, and its
        ``self.xs.sort()`` later reaches the tests' ``xs``. Told by the reference count, which
        the call raised (less the result's own reference); a container held by the result or by
        an exception is taken for kept too, which only costs it being kept in step."""
        kept: list[tuple[int, int]] = []
        for i, now in enumerate(self.refcounts(received)):
            if self.kept_args >= MAX_KEPT_ARGS:
                break
            container = received[i]
            if container is kwargs or type(container) not in _MUTABLE:
                continue  # (the request's own keyword dict: a call gets a new one)
            if now - (container is result) > counts[i]:
                n = self.watch_attribute(container)
                if n is not None:
                    self.kept_args += 1
                    kept.append((i, n))
        return kept

    def hold_sent(self, kept: Any, sent: list[Any]) -> None:
        """The judge's side: the request's containers (the tests' own) that the solution kept
        (:meth:`keep_received`), kept in step from now on as attribute reads are."""
        if type(kept) is not tuple:
            raise CodecError("malformed kept containers")
        with self.held_lock:
            for pair in kept:
                if (
                    type(pair) is not tuple or len(pair) != 2
                    or type(pair[0]) is not int or not 0 <= pair[0] < len(sent)
                    or type(sent[pair[0]]) not in _MUTABLE
                    or not self._theirs(pair[1])
                    or (pair[1] in self.held and self.held[pair[1]][0] is not sent[pair[0]])
                ):  # fmt: skip
                    raise CodecError("malformed kept containers")
                i, n = pair
                self._agree(n, sent[i])
                self.taken[n] = self.taken.get(n, 0) + 1
                self.theirs_max = max(self.theirs_max, n)

    def _theirs(self, n: Any) -> bool:
        """Whether ``n`` is a number the other side gives its kept containers."""
        return type(n) is int and n >= 0 and (n & 1) != (self.held_next & 1)

    def _forgotten(self, n: Any) -> bool:
        """Whether ``n``, not in ``held``, is a number a kept container had and this side
        forgot (see :meth:`_forget`): a message about it crossed the forgetting, or the
        other side hands it out again."""
        return (
            type(n) is int and n >= 0 and n not in self.held
            and (n <= self.theirs_max if self._theirs(n) else n < self.held_next)
        )  # fmt: skip

    def _forget(self, n: int) -> None:
        """Drop kept container ``n``: no code of either side can reach its copies any more
        (see :meth:`held_changes`), so ``held`` keeps what is in use, within
        :data:`MAX_HELD`. A number handed out again after this makes a new copy."""
        entry = self.held.pop(n, None)
        self.active.pop(n, None)
        if entry is not None and self.held_ids.get(id(entry[0])) == n:
            del self.held_ids[id(entry[0])]
        if entry is not None and self.trusted and not self._theirs(n):
            self.tests_held -= 1
        self.handed.pop(n, None)
        self.taken.pop(n, None)

    def held_changes(self) -> tuple[Any, ...]:
        """Either side: ``()``, or ``(changes, dropped)`` to send: the kept containers (see
        :meth:`watch_attribute`) changed on this side since the two sides last agreed, as
        ``(number, container, same)`` (:func:`_same_inner`; they are marked as agreed), and
        those this side forgot, as ``(number, times taken)`` (see :meth:`refill_held`).

        Every message asks this, so comparing every kept container item by item each time
        made a check that kept many big ones quadratic (480 dropped objects' 3,000-item
        lists: 79 s). A container nothing but ``held`` refers to (its object is gone, and no
        alias of it is left) cannot change any more: it is compared once more, for what was
        done to it before its last other reference went, and then no longer (told by the
        reference count, :func:`_held_alone`; a container that refers to itself is compared
        each time). It is forgotten here (:meth:`_forget`), and the other side told, which
        forgets its own copy too: no code here can see a change of it any more. So a message
        costs what the containers still in use cost, and ``held`` holds only those."""
        changed: list[tuple[int, Any, tuple[tuple[int, int], ...]]] = []
        dropped: list[tuple[int, int]] = []
        with self.held_lock:
            for n in list(self.active):
                entry = self.held[n]
                alone = _held_alone(entry)
                if _watch_changed(entry[0], entry[1]):
                    changed.append((n, entry[0], _same_inner(entry[0], entry[1])))
                    self._agree(n, entry[0])
                if alone:
                    dropped.append((n, self.taken.get(n, 0)))
                    self._forget(n)
        return (tuple(changed), tuple(dropped)) if changed or dropped else ()

    def refill_held(self, field: Any) -> None:
        """Either side: the other side's changes of kept containers, each refilled in place
        (one this side forgot meanwhile: nothing here can see it), and those whose copy there
        no code can reach any more, forgotten here too, unless this side handed one out again
        since the other side took it (the counts differ: its copy there is seen again)."""
        if field == ():
            return
        if type(field) is not tuple or len(field) != 2 or type(field[1]) is not tuple:
            raise CodecError("malformed change of kept containers")
        changes, dropped = field
        if type(changes) is not tuple or not all(
            type(c) is tuple and len(c) == 3 and (c[0] in self.held or self._forgotten(c[0]))
            for c in changes
        ):
            raise CodecError("malformed change of kept containers")
        for n, value, same in changes:
            found = self.held.get(n)
            if found is not None:
                # (not under the lock: dict keys may be hashed remotely)
                _refill(found[0], value, same)
                self._agree(n, found[0])
        with self.held_lock:
            for pair in dropped:
                if (
                    type(pair) is not tuple or len(pair) != 2 or type(pair[1]) is not int
                    or not (pair[0] in self.held or self._forgotten(pair[0]))
                ):  # fmt: skip
                    raise CodecError("malformed change of kept containers")
                if pair[0] in self.held and self.handed.get(pair[0], 0) == pair[1]:
                    self._forget(pair[0])

    def take_held(self, key: Any, value: Any) -> Any:
        """A reply's value that is the other side's kept container (``key``: its number, or
        ``(number, same)``, see :meth:`hand_out`): this side's one copy of it (refilled with
        ``value``), so that ``stack.items is stack.items`` and an earlier alias of it see what
        it holds now (and the tests' own list, when the solution returns the copy it read of
        it)."""
        n, same = key if type(key) is tuple and len(key) == 2 else (key, ())
        if type(n) is not int or n < 0 or type(value) not in _MUTABLE:
            raise CodecError("malformed kept container")
        with self.held_lock:
            found = self.held.get(n)
            if found is None:
                if not self._theirs(n) and not self._forgotten(n):
                    raise CodecError("malformed kept container")  # one of ours never handed
                self._agree(n, value)  # (a new copy; of one forgotten here: a fresh one)
                self.taken[n] = self.taken.get(n, 0) + 1
                if self._theirs(n):
                    self.theirs_max = max(self.theirs_max, n)
                return value
        held = found[0]
        if type(held) is not type(value):
            raise CodecError("malformed kept container")
        _refill(held, value, same)  # (not under the lock: dict keys may be hashed remotely)
        with self.held_lock:
            self._agree(n, held)
            self.taken[n] = self.taken.get(n, 0) + 1
        return held

    def _holding(self, name: str, held: Any) -> list[dict[str, Any]]:
        """The judge's namespaces where ``name`` still holds ``held``, the value of the
        solution's last put there (none: the tests rebound or deleted it)."""
        return [s for s in self.live_spaces if s.get(name, _UNSET) is held]

    def changed_constants(self) -> tuple[tuple[str, Any, Any], ...]:
        """The judge's side, before each request: the solution's containers the tests read
        and changed in place since the two sides last agreed (``calls.clear()`` between two
        cases), to be refilled in the solution's process as in-process, where the tests change
        the solution's own object. Only in place: a name the tests rebind is theirs from then
        on (never sent: the solution would get the tests' object, their expected answer
        perhaps, under a name of its own choosing)."""
        changed: list[tuple[str, Any, Any]] = []
        for name, held in list(self.live.items()):
            mark = self.live_marks.get(name)
            if mark is None or not _watch_changed(held, mark):
                continue
            if self._holding(name, held):
                changed.append((name, held, _same_inner(held, mark)))
            self.live_marks[name] = _watch_mark(held)
        return tuple(changed)
