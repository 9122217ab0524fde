"""The judge of ``sandbox.run_tests``: tests in a trusted process, the solution behind a wire.

Loaded by the fork server (:mod:`asyncpool.sandbox._zygote`, by file path: it never imports the
``asyncpool`` package), standard library only. For each ``run_tests`` the server forks two
processes:

* the **solution** process (jailed, its own sandbox uid) runs the solution's source as
  ``__main__`` and then :func:`serve_solution`: it announces the names of its top-level
  callables and answers calls to them;
* the **judge** process (trusted code, another uid the solution cannot signal or ptrace,
  non-dumpable) runs the tests in a fresh namespace where each of those names is a
  :class:`_Proxy` (:func:`judge`), then writes its verdict on a pipe only the caller holds.

Only plain data crosses, in this module's own format: ``None``, ``bool``, ``int``, ``float``,
``complex``, ``str``, ``bytes``, ``list``, ``tuple``, ``dict``, ``set``, ``frozenset``, nested
(at most :data:`MAX_DEPTH` deep, :data:`MAX_ITEMS` items, :data:`MAX_MESSAGE` bytes). The
decoder (:func:`decode`) is strict and builds only those exact types, so whatever the solution
sends, the tests compare built-in values with built-in ``__eq__``; a result that is anything
else (a subclass of ``int``, an object equal to everything, a generator, a lambda) cannot be
encoded and fails the test. It is hand-written because ``pickle`` and ``marshal`` must never
read untrusted bytes, and ``json`` cannot tell a tuple from a list or carry bytes and sets.
"""

from __future__ import annotations

import builtins
import contextlib
import importlib
import keyword
import os
import struct
import traceback
import types
from typing import Any, NoReturn

#: Largest message either side may send, in bytes.
MAX_MESSAGE = 64 * 1024 * 1024
#: Deepest nesting of containers in one value.
MAX_DEPTH = 100
#: Most values (containers and scalars) in one message.
MAX_ITEMS = 4_000_000
#: Most callables the solution may announce.
MAX_NAMES = 10_000

_LEN = struct.Struct("=I")
_U32 = struct.Struct(">I")
_F64 = struct.Struct(">d")
_C128 = struct.Struct(">dd")


class CodecError(ValueError):
    """A value cannot be encoded, or bytes are not a valid message."""


# -- encoding (used on both sides; the judge encodes arguments, the solution results) --------


def encode(value: object) -> bytes:
    """``value`` as bytes; :class:`CodecError` unless it is plain data of exact built-in types."""
    out: list[bytes] = []
    _encode(value, out, 0, [0])
    return b"".join(out)


def _encode(value: object, out: list[bytes], depth: int, count: list[int]) -> None:
    count[0] += 1
    if count[0] > MAX_ITEMS:
        raise CodecError("too many items")
    if depth > MAX_DEPTH:
        raise CodecError("nested too deep")
    kind = type(value)
    if value is None:
        out.append(b"N")
    elif isinstance(value, bool):  # exactly bool: it cannot be subclassed
        out.append(b"T" if value else b"F")
    elif isinstance(value, int) and kind is int:
        data = value.to_bytes((value.bit_length() + 8) // 8, "big", signed=True)
        out += (b"i", _U32.pack(len(data)), data)
    elif isinstance(value, float) and kind is float:
        out += (b"f", _F64.pack(value))
    elif isinstance(value, complex) and kind is complex:
        out += (b"c", _C128.pack(value.real, value.imag))
    elif isinstance(value, str) and kind is str:
        data = value.encode("utf-8", "surrogatepass")
        out += (b"s", _U32.pack(len(data)), data)
    elif isinstance(value, bytes) and kind is bytes:
        out += (b"b", _U32.pack(len(value)), value)
    elif isinstance(value, (list, tuple, set, frozenset)) and kind in _CONTAINER_TAGS:
        items = list(value)
        out += (_CONTAINER_TAGS[kind], _U32.pack(len(items)))
        for item in items:
            _encode(item, out, depth + 1, count)
    elif isinstance(value, dict) and kind is dict:
        pairs = list(value.items())
        out += (b"d", _U32.pack(len(pairs)))
        for key, item in pairs:
            _encode(key, out, depth + 1, count)
            _encode(item, out, depth + 1, count)
    else:
        raise CodecError(f"cannot send a {kind.__name__!s:.100} (only plain built-in data)")


_CONTAINER_TAGS: dict[type, bytes] = {list: b"l", tuple: b"t", set: b"S", frozenset: b"z"}


# -- decoding (strict: exact types only, every length checked) -------------------------------


def decode(data: bytes) -> Any:
    """The value :func:`encode` made; :class:`CodecError` for anything else."""
    state = _Reader(data)
    value = state.value(0)
    if state.pos != len(data):
        raise CodecError("trailing bytes")
    return value


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0
        self.count = 0

    def take(self, n: int) -> bytes:
        end = self.pos + n
        if n < 0 or end > len(self.data):
            raise CodecError("truncated message")
        chunk = self.data[self.pos : end]
        self.pos = end
        return chunk

    def length(self) -> int:
        n: int = _U32.unpack(self.take(4))[0]
        if n > len(self.data) - self.pos:  # every item takes at least one byte
            raise CodecError("length past the end of the message")
        return n

    def value(self, depth: int) -> Any:
        self.count += 1
        if self.count > MAX_ITEMS:
            raise CodecError("too many items")
        if depth > MAX_DEPTH:
            raise CodecError("nested too deep")
        tag = self.take(1)
        if tag == b"N":
            return None
        if tag == b"T":
            return True
        if tag == b"F":
            return False
        if tag == b"i":
            n = self.length()
            if n == 0:
                raise CodecError("empty int")
            return int.from_bytes(self.take(n), "big", signed=True)
        if tag == b"f":
            return _F64.unpack(self.take(8))[0]
        if tag == b"c":
            real, imag = _C128.unpack(self.take(16))
            return complex(real, imag)
        if tag == b"s":
            try:
                return self.take(self.length()).decode("utf-8", "surrogatepass")
            except UnicodeDecodeError as exc:
                raise CodecError("invalid UTF-8") from exc
        if tag == b"b":
            return self.take(self.length())
        if tag in (b"l", b"t", b"S", b"z"):
            n = self.length()
            items = [self.value(depth + 1) for _ in range(n)]
            if tag == b"l":
                return items
            if tag == b"t":
                return tuple(items)
            try:
                return set(items) if tag == b"S" else frozenset(items)
            except TypeError as exc:
                raise CodecError("unhashable set member") from exc
        if tag == b"d":
            n = self.length()
            out: dict[Any, Any] = {}
            for _ in range(n):
                key = self.value(depth + 1)
                try:
                    out[key] = self.value(depth + 1)
                except TypeError as exc:
                    raise CodecError("unhashable dict key") from exc
            return out
        raise CodecError(f"unknown tag {tag!r}")


# -- framing -----------------------------------------------------------------------------------


def _send(fd: int, kind: bytes, body: bytes) -> None:
    frame = memoryview(_LEN.pack(len(body) + 1) + kind + body)
    while frame:
        frame = frame[os.write(fd, frame) :]


_buffers: dict[int, bytearray] = {}


def _recv(fd: int) -> tuple[bytes, bytes]:
    """One message: (kind, body). Reads ahead into a buffer per descriptor, so a small message
    costs one ``read``."""
    buf = _buffers.setdefault(fd, bytearray())
    need = _LEN.size
    while True:
        if len(buf) >= _LEN.size:
            (n,) = _LEN.unpack_from(buf)
            if not 1 <= n <= MAX_MESSAGE:
                raise CodecError(f"message of {n} bytes")
            need = _LEN.size + n
            if len(buf) >= need:
                data = bytes(buf[_LEN.size : need])
                del buf[:need]
                return data[:1], data[1:]
        chunk = os.read(fd, min(max(1 << 16, need - len(buf)), 1 << 20))
        if not chunk:
            raise EOFError
        buf += chunk


# -- the solution's side (runs inside the jail; nothing here is trusted by the judge) ---------


def _pin(cpu: int | None) -> None:
    """Run on ``cpu`` from now on: the judge and the solution take turns, and a turn on one CPU
    is a local wakeup, much cheaper than one across CPUs (own time does not change)."""
    if cpu is not None:
        with contextlib.suppress(OSError):
            os.sched_setaffinity(0, {cpu})


def serve_solution(fd: int, namespace: dict[str, Any], cpu: int | None = None) -> NoReturn:
    """Announce the solution's top-level callables (and the modules it imported, by name) on
    ``fd``, then answer calls until EOF (on ``cpu``, see :func:`_pin`)."""
    _pin(cpu)
    names = [
        name
        for name, value in list(namespace.items())
        if type(name) is str and callable(value) and not name.startswith("__")
    ][:MAX_NAMES]
    modules = {
        name: value.__name__
        for name, value in list(namespace.items())
        if type(name) is str and isinstance(value, types.ModuleType)
    }
    _send(fd, b"H", encode((names, modules)))
    while True:
        try:
            kind, body = _recv(fd)
        except EOFError:
            os._exit(0)
        if kind != b"C":
            os._exit(1)
        name, args, kwargs = decode(body)
        try:
            result = namespace[name](*args, **kwargs)
            reply = encode(result)
        except CodecError as exc:
            _send(fd, b"U", encode(str(exc)))
            continue
        except BaseException as exc:
            try:
                message = str(exc)[:10_000]
            except BaseException:
                message = "<unprintable>"
            _send(fd, b"X", encode((type(exc).__name__[:200], message)))
            continue
        _send(fd, b"R", reply)


# -- the judge's side (trusted) ----------------------------------------------------------------


class SolutionBroke(BaseException):
    """The solution process died, hung up, or broke the protocol: no test can pass any more.

    A ``BaseException`` so that ``except Exception`` in a test does not swallow it; the judge
    also remembers it, so that even a bare ``except:`` cannot turn it into a pass."""


class SolutionError(Exception):
    """Stands for an exception of the solution whose type is not a built-in exception."""


_state: dict[str, Any] = {"broken": None, "answered": 0}


#: The solution's exceptions that reach the tests as themselves (so that ``except ValueError``
#: in a test works). Not ``StopIteration``: raised inside ``map`` or a generator, it would end
#: the tests' iteration early (``all(map(...))`` would be true); not ``BaseException``s.
_PASSED_THROUGH = {
    cls.__name__: cls
    for cls in (
        ArithmeticError, AssertionError, AttributeError, EOFError, Exception, IndexError,
        KeyError, LookupError, NameError, NotImplementedError, OSError, OverflowError,
        RecursionError, RuntimeError, TypeError, UnicodeError, ValueError, ZeroDivisionError,
    )
}  # fmt: skip


def _solution_exception(name: str, message: str) -> Exception:
    """The solution's exception as the tests see it: the built-in type of that name when it is
    one of :data:`_PASSED_THROUGH`, else :class:`SolutionError`."""
    cls = _PASSED_THROUGH.get(name)
    return cls(message) if cls is not None else SolutionError(f"{name}: {message}")


#: Standard modules the judge imports for the tests when the solution imported them.
TEST_MODULES = frozenset({
    "array", "bisect", "cmath", "collections", "copy", "datetime", "decimal", "fractions",
    "functools", "heapq", "itertools", "json", "math", "operator", "random", "re", "statistics",
    "string", "sys", "typing",
})  # fmt: skip


def _valid_greeting(greeting: object) -> bool:
    if type(greeting) is not tuple or len(greeting) != 2:
        return False
    names, modules = greeting
    return (
        type(names) is list
        and all(type(n) is str for n in names)
        and type(modules) is dict
        and all(type(k) is str and type(v) is str for k, v in modules.items())
    )


def _may_proxy(name: str) -> bool:
    """Whether a name the solution announced may stand in the tests' namespace: never one
    that would shadow a built-in (a solution defining ``abs`` must not change the tests'
    ``abs``), a dunder, or a keyword."""
    return (
        name.isidentifier()
        and not keyword.iskeyword(name)
        and not name.startswith("__")
        and not hasattr(builtins, name)
    )


class _Proxy:
    """A solution's top-level callable, as seen by the tests."""

    __slots__ = ("__name__", "__qualname__", "_fd", "_name")

    def __init__(self, fd: int, name: str) -> None:
        self._fd = fd
        self._name = name
        self.__name__ = self.__qualname__ = name

    def __repr__(self) -> str:
        return f"<solution function {self._name}>"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if _state["broken"] is not None:
            raise SolutionBroke(_state["broken"])
        try:
            request = encode((self._name, args, kwargs))
        except CodecError as exc:
            # The tests passed something that is not plain data (a lambda, an object): the
            # solution cannot be called with it here. A failure, but not the solution's fault.
            raise TypeError(f"argument cannot be sent to the solution: {exc}") from None
        try:
            _send(self._fd, b"C", request)
            kind, body = _recv(self._fd)
            if kind == b"R":
                value = decode(body)
                _state["answered"] += 1
                return value
            if kind == b"X":
                pair = decode(body)
                if type(pair) is tuple and len(pair) == 2 and all(type(p) is str for p in pair):
                    _state["answered"] += 1
                    raise _solution_exception(pair[0], pair[1])
                raise CodecError("malformed exception")
            if kind == b"U":
                _broken(f"{self._name} returned a value that is not plain data: {decode(body)}")
            raise CodecError(f"unexpected reply {kind!r}")
        except (EOFError, OSError, CodecError) as exc:
            _broken(f"the solution stopped answering or broke the protocol ({exc!r})")


def _broken(reason: str) -> NoReturn:
    if _state["broken"] is None:
        _state["broken"] = reason
    raise SolutionBroke(reason)


def judge(
    sock_fd: int, verdict_fd: int, tests: str, entry_point: str | None, cpu: int | None = None
) -> NoReturn:
    """Run ``tests`` against the solution behind ``sock_fd``; write ``P`` or ``F<reason>`` on
    ``verdict_fd``; exit. ``P`` is written only when every test ran to its end. Once the
    solution is ready, runs on ``cpu`` (see :func:`_pin`)."""
    verdict = b"F"
    try:
        try:
            kind, body = _recv(sock_fd)
        except (EOFError, OSError):
            _broken("the solution exited or failed before defining its functions")
        _pin(cpu)
        greeting = decode(body) if kind == b"H" else None
        if not _valid_greeting(greeting):
            _broken("the solution sent a malformed greeting")
        assert isinstance(greeting, tuple)
        names, modules = greeting
        namespace: dict[str, Any] = {"__name__": "__main__", "__builtins__": builtins}
        for name in names[:MAX_NAMES]:
            if _may_proxy(name):
                namespace[name] = _Proxy(sock_fd, name)
        # MBPP's asserts use modules the solution imported (``math.isclose`` with no import
        # of their own): the judge imports its own copy of those from a list of standard
        # modules; nothing of the solution's modules crosses.
        for alias, module in list(modules.items())[:MAX_NAMES]:
            if module in TEST_MODULES and _may_proxy(alias) and alias not in namespace:
                namespace[alias] = importlib.import_module(module)
        code = compile(tests, "<tests>", "exec")
        exec(code, namespace)
        if entry_point is not None:
            check = namespace.get("check")
            if not callable(check):
                raise NameError("the tests define no check(candidate) function")
            # The entry point is the solution's, even where the tests define a stub of it
            # (HumanEval's prompt does; HumanEval/33's check calls it by name).
            candidate = namespace[entry_point] = _Proxy(sock_fd, entry_point)
            check(candidate)
        if _state["broken"] is None and _state["answered"] > 0:
            verdict = b"P"
        elif _state["broken"] is None:
            verdict = b"Fthe tests never got an answer from the solution: nothing was judged"
        else:
            verdict = b"F" + str(_state["broken"]).encode("utf-8", "replace")
    except BaseException as exc:
        reason = _state["broken"] or _describe(exc)
        verdict = b"F" + reason.encode("utf-8", "replace")[:8000]
    try:
        os.write(verdict_fd, verdict[:16000])
    finally:
        os._exit(0)


def _describe(exc: BaseException) -> str:
    try:
        lines = traceback.format_exception(type(exc), exc, exc.__traceback__)
        return "".join(lines[-6:])
    except BaseException:
        return type(exc).__name__
