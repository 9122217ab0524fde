"""The wire's messages and threads' channels of :class:`._peer._Peer`: writing a message, reading
one for a thread (one thread reads for all), the threads that serve the other side's
channels.

Must not: trust the other side's channel numbers, names or order (each checked).
"""

from __future__ import annotations

import _thread
import contextlib
import os
import struct
from socket import SHUT_RDWR as _SHUT_RDWR  # bound once: the tests may patch socket
from socket import socket as _Socket
from threading import Thread as _Thread
from threading import current_thread as _current_thread
from typing import Any

from ._bounds import MAX_CHANNELS, CodecError, SolutionBroke
from ._codec import _U32
from ._encoder import encode
from ._framing import _recv_word, _send
from ._kept import earn
from ._peer_state import _allocate_lock, _PeerState
from ._proxy_coroutines import _running_loop
from ._solution_side import _flush_streams
from ._values import _deque

#: A release (``D``): a number of the receiver's object and how many times it was received.
_RELEASE = struct.Struct(">II")
#: A message's word (see :meth:`_Peer.channel`): its channel, and a bit saying that its sender
#: has threads of its own besides those serving the other side's channels (see
#: :meth:`_Peer.word`).
_CHANNEL_MASK = 0x7FFF_FFFF
_THREADED = 0x8000_0000
_SPARE = -1  # the inbox of the thread that only reads (see _Peer.start_spare)
# Bound once: the tests may patch ``_thread`` (``mock.patch``).
_start_thread = _thread.start_new_thread
_thread_count = _thread._count
#: Most bytes of a thread's name sent with its channel (see _Peer.channel).
MAX_THREAD_NAME = 256


def _current_thread_name() -> str:
    """This thread's name (``threading``'s; a thread it did not start has a dummy's)."""
    try:
        return str(_current_thread().name)
    except Exception:
        return ""


class _ChannelTicket:
    """Held in a thread's locals while it has a channel (see :meth:`_Peer.channel`): closes
    the channel when the thread ends (its locals go with it)."""

    __slots__ = ("number", "peer")

    def __init__(self, peer: _PeerChannels, number: int) -> None:
        self.peer = peer
        self.number = number

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self.peer.close_channel(self.number)


class _PeerChannels(_PeerState):
    """The messages and channels of a :class:`._peer._Peer` (see :meth:`channel`)."""

    def send(self, kind: bytes, body: bytes) -> None:
        """One message on this thread's channel, after the release of the proxies that died
        (in the same write) and, on the solution's side, after what it printed since the last
        one (``O``)."""
        self.send_on(self.channel(), kind, body)

    def send_on(self, channel: int, kind: bytes, body: bytes) -> None:
        """:meth:`send` on ``channel``."""
        if self.output:
            self.flush_output()
        self.epoch = next(self._epochs)
        earn(len(body))
        word = self.word(channel)
        with self.mutex:
            if self.released:
                with self.hold_lock:
                    released, self.released = self.released, {}
                dead = b"".join(_RELEASE.pack(n, c) for n, c in sorted(released.items()))
                _send(self.fd, b"D", dead, kind, body, word=word)
            else:
                _send(self.fd, kind, body, word=word)

    def flush_output(self) -> None:
        """The solution's side: send what it printed (``O``: stream number and text), once it
        is in its process's own output too (:func:`_flush_streams`)."""
        _flush_streams(self.streams)
        word = self.word(0)  # (read by whichever thread reads: see next_message)
        with self.mutex:
            output, self.output, self.output_size = self.output, [], 0
            for stream in (1, 2):
                text = "".join(t for n, t in output if n == stream)
                if text:
                    _send(self.fd, b"O", encode((stream, text)), word=word)

    def channel(self) -> int:
        """This thread's channel: the number every message of its exchanges carries.

        Why: in-process, a callback that a thread of the solution calls runs in that thread,
        and a method that a thread of the tests calls runs in that one. So a thread's
        exchange (its request, the requests of the other side it serves meanwhile, the reply)
        is that thread's on both sides: the other side serves each channel in a thread of its
        own, started at the channel's first message and named as the thread it stands for
        (:meth:`serve_channel`). The tests' threads calling the solution (LeetCode's "Print
        in Order": each waits on an event another one's call sets) and the solution's threads
        calling the tests' functions run concurrently, block one another and own the tests'
        locks as they would in-process; over one shared exchange they deadlocked, or shared
        the ownership of an ``RLock``.

        The two main threads (the tests', the one serving them) are channel 0; another thread
        takes a new number of its side's (the judge's even, the solution's odd) at its first
        message. When it ends its channel is closed (:class:`_ChannelTicket`), and the thread
        serving it on the other side ends too: a later thread is served by a new one, with
        its own thread-local state, as in-process. At most :data:`MAX_CHANNELS` are open at
        once; a thread past them waits for one to close."""
        try:
            number: int = self.local.channel
        except AttributeError:
            number = self._new_channel()
        return number

    def _new_channel(self) -> int:
        self.slots.acquire()  # (released when the thread ends: see _ChannelTicket)
        with self.state:
            number = self.next_channel
            if number > _CHANNEL_MASK - 2:
                self.slots.release()
                raise RuntimeError("no channel left for another thread")
            self.next_channel += 2
            self.inbox[number] = _deque()
        self.local.channel = number
        self.local.ticket = _ChannelTicket(self, number)
        name = _current_thread_name()
        self.send_on(number, b"N", name.encode("utf-8", "replace")[:MAX_THREAD_NAME])
        return number

    def close_channel(self, number: int) -> None:
        """The thread of channel ``number`` (ours) ended: tell the other side at once (``C``),
        so that the thread serving it there ends (and frees its place under the process's
        thread limit for another one)."""
        with self.state:
            self.inbox.pop(number, None)
        self.slots.release()
        with contextlib.suppress(OSError, CodecError):
            self.send_on(number, b"C", b"")

    def word(self, channel: int) -> bytes:
        """A message's word: its ``channel``, with :data:`_THREADED` when this process has
        threads besides those this peer started. Why: a new channel of the other side's
        arrives only when a thread here reads the wire, and every thread of the other side
        may be busy (the main one in a long call) while one of its other threads sends the
        first message of a new channel. Told of such threads, the other side starts a thread
        that only reads (:meth:`start_spare`). Without them it needs none: a new channel's
        first message then comes only while a thread there waits for a message of its own."""
        if _thread_count() > self.threads:
            channel |= _THREADED
        return _U32.pack(channel)

    def awaited_on(self, loop: Any, change: int) -> None:
        """Count an await of the other side's coroutine that ``loop`` (of this side) goes on
        running through (see :class:`_CoroutineProxy`)."""
        with self.state:
            left = self.awaiting.get(loop, 0) + change
            if left > 0:
                self.awaiting[loop] = left
            else:
                self.awaiting.pop(loop, None)

    def free_loop(self) -> Any:
        """This side's event loop that awaits the other side's coroutines and so runs on (the
        one, if exactly one does, and not this thread's): where the other side's awaits of
        this side's coroutines run."""
        with self.state:
            if len(self.awaiting) != 1:
                return None
            (loop,) = self.awaiting
        if loop.is_closed() or not loop.is_running() or loop is _running_loop():
            return None
        return loop

    @property
    def depth(self) -> int:
        """How deep this thread's requests nest (see admit)."""
        return getattr(self.local, "depth", 0)

    @depth.setter
    def depth(self, value: int) -> None:
        self.local.depth = value

    @property
    def threaded(self) -> bool:
        """Whether a thread other than the main one exchanged on the wire (a long-lived judge
        serves no further check: such a thread may still run)."""
        return self.threads_started > 0 or self.next_channel != (2 if self.trusted else 1)

    def next_message(self, channel: int) -> tuple[bytes, bytes]:
        """The next message on ``channel`` (this thread's): one another thread read for it, or
        one this thread reads, when no other thread is reading the wire. The thread reading
        reads for all: what is another channel's it queues there and wakes that channel's
        thread; a channel of the other side's it has not seen gets a thread that serves it.
        Releases (``D``), thread names (``N``) and closed channels (``C``) it applies, and in
        the judge the solution's output and warnings (``O``, ``W``, ``G``: in the order they
        came, before any later reply is taken). ``EOFError`` when the wire ended (for every
        waiting thread)."""
        box = self.inbox[channel]
        state = self.state
        while True:
            with state:
                if box:
                    return box.popleft()
                if self.closed is not None:
                    raise self._ended()
                if not self.reading:
                    self.reading = True
                    break
                try:
                    sleep = self.local.sleep
                except AttributeError:
                    sleep = self.local.sleep = _allocate_lock()
                    sleep.acquire()
                self.waiting[channel] = sleep
            sleep.acquire()  # released by the reader: a message for us, or no more reader
        try:
            return self._read_for(channel)
        except BaseException as exc:
            with state:
                if self.closed is None:
                    self.closed = exc
            raise
        finally:
            with state:
                self.reading = False
                sleeping = list(self.waiting.values())
                self.waiting.clear()
            for sleep in sleeping:  # each takes its message, or one of them reads
                sleep.release()

    def _ended(self) -> BaseException:
        closed = self.closed
        if isinstance(closed, SolutionBroke):
            return SolutionBroke(*closed.args)
        if isinstance(closed, CodecError):
            return CodecError(*closed.args)
        return EOFError()

    def _read_for(self, channel: int) -> tuple[bytes, bytes]:
        while True:
            kind, word, body = _recv_word(self.fd, 4)
            self.epoch = next(self._epochs)
            earn(len(body))  # (the comparison budgets: see _kept.earn)
            if word & _THREADED and not self.spare:
                self.start_spare()
            if kind == b"D":
                self.drop(body)
                continue
            if self.trusted and kind == b"O":
                self.relay(body)
                continue
            number = word & _CHANNEL_MASK
            if self.trusted and kind in (b"W", b"G"):
                self.reissue(kind, body, number)
                continue
            if kind == b"N":
                self._name(number, body)
                continue
            if kind == b"C":
                if number == channel and number in self.serving:
                    return kind, body  # (this thread's own: see serve_channel)
                self._close_served(number)
                continue
            if number == channel:
                return kind, body
            self._deliver(number, kind, body)

    def _ours(self, number: int) -> bool:
        return number % 2 == (0 if self.trusted else 1)

    def _name(self, number: int, body: bytes) -> None:
        """The other side's thread of channel ``number`` is named ``body``: the name of the
        thread that will serve it here."""
        if self._ours(number) or number in self.inbox or len(body) > MAX_THREAD_NAME:
            raise CodecError("a thread's name for a channel already open or ours")
        if len(self.names) >= MAX_CHANNELS:
            raise CodecError("names for more channels than may be open")
        self.names[number] = body.decode("utf-8", "replace")

    def _close_served(self, number: int) -> None:
        """The other side's thread of channel ``number`` ended: end the thread serving it here
        (idle: that thread's exchanges are over) and wait until it is gone."""
        with self.state:
            thread = self.serving.get(number)
            box = self.inbox.get(number)
            if thread is None or box is None:
                return  # (never served: it sent its name only; or a channel it never had)
            box.append((b"C", b""))
            sleep = self.waiting.pop(number, None)
        if sleep is not None:
            sleep.release()
        thread.join()
        self._start_pending()

    def _deliver(self, number: int, kind: bytes, body: bytes) -> None:
        with self.state:
            box = self.inbox.get(number)
            new = box is None
            if box is None:
                if self._ours(number):
                    raise CodecError("a message on a channel of ours that is not open")
                if self.trusted and kind not in (b"Q", b"I"):
                    raise CodecError(f"a thread's first message is no request ({kind!r})")
                if self.trusted and len(self.serving) + len(self.pending) >= MAX_CHANNELS:
                    self.fail(
                        f"more than {MAX_CHANNELS} threads of the solution exchanged with the "
                        "tests at once"
                    )
                box = self.inbox[number] = _deque()
            elif box and self.trusted:
                # A channel's messages alternate (a request or reply, then the other side's):
                # a second before its thread took the first is the solution's flood.
                self.fail("the solution sent a second message on a channel before an answer")
            box.append((kind, body))
            sleep = self.waiting.pop(number, None)
        if sleep is not None:
            sleep.release()
        if new:
            self._serve_new(number)

    def _serve_new(self, number: int) -> None:
        """Start the thread that serves the other side's new channel ``number``. Past the
        process's thread limit (``RLIMIT_NPROC``, its address space) the channel waits until a
        thread serving another one ends (:meth:`_close_served`): in the solution, where a run's
        limit is low (48), while the tests' threads that call it take turns; the judge's is
        high, so there it fails the check."""
        name = self.names.pop(number, None) or f"Thread-{number}"
        if not self._start_serving(number, name):
            with self.state:
                self.pending.append((number, name))

    def _start_pending(self) -> None:
        """Start the threads of the channels waiting for one (see :meth:`_serve_new`), in the
        order they came, while the process may start threads."""
        while self.pending and self._start_serving(*self.pending[0]):
            with self.state:
                self.pending.pop(0)

    def _start_serving(self, number: int, name: str) -> bool:
        """Whether a thread named ``name`` now serves the other side's channel ``number``
        (False: past the process's thread limit)."""
        thread = _Thread(target=self.serve_channel, args=(number,), name=name, daemon=True)
        try:
            thread.start()
        except RuntimeError as exc:
            if self.trusted:
                self.fail(f"the judge could not start a thread to serve the solution's: {exc}")
            return False
        with self.state:
            self.serving[number] = thread
            self.threads += 1
            self.threads_started += 1
        return True

    def start_spare(self) -> None:
        """Start a thread that only reads the wire (see :meth:`word`): it reads whenever no
        other thread here does, so a new channel's first message is read however busy the
        others are."""
        with self.state:
            if self.spare:
                return
            self.spare = True
            self.inbox[_SPARE] = _deque()
        self.threads += 1
        self.threads_started += 1
        _start_thread(self.serve_channel, (_SPARE,))

    def serve_channel(self, number: int) -> None:
        """A thread of this peer's: serve the other side's channel ``number`` (its requests,
        in the judge also the solution's reads of stdin), or only read (:data:`_SPARE`),
        until that side's thread ends (``C``) or the wire does. When it breaks, the wire is
        hung up so that the check ends (the judge: "failed" with the reason; the solution:
        exit)."""
        self.local.channel = number
        try:
            while True:
                kind, body = self.next_message(number)
                if kind == b"Q":
                    self.serve(body)
                elif kind == b"I" and self.trusted:
                    self.serve_input(body)
                elif kind == b"C":
                    with self.state:
                        self.inbox.pop(number, None)
                        self.serving.pop(number, None)
                        self.threads -= 1
                    return
                else:
                    raise CodecError(f"unexpected message {kind!r}")
        except EOFError:
            return
        except BaseException as exc:
            if not self.trusted:
                os._exit(1)
            if self.broken is None:
                self.broken = self.failed or (
                    f"the solution broke the protocol ({exc})"
                    if isinstance(exc, (CodecError, OSError))
                    else f"a thread serving the solution ended with {type(exc).__name__}"
                )
            self.hang_up()

    def hang_up(self) -> None:
        """End the wire for both sides (every thread reading it, here and there, sees its
        end): the judge's way to end a check a thread other than the tests' broke."""
        with contextlib.suppress(OSError):
            sock = _Socket(fileno=self.fd)
            try:
                sock.shutdown(_SHUT_RDWR)
            finally:
                sock.detach()
