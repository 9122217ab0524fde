"""The tests' pytest and unittest tests, run as pytest collects them (:func:`_run_test_functions`):
test functions and classes, fixtures (``tmp_path``, ``capsys``, ``caplog``, ``monkeypatch``...),
parametrize and marks, ``unittest.TestCase``s, subtests.

Must not: start pytest's own session (it would collect files the judge cannot see and write a cache
where it may not).
"""

from __future__ import annotations

import contextlib
import os
import sys
import types
import warnings
from typing import Any

from ._proxy_functions import _COROUTINE
from ._pytest_fixtures import _calling, _fixture, _fixture_value, _FixtureDef, _Metafunc, _Scopes
from ._pytest_marks import (
    _NOT_CALLABLE_TESTS,
    _asyncio_test,
    _condition,
    _Indirect,
    _marks,
    _param_marks,
    _parameters,
    _parametrized,
    _skipped,
)

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


