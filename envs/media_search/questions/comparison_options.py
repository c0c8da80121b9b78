"""The two things a comparison question names: "A or B", "A vs B", "of/between A and B", "A longer than B".

Why apart from :mod:`~agentenv.envs.media_search.questions.reading`: finding the two options is a
parser of its own (a few patterns tried in order, then each option trimmed of the words that open
it), and the question reader only asks it for the pair. :data:`OPENERS` lives here because both
use it: the words a question opens with are never part of an option, nor of a capitalised span.

Example:
    >>> find_options("Which film is older, Alien or Heat?")
    ('Alien', 'Heat')
    >>> find_options("of Jaws and Heat, which came out first")
    ('Jaws', 'Heat')
    >>> find_options("who directed Heat?") is None
    True
"""

from __future__ import annotations

import re

OPENERS = frozenset(
    "who what which when how where why is was did do does name tell give find in among from "
    "for between quick remind looking i the a an".split()
)
"""Words a question opens with ("who", "which", "tell", ...): never part of a name or an option."""

_COMPARATIVE = (
    r"(?:older|newer|earlier|later|first|longer|shorter|higher|lower|better|worse|more|less|rated)"
)
_LEAD_OPTIONS = re.compile(
    rf"^(?:which|what)\b[^:,]*?\b{_COMPARATIVE}\b[^:,]*?[:,]\s+(?P<a>.+?)\s+(?:or|vs\.?|versus)\s+"
    r"(?P<b>.+?)\s*\?*$",
    re.IGNORECASE,
)
_OF_OPTIONS = re.compile(
    r"^(?:of|between)\s+(?P<a>.+?)\s+and\s+(?P<b>.+?),?\s+(?:which|what|who)\b", re.IGNORECASE
)
_OR_OPTIONS = re.compile(
    r"(?P<a>.+?)\s+(?:or|vs\.?|versus)\s+(?P<b>.+?)\s*(?:[,:?]\s*(?:which|what|who|name|the one|"
    r"just)\b|\s+-+\s*which\b|\s*[-–—]\s|\?+\s|\?*\s*$)",
    re.IGNORECASE,
)
_THAN = re.compile(
    r"(?:^|\b(?:is|was|does|did)\s+)(?P<a>.+?)\s+(?:run\s+)?(?:longer|shorter|older|newer|"
    r"better|worse|higher|lower)(?:\s+rated)?\s+than\s+(?P<b>.+?)\s*(?:\?|,|$)",
    re.IGNORECASE,
)
_OPTION_CUT = re.compile(
    r".*(?:[:,]\s|\bfeatures?\s|\bis it\s|\bwas it\s|\bbetween\s)", re.IGNORECASE
)


_LEADING_COMPARATIVES = frozenset(
    "older newer earlier later longer shorter higher lower better worse".split()
)
"""A comparative before the first option ("which is longer zodiac or ...") is no part of its title."""
_OPTION_OPENERS = (
    OPENERS
    | frozenset(
        "film films movie movies one it is was between did critics like rate the which".split()
    )
    | _LEADING_COMPARATIVES
)
"""Words that open an option without being part of what it names ("the film", "is it")."""


def find_options(text: str) -> tuple[str, str] | None:
    """The two things an "A or B", "A vs B", "of/between A and B" or "A longer than B" question names."""
    found = _LEAD_OPTIONS.search(text) or _OF_OPTIONS.search(text) or _THAN.search(text)
    if found:
        a, b = found.group("a"), found.group("b")
    else:
        found = (
            _OR_OPTIONS.search(text) if re.search(r"\b(?:or|vs\.?|versus)\b", text, re.I) else None
        )
        if not found:
            return None
        a, b = _OPTION_CUT.sub("", found.group("a")), found.group("b")
    a, b = _strip_option(a), _strip_option(b)
    return (a, b) if a and b else None


def _strip_option(text: str) -> str:
    """An option of "A or B" without leading filler ("the film", "is it") or a trailing "?"."""
    words = text.strip(" ?.!,;\"'").split()
    while words and words[0].lower() in _OPTION_OPENERS:
        words = words[1:]
    while words and words[-1].lower() in {"more", "higher", "better", "first", "in", "?", "one"}:
        words = words[:-1]
    return " ".join(words).strip(" .!,;\"'").rstrip("?") if words else ""
