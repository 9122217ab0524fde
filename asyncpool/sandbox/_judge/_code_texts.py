"""Which texts could be code, to the judge's guard (:mod:`._guard`): the texts of the solution's
the judge remembers (:meth:`._peer_relay._PeerRelay.note_text`), and the sources the tests (or a
library reading annotations for them) evaluate, execute or compile
(:meth:`._peer_relay._PeerRelay.derived`): such a source that holds a text of the solution's runs
in the solution's process, never in the judge.

Must not: pass over a text that, run in the judge, could call anything or bind a name of the
tests': a call or a decorator could do anything there; an assignment expression, a statement
that assigns, a ``for`` or ``match`` target or an import could rebind the tests' ``solve`` to
one of the judge's functions (``[solve := sorted]``), which the tests then call instead of the
solution's.

Plain substring tests, not a parse: every text the solution sends is tested as it arrives, and
these cost tens of nanoseconds each; a text they take for code that is none (``"a == b"`` in
``exec`` mode, English with "for") only runs in the solution's process, where the tests' names
may be missing.
"""

from __future__ import annotations


def could_be_code(text: str) -> bool:
    """Whether ``text`` could be code in any mode (see :func:`could_run`): the judge remembers
    the solution's texts that pass this."""
    return (
        "(" in text or "@" in text or "=" in text or "for" in text or "import" in text
        or "match" in text
    )  # fmt: skip


def could_be_code_bytes(data: bytes) -> bool:
    """:func:`could_be_code` of bytes (``eval``, ``exec`` and ``compile`` take bytes too):
    the same marks, written out as there (a loop over one tuple of them took 405 ns a string
    here against 96; every string the solution sends pays it). A test holds the two alike."""
    return (
        b"(" in data or b"@" in data or b"=" in data or b"for" in data or b"import" in data
        or b"match" in data
    )  # fmt: skip


def could_run(source: str, mode: str) -> bool:
    """Whether ``source``, run in ``mode`` (``"eval"``: an expression; ``"exec"`` or
    ``"single"``: statements), could call anything or bind a name: an expression by a call, a
    decorator or an assignment expression (``:=``); statements also by an assignment, a
    ``for`` or ``match`` target, or an import."""
    if mode == "eval":
        return "(" in source or "@" in source or ":=" in source
    return could_be_code(source)
