"""The tests' pytest and unittest tests, run as pytest collects them (:func:`_run_test_functions`):
test functions and classes, fixtures (``tmp_path``, ``capsys``, ``caplog``, ``monkeypatch``...),
parametrize and marks, ``unittest.TestCase``s, subtests.

Must not: start pytest's own session (it would collect files the judge cannot see and write a cache
where it may not).
"""

from __future__ import annotations

import collections
import contextlib
import importlib
import io
import os
import pathlib
import sys
import types
import warnings
from collections.abc import Iterator
from importlib.util import find_spec as _find_spec  # bound once (the fork server loaded it)
from typing import Any

from . import _guard
from ._patches import _PATCH_COUNT, _PATCHES, _counting, _patch_target
from ._proxies import _PROXY_TYPES
from ._proxy_functions import _ASYNC_GENERATOR, _COROUTINE, _GENERATOR
from ._tests_code import _CHECK, _COMPILE, _EVAL, _code_objects


def _installed(name: str) -> bool:
    """Whether the module ``name`` can be imported here (``pytest_asyncio``, pytest's
    ``_pytest.subtests``), asked of the real ``find_spec`` bound at load, so that the tests'
    patches of ``importlib.util`` do not answer for the judge. Not cached: a module already
    imported answers from ``sys.modules``, and a long-lived judge must not carry one check's
    answer (under its ``sys.path``) into the next."""
    return _find_spec(name) is not None


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
