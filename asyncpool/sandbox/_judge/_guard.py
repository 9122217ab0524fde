"""The judge's guard against running what the solution wrote: its ``eval``, ``exec`` and
``compile`` (:func:`guard_judge`), pickles, logging configurations, YAML, doctest, ``pytest.main``
and ``assertSetEqual``; the directory the tests share with the solution (:data:`_WORKDIR`, set by
:func:`judge` as ``_guard._WORKDIR``).

Must not: run a text of the solution's in the judge. Installed in judges only: the solution's
``eval`` and pickle are its own.
"""

from __future__ import annotations

import ast
import builtins
import importlib
import io
import os
import pathlib
import sys
import types
from ast import AST as _AST
from ast import Attribute as _Attribute  # (bound once: the tests may patch ast)
from ast import Call as _Call
from ast import Name as _Name
from ast import parse as _ast_parse
from ast import walk as _ast_walk
from re import sub as _re_sub  # (bound once: the tests may patch re)
from typing import Any

from . import _proxies
from ._code_texts import could_be_code
from ._forwarded import _SolutionModule
from ._proxies import _PROXY_TYPES
from ._tests_code import _COMPILE, _EVAL, _EXEC

#: The working directory the tests share with the solution (the same directory by the same
#: path in both processes: ``FLAG_SHARED_FS`` of the fork server), where ``tmp_path`` is made;
#: None when the check shares none (a long-lived judge's checks).
_WORKDIR: str | None = None


def _caller_scope(globals_: Any, locals_: Any) -> tuple[Any, Any]:
    """``eval``'s and ``exec``'s default scope: the caller's (two frames up: the guard's own
    caller), as the built-ins would take."""
    if globals_ is None:
        frame = sys._getframe(2)
        globals_ = frame.f_globals
        if locals_ is None:
            locals_ = frame.f_locals
        del frame
    return globals_, locals_


def _guarded_eval(source: Any, globals_: Any = None, locals_: Any = None, /) -> Any:
    """The judge's ``eval``: a text that holds one of the solution's that could be code
    (``eval(repr(p))`` of a ``__repr__`` of the solution's, ``eval(capsys.readouterr().out)``:
    see :meth:`_Peer.derived`) is evaluated in the solution's process (its namespace), where
    the code the solution wrote can harm nothing of the judge's; what ``sympy`` parses is
    checked first (:func:`_check_sympy_code`); any other, here, as the built-in does."""
    globals_, locals_ = _caller_scope(globals_, locals_)
    if isinstance(source, str) and sys._getframe(1).f_code.co_filename.endswith(_SYMPY_PARSER):
        _check_sympy_code(source, globals_, locals_)
    peer = _proxies._PEER
    if peer is not None and peer.trusted and _from_tests() and peer.derived(source, "eval"):
        return peer.evaluate(source, "eval", None)
    return _EVAL(source, globals_, locals_)


def _guarded_exec(source: Any, globals_: Any = None, locals_: Any = None, /, **kw: Any) -> Any:
    """The judge's ``exec``, guarded as :func:`_guarded_eval`: a text of the solution's runs in
    its process, and the names it bound there are bound in the tests' scope."""
    globals_, locals_ = _caller_scope(globals_, locals_)
    peer = _proxies._PEER
    if peer is not None and peer.trusted and _from_tests() and peer.derived(source, "exec"):
        return peer.evaluate(source, "exec", locals_ if locals_ is not None else globals_)
    return _EXEC(source, globals_, locals_, **kw)


def _guarded_compile(source: Any, *args: Any, **kwargs: Any) -> Any:
    """The judge's ``compile``: never of a text of the solution's that could be code, nor of
    a file in the directory it shares with the tests (``runpy.run_path``, an import of a module
    it wrote: their code object would run here); else the built-in's."""
    if sys._getframe(1).f_code.co_filename.endswith(_SYMPY_PARSER):  # evaluate=False: an AST
        _check_sympy_code(source, None, None)
    peer = _proxies._PEER
    filename = args[0] if args else kwargs.get("filename")
    mode = args[1] if len(args) > 1 else kwargs.get("mode")
    if peer is not None and peer.trusted and (
        (_from_tests() and peer.derived(source, mode if mode == "eval" else "exec"))
        or _in_workdir(filename)
    ):
        raise TypeError("the judge does not compile code the solution wrote")
    return _COMPILE(source, *args, **kwargs)


#: The module whose ``eval_expr`` evaluates what ``sympy.sympify``/``parse_expr`` made of a text.
_SYMPY_PARSER = "/sympy/parsing/sympy_parser.py"
#: The built-ins a text sympy parses may call (sympy's parser offers every built-in function).
_SYMPY_BUILTINS = frozenset({
    "abs", "bool", "complex", "dict", "divmod", "float", "frozenset", "int", "len", "list",
    "max", "min", "pow", "range", "round", "set", "str", "sum", "tuple",
})  # fmt: skip
#: sympy's own functions that run code, draw, print or change a namespace: never called.
_SYMPY_REFUSED = frozenset({
    "lambdify", "preview", "var", "init_session", "init_printing", "interactive_traversal",
    "test", "doctest", "source", "plot", "plot_implicit", "plot_parametric", "plot3d",
    "plot3d_parametric_line", "plot3d_parametric_surface", "plot_backends", "textplot",
    "pprint", "pretty_print", "print_python", "print_gtk", "print_tree",
})  # fmt: skip
#: The syntax of what sympy's parser makes of a math expression (``Integer (2 )*Symbol
#: ('x' )``, ``Matrix ([[...]])``, ``Eq (...)``, ``Function ('f' )(Symbol ('x' ))``).
_SYMPY_NODES = tuple(getattr(ast, name) for name in (
    "Expression", "BinOp", "UnaryOp", "BoolOp", "Compare", "IfExp", "Call", "keyword",
    "Constant", "Name", "Load", "List", "Tuple", "Set", "Dict", "Subscript", "Slice",
    "Starred", "operator", "unaryop", "boolop", "cmpop", "expr_context",
))  # fmt: skip


def _check_sympy_code(source: Any, globals_: Any, locals_: Any) -> None:
    """What ``sympy.sympify`` or ``parse_expr`` of a text is about to evaluate here: only a math
    expression, whatever wrote the text. sympy parses by ``eval`` with every built-in
    function in reach, and a text the tests hand it is often the solution's answer
    (``sympify(solve())``): ``"__import__('os')..."`` ran in the judge. Its names may be only
    sympy's (but :data:`_SYMPY_REFUSED`), :data:`_SYMPY_BUILTINS`, or what the tests put in
    the ``local_dict`` they passed (a name passed as a value may be called too: ``max(...,
    key=eval)``), and a call's callee a name or a call (``Function('f')(x)``); no attribute,
    no dunder name, no lambda, comprehension or assignment expression. ``sympify`` of a
    text inside the text comes back here. A ``TypeError`` otherwise."""
    sympy = sys.modules.get("sympy")
    own = vars(sympy) if sympy is not None else {}
    if isinstance(source, _AST):  # (``evaluate=False``: the tree it compiles)
        tree = source
    elif isinstance(source, str):
        try:
            tree = _ast_parse(source, mode="eval")
        except SyntaxError:
            return  # (the built-in raises it)
    else:
        return  # (a code object: compiled, and checked, before)
    for node in _ast_walk(tree):
        if not isinstance(node, _SYMPY_NODES):
            raise TypeError(
                f"the judge evaluates in sympy's parser only math expressions, not a "
                f"{type(node).__name__}"
            )
        if isinstance(node, _Call) and not isinstance(node.func, (_Name, _Call)):
            raise TypeError("the judge evaluates in sympy's parser no call of a computed callee")
        if isinstance(node, _Name):
            name = node.id
            tests_own = isinstance(locals_, dict) and name in locals_
            # (globals_ None: a tree sympy compiles, to be evaluated in its namespace)
            resolved = own.get(name) if globals_ is None else (
                globals_.get(name) if isinstance(globals_, dict) else None
            )  # fmt: skip
            sympy_own = name in own and name not in _SYMPY_REFUSED and resolved is own[name]
            if name.startswith("__") or not (tests_own or sympy_own or name in _SYMPY_BUILTINS):
                raise TypeError(f"the judge evaluates in sympy's parser no name {name!r}")


def _from_tests() -> bool:
    """Whether the guard's caller is the tests' own code (their ``eval(...)``), or a standard
    module that runs a text the tests hand it (:data:`_RUNNERS`: ``doctest`` running the
    examples of the solution's docstring, ``typing.get_type_hints`` of the solution's class
    evaluating its annotations), not a library that compiles code of its own making
    (``dataclasses``' ``__init__``, ``namedtuple``'s ``__new__``, whose generated text a
    solution could otherwise quote to have it routed): only those calls are taken for running
    a text of the solution's."""
    filename = sys._getframe(2).f_code.co_filename
    return filename == "<tests>" or filename.endswith(_RUNNERS)


#: Standard modules that run text the tests hand them: ``doctest`` (examples),
#: ``logging.config`` (``fileConfig`` evaluates a file's ``class`` and ``args``), ``timeit``,
#: ``cProfile`` and ``profile`` (a statement to time or profile), ``code`` through ``codeop``
#: (an interpreter's source), and those that evaluate annotations written as text (``from
#: __future__ import annotations``): ``typing`` (``get_type_hints``, a ``ForwardRef``),
#: ``inspect`` (``get_annotations`` and ``signature`` with ``eval_str=True``),
#: ``annotationlib`` (Python 3.14). An annotation of the solution's is its text: evaluated here,
#: ``x: "__import__('os')..."`` ran in the judge when the tests read a solution class's type
#: hints, and so did a statement the solution returned when the tests timed it.
_RUNNERS = (
    "/doctest.py", "/logging/config.py", "/timeit.py", "/cProfile.py", "/profile.py",
    "/codeop.py", "/typing.py", "/inspect.py", "/annotationlib.py",
)  # fmt: skip


_OPEN_FILE = io.open
#: The most files, and bytes of each, of the shared directory compared with code the tests
#: run (see _Peer.derived): past them, files are not read (the solution wrote them to hide).
MAX_WORKDIR_FILES = 1000
MAX_WORKDIR_FILE = 16 * 1024 * 1024


def _in_workdir(path: Any) -> bool:
    if _WORKDIR is None or path is None:
        return False
    try:
        real = os.path.realpath(path)
    except (TypeError, ValueError):
        return False
    if isinstance(real, bytes):
        real = real.decode("utf-8", "surrogateescape")
    inside = any(real == root or real.startswith(root + os.path.sep) for root in _WORKDIR_ROOTS)
    return bool(inside and os.path.isfile(real))  # a file there ("<string>" names none)


#: The paths of the shared directory in this judge: its own, and ``/tmp`` where that is the
#: same directory (the judge's ``/tmp`` is the run's: ``_ns.judge_tmp``), set by :func:`judge`.
_WORKDIR_ROOTS: tuple[str, ...] = ()


def _workdir_roots(workdir: str) -> tuple[str, ...]:
    root = os.path.realpath(workdir)
    try:
        same = root != "/tmp" and os.path.samefile("/tmp", root)
    except OSError:
        same = False
    return (root, "/tmp") if same else (root,)


def _workdir_texts() -> list[str] | None:
    """The texts of the files in the directory the tests share with the solution (none when
    they share none), which the solution may have written: those that could be code
    (:func:`could_be_code`); None when there are too many to read."""
    if _WORKDIR is None:
        return []
    out: list[str] = []
    for seen, path in enumerate(pathlib.Path(_WORKDIR).rglob("*")):
        if seen >= MAX_WORKDIR_FILES:
            return None
        try:
            if not path.is_file():
                continue
            with _OPEN_FILE(path, "rb") as f:
                text = f.read(MAX_WORKDIR_FILE).decode("utf-8", "replace")
        except OSError:
            continue
        if could_be_code(text):
            out.append(text)
    return out


#: Globals a pickle may name in the judge (see _SafeUnpickler): data types and their
#: reconstructors; nothing that runs or reaches code, files or processes.
_UNPICKLABLE = frozenset({
    *(("builtins", n) for n in (
        "list", "dict", "set", "frozenset", "tuple", "str", "bytes", "bytearray", "int",
        "float", "complex", "bool", "slice", "range", "object",
    )),
    ("copyreg", "_reconstructor"), ("copyreg", "__newobj__"), ("copyreg", "__newobj_ex__"),
    ("collections", "OrderedDict"), ("collections", "defaultdict"), ("collections", "deque"),
    ("collections", "Counter"), ("datetime", "datetime"), ("datetime", "date"),
    ("datetime", "time"), ("datetime", "timedelta"), ("datetime", "timezone"),
    ("decimal", "Decimal"), ("fractions", "Fraction"), ("uuid", "UUID"),
    ("_codecs", "encode"), ("codecs", "encode"),
    ("numpy", "ndarray"), ("numpy", "dtype"), ("numpy.core.multiarray", "_reconstruct"),
    ("numpy._core.multiarray", "_reconstruct"), ("numpy.core.multiarray", "scalar"),
    ("numpy._core.multiarray", "scalar"),
})  # fmt: skip


def _unpickled_global(module: str, name: str) -> Any:
    """What a pickle read in the judge may name: a class or function of the solution (a
    handle: calling it runs in the solution's process), a class of the tests, or one of
    :data:`_UNPICKLABLE`. Anything else (``os.system``, ``builtins.eval``, the judge's own
    objects) could run what the pickle's author chose, in the judge: refused."""
    import pickle

    if module == "solution":
        found = vars(sys.modules.get("solution") or types.ModuleType("x")).get(name)
        if type(found) in _PROXY_TYPES:
            return found
    elif module == "__main__":
        found = vars(sys.modules.get("__main__") or types.ModuleType("x")).get(name)
        if isinstance(found, type) and vars(found).get("__module__") == "__main__":
            return found
    elif (module, name) in _UNPICKLABLE:
        return getattr(importlib.import_module(module), name)
    raise pickle.UnpicklingError(f"the judge unpickles no {module}.{name} (it could run code)")


def guard_judge() -> None:
    """In a judge process, once, before any tests run: the tests' ``eval``, ``exec`` and
    ``compile`` never run a text of the solution's here (:func:`_guarded_eval`), and every
    pickle read here (``pickle.loads``/``load``/``Unpickler``, ``_pickle``'s, and what reads
    through them: ``pandas.read_pickle``, ``numpy.load``) names only what
    :func:`_unpickled_global` allows. Tests that unpickle what the solution returned or wrote
    would otherwise let it run code in the judge, and write the verdict."""
    import _pickle
    import pickle

    class SafeUnpickler(pickle.Unpickler):
        def find_class(self, module: str, name: str) -> Any:
            return _unpickled_global(module, name)

    py_pickle: Any = pickle

    class SafePyUnpickler(py_pickle._Unpickler):  # type: ignore[misc]
        def find_class(self, module: str, name: str) -> Any:
            return _unpickled_global(module, name)

    def loads(data: Any, /, **kwargs: Any) -> Any:
        return SafeUnpickler(io.BytesIO(data), **kwargs).load()

    def load(file: Any, **kwargs: Any) -> Any:
        return SafeUnpickler(file, **kwargs).load()

    for module in (pickle, _pickle):
        target: Any = module
        target.Unpickler = SafeUnpickler
        target.loads = loads
        target.load = load
    py_pickle._Unpickler = SafePyUnpickler
    py_pickle._loads = loads
    py_pickle._load = load
    builtins.eval = _guarded_eval
    builtins.exec = _guarded_exec
    builtins.compile = _guarded_compile


def _guard_logging_config() -> None:
    """In a judge whose tests configure logging (``logging.config.dictConfig`` of a dict the
    solution returned, ``fileConfig`` of a file it wrote): the names a configuration resolves
    (a handler's ``class``, a ``()`` factory, ``ext://``) may be only ``logging``'s, the tests'
    own (``__main__``), the solution's (handles: they run in its process), or ``sys.stdout`` and
    ``sys.stderr``; any other (``subprocess.getoutput``, ``ctypes.CDLL``) could run what the
    solution chose, in the judge."""
    config: Any = importlib.import_module("logging.config")
    if getattr(config, "_asyncpool_guarded", False):
        return
    resolve, resolve_name = config.BaseConfigurator.resolve, config._resolve

    def checked(name: Any) -> None:
        root = name.split(".")[0] if isinstance(name, str) else None
        if root not in ("logging", "__main__", "solution") and name not in _CONFIG_STREAMS:
            raise ValueError(f"the judge resolves no {name!r} in a logging configuration")

    def guarded_resolve(self: Any, name: Any) -> Any:
        checked(name)
        return resolve(self, name)

    def guarded_resolve_name(name: Any) -> Any:
        checked(name)
        return resolve_name(name)

    config.BaseConfigurator.resolve = guarded_resolve
    config._resolve = guarded_resolve_name
    config._asyncpool_guarded = True


_CONFIG_STREAMS = frozenset({"sys.stdout", "sys.stderr"})


def _guard_yaml() -> None:
    """In a judge whose tests name ``yaml`` (PyYAML, a dependency of Ray's): its loaders that
    construct any Python object (``yaml.Loader``, ``UnsafeLoader``, ``FullLoader``,
    ``unsafe_load``: ``!!python/object/apply:os.system``) are its ``SafeLoader`` here, as
    ``guard_judge`` restricts pickles: YAML the solution printed or wrote never runs code in
    the judge. Plain YAML loads as before; Python-specific tags are refused."""
    try:
        yaml: Any = importlib.import_module("yaml")
    except ImportError:
        return
    safe = yaml.SafeLoader
    for name in ("Loader", "UnsafeLoader", "FullLoader"):
        if hasattr(yaml, name):
            setattr(yaml, name, safe)
    yaml.unsafe_load = yaml.full_load = yaml.safe_load
    yaml.unsafe_load_all = yaml.full_load_all = yaml.safe_load_all


def _guard_pandas_eval() -> None:
    """In a judge whose tests use pandas' ``eval`` or ``query``: an expression that holds a
    text of the solution's (:meth:`_Peer.derived`) may not call anything, name a variable of
    the tests' (``@os``), nor reach a private or special attribute. pandas evaluates an
    expression with attribute access, method calls and the caller's variables in reach:
    ``df.query(solve())`` ran ``@os.system(...)`` or
    ``().__class__.__bases__[0].__subclasses__()...`` in the judge. The tests' own
    expressions are pandas' (``a > @threshold``). Installed once per process, when pandas is
    there; ``DataFrame.eval`` and ``query`` go through ``pandas.eval``'s module function."""
    try:
        module: Any = importlib.import_module("pandas.core.computation.eval")
    except ImportError:
        return
    if getattr(module.eval, "_asyncpool_guarded", False):
        return
    evaluate = module.eval

    def guarded_eval(expr: Any, *args: Any, **kwargs: Any) -> Any:
        peer = _proxies._PEER
        if (
            isinstance(expr, str) and peer is not None and peer.trusted
            and peer.derived(expr, "eval")
        ):  # fmt: skip
            # (a frame's eval and query pass its columns and index as resolvers)
            _check_pandas_expression(expr, kwargs.get("resolvers") or ())
        return evaluate(expr, *args, **kwargs)

    guarded_eval._asyncpool_guarded = True  # type: ignore[attr-defined]
    module.eval = guarded_eval
    pandas: Any = sys.modules.get("pandas")
    if pandas is not None and getattr(pandas, "eval", None) is evaluate:
        pandas.eval = guarded_eval


def _check_pandas_expression(expr: str, columns: Any) -> None:
    """A ``TypeError`` unless ``expr`` (pandas' syntax: Python's, with ``@name`` and backtick
    names) has no ``@`` outside a string (``email == 'a@b.org'`` is one), no name or
    attribute that starts with ``_``, parses as Python once its backtick names are names
    (pandas rewrites little else; what it could read and Python could not is refused), and
    calls nothing but a method of a column of ``columns`` (the resolvers a frame's ``query``
    and ``eval`` pass: ``email.isnull()``, ``name.str.startswith('A')``); a bare name that is
    no column may be the caller's global (``pd.eval("os.getpid()")``)."""
    source = _re_sub(r"`[^`]*`", "_column", expr).strip()
    if "@" in _re_sub(r"'[^'\\]*'|\"[^\"\\]*\"", "''", source):
        raise TypeError("the judge evaluates in pandas no '@' variable in a text of the solution's")
    try:
        tree = _ast_parse(source, mode="exec")
    except SyntaxError:
        raise TypeError("the judge evaluates in pandas no text of the solution's that is not "
                        "Python") from None
    for node in _ast_walk(tree):
        if isinstance(node, _Call) and not _column_method(node.func, columns):
            raise TypeError("the judge evaluates in pandas no call in a text of the solution's")
        name = (
            node.attr if isinstance(node, _Attribute)
            else node.id if isinstance(node, _Name) and node.id != "_column"
            else ""
        )  # fmt: skip
        if name.startswith("_"):
            raise TypeError(f"the judge evaluates in pandas no private name {name!r}")


def _column_method(func: Any, columns: Any) -> bool:
    """Whether ``func`` is an attribute chain (``a.str.lower``) from a bare name that one of
    the resolvers ``columns`` (mappings) holds."""
    if not isinstance(func, _Attribute):
        return False
    while isinstance(func, _Attribute):
        func = func.value
    if not isinstance(func, _Name):
        return False
    try:
        return any(func.id in resolver for resolver in columns)
    except TypeError:
        return False


def _doctest_in_solution() -> None:
    """In a judge whose tests name ``doctest``: ``doctest.testmod(solution)`` and
    ``doctest.run_docstring_examples(f, ...)`` of a function of the solution run in the
    solution's process (:class:`_Evaluator`), where the examples of its docstrings (its code)
    may run; ``testmod`` returns its ``TestResults`` here. In the judge, doctest found no
    example in the solution's module (its functions are handles here): ``testmod(solution)``
    reported 0 failed, and a wrong solution whose docstring was right passed. Installed once
    per process; doctest of the tests' own objects is doctest's."""
    import doctest

    if getattr(doctest.testmod, "_asyncpool_guarded", False):
        return
    testmod, examples = doctest.testmod, doctest.run_docstring_examples

    def guarded_testmod(m: Any = None, *args: Any, **kwargs: Any) -> Any:
        peer = _proxies._PEER
        if not (peer is not None and peer.trusted and type(m) is _SolutionModule and not args):
            return testmod(m, *args, **kwargs)
        verbose = kwargs.get("verbose")
        optionflags = kwargs.get("optionflags", 0)
        answer = peer.request(
            "call", peer.evaluator, ((verbose, optionflags), "testmod")
        )
        if (
            type(answer) is not tuple
            or len(answer) != 2
            or not all(type(n) is int and n >= 0 for n in answer)
            or answer[0] > answer[1]
        ):
            raise TypeError("the solution's doctest reported no results")
        return doctest.TestResults(*answer)

    def guarded_examples(
        f: Any, globs: Any, verbose: Any = False, name: Any = "NoName", *args: Any, **kw: Any
    ) -> Any:
        peer = _proxies._PEER
        if not (peer is not None and peer.trusted and type(f) in _PROXY_TYPES):
            return examples(f, globs, verbose, name, *args, **kw)
        optionflags = kw.get("optionflags", args[1] if len(args) > 1 else 0)
        peer.request(
            "call", peer.evaluator, ((f, bool(verbose), str(name), optionflags), "examples")
        )
        return None

    guarded_testmod._asyncpool_guarded = True  # type: ignore[attr-defined]
    doctest.testmod = guarded_testmod
    doctest.run_docstring_examples = guarded_examples


def _pytest_main_runs_nothing() -> None:
    """In a judge whose tests name ``pytest.main``: it runs nothing and returns pytest's exit
    code for success. Tests that end in ``pytest.main([__file__])`` (or ``sys.exit`` of it)
    under ``if __name__ == "__main__"`` ask for this file's tests to run, which the judge does
    itself after the file (:func:`_run_test_functions`), as it does for a file without it;
    pytest's own session in the judge would collect files it cannot see and write a cache in a
    directory it may not. Installed once per process."""
    try:
        pytest: Any = importlib.import_module("pytest")
    except ImportError:
        return
    if getattr(pytest.main, "_asyncpool_guarded", False):
        return

    def main(*args: Any, **kwargs: Any) -> Any:
        return pytest.ExitCode.OK

    main._asyncpool_guarded = True  # type: ignore[attr-defined]
    pytest.main = main


def _guard_set_assertions() -> None:
    """In a judge whose tests name ``assertSetEqual``: ``unittest``'s set assertion with an
    object of the solution's compares that object's items, read by iterating it in the judge,
    instead of asking it first for ``first.difference(second)``: that call would hand the
    tests' expected set to the solution (which could return an empty difference and then
    iterate as exactly that set). As in-process, an object without ``difference`` fails the
    assertion (``unittest`` says so); an honest one (a set-like class of the solution's)
    gives the verdict its items give. Installed once per process; the same method otherwise."""
    import unittest

    original: Any = unittest.TestCase.assertSetEqual
    if getattr(original, "_asyncpool_guarded", False):
        return

    def assertSetEqual(self: Any, set1: Any, set2: Any, msg: Any = None) -> None:
        def items(obj: Any) -> Any:
            if type(obj) not in _PROXY_TYPES or not hasattr(obj, "difference"):
                return obj  # unittest's own checks and messages, as in-process
            return frozenset(obj)

        original(self, items(set1), items(set2), msg)

    assertSetEqual._asyncpool_guarded = True  # type: ignore[attr-defined]
    unittest.TestCase.assertSetEqual = assertSetEqual  # type: ignore[method-assign]
