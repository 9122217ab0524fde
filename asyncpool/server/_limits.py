"""Request-size cap for ``asyncpool serve``: pure ASGI, so an oversized body is never buffered.

Hand-written because neither Starlette nor uvicorn caps request bodies (uvicorn only caps
header size); it has to sit below FastAPI, which reads the whole body before validating.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

__all__ = ["ASGIApp", "BodyLimit", "Receive", "Scope", "Send", "client_gone"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class BodyLimit:
    """Pure ASGI middleware: a request body over ``max_bytes`` is a 413, never buffered whole.

    A declared ``Content-Length`` over the cap is refused before anything is read; a body
    without one (chunked) is counted as it streams and refused as soon as it passes the cap.
    The rest of a refused body is read and discarded (up to ``drain_bytes``) before the 413
    goes out, so the client sees the answer rather than a connection reset; the connection
    is then closed. A body within the cap is handed to the app in one piece.
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        max_bytes: int,
        on_reject: Callable[[str], None],
        drain_bytes: int = 8 * 1024 * 1024,
    ) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.on_reject = on_reject
        self.drain_bytes = drain_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = _content_length(scope)
        if declared == -1:
            await self._refuse(scope, send, 400, "invalid Content-Length header")
            return
        if declared is not None and declared > self.max_bytes:
            if declared <= self.drain_bytes:
                await _drain(receive, self.drain_bytes)
            await self._refuse(scope, send, 413, self._too_large(declared))
            return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return  # the client left before sending its body; nobody to answer
            body = message.get("body", b"")
            size += len(body)
            if size > self.max_bytes:
                if message.get("more_body", False):
                    await _drain(receive, self.drain_bytes - size)
                await self._refuse(scope, send, 413, self._too_large(None))
                return
            chunks.append(body)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()  # then http.disconnect, as the server reports it

        await self.app(scope, replay, send)

    def _too_large(self, declared: int | None) -> str:
        size = f" of {declared} bytes" if declared is not None else ""
        return f"request body{size} is over the limit of {self.max_bytes} bytes"

    async def _refuse(self, scope: Scope, send: Send, status: int, message: str) -> None:
        self.on_reject(str(scope.get("path", "")))
        body = json.dumps({"detail": message, "message": message}).encode()
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                    (b"connection", b"close"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body, "more_body": False})


def _content_length(scope: Scope) -> int | None:
    """The declared length; ``None`` when absent, ``-1`` when malformed."""
    for name, value in scope.get("headers", ()):
        if name == b"content-length":
            try:
                n = int(value)
            except ValueError:
                return -1
            return n if n >= 0 else -1
    return None


async def _drain(receive: Receive, budget: int) -> None:
    while budget > 0:
        message = await receive()
        if message["type"] != "http.request":
            return
        budget -= len(message.get("body", b""))
        if not message.get("more_body", False):
            return


async def client_gone(receive: Receive) -> None:
    """Return when the client disconnects (call it once the body has been read)."""
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return
