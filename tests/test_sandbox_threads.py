"""Threads across the judge's wire: each thread's exchanges are that thread's (a channel).

In-process, a callback that a thread of the solution calls runs in that thread, and a method
that a thread of the tests calls runs in that one. The judge serves each channel of the
solution's in a thread of its own, and the solution each channel of the tests', so that those
threads run concurrently, block one another and own locks as in-process (the honest side of
this is in the fidelity corpus: LeetCode 1114, 1115, 1195, a timer, a lock taken in turn).

Here: the wrong programs that passed when every thread's request was served on one thread of
the judge (an ``RLock`` the tests hold re-entered by the solution's worker; an ``RLock`` the
worker took left free for the tests), each against the in-process verdict; forged messages on
channels, which fail the check; and the thread limit of the solution's process, which reaches
the tests' thread as the ``RuntimeError`` its own start would have raised in-process.
"""

from __future__ import annotations

import textwrap

import pytest

from asyncpool.sandbox import _judge, run_tests
from tests.test_sandbox_fidelity import reference_verdict


def _d(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


#: Wrong programs the judge passed while one thread of it served every thread of the solution:
#: (name, solution, tests). In-process each fails.
SHARED_OWNER = [
    (
        "the solution's worker re-enters an RLock the tests hold (a deadlock in-process)",
        _d("""
            import threading
            def finishes(callback):
                worker = threading.Thread(target=callback, daemon=True)
                worker.start()
                worker.join(1.0)
                return not worker.is_alive()
        """),
        _d("""
            import threading
            lock = threading.RLock()
            def callback():
                with lock:
                    pass
            with lock:
                assert finishes(callback)
        """),
    ),
    (
        "an RLock the solution's worker acquired is not the tests' to take",
        _d("""
            import threading
            def grab(acquire):
                worker = threading.Thread(target=acquire)
                worker.start()
                worker.join()
        """),
        _d("""
            import threading
            lock = threading.RLock()
            grab(lock.acquire)
            assert lock.acquire(timeout=0.2)
        """),
    ),
]


@pytest.mark.slow
@pytest.mark.parametrize(("solution", "tests"), [c[1:] for c in SHARED_OWNER],
                         ids=[c[0] for c in SHARED_OWNER])  # fmt: skip
def test_a_lock_taken_by_the_solutions_thread_is_that_threads_as_in_process(
    solution: str, tests: str
) -> None:
    assert reference_verdict(solution, tests, None) == "failed"
    result = run_tests(solution, tests, timeout=30)
    assert result.status == "failed", result.stdout_tail
    assert "AssertionError" in result.stdout_tail


#: The head of a solution that writes frames of its own on the wire (its copy of the judge's
#: module is in its memory): ``frame(kind, body, channel)``.
_WIRE = _d("""
    import sys, threading
    wire = sys.modules["_asyncpool_judge"]
    def frame(kind, body, channel):
        wire._send(wire._PEER.fd, kind, body, word=wire._U32.pack(channel))
""")


def test_a_message_on_a_channel_the_judge_never_opened_fails_the_check() -> None:
    # Even channels are the judge's: 4 is open only once a second thread of the tests asks.
    solution = _WIRE + _d("""
        def solve():
            frame(b"R", wire.encode(1), 4)
            return 1
    """)
    result = run_tests(solution, "assert solve() == 1\n")
    assert result.status == "failed"
    assert "not open" in result.stdout_tail


def test_a_new_channel_of_the_solution_that_starts_with_a_reply_fails_the_check() -> None:
    solution = _WIRE + _d("""
        def solve():
            frame(b"R", wire.encode(1), 3)
            return 1
    """)
    result = run_tests(solution, "assert solve() == 1\n")
    assert result.status == "failed"
    assert "first message is no request" in result.stdout_tail


@pytest.mark.slow
def test_more_channels_than_the_bound_fail_the_check_with_the_bound() -> None:
    # Reads of stdin (a request the judge serves on the channel's own thread), each on a new
    # channel: the judge starts a thread for each, up to MAX_CHANNELS.
    solution = _WIRE + _d(f"""
        def solve():
            for n in range({_judge.MAX_CHANNELS + 1}):
                frame(b"I", wire.encode(("input", "")), 2 * n + 1)
            return 1
    """)
    result = run_tests(solution, "assert solve() == 1\n")
    assert result.status == "failed"
    assert f"more than {_judge.MAX_CHANNELS} threads of the solution" in result.stdout_tail


@pytest.mark.slow
def test_a_second_message_on_a_channel_before_its_answer_fails_the_check() -> None:
    # The solution's worker (channel 1) calls the tests' callback, which waits for good; the
    # solution then floods channel 1 with replies its thread never asked for.
    solution = _WIRE + _d("""
        def solve(callback):
            threading.Thread(target=callback, daemon=True).start()
            for _ in range(3):
                frame(b"R", wire.encode(None), 1)
            return 1
    """)
    tests = "import threading\nassert solve(threading.Event().wait) == 1\n"
    result = run_tests(solution, tests, timeout=30)
    assert result.status == "failed"
    assert (
        "a second message on a channel" in result.stdout_tail
        or "first message is no request" in result.stdout_tail  # (before the worker's own)
    ), result.stdout_tail


def test_a_solution_that_says_it_has_threads_when_it_has_none_is_judged_as_any() -> None:
    # The word's threads bit only makes the judge start a thread that reads; it decides nothing.
    head = _d("""
        import sys
        wire = sys.modules["_asyncpool_judge"]
        wire._Peer.word = lambda self, channel: wire._U32.pack(channel | wire._THREADED)
    """)
    honest = run_tests(head + "def f(x):\n    return x + 1\n", "assert f(1) == 2\n")
    wrong = run_tests(head + "def f(x):\n    return x\n", "assert f(1) == 2\n")
    assert (honest.status, wrong.status) == ("passed", "failed"), honest.stdout_tail


@pytest.mark.slow
def test_past_a_thread_limit_the_tests_thread_gets_a_runtime_error_and_the_check_goes_on() -> None:
    # Each of the tests' threads calling the solution at once is served by a thread of the
    # solution's process, which RLIMIT_NPROC bounds (48 where the run's memory cgroup holds
    # it), and takes a channel of the judge's (MAX_CHANNELS): past either the call raises a
    # RuntimeError, as Thread.start past a thread limit, and the check goes on.
    solution = _d("""
        import threading
        gate = threading.Event()
        def wait_for_gate():
            gate.wait(10)
            return 1
        def open_gate():
            gate.set()
    """)
    tests = _d(f"""
        import threading
        done, refused, other = [], [], []
        def call():
            try:
                done.append(wait_for_gate())
            except RuntimeError as exc:
                refused.append(str(exc))
            except BaseException as exc:
                other.append(repr(exc))
        threads = [threading.Thread(target=call) for _ in range(200)]
        for t in threads:
            t.start()
        open_gate()
        for t in threads:
            t.join()
        assert not other, other[:3]
        assert len(done) + len(refused) == 200
        assert set(refused) <= {{
            "can't start new thread",
            "more than {_judge.MAX_CHANNELS} threads exchanging with the other process at once",
        }}, set(refused)
    """)
    result = run_tests(solution, tests, timeout=60)
    assert result.status == "passed", result.stdout_tail
