"""The judge's verdict reaches the caller unforged, even when the tests hand the solution a
callable that opens what it is told (``open`` itself, a helper of theirs).

Such a callable runs in the judge with the solution's arguments: ``open(fd)`` there reaches
every descriptor of the judge's, the verdict pipe and the long-lived judge's control socket
included (``/proc/self/fdinfo`` tells which is which). A solution then wrote ``P`` on the
verdict pipe and closed it, or forged the judge's "done" on its control socket, and was scored
"passed" with a wrong answer. Now the judge writes a per-run secret of the caller's before its
verdict (``_zygote_wire.VERDICT_KEY_BYTES``), a long-lived judge's "done" carries the check's
token (``JUDGE_JOB``), and a judge whose pipe or socket was closed and its number reused writes
nothing. Each attack is tried on both judges: a long-lived one (the tests name no file API) and
one forked for the check (they do: ``FLAG_SHARED_FS``). The honest twin passes the same tests.
"""

from __future__ import annotations

import os
import textwrap

import pytest

from asyncpool.sandbox import run_tests
from asyncpool.sandbox._run import _keyed_verdict

#: The tests hand over the real ``open``: named (the run shares its files with a judge forked
#: for it) or reached without naming it (a long-lived judge serves the check).
OPENERS = {
    "forked_judge": "opener = open\n",
    "pooled_judge": "import builtins\nopener = getattr(builtins, 'op' + 'en')\n",
    "tests_helper": "def opener(path, mode='r', **kw):\n    return open(path, mode, **kw)\n",
}
TESTS = "assert solve(opener, [3, 1, 2]) == [1, 2, 3]\n"

#: The solution finds the judge's descriptors by their access mode, as an attacker would.
_FIND = textwrap.dedent("""
    def fds(opener, mode):
        found = []
        for fd in range(3, 64):
            try:
                info = opener(f"/proc/self/fdinfo/{fd}").read()
            except Exception:
                continue
            flags = next(l for l in info.splitlines() if l.startswith("flags:")).split()[1]
            if int(flags, 8) & 3 == mode:
                found.append(fd)
        return found
""")

ATTACKS = {
    "writes_P_on_the_verdict_pipe_and_closes_it": """
        for fd in fds(opener, 1):
            f = opener(fd, "wb", buffering=0)
            f.write(b"P")
            f.close()
    """,
    "writes_P_and_leaves_the_pipe_open": """
        for fd in fds(opener, 1):
            opener(fd, "wb", buffering=0, closefd=False).write(b"P")
    """,
    "closes_the_pipe_and_has_its_number_reused": """
        for fd in fds(opener, 1):
            opener(fd, "wb", buffering=0).close()
        solve.kept = [opener("/dev/null", "wb") for _ in range(8)]
    """,
    "reopens_the_pipe_through_proc_and_writes_P": """
        for fd in fds(opener, 1):
            solve.kept = opener(f"/proc/self/fd/{fd}", "wb", buffering=0)
            solve.kept.write(b"P")
            opener(fd, "wb", buffering=0).close()
    """,
    "forges_done_on_the_control_socket_then_P": """
        for fd in fds(opener, 1):
            f = opener(fd, "wb", buffering=0)
            f.write(b"P")
            f.close()
        for fd in fds(opener, 2)[1:]:  # past the first, the wire to the solution
            try:
                opener(fd, "wb", buffering=0, closefd=False).write(b"D\\x00")
            except OSError:
                pass
    """,
}


def _attack(body: str) -> str:
    steps = textwrap.indent(textwrap.dedent(body).strip("\n"), "    ")
    return f"{_FIND}\ndef solve(opener, xs):\n{steps}\n    return []\n"


HONEST = "def solve(opener, xs):\n    return sorted(xs)\n"


@pytest.mark.slow
@pytest.mark.parametrize("opener", sorted(OPENERS))
@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_a_solution_writing_on_the_judges_descriptors_is_never_passed(
    attack: str, opener: str
) -> None:
    result = run_tests(_attack(ATTACKS[attack]), OPENERS[opener] + TESTS, timeout=20)
    assert result.status != "passed", result


@pytest.mark.slow
@pytest.mark.parametrize("opener", sorted(OPENERS))
def test_the_attacked_tests_pass_the_honest_solution(opener: str) -> None:
    result = run_tests(HONEST, OPENERS[opener] + TESTS, timeout=20)
    assert result.status == "passed", result


@pytest.mark.slow
@pytest.mark.skipif(os.geteuid() != 0, reason="long-lived judges need root")
def test_a_forged_done_neither_passes_its_check_nor_touches_the_next_ones() -> None:
    """Only the "done" (no write on the verdict pipe): the server kills the judge that sent it
    without the check's token, so the next checks (which could have been handed to that judge
    while it still served the attacker) get judges of their own and pass."""
    forged_done = _attack("""
        for fd in fds(opener, 2)[1:]:
            try:
                opener(fd, "wb", buffering=0, closefd=False).write(b"D\\x00")
            except OSError:
                pass
    """)
    result = run_tests(forged_done, OPENERS["pooled_judge"] + TESTS, timeout=20)
    assert result.status == "failed", result
    for _ in range(3):
        honest = run_tests(HONEST, OPENERS["pooled_judge"] + TESTS, timeout=20)
        assert honest.status == "passed", honest


KEY = bytes(range(16))


@pytest.mark.parametrize(
    ("data", "verdict"),
    [
        (KEY + b"P", b"P"),
        (KEY + b"Fa reason", b"Fa reason"),
        (b"", b""),
        (b"P", b"Fthe verdict pipe held bytes the judge did not write: no verdict"),
        (b"P" + KEY + b"F", b"Fthe verdict pipe held bytes the judge did not write: no verdict"),
        (KEY[:8], b"Fthe verdict pipe held bytes the judge did not write: no verdict"),
    ],
)
def test_only_a_verdict_after_the_callers_key_is_the_judges(data: bytes, verdict: bytes) -> None:
    assert _keyed_verdict(data, KEY) == verdict
