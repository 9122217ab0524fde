"""The hang guard of async tests (:mod:`tests._hang_guard`) ends a hung test on both loops.

pytest-timeout's signal method does not end a hung test on uvloop (the guard's docstring says
why); these tests show the guard does, and that it changes nothing else about a test.
"""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import uvloop

from . import _hang_guard

ROOT = Path(__file__).resolve().parent.parent
LOOPS: dict[str, Callable[[], asyncio.AbstractEventLoop]] = {
    "asyncio": asyncio.new_event_loop,
    "uvloop": uvloop.new_event_loop,
}


def run_on(loop: str, coroutine: Any) -> Any:
    with asyncio.Runner(loop_factory=LOOPS[loop]) as runner:
        return runner.run(coroutine)


@pytest.mark.slow  # (waits out its budget: the default tier keeps the checks below)
@pytest.mark.parametrize("loop", sorted(LOOPS))
def test_a_guarded_test_that_hangs_fails_at_its_budget_on_either_loop(loop: str) -> None:
    async def hangs() -> None:
        await asyncio.Event().wait()

    with pytest.raises(pytest.fail.Exception, match=r"timed out after 0\.9 s \(the hang guard"):
        run_on(loop, _hang_guard.guarded(hangs, timeout=1.0)())


@pytest.mark.parametrize("loop", sorted(LOOPS))
def test_a_guarded_test_keeps_its_result_arguments_and_own_timeout_errors(loop: str) -> None:
    async def adds(a: int, *, b: int) -> int:
        await asyncio.sleep(0)
        return a + b

    async def raises_its_own() -> None:
        async with asyncio.timeout(0.01):
            await asyncio.Event().wait()

    assert run_on(loop, _hang_guard.guarded(adds, timeout=60)(1, b=2)) == 3
    with pytest.raises(TimeoutError):  # not turned into the guard's failure
        run_on(loop, _hang_guard.guarded(raises_its_own, timeout=60)())
    assert _hang_guard.guarded(adds, timeout=60).__name__ == "adds"  # fixtures by signature


def test_the_guard_reads_the_marker_before_the_configured_timeout(
    request: pytest.FixtureRequest,
) -> None:
    assert _hang_guard.item_timeout(request.node) == 600  # pyproject's value
    assert _hang_guard.guard_lead(600) == 5
    assert _hang_guard.guard_lead(3) == pytest.approx(0.3)


@pytest.mark.slow
def test_a_hung_uvloop_test_in_a_pytest_run_fails_instead_of_hanging_it(tmp_path: Path) -> None:
    (tmp_path / "conftest.py").write_text(
        textwrap.dedent(
            """
            import asyncio
            import uvloop
            from tests import _hang_guard

            def pytest_asyncio_loop_factories(config, item):
                return {"uvloop": uvloop.new_event_loop}

            def pytest_collection_modifyitems(config, items):
                _hang_guard.install(items)
            """
        )
    )
    (tmp_path / "test_hangs.py").write_text(
        textwrap.dedent(
            """
            import asyncio
            import pytest

            @pytest.mark.asyncio
            @pytest.mark.timeout(4)
            async def test_hangs():
                await asyncio.Event().wait()

            @pytest.mark.asyncio
            async def test_runs():
                await asyncio.sleep(0)

            def test_sync():
                pass
            """
        )
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    # The bound of this run: with the guard broken, the hung test would hold it past this.
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir",
         str(tmp_path), "-c", os.devnull, "-o", "asyncio_mode=strict",
         "-o", "asyncio_default_fixture_loop_scope=function", str(tmp_path)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    assert "1 failed, 2 passed" in done.stdout, done.stdout
    assert "the hang guard" in done.stdout
    assert re.search(r"^>\s+await asyncio\.Event\(\)\.wait\(\)$", done.stdout, re.M)  # stuck here
