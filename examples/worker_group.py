"""A worker group on the embedded local Ray cluster: pinned actors, sharded dispatch, layout.

    python examples/worker_group.py

Starts (or joins) a local cluster through ``asyncpool.init``, reserves a VirtualCluster of
two virtual nodes with two CPU-only bundles each (``use_gpus=False``: no GPU needed; on a GPU
machine drop it and every worker gets its GPU), and starts a group of four workers in two tied
pairs -- the shape of a tensor-parallel job. Then:

* ``broadcast`` asks every worker where it is (the RANK/... variables the group set);
* ``dispatch`` sends one shard of a batch to each worker and streams the results as they
  complete, then collects them in shard order and joins them back with ``unshard``;
* ``only_on="tied_leader"`` sends one shard per tied pair to its leader;
* ``layout()`` draws the cluster grid with the group's ranks.

Everything is released on the way out: the actors, the placement groups and, when this
script started it, the local cluster.
"""

from __future__ import annotations

import asyncio
import os
import random

import asyncpool
from asyncpool.cluster import VirtualCluster
from asyncpool.sharding import shard, unshard
from asyncpool.workers import WorkerGroup


class Scorer:
    """A toy worker: scores texts; takes a random while, like a real model would."""

    def __init__(self, weight: float) -> None:
        self.weight = weight
        self.rank = int(os.environ["RANK"])

    def where(self) -> str:
        keys = ("RANK", "LOCAL_RANK", "NODE_RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")
        return " ".join(f"{k}={os.environ[k]}" for k in keys)

    async def score(self, texts: list[str]) -> list[float]:
        await asyncio.sleep(random.uniform(0.05, 0.4))
        return [round(self.weight * len(t), 1) for t in texts]


async def main() -> None:
    async with (
        VirtualCluster([2, 2], use_gpus=False, name="example") as cluster,
        WorkerGroup(cluster, Scorer, 0.5, name="scorer", tied=[(0, [0, 1]), (1, [0, 1])]) as group,
    ):
        print(group.layout())
        print()
        for line in await group.broadcast("where"):
            print("  ", line)

        batch = [f"sample text number {i}" * (i % 3 + 1) for i in range(10)]
        parts = shard(batch, group.world_size)
        print(f"\n{len(batch)} texts in shards of {[len(p) for p in parts]}; as they complete:")
        async with group.dispatch("score", parts) as results:
            async for index, scores in results:
                print(f"   shard {index} (rank {index}) -> {scores}")

        scores = unshard(await group.dispatch("score", parts))
        print(f"\nscores in batch order: {scores}")

        halves = shard(batch, len(group.tied_groups))
        leaders = await group.dispatch("score", halves, only_on="tied_leader")
        print(f"one shard per tied pair, scored by its leader: {[len(s) for s in leaders]} scores")


if __name__ == "__main__":
    runtime = asyncpool.init(num_cpus=4)  # an embedded local cluster unless one is configured
    try:
        asyncpool.run(main)
    finally:
        runtime.shutdown()  # stops the cluster only if this script started it
