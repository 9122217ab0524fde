"""The bench's workloads, by name (the order the bench runs and reports them)."""

from __future__ import annotations

from ..core import Workload
from .humaneval import HUMANEVAL
from .judge import JUDGE
from .mathcheck import MATH
from .noop import NOOP
from .stdio import STDIO

__all__ = ["HUMANEVAL", "JUDGE", "MATH", "NOOP", "OPT_IN", "STDIO", "WORKLOADS"]

WORKLOADS: dict[str, Workload] = {w.name: w for w in (HUMANEVAL, MATH, JUDGE, NOOP, STDIO)}
#: Workloads ``all`` leaves out (run them by name): ``stdio`` alone takes minutes with --quick.
OPT_IN: frozenset[str] = frozenset({STDIO.name})
