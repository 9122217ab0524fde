"""The bounds of a check and the errors that end one.

Owns: the limits each side of the wire holds the other to (:data:`MAX_MESSAGE`, :data:`MAX_DEPTH`,
:data:`MAX_ITEMS`, :data:`MAX_HANDLES`, :data:`MAX_CALL_DEPTH`, :data:`MAX_CALLBACKS`,
:data:`MAX_ITERATION`...: each one exceeded is a "failed" verdict with its reason), and the
exceptions that say a side broke the wire (:class:`CodecError`, :class:`SolutionBroke`) or that the
solution raised what the tests cannot name (:class:`SolutionError`).

Must not: import any other module of the judge (every one of them imports this one).
"""

from __future__ import annotations

import sys

#: Largest message either side may send, in bytes.
MAX_MESSAGE = 64 * 1024 * 1024
#: Deepest nesting of containers in one value (a linked list or a tree as nested dicts or
#: lists; a "flatten" test's list 1,000 deep). The codec recurses once or twice per level:
#: within the default recursion limit of either side (1,000) up to :data:`_SHALLOW` levels,
#: with room for the tests' and the solution's own; past it, within a limit raised for that
#: value alone (:func:`_deepened`). On Python 3.10, whose Python calls use the C stack, 300.
MAX_DEPTH = 10_000 if sys.version_info >= (3, 11) else 300
_SHALLOW = 250
#: Most values (containers and scalars) in one message.
MAX_ITEMS = 4_000_000
#: Most callables the solution may announce.
MAX_NAMES = 10_000
#: Most distinct objects of the solution the judge may hold handles to.
MAX_HANDLES = 200_000
#: Deepest nesting of requests (a callback of the tests calling the solution calling back...).
MAX_CALL_DEPTH = 50
#: Most requests the solution may make of the judge (callbacks, reads of the tests' objects).
MAX_CALLBACKS = 200_000
#: Most items the judge takes from one iterator of the solution.
MAX_ITERATION = 200_000
#: Most bytes of the solution's output copied to the tests' redirected ``sys.stdout`` /
#: ``sys.stderr`` in one check (the solution's own output file is bounded lower, by its
#: ``RLIMIT_FSIZE``).
MAX_RELAYED = 64 * 1024 * 1024
#: Most warnings and log records of the solution re-issued in the judge in one check (those
#: past it are dropped, as a flood of them says nothing more).
MAX_NOTICES = 10_000
#: Most texts of the solution's the judge remembers as possible code (see _Peer.note_text).
MAX_TEXTS = 100_000
#: Most threads of one side that exchange with the other at once (channels, see
#: :meth:`_Peer.channel`): a thread past it waits for another's channel to close (when that
#: thread ends), and the judge fails a check whose solution opens more. Above the threads a
#: run may have (``RLIMIT_NPROC``: 48 where its memory cgroup holds it), within those a
#: judge's address space allows (each thread's stack).
MAX_CHANNELS = 64


class CodecError(ValueError):
    """A value cannot be encoded, or bytes are not a valid message."""


class SolutionBroke(BaseException):
    """The solution process died, hung up, broke the protocol or a bound: no test can pass.

    A ``BaseException`` so that ``except Exception`` in a test does not swallow it; the judge
    also remembers it, so that even a bare ``except:`` cannot turn it into a pass."""


class SolutionError(Exception):
    """Stands for an exception of the solution whose type is not a built-in exception."""
