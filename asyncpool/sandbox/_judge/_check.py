"""One check: :func:`judge_check` (the tests run against the solution behind the wire, in a fresh
namespace, through a fresh peer: the verdict, and whether the check was an anomaly), :func:`judge`
(a judge of one check, its verdict delivered after the caller's key), the entry point's steps
(:func:`entry_steps`) and a failure's description (:func:`_describe`, which leaves out the frames
of every module of the judge).

Must not: write a verdict on a descriptor that is no longer the pipe it was given
(:func:`same_file`).
"""

from __future__ import annotations

import builtins
import keyword
import os
import sys
import traceback
import types
import warnings
from os import fstat as _fstat
from typing import Any, NoReturn

from . import (
    _ambient,
    _annotations,
    _bounds,
    _code_texts,
    _codec,
    _decoder,
    _decoder_types,
    _described,
    _encoder,
    _exceptions,
    _forwarded,
    _framing,
    _guard,
    _handle_ids,
    _harness,
    _kept,
    _notices,
    _ops,
    _pandas,
    _patches,
    _peer,
    _peer_channels,
    _peer_classes,
    _peer_exceptions,
    _peer_kept,
    _peer_perform,
    _peer_relay,
    _peer_state,
    _proxies,
    _proxy_backed,
    _proxy_classes,
    _proxy_coroutines,
    _proxy_functions,
    _pytest_fixtures,
    _pytest_marks,
    _resent,
    _serve,
    _solution_side,
    _stand_ins,
    _tests_code,
    _tests_namespace,
    _tests_type,
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
    _watch_seeds,
)
from ._bounds import MAX_NAMES, CodecError
from ._decoder import _Decoder
from ._described import watch_background
from ._exceptions import _SOLUTION_EXIT
from ._forwarded import _ASSIGNED, _SOLUTIONS, _SPIES, _SolutionModule
from ._framing import _buffers, _recv
from ._guard import (
    _doctest_in_solution,
    _guard_logging_config,
    _guard_pandas_eval,
    _guard_set_assertions,
    _guard_yaml,
    _pytest_main_runs_nothing,
    _workdir_roots,
)
from ._handle_ids import _handle_id
from ._harness import (
    _UNITTEST_NO_TESTS,
    TESTS_FILE,
    _run_test_functions,
    _testcases,
    _unittest_main_exit,
)
from ._patches import (
    _PATCH_COUNT,
    _PATCHES,
    _WARNINGS_AT_START,
    _WARNINGS_WATCHED,
    _watch_logging,
    _watch_patches,
    _watch_warnings,
)
from ._peer import _Peer
from ._solution_side import _pin
from ._tests_code import _CHECK, _EXEC, _compiled
from ._tests_namespace import (
    TEST_MODULES,
    _ask_constants,
    _for_tests,
    _greeting,
    _import,
    _import_submodules,
    _may_proxy,
    _reached_modules,
    _standard,
)
from ._tests_type import _TestsType


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
        if "query" in tests or "eval" in tests:  # (a frame of the solution's: when it comes)
            _pandas.AFTER_IMPORT[:] = [_guard_pandas_eval]
            if "pandas" in tests or "pandas" in sys.modules:
                _guard_pandas_eval()
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
        if "id" in used:
            namespace["id"] = _handle_id
        watch_background()
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


#: The globals of every module of the judge (by ``id``: each module lives as long as the
#: process): their frames are left out of a failure's description (see :func:`_describe`).
_OWN_GLOBALS = frozenset(
    {id(globals()), *(id(vars(module)) for module in (
        _ambient, _annotations, _bounds, _code_texts, _codec, _decoder, _decoder_types,
        _described, _encoder, _exceptions, _forwarded, _framing, _guard, _handle_ids, _harness,
        _kept, _notices, _ops, _pandas, _patches, _peer, _peer_channels, _peer_classes,
        _peer_exceptions, _peer_kept, _peer_perform, _peer_relay, _peer_state, _proxies,
        _proxy_backed, _proxy_classes, _proxy_coroutines, _proxy_functions, _pytest_fixtures,
        _pytest_marks, _resent, _serve, _solution_side, _stand_ins, _tests_code, _tests_namespace,
        _tests_type, _values,
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
