"""Attacks on the surface the in-process semantics of ``run_tests`` added: handles, iteration,
callbacks, write-back, the standard types, and forged messages from a solution that rewrites
its own end of the wire. Every one must be "failed" (never "passed", never a hang).

Each attack is paired with tests an honest solution passes (its :data:`HONEST` twin proves the
tests are passable, so a "failed" is the attack's doing). The slow ones (a bound of 200,000
round trips is met) are in the slow tier.
"""

from __future__ import annotations

import datetime
import re
import textwrap
import zoneinfo
from typing import Any

import pytest

from asyncpool.sandbox import _judge, run_tests
from asyncpool.sandbox._judge import (
    _described,
    _exceptions,
    _ops,
    _patches,
    _proxy_classes,
    _values,
)
from tests._programs import JUDGE_WIRE


def _d(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


#: The problem most attacks target: sort a list ascending; the tests compare with values.
SORT_TESTS = _d("""
    assert solve([3, 1, 2]) == [1, 2, 3]
    assert solve([]) == []
    assert not (solve([2, 1]) != [1, 2])
""")
HONEST_SORT = "def solve(xs):\n    return sorted(xs)\n"

#: Forged replies: the solution replaces ``_Peer.reply`` of its own copy of the judge (it is in
#: its memory) with one that returns ``BODY`` and then answers with ``KIND``.
_FORGE = JUDGE_WIRE + _d("""
    import struct, sys
    U32 = struct.Struct(">I").pack
    def solve(xs):
        return sorted(xs)
    def forged(self, result, back, received, changed, key=None, kept=None):
        # and no watched value changed, no kept container (this result, another, the request's),
        # no value-backed object changed, no change of the ambient state the judge follows
        return (
            BODY + wire.encode(()) + wire.encode(None) + wire.encode(()) + wire.encode(())
            + wire.encode(()) + wire.encode(None)
        )
    wire._Peer.reply = forged
""")


def _forge(body: str, kind: str = "R", numpy: bool = False) -> str:
    """A solution whose replies are ``body`` (of message kind ``kind``), the wire's tail
    after it; ``numpy``: ``np`` is imported for ``body``."""
    code = _FORGE.replace("BODY", body)
    if numpy:
        code = code.replace("import struct, sys", "import struct, sys\nimport numpy as np")
    if kind != "R":
        # only the replies: the greeting ("H") goes out as it is
        code += "_send = wire._send\n"
        code += f"def _kind(k):\n    return {kind.encode()!r} if k == b'R' else k\n"
        code += "wire._send = lambda fd, k, b, **kw: _send(fd, _kind(k), b, **kw)\n"
    return code


#: A solution that reads its pid through ``open`` (the judge's pid if it were the judge's open).
PID_FROM_OPEN = _d("""
    def solve():
        with open("/proc/self/stat") as f:
            return int(f.read().split()[0])
""")


def _answering_type(kind: str) -> str:
    """The head of a solution that rewrote its side of the wire to answer every ``type``
    request of the judge with the built-in class ``kind``."""
    return JUDGE_WIRE + _d(f"""
        import sys
        Peer = wire._Peer
        perform = Peer.perform
        def lying(self, op, obj, args, kwargs):
            return {kind} if op == "type" else perform(self, op, obj, args, kwargs)
        Peer.perform = lying
    """)


def _claimed_exception(module: str, name: str, args: tuple[object, ...] = ()) -> str:
    """A solution right everywhere but on ``[2, 1]``, where it raises a ``ValueError`` whose
    detail (see ``_exceptions._exception_detail``, rewritten in its own copy of the wire) claims
    the standard library class ``module.name``: the judge must never make that class of it
    when it is one whose raising means more than a failure."""
    return JUDGE_WIRE + _d(f"""
        import sys
        def detail(exc, own):
            return ({args!r}, (), ({module!r}, {name!r}))
        wire._exception_detail = detail
        def solve(xs):
            if xs == [2, 1]:
                raise ValueError()
            return sorted(xs)
    """)


#: Tests whose callback raises an exception the solution lets through: the tests' own again.
RAISED_BACK = _d("""
    def boom():
        raise ValueError("the tests' message")
    try:
        call(boom)
    except ValueError as exc:
        assert str(exc) == "the tests' message" and type(exc) is ValueError
""")



def _raising_back(described: str) -> str:
    """A solution whose wire describes every exception it raises as ``described`` (a forged
    mark of the tests' exception raised back, see ``_exceptions._RAISED``)."""
    return JUDGE_WIRE + _d(f"""
        import sys
        def call(f):
            wire._Peer.describe = lambda self, exc, depth=0: {described}
            raise ValueError("mine")
    """)


ATTACKS: list[tuple[str, str, str]] = [
    (
        "a handle whose __eq__ and __ne__ lie",
        _d("""
            class Liar:
                def __eq__(self, other): return True
                def __ne__(self, other): return False
                __hash__ = object.__hash__
            def solve(xs):
                return Liar()
        """),
        SORT_TESTS,
    ),
    (
        "a list of handles whose __eq__ lies",
        "class I(int):\n    __eq__ = lambda s, o: True\n    __hash__ = int.__hash__\n"
        "def solve(xs):\n    return [I(0) for _ in xs]\n",
        SORT_TESTS,
    ),
    (
        "a Counter subclass pretending",
        _d("""
            from collections import Counter
            class C(Counter):
                def __eq__(self, other): return True
                def __ne__(self, other): return False
            def solve(s):
                return C()
        """),
        "assert solve('aab') == {'a': 2, 'b': 1}\nassert solve('') == {}\n",
    ),
    (
        "a ChainMap over a dict subclass whose __eq__ lies",
        _d("""
            from collections import ChainMap
            class D(dict):
                def __eq__(self, other): return True
                def __ne__(self, other): return False
            def solve(s):
                return ChainMap(D())
        """),
        "assert solve('aab') == {'a': 2, 'b': 1}\nassert not (solve('') != {'x': 1})\n",
    ),
    (
        "a SimpleNamespace or UUID subclass whose __eq__ lies",
        _d("""
            import uuid
            from types import SimpleNamespace
            class N(SimpleNamespace):
                def __eq__(self, other): return True
            class U(uuid.UUID):
                def __eq__(self, other): return True
            def solve(s):
                return N() if s else U(int=0)
        """),
        "from types import SimpleNamespace\nimport uuid\n"
        "assert solve('x') == SimpleNamespace(a=1)\nassert solve('') == uuid.UUID(int=7)\n",
    ),
    (
        "a ChainMap subclass pretending",
        _d("""
            from collections import ChainMap
            class C(ChainMap):
                def __eq__(self, other): return True
                def __ne__(self, other): return False
                def __len__(self): return 2
                def __iter__(self): return iter("ab")
                def __getitem__(self, key): return {"a": 2, "b": 1}.get(key, 0)
            def solve(s):
                return C() if s == "aab" else C({"x": 1})
        """),
        "assert solve('aab') == {'a': 2, 'b': 1}\nassert solve('') == {}\n",
    ),
    (
        "a defaultdict whose factory is the solution's code",
        _d("""
            from collections import defaultdict
            class Yes:
                def __eq__(self, other): return True
            def solve(s):
                return defaultdict(Yes)
        """),
        "assert solve('aab') == {'a': 2, 'b': 1}\n",
    ),
    (
        "handle cycle: a list that contains itself",
        "def solve(xs):\n    a = []\n    a.append(a)\n    return a\n",
        SORT_TESTS,
    ),
    (
        "handle cycle: nodes pointing at each other",
        _d("""
            class Node:
                def __init__(self): self.next = self
                def __eq__(self, other): return self.next == other
                __hash__ = object.__hash__
            def solve(xs):
                return Node()
        """),
        SORT_TESTS,
    ),
    (
        "with block swallowing the tests' AssertionError",
        _d("""
            class Quiet:
                def __enter__(self): return self
                def __exit__(self, *exc): return True
            def solve(xs):
                return Quiet()
        """),
        "with solve([1]) as q:\n    assert q == [1]\n",
    ),
    (
        "async with block swallowing the tests' AssertionError",
        _d("""
            class Quiet:
                async def __aenter__(self): return self
                async def __aexit__(self, *exc): return True
            def solve(xs):
                return Quiet()
        """),
        _d("""
            import asyncio
            async def main():
                async with solve([1]) as q:
                    assert q == [1]
            asyncio.run(main())
        """),
    ),
    (
        "catching the AssertionError of a callback of the tests",
        _d("""
            def solve(xs, check):
                try:
                    check(list(xs))
                except BaseException:
                    pass
                return sorted(xs)
        """),
        "def check(r):\n    assert r == sorted(r)\nassert solve([2, 1], check) == [1, 2]\n",
    ),
    (
        "reading the tests' constants through a generator's frame",
        _d("""
            def solve(xs):
                try:
                    consts = xs.gi_frame.f_back.f_code.co_consts
                except Exception:
                    consts = xs.gi_code.co_consts
                return [c for c in consts if isinstance(c, int)]
        """),
        "assert solve(x for x in [3, 1, 2]) == [1, 2, 3]\n",
    ),
    (
        "reading the tests' globals or constants through a lambda",
        # its __code__ is made in the solution's process (see _function_code): none of theirs
        _d("""
            def solve(key, xs):
                for name in ("__globals__", "__closure__", "__dict__", "__defaults__"):
                    try:
                        getattr(key, name)
                        return sorted(xs, key=key)
                    except AttributeError:
                        pass
                code = key.__code__
                if "secret" in code.co_consts or "SECRET" in code.co_names:
                    return sorted(xs, key=key)
                return list(xs)
        """),
        "SECRET = 1\n"
        "assert solve(lambda x: x if SECRET != 'secret' else 0, [3, 1, 2]) == [1, 2, 3]\n",
    ),
    (
        "a class named like a standard module for the tests to use",
        "class math:\n    isclose = staticmethod(lambda *a, **k: True)\n"
        "def solve(r):\n    return 0\n",
        "assert math.isclose(solve(2), 12.566370614359172)\n",
    ),
    (
        "a huge write-back (over the message bound)",
        "def solve(xs):\n    xs.append('x' * (65 * 2 ** 20))\n    return sorted(xs[:-1])\n",
        "a = [3, 1, 2]\nassert solve(a) == [1, 2, 3]\n",
    ),
    (
        "callbacks nested without end",
        "def solve(f, n):\n    return f(n)\n",
        "def f(n):\n    return solve(f, n + 1)\nassert solve(f, 0) == 0\n",
    ),
    (
        "more handles than the bound",
        "class A:\n    pass\ndef solve(xs):\n    return [A() for _ in range(250_000)]\n",
        "assert len(solve([1])) == 250_000 and solve([2, 1]) == [1, 2]\n",
    ),
    (
        "forged reply: a numpy array of object dtype",
        _forge(
            'b"n" + U32(3) + b"|O8" + b"t" + U32(1) + b"i" + U32(1) + b"\\x01" + U32(8) '
            "+ bytes(8) + U32(0)"
        ),
        SORT_TESTS,
    ),
    (
        "forged reply: a numpy bool that is 2",
        _forge('b"k" + U32(3) + b"|b1" + U32(1) + b"\\x02" + U32(0)'),
        "assert solve([1]) == True\n",
    ),
    (
        "forged reply: a numpy text scalar whose unit is no code point",
        _forge('b"k" + U32(3) + b"<U1" + U32(4) + b"\\x00\\x00\\x11\\x00" + U32(0)'),
        "assert solve([1]) == 'a'\n",
    ),
    (
        "forged reply: a numpy text array of a surrogate",
        _forge(
            'b"n" + U32(3) + b"<U1" + b"t" + U32(1) + b"i" + U32(1) + b"\\x01" + U32(4) '
            '+ b"\\x00\\xd8\\x00\\x00" + U32(0)'
        ),
        "assert list(solve([1])) == ['a']\n",
    ),
    (
        "forged reply: a numpy text dtype of width 0",
        _forge('b"k" + U32(3) + b"<U0" + U32(0) + U32(0)'),
        "assert solve([1]) == ''\n",
    ),
    (
        "forged reply: a handle of the judge it was never given",
        _forge('b"y" + U32(0) + U32(0)'),
        SORT_TESTS,
    ),
    (
        "forged reply: a write-back of another type",
        _forge('b"l" + U32(0) + U32(1) + U32(0) + b"d" + U32(0)'),
        "a = [3, 1, 2]\nassert solve(a) == [1, 2, 3]\n",
    ),
    (
        "forged reply: end of iteration for a call",
        _forge('b"N" + U32(0)', kind="E"),
        "try:\n    solve([1])\nexcept StopIteration:\n    pass\nassert solve([2, 1]) == [1, 2]\n",
    ),
    (
        "forged reply: a reference to a container of no request",
        _forge('b"a" + U32(7) + U32(0)'),
        SORT_TESTS,
    ),
    (
        "forged reply: a value-backed handle whose base is no value type",
        _forge('b"v" + U32(0) + b"N" + U32(0)'),
        SORT_TESTS,
    ),
    (
        "forged reply: a built-in class that does not exist",
        _forge('b"e" + U32(4) + b"evil" + U32(0)'),
        SORT_TESTS,
    ),
    (
        "an exception class whose forged bases hold StopIteration, raised in the tests' map",
        # right everywhere but on [2, 1], met only inside the tests' all(map(...)): were the
        # judge's class for it a StopIteration, map would end early and all() be true.
        JUDGE_WIRE + _d("""
            import sys
            class EndsTheMap(ValueError):
                pass
            def spec(cls):
                return ("EndsTheMap", "ValueError", (StopIteration,))
            wire._exception_class_spec = spec
            def solve(xs):
                if xs == [2, 1]:
                    raise EndsTheMap()
                return sorted(xs)
        """),
        "assert all(map(lambda xs: solve(xs) == sorted(xs), [[1], [2, 1], [3, 1, 2]]))\n",
    ),
    (
        "an exception claimed to be unittest's SkipTest, raised in a unittest test",
        # Rebuilt as SkipTest, it would skip the test the solution fails: a skipped test is
        # no failure.
        _claimed_exception("unittest.case", "SkipTest"),
        _d("""
            import unittest
            class TestSort(unittest.TestCase):
                def test_sort(self):
                    self.assertEqual(solve([3, 1, 2]), [1, 2, 3])
                def test_pair(self):
                    self.assertEqual(solve([2, 1]), [1, 2])
        """),
    ),
    (
        "an exception claimed to be StopIteration, raised in the tests' map",
        _claimed_exception("builtins", "StopIteration"),
        "assert all(map(lambda xs: solve(xs) == sorted(xs), [[1], [2, 1], [3, 1, 2]]))\n",
    ),
    (
        "an exception claimed to be an exception group, caught by the tests' except*",
        _claimed_exception("builtins", "ExceptionGroup", args=("g", [1])),
        "try:\n    solve([2, 1])\nexcept* ValueError:\n    pass\nassert solve([2, 1]) == [1, 2]\n",
    ),
    (
        "forged reply: an exception class of a base that is not passed through",
        _forge('b"E" + U32(0) + wire.encode(("Stop", "StopIteration", ())) + U32(0)'),
        SORT_TESTS,
    ),
    (
        "more exception classes than the bound",
        "classes = [type(f'E{i}', (ValueError,), {}) for i in range(1500)]\n"
        "def solve(xs):\n    return classes if not xs else sorted(xs)\n",
        SORT_TESTS,
    ),
    (
        "a module written where the tests work, named as one they import",
        # The tests use files, so they share the solution's working directory: a module
        # planted there must never be what their import finds.
        _d("""
            with open("colorsys.py", "w") as fh:
                fh.write("def rgb_to_hsv(*a):\\n    return 0\\n")
            def solve(xs):
                return xs
        """),
        "import os, colorsys\nassert os.path.exists('colorsys.py')\n"
        "assert colorsys.rgb_to_hsv(*solve([3, 1, 2])) == colorsys.rgb_to_hsv(1, 2, 3)\n",
    ),
    (
        "builtins.open patched by the tests with a function that opens for real",
        # Were such a patch the solution's open too, the solution would open, in the judge,
        # any path it likes (the judge's /proc/self/mem): its own open stays. Here it reads
        # its pid from /proc/self/stat, which is the judge's only through the judge's open.
        PID_FROM_OPEN,
        _d("""
            import builtins, os
            from unittest.mock import patch
            real_open = builtins.open
            with patch("builtins.open", side_effect=lambda *a, **k: real_open(*a, **k)):
                assert solve() == os.getpid()
        """),
    ),
    (
        "a deep copy of the tests' object, read for its private expected answer",
        _d("""
            import copy
            def answer(case):
                return getattr(copy.deepcopy(case), "_expected")
        """),
        _d("""
            class Case:
                def __init__(self, question, expected):
                    self.question, self._expected = question, expected
            assert answer(Case("6 * 7", 42)) == 42
        """),
    ),
    (
        "the solution's wire answers the tests' type() of its int subclass with float",
        _answering_type("float") + "class I(int):\n    pass\ndef half(n):\n    return I(n // 2)\n",
        "assert type(half(4)) is float and half(4) == 2\n",
    ),
    (
        "the solution's wire answers the tests' type() of its iterable with list",
        _answering_type("list") + _d("""
            class Evens:
                def __iter__(self):
                    return iter([2, 4])
            def evens(n):
                return Evens()
        """),
        "r = evens(5)\nassert type(r) is list and list(r) == [2, 4]\n",
    ),
    (
        "a class of the solution renamed as matplotlib's Axes, for isinstance and type()",
        _d("""
            class Axes:
                def get_title(self):
                    return "T"
            Axes.__module__ = "matplotlib.axes._axes"
            def make():
                return Axes()
        """),
        _d("""
            from matplotlib.axes import Axes
            ax = make()
            assert ax.get_title() == "T"
            assert isinstance(ax, Axes) or type(ax) is Axes
        """),
    ),
    (
        "forged reply: a change of an environment variable the tests do not name",
        JUDGE_WIRE + _d("""
            import os, sys
            def solve():
                peer = wire._PEER
                peer.back = (peer.back[0], (*peer.back[1], "LD_PRELOAD"))
                os.environ["LD_PRELOAD"] = "/tmp/evil.so"
                return 1
        """),
        'import os\nassert solve() == 1 and os.environ.get("APP") is None\n',
    ),
    (
        "forged reply: a change of a generator the judge does not follow",
        # only the labels of _SEEDED name a generator whose change the judge takes
        JUDGE_WIRE + _d("""
            import sys
            def solve():
                wire._Peer.ambient_changes = lambda self: (None, (), ("<argv>",))
                return 1
        """),
        'import os\nassert solve() == 1 and os.environ.get("APP") is None\n',
    ),
    (
        "forged class names: a class of a module not on the list, an exception class, no class",
        # only classes of _STANDARD_CLASS_MODULES, never an exception class, are the judge's own
        JUDGE_WIRE + _d("""
            import sys
            NAMES = {"A": b"subprocess:Popen", "B": b"json.decoder:JSONDecodeError",
                     "C": b"collections:abc"}
            wire._standard_class_name = lambda cls: NAMES.get(cls.__name__)
            class A: pass
            class B: pass
            class C: pass
            def f():
                return A, B, C
        """),
        _d("""
            import collections, json, subprocess
            a, b, c = f()
            assert a is subprocess.Popen or b is json.JSONDecodeError or c is collections.abc
        """),
    ),
    (
        "the tests' exception the solution raises back after changing its message",
        # only the tests' exception object as the solution got it is theirs again (_RAISED)
        _d("""
            def call(f):
                try:
                    return f()
                except ValueError as exc:
                    exc.args = ("changed",)
                    raise
        """),
        RAISED_BACK,
    ),
    (
        "forged reply: a tests' exception raised back under a number never given",
        _raising_back("(wire._RAISED, 5)"),
        RAISED_BACK,
    ),
    (
        "forged reply: a tests' exception raised back with no number",
        _raising_back("(wire._RAISED,)"),
        RAISED_BACK,
    ),
    (
        "forged reply: a text of the tests under a number never given",
        JUDGE_WIRE + _d("""
            import sys
            def answer(fn):
                text = wire._TestsText()
                text.number = 7
                return text
        """),
        _d("""
            def helper():
                \"\"\"The answer is 42\"\"\"
            assert answer(helper) == "The answer is 42"
        """),
    ),
    (
        "os.readlink patched by the tests with a function that reads links for real",
        # a tests' function reaching a real function through a global stays the tests' own
        # (see _reaches_nothing_real): the solution's readlink("/proc/self") is its pid
        _d("""
            import os
            def solve():
                return int(os.readlink("/proc/self"))
        """),
        _d("""
            import os
            from unittest.mock import patch
            real_readlink = os.readlink
            with patch("os.readlink", side_effect=lambda p: real_readlink(p)):
                assert solve() == os.getpid()
        """),
    ),
    (
        "builtins.open patched by the tests with a mock wrapping the real one",
        PID_FROM_OPEN,
        _d("""
            import builtins, os
            from unittest.mock import MagicMock, patch
            with patch("builtins.open", MagicMock(wraps=builtins.open)):
                assert solve() == os.getpid()
        """),
    ),
    (
        "forged output on a third stream",
        JUDGE_WIRE + _d("""
            import sys
            def solve(xs):
                wire._PEER.send(b"O", wire.encode((3, "x")))
                return sorted(xs)
        """),
        SORT_TESTS,
    ),
    (
        "forged output past the relay bound",
        JUDGE_WIRE + _d("""
            import sys
            def solve(xs):
                for _ in range(3):
                    wire._PEER.send(b"O", wire.encode((1, "x" * (30 << 20))))
                return sorted(xs)
        """),
        "import contextlib, io\nwith contextlib.redirect_stdout(io.StringIO()):\n"
        "    assert solve([3, 1, 2]) == [1, 2, 3]\n",
    ),
    (
        "a Mapping subclass whose own __eq__ says yes to the tests' dict",
        _d("""
            from collections.abc import Mapping
            class Yes(Mapping):
                def __getitem__(self, k): raise KeyError(k)
                def __iter__(self): return iter(())
                def __len__(self): return 0
                def __eq__(self, other): return True
                def __ne__(self, other): return False
                __hash__ = None
            def solve():
                return Yes()
        """),
        'assert solve() == {"a": 1, "b": 2}\nassert not (solve() != {"a": 1})\n',
    ),
    (
        "a Mapping whose values are always-equal objects, compared with the tests' dict",
        _d("""
            from collections.abc import Mapping
            class Same:
                def __eq__(self, other): return True
                def __hash__(self): return 1
            class Lazy(Mapping):
                def __getitem__(self, k): return Same()
                def __iter__(self): return iter(("a", "b"))
                def __len__(self): return 2
            def solve():
                return Lazy()
        """),
        'assert solve() == {"a": 1, "b": 2}\n',
    ),
    (
        "a Set of always-equal objects with the hash of the tests' items",
        _d("""
            from collections.abc import Set
            class Same:
                def __init__(self, h): self.h = h
                def __eq__(self, other): return True
                def __hash__(self): return self.h
            class Bag(Set):
                def __contains__(self, x): return True
                def __iter__(self): return iter((Same(1), Same(2)))
                def __len__(self): return 2
            def solve():
                return Bag()
        """),
        "assert solve() == {1, 2}\nassert solve() >= {1, 2} and {1, 2} <= solve()\n",
    ),
    (
        "forged reply: a Mapping's items that are not pairs",
        JUDGE_WIRE + _d("""
            import sys
            from collections.abc import Mapping
            wire._abc_contents = lambda obj: ("mapping", 2, ("a", "b"))
            class M(Mapping):
                def __getitem__(self, k): return 1
                def __iter__(self): return iter(("a", "b"))
                def __len__(self): return 2
            def solve():
                return M()
        """),
        'assert solve() == {"a": 1, "b": 2}\n',
    ),
]

#: Found by a red-team pass at f13563b: a Set's claimed length, names the tests imported
#: replaced by ``from solution import *``, a context manager ending the tests' block at the
#: solution's first failure, and ``assertSetEqual`` handing the expected set to the solution.
LYING_SET = _d("""
    from collections.abc import Set
    class S(Set):
        def __init__(self, n): self.n = n
        def __contains__(self, x): return False
        def __iter__(self): return iter(())
        def __len__(self): return self.n
""")
ATTACKS += [
    (
        "a Set whose __len__ claims the tests' size while it holds nothing",
        LYING_SET + "def unique(xs):\n    return S(len(set(xs)))\n",
        "assert unique([3, 1, 3, 2]) == {1, 2, 3}\nassert unique([5, 5]) == {5}\n",
    ),
    (
        "lying Sets nested in a list and as a dict's values, and one compared with <= and !=",
        LYING_SET + "def groups():\n    return [S(2), S(1)]\ndef adj():\n"
        "    return {1: S(2), 2: S(1)}\ndef one():\n    return S(1)\n",
        "assert groups() == [{1, 2}, {3}]\nassert adj() == {1: {2, 3}, 2: {1}}\n"
        "assert one() <= {7} and not (one() != {7})\n",
    ),
    (
        "a Set whose iteration repeats one of the tests' items as often as they have items",
        _d("""
            from collections.abc import Set
            class S(Set):
                def __contains__(self, x): return True
                def __iter__(self): return iter((1, 1, 1))
                def __len__(self): return 3
            def unique(xs):
                return S()
        """),
        "assert unique([3, 1, 2]) == {1, 2, 3}\n",
    ),
    (
        "from solution import * replacing the tests' unittest with a TestCase that checks nothing",
        _d("""
            class unittest:
                class TestCase:
                    def assertEqual(self, a, b, msg=None): pass
                @staticmethod
                def main(*a, **k): pass
            def square(x):
                return 0
        """),
        _d("""
            import unittest
            from solution import *
            class TestSquare(unittest.TestCase):
                def test_square(self):
                    self.assertEqual(square(3), 9)
            if __name__ == "__main__":
                unittest.main()
        """),
    ),
    (
        "from solution import * replacing the tests' pytest with a raises that raises nothing",
        _d("""
            class pytest:
                class raises:
                    def __init__(self, *a, **k): pass
                    def __enter__(self): return self
                    def __exit__(self, *a): return True
            def sqrt_pos(x):
                return 0.0
        """),
        _d("""
            import pytest
            from solution import *
            def test_negative_raises():
                with pytest.raises(ValueError):
                    sqrt_pos(-1)
        """),
    ),
    (
        "from solution import * replacing the tests' isclose with one that is always true",
        "def isclose(*a, **k):\n    return True\ndef area(r):\n    return 0.0\n",
        "from math import isclose\nfrom solution import *\nassert isclose(area(1), 3.14159, "
        "rel_tol=1e-5)\n",
    ),
    (
        "a context manager that swallows the solution's own failure in the tests' block",
        _d("""
            class Account:
                def __enter__(self): return self
                def __exit__(self, *a): return True
                def deposit(self, x): raise RuntimeError
                def balance(self): raise RuntimeError
        """),
        _d("""
            def test_account():
                with Account() as acc:
                    acc.deposit(5)
                    assert acc.balance() == 5
        """),
    ),
    (
        "a context manager that swallows the TypeError of a handle compared with a value",
        _d("""
            class Meter:
                def __enter__(self): return self
                def __exit__(self, *a): return True
                def reading(self):
                    class Liar:
                        def __ge__(self, o): return True
                        def __eq__(self, o): return True
                    return Liar()
        """),
        _d("""
            def test_meter():
                with Meter() as m:
                    assert m.reading() >= 0
                    assert m.reading() == 42
        """),
    ),
    (
        "assertSetEqual handing the expected set to the solution's difference()",
        _d("""
            class Peek:
                seen = ()
                def difference(self, other):
                    Peek.seen = tuple(other)
                    return set()
                def __iter__(self):
                    return iter(Peek.seen)
            def unique(xs):
                return Peek()
        """),
        _d("""
            import unittest
            class T(unittest.TestCase):
                def test_unique(self):
                    self.assertSetEqual(unique([3, 1, 3, 2]), {1, 2, 3})
        """),
    ),
]


#: Arithmetic of an object of the solution's with a value of the tests is the solution's
#: (``v * 3``), but what it gives is an object of the solution's whose truth, numbers, items
#: and length are refused: each attack turns "the difference with the expected value" into a
#: yes. ``Zero`` answers 0 to everything a number is asked.
ZERO = _d("""
    class Zero:
        def __sub__(self, other): return Zero()
        def __rsub__(self, other): return Zero()
        def __add__(self, other): return Zero()
        def __abs__(self): return 0.0
        def __float__(self): return 0.0
        def __int__(self): return 0
        def __round__(self, n=None): return 0
        def __bool__(self): return False
        def __len__(self): return 0
        def __iter__(self): return iter(())
        def __getitem__(self, i): return []
        def __contains__(self, x): return False
    def solve():
        return Zero()
""")
ATTACKS += [
    (
        "an object whose difference with the tests' value is the float 0.0",
        "class Near:\n    def __sub__(self, other):\n        return 0.0\n"
        "def solve():\n    return Near()\n",
        "assert abs(solve() - 3.14159) < 1e-6\n",
    ),
    ("abs() of an object's difference with the tests' value", ZERO,
     "assert abs(solve() - 3.14159) < 1e-6\n"),
    ("the truth of an object's difference with the tests' value", ZERO,
     "assert not (solve() - 42)\n"),
    ("round() and int() of an object's difference with the tests' value", ZERO,
     "assert round(solve() - 3.14159, 6) == 0\nassert int(solve() - 42) == 0\n"),
    ("math.isclose of an object's difference with the tests' value", ZERO,
     "import math\nassert math.isclose(solve() - 3.14159, 0, abs_tol=1e-9)\n"),
    ("the items of an object's difference with the tests' list", ZERO,
     "assert list(solve() - [1, 2, 3]) == []\nassert (solve() - [1, 2])[:] == []\n"),
    ("the length and membership of an object's difference with the tests' set", ZERO,
     "assert len(solve() - {1, 2, 3}) == 0\nassert 1 not in (solve() - {1})\n"),
    ("the tests' value minus an object (reflected), then abs()", ZERO,
     "assert abs(3.14159 - solve()) < 1e-6\n"),
    ("a difference with the tests' value, plus another object, then abs()", ZERO,
     "assert abs((solve() - 3.14159) + solve()) < 1e-6\n"),
    ("an object less the tests' value in place (-=), then abs() and truth", ZERO,
     "r = solve()\nr -= 3.14159\nassert abs(r) < 1e-6\n"),
    # Found by a second red-team pass on the rule above: numpy's __array__ of a difference,
    # and the methods of one, answered with the solution's zeros.
    *[
        (
            f"numpy's __array__ of an object's difference with the tests' values: {what}",
            _d("""
                import numpy as np
                class Answer:
                    def __sub__(self, other): return Diff(other)
                    def __rsub__(self, other): return Diff(other)
                class Diff:
                    def __init__(self, other): self.shape = np.shape(other)
                    def __array__(self, dtype=None, copy=None): return np.zeros(self.shape)
                def solve(xs):
                    return Answer()
            """),
            f"import numpy as np\nassert {test}\n",
        )
        for what, test in [
            ("np.abs", "np.abs(solve([1, 2, 4]) - 2.3333333) < 1e-6"),
            ("np.linalg.norm", "np.linalg.norm(solve([3, 1]) - np.array([1.0, 3.0])) < 1e-9"),
            ("np.allclose", "np.allclose(solve([5]) - [5.0], 0)"),
        ]
    ],
    *[
        (
            f"a method of an object's difference with the tests' values: {what}",
            _d("""
                class Diff:
                    def __abs__(self): return Diff()
                    def __pow__(self, k): return Diff()
                    def max(self): return 0.0
                    def any(self): return False
                    def mean(self): return 0.0
                    shape = float
                class Answer:
                    def __sub__(self, other): return Diff()
                def solve(xs):
                    return Answer()
            """),
            f"import numpy as np\nexpected = np.array([1.0, 2.0])\nassert {test}\n",
        )
        for what, test in [
            ("max", "abs(solve([2, 1]) - expected).max() < 1e-9"),
            ("any", "not (solve([2, 1]) - expected).any()"),
            ("mean", "((solve([2, 1]) - expected) ** 2).mean() < 1e-12"),
            ("an attribute that is a built-in class", "(solve([2, 1]) - expected).shape() == 0"),
        ]
    ],
    # Found by a third red-team pass: two derived objects compared with each other, and
    # the data attributes and text of a difference.
    (
        "a relative tolerance whose both sides the solution computed",
        _d("""
            class Num:
                def __sub__(self, o): return Num()
                def __rsub__(self, o): return Num()
                def __abs__(self): return Num()
                def __add__(self, o): return Num()
                __radd__ = __add__
                def __mul__(self, o): return Num()
                __rmul__ = __mul__
                def __le__(self, o): return True
                def __lt__(self, o): return True
            def solve(xs):
                return Num()
        """),
        "result = solve([1, 2, 4])\nexpected = 2.3333333333\n"
        "assert abs(result - expected) <= 1e-9 * (abs(result) + abs(expected))\n",
    ),
    (
        "the days of an object's difference with the tests' date",
        _d("""
            class Delta:
                days = 0
            class When:
                def __sub__(self, o): return Delta()
                def __rsub__(self, o): return Delta()
            def next_monday(d):
                return When()
        """),
        "from datetime import date\n"
        "assert (next_monday(date(2024, 1, 3)) - date(2024, 1, 8)).days == 0\n",
    ),
    (
        # its handle crosses with its plain attributes (see _described._plain_attributes): a
        # derived object's are never read from there
        "the days of an object's difference with the tests' date, an attribute of its own",
        _d("""
            class Delta:
                def __init__(self):
                    self.days = 0
            class When:
                def __sub__(self, o): return Delta()
                def __rsub__(self, o): return Delta()
            def next_monday(d):
                return When()
        """),
        "from datetime import date\n"
        "assert (next_monday(date(2024, 1, 3)) - date(2024, 1, 8)).days == 0\n",
    ),
    *[
        (
            f"the text of an object's difference with the tests' value: {what}",
            _d("""
                class Z:
                    def __str__(self): return "0"
                    __repr__ = __str__
                    def __round__(self, n=None): return Z()
                class Num:
                    def __sub__(self, o): return Z()
                def solve():
                    return Num()
            """),
            test,
        )
        for what, test in [
            ("repr", "assert repr(round(solve() - 3.14159, 6)) in ('0.0', '-0.0', '0')\n"),
            ("str", "assert str(round(solve() - 3.14159, 6)) == '0'\n"),
            ("printed", "import contextlib, io\nout = io.StringIO()\n"
             "with contextlib.redirect_stdout(out):\n    print(round(solve() - 3.14159, 6))\n"
             "assert out.getvalue() == '0\\n'\n"),
        ]
    ],
    ("a number format of an object's difference with the tests' value", _d("""
        class Zero:
            def __sub__(self, other): return Zero()
            def __format__(self, spec): return "0.000000"
        def solve():
            return Zero()
     """), "assert f'{solve() - 3.14159:.6f}' == '0.000000'\n"),
    (
        "a Set subclass whose difference with the tests' set is empty",
        _d("""
            from collections.abc import Set
            class Bag(Set):
                def __contains__(self, x): return True
                def __iter__(self): return iter((9,))
                def __len__(self): return 1
                def __sub__(self, other): return Bag.__new__(Empty)
            class Empty(Bag):
                def __iter__(self): return iter(())
                def __len__(self): return 0
            def solve():
                return Bag()
        """),
        "assert solve() - {1, 2, 3} == set()\n",
    ),
]


#: Tests that hand the solution objects of their own: what it may set there (a LeetCode
#: node's ``next``) must never change how the tests judge. Each attack's tests rely on one
#: thing the solution would need to change.
CHECKER = _d("""
    class Checker:
        tolerance = 0
        def __init__(self):
            self.verify = lambda r: r == [1, 2, 3]
        def ok(self, r):
            return r == [1, 2, 3]
    c = Checker()
""")


def _setting(statement: str) -> str:
    """A solution that tries ``statement`` on the tests' ``checker`` and then answers wrong."""
    return (
        "def solve(xs, checker):\n"
        f"    try:\n        {statement}\n    except Exception:\n        pass\n"
        "    return xs\n"
    )


CHECKER_ATTACKS: list[tuple[str, str, str]] = [
    ("replacing a method of the tests' object", _setting("checker.ok = lambda r: True"),
     CHECKER + "r = solve([3, 1, 2], c)\nassert c.ok(r)\n"),
    ("replacing a callable the tests' object holds",
     _setting("checker.verify = lambda r: True"),
     CHECKER + "r = solve([3, 1, 2], c)\nassert c.verify(r)\n"),
    ("shadowing a class-wide setting of the tests' object",
     _setting("checker.tolerance = 10**9"),
     CHECKER + "r = solve([3, 1, 2], c)\nassert abs(r[0] - 1) <= c.tolerance\n"),
    ("setting an attribute of the tests' class",
     _setting("checker.ok = lambda *a: True"),
     CHECKER + "r = solve([3, 1, 2], Checker)\nassert Checker().ok(r)\n"),
    ("swapping the class of the tests' object",
     "class Yes:\n    def ok(self, r):\n        return True\n"
     + _setting("checker.__class__ = Yes"),
     CHECKER + "r = solve([3, 1, 2], c)\nassert c.ok(r)\n"),
]  # fmt: skip
ATTACKS += CHECKER_ATTACKS
#: Code that, run in the judge, writes a pass on every pipe it holds (the verdict's among them)
#: and exits: what a text of the solution's does if the tests' eval, exec or unpickling runs it
#: in the judge (each attack below passes where the judge runs it: checked).
VERDICT_PAYLOAD = (
    "[__import__('os').write(fd, b'P') for fd in range(3, 64)"
    " if __import__('os').path.lexists(f'/proc/self/fd/{fd}')"
    " and __import__('os').readlink(f'/proc/self/fd/{fd}').startswith('pipe:')]"
    " and __import__('os')._exit(0)"
)
WRITES_PAYLOAD = (
    "def gen(path):\n    with open(path, 'w') as f:\n"
    f"        f.write('x = ' + {VERDICT_PAYLOAD!r})\n"
)
ATTACKS += [
    ("a __repr__ that is code writing the verdict, for tests that eval(repr(x))",
     "class P:\n    def __init__(self, x):\n        self.x = x\n"
     f"    def __repr__(self):\n        return {VERDICT_PAYLOAD!r}\n",
     "p = P(1)\nassert eval(repr(p)).x == 2\n"),
    ("printed code writing the verdict, for tests that eval what it printed",
     f"def show():\n    print({VERDICT_PAYLOAD!r})\n",
     "import io, contextlib\nf = io.StringIO()\nwith contextlib.redirect_stdout(f):\n"
     "    show()\nassert eval(f.getvalue()) == [9]\n"),
    ("printed code writing the verdict, for tests that eval a piece of what it printed",
     f"def show():\n    print('result =', {VERDICT_PAYLOAD!r})\n    print('Point(1)')\n",
     "import io, contextlib\nf = io.StringIO()\nwith contextlib.redirect_stdout(f):\n"
     "    show()\nline = f.getvalue().split('=', 1)[1].splitlines()[0]\n"
     "assert eval(line.replace('Point', 'P')) == [9]\n"),
    ("generated code writing the verdict, for tests that exec it",
     f"def make_code():\n    return 'x = ' + {VERDICT_PAYLOAD!r}\n",
     "exec(make_code())\nassert add(1) == 6\n"),
    ("a pickle that runs code writing the verdict, for tests that unpickle what it returned",
     "import pickle\nclass E:\n    def __reduce__(self):\n"
     f"        return (eval, ({VERDICT_PAYLOAD!r},))\n"
     "def serialize(obj):\n    return pickle.dumps(E())\n",
     "import pickle\nassert pickle.loads(serialize([1, 2])) == [9]\n"),
    ("a file of code writing the verdict, for tests that exec(open(path).read()) it",
     WRITES_PAYLOAD,
     "import os\ngen('g.py')\nns = {}\nexec(open('g.py').read(), ns)\nassert ns['x'] == 5\n"),
    ("a file of code writing the verdict, for tests that runpy.run_path it",
     WRITES_PAYLOAD,
     "import os, runpy\ngen('g.py')\nassert runpy.run_path(os.path.abspath('g.py'))['x'] == 5\n"),
    ("YAML that runs code writing the verdict, for tests that yaml.load it with yaml.Loader",
     "def config():\n    return "
     f"{'a: !!python/object/apply:builtins.eval [' + repr(VERDICT_PAYLOAD) + ']'!r}\n",
     "import yaml\nassert yaml.load(config(), Loader=yaml.Loader) == {'a': 9}\n"),
    ("YAML that runs code writing the verdict, for tests that yaml.unsafe_load it",
     "def config():\n    return "
     f"{'a: !!python/object/apply:builtins.eval [' + repr(VERDICT_PAYLOAD) + ']'!r}\n",
     "import yaml\nassert yaml.unsafe_load(config()) == {'a': 9}\n"),
    ("a docstring example writing the verdict, for tests that run the solution's doctests",
     f'def add(a, b):\n    """Add.\n\n    >>> {VERDICT_PAYLOAD}\n    """\n    return a - b\n',
     "import doctest\ndoctest.run_docstring_examples(add, {'add': add})\n"
     "assert add(1, 2) == 3\n"),
    ("a logging config whose factory runs a file writing the verdict, for dictConfig",
     WRITES_PAYLOAD + "def config(path):\n    gen(path)\n    return {'version': 1, 'handlers': "
     "{'h': {'()': 'runpy.run_path', 'path_name': path}}, 'root': {'handlers': ['h']}}\n",
     "import logging.config, os\nlogging.config.dictConfig(config(os.path.abspath('c.py')))\n"
     "assert logging.getLogger().level == 10\n"),
    ("an ini file whose handler args write the verdict, for fileConfig",
     "def write_ini(path):\n    with open(path, 'w') as f:\n        f.write('[loggers]\\nkeys=root"
     "\\n[handlers]\\nkeys=h\\n[formatters]\\nkeys=\\n[logger_root]\\nlevel=DEBUG\\n"
     "handlers=h\\n[handler_h]\\nclass=StreamHandler\\nargs=(' + "
     f"{VERDICT_PAYLOAD!r} + ',)\\n')\n",
     "import logging.config, os\nwrite_ini(os.path.abspath('l.ini'))\n"
     "logging.config.fileConfig(os.path.abspath('l.ini'))\n"
     "assert logging.getLogger().level == 99\n"),
    ("a module of code writing the verdict, for tests that import it",
     WRITES_PAYLOAD,
     "import os, sys\ngen('genmod.py')\nsys.path.insert(0, os.getcwd())\nimport genmod\n"
     "assert genmod.x == 5\n"),
    ("the docstring of a test's function the solution is given, read for the answer",
     "def solve(x, f):\n    return int(f.__doc__)\n",
     "def helper():\n    \"\"\"7\"\"\"\nassert solve(1, helper) == 7\n"),
    # The judge's /tmp is the run's (a literal /tmp path is shared): that path too.
    ("a file of code writing the verdict at a literal /tmp path, for tests that runpy it",
     WRITES_PAYLOAD,
     "import os, runpy\ngen('/tmp/g.py')\nassert os.path.exists('/tmp/g.py')\n"
     "assert runpy.run_path('/tmp/g.py')['x'] == 5\n"),
    ("a module of code writing the verdict in /tmp, for tests that import it from there",
     WRITES_PAYLOAD,
     "import os, sys\ngen('/tmp/tmpmod.py')\nassert os.path.exists('/tmp/tmpmod.py')\n"
     "sys.path.insert(0, '/tmp')\nimport tmpmod\n"
     "assert tmpmod.x == 5\n"),
]  # fmt: skip
#: Tests with a reference implementation of their own, which a text of the solution's evaluated
#: in the judge could bind the tests' name of the solution's function to.
REFERENCE = "def reference(xs):\n    return sorted(xs)\n"
#: A dataclass of the solution's whose one annotation is the text ``NOTE`` (postponed
#: evaluation: the annotations are texts until a reader of type hints evaluates them).
ANNOTATED = (
    "from __future__ import annotations\nfrom dataclasses import dataclass\n@dataclass\n"
    "class P:\n    x: NOTE\ndef sort_list(xs):\n    return xs\n"
)
ATTACKS += [
    ("a returned text that binds the tests' name to their reference (:=), for tests that eval it",
     "def describe(xs):\n    return '[sort_list := reference]'\n"
     "def sort_list(xs):\n    return xs\n",
     REFERENCE + "eval(describe([1]))\nassert sort_list([3, 1, 2]) == reference([3, 1, 2])\n"),
    ("generated statements that bind the tests' name to their reference, for tests that exec them",
     "def code():\n    return 'sort_list = reference'\ndef sort_list(xs):\n    return xs\n",
     REFERENCE + "exec(code())\nassert sort_list([3, 1, 2]) == reference([3, 1, 2])\n"),
    ("a generated for loop binding the tests' name to their reference, for tests that exec it",
     "def code():\n    return 'for sort_list in [reference]: pass'\n"
     "def sort_list(xs):\n    return xs\n",
     REFERENCE + "exec(code())\nassert sort_list([3, 1, 2]) == reference([3, 1, 2])\n"),
    ("an annotation that is code writing the verdict, for tests that read the type hints",
     ANNOTATED.replace("NOTE", repr(VERDICT_PAYLOAD + " and int")),
     "import typing\nassert typing.get_type_hints(P) == {'x': int}\n"),
    ("an annotation that is code writing the verdict, for tests that read it with eval_str",
     ANNOTATED.replace("NOTE", repr(VERDICT_PAYLOAD + " and int")),
     "import inspect\nassert inspect.get_annotations(P, eval_str=True) == {'x': int}\n"),
    ("an annotation that binds the solution module's name to the judge's sorted (:=)",
     ANNOTATED.replace("NOTE", repr("[sort_list := sorted] and int")),
     "import typing\ntry:\n    typing.get_type_hints(P)\nexcept Exception:\n    pass\n"
     "import solution\nassert solution.sort_list([3, 1, 2]) == [1, 2, 3]\n"),
]  # fmt: skip
ATTACKS.append(
    ("forged reply: a write-back that changes the shape of the tests' numpy array",
     _forge('b"N" + U32(1) + U32(0) + wire.encode(np.zeros(5, dtype=np.int64))', numpy=True),
     "import numpy as np\na = np.array([3, 1, 2])\nsolve(a)\nassert a.tolist() == [1, 2, 3]\n"),
)  # fmt: skip
#: A reply whose tail (after the result: the watched values, this result's kept-container
#: number, the kept containers changed) the solution chooses (see _Peer.watch_attribute).
_FORGE_TAIL = JUDGE_WIRE + _d("""
    import sys
    class Box:
        def __init__(self):
            self.items = [3, 1, 2]
    def solve(xs):
        return sorted(xs)
    def forged(self, result, back, received, changed, key=None, kept=None):
        enc = wire._Encoder(self, back)
        enc.value(result)
        enc.length(0)
        return enc.bytes() + wire.encode(()) + TAIL + wire.encode(None)
    wire._Peer.reply = forged
    # TAIL: this result's kept-container number, the kept containers changed, the value-backed
    # objects changed, the request's containers kept
""")
ATTACKS += [
    ("forged reply: a kept-container number for a str(), to be given the judge's copy",
     _FORGE_TAIL.replace(
         "TAIL", "wire.encode(0) + wire.encode(()) + wire.encode(()) + wire.encode(())"
     ),
     "b = Box()\nassert str(b)\n" + SORT_TESTS),
    ("forged reply: a container of the request kept that the request never had",
     _FORGE_TAIL.replace(
         "TAIL",
         "wire.encode(None) + wire.encode(()) + wire.encode(()) + wire.encode(((5, 0),))",
     ),
     SORT_TESTS),
    ("forged reply: a change of a kept container the judge never had",
     _FORGE_TAIL.replace(
         "TAIL",
         "wire.encode(None) + wire.encode(((7, [1, 2, 3]),)) + wire.encode(())"
         " + wire.encode(())",
     ),
     SORT_TESTS),
    ("forged reply: a change of a value-backed object the judge never had",
     _FORGE_TAIL.replace(
         "TAIL",
         "wire.encode(None) + wire.encode(()) + wire.encode((((9, [1]),), ()))"
         " + wire.encode(())",
     ),
     SORT_TESTS),
    ("forged reply: a malformed change of value-backed objects",
     _FORGE_TAIL.replace(
         "TAIL",
         "wire.encode(None) + wire.encode(()) + wire.encode(((9, [1]),)) + wire.encode(())",
     ),
     SORT_TESTS),
]  # fmt: skip
ATTACKS.append(
    ("forged reply: a shared object, which only the judge may send",
     _forge('b"o" + U32(0) + wire.encode((int, None, "x", ()))'), SORT_TESTS),
)  # fmt: skip
ATTACKS.append(
    ("a base class of the solution whose __eq__ says True, compared with the tests' value",
     _d("""
        class Base:
            def __eq__(self, other):
                return True
            __hash__ = object.__hash__
        def solve(xs):
            return xs
     """),
     "class Box(Base):\n    def __init__(self, v):\n        self.v = v\n"
     "assert Box(solve([3, 1, 2])) == [1, 2, 3]\n"),
)  # fmt: skip
ATTACKS.append(
    ("a class of the solution named generator, to pass the tests' generator check",
     _d("""
        class generator:
            def __init__(self, xs):
                self.xs = sorted(xs)
            def __iter__(self):
                return iter(self.xs)
        def solve(xs):
            return generator(xs)
     """),
     "import types\nr = solve([3, 1, 2])\nassert isinstance(r, types.GeneratorType)\n"
     "assert list(r) == [1, 2, 3]\n"),
)  # fmt: skip
ATTACKS += [
    ("forged reply: a pandas Series of a dtype pandas looks up by name (category)",
     _forge('b"p" + wire.encode(("S", "category", ("a",), ("R", 0, 1, 1, None), None))'),
     "import pandas as pd\n" + SORT_TESTS),
    ("forged reply: a pandas frame whose columns are fewer than its data",
     _forge('b"p" + wire.encode(("F", ("R", 0, 1, 1, None), ("R", 0, 1, 1, None), '
            '(("int64", np.array([1])), ("int64", np.array([2])))))', numpy=True),
     "import pandas as pd\n" + SORT_TESTS),
    ("forged reply: a pandas frame under the tag of the other pandas values",
     _forge('b"q" + wire.encode(("F", ("R", 0, 0, 1, None), ("R", 0, 0, 1, None), ()))'),
     "import pandas as pd\n" + SORT_TESTS),
    ("forged reply: a pandas Series under the tag of the other pandas values",
     _forge('b"q" + wire.encode(("S", "int64", np.array([1]), ("R", 0, 1, 1, None), None))',
            numpy=True),
     "import pandas as pd\n" + SORT_TESTS),
]  # fmt: skip
#: Forged categorical Series (codes, categories, ordered): what each is refused as.
FORGED_CATEGORICALS = {
    "codes past its categories": (
        '(np.array([0, 5], dtype=np.int8), ("I", "object", ("a", "b"), None, None), False)',
        "malformed pandas value (ValueError)",
    ),
    "categories that repeat": (
        '(np.array([0, 1], dtype=np.int8), ("I", "object", ("a", "a"), None, None), False)',
        "malformed pandas value (ValueError)",
    ),
    "codes that are not integers": (
        '(np.array([0.0, 1.0]), ("I", "object", ("a", "b"), None, None), False)',
        "malformed pandas categorical",
    ),
    "categories that are a MultiIndex": (
        '(np.array([0], dtype=np.int8), ("X", (("a", 1),), (None, None)), False)',
        "malformed pandas categorical",
    ),
    "categories nested past the depth limit": (
        '(np.array([0], dtype=np.int8), ("I", "category", (np.array([0], dtype=np.int8), '
        '("I", "category", (np.array([0], dtype=np.int8), ("I", "object", ("a",), None, None), '
        "False), None, None), False), None, None), False)",
        "malformed pandas value",
    ),
    "an ordered flag that is not a bool": (
        '(np.array([0], dtype=np.int8), ("I", "object", ("a",), None, None), 1)',
        "malformed pandas categorical",
    ),
    "interval categories of objects": (
        '(np.array([0], dtype=np.int8), ("V", ("object", ("a",)), ("object", ("b",)), "right", '
        "None), False)",
        "malformed pandas IntervalIndex",
    ),
    "interval categories closed on no known side": (
        '(np.array([0], dtype=np.int8), ("V", ("int64", np.array([0])), ("int64", np.array([1])), '
        '"sideways", None), False)',
        "malformed pandas value",
    ),
}
ATTACKS += [
    ("forged reply: a pandas Interval bounded by a bool",
     _forge('b"q" + wire.encode(("v", False, True, "right"))'),
     "import pandas as pd\n" + SORT_TESTS),
    ("forged reply: a pandas Interval whose left bound is past its right",
     _forge('b"q" + wire.encode(("v", 2, 1, "right"))'),
     "import pandas as pd\n" + SORT_TESTS),
    ("forged reply: a returned exception of a class that ends the tests (SystemExit)",
     _forge('b"&" + wire.encode(("SystemExit", (0,)))'), SORT_TESTS),
    ("forged reply: a returned exception of more arguments than the bound",
     _forge('b"&" + wire.encode(("UnicodeError", tuple(range(65))))'), SORT_TESTS),
    ("forged reply: a pandas Period of a frequency pandas does not know",
     _forge('b"q" + wire.encode(("P", 5, "fortnightly"))'),
     "import pandas as pd\n" + SORT_TESTS),
]  # fmt: skip
#: Forged typing annotations: what each is refused as.
FORGED_ANNOTATIONS = {
    "a List of a string": ('("List", ("os.system",))', "bad typing annotation argument"),
    "a Literal of a list": ('("Literal", ([1],))', "bad typing annotation argument"),
    "an alias typing has under another name": ('("cast", (int,))', "bad typing annotation"),
    "a bare alias that is not one": ('("TYPE_CHECKING", None)', "bad typing annotation"),
    "a Dict of three arguments": (
        '("Dict", (None, None, None))', "bad typing annotation (Too many arguments"
    ),
}
ATTACKS += [
    (
        f"forged reply: a typing annotation, {name}",
        _forge(f'b"#" + wire.encode({spec})'),
        "import typing\n" + SORT_TESTS,
    )
    for name, (spec, _) in FORGED_ANNOTATIONS.items()
]
#: Forged Series of times in a time zone and of periods: what each is refused as.
FORGED_COLUMNS = {
    "times in a time zone given by a path": (
        '"datetimetz", (np.array([0], dtype="M8[us]"), "../../etc/passwd")',
        "bad time zone key",
    ),
    "times in a time zone that are integers": (
        '"datetimetz", (np.array([0]), "UTC")',
        "malformed pandas times in a time zone",
    ),
    "periods of a dtype that is not one": (
        '"period", (np.array([0]), "object")',
        "malformed pandas periods",
    ),
    "periods of a frequency pandas does not know": (
        '"period", (np.array([0]), "period[fortnightly]")',
        "malformed pandas value (TypeError)",
    ),
    "periods whose ordinals are floats": (
        '"period", (np.array([0.5]), "period[M]")',
        "malformed pandas periods",
    ),
}
ATTACKS += [
    (
        f"forged reply: a pandas Series of {name}",
        _forge(f'b"p" + wire.encode(("S", {spec}, ("R", 0, 1, 1, None), None))', numpy=True),
        "import pandas as pd\n" + SORT_TESTS,
    )
    for name, (spec, _) in FORGED_COLUMNS.items()
]
ATTACKS += [
    (
        f"forged reply: a pandas categorical of {name}",
        _forge(
            f'b"p" + wire.encode(("S", "category", {spec}, ("R", 0, 1, 1, None), None))',
            numpy=True,
        ),
        "import pandas as pd\n" + SORT_TESTS,
    )
    for name, (spec, _) in FORGED_CATEGORICALS.items()
]
#: A Categorical (tag ``C``) is checked by the categorical column's code above: two of its
#: forgeries under that tag show the path.
FORGED_CATEGORICAL_VALUES = ("codes past its categories", "an ordered flag that is not a bool")
ATTACKS += [
    (
        f"forged reply: a pandas Categorical of {name}",
        _forge(f'b"q" + wire.encode(("C", {spec}))', numpy=True),
        "import pandas as pd\n" + SORT_TESTS,
    )
    for name, (spec, _) in FORGED_CATEGORICALS.items()
    if name in FORGED_CATEGORICAL_VALUES
]
def _notifying(notice: str) -> str:
    """A solution that sends the judge a forged warning or log record (``notice``: the
    arguments of ``_Peer.notify``) and answers wrong."""
    return JUDGE_WIRE + _d(f"""
        import sys
        def solve(xs):
            wire._PEER.notify({notice})
            return xs
    """)


#: Tests that turn warnings into errors and judge in one ``all(map(...))``: a forged warning
#: that the judge raised as a ``StopIteration`` would end the map early (``all`` true).
WARNING_TESTS = _d("""
    import warnings
    warnings.simplefilter("error")
    assert all(map(lambda xs: solve(xs) == sorted(xs), [[2, 1], [3, 1, 2]]))
""")
ATTACKS += [
    ("forged warning: a category that is no warning (StopIteration), under an error filter",
     _notifying('b"W", ("stop", "StopIteration", "<program>", 1)'), WARNING_TESTS),
    ("forged warning: an exception class that is no warning, under an error filter",
     _notifying('b"W", ("no", "AssertionError", "<program>", 1)'), WARNING_TESTS),
    ("forged log record: an object of the solution's for the logger's name",
     JUDGE_WIRE + _d("""
        import sys
        class Name:
            def __str__(self):
                return "x"
        def solve(xs):
            wire._PEER.notify(b"G", (Name(), 40, "m", "p", 1, "f", None, None, None, None))
            return sorted(xs)
     """), "import logging\nlogging.basicConfig()\n" + SORT_TESTS),
]  # fmt: skip
ATTACKS += [
    ("forged read of the tests' stdin: a method of the judge's choosing",
     JUDGE_WIRE + _d("""
        import sys
        def solve(xs):
            wire._PEER.ask_judge("close", 0)
            return sorted(xs)
     """),
     "import io, sys\nsys.stdin = io.StringIO('x')\nassert solve([3, 1, 2]) == [1, 2, 3]\n"),
    ("forged reply: an array of unicode characters",
     _forge('b"A" + b"u" + U32(4) + b"abcd" + U32(0)'), SORT_TESTS),
    ("forged reply: an array of a partial item",
     _forge('b"A" + b"i" + U32(3) + b"abc" + U32(0)'), SORT_TESTS),
    ("a class named as pytest's fixtures, to be asked while the tests are collected",
     _d("""
        class FixtureFunctionDefinition:
            _fixture_function_marker = None
            def _get_wrapped_function(self):
                return lambda: 1
            def __call__(self):
                return 1
        hack = FixtureFunctionDefinition()
        def solve(xs):
            return xs
     """),
     "import solution\n"),
    ("a fake standard module as a top-level value",
     "class M:\n    def isclose(self, a, b):\n        return True\nmath = M()\n"
     "def solve(r):\n    return 0.0\n",
     "assert math.isclose(solve(2), 12.566370614359172)\n"),
    ("forged reply: the values the tests read, one too many",
     _forge('b"t" + U32(2) + b"i" + U32(1) + b"\\x01" + b"i" + U32(1) + b"\\x02" + U32(0)')
     + "LIMIT = 10\n",
     "assert LIMIT == 10 and solve([3, 1, 2]) == [1, 2, 3]\n"),
    # The solution's values the tests read are kept current (see _Constants): an update may
    # name only what the judge asked for, never a name of the tests'.
    ("forged update of a name the judge never asked for: the tests' expected value",
     JUDGE_WIRE + _d("""
        import sys
        LIMIT = 10
        def solve(xs):
            return xs
        wire._Constants.updates = lambda self: (("expected", [3, 1, 2], ()),)
     """),
     "expected = [1, 2, 3]\nassert LIMIT == 10\nassert solve([3, 1, 2]) == expected\n"),
    ("a watched value the solution changes: never the tests' own after they rebound it",
     _d("""
        expected = [0]
        def solve(xs):
            global expected
            expected = list(xs)
            return xs
     """),
     "assert expected == [0]\nexpected = [1, 2, 3]\nassert solve([3, 1, 2]) == expected\n"),
]  # fmt: skip

SLOW_ATTACKS: list[tuple[str, str, str]] = [
    (
        "a never-ending generator consumed by list()",
        "def solve(xs):\n    while True:\n        yield 1\n",
        "assert list(solve([3, 1, 2])) == [1, 2, 3]\n",
    ),
    (
        "a callback storm",
        "def solve(xs, key):\n    while True:\n        key(1)\n",
        "assert solve([3, 1, 2], lambda x: x) == [1, 2, 3]\n",
    ),
]

#: Honest solutions of the tests the attacks use: the tests are passable.
HONEST: list[tuple[str, str, str]] = [
    ("honest sort", HONEST_SORT, SORT_TESTS),
    ("honest dataclass whose annotations are texts, read by the tests' get_type_hints",
     ANNOTATED.replace("NOTE", "list[int]"),
     "import inspect, typing\nassert typing.get_type_hints(P) == {'x': list[int]}\n"
     "assert inspect.get_annotations(P, eval_str=True) == {'x': list[int]}\n"),
    ("honest text of a value, which the tests eval",
     "def describe(xs):\n    return repr(sorted(xs))\n",
     "assert eval(describe([3, 1, 2])) == [1, 2, 3]\n"),
    ("honest generated assignment, which the tests exec into a namespace of theirs",
     "def code(n):\n    return f'total = {n} * 2'\n",
     "ns = {}\nexec(code(3), ns)\nassert ns['total'] == 6\n"),
    ("honest Vector with scalar arithmetic on either side",
     _d("""
         class Vector:
             def __init__(self, x, y): self.x, self.y = x, y
             def __mul__(self, k): return Vector(self.x * k, self.y * k)
             __rmul__ = __mul__
             def __add__(self, o): return Vector(self.x + o.x, self.y + o.y)
             def __eq__(self, o): return (self.x, self.y) == (o.x, o.y)
             def __str__(self): return f"Vector({self.x}, {self.y})"
     """),
     "v = Vector(1, 2)\nassert (v * 3).x == 3 and (3 * v).y == 6\n"
     "assert v * 2 == Vector(2, 4) and 2 * v + v == Vector(3, 6)\n"
     "assert str(v * 2) == 'Vector(2, 4)'\n"),
    ("honest accumulator changed in place by the tests' numbers (+=), seen through an alias",
     _d("""
         class Acc:
             def __init__(self): self.total = 0
             def __iadd__(self, k):
                 self.total += k
                 return self
     """),
     "a = Acc()\nb = a\na += 5\na += 10\nassert a is b and b.total == 15\n"),
    ("honest set for the lying Set's tests", "def unique(xs):\n    return set(xs)\n",
     "assert unique([3, 1, 3, 2]) == {1, 2, 3}\nassert unique([5, 5]) == {5}\n"),
    ("honest abc Set compared with ==, <=, >= and !=",
     _d("""
         from collections.abc import Set
         class Bag(Set):
             def __init__(self, xs): self.xs = list(dict.fromkeys(xs))
             def __contains__(self, x): return x in self.xs
             def __iter__(self): return iter(self.xs)
             def __len__(self): return len(self.xs)
         def unique(xs):
             return Bag(xs)
     """),
     "assert unique([3, 1, 3, 2]) == {1, 2, 3}\nassert unique([1]) <= {1, 2}\n"
     "assert unique([1, 2]) >= {1}\nassert unique([]) == set()\nassert unique([1, 2]) != {1}\n"),
    ("honest square under unittest after from solution import *",
     "def square(x):\n    return x * x\n",
     "import unittest\nfrom solution import *\nclass T(unittest.TestCase):\n"
     "    def test_square(self):\n        self.assertEqual(square(3), 9)\n"
     "if __name__ == '__main__':\n    unittest.main()\n"),
    ("honest function and the tests' own import after from solution import *",
     "import math\ndef area(r):\n    return math.pi * r * r\n",
     "from math import isclose\nimport math\nfrom solution import *\n"
     "assert isclose(area(1), 3.14159, rel_tol=1e-5) and math.pi > 3\n"),
    ("honest context manager that suppresses the KeyError the tests raise in its block",
     _d("""
         class Suppress:
             def __init__(self, *kinds): self.kinds = kinds
             def __enter__(self): return self
             def __exit__(self, kind, exc, tb):
                 return kind is not None and issubclass(kind, self.kinds)
     """),
     "with Suppress(KeyError):\n    {}['x']\nwith Suppress(ZeroDivisionError):\n    1 / 0\n"
     "try:\n    with Suppress(KeyError):\n        raise ValueError\nexcept ValueError:\n"
     "    pass\nelse:\n    raise AssertionError('ValueError suppressed')\n"),
    ("honest set-like class under assertSetEqual",
     _d("""
         class Bag:
             def __init__(self, xs): self.xs = list(dict.fromkeys(xs))
             def __iter__(self): return iter(self.xs)
             def __len__(self): return len(self.xs)
             def difference(self, other): return {x for x in self.xs if x not in other}
         def unique(xs):
             return Bag(xs)
     """),
     "import unittest\nclass T(unittest.TestCase):\n    def test_unique(self):\n"
     "        self.assertSetEqual(unique([3, 1, 3, 2]), {1, 2, 3})\n"
     "        self.assertSetEqual({1, 2}, {2, 1})\n"),
    ("honest sort beside a module written where the tests work",
     "with open('colorsys.py', 'w') as fh:\n    fh.write('def rgb_to_hsv(*a):\\n    return 0\\n')\n"
     + HONEST_SORT,
     "import os, colorsys\nassert os.path.exists('colorsys.py')\n"
     "assert colorsys.rgb_to_hsv(*solve([3, 1, 2])) == colorsys.rgb_to_hsv(1, 2, 3)\n"),
    ("honest Counter", "from collections import Counter\ndef solve(s):\n    return Counter(s)\n",
     "assert solve('aab') == {'a': 2, 'b': 1}\nassert solve('') == {}\n"),
    # A map that is not a value (a defaultdict of a lambda) makes the ChainMap a handle, not a
    # message the judge refuses as malformed.
    ("honest ChainMap over a defaultdict of a lambda",
     "from collections import ChainMap, defaultdict\ndef solve(s):\n"
     "    counts = defaultdict(lambda: 0)\n    for c in s:\n        counts[c] += 1\n"
     "    return ChainMap({}, counts)\n",
     "assert solve('aab')['a'] == 2 and dict(solve('aab')) == {'a': 2, 'b': 1}\n"),
    ("honest callback", "def solve(xs, check):\n    check(sorted(xs))\n    return sorted(xs)\n",
     "def check(r):\n    assert r == sorted(r)\nassert solve([2, 1], check) == [1, 2]\n"),
    ("honest generator argument", "def solve(xs):\n    return sorted(xs)\n",
     "assert solve(x for x in [3, 1, 2]) == [1, 2, 3]\n"),
    ("honest key", "def solve(key, xs):\n    return sorted(xs, key=key)\n",
     "assert solve(lambda x: x, [3, 1, 2]) == [1, 2, 3]\n"),
    ("honest write-back", "def solve(xs):\n    xs.append(0)\n    return sorted(xs[:-1])\n",
     "a = [3, 1, 2]\nassert solve(a) == [1, 2, 3]\nassert a == [3, 1, 2, 0]\n"),
    ("honest iteration end", HONEST_SORT,
     "try:\n    solve([1])\nexcept StopIteration:\n    pass\nassert solve([2, 1]) == [1, 2]\n"),
    ("honest module helper", "import math\ndef solve(r):\n    return math.pi * r * r\n",
     "assert math.isclose(solve(2), 12.566370614359172)\n"),
    ("honest forged-nothing", _FORGE.split("def forged")[0], SORT_TESTS),
    *(
        (f"honest against: {name}", HONEST_SORT, tests)
        for name, _, tests in ATTACKS
        if name.startswith("an exception claimed to be")
    ),
    *(
        (f"honest against: {name}", "def solve(xs, checker):\n    return sorted(xs)\n", tests)
        for name, _, tests in CHECKER_ATTACKS
    ),
    ("honest constant", "LIMIT = 10\n" + HONEST_SORT,
     "assert LIMIT == 10 and solve([3, 1, 2]) == [1, 2, 3]\n"),
    ("honest prints while captured", "def solve(xs):\n    print(xs)\n    return sorted(xs)\n",
     "import contextlib, io\nwith contextlib.redirect_stdout(io.StringIO()):\n"
     "    assert solve([3, 1, 2]) == [1, 2, 3]\n"),
]  # fmt: skip


#: What the judge says stopped each attack (the tests' own assertion when a handle compared
#: unequal to a value or a read of the tests' internals was refused).
REASONS = {
    "forged reply: a Mapping's items that are not pairs": "described its mapping wrongly",
    "an exception claimed to be unittest's SkipTest, raised in a unittest test": "ValueError",
    "an exception claimed to be StopIteration, raised in the tests' map": "ValueError",
    "an exception claimed to be an exception group, caught by the tests' except*": "ValueError",
    "forged reply: a write-back that changes the shape of the tests' numpy array": (
        "write-back changed an array's shape"
    ),
    "a __repr__ that is code writing the verdict, for tests that eval(repr(x))": (
        "AttributeError"
    ),
    "generated code writing the verdict, for tests that exec it": "NameError",
    "a returned text that binds the tests' name to their reference (:=), for tests that eval it": (
        "NameError"
    ),
    "generated statements that bind the tests' name to their reference, for tests that exec them": (
        "NameError"
    ),
    "a generated for loop binding the tests' name to their reference, for tests that exec it": (
        "NameError"
    ),
    "an annotation that is code writing the verdict, for tests that read the type hints": (
        "the judge does not compile code the solution wrote"
    ),
    "a logging config whose factory runs a file writing the verdict, for dictConfig": (
        "Unable to configure handler"
    ),
    "YAML that runs code writing the verdict, for tests that yaml.load it with yaml.Loader": (
        "could not determine a constructor"
    ),
    "YAML that runs code writing the verdict, for tests that yaml.unsafe_load it": (
        "could not determine a constructor"
    ),
    "a file of code writing the verdict, for tests that runpy.run_path it": (
        "the judge does not compile code the solution wrote"
    ),
    "a module of code writing the verdict, for tests that import it": (
        "the judge does not compile code the solution wrote"
    ),
    "forged reply: a change of a value-backed object the judge never had": (
        "value-backed object never sent"
    ),
    "forged reply: a malformed change of value-backed objects": (
        "malformed change of value-backed objects"
    ),
    "forged reply: a kept-container number for a str(), to be given the judge's copy": (
        "malformed kept container"
    ),
    "forged reply: a container of the request kept that the request never had": (
        "malformed kept containers"
    ),
    "forged reply: a change of a kept container the judge never had": (
        "malformed change of kept containers"
    ),
    # its docstring is a text the solution holds by number only, empty (see _TestsText)
    "the docstring of a test's function the solution is given, read for the answer": (
        "invalid literal for int() with base 10: ''"
    ),
    "a file of code writing the verdict at a literal /tmp path, for tests that runpy it": (
        "the judge does not compile code the solution wrote"
    ),
    "a module of code writing the verdict in /tmp, for tests that import it from there": (
        "the judge does not compile code the solution wrote"
    ),
    "a pickle that runs code writing the verdict, for tests that unpickle what it returned": (
        "the judge unpickles no builtins.eval"
    ),
    "forged reply: a shared object, which only the judge may send": (
        "a shared object where none may be"
    ),
    "forged reply: a pandas Series of a dtype pandas looks up by name (category)": (
        "malformed pandas categorical"
    ),
    "forged reply: a pandas Interval bounded by a bool": "malformed pandas value",
    "forged reply: a returned exception of a class that ends the tests (SystemExit)": (
        "bad exception"
    ),
    "forged reply: a returned exception of more arguments than the bound": "bad exception",
    "forged reply: a pandas Period of a frequency pandas does not know": (
        "malformed pandas value (ValueError)"
    ),
    **{
        f"forged reply: a typing annotation, {name}": reason
        for name, (_, reason) in FORGED_ANNOTATIONS.items()
    },
    **{
        f"forged reply: a pandas Series of {name}": reason
        for name, (_, reason) in FORGED_COLUMNS.items()
    },
    "forged reply: a pandas Interval whose left bound is past its right": (
        "malformed pandas value (ValueError)"
    ),
    **{
        f"forged reply: a pandas categorical of {name}": reason
        for name, (_, reason) in FORGED_CATEGORICALS.items()
    },
    **{
        f"forged reply: a pandas Categorical of {name}": FORGED_CATEGORICALS[name][1]
        for name in FORGED_CATEGORICAL_VALUES
    },
    "forged reply: a pandas frame whose columns are fewer than its data": (
        "malformed pandas value (ValueError)"
    ),
    "a deep copy of the tests' object, read for its private expected answer": "AttributeError",
    "the solution's wire answers the tests' type() of its int subclass with float": (
        "answered type() with a class its object cannot be of"
    ),
    "the solution's wire answers the tests' type() of its iterable with list": (
        "answered type() with a class its object cannot be of"
    ),
    "forged reply: a change of an environment variable the tests do not name": (
        "malformed ambient changes"
    ),
    "forged reply: a tests' exception raised back under a number never given": (
        "an exception of the tests never sent"
    ),
    "forged reply: a tests' exception raised back with no number": "malformed exception",
    "forged reply: a text of the tests under a number never given": (
        "a text of the tests never sent"
    ),
    "forged reply: a change of a generator the judge does not follow": (
        "malformed ambient changes"
    ),
    "forged reply: a pandas Series under the tag of the other pandas values": (
        "malformed pandas value"
    ),
    "forged reply: a pandas frame under the tag of the other pandas values": (
        "malformed pandas value"
    ),
    "forged warning: a category that is no warning (StopIteration), under an error filter": (
        "malformed warning"
    ),
    "forged warning: an exception class that is no warning, under an error filter": (
        "malformed warning"
    ),
    "forged log record: an object of the solution's for the logger's name": (
        "malformed log record"
    ),
    "catching the AssertionError of a callback of the tests": "failed in a callback",
    "reading the tests' constants through a generator's frame": "AttributeError",
    "a huge write-back (over the message bound)": "a reply of",
    "callbacks nested without end": "nested more than 50 deep",
    "more handles than the bound": "more than 200000 objects",
    "forged reply: a numpy array of object dtype": "numpy dtype not allowed",
    "forged reply: a numpy bool that is 2": "numpy bool that is not 0 or 1",
    "forged reply: a numpy text scalar whose unit is no code point": (
        "numpy text that is not code points"
    ),
    "forged reply: a numpy text array of a surrogate": "numpy text that is not code points",
    "forged reply: a numpy text dtype of width 0": "numpy dtype not allowed",
    "forged reply: a handle of the judge it was never given": "never handed out",
    "forged reply: a write-back of another type": "write-back of another type",
    "forged reply: end of iteration for a call": "end of iteration for a request that is not",
    "forged reply: a reference to a container of no request": "no container of the request",
    "forged reply: a value-backed handle whose base is no value type": "without a base value",
    "forged reply: a built-in class that does not exist": "not a built-in class",
    "an exception class whose forged bases hold StopIteration, raised in the tests' map": (
        "EndsTheMap"
    ),
    "forged reply: an exception class of a base that is not passed through": (
        "bad exception class"
    ),
    "more exception classes than the bound": "more than 1000 exception classes",
    "forged output on a third stream": "malformed output",
    "forged output past the relay bound": "printed more than",
    "forged reply: the values the tests read, one too many": "for its values with something",
    "forged reply: an array of unicode characters": "malformed array",
    "a class named as pytest's fixtures, to be asked while the tests are collected": (
        "never got an answer"
    ),
    "forged reply: an array of a partial item": "malformed array",
    "forged read of the tests' stdin: a method of the judge's choosing": "malformed read of stdin",
    "forged update of a name the judge never asked for: the tests' expected value": (
        "never asked for"
    ),
    "a Set whose __len__ claims the tests' size while it holds nothing": "says it holds",
    "lying Sets nested in a list and as a dict's values, and one compared with <= and !=": (
        "says it holds"
    ),
    "a Set whose iteration repeats one of the tests' items as often as they have items": (
        "1 of them distinct"
    ),
    "from solution import * replacing the tests' unittest with a TestCase that checks nothing": (
        "the tests exited with status"
    ),
    "from solution import * replacing the tests' pytest with a raises that raises nothing": (
        "DID NOT RAISE"
    ),
    "a context manager that swallows the solution's own failure in the tests' block": (
        "RuntimeError"
    ),
    "a context manager that swallows the TypeError of a handle compared with a value": (
        "TypeError"
    ),
    "an object whose difference with the tests' value is the float 0.0": "not a value",
    "abs() of an object's difference with the tests' value": "not a value",
    "the truth of an object's difference with the tests' value": "not a value",
    "round() and int() of an object's difference with the tests' value": "not a value",
    "math.isclose of an object's difference with the tests' value": "not a value",
    "the items of an object's difference with the tests' list": "not a value",
    "the length and membership of an object's difference with the tests' set": "not a value",
    "the tests' value minus an object (reflected), then abs()": "not a value",
    "a difference with the tests' value, plus another object, then abs()": "not a value",
    "an object less the tests' value in place (-=), then abs() and truth": "not a value",
    **{
        f"numpy's __array__ of an object's difference with the tests' values: {what}": (
            "not a value"
        )
        for what in ("np.abs", "np.linalg.norm", "np.allclose")
    },
    **{
        f"a method of an object's difference with the tests' values: {what}": "not a value"
        for what in ("max", "any", "mean")
    },
    "a method of an object's difference with the tests' values: an attribute that is a "
    "built-in class": "callable but not",
    "a number format of an object's difference with the tests' value": "the text of what",
    "a relative tolerance whose both sides the solution computed": "a comparison of objects",
    "the days of an object's difference with the tests' date": "or of its difference",
    "the days of an object's difference with the tests' date, an attribute of its own": (
        "or of its difference"
    ),
    **{
        f"the text of an object's difference with the tests' value: {what}": "the text of what"
        for what in ("repr", "str", "printed")
    },
}


#: Attacks of :data:`ATTACKS` in the slow tier only (seconds each: a bound met by brute force).
HEAVY_ATTACKS = {"more handles than the bound"}


@pytest.mark.parametrize(
    ("name", "solution", "tests"),
    [
        pytest.param(*a, id=a[0], marks=[pytest.mark.slow] if a[0] in HEAVY_ATTACKS else [])
        for a in ATTACKS
    ],
)
def test_attack_on_handles_and_callbacks_is_failed(name: str, solution: str, tests: str) -> None:
    result = run_tests(solution, tests, timeout=20)
    assert result.status == "failed", (name, result.status, result.stdout_tail[-1500:])
    assert REASONS.get(name, "AssertionError") in result.stdout_tail, result.stdout_tail[-1500:]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "solution", "tests"), SLOW_ATTACKS, ids=[a[0] for a in SLOW_ATTACKS]
)
def test_unbounded_iteration_and_callbacks_are_failed_by_their_bound(
    name: str, solution: str, tests: str
) -> None:
    result = run_tests(solution, tests, timeout=60)
    assert result.status == "failed", (name, result.status, result.stdout_tail[-1500:])
    assert "more than 200000" in result.stdout_tail


@pytest.mark.parametrize(("name", "solution", "tests"), HONEST, ids=[h[0] for h in HONEST])
def test_the_attacked_tests_pass_an_honest_solution(name: str, solution: str, tests: str) -> None:
    result = run_tests(solution, tests, timeout=20)
    assert result.status == "passed", (name, result.stdout_tail[-1500:])


#: Code that marks the process it runs in: run in the judge, it is seen by the tests there.
MARK_PAYLOAD = "__import__('builtins').__dict__.__setitem__('RAN_HERE', 1)"


@pytest.mark.parametrize(
    "reader",
    [
        "import timeit\ntimeit.timeit(text(), number=1)\n",
        "import cProfile\ncProfile.run(text())\n",
        "import profile\nprofile.run(text())\n",
        "import code\ncode.InteractiveInterpreter().runsource(text())\n",
        "import typing\ntyping.get_type_hints(P)\n",
        "import inspect\ninspect.get_annotations(P, eval_str=True)\n",
        "import inspect\ninspect.signature(annotated, eval_str=True)\n",
        "import sympy\nsympy.sympify(text())\n",
        "from sympy.parsing.sympy_parser import parse_expr\nparse_expr(text())\n",
        "import sympy\nsympy.sympify(text(), evaluate=False)\n",
    ],
    ids=[
        "timeit", "cProfile", "profile", "code", "get_type_hints", "get_annotations",
        "signature", "sympify", "parse_expr", "sympify evaluate=False",
    ],
)
def test_a_text_of_the_solutions_handed_to_a_standard_runner_never_runs_in_the_judge(
    reader: str,
) -> None:
    """The standard modules that run a text they are handed (a statement to time or profile,
    an interpreter's source, an annotation written as text) run the solution's text in the
    solution's process or refuse it, never in the judge (where it could change anything,
    the verdict's code included); sympy's parser evaluates only math expressions. Before,
    all but ``inspect``'s readers ran it here (those failed on the solution's class and
    function before they evaluated anything)."""
    solution = (
        "from __future__ import annotations\n"
        f"def text():\n    return {MARK_PAYLOAD!r}\n"
        f"class P:\n    x: {MARK_PAYLOAD!r}\n"
        f"def annotated(a: {MARK_PAYLOAD!r}):\n    return a\n"
        "def solve():\n    return 1\n"
    )
    tests = (
        "import builtins\ntry:\n" + textwrap.indent(reader, "    ")
        + "except Exception:\n    pass\n"
        "assert not hasattr(builtins, 'RAN_HERE'), 'the solution text ran in the judge'\n"
        "assert solve() == 1\n"
    )
    result = run_tests(solution, tests)
    assert result.status == "passed", result.stdout_tail[-1500:]


def _assert_refused(text: str, setup: str, run: str, library: str) -> None:
    """The tests (``setup``, then ``run`` of the solution's ``text()``) are passed only when
    ``run`` raised the judge's ``TypeError`` for ``library`` and nothing ran in the judge."""
    tests = (
        f"import builtins\n{setup}try:\n    {run}\n    said = 'evaluated'\n"
        "except TypeError as exc:\n    said = str(exc)\n"
        f"assert said.startswith('the judge evaluates in {library}'), said\n"
        "assert not hasattr(builtins, 'RAN_HERE')\n"
    )
    result = run_tests(f"def text():\n    return {text!r}\n", tests)
    assert result.status == "passed", result.stdout_tail[-1500:]


@pytest.mark.parametrize(
    "text",
    [
        "[eval][0]('1')", "().__class__", "__import__('os')", "open('/etc/passwd')",
        "lambdify(x, 'x')", "getattr(x, 'subs')", "sympify('__import__(\"os\")')",
    ],
)
def test_sympys_parser_evaluates_in_the_judge_only_math_expressions(text: str) -> None:
    """What sympy's parser is about to ``eval`` of a text may name only sympy's functions,
    a few built-ins and the tests' ``local_dict``, and call only names or calls: anything
    else is a ``TypeError`` before it runs (``sympify`` of a text inside the text comes back
    to the same check)."""
    _assert_refused(text, "import sympy\n", "sympy.sympify(text())", "sympy")


@pytest.mark.parametrize(
    ("text", "run"),
    [
        ("a > @os.getpid() - 10**9", "df.query(text(), engine='python')"),
        ("os.getpid()", "pd.eval(text(), engine='python')"),
        ("().__class__.__bases__[0].__subclasses__()", "pd.eval(text(), engine='python')"),
        ("@builtins.__dict__.__setitem__('RAN_HERE', 1)", "df.eval(text(), engine='python')"),
    ],
    ids=["query @os", "pd.eval of a global", "a special attribute's subclasses", "df.eval @"],
)
def test_a_pandas_expression_of_the_solutions_calls_nothing_in_the_judge(
    text: str, run: str
) -> None:
    """pandas evaluates an expression with method calls, the caller's variables (``@os``,
    or a global by name in ``pd.eval``) and attributes in reach: ``df.query(solve())`` ran
    what the solution chose in the judge. An expression holding a text of the solution's may
    not call, name an ``@`` variable or a private name: a ``TypeError``."""
    setup = "import os\nimport pandas as pd\ndf = pd.DataFrame({'a': [1, 2]})\n"
    _assert_refused(text, setup, run, "pandas")


def test_a_pandas_expression_of_the_solutions_is_guarded_when_only_its_frame_brings_pandas() -> (
    None
):
    """Tests that never name pandas, querying a frame the solution returned with a text it
    returned: the guard is installed when the frame's crossing imports pandas in the judge."""
    solution = _d("""
        import pandas as pd
        def frame():
            return pd.DataFrame({"a": [1, 2]})
        def text():
            return "a > @os.getpid() - 10**9"
    """)
    tests = (
        "import os\ntry:\n    frame().query(text(), engine='python')\n    said = 'evaluated'\n"
        "except TypeError as exc:\n    said = str(exc)\n"
        "assert said.startswith('the judge evaluates in pandas'), said\n"
    )
    result = run_tests(solution, tests)
    assert result.status == "passed", result.stdout_tail[-1500:]


@pytest.mark.parametrize(
    "run",
    [
        "eval(text())", "exec(text())", "eval(bytearray(text()))",
        "exec(compile(text(), 'generated', 'exec'))", "eval(memoryview(text()))",
    ],
)
def test_bytes_of_the_solutions_never_run_in_the_judge(run: str) -> None:
    """``eval``, ``exec`` and ``compile`` take bytes as they take a text: bytes of the
    solution's that could be code are remembered as its texts are, so the tests' ``eval`` of
    them runs in the solution's process. Before, ``eval(solve())`` of its
    ``b"__import__(...)..."`` ran in the judge."""
    tests = (
        f"import builtins\ntry:\n    {run}\nexcept Exception:\n    pass\n"
        "assert not hasattr(builtins, 'RAN_HERE'), 'the solution bytes ran in the judge'\n"
    )
    result = run_tests(f"def text():\n    return {MARK_PAYLOAD.encode()!r}\n", tests)
    assert result.status == "passed", result.stdout_tail[-1500:]


def test_a_handle_is_never_asked_for_a_raw_memory_interface_and_numpy_takes_its_array() -> None:
    """numpy in the judge would read (or write) memory at the address a handle's
    ``__array_interface__`` names; it is never asked, and ``__array__``'s array (a value)
    is what ``np.asarray`` gets. In-process numpy asks, so this check's verdict is the judge's
    own: the solution records each name it is asked for."""
    solution = _d("""
        ASKED = []
        class Arr:
            @property
            def __array_interface__(self):
                ASKED.append("__array_interface__")
                return {"shape": (3,), "typestr": "<i8", "data": (8, False), "version": 3}
            @property
            def __array_struct__(self):
                ASKED.append("__array_struct__")
                raise AttributeError("__array_struct__")
            def __array__(self, dtype=None, copy=None):
                import numpy as np
                return np.array([1, 2, 3])
        def make():
            return Arr()
        def asked():
            return list(ASKED)
    """)
    tests = (
        "import numpy as np\nassert np.asarray(make()).tolist() == [1, 2, 3]\n"
        "assert asked() == []\n"
    )
    result = run_tests(solution, tests, timeout=20)
    assert result.status == "passed", result.stdout_tail[-1500:]


def test_a_failed_bound_names_its_reason() -> None:
    result = run_tests(
        "def solve(f, n):\n    return f(n)\n",
        "def f(n):\n    return solve(f, n + 1)\nsolve(f, 0)\n",
    )
    assert result.status == "failed"
    assert "nested more than 50 deep" in result.stdout_tail


def test_the_tests_patches_never_reach_a_name_the_wire_itself_uses() -> None:
    """Every ``module.attribute`` the judge's code reads, in every module of its package (its
    wire runs in the solution's process too), is of a module whose patches stay the tests' own,
    or is such an attribute: a patch the tests make (``patch("datetime.datetime", ...)``) must
    not break the wire."""
    import ast
    from pathlib import Path

    used: set[tuple[str, str]] = set()
    for path in sorted(Path(_judge.__file__).parent.glob("*.py")):
        tree = ast.parse(path.read_text())
        modules = {
            alias.asname or alias.name
            for node in ast.walk(tree)
            if isinstance(node, ast.Import)
            for alias in node.names
        }
        used |= {
            (node.value.id, node.attr)
            for node in ast.walk(tree)
            if isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in modules
        }
    assert ("decimal", "localcontext") in used  # the scan sees the wire's uses
    # the judge's own modules, each by its name in the fork server (a package of its stand-in)
    package = Path(_judge.__file__).parent
    judge_modules = {f"_asyncpool_zygote._judge.{path.stem}" for path in package.glob("*.py")}
    assert judge_modules - {"_asyncpool_zygote._judge.__init__"} <= _patches._UNFORWARDED
    assert "_asyncpool_zygote._judge" in _patches._UNFORWARDED
    reached = {
        (module, attr) for module, attr in used
        if module not in _patches._UNFORWARDED and (module, attr) not in _patches._UNFORWARDED_ATTRS
    }  # fmt: skip
    # sys is never forwarded either; os.path is a module of its own (posixpath)
    assert reached <= {("os", "path")}, reached


def test_bytes_and_texts_count_as_possible_code_by_the_same_marks() -> None:
    """``could_be_code`` and its bytes twin are written out separately (speed): they must
    agree on every mark, alone and inside other text, and on text with none."""
    from asyncpool.sandbox._judge import _code_texts

    for text in ("(", "@", "=", "for", "import", "match", "x := 1", "a += 1", "plain words"):
        for sample in (text, f"say {text} here"):
            assert _code_texts.could_be_code(sample) == _code_texts.could_be_code_bytes(
                sample.encode()
            ), sample
    assert not _code_texts.could_be_code("plain words")


def test_a_module_crosses_by_name_only_as_a_loaded_module_of_the_standard_library() -> None:
    """What a solution claims is a module's name (``*`` on the wire) gives the tests the
    judge's own module only for a loaded module of the standard library, numpy or pandas;
    never one of the judge's, the solution's or the tests' own modules, a name that is not
    dotted identifiers, nor an object that is not a module."""
    import math
    import sys
    import types

    assert _described._loaded_module("math") is math
    assert _described._loaded_module("collections.abc") is sys.modules["collections.abc"]
    for name in (
        "asyncpool", "asyncpool.sandbox._judge", "_asyncpool_zygote._judge", "solution",
        "__main__", "tests", "pytest", "os path", "math.", "", "x" * 300,
        "xml.etree.never_loaded_here",
    ):  # fmt: skip
        assert _described._loaded_module(name) is None, name
    assert _described._module_name(math) == b"math"
    mine = types.ModuleType("math")  # a module of its own, named as a standard one
    assert _described._module_name(mine) is None
    assert _described._module_name(sys.modules["asyncpool"]) is None


def test_a_failures_description_leaves_out_the_frames_of_every_module_of_the_judge() -> None:
    """A failed check's reason shows the tests' frames, never the judge's own (see
    ``_check._describe``): every module of the judge's package is in ``_OWN_GLOBALS``, the
    modules a split of one makes too."""
    import importlib
    from pathlib import Path

    from asyncpool.sandbox._judge import _check

    package = Path(_judge.__file__).parent
    stems = {path.stem for path in package.glob("*.py")} - {"__init__"}
    assert {"_peer", "_peer_kept", "_proxies", "_described", "_decoder"} <= stems
    for stem in sorted(stems):
        module = importlib.import_module(f"asyncpool.sandbox._judge.{stem}")
        assert id(vars(module)) in _check._OWN_GLOBALS, stem


def test_each_module_of_the_judge_imports_only_those_its_package_lists_above_it() -> None:
    """The package's docstring lists every module of the judge, each importing (at its top
    level) only those listed above it: the order the fork server loads them in, with no
    cycle a split of a module could hide."""
    import ast
    import re
    from pathlib import Path

    package = Path(_judge.__file__).parent
    order: list[str] = []
    for name in re.findall(r":mod:`\.(\w+)`", _judge.__doc__ or ""):
        if name not in order:
            order.append(name)
    stems = {path.stem for path in package.glob("*.py")} - {"__init__"}
    assert set(order) == stems
    for stem in order:
        tree = ast.parse((package / f"{stem}.py").read_text())
        imported: set[str] = set()
        for node in tree.body:  # the top level: not a function's import, nor TYPE_CHECKING's
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                imported |= {node.module} if node.module else {a.name for a in node.names}
        later = imported - set(order[: order.index(stem)])
        assert not later, (stem, sorted(later))


def test_a_flood_of_warnings_is_reissued_up_to_its_bound_and_the_check_goes_on() -> None:
    """Warnings past :data:`_judge.MAX_NOTICES` in one check are dropped, not a failure: an
    honest program may warn in a loop; the flood costs the judge no more than the bound."""
    solution = _d("""
        import warnings
        def noisy(n):
            for i in range(n):
                warnings.warn(f"w{i}")
            return n
    """)
    tests = _d(f"""
        import warnings
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            assert noisy(30_000) == 30_000
        assert len(seen) == {_judge.MAX_NOTICES}, len(seen)
        assert str(seen[0].message) == "w0" and str(seen[-1].message) == "w{_judge.MAX_NOTICES - 1}"
    """)
    result = run_tests(solution, tests, timeout=60)
    assert result.status == "passed", result.stdout_tail[-1500:]


@pytest.mark.parametrize("key", [b"../../x", b"/etc/xy", b"Etc/.\x00x", b"Etc/UT "])
def test_a_zoneinfo_key_that_is_a_path_is_refused_by_the_decoder(key: bytes) -> None:
    """A ``datetime``'s ``ZoneInfo`` crosses as its key, which the receiver opens under the
    system's time zone directory: a forged key that is a path (or not a plain key) is a
    malformed message, never a file opened elsewhere."""
    sent = _judge.encode(datetime.datetime(2024, 1, 1, tzinfo=zoneinfo.ZoneInfo("Etc/UTC")))
    assert _judge.decode(sent).tzinfo is zoneinfo.ZoneInfo("Etc/UTC")
    with pytest.raises(_judge.CodecError, match="time zone key"):
        _judge.decode(sent.replace(b"Etc/UTC", key))


@pytest.mark.parametrize(
    "name", [b"<U0", b"|S0", b"=U5", b"<S3", b"|V8", b"|O8", b"O\x00\x00"]
)
def test_a_numpy_dtype_of_no_allowed_name_is_refused_by_the_decoder(name: bytes) -> None:
    """A numpy dtype crosses by its ``dtype.str``, looked up among the allowed ones (and
    ``object``; text and bytes of a width from 1 to 999,999): a forged name, even one numpy
    would parse, is a malformed message."""
    np = pytest.importorskip("numpy")
    sent = _judge.encode(np.dtype("<f4"))
    assert _judge.decode(sent) == np.dtype("<f4")
    assert _judge.decode(_judge.encode(np.dtype(object))) == np.dtype(object)
    with pytest.raises(_judge.CodecError, match="numpy dtype not allowed"):
        _judge.decode(sent.replace(b"<f4", name))


def test_a_handle_stands_for_no_class_whose_objects_cross_as_values_nor_the_judges_own() -> None:
    """A handle's ``__class__`` (and ``type()``) may stand for a standard-library class its
    object is of (``re.Match``), never for one whose objects cross as values (a forged claim
    would pass a handle for a ``Decimal`` or an array) nor for one the judge's own code asks
    ``isinstance`` of (asyncio's futures, unittest's mocks)."""
    import asyncio
    import collections
    import decimal
    import re
    import unittest.mock

    from asyncpool.sandbox._judge._values import _loaded_class

    np = pytest.importorskip("numpy")

    assert _described._library_class("re", "Match") is re.Match
    refused = [
        (decimal.Decimal, "decimal", "Decimal"), (re.Pattern, "re", "Pattern"),
        (np.ndarray, "numpy", "ndarray"), (np.float64, "numpy", "float64"),
        (asyncio.Future, "asyncio", "Future"),
        (unittest.mock.MagicMock, "unittest.mock", "MagicMock"),
        (list, "builtins", "list"), (collections.OrderedDict, "collections", "OrderedDict"),
    ]  # fmt: skip
    for cls, module, qualname in refused:
        assert _loaded_class(module, qualname) is cls  # here: refused by the rule alone
        assert _described._library_class(module, qualname) is None, (module, qualname)


def test_a_solution_class_named_as_a_standard_one_does_not_pass_for_it() -> None:
    solution = _d("""
        class Match:
            def group(self, n):
                return "a"
        Match.__module__ = "re"
        Match.__qualname__ = "Match"
        def m():
            return Match()
    """)
    tests = "import re\nr = m()\nassert isinstance(r, re.Match) or type(r) is re.Match\n"
    result = run_tests(solution, tests)
    assert result.status == "failed", result.stdout_tail[-1500:]


def test_the_nan_singletons_cross_as_the_receivers_own_and_a_forged_code_is_refused() -> None:
    """``math.nan`` and ``numpy.nan`` cross as the receiver's own (in lists packed or not, in
    rows); any other NaN as a new float; a code that names neither is a malformed message."""
    import math

    np = pytest.importorskip("numpy")
    back = _judge.decode(_judge.encode([math.nan, np.nan, float("nan"), [math.nan] * 20]))
    assert back[0] is math.nan
    assert back[1] is np.nan
    assert back[2] is not math.nan
    assert math.isnan(back[2])
    assert all(x is math.nan for x in back[3])
    rows = _judge.decode(_judge.encode([[math.nan, 1.0]] * 20))
    assert all(row[0] is math.nan for row in rows)
    sent = _judge.encode(math.nan)
    assert sent.endswith(b"~\x00")
    with pytest.raises(_judge.CodecError, match="malformed NaN"):
        _judge.decode(sent[:-1] + b"\x02")


def test_numpy_text_and_bytes_cross_as_values_and_text_must_be_code_points() -> None:
    np = pytest.importorskip("numpy")
    for value in (np.array(["ab", "", "\U0010ffff"]), np.array([[b"x", b"yz"]]), np.str_("hé")):
        back = _judge.decode(_judge.encode(value))
        assert type(back) is type(value)
        assert back.dtype == value.dtype
        assert np.array_equal(back, value)
    assert _values._allowed_dtype("<U999999") == np.dtype("<U999999")
    assert _values._allowed_dtype("<U1000000") is None
    sent = _judge.encode(np.array(["a"]))
    with pytest.raises(_judge.CodecError, match="not code points"):
        _judge.decode(sent.replace("a".encode("utf-32-le"), b"\x00\xdc\x00\x00"))


def test_a_handles_class_stands_only_for_a_plain_class_of_a_library() -> None:
    """A handle's ``__class__`` may say the library class the solution's object is of (see
    ``_described._library_class``), never a class of the standard library, the built-ins, the
    judge, pytest, the solution or the tests, nor a metaclass or an exception: the judge's
    own type checks of handles must never take one for such an object."""
    mpl = pytest.importorskip("matplotlib.axes")
    assert _described._library_class("matplotlib.axes._axes", "Axes") is mpl.Axes
    for module, name in [
        ("builtins", "int"), ("collections", "OrderedDict"), ("asyncpool.sandbox._judge", "_Proxy"),
        ("_pytest.outcomes", "Skipped"), ("solution", "Point"), ("__main__", "TestCases"),
        ("numpy", "ndarray"), ("matplotlib.axes._axes", "Axes.__init__"),
        ("matplotlib.axes._axes", "nothing"), ("not_imported_anywhere", "C"),
    ]:  # fmt: skip
        assert _described._library_class(module, name) is None, (module, name)
    assert not _described._library_module("os.path")
    assert not _described._library_module("a b")
    # a proxy class made for a name that claims a standard class has no such __class__ (only
    # a class's handle's, or the solution's class for the tests' own reads)
    proxy = _proxy_classes._proxy_class(b"OrderedDict\1collections:OrderedDict")
    assert proxy is not None
    getter = vars(proxy).get("__class__")
    assert getter is None or getter.fget in (
        _proxy_classes._class_type, _proxy_classes._instance_class
    )


@pytest.mark.slow
def test_a_spy_of_a_real_function_runs_the_solutions_own_and_only_spies_record() -> None:
    """A spy the tests make of a strictly guarded function (``wraps=os.getpid``) records the
    solution's calls on the tests' mock and runs the solution's own function (its pid, not the
    judge's), also when the solution unwraps it first (the spy has no ``__wrapped__``, as the
    mock has none); a ``record`` the solution forges on another of the tests' mocks is refused,
    and the mock stays uncalled."""
    solution = JUDGE_WIRE + _d("""
        import inspect, os, sys
        def pid():
            return os.getpid()
        def unwrapped_pid():
            return inspect.unwrap(os.getpid)()
        def forge(mock):
            try:
                wire._peer().request("record", mock, ((), {}))
            except TypeError:
                return "refused"
            return "recorded"
    """)
    tests = _d("""
        import os
        from unittest.mock import MagicMock, patch
        own = os.getpid()
        with patch("os.getpid", wraps=os.getpid) as spy:
            assert pid() != own
            assert unwrapped_pid() != own
        assert spy.call_count == 2
        other = MagicMock()
        assert forge(other) == "refused"
        other.assert_not_called()
    """)
    result = run_tests(solution, tests, timeout=60)
    assert result.status == "passed", result.stdout_tail


@pytest.mark.slow
def test_only_public_containers_of_the_tests_plain_objects_take_the_solutions_changes() -> None:
    """The solution changes the tests' ``node.children`` in place, as in-process (see
    ``_TESTS_KEEPING_OPS``), but not the records a mock of the tests keeps: a hack that
    appends the call it never made to ``call_args_list`` (in-process it would pass) fails; a
    list the tests' object keeps under a private name stays hidden from it; and a class-wide
    table of the tests' (a tolerance, expected values), read through the object, is a copy
    (in-process the solution would loosen the tolerance of every test)."""
    solution = _d("""
        from unittest.mock import call
        def notify(hook, node):
            hook(1)
            hook.call_args_list.append(call(2))
            node.children.append("child")
            try:
                node._log.append("forged")
            except AttributeError:
                pass
            node.TOLERANCE["abs"] = 1e9
            node.EXPECTED[:] = ["anything"]
    """)
    tests = _d("""
        from unittest.mock import Mock, call
        class Node:
            TOLERANCE = {"abs": 1e-9}
            EXPECTED = [1, 2]
            def __init__(self):
                self.children, self._log = [], []
        hook, node = Mock(), Node()
        notify(hook, node)
        assert node.children == ["child"]
        assert node._log == []
        assert Node.TOLERANCE == {"abs": 1e-9} and Node.EXPECTED == [1, 2]
        assert hook.call_args_list == [call(1), call(2)]
    """)
    result = run_tests(solution, tests, timeout=30)
    assert result.status == "failed", result.stdout_tail
    assert "hook.call_args_list == [call(1), call(2)]" in result.stdout_tail
    tests = tests.replace("[call(1), call(2)]", "[call(1)]")
    result = run_tests(solution, tests, timeout=30)
    assert result.status == "passed", result.stdout_tail


@pytest.mark.slow
def test_the_tests_function_shows_the_solution_its_signature_and_kind_and_nothing_else() -> None:
    """The solution's ``inspect.signature`` and ``__code__`` of a function the tests pass it
    say its parameters, defaults and kind (``iscoroutinefunction``), as in-process; but the
    code object is made in the solution's process and holds none of the tests' constants or
    names, an annotation that is a class or a text of the tests' is not shown, and
    ``__defaults__`` stays hidden."""
    solution = _d("""
        import inspect
        def look(fn):
            sig = inspect.signature(fn)
            code = fn.__code__
            try:
                fn.__defaults__
                defaults = "shown"
            except AttributeError:
                defaults = "hidden"
            def shown(x):  # (the solution's inspect.Parameter.empty is not the tests')
                return "-" if x is inspect.Parameter.empty else x
            return (
                [(p.name, p.kind.name, shown(p.default), shown(p.annotation))
                 for p in sig.parameters.values()],
                sig.return_annotation, inspect.iscoroutinefunction(fn),
                inspect.isgeneratorfunction(fn), code.co_consts, code.co_names,
                code.co_argcount, code.co_kwonlyargcount, fn.__name__, defaults,
            )
    """)
    tests = _d("""
        class Secret:
            ANSWER = 4242
        async def fetch(a: int, b: Secret = None, *rest, key: "answer 4242" = 7, **kw) -> str:
            return "answer 4242"
        params, ret, coro, gen, consts, names, argc, kwonly, name, defaults = look(fetch)
        assert params == [
            ("a", "POSITIONAL_OR_KEYWORD", "-", int),
            ("b", "POSITIONAL_OR_KEYWORD", None, "-"),
            ("rest", "VAR_POSITIONAL", "-", "-"),
            ("key", "KEYWORD_ONLY", 7, "-"),
            ("kw", "VAR_KEYWORD", "-", "-"),
        ], params
        assert ret is str and coro and not gen and (argc, kwonly, name) == (2, 1, "fetch")
        assert "answer 4242" not in consts and 4242 not in consts and names == (), (consts, names)
        assert defaults == "hidden"
        def numbers(n):
            yield n
        assert look(numbers)[2:4] == (False, True)
    """)
    result = run_tests(solution, tests, timeout=60)
    assert result.status == "passed", result.stdout_tail[-1500:]


@pytest.mark.slow
def test_a_value_of_the_solution_named_only_in_a_string_is_no_answer() -> None:
    """Reading a top-level value of the solution is an answer (DS-1000's ``result``); a name
    the tests only spell in a string is asked for too (``getattr(solution, "X")``) but is
    none: tests that never read anything of the solution's judge nothing."""
    read = run_tests("result = 6\n", "assert result == 6\n")
    assert read.status == "passed", read.stdout_tail
    spelled = run_tests("result = 6\n", "assert 'result' in 'the result'\n")
    assert spelled.status == "failed"
    assert "never got an answer" in spelled.stdout_tail, spelled.stdout_tail


@pytest.mark.slow
def test_the_solutions_environment_reaches_the_tests_only_for_names_they_read() -> None:
    """The solution's environment variables reach the judge only when the tests' code names
    them, and never one that changes how a process loads code (``PYTHONPATH``, ``LD_*``), even
    if named (a forged change of another name: ATTACKS)."""
    solution = _d("""
        import os
        def setup():
            for name in ("SEEN_BY_TESTS", "NOT_NAMED", "PYTHONPATH", "LD_PRELOAD"):
                os.environ[name] = "/tmp/evil"
            return True
    """)
    tests = _d("""
        import os
        def names():
            return [os.environ.get(n) for n in ("SEEN_BY_TESTS", "PYTHONPATH", "LD_PRELOAD")]
        assert setup()
        got = names()
        assert got[0] == "/tmp/evil" and got[1] != "/tmp/evil" and got[2] != "/tmp/evil"
        assert "/tmp/evil" not in [v for k, v in os.environ.items() if k != "SEEN_BY_TESTS"]
    """)
    result = run_tests(solution, tests, timeout=60)
    assert result.status == "passed", result.stdout_tail


@pytest.mark.slow
def test_a_log_records_args_and_extra_cross_only_as_plain_values() -> None:
    """A record's ``args`` and ``extra=`` attributes reach the tests' handlers when they are
    plain values (``caplog.records[0].args``, ``.user``); an object of the solution's among
    them is left out, and forged arguments that do not give the record's text are dropped."""
    solution = JUDGE_WIRE + _d("""
        import logging, sys
        log = logging.getLogger("app")
        class Sneaky:
            def __eq__(self, other):
                return True
        def act():
            log.warning("n=%d", 3, extra={"user": "bob", "who": Sneaky()})
            wire._PEER.notify(
                b"G", ("app", 30, "forged", "p", 1, "f", None, None, ("%s", ("other",)), None)
            )
            return 1
    """)
    tests = _d("""
        import logging
        def test_records(caplog):
            assert act() == 1
            first, second = caplog.records
            assert first.args == (3,) and first.user == "bob" and not hasattr(first, "who")
            assert second.getMessage() == "forged" and not second.args
    """)
    result = run_tests(solution, tests, timeout=60)
    assert result.status == "passed", result.stdout_tail


@pytest.mark.slow
def test_an_exceptions_library_base_is_imported_only_when_the_tests_import_it() -> None:
    """The judge stands a class for each exception class of the solution's, derived from the
    judge's own copy of its library base; a module the tests do not import is not imported for
    it (the solution names the module), one they import is imported before they run."""
    solution = _d("""
        import xml.parsers.expat
        class BadXml(xml.parsers.expat.ExpatError):
            pass
        def f():
            return 1
    """)
    tests = _d("""
        import sys
        assert f() == 1
        assert "xml.parsers.expat" not in sys.modules
    """)
    result = run_tests(solution, tests, timeout=60)
    assert result.status == "passed", result.stdout_tail
    imported = "import xml.parsers.expat\nassert issubclass(BadXml, xml.parsers.expat.ExpatError)\n"
    result = run_tests(solution, imported + "assert f() == 1\n", timeout=60)
    assert result.status == "passed", result.stdout_tail


def test_exception_args_cross_only_as_small_plain_data() -> None:
    """The args and attributes of the solution's exceptions cross as values only while they
    are plain and small (``_exceptions._plain_detail``: 10 deep, 1,000 items in all): a forged
    detail past either is its message alone, checked at the cost of the budget."""
    deep: object = 1
    for _ in range(10):
        deep = [deep]
    assert _exceptions._plain_detail((deep,)) is False
    assert _exceptions._plain_detail(([[[[[[[[1]]]]]]]],)) is True
    assert _exceptions._plain_detail((list(range(998)),)) is True  # 1,000 with the tuple and list
    assert _exceptions._plain_detail((list(range(999)),)) is False
    assert _exceptions._plain_detail(({"a": [1, (2,)], "b": b"x" * 10_000},)) is True
    assert _exceptions._plain_detail(("x" * 10_001,)) is False
    assert _exceptions._plain_detail((object(),)) is False
    exc = _exceptions._solution_exception(
        "ValueError", "(1, 2)", detail=(([1] * 5000,), (), None, ())
    )
    assert type(exc) is ValueError
    assert exc.args == ("(1, 2)",)


def test_a_forged_time_zone_regex_or_generic_alias_is_refused_by_the_decoder() -> None:
    """A bare time zone, a compiled pattern and a ``list[int]`` cross as values, rebuilt by the
    judge: a time zone key that is a path, a pattern with ``re.DEBUG`` (it prints when
    compiled) or one that does not compile, and an alias of anything but a built-in class are
    malformed messages, never rebuilt."""
    tz = datetime.timezone(datetime.timedelta(hours=2), "CEST")
    assert _judge.decode(_judge.encode(tz)) == tz
    assert _judge.decode(_judge.encode(datetime.timezone.utc)) is datetime.timezone.utc
    zone = _judge.encode(zoneinfo.ZoneInfo("Etc/UTC"))
    assert _judge.decode(zone) is zoneinfo.ZoneInfo("Etc/UTC")
    with pytest.raises(_judge.CodecError, match="time zone key"):
        _judge.decode(zone.replace(b"Etc/UTC", b"../../x"))
    assert _judge.decode(_judge.encode(re.compile("a+b", re.I))) == re.compile("a+b", re.I)
    for spec in (("a+b", int(re.I | re.DEBUG)), ("a(+b", 0), (b"x", 1 << 20), ("x", "i")):
        with pytest.raises(_judge.CodecError, match="bad regular expression"):
            _judge.decode(b"I" + _judge.encode(spec))
    assert _judge.decode(_judge.encode(list[int])) == list[int]
    assert _judge.decode(_judge.encode(dict[str, list[int]])) == dict[str, list[int]]
    for forged in (("list", (int,)), (1, (int,)), (list, [int]), (list,)):
        with pytest.raises(_judge.CodecError, match="bad generic alias"):
            _judge.decode(b"X" + _judge.encode(forged))


def test_a_pandas_timestamp_in_a_forged_time_zone_is_refused_by_the_decoder() -> None:
    """A time-zone-aware ``Timestamp`` crosses as its instant and its zone's key or offset;
    a key that is a path is a malformed message, as for a ``datetime``."""
    pd = pytest.importorskip("pandas")
    stamp = pd.Timestamp("2024-03-15 09:30", tz="Europe/Paris")
    sent = _judge.encode(stamp)
    got = _judge.decode(sent)
    assert (got, str(got), got.tz) == (stamp, str(stamp), stamp.tz)
    with pytest.raises(_judge.CodecError, match="time zone key"):
        _judge.decode(sent.replace(b"Europe/Paris", b"../../etc/x1"))


PACKABLE: list[list[Any] | tuple[Any, ...]] = [
    list(range(-8, 8)),
    [2**63 - 1, -(2**63)] * 8,
    [0.0, -0.0, float("inf"), float("-inf"), 1e-300, 5e-324, 1.5] * 3,
    ["", "a", "é", "\U0010ffff", "\udc80", "x" * 1000, "(", "@"] * 2,
    tuple(range(100)),
    tuple(str(i) for i in range(100)),
    [[i, i + 1] for i in range(20)],  # a graph's edges
    [(i, -i) for i in range(20)],
    [[0.5, -0.0]] * 1 + [[float(i)] for i in range(20)],
    [list(range(i % 3)) for i in range(20)],  # ragged, empty rows too
    tuple([i] for i in range(20)),
]
NOT_PACKED: list[list[Any] | tuple[Any, ...]] = [
    [2**63, *range(15)],  # past 64 bits
    [True, *range(15)],  # a bool is no int here
    ["a\0b", *["c"] * 15],  # a NUL would split
    [1.0, *range(15)],
    list(range(15)),  # too short to be worth it
    [[1, 2]] * 16,  # one row, sixteen times: identity crosses item by item
    [[1], (2,), *[[3]] * 14],  # lists and tuples
    [[1, 2.0], *[[3, 4]] * 15],  # ints and floats
    [[[1]], *[[3]] * 15],  # a row that nests
]


@pytest.mark.parametrize("value", PACKABLE + NOT_PACKED)
def test_lists_and_tuples_of_one_scalar_type_cross_packed_and_equal(
    value: list[Any] | tuple[Any, ...],
) -> None:
    """A list or tuple of 16 or more ints (64-bit), floats or NUL-free strings, or of rows of
    numbers, crosses as one packed run (``]``/``)``), anything else item by item: either way
    the same items, types (of the rows' items too), float signs and row identity come back."""
    sent = _judge.encode(value)
    packed = any(value is p for p in PACKABLE)
    tag = (b"]" if type(value) is list else b")") if packed else b"l"
    assert sent[:1] == tag
    back = _judge.decode(sent)
    assert type(back) is type(value)
    assert repr(back) == repr(value)
    assert [type(x) for x in back] == [type(x) for x in value]
    rows = [x for x in value if type(x) in (list, tuple)]
    assert [type(y) for x in back if type(x) in (list, tuple) for y in x] == [
        type(y) for x in rows for y in x
    ]
    if value and type(value[0]) is list and value[0] is value[-1]:
        assert back[0] is back[-1]


def test_a_packed_list_keeps_its_identity_within_a_message() -> None:
    row = list(range(20))
    back = _judge.decode(_judge.encode([row, row, (row,)]))
    assert back[0] is back[1] is back[2][0]
    assert back[0] == row


@pytest.mark.parametrize(
    ("body", "error"),
    [
        (b"]q" + (15).to_bytes(4, "big") + (120).to_bytes(4, "big") + b"\0" * 120, "malformed"),
        (b"]q" + (16).to_bytes(4, "big") + (120).to_bytes(4, "big") + b"\0" * 120, "malformed"),
        (b"]i" + (16).to_bytes(4, "big") + (128).to_bytes(4, "big") + b"\0" * 128, "malformed"),
        (b"]s" + (16).to_bytes(4, "big") + (14).to_bytes(4, "big") + b"\0" * 14, "malformed"),
        (b")s" + (16).to_bytes(4, "big") + (16).to_bytes(4, "big") + b"\0" * 16, "malformed"),
        (b"]s" + (16).to_bytes(4, "big") + (16).to_bytes(4, "big") + b"\xff" * 16, "UTF-8"),
        (b"]q" + (1 << 30).to_bytes(4, "big") + (8).to_bytes(4, "big") + b"\0" * 8, "too many"),
        (b"]d" + (16).to_bytes(4, "big") + (1 << 20).to_bytes(4, "big") + b"\0" * 128, "the end"),
        (b"]L" + (16).to_bytes(4, "big") + b"\1\0\0\0" * 16 + b"q" + (120).to_bytes(4, "big")
         + b"\0" * 120, "malformed packed rows"),  # the rows hold 16 numbers, not 15
        (b"]L" + (16).to_bytes(4, "big") + b"\1\0\0\0" * 16 + b"s" + (128).to_bytes(4, "big")
         + b"\0" * 128, "malformed packed rows"),
        (b"]T" + (16).to_bytes(4, "big") + b"\xff\xff\xff\x7f" * 16 + b"q" + (8).to_bytes(4, "big")
         + b"\0" * 8, "too many"),
    ],
)
def test_a_forged_packed_run_is_a_malformed_message(body: bytes, error: str) -> None:
    with pytest.raises(_judge.CodecError, match=error):
        _judge.decode(body)


def test_packed_rows_are_written_back_when_the_solution_reorders_or_changes_them() -> None:
    solution = _d("""
        def relax(edges):
            edges.sort(key=lambda e: e[2])
            edges[0][2] = 0
            edges.append([9, 9, 9])
            return len(edges)
    """)
    tests = _d("""
        edges = [[i, i + 1, (7 * i) % 20] for i in range(20)]
        first = min(edges, key=lambda e: e[2])
        assert relax(edges) == 21
        assert edges[0] is first and first[2] == 0
        assert edges[-1] == [9, 9, 9]
        assert [e[2] for e in edges[1:-1]] == sorted(e[2] for e in edges[1:-1])
    """)
    assert run_tests(solution, tests).status == "passed"
    wrong = solution.replace("edges[0][2] = 0", "edges[0] = [edges[0][0], edges[0][1], 0]")
    result = run_tests(wrong, tests)
    assert result.status == "failed", result


@pytest.mark.slow
def test_a_million_item_list_is_judged_and_written_back_whole() -> None:
    """The tests hand the solution 10**6 ints and 10**5 strings; it sorts the ints in place
    (written back) and returns the strings reversed."""
    solution = _d("""
        def sort_in_place(xs):
            xs.sort()
        def reversed_words(words):
            return words[::-1]
    """)
    tests = _d("""
        import random
        xs = [random.randrange(-10**12, 10**12) for _ in range(10**6)]
        expected = sorted(xs)
        sort_in_place(xs)
        assert xs == expected
        words = [str(i) for i in range(10**5)]
        assert reversed_words(words) == words[::-1]
    """)
    result = run_tests(solution, tests, timeout=60)
    assert result.status == "passed", result.stdout_tail[-1500:]
    wrong = solution.replace("xs.sort()", "xs[:] = sorted(xs)[::-1]")
    assert run_tests(wrong, tests, timeout=60).status == "failed"


@pytest.mark.parametrize(
    "op", ["throw", "delattr", "setattr", "anext", "type", "record", "signature"]
)
def test_a_request_only_the_judge_may_make_is_refused_when_the_solution_forges_it(
    op: str,
) -> None:
    """``throw`` (a built-in exception thrown into a generator, see ``_GeneratorProxy``) and
    the other requests :data:`_ops._OPS` keeps for the judge are refused (a ``TypeError``)
    when the solution makes them of the tests' objects, which stay untouched."""
    assert _ops._OPS[op] is False
    forged = JUDGE_WIRE + _d(f"""
        import sys
        def consume(gen):
            try:
                wire._peer().request({op!r}, gen, (ValueError, ()))
            except TypeError:  # (its message is the judge's: not told)
                return "refused"
            return "done"
    """)
    tests = _d("""
        def numbers():
            yield 1
            yield 2
        gen = numbers()
        assert consume(gen) == "refused"
        assert list(gen) == [1, 2]
    """)
    result = run_tests(forged, tests)
    assert result.status == "passed", result.stdout_tail


#: Helper 44's attacks on the day's changes, each passing on the commit before its fix: a
#: wrong program that spends the comparison budget (a big container of its own) or puts a big
#: item first, so that a change it makes (or the tests make) is not seen; a wrong
#: ``Graph(dict)`` whose change is one level into its value-backed object; a solution that
#: rewrote its wire to claim a standard class for ``type()``. Each is a wrong program the tests
#: catch in-process.
BUDGET_ATTACKS: list[tuple[str, str, str]] = [
    (
        "the budget spent by a big config of the solution's own, then a shared default",
        _d("""
            CONFIG = {"a": {"b": 1}, "pad": list(range(1_040_000))}
            def get_config():
                return CONFIG  # wrong: must hand out a copy
            def compute():
                return CONFIG["a"]["b"] * 10
        """),
        _d("""
            cfg = get_config()
            for _ in range(5):
                assert compute() == 10
            cfg["a"]["b"] = 9
            assert compute() == 10, "get_config must hand out a copy"
        """),
    ),
    (
        "a big first item, then a small inner dict shared",
        _d("""
            CONFIG = {"pad": list(range(1_100_000)), "a": {"b": 1}}
            def get_config():
                return CONFIG  # wrong: must hand out a copy
            def compute():
                return CONFIG["a"]["b"] * 10
        """),
        _d("""
            cfg = get_config()
            cfg["a"]["b"] = 9
            assert compute() == 10, "get_config must hand out a copy"
        """),
    ),
    (
        "a big first row, then the row the solution changes in the tests' kept grid",
        _d("""
            class Sim:
                def __init__(self, g):
                    self.g = g  # wrong: must copy its input
                def step(self):
                    self.g[1][0] = 1
        """),
        _d("""
            g = [list(range(1_100_000)), [0, 0]]
            Sim(g).step()
            assert g[1][0] == 0, "Sim must not modify its input"
        """),
    ),
]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "solution", "tests"), BUDGET_ATTACKS, ids=[a[0] for a in BUDGET_ATTACKS]
)
def test_a_spent_or_outsized_comparison_budget_hides_no_change(
    name: str, solution: str, tests: str
) -> None:
    result = run_tests(solution, tests, timeout=30)
    assert result.status == "failed", (name, result.stdout_tail[-1500:])
    assert "must" in result.stdout_tail, result.stdout_tail[-1500:]


def test_a_change_inside_a_value_backed_dicts_lists_is_seen() -> None:
    wrong = _d("""
        class Graph(dict):
            def add_edge(self, u, v):
                self.setdefault(u, []).append(v)  # wrong: a duplicate edge must be ignored
    """)
    right = wrong.replace(
        "self.setdefault(u, []).append(v)", "edges = self.setdefault(u, [])\n"
        "        if v not in edges:\n            edges.append(v)",
    )  # fmt: skip
    tests = "g = Graph()\ng.add_edge(1, 2)\nassert g == {1: [2]}\n" + (
        "g.add_edge(1, 2)\nassert g == {1: [2]}\n"
    )
    assert run_tests(wrong, tests).status == "failed"
    assert run_tests(right, tests).status == "passed"


def test_type_never_follows_a_standard_class_a_rewritten_wire_claims() -> None:
    """``isinstance`` follows a handle's claim of a standard class (as a ``__class__`` property
    makes it in-process), ``type()`` never does: no object but a real ``re.Match`` is of that
    type in-process, and a solution that rewrote its side of the wire can claim any class."""
    solution = JUDGE_WIRE + _d("""
        class Fake:
            def group(self, *args):
                return "123"
        _class_name = wire._class_name
        def claiming(kind):
            name = _class_name(kind)
            return name + b"\\1re:Match" if kind is Fake else name
        wire._class_name = claiming
        perform = wire._Peer.perform
        def lying(self, op, obj, args, kwargs):
            if op == "type" and type(obj) is Fake:
                import re
                return re.Match
            return perform(self, op, obj, args, kwargs)
        wire._Peer.perform = lying
        def find(text):
            return Fake()
    """)
    tests = "import re\nm = find('abc123')\nassert type(m) is re.Match\nassert m.group() == '123'\n"
    result = run_tests(solution, tests)
    assert result.status == "failed", result.stdout_tail[-1500:]
    assert "assert type(m) is re.Match" in result.stdout_tail


def _answering_id(answer: str) -> str:
    """A solution that rewrote its side of the wire to answer the judge's ``id`` of its
    ``Copy`` objects with ``answer`` (an expression of ``obj`` and ``BASE``), and whose ``same``
    returns such a copy where the tests want their own object back."""
    return JUDGE_WIRE + _d(f"""
        BASE = 1 << 62
        class Copy:
            def __init__(self, of):
                self.of = of
                self.val = of.val
        perform = wire._Peer.perform
        def lying(self, op, obj, args, kwargs):
            if op == "id" and type(obj) is Copy:
                return {answer}
            return perform(self, op, obj, args, kwargs)
        wire._Peer.perform = lying
        def same(node):
            return Copy(node)
    """)


@pytest.mark.parametrize(
    "answer",
    [
        pytest.param("id(obj.of)", id="the id the solution sees of the tests' object"),
        pytest.param("id(obj.of) + BASE", id="the tests' object's address, moved up"),
    ],
)
def test_a_handle_never_has_the_id_of_an_object_of_the_tests(answer: str) -> None:
    """The ``id`` of the solution's objects lies above every address of the judge, on both
    sides: however the solution answers, its handle's is never the ``id`` of one of the tests'
    objects (``id(same(n)) == id(n)`` holds in-process only for ``n`` itself)."""
    tests = _d("""
        class Node:
            def __init__(self, val):
                self.val = val
        n = Node(1)
        r = same(n)
        assert r.val == 1
        assert id(r) == id(n)
    """)
    result = run_tests(_answering_id(answer), tests)
    assert result.status == "failed", result.stdout_tail[-1500:]
    assert "assert id(r) == id(n)" in result.stdout_tail or "no id can be" in result.stdout_tail
    honest = "def same(node):\n    return node\n"
    assert run_tests(honest, tests).status == "passed"


@pytest.mark.parametrize("answer", ["-1", "5", "1 << 63", "'7'", "1.0"])
def test_an_id_no_object_can_have_fails_the_check(answer: str) -> None:
    """An ``id`` answer that is not an int in ``[2**62, 2**63)`` (the solution's objects') is a
    rewritten wire: failed."""
    tests = "class Node:\n    def __init__(self, val):\n        self.val = val\nid(same(Node(1)))\n"
    result = run_tests(_answering_id(answer), tests)
    assert result.status == "failed", result.stdout_tail[-1500:]
    assert "the solution answered id() with what no id can be" in result.stdout_tail


def test_an_id_is_asked_once_per_handle_and_never_shared_by_two_live_handles() -> None:
    """A rewritten wire that answers ``id`` with a fresh number at each request (``clone()``
    returning ``self`` passing ``id(c) != id(o)``) gets its first answer back, the handle's for
    its life; one that answers two of its objects with one number (a wrong singleton passing
    ``id(a) == id(b)``) fails the check (helper 45's A4)."""
    fresh = _answering_id("next(FRESH)").replace(
        "BASE = 1 << 62\n", "BASE = 1 << 62\nimport itertools\nFRESH = itertools.count(BASE)\n"
    ).replace("    return Copy(node)\n", "    return Copy(node)\ndef clone(c):\n    return c\n")
    tests = "class Node:\n    def __init__(self, val):\n        self.val = val\n"
    tests += "o = same(Node(1))\nc = clone(o)\nassert id(c) != id(o)\n"
    result = run_tests(fresh, tests)
    assert result.status == "failed", result.stdout_tail[-1500:]
    assert "assert id(c) != id(o)" in result.stdout_tail, result.stdout_tail[-1500:]
    constant = _answering_id("BASE + 4242")
    tests = "class Node:\n    def __init__(self, val):\n        self.val = val\n"
    tests += "a, b = same(Node(1)), same(Node(2))\nassert id(a) == id(b)\n"
    result = run_tests(constant, tests)
    assert result.status == "failed", result.stdout_tail[-1500:]
    assert "of two of its objects with one id" in result.stdout_tail, result.stdout_tail[-1500:]


@pytest.mark.parametrize(
    "tag", [pytest.param("=", id="names a slot"), pytest.param("[", id="fills a slot")]
)
def test_the_solution_may_not_name_a_slot_of_the_judges_kept_lists(tag: str) -> None:
    """Only the judge's requests send a big list into a slot of the solution's side or name
    one (see ``_judge._resent``): a solution that rewrote its encoder to answer with a slot
    breaks the protocol, a failed check, never a list the judge looks up."""
    solution = JUDGE_WIRE + _d(f"""
        import struct
        mutable = wire._Encoder.mutable
        def naming(self, value, kind, depth, content):
            if kind is list and len(value) == 3:
                self.numbered(value, content)
                self.out.append(b{tag!r} + struct.pack(">I", 0))
                return
            mutable(self, value, kind, depth, content)
        wire._Encoder.mutable = naming
        def f(xs):
            return [1, 2, 3]
    """)
    result = run_tests(solution, "assert f(list(range(2000))) == [1, 2, 3]\n")
    assert result.status == "failed", result.stdout_tail[-1500:]
    assert "a slot where none may be" in result.stdout_tail, result.stdout_tail[-1500:]


#: The solution's objects of the tests below: linked-list nodes (plain attributes, no truth of
#: their own) and classes with a truth of their own.
_NODES = _d("""
    class Node:
        def __init__(self, val, next=None):
            self.val = val
            self.next = next
            self.name = "n" * 300
        def bump(self):
            self.val += 1
    class Empty:
        def __len__(self):
            return 0
    class Falsy:
        def __bool__(self):
            return False
    class Derived(Node):
        pass
    class Key:
        def __init__(self, k):
            self.k = k
        def __hash__(self):
            return hash(self.k)
    def build(n):
        head = None
        for v in range(n, 0, -1):
            head = Node(v, head)
        return head
""")


def _refusing(condition: str, what: str, allowed: int = 0) -> str:
    """:data:`_NODES` in a solution that ends its process at a request of the judge for which
    ``condition`` (of ``op`` and ``args``) holds, past the first ``allowed`` of them, saying
    ``asked for`` and ``what`` (an expression of them): a check that makes more fails with
    that message."""
    return JUDGE_WIRE + _d(f"""
        perform = wire._Peer.perform
        ASKED = []
        def refusing(self, op, obj, args, kwargs):
            if {condition}:
                ASKED.append(op)
                if len(ASKED) > {allowed}:
                    raise SystemExit("asked for " + str({what}))
            return perform(self, op, obj, args, kwargs)
        wire._Peer.perform = refusing
    """) + _NODES


_NO_TRUTH_ASKED = _refusing('op == "bool"', '"bool"')


def test_the_truth_of_a_handle_whose_class_has_no_bool_nor_len_is_asked_of_nobody() -> None:
    """In-process such an object is true and no code of its class runs: ``while node:`` over
    the solution's linked list asks nothing (it was a third of each step's requests); a
    class that has ``__len__`` or ``__bool__``, its own or inherited, is asked, as before."""
    walk = "p = build(50)\nn = 0\nwhile p:\n    n += 1\n    p = p.next\nassert n == 50\n"
    assert run_tests(_NO_TRUTH_ASKED, walk).status == "passed"
    inherited = "assert Derived(1) and Node(2)\n"
    assert run_tests(_NO_TRUTH_ASKED, inherited).status == "passed"
    for tests in ("assert not Empty()\n", "assert not Falsy()\n"):
        result = run_tests(_NO_TRUTH_ASKED, tests)
        assert result.status == "failed", tests
        assert "asked for bool" in result.stdout_tail, result.stdout_tail[-500:]
    honest = JUDGE_WIRE + _NODES
    assert run_tests(honest, "assert not Empty() and not Falsy() and Node(1)\n").status == (
        "passed"
    )


def test_the_truth_of_an_object_computed_from_a_value_of_the_tests_is_still_refused() -> None:
    """``bool()`` of what the solution computed from a value of the tests (``solve() - 1``)
    is refused as before, though its class has no ``__bool__`` (its truth answered here
    would be the judge's ``True`` for an object the solution made from the tests' value)."""
    solution = _d("""
        class Zero:
            pass
        class Answer:
            def __sub__(self, other):
                return Zero()
        def solve():
            return Answer()
    """)
    result = run_tests(solution, "assert solve() - 1\n")
    assert result.status == "failed"
    assert "not a value (bool)" in result.stdout_tail, result.stdout_tail[-500:]


_NO_VAL_ASKED = _refusing('op == "getattr" and args and args[0] in ("val", "name")', "args[0]", 1)


def test_a_handles_plain_attributes_are_read_without_a_request_until_a_message_crosses() -> None:
    """A handle of the solution's plain object crosses with the plain attributes (ints, floats,
    short strings, bools, None) the tests asked of an object of its class before: the first
    node's ``val`` is asked, the next ones' are read without a request (a linked list walked
    by the tests: ``node.val`` was half of each step's requests) until a message crosses, after
    which they are asked again (the solution's method may have changed them); a long string is
    always asked."""
    walk = "p = build(30)\nvals = []\nwhile p:\n    vals.append(p.val)\n    p = p.next\n"
    walk += "assert vals == list(range(1, 31))\n"
    assert run_tests(_NO_VAL_ASKED, walk).status == "passed"
    for tests, asked in [
        ("h = build(1)\nassert h.val == 1\nh.bump()\nassert h.val == 2\n", "asked for val"),
        ("assert len(build(1).name) == 300\nassert len(build(1).name) == 300\n", "asked for name"),
    ]:
        result = run_tests(_NO_VAL_ASKED, tests)
        assert result.status == "failed", tests
        assert asked in result.stdout_tail, result.stdout_tail[-500:]
    honest = JUDGE_WIRE + _NODES
    tests = "h = build(2)\nh.bump()\nassert h.val == 2 and h.next.val == 2\nh.val = 9\n"
    tests += "assert h.val == 9\nh.bump()\nassert h.val == 10 and len(h.name) == 300\n"
    assert run_tests(honest, tests).status == "passed"


@pytest.mark.parametrize(
    "plain",
    [
        pytest.param("(None, (('val', [1]),), False)", id="a list"),
        pytest.param("(None, tuple((f'a{i}', i) for i in range(17)), False)", id="too many"),
        pytest.param("(None, ((1, 2),), False)", id="a name that is no string"),
        pytest.param("(None, (), False)", id="none"),
        pytest.param("('1', (), False)", id="a hash that is no int"),
        pytest.param("(1, (), 1)", id="finalizes that is no bool"),
        pytest.param("(1, ())", id="two parts"),
    ],
)
def test_malformed_plain_attributes_of_a_handle_fail_the_check(plain: str) -> None:
    """The plain attributes a handle crosses with are checked as the judge reads them: a
    solution that rewrote its encoder to send others breaks the protocol (a failed check)."""
    solution = JUDGE_WIRE + _d(f"""
        wire._handle_extras = lambda value, kind, trusted, epoch: {plain}
        class Node:
            def __init__(self):
                self.val = 1
        def get():
            return Node()
    """)
    result = run_tests(solution, "assert get().val == 1\n")
    assert result.status == "failed", result.stdout_tail[-1500:]
    assert "malformed plain attributes" in result.stdout_tail, result.stdout_tail[-1500:]


def test_the_hash_of_a_handle_whose_class_hashes_by_identity_is_asked_of_nobody() -> None:
    """Such an object's hash is the same for its life and runs no code of its class: once the
    tests asked it of one object of the class, its handles cross with it, and ``node in seen``
    over the solution's nodes asks no more; a class with a ``__hash__`` of its own is asked
    each time (its hash may change)."""
    no_hash = _refusing('op == "hash"', '"hash"', 2)  # (the first node's ``in`` and ``add``)
    tests = "p = build(40)\nseen = set()\nwhile p:\n    assert p not in seen\n"
    tests += "    seen.add(p)\n    p = p.next\nassert len(seen) == 40\n"
    assert run_tests(no_hash, tests).status == "passed"
    keys = "ks = []\nfor i in range(5):\n    ks.append(Key(i))\n    assert ks[-1] in set(ks)\n"
    result = run_tests(no_hash, keys)
    assert result.status == "failed"
    assert "asked for hash" in result.stdout_tail, result.stdout_tail[-500:]
    assert run_tests(JUDGE_WIRE + _NODES, keys).status == "passed"


def test_the_identity_hash_of_a_handle_is_asked_once_however_often_it_is_hashed() -> None:
    """The first handle of a class crosses before anyone asked its hash: its owner's answer
    says the hash is its identity's, and the handle keeps it (50 ``add`` and ``in`` of one
    node ask once, where each asked before)."""
    once = _refusing('op == "hash"', '"hash"', 1)
    tests = "p = build(3)\nseen = set()\nfor _ in range(50):\n    seen.add(p)\n"
    tests += "    assert p in seen\nassert len(seen) == 1 and p.next not in seen\n"
    assert run_tests(once, tests).status == "passed"


@pytest.mark.parametrize(
    "answer",
    [
        pytest.param("hash(obj)", id="the hash alone"),
        pytest.param("(hash(obj), 1)", id="identity that is no bool"),
        pytest.param("(str(hash(obj)), True)", id="a hash that is no int"),
        pytest.param("(hash(obj), True, 0)", id="three parts"),
    ],
)
def test_a_malformed_answer_to_hash_fails_the_check(answer: str) -> None:
    solution = JUDGE_WIRE + _d(f"""
        perform = wire._Peer.perform
        def malformed(self, op, obj, args, kwargs):
            if op == "hash":
                return {answer}
            return perform(self, op, obj, args, kwargs)
        wire._Peer.perform = malformed
    """) + _NODES
    result = run_tests(solution, "assert build(1) in {build(1)} or True\n")
    assert result.status == "failed", result.stdout_tail[-1500:]
    assert "malformed answer" in result.stdout_tail, result.stdout_tail[-1500:]


def test_a_runs_processes_have_no_signal_handler_of_their_own_before_their_code_runs() -> None:
    """A handle crosses with plain attributes only while no signal handler of the process's
    code may run between two messages (``_described.watch_background`` watches the handlers
    set from then on, and reads none set before): so neither the solution's process nor the
    judge's has a Python handler but the interpreter's ``SIGINT`` one when their code starts."""
    listing = _d("""
        import signal
        def handlers():
            found = []
            for signum in signal.valid_signals():
                try:
                    handler = signal.getsignal(signum)
                except (ValueError, OSError):
                    continue
                if callable(handler) and handler is not signal.default_int_handler:
                    found.append(int(signum))
            return found
    """)
    result = run_tests(
        listing + "SOLUTION = handlers()\ndef solutions():\n    return SOLUTION\n",
        listing + "assert handlers() == [] and solutions() == [], (handlers(), solutions())\n",
    )
    assert result.status == "passed", result.stdout_tail[-800:]
