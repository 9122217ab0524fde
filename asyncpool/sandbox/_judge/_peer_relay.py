"""What the solution prints and issues, on the wire of :class:`._peer._Peer`: its output
relayed to the tests' streams, its warnings and log records issued again in the judge, its
texts that could be code (run in its own process when the tests eval them).

Must not: write the solution's output to a file of the judge's, nor run its text here.
"""

from __future__ import annotations

import sys
import warnings
from typing import Any

from ._bounds import MAX_RELAYED, MAX_TEXTS, CodecError
from ._code_texts import could_be_code, could_run
from ._decoder import decode
from ._exceptions import _PASSED_THROUGH
from ._guard import _workdir_texts
from ._peer_state import _PeerState
from ._proxies import _PROXY_TYPES


class _PeerRelay(_PeerState):
    """The solution's output, notices and texts, as a :class:`._peer._Peer` relays them."""

    def note_text(self, text: str) -> None:
        """The judge's side: remember a text of the solution's that could be code
        (:func:`could_be_code`; at most :data:`MAX_TEXTS` of them, :data:`MAX_RELAYED` bytes in
        all; past that every source that could run is taken for the solution's: see
        :meth:`derived`)."""
        if self.texts_overflow:
            return
        if len(self.texts) >= MAX_TEXTS or self.text_size + len(text) > MAX_RELAYED:
            self.texts_overflow = True
            self.texts.clear()
            return
        self.texts.append(text)
        self.text_size += len(text)
        if "\n" in text:
            self.texts.extend(
                line for line in text.splitlines()
                if len(line) >= 8 and could_be_code(line)
            )

    def evaluate(self, source: Any, mode: str, scope: Any) -> Any:
        """The judge's side: run the tests' ``eval``/``exec`` of a text of the solution's in
        the solution's process (:class:`_Evaluator`); ``exec``'s names are bound in ``scope``."""
        if isinstance(source, (bytes, bytearray, memoryview)):
            source = bytes(source).decode("utf-8")
        if self.evaluator is None:
            raise TypeError("the solution takes no code to run")
        result = self.request("call", self.evaluator, (str(source), mode))
        if mode == "eval":
            return result
        if type(result) is not dict or not all(
            type(k) is str and k.isidentifier() and not k.startswith("__") for k in result
        ):
            raise TypeError("the solution's exec bound something that is no name")
        if scope is not None:
            scope.update(result)
        return None

    def derived(self, source: Any, mode: str = "exec") -> bool:
        """Whether ``source`` (code the tests eval, exec or compile in ``mode``, or a library
        reading annotations for them) could call or bind anything (:func:`could_run`) and holds
        a text of the solution's: one it returned or printed, or the content of a file in the
        directory it shares with the tests (``exec(open(path).read())``). It then runs in the
        solution's process, never here."""
        if isinstance(source, (bytes, bytearray, memoryview)):
            source = bytes(source).decode("utf-8", "replace")
        if not isinstance(source, str) or not could_run(source, mode):
            return False
        if self.texts_overflow:
            return True
        files = _workdir_texts()
        if files is None:  # too many files to read: any of them may hold it
            return True
        # Its text in the source, or the source cut from its text (``out.split("=")[1]``);
        # and each of its lines (what survives the tests' ``.replace`` of another line).
        stripped = source.strip()
        return any(text in source or stripped in text for text in (*self.texts, *files))

    def _reissue_warning(self, value: Any, channel: int) -> None:
        if type(value) is not tuple or len(value) != 4:
            raise CodecError("malformed warning")
        text, category, filename, lineno = value
        if type(category) is str:
            category = _PASSED_THROUGH.get(category)
        elif not self.mirrored(category):
            category = None
        if (
            type(text) is not str
            or not (isinstance(category, type) and issubclass(category, Warning))
            or type(filename) is not str
            or type(lineno) is not int
        ):
            raise CodecError("malformed warning")
        # Never a path: the judge's warning display reads the named file's line (linecache).
        where = filename if filename.startswith("<") and filename.endswith(">") else "<solution>"
        try:
            warnings.warn_explicit(
                text, category, where, lineno, module="solution",
                registry=self.warning_registry,
            )  # fmt: skip
        except Exception as exc:
            # The tests' filters make it an error: in-process the solution's ``warn`` raised
            # it; here its call raises it when it returns (the wire is mid-call now).
            self.warning_raised.setdefault(channel, exc)

    def relay(self, body: bytes) -> None:
        """The judge's side: the solution printed this during a request; written to the tests'
        ``sys.stdout`` (or ``sys.stderr``) when the tests redirected it (``redirect_stdout``,
        the ``capsys`` fixture), as in-process; else dropped (the solution's own output file
        has it)."""
        value = decode(body)
        if type(value) is not tuple or len(value) != 2 or value[0] not in (1, 2):
            raise CodecError("malformed output")
        stream, text = value
        if type(stream) is not int or type(text) is not str:
            raise CodecError("malformed output")
        self.relayed += len(text)
        if self.relayed > MAX_RELAYED:
            self.fail(f"the solution printed more than {MAX_RELAYED} bytes during the tests")
        if could_be_code(text):  # eval(capsys.readouterr().out): see derived
            self.note_text(text)
        target = sys.stdout if stream == 1 else sys.stderr
        if type(target) in _PROXY_TYPES:
            # An object of the solution's: writing is a request, which this thread (reading
            # the wire for all) cannot make now; the call that printed writes it when it returns.
            self.unrelayed.append((target, text))
        elif target is not self.streams[stream - 1]:
            target.write(text)

    def relay_to_handles(self) -> None:
        """Write what :meth:`relay` kept for the solution's own stream objects."""
        while self.unrelayed:
            target, text = self.unrelayed.pop(0)
            target.write(text)
