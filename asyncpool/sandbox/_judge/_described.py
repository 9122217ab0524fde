"""What a handle says of its object as it crosses: its class's name and protocols
(:func:`_class_name`, :func:`_capabilities`; the truth tag of :func:`_truth_tag`), a dataclass's
fields, the library or standard class it may stand for (:func:`_standing_module`,
:func:`_library_class`), and what the other side may read of it without a request, its hash and
plain attributes (:func:`_handle_extras`).

All of it is read from this side's own object and class (the sender's side of a handle); the
receiver's proxies (:mod:`._proxies`) make their classes and answers from it.

Must not: hold or make a proxy, nor send anything (the codec sends what this gives).
"""

from __future__ import annotations

import _thread
import abc
import collections.abc
import dataclasses
import sys
import types
import weakref
from collections.abc import Callable
from re import Pattern as _Pattern  # bound once: the tests' patches of re are forwarded
from signal import default_int_handler as _default_int_handler  # (bound once, as Pattern)
from signal import signal as _set_handler
from sys import _current_frames  # bound once: the tests' patches are forwarded
from typing import Any
from weakref import getweakrefcount as _getweakrefcount  # (bound once, as Pattern)

from ._ops import _HIDDEN
from ._values import MAX_MADE_CLASSES, _loaded_class


def _class_name(kind: type) -> bytes:
    """The name a handle of an object of ``kind`` crosses with (at most 200 bytes), after
    ``\2`` (``\3`` when the class has a ``__bool__`` or ``__len__`` of its own: see
    :func:`_truthy`) and its capabilities in two bytes (:func:`_capabilities`; not for a class,
    whose handle answers every protocol: ``Color["RED"]``, ``for m in Color``), then, for a
    dataclass, its fields' names, each after a NUL (when they are identifiers, at most 4,000
    bytes in all), so that ``dataclasses.asdict``/``fields``/``is_dataclass`` work on the
    handle as in-process (:func:`_proxy_class`).

    Made once per class and kept while the class is unchanged (:class:`_PerClass`): every
    handle crosses with it, and reading the class's methods took ~7 us a handle (a linked list
    walked by the tests: a tenth of each step)."""
    name: bytes = _CLASS_NAMES.get(kind)
    return name


class _PerClass:
    """What ``make(kind)`` says of a class, kept by the class's identity while the class is
    unchanged: made again when a class of its MRO gained or lost a name since (``Box.__bool__
    = ...`` or a property added in a later call: the cached answer said the class had none).

    By identity, not in a ``WeakKeyDictionary``, which looks a class up by its metaclass's
    ``__eq__`` and ``__hash__``: two classes that compare equal shared one answer, and a
    ``Plain`` object's handle said it had ``Sized``'s ``__len__`` (helper 45's A3)."""

    __slots__ = ("_entries", "_make")

    def __init__(self, make: Callable[[type], Any]) -> None:
        self._make = make
        self._entries: dict[int, tuple[Any, tuple[int, ...], Any]] = {}

    def get(self, kind: type) -> Any:
        shape = tuple(len(vars(k)) for k in kind.__mro__[:-1])  # (object's never changes)
        key = id(kind)
        entry = self._entries.get(key)
        if entry is not None and entry[0]() is kind and entry[1] == shape:
            return entry[2]
        made = self._make(kind)
        entries = self._entries

        def forget(_: object) -> None:  # the class died: its id may be another class's then
            entries.pop(key, None)

        try:
            ref = weakref.ref(kind, forget)
        except TypeError:  # a class that cannot be weakly referenced: not kept
            return made
        entries[key] = (ref, shape, made)
        return made


def _made_class_name(kind: type) -> bytes:
    if kind is types.GeneratorType:
        return _GENERATOR_NAME
    if kind is types.AsyncGeneratorType:
        return _ASYNC_GENERATOR_NAME
    if kind is types.FunctionType:
        return b"\2" + _capabilities(kind).to_bytes(2, "big") + _FUNCTION_NAME
    name = kind.__name__
    if type(name) is not str:
        return b""
    out = name.encode("utf-8", "replace")[:200]
    if not issubclass(kind, type):  # a class's handle (its metaclass's object) answers all
        out = _truth_tag(kind) + _capabilities(kind).to_bytes(2, "big") + out
    module, qualname = getattr(kind, "__module__", None), getattr(kind, "__qualname__", None)
    if (
        type(module) is str and type(qualname) is str
        and _standing_module(module) and len(module) + len(qualname) < 300
        and _loaded_class(module, qualname) is kind  # not a class renamed as a library's
    ):  # fmt: skip
        out += b"\1" + f"{module}:{qualname}".encode("utf-8", "replace")
    return out + _field_names(kind)


def _truth_tag(kind: type) -> bytes:
    """``\3`` when ``bool()`` of an object of ``kind`` runs code of the class (a ``__bool__`` or a
    ``__len__`` in its MRO), else ``\2``: such an object is always true (see :func:`_truthy`)."""
    for klass in kind.__mro__[:-1]:  # (not object)
        names = vars(klass)
        if "__bool__" in names or "__len__" in names:
            return b"\3"
    return b"\2"


#: The types of the attributes a handle crosses with (:func:`_plain_attributes`): values whose
#: reading runs no code and that nothing but rebinding changes.
_PLAIN_TYPES = frozenset({int, float, str, bool, type(None)})
#: The most attributes a handle crosses with; a string's most characters.
_PLAIN_MAX = 16
_PLAIN_TEXT = 256


def _plain_attributes(
    value: Any, kind: type, trusted: bool, asked: set[str]
) -> tuple[tuple[str, Any], ...] | None:
    """The plain attributes of this side's object ``value`` (of class ``kind``), to cross with
    its handle, so that the other side reads them without a request while no message has
    crossed since (:meth:`_Proxy.__getattr__`): ``node.val`` as the tests walk a linked list
    the solution returned (``while node: out.append(node.val); node = node.next``), or as the
    solution walks the tests' (LeetCodeDataset's layout), was half of each step's requests.
    In-process, reading one runs no code of the class, and between two messages nothing of
    this side's runs, but what :func:`_quiet` rules out (its own threads, its signal handlers)
    and the finalizers a dropped handle's release runs (see :func:`_handle_extras`). In the
    judge (``trusted``), only the names the solution may read (none of
    :data:`._ops._HIDDEN`'s: what a request would give it).

    Only of an object of a class with neither ``__getattribute__`` nor ``__getattr__`` of its
    own, at most :data:`_PLAIN_MAX` attributes in its ``__dict__``, each an int of 64 bits, a
    float, a string of at most :data:`_PLAIN_TEXT` characters, a bool or None, whose name no
    class of its MRO has (a property or a class attribute of that name decides in-process),
    and that the other side has asked of an object of that class before (``asked``: see
    :func:`note_asked`); None when there is none."""
    names = _PLAIN_CLASSES.get(kind)
    if names is None:
        return None
    try:
        own = object.__getattribute__(value, "__dict__")
    except AttributeError:
        return None
    if type(own) is not dict or not own or len(own) > _PLAIN_MAX:
        return None
    out = []
    for name in tuple(asked):  # (another thread may add to it: see note_asked)
        item = own.get(name, own)
        item_kind = type(item)
        if (
            item is own or name in names or item_kind not in _PLAIN_TYPES
            or (trusted and name.startswith(_HIDDEN))
            or (item_kind is int and not -(1 << 63) <= item < 1 << 63)
            or (item_kind is str and len(item) > _PLAIN_TEXT)
        ):  # fmt: skip
            continue
        out.append((name, item))
    return tuple(out) or None


_IDENTITY_HASH: Any = object.__hash__
#: The name :func:`note_asked` records for a handle's hash.
_HASH = "__hash__"
def _no_names(kind: type) -> set[str]:
    return set()


#: The names the other side asked of this side's objects, by class (:func:`note_asked`): a
#: class changed since starts again with none.
_ASKED = _PerClass(_no_names)


def note_asked(kind: type, name: str) -> None:
    """The other side asked the plain attribute ``name`` (or, as ``__hash__``, the hash) of an
    object of ``kind``: from now on the handles of its objects cross with it (at most
    :data:`_PLAIN_MAX` names a class; none for a class that cannot be weakly referenced)."""
    names: set[str] = _ASKED.get(kind)
    if len(names) < _PLAIN_MAX:
        names.add(name)


def _asked(kind: type) -> set[str]:
    names: set[str] = _ASKED.get(kind)
    return names


def _handle_extras(
    value: Any, kind: type, trusted: bool, epoch: int
) -> tuple[int | None, tuple[tuple[str, Any], ...], bool] | None:
    """What a handle of this side's object ``value`` crosses with besides its number and name,
    in a message of ``epoch`` (see :func:`_quiet`): ``(hash, plain attributes, finalizes)``, or
    None for none of them.

    - The hash when its class's is the identity's (``object.__hash__``: the same for the
      object's life, and no code of the class runs for it), so that ``node in seen`` and
      ``seen.add(node)`` over the other side's nodes (LeetCode 142's ``visited`` set of the
      tests' nodes) ask nothing.
    - The plain attributes of :func:`_plain_attributes`, while this process is quiet.

    The hash and each attribute only once the other side has asked it of an object of the
    class (:func:`note_asked`): the first node's ``val`` is asked, the next ones' cross with
    their handles. Sent with every handle, they cost a handle ~26 us more where no one read
    them (the solution walking the tests' 250,000 nodes by ``next`` alone: 18.6 s -> 25 s).
    - Whether dropping the handle may run code here: the object's class has a ``__del__`` or
      the object has weak references (a ``weakref.finalize``). A dropped handle's release goes
      with the next message, and the receiver takes every plain attribute as changed from then
      on: a ``Conn.__del__`` that decrements ``pool.live`` ran in-process at ``del c``, and the
      tests read the old ``pool.live`` (helper 45's A1)."""
    identity = identity_hashed(kind)
    asked = _asked(kind)
    known = object.__hash__(value) if identity and asked and _HASH in asked else None
    plain = (
        _plain_attributes(value, kind, trusted, asked) if asked and _quiet(epoch) else None
    )
    finalizes = bool(_FINALIZING.get(kind)) or _getweakrefcount(value) > 0
    if known is None and plain is None and not finalizes:
        return None
    return known, plain or (), finalizes


def identity_hashed(kind: type) -> bool:
    """Whether objects of ``kind`` hash by identity (``object.__hash__``): the same hash for an
    object's life, and no code of the class runs for it."""
    try:
        return getattr(kind, "__hash__", None) is _IDENTITY_HASH
    except Exception:
        return False


def _quiet(epoch: int) -> bool:
    """Whether nothing of this process can run between two messages but its main thread's
    code, which runs only in a message: one Python thread (``sys._current_frames``, which
    counts ``_thread``'s threads once they run), no thread ever started with ``_thread`` and no
    Python signal handler ever set but the interpreter's own ``SIGINT`` one (a ``SIGALRM``
    handler that sets ``a.fired`` runs while the tests sleep; see :func:`watch_background`).
    Asked once per message (``epoch``: see ``_Peer.epoch``)."""
    if _QUIET[0] == epoch:
        return bool(_QUIET[1])
    quiet = not _BACKGROUND[0] and len(_current_frames()) == 1
    _QUIET[:] = [epoch, quiet]
    return quiet


#: The message :func:`_quiet` last answered for, and its answer.
_QUIET: list[Any] = [None, False]
#: Whether this process's code set a signal handler or started a ``_thread`` thread (see
#: :func:`watch_background`): then it is never :func:`_quiet` again.
_BACKGROUND = [False]


def watch_background() -> None:
    """In a run's process, before the solution's or the tests' code runs: watch what may run
    between two messages, for :func:`_quiet`.

    - A thread started with ``_thread.start_new_thread``: such a thread has no frame until it
      first runs, so ``sys._current_frames`` (like ``_thread._count``) misses it when it is
      started in the very call whose reply carries a handle (helper 45's A1: a ``Worker`` whose
      raw thread sets ``self.done``); ``threading``'s threads have run by the time ``start()``
      returns (and ``threading`` keeps its own binding of the function: not counted here).
    - A Python signal handler set with ``signal.signal``: reading every signal's handler at
      each message took ~10 us, a request's fifth, and reading them once here ~100 us, a
      check's 1%. A run's process has none but the interpreter's own ``SIGINT`` one before
      its code runs (the fork server's children set none; a test checks it)."""
    start = _thread.start_new_thread
    if getattr(start, "_asyncpool_watched", False):
        return

    def start_new_thread(function: Any, args: Any, kwargs: Any = None) -> Any:
        _BACKGROUND[0] = True
        if kwargs is None:
            return start(function, args)
        return start(function, args, kwargs)

    def signal(signalnum: Any, handler: Any) -> Any:
        if callable(handler) and handler is not _default_int_handler:
            _BACKGROUND[0] = True
        return _set_handler(signalnum, handler)

    start_new_thread._asyncpool_watched = True  # type: ignore[attr-defined]
    start_new_thread.__doc__ = start.__doc__
    signal.__doc__ = _set_handler.__doc__
    _thread.start_new_thread = start_new_thread
    if hasattr(_thread, "start_new"):  # (its old alias)
        _thread.start_new = start_new_thread
    # (by sys.modules: the module's functions the wire reads are bound once, see _patches)
    setattr(sys.modules["signal"], "signal", signal)  # noqa: B010


def _finalizing(kind: type) -> bool:
    """Whether objects of ``kind`` run code when they die (a ``__del__`` in its MRO)."""
    return any("__del__" in vars(k) for k in kind.__mro__)


def _plain_class_names(kind: type) -> frozenset[str] | None:
    """The names the classes of ``kind``'s MRO hold, or None when reading an attribute of its
    objects may run code of the class (its own ``__getattribute__`` or ``__getattr__``), or
    its objects are no plain instances (a class, a built-in type's)."""
    if issubclass(kind, type) or kind.__getattribute__ is not object.__getattribute__:
        return None
    if not isinstance(vars(kind).get("__dict__"), types.GetSetDescriptorType) and not any(
        isinstance(vars(k).get("__dict__"), types.GetSetDescriptorType) for k in kind.__mro__
    ):
        return None  # (no instance __dict__: __slots__ only, or a built-in type)
    names: set[str] = set()
    for klass in kind.__mro__:
        if "__getattr__" in vars(klass):
            return None
        names.update(k for k in vars(klass) if type(k) is str)
    return frozenset(names)


#: :func:`_made_class_name`, :func:`_plain_class_names` and :func:`_finalizing` of each class
#: whose objects crossed.
_CLASS_NAMES = _PerClass(_made_class_name)
_PLAIN_CLASSES = _PerClass(_plain_class_names)
_FINALIZING = _PerClass(_finalizing)


def _field_names(kind: type) -> bytes:
    """A dataclass's field names, each after a NUL (see :func:`_class_name`), or nothing."""
    try:
        names = [f.name for f in dataclasses.fields(kind)] if dataclasses.is_dataclass(kind) else []
    except Exception:
        names = []
    if names and all(type(n) is str and n.isidentifier() for n in names):
        fields = b"\0".join(n.encode() for n in names)
        if len(fields) <= 4000:
            return b"\0" + fields
    return b""


#: The protocol methods a handle's proxy has only when the object's class has them (by bit, see
#: :func:`_capabilities`), then the bit of an unhashable class (``__hash__ = None``).
_CAPABILITIES = (
    "__call__", "__iter__", "__next__", "__len__", "__getitem__", "__setitem__", "__delitem__",
    "__contains__", "__enter__", "__exit__", "__aenter__", "__aexit__",
)  # fmt: skip
_UNHASHABLE = 1 << len(_CAPABILITIES)
#: The ``collections.abc`` classes that only inheritance or registration makes a class an
#: instance of (not a method's presence, as ``Iterable``'s): a class of the solution's derived
#: from one has its number (the most specific one) in bits 13-15 of its capabilities, and its
#: handles' class is registered with it (``isinstance(obj, Mapping)`` as in-process).
_ABCS = (
    collections.abc.MutableMapping, collections.abc.Mapping, collections.abc.MutableSequence,
    collections.abc.Sequence, collections.abc.MutableSet, collections.abc.Set,
)  # fmt: skip
_ABC_SHIFT = 13


def _capabilities(kind: type) -> int:
    """Which of :data:`_CAPABILITIES` instances of ``kind`` have (the first class of its MRO
    that names one decides; ``None`` there is none, as ``__iter__ = None`` makes a class not
    iterable), and :data:`_UNHASHABLE`. The receiver's proxy then has just those methods, so
    that ``callable(obj)``, ``isinstance(obj, Iterable)``, ``hasattr(obj, "__len__")`` and the
    libraries that ask them (numpy telling a sequence from an object) answer as in-process. A
    class that claims fewer than it has only loses what it would in-process."""
    found: dict[str, Any] = {}
    for klass in kind.__mro__:
        for name, value in vars(klass).items():
            if name.startswith("__") and name not in found:
                found[name] = value
    bits = 0
    for i, name in enumerate(_CAPABILITIES):
        if found.get(name) is not None:
            bits |= 1 << i
    if "__hash__" in found and found["__hash__"] is None:
        bits |= _UNHASHABLE
    for number, abc_class in enumerate(_ABCS, 1):
        if issubclass(kind, abc_class):
            bits |= number << _ABC_SHIFT
            break
    return bits


#: Modules whose classes a handle's ``__class__`` never stands for (see :func:`_library_module`;
#: the judge's: see :data:`_OWN_MODULES`).
_NOT_LIBRARIES = frozenset({
    "solution", "__main__", "_asyncpool_zygote", "asyncpool", "_pytest", "pytest", "numpy",
    "pandas",
})  # fmt: skip


def _library_module(module: str) -> bool:
    """Whether ``module`` is a library's: a dotted name outside the standard library, the
    solution, the tests, pytest and the judge (and numpy and pandas, whose values cross as
    values and whose classes the judge's own checks use)."""
    parts = module.split(".")
    return (
        all(p.isidentifier() for p in parts)
        and parts[0] not in sys.stdlib_module_names
        and parts[0] not in _NOT_LIBRARIES
    )


#: Modules of the standard library (by their first part) whose classes a handle's
#: ``__class__`` never stands for: their objects cross as values (``datetime``, ``decimal``,
#: ``collections``, ``pathlib``...), or the judge's own code asks ``isinstance`` of their
#: classes (``asyncio``'s futures, ``unittest``'s mocks, ``typing``'s, ``abc``'s, ``types``'s
#: and the built-ins), or they are the interpreter's machinery.
_NOT_STANDING = frozenset({
    "builtins", "abc", "typing", "types", "enum", "collections", "decimal", "fractions",
    "datetime", "_datetime", "_pydatetime", "_decimal", "_pydecimal", "_collections", "uuid",
    "pathlib", "posixpath", "ntpath", "statistics", "array", "zoneinfo", "_zoneinfo", "copyreg",
    "asyncio", "_asyncio", "concurrent", "contextvars", "_contextvars", "unittest", "inspect",
    "importlib", "sys", "gc", "marshal", "pickle", "_pickle", "copy", "weakref", "_weakref",
    "_weakrefset", "_thread", "atexit", "signal", "socket", "_socket", "io", "_io", "numbers",
    "dataclasses", "_abc", "_typing", "_collections_abc",
})  # fmt: skip


def _standing_module(module: str) -> bool:
    """Whether a handle's ``__class__`` may stand for a class of ``module`` (see
    :func:`_library_class`): a library's (:func:`_library_module`), or the standard
    library's, numpy's or pandas' but of none of :data:`_NOT_STANDING`."""
    parts = module.split(".")
    if not all(p.isidentifier() for p in parts):
        return False
    top = parts[0]
    if top in sys.stdlib_module_names or top in ("numpy", "pandas"):
        return top not in _NOT_STANDING
    return top not in _NOT_LIBRARIES  # a library's (as _library_module says)


#: Most characters of a module's name that crosses by name (see :func:`_module_name`).
MAX_MODULE_NAME = 200


def _module_name(value: Any) -> bytes | None:
    """The name a module crosses by (see :func:`_loaded_module`): a module of the standard
    library's, numpy's or pandas' that this process has loaded under that name, else None (a
    handle, as any object). Why: in-process there is one ``math`` and one ``builtins``: the
    tests' ``f.__globals__["math"] is math`` holds, and ``typing.get_type_hints(f)`` of the
    solution's function evaluates its annotations in its globals, whose ``__builtins__`` was a
    handle (``'module' object is not subscriptable``)."""
    if type(value) is not types.ModuleType:
        return None
    name = vars(value).get("__name__")
    if type(name) is not str or not _crossing_module(name) or sys.modules.get(name) is not value:
        return None
    return name.encode()


def _loaded_module(name: str) -> types.ModuleType | None:
    """The receiver's side of :func:`_module_name`: its own module of that name, if it has
    loaded it (nothing is imported for it), else None (the sender's handle stands). What the
    other side claims is checked here: a name of one of those libraries, of a module loaded
    here; the judge gives the solution nothing it did not have (the solution's own module)."""
    if not _crossing_module(name):
        return None
    found = sys.modules.get(name)
    return found if type(found) is types.ModuleType else None


def _crossing_module(name: str) -> bool:
    parts = name.split(".")
    return (
        len(name) <= MAX_MODULE_NAME and all(p.isidentifier() for p in parts)
        and (parts[0] in sys.stdlib_module_names or parts[0] in ("numpy", "pandas"))
    )  # fmt: skip


def _value_class(cls: type) -> bool:
    """Whether objects of ``cls`` cross as values, never as handles (of the modules
    :func:`_standing_module` admits): a compiled pattern; numpy's arrays, scalars and dtypes;
    pandas' frames, series, indexes, timestamps, timedeltas, ``NaT`` and ``NA``."""
    bases: list[type] = [_Pattern]
    np = sys.modules.get("numpy")
    if np is not None:
        bases += [np.ndarray, np.generic, np.dtype]
    pd = sys.modules.get("pandas")
    if pd is not None:
        bases += [pd.DataFrame, pd.Series, pd.Index, pd.Timestamp, pd.Timedelta]
        bases += [type(pd.NaT), type(pd.NA)]
    return issubclass(cls, tuple(bases))


#: Library classes a handle's ``__class__`` stands for, once found (:func:`_library_class`).
_LIBRARY_CLASSES: dict[tuple[str, str], type] = {}


def _library_class(module: str, qualname: str) -> type | None:
    """The class ``qualname`` of the library module ``module`` as imported here (nothing is
    imported for it), when a handle's ``__class__`` may stand for it: a plain class whose
    bases are all of libraries (or ``object``, ``abc.ABC``, ``typing.Generic``), never a
    metaclass nor an exception. Else None."""
    key = (module, qualname)
    found = _LIBRARY_CLASSES.get(key)
    if found is not None:
        return found
    found = _loaded_class(module, qualname)
    if found is None or issubclass(found, (type, BaseException)):
        return None
    if _value_class(found):
        return None
    for klass in found.__mro__:
        where = getattr(klass, "__module__", None)
        if klass in (object, abc.ABC) or (where == "typing" and klass.__name__ == "Generic"):
            continue
        if type(where) is not str or not _standing_module(where):
            return None
    if len(_LIBRARY_CLASSES) < MAX_MADE_CLASSES:
        _LIBRARY_CLASSES[key] = found
    return found


#: The key of a proxy class's ``(module, qualname)``: the library or standard class its
#: handles' objects said they are of, as they crossed (see :func:`_class_name`); no attribute
#: name of a solution's object can be it (a NUL).
_STANDS_FOR = "\0stands_for"


def _library_class_getter(module: str, qualname: str) -> Callable[[Any], Any]:
    """The ``__class__`` of the handles of a library class's objects (a matplotlib ``Axes``):
    that class when the tests' process has it (:func:`_library_class`), so that
    ``isinstance(ax, plt.Axes)`` holds as in-process; else the handle's own class. The
    solution's side names the library class only for an object of that very class (a class
    renamed as one is not: :func:`_class_name`); a solution that rewrote its side of the wire
    may claim any, as one whose ``__class__`` says so in-process may; ``type()`` never follows
    the claim (:func:`_type_of`)."""

    def get(self: Any) -> Any:
        found = _library_class(module, qualname)
        return type(self) if found is None else found

    return get


#: The name a generator's handle crosses with: ``generator`` then a NUL, which no class of the
#: solution's can cross with (a name has no NUL, a dataclass's fields follow the NUL), so that
#: only a real generator's handle is a :class:`_GeneratorProxy`.
_GENERATOR_NAME = b"generator\0"
_ASYNC_GENERATOR_NAME = b"async_generator\0"
#: ... and a plain function's (a ``def`` or a ``lambda``): in the judge, its handle's
#: ``__class__`` says ``FunctionType`` (:func:`_function_type`; ``inspect.isfunction``,
#: ``isgeneratorfunction``, ``iscoroutinefunction`` then read its ``__code__``'s flags, a
#: request), as :class:`_GeneratorProxy`'s says its type.
_FUNCTION_NAME = b"function\0"
