"""Re-export of :mod:`asyncpool._bench.humaneval`, where the HumanEval workload lives now
(it ships with ``asyncpool bench``); kept so the repository's micro-benchmarks, examples and
tests that import ``benchmarks.humaneval`` keep working."""

from asyncpool._bench.humaneval import *  # noqa: F403
from asyncpool._bench.humaneval import __all__ as __all__
