"""Messages on a descriptor: :func:`_send` writes one or more in one write, :func:`_recv_word`
reads one (ahead, into a buffer per descriptor: :data:`_buffers`).

Must not: read or write a message of more than :data:`MAX_MESSAGE` bytes.
"""

from __future__ import annotations

import os
import struct

from ._bounds import MAX_MESSAGE, CodecError
from ._codec import _U32

_LEN = struct.Struct("=I")


def _send(fd: int, kind: bytes, body: bytes, *more: bytes, word: bytes = b"") -> None:
    """Write one message (``more``: further kind, body pairs, in the same write), each body
    after ``word`` (a :class:`_Peer`'s channel word, see :meth:`_Peer.channel`)."""
    parts = [kind, body, *more]
    frames: list[bytes] = []
    for i in range(0, len(parts), 2):
        size = len(parts[i + 1]) + 1 + len(word)
        if size > MAX_MESSAGE:
            raise CodecError(f"message of {size} bytes")
        frames += (_LEN.pack(size), parts[i], word, parts[i + 1])
    frame = memoryview(b"".join(frames))
    while frame:
        frame = frame[os.write(fd, frame) :]


_buffers: dict[int, bytearray] = {}


def _recv(fd: int) -> tuple[bytes, bytes]:
    """One message: (kind, body). Reads ahead into a buffer per descriptor, so a small message
    costs one ``read``."""
    kind, _, body = _recv_word(fd, 0)
    return kind, body


def _recv_word(fd: int, width: int) -> tuple[bytes, int, bytes]:
    """One message: (kind, its word of ``width`` bytes (4: see :meth:`_Peer.channel`) or 0,
    body)."""
    buf = _buffers.setdefault(fd, bytearray())
    need = _LEN.size
    while True:
        if len(buf) >= _LEN.size:
            (n,) = _LEN.unpack_from(buf)
            if not 1 + width <= n <= MAX_MESSAGE:
                raise CodecError(f"message of {n} bytes")
            need = _LEN.size + n
            if len(buf) >= need:
                start = _LEN.size + 1 + width
                kind = bytes(buf[_LEN.size : _LEN.size + 1])
                word = _U32.unpack_from(buf, _LEN.size + 1)[0] if width else 0
                body = bytes(buf[start:need])
                del buf[:need]
                return kind, word, body
        chunk = os.read(fd, min(max(1 << 16, need - len(buf)), 1 << 20))
        if not chunk:
            raise EOFError
        buf += chunk
