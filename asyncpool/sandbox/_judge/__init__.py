"""The judge of ``sandbox.run_tests``: tests in a trusted process, the solution behind a wire.

Loaded by the fork server (:mod:`asyncpool.sandbox._zygote`) as ``_asyncpool_zygote._judge``, a
package of its stand-in package (it never imports the ``asyncpool`` package), standard library only
(numpy and pandas, when a value needs them, are imported lazily). Each ``run_tests`` has two
processes:

* the **solution** process (jailed, its own sandbox uid) runs the solution's source as a module
  named ``solution`` (not ``__main__``: a ``__main__`` block does not run, as under in-process
  harnesses) and then :func:`serve_solution`: it announces its top-level callables (and the
  names of its other top-level values, which the judge asks for when the tests name them) and
  answers requests on them;
* the **judge** process (trusted code, another uid the solution cannot signal or ptrace,
  non-dumpable) runs the tests in a fresh namespace where each of those names is a
  :class:`_Proxy` (:func:`judge_check`), then writes its verdict on a pipe only the caller
  and it hold, after the caller's secret (:func:`judge`: no forged verdict counts). Usually a
  long-lived judge of the server that judges one check at a time
  (``_zygote_child.run_judge_server``; a fresh :class:`_Peer`, proxies bound to it, tests
  compiled once per source), else one forked for the check alone (:func:`judge`).

What crosses (both ways, one format, :class:`_Encoder` / :class:`_Decoder`):

* **values**, rebuilt by the receiver as real objects of exactly these types: ``None``,
  ``...`` and ``NotImplemented`` (the same singletons), ``bool``, ``int``, ``float``,
  ``complex``, ``str``, ``bytes``, ``bytearray``, ``list``, ``tuple``, ``dict``, ``set``,
  ``frozenset``, ``range``, ``slice``, ``collections.Counter``,
  ``OrderedDict``, ``defaultdict`` (its ``default_factory`` one of :data:`_FACTORIES`),
  ``deque``, ``ChainMap`` (of the mapping types before it: :data:`_CHAIN_MAPS`),
  ``types.SimpleNamespace`` (string names; mutable, written back), ``uuid.UUID``, the path
  classes of :data:`_PATHS` (by their string), ``memoryview`` of bytes (formats ``B``, ``b``,
  ``c``, one dimension; rebuilt read-only over a copy),
  ``fractions.Fraction``, ``decimal.Decimal``, ``statistics.NormalDist`` (its mean and
  standard deviation), ``datetime``'s ``datetime``,
  ``date``, ``time``, ``timedelta`` (time zones: ``datetime.timezone``, a fixed offset, and on
  a ``datetime`` a ``zoneinfo.ZoneInfo`` of a plain key: :func:`_fixed_tz`), those time zones
  themselves, compiled regular expressions (pattern and flags, compiled again; never with
  ``re.DEBUG``), ``list[int]``-style aliases of built-in classes and ``typing``'s (an annotation;
  :func:`_typing_spec`), numpy arrays and scalars of the numeric, bool, datetime64 and timedelta64
  dtypes of :data:`_NUMPY_DTYPES` and of the fixed-width text and bytes ones (``<U5``, ``|S3``:
  text checked to be code points) (dtype, shape, raw bytes; rebuilt with ``numpy.frombuffer``,
  never unpickled; an array is written back like the containers below, a pandas column is not), and
  their dtypes (with ``object``: by name, ``arr.dtype == object``), pandas ``DataFrame``s,
  ``Series`` and ``Index``es (range, multi, date, period, interval, categorical and plain ones)
  of those dtypes and of Python objects, strings, nullable numbers, categories, times in a time
  zone and periods (:data:`_PANDAS_DTYPES`; rebuilt by pandas' constructors from those arrays and
  values, never unpickled; a DataFrame or a Series is written back like the containers below), a
  ``Categorical`` (``pd.cut`` of a list), ``Timestamp``,
  ``Timedelta``, ``Period``, ``Interval``, ``NaT`` and ``NA``,
  ``array.array`` objects of numbers (:data:`_ARRAY_CODES`; written back), named tuples with
  nothing of their own but fields (rebuilt with ``collections.namedtuple`` of the checked name and
  fields), exception objects (not raised) of :data:`_PASSED_THROUGH`'s classes with only their
  ``args`` (:func:`_plain_exception`), ``dict`` views (:data:`_VIEW_TAGS`), the built-in classes
  (:data:`_BUILTIN_TYPES`, by name: the receiver's own). Exact types only: a subclass (a
  ``Counter`` with its own ``__eq__``) is not a value.
* **value-backed handles**: an instance of a subclass of a built-in value type
  (:data:`_BACKED_BASES`: an ``IntEnum`` member, a ``typing.NamedTuple`` with methods,
  ``class Path(list)``) is its exact base value plus a handle; the receiver's object
  (:class:`_Backed`) is the base value for every comparison and computation, and a handle for
  the rest.
* **exception classes** of the solution derived from a built-in exception that crosses
  (:data:`_PASSED_THROUGH`) are a handle plus their name and bases (``E``); the judge stands a
  real class of its own for each (:meth:`_Peer.mirror`, metaclass :class:`_Mirror`), derived
  only from those built-in classes and its other such classes, never from anything the
  message names otherwise (``StopIteration``), so that ``except InvalidInput`` in the tests
  works; its class attributes are read from the handle. Every exception of the solution's
  crosses with its message and, when they are plain values, its ``args`` (``KeyError('k')``,
  ``E('a', 2)``) and attributes (an ``OSError``'s ``filename``); one of a standard library
  class the tests can name (``json.JSONDecodeError``, ``UnicodeDecodeError``) is rebuilt as
  that class (:func:`_standard_exception_class`: never ``StopIteration``, ``SkipTest`` or a
  group); an ``ExceptionGroup`` crosses with each of its exceptions, for ``except*``.
* **stand-ins**: a class of the tests derived from a class of the solution derives instead
  from a class the judge makes for it (:meth:`_Peer.stand_in`, via ``_Proxy.__mro_entries__``)
  whose methods call the solution's with the tests' instance; comparisons and arithmetic
  only between two objects of the solution's. Such an instance crosses to the solution as
  ``o`` (judge to solution only): an instance of a subclass of the solution's class made
  there (:meth:`_Peer.shared`), whose state stays in the judge.
* **handles**: anything else one side hands the other (the solution's instances, classes,
  functions, generators, ``map`` objects, bound methods; the tests' lambdas and objects) is a
  number in the sender's table, and a :class:`_Proxy` on the receiver's side whose attribute
  reads, calls, iteration (one item per request: lazy), ``len``, indexing, ``in``, ``with``,
  ``str``/``repr``, ``bool``, ``hash`` and copies are requests to the owner. When a proxy dies, its
  number is sent with the next message ("D"), with how many times it was received, and the
  owner drops the object once every time it sent it is released (:meth:`_Peer.drop`). A handle of an
  object of a library's class (a matplotlib ``Axes``) says that class, as the receiver has it,
  as its ``__class__`` (:func:`_library_class`): ``isinstance(ax, plt.Axes)`` holds. The
  tests' ``type`` (:class:`_TestsType`) of a handle is its object's class, asked of the owner
  (``type(p) is Point``, ``type(p).count``).
* **write-back**: a mutable container (list, dict, set, bytearray and the mutable standard types)
  sent in a request is rebuilt on the other side; when the request is served, the server sends
  the new contents of those it changed with its reply, and the requester applies them to its
  own objects in place (``a[:] = new``): ``sort_in_place(a); assert a == [1, 2, 3]`` holds,
  object identity included (a container sent back is the requester's own object).
* **ambient state back**: the solution's working directory (when the tests' text names
  ``cwd`` or ``chdir``) and the environment variables the tests' code names in a string (when
  it names ``environ`` or ``getenv``) reach the judge after each request, as in-process where
  one process has them (:data:`_AMBIENT_BACK`); so does a change of a generator the tests
  seeded (``random``, numpy's global one), as a fresh start of the judge's (:func:`_reseed`);
  its ``sys.path`` and library settings do not.
* **output**: what the solution prints while it serves the judge (``O`` messages) is written
  to the tests' ``sys.stdout``/``sys.stderr`` where the tests redirected them
  (``redirect_stdout``, ``capsys``).
* **threads**: each message carries the channel of the thread exchanging it
  (:meth:`_Peer.channel`); each side serves each channel of the other's in a thread of its own,
  started at that channel's first message, so that a thread's exchanges (its request, the
  requests it serves meanwhile, the reply) are one thread's on both sides, as in-process. A
  thread waiting for a message reads the wire for all when no other one does
  (:meth:`_Peer.next_message`).
* **warnings and log records** the solution issues while it serves the judge (``W``, ``G``
  messages: a message, a category or level, names and a line; never an object) are issued
  again in the judge (:meth:`_Peer.reissue`), where the tests' warning filters and logging
  handlers see them (``pytest.warns``, ``caplog``, ``assertLogs``); the tests' logging levels
  reach the solution's loggers (:func:`_watch_logging`).

Test modules (:func:`_run_test_functions`): the tests import the solution as ``solution`` and
run as a ``__main__`` of their own; with no entry point the judge then runs what pytest would
collect (``test*`` functions with parametrize and fixtures, ``Test*`` classes,
``unittest.TestCase``s).

What the judge never does: trust a comparison the solution computes against a value of the
tests. A :class:`_Proxy` is never equal to a value of the judge (its ``==``, ``<`` with a
non-proxy return ``NotImplemented``; Python then falls back to identity, so ``handle == 3`` is
``False`` whatever the solution's ``__eq__`` says); comparisons between two proxies of the
solution are forwarded (the solution's own semantics, as in-process), and so is arithmetic
with a value, whose result must be a proxy that tells no value (see :meth:`_Peer.derive`). The
judge lets the solution read only public attributes of the tests' objects (no ``__globals__``,
no ``__code__``), set only public data attributes of instances of the tests' plain classes
(:func:`_settable`: a ``ListNode``'s ``next``, never a method), and never tells it the message
of the tests' exceptions; the comparisons, arithmetic and ``isinstance`` checks it asks of
the tests' objects and classes are the tests' own methods, run here (see :data:`_OPS`). An
``AssertionError`` raised by the tests' code inside a callback fails the check even if the
solution catches it. Nor does it run code the solution wrote: the tests' ``eval``/``exec`` of a
text of the solution's runs in the solution's process, and pickles read here name only what
:func:`_unpickled_global` allows (:func:`guard_judge`).

Bounds (each exceeded one is a "failed" verdict with its reason): :data:`MAX_MESSAGE` bytes,
:data:`MAX_DEPTH` nesting, :data:`MAX_ITEMS` values per message, :data:`MAX_HANDLES` live objects
of the solution's held by the judge, :data:`MAX_CALL_DEPTH` nested requests,
:data:`MAX_CALLBACKS` requests of the solution, :data:`MAX_ITERATION` items from one iterator.

The format is hand-written because ``pickle`` and ``marshal`` must never read untrusted bytes,
and ``json`` cannot tell a tuple from a list or carry bytes, sets and object references.
"""

from __future__ import annotations

import _thread
import builtins
import collections
import contextlib
import importlib
import io
import keyword
import operator
import os
import pathlib
import struct
import sys
import traceback
import types
import warnings
import weakref
from collections.abc import Callable, Iterator, MutableMapping
from importlib.util import find_spec as _find_spec  # bound once (the fork server loaded it)
from os import fstat as _fstat
from socket import SHUT_RDWR as _SHUT_RDWR  # bound once: the tests may patch socket
from socket import socket as _Socket
from threading import Semaphore as _Semaphore  # bound once: the tests may patch threading
from threading import Thread as _Thread
from threading import current_thread as _current_thread
from typing import Any, NoReturn

from . import (
    _ambient,
    _annotations,
    _bounds,
    _codec,
    _exceptions,
    _forwarded,
    _framing,
    _guard,
    _kept,
    _notices,
    _ops,
    _pandas,
    _patches,
    _proxies,
    _solution_side,
    _stand_ins,
    _tests_code,
    _values,
)
from ._ambient import (
    _AMBIENT_SETTINGS,
    _AMBIENT_STATE,
    _AMBIENT_WATCHED,
    _ARGV_SENT,
    _BACK_NAMES,
    _CWD_AT_START,
    _CWD_COUNTED,
    _CWD_WORDS,
    _ENVIRON_AT_START,
    _ENVIRON_COUNTED,
    _SEEDED,
    _TESTS_ARGV,
    _back_names,
    _cwd,
    _decimal_spec,
    _int_digits,
    _note_ambient,
    _numpy_errors,
    _set_int_max_str_digits,
    _take_ambient,
    _watch_seeds,
)
from ._bounds import (
    MAX_CALL_DEPTH,
    MAX_CALLBACKS,
    MAX_CHANNELS,
    MAX_DEPTH,
    MAX_HANDLES,
    MAX_ITEMS,
    MAX_ITERATION,
    MAX_MESSAGE,
    MAX_NAMES,
    MAX_NOTICES,
    MAX_RELAYED,
    MAX_TEXTS,
    CodecError,
    SolutionBroke,
    SolutionError,
)
from ._codec import _U32, _Decoder, _Encoder, decode, encode
from ._exceptions import (
    _CAUSED,
    _EXCEPTION_GROUP,
    _GROUPED,
    _OWN_CLASS,
    _PASSED_THROUGH,
    _PASSED_THROUGH_CLASSES,
    _RAISED,
    _SOLUTION_EXIT,
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
    _standard_class_name,
    _standard_exception_class,
    _tests_exception_attributes,
    _TextReference,
)
from ._forwarded import (
    _ASSIGNED,
    _SOLUTIONS,
    _SPIES,
    _apply_patches,
    _drawn_state,
    _forwarded_patches,
    _SolutionModule,
)
from ._framing import _buffers, _recv, _recv_word, _send
from ._guard import (
    _doctest_in_solution,
    _guard_logging_config,
    _guard_set_assertions,
    _guard_yaml,
    _pytest_main_runs_nothing,
    _workdir_roots,
    _workdir_texts,
    guard_judge,
)
from ._kept import (
    _KEEPING_OPS,
    MAX_HELD,
    MAX_KEPT_ARGS,
    MAX_TESTS_HELD,
    _apply,
    _changed,
    _held_alone,
    _refcounts,
    _refill,
    _same_inner,
    _snapshot,
    _tests_class_object,
    _tests_keeping,
    _watch_changed,
    _watch_mark,
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
from ._patches import (
    _PATCH_COUNT,
    _PATCHES,
    _WARNINGS_AT_START,
    _WARNINGS_WATCHED,
    _counting,
    _patch_target,
    _watch_logging,
    _watch_patches,
    _watch_warnings,
)
from ._proxies import (
    _ASYNC_GENERATOR,
    _BACKED_CLASSES,
    _COROUTINE,
    _FROM_SOLUTION,
    _GENERATOR,
    _HANDLE,
    _PROXY_TYPES,
    _abc_contents,
    _anext,
    _describe_signature,
    _describe_tests_function,
    _FullProxy,
    _handle_getattr,
    _library_module,
    _method_of,
    _peer,
    _Proxy,
    _run_coroutine,
    _running_loop,
    _tests_function,
    _TestsType,
)
from ._solution_side import (
    _EMPTY_READS,
    _JUDGE_INPUT,
    _SERVING_FRAMES,
    _Constants,
    _Evaluator,
    _flush_streams,
    _input,
    _pin,
    _Stdin,
    _Tee,
)
from ._stand_ins import (
    _STAND_INS,
    _members,
    _mock_signature_set,
    _settable,
    _shared,
    _shared_class,
    _stand_in_class,
)
from ._tests_code import _CHECK, _COMPILE, _EVAL, _EXEC, _code_objects, _compiled, _globals_loaded
from ._values import (
    _BUILTIN_TYPE_NAMES,
    _BUILTIN_TYPES,
    _MUTABLE,
    _UNSET,
    MAX_MADE_CLASSES,
    _deque,
    _import_numpy,
    _mutable_value,
)

# What the fork server (``_zygote``, ``_zygote_child``) and the caller use.
__all__ = [
    "_decimal_spec", "_int_digits", "_numpy_errors", "MAX_CALL_DEPTH", "MAX_CALLBACKS",
    "MAX_CHANNELS", "MAX_DEPTH", "MAX_HANDLES", "MAX_ITEMS", "MAX_ITERATION", "MAX_MESSAGE",
    "MAX_NAMES", "MAX_NOTICES", "MAX_RELAYED", "MAX_TEXTS", "CodecError", "SolutionBroke",
    "SolutionError", "deliver_verdict", "entry_steps", "judge", "judge_check", "same_file",
    "decode", "encode", "guard_judge", "WARM_TESTS", "judged_namespace", "judged_stdin",
    "prepare_server", "serve_solution", "serve_warm_up",
]


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


def _installed(name: str) -> bool:
    """Whether the module ``name`` can be imported here (``pytest_asyncio``, pytest's
    ``_pytest.subtests``), asked of the real ``find_spec`` bound at load, so that the tests'
    patches of ``importlib.util`` do not answer for the judge. Not cached: a module already
    imported answers from ``sys.modules``, and a long-lived judge must not carry one check's
    answer (under its ``sys.path``) into the next."""
    return _find_spec(name) is not None


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
        # Value-backed handles by number, for the peer's life: identity holds (an enum member
        # is one object, ``f() is Color.RED``) though int, bytes and tuple subclasses cannot be
        # weakly referenced; each still counts against MAX_HANDLES through its proxy.
        self.backeds: dict[int, Any] = {}
        # The judge's side: the recursion limit and the count of the tests' patches the
        # solution was last told of (see request).
        self.limit = sys.getrecursionlimit()
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

    def release(self, n: int) -> None:
        """Our proxy of the other side's object ``n`` died: release the times we received it
        (sent with our next message, ``D``)."""
        with self.hold_lock:
            count = self.seen.pop(n, 0)
            if count:
                self.released[n] = self.released.get(n, 0) + count

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
        if found is None:
            found = self.backeds[n] = cls(base)
            vars(found)[_HANDLE] = self.proxy(n)
        return found

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
        for pair in updates:
            if type(pair) is not tuple or len(pair) != 2 or type(pair[0]) is not str:
                raise CodecError("malformed updates")
            name, value = pair
            if name not in self.live:
                raise CodecError("an update of a value the judge never asked for")
            held = self.live[name]
            spaces = self._holding(name, held)
            if not spaces:
                continue  # the tests rebound (or deleted) it: theirs now
            if type(value) is type(held) and type(held) in _MUTABLE:
                _apply(held, value)
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
        object in place. A change one level down (a list in a dict) is seen
        (:func:`_watch_mark`), a deeper one is not."""
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
        for i, now in enumerate(_refcounts(received)):
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

    def changed_constants(self) -> tuple[tuple[str, Any], ...]:
        """The judge's side, before each request: the solution's containers the tests read
        and changed in place since the two sides last agreed (``calls.clear()`` between two
        cases), to be refilled in the solution's process as in-process, where the tests change
        the solution's own object. Only in place: a name the tests rebind is theirs from then
        on (never sent: the solution would get the tests' object, their expected answer
        perhaps, under a name of its own choosing)."""
        changed: list[tuple[str, Any]] = []
        for name, held in list(self.live.items()):
            mark = self.live_marks.get(name)
            if mark is None or not _watch_changed(held, mark):
                continue
            if self._holding(name, held):
                changed.append((name, held))
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
            enc.value(args)
            enc.value(kwargs)
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
        except CodecError as exc:
            raise TypeError(f"cannot be sent to the other process: {exc}") from None
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
            kept = dec.value() if self.trusted else ()
            ambient = dec.value() if self.trusted else None
            dec.end()
            if ambient is not None:
                _take_ambient(ambient)
            if updates:
                self.update_constants(updates)
            if held:
                self.refill_held(held)
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
        dec.end()
        if held:
            self.refill_held(held)
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
        counts = _refcounts(received) if own and not self.trusted else []
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
        if op == "hash":
            return hash(obj)
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


#: The solution's peer, made when the fork server loads this module (see
#: :func:`_solution_peer`): each run's child takes it as its fork left it.
_SPARE_PEER: _Peer | None = None


def _marked(numbers: set[int], obj: Any) -> bool:
    """Whether ``obj`` is a proxy whose number is in ``numbers`` (see _Peer.derive)."""
    return (
        bool(numbers) and type(obj) in _PROXY_TYPES
        and object.__getattribute__(obj, "_id") in numbers
    )  # fmt: skip


def judged_namespace(namespace: dict[str, Any], code: types.CodeType) -> None:
    """In the solution's process, before its code runs: when the code names ``type``, its
    ``type`` is :class:`_TestsType`, which answers ``type(node)`` of a handle of the tests'
    object with the handle of the tests' class (``type(node)(5)``, ``type(a) is type(b)``,
    ``list(type(color))`` of the tests' ``Enum``), and is ``type`` for everything else."""
    if _loads_name(code, "type"):
        namespace["type"] = _TestsType


def _loads_name(code: types.CodeType, name: str) -> bool:
    """Whether ``code`` (or code nested in it) loads the global or built-in ``name``: its
    opcodes read only when one of its code objects names it at all."""
    return any(name in c.co_names for c in _code_objects(code)) and name in _globals_loaded(code)


def judged_stdin() -> None:
    """In the solution's process, before its code runs: ``sys.stdin`` and ``input`` read
    what the tests give (see :class:`_Stdin`), so that ``input = sys.stdin.readline`` at
    its top level reads it too."""
    sys.stdin = _Stdin()
    builtins.input = _input


def _solution_peer(fd: int) -> _Peer:
    """The solution's end of the wire on ``fd``: the spare :class:`_Peer` the fork server made
    when it loaded this module (untouched there, so each run's child gets it fresh from its
    fork), with what ``_Peer.__init__`` reads from the process brought up to date (the
    streams and stdin the run set, the recursion limit the solution may have raised).

    Why not a new one: a ``_Peer`` is ~40 containers, and making them in a freshly forked
    child allocates into ~30 pages of the server's heap, each a copy-on-write fault (~80 µs
    of the child's CPU per check); taking the spare writes its attribute dict's pages only.
    """
    global _SPARE_PEER
    peer, _SPARE_PEER = _SPARE_PEER, None
    if peer is None:
        return _Peer(fd, trusted=False)
    peer.fd = fd
    peer.limit = sys.getrecursionlimit()
    peer.streams = (sys.stdout, sys.stderr)
    peer.stdin = sys.stdin
    return peer


def serve_solution(fd: int, namespace: dict[str, Any], cpu: int | None = None) -> NoReturn:
    """Announce the solution's top-level callables (those that are a standard module's
    attribute of the same name, as ``from heapq import heappush`` makes, by that name), the
    modules it imported, and the names of its other top-level values with a handle to ask for
    them (:class:`_Constants`), on ``fd``; then serve the judge's requests until EOF (on
    ``cpu``, see :func:`_pin`)."""
    _pin(cpu)
    peer = _proxies._PEER = _solution_peer(fd)
    _greet(peer, namespace)
    # The levels below the solution's function when the judge calls it: this frame and those
    # under it (the run's child), then _serve_requests, serve and perform. In-process the
    # tests' call is 3 levels deep (measured: a harness's module exec-ing the tests' module
    # recurses to rec(996) under the limit of 1,000): the limit grows by the difference, so
    # that a recursion goes as deep as there.
    frame: types.FrameType | None = sys._getframe()
    depth = 0
    while frame is not None:
        frame, depth = frame.f_back, depth + 1
    _SERVING_FRAMES[0] = max(0, depth + 3 - 3)
    with contextlib.suppress(ValueError, RecursionError, OverflowError):  # (at C int's top)
        sys.setrecursionlimit(min(sys.getrecursionlimit() + _SERVING_FRAMES[0], 2**31 - 1))
    if "logging" in sys.modules:
        _hook_logging(peer)
    sys.stdout = _Tee(sys.stdout, 1, peer)
    sys.stderr = _Tee(sys.stderr, 2, peer)
    os._exit(0 if _serve_requests(peer) else 1)


def _greet(peer: _Peer, namespace: dict[str, Any]) -> None:
    """The solution's greeting (see :func:`serve_solution`), sent on ``peer``'s wire."""
    peer.namespace = namespace  # what the judge's patches of ``solution`` set
    names: dict[str, Any] = {}
    standard: dict[str, str] = {}
    constants: list[str] = []
    for name, value in list(namespace.items()):
        if type(name) is not str or name.startswith("__"):
            continue
        if not callable(value):
            if type(value) is not type(sys) and len(constants) < MAX_NAMES:
                constants.append(name)
            continue
        if len(names) + len(standard) >= MAX_NAMES:
            break
        module = _standard_module(name, value)
        if module is None:
            names[name] = value
        else:
            standard[name] = module
    modules = {
        name: value.__name__
        for name, value in list(namespace.items())
        if type(name) is str and type(value) is type(sys)
    }
    greeting = _Encoder(peer)
    held = tuple(constants)
    if held:
        peer.constants = _Constants(namespace, held)
    evaluator = _Evaluator(namespace)
    settings = (sys.getrecursionlimit(), _int_digits())
    greeting.value(
        (names, standard, modules, (held, peer.constants) if held else (), evaluator, settings)
    )
    _flush_streams(peer.streams)  # what its top level printed
    _send(peer.fd, b"H", greeting.bytes())


def _serve_requests(peer: _Peer) -> bool:
    """Serve the judge's requests on ``peer``: ``True`` at EOF, ``False`` at a message that
    is no request."""
    peer.local.channel = 0
    while True:
        try:
            kind, body = peer.next_message(0)
        except EOFError:
            return True
        if kind != b"Q":
            return False
        peer.serve(body)


#: Standard modules the judge imports for the tests when the solution imported them.
TEST_MODULES = frozenset({
    "array", "bisect", "cmath", "collections", "copy", "datetime", "decimal", "fractions",
    "functools", "heapq", "itertools", "json", "math", "numpy", "operator", "random", "re",
    "statistics", "string", "sys", "typing",
})  # fmt: skip


#: For the modules of :data:`TEST_MODULES` the fork server had loaded (see
#: :func:`prepare_server`): the id of each of their callables -> the modules holding it.
_STANDARD_INDEX: dict[int, tuple[str, ...]] = {}
#: The modules of :data:`TEST_MODULES` the index does not cover (not loaded in the server).
_UNINDEXED: tuple[str, ...] = tuple(sorted(TEST_MODULES))


def prepare_server() -> None:
    """In the fork server, once, before its first fork: what each run's child would otherwise
    make for itself (see :func:`_solution_peer`, :func:`_standard_module`)."""
    global _SPARE_PEER, _STANDARD_INDEX, _UNINDEXED
    _SPARE_PEER = _Peer(-1, trusted=False)
    index: dict[int, tuple[str, ...]] = {}
    unindexed = []
    for module in sorted(TEST_MODULES):
        found = _module_dict(module)
        if found is None:
            unindexed.append(module)
            continue
        alone = (module,)
        for value in found.values():
            if callable(value):
                held = index.get(id(value), ())
                if module not in held:
                    index[id(value)] = (*held, module) if held else alone
    _STANDARD_INDEX, _UNINDEXED = index, tuple(unindexed)


#: The warm-up's solution and tests (:func:`serve_warm_up`): the shapes of calls a check makes
#: most (numbers, text, containers written back, a generator, a callback, an exception, an
#: object's methods), each :data:`WARM_ROUNDS` times: past the 8 calls after which CPython 3.11
#: quickens the code that serves them (16 saved as many of a child's page faults as 64).
WARM_SOLUTION = """
import math


def add(a, b):
    return a + b


def words(text, sep=None):
    return text.split(sep)


def grid(n):
    return [[i * n + j for j in range(n)] for i in range(n)], {n, -n}


def stats(xs):
    return {"n": len(xs), "total": sum(xs), "mean": sum(xs) / len(xs) if xs else 0.0}


def squares(n):
    for i in range(n):
        yield i, i * i


def sort_in_place(a):
    a.sort()


def apply(f, xs):
    return [f(x) for x in xs]


def root(x):
    if x < 0:
        raise ValueError("negative")
    return math.sqrt(x)


class Stack:
    def __init__(self):
        self.items = []

    def push(self, x):
        self.items.append(x)

    def pop(self):
        return self.items.pop()

    def __len__(self):
        return len(self.items)
"""
WARM_ROUNDS = 16
WARM_TESTS = f"""
def check(candidate):
    for i in range({WARM_ROUNDS}):
        assert candidate(i, 1) == i + 1
        assert candidate("a", str(i)) == "a" + str(i)
        assert words("a b c") == ["a", "b", "c"]
        assert words(text="é,ü", sep=",") == ["é", "ü"]
        assert grid(2) == ([[0, 1], [2, 3]], {{2, -2}})
        assert stats([1, 2, i])["n"] == 3
        assert list(squares(2)) == [(0, 0), (1, 1)]
        a = [3, 1, i]
        sort_in_place(a)
        assert a == sorted([3, 1, i])
        assert apply(lambda x: x * 2, [1, 2.5]) == [2, 5.0]
        try:
            root(-1.0)
        except ValueError:
            pass
        assert root(4.0) == 2.0
        s = Stack()
        s.push((i, None, True))
        assert len(s) == 1 and s.items == [(i, None, True)]
        assert s.pop() == (i, None, True)
"""


def serve_warm_up(fd: int) -> bool:
    """The fork server's warm-up (``_zygote._warm_up``): serve :data:`WARM_SOLUTION` on
    ``fd`` to a judge of :data:`WARM_TESTS`, in this process, as a run's child serves its
    judge; ``True`` when served to the end (EOF). Never raises. Nothing of it stays here but
    the interpreter's own caches: ``_PEER`` is reset, the wire's buffer is dropped, and the
    namespace and the peer are garbage (collected before the server freezes its heap).

    Why: CPython 3.11 quickens a function's bytecode in place after its 8th call (or loop
    iteration), writing into the code object, and then specialises its instructions. Each
    run's child is a fresh fork, so the code that serves the judge was cold in every child:
    each check quickened it anew, and each page of bytecode written was a copy-on-write fault.
    Run in the server, that code is quickened once and every child inherits it."""
    try:
        namespace: dict[str, Any] = {"__name__": "solution", "__builtins__": builtins}
        exec(compile(WARM_SOLUTION, "<program>", "exec", dont_inherit=True), namespace)
        peer = _proxies._PEER = _Peer(fd, trusted=False)
        _greet(peer, namespace)
        return _serve_requests(peer)
    except Exception:
        return False
    finally:
        _proxies._PEER = None
        _buffers.pop(fd, None)


def _standard_module(name: str, value: Any) -> str | None:
    """The module of :data:`TEST_MODULES` whose attribute ``name`` is ``value`` (the solution's
    ``from heapq import heappush``), if any: the judge then uses its own.

    Why an index made in the server: the loop over the 21 modules' dicts, done for each of the
    solution's names in a freshly forked child, wrote (reference counts) a page of each module
    object and of each dict, ~20 copy-on-write faults per check. The index only says which
    modules to look in; the module's own dict decides, so an id the server saw for an object
    since freed cannot answer wrong, and a module attribute the solution replaced is its own
    (a handle), as in-process. Modules the server had not loaded (numpy) are looked up as
    before."""
    for module in (*_STANDARD_INDEX.get(id(value), ()), *_UNINDEXED):
        found = _module_dict(module)
        if found is not None and found.get(name) is value:
            return module
    return None


def _module_dict(module: str) -> dict[str, Any] | None:
    """The dict of the module ``module`` if it is loaded here. Read directly, not through
    ``getattr``: a miss is then a dict lookup, not two ``AttributeError``s formatted and
    cleared, nor a call of a module's own ``__getattr__``."""
    found = getattr(sys.modules.get(module), "__dict__", None)
    return found if type(found) is dict else None


def _may_proxy(name: str) -> bool:
    """Whether a name the solution announced may stand in the tests' namespace: never one
    that would shadow a built-in (a solution defining ``abs`` must not change the tests'
    ``abs``), a dunder, or a keyword."""
    return (
        name.isidentifier()
        and not keyword.iskeyword(name)
        and not name.startswith("__")
        and not hasattr(builtins, name)
    )


def _greeting(
    value: Any,
) -> tuple[dict[str, Any], dict[str, str], dict[str, str], tuple[Any, ...]]:
    if type(value) is not tuple or len(value) != 6 or type(value[4]) not in _PROXY_TYPES:
        raise CodecError("malformed greeting")
    names, standard, modules, constants, evaluator, settings = value
    _take_solution_settings(settings)
    peer = _peer()
    peer.evaluator = evaluator
    if constants != () and (
        type(constants) is not tuple
        or len(constants) != 2
        or type(constants[0]) is not tuple
        or not all(type(n) is str for n in constants[0])
        or type(constants[1]) not in _PROXY_TYPES
    ):
        raise CodecError("malformed greeting")
    for table in (names, standard, modules):
        if type(table) is not dict or not all(type(k) is str for k in table):
            raise CodecError("malformed greeting")
    # A top-level callable is a handle, or a built-in class under another name (typing's
    # ``Text`` is ``str``: crossed as the judge's own class), or a standard class the solution
    # imported (``from collections.abc import Set``: the judge's own, see _standard_class), or
    # a value-backed handle, or one of the solution's exception classes (the judge's class for
    # it, see _Peer.mirror).
    if not all(
        type(v) in _PROXY_TYPES or type(v) in _BACKED_CLASSES or id(v) in _BUILTIN_TYPE_NAMES
        or type(v) is _Mirror or _standard_class_name(v) is not None
        for v in names.values()
    ):
        raise CodecError("a top-level callable that is not a handle")
    if not all(type(v) is str for v in (*standard.values(), *modules.values())):
        raise CodecError("malformed greeting")
    return names, standard, modules, constants


#: The most recursion limit a solution's ``sys.setrecursionlimit`` gives the tests (see
#: :func:`_take_solution_settings`): past any depth a stack reaches, and far enough below
#: ``INT_MAX`` that the judge's own temporary raise (:func:`_deepened`) cannot overflow.
MAX_RECURSION_LIMIT = 100_000_000


def _take_solution_settings(settings: Any) -> None:
    """The judge's side, at the greeting: the process-wide settings the solution's top level
    made that in-process are the tests' too (the solution's code runs first, in the one
    interpreter), given to the tests: its ``sys.setrecursionlimit(10_000)`` when higher than
    the judge's (the tests' own recursion then goes as deep; a lower one is not taken: only the
    limit the tests' code runs under is at stake, never the judge's footing), at most
    :data:`MAX_RECURSION_LIMIT`; its ``sys.set_int_max_str_digits(0)`` (the tests' ``str()`` of a
    big result). Either only harms the check that takes it (a crash, a slow conversion: a
    judge that dies gives no "passed"); a changed digit limit retires a long-lived judge as the
    tests' own does (see ``_zygote_child._interpreter_settings``)."""
    if (
        type(settings) is not tuple
        or len(settings) != 2
        or type(settings[0]) is not int
        or not (settings[1] is None or type(settings[1]) is int)
    ):
        raise CodecError("malformed greeting")
    limit, digits = settings
    limit = min(limit, MAX_RECURSION_LIMIT)
    if limit > sys.getrecursionlimit():
        sys.setrecursionlimit(limit)
        _peer().limit = limit  # the solution's own: nothing to send it back
    if digits is not None and digits != _int_digits() and _set_int_max_str_digits is not None:
        with contextlib.suppress(ValueError):  # below the minimum: the solution could not
            _set_int_max_str_digits(digits)


def _import_submodules(modules: Any, used: frozenset[str]) -> None:
    """Load here a library's submodules the solution imported under a top-level name (``import
    matplotlib.pyplot as plt``) when the tests name that library: in-process, the tests'
    ``import matplotlib`` then finds ``matplotlib.axes`` and ``matplotlib.figure`` loaded by the
    solution's import (BigCodeBench's ``assertIsInstance(ax, matplotlib.axes.Axes)``). Library
    modules only (:func:`_library_module`: nothing of the standard library, the judge, pytest),
    at most :data:`MAX_NAMES`; one that fails to load here is left out."""
    for module in list(modules)[:MAX_NAMES]:
        if (
            "." in module
            and module.partition(".")[0] in used
            and _library_module(module)
            and module not in sys.modules
        ):
            with contextlib.suppress(Exception):
                importlib.import_module(module)


def _reached_modules(
    modules: dict[str, str], used: frozenset[str], held: dict[str, Any]
) -> dict[str, Any]:
    """The standard modules the solution imported that the tests reach through the
    ``solution`` module (``patch("solution.os.path.exists")``, ``patch("solution.time.sleep")``,
    ``solution.shutil``), not among :data:`TEST_MODULES`: the judge's own module of that name,
    already loaded here (never imported for this: the name is the solution's claim), under the
    solution's alias, when the tests name that alias and ``held`` has nothing of that name.
    Only the ``solution`` module holds them (the tests' namespace does not: they import their
    own); a patch through one patches the judge's module, which reaches the solution as the
    tests' patch of that module does (see :func:`_forwarded_patches`)."""
    found: dict[str, Any] = {}
    for alias, name in list(modules.items())[:MAX_NAMES]:
        if (
            alias in used
            and alias not in held
            and _may_proxy(alias)
            and name.partition(".")[0] in sys.stdlib_module_names
            and type(module := sys.modules.get(name)) is types.ModuleType
        ):
            found[alias] = module
    return found


def _for_tests(name: str, value: Any) -> Any:
    """What the tests' namespace holds under a name of the solution's: never the solution's
    object under the name of a standard module (tests that use ``math`` without importing it
    get the judge's math, not a ``math = Fake()`` whose ``isclose`` is always true)."""
    return _import(name) if name in TEST_MODULES else value


def _ask_constants(
    peer: _Peer, constants: tuple[Any, ...], used: frozenset[str], namespace: dict[str, Any],
    code: types.CodeType | None = None,
) -> None:
    """Put the solution's top-level values that the tests name (and that nothing else of the
    namespace holds) in the tests' namespace, as in-process where the tests share the
    solution's globals: one request, only when the tests name one; kept current after that
    (:meth:`_Peer.update_constants`). Asking is an answer of the solution to the tests (see
    ``answered``) only when the tests' ``code`` names one of the values in its bytecode, not
    only in a string: DS-1000's solution computes ``result`` and its tests read it, with no
    call at all."""
    if not constants:
        return
    held, ask = constants
    wanted = tuple(
        n for n in held[:MAX_NAMES] if n in used and n not in namespace and _may_proxy(n)
    )
    if not wanted:
        return
    answered = peer.answered
    values = ask(wanted)
    peer.answered = answered
    if code is not None and any(
        name in current.co_names for current in _code_objects(code) for name in wanted
    ):
        peer.answered += 1
    if type(values) is not tuple or len(values) != len(wanted):
        peer.fail("the solution answered the request for its values with something else")
    for name, value in zip(wanted, values, strict=True):
        namespace[name] = peer.live[name] = _for_tests(name, value)
        peer.live_marks[name] = _watch_mark(peer.live[name])


def entry_steps(entry_point: str) -> tuple[str, list[str | None]]:
    """``entry_point`` as its first name and the steps after it (None: a call with no
    arguments; a str: an attribute): ``"f"``, or a chain such as LeetCodeDataset's
    ``"Solution().twoSum"``. Raises ``ValueError`` for anything else (no arguments, no
    subscripts, no private or special names)."""
    parts = entry_point.split(".")
    root, steps = "", list[str | None]()
    for i, part in enumerate(parts):
        calls = 0
        while part.endswith("()"):
            part, calls = part[:-2], calls + 1
        if not part.isidentifier() or keyword.iskeyword(part) or (i and part.startswith("_")):
            raise ValueError(
                f"entry_point must be a name, or names, '.' and '()' as in "
                f"'Solution().twoSum', got {entry_point!r}"
            )
        if i:
            steps.append(part)
        else:
            root = part
        steps += [None] * calls
    if len(steps) > 20:
        raise ValueError(f"entry_point has more than 20 steps: {entry_point!r}")
    return root, steps


def _changed_modules(roots: frozenset[str], namespace: dict[str, Any]) -> bool:
    """Whether the check may have left a module of this process changed for the next check of
    a long-lived judge: one of the tests' :func:`_attribute_roots` names a module (the
    ``solution`` module of the check excepted: it is the check's own), or a patch the tests
    started is still in force (``patch(...).start()`` without ``stop()``)."""
    if _PATCHES or "<local import>" in roots:
        return True
    for name in roots:
        value = namespace.get(name)
        if isinstance(value, types.ModuleType) and not isinstance(value, _SolutionModule):
            return True
    return False


def _import(module: str) -> Any:
    return _import_numpy() if module == "numpy" else importlib.import_module(module)


def _standard(module: str, name: str) -> Any:
    """The judge's own ``module.name`` when it is a public callable of a module of
    :data:`TEST_MODULES`, else None."""
    if module not in TEST_MODULES or not name.isidentifier() or name.startswith("_"):
        return None
    value = getattr(_import(module), name, None)
    return value if callable(value) else None


def judge_check(
    sock_fd: int, tests: str, entry_point: str | None, cpu: int | None = None
) -> tuple[bytes, bool]:
    """Run ``tests`` against the solution behind ``sock_fd`` (in a fresh namespace, through a
    fresh :class:`_Peer`); return the verdict (``P`` only when every test ran to its end, else
    ``F<reason>``) and whether the check was an *anomaly* after which a long-lived judge must
    not serve another one: the solution broke the wire or a bound, made any request of the
    tests' objects (callbacks: the only way it runs code of this process), or the check ended
    in a ``MemoryError``, a ``RecursionError`` or a ``BaseException`` that is no ``Exception``,
    or the tests may have left a module of this process changed (:func:`_changed_modules`)."""
    peer = _proxies._PEER = _Peer(sock_fd, trusted=True)
    verdict = b"F"
    anomaly = False
    argv = sys.argv
    roots: frozenset[str] = frozenset()
    namespace: dict[str, Any] = {}
    try:
        peer.tests = tests
        try:
            kind, body = _recv(sock_fd)
            if kind != b"H":
                raise CodecError("no greeting")
            dec = _Decoder(body, peer)
            names, standard, modules, constants = _greeting(dec.value())
            dec.end()
        except (EOFError, OSError):
            peer.fail("the solution exited or failed before defining its functions")
        except CodecError as exc:
            peer.fail(f"the solution sent a malformed greeting ({exc})")
        _pin(cpu)
        code, used, roots = _compiled(tests)
        _PATCHES.clear()  # a long-lived judge's earlier check left none in force (or its own)
        _SPIES.clear()
        _ASSIGNED.clear()
        _SOLUTIONS.clear()
        _PATCH_COUNT[0] = 0
        _ARGV_SENT[:] = _TESTS_ARGV
        for sync in _SEEDED.values():
            sync[:] = [False, 0, None]
        if "seed" in tests or "setstate" in tests or "set_state" in tests:
            _watch_seeds(tests)  # (before the environment is taken: numpy's import sets some)
        _ENVIRON_AT_START.clear()
        _ENVIRON_AT_START.update(os.environ)
        _AMBIENT_WATCHED["environ"] = "environ" in tests or "getenv" in tests
        _AMBIENT_WATCHED["cwd"] = any(word in tests for word in _CWD_WORDS)
        _BACK_NAMES.clear()
        if _AMBIENT_WATCHED["environ"]:
            _BACK_NAMES.update(_back_names(code))
        if _AMBIENT_WATCHED["cwd"] or _BACK_NAMES:
            _PATCH_COUNT[0] += 1  # the first request tells the solution (see _AMBIENT_BACK)
        _AMBIENT_STATE.clear()
        for label, (words, attr, setting) in _AMBIENT_SETTINGS.items():
            if any(word in tests for word in words):
                _AMBIENT_STATE[label] = [setting()[attr]] * 2
        _ENVIRON_COUNTED.clear()
        _ENVIRON_COUNTED.update(os.environ)
        _CWD_AT_START[0] = _CWD_COUNTED[0] = _cwd() if _AMBIENT_WATCHED["cwd"] else None
        if "mock" in tests:
            _watch_patches()
        if "log" in tests or "Log" in tests:
            _watch_logging()
        if "warn" in tests or "deprecated_call" in tests:
            _watch_warnings()
        if "yaml" in tests:
            _guard_yaml()
        if "assertSetEqual" in tests:
            _guard_set_assertions()
        if "pytest.main" in tests:
            _pytest_main_runs_nothing()
        if "doctest" in tests:
            _doctest_in_solution()
        if "Config" in tests:  # logging.config.dictConfig / fileConfig
            _guard_logging_config()
        if _WARNINGS_WATCHED:
            module: Any = warnings
            _WARNINGS_AT_START[:] = [
                list(module.filters), module.showwarning, module._showwarnmsg_impl
            ]  # fmt: skip
        # The tests run as the script ``__main__``: a module of their own for this check (so
        # that ``unittest.main()`` finds their TestCases), with no command-line arguments.
        main = types.ModuleType("__main__")
        namespace = vars(main)
        namespace["__builtins__"] = builtins
        # A file's name (``pytest.main([__file__])``, a path beside it), relative to the
        # working directory: the file the tests would be, not one the check has.
        namespace["__file__"] = TESTS_FILE
        if "type" in used:
            namespace["type"] = _TestsType
        for name, module in list(standard.items())[:MAX_NAMES]:
            own = _standard(module, name) if name in used and _may_proxy(name) else None
            if own is not None:
                namespace[name] = own
        for name, handle in list(names.items())[:MAX_NAMES]:
            if _may_proxy(name):
                namespace[name] = _for_tests(name, handle)
        # MBPP's asserts use modules the solution imported (``math.isclose`` with no import
        # of their own): the judge imports its own copy of those the tests name, from a list
        # of standard modules; nothing of the solution's modules crosses.
        for alias, module in list(modules.items())[:MAX_NAMES]:
            fits = module in TEST_MODULES and _may_proxy(alias)
            if fits and alias in used and alias not in namespace:
                namespace[alias] = _import(module)
        _import_submodules(modules.values(), used)
        _ask_constants(peer, constants, used, namespace, code)
        # pytest-style tests (KodCode, ACECode: ``from solution import f`` and ``def test_...``)
        # import the solution by its module name: a module of the judge's, for this check only,
        # holding what the tests' namespace holds of the solution.
        as_module = _SolutionModule("solution")
        _SOLUTIONS.update({k: v for k, v in namespace.items() if not k.startswith("__")})
        _SOLUTIONS.update(_reached_modules(modules, used, _SOLUTIONS))
        vars(as_module).update(_SOLUTIONS)
        peer.live_spaces = [namespace, vars(as_module)]
        _CHECK[:] = [code, namespace]
        saved = sys.modules.get("solution"), sys.modules.get("__main__")
        sys.modules["solution"], sys.modules["__main__"] = as_module, main
        # The tests' argv until the check ends (``check(candidate)`` included): restored below.
        sys.argv = list(_TESTS_ARGV)
        try:
            try:
                _EXEC(code, namespace)
            except SystemExit as done:
                # ``unittest.main()`` under ``if __name__ == "__main__"`` ends with its verdict:
                # exit status 0 (False) when every test passed, as when the file is run. The
                # solution's own exit, raised in the tests and not caught there, is no verdict.
                if vars(done).get(_SOLUTION_EXIT):
                    raise AssertionError(
                        f"the solution exited (sys.exit({done.code!r})) in a call of the tests"
                    ) from None
                by_unittest = _unittest_main_exit(done)
                status = done.code
                if by_unittest and status == _UNITTEST_NO_TESTS and not _testcases(namespace):
                    status = 0  # Python 3.12+'s unittest.main() of a file of pytest-style tests
                if status not in (None, 0, False) or peer.failed is not None:
                    raise AssertionError(f"the tests exited with status {done.code!r}") from None
                # Then what pytest collects from the file and the script did not run: its test
                # functions and classes beside unittest.main()'s TestCases (a wrong solution
                # those would fail must not pass because the file ended in unittest.main()).
                if entry_point is None:
                    _run_test_functions(namespace, testcases=not by_unittest)
            else:
                if entry_point is None:
                    _run_test_functions(namespace)
        finally:
            for key, value in (("solution", saved[0]), ("__main__", saved[1])):
                if value is None:
                    sys.modules.pop(key, None)
                else:
                    sys.modules[key] = value
        if entry_point is not None:
            check = namespace.get("check")
            if not callable(check):
                raise NameError("the tests define no check(candidate) function")
            # The entry point is the solution's, even where the tests define a stub of it
            # (HumanEval's prompt does; HumanEval/33's check calls it by name).
            root, steps = entry_steps(entry_point)
            if root in names:
                candidate = names[root]
            elif root in standard:
                candidate = _standard(standard[root], root)
            else:
                found: dict[str, Any] = {}
                _ask_constants(peer, constants, frozenset((root,)), found)
                if root not in found:
                    raise NameError(f"the solution defines no {root}")
                candidate = found[root]
            if not steps:
                namespace[root] = candidate
            # LeetCodeDataset's ``Solution().twoSum``: the solution's object, made and read
            # through its handle, as ``check(Solution().twoSum)`` in-process.
            for step in steps:
                candidate = candidate() if step is None else getattr(candidate, step)
            check(candidate)
        if peer.broken is not None:
            verdict = b"F" + peer.broken.encode("utf-8", "replace")
        elif peer.failed is not None:
            verdict = b"F" + peer.failed.encode("utf-8", "replace")
        elif peer.answered > 0:
            verdict = b"P"
        else:
            verdict = b"Fthe tests never got an answer from the solution: nothing was judged"
    except BaseException as exc:
        # MemoryError and RecursionError are Exceptions, but leave a process in doubt.
        anomaly = not isinstance(exc, Exception) or isinstance(exc, (MemoryError, RecursionError))
        try:
            reason = peer.broken or peer.failed or _describe(exc, tests)
            verdict = b"F" + reason.encode("utf-8", "replace")[:8000]
        except BaseException:
            verdict, anomaly = b"Fthe judge could not describe the failure", True
    try:
        anomaly = anomaly or peer.broken is not None or peer.served > 0 or peer.threaded
        anomaly = anomaly or _changed_modules(roots, namespace)
    except BaseException:
        anomaly = True
    _buffers.pop(sock_fd, None)  # its unread bytes are this check's, never the next one's
    _proxies._PEER = None
    _CHECK[:] = [None, {}]
    sys.argv = argv
    return verdict[:16000], anomaly


def judge(
    sock_fd: int,
    verdict_fd: int,
    key: bytes,
    tests: str,
    entry_point: str | None,
    cpu: int | None = None,
    workdir: str | None = None,
) -> NoReturn:
    """A judge of one check: :func:`judge_check`, its verdict written on ``verdict_fd`` after
    the caller's ``key`` (``_zygote_wire.VERDICT_KEY_BYTES``), exit: 0 only when the verdict
    went, whole, on the pipe it was given (:func:`deliver_verdict`). ``workdir``: the directory
    the tests share with the solution (see :data:`_WORKDIR`)."""
    _guard._WORKDIR = workdir
    _guard._WORKDIR_ROOTS = () if workdir is None else _workdir_roots(workdir)
    verdict = b"F"
    status = 1
    try:
        given = _fstat(verdict_fd)
        verdict, _ = judge_check(sock_fd, tests, entry_point, cpu)
    finally:
        try:
            if deliver_verdict(verdict_fd, given, key + verdict):
                status = 0
        finally:
            os._exit(status)


def same_file(fd: int, given: Any) -> bool:
    """Whether ``fd`` still names the file it named when the judge was given it (``given``:
    its ``fstat`` then). Why: while the judge serves the solution, a callable of the tests'
    that opens what it is told (``open`` itself handed to the solution, a helper that opens a
    path) can close any descriptor of the judge's (``open(fd).close()``) and open another file
    at its number; the judge must not write its verdict there. (``os.fstat`` bound at import:
    the tests may patch ``os``.)"""
    try:
        now = _fstat(fd)
    except OSError:
        return False
    return (now.st_dev, now.st_ino) == (given.st_dev, given.st_ino)


def deliver_verdict(fd: int, given: Any, data: bytes) -> bool:
    """Write all of ``data`` (the key and the verdict) on the verdict pipe ``fd`` (a pipe
    takes more than ``PIPE_BUF`` in pieces), when ``fd`` is still the pipe the judge was given
    (``given``: see :func:`same_file`); False, nothing written, when it is not. An ``OSError``
    when the write fails."""
    if not same_file(fd, given):
        return False
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
    return True


#: The tests' ``__file__`` (a name relative to the working directory: see judge_check).
TESTS_FILE = "test_solution.py"
#: ``unittest.main()``'s exit status when it found no test (Python 3.12+).
_UNITTEST_NO_TESTS = 5


def _unittest_main_exit(done: SystemExit) -> bool:
    """Whether ``unittest.main()`` raised ``done`` (its exit after running the TestCases)."""
    tb = done.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    filename = tb.tb_frame.f_code.co_filename if tb is not None else ""
    return filename.endswith(os.path.join("unittest", "main.py"))


def _testcases(namespace: dict[str, Any]) -> bool:
    """Whether the tests define a ``unittest.TestCase``."""
    testcase = getattr(sys.modules.get("unittest"), "TestCase", None)
    return isinstance(testcase, type) and any(
        isinstance(obj, type) and issubclass(obj, testcase) and obj is not testcase
        for obj in namespace.values()
    )


def _run_test_functions(namespace: dict[str, Any], testcases: bool = True) -> None:
    """Run the tests' pytest-style tests, as pytest collects them: top-level functions named
    ``test*`` defined by the tests, the ``test*`` methods (static and class methods too) of
    ``Test*`` classes without ``__init__``, inherited ones included, and of the ``Test*``
    classes nested in those (a fresh instance per test), and ``unittest.TestCase`` classes (by
    ``unittest``'s own runner; not with ``testcases`` False: ``unittest.main()`` ran them), in
    their order of definition; ``@pytest.mark.parametrize`` (stacked ones too, on the test,
    its class or the module) calls a function once per parameter set. The first failure is
    the check's failure.

    Around them, as pytest: the xunit-style ``setup_module``/``teardown_module``,
    ``setup_function``/``teardown_function``, ``setup_class``/``teardown_class`` and
    ``setup_method``/``teardown_method`` (with their argument when they take one); the marks
    ``skip``, ``skipif`` (a bool condition, or a string of the tests: see :func:`_condition`),
    ``xfail`` (a failure that is an ``Exception``, of ``raises`` when given, is no failure; a
    pass is one only when ``strict``) and ``usefixtures``, on the test, its class, its
    parameter set or the module's ``pytestmark``; ``pytest.skip()`` and ``pytest.xfail()``
    inside a test. Only pytest's own mark objects count: a value the solution names
    ``pytestmark`` is none.

    Fixtures: ``capsys`` and ``capfd`` (:class:`_CapSys`), ``request`` (:class:`_Request`: a
    fixture with ``params`` runs each test that needs it once per param), ``tmp_path``,
    ``tmpdir`` and ``tmp_path_factory`` where the check shares a directory with the solution
    (:data:`_WORKDIR`: the tests name a file API), ``monkeypatch`` (pytest's own, undone after
    the test; what it patches is the tests' process: a patched ``sys.stdin`` or
    ``builtins.input`` is what the solution reads, see :meth:`_Peer.serve_input`, and a
    module's attribute and the environment reach it, see :func:`_forwarded_patches`) and the
    tests' own ``@pytest.fixture`` functions (by their ``name=``; ``yield`` fixtures torn down
    after their scope: the test, its class, or the module for ``module``, ``package`` and
    ``session``; ``autouse`` ones set up for every test), pytest's own ``caplog`` and
    ``recwarn`` (:func:`_caplog`, :func:`_recwarn`), and ``subtests`` (:class:`_SubTests`).
    A test that needs another (a parameter nothing gives: ``capsysbinary``, ``pytestconfig``)
    fails the check, naming it: skipping the test would judge less than the tests ask. The
    module's ``pytest_generate_tests`` hook is called for each pytest-style test
    (:class:`_Metafunc`), not for a TestCase's. An ``async def`` test runs when it has the
    ``asyncio`` mark and pytest-asyncio is installed (:func:`_asyncio_test`)."""
    module = namespace.get("__name__")
    fixtures: dict[str, _FixtureDef] = {}
    for obj in list(namespace.values()):
        found = _fixture(obj)
        if found is not None:
            fixtures[found.name] = found
    autouse = [name for name, fixture in fixtures.items() if fixture.autouse]
    module_marks = _marks(namespace.get("pytestmark"))
    unittest = sys.modules.get("unittest")
    testcase = getattr(unittest, "TestCase", None)
    main = sys.modules.get("__main__")
    own = {
        name: obj
        for name, obj in namespace.items()
        if type(obj) is types.FunctionType and obj.__module__ == module  # (not a handle's)
    }
    fixture_functions = {id(f.function) for f in fixtures.values()}
    scopes = _Scopes(own.get("pytest_generate_tests"))
    # pytest takes unittest's spellings too; unittest's own runner calls those for TestCases.
    camel = not _testcases(namespace)
    setup = own.get("setup_module") or (own.get("setUpModule") if camel else None)
    teardown = own.get("teardown_module") or (own.get("tearDownModule") if camel else None)
    try:
        _xunit(setup, main)
        for name, obj in list(namespace.items()):
            if not isinstance(name, str) or name in fixtures:
                continue
            if type(obj) is types.FunctionType:
                if (
                    obj.__module__ == module
                    and id(obj) not in fixture_functions
                    and _is_test(obj, name, "test")
                ):
                    xunit = (own.get("setup_function"), own.get("teardown_function"))
                    _TestRun(name, obj, fixtures, autouse, scopes, module_marks, xunit).call()
            elif not isinstance(obj, type) or obj.__module__ != module:
                continue
            elif isinstance(testcase, type) and issubclass(obj, testcase):
                if testcases and getattr(obj, "__test__", True):
                    _run_testcase(name, obj, fixtures, autouse, scopes, module_marks)
            elif _is_test(obj, name, "Test") and _collected_class(obj):
                _run_test_class(name, obj, fixtures, autouse, scopes, module_marks)
    finally:
        try:
            scopes.end("module")
        finally:
            _xunit(teardown, main)


def _run_test_class(
    name: str,
    cls: type,
    fixtures: dict[str, _FixtureDef],
    autouse: list[str],
    scopes: _Scopes,
    module_marks: list[Any],
    outer: tuple[_FixtureDef, ...] = (),
) -> None:
    """A ``Test*`` class's ``test*`` methods, each on a fresh instance, and its nested
    ``Test*`` classes, between its ``setup_class`` and ``teardown_class``. ``outer``: the
    fixtures (methods) of the classes it is nested in."""
    marks = module_marks + _marks(vars(cls).get("pytestmark"))
    if _skipped(marks):
        return
    testcase = getattr(sys.modules.get("unittest"), "TestCase", None)
    # The class's own fixtures (methods: ``@pytest.fixture(autouse=True) def setup(self)``)
    # and those of the classes it is nested in, each bound to the instance of the test that
    # uses it (as pytest binds them to ``request.instance``).
    members = [(attr, member, _fixture(member)) for attr, member in _class_members(cls)]
    own = (*outer, *(f for _, _, f in members if f is not None))
    _xunit(getattr(cls, "setup_class", None), cls)
    try:
        for attr, member, fixture in members:
            if fixture is not None:
                continue  # a fixture, not a test (pytest collects none named test_)
            if isinstance(member, type):
                inner = f"{name}.{attr}"
                if not _is_test(member, attr, "Test"):
                    continue
                if isinstance(testcase, type) and issubclass(member, testcase):
                    _run_testcase(inner, member, fixtures, autouse, scopes, marks)
                elif _collected_class(member):
                    _run_test_class(inner, member, fixtures, autouse, scopes, marks, own)
                continue
            static = isinstance(member, staticmethod)
            wrapped = isinstance(member, (staticmethod, classmethod))
            function = member.__func__ if wrapped else member
            if type(function) is types.FunctionType and _is_test(function, attr, "test"):
                instance = cls()
                xunit = (
                    getattr(instance, "setup_method", None),
                    getattr(instance, "teardown_method", None),
                )
                bound = {f.name: f.bind(instance) for f in own}
                run_fixtures = {**fixtures, **bound} if bound else fixtures
                run_autouse = [*autouse, *(f.name for f in own if f.autouse)]
                _TestRun(
                    f"{name}.{attr}", getattr(instance, attr), run_fixtures, run_autouse,
                    scopes, marks, xunit, bound=not static, owner=(cls, instance),
                ).call()  # fmt: skip
    finally:
        try:
            scopes.end("class")
        finally:
            _xunit(getattr(cls, "teardown_class", None), cls)


def _collected_class(cls: type) -> bool:
    """Whether pytest collects a ``Test*`` class: one without an ``__init__`` of its own or of
    a base (it warns and skips one that has), and not abstract."""
    return not getattr(cls, "__abstractmethods__", None) and not any(
        "__init__" in vars(c) for c in cls.__mro__[:-1]
    )


def _is_test(obj: Any, name: str, prefix: str) -> bool:
    """Whether pytest takes the tests' ``obj`` for a test (a function) or a test class: named
    with ``prefix`` or marked ``__test__ = True`` (nose's way), and not ``__test__ = False``
    (a helper named ``test_case(w, h, expected)``)."""
    flag = getattr(obj, "__test__", None)
    return (name.startswith(prefix) or flag is True) and (flag is None or bool(flag))


def _class_members(cls: type) -> list[tuple[str, Any]]:
    """A class's attributes in pytest's collection order: each name once, the class's own
    taking it from its bases', and the bases' (farthest first) before the class's own."""
    seen: set[str] = set()
    groups: list[list[tuple[str, Any]]] = []
    for klass in cls.__mro__[:-1]:
        group = []
        for attr, member in list(vars(klass).items()):
            if type(attr) is str and attr not in seen:
                seen.add(attr)
                group.append((attr, member))
        groups.append(group)
    return [item for group in reversed(groups) for item in group]


def _xunit(fn: Any, arg: Any) -> None:
    """Call a pytest xunit-style setup or teardown of the tests (``setup_module(module)``,
    ``setup_method(self, method)``...), with its argument when it takes one, as pytest does;
    nothing for None."""
    if fn is None:
        return
    target = getattr(fn, "__func__", fn)
    code = getattr(target, "__code__", None)
    if code is None:
        raise TypeError(f"{fn!r} is not a function of the tests")
    if code.co_argcount - int(target is not fn) >= 1:
        fn(arg)
    else:
        fn()


def _run_testcase(
    name: str,
    cls: type,
    fixtures: dict[str, _FixtureDef] | None = None,
    autouse: list[str] | None = None,
    scopes: _Scopes | None = None,
    module_marks: list[Any] | None = None,
) -> None:
    """A ``unittest.TestCase`` of the tests, run by ``unittest`` (setUp, tearDown, subTest...).

    Where pytest would add to it (the tests' ``autouse`` fixtures, its own fixture methods, a
    ``skip``, ``skipif``, ``xfail``, ``usefixtures`` or ``filterwarnings`` mark on the
    module, the class or a method), each of its tests runs as pytest runs one: unittest's
    run of that test inside a :class:`_TestRun` that gives the fixtures and obeys the marks,
    between the class's ``setUpClass`` and ``tearDownClass``. A wrong solution an ``xfail(
    strict=True)`` test or a fixture's teardown assertion would fail no longer passes."""
    import unittest

    marks = (module_marks or []) + _marks(vars(cls).get("pytestmark"))
    suite = unittest.defaultTestLoader.loadTestsFromTestCase(cls)
    cases: list[Any] = list(suite)
    methods = [getattr(cls, case._testMethodName, None) for case in cases]
    own = [f for _, member in _class_members(cls) if (f := _fixture(member)) is not None]
    pytest_marks = {"skip", "skipif", "xfail", "usefixtures", "filterwarnings"}
    method_marks = [m for f in methods for m in _marks(getattr(f, "pytestmark", None))]
    if fixtures is not None and scopes is not None and (
        autouse or own or any(m.name in pytest_marks for m in (*marks, *method_marks))
    ):
        _run_testcase_as_pytest(name, cls, cases, marks, own, fixtures, autouse or [], scopes)
        return
    result = unittest.TestResult()
    suite.run(result)
    _unittest_failed(result, name)
    if result.testsRun == 0:
        raise AssertionError(f"{name}: no test ran")


def _unittest_failed(result: Any, name: str) -> None:
    """Raise the first failure, error or unexpected success of a ``unittest`` result as the
    check's failure (``name``: the TestCase, or its test)."""
    problems = result.failures + result.errors + result.unexpectedSuccesses
    if problems:
        first = problems[0]
        detail = first[1] if isinstance(first, tuple) else ""
        raise AssertionError(f"{name}: {detail}"[:4000])


def _run_testcase_as_pytest(
    name: str,
    cls: Any,
    cases: list[Any],
    marks: list[Any],
    own: list[_FixtureDef],
    fixtures: dict[str, _FixtureDef],
    autouse: list[str],
    scopes: _Scopes,
) -> None:
    """:func:`_run_testcase`'s tests one by one, each a :class:`_TestRun` (see there)."""
    import unittest

    if _skipped(marks):
        return
    cls.setUpClass()
    try:
        for case in cases:
            test = f"{name}.{case._testMethodName}"

            def run_one(case: Any = case, test: str = test) -> None:
                result = unittest.TestResult()
                case.run(result)
                _unittest_failed(result, test)

            method = getattr(cls, case._testMethodName, None)
            bound = {f.name: f.bind(case) for f in own}
            _TestRun(
                test, run_one, {**fixtures, **bound} if bound else fixtures,
                [*autouse, *(f.name for f in own if f.autouse)], scopes,
                marks + _marks(getattr(method, "pytestmark", None)), (None, None),
                generated=False, owner=(cls, case),
            ).call()  # fmt: skip
    finally:
        try:
            scopes.end("class")
        finally:
            cls.tearDownClass()
            cls.doClassCleanups()
    if not cases:
        raise AssertionError(f"{name}: no test ran")


class _FixtureDef:
    """A ``@pytest.fixture`` of the tests: its function, name, ``autouse``, scope and
    ``params`` (each test that needs it runs once per param, ``request.param``; as the tests
    give them, ``pytest.param(v, marks=...)`` included: :func:`_param_value`,
    :func:`_param_marks`)."""

    __slots__ = ("autouse", "function", "name", "params", "requires", "scope")

    def __init__(
        self, function: Any, name: str, autouse: bool, scope: str, params: list[Any] | None
    ) -> None:
        self.function = function
        self.name = name
        self.autouse = autouse
        # session and package fixtures live as long as the module's: the tests are one file.
        self.scope = {"session": "module", "package": "module"}.get(scope, scope)
        self.params = params
        self.requires = _parameters(function, isinstance(function, types.MethodType))[1]

    def bind(self, instance: Any) -> _FixtureDef:
        """This fixture, a method of a test class, bound to the test's ``instance``."""
        method = types.MethodType(self.function, instance)
        return _FixtureDef(method, self.name, self.autouse, self.scope, self.params)


def _fixture(obj: Any) -> _FixtureDef | None:
    """A ``@pytest.fixture`` of the tests (pytest 8.4+'s fixture definitions, and older
    pytest's marked functions), else None. Never asks a handle: the solution's objects are
    neither (a request here would also count as an answer)."""
    if type(obj) in _PROXY_TYPES or (
        type(obj).__name__ != "FixtureFunctionDefinition"
        and not isinstance(obj, types.FunctionType)
    ):
        return None  # a handle's class may be named anything (see _proxy_class)
    get = getattr(obj, "_get_wrapped_function", None)
    if type(obj).__name__ == "FixtureFunctionDefinition" and callable(get):
        function, marker = get(), getattr(obj, "_fixture_function_marker", None)
    else:
        wrapped = getattr(obj, "__pytest_wrapped__", None)
        marker = getattr(obj, "_pytestfixturefunction", None)
        if wrapped is None or marker is None:
            return None
        function = getattr(wrapped, "obj", None)
    if not isinstance(function, types.FunctionType):
        return None
    name = getattr(marker, "name", None)
    scope = getattr(marker, "scope", "function")
    params = getattr(marker, "params", None)
    return _FixtureDef(
        function,
        name if isinstance(name, str) and name else function.__name__,
        bool(getattr(marker, "autouse", False)),
        scope if scope in ("class", "module", "package", "session") else "function",
        None if params is None else list(params),
    )


def _param_value(value: Any) -> Any:
    """A fixture param as ``request.param`` gives it (a ``pytest.param(v)``'s ``v``)."""
    if _parameter_set(value):
        return value.values[0] if len(value.values) == 1 else value.values
    return value


def _parameter_set(value: Any) -> bool:
    """Whether ``value`` is a ``pytest.param(...)`` of the tests (never asks a handle)."""
    return type(value).__name__ == "ParameterSet" and type(value) not in _PROXY_TYPES


def _param_marks(param: Any) -> list[Any]:
    """The marks of a fixture's param given as ``pytest.param(..., marks=...)``, else none."""
    return _marks(list(param.marks)) if _parameter_set(param) else []


class _Request:
    """pytest's ``request`` fixture, the part tests use: ``param`` (of a fixture with
    ``params``), ``fixturename``, ``node`` (:class:`_Node`), ``function``, ``module``,
    ``cls`` and ``instance`` (of a test of a class; no instance for a fixture of a wider
    scope), ``addfinalizer`` and ``getfixturevalue``."""

    def __init__(self, run: _TestRun, fixture: str | None, values: dict[str, Any],
                 teardown: list[Any]) -> None:  # fmt: skip
        self._run, self._values, self._teardown = run, values, teardown
        self.fixturename = fixture
        self.function = run.fn
        self.node = _Node(run)
        self.module = sys.modules.get("__main__")
        self.cls = run.cls
        scope = run.fixtures[fixture].scope if fixture in run.fixtures else "function"
        self.instance = run.instance if scope == "function" else None
        index = run.chosen.get(fixture) if fixture is not None else None
        if fixture is not None and index is not None:
            self.param = _param_value(run.fixtures[fixture].params[index])  # type: ignore[index]
        if fixture is not None and fixture in run.indirect:
            self.param = run.indirect[fixture]

    def addfinalizer(self, finalizer: Any) -> None:
        self._teardown.append(_calling(finalizer))

    def getfixturevalue(self, name: str) -> Any:
        return _fixture_value(self._run, name, self._values, self._teardown, 1)


class _Metafunc:
    """What the tests' ``pytest_generate_tests(metafunc)`` hook gets for each test, the part
    tests use: ``fixturenames`` (the test's parameters and the fixtures it uses, through
    other fixtures too), ``function``, ``cls``, ``module``, and ``parametrize``, which gives
    the test a ``parametrize`` mark of those arguments, as pytest parametrizes it."""

    def __init__(self, run: _TestRun, required: list[str]) -> None:
        fn = run.fn
        self.function = getattr(fn, "__func__", fn)
        owner = getattr(fn, "__self__", None)
        self.cls = owner if isinstance(owner, type) or owner is None else type(owner)
        self.module = sys.modules.get("__main__")
        names: list[str] = []
        pending = [*run.autouse, *required]
        pending += [str(a) for m in run.marks if m.name == "usefixtures" for a in m.args]
        while pending:
            name = pending.pop(0)
            if name not in names:
                names.append(name)
                fixture = run.fixtures.get(name)
                pending.extend(fixture.requires if fixture is not None else ())
        self.fixturenames = names
        self.marks: list[Any] = []

    def parametrize(self, *args: Any, **kwargs: Any) -> None:
        pytest: Any = importlib.import_module("pytest")  # (the tests' hook: they have it)
        self.marks.append(pytest.mark.parametrize(*args, **kwargs).mark)


class _Node:
    """``request.node``, the test's: its ``name`` and its marks, closest first (its parameter
    set's, its own, then its classes' and module's), as pytest's item answers
    ``get_closest_marker`` and ``iter_markers``."""

    def __init__(self, run: _TestRun) -> None:
        self.name = run.name
        self._run = run

    def iter_markers(self, name: str | None = None) -> Iterator[Any]:
        run = self._run
        for mark in (*run.param_marks, *run.own_marks, *reversed(run.outer_marks)):
            if name is None or mark.name == name:
                yield mark

    def get_closest_marker(self, name: str, default: Any = None) -> Any:
        return next(self.iter_markers(name), default)


class _Scopes:
    """The values of the tests' fixtures of a wider scope than one test, and their teardowns
    (a ``yield`` fixture's generator), until their class or the module ends."""

    def __init__(self, generate: Any = None) -> None:
        self.values: dict[str, dict[tuple[str, int | None], Any]] = {"class": {}, "module": {}}
        self.teardown: dict[str, list[Any]] = {"class": [], "module": []}
        #: The module's ``pytest_generate_tests`` hook, called for each test (:class:`_Metafunc`).
        self.generate = generate

    def end(self, scope: str) -> None:
        """Tear down ``scope``'s fixtures (a class's at its end, then the module's too)."""
        ending = ("class", "module") if scope == "module" else ("class",)
        for name in ending:
            generators, self.teardown[name] = self.teardown[name], []
            self.values[name] = {}
            for gen in reversed(generators):
                next(gen, None)


def _mark_class(name: str) -> Any:
    return getattr(sys.modules.get("_pytest.mark.structures"), name, None)


def _marks(value: Any) -> list[Any]:
    """pytest's marks in ``value`` (a ``pytestmark`` list, one mark or one mark decorator),
    as ``Mark`` objects; anything else (a value of the solution's) counts for none."""
    mark_type, decorator_type = _mark_class("Mark"), _mark_class("MarkDecorator")
    if mark_type is None:
        return []
    items = value if type(value) is list else [value]
    out = []
    for item in items:
        if decorator_type is not None and type(item) is decorator_type:
            item = item.mark
        if type(item) is mark_type:
            out.append(item)
    return out


def _condition(mark: Any) -> bool:
    """Whether a ``skipif``/``xfail`` mark applies: no condition, or any of its conditions
    true. A string condition is evaluated as pytest does (``os``, ``sys``, ``platform`` and the
    tests' globals) only when it is a string constant of the tests' own code (see
    :func:`_tests_strings`): then it is code the tests wrote, and equal text is the same code
    whoever made the object. Any other string is refused: it could be a value of the
    solution's (``skipif(solution.FLAG)``), and the judge runs no code the solution wrote."""
    conditions = list(mark.args)
    if "condition" in mark.kwargs:
        conditions.append(mark.kwargs["condition"])
    if not conditions:
        return True
    for condition in conditions:
        if isinstance(condition, str):
            if type(condition) is not str or condition not in _tests_strings():
                raise TypeError(
                    f"a {mark.name} mark with the string condition {condition!r:.200}, which "
                    "is not a string of the tests' code: the judge evaluates no other strings"
                )
            import platform

            scope = {"os": os, "sys": sys, "platform": platform, **_CHECK[1]}
            code = _COMPILE(condition, f"<{mark.name} condition>", "eval", dont_inherit=True)
            condition = _EVAL(code, scope)
        if condition:
            return True
    return False


def _tests_strings() -> frozenset[str]:
    """The string constants of the running check's tests' code, nested code included."""
    code = _CHECK[0]
    if code is None:
        return frozenset()
    return frozenset(
        const for current in _code_objects(code) for const in current.co_consts
        if type(const) is str
    )  # fmt: skip


def _skipped(marks: list[Any]) -> bool:
    """Whether the marks skip the test: a ``skip``, or a ``skipif`` whose condition holds."""
    return any(m.name == "skip" or (m.name == "skipif" and _condition(m)) for m in marks)


#: ``co_flags`` of generator and coroutine functions: a test the judge cannot run to its end
#: by calling it (pytest refuses ``yield`` tests; ``async def`` ones need a plugin); 0x100:
#: an iterable coroutine (``types.coroutine``).
_NOT_CALLABLE_TESTS = _GENERATOR | _COROUTINE | 0x100 | _ASYNC_GENERATOR


def _asyncio_test(marks: list[Any]) -> bool:
    """Whether an ``async def`` test runs as pytest-asyncio runs it (on an event loop of its
    own, as ``asyncio.run`` gives it): it has the ``asyncio`` mark, and the plugin is installed
    (without it pytest runs no coroutine test). Its fixtures stay the plain ones."""
    return any(m.name == "asyncio" for m in marks) and _installed("pytest_asyncio")


def _parameters(fn: Any, bound: bool) -> tuple[list[str], list[str]]:
    """The names of ``fn``'s parameters, and of those without a default. Through a decorator
    that says what it wraps (``functools.wraps``: ``__wrapped__``), the wrapped function's; the
    first ones that ``unittest.mock.patch`` decorators fill (one per patch without ``new``) are
    not the test's, as pytest reads them."""
    wrapped = getattr(fn, "__wrapped__", None)
    if type(wrapped) is types.FunctionType or (
        type(wrapped) is types.MethodType and type(wrapped.__func__) is types.FunctionType
    ):
        patched = _mock_patched(fn)
        params, required = _parameters(wrapped, bound and not isinstance(wrapped, types.MethodType))
        return params[patched:], [r for r in required if r not in params[:patched]]
    code = fn.__code__
    params = list(code.co_varnames[int(bound) : code.co_argcount + code.co_kwonlyargcount])
    defaults = len(fn.__defaults__ or ())
    positional = params[: code.co_argcount - int(bound)]
    kwonly = params[len(positional) :]
    kwdefaults = fn.__kwdefaults__ or {}
    required = positional[: len(positional) - defaults] + [k for k in kwonly if k not in kwdefaults]
    return params, required


class _Indirect:
    """A value of an ``indirect`` parametrize: its fixture's ``request.param``."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value


def _mock_patched(fn: Any) -> int:
    """How many positional arguments ``unittest.mock.patch`` decorators of ``fn`` pass (their
    patchings that make a mock: without ``new``, not ``patch.dict``)."""
    mock = sys.modules.get("unittest.mock")
    default = getattr(mock, "DEFAULT", None)
    patchings = getattr(fn, "patchings", None)
    if mock is None or type(patchings) is not list:
        return 0
    return sum(
        1
        for p in patchings
        if getattr(p, "attribute_name", 1) is None and getattr(p, "new", None) is default
    )


def _parametrized(marks: list[Any]) -> list[tuple[dict[str, Any], list[Any]]]:
    """The keyword sets the ``parametrize`` marks among ``marks`` (a test's, its class's and
    its module's) give (one empty set when none), each with the marks of its
    ``pytest.param(..., marks=...)``."""
    runs: list[tuple[dict[str, Any], list[Any]]] = [({}, [])]
    for mark in marks:
        if mark.name != "parametrize":
            continue
        args, kw = tuple(mark.args), dict(mark.kwargs)
        argnames = args[0] if args else kw.get("argnames")
        argvalues = args[1] if len(args) > 1 else kw.get("argvalues", ())
        # One name in a string takes each value whole; names in a tuple or list unpack each
        # (``("x",)`` with ``[(1,)]`` gives x=1), as pytest reads them.
        unpack = not isinstance(argnames, str)
        indirect = kw.get("indirect", False)
        if isinstance(argnames, str):
            argnames = [a.strip() for a in argnames.split(",") if a.strip()]
        argnames = list(argnames or ())
        sets: list[tuple[dict[str, Any], list[Any]]] = []
        for values in argvalues:
            own: list[Any] = []
            if _parameter_set(values):
                own = _marks(list(values.marks))
                values = values.values
                if len(argnames) == 1:
                    values = values[0]
            elif unpack and len(argnames) == 1:
                values = values[0]
            one = (
                {argnames[0]: values}
                if len(argnames) == 1
                else dict(zip(argnames, values, strict=True))
            )
            if indirect:
                names = one if indirect is True else [n for n in indirect if n in one]
                one = {**one, **{n: _Indirect(one[n]) for n in names}}
            sets.append((one, own))
        runs = [({**run, **one}, before + more) for run, before in runs for one, more in sets]
    return runs


class _TestRun:
    """One test function or method of the tests, run once per parameter set: its fixtures,
    its xunit setup and teardown (``xunit``), its marks (see :func:`_run_test_functions`)."""

    def __init__(
        self,
        name: str,
        fn: Any,
        fixtures: dict[str, _FixtureDef],
        autouse: list[str],
        scopes: _Scopes,
        marks: list[Any],
        xunit: tuple[Any, Any],
        bound: bool = False,
        generated: bool = True,
        owner: tuple[Any, Any] = (None, None),
    ) -> None:
        self.name = name
        self.fn = fn
        self.fixtures = fixtures
        self.autouse = autouse
        self.scopes = scopes
        self.own_marks = _marks(getattr(fn, "pytestmark", None))
        self.outer_marks = marks  # its module's, then its classes'
        self.marks = marks + self.own_marks
        #: The marks of this run's parameter set (``pytest.param(..., marks=...)``).
        self.param_marks: list[Any] = []
        self.bound = bound
        #: Whether the module's ``pytest_generate_tests`` is called for it (not for the
        #: tests of a ``unittest.TestCase``, as pytest does not).
        self.generated = generated
        #: The test's class and the instance it runs on (``request.cls``, ``request.instance``).
        self.cls, self.instance = owner
        self.xunit = xunit  # its setup and teardown (setup_function or setup_method), or None
        #: fixture -> index of its param in this run (fixtures with ``params``).
        self.chosen: dict[str, int] = {}
        #: The ``filterwarnings`` marks' filters of this run (module's first, the test's last).
        self.filters: list[Any] = []
        #: fixture -> its ``request.param`` from an ``indirect`` parametrize, in this run.
        self.indirect: dict[str, Any] = {}

    def call(self) -> None:
        fn = self.fn
        flags = fn.__code__.co_flags & _NOT_CALLABLE_TESTS
        if flags and not (flags == _COROUTINE and _asyncio_test(self.marks)):
            raise TypeError(
                f"{self.name} is a generator or a coroutine: the judge runs plain tests only"
            )
        params, required = _parameters(fn, self.bound)
        if self.scopes.generate is not None and self.generated:
            metafunc = _Metafunc(self, required)
            self.scopes.generate(metafunc)
            self.own_marks += metafunc.marks
            self.marks += metafunc.marks
        for given, param_marks in _parametrized(self.marks):
            needed = required + [
                str(a) for m in self.marks + param_marks if m.name == "usefixtures"
                for a in m.args
            ]  # fmt: skip
            for chosen in self.fixture_params(needed, given):
                self.chosen = chosen
                # (a fixture's ``pytest.param(0, marks=pytest.mark.skip)`` marks its runs)
                self.param_marks = param_marks + [
                    mark for name, index in chosen.items()
                    for mark in _param_marks((self.fixtures[name].params or ())[index])
                ]  # fmt: skip
                marks = self.marks + self.param_marks
                if _skipped(marks):
                    continue
                xfail = next((m for m in marks if m.name == "xfail" and _condition(m)), None)
                if xfail is not None and xfail.kwargs.get("run", True) is False:
                    continue
                self.filters = [
                    arg for m in marks if m.name == "filterwarnings" for arg in m.args
                ]  # fmt: skip
                self.attempt(params, needed, given, xfail)

    def fixture_params(self, needed: list[str], given: dict[str, Any]) -> list[dict[str, int]]:
        """Every combination of the params of the fixtures with ``params`` that the run
        needs (through other fixtures too), as pytest parametrizes the test with them."""
        seen: set[str] = set()
        pending = [*self.autouse, *needed]
        varied: list[_FixtureDef] = []
        while pending:
            name = pending.pop(0)
            fixture = self.fixtures.get(name)
            if name in seen or name in given or fixture is None:
                continue
            seen.add(name)
            if fixture.params is not None:
                varied.append(fixture)
            pending.extend(fixture.requires)
        combos: list[dict[str, int]] = [{}]
        for fixture in varied:
            count = len(fixture.params or ())
            combos = [{**c, fixture.name: i} for c in combos for i in range(count)]
        return combos

    def attempt(
        self, params: list[str], needed: list[str], given: dict[str, Any], xfail: Any
    ) -> None:
        """One run (:meth:`once`) under its ``xfail`` mark, if any."""
        if xfail is None:
            self.once(params, needed, given)
            return
        outcomes = sys.modules.get("_pytest.outcomes")
        failed: Any = getattr(outcomes, "Failed", Exception)
        try:
            self.once(params, needed, given)
        except (Exception, failed) as exc:  # a broken wire or bound (no Exception) always fails
            raises = xfail.kwargs.get("raises")
            if raises is not None and not isinstance(exc, raises):
                raise
            return  # xfailed: no failure, as in pytest
        if xfail.kwargs.get("strict", False):
            reason = xfail.kwargs.get("reason", "")
            raise AssertionError(f"{self.name}: [XPASS(strict)] {reason}")

    def once(self, params: list[str], required: list[str], given: dict[str, Any]) -> None:
        """One run: fixtures, xunit setup, the test, then teardowns in reverse order. A
        ``pytest.skip()`` ends it as skipped; ``pytest.xfail()`` as xfailed."""
        outcomes = sys.modules.get("_pytest.outcomes")
        skipped = getattr(outcomes, "Skipped", None)
        xfailed = getattr(outcomes, "XFailed", None)
        # ``indirect`` parametrize values are their fixtures' ``request.param``, not the test's
        values: dict[str, Any] = {k: v for k, v in given.items() if type(v) is not _Indirect}
        self.indirect = {k: v.value for k, v in given.items() if type(v) is _Indirect}
        teardown: list[Any] = []
        saved = sys.stdout, sys.stderr
        setup, finish = self.xunit
        filters = contextlib.ExitStack()
        if self.filters:
            # as pytest applies them around the test: the test's own mark wins
            from _pytest.config import parse_warning_filter

            filters.enter_context(warnings.catch_warnings())
            for arg in self.filters:
                warnings.filterwarnings(*parse_warning_filter(str(arg), escape=False))
        try:
            for fixture in (*self.autouse, *required):
                _fixture_value(self, fixture, values, teardown, 0)
            if setup is not None:
                _xunit(setup, self.fn)
                teardown.append(_calling(_xunit, finish, self.fn))
            outcome = self.fn(**{k: values[k] for k in params if k in values})
            if type(outcome) is types.CoroutineType:  # a pytest-asyncio test (_asyncio_test)
                import asyncio

                asyncio.run(outcome)
        except BaseException as exc:
            if not (
                (isinstance(skipped, type) and isinstance(exc, skipped))
                or (isinstance(xfailed, type) and isinstance(exc, xfailed))
            ):
                raise
        finally:
            sys.stdout, sys.stderr = saved
            try:
                for gen in reversed(teardown):
                    next(gen, None)
            finally:
                filters.close()


def _fixture_value(
    run: _TestRun, name: str, values: dict[str, Any], teardown: list[Any], depth: int
) -> Any:
    """The value of fixture ``name`` for one run of a test (made once per run, into
    ``values``, or once per class or module for a fixture of that scope; a ``yield``
    fixture's generator into the teardown list of its scope)."""
    if name in values:
        return values[name]
    if name == "request":
        request = values[name] = _Request(run, None, values, teardown)
        return request
    if (
        name in ("tmp_path", "tmpdir", "tmp_path_factory")
        and _guard._WORKDIR is not None
        and name not in run.fixtures  # the tests' own fixture of that name wins, as in pytest
    ):
        value = values[name] = _tmp_fixture(name, run.name)
        return value
    if name in ("capsys", "capfd"):
        capsys = values[name] = _CapSys()
        sys.stdout, sys.stderr = capsys.out, capsys.err
        return capsys
    fixtures = run.fixtures
    if name in ("caplog", "recwarn") and name not in fixtures:
        made = (_caplog if name == "caplog" else _recwarn)(teardown)
        if made is not None:
            values[name] = made
            return made
    if name == "subtests" and name not in fixtures and _SubTests.provided():
        subtests = values[name] = _SubTests()
        teardown.append(_calling(subtests.check))
        return subtests
    if name == "monkeypatch" and name not in fixtures:
        monkeypatch = _monkeypatch()
        if monkeypatch is not None:
            values[name] = monkeypatch
            teardown.append(_calling(monkeypatch.undo))
            return monkeypatch
    found = fixtures.get(name)
    if found is None or depth > 20:
        raise TypeError(
            f"{run.name} needs the pytest fixture {name!r}, which the judge does not provide"
        )
    scope = found.scope
    key = (name, run.chosen.get(name))  # a scoped fixture is made once per param
    if scope != "function":
        cached = run.scopes.values[scope]
        if key in cached:
            values[name] = cached[key]
            return cached[key]
        teardown = run.scopes.teardown[scope]
    function = found.function
    kwargs = {
        p: _Request(run, name, values, teardown)
        if p == "request"
        else _fixture_value(run, p, values, teardown, depth + 1)
        for p in found.requires
    }
    if function.__code__.co_flags & _GENERATOR:
        gen = function(**kwargs)
        value = next(gen)
        teardown.append(gen)
    else:
        value = function(**kwargs)
    values[name] = value
    if scope != "function":
        run.scopes.values[scope][key] = value
    return value


def _caplog(teardown: list[Any]) -> Any:
    """pytest's own ``caplog`` (``LogCaptureFixture``, over its ``LogCaptureHandler`` with
    pytest's default format), its handler on the root logger until the test's teardown, as
    pytest installs it; its level changes undone then. The solution's records reach it
    through :func:`_reissue_record`. None where pytest cannot be imported."""
    try:
        import logging

        from _pytest.logging import (
            DEFAULT_LOG_DATE_FORMAT,
            DEFAULT_LOG_FORMAT,
            LogCaptureFixture,
            LogCaptureHandler,
            caplog_handler_key,
            caplog_records_key,
        )
        from _pytest.stash import Stash
    except ImportError:
        return None
    handler = LogCaptureHandler()
    handler.setFormatter(logging.Formatter(DEFAULT_LOG_FORMAT, DEFAULT_LOG_DATE_FORMAT))
    item: Any = types.SimpleNamespace(stash=Stash())
    item.stash[caplog_handler_key] = handler
    item.stash[caplog_records_key] = {"setup": [], "call": handler.records, "teardown": []}
    fixture = LogCaptureFixture(item, _ispytest=True)
    logging.root.addHandler(handler)

    def finish() -> None:
        try:
            fixture._finalize()
        finally:
            logging.root.removeHandler(handler)

    teardown.append(_calling(finish))
    return fixture


def _recwarn(teardown: list[Any]) -> Any:
    """pytest's own ``recwarn`` (``WarningsRecorder``, entered with the ``default`` filter, as
    pytest's fixture does) until the test's teardown. The solution's warnings reach it through
    :meth:`_Peer.reissue`. None where pytest cannot be imported."""
    try:
        from _pytest.recwarn import WarningsRecorder
    except ImportError:
        return None
    recorder = WarningsRecorder(_ispytest=True)
    recorder.__enter__()
    warnings.simplefilter("default")
    teardown.append(_calling(recorder.__exit__, None, None, None))
    return recorder


def _tmp_fixture(name: str, test: str) -> Any:
    """pytest's ``tmp_path`` (a new directory of its own below :data:`_WORKDIR`, which the
    solution reaches by the same path), ``tmpdir`` (the same as pytest's legacy path) or
    ``tmp_path_factory`` (its ``mktemp`` and ``getbasetemp``)."""
    import tempfile

    base = pathlib.Path(_guard._WORKDIR or ".")
    if name == "tmp_path_factory":
        return _TmpPathFactory(base)
    stem = "".join(c if c.isalnum() or c == "_" else "_" for c in test)[:30]
    path = pathlib.Path(tempfile.mkdtemp(prefix=f"{stem}-", dir=base))
    if name == "tmp_path":
        return path
    try:
        from _pytest._py.path import LocalPath
    except ImportError:
        raise TypeError(f"{test} needs tmpdir, which needs pytest where the judge runs") from None
    return LocalPath(path)  # type: ignore[no-untyped-call]


class _TmpPathFactory:
    """pytest's ``tmp_path_factory``, the part tests use."""

    def __init__(self, base: pathlib.Path) -> None:
        self._base = base

    def mktemp(self, basename: str, numbered: bool = True) -> pathlib.Path:
        import tempfile

        if not numbered:
            path = self._base / basename
            path.mkdir()
            return path
        return pathlib.Path(tempfile.mkdtemp(prefix=f"{basename}-", dir=self._base))

    def getbasetemp(self) -> pathlib.Path:
        return self._base


def _monkeypatch() -> Any:
    """pytest's own ``MonkeyPatch`` (where pytest is installed: tests that use the fixture
    are pytest's), else None; its ``setattr`` of a module's attribute reaches the solution as
    a ``unittest.mock`` patch does (see :func:`_forwarded_patches`), until ``undo``."""
    try:
        from _pytest.monkeypatch import MonkeyPatch
    except ImportError:
        return None

    class _Forwarding(MonkeyPatch):  # type: ignore[misc]
        def setattr(self, *args: Any, **kwargs: Any) -> None:
            super().setattr(*args, **kwargs)
            target, name, _ = self._setattr[-1]
            if _patch_target(target) and type(name) is str:
                _PATCHES.append((self, target, name))
                _PATCH_COUNT[0] += 1

        setenv = _counting(MonkeyPatch.setenv)  # the environment crosses with the patches
        delenv = _counting(MonkeyPatch.delenv)

        def undo(self) -> None:
            super().undo()
            _PATCHES[:] = [entry for entry in _PATCHES if entry[0] is not self]
            _PATCH_COUNT[0] += 1

    return _Forwarding()


class _SubTests:
    """pytest's ``subtests`` fixture (pytest 9's own; a plugin's before, which the judge does
    not load): a ``with subtests.test(msg, **params):`` block that fails keeps its error and
    the test goes on, as pytest reports each failed subtest and runs the rest; the first error
    kept fails the test after its body (:meth:`check`, a teardown). ``pytest.skip()`` in a
    block skips that block only."""

    def __init__(self) -> None:
        self.failed: list[BaseException] = []

    @staticmethod
    def provided() -> bool:
        """Whether the tests' pytest has the fixture (a test using it errors otherwise)."""
        return _installed("_pytest.subtests")

    @contextlib.contextmanager
    def test(self, msg: Any = None, **kwargs: Any) -> Iterator[None]:
        outcomes = sys.modules.get("_pytest.outcomes")
        outcome = getattr(outcomes, "OutcomeException", Exception)
        skipped = getattr(outcomes, "Skipped", ())
        try:
            yield
        except (Exception, outcome) as exc:
            if not isinstance(exc, skipped):
                self.failed.append(exc)

    def check(self) -> None:
        if self.failed:
            raise self.failed[0]


def _calling(function: Any, *args: Any) -> Any:
    """A teardown entry (see :meth:`_TestRun.once`) that calls ``function(*args)``."""
    function(*args)
    yield


_CaptureResult = collections.namedtuple("_CaptureResult", "out err")


class _CapSys:
    """pytest's ``capsys`` fixture, the part tests use: while the test runs, ``sys.stdout``
    and ``sys.stderr`` are buffers (the solution's prints reach them, see
    :meth:`_Peer.relay`), and ``readouterr()`` returns and clears what they hold."""

    def __init__(self) -> None:
        self.out = io.StringIO()
        self.err = io.StringIO()

    def readouterr(self) -> Any:
        result = _CaptureResult(self.out.getvalue(), self.err.getvalue())
        for buffer in (self.out, self.err):
            buffer.seek(0)
            buffer.truncate()
        return result


#: The globals of every module of the judge (by ``id``: each module lives as long as the
#: process): their frames are left out of a failure's description (see :func:`_describe`).
_OWN_GLOBALS = frozenset(
    {id(globals()), *(id(vars(module)) for module in (
        _ambient, _annotations, _bounds, _codec, _exceptions, _forwarded, _framing, _guard, _kept,
        _notices, _ops, _pandas, _patches, _proxies, _solution_side, _stand_ins, _tests_code,
        _values,
    ))}
)


def _describe(exc: BaseException, tests: str = "") -> str:
    """The reason of a failed check: the last frames of the tests' traceback (file, line,
    function; for the tests' own lines their source, from ``tests``) and the exception, as the
    end of what ``traceback.format_exception`` prints.

    Written out rather than ``traceback.format_exception``: that reads the source file of every
    frame (stat per frame per call, the judge's own 300 KB source once per judge) and computes
    each frame's column positions by walking its code's position table, about a tenth of a
    judge's CPU on HumanEval's failing checks; and its frames began with the judge's own
    (``judge_check``, the proxies' calls), which say nothing of the tests. Frames of the
    judge's modules (:data:`_OWN_GLOBALS`) are left out."""
    try:
        entries = ["Traceback (most recent call last):\n"]
        lines: list[str] | None = None
        mine = _OWN_GLOBALS
        tb = exc.__traceback__
        while tb is not None:
            frame = tb.tb_frame
            if id(frame.f_globals) not in mine:
                code, lineno = frame.f_code, tb.tb_lineno  # (None in 3.12+ for no line)
                entry = f'  File "{code.co_filename}", line {lineno}, in {code.co_name}\n'
                if code.co_filename == "<tests>" and tests and isinstance(lineno, int):
                    if lines is None:
                        lines = tests.splitlines()
                    if 0 < lineno <= len(lines) and lines[lineno - 1].strip():
                        entry += f"    {lines[lineno - 1].strip()}\n"
                entries.append(entry)
            tb = tb.tb_next
        entries.extend(traceback.format_exception_only(type(exc), exc))
        return "".join(entries[-6:])
    except BaseException:
        return type(exc).__name__
