"""The tests' patches, assignments and ambient state as they reach the solution with each request:
the ``solution`` module the tests import (:class:`_SolutionModule`), the list the judge sends
(:func:`_forwarded_patches`) and the solution's side applying it (:func:`_apply_patches`), spies
(:func:`_spy`).

Must not: hand the solution a real function of the judge's that opens, runs or reads
(:func:`_tests_callable`, :func:`_reaches_nothing_real`).
"""

from __future__ import annotations

import builtins
import contextlib
import importlib
import os
import sys
import types
from typing import TYPE_CHECKING, Any

from . import _proxies
from ._ambient import (
    _AMBIENT_BACK,
    _AMBIENT_SETTINGS,
    _AMBIENT_STATE,
    _AMBIENT_WATCHED,
    _ARGV,
    _BACK_NAMES,
    _CWD,
    _CWD_AT_START,
    _CWD_COUNTED,
    _ENVIRON,
    _ENVIRON_AT_START,
    _MT_WORDS,
    _NP_WORDS,
    _RANDOM,
    _SEEDED,
    _TESTS_ARGV,
    _ClassAttributes,
    _cwd,
    _generator_state,
    _LoggingLevels,
    _WarningsForwarding,
    _WorkingDirectory,
)
from ._bounds import CodecError
from ._exceptions import _named_class
from ._kept import _watch_mark
from ._patches import (
    _DISABLE,
    _LOGGING,
    _LOGGING_WATCHED,
    _PATCH_COUNT,
    _PATCHES,
    _STRICT_BUILTINS,
    _STRICT_MODULES,
    _UNFORWARDED,
    _UNFORWARDED_ATTRS,
    _WARNINGS,
    _WARNINGS_WATCHED,
    _warnings_changed,
)
from ._proxies import _PROXY_TYPES
from ._stand_ins import _inert_mock, _mock_class
from ._tests_code import _CHECK, _globals_loaded
from ._values import _UNSET, _import_numpy, _loaded_class

if TYPE_CHECKING:
    from ._peer import _Peer


#: What the tests assigned to the ``solution`` module's attributes (``solution.DEBUG =
#: True``), kept by :class:`_SolutionModule`: in-process they set the solution's globals.
_ASSIGNED: dict[str, Any] = {}
#: What the ``solution`` module held of the solution's when the check began.
_SOLUTIONS: dict[str, Any] = {}
#: Values whose identity tells nothing (a small int, an interned text is every such value).
_SCALARS = frozenset({int, float, complex, str, bytes, bool, type(None)})


class _SolutionModule(types.ModuleType):
    """The ``solution`` module the tests import (``import solution``): what the tests assign
    to its attributes reaches the solution's globals with their next request, as in-process
    (:data:`_ASSIGNED`, sent among the patches). Only an attribute of this module: a name the
    tests bind in their own namespace stays theirs (in-process harnesses that exec both in one
    namespace would hand it to a solution that reads a global of that name)."""

    def __setattr__(self, name: str, value: Any) -> None:
        super().__setattr__(name, value)
        if type(name) is str and name.isidentifier() and not name.startswith("__"):
            peer = _proxies._PEER
            if type(value) not in _SCALARS and (
                value is _SOLUTIONS.get(name, _UNSET)
                or (peer is not None and value is peer.live.get(name, _UNSET))
            ):
                # The solution's own object put back (a monkeypatch undone): it still has it,
                # the same object, which a copy sent back would not be. Not a number or a
                # text: ``solution.calls = 0`` where the check began with 0 (the same small
                # int) sets a counter the solution has since moved.
                _ASSIGNED.pop(name, None)
            else:
                _ASSIGNED[name] = value
            if peer is not None and name in peer.live:
                # The solution's global from now on: its later changes reach this attribute.
                peer.live[name] = value
                peer.live_marks[name] = _watch_mark(value)
            _PATCH_COUNT[0] += 1

    def __delattr__(self, name: str) -> None:
        super().__delattr__(name)
        if _ASSIGNED.pop(name, _UNSET) is not _UNSET:
            _PATCH_COUNT[0] += 1

    @property
    def __all__(self) -> list[str]:
        """What ``from solution import *`` binds in the tests: the module's public names, but
        not over a name the tests have already bound to something else (``import unittest``,
        ``import numpy as np``, ``from math import isclose``, a helper of theirs). In-process
        the solution's ``unittest``, ``np`` or ``isclose`` would replace the tests' own, and
        their assertions would be the solution's code, run in its process; here the tests keep
        what they bound (a name they bound to the solution's own object is bound again, the
        same). A stub of the tests' that expects to be replaced by the star import keeps the
        stub (judged failed; in-process it passes)."""
        tests: dict[str, Any] = _CHECK[1] if len(_CHECK) == 2 else {}
        own = vars(self)
        return [
            name
            for name, value in own.items()
            if type(name) is str and not name.startswith("_")
            and tests.get(name, value) is value
        ]  # fmt: skip


def _tests_callable(value: Any) -> bool:
    """Whether ``value`` is a function of the tests' code, or a mock whose ``side_effect`` is
    one (and that wraps nothing): called by the solution, it runs the tests' own code in the
    judge, as every callback does, never a real function of the judge's with the solution's
    arguments (see :data:`_STRICT_MODULES`)."""
    base = _mock_class()
    if base is not None and isinstance(value, base):
        if vars(value).get("_mock_wraps") is not None:
            return False
        value = vars(value).get("_mock_side_effect")
    code = getattr(value, "__code__", None) if type(value) is types.FunctionType else None
    return (
        isinstance(code, types.CodeType)
        and code.co_filename == "<tests>"
        and _reaches_nothing_real(value)
    )


#: Built-in functions a function of the tests given to the solution may call (see
#: :func:`_reaches_nothing_real`): they compute; they open, run or read nothing.
_COMPUTING_BUILTINS = frozenset({
    "len", "str", "int", "float", "bool", "bytes", "list", "dict", "set", "tuple", "frozenset",
    "sorted", "reversed", "min", "max", "sum", "any", "all", "abs", "round", "isinstance",
    "range", "enumerate", "zip", "map", "filter", "repr", "iter", "next", "hash", "ord", "chr",
    "None", "True", "False",
})  # fmt: skip


def _reaches_nothing_real(function: Any) -> bool:
    """Whether a function of the tests (a ``side_effect`` or a ``monkeypatch`` stand-in of a
    strictly guarded function, see :func:`_tests_callable`) can reach no real function of the
    judge's through a global or a closure: every global it (or code nested in it) loads is
    one of :data:`_COMPUTING_BUILTINS`, an exception class or an object of ``unittest.mock``;
    every value its closure holds is no callable, or such a one. ``lambda p: p.endswith(
    ".csv")`` and ``def boom(*a): raise AssertionError`` pass; ``lambda *a: real_open(*a)``
    does not: through it the solution would open, in the judge, any path it chose."""

    def harmless(value: Any) -> bool:
        if not callable(value):
            return True
        if isinstance(value, type) and issubclass(value, BaseException):
            return True
        where = getattr(value, "__module__", None) if isinstance(value, type) else None
        return where == "unittest.mock" or type(value).__module__ == "unittest.mock"

    found = function.__globals__
    cells = function.__closure__ or ()
    if not all(harmless(cell.cell_contents) for cell in cells if cell.cell_contents is not None):
        return False
    for name in _globals_loaded(function.__code__):
        if name in found:
            if not harmless(found[name]):
                return False
        elif name not in _COMPUTING_BUILTINS and not harmless(vars(builtins).get(name)):
            return False
    return True


def _patched_original(patcher: Any, target: Any, attr: str) -> Any:
    """What a patch of the tests replaced: ``unittest.mock``'s ``temp_original``, or the old
    value ``MonkeyPatch.setattr`` kept; :data:`_UNSET` when not known."""
    original = vars(patcher).get("temp_original", _UNSET)
    if original is _UNSET:
        for kept_target, name, old in reversed(getattr(patcher, "_setattr", ())):
            if kept_target is target and name == attr:
                return old
    return original


def _spies(value: Any, original: Any) -> bool:
    """Whether ``value`` is a mock that only spies on ``original``: it wraps it, or calls it
    as its ``side_effect``."""
    base = _mock_class()
    if base is None or not isinstance(value, base) or original is _UNSET:
        return False
    found = vars(value)
    return found.get("_mock_wraps") is original or found.get("_mock_side_effect") is original


#: The prefix of a spy's module among the forwarded patches (see :func:`_spy`), and the spies
#: of this check's last request: the only mocks whose calls the solution may record.
_SPY = "<spy>"
_SPIES: list[Any] = []


def _spy(peer: _Peer, mock: Any, original: Any) -> Any:
    """The solution's side of a spy (``patch("os.remove", wraps=os.remove)``): each call is
    recorded on the tests' mock (a ``record`` request: its ``call_count``, ``call_args``),
    then made with the solution's own ``original``, as the mock would call it in-process.

    No ``__wrapped__`` (the mock has none): ``inspect.unwrap(os.remove)`` is the spy, as
    in-process, never the function behind it, whose calls no record would count. The record is
    the solution's own report of its call, as every spy's is: the call is made in its process."""

    def spy(*args: Any, **kwargs: Any) -> Any:
        peer.request("record", mock, (args, kwargs))
        return original(*args, **kwargs)

    for name in ("__name__", "__qualname__", "__doc__"):  # as functools.wraps copies them
        with contextlib.suppress(AttributeError, TypeError):
            setattr(spy, name, getattr(original, name))
    return spy


def _forwarded_patches() -> tuple[tuple[str, str, Any], ...]:
    """The tests' patches in force that reach the solution: ``(module, attribute, value)``;
    first what they assigned to the ``solution`` module (:data:`_ASSIGNED`), then their
    patches, each value crossing as values do (a mock or a function of the tests as a handle,
    which the solution calls back); a library class's attribute too (``patch("pandas.DataFrame.
    to_csv")``, by ``module:qualname``). Not those of :data:`_UNFORWARDED`; those of
    :data:`_STRICT_MODULES` and :data:`_STRICT_BUILTINS` only with an inert mock, a function
    of the tests' code or a mock calling one (:func:`_tests_callable`), or a spy of the real
    function, whose calls the solution records and makes itself (:func:`_spy`). Then the
    environment's changes since the check began, ``(_ENVIRON, name, value or None)``: sent
    with the patches whenever they change (a ``monkeypatch.setenv`` or ``patch.dict`` changes
    them)."""
    out: list[tuple[str, str, Any]] = [("solution", k, v) for k, v in _ASSIGNED.items()]
    if _AMBIENT_WATCHED["cwd"] or _BACK_NAMES:
        out.append((_AMBIENT_BACK, "watch", (_AMBIENT_WATCHED["cwd"], tuple(sorted(_BACK_NAMES)))))
    _SPIES.clear()
    for patcher, module, attr in _PATCHES:
        if isinstance(module, type):  # a library's class (``patch("pandas.DataFrame.to_csv")``)
            named = _named_class(module)
            name = None if named is None else named[0]
            where = None if named is None else ":".join(named)
        else:
            name = where = getattr(module, "__name__", None)
        if type(name) is not str or name in _UNFORWARDED or (name, attr) in _UNFORWARDED_ATTRS:
            continue
        value = vars(module).get(attr, _UNSET)
        if value is _UNSET:
            continue
        strict = (
            name in _STRICT_MODULES
            or name.partition(".")[0] in _STRICT_MODULES
            or (name == "builtins" and attr in _STRICT_BUILTINS)
        )
        if strict and not _inert_mock(value) and not _tests_callable(value):
            # A spy of the real function (``wraps=os.remove``): the solution records each
            # call on the tests' mock and runs its own function (see _spy), never the judge's.
            if not _spies(value, _patched_original(patcher, module, attr)):
                continue
            _SPIES.append(value)
            where = _SPY + str(where)
        out.append((str(where), attr, value))
    if _WARNINGS_WATCHED:
        out.append((_WARNINGS, "forward", _warnings_changed()))
    logging: Any = sys.modules.get("logging") if _LOGGING_WATCHED else None
    if logging is not None:
        root = logging.root
        out += ((_LOGGING, "root", root.level), (_LOGGING, _DISABLE, root.manager.disable))
        out.extend(
            (_LOGGING, name, logger.level)
            for name, logger in list(root.manager.loggerDict.items())
            if isinstance(logger, logging.Logger) and logger.level
        )
    start, now = _ENVIRON_AT_START, os.environ
    out.extend((_ENVIRON, k, v) for k, v in now.items() if start.get(k) != v)
    out.extend((_ENVIRON, k, None) for k in start if k not in now)
    cwd = _CWD_COUNTED[0]
    if _AMBIENT_WATCHED["cwd"] and cwd is not None and cwd != _CWD_AT_START[0]:
        out.append((_CWD, "cwd", cwd))
    out.extend(
        (label, _AMBIENT_SETTINGS[label][1], counted[1])
        for label, counted in _AMBIENT_STATE.items()
        if counted[1] != counted[0]
    )
    argv = sys.argv
    if argv != _TESTS_ARGV and type(argv) is list and all(type(a) is str for a in argv):
        out.append((_ARGV, "argv", tuple(argv[:MAX_ARGV])))
    out.extend(
        (label, str(sync[1]), sync[2])
        for label, sync in _SEEDED.items()
        if sync[0] and sync[2] is not None
    )
    return tuple(out)


#: The most items of the tests' ``sys.argv`` that reach the solution.
MAX_ARGV = 10_000


def _apply_patches(peer: _Peer, patches: Any) -> None:
    """The solution's side: undo the patches of the judge's last list, then make this one's
    (see :func:`_forwarded_patches`): ``solution`` is the solution's own namespace; another
    module is imported if it is not yet."""
    if type(patches) is not tuple:
        raise CodecError("malformed patches")
    for space, attr, original in reversed(peer.patched):
        if original is _UNSET:
            space.pop(attr, None)
        else:
            space[attr] = original
    peer.patched = []
    for entry in patches:
        if (
            type(entry) is not tuple
            or len(entry) != 3
            or type(entry[0]) is not str
            or type(entry[1]) is not str
            or not (entry[1].isidentifier() or entry[0] in (_ENVIRON, _LOGGING, *_SEEDED))
        ):
            raise CodecError("malformed patch")
        name, attr, value = entry
        if name == _AMBIENT_BACK:
            if (
                type(value) is not tuple
                or len(value) != 2
                or type(value[0]) is not bool
                or type(value[1]) is not tuple
                or not all(type(n) is str for n in value[1])
            ):
                raise CodecError("malformed ambient watch")
            peer.back = value
            continue
        if name == _ARGV:
            if type(value) is not tuple or not all(type(a) is str for a in value):
                raise CodecError("malformed argv")
            sys_space: Any = vars(sys)
            peer.patched.append((sys_space, "argv", sys_space.get("argv", _UNSET)))
            sys_space["argv"] = list(value)
            continue
        if name in _SEEDED:
            if attr != peer.seeded.get(name):  # a new state (see _SEEDED)
                _set_generator_state(name, value)
                peer.seeded[name] = attr
                peer.drawn_known[name] = _drawn_state(name)
            continue
        if name == _WARNINGS:
            if type(value) is not bool:
                raise CodecError("malformed warnings state")
            forwarding = _WarningsForwarding()
            peer.patched.append((forwarding, attr, forwarding[attr]))
            forwarding[attr] = value
            continue
        if name == _LOGGING:
            if type(value) is not int:
                raise CodecError("malformed logging level")
            logging: Any = sys.modules.get("logging")
            if logging is not None:  # the solution logs nothing unless it imported logging
                levels = _LoggingLevels(logging)
                peer.patched.append((levels, attr, levels[attr]))
                levels[attr] = value
            continue
        ambient = _AMBIENT_SETTINGS.get(name)
        if ambient is not None:
            setting = ambient[2]()
            peer.patched.append((setting, attr, setting[attr]))
            setting[attr] = value
            continue
        if name == _CWD:
            if type(value) is not str or "\0" in value:
                raise CodecError("malformed working directory")
            directory = _WorkingDirectory()
            peer.patched.append((directory, attr, directory[attr]))
            directory[attr] = value
            continue
        if name == _ENVIRON:
            if (value is not None and type(value) is not str) or not attr or "=" in attr:
                raise CodecError("malformed environment")
            peer.patched.append((os.environ, attr, os.environ.get(attr, _UNSET)))
            with contextlib.suppress(ValueError):  # a NUL: no such variable in-process either
                if value is None:
                    os.environ.pop(attr, None)
                else:
                    os.environ[attr] = value
            continue
        spied = name.startswith(_SPY)
        name = name.removeprefix(_SPY)
        module, _, qualname = name.partition(":")
        if name == "solution":
            space = peer.namespace
        elif qualname:  # a library's class the solution has (patch.object(pd.DataFrame, ...))
            cls = _loaded_class(module, qualname)
            if cls is None:
                continue
            space = _ClassAttributes(cls)
        else:
            try:
                space = vars(importlib.import_module(name))
            except Exception:  # a module of the tests' alone: nothing of the solution's to patch
                continue
        if not isinstance(space, (dict, _ClassAttributes)):
            continue
        original = space.get(attr, _UNSET)
        if spied:
            if type(value) not in _PROXY_TYPES or not callable(original):
                continue
            value = _spy(peer, value, original)
        peer.patched.append((space, attr, original))
        space[attr] = value
    if peer.back is not None:  # what it follows, as the judge's patches left it
        watch_cwd, names = peer.back
        peer.back_known = (_cwd() if watch_cwd else None, {n: os.environ.get(n) for n in names})


def _drawn_state(label: str) -> Any:
    """The solution's side: its generator's state as :meth:`_Peer.ambient_changes` compares
    it after each reply of a check whose tests seeded it: ``random``'s as ``getstate()`` gives
    it (a tuple of ints: ``getstate()`` and the compare take ~16 µs, cheaper than packing it as
    it crosses after each reply), numpy's as it crosses."""
    if label == _RANDOM:
        import random

        return random.getstate()
    return _generator_state(label)


def _set_generator_state(label: str, state: Any) -> None:
    """The solution's side: set a generator to the judge's state (see :data:`_SEEDED`),
    checked to be one: ``random``'s ``(3, 625 words, None or a float)``, numpy's ``("MT19937",
    624 words, position, has_gauss, cached gaussian)``, the words as bytes."""
    words = _MT_WORDS if label == _RANDOM else _NP_WORDS
    if (
        type(state) is not tuple
        or len(state) != (3 if label == _RANDOM else 5)
        or type(state[1]) is not bytes
        or len(state[1]) != words.size
    ):
        raise CodecError("malformed generator state")
    if label == _RANDOM:
        version, data, gauss = state
        keys = words.unpack(data)
        if version != 3 or keys[-1] > 624 or not (gauss is None or type(gauss) is float):
            raise CodecError("malformed generator state")
        import random

        random.setstate((3, keys, gauss))
        return
    name, data, pos, has_gauss, cached = state
    if (
        name != "MT19937"
        or type(pos) is not int
        or not 0 <= pos <= 624
        or has_gauss not in (0, 1)
        or type(cached) is not float
    ):
        raise CodecError("malformed generator state")
    numpy = _import_numpy()
    keys = numpy.frombuffer(data, dtype="<u4").astype(numpy.uint32)
    numpy.random.set_state((name, keys, pos, has_gauss, cached))
