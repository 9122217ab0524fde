"""The server's batcher on a real TaskPool over the session's Ray cluster: concurrent jobs
coalesced into batched Ray tasks, each verdict routed to its own request, a failing item
failing alone, clients leaving, and closing.

The worker function here stands for the server's ``run_item``: it takes one ``(seq, kind,
job)`` item and echoes ``seq``; it also reports the Ray task it ran in, so that the tests can
see the batches themselves. The two heavier tests run on uvloop only (the server's loop);
the lighter ones keep both loops.
"""

from __future__ import annotations

import asyncio
import os
import random
import time
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
import ray

from asyncpool import TaskPool
from asyncpool.server._batcher import Batcher, ServerClosing
from tests.conftest import SessionCluster, async_wait_for

BATCH = 4


def judge(item: tuple[int, str, Any]) -> tuple[int, dict[str, Any]]:
    """``(seq, kind, job)``: ``sleep`` sleeps ``job`` ms, ``raise`` raises, ``die`` kills the
    worker; the outcome names the job and the Ray task that ran it."""
    seq, kind, job = item
    if kind == "raise":
        raise ValueError(f"bad item {job}")
    if kind == "sleep":
        time.sleep(job / 1000)
    if kind == "die":  # the worker process dies: the whole Ray task fails
        os._exit(1)
    return seq, {"job": job, "task": ray.get_runtime_context().get_task_id()}


@asynccontextmanager
async def running(pool: TaskPool[..., Any]) -> AsyncIterator[Batcher]:
    batcher = Batcher(pool)
    async with anyio.create_task_group() as tg:
        tg.start_soon(batcher.run)
        try:
            yield batcher
        finally:
            batcher.close()


@pytest.mark.asyncio
@pytest.mark.one_loop
async def test_concurrent_jobs_share_ray_tasks_and_each_gets_its_own_verdict(
    ray_cluster: SessionCluster,
) -> None:
    rng = random.Random(5)
    kinds = [rng.choice(["sleep", "sleep", "fast", "raise"]) for _ in range(40)]
    async with (
        TaskPool(judge, batch_size=BATCH, max_in_flight=2, num_cpus=0) as pool,
        running(pool) as batcher,
    ):
        tickets = [batcher.put(kind, i if kind != "sleep" else rng.randint(1, 40))
                   for i, kind in enumerate(kinds)]  # fmt: skip
        jobs = [t.job for t in tickets]
        results = await asyncio.gather(*(t.future for t in tickets), return_exceptions=True)
        assert batcher.queued == 0
        assert batcher.taken == 0
    tasks: Counter[str] = Counter()
    for kind, job, result in zip(kinds, jobs, results, strict=True):
        if kind == "raise":
            assert isinstance(result, ValueError)
            assert str(result).startswith(f"bad item {job}")
            continue
        assert isinstance(result, dict), result
        assert result["job"] == job
        tasks[result["task"]] += 1
    # Batched: fewer Ray tasks than items, none carrying more than the batch size.
    assert max(tasks.values()) <= BATCH
    assert len(tasks) < sum(tasks.values())


@pytest.mark.asyncio
async def test_a_lone_job_is_sent_without_waiting_for_a_full_batch(
    ray_cluster: SessionCluster,
) -> None:
    async with (
        TaskPool(judge, batch_size=64, max_in_flight=2, num_cpus=0) as pool,
        running(pool) as batcher,
    ):
        for i in range(3):  # one at a time: each is a batch of one, sent after the linger
            ticket = batcher.put("fast", i)
            assert (await ticket.future)["job"] == i


@pytest.mark.asyncio
async def test_a_batch_that_fails_as_a_whole_gives_its_error_to_each_of_its_jobs(
    ray_cluster: SessionCluster,
) -> None:
    async with (
        TaskPool(judge, batch_size=BATCH, max_in_flight=1, retries=0, num_cpus=0) as pool,
        running(pool) as batcher,
    ):
        doomed = [batcher.put("die" if i == 2 else "fast", i) for i in range(BATCH)]
        errors = await asyncio.gather(*(t.future for t in doomed), return_exceptions=True)
        after = batcher.put("fast", "after")  # the map goes on
        assert (await after.future)["job"] == "after"
    assert all(isinstance(e, Exception) for e in errors), errors
    assert len({type(e) for e in errors}) == 1, errors  # one error, delivered to each


@pytest.mark.asyncio
async def test_a_job_that_leaves_drops_its_verdict_and_the_rest_of_its_batch_completes(
    ray_cluster: SessionCluster,
) -> None:
    async with (
        TaskPool(judge, batch_size=BATCH, max_in_flight=1, num_cpus=0) as pool,
        running(pool) as batcher,
    ):
        tickets = [batcher.put("sleep", 300) for _ in range(BATCH)]
        await async_wait_for(lambda: batcher.taken == BATCH)
        batcher.leave(tickets[1])
        results = await asyncio.gather(*(t.future for i, t in enumerate(tickets) if i != 1))
        assert all(r["job"] == 300 for r in results)
        assert tickets[1].future.cancelled()
        assert len({r["task"] for r in results}) == 1  # they shared their task with the leaver


@pytest.mark.asyncio
@pytest.mark.one_loop
async def test_when_every_job_inside_left_their_ray_tasks_are_cancelled_and_new_jobs_run(
    ray_cluster: SessionCluster,
) -> None:
    async with (
        TaskPool(judge, batch_size=BATCH, max_in_flight=1, num_cpus=0) as pool,
        running(pool) as batcher,
    ):
        slow = [batcher.put("sleep", 20_000) for _ in range(BATCH)]
        await async_wait_for(lambda: pool.stats.in_flight == BATCH)
        queued = batcher.put("sleep", 20_000)  # waits: the window is full
        for ticket in slow:
            batcher.leave(ticket)
        batcher.leave(queued)
        await async_wait_for(lambda: pool.stats.in_flight == 0)
        after = batcher.put("fast", "after")
        assert (await after.future)["job"] == "after"
        assert pool.stats.completed == 1  # nothing of the abandoned jobs completed


@pytest.mark.asyncio
async def test_close_answers_every_waiting_job_with_server_closing(
    ray_cluster: SessionCluster,
) -> None:
    async with TaskPool(judge, batch_size=BATCH, max_in_flight=1, num_cpus=0) as pool:
        async with running(pool) as batcher:
            tickets = [batcher.put("sleep", 20_000) for _ in range(2 * BATCH)]
            await async_wait_for(lambda: pool.stats.in_flight == BATCH)
        for ticket in tickets:  # inside a Ray task or still queued: all answered
            assert isinstance(ticket.future.exception(), ServerClosing)
        with pytest.raises(ServerClosing):
            batcher.put("fast", 1)
