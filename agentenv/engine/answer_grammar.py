"""The closed grammar an ``<answer>`` is read by: entries, and the only decoration allowed around them.

Why a closed grammar: a grader that erases what it does not recognise and
then looks for a deny-list of hedges credits every negation or hedge that
nobody listed (``¬G``, ``G？``, ``~~G~~``, ``<!-- G -->``). Here an answer is
accepted only if it parses: a sequence of **entries**, one per line (a family
may add ``;``), each one catalog reference that the family reads (see
:mod:`agentenv.engine.spelling`), inside this allow-list of decoration and nothing
else:

* whitespace (spaces, tabs and the Unicode space separators), and blank lines;
* one list marker at the start of an entry, followed by whitespace: ``1.``,
  ``1)``, ``-``, ``*``, ``•``;
* a pair of markdown marks around the whole entry: ``**bold**``,
  ``__bold__``, ``*italics*``, ``_italics_``, ```code```;
* a pair of quotes around the whole entry: ``"…"``, ``'…'``, ``“…”``,
  ``‘…’``, ``«…»``;
* one trailing period, the sentence's: after it is taken off, a period that
  is left is the reference's own (``Monsters, Inc..`` is the title
  ``Monsters, Inc.``; ``G..`` is ``G.`` and ``G...`` is ``G..``, which name
  nothing unless the name itself ends so).

The same pairs (not a marker, not a period) may also wrap the *name part* of
a two-part reference a family reads, such as ``**Heat** (1995)`` or
``*Marfan syndrome* (OMIM:154700)``: see :func:`strip_wrappers`.

Anything else is part of the entry, and an entry that is not a reference
makes the answer **unreadable**: accuracy 0, with the reason in
``info["answer_feedback"]``. Nothing is silently dropped.

Every function here is linear in the length of the text.

Example:
    >>> strip_decoration("1. **Marfan syndrome**.")
    'Marfan syndrome'
    >>> strip_decoration('- "Inception"'), strip_decoration("~~Inception~~"), strip_decoration("`*G*`.")
    ('Inception', '~~Inception~~', 'G')
    >>> [(n, e) for n, e in answer_entries("1. A\\n\\n2. B; C", separators="\\n;")]
    [(1, '1. A'), (2, '2. B'), (3, 'C')]
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache

LIST_MARKER = re.compile(r"(?:[0-9]{1,3}[.)]|[-*•])[ \t]+")
"""A list marker at the start of an entry: it must be followed by whitespace (``-7`` is a sign, not a bullet)."""
QUOTE_PAIRS = (('"', '"'), ("'", "'"), ("“", "”"), ("‘", "’"), ("«", "»"))
BOLD_MARKS = ("**", "__")
WRAPPERS = (*((m, m) for m in BOLD_MARKS), ("*", "*"), ("_", "_"), ("`", "`"), *QUOTE_PAIRS)
"""Pairs allowed around a whole entry (and around the name part of a pair): bold before italics, so
that ``**G**`` loses both of its stars at once."""
_WRAPPERS_BY_END = {
    end: tuple(pair for pair in WRAPPERS if pair[1][-1] == end)
    for end in {r[-1] for _, r in WRAPPERS}
}
"""The wrappers by their last character, in :data:`WRAPPERS`' order (an entry is unwrapped by looking
up only the pairs its last character can close)."""
DECORATION_ROUNDS = 6
"""Wrappers and the period may nest (``` `**"G"**`. ```); each round takes off one wrapper, so six rounds
unwrap every realistic order, and the work stays linear in the entry's length."""
_LIST_MARKER_STARTS = frozenset("0123456789-*•")
WHITESPACE = " \t\r"
"""What counts as whitespace besides the Unicode space separators (category Zs)."""


@dataclass(frozen=True)
class Unreadable:
    """Why an answer does not parse under its family's grammar (shown in ``info["answer_feedback"]``)."""

    reason: str


def is_space(ch: str) -> bool:
    """Whether ``ch`` is whitespace under the grammar: space, tab, CR, or a Unicode space separator (Zs).

    Why not :meth:`str.isspace`: it also calls the information separators
    U+001C–U+001F and U+0085 whitespace, and those would then vanish from an
    answer unread.

    Example:
        >>> is_space(" "), is_space("\\u00a0"), is_space("\\x1c"), is_space("\\u200b")
        (True, True, False, False)
    """
    return ch in WHITESPACE or unicodedata.category(ch) == "Zs"


def strip_space(text: str) -> str:
    """``text`` without leading and trailing grammar whitespace (see :func:`is_space`)."""
    text = text.strip(WHITESPACE)
    if not text or (text[0].isascii() and text[-1].isascii()):
        return text
    start, end = 0, len(text)
    while start < end and is_space(text[start]):
        start += 1
    while end > start and is_space(text[end - 1]):
        end -= 1
    return text[start:end]


def answer_entries(
    text: str, separators: str = "\n", limit: int | None = None
) -> Iterator[tuple[int, str]]:
    """``(entry number, raw entry)`` for every non-blank entry, in order; at most ``limit`` of them.

    Entries are separated by any character of ``separators``; blank ones
    (only whitespace) are skipped and not numbered.
    """
    number = 0
    for match in _entry_pattern(separators).finditer(text):
        raw = strip_space(match.group(0))
        if not raw:
            continue
        number += 1
        yield number, raw
        if limit is not None and number >= limit:
            return


@lru_cache(maxsize=8)
def _entry_pattern(separators: str) -> re.Pattern[str]:
    if not separators:
        raise ValueError("separators must name at least one character")
    return re.compile(f"[^{re.escape(separators)}]+")


def count_entries(text: str, separators: str = "\n") -> int:
    """How many non-blank entries ``text`` has (counted, not read)."""
    return sum(1 for _ in answer_entries(text, separators))


def strip_decoration(entry: str) -> str:
    """The reference inside one entry: the allow-listed decoration removed, everything else kept.

    Returns ``""`` when nothing but decoration is left (an entry of only a
    bullet is not a reference).

    Example:
        >>> [strip_decoration(e) for e in ("- G", "-G", "* **G**", "*G*", "`G`", "'G'.", "G..", "G...", "2) G")]
        ['G', '-G', 'G', 'G', 'G', 'G', 'G.', 'G..', 'G']
    """
    core = strip_space(entry)
    if not core or core.isalnum():
        return core  # one bare word or number: no marker, wrapper or period to take off
    if core[0] in _LIST_MARKER_STARTS:
        marker = LIST_MARKER.match(core)
        if marker:
            core = strip_space(core[marker.end() :])
        elif core in ("-", "*", "•"):
            return ""
    if core and core[-1].isalnum() and core[0].isalnum():
        return core  # the common case: nothing left to unwrap
    period = True
    for _ in range(DECORATION_ROUNDS):
        if period and core[-1:] == ".":
            core = strip_space(core[:-1])
            period = False
        unwrapped = _unwrap_once(core)
        if unwrapped is core:
            break
        core = unwrapped
    return core


def strip_wrappers(text: str) -> str:
    """``text`` without the pairs of :data:`WRAPPERS` around it (no list marker, no period).

    Why: the name part of a two-part reference (``**Heat** (1995)``) is
    decorated as a whole entry would be; what is inside must still be a name.

    Example:
        >>> strip_wrappers("**Heat**"), strip_wrappers("*'Heat'*"), strip_wrappers("~~Heat~~"), strip_wrappers("Heat.")
        ('Heat', 'Heat', '~~Heat~~', 'Heat.')
    """
    core = strip_space(text)
    for _ in range(DECORATION_ROUNDS):
        unwrapped = _unwrap_once(core)
        if unwrapped is core:
            break
        core = unwrapped
    return core


def _unwrap_once(core: str) -> str:
    """``core`` without one pair of :data:`WRAPPERS` around it (whitespace inside trimmed); ``core`` itself
    when none wraps it."""
    for left, right in _WRAPPERS_BY_END.get(core[-1:], ()):
        if len(core) > len(left) + len(right) and core.startswith(left) and core.endswith(right):
            return strip_space(core[len(left) : -len(right)])
    return core


def quoted(text: str, limit: int = 60) -> str:
    """``text`` for a feedback message: shortened, with invisible characters shown as ``U+XXXX``.

    Why: a reason that quotes ``'G\\u200b'`` as ``'G'`` explains nothing.

    Example:
        >>> quoted("G\\u200b"), quoted("x" * 70)[-3:]
        ("'G<U+200B>'", "x…'")
    """
    shown = "".join(
        f"<U+{ord(ch):04X}>" if unicodedata.category(ch)[0] in "CMZ" and ch != " " else ch
        for ch in text[:limit]
    )
    return repr(shown + ("…" if len(text) > limit else ""))
