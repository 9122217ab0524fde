"""The state of :class:`._peer._Peer`, one end of the wire, and what each of its parts may
call of the others (:class:`_PeerState`).
"""

from __future__ import annotations

import _thread
import collections
import sys
import weakref
from collections.abc import Callable, MutableMapping
from itertools import count as _count  # bound once: the tests' patches are forwarded
from threading import Semaphore as _Semaphore  # bound once: the tests may patch threading
from typing import TYPE_CHECKING, Any, NoReturn

from ._bounds import MAX_CHANNELS
from ._exceptions import MAX_DOCS, MAX_RAISED, _Numbered
from ._kept import reset_big_budget
from ._proxies import _Proxy
from ._resent import SLOTS, SentLists
from ._solution_side import _Constants
from ._values import _deque

# Bound once: the tests may patch ``_thread`` (``mock.patch``).
_allocate_lock = _thread.allocate_lock
_Local = _thread._local
_RLock = _thread.RLock


class _PeerState:
    """What a :class:`._peer._Peer` holds, set up for one check (each part of the class, in a
    module of its own, reads and changes it); for the type checker, the methods the parts
    call across modules."""

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
        #: (see _handle_ids._handle_id), both ways.
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

    if TYPE_CHECKING:
        # Defined in one part of the class and called from another (see _peer._Peer's bases).

        def proxy(self, n: int, cls: type[_Proxy] | None = None) -> _Proxy: ...
        def _hold(self, n: int, make: Callable[[], Any]) -> Any: ...
        def drop(self, body: bytes) -> None: ...
        def fail(self, reason: str) -> NoReturn: ...
        def request(
            self, op: str, target: _Proxy, args: tuple[Any, ...] = (), /, **kwargs: Any
        ) -> Any: ...
        def reissue(self, kind: bytes, body: bytes, channel: int = 0) -> None: ...
        def serve(self, body: bytes) -> None: ...
        def serve_input(self, body: bytes) -> None: ...
        def relay(self, body: bytes) -> None: ...
        def shared_class(
            self, cls: type, tests_class: Any, class_name: str, names: tuple[str, ...],
            kwargs: dict[str, Any] | None = None,
        ) -> type: ...  # fmt: skip
        def mirrored(self, cls: Any) -> bool: ...
        def exception(self, value: Any, depth: int = 0) -> BaseException: ...
