"""Rule-based grading of MediaSearch answers: normalise, then compare exactly.

Why rules and not a judge: a reward must be deterministic and auditable, and
the answers here are short canonical strings (a title, a name, a number), so
a small set of normalisations captures the harmless variation (case, accents,
punctuation, a leading article, "&" for "and", digits vs words) without
accepting hedges: "Inception or Interstellar" is wrong, and so is an answer
that names two different numbers.

* Text answers (``title``, ``person``) are correct when the normalised
  answer equals the normalised gold answer or one of its aliases. Generated
  title questions list the title id (``tt1375666``) and "Title (Year)" as
  aliases, so ids are accepted in place of titles.
* Numeric answers (``number``, ``year``) are correct when the answer holds
  exactly one number (digits or English words up to ninety-nine) and it
  equals the gold number: "7", "seven", "7 films" and "It is 7." all pass.

Example:
    >>> normalize_answer("  The Lord of the Rings: The Two Towers ")
    'lord of the rings the two towers'
    >>> normalize_answer("Amélie & Nino")
    'amelie and nino'
    >>> parse_number("Twenty-one films")
    21
    >>> parse_number("7 or 8") is None
    True
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from typing import Protocol

_NON_WORD = re.compile(r"[\W_]+")
_APOSTROPHES = re.compile(r"['’ʼ`´]")
_ARTICLES = ("the ", "a ", "an ")

UNITS = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
         "fifteen sixteen seventeen eighteen nineteen").split()
TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70,
        "eighty": 80, "ninety": 90}
_WORD_VALUE = {w: i for i, w in enumerate(UNITS)} | TENS
_NUMBER_TOKEN = re.compile(r"\d+(?:\.\d+)?|[a-z]+")


class Gradable(Protocol):
    """What the grader reads from a question."""

    answer: str
    aliases: Sequence[str]
    answer_type: str


def normalize_answer(text: str) -> str:
    """Return ``text`` lower-cased, without accents, punctuation or a leading article.

    Apostrophes are dropped (``"Schindler's"`` → ``"schindlers"``), other
    punctuation becomes a space, ``&`` becomes ``and``, whitespace is collapsed.

    Example:
        >>> normalize_answer("Schindler’s List.")
        'schindlers list'
        >>> normalize_answer("A")
        'a'
    """
    text = unicodedata.normalize("NFKD", text.casefold())
    text = "".join(ch for ch in text if not unicodedata.combining(ch))
    text = _APOSTROPHES.sub("", text.replace("&", " and "))
    text = " ".join(_NON_WORD.sub(" ", text).split())
    for article in _ARTICLES:
        if text.startswith(article):
            return text[len(article):]
    return text


def number_words(n: int) -> str | None:
    """Return the English words for ``0 <= n < 100`` (else ``None``).

    Example:
        >>> number_words(42), number_words(7), number_words(100)
        ('forty-two', 'seven', None)
    """
    if 0 <= n < 20:
        return UNITS[n]
    if 20 <= n < 100:
        tens = next(w for w, v in TENS.items() if v == n - n % 10)
        return tens if n % 10 == 0 else f"{tens}-{UNITS[n % 10]}"
    return None


def parse_number(text: str) -> int | float | None:
    """Return the one number that ``text`` states, or ``None`` if it states none or several.

    Digits and English number words below one hundred are read; "twenty one"
    and "twenty-one" are one number. Repeating the same number is fine.

    Example:
        >>> parse_number("It runs 148 minutes.")
        148
        >>> parse_number("seven") == parse_number("7 films") == 7
        True
        >>> parse_number("2 h 28 min") is None
        True
    """
    tokens = _NUMBER_TOKEN.findall(text.casefold().replace(",", ""))
    values: list[int | float] = []
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok[0].isdigit():
            value = float(tok)
            values.append(int(value) if value.is_integer() else value)
        elif tok in TENS and i + 1 < len(tokens) and tokens[i + 1] in UNITS[1:10]:
            values.append(TENS[tok] + UNITS.index(tokens[i + 1]))
            i += 1
        elif tok in _WORD_VALUE:
            values.append(_WORD_VALUE[tok])
        i += 1
    distinct = set(values)
    return values[0] if len(distinct) == 1 else None


def grade_answer(answer_text: str, question: Gradable) -> bool:
    """Return whether ``answer_text`` answers ``question`` correctly (see the module rules).

    Example:
        >>> from types import SimpleNamespace as Q
        >>> q = Q(answer="Inception", aliases=("tt1375666", "Inception (2010)"), answer_type="title")
        >>> [grade_answer(a, q) for a in ("inception", "TT1375666", "Inception (2010)", "Interstellar")]
        [True, True, True, False]
        >>> n = Q(answer="7", aliases=("seven",), answer_type="number")
        >>> [grade_answer(a, n) for a in ("7", "Seven films.", "7 or 8", "")]
        [True, True, False, False]
    """
    if not isinstance(answer_text, str):
        raise TypeError(f"answer_text must be a str, not {type(answer_text).__name__}")
    golds = (question.answer, *question.aliases)
    if question.answer_type in ("number", "year"):
        got = parse_number(answer_text)
        if got is None:
            return False
        return any(parse_number(g) == got for g in golds)
    got_text = normalize_answer(answer_text)
    return bool(got_text) and any(got_text == normalize_answer(g) for g in golds)
