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
* Numeric answers (``number``, ``year``) are correct when the answer states
  exactly one number and it equals the gold number. "States exactly one
  number" is checked token by token, so that nothing the grader cannot read
  can hide a second number or a hedge:

  - a number is ASCII digits (``7``, ``7.0``, ``1,994`` with thousands
    commas) or English words below one hundred (``seven``, ``twenty-one``);
  - every other word must be one of :data:`NEUTRAL_WORDS` (articles,
    copulas and the units the questions ask in: "There are 7 films.", "In
    1994.", "It runs 148 minutes.");
  - punctuation is limited to ``. , : ; ! ( ) " ' -``.

  Anything else makes the answer wrong, whatever else it says: a second
  number in any form ("7 or 8", "7 or a dozen", "7 or VIII", "7 or ⁸"),
  connectives and hedges ("or", "maybe", "about", a question mark), ordinals
  and suffixes ("7th"), signs ("-7"), or other words ("Heat, Alien, Up or 7").
  Repeating the same number ("7 (seven)") is fine.
* A question mark is a hedge: a text answer holding one is wrong unless the
  gold itself holds one ("Dude, Where's My Car?").

Example:
    >>> normalize_answer("  The Lord of the Rings: The Two Towers ")
    'lord of the rings the two towers'
    >>> normalize_answer("Amélie & Nino")
    'amelie and nino'
    >>> parse_number("Twenty-one films")
    21
    >>> parse_number("7 or 8") is None, parse_number("7 or a dozen") is None, parse_number("7th") is None
    (True, True, True)
"""

from __future__ import annotations

import functools
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
NEUTRAL_WORDS = frozenset(
    "a an the it its is was are were there answer final total in of released "
    "film films movie movies title titles year years minute minutes min mins runtime runs run long lasts".split()
)
"""Words a numeric answer may hold besides its number: none of them states or qualifies a number."""
_ANSWER_TOKEN = re.compile(r"[0-9][0-9a-z.,]*|[a-z]+|\S")
_DIGITS = re.compile(r"[0-9]{1,3}(?:,[0-9]{3})+|[0-9]+(?:\.[0-9]+)?")
_NEUTRAL_PUNCTUATION = frozenset(".,:;!()\"'-")
_SIGNED = re.compile(r"(?<![0-9a-z])-[0-9]")


class Gradable(Protocol):
    """What the grader reads from a question."""

    answer: str
    aliases: Sequence[str]
    answer_type: str


@functools.lru_cache(maxsize=1 << 16)
def normalize_answer(text: str) -> str:
    """Return ``text`` lower-cased, without accents, punctuation or a leading article.

    Cached: every grade normalises the gold and its aliases again, and a policy
    repeats its answers.

    Apostrophes are dropped (``"Schindler's"`` → ``"schindlers"``), other
    punctuation becomes a space, ``&`` becomes ``and``, whitespace is collapsed.

    Example:
        >>> normalize_answer("Schindler’s List.")
        'schindlers list'
        >>> normalize_answer("A")
        'a'
    """
    if text.isascii():  # no accents to strip: NFKD and the combining-mark filter change nothing
        text = text.lower()
    else:
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
    """Return the one number that ``text`` states, or ``None`` if it states none, several, or anything else.

    Digits and English number words below one hundred are read; "twenty one"
    and "twenty-one" are one number. Repeating the same number is fine. Any
    token that is not a number, a :data:`NEUTRAL_WORDS` word or plain
    punctuation makes the answer unreadable, so it states no number (see the
    module docstring). One linear pass over the text.

    Example:
        >>> parse_number("It runs 148 minutes.")
        148
        >>> parse_number("seven") == parse_number("7 films") == parse_number("There are 7 (seven) films.") == 7
        True
        >>> [parse_number(t) for t in ("2 h 28 min", "7 or VIII", "1994 or the mid-nineties", "-7", "7?")]
        [None, None, None, None, None]
    """
    text = _APOSTROPHES.sub("", text.casefold())
    if not text.isascii() or _SIGNED.search(text):
        return None
    values: list[int | float] = []
    pending_tens: int | None = None
    for token in _ANSWER_TOKEN.findall(text):
        value: int | float | None = None
        if token[0].isdigit():
            digits = token.rstrip(".,")
            if not _DIGITS.fullmatch(digits):
                return None
            number = float(digits.replace(",", ""))
            value = int(number) if number.is_integer() else number
        elif token in _WORD_VALUE:
            if pending_tens is not None and token in UNITS[1:10]:
                values[-1] = pending_tens + UNITS.index(token)
                pending_tens = None
                continue
            value = _WORD_VALUE[token]
        elif token == "-" or token in NEUTRAL_WORDS or (len(token) == 1 and token in _NEUTRAL_PUNCTUATION):
            if token != "-":
                pending_tens = None
            continue
        else:
            return None
        values.append(value)
        pending_tens = value if token in TENS else None
    return values[0] if values and len(set(values)) == 1 else None


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
    if "?" in answer_text and not any("?" in g for g in golds):
        return False
    if question.answer_type in ("number", "year"):
        got = parse_number(answer_text)
        if got is None:
            return False
        return any(parse_number(g) == got for g in golds)
    got_text = normalize_answer(answer_text)
    return bool(got_text) and any(got_text == normalize_answer(g) for g in golds)
