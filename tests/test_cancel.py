"""The one cancellation module: off-loop ray.cancel, and a bounded follow-up of lost cancels."""

from __future__ import annotations

import asyncio
import os
import threading
import time
from typing import Any

import pytest
import ray

from asyncpool import _cancel
from asyncpool._cancel import _Book
from tests.conftest import SessionCluster, async_wait_for


@ray.remote(num_cpus=0)
def sleepy(seconds: float) -> float:
    time.sleep(seconds)
    return seconds


@ray.remote(num_cpus=0)
class AsyncNapper:
    async def nap(self, seconds: float) -> float:
        await asyncio.sleep(seconds)
        return seconds


def _cancelled(ref: ray.ObjectRef[Any]) -> bool:
    try:
        ray.get(ref, timeout=0)
    except ray.exceptions.TaskCancelledError:
        return True
    except Exception:
        return False
    return False


def test_the_follow_up_book_keeps_at_most_its_cap_and_counts_what_it_dropped(
    ray_cluster: SessionCluster,
) -> None:
    # Before issue 11 the follower kept every cancelled ref for 60 s, without a bound.
    book = _Book(cap=100)
    refs = [ray.put(i) for i in range(250)]
    for i, ref in enumerate(refs):
        book.add(ref, True, now=float(i) * 1e-3)
    assert len(book) == 100
    assert book.dropped == 150
    # The oldest were dropped first: what is left is the newest 100.
    due = book.due(now=10.0, limit=1000)
    assert [e.ref for e in due] == refs[150:]


def test_the_follow_up_checks_only_due_refs_with_backoff_until_the_horizon(
    ray_cluster: SessionCluster,
) -> None:
    # Before issue 11 every cancelled ref was re-checked every 0.5 s for 60 s (120 checks
    # each, all refs in every scan); here a ref is checked at 0.5, 1.5, 3.5, 7.5 s, then every
    # 8 s, and given up (counted) at the horizon.
    book = _Book(cap=10, first_delay=0.5, max_delay=8.0, horizon=60.0)
    first, second = ray.put(1), ray.put(2)
    book.add(first, True, now=0.0)
    book.add(second, True, now=0.4)
    assert book.due(now=0.45, limit=10) == []  # nothing is due yet: nothing is checked
    checks: dict[ray.ObjectRef[Any], list[float]] = {first: [], second: []}
    while len(book):
        now = book.next_due()
        assert now is not None
        for entry in book.due(now=now, limit=10):
            checks[entry.ref].append(round(now, 3))
            book.again(entry, now)  # never settles: a lost cancel
    assert checks[first] == [0.5, 1.5, 3.5, 7.5, 15.5, 23.5, 31.5, 39.5, 47.5, 55.5, 63.5]
    assert len(checks[second]) == 11
    assert book.expired == 2
    assert book.checked == 22


def test_a_followed_ref_that_settled_leaves_the_book(ray_cluster: SessionCluster) -> None:
    book = _Book(cap=10)
    ref = ray.put(1)
    book.add(ref, True, now=0.0)
    (entry,) = book.due(now=1.0, limit=10)
    book.settled(entry)
    assert len(book) == 0
    assert book.next_due() is None


@pytest.mark.asyncio
async def test_cancel_returns_once_issued_and_the_tasks_stop(
    ray_cluster: SessionCluster,
) -> None:
    refs = [sleepy.remote(60) for _ in range(4)]
    await _cancel.cancel(refs, force=True)
    await async_wait_for(lambda: all(_cancelled(r) for r in refs))
    # Settled refs leave the follow-up book at their first check (0.5 s after the cancel).
    book = _cancel._canceller()._book
    await async_wait_for(lambda: not any(r in book._entries for r in refs))


@pytest.mark.asyncio
async def test_cancels_wait_out_the_grace_and_skip_tasks_that_finished(
    ray_cluster: SessionCluster,
) -> None:
    # Ray 2.60 aborts the driver when a cancel meets a task's completion (see _cancel's
    # docstring): cancels are issued no sooner than the grace, and a task that has finished
    # by then never sees a ray.cancel (so it is not followed either).
    finished = sleepy.remote(0)
    assert await finished == 0
    running = sleepy.remote(60)
    asked = time.monotonic()
    await _cancel.cancel([finished, running], force=True)
    assert time.monotonic() - asked >= _cancel._GRACE_S
    book = _cancel._canceller()._book
    assert finished not in book._entries
    assert running in book._entries or _cancelled(running)
    await async_wait_for(lambda: _cancelled(running))
    assert ray.get(finished) == 0  # its result stands


@pytest.mark.asyncio
async def test_forcing_an_actor_task_falls_back_to_a_plain_cancel(
    ray_cluster: SessionCluster,
) -> None:
    actor = AsyncNapper.remote()  # type: ignore[attr-defined]
    try:
        assert await actor.nap.remote(0) == 0
        ref = actor.nap.remote(60)
        await asyncio.sleep(0.2)
        await _cancel.cancel([ref], force=True)  # Ray refuses force for actor tasks
        await async_wait_for(lambda: _cancelled(ref))
        assert await actor.nap.remote(0) == 0  # the actor itself lives on
    finally:
        ray.kill(actor)


# A property of the canceller thread, not of the loop (20,000 puts cost seconds): one loop.
@pytest.mark.one_loop
@pytest.mark.asyncio
@pytest.mark.slow
async def test_request_returns_at_once_for_a_storm_issuing_nothing_on_the_callers_thread(
    ray_cluster: SessionCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    refs = [ray.put(i) for i in range(20_000)]  # put objects: Ray refuses, quietly
    # The Ray calls a cancellation makes about these refs (a readiness look, then ray.cancel
    # for what is still running), each recorded with the thread that made it. Other threads'
    # calls about other refs (the completion waiter's, say) are not this test's.
    ours = set(refs)
    callers: list[int] = []

    def recording(real: Any) -> Any:
        def call(first: Any, *args: Any, **kwargs: Any) -> Any:
            about = first if isinstance(first, list) else [first]
            if any(ref in ours for ref in about):
                callers.append(threading.get_ident())
            return real(first, *args, **kwargs)

        return call

    monkeypatch.setattr(ray, "cancel", recording(ray.cancel))
    monkeypatch.setattr(ray, "wait", recording(ray.wait))
    before = _cancel.stats()["issued"]
    here = threading.get_ident()
    _cancel.request(refs, force=True)
    # "At once" is what the caller's thread did: queue the refs, no Ray call of its own.
    assert here not in callers
    assert len(_cancel.helper_threads()) == 1
    await async_wait_for(lambda: _cancel.stats()["issued"] >= before + len(refs))
    assert callers, "the canceller looked at none of the refs"
    assert set(callers) == {_cancel.helper_threads()[0].ident}
    issued = _cancel.stats()["issued"]
    await _cancel.cancel([ray.put(0)], force=False)
    assert _cancel.stats()["issued"] >= issued + 1


def test_a_forked_child_starts_with_a_fresh_canceller(ray_cluster: SessionCluster) -> None:
    _cancel._canceller()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        os.write(write, b"fresh" if _cancel._CANCELLER.peek() is None else b"stale")
        os._exit(0)
    os.close(write)
    answer = os.read(read, 16)
    os.close(read)
    os.waitpid(pid, 0)
    assert answer == b"fresh"
