"""A shortened soak (the full million-item run is ``python -m benchmarks.soak``)."""

from __future__ import annotations

import pytest

from benchmarks.soak import soak, verdict
from tests.chaos._util import report
from tests.conftest import SessionCluster

pytestmark = [pytest.mark.slow, pytest.mark.chaos]


@pytest.mark.asyncio(loop_factories=["uvloop"])
async def test_a_long_generator_map_yields_each_item_once_within_bounds(
    ray_cluster: SessionCluster,
) -> None:
    result = await soak(200_000)
    report("soak (200k tiny items, auto batch)", **result)
    assert verdict(result, budget_mb=200.0) == []
    assert result["peak_tasks_in_flight"] >= 2  # the bound was actually reached for
