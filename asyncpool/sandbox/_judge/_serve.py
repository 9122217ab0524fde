"""The solution's side of a judged run: its namespace and stdin before its code runs
(:func:`judged_namespace`, :func:`judged_stdin`), then its greeting and the judge's requests served
(:func:`serve_solution`); and what the fork server makes for it once, before its first fork
(:func:`prepare_server`: the spare peer, the index of the standard modules' callables; the warm-up,
:func:`serve_warm_up`).

Must not: return once it serves: it ends with ``os._exit``.
"""

from __future__ import annotations

import builtins
import contextlib
import os
import sys
import types
from typing import Any, NoReturn

from . import _proxies
from ._ambient import _int_digits
from ._bounds import MAX_NAMES
from ._described import watch_background
from ._encoder import _Encoder
from ._framing import _buffers, _send
from ._handle_ids import _handle_id, own_ids_above
from ._notices import _hook_logging
from ._peer import _Peer
from ._solution_side import (
    _SERVING_FRAMES,
    _Constants,
    _Evaluator,
    _flush_streams,
    _input,
    _pin,
    _Stdin,
    _Tee,
)
from ._tests_code import _code_objects, _globals_loaded
from ._tests_namespace import TEST_MODULES
from ._tests_type import _TestsType

#: The solution's peer, made when the fork server loads the judge (see
#: :func:`_solution_peer`): each run's child takes it as its fork left it.
_SPARE_PEER: _Peer | None = None


def judged_namespace(namespace: dict[str, Any], code: types.CodeType) -> None:
    """In the solution's process, before its code runs: when the code names ``type``, its
    ``type`` is :class:`_TestsType`, which answers ``type(node)`` of a handle of the tests'
    object with the handle of the tests' class (``type(node)(5)``, ``type(a) is type(b)``,
    ``list(type(color))`` of the tests' ``Enum``), and is ``type`` for everything else; when it
    names ``id``, its ``id`` of a handle is the tests' object's own (:func:`_handle_id`), and
    of its own objects above the judge's (:func:`own_ids_above`, whatever it names). A raw
    ``_thread`` it starts is watched (:func:`watch_background`)."""
    watch_background()
    own_ids_above()
    if _loads_name(code, "type"):
        namespace["type"] = _TestsType
    if _loads_name(code, "id"):
        namespace["id"] = _handle_id


def _loads_name(code: types.CodeType, name: str) -> bool:
    """Whether ``code`` (or code nested in it) loads the global or built-in ``name``: its
    opcodes read only when one of its code objects names it at all."""
    return any(name in c.co_names for c in _code_objects(code)) and name in _globals_loaded(code)


def judged_stdin() -> None:
    """In the solution's process, before its code runs: ``sys.stdin`` and ``input`` read
    what the tests give (see :class:`_Stdin`), so that ``input = sys.stdin.readline`` at
    its top level reads it too."""
    sys.stdin = _Stdin()
    builtins.input = _input


def _solution_peer(fd: int) -> _Peer:
    """The solution's end of the wire on ``fd``: the spare :class:`_Peer` the fork server made
    when it loaded the judge (untouched there, so each run's child gets it fresh from its
    fork), with what ``_Peer.__init__`` reads from the process brought up to date (the
    streams and stdin the run set, the recursion limit the solution may have raised).

    Why not a new one: a ``_Peer`` is ~40 containers, and making them in a freshly forked
    child allocates into ~30 pages of the server's heap, each a copy-on-write fault (~80 µs
    of the child's CPU per check); taking the spare writes its attribute dict's pages only.
    """
    global _SPARE_PEER
    peer, _SPARE_PEER = _SPARE_PEER, None
    if peer is None:
        return _Peer(fd, trusted=False)
    peer.fd = fd
    peer.limit = sys.getrecursionlimit()
    peer.streams = (sys.stdout, sys.stderr)
    peer.stdin = sys.stdin
    return peer


def serve_solution(fd: int, namespace: dict[str, Any], cpu: int | None = None) -> NoReturn:
    """Announce the solution's top-level callables (those that are a standard module's
    attribute of the same name, as ``from heapq import heappush`` makes, by that name), the
    modules it imported, and the names of its other top-level values with a handle to ask for
    them (:class:`_Constants`), on ``fd``; then serve the judge's requests until EOF (on
    ``cpu``, see :func:`_pin`)."""
    _pin(cpu)
    peer = _proxies._PEER = _solution_peer(fd)
    _greet(peer, namespace)
    # The levels below the solution's function when the judge calls it: this frame and those
    # under it (the run's child), then _serve_requests, serve and perform. In-process the
    # tests' call is 3 levels deep (measured: a harness's module exec-ing the tests' module
    # recurses to rec(996) under the limit of 1,000): the limit grows by the difference, so
    # that a recursion goes as deep as there.
    frame: types.FrameType | None = sys._getframe()
    depth = 0
    while frame is not None:
        frame, depth = frame.f_back, depth + 1
    _SERVING_FRAMES[0] = max(0, depth + 3 - 3)
    with contextlib.suppress(ValueError, RecursionError, OverflowError):  # (at C int's top)
        sys.setrecursionlimit(min(sys.getrecursionlimit() + _SERVING_FRAMES[0], 2**31 - 1))
    if "logging" in sys.modules:
        _hook_logging(peer)
    sys.stdout = _Tee(sys.stdout, 1, peer)
    sys.stderr = _Tee(sys.stderr, 2, peer)
    os._exit(0 if _serve_requests(peer) else 1)


def _greet(peer: _Peer, namespace: dict[str, Any]) -> None:
    """The solution's greeting (see :func:`serve_solution`), sent on ``peer``'s wire."""
    peer.namespace = namespace  # what the judge's patches of ``solution`` set
    names: dict[str, Any] = {}
    standard: dict[str, str] = {}
    constants: list[str] = []
    for name, value in list(namespace.items()):
        if type(name) is not str or name.startswith("__"):
            continue
        if not callable(value):
            if type(value) is not type(sys) and len(constants) < MAX_NAMES:
                constants.append(name)
            continue
        if len(names) + len(standard) >= MAX_NAMES:
            break
        module = _standard_module(name, value)
        if module is None:
            names[name] = value
        else:
            standard[name] = module
    modules = {
        name: value.__name__
        for name, value in list(namespace.items())
        if type(name) is str and type(value) is type(sys)
    }
    greeting = _Encoder(peer)
    held = tuple(constants)
    if held:
        peer.constants = _Constants(namespace, held)
    evaluator = _Evaluator(namespace)
    settings = (sys.getrecursionlimit(), _int_digits())
    greeting.value(
        (names, standard, modules, (held, peer.constants) if held else (), evaluator, settings)
    )
    _flush_streams(peer.streams)  # what its top level printed
    _send(peer.fd, b"H", greeting.bytes())


def _serve_requests(peer: _Peer) -> bool:
    """Serve the judge's requests on ``peer``: ``True`` at EOF, ``False`` at a message that
    is no request."""
    peer.local.channel = 0
    while True:
        try:
            kind, body = peer.next_message(0)
        except EOFError:
            return True
        if kind != b"Q":
            return False
        peer.serve(body)


#: For the modules of :data:`TEST_MODULES` the fork server had loaded (see
#: :func:`prepare_server`): the id of each of their callables -> the modules holding it.
_STANDARD_INDEX: dict[int, tuple[str, ...]] = {}
#: The modules of :data:`TEST_MODULES` the index does not cover (not loaded in the server).
_UNINDEXED: tuple[str, ...] = tuple(sorted(TEST_MODULES))


def prepare_server() -> None:
    """In the fork server, once, before its first fork: what each run's child would otherwise
    make for itself (see :func:`_solution_peer`, :func:`_standard_module`)."""
    global _SPARE_PEER, _STANDARD_INDEX, _UNINDEXED
    _SPARE_PEER = _Peer(-1, trusted=False)
    index: dict[int, tuple[str, ...]] = {}
    unindexed = []
    for module in sorted(TEST_MODULES):
        found = _module_dict(module)
        if found is None:
            unindexed.append(module)
            continue
        alone = (module,)
        for value in found.values():
            if callable(value):
                held = index.get(id(value), ())
                if module not in held:
                    index[id(value)] = (*held, module) if held else alone
    _STANDARD_INDEX, _UNINDEXED = index, tuple(unindexed)


#: The warm-up's solution and tests (:func:`serve_warm_up`): the shapes of calls a check makes
#: most (numbers, text, containers written back, a generator, a callback, an exception, an
#: object's methods), each :data:`WARM_ROUNDS` times: past the 8 calls after which CPython 3.11
#: quickens the code that serves them (16 saved as many of a child's page faults as 64).
WARM_SOLUTION = """
import math


def add(a, b):
    return a + b


def words(text, sep=None):
    return text.split(sep)


def grid(n):
    return [[i * n + j for j in range(n)] for i in range(n)], {n, -n}


def stats(xs):
    return {"n": len(xs), "total": sum(xs), "mean": sum(xs) / len(xs) if xs else 0.0}


def squares(n):
    for i in range(n):
        yield i, i * i


def sort_in_place(a):
    a.sort()


def apply(f, xs):
    return [f(x) for x in xs]


def root(x):
    if x < 0:
        raise ValueError("negative")
    return math.sqrt(x)


class Stack:
    def __init__(self):
        self.items = []

    def push(self, x):
        self.items.append(x)

    def pop(self):
        return self.items.pop()

    def __len__(self):
        return len(self.items)
"""
WARM_ROUNDS = 16
WARM_TESTS = f"""
def check(candidate):
    for i in range({WARM_ROUNDS}):
        assert candidate(i, 1) == i + 1
        assert candidate("a", str(i)) == "a" + str(i)
        assert words("a b c") == ["a", "b", "c"]
        assert words(text="é,ü", sep=",") == ["é", "ü"]
        assert grid(2) == ([[0, 1], [2, 3]], {{2, -2}})
        assert stats([1, 2, i])["n"] == 3
        assert list(squares(2)) == [(0, 0), (1, 1)]
        a = [3, 1, i]
        sort_in_place(a)
        assert a == sorted([3, 1, i])
        assert apply(lambda x: x * 2, [1, 2.5]) == [2, 5.0]
        try:
            root(-1.0)
        except ValueError:
            pass
        assert root(4.0) == 2.0
        s = Stack()
        s.push((i, None, True))
        assert len(s) == 1 and s.items == [(i, None, True)]
        assert s.pop() == (i, None, True)
"""


def serve_warm_up(fd: int) -> bool:
    """The fork server's warm-up (``_zygote_prepare.warm_up``): serve :data:`WARM_SOLUTION` on
    ``fd`` to a judge of :data:`WARM_TESTS`, in this process, as a run's child serves its
    judge; ``True`` when served to the end (EOF). Never raises. Nothing of it stays here but
    the interpreter's own caches: ``_PEER`` is reset, the wire's buffer is dropped, and the
    namespace and the peer are garbage (collected before the server freezes its heap).

    Why: CPython 3.11 quickens a function's bytecode in place after its 8th call (or loop
    iteration), writing into the code object, and then specialises its instructions. Each
    run's child is a fresh fork, so the code that serves the judge was cold in every child:
    each check quickened it anew, and each page of bytecode written was a copy-on-write fault.
    Run in the server, that code is quickened once and every child inherits it."""
    try:
        namespace: dict[str, Any] = {"__name__": "solution", "__builtins__": builtins}
        exec(compile(WARM_SOLUTION, "<program>", "exec", dont_inherit=True), namespace)
        peer = _proxies._PEER = _Peer(fd, trusted=False)
        _greet(peer, namespace)
        return _serve_requests(peer)
    except Exception:
        return False
    finally:
        _proxies._PEER = None
        _buffers.pop(fd, None)


def _standard_module(name: str, value: Any) -> str | None:
    """The module of :data:`TEST_MODULES` whose attribute ``name`` is ``value`` (the solution's
    ``from heapq import heappush``), if any: the judge then uses its own.

    Why an index made in the server: the loop over the 21 modules' dicts, done for each of the
    solution's names in a freshly forked child, wrote (reference counts) a page of each module
    object and of each dict, ~20 copy-on-write faults per check. The index only says which
    modules to look in; the module's own dict decides, so an id the server saw for an object
    since freed cannot answer wrong, and a module attribute the solution replaced is its own
    (a handle), as in-process. Modules the server had not loaded (numpy) are looked up as
    before."""
    for module in (*_STANDARD_INDEX.get(id(value), ()), *_UNINDEXED):
        found = _module_dict(module)
        if found is not None and found.get(name) is value:
            return module
    return None


def _module_dict(module: str) -> dict[str, Any] | None:
    """The dict of the module ``module`` if it is loaded here. Read directly, not through
    ``getattr``: a miss is then a dict lookup, not two ``AttributeError``s formatted and
    cleared, nor a call of a module's own ``__getattr__``."""
    found = getattr(sys.modules.get(module), "__dict__", None)
    return found if type(found) is dict else None
