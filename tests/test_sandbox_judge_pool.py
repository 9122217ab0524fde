"""The fork server's long-lived judges (issue 21 item 3): reused, retired, never leaking.

Real judged runs through ``run_tests`` (root, as in production: without it every check forks a
judge of its own). A judge serves consecutive checks; it is replaced after
``JUDGE_CHECKS`` checks, after a check in which the solution made a request of the tests'
objects (a callback), after tests that ended in a ``RecursionError``, after a timeout, and after
tests that changed a built-in or may have changed a module; a handle of an earlier check is
unusable in a later one; each check starts in the judge's working directory.
"""

from __future__ import annotations

import os
import time

import pytest

from asyncpool.sandbox import _run as _sandbox_run
from asyncpool.sandbox import run_tests
from asyncpool.sandbox._zygote_wire import JUDGE_ADDRESS_FLOOR, JUDGE_CHECKS, JUDGE_UID

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="long-lived judges need root")

SOLUTION = "def f(x):\n    return x + 1\n"
TESTS = "assert f(1) == 2\n"


def _judges() -> set[int]:
    """The fork server's live children running as the judge's uid: its long-lived judges."""
    server = _sandbox_run.zygote_pid()
    assert server is not None
    with open(f"/proc/{server}/task/{server}/children") as fh:
        children = [int(p) for p in fh.read().split()]
    found = set()
    for pid in children:
        try:
            with open(f"/proc/{pid}/status") as fh:
                uid_line = next(line for line in fh if line.startswith("Uid:"))
        except (OSError, StopIteration):
            continue
        if int(uid_line.split()[1]) == JUDGE_UID:
            found.add(pid)
    return found


def _gone(pid: int, deadline: float = 10.0) -> bool:
    """Whether the process ``pid`` has exited (and been reaped) within ``deadline`` seconds."""
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        if not os.path.exists(f"/proc/{pid}"):
            return True
        time.sleep(0.01)
    return False


def _one_judge_after_a_check() -> int:
    assert run_tests(SOLUTION, TESTS).status == "passed"
    judges = _judges()
    assert judges, "no long-lived judge after a judged check"
    return min(judges)


def test_consecutive_checks_are_judged_by_the_same_long_lived_judge() -> None:
    first = _one_judge_after_a_check()
    for _ in range(3):
        assert run_tests(SOLUTION, TESTS).status == "passed"
        assert run_tests(SOLUTION, "assert f(1) == 3\n").status == "failed"
    assert first in _judges()


@pytest.mark.slow
def test_a_judge_that_served_judge_checks_checks_is_replaced() -> None:
    first = _one_judge_after_a_check()
    for _ in range(JUDGE_CHECKS):
        assert run_tests(SOLUTION, TESTS).status == "passed"
    assert _gone(first)
    assert _judges(), "a fresh judge took over"


def test_a_judge_is_retired_after_the_solution_called_back_into_the_tests() -> None:
    first = _one_judge_after_a_check()
    callback = run_tests("def g(h):\n    return h(2)\n", "assert g(lambda x: x * 3) == 6\n")
    assert callback.status == "passed"
    assert _gone(first)
    assert run_tests(SOLUTION, TESTS).status == "passed"


@pytest.mark.slow
@pytest.mark.parametrize(
    ("solution", "tests"),
    [
        (SOLUTION, "import threading\nout = []\nt = threading.Thread(target=lambda: "
                   "out.append(f(1)))\nt.start()\nt.join()\nassert out == [2]\n"),
        ("import threading\ndef f(x):\n    threading.Thread(target=threading.Event().wait, "
         "daemon=True).start()\n    return x + 1\n", TESTS),
    ],
    ids=["a thread of the tests called the solution", "the solution has a thread left running"],
)
def test_a_judge_is_retired_after_a_check_with_threads_on_the_wire(
    solution: str, tests: str
) -> None:
    # The judge's threads that served the solution's channels, or read the wire for all, may
    # still run: none may read the next check's wire.
    first = _one_judge_after_a_check()
    assert run_tests(solution, tests).status == "passed"
    assert _gone(first)
    assert run_tests(SOLUTION, TESTS).status == "passed"


def test_a_judge_is_retired_after_tests_that_ended_in_a_recursion_error() -> None:
    first = _one_judge_after_a_check()
    deep = "def down(n):\n    return down(n + 1)\n\nassert f(1) == 2\ndown(0)\n"
    result = run_tests(SOLUTION, deep)
    assert result.status == "failed"
    assert "RecursionError" in result.stdout_tail
    assert _gone(first)
    assert run_tests(SOLUTION, TESTS).status == "passed"


@pytest.mark.slow
def test_a_judge_is_killed_with_a_check_that_timed_out_and_the_next_check_passes() -> None:
    first = _one_judge_after_a_check()
    hang = run_tests("def f(x):\n    while True:\n        pass\n", TESTS, timeout=1.0)
    assert hang.status == "timeout"
    assert _gone(first)
    assert run_tests(SOLUTION, TESTS).status == "passed"


def test_a_builtin_changed_by_the_tests_is_not_seen_by_the_next_check() -> None:
    _one_judge_after_a_check()
    marker = "asyncpool_leak_marker"
    changed = run_tests(SOLUTION, f"import builtins\nbuiltins.{marker} = 1\n{TESTS}")
    assert changed.status == "passed"
    later = run_tests(
        SOLUTION, f"import builtins\nassert not hasattr(builtins, {marker!r})\n{TESTS}"
    )
    assert later.status == "passed", later.stdout_tail


def test_a_working_directory_the_tests_changed_is_not_the_next_checks() -> None:
    """The same long-lived judge serves all three checks (their text names no file use the
    sandbox routes to a judge sharing the run's files: ``from os import chdir``), and the third
    starts where the first did, not in the second one's ``/usr``."""
    judge = _one_judge_after_a_check()
    where = "from os import getcwd\nassert getcwd() == '/', getcwd()\n"
    start = run_tests(SOLUTION, where + TESTS)
    assert start.status == "passed", start.stdout_tail
    moved = run_tests(SOLUTION, f"from os import chdir\nchdir('/usr')\n{TESTS}")
    assert moved.status == "passed", moved.stdout_tail
    later = run_tests(SOLUTION, where + TESTS)
    assert later.status == "passed", later.stdout_tail
    assert judge in _judges()


def test_a_handle_kept_from_an_earlier_check_is_unusable_in_a_later_one() -> None:
    first = _one_judge_after_a_check()
    # A callback retires that judge: the next two checks are a fresh judge's first two.
    assert run_tests("def g(h):\n    return h(2)\n", "assert g(abs) == 2\n").status == "passed"
    assert _gone(first)
    # The tests stash the earlier solution's function in a module's list (trusted tests could;
    # the judge compares no module's contents, only attributes the tests may have set): in a
    # later check it must not reach the new solution under the old number.
    stash = "import json\njson.__all__.append(f)\n" + TESTS
    assert run_tests(SOLUTION, stash).status == "passed"
    later_tests = (
        "import json\n"
        "stale = json.__all__.pop()\n"  # the same judge: the stash is there
        "try:\n"
        "    stale(1)\n"
        "except TypeError:\n"
        "    pass\n"
        "else:\n"
        "    raise AssertionError('a handle of an earlier check answered')\n"
        "assert f(1) == 11\n"
    )
    later = run_tests("def f(x):\n    return x + 10\n", later_tests)
    assert later.status == "passed", later.stdout_tail


#: What the next check's tests see of the modules (each as a fresh process has it).
#: (No file API named: tests that name one get a judge forked for them alone.)
PRISTINE = (
    "import importlib.util, sys, time\n"
    "assert getattr(time.sleep, '__name__', None) == 'sleep', time.sleep\n"
    "assert importlib.util.find_spec.__name__ == 'find_spec', importlib.util.find_spec\n"
    "assert '/asyncpool-leak' not in sys.path\n"
)


@pytest.mark.parametrize(
    "change",
    [
        "import time\ntime.sleep = lambda s: None\n",
        "import time as t\nt.sleep = print\n",
        "import importlib.util\nimportlib.util.find_spec = lambda name: None\n",
        "import time\nsetattr(time, 'sleep', print)\n",
        "def helper():\n    import time\n    time.sleep = print\nhelper()\n",
        "from unittest.mock import patch\npatch('time.sleep', lambda s: None).start()\n",
        "import sys\nsys.path.insert(0, '/asyncpool-leak')\n",
    ],
    ids=["assigned", "through an alias", "of a submodule", "setattr", "in a function",
         "patch started, never stopped", "sys.path"],
)
def test_a_module_the_tests_changed_is_not_seen_by_the_next_check(change: str) -> None:
    # A long-lived judge judges the next check in the same process: tests that leave a module
    # changed (``time.sleep`` made a no-op) must not change another check's verdict.
    _one_judge_after_a_check()
    _assert_unchanged_for_the_next_checks(change, PRISTINE)


def _assert_unchanged_for_the_next_checks(change: str, fresh: str) -> None:
    """Tests that make ``change`` pass, and the next three checks' tests still find what
    ``fresh`` asserts a fresh judge has."""
    assert run_tests(SOLUTION, change + TESTS).status == "passed"
    for _ in range(3):
        later = run_tests(SOLUTION, fresh + TESTS)
        assert later.status == "passed", later.stdout_tail


def test_tests_that_only_read_modules_and_set_their_own_attributes_keep_the_judge() -> None:
    # The rule above costs nothing to plain tests: a judge stays for tests that set attributes
    # of their own objects and of the solution's module, and read modules.
    first = _one_judge_after_a_check()
    tests = (
        "import math, solution, unittest\n"
        "class Box:\n    pass\n"
        "b = Box()\nb.v = math.pi\nsolution.DEBUG = True\n"
        "class T(unittest.TestCase):\n"
        "    def setUp(self):\n        self.x = f(1)\n"
        "    def test(self):\n        self.assertEqual(self.x, 2)\n"
        "unittest.main(exit=False)\n" + TESTS
    )
    _assert_the_judge_stays(first, tests)


def _assert_the_judge_stays(judge: int, tests: str) -> None:
    """Three checks of ``tests`` pass, and ``judge`` is still there after them."""
    for _ in range(3):
        assert run_tests(SOLUTION, tests).status == "passed"
    assert judge in _judges()


#: (a change of a process-wide setting, what a fresh process has of it): in-process each check
#: would run in a fresh interpreter, so a setting one check's tests leave changed must not be
#: the next check's (it retires the judge, as a changed built-in does).
SETTINGS = {
    "decimal precision": (
        "from decimal import getcontext\ngetcontext().prec = 5\n",
        "from decimal import getcontext\nassert getcontext().prec == 28, getcontext().prec\n",
    ),
    "decimal trap": (
        "import decimal\ndecimal.getcontext().traps[decimal.Inexact] = True\n",
        "import decimal\nassert not decimal.getcontext().traps[decimal.Inexact]\n",
    ),
    "decimal context of new threads": (
        "from decimal import DefaultContext\nDefaultContext.prec = 7\n",
        "import decimal\nassert decimal.DefaultContext.prec == 28\n",
    ),
    "int max str digits": (
        "import sys\nsys.set_int_max_str_digits(0)\n",
        "import sys\nassert sys.get_int_max_str_digits() == 4300\n",
    ),
    "warnings filter": (
        "import warnings\nwarnings.simplefilter('error')\n",
        "import warnings\nwarnings.warn('harmless', UserWarning)\n",
    ),
    "gc disabled": ("import gc\ngc.disable()\n", "import gc\nassert gc.isenabled()\n"),
    "socket timeout": (
        "import socket\nsocket.setdefaulttimeout(3)\n",
        "import socket\nassert socket.getdefaulttimeout() is None\n",
    ),
    "umask": (
        "import os\nos.umask(0o777)\n",
        "import os\nmask = os.umask(0o022)\nos.umask(mask)\nassert mask == 0o022, oct(mask)\n",
    ),
    "numpy errors": (
        "import numpy as np\nnp.seterr(all='raise')\n",
        "import numpy as np\nassert np.geterr()['divide'] == 'warn', np.geterr()\n",
    ),
}


@pytest.mark.parametrize(("change", "fresh"), list(SETTINGS.values()), ids=list(SETTINGS))
def test_an_interpreter_setting_the_tests_changed_is_not_the_next_checks(
    change: str, fresh: str
) -> None:
    _one_judge_after_a_check()
    assert run_tests(SOLUTION, fresh + TESTS).status == "passed"  # what a fresh judge has
    _assert_unchanged_for_the_next_checks(change, fresh)


def test_tests_that_change_settings_only_for_a_while_keep_the_judge() -> None:
    # Settings restored by the tests themselves (a context manager) are no anomaly: warnings
    # caught, a local decimal context, np.errstate; nor are the warnings filters numpy adds
    # when tests that do not name warnings import it (it stays loaded in the judge).
    first = _one_judge_after_a_check()
    assert run_tests(SOLUTION, "import numpy\n" + TESTS).status == "passed"
    tests = (
        "import warnings, decimal\nimport numpy as np\n"
        "with warnings.catch_warnings():\n    warnings.simplefilter('error')\n"
        "with decimal.localcontext() as ctx:\n    ctx.prec = 5\n"
        "with np.errstate(all='raise'):\n    pass\n" + TESTS
    )
    _assert_the_judge_stays(first, tests)


@pytest.mark.slow
def test_what_an_earlier_check_imported_leaves_a_later_check_its_room() -> None:
    """A judge's address space per check is counted from where the check begins (at least
    ``JUDGE_ADDRESS_FLOOR`` more), so a long-lived judge that imported pandas and matplotlib
    for an earlier check (~440 MiB of address space) gives a later check the room a fresh
    judge does: under one absolute limit (``memory_mb``) a check passing 10**6 ints took a
    ``MemoryError`` after such checks in 1-2 of 10 runs."""
    pytest.importorskip("pandas")
    pytest.importorskip("matplotlib")
    imports = "import pandas, matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot\n"
    room = (
        "import resource\n"
        "size = int(open('/proc/self/statm').read().split()[0]) * resource.getpagesize()\n"
        "soft = resource.getrlimit(resource.RLIMIT_AS)[0]\n"
        f"assert f(soft - size >= {JUDGE_ADDRESS_FLOOR - (16 << 20)}) == 2, (soft, size)\n"
    )
    for _ in range(3):
        assert run_tests(SOLUTION, imports + TESTS).status == "passed"
        result = run_tests(SOLUTION, room, memory_mb=256)
        assert result.status == "passed", result.stdout_tail[-1000:]
