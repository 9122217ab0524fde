"""The completion core against the real session cluster: one thread, batched hand-over."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import textwrap
import threading
import time
from typing import Any

import pytest
import ray

from asyncpool import _completion
from asyncpool._completion import Item, subscribe
from tests._typing import remote_task
from tests.conftest import SessionCluster, async_wait_for


@remote_task(num_cpus=0)  # defaulted parameters: see tests/_typing.py
def sleepy(value: object, seconds: float = 0.0) -> object:
    time.sleep(seconds)
    return value


@ray.remote(num_cpus=0)
def raise_key_error(key: str) -> None:
    raise KeyError(key)


class _Collector:
    def __init__(self) -> None:
        self.items: dict[int, tuple[Any, bool]] = {}
        self.calls = 0
        self.threads: set[int] = set()
        self.done = asyncio.Event()
        self.expect = 0

    def __call__(self, batch: list[Item]) -> None:
        self.calls += 1
        self.threads.add(threading.get_ident())
        for position, value, is_error in batch:
            assert position not in self.items, f"position {position} delivered twice"
            self.items[position] = (value, is_error)
        if len(self.items) >= self.expect:
            self.done.set()


@pytest.mark.asyncio
async def test_every_position_is_delivered_once_on_the_loop_with_user_error_types(
    ray_cluster: SessionCluster,
) -> None:
    shared = sleepy.remote("shared", 0.2)
    refs: list[ray.ObjectRef[Any]] = [
        sleepy.remote(0), raise_key_error.remote("k"), shared, sleepy.remote(3, 0.1), shared
    ]
    got = _Collector()
    got.expect = len(refs)
    sub = subscribe(refs, got)
    await got.done.wait()
    assert got.items[0] == (0, False)
    value, is_error = got.items[1]
    assert is_error
    assert isinstance(value, KeyError)
    assert got.items[2] == got.items[4] == ("shared", False)
    assert got.items[3] == (3, False)
    assert got.threads == {threading.get_ident()}
    assert sub.pending == 0
    assert sub.close() == []


@pytest.mark.asyncio
async def test_refs_ready_together_reach_the_loop_in_one_batch(
    ray_cluster: SessionCluster,
) -> None:
    refs = [ray.put(i) for i in range(2000)]
    got = _Collector()
    got.expect = len(refs)
    subscribe(refs, got)
    await got.done.wait()
    assert [got.items[i][0] for i in range(2000)] == list(range(2000))
    assert got.calls == 1


# The helper-thread count is the core's property, not the loop's (delivery to each loop is
# checked on both by the lighter tests above): one loop. 20 refs, each shared by 100
# subscriptions: the 2,000 subscriptions are the point, the worker processes Ray starts for
# each concurrent zero-CPU task are not.
@pytest.mark.one_loop
@pytest.mark.asyncio
@pytest.mark.slow
async def test_two_thousand_subscriptions_share_one_helper_thread(
    ray_cluster: SessionCluster,
) -> None:
    before = threading.active_count()
    refs = [sleepy.remote(i, 0.5) for i in range(20)]
    collectors = []
    subs = []
    for i in range(2000):
        got = _Collector()
        got.expect = 1
        collectors.append(got)
        subs.append(subscribe([refs[i % len(refs)]], got))
    assert threading.active_count() - before <= 1
    assert len(_completion.helper_threads()) == 1
    await asyncio.gather(*(c.done.wait() for c in collectors))
    assert all(c.items[0] == (i % len(refs), False) for i, c in enumerate(collectors))
    assert threading.active_count() - before <= 1


@pytest.mark.asyncio
async def test_close_returns_what_was_not_delivered_and_stops_delivery(
    ray_cluster: SessionCluster,
) -> None:
    fast = ray.put("fast")
    slow = [sleepy.remote(None, 30) for _ in range(2)]
    got = _Collector()
    got.expect = 1
    sub = subscribe([slow[0], fast, slow[1]], got)
    await got.done.wait()
    assert sub.pending == 2
    assert sub.close() == [0, 2]
    assert sub.close() == []  # idempotent
    ray.cancel(slow[0], force=True)
    ray.cancel(slow[1], force=True)
    await asyncio.sleep(0.3)
    assert list(got.items) == [1]


@pytest.mark.asyncio
async def test_a_new_subscription_is_picked_up_while_others_wait(
    ray_cluster: SessionCluster,
) -> None:
    long = [sleepy.remote(None, 30) for _ in range(3)]
    waiting = subscribe(long, _Collector())
    try:
        await asyncio.sleep(0.1)  # the thread is now blocked in ray.wait on the long ones
        got = _Collector()
        got.expect = 1
        started = time.monotonic()
        subscribe([ray.put(5)], got)
        await got.done.wait()
        # A missed wake would deliver it only when the helper's ray.wait on the long ones
        # returns, at their end (30 s); a slice is milliseconds.
        assert time.monotonic() - started < 30
        assert got.items[0] == (5, False)
    finally:
        for ref in long:
            ray.cancel(ref, force=True)
        waiting.close()


@pytest.mark.asyncio
async def test_each_loop_gets_its_own_results(ray_cluster: SessionCluster) -> None:
    """A subscriber on another thread's loop is served there, not on the caller's loop."""
    other_results: dict[str, Any] = {}

    def other_thread() -> None:
        async def main() -> None:
            got = _Collector()
            got.expect = 2
            subscribe([sleepy.remote("a", 0.1), ray.put("b")], got)
            await got.done.wait()
            other_results["items"] = dict(got.items)
            other_results["threads"] = got.threads

        asyncio.run(main())
        other_results["ident"] = threading.get_ident()

    thread = threading.Thread(target=other_thread)
    thread.start()
    got = _Collector()
    got.expect = 1
    subscribe([sleepy.remote("here", 0.1)], got)
    await got.done.wait()
    await asyncio.to_thread(thread.join, 60)
    assert got.items == {0: ("here", False)}
    assert got.threads == {threading.get_ident()}
    assert other_results["items"] == {0: ("a", False), 1: ("b", False)}
    assert other_results["threads"] == {other_results["ident"]}


def test_a_forked_child_starts_with_a_fresh_core(ray_cluster: SessionCluster) -> None:
    _completion._core()  # the parent has one
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        os.write(write, b"fresh" if _completion._CORE.peek() is None else b"stale")
        os._exit(0)
    os.close(write)
    answer = os.read(read, 16)
    os.close(read)
    os.waitpid(pid, 0)
    assert answer == b"fresh"


_SHUTDOWN_SCRIPT = textwrap.dedent(
    """
    import asyncio, time, ray
    from asyncpool import _completion
    from asyncpool._completion import subscribe
    from asyncpool.errors import AsyncPoolError

    @ray.remote(num_cpus=0)
    def slow():
        time.sleep(60)

    async def main():
        got = []
        ray.init(address=ADDRESS, log_to_driver=False)
        ref = slow.remote()
        SUBSCRIBE
        await asyncio.sleep(0.5)
        ray.shutdown()
        deadline = time.monotonic() + 30
        while not got and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        position, error, is_error = got[0]
        assert is_error, got
        assert isinstance(error, AsyncPoolError), got
        assert "shut down" in str(error), error
        # Neither helper thread reconnects Ray behind the user's back.
        from asyncpool import _cancel
        _cancel.request([ref], force=True)
        await asyncio.sleep(1.0)
        assert not ray.is_initialized()
        # The core reset: a new session is served again.
        ray.init(address=ADDRESS, log_to_driver=False)
        again = []
        subscribe([ray.put(7)], again.extend)
        while not again and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        assert again == [(0, 7, False)], again
        ray.shutdown()
        print("OK")

    asyncio.run(main())
    """
)


_SCANNED = "subscribe([ref], got.extend)"
# A pool's slot: Ray's per-ref callback serves it, which a shutdown may never call.
_CALLED_BACK = (
    "sub = subscribe([], got.extend, prompt=True); sub.extend([ref]); "
    "core = _completion._core(); assert sub._called and not core._watch"
)


@pytest.mark.parametrize(
    "route",
    [  # each starts and shuts down a Ray of its own: one route in the default tier
        pytest.param(_SCANNED, id="scanned", marks=pytest.mark.slow),
        pytest.param(_CALLED_BACK, id="called_back"),
    ],
)
def test_ray_shut_down_under_the_core_fails_pending_subscribers_clearly_and_is_not_restarted(
    ray_cluster: SessionCluster, route: str
) -> None:
    script = _SHUTDOWN_SCRIPT.replace("ADDRESS", repr(ray_cluster.address))
    script = script.replace("SUBSCRIBE", route)
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "OK" in done.stdout


@pytest.mark.asyncio
async def test_the_waiter_sleeps_when_nothing_is_pending(ray_cluster: SessionCluster) -> None:
    got = _Collector()
    got.expect = 1
    subscribe([ray.put(1)], got)
    await got.done.wait()
    (thread,) = _completion.helper_threads()
    await async_wait_for(lambda: not _completion._core()._watch)
    # Sleeping on its condition: no CPU spent while nothing is pending.
    ident = thread.ident
    assert ident is not None
    cpu = time.clock_gettime(time.pthread_getcpuclockid(ident))
    await asyncio.sleep(0.5)
    assert time.clock_gettime(time.pthread_getcpuclockid(ident)) - cpu < 0.01


@pytest.mark.asyncio
async def test_waiters_of_one_shared_ref_can_leave_while_the_others_stay(
    ray_cluster: SessionCluster,
) -> None:
    shared = sleepy.remote("v", 0.5)
    collectors = [_Collector() for _ in range(4000)]
    subs = []
    for got in collectors:
        got.expect = 1
        subs.append(subscribe([shared], got))
    for sub in subs[::2]:
        assert sub.close() == [0]  # still pending when it left
    await asyncio.gather(*(c.done.wait() for c in collectors[1::2]))
    assert all(c.items == {0: ("v", False)} for c in collectors[1::2])
    assert all(not c.items for c in collectors[::2])


@pytest.mark.asyncio
async def test_an_extended_subscription_numbers_new_refs_on_and_streams_only_while_it_waits(
    ray_cluster: SessionCluster,
) -> None:
    """``extend`` is how one subscription serves every call of a pool: positions continue
    from the last, a ref given twice gets both, and the subscription counts as a streaming
    waiter only while it has positions (the core's early-batch policy reads that count).
    Read on the subscription's own mark, not the core's total: other tests' subscriptions may
    still be settling in the same core."""
    got = _Collector()
    sub = subscribe([], got)
    assert not sub._counted
    a, b = ray.put("a"), ray.put("b")
    got.expect = 3
    assert sub.extend([a, b, a]) == 0
    await got.done.wait()
    # Ready together, registered together: one batch, one call.
    assert got.calls == 1
    assert got.items == {0: ("a", False), 1: ("b", False), 2: ("a", False)}
    assert not sub._counted  # uncounted under the lock before the batch was posted

    slow = sleepy.remote("c", 0.3)
    got.done.clear()
    got.expect = 4
    assert sub.extend([slow]) == 3
    assert sub.pending == 1
    assert sub._counted
    await got.done.wait()
    assert got.items[3] == ("c", False)
    assert not sub._counted
    assert sub.close() == []
    with pytest.raises(RuntimeError, match="closed"):
        sub.extend([a])
    assert not sub._counted


@pytest.mark.asyncio
async def test_a_subscription_of_another_processs_core_is_not_usable() -> None:
    """A pool's engine keeps one subscription across calls; one made before a ``fork`` belongs
    to the parent's core, whose thread the child does not have, so the engine makes another."""
    got = _Collector()
    here = subscribe([], got)
    assert here.usable
    inherited = _completion.Subscription(_completion._Core(), [], got, asyncio.get_running_loop(),
                                         everything=False)  # fmt: skip
    assert not inherited.usable
    here.close()
    assert not here.usable


def test_the_scan_plan_serves_a_prompt_subscriber_per_result_and_a_finite_stream_in_batches() -> (
    None
):
    """The core's scan policy, as pure logic: who gets each result at once, who in batches."""
    plan = _completion._plan
    # Nothing flowing: any stream blocks for its first result; gathers alone never do.
    assert plan(10, flowing=False, idle=0, streaming=True, prompting=False)[0]
    assert not plan(10, flowing=False, idle=0, streaming=False, prompting=False)[0]
    # Results flowing from a few pending refs: a prompt subscriber (a pool's slots) still gets
    # each as it finishes; a finite stream (as_completed) a slice's worth at a time.
    assert plan(10, flowing=True, idle=0, streaming=True, prompting=True) == (
        True, _completion._FLOOR_S, None
    )  # fmt: skip
    assert plan(10, flowing=True, idle=0, streaming=True, prompting=False) == (
        False, _completion._FLOOR_S, None
    )  # fmt: skip
    # Flowing from many: batches of an eighth, held at most 20 ms for a prompt subscriber,
    # 50 ms otherwise.
    assert plan(2000, flowing=True, idle=0, streaming=True, prompting=True) == (
        False, _completion._BATCH_MAX_S, 250
    )  # fmt: skip
    assert plan(2000, flowing=True, idle=0, streaming=True, prompting=False) == (
        False, _completion._GATHER_MAX_S, 250
    )  # fmt: skip
    # A batched pool's few dozen calls (ActorPool(batch_size=8) at 512 items: 64 calls)
    # are many enough: batches; one fewer than the threshold, per result.
    many = _completion._BATCH_MIN_REFS
    assert many <= 64
    assert plan(many, flowing=True, idle=0, streaming=True, prompting=True)[::2] == (
        False, many // 8
    )  # fmt: skip
    assert plan(many - 1, flowing=True, idle=0, streaming=True, prompting=True)[::2] == (
        True, None
    )  # fmt: skip
    # Idle: the blocking wait stretches, up to its bound.
    waits = [plan(10, flowing=False, idle=i, streaming=True, prompting=True)[1] for i in range(9)]
    assert waits == sorted(waits)
    assert waits[0] == _completion._FLOOR_S
    assert waits[-1] == _completion._IDLE_MAX_S


@pytest.mark.asyncio
async def test_only_a_stream_can_be_prompt_and_it_counts_as_prompt_only_while_it_waits(
    ray_cluster: SessionCluster,
) -> None:
    core = _completion._core()
    gather = subscribe([], _Collector(), everything=True, prompt=True)
    assert not gather._prompt  # a gather wants everything at once: never prompt
    got = _Collector()
    got.expect = 1
    stream = subscribe([], got, prompt=True)
    slow = sleepy.remote("p", 0.3)
    stream.extend([slow])
    with core.lock:  # read under the lock, asserted outside it (see _callback_state)
        counted, prompting = stream._counted, core._prompting
    assert counted
    assert prompting >= 1  # other tests' subscriptions may still be settling
    await got.done.wait()
    assert not stream._counted
    assert stream.close() == []
    assert gather.close() == []


def _callback_state(core: _completion._Core, sub: _completion.Subscription) -> tuple[int, bool]:
    """How many of ``sub``'s refs Ray's callback serves, and whether the core lists it so:
    read under the core's lock, asserted outside it (a failed assertion's message takes the
    subscription's ``repr``, which takes the lock)."""
    with core.lock:
        return len(sub._called), sub in core._called_subs


@pytest.mark.asyncio
async def test_a_prompt_subscriptions_first_refs_are_called_back_by_ray_and_the_rest_scanned(
    ray_cluster: SessionCluster,
) -> None:
    """A pool's few slots are served by Ray's per-ref callback (what ``await ref`` uses: no
    scan slice between a result and its hand-over); past ``_CALLBACK_MAX`` refs pending in the
    process, by the scans. Both routes deliver every position once, on the loop, with the
    user's error type, a ref given twice to both its positions."""
    core = _completion._core()
    got = _Collector()
    sub = subscribe([], got, prompt=True)
    n = _completion._CALLBACK_MAX + 4
    refs: list[ray.ObjectRef[Any]] = [sleepy.remote(i, 0.3) for i in range(n - 2)]
    refs += [raise_key_error.remote("k"), refs[0]]
    got.expect = n
    assert sub.extend(refs) == 0
    with core.lock:
        called = len(sub._called)
        scanned = sum(1 for subs in core._watch.values() if sub in subs)
        total = core._called_total
    assert total <= _completion._CALLBACK_MAX
    # Earlier tests' refs still settling take from the bound, so not exactly _CALLBACK_MAX.
    assert 1 <= called <= _completion._CALLBACK_MAX
    assert called + scanned == n - 1  # the duplicate is one ref
    await got.done.wait()
    assert got.threads == {threading.get_ident()}
    assert [got.items[i] for i in range(n - 2)] == [(i, False) for i in range(n - 2)]
    value, is_error = got.items[n - 2]
    assert is_error
    assert isinstance(value, KeyError)
    assert got.items[n - 1] == (0, False)
    assert _callback_state(core, sub) == (0, False)
    assert sub.close() == []


@pytest.mark.asyncio
async def test_closing_a_subscription_releases_its_called_back_refs_and_ignores_their_callbacks(
    ray_cluster: SessionCluster,
) -> None:
    core = _completion._core()
    got = _Collector()
    sub = subscribe([], got, prompt=True)
    refs = [sleepy.remote(i, 0.5) for i in range(2)]
    sub.extend(refs)
    assert _callback_state(core, sub) == (2, True)
    with core.lock:
        total = core._called_total
    assert sub.close() == [0, 1]
    assert _callback_state(core, sub) == (0, False)
    with core.lock:
        assert core._called_total == total - 2
    await asyncio.wait_for(asyncio.gather(*(asyncio.wrap_future(r.future()) for r in refs)), 30)
    await asyncio.sleep(0.1)  # one more loop turn for a (wrong) delivery to land
    assert got.calls == 0


@pytest.mark.asyncio
async def test_a_prompt_ref_is_scanned_while_many_refs_are_pending_in_the_process(
    ray_cluster: SessionCluster,
) -> None:
    """The callback is for a pool's few slots: with many refs pending (another subscriber's
    here; a wide pool's own), a scan per batch costs less than a callback per ref."""
    core = _completion._core()
    many = [sleepy.remote(i, 0.5) for i in range(_completion._CALLBACK_MAX)]
    stream = _Collector()
    stream.expect = len(many)
    subscribe(many, stream)
    got = _Collector()
    got.expect = 1
    sub = subscribe([], got, prompt=True)
    ref = sleepy.remote("late", 0.1)
    sub.extend([ref])
    assert _callback_state(core, sub) == (0, False)
    with core.lock:
        scanned = sub in core._watch[ref]
    assert scanned
    await got.done.wait()
    assert got.items == {0: ("late", False)}
    await stream.done.wait()
    assert sub.close() == []
