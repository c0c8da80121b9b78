"""How well a film record fits a question: the score that picks one film among search candidates.

Why: the top search hit for "what year did the first godfather movie come out"
may be *The Godfather Part II*, and for "who directed Heat, the one with Pacino
and De Niro?" one of four films called Heat. An agent that opens a few
candidates can tell them apart by what the question says: the title named as a
whole phrase, the people it names, its year or decade, its genre. This scores
one record (a ``get_title`` output, or a passage read into the same fields) on
those, from the :class:`~agentenv.envs.media_search.question_reading.QuestionReading` alone.

Example:
    >>> from agentenv.envs.media_search.question_reading import read_question
    >>> r = read_question("what year did the first godfather movie come out")
    >>> one = {"title": "The Godfather", "year": 1972, "cast": [], "directors": [], "writers": []}
    >>> two = {"title": "The Godfather Part II", "year": 1974, "cast": [], "directors": [], "writers": []}
    >>> match_score(r, one) > match_score(r, two)
    True
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from agentenv.envs.media_search.question_reading import QuestionReading, fold

_ARTICLES = ("the ", "a ", "an ")
_SMALL = frozenset("the a an of and in on to for with at by from is it".split())


def _title_key(title: str) -> str:
    key = fold(title)
    for article in _ARTICLES:
        if key.startswith(article) and len(key) > len(article):
            return key[len(article) :]
    return key


def title_named(question: str, title: str) -> bool:
    """True when the question holds the title (without a leading article) as a whole phrase, in any case.

    Example:
        >>> title_named("who directed the shining?", "The Shining"), title_named("jaws 2 year", "Jaws 3-D")
        (True, False)
    """
    key = _title_key(title)
    return bool(key) and f" {key} " in f" {fold(question)} "


def match_score(reading: QuestionReading, record: Mapping[str, Any], rank: int = 0) -> float:
    """Higher for a film the question more likely means; ``rank`` is its place in the search results.

    Parts: the whole title named (+4, and +0.5 per word), else the share of its
    content words in the question (×2); each credited person named in full
    (+2) or by surname (+1); a year named (+2 when it is the film's, −1 when
    not, unless the year is what is asked); a decade or range (+1/−1); the
    genre (+1); the search rank (+0.3/(rank+1)); and how often critics
    reviewed it (+0.15·log10(1+reviews)), since people ask about known films.
    The people of an "A or B" cast question are left out: they are the
    answer's options, not the film's description.
    """
    question = reading.question
    folded = f" {fold(question)} "
    words = set(folded.split())
    title = str(record.get("title") or "")
    score = 0.3 / (rank + 1)
    if title_named(question, title):
        score += 4.0 + 0.5 * len(_title_key(title).split())
    else:
        content = [w for w in _title_key(title).split() if w not in _SMALL]
        if content:
            score += 2.0 * sum(w in words for w in content) / len(content)
    skip = {fold(o) for o in reading.options or ()} if reading.asks == "cast" else set()
    people = {str(p) for key in ("directors", "writers", "cast") for p in record.get(key) or ()}
    for person in people:
        name = fold(person)
        if not name or name in skip:
            continue
        if f" {name} " in folded:
            score += 2.0
        else:
            last = name.split()[-1]
            if len(last) > 3 and last in words and not any(last in s.split() for s in skip):
                score += 1.0
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
