"""The state both sides share in-process: the settings that reach the solution by value
(:class:`_Setting`: the decimal context, the int digit limit, numpy's error handling, the working
directory, the warnings state, logging levels), the environment, ``sys.argv``, the generators the
tests seeded (:data:`_SEEDED`); the judge's side counting their changes (:func:`_note_ambient`) and
taking the solution's back (:func:`_take_ambient`, :func:`_reseed`).

Must not: follow the solution's change of a generator the tests seeded (it starts anew), nor take
back an environment variable the tests' code does not name.
"""

from __future__ import annotations

import contextlib
import os
import struct
import sys
import types
import warnings
from collections.abc import Callable, MutableMapping
from decimal import getcontext as _getcontext  # bound once: the tests' patches are forwarded
from os import chdir as _chdir  # bound once: the tests' patches of os are forwarded
from os import getcwd as _getcwd
from typing import Any

from ._bounds import CodecError
from ._notices import _show_warning
from ._patches import _ALWAYS, _DEFAULT_FILTERS, _DISABLE, _PATCH_COUNT, _SAVED_WARNINGS
from ._tests_code import _code_objects
from ._values import _UNSET, _import_numpy


class _Setting(MutableMapping[str, Any]):
    """A setting of the solution's process as a mapping, for :func:`_apply_patches` to set and
    restore by name (``space[attr] = value``) as it does a module's attributes; deleting one
    sets it to its default. It lists nothing: only those set are ever read back."""

    default: Any = None

    def __delitem__(self, name: str) -> None:
        self[name] = self.default

    def __iter__(self) -> Any:
        return iter(())

    def __len__(self) -> int:
        return 0


class _ClassAttributes(_Setting):
    """A library class's own attributes in the solution's process, as :func:`_apply_patches`
    sets and undoes the tests' patches of them (a class's ``vars()`` cannot be written)."""

    def __init__(self, cls: type) -> None:
        self.cls = cls

    def __getitem__(self, attr: str) -> Any:
        found = vars(self.cls).get(attr, _UNSET)
        if found is _UNSET:
            raise KeyError(attr)
        return found

    def __setitem__(self, attr: str, value: Any) -> None:
        setattr(self.cls, attr, value)

    def __delitem__(self, attr: str) -> None:
        with contextlib.suppress(AttributeError, TypeError):
            delattr(self.cls, attr)


def _cwd() -> str | None:
    try:
        return _getcwd()
    except OSError:  # removed since
        return None


class _WorkingDirectory(_Setting):
    """The solution's side: its working directory, as :func:`_apply_patches` sets and restores
    it (the tests' ``os.chdir``, see :data:`_CWD`); a directory it cannot enter (not in its
    view of the files) leaves it where it is, as a failed ``chdir`` would."""

    def __getitem__(self, name: str) -> str | None:
        return _cwd()

    def __setitem__(self, name: str, path: str | None) -> None:
        if path is not None:
            with contextlib.suppress(OSError, ValueError):
                _chdir(path)


class _WarningsForwarding(_Setting):
    """The solution's side: whether its warnings go to the judge (``"forward"``), as
    :func:`_apply_patches` sets and restores it. On: its filters are its own additions then
    ``always`` (Python's defaults dropped: the judge applies the tests' filters), and
    ``showwarning`` is :func:`_show_warning`; off: as they were."""

    def __getitem__(self, name: str) -> bool:
        return bool(_SAVED_WARNINGS)

    def __setitem__(self, name: str, on: bool) -> None:
        module: Any = warnings
        if on and not _SAVED_WARNINGS:
            _SAVED_WARNINGS[:] = [module.filters, module.showwarning]
            own = [f for f in module.filters if f not in _DEFAULT_FILTERS]
            module.filters = [*own, _ALWAYS]
            module.showwarning = _show_warning
        elif not on and _SAVED_WARNINGS:
            module.filters, module.showwarning = _SAVED_WARNINGS
            _SAVED_WARNINGS.clear()
        else:
            return
        module._filters_mutated()

    default = False


class _LoggingLevels(_Setting):
    """The solution's side: its loggers' levels by name (``"root"``; :data:`_DISABLE` for
    ``logging.disable``'s), as :func:`_apply_patches` sets and restores them."""

    def __init__(self, logging: Any) -> None:
        self._logging = logging

    def _logger(self, name: str) -> Any:
        return self._logging.root if name == "root" else self._logging.getLogger(name)

    def __getitem__(self, name: str) -> int:
        if name == _DISABLE:
            return int(self._logging.root.manager.disable)
        return int(self._logger(name).level)

    def __setitem__(self, name: str, level: int) -> None:
        with contextlib.suppress(Exception):  # a level logging refuses: as unset
            if name == _DISABLE:
                self._logging.disable(level)
            else:
                self._logger(name).setLevel(level)

    default = 0


#: The environment when the check began (the fork server's, ``ENV``): the tests' changes to it
#: (``monkeypatch.setenv``, ``patch.dict(os.environ, ...)``) reach the solution.
_ENVIRON_AT_START: dict[str, str] = {}
#: The name of the environment among the patches of a request.
_ENVIRON = "<environ>"
#: The working directory among the patches (the tests' ``os.chdir(tmp)``, ``monkeypatch.chdir``:
#: in-process the solution opens relative paths there), and what the judge's side compares
#: before each request, only when the tests' text names it (see _note_ambient): whether to
#: compare the environment (a direct ``os.environ[k] = v``; ``monkeypatch``'s and
#: ``patch.dict``'s changes are counted as patches) and the working directory, the environment
#: as last counted, and the working directory when the check began and as last counted.
_CWD = "<cwd>"
_AMBIENT_WATCHED = {"environ": False, "cwd": False}
#: The other way, the solution's changes the tests look at (in-process one process has them):
#: its working directory (when watched) and the variables of its environment that the tests'
#: code names in a string (``os.environ["API_KEY"]``), never one that changes how a process
#: loads code (``LD_*``, ``PYTHON*``). The judge tells the solution once per check (this label
#: among the patches: whether the directory, which names); each reply then carries what
#: changed since the last (see :meth:`_Peer.ambient_changes`), and the judge applies it.
_AMBIENT_BACK = "<ambient back>"
#: Words of the tests' text that make the judge follow the solution's working directory: the
#: calls that read it (``os.getcwd``, ``Path.cwd``) or change it, and those that resolve a
#: relative path against it (``os.path.abspath(".")``, ``Path(".").resolve()``).
_CWD_WORDS = ("chdir", "cwd", "abspath", "realpath", "resolve", "absolute")
_BACK_NAMES: set[str] = set()
_ENVIRON_COUNTED: dict[str, str] = {}
_CWD_AT_START: list[str | None] = [None]
_CWD_COUNTED: list[str | None] = [None]
#: The tests' decimal context among the patches (``getcontext().prec = 50``, a trap, inside a
#: ``localcontext()``: in-process the solution computes in it), as :func:`_decimal_spec` gives
#: it, compared before each request only when the tests' text names ``context``; likewise the
#: tests' ``sys.set_int_max_str_digits`` (in-process the solution's ``str(2 ** 20000)``
#: works after the tests' ``set_int_max_str_digits(0)``), when their text names it (see
#: :data:`_AMBIENT_SETTINGS`).
_DECIMAL = "<decimal>"
_INT_DIGITS = "<int digits>"
_get_int_max_str_digits: Callable[[], int] | None = getattr(sys, "get_int_max_str_digits", None)
_set_int_max_str_digits: Callable[[int], None] | None = getattr(
    sys, "set_int_max_str_digits", None
)


def _decimal_spec(context: Any = None) -> tuple[Any, ...]:
    """A decimal context (this thread's by default) as it crosses: precision, rounding,
    exponent bounds, capitals, clamp, and the names of the signals it traps (sorted)."""
    c = _getcontext() if context is None else context
    traps = tuple(sorted(signal.__name__ for signal, on in c.traps.items() if on))
    return (c.prec, c.rounding, c.Emin, c.Emax, c.capitals, c.clamp, traps)


class _DecimalContext(_Setting):
    """The solution's side: its decimal context (the tests', see :data:`_DECIMAL`), as
    :func:`_apply_patches` sets and restores it; a malformed one is a malformed message."""

    def __getitem__(self, name: str) -> tuple[Any, ...]:
        return _decimal_spec()

    def __setitem__(self, name: str, spec: Any) -> None:
        signals = {signal.__name__: signal for signal in _getcontext().traps}
        if (
            type(spec) is not tuple or len(spec) != 7
            or not all(type(v) is int for v in (spec[0], *spec[2:6]))
            or type(spec[1]) is not str or type(spec[6]) is not tuple
            or not all(type(t) is str and t in signals for t in spec[6])
        ):  # fmt: skip
            raise CodecError("malformed decimal context")
        c = _getcontext()
        try:
            c.prec, c.rounding, c.Emin, c.Emax, c.capitals, c.clamp = spec[:6]
        except (TypeError, ValueError) as exc:
            raise CodecError("malformed decimal context") from exc
        c.traps = {signal: name in spec[6] for name, signal in signals.items()}


#: The tests' numpy floating-point error handling among the patches (``np.seterr(all="raise")``,
#: an ``np.errstate`` block: in-process the solution's ``np.log(0)`` raises
#: ``FloatingPointError`` there), when the tests' text names ``seterr`` or ``errstate``: sorted
#: ``np.geterr()`` items. As a fresh import has it:
_NUMPY_ERRORS = "<numpy errors>"
_NUMPY_DEFAULT_ERRORS = (
    ("divide", "warn"), ("invalid", "warn"), ("over", "warn"), ("under", "ignore"),
)  # fmt: skip
_NUMPY_ERROR_MODES = frozenset({"ignore", "warn", "raise", "print"})


def _numpy_errors() -> tuple[tuple[str, str], ...]:
    """numpy's error handling here as it crosses (numpy's defaults when it is not loaded)."""
    numpy = sys.modules.get("numpy")
    if numpy is None:
        return _NUMPY_DEFAULT_ERRORS
    return tuple(sorted(numpy.geterr().items()))


class _NumpyErrors(_Setting):
    """The solution's side: numpy's error handling (the tests', see :data:`_NUMPY_ERRORS`),
    as :func:`_apply_patches` sets and restores it; nothing while numpy is not loaded."""

    def __getitem__(self, name: str) -> tuple[tuple[str, str], ...]:
        return _numpy_errors()

    def __setitem__(self, name: str, spec: Any) -> None:
        kinds = {kind for kind, _ in _NUMPY_DEFAULT_ERRORS}
        if type(spec) is not tuple or not all(
            type(item) is tuple and len(item) == 2 and item[0] in kinds
            and item[1] in _NUMPY_ERROR_MODES
            for item in spec
        ):  # fmt: skip
            raise CodecError("malformed numpy error handling")
        numpy = sys.modules.get("numpy")
        if numpy is not None:
            numpy.seterr(**dict(spec))


class _IntDigits(_Setting):
    """The solution's side: its ``sys.set_int_max_str_digits`` (the tests', see
    :data:`_INT_DIGITS`), as :func:`_apply_patches` sets and restores it."""

    def __getitem__(self, name: str) -> int | None:
        return _int_digits()

    def __setitem__(self, name: str, digits: Any) -> None:
        if type(digits) is not int:
            raise CodecError("malformed int digits limit")
        if _set_int_max_str_digits is not None:
            with contextlib.suppress(ValueError):  # below the minimum: refused in-process too
                _set_int_max_str_digits(digits)


def _int_digits() -> int | None:
    """``sys.get_int_max_str_digits()`` (None before Python 3.11, which has no such limit)."""
    return None if _get_int_max_str_digits is None else _get_int_max_str_digits()


#: The tests' settings that reach the solution by value, compared before each request of a
#: check whose tests' text names one of their words (see :func:`_note_ambient`): per patch
#: label, those words, its attribute among the patches, and the :class:`_Setting` that sets
#: it on the solution's side (whose reading is the judge's too).
_AMBIENT_SETTINGS: dict[str, tuple[tuple[str, ...], str, type[_Setting]]] = {
    _DECIMAL: (("context",), "context", _DecimalContext),
    _INT_DIGITS: (("int_max_str_digits",), "digits", _IntDigits),
    _NUMPY_ERRORS: (("seterr", "errstate"), "errors", _NumpyErrors),
}
#: Per label of those watched in this check: [when the check began, as last counted].
_AMBIENT_STATE: dict[str, list[Any]] = {}


#: The tests' ``sys.argv`` among the patches (``sys.argv = ["prog", "3"]``, ``patch.object(sys,
#: "argv", ...)``: in-process the solution's ``main()`` reads it), and the argv the tests start
#: with (see judge_check).
_ARGV = "<argv>"
_TESTS_ARGV = ["tests"]
#: The state of ``random``'s generator, and of numpy's global one, among the patches, once the
#: tests seeded it in this check (``random.seed(42)``, ``np.random.seed(0)``, ``setstate``):
#: in-process the solution draws from the same generator, so a seeded test expects the numbers
#: that seed gives. The state crosses as the judge's generator has it before a request whenever
#: it changed, numbered (the solution sets it once per number: re-sent with other patches, it
#: does not rewind what it drew since); the solution's draws are not sent back (the tests' own
#: numbers are never the solution's to choose), but a change of its state makes the judge's
#: start anew (:func:`_reseed`). The state's words cross as one ``bytes``
#: (:data:`_MT_WORDS`, :data:`_NP_WORDS`): as 625 ints, tests that draw between calls
#: (``x = random.randint(1, 99); assert f(x) == g(x)`` in a seeded loop) paid ~1 ms per call to
#: encode, decode and check them, ~20x an unseeded call.
_RANDOM = "<random>"
_NP_RANDOM = "<numpy.random>"
#: ``random``'s 624 state words and its position; numpy's 624 words (little-endian uint32).
_MT_WORDS = struct.Struct("<625I")
_NP_WORDS = struct.Struct("<624I")
#: Per generator: [seeded in this check, number of the state last taken, that state]
_SEEDED: dict[str, list[Any]] = {_RANDOM: [False, 0, None], _NP_RANDOM: [False, 0, None]}


def _watch_seeds(tests: str) -> None:
    """Mark a generator seeded when the tests call its ``seed`` or ``setstate``/``set_state``
    (wrapping those functions of ``random``, and of ``numpy.random`` for tests that name it,
    once per process)."""
    import random

    _watch_seed(random, ("seed", "setstate"), _RANDOM)
    if "np.random" in tests or "numpy.random" in tests:
        try:
            numpy = _import_numpy()
        except CodecError:  # no numpy here: the tests' own import fails as it would
            return
        _watch_seed(numpy.random, ("seed", "set_state"), _NP_RANDOM)


def _watch_seed(module: Any, names: tuple[str, ...], label: str) -> None:
    if getattr(getattr(module, names[0]), "_asyncpool_watched", False):
        return
    for name in names:
        original = getattr(module, name)

        def watched(*args: Any, _original: Any = original, **kwargs: Any) -> Any:
            result = _original(*args, **kwargs)
            # A new state even when equal to the last one sent: seeding again restarts the
            # solution's draws too (``random.seed(1); a = f(); random.seed(1); b = f()``).
            _SEEDED[label][0], _SEEDED[label][2] = True, None
            return result

        watched._asyncpool_watched = True  # type: ignore[attr-defined]
        watched.__name__ = watched.__qualname__ = name
        watched.__doc__ = original.__doc__
        setattr(module, name, watched)


def _generator_state(label: str) -> Any:
    """The judge's state of a generator, as it crosses (numpy's keys as a tuple of ints)."""
    if label == _RANDOM:
        import random

        version, words, gauss = random.getstate()
        return (version, _MT_WORDS.pack(*words), gauss)
    name, keys, pos, has_gauss, cached = _import_numpy().random.get_state()
    return (name, keys.astype("<u4").tobytes(), int(pos), int(has_gauss), float(cached))


def _take_ambient(changes: Any) -> None:
    """The judge's side: the solution's changes of what it follows (see :data:`_AMBIENT_BACK`),
    checked: a directory (changed to when it exists here), values of the environment
    variables of :data:`_BACK_NAMES` only, and the labels of the seeded generators whose state
    the solution changed, each of which starts anew here (see :func:`_reseed`)."""
    if (
        type(changes) is not tuple
        or len(changes) != 3
        or type(changes[1]) is not tuple
        or type(changes[2]) is not tuple
        or not all(label in _SEEDED for label in changes[2])
    ):
        raise CodecError("malformed ambient changes")
    cwd, environ, drawn = changes
    for label in drawn:
        _reseed(label)
    for entry in environ:
        if (
            type(entry) is not tuple
            or len(entry) != 2
            or entry[0] not in _BACK_NAMES
            or not (entry[1] is None or type(entry[1]) is str)
        ):
            raise CodecError("malformed ambient changes")
        name, value = entry
        with contextlib.suppress(ValueError):  # a NUL
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
    if cwd is not None:
        if type(cwd) is not str or "\0" in cwd or not _AMBIENT_WATCHED["cwd"]:
            raise CodecError("malformed ambient changes")
        with contextlib.suppress(OSError):  # no such directory here
            _chdir(cwd)


def _reseed(label: str) -> None:
    """The judge's side: the solution changed the state of a generator the tests seeded (it
    drew from it, or seeded it itself). In-process the tests' next numbers would then not be
    the ones their seed gave: ``random.seed(123); f(); x = random.random()`` and a check that
    ``f`` left the generator alone fails there. Following the solution's state instead would
    let it choose the tests' next numbers (a seeded loop of random inputs, steered to easy
    ones), so the judge's generator starts anew from fresh entropy (through the generator
    object itself, never a ``random.seed`` the tests may have patched). That state is not sent
    to the solution, which draws on from its own, as one stream does in-process (``roll(5)``
    then ``deal(cards)`` after one ``random.seed(42)``); the tests' own draws or seeds since
    reach it with the next request, as before (:data:`_SEEDED`). Only a generator the tests
    seeded in this check."""
    sync = _SEEDED[label]
    if not sync[0]:
        return
    if label == _RANDOM:
        import random

        random._inst.seed()
    else:
        _import_numpy().random.mtrand._rand.seed()
    sync[2] = _generator_state(label)


def _back_names(code: types.CodeType) -> set[str]:
    """The environment variables the tests' code names in a string (see :data:`_BACK_NAMES`):
    names of ASCII letters, digits, ``_``, ``-`` and ``.``, not starting with a digit
    (``API_KEY``, ``APP-MODE``, ``app.env``), at most :data:`MAX_BACK_NAMES`."""
    found: set[str] = set()
    for current in _code_objects(code):
        for const in current.co_consts:
            if (
                type(const) is str
                and len(const) <= 100
                and const.isascii()
                and const.replace("-", "_").replace(".", "_").isidentifier()
                and not const.startswith(("LD_", "PYTHON"))
                and len(found) < MAX_BACK_NAMES
            ):
                found.add(const)
    return found


#: The most environment variables the judge follows in the solution (see _back_names).
MAX_BACK_NAMES = 200


def _note_ambient() -> None:
    """Before a request: count a change of the tests' ``sys.argv``, of a seeded generator's
    state, of the environment or the working directory (when watched, see
    :data:`_AMBIENT_WATCHED`) or of a setting of :data:`_AMBIENT_SETTINGS` (when watched) as a
    change of their patches (none is a patch the tests' mock makes)."""
    argv = sys.argv
    if argv != _ARGV_SENT:
        _ARGV_SENT[:] = argv if type(argv) is list else []
        _PATCH_COUNT[0] += 1
    if _AMBIENT_WATCHED["environ"] and os.environ != _ENVIRON_COUNTED:
        _ENVIRON_COUNTED.clear()
        _ENVIRON_COUNTED.update(os.environ)
        _PATCH_COUNT[0] += 1
    if _AMBIENT_WATCHED["cwd"]:
        cwd = _cwd()
        if cwd != _CWD_COUNTED[0]:
            _CWD_COUNTED[0] = cwd
            _PATCH_COUNT[0] += 1
    for label, counted in _AMBIENT_STATE.items():
        _, attr, setting = _AMBIENT_SETTINGS[label]
        now = setting()[attr]
        if now != counted[1]:
            counted[1] = now
            _PATCH_COUNT[0] += 1
    for label, sync in _SEEDED.items():
        if sync[0]:
            state = _generator_state(label)
            if state != sync[2]:
                sync[1] += 1
                sync[2] = state
                _PATCH_COUNT[0] += 1


#: The tests' ``sys.argv`` as last counted (see _note_ambient).
_ARGV_SENT: list[Any] = list(_TESTS_ARGV)
