"""Exceptions across the wire: those of the solution's that reach the tests as themselves
(:data:`_PASSED_THROUGH`), the judge's classes standing for the solution's own exception classes
(:class:`_Mirror`), an exception's message, ``args``, attributes and notes
(:func:`_exception_detail`, :func:`_solution_exception`), the standard library and library classes
it is rebuilt as (:func:`_standard_exception_class`), the solution's ``sys.exit`` in a call; and
the classes that cross by name (:func:`_named_class`, :func:`_standard_class_name`), the tests'
texts the solution holds by number (:class:`_TestsText`).

Must not: tell the solution the message of one of the tests' exceptions, nor rebuild a class whose
raising means more than a failure (``StopIteration``, ``SkipTest``, pytest's, a group).
"""

from __future__ import annotations

import builtins
from typing import Any

from ._bounds import CodecError, SolutionError
from ._proxies import _PROXY_TYPES, _Proxy
from ._proxy_backed import _HANDLE
from ._tests_code import _code_objects, _compiled
from ._values import _loaded_class, _plain_name


def _made_of_a_message(cls: type) -> bool:
    try:
        cls("message")
    except Exception:
        return False
    return True


#: The solution's exceptions that reach the tests as themselves (so that ``except ValueError``
#: or ``pytest.raises(FileNotFoundError)`` in a test works): the built-in ``Exception``
#: classes that a message alone makes (not ``UnicodeDecodeError``: it reaches the tests as a
#: ``UnicodeError``). Not ``StopIteration`` from a call: raised inside ``map`` or a generator,
#: it would end the tests' iteration early (``all(map(...))`` would be true); not
#: ``BaseException``s. (The end of an iterator of the solution ends the tests' loop over it.)
_PASSED_THROUGH = {
    name: cls
    for name, cls in sorted(vars(builtins).items())
    if isinstance(cls, type)
    and issubclass(cls, Exception)
    and not issubclass(cls, (StopIteration, StopAsyncIteration))
    and _made_of_a_message(cls)
}


def _passed_through_base(kind: type) -> str | None:
    """The name of the nearest class of :data:`_PASSED_THROUGH` among ``kind``'s bases (the
    solution's ``class InvalidInput(ValueError)`` -> ``"ValueError"``), or None: not an
    ``Exception``, or a ``StopIteration`` (see :data:`_PASSED_THROUGH`)."""
    for cls in kind.__mro__:
        if cls is StopIteration or cls is StopAsyncIteration:
            return None
        if _PASSED_THROUGH.get(cls.__name__) is cls:
            return cls.__name__
    return None


_PASSED_THROUGH_CLASSES = frozenset(_PASSED_THROUGH.values())


def _plain_exception(value: Any, kind: type) -> bool:
    """Whether an exception object of the solution's (returned or passed, not raised) crosses as
    a value: one of :data:`_PASSED_THROUGH`'s classes with nothing but its ``args`` (no
    attribute of its own, no ``OSError`` or ``ImportError``, whose ``filename`` or ``path`` are
    not in them, no ``AttributeError``'s or ``NameError``'s ``name``); rebuilt as
    ``kind(*args)``. Its traceback, cause and context stay behind. The tests' exceptions never
    cross so (their messages may hold the expected answer)."""
    if vars(value) or issubclass(kind, (OSError, ImportError)) or len(value.args) > 64:
        return False
    return getattr(value, "name", None) is None and getattr(value, "obj", None) is None


def _exception_class_spec(
    cls: type,
) -> tuple[str, str, tuple[type | tuple[str, str], ...]] | None:
    """What one of the solution's own exception classes crosses with (the solution's side),
    so that the judge stands a class of its own for it (:meth:`_Peer.mirror`): its name, the
    name of its nearest base of :data:`_PASSED_THROUGH`, and its direct bases that are such
    classes or more of its own, a class of the standard library or of a library among them by
    its ``(module, qualname)`` (``json.JSONDecodeError``, ``requests.HTTPError``: the judge
    derives from its own, see :func:`_standard_exception_class`); None for any other class (a
    handle, as before)."""
    try:
        if not issubclass(cls, Exception) or _PASSED_THROUGH.get(cls.__name__) is cls:
            return None
        base = _passed_through_base(cls)
        name = cls.__name__
        bases = tuple(
            _named_class(b) or b for b in cls.__bases__
            if issubclass(type(b), type) and _passed_through_base(b) is not None
        )  # fmt: skip
    except Exception:  # a class of the solution's whose metaclass answers oddly
        return None
    if base is None or type(name) is not str or not name.isidentifier() or len(name) > 200:
        return None
    return (name, base, bases)


class _Mirror(type):
    """The metaclass of the judge's classes that stand for the solution's exception classes
    (:meth:`_Peer.mirror`). ``except InvalidInput`` needs a real class derived from
    ``BaseException``, which a :class:`_Proxy` cannot be; what a proxy of the class answered
    still reaches the solution: a class attribute (``InvalidInput.code``), and ``isinstance``
    / ``issubclass`` of the solution's handles (an exception it returned)."""

    def __getattr__(cls, name: str) -> Any:
        if not name.startswith("__"):
            for klass in cls.__mro__:
                proxy = vars(klass).get(_HANDLE)
                if proxy is not None:
                    return getattr(proxy, name)
        raise AttributeError(name)

    def __instancecheck__(cls, obj: Any) -> bool:
        proxy = vars(cls).get(_HANDLE)
        if type(obj) in _PROXY_TYPES and proxy is not None:
            return _Proxy.__instancecheck__(proxy, obj)
        return type.__instancecheck__(cls, obj)

    def __subclasscheck__(cls, sub: Any) -> bool:
        proxy = vars(cls).get(_HANDLE)
        if type(sub) in _PROXY_TYPES and proxy is not None:
            return _Proxy.__subclasscheck__(proxy, sub)
        return type.__subclasscheck__(cls, sub)


#: The mark of an exception raised ``from`` another in an ``X`` reply (see _Peer.exception),
#: and how deep such causes nest at most.
_CAUSED = "<caused>"
#: The mark of a tests' exception of one of the solution's classes (or of a class the tests
#: derived from one) in an ``X`` reply: ``(name, "", OWN_CLASS, that class)``.
_OWN_CLASS = "<own>"
MAX_CAUSES = 4
#: The mark of an ``ExceptionGroup`` of the solution's (``asyncio.TaskGroup``'s failures) in an
#: ``X`` reply, and how many exceptions one holds at most; the built-in class (Python 3.11+).
_GROUPED = "<group>"
#: The mark of a tests' exception in an ``X`` reply to the solution, ``(RAISED, number,
#: description)``, and of the same exception object raised back to the judge, ``(RAISED,
#: number)``: a decorator that retries the tests' function and re-raises what it raised
#: (``raise`` in an ``except``) hands the tests their own exception, message and all, as
#: in-process, while the solution never saw the message (:meth:`_Peer.describe`). At most
#: :data:`MAX_RAISED` per check are numbered.
_RAISED = "<raised>"
MAX_RAISED = 10_000
MAX_GROUPED = 16
_EXCEPTION_GROUP: Any = vars(builtins).get("ExceptionGroup")


def _solution_exception(
    name: str,
    message: str,
    handle: Any = None,
    kind: Any = None,
    detail: Any = None,
    exact: bool = True,
) -> Exception:
    """The solution's exception as the tests see it: the built-in type of that name when it is
    one of :data:`_PASSED_THROUGH`, else :class:`SolutionError`; or, for one of the solution's
    own classes (of which ``name`` is the nearest such base), an exception of ``kind``, the
    judge's class standing for it (:meth:`_Peer.mirror`: ``except InvalidInput`` and ``except
    ValueError`` catch it, as in-process); or an exception of a standard library class the
    tests may name (``json.JSONDecodeError``, ``UnicodeDecodeError``; see
    :func:`_standard_exception_class`). Its message crosses, and its ``args`` and plain
    attributes when they are plain values (``detail``, see :func:`_exception_detail`:
    ``KeyError('x').args``, an ``OSError``'s ``errno`` and ``filename``), so ``e.args`` and
    ``str(e)`` read as in-process, and its notes (``add_note``); the attributes one of its own
    has are read from ``handle``, the solution's exception. Not ``exact`` (the solution's side:
    one of the tests' exceptions, whose message and arguments never cross): a class named by
    ``detail`` is made even when its ``str()`` is not the empty message (``CalledProcessError``
    formats its ``returncode``)."""
    args, attributes, where, notes = _checked_detail(detail)
    exc: Exception | None = None
    if where is not None:  # args that are no plain values: its message as its one arg
        made_args = (message,) if args is None else args
        exc = _rebuilt_exception(where, message, made_args, attributes, exact)
    if exc is None and kind is not None:
        exc = _rebuilt_exception(kind, message, args, attributes) or _new_exception(
            kind, (message,)
        )
        vars(exc)[_HANDLE] = handle
        vars(exc)[_MESSAGE] = message
    if exc is None:
        cls = _PASSED_THROUGH.get(name)
        if cls is None:
            exc = SolutionError(f"{name}: {message}")
        else:
            exc = _rebuilt_exception(cls, message, args, attributes) or cls(message)
    if notes:
        exc.__notes__ = list(notes)
    return exc


def _tests_exception_attributes(exc: BaseException) -> tuple[tuple[str, Any], ...]:
    """The attributes of one of the tests' exceptions of a library or standard library class
    (a ``CalledProcessError`` a mock raised) the solution's side sets on the exception it
    makes: its numbers, bools and Nones (``returncode``), and its strings and bytes emptied
    (``cmd``, ``output``: they may quote what the tests expect, as its message may)."""
    found: list[tuple[str, Any]] = []
    for key, value in list(getattr(exc, "__dict__", {}).items())[:MAX_EXCEPTION_ARGS]:
        if type(key) is not str or not _plain_name(key):
            continue
        if type(value) in (int, float, bool, type(None)):
            found.append((key, value))
        elif type(value) in (str, bytes):
            found.append((key, type(value)()))
    return tuple(found)


#: Where a :meth:`_Peer.mirror` exception keeps the solution's ``str()`` of it (its class may
#: format its own), which :func:`_mirror_str` answers.
_MESSAGE = "_asyncpool_message"

#: At most this many plain attributes of the solution's exception cross with it (its
#: ``args`` are bounded by :func:`_plain_detail`; past either, only its message crosses).
MAX_EXCEPTION_ARGS = 16

#: The values an exception's ``args`` and attributes cross as (:func:`_plain_detail`).
_PLAIN_SCALARS = (str, bytes, int, float, complex, bool, type(None))


def _plain_detail(value: Any) -> bool:
    """Whether ``value`` is small plain data (scalars; strings and bytes of at most 10,000;
    lists, tuples, sets and dicts of them, at most 10 deep and 1,000 items in all), as an
    exception's ``args`` may be: rebuilding the exception never runs code of either side on
    it. Iterative, with a budget: a forged value costs the judge at most that."""
    budget = 1000
    stack = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        budget -= 1
        kind = type(item)
        if budget < 0:
            return False
        if kind in _PLAIN_SCALARS:
            if kind in (str, bytes) and len(item) > 10_000:
                return False
            continue
        if depth >= 10 or kind not in (tuple, list, set, frozenset, dict) or len(item) > budget:
            return False
        items = [x for kv in item.items() for x in kv] if kind is dict else item
        stack.extend((x, depth + 1) for x in items)
    return True


def _exception_detail(exc: BaseException, own: bool) -> tuple[Any, ...]:
    """The solution's side: what crosses of ``exc`` besides its message (see
    :func:`_solution_exception`): its ``args`` if plain (else None); its plain instance
    attributes (``json.JSONDecodeError``'s ``pos``) for a class that is not the solution's own
    (``own``: those are read from its handle), and an ``OSError``'s ``filename`` for any; for
    a standard library class, its module and name (else None); and its notes (``add_note``:
    strings)."""
    try:
        args: tuple[Any, ...] | None = exc.args
        if type(args) is not tuple or not _plain_detail(args):
            args = None
        attributes: list[tuple[str, Any]] = []
        where = None
        # An OSError's file names are not in its __dict__ (None is not set: str() differs);
        # the other attributes of the solution's own classes are read from its handle.
        found = {} if own or not hasattr(exc, "__dict__") else vars(exc)
        if isinstance(exc, OSError):
            names = [n for n in ("filename", "filename2") if getattr(exc, n) is not None]
            found = {**found, **{n: getattr(exc, n) for n in names}}
        for key, value in found.items():
            if type(key) is str and _plain_name(key) and _plain_detail(value):
                attributes.append((key, value))
        attributes = attributes[:MAX_EXCEPTION_ARGS]
        if not own:
            kind = type(exc)
            module, name = kind.__module__, kind.__qualname__
            if type(module) is str and type(name) is str and len(module) + len(name) < 500:
                where = (module, name)
        notes = getattr(exc, "__notes__", None)
        notes = tuple(notes) if type(notes) is list and _plain_detail(tuple(notes)) else ()
    except Exception:
        return (None, (), None, ())
    return (args, tuple(attributes), where, notes)


def _checked_detail(
    detail: Any,
) -> tuple[Any, tuple[tuple[str, Any], ...], type | None, tuple[str, ...]]:
    """The judge's side: an exception's detail (:func:`_exception_detail`) checked: its args
    (None unless plain), its plain attributes, its class when that is a standard library
    exception class (:func:`_standard_exception_class`), and its notes (strings)."""
    if type(detail) is not tuple or len(detail) != 4:
        return None, (), None, ()
    args, attributes, where, notes = detail
    if type(args) is not tuple or not _plain_detail(args):
        args = None
    if (
        type(attributes) is not tuple
        or len(attributes) > MAX_EXCEPTION_ARGS
        or not all(
            type(a) is tuple and len(a) == 2 and type(a[0]) is str and _plain_name(a[0])
            and _plain_detail(a[1])
            for a in attributes
        )
    ):  # fmt: skip
        attributes = ()
    cls = None
    if type(where) is tuple and len(where) == 2 and all(type(w) is str for w in where):
        cls = _standard_exception_class(*where)
    if type(notes) is not tuple or not _plain_detail(notes) or any(
        type(n) is not str for n in notes
    ):
        notes = ()
    return args, attributes, cls, notes


#: Standard library modules whose exception classes the solution's never stand for, though
#: they are ``Exception``s: a ``unittest.SkipTest`` raised by the solution must not skip a
#: test of the tests.
_UNRESOLVED_MODULES = frozenset({"unittest", "doctest", "_pytest", "pytest", "asyncpool"})

#: ... nor these classes: ending an iteration early, or groups whose ``except*`` differs.
_NEVER_REBUILT: tuple[type, ...] = (
    StopIteration, StopAsyncIteration,
    *(group for group in [vars(builtins).get("BaseExceptionGroup")] if group is not None),
)  # fmt: skip


#: Modules whose classes never cross by name (:func:`_named_class`): the solution's, the
#: tests', the judge's (``asyncpool``; in the fork server ``_asyncpool_zygote``, the stand-in
#: package whose modules the judge's and the server's are there).
_OWN_MODULES = frozenset({"solution", "__main__", "_asyncpool_zygote", "asyncpool"})


class _TestsText(str):
    """The solution's side: a text of the tests' that it holds without its content (empty
    here): the ``__doc__`` of a function of the tests, hidden (it could quote an expected
    answer, see :data:`_HIDDEN`). ``functools.wraps`` copies it to the solution's wrapper, and
    crossing back (the tests' ``flaky.__doc__``) it is the tests' text again, as in-process."""

    number: int


class _TextReference:
    """The judge's side of :class:`_TestsText`: the number of a text of the tests (see
    :attr:`_Peer.docs`) as it crosses to the solution."""

    __slots__ = ("number",)

    def __init__(self, number: int) -> None:
        self.number = number


#: The most texts of the tests (see _TestsText) one check numbers.
MAX_DOCS = 10_000


class _Numbered:
    """The judge's objects the solution holds by number only, in the order they were told
    (the tests' exceptions, :data:`_RAISED`; their docstrings, :class:`_TestsText`), at most
    ``bound`` per check; a number the judge never gave is a malformed message."""

    __slots__ = ("bound", "items")

    def __init__(self, bound: int) -> None:
        self.bound = bound
        self.items: list[Any] = []

    def add(self, obj: Any) -> int | None:
        """``obj``'s new number, or None when ``bound`` are numbered already."""
        if len(self.items) >= self.bound:
            return None
        self.items.append(obj)
        return len(self.items) - 1

    def get(self, number: Any, what: str) -> Any:
        if type(number) is not int or not 0 <= number < len(self.items):
            raise CodecError(f"{what} never sent")
        return self.items[number]


#: Modules of the standard library whose classes cross as the receiver's own class of the same
#: name (:func:`_standard_class`), as built-in classes do: ``return collections.deque``, ``return
#: type(x)`` of a ``Fraction``, ``inspect.Parameter.empty`` then are the tests' own (``is``
#: holds); a tests' ``deque`` passed to the solution is the solution's. Classes that compute
#: (none opens a file, a process or a socket, or runs code it is given) and never an exception
#: class (those are mirrored: see :meth:`_Peer.mirror`).
_STANDARD_CLASS_MODULES = frozenset({
    "abc", "array", "bisect", "calendar", "collections", "collections.abc", "dataclasses",
    "datetime", "decimal", "difflib", "enum", "fractions", "functools", "graphlib", "heapq",
    "http", "inspect", "ipaddress", "itertools", "json.decoder", "json.encoder", "numbers",
    "operator", "queue", "random", "re", "statistics", "string", "textwrap", "typing", "uuid",
    "zoneinfo",
})  # fmt: skip


_TYPE_MODULE = vars(type)["__module__"]
_TYPE_QUALNAME = vars(type)["__qualname__"]


def _standard_class_name(cls: type) -> bytes | None:
    """``module:qualname`` of a class of :data:`_STANDARD_CLASS_MODULES` that its module
    holds under that name here (not a class renamed as one), else None."""
    try:  # (type's own descriptors: never a metaclass's property)
        module = _TYPE_MODULE.__get__(cls, type)
        qualname = _TYPE_QUALNAME.__get__(cls, type)
    except Exception:
        return None
    if (
        type(module) is not str
        or module not in _STANDARD_CLASS_MODULES
        or type(qualname) is not str
        or len(qualname) > 200
        or issubclass(cls, BaseException)
        or _loaded_class(module, qualname) is not cls
    ):
        return None
    return f"{module}:{qualname}".encode()


def _standard_class(named: str, handle: Any) -> Any:
    """The receiver's side of :func:`_standard_class_name`: its own class of that name when
    it has the module loaded (nothing is imported for it), else ``handle`` (the sender's
    class, as any class crosses); the handle, unused, is dropped."""
    module, _, qualname = named.partition(":")
    if module in _STANDARD_CLASS_MODULES:
        found = _loaded_class(module, qualname)
        if found is not None and not issubclass(found, BaseException):
            return found
    return handle


def _named_class(cls: type) -> tuple[str, str] | None:
    """``(module, qualname)`` of a class of the standard library or of a library (numpy's
    ``LinAlgError``, requests' ``ConnectionError``) that is not one of :data:`_PASSED_THROUGH`
    (those cross by name already), nor the solution's, the tests' or the judge's; else None."""
    module, qualname = cls.__module__, cls.__qualname__
    if (
        type(module) is not str
        or type(qualname) is not str
        or _PASSED_THROUGH.get(cls.__name__) is cls
        or module.partition(".")[0] in _OWN_MODULES
        or not all(p.isidentifier() for p in module.split("."))
        or len(module) + len(qualname) >= 500
    ):
        return None
    return (module, qualname)


def _imported_by_tests(module: str, tests: str) -> bool:
    """Whether the tests' code imports ``module``'s package (``import requests`` for
    ``requests.exceptions``), so that the judge may import ``module`` before the tests run:
    they will import that library themselves. Never a package of :data:`_UNRESOLVED_MODULES`
    or :data:`_OWN_MODULES`; read from the bytecode (``IMPORT_NAME``), only when asked."""
    top = module.partition(".")[0]
    if (
        not tests
        or top in _UNRESOLVED_MODULES
        or top in _OWN_MODULES
        or not all(part.isidentifier() for part in module.split("."))
    ):
        return False
    try:
        code = _compiled(tests)[0]
    except Exception:  # (their syntax error is reported when they run)
        return False
    import dis

    for current in _code_objects(code):
        for instruction in dis.get_instructions(current):
            if instruction.opname == "IMPORT_NAME":
                name = str(instruction.argval)
                if name == top or name.startswith(top + "."):
                    return True
    return False


def _standard_exception_class(module: str, name: str) -> type | None:
    """The class ``name`` of the module ``module`` of the standard library (``json.decoder``,
    ``builtins``) or of a library (``numpy.linalg``, ``requests.exceptions``) when it is an
    ``Exception`` the tests could name (``except json.JSONDecodeError``,
    ``assertRaises(np.linalg.LinAlgError)``), already imported here (nothing is imported for
    it), and not one whose raising means more than a failure (``StopIteration``, ``SkipTest``,
    pytest's and unittest's, an exception group); else None. The solution may claim any class
    this way: it gains nothing it would not by raising that class itself."""
    top = module.partition(".")[0]
    if top in _UNRESOLVED_MODULES or top in _OWN_MODULES:
        return None
    found = _loaded_class(module, name)
    if (
        found is None
        or not issubclass(found, Exception)
        or issubclass(found, _NEVER_REBUILT)
        or found.__name__ == "SkipTest"
        or any(c.__module__.partition(".")[0] in _UNRESOLVED_MODULES for c in found.__mro__)
    ):
        return None
    return found


def _new_exception(cls: type[Exception], args: tuple[Any, ...]) -> Exception:
    """``cls(*args)``; for a :meth:`_Peer.mirror` class whose standard library base's
    ``__init__`` takes other arguments (``json.JSONDecodeError``'s ``msg, doc, pos``, while its
    ``args`` hold one message), made as ``copy`` and ``pickle`` make it: ``__new__``, then
    ``args`` (its attributes are set after, from the solution's)."""
    try:
        return cls(*args)
    except TypeError:
        if type(cls) is not _Mirror:
            raise
    made = cls.__new__(cls, *args)
    made.args = args
    return made


def _rebuilt_exception(
    cls: type[Exception],
    message: str,
    args: Any,
    attributes: tuple[tuple[str, Any], ...],
    exact: bool = True,
) -> Exception | None:
    """An exception of ``cls`` with the solution's ``args`` and plain attributes, or None when
    it cannot be made so that its ``str()`` is the solution's ``message`` (only a built-in
    class's ``__init__`` runs, on plain values; a standard library class is made by
    ``__new__``, as ``copy`` and ``pickle`` do, its attributes set after)."""
    if args is None:
        return None
    try:
        made: Exception
        if cls.__module__ == "builtins" or type(cls) is _Mirror:
            made = _new_exception(cls, args)
        else:
            made = cls.__new__(cls, *args)
            made.args = args
        for key, value in attributes:
            setattr(made, key, value)
        if exact and type(cls) is not _Mirror and _message(made) != message:
            return None
    except Exception:
        return None
    return made


def _message(exc: BaseException) -> str:
    """``str(exc)`` as the solution's side sends it (:meth:`_Peer._describe`)."""
    try:
        return str(exc)[:10_000]
    except Exception:
        return "<unprintable>"


def _mirror_str(self: BaseException) -> str:
    """``str()`` of the judge's exception standing for one of the solution's classes
    (:meth:`_Peer.mirror`): the solution's own ``str()`` of it, which its class may format."""
    message = vars(self).get(_MESSAGE)
    if type(message) is str:
        return message
    for klass in type(self).__mro__:
        if type(klass) is not _Mirror:
            method: Any = klass.__str__
            return str(method(self))
    return ""


def _exit_code(code: Any) -> Any:
    """A ``SystemExit``'s code as it crosses: None, a bool, an int or a str (at most 10,000
    characters) as itself, anything else as its ``str``, as the exit would print it."""
    if _plain_exit_code(code):
        return code
    try:
        return str(code)[:10_000]
    except Exception:
        return "<unprintable>"


def _plain_exit_code(code: Any) -> bool:
    return code is None or type(code) in (bool, int) or (type(code) is str and len(code) <= 10_000)


#: Marks a ``SystemExit`` of the solution (:func:`_solution_exit`) in its ``__dict__``.
_SOLUTION_EXIT = "_asyncpool_solution_exit"


def _solution_exit(code: Any) -> SystemExit:
    """The solution's ``sys.exit(code)`` in a call, as the tests see it: a ``SystemExit`` they
    may catch (``pytest.raises(SystemExit)``, ``e.value.code``), marked as the solution's: one
    that reaches the end of the tests fails the check (it is never their ``unittest.main()``
    ending, see judge_check)."""
    exc = SystemExit(code)
    vars(exc)[_SOLUTION_EXIT] = True
    return exc
