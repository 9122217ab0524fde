"""One end of the wire: :class:`_Peer`, the same class on both sides (``trusted``: the judge's):
handles and their release, requests and replies here; its other parts in modules of their own,
its bases: threads' channels (:mod:`._peer_channels`), write-back and kept containers
(:mod:`._peer_kept`), exceptions (:mod:`._peer_exceptions`), stand-ins and mirrored exception
classes (:mod:`._peer_classes`), the solution's output and notices (:mod:`._peer_relay`), the
operations performed (:mod:`._peer_perform`), and the state they share (:mod:`._peer_state`).

Must not: trust what the other side sends (every message is checked; the bounds of :mod:`._bounds`
hold), nor, in the judge, run code the solution wrote.
"""

from __future__ import annotations

import builtins
import contextlib
import os
import sys
import types
import weakref
from collections.abc import Callable
from typing import Any, NoReturn

from ._ambient import _cwd, _note_ambient, _take_ambient
from ._bounds import (
    MAX_CALL_DEPTH,
    MAX_CALLBACKS,
    MAX_HANDLES,
    MAX_MESSAGE,
    MAX_NOTICES,
    CodecError,
    SolutionBroke,
)
from ._codec import _U32
from ._decoder import _Decoder, decode
from ._encoder import _Encoder, encode
from ._exceptions import _exit_code
from ._forwarded import _apply_patches, _drawn_state, _forwarded_patches
from ._kept import _KEEPING_OPS, _apply, _changed, _snapshot, _tests_class_object, _tests_keeping
from ._notices import _hook_logging, _reissue_record
from ._ops import _COMPARISONS, _DERIVED_VALUES, _OPS
from ._patches import _PATCH_COUNT
from ._peer_channels import _RELEASE, _PeerChannels
from ._peer_classes import _PeerClasses
from ._peer_exceptions import _PeerExceptions
from ._peer_kept import _PeerKept
from ._peer_perform import _PeerPerform
from ._peer_relay import _PeerRelay
from ._proxies import _FROM_SOLUTION, _PROXY_TYPES, _FullProxy, _Proxy
from ._resent import SentLists
from ._solution_side import _EMPTY_READS, _JUDGE_INPUT, _SERVING_FRAMES
from ._stand_ins import _mock_signature_set, _settable
from ._values import _MUTABLE


class _Peer(
    _PeerChannels, _PeerKept, _PeerExceptions, _PeerClasses, _PeerRelay, _PeerPerform
):
    """This process's end of the wire: its objects the other side holds (by number), proxies
    for the other side's, and the request/reply loop (requests nest: while waiting for a reply,
    the other side's requests are served).

    ``trusted`` is True in the judge: the other side is the solution, so every message is
    checked, every bound counted, and the solution may do only :data:`_OPS`' True requests on
    the tests' objects.

    One class in several modules (its bases, each a part of it over the state of
    :class:`._peer_state._PeerState`): every part serves every message of both sides, so they
    share one object's state, and each module holds one part."""

    def export(self, obj: Any) -> int:
        with self.export_lock:
            n = self.export_ids.get(id(obj))
            if n is None:
                if len(self.exports) >= MAX_HANDLES:
                    raise CodecError(f"more than {MAX_HANDLES} objects handed out")
                n = self.export_ids[id(obj)] = self.next_export
                self.next_export += 1
                self.exports[n] = obj
            self.sent[n] = self.sent.get(n, 0) + 1
        return n

    def own(self, n: int) -> Any:
        if n not in self.exports:
            raise CodecError("a handle this side never handed out")
        return self.exports[n]

    def proxy(self, n: int, cls: type[_Proxy] | None = None) -> _Proxy:
        """The proxy of the other side's object ``n`` (made at first sight, of ``cls``: the
        :func:`_proxy_class` named as the object's class)."""
        proxies = self.proxies
        found = None if proxies is None else proxies.get(n)
        if found is None:
            found = self._hold(n, lambda: (cls or _FullProxy)(n, self))
        held: _Proxy = found
        return held

    def _hold(self, n: int, make: Callable[[], Any]) -> Any:
        """What stands here for the other side's object ``n``: the one held already, else
        ``make()``'s (a proxy, or a shared object: :meth:`shared`), at most
        :data:`MAX_HANDLES` live at once."""
        with self.hold_lock:
            proxies = self.proxies
            if proxies is None:
                proxies = self.proxies = weakref.WeakValueDictionary()
            found = proxies.get(n)
            if found is None:
                if len(proxies) >= MAX_HANDLES:
                    raise CodecError(
                        f"more than {MAX_HANDLES} handles to the other side's objects"
                    )
                found = proxies[n] = make()
            self.seen[n] = self.seen.get(n, 0) + 1
        return found

    def release(self, n: int, finalizes: bool = False) -> None:
        """Our proxy of the other side's object ``n`` died: release the times we received it
        (sent with our next message, ``D``). ``finalizes``: the release may run the owner's
        code (a ``__del__``), so what was read of its objects no longer holds (``epoch``)."""
        if finalizes:
            self.epoch = next(self._epochs)
        with self.hold_lock:
            answer = self.id_by_number.pop(n, None)
            if answer is not None and self.id_numbers.get(answer) == n:
                del self.id_numbers[answer]
            count = self.seen.pop(n, 0)
            if count:
                self.released[n] = self.released.get(n, 0) + count

    def claim_id(self, n: int, answer: int) -> bool:
        """Record ``answer`` as the ``id`` of the other side's object ``n``; False when another
        of its objects with a live handle has it (two live objects never share an ``id``)."""
        with self.hold_lock:
            holder = self.id_numbers.setdefault(answer, n)
            if holder != n:
                return False
            self.id_by_number[n] = answer
        return True

    def drop(self, body: bytes) -> None:
        """The other side released these objects of ours, each ``(number, times)``: dropped
        once it released every time we sent it. Not freed here but at this side's next
        request (:meth:`bury`): freeing may run their ``__del__``, which may call the other
        side, and this thread may be the one reading the wire for all."""
        if len(body) % _RELEASE.size:
            raise CodecError("malformed release")
        with self.export_lock:
            for n, count in _RELEASE.iter_unpack(body):
                left = self.sent.get(n, 0) - count
                if left > 0:
                    self.sent[n] = left
                    continue
                self.sent.pop(n, None)
                obj = self.exports.pop(n, None)
                if obj is None:
                    continue
                if self.export_ids.get(id(obj)) == n:
                    del self.export_ids[id(obj)]
                self.graveyard.append(obj)

    def bury(self) -> None:
        """Free the objects the other side released (see :meth:`drop`), in this thread."""
        while self.graveyard:
            with self.export_lock:
                dead, self.graveyard = self.graveyard, []
            del dead

    def fail(self, reason: str) -> NoReturn:
        """The wire is unusable: in the judge, a verdict of "failed"; in the solution, exit."""
        if not self.trusted:
            os._exit(1)
        if self.broken is None:
            self.broken = reason
        raise SolutionBroke(reason)

    def request(
        self, op: str, target: _Proxy, args: tuple[Any, ...] = (), /, **kwargs: Any
    ) -> Any:
        """Ask the other side ``op`` on its object ``target``; its answer, returned or raised.
        On this thread's channel (see :meth:`channel`)."""
        # Positional-only: the keywords are the call's own (``twoSum(nums=..., target=9)``).
        return self._request(op, target, args, kwargs)

    def _request(
        self, op: str, target: _Proxy, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Any:
        if self.broken is not None:
            raise SolutionBroke(self.broken)
        if self.computed:
            self.refuse_derived(op, target, args)
        if object.__getattribute__(target, "_owner") is not self:
            raise TypeError("a handle of an earlier check")  # a judge serves one check at a time
        enc = _Encoder(self)
        try:
            enc.out += (op.encode(), b"\0", _U32.pack(object.__getattribute__(target, "_id")))
            # (the tests' main thread only: its messages reach the solution's in the order
            # their slots were decided; another thread's could overtake them)
            enc.cache = self.trusted and self.channel() == 0
            enc.value(args)
            enc.value(kwargs)
            enc.cache = False
            if self.trusted:  # the solution's containers the tests changed (see _Constants)
                enc.value(self.changed_constants() if self.live else ())
                # The tests' recursion limit, when they changed it (in-process it is the
                # solution's too: sys.setrecursionlimit(10_000) before a deep recursion).
                limit = sys.getrecursionlimit()
                enc.value(None if limit == self.limit else limit)
                self.limit = limit
                # The tests' patches in force, when they changed (``patch("random.randint",
                # return_value=3)``): in-process they patch the solution's modules too.
                _note_ambient()
                count = _PATCH_COUNT[0]
                enc.value(None if count == self.patch_count else _forwarded_patches())
                self.patch_count = count
            # The kept containers (the other side's code read as attributes) changed here.
            enc.value(self.held_changes() if self.active else ())
            enc.value(self.backed_changes())
        except CodecError as exc:
            # Not sent: what this message put in the solution's slots never reached them.
            self.sent_lists = SentLists()
            raise TypeError(f"cannot be sent to the other process: {exc}") from None
        except BaseException:
            self.sent_lists = SentLists()
            raise
        sent = enc.force
        try:
            self.send(b"Q", enc.bytes())
            del enc
            kind, value = self.wait(op, sent)
        except (EOFError, OSError, CodecError) as exc:
            self.fail(f"the solution stopped answering or broke the protocol ({exc!r})")
        if self.graveyard:
            self.bury()
        if self.unrelayed:
            self.relay_to_handles()
        if self.warning_raised:  # see reissue
            raised = self.warning_raised.pop(self.channel(), None)
            if raised is not None:
                raise raised
        if self.computed and kind == b"R" and self.is_derived(target):
            difference = self.is_difference(target)
            if op in _DERIVED_VALUES:
                return self.derive(value, difference)
            if op in ("getattr", "type"):  # data: as any handle's; a method, a class: derived
                if type(value) in _PROXY_TYPES:
                    return self.derive(value, difference)
                if callable(value) or difference:
                    raise TypeError(
                        "an attribute of an object the solution computed from a value of "
                        "the tests that is callable but not the solution's object, or of "
                        "its difference with one"
                    )
        return _outcome(kind, value)

    def refuse_derived(self, op: str, target: _Proxy, args: tuple[Any, ...]) -> None:
        """Before a request about a derived object (see :meth:`derive`): refuse what would
        tell a value of it. A comparison of a difference with anything, or of two derived
        objects (``abs(r - e) <= 1e-9 * (abs(r) + abs(e))``: both sides the solution's
        numbers); the text and hash of a difference (``repr(round(solve() - x, 6))``); a
        number format of any derived object (``f"{d:.6f}"``; ``f"{v * 2}"``, with no spec,
        is its str)."""
        if op in _COMPARISONS:
            other = args[0] if args else None
            if (
                self.is_difference(target) or self.is_difference(other)
                or (self.is_derived(target) and self.is_derived(other))
            ):  # fmt: skip
                raise TypeError(
                    "a comparison of objects the solution computed from values of the tests"
                )
        elif op in ("str", "repr", "format", "hash") and self.is_difference(target):
            raise TypeError(
                "the text of what the solution computed as its difference with a value of "
                "the tests"
            )
        elif op == "format" and args and args[0] and self.is_derived(target):
            raise TypeError(
                "a number format of an object the solution computed from a value of the tests"
            )

    def derive(self, result: Any, difference: bool = False) -> Any:
        """``result`` of arithmetic the solution did with a value of the tests (``v * 3``,
        ``3 * v``, ``frac + 1``), or of a value-making operation on such a result: it must be
        an object of the solution's (a handle), which is *derived*. A derived object's truth,
        length, numeric conversions (``int``, ``float``, ``round``...) and unary arithmetic
        (``abs``, ``-``) are again derived objects or refused, and so is arithmetic involving
        one: otherwise ``abs(solve() - 3.14) < 1e-6`` or ``solve() - 42 == 0`` would be a
        comparison with the tests' value that the solution computes (its ``__sub__``
        returning 0); so are its items, iteration, membership and the answers of its methods
        (:data:`_DERIVED_VALUES`: ``(solve() - expected).max() < 1e-9``, or numpy's
        ``__array__`` of it, would be the solution's zeros); an attribute that is callable but
        no handle (a built-in class) is refused, a number format of it too
        (``f"{d:.6f}"``), and it never compares with a dict or a set of the tests
        (:func:`_abc_compare`). Its data attributes and ``str`` are read as any handle's
        (``(v * 3).x == 6``), and a comparison with another of the solution's objects that is
        not derived is the solution's (``v * 3 == Vector(6)``), as between any two of its
        objects; two derived objects do not compare (:meth:`refuse_derived`).

        A *difference* (``difference``: a subtraction with a value of the tests, or anything
        derived from one) tells still less: not its data attributes (``(solve() -
        date(2024, 1, 8)).days == 0``), its text or hash, nor how it compares with anything:
        a difference with the expected value is the test itself."""
        if type(result) not in _PROXY_TYPES:
            raise TypeError(
                "an object of the solution's combined with a value of the tests gives another "
                f"object of the solution's here, not a value ({type(result).__name__})"
            )
        n = object.__getattribute__(result, "_id")
        self.computed.add(n)
        if difference:
            self.differences.add(n)
        return result

    def is_derived(self, obj: Any) -> bool:
        return _marked(self.computed, obj)

    def is_difference(self, obj: Any) -> bool:
        return _marked(self.differences, obj)

    def wait(self, op: str, sent: list[Any]) -> tuple[bytes, Any]:
        """The reply to our request ``op`` (serving the other side's requests meanwhile):
        ``(b"R", value)``, ``(b"E", return value)`` for the end of an iteration, or ``(b"X",
        exception)``. Raised by the caller (:func:`_outcome`), outside its handler of wire
        errors: an ``OSError`` or ``EOFError`` of the other side (``FileNotFoundError`` that
        the tests expect) is an answer, not a broken wire."""
        channel = self.channel()
        while True:
            kind, body = self.next_message(channel)
            if kind == b"Q":
                self.serve(body)
                continue
            if kind == b"U" and self.trusted:
                self.fail(f"a value of the solution cannot be sent: {decode(body)!s:.2000}")
            if kind == b"I" and self.trusted:
                self.serve_input(body)
                continue
            if kind not in (b"R", b"X", b"E"):
                raise CodecError(f"unexpected message {kind!r}")
            dec = _Decoder(body, self, sent)
            value = dec.value()
            for _ in range(dec.length()):
                n = dec.number()
                if n >= len(sent):
                    raise CodecError("write-back to no container")
                _apply(sent[n], dec.value())
            updates = dec.value() if self.trusted else ()
            key = dec.value()
            held = dec.value()
            backed = dec.value()
            kept = dec.value() if self.trusted else ()
            ambient = dec.value() if self.trusted else None
            dec.end()
            if ambient is not None:
                _take_ambient(ambient)
            if updates:
                self.update_constants(updates)
            if held:
                self.refill_held(held)
            if backed:
                self.refill_backed(backed)
            if kept:
                self.hold_sent(kept, sent)
            if key is not None:
                if (op != "getattr" and op not in _KEEPING_OPS) or kind != b"R":
                    raise CodecError("a kept container for a request that returns none")
                value = self.take_held(key, value)
            self.answered += 1
            if kind == b"R":
                return kind, value
            if kind == b"E":
                if op not in ("next", "anext"):
                    raise CodecError("end of iteration for a request that is not next")
                return kind, value
            exc = self.exception(value)
            if self.trusted:
                with contextlib.suppress(TypeError):  # (a class with __slots__: no __dict__)
                    vars(exc)[_FROM_SOLUTION] = True
            return kind, exc

    def notify(self, kind: bytes, value: tuple[Any, ...]) -> None:
        """The solution's side: a warning (``W``) or log record (``G``) it issued while the
        judge may be listening, sent at once (after what it printed before it)."""
        if self.notices >= MAX_NOTICES:
            return
        self.notices += 1
        enc = _Encoder(self)
        try:
            enc.value(value)
        except CodecError:
            return
        self.send(kind, enc.bytes())

    def reissue(self, kind: bytes, body: bytes, channel: int = 0) -> None:
        """The judge's side: the solution issued a warning or a log record during the tests;
        issued again here, so that the tests' filters and handlers (``pytest.warns``,
        ``warnings.catch_warnings(record=True)``, ``caplog``, ``assertLogs``) see it as
        in-process. Only values: a message, a line, a level, names; the category a built-in
        warning class or the judge's class for the solution's own (:meth:`mirror`)."""
        dec = _Decoder(body, self)
        value = dec.value()
        dec.end()
        self.notices += 1
        if self.notices > MAX_NOTICES:
            return
        if kind == b"W":
            self._reissue_warning(value, channel)
        else:
            _reissue_record(value)

    def admit(self) -> None:
        """Count one request of the other side (a request on our objects, a read of the
        tests' stdin) against the bounds."""
        self.served += 1
        if self.trusted and self.served > MAX_CALLBACKS:
            self.fail(f"the solution made more than {MAX_CALLBACKS} requests of the tests")
        # The solution's side allows twice as deep, so that the judge's bound (with its
        # reason) is the one met.
        if self.depth >= (MAX_CALL_DEPTH if self.trusted else 2 * MAX_CALL_DEPTH):
            self.fail(f"requests nested more than {MAX_CALL_DEPTH} deep")

    def serve(self, body: bytes) -> None:
        """Serve one request of the other side and send the reply."""
        if self.graveyard:
            self.bury()
        self.admit()
        op_bytes, sep, rest = body.partition(b"\0")
        op = op_bytes.decode("ascii", "replace")
        if not sep or op not in _OPS:
            raise CodecError("unknown request")
        dec = _Decoder(rest, self)
        target = self.own(dec.number())
        args = dec.value()
        kwargs = dec.value()
        received = dec.refs[:]  # the containers of the request: written back if changed
        pushed = dec.value() if not self.trusted else ()
        limit = dec.value() if not self.trusted else None
        patches = dec.value() if not self.trusted else None
        held = dec.value()
        backed = dec.value()
        dec.end()
        if held:
            self.refill_held(held)
        if backed:
            self.refill_backed(backed)
        if limit is not None:
            if type(limit) is not int:
                raise CodecError("malformed recursion limit")
            with contextlib.suppress(ValueError, RecursionError, OverflowError):  # below the depth
                sys.setrecursionlimit(min(limit + _SERVING_FRAMES[0], 2**31 - 1))
        if patches is not None:
            _apply_patches(self, patches)
        if not self.logging_hooked and not self.trusted and "logging" in sys.modules:
            _hook_logging(self)  # imported by a call (its first record is this call's)
        if type(args) is not tuple or type(kwargs) is not dict:
            raise CodecError("malformed request")
        if not all(type(k) is str for k in kwargs):
            raise CodecError("malformed keyword arguments")
        if pushed:
            if self.constants is None:
                raise CodecError("a change of values the judge never asked for")
            self.constants.refill(pushed)
        snaps = [_snapshot(c) for c in received]
        # (Only when the request holds a container besides its keyword dict: most hold none.)
        own = len(received) > 1 or (len(received) == 1 and received[0] is not kwargs)
        counts = self.refcounts(received) if own and not self.trusted else []
        kind = b"R"
        self.depth += 1
        try:
            if (
                self.trusted
                and not _OPS[op]
                and op != "record"  # (checked where it is made)
                and not (op == "signature" and type(target) is types.FunctionType)
                and not _settable(op, target, args)
                and not _mock_signature_set(op, target, args)
                and not (op == "type" and _tests_class_object(target))
            ):
                raise TypeError(f"the tests' objects do not allow {op}")
            result = self.perform(op, target, args, kwargs)
        except StopIteration:
            kind, result = (
                (b"E", None) if op in ("next", "anext") else (b"X", ("StopIteration", ""))
            )
            if kind == b"E":
                result = getattr(sys.exc_info()[1], "value", None)  # a generator's return
        except Exception as exc:
            kind, result = b"X", self.describe(exc)
        except SystemExit as exc:
            if self.trusted:
                if self.failed is None:
                    self.failed = "a callback of the tests raised SystemExit"
                raise
            # The solution's ``sys.exit(2)`` in a call: raised in the tests, as in-process
            # (``pytest.raises(SystemExit)``); uncaught there, it fails the check (see
            # _solution_exit), never ends the tests.
            kind, result = b"X", ("SystemExit", "", _exit_code(exc.code))
        except BaseException as exc:
            # A SystemExit (or the like) of the tests' code in a callback the solution made:
            # never taken for the tests' own end (see judge_check), always a failed check.
            if self.trusted and self.failed is None:
                self.failed = f"a callback of the tests raised {type(exc).__name__}"
            raise
        finally:
            self.depth -= 1
        back = {id(c): i for i, c in enumerate(received)}
        changed = [i for i, c in enumerate(received) if _changed(c, snaps[i])]
        key = None
        kept: list[tuple[int, int]] = []
        if kind == b"R" and (
            op == "getattr"
            # a container the solution still holds (``return self._items``, a global, a
            # closure's): more references than this frame's and getrefcount's own
            or (op in _KEEPING_OPS and type(result) in _MUTABLE
                and sys.getrefcount(result) > 2)
        ) and (not self.trusted or _tests_keeping(op, target, args)):  # fmt: skip
            key = self.hand_out(result)
        if counts:
            kept = self.keep_received(received, counts, result, kwargs)
        try:
            reply = self.reply(result, back, received, changed, key, kept)
            if len(reply) >= MAX_MESSAGE:
                raise CodecError(f"a reply of {len(reply)} bytes (at most {MAX_MESSAGE})")
        except CodecError as exc:
            if not self.trusted:  # the judge sees it as a failure of the solution
                self.send(b"U", encode(f"{exc}"[:2000]))
                return
            kind, reply = b"X", self.reply(("TypeError", f"{exc}"), back, received, changed)
        self.send(kind, reply)

    def serve_input(self, body: bytes) -> None:
        """The judge's side: the solution read its stdin (or called ``input()``) while serving
        the tests: it reads what the tests gave it, as in-process, where they patch
        ``builtins.input`` (``unittest.mock.patch``) or ``sys.stdin`` (an ``io.StringIO``);
        where they patched neither, its stdin is empty (the judge's own is never read)."""
        self.admit()
        request = decode(body)
        if (
            type(request) is not tuple
            or len(request) != 2
            or request[0] not in ("input", "read", "readline", "readlines")
            or type(request[1]) is not (str if request[0] == "input" else int)
        ):
            raise CodecError("malformed read of stdin")
        method, arg = request
        kind: bytes = b"R"
        result: Any = None
        self.depth += 1  # the tests' input may call the solution, which may read again
        try:
            patched = sys.stdin is not self.stdin
            if method == "input":
                if builtins.input is _JUDGE_INPUT and not patched:
                    raise EOFError("EOF when reading a line")
                # The tests' input (a mock) or the built-in reading their stdin, its prompt
                # written to their sys.stdout.
                result = builtins.input(arg)
            else:
                result = getattr(sys.stdin, method)(arg) if patched else _EMPTY_READS[method]
        except Exception as exc:
            kind, result = b"X", self.describe(exc)
        except BaseException as exc:
            # A SystemExit of the tests' input or stdin: as in a callback (see serve).
            if self.failed is None:
                self.failed = f"the tests' stdin raised {type(exc).__name__}"
            raise
        finally:
            self.depth -= 1
        self.send(kind, self.reply(result, {}, [], []))

    def ask_judge(self, method: str, arg: str | int) -> Any:
        """The solution's side: read the tests' stdin (see :meth:`serve_input`)."""
        try:
            self.send(b"I", encode((method, arg)))
            kind, value = self.wait("stdin", [])
        except (EOFError, OSError, CodecError):
            os._exit(1)
        return _outcome(kind, value)

    def reply(
        self, result: Any, back: dict[int, int], received: list[Any], changed: list[int],
        key: int | tuple[int, Any] | None = None, kept: list[tuple[int, int]] | None = None,
    ) -> bytes:  # fmt: skip
        enc = _Encoder(self, back)
        enc.value(result)
        enc.length(len(changed))
        for i in changed:
            enc.length(i)
            enc.value(received[i], 0, content=True)
        if not self.trusted:  # the solution's watched values that changed (see _Constants)
            enc.value(self.constants.updates() if self.constants is not None else ())
        # The kept containers (see watch_attribute): this result's number, the others changed
        # here; the solution's side: the request's containers it kept (see keep_received)
        enc.value(key)
        enc.value(self.held_changes() if self.active else ())
        enc.value(self.backed_changes())
        if not self.trusted:
            enc.value(tuple(kept) if kept else ())
            enc.value(self.ambient_changes() if self.back is not None or self.drawn_known else None)
        return enc.bytes()

    def ambient_changes(self) -> tuple[Any, ...] | None:
        """The solution's side: its working directory, when it changed and the judge follows
        it, the followed environment variables that changed, and the labels of the generators
        the judge seeded whose state changed (:data:`_SEEDED`: drawn from, or seeded by the
        solution), since the last reply (see :data:`_AMBIENT_BACK`); None when nothing did."""
        drawn = []
        for label, known_state in list(self.drawn_known.items()):
            state = _drawn_state(label)
            if state != known_state:
                self.drawn_known[label] = state
                drawn.append(label)
        if self.back is None:
            return (None, (), tuple(drawn)) if drawn else None
        watch_cwd, names = self.back
        known_cwd, known = self.back_known
        cwd = _cwd() if watch_cwd else None
        environ = os.environ
        changed = tuple(
            (name, environ.get(name)) for name in names if environ.get(name) != known.get(name)
        )
        if cwd == known_cwd and not changed and not drawn:
            return None
        known.update(changed)
        self.back_known = (cwd, known)
        return (cwd if cwd != known_cwd else None, changed, tuple(drawn))


def _outcome(kind: bytes, value: Any) -> Any:
    """What :meth:`_Peer.wait` got, returned or raised."""
    if kind == b"R":
        return value
    if kind == b"E":
        raise StopIteration if value is None else StopIteration(value)
    raise value


def _marked(numbers: set[int], obj: Any) -> bool:
    """Whether ``obj`` is a proxy whose number is in ``numbers`` (see _Peer.derive)."""
    return (
        bool(numbers) and type(obj) in _PROXY_TYPES
        and object.__getattribute__(obj, "_id") in numbers
    )  # fmt: skip
