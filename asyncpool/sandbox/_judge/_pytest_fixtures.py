"""The tests' pytest fixtures, as pytest provides them: their definitions and scopes
(:class:`_FixtureDef`), the request a fixture gets, and the built-in ones the judge provides
(``tmp_path``, ``capsys``, ``caplog``, ``monkeypatch``, ``recwarn``, ``subtests``...).

Must not: use pytest's own fixture manager (it belongs to a pytest session, which the judge
never starts: see :mod:`._harness`).
"""

from __future__ import annotations

import collections
import contextlib
import importlib
import io
import pathlib
import sys
import types
import warnings
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from . import _guard
from ._patches import _PATCH_COUNT, _PATCHES, _counting, _patch_target
from ._proxies import _PROXY_TYPES
from ._proxy_functions import _GENERATOR
from ._pytest_marks import _installed, _param_value, _parameters

if TYPE_CHECKING:
    from ._harness import _TestRun


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
