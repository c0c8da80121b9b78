"""Shared drawing helpers of the question generators: the look-up :class:`Context`, the :class:`Draft` a
generator returns, the fame thresholds that decide which films and people a question may name, and the
small builders of plan steps and difficulty labels.

Why apart from :mod:`~agentenv.envs.media_search.questions.kinds`: every kind's generator reads the
catalog through the same :class:`Context`, so it is built once per generation run and kept in one place.

Example:
    >>> difficulty(1, 1), difficulty(3, 1), difficulty(2, 2)
    ('easy', 'medium', 'hard')
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from agentenv.corpora.media.catalog import Catalog, Title, normalize_key, title_key
from agentenv.envs.media_search.grading.grade import number_words
from agentenv.envs.media_search.questions import styles as sty
from agentenv.retrieval.tokenize import ENGLISH_STOPWORDS

KNOWN_FILM_REVIEWS = 20
"""A film counts as "known" (may anchor a question) with at least this many critics' reviews."""
KNOWN_ACTOR_FILMS = 4
"""An actor may be named in a question with at least this many acting credits."""
FAMOUS = {"film_share": 0.12, "actor_films": 15, "director_films": 6, "writer_films": 5}
"""The ``varied`` style's stricter pools: people ask about films and people they have heard of (the
hand-written casual questions name films with a median of about 140 critics' reviews, mostly from the
1970s to the 2000s, and actors with 25-90 credits; the template pools admit 20 reviews and 4 credits).
A film anchors a varied question when its reviews are among the top ``film_share`` of its decade's
films (review counts grow with the year: a 1970s classic has fewer than an average 2000s release); an
actor is named with ``actor_films`` acting credits; a count asks about a director, actor or writer with
this many films in that role. The ``template`` style keeps the pools above."""


@dataclass(frozen=True)
class Draft:
    """A generated question before it gets an id and a split."""

    kind: str
    question: str
    answer: str
    aliases: tuple[str, ...]
    answer_type: str
    difficulty: str
    plan: tuple[dict[str, Any], ...]
    extract: dict[str, Any]
    anchor: str  # the group that decides the split (a film id, a film pair, a person)
    fact: str  # what is asked, independent of wording: drafts with one fact are duplicates


SURNAME_SHARE = 0.5
"""Share of the times a ``varied`` question names a famous director (:data:`FAMOUS_DIRECTOR_FILMS`) whose
surname no other director shares by the surname alone ("the hitchcock film with ...")."""
FAMOUS_DIRECTOR_FILMS = 10
LEADS = 4
"""How many of a film's best known actors a ``varied`` question may name."""


_PARTICLES = frozenset({"de", "del", "della", "di", "da", "du", "la", "le", "van", "von", "der"})
_FAMILY_NAME_FIRST = frozenset(
    {
        "zhang",
        "chen",
        "hou",
        "wong",
        "kim",
        "park",
        "jia",
        "tsai",
        "hong",
        "bong",
        "wang",
        "feng",
        "tsui",
        "lou",
        "wu",
        "ang",
        "im",
        "lee",
    }
)


def _surname_last(key: str) -> bool:
    """Whether a normalised name ends in a one-word surname people would say alone: two or more words, the
    last alphabetic, no particle before it ("brian de palma"), not a family name written first ("zhang yimou").

    >>> _surname_last("alfred hitchcock"), _surname_last("brian de palma"), _surname_last("zhang yimou")
    (True, False, False)
    """
    words = key.split()
    return (
        len(words) > 1
        and words[-1].isalpha()
        and len(words[-1]) >= 4
        and words[-2] not in _PARTICLES
        and words[0] not in _FAMILY_NAME_FIRST
    )


def difficulty(constraints: int, hops: int) -> str:
    """Map the number of constraints and hops to easy / medium / hard (see the module doc)."""
    score = constraints + 2 * (hops - 1)
    return "easy" if score <= 2 else "medium" if score == 3 else "hard"


def plan_step(tool: str, **arguments: Any) -> dict[str, Any]:
    return {"tool": tool, "arguments": arguments}


def field_step(path: str, step: int = -1) -> dict[str, Any]:
    return {"op": "field", "step": step, "path": path}


def number_step(n: int) -> tuple[str, tuple[str, ...]]:
    words = number_words(n)
    return str(n), (words,) if words else ()


def role_counts(people: Mapping[str, Any]) -> dict[str, tuple[int, int, int]]:
    """Each person's ``(directed, wrote, acted)`` film counts (a cached catalog reads them without making
    a Person each)."""
    packed = getattr(people, "role_counts", None)
    if packed is not None:
        return packed()
    return {k: (len(p.directed), len(p.wrote), len(p.acted)) for k, p in people.items()}


DIRECTED, WROTE, ACTED = range(3)
"""Columns of :attr:`Context.credits`' counts."""


def _pools(
    keys: Sequence[str], credits: Mapping[str, tuple[int, int, int]]
) -> Callable[[int, int], list[str]]:
    """``having(role, at_least)``: the ``keys`` (in their order) with at least that many films in that role.

    Why: the pools are cut from ~64k people seven times; one array of their counts, compared
    column-wise, replaced seven passes that looked every person up (a tenth of a cold first run's
    question build).

    Example:
        >>> having = _pools(["a", "b", "c"], {"a": (0, 1, 5), "b": (2, 0, 4), "c": (3, 0, 9)})
        >>> having(ACTED, 5), having(DIRECTED, 1)
        (['a', 'c'], ['b', 'c'])
    """
    counts = np.array(list(map(credits.__getitem__, keys)), dtype=np.int64).reshape(-1, 3)

    def having(role: int, at_least: int) -> list[str]:
        return list(map(keys.__getitem__, np.flatnonzero(counts[:, role] >= at_least).tolist()))

    return having


class Context:
    """Read-only look-ups shared by the generators, built once per generation run."""

    def __init__(self, catalog: Catalog, style: str = "template") -> None:
        if style not in sty.STYLES:
            raise ValueError(
                f"question style must be one of {', '.join(sty.STYLES)}, got {style!r}"
            )
        self.style = style
        self.refs = sty.References(catalog) if style != "template" else None
        self.surnames: dict[str, str] = {}
        self.catalog = catalog
        self.titles = catalog.titles
        self.people = catalog.people
        self.known = [
            i for i, t in enumerate(self.titles) if (t.reviews or 0) >= KNOWN_FILM_REVIEWS
        ]
        self.seeds = self.known
        """Films whose genre and year seed a superlative (never named in the question)."""
        self.by_year: dict[int, list[int]] = {}
        for i, t in enumerate(self.titles):
            self.by_year.setdefault(t.year, []).append(i)
        self.by_genre: dict[str, set[int]] = {}
        self.features: dict[tuple[str, int], list[int]] = {}  # (genre, year) -> feature films
        for i, t in enumerate(self.titles):
            for g in t.genres:
                self.by_genre.setdefault(g, set()).add(i)
                if t.is_feature:
                    self.features.setdefault((g, t.year), []).append(i)
        self.known_by_genre: dict[str, list[int]] = {}
        for i in self.known:
            for g in self.titles[i].genres:
                self.known_by_genre.setdefault(g, []).append(i)
        people = sorted(self.people)
        self.credits = role_counts(self.people)
        """Each person's ``(directed, wrote, acted)`` film counts: how the pools below are picked."""
        having = _pools(people, self.credits)
        self.known_actors = set(having(ACTED, KNOWN_ACTOR_FILMS))
        self.actor_pool = having(ACTED, 5)
        self.director_pool = having(DIRECTED, 3)
        self.writer_pool = having(WROTE, 3)
        if style != "template":
            self._famous_pools(having)
        self._top: dict[tuple[Any, ...], int | None] = {}
        self.shorts: dict[
            tuple[str, int], list[int]
        ] = {}  # (genre, year) -> films that are no feature
        for i, t in enumerate(self.titles):
            if not t.is_feature:
                for g in t.genres:
                    self.shorts.setdefault((g, t.year), []).append(i)
        self._in_years: dict[tuple[int, int], frozenset[int]] = {}
        self.short_free: dict[tuple[Any, ...], bool] = {}
        """Memo of :func:`_no_short_tops` per superlative group and winner."""

    def _famous_pools(self, having: Callable[[int, int], list[str]]) -> None:
        """Narrow the anchor films and the people named to the :data:`FAMOUS` ones (``varied`` style only)."""
        by_decade: dict[int, list[int]] = {}
        for t in self.titles:
            by_decade.setdefault(t.year // 10, []).append(t.reviews or 0)
        floor = {d: float(np.quantile(v, 1 - FAMOUS["film_share"])) for d, v in by_decade.items()}
        self.known = [
            i
            for i in self.known
            if (self.titles[i].reviews or 0) > floor[self.titles[i].year // 10]
        ]
        self.known_by_genre = {}
        for i in self.known:
            for g in self.titles[i].genres:
                self.known_by_genre.setdefault(g, []).append(i)
        self.actor_pool = having(ACTED, FAMOUS["actor_films"])  # sorted, as the keys are
        self.known_actors = set(self.actor_pool)
        self.director_pool = having(DIRECTED, FAMOUS["director_films"])
        self.writer_pool = having(WROTE, FAMOUS["writer_films"])
        directors = having(DIRECTED, 1)
        shared = Counter(k.split()[-1] for k in directors)
        title_words = {w for t in self.titles for w in normalize_key(t.title).split()}
        self.surnames = {
            k: self.people[k].name.split()[-1]
            for k in directors
            if shared[k.split()[-1]] == 1
            and self.credits[k][0] >= FAMOUS_DIRECTOR_FILMS
            and _surname_last(k)
            and k.split()[-1] not in title_words
        }

    def director_word(self, name: str, rng: np.random.Generator) -> str | None:
        """A famous director's surname ("Hitchcock"), :data:`SURNAME_SHARE` of the times the catalog lets it
        stand for the director alone (no other director has it); else ``None`` (say the full name)."""
        surname = self.surnames.get(normalize_key(name))
        return surname if surname is not None and rng.random() < SURNAME_SHARE else None

    def casual(self, rng: np.random.Generator) -> bool:
        """Whether this draft takes a casual form: never in the ``template`` style (which draws nothing more,
        so its questions stay those of the old generator), else with probability :data:`~.question_styles.CASUAL_SHARE`."""
        return self.style != "template" and rng.random() < sty.CASUAL_SHARE

    def in_years(self, first: int, last: int) -> frozenset[int]:
        """Positions of the titles released from ``first`` to ``last`` (inclusive); each range built once,
        since the constraint questions ask for a decade on many draws (a third of generation time)."""
        found = self._in_years.get((first, last))
        if found is None:
            found = self._in_years[first, last] = frozenset(
                i for y in range(first, last + 1) for i in self.by_year.get(y, ())
            )
        return found

    def pick(self, rng: np.random.Generator, seq: Sequence[Any]) -> Any:
        """Return one element of ``seq``, drawn with ``rng``."""
        return seq[int(rng.integers(len(seq)))]

    def unique_name(self, t: Title) -> bool:
        """True when no other title shares this title's name (see :func:`title_key`)."""
        return len(self.catalog.by_title[title_key(t.title)]) == 1

    def searchable(self, t: Title) -> bool:
        """True when the title has a word that keyword search can match (not only stop-words).

        "Me and You" would be an empty BM25 query, so a question that names it
        could not be answered by searching; such films are never named.
        """
        return any(w not in ENGLISH_STOPWORDS for w in normalize_key(t.title).split())

    def name_of(self, t: Title) -> str | None:
        """How a question names ``t``: the title, plus the year if needed; ``None`` if ambiguous or unsearchable."""
        if not self.searchable(t):
            return None
        if self.unique_name(t):
            return t.title
        if len(self.catalog.find_title(t.title, t.year)) == 1:
            return f"{t.title} ({t.year})"
        return None

    def top_feature(
        self, genre: str, y0: int, y1: int, cap: int | None, sort_by: str, order: str
    ) -> int | None:
        """The unique best feature film of a genre and year range, or ``None`` if tied or too few.

        Memoised: the superlative generator draws the same groups many times.
        """
        key = (genre, y0, y1, cap, sort_by, order)
        if key in self._top:
            return self._top[key]
        group = [
            i
            for y in range(y0, y1 + 1)
            for i in self.features.get((genre, y), ())
            if cap is None or (self.titles[i].runtime or 0) <= cap - 1
        ]
        sign = 1 if order == "asc" else -1
        keyed = [
            (sign * v, i) for i in group if (v := getattr(self.titles[i], sort_by)) is not None
        ]
        result = None
        if len(group) >= 3 and keyed:
            best = min(keyed)
            if sum(k == best[0] for k, _ in keyed) == 1:  # a tie at the top has no unique answer
                result = best[1]
        self._top[key] = result
        return result

    def known_cast(self, t: Title) -> list[str]:
        """The cast members of ``t`` that are well enough known to be named in a question; in the ``varied``
        style only its :data:`LEADS` best known (by acting credits: the catalog's cast has no billing order,
        and people name a film's stars, not its supporting cast), in cast order."""
        known = [c for c in t.cast if normalize_key(c) in self.known_actors]
        if self.style == "template" or len(known) <= LEADS:
            return known
        stars = set(
            sorted(known, key=lambda c: (-len(self.people[normalize_key(c)].acted), c))[:LEADS]
        )
        return [c for c in known if c in stars]

    def films(self, name: str, role: str) -> set[int]:
        """Positions of the films where ``name`` has ``role`` (directed / wrote / acted)."""
        return set(getattr(self.people[normalize_key(name)], role))

    def title_answer(self, t: Title) -> tuple[str, tuple[str, ...]]:
        """The answer and aliases of a title answer: the id and "Title (Year)" are accepted too."""
        return t.title, (t.id, f"{t.title} ({t.year})")
