"""Exceptions on the wire of :class:`._peer._Peer`: how this side tells the other of one
(:meth:`describe`), and makes one of what it was told (:meth:`exception`).

Must not: tell the solution a message of the tests' (it may quote what they expect), nor
take a malformed description.
"""

from __future__ import annotations

import sys
from typing import Any

from ._bounds import CodecError, SolutionError
from ._exceptions import (
    _CAUSED,
    _EXCEPTION_GROUP,
    _GROUPED,
    _OWN_CLASS,
    _RAISED,
    MAX_CAUSES,
    MAX_GROUPED,
    MAX_RAISED,
    _exception_class_spec,
    _exception_detail,
    _Mirror,
    _named_class,
    _new_exception,
    _passed_through_base,
    _plain_exit_code,
    _solution_exception,
    _solution_exit,
    _tests_exception_attributes,
)
from ._peer_state import _PeerState
from ._proxies import _PROXY_TYPES


class _PeerExceptions(_PeerState):
    """The exceptions a :class:`._peer._Peer` tells and is told of."""

    def exception(self, value: Any, depth: int = 0) -> BaseException:
        """The exception of an ``X`` reply, checked: one of the tests' as the solution is told
        of it, ``(name, "")``, or ``(name, "", OWN_CLASS, class)`` when its class is (or derives
        from) one of the solution's (an exception of that class, made without arguments); one
        of the solution's as the judge is: ``(name, message,
        detail)``, ``(name, message, handle, class, detail)`` for one of its own classes
        (``detail``: see :func:`_exception_detail`), ``("SystemExit", "", code)``, or
        ``(CAUSED, exception, cause, context, suppress)`` for one raised ``from`` another or
        while another was handled (each None or an exception; ``context`` True when it is the
        cause; at most :data:`MAX_CAUSES` deep), whose ``__cause__``, ``__context__`` and
        ``__suppress_context__`` the tests read, as in-process; or ``(GROUPED, message,
        exceptions)`` for an ``ExceptionGroup`` (:meth:`_exception_group`)."""
        if type(value) is tuple and len(value) == 5 and value[0] == _CAUSED:
            if depth >= MAX_CAUSES:
                raise CodecError("exception causes nested too deep")
            exc = self.exception(value[1], depth + 1)
            _, _, cause, context, suppress = value
            if cause is not None:
                exc.__cause__ = self.exception(cause, depth + 1)
            if context is True:
                exc.__context__ = exc.__cause__
            elif context is not None:
                exc.__context__ = self.exception(context, depth + 1)
            exc.__suppress_context__ = suppress is True
            return exc
        if type(value) is tuple and len(value) == 3 and value[0] == _GROUPED:
            return self._exception_group(value, depth)
        if (
            type(value) is tuple and len(value) >= 2 and value[0] == _RAISED
            and type(value[1]) is int
        ):
            return self._raised(value)
        if type(value) is tuple and len(value) == 4 and value[2] == _OWN_CLASS:
            kind = value[3]
            if (
                self.trusted
                or not isinstance(kind, type)
                or type(kind) in _PROXY_TYPES
                or not issubclass(kind, Exception)
            ):
                raise CodecError("malformed exception")
            try:
                return _new_exception(kind, ())
            except Exception:  # its class wants arguments the tests' message would have given
                return SolutionError(f"{value[0]}: ")
        if (
            type(value) is tuple
            and len(value) == 3
            and value[:2] == ("SystemExit", "")
            and _plain_exit_code(value[2])
        ):
            return _solution_exit(value[2])
        if (
            type(value) is not tuple
            or len(value) not in (2, 3, 5)
            or not all(type(p) is str for p in value[:2])
            or (len(value) == 5 and (
                type(value[2]) not in _PROXY_TYPES or not self.mirrored(value[3])
            ))
        ):
            raise CodecError("malformed exception")
        if len(value) < 5:  # the tests' exceptions reach the solution by type: (name, "")
            return _solution_exception(
                value[0], value[1], detail=value[2] if len(value) == 3 else None,
                exact=self.trusted,
            )  # fmt: skip
        return _solution_exception(*value)

    def _raised(self, value: tuple[Any, ...]) -> BaseException:
        """A tests' exception (see :data:`_RAISED`): in the solution, the exception made of
        its description, numbered; in the judge, the tests' own exception of that number."""
        if self.trusted:
            if len(value) != 2:
                raise CodecError("malformed exception")
            found: BaseException = self.raised.get(value[1], "an exception of the tests")
            return found
        if len(value) != 3 or type(value[2]) is not tuple or value[2][:1] == (_RAISED,):
            raise CodecError("malformed exception")
        made = self.exception(value[2])
        if len(self.from_tests) < MAX_RAISED:
            self.from_tests[id(made)] = (made, value[1], made.args)
        return made

    def _exception_group(self, value: tuple[Any, ...], depth: int) -> BaseException:
        """The solution's ``ExceptionGroup`` (see :meth:`_describe_group`), checked: a message,
        1 to :data:`MAX_GROUPED` exceptions of the solution's, each an ``Exception``."""
        _, message, subs = value
        if depth >= MAX_CAUSES:
            raise CodecError("exception causes nested too deep")
        if (
            _EXCEPTION_GROUP is None
            or type(message) is not str
            or type(subs) is not tuple
            or not 0 < len(subs) <= MAX_GROUPED
        ):
            raise CodecError("malformed exception group")
        made = [self.exception(sub, depth + 1) for sub in subs]
        if not all(isinstance(e, Exception) for e in made):
            raise CodecError("malformed exception group")
        group: BaseException = _EXCEPTION_GROUP(message, made)
        return group

    def describe(self, exc: BaseException, depth: int = 0) -> tuple[Any, ...]:
        """An exception as the other side is told of it: the tests' exceptions by type only
        (their messages may quote what the tests expect); the solution's with its message and
        the exceptions it was raised ``from`` and while handling (see :meth:`exception`)."""
        if self.trusted:
            if isinstance(exc, AssertionError) and self.failed is None:
                self.failed = f"an assertion of the tests failed in a callback: {exc!s:.2000}"
            told = self._describe_tests(exc)
            number = self.raised.add(exc) if depth == 0 else None
            return told if number is None else (_RAISED, number, told)
        known = self.from_tests.get(id(exc))
        if (
            known is not None
            and known[0] is exc
            and exc.args == known[2]
            and getattr(exc, "__notes__", None) is None
        ):
            return (_RAISED, known[1])  # the tests' own exception, unchanged (see _RAISED)
        described = self._describe_group(exc, depth) or self._describe(exc)
        if depth + 1 >= MAX_CAUSES:
            return described
        cause, context = exc.__cause__, exc.__context__
        cause = cause if isinstance(cause, BaseException) else None
        context = context if isinstance(context, BaseException) else None
        if cause is None and context is None:
            return described
        return (
            _CAUSED, described,
            None if cause is None else self.describe(cause, depth + 1),
            None if context is None else True if context is cause else self.describe(
                context, depth + 1
            ),
            exc.__suppress_context__ is True,
        )  # fmt: skip

    def _describe_tests(self, exc: BaseException) -> tuple[Any, ...]:
        """The judge's side of :meth:`describe`: a tests' exception as the solution is told of
        it, by its class only."""
        # A class of the solution's (the judge's mirror of it) or one the tests derived from
        # one: the solution gets an exception of its own class (``except Stop`` there catches
        # what the tests' callback raised), without the tests' arguments.
        own = next((k for k in type(exc).__mro__ if type(k) is _Mirror and self.mirrored(k)), None)
        if own is not None:
            return (type(exc).__name__, "", _OWN_CLASS, own)
        # Else its nearest built-in class (a tests' ``class MyErr(KeyError)``: KeyError; a
        # requests ``ConnectionError``: OSError, never the built-in of the same name) and a
        # standard library's or library's class by name, which the solution's side makes when
        # it has it (``except requests.ConnectionError``, ``json.JSONDecodeError``).
        kind = type(exc)
        base = _passed_through_base(kind) or kind.__name__
        where = _named_class(kind)
        if where is None:
            return (base, "")
        return (base, "", (None, _tests_exception_attributes(exc), where, ()))

    def _describe_group(self, exc: BaseException, depth: int) -> tuple[Any, ...] | None:
        """An ``ExceptionGroup`` of the solution's: ``(GROUPED, message, exceptions)``, each
        described (at most :data:`MAX_GROUPED`, nested at most :data:`MAX_CAUSES` deep), so
        that the tests' ``except* ValueError`` splits it as in-process; else None."""
        if _EXCEPTION_GROUP is None or not isinstance(exc, _EXCEPTION_GROUP):
            return None
        try:
            message, subs = exc.message, tuple(exc.exceptions)
        except Exception:
            return None
        if depth + 1 >= MAX_CAUSES or type(message) is not str or not 0 < len(subs) <= MAX_GROUPED:
            return None
        return (_GROUPED, message[:10_000], tuple(self.describe(e, depth + 1) for e in subs))

    def _describe(self, exc: BaseException) -> tuple[Any, ...]:
        try:
            message = str(exc)[:10_000]
        except BaseException:
            message = "<unprintable>"
        kind = type(exc)
        own = kind.__name__[:200]
        passed = _passed_through_base(kind)
        if passed is None or passed == own:
            return (own, message, _exception_detail(exc, False))
        module = kind.__module__
        if _exception_class_spec(kind) is None or (
            type(module) is str and module.partition(".")[0] in sys.stdlib_module_names
        ):  # named oddly, or a class of the standard library: its built-in base will do,
            # or that class itself if the judge has it (see _standard_exception_class)
            return (passed, message, _exception_detail(exc, False))
        # exc: a handle, for its attributes; its class: the judge's class of its own for it, or
        # a library's class (numpy's LinAlgError) by name, the judge's when it has it
        return (passed, message, exc, kind, _exception_detail(exc, _named_class(kind) is None))
