from __future__ import annotations

import ray

from tests.conftest import WORKER_GPUS, SessionCluster


def test_session_cluster_has_a_cpu_head_and_gpu_workers(ray_cluster: SessionCluster) -> None:
    alive = [n for n in ray.nodes() if n["Alive"]]
    gpus = sorted(n["Resources"].get("GPU", 0) for n in alive)
    assert gpus == [0, WORKER_GPUS, WORKER_GPUS]
