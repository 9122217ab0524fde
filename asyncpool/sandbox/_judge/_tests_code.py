"""What the judge reads of the tests' code: the code compiled once per source (:func:`_compiled`),
the names it uses and the roots of the attributes it may write (from its bytecode), the running
check's code and namespace (:data:`_CHECK`), and ``eval``, ``exec`` and ``compile`` as the judge
had them before its guard replaced them (see :mod:`._guard`).

Must not: run the tests' code (:mod:`._check` does) nor import another module of the judge.
"""

from __future__ import annotations

import builtins
import collections
import opcode
import types
from collections.abc import Iterator
from typing import Any


def _code_objects(code: types.CodeType) -> Iterator[types.CodeType]:
    """``code`` and every code object nested in it (functions, classes, comprehensions of the
    tests), depth first: the one walk of the tests' bytecode that the judge's scans of it
    share."""
    stack = [code]
    while stack:
        current = stack.pop()
        yield current
        stack += (c for c in current.co_consts if isinstance(c, types.CodeType))


def _globals_loaded(code: types.CodeType) -> Iterator[str]:
    """The global or built-in names ``code`` (or code nested in it) loads, as they come (not
    an attribute, a string or a key so named)."""
    import dis

    for current in _code_objects(code):
        for instruction in dis.get_instructions(current):
            if instruction.opname in ("LOAD_GLOBAL", "LOAD_NAME"):
                yield str(instruction.argval)


#: ``eval``, ``exec`` and ``compile`` as the judge loaded them: its guard replaces the
#: built-ins in a judge (:func:`guard_judge`, :mod:`._guard`).
_EVAL = builtins.eval
_EXEC = builtins.exec
_COMPILE = builtins.compile


def _names_used(code: types.CodeType) -> set[str]:
    """Every global or attribute name the tests' code (and the code nested in it) uses, and
    the names its strings spell: a name reached through a string (``getattr(solution,
    "MAX")``, ``monkeypatch.setattr(solution, "MAX", 10)``, ``patch("solution.os.path.exists")``,
    ``patch("solution.random.choice")``) must be in the judge's ``solution`` module as much as
    one the code names (each part of a dotted path of identifiers counts; strings of at most
    200 characters)."""
    found: set[str] = set()
    for current in _code_objects(code):
        found.update(current.co_names)
        for const in current.co_consts:
            if type(const) is str and len(const) <= 200:
                parts = const.split(".")
                if all(part.isidentifier() for part in parts):
                    found.update(parts)
    return found


#: Opcodes (one byte each, at even offsets of ``co_code``) with which a code object may change
#: an attribute of a module: a quick filter before :func:`_attribute_roots` reads it.
_ATTRIBUTE_WRITES = tuple(bytes([opcode.opmap[n]]) for n in ("STORE_ATTR", "DELETE_ATTR"))
_IMPORT_NAME = bytes([opcode.opmap["IMPORT_NAME"]])


def _attribute_roots(code: types.CodeType) -> frozenset[str]:
    """The global names of the tests' code whose attributes it may set or delete (``time.sleep
    = f``, ``os.path.exists = f``, ``del random.seed``, ``setattr(m, ...)``): the roots a
    long-lived judge checks after the check (see :func:`_changed_modules`). Where the root
    cannot be read off (an augmented assignment, ``setattr``, a ``__dict__`` write), every
    global the code object loads counts; ``"<local import>"`` stands for an attribute written
    through a local name in code that imports (``def test(): import time; time.sleep = f``).

    Read from the bytecode once per source (with the compiled code): tests that write no
    attribute (plain asserts, HumanEval's ``check``) cost one scan of their opcodes."""
    roots: set[str] = set()
    for current in _code_objects(code):
        ops = current.co_code[::2]
        unclear = bool({"setattr", "delattr", "__dict__", "vars"} & set(current.co_names))
        if not unclear and not any(op in ops for op in _ATTRIBUTE_WRITES):
            continue
        import dis

        loaded: set[str] = set()
        root: tuple[bool, str] | None = None  # (global, name) of the chain being loaded
        for ins in dis.get_instructions(current):
            name = ins.opname
            if name in ("LOAD_NAME", "LOAD_GLOBAL"):
                root = (True, ins.argval)
                loaded.add(ins.argval)
            elif name.startswith(("LOAD_FAST", "LOAD_DEREF")):
                root = (False, ins.argval)
            elif name in ("LOAD_ATTR", "LOAD_METHOD") and root is not None:
                continue
            elif name in ("STORE_ATTR", "DELETE_ATTR"):
                if root is None:
                    unclear = True
                elif root[0]:
                    roots.add(root[1])
                elif _IMPORT_NAME in ops:
                    roots.add("<local import>")
                root = None
            else:
                root = None
        if unclear:
            roots |= loaded
    return frozenset(roots)


#: Compiled tests kept by a long-lived judge, by their source: a training batch checks many
#: solutions against the same tests, and compiling them is a good part of a check's cost.
CODE_CACHE_SIZE = 64
_code_cache: collections.OrderedDict[
    str, tuple[types.CodeType, frozenset[str], frozenset[str]]
] = collections.OrderedDict()


def _compiled(tests: str) -> tuple[types.CodeType, frozenset[str], frozenset[str]]:
    """The tests' code, the names it uses and its :func:`_attribute_roots`, from a bounded LRU
    cache (a code object is immutable: executing it twice in fresh namespaces is executing the
    source twice)."""
    found = _code_cache.get(tests)
    if found is not None:
        _code_cache.move_to_end(tests)
        return found
    code = _COMPILE(tests, "<tests>", "exec", dont_inherit=True)  # not our __future__ imports
    found = (code, frozenset(_names_used(code)), _attribute_roots(code))
    _code_cache[tests] = found
    while len(_code_cache) > CODE_CACHE_SIZE:
        _code_cache.popitem(last=False)
    return found


#: The running check's tests: their code object and their namespace (for :func:`_condition`).
_CHECK: list[Any] = [None, {}]
