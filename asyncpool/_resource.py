"""The async-context-manager shape every asyncpool resource shares."""

from __future__ import annotations

from types import TracebackType

from typing_extensions import Self


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
