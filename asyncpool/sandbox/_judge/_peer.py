"""One end of the wire: :class:`_Peer`, the same class on both sides (``trusted``: the judge's):
handles and their release, requests and replies, write-back and kept containers, threads' channels,
the solution's output and notices, stand-ins and mirrored exception classes.

Must not: trust what the other side sends (every message is checked; the bounds of :mod:`._bounds`
hold), nor, in the judge, run code the solution wrote.
"""

from __future__ import annotations

import _thread
import builtins
import collections
import contextlib
import importlib
import operator
import os
import struct
import sys
import types
import warnings
import weakref
from collections.abc import Callable, MutableMapping
from itertools import count as _count  # bound once: the tests' patches are forwarded
from socket import SHUT_RDWR as _SHUT_RDWR  # bound once: the tests may patch socket
from socket import socket as _Socket
from threading import Semaphore as _Semaphore  # bound once: the tests may patch threading
from threading import Thread as _Thread
from threading import current_thread as _current_thread
from typing import Any, NoReturn

from ._ambient import _cwd, _note_ambient, _take_ambient
from ._bounds import (
    MAX_CALL_DEPTH,
    MAX_CALLBACKS,
    MAX_CHANNELS,
    MAX_HANDLES,
    MAX_MESSAGE,
    MAX_NOTICES,
    MAX_RELAYED,
    MAX_TEXTS,
    CodecError,
    SolutionBroke,
    SolutionError,
)
from ._codec import _U32, _Decoder, _Encoder, decode, encode
from ._described import _PLAIN_TYPES, identity_hashed, note_asked
from ._exceptions import (
    _CAUSED,
    _EXCEPTION_GROUP,
    _GROUPED,
    _OWN_CLASS,
    _PASSED_THROUGH,
    _PASSED_THROUGH_CLASSES,
    _RAISED,
    MAX_CAUSES,
    MAX_DOCS,
    MAX_GROUPED,
    MAX_RAISED,
    _exception_class_spec,
    _exception_detail,
    _exit_code,
    _imported_by_tests,
    _Mirror,
    _mirror_str,
    _named_class,
    _new_exception,
    _Numbered,
    _passed_through_base,
    _plain_exit_code,
    _solution_exception,
    _solution_exit,
    _standard_exception_class,
    _tests_exception_attributes,
    _TextReference,
)
from ._forwarded import _SPIES, _apply_patches, _drawn_state, _forwarded_patches
from ._framing import _recv_word, _send
from ._guard import _workdir_texts
from ._kept import (
    _KEEPING_OPS,
    MAX_BACKED,
    MAX_HELD,
    MAX_KEPT_ARGS,
    MAX_TESTS_HELD,
    _apply,
    _backed_changed,
    _backed_mark,
    _changed,
    _held_alone,
    _mutable_base,
    _refcounts,
    _refill,
    _refill_backed,
    _same_inner,
    _snapshot,
    _tests_class_object,
    _tests_keeping,
    _watch_changed,
    _watch_mark,
    earn,
    reset_big_budget,
)
from ._notices import _hook_logging, _reissue_record
from ._ops import (
    _BINARY,
    _COMPARISONS,
    _DERIVED_VALUES,
    _HIDDEN,
    _INPLACE,
    _INTERNALS,
    _NAMES_SHOWN,
    _OPS,
    _REFLECTED,
    _UNARY,
)
from ._patches import _PATCH_COUNT
from ._proxies import (
    _FROM_SOLUTION,
    _HANDLE,
    _PROXY_TYPES,
    _abc_contents,
    _anext,
    _describe_signature,
    _describe_tests_function,
    _FullProxy,
    _handle_getattr,
    _handle_id,
    _method_of,
    _Proxy,
    _run_coroutine,
    _running_loop,
    _tests_function,
)
from ._resent import SLOTS, SentLists
from ._solution_side import _EMPTY_READS, _JUDGE_INPUT, _SERVING_FRAMES, _Constants, _flush_streams
from ._stand_ins import (
    _STAND_INS,
    _members,
    _mock_signature_set,
    _settable,
    _shared,
    _shared_class,
    _stand_in_class,
)
from ._tests_namespace import _for_tests
from ._values import _BUILTIN_TYPES, _MUTABLE, _UNSET, MAX_MADE_CLASSES, _deque, _mutable_value

#: A release (``D``): a number of the receiver's object and how many times it was received.
_RELEASE = struct.Struct(">II")
#: A message's word (see :meth:`_Peer.channel`): its channel, and a bit saying that its sender
#: has threads of its own besides those serving the other side's channels (see
#: :meth:`_Peer.word`).
_CHANNEL_MASK = 0x7FFF_FFFF
_THREADED = 0x8000_0000
_SPARE = -1  # the inbox of the thread that only reads (see _Peer.start_spare)
# Bound once: the tests may patch ``threading`` and ``_thread`` (``mock.patch``).
_allocate_lock = _thread.allocate_lock
_start_thread = _thread.start_new_thread
_thread_count = _thread._count
_Local = _thread._local
_RLock = _thread.RLock
#: Most bytes of a thread's name sent with its channel (see _Peer.channel).
MAX_THREAD_NAME = 256


def _current_thread_name() -> str:
    """This thread's name (``threading``'s; a thread it did not start has a dummy's)."""
    try:
        return str(_current_thread().name)
    except Exception:
        return ""


class _ChannelTicket:
    """Held in a thread's locals while it has a channel (see :meth:`_Peer.channel`): closes
    the channel when the thread ends (its locals go with it)."""

    __slots__ = ("number", "peer")

    def __init__(self, peer: _Peer, number: int) -> None:
        self.peer = peer
        self.number = number

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self.peer.close_channel(self.number)


class _Peer:
    """This process's end of the wire: its objects the other side holds (by number), proxies
    for the other side's, and the request/reply loop (requests nest: while waiting for a reply,
    the other side's requests are served).

    ``trusted`` is True in the judge: the other side is the solution, so every message is
    checked, every bound counted, and the solution may do only :data:`_OPS`' True requests on
    the tests' objects."""

    def __init__(self, fd: int, trusted: bool) -> None:
        self.fd = fd
        self.trusted = trusted
        reset_big_budget()  # one peer per check on each side: the check's own budget
        self.exports: dict[int, Any] = {}
        self.export_ids: dict[int, int] = {}
        self.next_export = 0
        # Proxies live as long as the tests (or the solution) hold them; the numbers of those
        # that died are sent with the next message ("D"), so the owner drops its objects.
        # Made at the first proxy: the solution's side makes none unless the tests hand it an
        # object, and a WeakValueDictionary in a freshly forked solution costs ~100 µs of
        # copy-on-write faults (24 pages of the weakref machinery written).
        self.proxies: weakref.WeakValueDictionary[int, Any] | None = None
        # Counted, because threads cross: each side counts the times it sent each of its
        # objects (``sent``) and received each of the other's (``seen``); a release carries
        # the count its proxy saw, and the owner drops the object only when every time it sent
        # it is released (a thread may send it again while the release is on its way).
        self.released: dict[int, int] = {}
        self.sent: dict[int, int] = {}
        self.seen: dict[int, int] = {}
        self.export_lock = _allocate_lock()
        self.hold_lock = _RLock()  # (re-entered by a proxy's __del__ during a make())
        # Objects of ours the other side released, kept until this side serves its next
        # request: their ``__del__`` may call the other side, which the thread reading the
        # wire cannot do (see drop).
        self.graveyard: list[Any] = []
        #: The judge's side: the other side's objects that came out of arithmetic with a value
        #: of the tests (see :meth:`derive`), by number.
        self.computed: set[int] = set()
        #: ... of which those that came out of a subtraction with one (see :meth:`derive`).
        self.differences: set[int] = set()
        self.items: dict[int, int] = {}  # items taken per iterator of the other side
        #: Plain named tuple classes of this side whose values it sent, by name and fields:
        #: a value of one that comes back is of that class again (see _Decoder._namedtuple).
        self.namedtuples: dict[tuple[str, tuple[str, ...]], type] = {}
        # Value-backed handles by number, for the peer's life: identity holds (an enum member
        # is one object, ``f() is Color.RED``) though int, bytes and tuple subclasses cannot be
        # weakly referenced; each still counts against MAX_HANDLES through its proxy.
        self.backeds: dict[int, Any] = {}
        #: Value-backed objects of a mutable base kept in step with the other side's copy
        #: (:meth:`backed_changes`): this side's it sent (``class Stack(list)``, pushed to by
        #: its own methods), and the other side's held here, each ``number -> (object, mark)``.
        self.backed_mine: dict[int, tuple[Any, Any]] = {}
        self.backed_theirs: dict[int, tuple[Any, Any]] = {}
        # The judge's side: the recursion limit and the count of the tests' patches the
        # solution was last told of (see request).
        self.limit = sys.getrecursionlimit()
        #: Big flat lists of the tests' requests kept on the solution's side (see _resent):
        #: the judge's record of what each slot holds, the solution's slots.
        self.sent_lists = SentLists()
        self.list_slots: list[Any] = [None] * SLOTS
        self.patch_count = 0
        # The solution's side: what of its ambient state the judge follows (see _AMBIENT_BACK):
        # whether the working directory, which environment variables; and their last values.
        self.back: tuple[bool, tuple[str, ...]] | None = None
        self.back_known: tuple[str | None, dict[str, str | None]] = (None, {})
        # The solution's side: the number of each generator's state it last set (_SEEDED).
        self.seeded: dict[str, str] = {}
        # ... and each such generator's state as it last set or reported it (ambient_changes).
        self.drawn_known: dict[str, Any] = {}
        # The solution's side: its namespace, and what the judge's patches replaced there and
        # in other modules' (see _apply_patches).
        self.namespace: dict[str, Any] = {}
        self.patched: list[tuple[MutableMapping[str, Any], str, Any]] = []
        # The judge's classes for the solution's exception classes, by number (see mirror).
        self.mirrors: dict[int, type] = {}
        #: The judge's: the tests' source, whose imports :meth:`mirror` may make early.
        self.tests = ""
        # The judge's stand-ins for the solution's classes the tests derived from, by number.
        self.stand_ins: dict[int, type] = {}
        self.stand_in_bases: dict[type, tuple[_Proxy, ...]] = {}
        self.stand_in_of: dict[type, _Proxy] = {}
        # The solution's side: its classes for the tests' classes derived from its own.
        self.shared_classes: dict[tuple[int, int, tuple[str, ...]], type] = {}
        # Threads (see channel): this thread's channel and nesting depth; one message written
        # at a time (``mutex``); under ``state``, what was read for each channel and not yet
        # taken, whether a thread is reading the wire for all, the threads asleep until
        # their channel's next message, and why the wire ended.
        self.local = _Local()
        self.local.channel = 0
        self.mutex = _allocate_lock()
        self.state = _allocate_lock()
        self.inbox: dict[int, collections.deque[tuple[bytes, bytes]]] = {0: _deque()}
        self.reading = False
        self.waiting: dict[int, Any] = {}
        self.closed: BaseException | None = None
        self.next_channel = 2 if trusted else 1
        self.slots = _Semaphore(MAX_CHANNELS)  # our channels open at once
        # The other side's channels: the threads serving them, those waiting for a thread
        # (past the thread limit), the names of their threads (see _name).
        self.serving: dict[int, Any] = {}
        self.pending: list[tuple[int, str]] = []
        self.names: dict[int, str] = {}
        self.threads = 0  # running, started here: one per channel served, the spare
        self.threads_started = 0
        self.spare = False
        # This side's event loops going on while they await the other side's coroutines, and
        # the futures of such awaits a Task steps (by the coroutine handle's id).
        self.awaiting: dict[Any, int] = {}
        self.stepped: dict[int, Any] = {}
        # The judge's side: the solution's texts that could be code (a call, a decorator), for
        # the tests' eval/exec (see _guarded_eval), and the solution's evaluator (a handle).
        self.texts: list[str] = []
        self.text_size = 0
        self.texts_overflow = False
        self.evaluator: Any = None
        # The solution's warnings and log records (see notify, reissue): how many, the
        # registry of the judge's "default" warnings filter for them, and a warning the tests'
        # filters turned into an exception, raised when the call that issued it returns (the
        # call on the channel of the thread that issued it).
        self.notices = 0
        self.warning_registry: dict[Any, Any] = {}
        self.warning_raised: dict[int, Exception] = {}
        # The judge's side: the solution's output for a stream of the tests' that is an object
        # of the solution's (``redirect_stdout(its_buffer)``), written after the call.
        self.unrelayed: list[tuple[Any, str]] = []
        self.logging_hooked = False
        self.served = 0
        self.answered = 0
        #: Changes with every message sent or read, either way, and with the release of a
        #: handle whose drop may run the owner's code: what a handle's plain attributes were
        #: read at (see _described._handle_extras) holds while it has not changed. Each change
        #: takes a new number of ``_epochs`` (an atomic step): threads that change it at once
        #: never leave it at a value a handle was read at since.
        self._epochs = _count(1)
        self.epoch = 0
        #: The ``id`` of each of the other side's objects with a live handle here, once asked
        #: (see _proxies._handle_id), both ways.
        self.id_numbers: dict[int, int] = {}
        self.id_by_number: dict[int, int] = {}
        # The judge's side: the tests' exceptions told to the solution, by number (_RAISED);
        # the solution's side: those it made of them, by id: (the exception, its number, its
        # args as made).
        self.raised = _Numbered(MAX_RAISED)
        # The judge's side: the tests' texts the solution holds by number (_TestsText).
        self.docs = _Numbered(MAX_DOCS)
        self.from_tests: dict[int, tuple[BaseException, int, tuple[Any, ...]]] = {}
        self.broken: str | None = None
        self.failed: str | None = None  # an assertion of the tests failed in a callback
        # The solution's side: its output since the last message, to be copied to the judge.
        self.output: list[tuple[int, str]] = []
        self.output_size = 0
        # The judge's side: bytes of the solution's output received, and the streams the tests'
        # namespace started with (output is written only where the tests redirected them). The
        # solution's side: the streams its process started serving with (flushed with output).
        self.relayed = 0
        self.streams: tuple[Any, Any] = (sys.stdout, sys.stderr)
        self.stdin: Any = sys.stdin
        # The solution's side: the values the judge asked for, watched (see _Constants).
        self.constants: _Constants | None = None
        # The judge's side: each solution value asked for, as put in the namespaces of
        # ``live_spaces`` (the tests' and the ``solution`` module's), kept current with the
        # solution's updates while the tests have not rebound the name themselves.
        self.live: dict[str, Any] = {}
        self.live_spaces: list[dict[str, Any]] = []
        #: name -> what its container held when the two sides last agreed (see _watch_mark).
        self.live_marks: dict[str, Any] = {}
        #: Containers one side's objects hold that the other side's code read as an
        #: attribute (``stack.items``, ``node.children``), by number, with what they held when
        #: the two sides last agreed: on each side its own object (see :meth:`watch_attribute`).
        #: The solution numbers those it hands out even, the judge odd.
        self.held: dict[int, tuple[Any, Any]] = {}
        self.held_next = 1 if trusted else 0
        #: The number of each, by its ``id`` (``held`` keeps it alive), and how many of them
        #: are containers of the tests' requests the solution kept (see keep_received).
        self.held_ids: dict[int, int] = {}
        self.kept_args = 0
        #: Those compared at each message (see held_changes); how many times this side handed
        #: each out (sent its number with its value) and took each from the other side; the
        #: highest number of the other side's it took; and the lock that makes each of these
        #: steps one.
        self.active: dict[int, None] = {}
        self.handed: dict[int, int] = {}
        self.taken: dict[int, int] = {}
        self.theirs_max = -1
        #: The judge's side: how many of the tests' containers are kept (MAX_TESTS_HELD).
        self.tests_held = 0
        self.held_lock = _RLock()

    # objects

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

    def mirror(self, n: int, name: str, base: str, bases: tuple[Any, ...]) -> type:
        """The judge's class standing for the solution's exception class ``n`` (made once per
        check, at most :data:`MAX_MADE_CLASSES`): named as it, derived from the judge's classes
        for its own bases and from the built-in ones among :data:`_PASSED_THROUGH` (else from
        ``base``, the nearest of those), so that ``except InvalidInput`` in the tests catches
        what the solution raised, and ``except AppError`` its subclasses, as in-process."""
        mirrors = self.mirrors
        found = mirrors.get(n)
        if found is not None:
            return found
        if len(mirrors) >= MAX_MADE_CLASSES:
            raise CodecError(f"more than {MAX_MADE_CLASSES} exception classes")
        parents: tuple[type, ...] = ()
        for b in bases:
            if type(b) is tuple:  # a class of a library, by name: the judge's own
                found = _standard_exception_class(*b)
                if found is None and _imported_by_tests(b[0], self.tests):
                    # made before the tests ran (a name of the solution's): their import now
                    with contextlib.suppress(Exception):
                        importlib.import_module(b[0])
                    found = _standard_exception_class(*b)
                parents += () if found is None else (found,)
            elif (type(b) is type and b in _PASSED_THROUGH_CLASSES) or self.mirrored(b):
                parents += (b,)
        namespace = {
            "__module__": "solution", "__qualname__": name, "__getattr__": _handle_getattr,
            "__str__": _mirror_str, _HANDLE: self.proxy(n),
        }  # fmt: skip
        try:
            made = _Mirror(name, parents or (_PASSED_THROUGH[base],), namespace)
        except TypeError:  # bases repeated, or whose layouts or orders conflict
            made = _Mirror(name, (_PASSED_THROUGH[base],), namespace)
        mirrors[n] = made
        return made

    def stand_in(self, proxy: _Proxy) -> type:
        """The judge's class standing for the solution's class ``proxy`` as a base of a class of
        the tests (made once per check, at most :data:`MAX_MADE_CLASSES`): its methods,
        ``staticmethod``s, ``classmethod``s, properties and ``__init__``, ``__repr__``,
        ``__str__``, ``__len__``, ``__iter__`` and ``__getitem__`` call the solution's with the
        tests' instance (or class) as a handle; its other values are the class's own; its
        abstract methods are abstract here too (``abc.ABCMeta``: an incomplete subclass cannot
        be instantiated). Never its comparisons, ``__hash__``, ``__bool__`` or ``__exit__``:
        how the tests' objects compare and whether their failures pass stays the tests'."""
        n = object.__getattribute__(proxy, "_id")
        found = self.stand_ins.get(n)
        if found is not None:
            return found
        if len(self.stand_ins) + len(self.mirrors) >= MAX_MADE_CLASSES:
            raise TypeError(f"more than {MAX_MADE_CLASSES} classes of the solution")
        described = self.request("members", proxy)
        made = _stand_in_class(described, proxy)
        bases = tuple(b for b in described[3] if type(b) in _PROXY_TYPES)
        self.stand_ins[n] = made
        self.stand_in_of[made] = proxy
        # the classes of its MRO, by number (issubclass(Mine, Base) for the solution's Base)
        self.stand_in_bases[made] = bases
        _STAND_INS.add(made)
        return made

    def shared_base(self, kind: type) -> _Proxy | None:
        """The judge's side: the solution's class that ``kind`` (a class of the tests) derives
        from through its stand-in, if any."""
        for k in kind.__mro__:
            found = self.stand_in_of.get(k)
            if found is not None:
                return found
        return None

    def shared(self, n: int, spec: Any) -> Any:
        """The solution's side: the judge's object ``n``, an instance of a tests' class derived
        from the solution's class ``cls``: an instance of a class of the solution's made for
        it (:func:`_shared_class`), so that the solution's methods run on it as on their own
        (``isinstance(self, Shape)``, ``super()``, ``type(self)(...)``), while its state and
        the tests' own attributes stay in the judge (every read and write a request)."""
        if (
            type(spec) is not tuple
            or len(spec) != 4
            or not isinstance(spec[0], type)
            or type(spec[1]) not in _PROXY_TYPES
            or type(spec[2]) is not str
            or type(spec[3]) is not tuple
            or not all(type(name) is str and name.isidentifier() for name in spec[3])
        ):
            raise CodecError("malformed shared object")
        found = None if self.proxies is None else self.proxies.get(n)
        if found is not None:
            return found
        try:
            local = self.shared_class(*spec)
        except TypeError:  # a class that cannot be derived from here (a layout, a final)
            return self.proxy(n)

        def make() -> Any:
            made: Any = object.__new__(local)
            object.__setattr__(made, "_id", n)
            object.__setattr__(made, "_owner", self)
            return made

        try:
            return self._hold(n, make)
        except TypeError:  # a built-in base (dict): object.__new__ refuses it, a plain handle
            return self.proxy(n)

    def shared_class(
        self, cls: type, tests_class: Any, class_name: str, names: tuple[str, ...],
        kwargs: dict[str, Any] | None = None,
    ) -> type:  # fmt: skip
        """The solution's side: the class of its own made for the tests' class ``tests_class``
        (a handle) derived from ``cls`` (:func:`_shared_class`), once per check: made when the
        tests' class is (see :func:`_stand_in_class`), so that ``cls.__init_subclass__`` runs
        then, with the tests' class keywords, as in-process (a registry of subclasses)."""
        key = (id(cls), object.__getattribute__(tests_class, "_id"), names)
        local = self.shared_classes.get(key)
        if local is None:
            local = _shared_class(cls, tests_class, class_name, names, kwargs or {})
            self.shared_classes[key] = local
        return local

    def mirrored(self, cls: Any) -> bool:
        """Whether ``cls`` is one of this check's :meth:`mirror` classes."""
        proxy = vars(cls).get(_HANDLE) if type(cls) is _Mirror else None
        return proxy is not None and self.mirrors.get(object.__getattribute__(proxy, "_id")) is cls

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

    def send(self, kind: bytes, body: bytes) -> None:
        """One message on this thread's channel, after the release of the proxies that died
        (in the same write) and, on the solution's side, after what it printed since the last
        one (``O``)."""
        self.send_on(self.channel(), kind, body)

    def send_on(self, channel: int, kind: bytes, body: bytes) -> None:
        """:meth:`send` on ``channel``."""
        if self.output:
            self.flush_output()
        self.epoch = next(self._epochs)
        earn(len(body))
        word = self.word(channel)
        with self.mutex:
            if self.released:
                with self.hold_lock:
                    released, self.released = self.released, {}
                dead = b"".join(_RELEASE.pack(n, c) for n, c in sorted(released.items()))
                _send(self.fd, b"D", dead, kind, body, word=word)
            else:
                _send(self.fd, kind, body, word=word)

    def flush_output(self) -> None:
        """The solution's side: send what it printed (``O``: stream number and text), once it
        is in its process's own output too (:func:`_flush_streams`)."""
        _flush_streams(self.streams)
        word = self.word(0)  # (read by whichever thread reads: see next_message)
        with self.mutex:
            output, self.output, self.output_size = self.output, [], 0
            for stream in (1, 2):
                text = "".join(t for n, t in output if n == stream)
                if text:
                    _send(self.fd, b"O", encode((stream, text)), word=word)

    # threads

    def channel(self) -> int:
        """This thread's channel: the number every message of its exchanges carries.

        Why: in-process, a callback that a thread of the solution calls runs in that thread,
        and a method that a thread of the tests calls runs in that one. So a thread's
        exchange (its request, the requests of the other side it serves meanwhile, the reply)
        is that thread's on both sides: the other side serves each channel in a thread of its
        own, started at the channel's first message and named as the thread it stands for
        (:meth:`serve_channel`). The tests' threads calling the solution (LeetCode's "Print
        in Order": each waits on an event another one's call sets) and the solution's threads
        calling the tests' functions run concurrently, block one another and own the tests'
        locks as they would in-process; over one shared exchange they deadlocked, or shared
        the ownership of an ``RLock``.

        The two main threads (the tests', the one serving them) are channel 0; another thread
        takes a new number of its side's (the judge's even, the solution's odd) at its first
        message. When it ends its channel is closed (:class:`_ChannelTicket`), and the thread
        serving it on the other side ends too: a later thread is served by a new one, with
        its own thread-local state, as in-process. At most :data:`MAX_CHANNELS` are open at
        once; a thread past them waits for one to close."""
        try:
            number: int = self.local.channel
        except AttributeError:
            number = self._new_channel()
        return number

    def _new_channel(self) -> int:
        self.slots.acquire()  # (released when the thread ends: see _ChannelTicket)
        with self.state:
            number = self.next_channel
            if number > _CHANNEL_MASK - 2:
                self.slots.release()
                raise RuntimeError("no channel left for another thread")
            self.next_channel += 2
            self.inbox[number] = _deque()
        self.local.channel = number
        self.local.ticket = _ChannelTicket(self, number)
        name = _current_thread_name()
        self.send_on(number, b"N", name.encode("utf-8", "replace")[:MAX_THREAD_NAME])
        return number

    def close_channel(self, number: int) -> None:
        """The thread of channel ``number`` (ours) ended: tell the other side at once (``C``),
        so that the thread serving it there ends (and frees its place under the process's
        thread limit for another one)."""
        with self.state:
            self.inbox.pop(number, None)
        self.slots.release()
        with contextlib.suppress(OSError, CodecError):
            self.send_on(number, b"C", b"")

    def word(self, channel: int) -> bytes:
        """A message's word: its ``channel``, with :data:`_THREADED` when this process has
        threads besides those this peer started. Why: a new channel of the other side's
        arrives only when a thread here reads the wire, and every thread of the other side
        may be busy (the main one in a long call) while one of its other threads sends the
        first message of a new channel. Told of such threads, the other side starts a thread
        that only reads (:meth:`start_spare`). Without them it needs none: a new channel's
        first message then comes only while a thread there waits for a message of its own."""
        if _thread_count() > self.threads:
            channel |= _THREADED
        return _U32.pack(channel)

    def awaited_on(self, loop: Any, change: int) -> None:
        """Count an await of the other side's coroutine that ``loop`` (of this side) goes on
        running through (see :class:`_CoroutineProxy`)."""
        with self.state:
            left = self.awaiting.get(loop, 0) + change
            if left > 0:
                self.awaiting[loop] = left
            else:
                self.awaiting.pop(loop, None)

    def free_loop(self) -> Any:
        """This side's event loop that awaits the other side's coroutines and so runs on (the
        one, if exactly one does, and not this thread's): where the other side's awaits of
        this side's coroutines run."""
        with self.state:
            if len(self.awaiting) != 1:
                return None
            (loop,) = self.awaiting
        if loop.is_closed() or not loop.is_running() or loop is _running_loop():
            return None
        return loop

    @property
    def depth(self) -> int:
        """How deep this thread's requests nest (see admit)."""
        return getattr(self.local, "depth", 0)

    @depth.setter
    def depth(self, value: int) -> None:
        self.local.depth = value

    @property
    def threaded(self) -> bool:
        """Whether a thread other than the main one exchanged on the wire (a long-lived judge
        serves no further check: such a thread may still run)."""
        return self.threads_started > 0 or self.next_channel != (2 if self.trusted else 1)

    def next_message(self, channel: int) -> tuple[bytes, bytes]:
        """The next message on ``channel`` (this thread's): one another thread read for it, or
        one this thread reads, when no other thread is reading the wire. The thread reading
        reads for all: what is another channel's it queues there and wakes that channel's
        thread; a channel of the other side's it has not seen gets a thread that serves it.
        Releases (``D``), thread names (``N``) and closed channels (``C``) it applies, and in
        the judge the solution's output and warnings (``O``, ``W``, ``G``: in the order they
        came, before any later reply is taken). ``EOFError`` when the wire ended (for every
        waiting thread)."""
        box = self.inbox[channel]
        state = self.state
        while True:
            with state:
                if box:
                    return box.popleft()
                if self.closed is not None:
                    raise self._ended()
                if not self.reading:
                    self.reading = True
                    break
                try:
                    sleep = self.local.sleep
                except AttributeError:
                    sleep = self.local.sleep = _allocate_lock()
                    sleep.acquire()
                self.waiting[channel] = sleep
            sleep.acquire()  # released by the reader: a message for us, or no more reader
        try:
            return self._read_for(channel)
        except BaseException as exc:
            with state:
                if self.closed is None:
                    self.closed = exc
            raise
        finally:
            with state:
                self.reading = False
                sleeping = list(self.waiting.values())
                self.waiting.clear()
            for sleep in sleeping:  # each takes its message, or one of them reads
                sleep.release()

    def _ended(self) -> BaseException:
        closed = self.closed
        if isinstance(closed, SolutionBroke):
            return SolutionBroke(*closed.args)
        if isinstance(closed, CodecError):
            return CodecError(*closed.args)
        return EOFError()

    def _read_for(self, channel: int) -> tuple[bytes, bytes]:
        while True:
            kind, word, body = _recv_word(self.fd, 4)
            self.epoch = next(self._epochs)
            earn(len(body))  # (the comparison budgets: see _kept.earn)
            if word & _THREADED and not self.spare:
                self.start_spare()
            if kind == b"D":
                self.drop(body)
                continue
            if self.trusted and kind == b"O":
                self.relay(body)
                continue
            number = word & _CHANNEL_MASK
            if self.trusted and kind in (b"W", b"G"):
                self.reissue(kind, body, number)
                continue
            if kind == b"N":
                self._name(number, body)
                continue
            if kind == b"C":
                if number == channel and number in self.serving:
                    return kind, body  # (this thread's own: see serve_channel)
                self._close_served(number)
                continue
            if number == channel:
                return kind, body
            self._deliver(number, kind, body)

    def _ours(self, number: int) -> bool:
        return number % 2 == (0 if self.trusted else 1)

    def _name(self, number: int, body: bytes) -> None:
        """The other side's thread of channel ``number`` is named ``body``: the name of the
        thread that will serve it here."""
        if self._ours(number) or number in self.inbox or len(body) > MAX_THREAD_NAME:
            raise CodecError("a thread's name for a channel already open or ours")
        if len(self.names) >= MAX_CHANNELS:
            raise CodecError("names for more channels than may be open")
        self.names[number] = body.decode("utf-8", "replace")

    def _close_served(self, number: int) -> None:
        """The other side's thread of channel ``number`` ended: end the thread serving it here
        (idle: that thread's exchanges are over) and wait until it is gone."""
        with self.state:
            thread = self.serving.get(number)
            box = self.inbox.get(number)
            if thread is None or box is None:
                return  # (never served: it sent its name only; or a channel it never had)
            box.append((b"C", b""))
            sleep = self.waiting.pop(number, None)
        if sleep is not None:
            sleep.release()
        thread.join()
        self._start_pending()

    def _deliver(self, number: int, kind: bytes, body: bytes) -> None:
        with self.state:
            box = self.inbox.get(number)
            new = box is None
            if box is None:
                if self._ours(number):
                    raise CodecError("a message on a channel of ours that is not open")
                if self.trusted and kind not in (b"Q", b"I"):
                    raise CodecError(f"a thread's first message is no request ({kind!r})")
                if self.trusted and len(self.serving) + len(self.pending) >= MAX_CHANNELS:
                    self.fail(
                        f"more than {MAX_CHANNELS} threads of the solution exchanged with the "
                        "tests at once"
                    )
                box = self.inbox[number] = _deque()
            elif box and self.trusted:
                # A channel's messages alternate (a request or reply, then the other side's):
                # a second before its thread took the first is the solution's flood.
                self.fail("the solution sent a second message on a channel before an answer")
            box.append((kind, body))
            sleep = self.waiting.pop(number, None)
        if sleep is not None:
            sleep.release()
        if new:
            self._serve_new(number)

    def _serve_new(self, number: int) -> None:
        """Start the thread that serves the other side's new channel ``number``. Past the
        process's thread limit (``RLIMIT_NPROC``, its address space) the channel waits until a
        thread serving another one ends (:meth:`_close_served`): in the solution, where a run's
        limit is low (48), while the tests' threads that call it take turns; the judge's is
        high, so there it fails the check."""
        name = self.names.pop(number, None) or f"Thread-{number}"
        if not self._start_serving(number, name):
            with self.state:
                self.pending.append((number, name))

    def _start_pending(self) -> None:
        """Start the threads of the channels waiting for one (see :meth:`_serve_new`), in the
        order they came, while the process may start threads."""
        while self.pending and self._start_serving(*self.pending[0]):
            with self.state:
                self.pending.pop(0)

    def _start_serving(self, number: int, name: str) -> bool:
        """Whether a thread named ``name`` now serves the other side's channel ``number``
        (False: past the process's thread limit)."""
        thread = _Thread(target=self.serve_channel, args=(number,), name=name, daemon=True)
        try:
            thread.start()
        except RuntimeError as exc:
            if self.trusted:
                self.fail(f"the judge could not start a thread to serve the solution's: {exc}")
            return False
        with self.state:
            self.serving[number] = thread
            self.threads += 1
            self.threads_started += 1
        return True

    def start_spare(self) -> None:
        """Start a thread that only reads the wire (see :meth:`word`): it reads whenever no
        other thread here does, so a new channel's first message is read however busy the
        others are."""
        with self.state:
            if self.spare:
                return
            self.spare = True
            self.inbox[_SPARE] = _deque()
        self.threads += 1
        self.threads_started += 1
        _start_thread(self.serve_channel, (_SPARE,))

    def serve_channel(self, number: int) -> None:
        """A thread of this peer's: serve the other side's channel ``number`` (its requests,
        in the judge also the solution's reads of stdin), or only read (:data:`_SPARE`),
        until that side's thread ends (``C``) or the wire does. When it breaks, the wire is
        hung up so that the check ends (the judge: "failed" with the reason; the solution:
        exit)."""
        self.local.channel = number
        try:
            while True:
                kind, body = self.next_message(number)
                if kind == b"Q":
                    self.serve(body)
                elif kind == b"I" and self.trusted:
                    self.serve_input(body)
                elif kind == b"C":
                    with self.state:
                        self.inbox.pop(number, None)
                        self.serving.pop(number, None)
                        self.threads -= 1
                    return
                else:
                    raise CodecError(f"unexpected message {kind!r}")
        except EOFError:
            return
        except BaseException as exc:
            if not self.trusted:
                os._exit(1)
            if self.broken is None:
                self.broken = self.failed or (
                    f"the solution broke the protocol ({exc})"
                    if isinstance(exc, (CodecError, OSError))
                    else f"a thread serving the solution ended with {type(exc).__name__}"
                )
            self.hang_up()

    def hang_up(self) -> None:
        """End the wire for both sides (every thread reading it, here and there, sees its
        end): the judge's way to end a check a thread other than the tests' broke."""
        with contextlib.suppress(OSError):
            sock = _Socket(fileno=self.fd)
            try:
                sock.shutdown(_SHUT_RDWR)
            finally:
                sock.detach()

    def note_text(self, text: str) -> None:
        """The judge's side: remember a text of the solution's that could be code (at most
        :data:`MAX_TEXTS` of them, :data:`MAX_RELAYED` bytes in all; past that every text
        with a call is taken for the solution's: see :meth:`derived`)."""
        if self.texts_overflow:
            return
        if len(self.texts) >= MAX_TEXTS or self.text_size + len(text) > MAX_RELAYED:
            self.texts_overflow = True
            self.texts.clear()
            return
        self.texts.append(text)
        self.text_size += len(text)
        if "\n" in text:
            self.texts.extend(
                line for line in text.splitlines()
                if len(line) >= 8 and ("(" in line or "@" in line)
            )

    def evaluate(self, source: Any, mode: str, scope: Any) -> Any:
        """The judge's side: run the tests' ``eval``/``exec`` of a text of the solution's in
        the solution's process (:class:`_Evaluator`); ``exec``'s names are bound in ``scope``."""
        if isinstance(source, (bytes, bytearray, memoryview)):
            source = bytes(source).decode("utf-8")
        if self.evaluator is None:
            raise TypeError("the solution takes no code to run")
        result = self.request("call", self.evaluator, (str(source), mode))
        if mode == "eval":
            return result
        if type(result) is not dict or not all(
            type(k) is str and k.isidentifier() and not k.startswith("__") for k in result
        ):
            raise TypeError("the solution's exec bound something that is no name")
        if scope is not None:
            scope.update(result)
        return None

    def derived(self, source: Any) -> bool:
        """Whether ``source`` (code the tests eval, exec or compile) holds a text of the
        solution's that could be code: one it returned or printed, or the content of a file in
        the directory it shares with the tests (``exec(open(path).read())``). It then runs in
        the solution's process, never here."""
        if isinstance(source, (bytes, bytearray, memoryview)):
            source = bytes(source).decode("utf-8", "replace")
        if not isinstance(source, str) or ("(" not in source and "@" not in source):
            return False
        # Its text in the source, or the source cut from its text (``out.split("=")[1]``);
        # and each of its lines (what survives the tests' ``.replace`` of another line).
        stripped = source.strip()
        return self.texts_overflow or any(
            text in source or stripped in text
            for text in (*self.texts, *_workdir_texts())
        )

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

    def _reissue_warning(self, value: Any, channel: int) -> None:
        if type(value) is not tuple or len(value) != 4:
            raise CodecError("malformed warning")
        text, category, filename, lineno = value
        if type(category) is str:
            category = _PASSED_THROUGH.get(category)
        elif not self.mirrored(category):
            category = None
        if (
            type(text) is not str
            or not (isinstance(category, type) and issubclass(category, Warning))
            or type(filename) is not str
            or type(lineno) is not int
        ):
            raise CodecError("malformed warning")
        # Never a path: the judge's warning display reads the named file's line (linecache).
        where = filename if filename.startswith("<") and filename.endswith(">") else "<solution>"
        try:
            warnings.warn_explicit(
                text, category, where, lineno, module="solution",
                registry=self.warning_registry,
            )  # fmt: skip
        except Exception as exc:
            # The tests' filters make it an error: in-process the solution's ``warn`` raised
            # it; here its call raises it when it returns (the wire is mid-call now).
            self.warning_raised.setdefault(channel, exc)

    def relay(self, body: bytes) -> None:
        """The judge's side: the solution printed this during a request; written to the tests'
        ``sys.stdout`` (or ``sys.stderr``) when the tests redirected it (``redirect_stdout``,
        the ``capsys`` fixture), as in-process; else dropped (the solution's own output file
        has it)."""
        value = decode(body)
        if type(value) is not tuple or len(value) != 2 or value[0] not in (1, 2):
            raise CodecError("malformed output")
        stream, text = value
        if type(stream) is not int or type(text) is not str:
            raise CodecError("malformed output")
        self.relayed += len(text)
        if self.relayed > MAX_RELAYED:
            self.fail(f"the solution printed more than {MAX_RELAYED} bytes during the tests")
        if "(" in text or "@" in text:  # eval(capsys.readouterr().out): see derived
            self.note_text(text)
        target = sys.stdout if stream == 1 else sys.stderr
        if type(target) in _PROXY_TYPES:
            # An object of the solution's: writing is a request, which this thread (reading
            # the wire for all) cannot make now; the call that printed writes it when it returns.
            self.unrelayed.append((target, text))
        elif target is not self.streams[stream - 1]:
            target.write(text)

    def relay_to_handles(self) -> None:
        """Write what :meth:`relay` kept for the solution's own stream objects."""
        while self.unrelayed:
            target, text = self.unrelayed.pop(0)
            target.write(text)

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

    # failures

    def fail(self, reason: str) -> NoReturn:
        """The wire is unusable: in the judge, a verdict of "failed"; in the solution, exit."""
        if not self.trusted:
            os._exit(1)
        if self.broken is None:
            self.broken = reason
        raise SolutionBroke(reason)

    # requests

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

    def exception(self, value: Any, depth: int = 0) -> BaseException:
        """The exception of an ``X`` reply, checked: one of the tests' as the solution is told
        of it, ``(name, "")``, or ``(name, "", OWN_CLASS, class)`` when its class is (or derives
        from) one of the solution's (an exception of that class, made without arguments); one
        of the solution's as the judge is: ``(name, message,
        detail)``, ``(name, message, handle, class, detail)`` for one of its own classes
        (``detail``: see :func:`_exception_detail`), ``("SystemExit", "", code)``, or
        ``(CAUSED, exception, cause, context, suppress)`` for one raised ``from`` another or
        while another was handled (each None or an exception; ``context`` True when it is the
        cause; at most :data:`MAX_CAUSES` deep), whose ``__cause__``, ``__context__`` and
        ``__suppress_context__`` the tests read, as in-process; or ``(GROUPED, message,
        exceptions)`` for an ``ExceptionGroup`` (:meth:`_exception_group`)."""
        if type(value) is tuple and len(value) == 5 and value[0] == _CAUSED:
            if depth >= MAX_CAUSES:
                raise CodecError("exception causes nested too deep")
            exc = self.exception(value[1], depth + 1)
            _, _, cause, context, suppress = value
            if cause is not None:
                exc.__cause__ = self.exception(cause, depth + 1)
            if context is True:
                exc.__context__ = exc.__cause__
            elif context is not None:
                exc.__context__ = self.exception(context, depth + 1)
            exc.__suppress_context__ = suppress is True
            return exc
        if type(value) is tuple and len(value) == 3 and value[0] == _GROUPED:
            return self._exception_group(value, depth)
        if (
            type(value) is tuple and len(value) >= 2 and value[0] == _RAISED
            and type(value[1]) is int
        ):
            return self._raised(value)
        if type(value) is tuple and len(value) == 4 and value[2] == _OWN_CLASS:
            kind = value[3]
            if (
                self.trusted
                or not isinstance(kind, type)
                or type(kind) in _PROXY_TYPES
                or not issubclass(kind, Exception)
            ):
                raise CodecError("malformed exception")
            try:
                return _new_exception(kind, ())
            except Exception:  # its class wants arguments the tests' message would have given
                return SolutionError(f"{value[0]}: ")
        if (
            type(value) is tuple
            and len(value) == 3
            and value[:2] == ("SystemExit", "")
            and _plain_exit_code(value[2])
        ):
            return _solution_exit(value[2])
        if (
            type(value) is not tuple
            or len(value) not in (2, 3, 5)
            or not all(type(p) is str for p in value[:2])
            or (len(value) == 5 and (
                type(value[2]) not in _PROXY_TYPES or not self.mirrored(value[3])
            ))
        ):
            raise CodecError("malformed exception")
        if len(value) < 5:  # the tests' exceptions reach the solution by type: (name, "")
            return _solution_exception(
                value[0], value[1], detail=value[2] if len(value) == 3 else None,
                exact=self.trusted,
            )  # fmt: skip
        return _solution_exception(*value)

    def _raised(self, value: tuple[Any, ...]) -> BaseException:
        """A tests' exception (see :data:`_RAISED`): in the solution, the exception made of
        its description, numbered; in the judge, the tests' own exception of that number."""
        if self.trusted:
            if len(value) != 2:
                raise CodecError("malformed exception")
            found: BaseException = self.raised.get(value[1], "an exception of the tests")
            return found
        if len(value) != 3 or type(value[2]) is not tuple or value[2][:1] == (_RAISED,):
            raise CodecError("malformed exception")
        made = self.exception(value[2])
        if len(self.from_tests) < MAX_RAISED:
            self.from_tests[id(made)] = (made, value[1], made.args)
        return made

    def _exception_group(self, value: tuple[Any, ...], depth: int) -> BaseException:
        """The solution's ``ExceptionGroup`` (see :meth:`_describe_group`), checked: a message,
        1 to :data:`MAX_GROUPED` exceptions of the solution's, each an ``Exception``."""
        _, message, subs = value
        if depth >= MAX_CAUSES:
            raise CodecError("exception causes nested too deep")
        if (
            _EXCEPTION_GROUP is None
            or type(message) is not str
            or type(subs) is not tuple
            or not 0 < len(subs) <= MAX_GROUPED
        ):
            raise CodecError("malformed exception group")
        made = [self.exception(sub, depth + 1) for sub in subs]
        if not all(isinstance(e, Exception) for e in made):
            raise CodecError("malformed exception group")
        group: BaseException = _EXCEPTION_GROUP(message, made)
        return group

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

    def describe(self, exc: BaseException, depth: int = 0) -> tuple[Any, ...]:
        """An exception as the other side is told of it: the tests' exceptions by type only
        (their messages may quote what the tests expect); the solution's with its message and
        the exceptions it was raised ``from`` and while handling (see :meth:`exception`)."""
        if self.trusted:
            if isinstance(exc, AssertionError) and self.failed is None:
                self.failed = f"an assertion of the tests failed in a callback: {exc!s:.2000}"
            told = self._describe_tests(exc)
            number = self.raised.add(exc) if depth == 0 else None
            return told if number is None else (_RAISED, number, told)
        known = self.from_tests.get(id(exc))
        if (
            known is not None
            and known[0] is exc
            and exc.args == known[2]
            and getattr(exc, "__notes__", None) is None
        ):
            return (_RAISED, known[1])  # the tests' own exception, unchanged (see _RAISED)
        described = self._describe_group(exc, depth) or self._describe(exc)
        if depth + 1 >= MAX_CAUSES:
            return described
        cause, context = exc.__cause__, exc.__context__
        cause = cause if isinstance(cause, BaseException) else None
        context = context if isinstance(context, BaseException) else None
        if cause is None and context is None:
            return described
        return (
            _CAUSED, described,
            None if cause is None else self.describe(cause, depth + 1),
            None if context is None else True if context is cause else self.describe(
                context, depth + 1
            ),
            exc.__suppress_context__ is True,
        )  # fmt: skip

    def _describe_tests(self, exc: BaseException) -> tuple[Any, ...]:
        """The judge's side of :meth:`describe`: a tests' exception as the solution is told of
        it, by its class only."""
        # A class of the solution's (the judge's mirror of it) or one the tests derived from
        # one: the solution gets an exception of its own class (``except Stop`` there catches
        # what the tests' callback raised), without the tests' arguments.
        own = next((k for k in type(exc).__mro__ if type(k) is _Mirror and self.mirrored(k)), None)
        if own is not None:
            return (type(exc).__name__, "", _OWN_CLASS, own)
        # Else its nearest built-in class (a tests' ``class MyErr(KeyError)``: KeyError; a
        # requests ``ConnectionError``: OSError, never the built-in of the same name) and a
        # standard library's or library's class by name, which the solution's side makes when
        # it has it (``except requests.ConnectionError``, ``json.JSONDecodeError``).
        kind = type(exc)
        base = _passed_through_base(kind) or kind.__name__
        where = _named_class(kind)
        if where is None:
            return (base, "")
        return (base, "", (None, _tests_exception_attributes(exc), where, ()))

    def _describe_group(self, exc: BaseException, depth: int) -> tuple[Any, ...] | None:
        """An ``ExceptionGroup`` of the solution's: ``(GROUPED, message, exceptions)``, each
        described (at most :data:`MAX_GROUPED`, nested at most :data:`MAX_CAUSES` deep), so
        that the tests' ``except* ValueError`` splits it as in-process; else None."""
        if _EXCEPTION_GROUP is None or not isinstance(exc, _EXCEPTION_GROUP):
            return None
        try:
            message, subs = exc.message, tuple(exc.exceptions)
        except Exception:
            return None
        if depth + 1 >= MAX_CAUSES or type(message) is not str or not 0 < len(subs) <= MAX_GROUPED:
            return None
        return (_GROUPED, message[:10_000], tuple(self.describe(e, depth + 1) for e in subs))

    def _describe(self, exc: BaseException) -> tuple[Any, ...]:
        try:
            message = str(exc)[:10_000]
        except BaseException:
            message = "<unprintable>"
        kind = type(exc)
        own = kind.__name__[:200]
        passed = _passed_through_base(kind)
        if passed is None or passed == own:
            return (own, message, _exception_detail(exc, False))
        module = kind.__module__
        if _exception_class_spec(kind) is None or (
            type(module) is str and module.partition(".")[0] in sys.stdlib_module_names
        ):  # named oddly, or a class of the standard library: its built-in base will do,
            # or that class itself if the judge has it (see _standard_exception_class)
            return (passed, message, _exception_detail(exc, False))
        # exc: a handle, for its attributes; its class: the judge's class of its own for it, or
        # a library's class (numpy's LinAlgError) by name, the judge's when it has it
        return (passed, message, exc, kind, _exception_detail(exc, _named_class(kind) is None))

    def perform(self, op: str, obj: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if op == "call":
            return obj(*args, **kwargs)
        if op == "throw":  # a built-in exception the tests throw in (see _GeneratorProxy)
            kind = _BUILTIN_TYPES.get(getattr(args[0], "__name__", "")) if len(args) == 2 else None
            if (
                kind is None
                or kind is not args[0]
                or not issubclass(kind, BaseException)
                or type(args[1]) is not tuple
            ):
                raise TypeError("malformed throw")
            return obj.throw(kind(*args[1]))
        if op in _BINARY or op in _INPLACE:
            if op in _INPLACE and len(args) != 1:
                raise TypeError("malformed in-place operation")
            return getattr(operator, op)(obj, *args[:1])
        if op in _REFLECTED:  # the other operand on the left: ``3 * v``, sum()'s ``0 + v``
            if len(args) != 1:
                raise TypeError("malformed reflected operation")
            return getattr(operator, _REFLECTED[op])(args[0], obj)
        if op == "subclass":  # a class of the tests derived from obj (see _stand_in_class)
            if (
                len(args) != 3
                or not isinstance(obj, type)
                or type(args[0]) not in _PROXY_TYPES
                or type(args[1]) is not str
                or type(args[2]) is not tuple
                or not all(type(n) is str and n.isidentifier() for n in args[2])
            ):
                raise TypeError("malformed subclass request")
            self.shared_class(obj, *args, kwargs)
            return None
        if op in _UNARY:
            return _UNARY[op](obj)
        if op in ("getattr", "setattr", "delattr"):
            name = args[0] if args else None
            if type(name) is not str or (
                self.trusted and name.startswith(_HIDDEN)
                and not (name[:1] == "_" and name[:2] != "__" and _shared(obj))
                and not (op == "getattr" and name in _NAMES_SHOWN)
                and not (op == "getattr" and name == "__doc__" and type(obj) is types.FunctionType)
                and not _mock_signature_set(op, obj, args)
            ):
                raise AttributeError(name if type(name) is str else "?")
            if op == "getattr":
                found = getattr(obj, name)
                if self.trusted and isinstance(found, _INTERNALS):
                    raise AttributeError(name)
                if type(found) in _PLAIN_TYPES:  # (its next handles cross with it)
                    note_asked(type(obj), name)
                if self.trusted and name == "__doc__" and type(found) is str:
                    # the docstring of the tests' function, by number only (see _TestsText)
                    number = self.docs.add(found)
                    if number is None:
                        raise AttributeError(name)
                    return _TextReference(number)
                return found
            if op == "setattr":
                value = args[1]
                if not self.trusted and isinstance(obj, type) and _tests_function(value):
                    value = _method_of(value)
                return setattr(obj, name, value)
            return delattr(obj, name)
        if op == "await":
            return _run_coroutine(obj)
        if op == "dir":
            return sorted(name for name in dir(obj) if type(name) is str)
        if op == "members":
            return _members(obj)
        if op == "collection":
            return _abc_contents(obj)
        if op == "iter":
            return iter(obj)
        if op == "anext":
            return _anext(obj)
        if op == "next":
            if args and not self.trusted:  # a generator's send (see _GeneratorProxy.send)
                return obj.send(args[0])
            return next(obj)
        if op == "len":
            return len(obj)
        if op == "getitem":
            return obj[args[0]]
        if op == "setitem":
            obj[args[0]] = args[1]
            return None
        if op == "delitem":
            del obj[args[0]]
            return None
        if op == "contains":
            return args[0] in obj
        if op == "bool":
            return bool(obj)
        if op == "repr":
            return repr(obj)
        if op == "str":
            return str(obj)
        if op == "format":
            return format(obj, args[0])
        if op == "hash":  # and whether it is its identity's: then the handle keeps it
            note_asked(type(obj), "__hash__")
            return (hash(obj), identity_hashed(type(obj)))
        if op == "id":  # this side's id of its object (see _proxies._handle_id)
            return _handle_id(obj)
        if op in ("copy", "deepcopy"):
            import copy

            return copy.copy(obj) if op == "copy" else copy.deepcopy(obj)
        if op == "round":
            return round(obj, *args[:1])
        if op == "signature":  # the judge's of the solution's object, or the other way round
            if self.trusted:  # (only of the tests' plain function: see serve)
                return _describe_tests_function(obj)
            return _describe_signature(obj)
        if op == "enter":
            return obj.__enter__()
        if op == "aenter":  # ``async with`` in the tests: run here, as "await" runs
            return _run_coroutine(obj.__aenter__())
        if op in ("exit", "aexit"):
            if len(args) != 1:
                raise TypeError("malformed exit")
            if self.trusted:  # the solution's exception (see _exit), or None
                told = args[0]
                exc = (
                    None if told is None
                    else GeneratorExit() if told == "GeneratorExit"
                    else self.exception(told)
                )  # fmt: skip
            else:
                cls = _PASSED_THROUGH.get(args[0]) if type(args[0]) is str else None
                exc = cls() if cls is not None else (Exception() if args[0] else None)
            kind = type(exc) if exc is not None else None
            if op == "aexit":
                return _run_coroutine(obj.__aexit__(kind, exc, None))
            return obj.__exit__(kind, exc, None)
        if op == "type":  # the tests' type() of a handle (see _type_of)
            return type(obj)
        if op == "record":  # a call of the solution on a spy of the tests' (see _spy)
            if (
                not self.trusted
                or not any(obj is spy for spy in _SPIES)
                or len(args) != 2
                or type(args[0]) is not tuple
                or type(args[1]) is not dict
                or not all(type(k) is str for k in args[1])
            ):
                raise TypeError("malformed record")
            obj._increment_mock_call(*args[0], **args[1])
            return None
        if op == "isinstance":
            return isinstance(args[0], obj)
        if op == "issubclass":
            return issubclass(args[0], obj)
        raise TypeError(f"unknown request {op}")


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
