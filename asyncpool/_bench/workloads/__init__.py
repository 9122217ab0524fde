"""The bench's workloads, by name (the order the bench runs and reports them)."""

from __future__ import annotations

from ..core import Workload
from .humaneval import HUMANEVAL
from .judge import JUDGE
from .mathcheck import MATH
from .noop import NOOP

__all__ = ["HUMANEVAL", "JUDGE", "MATH", "NOOP", "WORKLOADS"]

WORKLOADS: dict[str, Workload] = {w.name: w for w in (HUMANEVAL, MATH, JUDGE, NOOP)}
