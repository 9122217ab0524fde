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
  (``_zygote_judges.run_judge_server``; a fresh :class:`_Peer`, proxies bound to it, tests
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
  fields; one of a class the receiver sent values of, as that class: the tests' ``Point`` comes
  back a ``Point``), exception objects (not raised) of :data:`_PASSED_THROUGH`'s classes with
  only their ``args`` (:func:`_plain_exception`), ``dict`` views (:data:`_VIEW_TAGS`), the
  built-in classes
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
  ``str``/``repr``, ``bool``, ``hash`` and copies are requests to the owner (but the truth of
  an object whose class has no ``__bool__`` nor ``__len__``, the hash of one whose class
  hashes by identity, and the plain attributes a handle crossed with, read while no message
  has crossed since: :func:`_handle_extras`). When a proxy dies, its
  number is sent with the next message ("D"), with how many times it was received, and the
  owner drops the object once every time it sent it is released (:meth:`_Peer.drop`). A handle of an
  object of a library's class (a matplotlib ``Axes``), or of a standard one whose objects cross as
  handles (``re.Match``; see :func:`_standing_module`), says that class, as the receiver has it,
  as its ``__class__`` (:func:`_library_class`): ``isinstance(ax, plt.Axes)`` holds. The
  tests' ``type`` (:class:`_TestsType`) of a handle is its object's class, asked of the owner
  (``type(p) is Point``, ``type(p).count``); ``id`` is one map on both sides
  (:func:`_handle_id`): of an object of the tests' its address, of one of the solution's its
  address moved above 2**62 (never a tests' object's), and a handle's ``id`` is its owner's,
  asked once: the same for as long as the object lives, however often its handle is dropped
  and made again (``index[id(p)]`` over a list walked node by node).
* **write-back**: a mutable container (list, dict, set, bytearray and the mutable standard types)
  sent in a request is rebuilt on the other side; when the request is served, the server sends
  the new contents of those it changed with its reply, and the requester applies them to its
  own objects in place (``a[:] = new``): ``sort_in_place(a); assert a == [1, 2, 3]`` holds,
  object identity included (a container sent back is the requester's own object). A big list
  of numbers or strings the tests pass again, unchanged since it last crossed, is not sent
  again: the solution's side gets the copy it kept (:mod:`._resent`).
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

The package's modules, each importing only those above it (a name rebound at run time is read
from its module: ``_proxies._PEER``, ``_guard._WORKDIR``), all imported with this package, before
the fork server's first fork:

* :mod:`._bounds`: the bounds and the errors that end a check;
* :mod:`._values`: the types that cross as values;
* :mod:`._pandas`: pandas values;
* :mod:`._annotations`: ``typing``'s annotations;
* :mod:`._tests_code`: what the judge reads of the tests' code;
* :mod:`._ops`: the requests of the wire and the operators they name;
* :mod:`._described`: what a handle says of its object as it crosses (its class's name and
  protocols, the library class it may stand for, its hash and plain attributes);
* :mod:`._proxy_backed`: value-backed handles;
* :mod:`._proxies`: handles (proxies), the current peer;
* :mod:`._proxy_functions`: handles of functions;
* :mod:`._proxy_coroutines`: handles of coroutines, generators and async generators;
* :mod:`._tests_type`: the tests' ``type`` of a handle;
* :mod:`._proxy_classes`: the proxy classes made to the measure of the other side's;
* :mod:`._handle_ids`: a handle's ``id``;
* :mod:`._exceptions`: exceptions, and the classes that cross by name;
* :mod:`._stand_ins`: the tests' classes derived from the solution's, what the solution may set;
* :mod:`._resent`: big flat lists the tests pass again, unchanged: sent once, then named;
* :mod:`._code_texts`: which texts could be code, to the judge's guard;
* :mod:`._codec`: the format of values, what its two ends share;
* :mod:`._encoder`: its encoder;
* :mod:`._decoder_types`: its decoder's readers of standard types, numpy's and pandas';
* :mod:`._decoder`: its decoder;
* :mod:`._framing`: messages on a descriptor;
* :mod:`._kept`: write-back and the containers kept in step;
* :mod:`._notices`: the solution's warnings and log records;
* :mod:`._solution_side`: the solution's streams, constants, stdin and ``eval``;
* :mod:`._patches`: the tests' patches as the judge watches them;
* :mod:`._ambient`: the settings and state both sides share in-process;
* :mod:`._forwarded`: the patches and state sent with each request, and applied;
* :mod:`._guard`: the judge's guard against running what the solution wrote;
* :mod:`._tests_namespace`: what the tests' namespace holds of the solution;
* :mod:`._peer_state`: what one end of the wire holds;
* :mod:`._peer_channels`: its messages and threads' channels;
* :mod:`._peer_kept`: its containers kept in step with the other side's;
* :mod:`._peer_exceptions`: the exceptions it tells and is told of;
* :mod:`._peer_classes`: the classes it makes for the other side's;
* :mod:`._peer_relay`: the solution's output and texts, relayed;
* :mod:`._peer_perform`: a request of the other side, performed;
* :mod:`._peer`: one end of the wire (:class:`_Peer`, of the parts above): handles, requests
  and replies;
* :mod:`._serve`: the solution's side of a run, and what the fork server prepares for it;
* :mod:`._pytest_marks`: the tests' pytest marks and parametrization, as pytest reads them;
* :mod:`._pytest_fixtures`: the tests' pytest fixtures, and the built-in ones;
* :mod:`._harness`: pytest-style and unittest tests, run as pytest collects them;
* :mod:`._check`: one check, and a judge's verdict.
"""

from __future__ import annotations

from ._ambient import _decimal_spec, _int_digits, _numpy_errors
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
from ._check import deliver_verdict, entry_steps, judge, judge_check, same_file
from ._decoder import decode
from ._encoder import encode
from ._guard import guard_judge
from ._serve import (
    WARM_TESTS,
    judged_namespace,
    judged_stdin,
    prepare_server,
    serve_solution,
    serve_warm_up,
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
