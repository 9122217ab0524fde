"""Run untrusted Python in an isolated, limited process, and judge it where it cannot reach.

Entry points (all plain synchronous functions, safe to call from many threads at once and from
inside Ray tasks; each blocks only its calling thread):

* :func:`run_tests` ``(solution, tests, *, entry_point=None)``: the verifier for function-style
  tests (HumanEval's ``check``, MBPP's asserts, LeetCode classes) and test modules (pytest's
  ``def test_...`` with ``from solution import f``, ``unittest.TestCase``: KodCode, ACECode).
  "passed" means the *trusted* judge saw every test run to its end.
* :func:`run_stdio` ``(solution, cases, *, checker="exact")``: stdin/stdout problems
  (Codeforces, LiveCodeBench, APPS); the expected outputs never enter the sandbox, the
  comparison (exact, tokens, float tokens within a tolerance, case-insensitive tokens, or a
  trusted custom checker) happens in the caller; each case gets a judge's verdict.
* :func:`run_program` ``(code, *, stdin, files, fetch_files)``: run a program and report what
  it did (SandboxFusion's ``/run_code``); its status is its own exit status.
* :func:`run_python` / :func:`run_python_async`: a program whose exit status is its verdict
  (kept for programs that report their own result; never use it to score untrusted code), and
  :func:`run_python_bare`, the unlimited baseline of the benchmarks.

A status is one of ``"passed"``, ``"failed"``, ``"timeout"``, ``"memory"`` (killed by the
kernel at the run's ``memory_mb`` of memory used, where the host has a memory controller; an
uncaught ``MemoryError``; or death by ``SIGKILL``/``SIGSEGV``/``SIGBUS``/``SIGABRT`` after using
90 % of ``memory_mb``), ``"crashed"`` (killed by another signal). ``returncode`` follows
:mod:`subprocess` (``-signal`` when killed). Exit status 231 is reserved (an uncaught
``MemoryError``, reported as ``status="memory", returncode=1``). ``duration`` is the run's *own
time* (below). When the sandbox cannot give a verdict at all (its server cannot start, or the
machine starved the run, below) it raises :class:`~asyncpool.errors.SandboxError`: never a
verdict, so a trainer retries or drops the item and does not score it. Bad arguments raise
``TypeError``/``ValueError`` before anything runs.

How ``run_tests`` judges (the solution cannot reach the code that judges it)
------------------------------------------------------------------------------
Two processes per check:

* the **solution** process, jailed as every program (below), under a sandbox uid of its own,
  runs ``solution`` as a module named ``solution`` (not ``__main__``, as in-process harnesses
  exec it: an ``if __name__ == "__main__":`` block reading stdin does not run), then serves the
  judge's requests over a socket. Programs and tests are compiled with no ``__future__`` import
  of the sandbox's (annotations are evaluated, as under ``python prog.py``);
* the **judge** process, trusted code under *another* uid (``_zygote_wire.JUDGE_UID``, outside the
  pool: the solution cannot signal or ptrace it), non-dumpable (no ``/proc/PID/mem``, no
  ptrace even for its own uid), with the check's limits, runs ``tests`` in a fresh namespace
  where each of the solution's callables is a proxy, calls ``check(candidate)`` when
  ``entry_point`` is given, and writes its verdict on a pipe that only the caller and the judge
  hold, after a secret the caller draws per run (``_zygote_wire.VERDICT_KEY_BYTES``): a callable
  of the tests' that opens what it is told, called by the solution, could write on that pipe
  from inside the judge, but not the secret, so no forged verdict counts. The
  tests never exist in the solution's memory or files. Judges are long-lived (as root): a fork
  server keeps up to ``_zygote_wire.JUDGE_POOL``, each judging one check at a time through a
  fresh wire and namespace (tests compiled once per source), replaced after
  ``_zygote_wire.JUDGE_CHECKS`` checks or any anomaly (the solution broke the wire or a bound or
  called back into the tests, a thread other than the main ones on the wire (see threads below),
  a timeout, a thread left, a built-in, the environment,
  ``sys.path`` or a setting of the interpreter changed (the decimal context, the warnings
  filters, ``np.seterr``, ``gc``, the umask...: ``_zygote_judges._interpreter_settings``), a
  module's attribute the tests may have set, a patch they started and never stopped: read from
  their bytecode, see ``_judge._tests_code._attribute_roots``); a check finds none
  idle, or the caller is not root: a judge forked for it alone.
* **files**: tests that name a file API (``open``, ``tmp_path``, ``tempfile``, ``pathlib``,
  ``os.path``, ``shutil``, ``csv``...: ``_run._FILE_USE``, read from their text alone) share
  the run's working directory with the solution, as in-process: their judge is forked for the
  check alone, under the *run's* uid (still non-dumpable: the solution can neither trace it
  nor read its memory; a signal it sends only fails its own check), and works in the run's
  directory, which the solution also sees by the judge's path. Their current directory,
  ``tempfile``'s directory and ``tmp_path`` (``tmpdir``, ``tmp_path_factory``) are there, so a
  file either side writes by a relative path, a temporary file or a ``tmp_path`` path is the
  other's. That uid reaches no other run's directory, and the judge never imports from there
  (a module the solution writes is not the tests' ``import``); it joins the run's cgroup, so
  it dies with the run. Its ``/tmp`` is the run's directory too (a mount namespace of its own,
  as the run's), so a literal ``/tmp/...`` path names the same file on both sides. The cost: a
  fork of a judge per such check.

The tests see the solution as they would in-process, through a hand-written format decoded
strictly on the judge's side (:mod:`asyncpool.sandbox._judge`; never ``pickle``/``marshal`` of
untrusted bytes):

* **values** of built-in types and of a fixed list of trusted standard types are rebuilt by the
  judge as real objects of exactly those types: ``None``, ``...``, ``NotImplemented``, ``bool``,
  ``int``, ``float``, ``complex``, ``str``, ``bytes``, ``bytearray``, ``list``, ``tuple``,
  ``dict``, ``set``, ``frozenset``, ``range``, ``slice``, ``Counter``, ``OrderedDict``,
  ``defaultdict`` (of a built-in factory), ``deque``, ``ChainMap`` (of those mapping types: a new
  ``ChainMap`` of the same maps, each a container of the message as any other),
  ``types.SimpleNamespace`` (a container of its attributes, written back as a dict is),
  ``uuid.UUID``, ``PurePosixPath``, ``PureWindowsPath`` and ``PosixPath`` (by their string),
  ``memoryview`` of bytes (a read-only copy), ``Fraction``, ``Decimal``,
  ``statistics.NormalDist``, ``datetime``/``date``/``time``/``timedelta`` (fixed-offset time
  zones; a ``datetime`` also in a ``zoneinfo.ZoneInfo`` zone, by its key, rebuilt from the
  system's zone files), those time zones themselves, compiled regular expressions (pattern and
  flags, compiled again; never with ``re.DEBUG``), ``list[int]``-style aliases of built-in classes
  and ``typing``'s (``Optional[int]``, ``List[str]``, ``Callable[[int], int]``, ``int | None``,
  ``Literal``; rebuilt by the receiver's ``typing``) (an annotation the tests read), numpy arrays
  and scalars of numeric, bool, ``datetime64`` and ``timedelta64`` dtypes (rebuilt with numpy from
  dtype, shape and raw bytes, in Fortran order when they were; an array the tests pass and the
  solution changes in place, ``a.sort()``, ``a *= 2``, is changed in the tests' process too, as a
  list is), pandas ``DataFrame``, ``Series`` and ``Index`` (range, multi, date, period, interval,
  categorical and plain ones) of those dtypes, of Python objects, of strings, of the nullable ones
  (``Int64``, ``boolean``...), of ``category`` (codes, categories and order: ``pd.cut``'s bins), of
  times in one of the time zones above and of periods, ``Timestamp`` (without a time zone or in one
  of those above), ``Timedelta``, ``Period``, ``Interval``, ``NaT`` and ``NA`` (rebuilt by pandas'
  constructors; a DataFrame the tests pass and the solution changes in place,
  ``dropna(inplace=True)`` or a new column, is changed in the tests' process too, as a list is),
  ``array.array`` objects of numbers, the built-in classes (``int``, ``list``, ``ValueError``: the
  judge's own, by name), named tuples without methods of their own (rebuilt as the judge's own
  named tuple class, or as the tests' class when the tests sent values of it: ``sorted(points)``
  and ``p._replace(x=1)`` give the tests' ``Point`` back, as in-process), exception objects
  returned or passed rather than raised (of the built-in classes a message makes, with nothing
  but their ``args``), ``dict`` views (``d.keys() == {1, 3}`` holds; rebuilt as a view of a
  new dict); nested at most 10,000 deep (300 on Python 3.10), 4
  million items, 64 MiB per message. A subclass (a ``Counter`` or ``list`` with a patched
  ``__eq__``) is not a value;
* an instance of a subclass of ``int``, ``float``, ``complex``, ``str``, ``bytes``, ``tuple``,
  ``list``, ``dict``, ``set``, ``frozenset`` or ``bytearray`` (an ``IntEnum`` member, a ``str``
  subclass, a ``typing.NamedTuple`` with methods, ``class Path(list)``, a ``defaultdict`` of a
  lambda), or of ``UserDict``, ``UserList`` or ``UserString`` (backed by its ``data``), is a
  **value-backed handle** (a list, dict, set or bytearray one is kept in step both ways with
  the solution's object, by the base type's own methods, at every message: ``stack.push(1)``
  of a ``class Stack(list)`` is seen by the tests' ``len(stack)``, and their ``stack.append(2)``
  by its methods, as in-process; at most 64 at once per check, the rest a copy taken when it
  crossed; the other way, the solution changes the content of such an object of the tests'
  only when its class is the tests' own, never a library's or a mock's, such as
  ``call_args_list``; ``UserDict``'s and the like: a copy): the
  judge's object is of its own subclass of that base type holding the exact base value, so it
  compares, hashes and computes as that value (``Color.RED == 1``, ``point == (2, 3)``; the
  solution's ``__eq__`` is never asked, so one that says yes to everything gains nothing), while
  ``.name``, fields and methods of the solution's class, ``repr`` and ``str`` are requests, as a
  handle's; it is kept until the check ends (identity holds: ``pick("RED") is Color.RED``);
* everything else the solution hands out (instances of its classes, its classes, generators and
  iterators, ``map`` objects, bound methods) is a **handle**: attribute reads, calls, iteration
  (lazy, one item per request: an infinite generator under ``itertools.islice`` works; a
  generator's ``send`` and its return value reach ``StopIteration.value``; an async generator
  of the solution under the tests' ``async for``), ``len``, indexing, ``in``, ``with``,
  ``async with``, ``str``/``repr``, ``bool``, ``hash``, ``copy.copy`` and ``copy.deepcopy``
  (the copy is the solution's), ``inspect.signature`` (rebuilt by the judge: names, kinds,
  defaults and annotations as values or handles), ``math.floor``/``ceil``/``trunc`` and
  ``round`` are requests to the solution. A handle is never equal to nor ordered with a value
  of the tests (``handle == 3`` is ``False`` whatever its ``__eq__`` says); operations between
  two handles are the solution's own, as in-process. Arithmetic with a value of the tests
  (``v * 3``, ``3 * v``, ``money + 5``) is the solution's too, but it must give an object of
  the solution's, whose truth, length, numbers (``int``, ``float``, ``round``, ``abs``), items,
  membership, number formats and methods' answers are refused unless they are again such
  objects (``TypeError``), as is comparing it with the tests' dict or set and handing it to
  numpy as an array: ``abs(solve() - 3.14) < 1e-6`` or ``(solve() - y).max() < 1e-9`` would
  otherwise be a comparison with the tests' value that the solution computes. Its data
  attributes and ``str`` read as any handle's (``(v * 3).x == 6``), and it compares with the
  solution's other objects that are not such results (``v * 2 == Vector(2, 4)``). A
  difference with a value of the tests (``solve() - expected``, and what is computed from it)
  tells nothing: not its attributes (``.days``), text, hash, nor any comparison. In-place
  arithmetic (``acc += 5``) is the object's own. ``0 + handle`` (how ``sum()`` starts) may
  give a value.
  An object whose class takes its comparisons from ``collections.abc.Mapping`` or ``Set``
  (a ``Mapping`` subclass, its ``keys()`` view) is compared with the tests' dict or set as
  those methods compare, by the judge: the solution sends its items (its own ``items()``
  and iteration; a set's length is the number of distinct items it sent, whatever its
  ``len`` says), never learns the tests' value, and is never asked how it compares.
  A handle answers the protocols its object's class has and no others: ``callable(obj)``,
  ``isinstance(obj, Iterable)``, ``hasattr(obj, "__len__")`` and ``Hashable`` are as
  in-process (numpy then makes an object array of the solution's objects, as in-process), and
  so is ``isinstance(obj, Mapping)`` (``Sequence``, ``Set`` and their mutable ones) for a class
  derived from one.
  A handle of an object of a library's class (a matplotlib ``Axes``, a PIL ``Image``), or of a
  standard-library, numpy or pandas class whose objects cross as handles (a ``re.Match``, a
  ``sqlite3.Connection``, a ``logging.Logger``, a ``functools.partial``, numpy's ``Generator``)
  says that class, as the judge has it, as its ``__class__``: ``isinstance(ax, plt.Axes)`` and
  ``isinstance(conn, sqlite3.Connection)`` hold, as a ``__class__`` property makes them
  in-process; ``type(m) is re.Match`` does not (the handle's own class, named ``Match``: a
  solution that rewrote its side of the wire could claim any class, which in-process only a
  real ``re.Match`` is) (not for ``io``'s, ``asyncio``'s, ``unittest``'s, ``typing``'s, ``abc``'s,
  ``types``' or the built-ins' classes, which the judge's own code asks ``isinstance`` of; tests
  that import ``matplotlib`` get a judge that shares the run's files, since matplotlib needs a
  writable directory). A coroutine of the
  solution (an ``async def`` it called) is a coroutine to the tests' ``asyncio``
  (``asyncio.run(add(1, 2))``, ``await``, ``asyncio.gather``): awaited, it runs to its end in the
  solution's process while the tests' loop goes on (the await is made by a thread of its own:
  several awaited together run at once, an ``asyncio.wait_for`` of the tests times out while
  it still runs there); likewise a coroutine of the tests the solution awaits (an ``async def``
  of theirs it was handed) runs in the judge, on the tests' loop when it is the one awaiting
  the solution (a semaphore of the tests bounds them, as in-process), else on a loop of its
  own there;
* **write-back**: a list, dict, set, bytearray (or mutable standard type) the tests pass is
  mutated in the solution's process; the changed ones are sent back with the reply and applied
  in place to the tests' own objects (``sort_in_place(a); assert a == [1, 2, 3]`` holds);
  the other way, a container of the solution's object that the tests read as an attribute
  (``stack.items``, ``graph.adj``), or that a call, an index or an iteration of the solution's
  returns while the solution still holds it (``box.items()`` returning ``self._items``, a
  global list, a closure's; told by its reference count) is one object in the judge, kept in
  step with the
  solution's both ways while the check runs (``stack.items.append(5); assert stack.peek() ==
  5``, ``items = stack.items; stack.push(7)`` changes ``items``, and so does a change at any
  depth, ``graph.adj[1].append(2)``, ``grid[0][0][0] = 1``, while the tests' aliases of the
  containers it holds (``row = graph.adj[1]``) stay those containers:
  ``_judge._peer._Peer.watch_attribute``); so are the solution's top-level containers the tests
  read (``GRID[0][0] = 1``). A container the tests pass in and the solution keeps a reference
  to (``self.queue = queue`` in a constructor, told by its reference count after the call) is
  kept in step with the tests' own the same way from then on (``queue.append(0)`` in the tests
  reaches the object, its ``self.queue.sort()`` sorts the tests' ``queue``), at most
  ``_judge._kept.MAX_KEPT_ARGS`` per check: ``_judge._peer._Peer.keep_received``. And a
  container that the solution reads as a public attribute an instance of the tests' own plain
  classes holds itself (the data whose public names it may set, below) is kept in step the same
  way: ``node.children.append(child)``, ``graph.adj[u].append(v)``, ``box.items.sort()``
  change the tests' own; never one its class holds (a class-wide tolerance or table stays the
  tests'), a mock's records (``call_args_list``), nor a private name. A refill keeps the
  containers a kept one holds as the same objects (``row = g.adj[0]`` sees the solution's
  ``g.adj[0].append(1)``). A kept container that no code of one side can reach any more (its
  object is gone, no alias is left, it holds no container) is compared once more, then
  forgotten by both sides, so a message costs what the containers still in use cost, and
  the bound (``_judge._kept.MAX_HELD``) counts those alone; of the tests' containers, at most
  ``_judge._kept.MAX_TESTS_HELD`` (16) are kept at once (past it the solution reads a copy). Two
  threads changing one kept container at once: the last message's contents win (in-process
  both changes stay);
* **callbacks**: a callable or object of the tests (a lambda, a key function, a class of the
  tests) crosses the other way as a handle; the solution may call it, iterate it and read its
  public attributes and its ``__name__``, ``__qualname__`` and ``__module__`` (what
  ``functools.wraps`` copies; not its docstring, no frames, code or ``__globals__``: nothing of
  the tests leaks), compare, hash and combine it (``heapq`` of the tests' ``Interval``s, a set
  of their ``Point``s, ``isinstance(x, TheirClass)``: the tests' own methods decide), and the
  call runs in the judge. The solution's ``type(x)`` and ``x.__class__`` of an object of a
  class the tests defined (a plain class, a dataclass, an ``Enum``) are that class's handle, as
  in-process: ``type(node)(5)``, ``dataclasses.replace(emp, level=2)``, ``list(type(color))``
  (the solution's ``type`` is then a class derived from ``type``: ``type(int) is
  builtins.type``, ``"mro" in type.__dict__`` and ``pickle.dumps(type)`` differ).
  An ``AssertionError`` of the tests' code inside a callback fails the
  check even if the solution catches it, and the solution never learns the message of the
  tests' exceptions (it gets an exception of their class's nearest built-in class, never of a
  built-in merely named alike, a standard library's or a library's class itself when the
  solution has it, ``except requests.ConnectionError`` catching what a patched ``requests.get``
  raised, or its own class when they raised one of its exception classes, ``except Retry``
  catching it: without arguments, their numbers kept and their strings emptied); a ``with`` or
  ``async with`` block of the solution never swallows an ``AssertionError``.

Patching builtins or modules, trace and profile hooks, threads and ``gc`` act on the solution's
own process only. Threads on either side may call the other, concurrently, each in a thread
of its own on the other side (a channel per thread, ``_judge._peer._Peer.channel``): the tests'
threads each call the solution (LeetCode's concurrency problems: 1114 "Print in Order", where
each call waits on another's), the solution's threads call the tests' functions and take their
locks (an ``RLock`` is owned by the thread that took it, as in-process), a timer of the
solution's calls back after its call returned, and prints meanwhile. A thread on the other
side stands for each such thread: named as it is, and ended when it ends (a later thread gets
fresh thread-locals). Bounds: 64 such threads a side at once (``_judge.MAX_CHANNELS``: past it
a thread of the tests waits for one to end; the solution's fail the check), and the run's
thread limit (``RLIMIT_NPROC``) for the threads serving the tests' threads: past it the tests'
calls wait for one of them to end (so a hundred of the tests' threads meeting at a
``Barrier`` inside the solution deadlock). The recursion limit
the tests set (``sys.setrecursionlimit`` before a deep recursion) is the solution's too from
their next request, as in-process. "passed" needs the
judge's "ran every test to its end" record plus at least one answer from the solution; no exit
status, no output, nothing written on any descriptor makes a pass. If the solution dies, hangs
up, sends bytes that are not a valid answer, or exceeds a bound (more than 200,000 live handles,
callbacks or items from one iterator, requests nested more than 50 deep, a message over 64 MiB),
the judge remembers it and the verdict is "failed" even if a test catches the error. The solution's
exceptions reach the tests as the built-in exception of the same name (every built-in ``Exception``
a message makes: ``ValueError``, ``KeyError``, ``FileNotFoundError``, ``TimeoutError``... so
``except ValueError`` in a test works); one of its own classes derived from those (``class
InvalidInput(AppError, ValueError)``) as an exception of the judge's class for it. The judge makes
one class per exception class of the solution that reaches it (a top-level name, a raised
exception's class; at most 1,000 per check), named as the solution's and derived from the judge's
classes for its bases and from the built-in ones, so ``except InvalidInput``, ``except AppError``,
``except ValueError`` and ``pytest.raises(InvalidInput)`` catch it as in-process; its message and
``type(e).__name__`` are the solution's, its own attributes (``e.field``) and its class's
(``InvalidInput.code``) are read from the solution's. Every exception of the solution's crosses
with its ``args`` when they are plain data (``KeyError('k').args``, ``E('a', 2).args``), an
``OSError``'s ``errno`` and ``filename``, its notes (``add_note``), and the exceptions it was
raised ``from`` or while handling (``__cause__``, ``__context__``, ``__suppress_context__``, made
the same way, at most ``_judge._exceptions.MAX_CAUSES`` deep); one of a standard library class
the tests can name (``json.JSONDecodeError``, ``UnicodeDecodeError``,
``decimal.InvalidOperation``), or of a library's the tests imported too
(``np.linalg.LinAlgError``, ``pd.errors.EmptyDataError``, ``requests.HTTPError``), is that class
with its plain attributes (never ``StopIteration``, ``unittest.SkipTest``, pytest's); an
``ExceptionGroup`` is a group of its exceptions, each so made, for the tests' ``except*``. (The
tests may subclass such a class or make one themselves: ``InvalidInput("x")`` in a test is the
judge's exception, whose message is its arguments', as a built-in's; the solution's ``__init__``
does not run.) The solution's ``sys.exit(code)`` in a call is a ``SystemExit`` of that code in the
tests (``pytest.raises(SystemExit)``, ``e.value.code``); one the tests do not catch fails the check
(it never ends them as their own ``unittest.main()`` would). Anything else (``StopIteration`` from a
call, the other exceptions not derived from ``Exception``) as
:class:`asyncpool.sandbox._judge.SolutionError`; the end of one of its iterators ends the tests'
loop over it.

Warnings and logging: while the tests' warning filters differ from the check's start
(``pytest.warns``, ``recwarn``, ``warnings.catch_warnings``, ``simplefilter``), each warning the
solution issues in a call is issued again in the tests' process, where their filters decide
(its category the built-in one, or the judge's class for the solution's own ``Warning``
subclass; a filter that makes it an error raises it when the call returns). Each log record
that passes the solution's loggers' levels, which are the tests' (``caplog.set_level``,
``at_level``, ``assertLogs``, ``basicConfig(level=...)`` reach the solution's loggers of the
same names), is handled by the tests' handlers of that logger and its ancestors (pytest's own
``caplog``, ``assertLogs``); its message is formatted in the solution's process. At most 10,000
of both per check are issued again; the rest are dropped.

Code the solution wrote never runs in the judge: the tests' ``eval``, ``exec`` and ``compile`` (and
``doctest``'s, running examples the tests asked for) of a text that holds one the solution returned
or printed with a call or a decorator in it (``eval(repr(p))``, ``eval(capsys.readouterr().out)``,
``exec(make_code())``, the examples of its docstrings), or the content of a file in the directory it
shares with the tests (``exec(open(path).read())``), run in the solution's process, in a copy of its
namespace (``exec``'s names are bound in the tests' scope); ``compile`` of such a text, or of a file
in that directory (``runpy.run_path``, an import of a module it wrote), is refused. Every pickle the
judge reads (``pickle.loads`` of what the solution returned, ``pickle.load`` of a file it wrote,
``pandas.read_pickle``) may name only data types and reconstructors, the tests' classes and the
solution's (whose construction runs in its process); PyYAML's loaders that build Python objects are
its ``SafeLoader`` in the judge; and a logging configuration (``dictConfig``, ``fileConfig``) may
name only ``logging``'s classes, the tests', the solution's and ``sys.stdout``/``stderr``: without
these, such tests would let the solution run code in the judge and write the verdict.

Input: while the solution serves the tests, its ``sys.stdin`` (and ``.buffer``) and ``input``
read what the tests give it, as in-process: an ``io.StringIO`` they put in ``sys.stdin``
(``unittest.mock.patch``, ``monkeypatch.setattr``), an ``input`` they patched; where they
patched neither, stdin is empty (``input()`` raises ``EOFError``). One round trip per read.
(Unlike in-process, a ``readline`` the solution took from ``sys.stdin`` at its top level reads
the tests' stdin too: in-process it would read the harness's own.)

Patches: a module attribute the tests patch (``unittest.mock.patch`` in any form, pytest's
``monkeypatch.setattr``: ``patch("random.randint", return_value=4)``, ``patch("time.sleep")``,
``patch("builtins.print")``, ``patch("builtins.open", mock_open(read_data=...))``,
``patch("solution.fetch", ...)``), what they assign to the ``solution`` module
(``solution.DEBUG = True``), the environment they change (``monkeypatch.setenv``,
``patch.dict(os.environ, ...)``, ``os.environ[k] = v``), the working directory they change
(``os.chdir``, when the solution's process can enter it: a directory of the run's files), and
their decimal context (``getcontext().prec = 40``, ``localcontext()``), integer string limit
(``sys.set_int_max_str_digits``) and numpy error handling (``np.seterr``, ``np.errstate``) are
the solution's too from their next request until they undo them, as in-process: the value
crosses as values do, a mock or a function of the tests as a handle that the solution calls
back (it may enter and exit the tests' mocks: ``with open(path) as f``). Not forwarded:
``sys``'s attributes (the solution's output already reaches the tests'
``sys.stdout``), those of the modules the wire itself uses as it runs (``decimal``,
``collections``, ``pathlib``, ``struct``, ``io``...: ``_judge._patches._UNFORWARDED``;
``patch("decimal.Decimal", ...)`` stays the tests'; ``patch("datetime.date", ...)`` reaches the
solution), and, for ``open`` and the other built-ins
and modules that reach files, processes or code (``os``, ``shutil``, ``subprocess``...:
``_judge._patches._STRICT_MODULES``), anything but an inert mock (``mock_open``'s, a plain mock, one
whose ``side_effect`` is an exception or a list): one that wraps the real function or calls one
of the tests' would open or run, in the judge, what the solution chose. The solution keeps its
own then.

The tests' ``sys.argv`` (assigned, ``patch("sys.argv", [...])``, ``monkeypatch.setattr(sys,
"argv", ...)``) is the solution's too, so a command-line ``main()`` parses what they set. Once
the tests seed ``random`` (``random.seed``, ``setstate``) or numpy's global generator
(``np.random.seed``, ``set_state``) in a check, the solution's generator is set to the judge's
state before each request in which that state is new, so it draws the numbers the seed gives
in-process (``random.seed(42); assert deal() == expected``, a seed set again restarts it). Its
draws are not sent back: a test that draws from the module's generator *after* the solution
did, expecting the continuation, sees the numbers that follow the tests' own draws (the
solution never chooses the tests' numbers).

Names: the tests' namespace first holds a proxy for each top-level callable of the solution,
except names of built-ins (a solution defining ``abs`` does not change the tests' ``abs``);
names the tests define win over them, so put trusted helpers there (HumanEval's prompt: its
``poly`` is what HumanEval/32's check must call); ``entry_point`` is always the solution's
(a name, or LeetCodeDataset's chain ``Solution().twoSum``: names, ``.`` and ``()`` only).
The solution's other top-level values (``MOD = 10**9 + 7``, ``DIRS``, ``obj = Solution()``)
are asked for when the tests name one that nothing else defines, as the tests would see them
in-process, and kept current: every reply of the solution carries those it rebound since
(``global count; count += 1``) or whose container changed (``seen.append(x)``: the judge's copy
is refilled in place, so the tests' aliases of it follow), until the tests rebind the name
themselves; and a container the tests change in place (``calls.clear()`` between two cases) is
refilled in the solution's process before its next request. A name the tests rebind is
theirs alone from then on (in-process it would rebind the solution's global too: never sent,
it would hand the solution the tests' object under a name of its choosing). A change at any
depth is seen (``grid[0][0] = 1``, ``cube[1][1][1] = 1``), and the tests' alias of an inner
container (``row = board[0]``) follows it, down to 32 levels. The first 4,096 items of a
watched container (its own, then those of the containers it holds, nearest first) are compared
at every message; the rest, up to 1,048,576 items, when the check's budget for such
comparisons covers them (4 million items a side, about 60 ms, earned back by each message as
2,048 items and one per 8 bytes it carries, never by time, so that the same program gets the
same comparisons under any load; value-backed objects have one of their own), and otherwise
the first 4,096 still are, and a big container's last 4,096 (a change between them is seen at
the first message the budget covers it again); a container too big for what is left is passed
over (its smaller siblings are still watched), one of more than 1,048,576 items of its own is
compared by its length, and a change there is not seen.
The solution may set public data attributes of instances of the tests' own plain classes (a
LeetCodeDataset ``ListNode`` the tests built and the solution relinks), and add new ones;
never a name the class defines (a method, a property, a class-wide setting) but a slot, an
attribute holding a callable, nor anything of a class, a function or a module.
A top-level name that is a standard module's attribute of the same name (``from collections
import Counter``) is the judge's own copy, so ``isinstance(r, Counter)`` holds.
Modules the solution imported under a top-level name are imported again *by the judge*, from
:data:`asyncpool.sandbox._judge._tests_namespace.TEST_MODULES` only (``math``, ``re``,
``collections``...), because MBPP's asserts use them without importing them; nothing of the
solution's modules crosses. A library's submodule the solution imported under a top-level name
(``import matplotlib.pyplot as plt``) is loaded in the judge too when the tests name that
library, as in-process, where the tests' ``import matplotlib`` finds ``matplotlib.axes`` loaded.
Where the semantics still differ from in-process: a pandas ``Series`` or an ``array.array`` the
tests pass is not written back (a numpy array and a DataFrame are); identity across the wire holds
for handles (and ``id()`` is one map on both sides: a handle's is its object's, stable while the
object lives; the solution's objects' lie above 2**62), for containers
the tests passed and within one reply, not for a value two replies return; a handle's
``isinstance`` against the tests' classes (but a library's) is false;
``type(handle)`` in the tests' own code is the solution's class (``type(r) is Node``,
``type(r).count``), but elsewhere in the judge (a library's own ``type()``) a proxy class named
as it, and a class of the tests derived from one of the solution (below) is the judge's own
class; of a dataclass's handle, ``dataclasses.asdict``,
``astuple``, ``fields`` and ``is_dataclass`` work, ``replace`` does not); a class the tests define
is not a name of the solution (a solution that calls a ``ListNode`` only the tests define gets a
``NameError``: give the solution its own, as LeetCodeDataset's prompt does); module state is the
solution's own (``random.seed`` in the solution does not reseed the tests' ``random``); a
value-backed object compares as its base value even where the solution's class overrides ``__eq__``;
a ``memoryview`` crosses as a read-only copy (one the tests pass cannot be written through); a
named tuple the solution returns is of the tests' class of that name and fields when the tests
sent values of one (of the last one sent, when two of theirs share a name and fields, and even
when the solution made it of a class of its own); of
pytest's own fixtures ``capsys``, ``capfd``, ``tmp_path`` (and ``tmpdir``, ``tmp_path_factory``:
files, above), ``request`` (``param``: fixtures with ``params`` run each test once per param;
``addfinalizer``, ``getfixturevalue``, ``node.name``), ``caplog``, ``recwarn`` and ``monkeypatch``
are provided (``monkeypatch`` patches the tests' process: ``sys.stdin``, ``builtins.input``, module
attributes and the environment reach the solution, see "Patches"); a test that needs another
(``pytestconfig``, ``capsysbinary``...) fails the check, naming it; a ``skipif``/``xfail`` condition
is a bool, or a string that is a string constant of the tests' own code (evaluated as pytest does,
with ``os``, ``sys``, ``platform`` and the tests' globals; any other string fails the check: it
could be the solution's); and ``import pytest`` needs pytest where the judge runs.

Classes of the tests derived from the solution's (``class Square(Shape)``, an incomplete
subclass of an abstract class): derived instead from a stand-in the judge makes for the
solution's class, whose methods, properties, ``staticmethod``s and ``classmethod``s call the
solution's with the tests' instance (or class) as a handle, so a template method of the
solution calls the tests' override, as in-process; abstract methods stay abstract (an incomplete
subclass cannot be instantiated); ``isinstance(Square(...), Shape)`` and ``issubclass`` hold in
the tests. The solution's methods may set the instance's attributes (``_private`` ones too).
Its comparisons and arithmetic run only between two objects of the solution's (never against
a value of the tests). In the solution's process the instance is an instance of a subclass of
the solution's class made there, whose state (and the tests' overrides and values) it reads and
writes in the judge: ``isinstance(self, Shape)``, ``super()`` and ``type(self)(...)`` (made by
the tests' class, in the judge) work as in-process; that subclass is made when the tests'
class is, so the solution's ``__init_subclass__`` runs then, with the class's keywords (a
registry of plugins). Not so for a solution class derived from a built-in (``dict``): its
tests' subclass is a plain class of the tests.
``timeout`` bounds the own time of the whole check, solution and tests; each request costs a
round trip (about 30 us), so a test loop of 200,000 calls takes seconds; a big list of numbers
or strings the tests pass to many calls crosses once while it is unchanged (1,000 binary searches
over one 100,000-int list: ~3.5 ms a call, not ~13). ``stdout_tail`` is the
solution's output, then ``--- judge:`` and the reason of a failure.

Test modules: the tests import the solution as ``solution`` (``import solution``,
``from solution import *``: a module of the judge's holding the same names, for that check
only; the star import binds no name the tests have already bound, so their ``unittest``,
``pytest``, ``np`` or ``isclose`` stay theirs; names the tests reach through strings,
``patch("solution.os.path.exists")`` or ``monkeypatch.setattr(solution, "MAX", 10)``, are in
it too) and run as the script ``__main__`` (``__file__`` a relative ``test_solution.py``) with
no arguments (``unittest.main()`` runs their TestCases; ``pytest.main()`` runs nothing). With no
``entry_point``, the judge then runs what pytest would collect (after an exit status 0 too,
the TestCases ``unittest.main()`` ran aside: a file that ends in ``unittest.main()`` is judged
by all its tests): ``test*`` functions and the ``test*`` methods (static and class ones too,
inherited ones included) of ``Test*`` classes (not abstract ones) and of the ``Test*`` classes
nested in them, and what ``__test__ = True`` marks (not what ``__test__ = False`` does)
(``@pytest.mark.parametrize`` on the test, its class or the module expanded, ``indirect`` ones
through their fixture's ``request.param``; the tests' fixtures, of function, class or module
scope, methods of a test class included, and ``capsys`` given, to a test under
``functools.wraps`` decorators or ``@patch`` ones as pytest gives them; the xunit-style
``setup_module`` (or ``setUpModule``), ``setup_function``, ``setup_class``, ``setup_method`` and
their teardowns called; the ``skip``, ``skipif``, ``xfail``, ``usefixtures`` and
``filterwarnings`` marks and ``pytest.skip()`` obeyed), and ``unittest.TestCase`` classes by
``unittest``'s runner (each test inside pytest's fixtures and marks where the tests give
any); a ``yield`` or ``async
def`` test fails the check. The solution's prints during a test reach ``redirect_stdout`` and
``capsys``. ``doctest.testmod(solution)`` and ``doctest.run_docstring_examples`` of the
solution's function run in the solution's process (its docstrings' examples are its code);
``testmod``'s results come back.

``run_stdio`` runs the solution once per case with that stdin, in a fresh sandbox; a case
"passed" (verdict "accepted") when the program exited 0 and its output is accepted by the
case's comparison mode (:mod:`asyncpool.sandbox._checkers`; by default equal to the expected
one after :func:`normalize_output`: ``\\r\\n`` read as ``\\n``, trailing whitespace of every
line and trailing empty lines ignored) - computed in the caller, a custom checker included.

Time: the program's own time, not the machine's load
-----------------------------------------------------
``timeout`` is the run's *own time*: wall-clock time since the fork minus the time it was
runnable but waiting for a CPU (Linux's per-task run-queue wait, ``/proc/PID/schedstat``, 2nd
field: the program's most-waiting thread, plus the judge's, plus a compiler's passes'), never
less than the CPU time it (all its processes) used; sleeping and blocking count, waiting for a
CPU does not (so ``run_stdio``'s and ``run_program``'s stdout is a memory file, which a write
never waits on, rather than a pipe the caller may be slow to read: see
``_run._output_file``). A program's other processes' waits are its own time: its first
process may be sleeping on its own meanwhile, not waiting for them. The server checks it when the
wall-clock deadline passes and again as often as needed, and kills the run when it is spent:
``while True: pass`` and ``time.sleep(1000)`` are "timeout" at ``timeout`` (within a few ms on
an idle machine), and a correct program that needs 0.45 s of CPU passes ``timeout=1.5``
however many other jobs share the cores. ``RLIMIT_CPU`` (``ceil(timeout) + 1`` s) also applies.
A run the machine starves so much that it has not used its ``timeout`` within
``16 * timeout + 10`` s of wall-clock time (``_zygote_wire.hard_wall_cap``) is killed without a
verdict, run once more, and then raises :class:`~asyncpool.errors.SandboxError`: starvation is
never a "timeout".

How it runs (the hot path of every verification, so it forks, it does not start interpreters)
---------------------------------------------------------------------------------------------
Each calling process lazily starts one fork server (:mod:`asyncpool.sandbox._zygote`): a clean
interpreter (``python -S -s -B``, an environment built from scratch, the standard library's
common modules preloaded, site-packages on ``sys.path`` but no ``.pth`` hook run),
single-threaded. **Once, at its start, as root**, it moves itself into namespaces
(:mod:`asyncpool.sandbox._ns`), which every run then inherits for the price of a fork:

* an empty **network** namespace: no interface but a loopback that is down; nothing is
  reachable, not the Ray cluster on this machine, not the outside;
* an **IPC** namespace where System V IPC cannot be created;
* a **mount** namespace whose root is a read-only tmpfs with read-only binds of ``/usr``,
  ``/bin``, ``/sbin``, ``/lib*``, ``/etc``, ``/sys``, ``/dev``, Python's prefixes and the
  caller's environment (a virtualenv's directory, so ``sys.executable`` runs) only, a
  ``/proc`` with ``hidepid=invisible`` (a program sees only its own processes), and a ``/tmp``
  tmpfs (1 GiB, shared by the server's runs) holding the runs' directories. Nothing else exists
  there: not ``/tmp/ray`` (Ray's session directory), not ``/root`` or ``/home`` (beyond the
  Python prefix), not the caller's checkout or datasets.

Each run sends the program to the server (a memfd, over a Unix socket); the server forks one
child (two for ``run_tests``), which, before running the program:

* starts its own session and process group (``setsid``); stdin is ``/dev/null`` or the run's
  sealed stdin memfd; ``run_python``'s output (one stream) goes to a pipe the *calling thread*
  reads, keeping its last :data:`OUTPUT_TAIL_BYTES` (the rest is read and discarded, never
  buffered); ``run_program``'s and ``run_stdio``'s stdout goes to a memory file (bounded by
  ``RLIMIT_FSIZE``, counted in the run's memory), of which the first
  :data:`OUTPUT_LIMIT_BYTES` are read once the run is over, and their stderr to another, of
  which the last :data:`OUTPUT_TAIL_BYTES` are read: a program never waits for the caller to
  read what it writes there, so its own time does not depend on how busy the caller is
  (debug lines on stderr count in its memory, and past ``RLIMIT_FSIZE``, 16 MiB, end it as a
  runtime error); ``run_python``'s and ``run_tests``' output pipe stays one: their verdict is
  no comparison of it;
* closes every other inherited file descriptor;
* moves into a cgroup of the run's own (:mod:`asyncpool.sandbox._cgroup`; v2 ``cgroup.kill``
  where v2 gives the memory controller, else the v1 freezer), which none of its processes can
  leave;
* enters a mount namespace of its own and a network namespace no other live run has (reused:
  :class:`asyncpool.sandbox._ns.NetnsPool`, only once the previous run's processes are all dead
  and no socket is left in it) whose ``/tmp`` and ``/dev/shm`` are two
  fresh directories of the run: its working directory, where :mod:`tempfile` puts its files
  and ``run_program`` writes ``files``; removed when the run is over (after ``fetch_files`` are
  copied out without following symlinks); no other run shares its abstract Unix socket names
  or its loopback (down, as the server's);
* holds the run's processes together to ``memory_mb`` of memory (resident, and the files it
  writes to its tmpfs) through its cgroup's memory controller, when the host has one (v2
  ``memory`` delegated, or a v1 ``memory`` hierarchy): the kernel kills the run at that limit
  and its verdict is "memory" (:mod:`asyncpool.sandbox._cgroup`);
* sets ``RLIMIT_CPU``, ``RLIMIT_AS`` (where the cgroup holds the run's memory, ``memory_mb``
  plus a 4 GiB backstop, :data:`~asyncpool.sandbox._zygote_wire.ADDRESS_HEADROOM`: address
  space reserved but not used, a recursion thread's 256 MiB stack, is not memory, as under
  ``python prog.py``, while one allocation past all reason is a ``MemoryError`` at once;
  without a memory controller ``memory_mb`` itself, which includes the interpreter's own
  ~25 MiB; more for runtimes that reserve address space, see
  :mod:`asyncpool.sandbox._languages`), ``RLIMIT_FSIZE`` (:data:`FILE_SIZE_LIMIT`), ``RLIMIT_NPROC``
  (:data:`MAX_PROCESSES`, threads count too; 48 where the cgroup holds the run's memory, room
  for ``ThreadPoolExecutor()``'s 32 workers on any machine:
  :data:`~asyncpool.sandbox._zygote_wire.HELD_PROCESSES`), ``RLIMIT_NOFILE`` (256),
  ``RLIMIT_CORE`` (0), ``RLIMIT_STACK`` (``memory_mb``, at most 256 MiB, as judges of
  competitive programming give: :data:`~asyncpool.sandbox._zygote_wire.STACK_LIMIT`; an endless
  recursion ends at the memory limit; its hard limit is the server's, so that a program may
  raise it, ``setrlimit(RLIMIT_STACK, (RLIM_INFINITY, RLIM_INFINITY))``, as under ``python
  prog.py``: the stack still grows only within the address-space and memory limits);
* drops to an unprivileged uid/gid of its own, leased machine-wide for the run from a pool
  (``1870000000 + 0..4095``, lock files in ``/run/asyncpool-sandbox``), no supplementary
  groups: ``RLIMIT_NPROC`` counts exactly that program's processes (a fork bomb stops at
  that limit), and the program cannot signal or ptrace the caller, the server, its
  judge or any other run;
* sets ``PR_SET_NO_NEW_PRIVS`` (setuid binaries grant nothing) and ``PR_SET_PDEATHSIG`` (it
  dies with the server), then installs a seccomp filter (:mod:`asyncpool.sandbox._seccomp`:
  ``ptrace``, new namespaces, ``mount``, ``bpf``, ``io_uring``... answer ``EPERM``; threads,
  ``fork`` and ``subprocess`` work);
* gets an environment built from scratch (``PATH``, ``LANG``/``LC_ALL=C.UTF-8``,
  ``PYTHONHASHSEED=0``, ``PYTHONDONTWRITEBYTECODE=1``; no ``HOME``): nothing of the caller's
  environment, so no secret in it, reaches the program.

When the run is over or out of time its whole process group gets ``SIGKILL``, then everything
left in its cgroup (a double-forked ``setsid`` daemon included), and its verdict is returned only
once the cgroup holds no live process: every process a run started is dead before its verdict.
Without a usable cgroup hierarchy (the server logs it), a helper under the run's uid does
``kill(-1, SIGKILL)`` before the verdict instead. The server is a child subreaper and reaps every
descendant. A uid is used again once the run's cgroup is gone (every process of that uid was in
it), or, without cgroups, only after a helper running under it did
``kill(-1, SIGKILL)`` (batched within :data:`asyncpool.sandbox._zygote_uids.SWEEP_AFTER` s, at once
when the program left files), so a process that escaped its process group dies within a fraction of
a second and never meets a later program. The server never reads a run's payload (program, stdin,
tests, files) into its own memory, so no later fork inherits it. Nothing the program does reaches
the caller; if the server dies it is restarted transparently (the run is "crashed"), and the caller
never waits longer than the starvation cap plus 30 s.

When the caller is not root
---------------------------
No namespaces (they need ``CAP_SYS_ADMIN``) and no uid change: the program runs under the
caller's uid. It can then read whatever that uid can read (datasets with expected outputs
included), use the network, see every process in ``/proc``, leave files in ``/tmp`` for a later
run, signal the caller's processes (``os.kill(-1, 9)`` kills the caller), read the caller's
memory and open its descriptors through ``/proc/PID/`` (where no Yama ``ptrace_scope`` forbids
it), the verdict pipe's read end and its key included, so a determined solution can forge a
verdict, and outlive its run when it escapes its process group. ``RLIMIT_NPROC`` is then the
uid's current task count plus :data:`MAX_PROCESSES`. What still holds: ``run_tests``'s judge
is a separate, non-dumpable process (the solution can kill it - no verdict, so "failed" - but
cannot ptrace it or read its memory), plain data only across, ``run_stdio``'s comparison in the
caller, the seccomp filter, own-time deadlines and limits. Unprivileged user namespaces could
give the namespaces back but not a second uid (they map one), so they are not used.

Root without namespaces (``CAP_SYS_ADMIN`` missing, e.g. a default Docker container: the
server logs it and goes on; or ``ASYNCPOOL_SANDBOX_NAMESPACES=0`` in the caller's environment,
for hosts where they must not be used): the uid separation, the limits, the seccomp filter
and the judge hold; what the namespaces give (no network, a private ``/tmp`` and
``/dev/shm``, nothing of the machine's files but system directories, ``/proc`` showing only
the program's own processes) does not.

What does NOT hold, even as root - it is not a VM
--------------------------------------------------
* Shared kernel: a kernel exploit escapes. The seccomp filter
  (:mod:`asyncpool.sandbox._seccomp`, x86-64 only) denies the calls such exploits and escapes
  are usually made of (``ptrace``, ``process_vm_*``, new namespaces, ``mount``, ``bpf``,
  ``perf_event_open``, ``userfaultfd``, ``io_uring``, keyrings, modules...), not everything.
* The runs of one fork server share its ``/tmp`` tmpfs space: a run can fill it (1 GiB,
  ``ENOSPC`` for the others) within ``RLIMIT_FSIZE`` per file.
* Without a memory controller on the host (the fork server says so on stderr), memory is
  limited per process only (``RLIMIT_AS``): up to ``MAX_PROCESSES * memory_mb`` in total.
* ``/sys`` and ``/etc`` are readable (read-only); ``/proc`` shows system-wide figures
  (``/proc/loadavg``, ``/proc/meminfo``).
* Own time subtracts the run-queue wait of the program's most-waiting thread: a program whose
  threads or child processes spin on a loaded machine gets a little more wall-clock time (never
  more CPU time than ``RLIMIT_CPU``, never past the starvation cap). The two processes of a
  ``run_tests`` check start in parallel; their overlapping wait is subtracted twice. Once set
  up, they run on one CPU (calls are then local wakeups): a solution's threads share that CPU,
  which changes its wall-clock time, not its own time. The CPU is a *lane* no other fork
  server's check holds at the time, when there is one (:mod:`asyncpool.sandbox._cpu_lanes`:
  record locks on ``cpu-lanes`` in root's lock directory, ``/dev/shm/asyncpool-cpu-lanes-<uid>``
  for another uid, or the file
  ``ASYNCPOOL_SANDBOX_CPU_LANES`` names in the caller's environment; ``0`` there: each server
  round-robin on its own), so that two Ray workers checking at once do not share one CPU while
  the other idles.
* Cost: a ``run_tests`` check forks a process for the solution (as root a long-lived judge
  takes the tests, else a second fork) and makes a round trip per call; on HumanEval it costs
  1.7x the wall time of a bare fork of the same program, ``run_python`` 1.25x (328 checks x 5
  rounds, item by item, one run on a 2-CPU machine: ``python -m benchmarks.bench_sandbox``;
  CPU ratios are noisier on a shared machine). About two thirds of a forked child's CPU is the
  kernel's: page faults (~820 for a judged HumanEval check, ~690 for ``run_python``, most of
  them copies of fork-server pages it writes) and the exit's unmapping.
  On a pure cgroup v2 host, a run's child moving into its cgroup waits for an RCU grace
  period when no other run moved in the last few milliseconds (the kernel's cgroup
  threadgroup semaphore): latency, not CPU, 5-25 ms, which sparse requests pay. A v1 move
  does not (``tasks``, see :mod:`asyncpool.sandbox._cgroup`): on this (hybrid) host a
  ``run_tests`` check 50 ms after the last one takes 6.3-6.9 ms, 18.7-19.9 ms with the v2
  move (medians of 60), and ``run_python`` in the bench above 5.2 ms against 14.1 ms.
* A ``run_tests`` check is as strong as its tests: tests that compare the candidate with itself
  (HumanEval/33 calls the entry point by name) stay weak.
* ``sys.executable`` works, but a program that starts a new interpreter pays its start-up.
* Linux only (``memfd_create``, ``prctl``, ``/proc``); namespaces on x86-64 and arm64.

Concurrency: every entry point may be called from many threads at once. ``run_python_async``
runs ``run_python`` in a worker thread (``anyio.to_thread``); cancelling the awaiting task
kills the program's process group at once and re-raises the cancellation. A process that forks
(e.g. ``multiprocessing``) gets its own fork server in the child.

This package's public names are defined in its modules: the entry points and their argument
checks in :mod:`asyncpool.sandbox._entry_points` and :mod:`asyncpool.sandbox._arguments`, their
result types in :mod:`asyncpool.sandbox._results`; how one run is carried out (the fork server of
this process, sending the run, collecting its output, the retries) in
:mod:`asyncpool.sandbox._run`.
"""

from __future__ import annotations

from asyncpool.sandbox._checkers import DEFAULT_TOLERANCE as DEFAULT_TOLERANCE
from asyncpool.sandbox._checkers import normalize_output as normalize_output
from asyncpool.sandbox._entry_points import run_program as run_program
from asyncpool.sandbox._entry_points import run_python as run_python
from asyncpool.sandbox._entry_points import run_python_async as run_python_async
from asyncpool.sandbox._entry_points import run_python_bare as run_python_bare
from asyncpool.sandbox._entry_points import run_stdio as run_stdio
from asyncpool.sandbox._entry_points import run_tests as run_tests
from asyncpool.sandbox._results import OUTPUT_LIMIT_BYTES as OUTPUT_LIMIT_BYTES
from asyncpool.sandbox._results import ProgramResult as ProgramResult
from asyncpool.sandbox._results import SandboxResult as SandboxResult
from asyncpool.sandbox._results import StdioCaseResult as StdioCaseResult
from asyncpool.sandbox._results import StdioResult as StdioResult
from asyncpool.sandbox._run import FILE_SIZE_LIMIT as FILE_SIZE_LIMIT
from asyncpool.sandbox._run import MAX_PROCESSES as MAX_PROCESSES
from asyncpool.sandbox._run import OUTPUT_TAIL_BYTES as OUTPUT_TAIL_BYTES
from asyncpool.sandbox._run import STARVED_ATTEMPTS as STARVED_ATTEMPTS
from asyncpool.sandbox._run import SandboxStatus as SandboxStatus

# The limits (FILE_SIZE_LIMIT, MAX_PROCESSES, OUTPUT_TAIL_BYTES...) are public but reached
# through the module, so that a re-export of __all__ by the package stays small.
__all__ = [
    "ProgramResult",
    "SandboxResult",
    "SandboxStatus",
    "StdioCaseResult",
    "StdioResult",
    "run_program",
    "run_python",
    "run_python_async",
    "run_python_bare",
    "run_stdio",
    "run_tests",
]
