"""The requests of the wire: those the solution may make of the tests' objects (:data:`_OPS`), the
attributes of the tests' objects it may not read (:data:`_HIDDEN`), and the operators requests name
(comparisons, arithmetic in place and reflected, the unary ones).

Must not: import another module of the judge (data only).
"""

from __future__ import annotations

import operator
import types
from math import ceil as _ceil  # bound once (the wire's ops, see _UNARY)
from math import floor as _floor
from math import trunc as _trunc
from typing import Any

#: Requests one side may make on the other's objects; those marked False the judge refuses
#: the solution (it may call the tests' objects, iterate them and read public attributes; set
#: only what :func:`_settable` allows). Comparisons, arithmetic, conversions and
#: ``isinstance``/``issubclass`` of the tests' objects and classes are the tests' own methods
#: running here, as in-process (the solution sorting, deduplicating or summing the tests'
#: ``Interval``s, ``Point``s or ``Money``): the judge computes them and the solution gets the
#: result, never the other way round; they tell the solution nothing its inputs' public
#: attributes do not. So do its copies (``copy.deepcopy(root)`` of the tests' tree), and
#: ``with``/``async with`` on the tests' context managers (a ``Lock``, an open file, a class of
#: theirs, a ``mock_open``): their own ``__enter__`` and ``__exit__`` run here, as a call of
#: their methods would; ``__exit__`` gets the solution's exception as the judge rebuilds every
#: one of the solution's (see :func:`_exit`), and what it returns decides, as in-process,
#: whether the solution's exception is suppressed.
_OPS: dict[str, bool] = {
    "call": True, "getattr": True, "iter": True, "next": True, "len": True, "getitem": True,
    "contains": True, "bool": True, "repr": True, "str": True, "hash": True, "format": True,
    "id": True,  # the object's own ``id`` (see _handle_ids._handle_id)
    "await": True,  # the tests' coroutine the solution awaits (``await fetch(x)``)
    # a copy of the tests' object is the tests' object too (made here by their classes'
    # own copying; the solution holds a handle of it, as of the original)
    "copy": True, "deepcopy": True,
    "signature": False, "dir": False,
    "anext": False, "throw": False,
    "members": False, "collection": False,
    "setattr": False, "delattr": False, "setitem": False, "delitem": False, "enter": True,
    "exit": True, "aenter": True, "aexit": True, "isinstance": True, "issubclass": True,
    "type": False, "record": False,
    "eq": True, "ne": True, "lt": True, "le": True, "gt": True, "ge": True,
    "add": True, "radd": True, "sub": True, "mul": True, "truediv": True,
    "iadd": True, "isub": True, "imul": True, "itruediv": True, "ifloordiv": True,
    "imod": True, "ipow": True, "iand": True, "ior": True, "ixor": True, "ilshift": True,
    "irshift": True, "imatmul": True,
    "rsub": True, "rmul": True, "rtruediv": True, "rfloordiv": True, "rmod": True,
    "rpow": True, "rand_": True, "ror_": True, "rxor": True, "rlshift": True,
    "rrshift": True, "rmatmul": True,
    "floordiv": True, "mod": True, "pow": True, "and_": True, "or_": True, "xor": True,
    "lshift": True, "rshift": True,
    "matmul": True, "neg": True, "pos": True, "abs": True, "invert": True, "int": True,
    "float": True, "index": True, "complex": True, "round": True, "floor": True,
    "ceil": True, "trunc": True, "subclass": False,
}  # fmt: skip
#: Attributes of the tests' objects the solution may not read: private and special ones
#: (``__globals__``, ``__code__``...), and frames, code and tracebacks (a generator's
#: ``gi_frame.f_globals`` or ``gi_code.co_consts`` would show the tests' namespace and
#: constants, their expected answers among them).
_HIDDEN = ("_", "f_", "co_", "gi_", "cr_", "ag_", "tb_")
#: ... but for these, which name an object and nothing it holds: what ``functools.wraps``
#: copies from a function of the tests the solution decorates (``@count_calls`` on a test's
#: helper; not ``__doc__``, whose text could quote an expected answer).
_NAMES_SHOWN = frozenset({"__name__", "__qualname__", "__module__"})
_INTERNALS = (
    types.FrameType,
    types.CodeType,
    types.ModuleType,
    types.TracebackType,
    types.CellType,
)


_BINARY = {
    "eq", "ne", "lt", "le", "gt", "ge", "add", "sub", "mul", "truediv", "floordiv", "mod",
    "pow", "and_", "or_", "xor", "lshift", "rshift", "matmul",
}  # fmt: skip
#: In-place arithmetic (``acc += 5``: the object's ``__iadd__``, which may change it and
#: return it), as :mod:`operator` names it.
_INPLACE = frozenset({
    "iadd", "isub", "imul", "itruediv", "ifloordiv", "imod", "ipow", "iand", "ior", "ixor",
    "ilshift", "irshift", "imatmul",
})  # fmt: skip
#: Reflected arithmetic (``3 * v``: the value on the left), as the operator it reflects.
_REFLECTED = {
    "radd": "add", "rsub": "sub", "rmul": "mul", "rtruediv": "truediv",
    "rfloordiv": "floordiv", "rmod": "mod", "rpow": "pow", "rand_": "and_", "ror_": "or_",
    "rxor": "xor", "rlshift": "lshift", "rrshift": "rshift", "rmatmul": "matmul",
}  # fmt: skip
#: The comparison requests (see _Peer.refuse_derived).
_COMPARISONS = frozenset({"eq", "ne", "lt", "le", "gt", "ge"})
#: Arithmetic that makes a difference with a value of the tests (see _Peer.derive).
_SUBTRACTIONS = frozenset({"sub", "rsub", "isub"})
#: Requests whose answer, about a derived object, must be a derived object (see _Peer.derive):
#: its truth, length, numbers, items, membership and methods' answers (``list(solve() -
#: expected) == []``, ``(solve() - expected).max() < 1e-9`` would be comparisons the solution
#: computed).
_DERIVED_VALUES = frozenset({
    "bool", "len", "neg", "pos", "abs", "invert", "int", "float", "index", "complex",
    "round", "floor", "ceil", "trunc", "radd", "iter", "next", "getitem", "contains", "call",
})  # fmt: skip
_UNARY: dict[str, Any] = {
    "neg": operator.neg, "pos": operator.pos, "abs": abs, "invert": operator.invert,
    "int": int, "float": float, "index": operator.index, "complex": complex,
    # bound at import: the tests' patches of math, forwarded, stay the solution's own
    "floor": _floor, "ceil": _ceil, "trunc": _trunc,
}  # fmt: skip
