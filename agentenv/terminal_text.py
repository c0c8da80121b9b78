"""Strings from users and servers, made safe to print on a terminal line: shown, never obeyed.

Why: a run folder's name, a task question, a ``--tasks`` path or an LLM endpoint's error body can
hold ESC/CSI/OSC sequences, ``\\r``, BEL, other C0 and C1 controls or bidi overrides (U+202E).
Printed raw, they set the window title, clear the screen, overwrite a line with a fake
``wrote board/leaderboard.md`` or hide the rest of an error (``ESC[8m``). :func:`terminal_text`
is the one rule the command line prints such text through (allow-list: a character passes only if
it is printable); :func:`control_at` is the rule task files refuse control characters by.

Import-cheap on purpose (the standard library's ``re`` alone): ``import agentenv`` builds nothing.

Example:
    >>> print(terminal_text("run\\x1b]0;OWNED\\x07\\x1b[2K\\rwrote x\\u202e"))
    run\\x1b]0;OWNED\\x07\\x1b[2K\\x0dwrote x\\u202e
    >>> terminal_text("café, 東京 (2009)") == "café, 東京 (2009)"
    True
"""

from __future__ import annotations

import re

__all__ = ["code_points", "control_at", "escaped_controls", "terminal_text"]

_SPACES = frozenset(
    "\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000"
)
"""Unicode's space separators (``Zs``) besides the ASCII space: blanks a terminal draws as blanks
(``str.isprintable`` calls them unprintable, as it does every separator)."""
_JOINERS = frozenset("\u200c\u200d")
"""Zero-width non-joiner and joiner: format characters that Persian, Indic scripts and emoji
sequences need, and that move no cursor. Every other format character (``Cf``: bidi controls,
zero-width space, BOM, tag characters) is escaped."""
_ESCAPE = re.compile(r"x[0-9a-f]{2}|u[0-9a-f]{4}|U[0-9a-f]{8}")
"""What follows the backslash of an escape (lower-case hex, as written here)."""


def _shown(ch: str) -> bool:
    return ch.isprintable() or ch in _SPACES or ch in _JOINERS


def _escape(ch: str) -> str:
    code = ord(ch)
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def terminal_text(text: object, *, keep: str = "") -> str:
    """``text`` (``str(text)`` for another object) safe for a terminal: printable characters pass,
    every other one becomes a visible escape.

    Passes: what ``str.isprintable`` accepts, Unicode's space separators and the zero-width
    (non-)joiners. Escaped as ``\\xhh``, ``\\uhhhh`` or ``\\Uhhhhhhhh``: C0 controls (ESC is
    ``\\x1b``, ``\\r`` is ``\\x0d``), DEL, C1 controls, bidi controls (``\\u202e``), other format
    characters, line and paragraph separators, surrogates, private-use and unassigned code points.
    ``keep`` names characters to let through raw, for a display of several lines
    (``keep="\\n\\t"``); it should hold only layout controls such as those.

    Faithful: distinct strings give distinct results. A literal backslash is doubled only where it
    would read as the start of an escape (before another backslash, an escaped character, or
    ``x``/``u``/``U`` and the hex digits of an escape), so ``C:\\new`` and a JSON body's ``\\n``
    show as written; printable text otherwise comes back unchanged, at C speed. Not idempotent
    (no faithful escape is): escape text once, where it is printed; text kept to be printed later
    is marked with :func:`code_points` instead.

    Example:
        >>> terminal_text("a\\x1b[31mred\\r\\u202eevil\\x9b")
        'a\\\\x1b[31mred\\\\x0d\\\\u202eevil\\\\x9b'
        >>> print(terminal_text("C:\\\\new is text, so is \\\\x1b; ESC is \\x1b"))
        C:\\new is text, so is \\\\x1b; ESC is \\x1b
        >>> print(terminal_text("line 1\\nline 2\\x07", keep="\\n\\t"))
        line 1
        line 2\\x07
    """
    text = text if isinstance(text, str) else str(text)
    if text.isprintable() and "\\" not in text:
        return text
    out = []
    last = len(text) - 1
    for i, ch in enumerate(text):
        if ch == "\\":
            after = text[i + 1] if i < last else ""
            doubled = bool(after) and (
                after == "\\"
                or not (_shown(after) or after in keep)
                or _ESCAPE.match(text, i + 1) is not None
            )
            out.append("\\\\" if doubled else "\\")
        elif _shown(ch) or ch in keep:
            out.append(ch)
        else:
            out.append(_escape(ch))
    return "".join(out)


def escaped_controls(text: object) -> str:
    """``text`` with each character :func:`terminal_text` would escape written as its escape
    (``\\x1b``), backslashes left alone: stable where :func:`terminal_text` is faithful, for a
    rendering that escapes in stages (the leaderboard's labels pass through it more than once), at
    the price that the text ``\\x1b`` and an ESC read the same.

    Example:
        >>> escaped_controls("a\\x1b[31m\\u202eb") == escaped_controls(escaped_controls("a\\x1b[31m\\u202eb"))
        True
        >>> print(escaped_controls("a\\x1b[31m \\\\x1b"))
        a\\x1b[31m \\x1b
    """
    text = text if isinstance(text, str) else str(text)
    if text.isprintable():
        return text
    return "".join(ch if _shown(ch) else _escape(ch) for ch in text)


def code_points(text: object) -> str:
    """``text`` with each character :func:`terminal_text` would escape written as ``<U+XXXX>``,
    backslashes left alone: for text that is kept and printed again later (the start of a server's
    error body inside a failure reason, which is logged, stored and quoted), so that printing it
    through :func:`terminal_text` changes nothing more.

    Lossy where :func:`terminal_text` is faithful (the text ``<U+001B>`` and an ESC read the same),
    and so stable: ``code_points`` leaves its result as it is, and :func:`terminal_text` escapes
    nothing in it a second time (it may still double a backslash of the original text).

    Example:
        >>> code_points("overloaded \\x1b]0;OWNED\\x07\\x1b[2K\\rall good\\u202e")
        'overloaded <U+001B>]0;OWNED<U+0007><U+001B>[2K<U+000D>all good<U+202E>'
    """
    text = text if isinstance(text, str) else str(text)
    if text.isprintable():
        return text
    return "".join(ch if _shown(ch) else f"<U+{ord(ch):04X}>" for ch in text)


_CONTROL = "\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069"
"""What a task row's text may not hold: C0 controls, DEL, C1 controls, the line and paragraph
separators and the bidi embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069)."""
_CONTROLS: dict[str, re.Pattern[str]] = {}


def control_at(text: str, keep: str = "") -> int:
    """The index of the first control character of ``text`` not in ``keep``, or -1 (C speed).

    Control characters: C0 controls (ESC, ``\\r``, BEL, ``\\n``, ``\\t``, ...), DEL, C1 controls,
    U+2028/U+2029 and the bidi embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069).
    A task file's readers refuse a field that holds one, naming the character and where it is.

    Example:
        >>> control_at("Heat (1995)"), control_at("Heat\\x1b[8m"), control_at("a\\nb", keep="\\n\\t")
        (-1, 4, -1)
    """
    pattern = _CONTROLS.get(keep)
    if pattern is None:
        kept = "".join(re.escape(c) for c in keep)
        body = f"(?![{kept}])[{_CONTROL}]" if kept else f"[{_CONTROL}]"
        pattern = _CONTROLS.setdefault(keep, re.compile(body))
    found = pattern.search(text)
    return -1 if found is None else found.start()
