"""What the sandbox's entry points return (:mod:`asyncpool.sandbox`): a program's or a
solution's verdict, a program's output and files, a stdin/stdout judge's cases.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from asyncpool.sandbox._checkers import Verdict
from asyncpool.sandbox._run import SandboxStatus

#: How many bytes of each of stdout and stderr ``run_program`` keeps (the first ones).
OUTPUT_LIMIT_BYTES = 1024 * 1024


@dataclass(frozen=True, slots=True)
class SandboxResult:
    """The verdict on one program (``run_python``) or one solution (``run_tests``)."""

    status: SandboxStatus
    returncode: int | None
    stdout_tail: str
    duration: float

    @property
    def passed(self) -> bool:
        return self.status == "passed"


@dataclass(frozen=True, slots=True)
class ProgramResult:
    """What ``run_program`` saw: ``status`` is "passed" when the program exited 0."""

    status: SandboxStatus
    returncode: int | None
    stdout: str
    stderr: str
    duration: float
    files: dict[str, bytes] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return self.status == "passed"


@dataclass(frozen=True, slots=True)
class StdioCaseResult:
    """One case of ``run_stdio``, as a judge reports it.

    ``status`` is the sandbox status ("passed" when the program exited 0 and its output was
    accepted; "failed" for a wrong answer or a non-zero exit; "timeout", "memory",
    "crashed"); ``verdict`` the judge's name for it: "accepted", "wrong_answer" (exited 0,
    output not accepted, or longer than the limit, or the checker raised), "time_limit",
    "memory_limit", "runtime_error" (a non-zero exit or a death by another signal).
    ``duration`` is the program's own time (what ``timeout`` bounds), ``cpu_time`` its CPU time
    (user + system, it and the processes it waited for), ``wall_time`` the wall-clock time from
    the fork to its end, ``peak_memory`` the most memory its processes held together, in bytes:
    where the run has a memory cgroup (see :mod:`asyncpool.sandbox`), that cgroup's peak, what
    ``memory_mb`` limits (what the program allocated or copied on write, page cache it brought
    in; not the pages it shares with the fork server's preloaded interpreter or with other
    processes: a C++ ``puts`` about 1 MiB, a Python ``print()`` under 1 MiB); otherwise
    ``ru_maxrss`` of its process (the resident pages of the forked interpreter included, about
    20 MiB, also when it ran another program); ``cpu_time``/``peak_memory`` are ``None`` only if
    the fork server did not report them. ``reason`` says why the output was not accepted (``""``
    otherwise).
    """

    status: SandboxStatus
    returncode: int | None
    stdout: str
    stderr: str
    duration: float
    verdict: Verdict
    cpu_time: float | None
    wall_time: float
    peak_memory: int | None
    reason: str = ""

    @property
    def passed(self) -> bool:
        return self.status == "passed"


@dataclass(frozen=True, slots=True)
class StdioResult:
    """``run_stdio``'s verdict: "passed" (``verdict`` "accepted") only when every case passed;
    otherwise the status and verdict of the first case that did not."""

    status: SandboxStatus
    cases: list[StdioCaseResult]
    duration: float
    verdict: Verdict = "accepted"

    @property
    def passed(self) -> bool:
        return self.status == "passed"


def _decode(data: bytes) -> str:
    return data.decode("utf-8", "replace")
