"""Threads across the judge's wire: each thread's exchanges are that thread's (a channel).

In-process, a callback that a thread of the solution calls runs in that thread, and a method
that a thread of the tests calls runs in that one. The judge serves each channel of the
solution's in a thread of its own, and the solution each channel of the tests', so that those
threads run concurrently, block one another and own locks as in-process (the honest side of
this is in the fidelity corpus: LeetCode 1114, 1115, 1195, a timer, a lock taken in turn).

Here: the wrong programs that passed when every thread's request was served on one thread of
the judge (an ``RLock`` the tests hold re-entered by the solution's worker; an ``RLock`` the
worker took left free for the tests), each against the in-process verdict; threads that come
and go (fresh thread-locals, names, counts, output after a call returned); forged messages on
channels, which fail the check; and more of the tests' threads than the solution's process may
have, which take turns.
"""

from __future__ import annotations

import pytest

from asyncpool.sandbox import _judge, run_tests
from tests._programs import JUDGE_WIRE
from tests.test_sandbox_fidelity import _d, reference_verdict

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
    assert "AssertionError" in _judged_as_in_process(solution, tests, "failed")


#: Honest programs whose threads come and go (helper 37's probes, session 29): (name,
#: solution, tests). Each passes in-process; with a serving thread kept per channel number
#: and reused, started by ``_thread`` and never ended, each failed.
THREADS_COME_AND_GO = [
    (
        "each of the tests' threads, one after another, gets its own thread-local session",
        _d("""
            import itertools, threading
            _local = threading.local()
            _ids = itertools.count(1)
            def session_id():
                if not hasattr(_local, "sid"):
                    _local.sid = next(_ids)
                return _local.sid
        """),
        _d("""
            import threading
            main = session_id()
            seen = []
            for _ in range(4):
                t = threading.Thread(target=lambda: seen.append(session_id()))
                t.start()
                t.join()
            assert len(set(seen)) == 4 and main not in seen, seen
        """),
    ),
    (
        "each of the solution's threads, one after another, sees fresh thread-locals of the tests",
        _d("""
            import threading
            def each_in_a_new_thread(fn, n):
                for i in range(n):
                    t = threading.Thread(target=fn, args=(i,))
                    t.start()
                    t.join()
        """),
        _d("""
            import threading
            local = threading.local()
            fresh = []
            def fn(i):
                fresh.append(not hasattr(local, "seen"))
                local.seen = True
            each_in_a_new_thread(fn, 3)
            assert fresh == [True, True, True], fresh
        """),
    ),
    (
        "the tests' callback sees the name of the solution's thread that calls it",
        _d("""
            import threading
            def in_workers(callback, n):
                ts = [threading.Thread(target=callback, args=(i,), name=f"worker-{i}")
                      for i in range(n)]
                for t in ts:
                    t.start()
                for t in ts:
                    t.join()
        """),
        _d("""
            import threading
            names = []
            in_workers(lambda i: names.append((i, threading.current_thread().name)), 3)
            assert sorted(names) == [(0, "worker-0"), (1, "worker-1"), (2, "worker-2")], names
        """),
    ),
    (
        "the solution sees the name of the tests' thread that calls it",
        _d("""
            import threading
            def log_line(message):
                return f"[{threading.current_thread().name}] {message}"
        """),
        _d("""
            import threading
            out = []
            t = threading.Thread(target=lambda: out.append(log_line("hi")), name="client-1")
            t.start()
            t.join()
            assert out == ["[client-1] hi"] and log_line("x") == "[MainThread] x", out
        """),
    ),
    (
        "the tests count their threads after the solution's pool ended",
        _d("""
            from concurrent.futures import ThreadPoolExecutor
            def parallel_apply(fn, items):
                with ThreadPoolExecutor(3, thread_name_prefix="apply") as pool:
                    return list(pool.map(fn, items))
        """),
        _d("""
            import threading
            before = threading.active_count()
            seen = set()
            def fn(x):
                seen.add(threading.current_thread().name)
                return x * 2
            assert parallel_apply(fn, [1, 2, 3, 4]) == [2, 4, 6, 8]
            assert threading.active_count() == before, threading.enumerate()
            assert all(name.startswith("apply") for name in seen), seen
        """),
    ),
    (
        "what the solution's thread prints after its call returned reaches the tests' stdout",
        _d("""
            import threading
            def start_ticker(n, wait):
                def run():
                    wait()
                    for i in range(n):
                        print(f"tick {i}", flush=True)
                threading.Thread(target=run, daemon=True).start()
        """),
        _d("""
            import contextlib, io, threading, time
            buf = io.StringIO()
            go = threading.Event()
            with contextlib.redirect_stdout(buf):
                start_ticker(3, go.wait)
                go.set()  # the ticks come after the call returned
                deadline = time.monotonic() + 20
                while buf.getvalue().count("tick") < 3 and time.monotonic() < deadline:
                    time.sleep(0.01)
            assert buf.getvalue() == "tick 0\\ntick 1\\ntick 2\\n", repr(buf.getvalue())
        """),
    ),
    (
        "a hundred of the tests' threads each call the solution once (more than its thread limit)",
        _d("""
            import threading
            class Counter:
                def __init__(self):
                    self.count = 0
                    self.lock = threading.Lock()
                def increment(self):
                    with self.lock:
                        self.count += 1
        """),
        _d("""
            import threading
            c = Counter()
            threads = [threading.Thread(target=c.increment) for _ in range(100)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            assert c.count == 100, c.count
        """),
    ),
]


#: Honest programs whose threads' exchanges cross on the wire (helper 36's red team, session
#: 29): (name, solution, tests). Each passes in-process; each failed or hung once threads
#: exchanged at once, before releases were counted, freeing and relaying waited for a thread
#: that may call the other side, deep values kept one raised recursion limit for all threads,
#: and the kept containers were read from a snapshot.
CROSSING = [
    (
        "the tests' threads take the solution's pooled objects and give them back",
        _d("""
            import threading
            class Conn:
                def query(self, x):
                    return x + 1
            class Pool:
                def __init__(self, size):
                    self.free = [Conn() for _ in range(size)]
                    self.cv = threading.Condition()
                def acquire(self):
                    with self.cv:
                        while not self.free:
                            self.cv.wait()
                        return self.free.pop()
                def release(self, conn):
                    with self.cv:
                        self.free.append(conn)
                        self.cv.notify()
        """),
        _d("""
            import threading
            pool = Pool(2)
            errors = []
            def worker():
                try:
                    for i in range(100):
                        conn = pool.acquire()
                        assert conn.query(i) == i + 1
                        pool.release(conn)
                        del conn
                except BaseException as exc:
                    errors.append(repr(exc))
            threads = [threading.Thread(target=worker) for _ in range(4)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            assert not errors, errors[:2]
        """),
    ),
    (
        "the solution's object calls the tests back from its __del__ when the tests drop it",
        _d("""
            class Resource:
                def __init__(self, on_close):
                    self.on_close = on_close
                def __del__(self):
                    self.on_close()
            def open_resource(on_close):
                return Resource(on_close)
            def ping():
                return 1
        """),
        _d("""
            closed = []
            r = open_resource(lambda: closed.append(1))
            del r
            assert ping() == 1
            assert closed == [1], closed
        """),
    ),
    (
        "the tests redirect stdout into the solution's own buffer class",
        _d("""
            class Buffer:
                def __init__(self):
                    self.parts = []
                def write(self, text):
                    self.parts.append(text)
                    return len(text)
                def flush(self):
                    pass
                def getvalue(self):
                    return "".join(self.parts)
            def greet(name):
                print("hello", name)
                return 1
        """),
        _d("""
            from contextlib import redirect_stdout
            buf = Buffer()
            with redirect_stdout(buf):
                assert greet("bob") == 1
            assert buf.getvalue() == "hello bob\\n", buf.getvalue()
        """),
    ),
    (
        "two of the solution's threads hand the tests 5,000-deep lists at once",
        _d("""
            import threading
            def deep(n):
                v = []
                for _ in range(n):
                    v = [v]
                return v
            def pump(sink, n):
                def work():
                    for _ in range(n):
                        sink(deep(5000))
                threads = [threading.Thread(target=work) for _ in range(2)]
                for t in threads:
                    t.start()
                for t in threads:
                    t.join()
                return True
        """),
        _d("""
            import sys
            start = sys.getrecursionlimit()
            got = []
            assert pump(lambda v: got.append(1), 20)
            assert len(got) == 40 and sys.getrecursionlimit() == start
        """),
    ),
    (
        "the tests' threads read and change lists the solution's objects hold",
        _d("""
            class Box:
                def __init__(self, items):
                    self.items = items
                def push(self, x):
                    self.items.append(x)
        """),
        _d("""
            import threading
            errors = []
            def worker(k):
                try:
                    for i in range(40):
                        b = Box([k, i] + list(range(200)))
                        assert b.items[:2] == [k, i]
                        b.push(1)
                        assert b.items[-1] == 1 and len(b.items) == 203
                except BaseException as exc:
                    errors.append(repr(exc))
            threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            assert not errors, errors[:2]
        """),
    ),
]


@pytest.mark.slow
def test_a_warning_of_the_solutions_other_thread_is_not_raised_by_the_tests_call() -> None:
    # In-process the tests' "error" filter raises it in the worker, not in old_api()'s caller.
    wrong = _d("""
        import threading, warnings
        def old_api():
            t = threading.Thread(target=lambda: warnings.warn("old_api is deprecated"))
            t.start()
            t.join()
            return 1
    """)
    honest = _d("""
        import warnings
        def old_api():
            warnings.warn("old_api is deprecated")
            return 1
    """)
    tests = _d("""
        import pytest, warnings
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with pytest.raises(UserWarning):
                old_api()
    """)
    assert reference_verdict(wrong, tests, None) == "failed"
    assert (run_tests(honest, tests).status, run_tests(wrong, tests).status) == ("passed", "failed")


#: Coroutines awaited across the wire run at once, as in-process on one loop (session 29):
#: (name, solution, tests). Each passes in-process; each failed when every await across the
#: wire held its loop until the other side's coroutine ended. No wall-clock bound: each
#: coroutine waits (polling, with a deadline) until the others it should overlap have started.
AWAITS = [
    (
        "the tests gather two of the solution's coroutines and both run at once",
        _d("""
            import asyncio, time
            active = peak = 0
            async def work(x):
                global active, peak
                active += 1
                peak = max(peak, active)
                deadline = time.monotonic() + 10
                while peak < 2 and time.monotonic() < deadline:
                    await asyncio.sleep(0.01)
                active -= 1
                return x * 2
            def peak_seen():
                return peak
        """),
        _d("""
            import asyncio
            async def main():
                return await asyncio.gather(work(1), work(2))
            assert asyncio.run(main()) == [2, 4]
            assert peak_seen() == 2
        """),
    ),
    (
        "wait_for times out a slow coroutine of the solution",
        _d("""
            import asyncio
            async def slow():
                await asyncio.sleep(2)
                return 1
        """),
        _d("""
            import asyncio
            async def main():
                try:
                    await asyncio.wait_for(slow(), 0.1)
                except asyncio.TimeoutError:
                    return "timeout"
                return "done"
            assert asyncio.run(main()) == "timeout"
        """),
    ),
    (
        "the solution's bounded gather runs three of the tests' coroutines at once",
        _d("""
            import asyncio
            async def bounded_map(fn, items, limit):
                sem = asyncio.Semaphore(limit)
                async def one(x):
                    async with sem:
                        return await fn(x)
                return await asyncio.gather(*(one(x) for x in items))
        """),
        _d("""
            import asyncio, time
            state = {"active": 0, "max": 0, "done": 0}
            async def fn(x):
                state["active"] += 1
                state["max"] = max(state["max"], state["active"])
                deadline = time.monotonic() + 2
                while state["active"] < 3 and state["done"] < 6 and time.monotonic() < deadline:
                    await asyncio.sleep(0.01)
                state["active"] -= 1
                state["done"] += 1
                return x * x
            assert asyncio.run(bounded_map(fn, range(9), 3)) == [x * x for x in range(9)]
            assert state["max"] == 3, state
        """),
    ),
]


def _judged_as_in_process(solution: str, tests: str, verdict: str) -> str:
    """The ``run_tests`` output tail, after asserting that running the tests in-process and
    ``run_tests`` both give ``verdict``."""
    assert reference_verdict(solution, tests, None) == verdict
    result = run_tests(solution, tests, timeout=60)
    assert result.status == verdict, result.stdout_tail
    return result.stdout_tail


HONEST = [*THREADS_COME_AND_GO, *CROSSING, *AWAITS]


@pytest.mark.slow
@pytest.mark.parametrize(("solution", "tests"), [c[1:] for c in HONEST],
                         ids=[c[0] for c in HONEST])  # fmt: skip
def test_honest_threaded_programs_get_the_in_process_verdict(solution: str, tests: str) -> None:
    _judged_as_in_process(solution, tests, "passed")


#: The head of a solution that writes frames of its own on the wire (its copy of the judge is
#: in its memory): ``frame(kind, body, channel)``.
_WIRE = JUDGE_WIRE + _d("""
    import sys, threading
    def frame(kind, body, channel):
        wire._send(wire._PEER.fd, kind, body, word=wire._U32.pack(channel))
""")


@pytest.mark.parametrize(
    ("channel", "reason"),
    [
        # Even channels are the judge's: 4 is open only once a second thread of the tests asks.
        (4, "not open"),
        # Odd ones are the solution's: a new one must start with a request.
        (3, "first message is no request"),
    ],
    ids=["a channel of the judge's it never opened", "a new channel of the solution's"],
)
def test_a_reply_forged_on_a_channel_fails_the_check(channel: int, reason: str) -> None:
    solution = _WIRE + _d(f"""
        def solve():
            frame(b"R", wire.encode(1), {channel})
            return 1
    """)
    result = run_tests(solution, "assert solve() == 1\n")
    assert result.status == "failed"
    assert reason in result.stdout_tail


@pytest.mark.slow
def test_more_channels_than_the_bound_fail_the_check_with_the_bound() -> None:
    # Reads of stdin (a request the judge serves on the channel's own thread), each on a new
    # channel: the judge starts a thread for each, up to MAX_CHANNELS.
    solution = _WIRE + _d(f"""
        import collections
        def solve():
            for n in range({_judge.MAX_CHANNELS + 1}):
                wire._PEER.inbox[2 * n + 1] = collections.deque()  # (the answers queue there)
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
    head = JUDGE_WIRE + _d("""
        import sys
        wire._Peer.word = lambda self, channel: wire._U32.pack(channel | wire._THREADED)
    """)
    honest = run_tests(head + "def f(x):\n    return x + 1\n", "assert f(1) == 2\n")
    wrong = run_tests(head + "def f(x):\n    return x\n", "assert f(1) == 2\n")
    assert (honest.status, wrong.status) == ("passed", "failed"), honest.stdout_tail


@pytest.mark.slow
def test_more_of_the_tests_threads_than_the_thread_limits_take_turns() -> None:
    # Each of the tests' threads calling the solution at once takes a channel of the judge's
    # (MAX_CHANNELS, past which a thread waits for one to close) and is served by a thread of
    # the solution's process, which RLIMIT_NPROC bounds (48 where the run's memory cgroup
    # holds it: past it a channel waits for a serving thread to end). A hundred threads wait
    # in the solution for a gate the tests' main thread opens: every call is answered.
    solution = _d("""
        import threading
        gate = threading.Event()
        def wait_for_gate():
            gate.wait()
            return 1
        def open_gate():
            gate.set()
    """)
    tests = _d("""
        import threading
        done = []
        threads = [threading.Thread(target=lambda: done.append(wait_for_gate()))
                   for _ in range(100)]
        for t in threads:
            t.start()
        open_gate()
        for t in threads:
            t.join()
        assert done == [1] * 100, len(done)
    """)
    _judged_as_in_process(solution, tests, "passed")
