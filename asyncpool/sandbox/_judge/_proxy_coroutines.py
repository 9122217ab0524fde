"""Handles of the other side's coroutines, generators and async generators, and how an
``await`` of one side's coroutine runs for the other.

Must not: run the other side's coroutine on this side (every step is a request).
"""

from __future__ import annotations

import collections
import contextlib
import sys
import types
from threading import Thread as _Thread
from typing import TYPE_CHECKING, Any

from . import _proxies  # (its _PEER, read at each use: it is set there)
from ._proxies import _count_item, _FullProxy, _peer, _Proxy, _slots_forwarded
from ._values import _BUILTIN_TYPES

if TYPE_CHECKING:
    from ._peer import _Peer


class _CoroutineProxy(_FullProxy):
    """A handle of a coroutine of the other side (an ``async def`` of its called): a coroutine
    to this side's ``asyncio`` (``asyncio.run(add(1, 2))``, ``await add(1, 2)`` in a coroutine,
    ``asyncio.gather``). Awaited, it runs to its end in its own process (:func:`_run_coroutine`),
    and its value (or exception) is the await's. Awaited from a running event loop, the request
    is made by a thread of its own (a channel: see :meth:`_Peer.channel`) while the loop goes
    on, so coroutines awaited together run at once, as in-process (``gather`` of two 0.1 s
    sleeps takes 0.1 s, a semaphore of the tests' bounds how many run); this side's coroutines
    they await in turn run on this loop (:meth:`_Peer.awaited_on`)."""

    __slots__ = ()

    def __await__(self) -> Any:
        loop = _running_loop()
        if loop is not None:
            future = _await_in_thread(_peer(), self, loop)
            if future is not None:
                return (yield from future)
        # (a generator, as the yield above makes it: the request runs when the loop steps it)
        return _peer().request("await", self)

    def send(self, value: Any) -> Any:
        """A Task's step (``asyncio.run(coroutine)``, ``gather``): the first yields the future
        of the await made by a thread of its own (see :meth:`__await__`), the next (when it is
        done) ends with its outcome."""
        if value is not None:
            raise TypeError("can't send non-None value to a just-started coroutine")
        peer = _peer()
        with peer.state:
            future = peer.stepped.pop(id(self), None)
        if future is not None:
            raise StopIteration(future.result())
        loop = _running_loop()
        if loop is not None:
            future = _await_in_thread(peer, self, loop)
            if future is not None:
                future._asyncio_future_blocking = True
                with peer.state:
                    peer.stepped[id(self)] = future
                return future
        raise StopIteration(peer.request("await", self))

    def __next__(self) -> Any:  # what a Task's step calls (PyIter_Send) on an iterator
        return self.send(None)

    def throw(self, kind: Any, value: Any = None, tb: Any = None) -> Any:
        self._forget()  # (a Task cancelled between its steps: the await's thread runs on)
        raise kind if value is None else value

    def close(self) -> None:
        self._forget()
        _peer().request("getattr", self, ("close",))()

    def _forget(self) -> None:
        """Drop the future a Task's first step left (see :meth:`send`): keyed by this handle's
        id, it must not be taken by a later handle given the same id."""
        peer = _proxies._PEER
        if peer is not None:
            with peer.state:
                peer.stepped.pop(id(self), None)


collections.abc.Coroutine.register(_CoroutineProxy)


class _CopiedOnlyByCopy:
    """``__copy__`` of an iterator's handle: ``copy.copy(it)`` (which looks it up on the
    class) still asks the solution for its copy, as in-process, but the handle itself has no
    ``__copy__``, as generators, ``map`` objects and most iterators have none. Else
    ``itertools.tee(it)`` takes the handle for a copyable iterator and asks the solution for
    copies that fail (a generator) or share one underlying iterator (a ``map``), where
    in-process it buffers the items for each of its iterators."""

    def __get__(self, obj: Any, cls: Any = None) -> Any:
        if obj is None:
            return _Proxy.__copy__
        raise AttributeError("__copy__")


class _GeneratorProxy(_FullProxy):
    """A handle of a generator of the solution: a generator to the tests' type checks
    (``isinstance(g, types.GeneratorType)``, ``inspect.isgenerator(g)``,
    ``collections.abc.Generator``), as in-process; its ``send``, ``throw`` and ``close`` are
    the generator's (requests). Its ``__class__`` says ``GeneratorType`` (as a mock's says its
    spec's); ``type(g)`` is still this proxy class."""

    __slots__ = ()
    __copy__ = _CopiedOnlyByCopy()

    @property  # type: ignore[misc]
    def __class__(self) -> Any:
        return types.GeneratorType

    def send(self, value: Any) -> Any:
        """As ``next``, with a value: the end of the generator is the tests' ``StopIteration``
        (with its return value), as in-process (a call's ``StopIteration`` is not one)."""
        peer = _peer()
        _count_item(peer, self)
        return peer.request("next", self, (value,))

    def throw(self, *args: Any) -> Any:
        """The generator's ``throw``. An exception of a built-in class the tests throw in
        (``it.throw(ValueError("x"))``) crosses as its class and arguments, which cross as
        the tests' other values do, and is made again there (an instance would cross as a
        handle: no exception to the generator, a ``TypeError``, where in-process the generator
        catches it)."""
        if len(args) == 1 and isinstance(args[0], BaseException):
            kind = type(args[0])
            if _BUILTIN_TYPES.get(kind.__name__) is kind:
                return _peer().request("throw", self, (kind, args[0].args))
        return _peer().request("getattr", self, ("throw",))(*args)

    def close(self) -> Any:
        return _peer().request("getattr", self, ("close",))()


collections.abc.Generator.register(_GeneratorProxy)


class _AsyncGeneratorProxy(_FullProxy):
    """A handle of an async generator of the solution: ``async for x in ticks(3)`` in the
    tests' coroutine takes its items one request each; each runs to the item in the solution's
    process, on one event loop of its own there that the generator keeps (:func:`_anext`)."""

    __slots__ = ()

    @property  # type: ignore[misc]
    def __class__(self) -> Any:
        return types.AsyncGeneratorType

    def __aiter__(self) -> Any:
        return self

    async def __anext__(self) -> Any:
        peer = _peer()
        _count_item(peer, self)
        try:
            return peer.request("anext", self)
        except StopIteration:
            raise StopAsyncIteration from None


collections.abc.AsyncGenerator.register(_AsyncGeneratorProxy)
for _kind in (_CoroutineProxy, _GeneratorProxy, _AsyncGeneratorProxy):
    _slots_forwarded(_kind)
del _kind
_ASYNC_LOOP: list[Any] = []


def _anext(obj: Any) -> Any:
    """The solution's side of the tests' ``async for`` over one of its async generators: its
    next item, run on this process's one loop for them (not a new loop per item: closing a
    loop finalises the async generators that ran on it); its end as ``StopIteration``."""
    import asyncio

    if not isinstance(obj, types.AsyncGeneratorType):
        raise TypeError(f"'async for' requires an async generator, got {type(obj).__name__}")
    if not _ASYNC_LOOP:
        _ASYNC_LOOP.append(asyncio.new_event_loop())
    try:
        return _ASYNC_LOOP[0].run_until_complete(obj.__anext__())
    except StopAsyncIteration:
        raise StopIteration from None


def _running_loop() -> Any:
    """This thread's running event loop, or None (asyncio not imported: none)."""
    asyncio = sys.modules.get("asyncio")
    return None if asyncio is None else asyncio._get_running_loop()


def _await_in_thread(peer: _Peer, coroutine: Any, loop: Any) -> Any:
    """The future of ``await coroutine`` (the other side's) on ``loop``, made by a thread of
    its own (see :class:`_CoroutineProxy`); None past this process's thread limit (then the
    await is made here, the loop waiting)."""
    future = loop.create_future()

    def settle(outcome: Any, failed: bool) -> None:
        if future.done():
            return
        if failed:
            future.set_exception(outcome)
        else:
            future.set_result(outcome)

    def run() -> None:
        peer.awaited_on(loop, +1)
        try:
            result = peer.request("await", coroutine)
        except BaseException as exc:  # (SolutionBroke too: raised where the loop awaits)
            outcome, failed = exc, True
        else:
            outcome, failed = result, False
        finally:
            peer.awaited_on(loop, -1)
        with contextlib.suppress(RuntimeError):  # (the loop closed meanwhile)
            loop.call_soon_threadsafe(settle, outcome, failed)

    try:
        _Thread(target=run, daemon=True, name="asyncio-await").start()
    except RuntimeError:
        return None
    return future


def _run_coroutine(obj: Any) -> Any:
    """An ``await`` of one side's coroutine by the other: run it to its end, on the event loop
    of this side that awaits the other side's coroutines while that loop goes on (see
    :meth:`_Peer.awaited_on`: ``gather`` of the tests' coroutines by the solution's, the tests'
    semaphore bounding them, as in-process), else on a new event loop (never one of the other
    side's). The solution's, awaited by the tests; or the tests', awaited by the solution (an
    ``async def`` of the tests it was handed): when the judge's thread is inside the tests' own
    loop (``asyncio.run`` of theirs, waiting for the solution), that loop is set aside while
    the new one runs and restored after."""
    import asyncio

    if not asyncio.iscoroutine(obj):
        raise TypeError(f"object {type(obj).__name__} can't be used in 'await' expression")
    peer = _proxies._PEER
    shared = None if peer is None else peer.free_loop()
    if shared is not None:
        return asyncio.run_coroutine_threadsafe(obj, shared).result()
    outer = asyncio._get_running_loop()
    if outer is None:
        return asyncio.run(obj)
    loop = asyncio.new_event_loop()
    asyncio._set_running_loop(None)
    try:
        return loop.run_until_complete(obj)
    finally:
        loop.close()
        asyncio._set_running_loop(outer)
