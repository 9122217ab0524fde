"""The solution's process besides its code: its streams while it serves the judge (:class:`_Tee`),
its top-level values the judge asks for (:class:`_Constants`), its ``sys.stdin`` and ``input`` (the
tests': :class:`_Stdin`, :func:`_input`), the tests' ``eval``, ``exec`` and ``doctest`` of its text
(:class:`_Evaluator`), its CPU (:func:`_pin`).

Must not: be trusted by the judge: it runs inside the jail, where the solution may rewrite any of
it.
"""

from __future__ import annotations

import builtins
import contextlib
import io
import operator
import os
import sys
from typing import TYPE_CHECKING, Any

from . import _proxies
from ._kept import _changes, _refill, _same_inner, _watch_changed, _watch_mark
from ._values import _MUTABLE, _UNSET

if TYPE_CHECKING:
    from ._peer import _Peer


_JUDGE_INPUT = builtins.input
_EMPTY_READS: dict[str, Any] = {"read": "", "readline": "", "readlines": []}


def _pin(cpu: int | None) -> None:
    """Run on ``cpu`` from now on: the judge and the solution take turns, and a turn on one CPU
    is a local wakeup, much cheaper than one across CPUs (own time does not change)."""
    if cpu is not None:
        with contextlib.suppress(OSError):
            os.sched_setaffinity(0, {cpu})


def _flush_streams(streams: tuple[Any, ...]) -> None:
    """Flush the solution's standard streams (the sandbox's own, not an object the solution put
    in their place) before what it printed is reported and before anything of its reaches the
    judge: the process is killed once the judge is done, and what its buffer still held would
    be lost from the run's output (a passed check's ``stdout_tail`` missed the prints of its
    calls). One flush per message that follows output, and one before the greeting."""
    for stream in streams:
        if type(stream) is io.TextIOWrapper:
            with contextlib.suppress(Exception):  # closed by the solution: nothing to keep
                stream.flush()


class _Tee:
    """The solution's ``sys.stdout``/``sys.stderr`` while it serves the judge: each write goes
    to the stream as before and is kept for the judge (sent before the next message, or at
    once: see write), so that tests which capture output see the solution's prints."""

    def __init__(self, stream: Any, number: int, peer: _Peer) -> None:
        self._stream = stream
        self._number = number
        self._peer = peer

    def write(self, text: str) -> int:
        n: int = self._stream.write(text)
        if type(text) is str and text:
            peer = self._peer
            peer.output.append((self._number, text))
            peer.output_size += len(text)
            # Sent at once from a thread that serves no request (a thread of the solution's
            # printing after its call returned: no reply of its would carry it), or at 1 MiB.
            if peer.output_size > 1 << 20 or peer.depth == 0:
                peer.flush_output()
        return n

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


class _Constants:
    """The solution's side: the values of its top-level names that are not callables nor
    modules (``MOD``, ``DIRS``, ``obj = Solution()``, ``calls = 0``), for the judge to ask for
    those the tests name. Asked, not announced: a large one (a precomputed sieve) costs only
    the checks whose tests read it.

    Those asked are then *watched*: in-process the tests read the solution's globals
    themselves, so ``incr(); assert counter == 1`` sees what ``incr`` did, and so does
    ``log(3); assert seen == [3]``. Each reply to the judge carries the asked names that were
    rebound since the last, or whose container (a :data:`_MUTABLE` value) changed (compared
    item by item by identity, as write-back does, and so are the containers it holds, at
    every depth: :func:`_watch_mark`; past :data:`MAX_WATCHED_ITEMS` items within a budget, so
    that a big table the tests read costs each reply little). The other way,
    the judge's requests carry the watched containers the tests changed in place
    (:meth:`refill`)."""

    __slots__ = ("_names", "_namespace", "_watched")

    def __init__(self, namespace: dict[str, Any], names: tuple[str, ...]) -> None:
        self._namespace = namespace
        self._names = frozenset(names)
        #: name -> (the object last sent, what it held then: see :func:`_watch_mark`).
        self._watched: dict[str, tuple[Any, Any]] = {}

    def __call__(self, wanted: Any) -> tuple[Any, ...]:
        if type(wanted) is not tuple or not all(type(n) is str for n in wanted):
            raise TypeError("names, as a tuple of str")
        found = tuple(self._namespace.get(n) if n in self._names else None for n in wanted)
        for name, value in zip(wanted, found, strict=True):
            if name in self._names:
                self._watched[name] = (value, _watch_mark(value))
        return found

    def updates(self) -> tuple[tuple[str, Any, Any], ...]:
        """The watched names whose value changed since they were last sent, with their value
        now and, for a container changed in place, the containers it still holds as the same
        objects (:func:`_same_inner`: the tests' alias ``row = board[0]`` follows the
        solution's ``board[0][0] = 9``); they are marked as sent."""
        changed: list[tuple[str, Any, Any]] = []
        namespace = self._namespace
        for name, (sent, mark) in list(self._watched.items()):
            now = namespace.get(name)
            if now is sent and not _watch_changed(now, mark):
                continue
            changed.append((name, now, _same_inner(now, mark) if now is sent else ()))
        for name, now, _ in changed:
            self._watched[name] = (now, _watch_mark(now))
        return tuple(changed)

    def refill(self, pushed: Any) -> None:
        """The judge's change of watched containers (:meth:`_Peer.changed_constants`): each
        refilled in place, if the name still holds the container the judge was last told of
        (else the solution rebound it meanwhile: the next reply tells the judge)."""
        for name, value, same in _changes(pushed, self._watched, "values"):
            sent, _ = self._watched[name]
            kind = type(sent)
            if self._namespace.get(name) is sent and type(value) is kind and kind in _MUTABLE:
                _refill(sent, value, same)
                self._watched[name] = (sent, _watch_mark(sent))


class _Stdin:
    """The solution's ``sys.stdin`` in a judged run (and its ``.buffer``, in bytes): while it
    serves the judge, each read is a read of the tests' stdin (:meth:`_Peer.serve_input`), so
    tests that patch ``sys.stdin`` with an ``io.StringIO`` feed the solution as in-process;
    before (the solution's top level), stdin is empty, as it always was for ``run_tests``."""

    encoding = "utf-8"
    errors = "strict"

    def __init__(self, binary: bool = False) -> None:
        self._binary = binary

    def _read(self, method: str, arg: int) -> Any:
        peer = _proxies._PEER
        if peer is None or peer.trusted:
            found: Any = _EMPTY_READS[method]
        else:
            found = peer.ask_judge(method, arg)
        if not self._binary:
            return found
        if type(found) is list:
            return [_as_bytes(line) for line in found]
        return _as_bytes(found)

    @property
    def buffer(self) -> _Stdin:
        return _Stdin(binary=True)

    def read(self, size: int | None = -1) -> Any:
        return self._read("read", -1 if size is None else operator.index(size))

    def readline(self, size: int | None = -1) -> Any:
        return self._read("readline", -1 if size is None else operator.index(size))

    def readlines(self, hint: int | None = -1) -> Any:
        return self._read("readlines", -1 if hint is None else operator.index(hint))

    def __iter__(self) -> _Stdin:
        return self

    def __next__(self) -> Any:
        line = self.readline()
        if not line:
            raise StopIteration
        return line

    def fileno(self) -> int:
        return 0

    def isatty(self) -> bool:
        return False

    def readable(self) -> bool:
        return True

    def close(self) -> None:
        pass

    closed = False


def _as_bytes(text: Any) -> Any:
    return text.encode("utf-8", "surrogateescape") if type(text) is str else text


def _input(prompt: object = "") -> Any:
    """The solution's ``input`` in a judged run: while it serves the judge, the tests'
    ``input`` (a mock they patched in) or a line of the stdin they gave it."""
    peer = _proxies._PEER
    if peer is None or peer.trusted:
        return _JUDGE_INPUT(prompt)
    return peer.ask_judge("input", str(prompt))


class _Evaluator:
    """The solution's side: the tests' ``eval``/``exec`` of a text of the solution's (see
    :func:`_guarded_eval`) runs here, in a copy of the solution's namespace: ``eval`` returns
    the value, ``exec`` the names it bound (which the judge binds in the tests' namespace).
    And the tests' ``doctest`` of the solution (see :func:`_doctest_in_solution`): its
    docstrings' examples are the solution's code, run here by ``doctest`` itself."""

    def __init__(self, namespace: dict[str, Any]) -> None:
        self._namespace = namespace

    def __call__(self, source: Any, mode: Any) -> Any:
        if mode == "testmod" and type(source) is tuple and len(source) == 2:
            module = sys.modules.get("solution")
            if module is None or vars(module) is not self._namespace:
                raise TypeError("the solution runs as no module")
            import doctest

            verbose, optionflags = source
            if verbose not in (None, False, True) or type(optionflags) is not int:
                raise TypeError("testmod's options, please")
            found = doctest.testmod(module, verbose=verbose, optionflags=optionflags)
            return (found.failed, found.attempted)
        if mode == "examples" and type(source) is tuple and len(source) == 4:
            import doctest

            target, verbose, name, optionflags = source
            if type(verbose) is not bool or type(name) is not str or type(optionflags) is not int:
                raise TypeError("run_docstring_examples' options, please")
            doctest.run_docstring_examples(target, dict(self._namespace), verbose, name,
                                           optionflags=optionflags)  # fmt: skip
            return None
        if type(source) is not str or mode not in ("eval", "exec"):
            raise TypeError("source text and mode, please")
        scope = dict(self._namespace)
        if mode == "eval":
            return eval(source, scope)  # the solution's own text, in its process
        exec(source, scope)
        return {
            k: v for k, v in scope.items()
            if type(k) is str and not k.startswith("__") and self._namespace.get(k, _UNSET) is not v
        }  # fmt: skip


#: The solution's side: how many more frames its stack holds below a call of the judge's
#: than the tests' module does in-process (see :func:`serve_solution`); the recursion limits
#: the tests set reach it raised by as many.
_SERVING_FRAMES = [0]
