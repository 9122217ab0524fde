"""The async-context-manager shape every asyncpool resource shares, and its life cycle.

Owns :class:`AsyncResource` (``async with`` = ``open`` then always ``aclose``) and
:class:`Lifecycle`, the explicit ``unopened -> opening -> open -> closing -> closed`` state
machine of the resources that open once and say so with a
:class:`~asyncpool.errors.ResourceStateError` subclass (VirtualCluster, WorkerGroup). Must not:
know about Ray, or about what a resource does when it opens or closes.
"""

from __future__ import annotations

from types import TracebackType
from typing import ClassVar, Literal, TypeAlias

import anyio
from typing_extensions import Self

from .errors import ResourceStateError

__all__ = ["AsyncResource", "Lifecycle", "State"]

State: TypeAlias = Literal["unopened", "opening", "open", "closing", "closed"]


class AsyncResource:
    """``async with resource:`` opens it (``open``) and always closes it (``aclose``).

    Subclasses implement ``aclose`` and, when opening does work, ``open``.
    """

    async def open(self) -> None:
        """Nothing to do by default."""

    async def aclose(self) -> None:
        raise NotImplementedError

    async def __aenter__(self) -> Self:
        await self.open()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()


class Lifecycle(AsyncResource):
    """An :class:`AsyncResource` that opens once, with its state explicit.

    ``unopened -> opening -> open -> closing -> closed``. A failed or cancelled opening goes
    back to ``unopened`` (it may be tried again); closing is final. Using the resource in a
    state that does not allow it raises the subclass's :attr:`state_error` (a
    :class:`~asyncpool.errors.ResourceStateError`), whose message names the resource, its
    state and the fix.
    """

    #: The error raised on a use in the wrong state.
    state_error: ClassVar[type[ResourceStateError]] = ResourceStateError
    _state: State = "unopened"
    _opening: anyio.CancelScope | None = None

    @property
    def state(self) -> State:
        """``"unopened"``, ``"opening"``, ``"open"``, ``"closing"`` or ``"closed"``."""
        return self._state

    def _label(self) -> str:
        """How messages name this resource: its class and, when it has one, its name."""
        name = getattr(self, "name", "")
        return f"{type(self).__name__} {name!r}" if name else type(self).__name__

    def _begin_open(self) -> anyio.CancelScope:
        """``unopened -> opening``; anything else is the state error (it opens once).

        Returns the scope the opening's waits run in: :meth:`_set_closed` cancels it, so a
        resource closed while it opens stops waiting (for resources that may never come) at
        once, and :meth:`_check_still_opening`, called after the scope, raises.
        """
        if self._state != "unopened":
            raise self.state_error(f"{self._label()} is {self._state}; it can be opened once only")
        self._state = "opening"
        self._opening = anyio.CancelScope()
        return self._opening

    def _set_open(self) -> None:
        """``opening -> open``."""
        self._opening = None
        self._state = "open"

    def _set_closed(self) -> None:
        """``closed``, final; an opening in progress is cancelled (and then fails)."""
        self._state = "closed"
        if self._opening is not None:
            self._opening.cancel()

    def _check_still_opening(self) -> None:
        """The state error when the resource was closed while it was opening (the caller then
        undoes what it made, and :meth:`_open_failed` leaves it ``closed``)."""
        if self._state != "opening":
            raise self.state_error(f"{self._label()} was closed while it was being opened")

    def _open_failed(self) -> None:
        """A failed or cancelled opening: ``unopened`` again, unless closed meanwhile."""
        self._opening = None
        if self._state == "opening":
            self._state = "unopened"

    def _require_open(self, what: str) -> None:
        """The state error unless open, naming ``what`` needed it."""
        if self._state != "open":
            kind = type(self).__name__
            raise self.state_error(
                f"{self._label()} is {self._state}: {what} needs an open {kind} "
                f"(use `async with {kind}(...)`)"
            )
