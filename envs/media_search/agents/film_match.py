"""How well a film record fits a question: the score that picks one film among search candidates.

Why: the top search hit for "what year did the first godfather movie come out"
may be *The Godfather Part II*, and for "who directed Heat, the one with Pacino
and De Niro?" one of four films called Heat. An agent that opens a few
candidates can tell them apart by what the question says: the title named as a
whole phrase, the people it names, its year or decade, its genre. This scores
one record (a ``get_title`` output, or a passage read into the same fields) on
those, from the :class:`~agentenv.envs.media_search.questions.reading.QuestionReading` alone.

Example:
    >>> from agentenv.envs.media_search.questions.reading import read_question
    >>> r = read_question("what year did the first godfather movie come out")
    >>> one = {"title": "The Godfather", "year": 1972, "cast": [], "directors": [], "writers": []}
    >>> two = {"title": "The Godfather Part II", "year": 1974, "cast": [], "directors": [], "writers": []}
    >>> match_score(r, one) > match_score(r, two)
    True
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from agentenv.envs.media_search.questions.reading import (
    QuestionReading,
    fold,
    numbered_variant,
    possessors,
    without_possessives,
)

_ARTICLES = ("the ", "a ", "an ")
_SUBTITLE = re.compile(r":\s+|\s+[-–—]\s+")
_SMALL = frozenset("the a an of and in on to for with at by from is it".split())


def _title_key(title: str) -> str:
    key = fold(title)
    for article in _ARTICLES:
        if key.startswith(article) and len(key) > len(article):
            return key[len(article) :]
    return key


def title_named(question: str, title: str) -> bool:
    """True when the question holds the title (without a leading article) as a whole phrase, in any case,
    its numbers written either way (``rocky 4`` names *Rocky IV*, ``se7en`` names *Seven*).

    Example:
        >>> title_named("who directed the shining?", "The Shining"), title_named("jaws 2 year", "Jaws 3-D")
        (True, False)
        >>> title_named("rocky 4 who directed", "Rocky IV"), title_named("se7en director", "Seven")
        (True, True)
    """
    key = _title_key(title)
    if not key:
        return False
    return f" {key} " in f" {fold(question)} " or f" {key} " in f" {numbered_variant(question)} "


def subtitle_named(question: str, title: str) -> bool:
    """True when the question holds the part of the title after its last colon or dash, of two words or more,
    as a whole phrase: people call a sequel by its subtitle (``judgment day``, ``dead man's chest``).

    Example:
        >>> subtitle_named("who directed dead man's chest", "Pirates of the Caribbean: Dead Man's Chest")
        True
        >>> subtitle_named("rocky part ii", "Rocky: Part II"), subtitle_named("heat", "Heat")
        (True, False)
    """
    sub = subtitle(title)
    return sub is not None and len(_title_key(sub).split()) >= 2 and title_named(question, sub)


def subtitle(title: str) -> str | None:
    """The part of a title after its last colon or spaced dash, or None.

    Example:
        >>> subtitle("Lara Croft: Tomb Raider – The Cradle of Life"), subtitle("Heat")
        ('The Cradle of Life', None)
    """
    parts = _SUBTITLE.split(title)
    return parts[-1] if len(parts) > 1 else None


def match_score(reading: QuestionReading, record: Mapping[str, Any], rank: int = 0) -> float:
    """Higher for a film the question more likely means; ``rank`` is its place in the search results.

    Parts: the whole title named (+4, and +0.5 per word), else the share of its
    content words in the question (×2); each credited person named in full
    (+2) or by surname (+1); a year named (+2 when it is the film's, −1 when
    not, unless the year is what is asked); a decade or range (+1/−1); the
    genre (+1); the search rank (+0.3/(rank+1)); and how often critics
    reviewed it (+0.15·log10(1+reviews)), since people ask about known films.
    A title is named with its numbers written either way, or by its subtitle alone (scored as a title
    of the subtitle's words); +0.25 when it is named as spelled, article and all; a surname
    counts only for a person whose full name is not already another's; the owner of a possessive
    ("tarantino's") is +1.5 when credited on the film and −1.5 when not.
    The people of an "A or B" cast question are left out: they are the
    answer's options, not the film's description.
    """
    question = reading.question
    # A possessive is matched both ways: "schindler's list" names *Schindler's List*, "nolan's" names Nolan.
    folded = f" {fold(question)} | {fold(without_possessives(question))} "
    words = set(folded.split())
    title = str(record.get("title") or "")
    score = 0.3 / (rank + 1)
    if title_named(question, title):
        score += 4.0 + 0.5 * len(_title_key(title).split())
        if f" {fold(title)} " in folded:
            score += 0.25  # named as it is spelled, article and all: "zodiac" is *Zodiac*, not *The Zodiac*
    elif subtitle_named(question, title):
        score += 4.0 + 0.5 * len(_title_key(subtitle(title) or "").split())
    else:
        content = [w for w in _title_key(title).split() if w not in _SMALL]
        if content:
            score += 2.0 * sum(w in words for w in content) / len(content)
    skip = {fold(o) for o in reading.options or ()} if reading.asks == "cast" else set()
    people = {str(p) for key in ("directors", "writers", "cast") for p in record.get(key) or ()}
    folds = {p: fold(p) for p in people}  # each name folded once (then read three times)
    named_in_full = {n for n in folds.values() if f" {n} " in folded} - skip
    full_surnames = {n.split()[-1] for n in named_in_full if n}
    for person in people:
        name = folds[person]
        if not name or name in skip:
            continue
        if name in named_in_full:
            score += 2.0
        else:
            last = name.split()[-1]
            if (
                len(last) > 3
                and last in words
                and last not in full_surnames  # Bernard Chazelle is not who "damien chazelle" names
                and not any(last in s.split() for s in skip)
            ):
                score += 1.0
    surnames = {n.split()[-1] for n in folds.values() if n}
    for owner in possessors(question):
        # "tarantino's django": the film is one Tarantino is credited on (a title's own possessive,
        # "dead man's chest", names no one and weighs the same on every film).
        score += 1.5 if owner in surnames else -1.5
    year = record.get("year")
    if isinstance(year, int):
        if reading.years and reading.asks != "year":
            score += 2.0 if year in reading.years else -1.0
        if reading.years_between:
            lo, hi = reading.years_between
            score += 1.0 if lo <= year <= hi else -1.0
    if reading.genre and reading.genre in (record.get("genres") or ()):
        score += 1.0
    reviews = record.get("reviews")
    if isinstance(reviews, int) and reviews > 0:
        score += 0.15 * math.log10(1 + reviews)
    return score
