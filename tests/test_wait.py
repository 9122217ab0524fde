"""``asyncpool.wait``: ``ray.wait``'s contract, awaitable, on the shared completion core.

The refs come from a gate actor whose calls finish only when the test opens their key, so which
refs are ready is set by the test, never by timing. Every test runs on the session cluster.
"""

from __future__ import annotations

import asyncio
import math
import threading
import time
from collections.abc import Iterator
from typing import Any

import anyio
import numpy as np
import pytest
import ray
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

import asyncpool
from asyncpool import _completion
from tests._gate import Gate
from tests.conftest import SessionCluster, async_wait_for

Ref = Any  # ray.ObjectRef[Any]


@ray.remote(num_cpus=0)
def raise_key_error(key: str) -> None:
    raise KeyError(key)


@ray.remote(num_cpus=0)
def payload(megabytes: int) -> np.ndarray[Any, Any]:
    """An object large enough for the plasma store of the node that ran it."""
    return np.ones(megabytes * 2**20, dtype=np.uint8)


@pytest.fixture
def gate(ray_cluster: SessionCluster) -> Iterator[Any]:
    actor = Gate.remote()  # type: ignore[attr-defined]
    yield actor
    ray.kill(actor)


def held(gate: Any, n: int, prefix: str = "k") -> list[Ref]:
    """``n`` refs; ref i is ready once key ``f"{prefix}{i}"`` is opened, its value is i."""
    return [gate.hold.remote(f"{prefix}{i}", i) for i in range(n)]


def open_keys(gate: Any, *keys: str) -> None:
    ray.get(gate.open.remote(*keys))


def watched(refs: list[Ref]) -> set[Ref]:
    """Which of ``refs`` the completion core still watches."""
    core = _completion._core()
    with core.lock:
        return {ref for ref in refs if ref in core._watch}


def open_waits() -> int:
    """Readiness-only subscriptions (``wait``'s) the completion core holds open."""
    core = _completion._core()
    with core.lock:
        return len(core._bare)


# --------------------------------------------------------------------------- first k


@pytest.mark.asyncio
async def test_returns_the_first_ready_refs_in_input_order_and_the_rest_as_not_ready(
    gate: Any,
) -> None:
    refs = held(gate, 5)
    open_keys(gate, "k3", "k1")
    ready, not_ready = await asyncio.wait_for(asyncpool.wait(refs, num_returns=2), 60)
    assert ready == [refs[1], refs[3]]
    assert not_ready == [refs[0], refs[2], refs[4]]
    open_keys(gate, "k0", "k2", "k4")


@pytest.mark.asyncio
async def test_ready_holds_at_most_num_returns_refs_the_first_ready_in_input_order(
    gate: Any,
) -> None:
    refs = held(gate, 6)
    open_keys(gate, "k0", "k1", "k2", "k4")
    await asyncpool.gather([refs[i] for i in (0, 1, 2, 4)])  # all four ready now
    given = refs[::-1]  # input order differs from creation order
    ready, not_ready = await asyncio.wait_for(asyncpool.wait(given, num_returns=2), 60)
    assert ready == [refs[4], refs[2]]
    assert not_ready == [refs[5], refs[3], refs[1], refs[0]]
    open_keys(gate, "k3", "k5")


@pytest.mark.asyncio
async def test_waits_until_num_returns_are_ready_and_not_before(gate: Any) -> None:
    refs = held(gate, 3)
    task = asyncio.ensure_future(asyncpool.wait(refs, num_returns=3))
    open_keys(gate, "k0", "k2")
    await asyncpool.gather([refs[0], refs[2]])
    await async_wait_for(lambda: watched(refs) == {refs[1]})
    assert not task.done()  # two of three ready, both seen by the core: still waiting
    open_keys(gate, "k1")
    ready, not_ready = await asyncio.wait_for(task, 60)
    assert (ready, not_ready) == (refs, [])


@pytest.mark.asyncio
async def test_a_failed_tasks_ref_counts_as_ready_and_nothing_is_raised(gate: Any) -> None:
    failing = raise_key_error.remote("boom")
    pending = held(gate, 1)
    ready, not_ready = await asyncio.wait_for(asyncpool.wait([pending[0], failing]), 60)
    assert (ready, not_ready) == ([failing], pending)
    with pytest.raises(KeyError):
        await asyncpool.resolve(failing)
    open_keys(gate, "k0")


@pytest.mark.asyncio
async def test_an_empty_list_gives_two_empty_lists(ray_cluster: SessionCluster) -> None:
    assert await asyncpool.wait([]) == ([], [])


# --------------------------------------------------------------------------- timeout


@pytest.mark.asyncio
async def test_timeout_returns_the_partial_split_without_raising_or_cancelling(
    gate: Any,
) -> None:
    refs = held(gate, 3)
    open_keys(gate, "k1")
    start = time.monotonic()
    ready, not_ready = await asyncio.wait_for(asyncpool.wait(refs, num_returns=2, timeout=0.5), 60)
    # It waited for the timeout, not only for the one ready ref (that would be ~0 s). Not
    # ">= 0.5" by time.monotonic(): uvloop's timers count whole milliseconds of libuv's cached
    # loop time, so a 0.5 s timer may end a little before 0.5 s of this clock (a clean-clone
    # run saw 0.49995 s; a 10.5 ms timer measured here fired after 9.7 ms).
    assert time.monotonic() - start >= 0.45
    assert (ready, not_ready) == ([refs[1]], [refs[0], refs[2]])
    assert watched(refs) == set()  # the subscription is released
    open_keys(gate, "k0", "k2")
    assert await asyncpool.gather(refs, timeout=60) == [0, 1, 2]  # nothing was cancelled


@pytest.mark.asyncio
async def test_timeout_zero_answers_without_suspending_with_what_is_ready(gate: Any) -> None:
    refs = held(gate, 3)
    open_keys(gate, "k2")
    await asyncpool.resolve(refs[2])
    coro = asyncpool.wait(refs, num_returns=2, timeout=0)
    with pytest.raises(StopIteration) as done:
        coro.send(None)  # finishes in its first step: it never waits
    assert done.value.value == ([refs[2]], [refs[0], refs[1]])
    assert watched(refs) == set()  # a poll subscribes nothing
    open_keys(gate, "k0", "k1")


@pytest.mark.asyncio
async def test_anyio_fail_after_raises_timeout_and_leaves_the_refs_alone(gate: Any) -> None:
    refs = held(gate, 2)
    with pytest.raises(TimeoutError):
        with anyio.fail_after(0.3):
            await asyncpool.wait(refs)
    assert watched(refs) == set()
    open_keys(gate, "k0", "k1")
    assert await asyncpool.gather(refs, timeout=60) == [0, 1]


# --------------------------------------------------------------------------- fetch_local


def _locations(ref: Ref) -> list[str]:
    found = ray.experimental.get_object_locations([ref], timeout_ms=30_000)
    return list(found.get(ref, {}).get("node_ids") or [])


@pytest.mark.asyncio
async def test_fetch_local_false_pulls_nothing_to_the_drivers_node(
    ray_cluster: SessionCluster,
) -> None:
    here = ray.get_runtime_context().get_node_id()
    there = next(n for n in ray_cluster.worker_node_ids if n != here)
    on_there = payload.options(
        scheduling_strategy=NodeAffinitySchedulingStrategy(there, soft=False)
    )
    remote, control = on_there.remote(4), on_there.remote(4)

    ready, not_ready = await asyncio.wait_for(asyncpool.wait([remote], fetch_local=False), 60)
    assert (ready, not_ready) == ([remote], [])

    async def where(ref: Ref) -> list[str]:
        """The nodes holding a copy, once the owner has heard of one (it may lag the task)."""
        deadline = time.monotonic() + 30
        while not (nodes := await asyncio.to_thread(_locations, ref)):
            assert time.monotonic() < deadline, "no location reported for the object"
            await asyncio.sleep(0.05)
        return nodes

    assert there in await where(remote)
    assert here not in await where(remote)

    # The control: fetch_local=True brings its twin here (so a pull would have been seen).
    ready, _ = await asyncio.wait_for(asyncpool.wait([control], fetch_local=True), 60)
    assert ready == [control]
    deadline = time.monotonic() + 30
    while here not in await where(control):
        assert time.monotonic() < deadline, "fetch_local=True never pulled the object here"
        await asyncio.sleep(0.05)
    assert here not in await where(remote)


@pytest.mark.asyncio
async def test_fetch_local_false_and_true_give_the_same_split_for_objects_on_this_node(
    gate: Any,
) -> None:
    refs = held(gate, 3)
    open_keys(gate, "k0")
    for fetch_local in (False, True):
        got = await asyncio.wait_for(asyncpool.wait(refs, fetch_local=fetch_local), 60)
        assert got == ([refs[0]], refs[1:])
    open_keys(gate, "k1", "k2")


# --------------------------------------------------------------------------- scale


@pytest.mark.slow
@pytest.mark.one_loop
@pytest.mark.asyncio
async def test_ten_thousand_concurrent_waits_add_no_thread(gate: Any) -> None:
    refs = held(gate, 10)
    warm = held(gate, 1, prefix="warm")
    open_keys(gate, "warm0")
    await asyncpool.wait(warm)  # the completion core's thread exists from here on
    before = threading.active_count()

    n = 10_000
    tasks = [
        asyncio.ensure_future(asyncpool.wait([refs[i % 10], refs[(i + 1) % 10]])) for i in range(n)
    ]
    await async_wait_for(lambda: open_waits() >= n)
    assert threading.active_count() <= before
    assert len(_completion.helper_threads()) == 1
    assert not any(t.done() for t in tasks)

    open_keys(gate, "k3")
    # The waits whose pair holds ref 3 (i % 10 in {2, 3}: a fifth) finish; the rest wait on.
    first = [t for i, t in enumerate(tasks) if i % 10 in (2, 3)]
    rest = [t for i, t in enumerate(tasks) if i % 10 not in (2, 3)]
    results = await asyncio.wait_for(asyncio.gather(*first), 120)
    for ready, not_ready in results:
        assert ready == [refs[3]]
        assert len(not_ready) == 1
        assert not_ready[0] is not refs[3]
    assert len(results) == n // 5
    assert not any(t.done() for t in rest)
    assert threading.active_count() <= before
    open_keys(gate, *(f"k{i}" for i in range(10)))
    for ready, not_ready in await asyncio.wait_for(asyncio.gather(*rest), 120):
        assert len(ready) == 1
        assert len(not_ready) == 1
    assert open_waits() == 0
    assert watched(refs) == set()


@pytest.mark.asyncio
async def test_many_concurrent_waits_on_shared_refs_each_get_their_own_answer(
    gate: Any,
) -> None:
    refs = held(gate, 4)
    before = threading.active_count()
    tasks = [asyncio.ensure_future(asyncpool.wait(refs, num_returns=1 + i % 2)) for i in range(400)]
    await async_wait_for(lambda: open_waits() >= 400)
    assert threading.active_count() <= max(before, 1 + len(_completion.helper_threads()))
    open_keys(gate, "k2")
    await async_wait_for(lambda: sum(t.done() for t in tasks) == 200)
    open_keys(gate, "k0")
    results = await asyncio.wait_for(asyncio.gather(*tasks), 60)
    for i, (ready, not_ready) in enumerate(results):
        if i % 2 == 0:
            assert (ready, not_ready) == ([refs[2]], [refs[0], refs[1], refs[3]])
        else:
            assert (ready, not_ready) == ([refs[0], refs[2]], [refs[1], refs[3]])
    assert open_waits() == 0
    open_keys(gate, "k1", "k3")


# --------------------------------------------------------------------------- cancellation


@pytest.mark.asyncio
async def test_cancelling_a_wait_releases_its_subscription_and_cancels_no_ray_work(
    gate: Any,
) -> None:
    refs = held(gate, 3)
    task = asyncio.ensure_future(asyncpool.wait(refs, num_returns=3))
    await async_wait_for(lambda: watched(refs) == set(refs))
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert watched(refs) == set()
    open_keys(gate, "k0", "k1", "k2")
    # Still running when cancelled, and they finish with their values: none was cancelled.
    assert await asyncpool.gather(refs, timeout=60) == [0, 1, 2]
    assert await asyncpool.wait(refs, num_returns=3) == (refs, [])


@pytest.mark.asyncio
async def test_a_cancelled_wait_leaves_another_wait_on_the_same_refs_untouched(
    gate: Any,
) -> None:
    refs = held(gate, 2)
    doomed = asyncio.ensure_future(asyncpool.wait(refs))
    kept = asyncio.ensure_future(asyncpool.wait(refs, num_returns=2))
    await async_wait_for(lambda: open_waits() >= 2)
    doomed.cancel()
    with pytest.raises(asyncio.CancelledError):
        await doomed
    assert watched(refs) == set(refs)  # still watched for the other wait
    open_keys(gate, "k0", "k1")
    assert await asyncio.wait_for(kept, 60) == (refs, [])


@pytest.mark.asyncio
async def test_a_value_subscriber_arriving_while_a_wait_gets_its_ref_still_gets_the_value(
    ray_cluster: SessionCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The core leaves a ref only ``wait`` watches unfetched; a ``gather`` of the same ref that
    subscribes between that decision and the hand-over must get the value, not ``None``."""
    ref = ray.put("value")
    loop = asyncio.get_running_loop()
    got: list[_completion.Item] = []
    arrived = asyncio.Event()
    late: list[_completion.Subscription] = []
    real_fetch = _completion._fetch

    def deliver(batch: list[_completion.Item]) -> None:
        got.extend(batch)
        arrived.set()

    def fetch_with_a_late_subscriber(ready: list[Ref]) -> list[tuple[Any, bool]]:
        # Runs on the core's thread between its two locked sections of the hand-over.
        if not late:
            late.append(_completion.subscribe([ref], deliver, loop=loop))
        return real_fetch(ready)

    monkeypatch.setattr(_completion, "_fetch", fetch_with_a_late_subscriber)
    assert await asyncio.wait_for(asyncpool.wait([ref]), 60) == ([ref], [])
    assert late, "the hand-over never fetched"
    await asyncio.wait_for(arrived.wait(), 60)
    assert got == [(0, "value", False)]
    late[0].close()


# --------------------------------------------------------------------------- bad input


def _bad_inputs(refs: list[Ref]) -> list[tuple[str, Any, dict[str, Any]]]:
    """``(what, refs argument, keyword arguments)`` that ``ray.wait`` refuses too."""
    return [
        ("a single ref", refs[0], {}),
        ("a tuple", tuple(refs), {}),
        ("a non-ref item", [refs[0], "x"], {}),
        ("duplicates", [refs[0], refs[0]], {}),
        ("num_returns 0", refs, {"num_returns": 0}),
        ("num_returns > len", refs, {"num_returns": len(refs) + 1}),
        ("a negative timeout", refs, {"timeout": -1}),
        ("a nan timeout", refs, {"timeout": math.nan}),
        ("a string timeout", refs, {"timeout": "1"}),
    ]


@pytest.mark.asyncio
async def test_bad_input_raises_what_ray_wait_raises_before_anything_is_watched(
    ray_cluster: SessionCluster,
) -> None:
    refs = [ray.put(i) for i in range(2)]
    for what, arg, kwargs in _bad_inputs(refs):
        with pytest.raises((TypeError, ValueError)) as theirs:
            ray.wait(arg, **kwargs)
        coro = asyncpool.wait(arg, **kwargs)
        with pytest.raises(type(theirs.value)) as ours:
            coro.send(None)  # raised in the first step, before any await
        assert type(ours.value) is type(theirs.value), what
        assert "must" in str(ours.value), what
        assert watched(refs) == set(), what


@pytest.mark.asyncio
async def test_bad_argument_types_are_type_errors_before_anything_is_watched(
    ray_cluster: SessionCluster,
) -> None:
    refs = [ray.put(i) for i in range(2)]

    @ray.remote(num_returns="streaming")
    def stream() -> Iterator[int]:
        yield 1

    generator = stream.remote()
    cases: list[tuple[Any, dict[str, Any], str]] = [
        ([refs[0], generator], {}, "as_completed"),
        (refs, {"num_returns": True}, "num_returns"),
        (refs, {"num_returns": 1.0}, "num_returns"),
        (refs, {"fetch_local": 1}, "fetch_local"),
        (refs, {"timeout": True}, "timeout"),
        ({"a": refs[0]}, {}, "list"),
    ]
    for arg, kwargs, named in cases:
        with pytest.raises(TypeError, match=named):
            await asyncpool.wait(arg, **kwargs)
    assert watched(refs) == set()
    assert await asyncpool.gather(generator) == [1]
