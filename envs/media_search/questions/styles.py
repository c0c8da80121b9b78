"""Casual surface forms of the generated MediaSearch questions: how people ask, not how a template does.

Why: with a handful of template phrasings per kind, a baseline can learn the
templates instead of the task (issue 30: a keyword agent scored 3-10x more on
generated than on hand-written questions). In the default ``varied`` style,
each generator draws, with its own seeded RNG, a casual form for most
questions (:data:`CASUAL_SHARE`): one of many phrasings per kind and field
(questions, commands, asides, informal register), the plainest one most often
(:data:`PLAIN_SHARE`: people mostly type "who directed X"), lower case, no final
question mark, and a seeded rate of typos in the phrasing's own words. A named
film may be referred to by a partial title or by a description built from the
catalog's own fields (year, genre, a cast member, the director); the
generators keep such a reference only when the catalog proves it picks out
that one film (:class:`References`). Films and people are those people ask
about (the best reviewed of each decade, actors with many credits, a famous
director by surname; see ``question_kinds.FAMOUS``), genres only those people
name (:data:`SAYABLE_GENRES`), and no runtime bounds in descriptions. The
``template`` style is the old behaviour: the same draws, the same questions,
bit for bit.

What the ``varied`` forms were checked against: the out-of-fold classifier of
``agentenv data shift-check`` (``benchmarks/question_diversity.py``) reading the
first 111 hand-written casual questions only; its most telling n-grams were
generator habits (uniform draws over rare phrasings, "starring", "drama",
runtime caps, "(2001)" after titles, obscure films and actors), each fixed here
at its cause. The later 130 casual questions were never read while tuning.

Typos touch only the phrasing's words, never a title or a name, so every
question keeps exactly one answer that the tools can reach. Placeholders are
those of :mod:`agentenv.envs.media_search.questions.templates`, plus
``{ref}`` (how a film is referred to) and ``{decade}``.

Example:
    >>> import numpy as np
    >>> typo("directed", np.random.default_rng(1)) != "directed"
    True
    >>> decade_words(1990, 1999), decade_words(1990, 1994)
    ('the 90s', None)
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from agentenv.corpora.media.catalog import Catalog, normalize_key
from agentenv.retrieval.tokenize import ENGLISH_STOPWORDS

STYLES = ("varied", "template")
"""Question styles: ``varied`` (the default: mostly casual forms) and ``template`` (the old phrasings only)."""
CASUAL_SHARE = 0.9
"""Share of questions drawn in a casual form in the ``varied`` style (the rest keep a template phrasing)."""
LOWER_SHARE = 0.9
"""Share of casual questions written all in lower case (names and titles included)."""
NO_MARK_SHARE = 0.6
"""Share of casual questions without their final question mark."""
TYPO_SHARE = 0.1
"""Share of casual questions with one typo in a word of the phrasing."""
REFERENCE_SHARES = (0.45, 0.25, 0.30)
"""How a casual lookup refers to its film: by title, by a partial title, by a description."""
ASIDE_SHARE = 0.3
"""Share of casual title references followed by an aside from the film's own fields ("heat, the 1995 one")."""
PLAIN_SHARE = 0.2
"""Share of casual questions of each kind and field asked in its plainest form, the first phrasing of its
list ("who directed {ref}"): people mostly ask the plain way, and a uniform draw over many phrasings
makes rare forms ("anyone know ...", "number of ...") as common as the plain one."""
ASIDES = {
    "year": ["{ref}, the {year} one", "{ref} from {year}"],
    "cast": ["{ref}, the one with {actor}", "{ref} with {actor}"],
    "director": ["{ref}, the {director} movie", "{director}'s {ref}"],
}
"""Asides people add to a title; each adds only a true fact of the film, so the answer stays the same."""

LOOKUP = {
    "director": [
        "who directed {ref}",
        "who directed {ref}?",
        "who was the director of {ref}?",
        "{ref} - who directed it?",
        "{ref} director?",
        "tell me who directed {ref}",
        "i forgot who directed {ref}",
        "who made {ref}? the director i mean",
        "quick one: who's the director of {ref}?",
        "who's the director of {ref}",
        "{ref}, who directed that",
        "director of {ref}?",
        "{ref}: who directed it",
        "{ref} - director?",
    ],
    "writer": [
        "who wrote {ref}",
        "who wrote {ref}?",
        "who wrote the screenplay for {ref}?",
        "{ref} - who wrote it?",
        "tell me who wrote {ref}",
        "who did the script for {ref}",
        "{ref} was written by who?",
        "who's the writer of {ref}",
        "{ref} writer?",
        "{ref}: who wrote the script?",
    ],
    "year": [
        "what year did {ref} come out",
        "when was {ref} released?",
        "{ref} came out in what year?",
        "what year was {ref}",
        "when did {ref} come out",
        "{ref}, what year was that?",
        "what year is {ref} from",
        "what year was {ref} released",
        "{ref} - what year?",
        "{ref} release year?",
    ],
    "runtime": [
        "how long is {ref}",
        "how many minutes is {ref}?",
        "{ref} runtime?",
        "how long does {ref} run",
        "what's the runtime of {ref}",
        "{ref}, how long is it?",
        "how long is {ref} in minutes",
        "{ref} - how many minutes?",
    ],
    "cast": [
        "was {a} or {b} in {ref}?",
        "who's in {ref}, {a} or {b}?",
        "is it {a} or {b} in {ref}",
        "in {ref}, was it {a} or {b}?",
        "which one was in {ref}, {a} or {b}",
    ],
}
"""Casual phrasings of a lookup, per field (the plainest first); ``{ref}`` is the film's title, partial title
or description."""

LOOKUP_FIELD_WEIGHTS = {"director": 0.35, "writer": 0.2, "year": 0.2, "runtime": 0.15, "cast": 0.1}
"""How often a varied lookup asks each field (renormalised over the fields a film allows): people ask who
directed a film far more often than which of two actors is in it (the template style draws them evenly)."""

DESCRIPTIONS = {
    ("year", "cast"): [
        "that {year} movie with {actor}",
        "the {year} film {actor} was in",
        "the movie {actor} made in {year}",
        "the {year} one with {actor}",
    ],
    ("year", "genre", "cast"): [
        "that {year} {genre} movie with {actor}",
        "the {genre} film {actor} did in {year}",
        "the {year} {genre} one with {actor}",
    ],
    ("year", "director"): [
        "{director}'s {year} film",
        "the movie {director} directed in {year}",
        "the {year} {director} movie",
    ],
    ("cast", "director"): [
        "the {director} movie with {actor}",
        "that {director} film with {actor} in it",
        "the {director} one with {actor}",
    ],
}
"""Descriptions that stand for a film's title, keyed by the catalog fields they name."""

CONSTRAINT = [
    "what's the {desc}",
    "what's that {desc} called",
    "what was the {desc} called",
    "name of the {desc}?",
    "the {desc}, what's it called?",
    "what was that {desc}",
    "looking for the {desc}",
    "title of the {desc}?",
    "the {desc} - what was it called",
    "that {desc}, what was it called?",
]
"""Casual phrasings of a constraint question; ``{desc}`` is e.g. "1995 spielberg comedy with X"."""

SUPERLATIVE = {
    ("rating", "desc"): [
        "best rated {desc}?",
        "what's the highest rated {desc}",
        "top rated {desc}",
        "which {desc} did the critics like most?",
        "the best reviewed {desc}?",
        "best {desc} according to critics?",
    ],
    ("rating", "asc"): [
        "worst rated {desc}?",
        "what's the lowest rated {desc}",
        "worst reviewed {desc}",
        "which {desc} did critics like least?",
        "the {desc} critics hated most?",
    ],
    ("runtime", "desc"): [
        "longest {desc}?",
        "what's the longest {desc}",
        "which {desc} runs the longest",
        "the longest {desc}, which one?",
    ],
    ("runtime", "asc"): [
        "shortest {desc}?",
        "what's the shortest {desc}",
        "which {desc} is the shortest",
        "the shortest {desc}, which one?",
    ],
}
"""Casual phrasings of a superlative; ``{desc}`` is e.g. "horror movie from 1980" or "comedy of the 90s"."""

TWO_HOP = {
    "director": [
        "who directed the {movie} with {a} and {b}",
        "who directed the {movie} with {a} and {b}?",
        "the {movie} with both {a} and {b}, who directed that?",
        "who directed the {movie} {a} and {b} were in",
        "{a} and {b} made a movie together - who directed it?",
        "director of the {movie} with {a} and {b}?",
    ],
    "writer": [
        "who wrote the {movie} with {a} and {b}",
        "who wrote the {movie} {a} and {b} were in?",
        "the {movie} with both {a} and {b} - who wrote it?",
        "{a} and {b} were in a movie together, who wrote it?",
    ],
    "year": [
        "what year did the movie with {a} and {b} come out",
        "when did the film with {a} and {b} come out?",
        "{a} and {b} were in a movie together, what year was it?",
        "what year is the movie with {a} and {b} from",
    ],
}
"""Casual phrasings of a two-hop question: find the one film two actors share, then read its field. ``{movie}``
is "movie", "film" or, for a director or writer, "1990 movie" (a true fact of the film; it changes no answer)."""

COMPARISON = {
    "year": [
        "which came out first, {a} or {b}",
        "which is older, {a} or {b}",
        "{a} or {b}, which came out first?",
        "was {a} or {b} released first?",
        "which one's older: {a} or {b}",
        "{a} or {b} - which is older?",
    ],
    "runtime": [
        "which is longer, {a} or {b}",
        "which one's longer, {a} or {b}?",
        "which runs longer: {a} or {b}",
        "{a} or {b} - which is longer?",
        "{a} or {b}, which one's longer?",
    ],
    "rating": [
        "did critics like {a} or {b} more",
        "which got better reviews, {a} or {b}",
        "which did critics rate higher: {a} or {b}?",
        "{a} or {b}, which has the better reviews?",
        "{a} or {b} - which did critics like more?",
    ],
}
"""Casual phrasings of a comparison of two named films."""

COUNT = {
    "directed": [
        "how many movies did {person} direct between {y0} and {y1}",
        "how many films did {person} direct from {y0} to {y1}?",
        "how many films did {person} make between {y0} and {y1}",
    ],
    "directed_decade": [
        "how many films did {person} direct in {decade}",
        "how many movies did {person} make in {decade}?",
        "how many movies did {person} direct in {decade}",
    ],
    "acted": [
        "how many {genres} has {person} been in",
        "how many {genres} did {person} act in?",
        "how many {genres} is {person} in",
        "count the {genres} with {person}",
    ],
    "wrote": [
        "how many films has {person} written",
        "how many movies did {person} write?",
        "how many screenplays has {person} written",
        "how many films did {person} write",
    ],
}
"""Casual phrasings of a count question; ``{genres}`` is a plural ("comedies", "horror movies")."""

SAYABLE_GENRES = frozenset(
    {
        "Action",
        "Animation",
        "Comedy",
        "Documentary",
        "Fantasy",
        "Horror",
        "Musical",
        "Sci-Fi",
        "Sport",
        "War",
        "Western",
    }
)
"""Genres people name when they describe a film or a group ("the spielberg sci-fi movie", "best western of
1955"). Nearly every film is a drama, a romance or a thriller by the catalog's tags, and nobody
describes one that way; a varied question names only these genres."""

_DECADES = {
    1940: "the 40s",
    1950: "the 50s",
    1960: "the 60s",
    1970: "the 70s",
    1980: "the 80s",
    1990: "the 90s",
    2000: "the 2000s",
    2010: "the 2010s",
}
_PLACEHOLDER = re.compile(r"\{[a-z0-9_]+\}")


_CAPS = {
    90: ("under an hour and a half", "under 90 minutes"),
    100: ("under 100 minutes", "shorter than 100 minutes"),
    120: ("under two hours", "under 2 hours", "shorter than two hours"),
}


def runtime_cap(cap: int, rng: np.random.Generator) -> str:
    """How people say a runtime cap: "under two hours" for 120 minutes, "under an hour and a half" for 90."""
    return pick(rng, _CAPS.get(cap, (f"under {cap} minutes",)))


def decade_words(y0: int, y1: int) -> str | None:
    """How people say a decade ("the 90s"), when ``y0..y1`` is one; else ``None``."""
    if y0 % 10 == 0 and y1 == y0 + 9:
        return _DECADES.get(y0, f"the {y0}s")
    return None


def typo(word: str, rng: np.random.Generator) -> str:
    """One slip of the keyboard in a word: two neighbouring letters swapped, or one letter dropped or doubled."""
    if len(word) < 4:
        return word
    i = int(rng.integers(1, len(word) - 1))
    roll = rng.random()
    if roll < 0.4:
        return word[: i - 1] + word[i] + word[i - 1] + word[i + 1 :]
    if roll < 0.7:
        return word[:i] + word[i + 1 :]
    return word[:i] + word[i] + word[i:]


def casualise(frame: str, values: dict[str, Any], rng: np.random.Generator) -> str:
    """Fill a casual phrasing: maybe one typo in the phrasing's own words, then the values, then the register.

    The typo is drawn among the frame's words of five or more letters (never
    inside a placeholder, so titles and names stay exact); the whole text is
    then lower-cased (:data:`LOWER_SHARE`) and may lose its final "?".
    """
    if rng.random() < TYPO_SHARE:
        words = [
            m
            for m in re.finditer(
                r"[a-z]{5,}", _PLACEHOLDER.sub(lambda m: " " * len(m.group(0)), frame)
            )
        ]
        if words:
            m = words[int(rng.integers(len(words)))]
            frame = frame[: m.start()] + typo(m.group(0), rng) + frame[m.end() :]
    text = frame.format(**values)
    text = " ".join(text.split()).replace(" ?", "?").replace(" ,", ",")
    if rng.random() < LOWER_SHARE:
        text = text.lower()
    if text.endswith("?") and rng.random() < NO_MARK_SHARE:
        text = text[:-1]
    return text


ARTICLE_DROP_SHARE = 0.3
"""Share of casual title references written without their leading "The"/"A"/"An" (a title is only named when
no other film shares it without the article, so the reference stays unique)."""


def casual_title(title: str, rng: np.random.Generator) -> str:
    """A title as people type it: sometimes without its leading article ("godfather" for *The Godfather*)."""
    if rng.random() < ARTICLE_DROP_SHARE:
        for article in ("The ", "A ", "An "):
            if title.startswith(article) and len(title) > len(article) + 3:
                return title[len(article) :]
    return title


_CASUAL_GENRES = {
    "Sci-Fi": "sci-fi",
    "Animation": "animated",
    "Biography": "biopic",
    "History": "historical",
    "Sport": "sports",
}
_GENRE_NOUNS = {
    "Comedy": ("comedy", "comedies"),
    "Western": ("western", "westerns"),
    "Musical": ("musical", "musicals"),
    "Documentary": ("documentary", "documentaries"),
}


def casual_genre(genre: str) -> str:
    """How people write a genre before "movie": "sci-fi", "animated", "biopic", else the genre in lower case."""
    return _CASUAL_GENRES.get(genre, genre.lower())


def genre_group(genre: str, rng: np.random.Generator, plural: bool = False) -> str:
    """A genre's films as people name them: "comedy" / "comedies" (genres that are nouns, half the time),
    else "horror movie" / "horror movies", "sci-fi film" / "sci-fi films".

    >>> genre_group("Horror", np.random.default_rng(0), plural=True), genre_group("War", np.random.default_rng(1))
    ('horror films', 'war movie')
    """
    nouns = _GENRE_NOUNS.get(genre)
    if nouns is not None and rng.random() < 0.5:
        return nouns[plural]
    noun = pick(rng, ("movie", "movie", "film"))
    return f"{casual_genre(genre)} {noun}{'s' if plural else ''}"


def with_aside(
    ref: str, t: Any, asked: str, rng: np.random.Generator, known_cast: Sequence[str]
) -> str:
    """``ref`` with an aside from the film's fields (:data:`ASIDES`), never the field asked for; or ``ref``."""
    if rng.random() >= ASIDE_SHARE:
        return ref
    fields = [
        f
        for f in ASIDES
        if f != asked and (f != "cast" or known_cast) and (f != "director" or len(t.directors) == 1)
    ]
    if not fields:
        return ref
    field = pick(rng, fields)
    return pick(rng, ASIDES[field]).format(
        ref=ref,
        year=t.year,
        actor=pick(rng, known_cast) if field == "cast" else "",
        director=t.directors[0] if field == "director" else "",
    )


def aside_fits(phrasing: str) -> bool:
    """Whether a phrasing has its film at its start or end, where an aside reads naturally ("who directed
    heat, the 1995 one"; not "what year did heat, the 1995 one come out").

    >>> aside_fits("who directed {ref}?"), aside_fits("when did {ref} come out")
    (True, False)
    """
    return phrasing.startswith("{ref}") or phrasing.rstrip("?").endswith("{ref}")


def dated(title: str, year: int, rng: np.random.Generator) -> str:
    """A title that several films share, with its year as people add it: "heist (2001)" or "heist from 2001"."""
    return pick(rng, (f"{title} ({year})", f"{title} from {year}"))


def pick(rng: np.random.Generator, options: Sequence[Any]) -> Any:
    """One of ``options``, drawn with ``rng``."""
    return options[int(rng.integers(len(options)))]


def frame(rng: np.random.Generator, frames: Sequence[str]) -> str:
    """A casual phrasing: the plainest (the first) with probability :data:`PLAIN_SHARE`, else any of them."""
    return frames[0] if rng.random() < PLAIN_SHARE else pick(rng, frames)


class References:
    """Ways to name a film other than its title, each kept only when the catalog proves it names that film alone.

    Why a class: a partial title is proven unique through a word index of
    every title (built once per generation, not per draw).
    """

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self.keys = [normalize_key(t.title) for t in catalog.titles]
        self.by_word: dict[str, set[int]] = {}
        for i, key in enumerate(self.keys):
            for word in set(key.split()):
                self.by_word.setdefault(word, set()).add(i)

    def partial_title(self, pos: int, rng: np.random.Generator) -> str | None:
        """A run of the title's words, shorter than the title, that no other title contains as whole words.

        The run starts and ends with a searchable word of four or more letters,
        and is written as the title writes it (case and punctuation kept).
        """
        title = self.catalog.titles[pos].title
        words = title.split()
        if len(words) < 2:
            return None
        runs = [
            (i, j)
            for i in range(len(words))
            for j in range(i + 1, len(words) + 1)
            if j - i < len(words) and self._searchable(words[i]) and self._searchable(words[j - 1])
        ]
        if not runs:
            return None
        i, j = runs[int(rng.integers(len(runs)))]
        phrase = " ".join(words[i:j]).strip(" ,:;-–")
        key = normalize_key(phrase)
        if not key:
            return None
        candidates = set.intersection(*(self.by_word.get(w, set()) for w in key.split()))
        if {c for c in candidates if f" {key} " in f" {self.keys[c]} "} != {pos}:
            return None
        return phrase

    @staticmethod
    def _searchable(word: str) -> bool:
        key = normalize_key(word)
        return len(key) >= 4 and key not in ENGLISH_STOPWORDS and key.isalpha()


def describe(
    ctx: Any, pos: int, rng: np.random.Generator, asked: str = ""
) -> tuple[str, dict[str, Any]] | None:
    """A description of the film at ``pos`` from its catalog fields, and the ``filter_titles`` arguments that
    prove it: kept only when exactly that film matches (else ``None``; the caller names the film instead).

    ``ctx`` is the generators' :class:`~agentenv.envs.media_search.questions.kinds.Context`.
    """
    t = ctx.titles[pos]
    cast = ctx.known_cast(t)
    shape = pick(rng, sorted(DESCRIPTIONS))
    if {"year": "year", "director": "director", "cast": "cast"}.get(asked) in shape:
        return None  # a description never gives away the field the question asks for
    actor = pick(rng, cast) if cast else None
    director = t.directors[0] if len(t.directors) == 1 else None
    sayable = [g for g in t.genres if g in SAYABLE_GENRES]
    genre = pick(rng, sayable) if sayable else None
    args: dict[str, Any] = {}
    sets: list[Any] = []
    if "year" in shape:
        args["year_min"] = args["year_max"] = t.year
        sets.append(ctx.by_year.get(t.year, ()))
    if "cast" in shape:
        if actor is None:
            return None
        args["cast"] = [actor]
        sets.append(ctx.films(actor, "acted"))
    if "director" in shape:
        if director is None:
            return None
        args["director"] = director
        sets.append(ctx.films(director, "directed"))
    if "genre" in shape:
        if genre is None:
            return None
        args["genre"] = genre
        sets.append(ctx.by_genre[genre])
    sets.sort(key=len)
    found = set(sets[0]).intersection(*sets[1:])
    if found != {pos}:
        return None
    text = pick(rng, DESCRIPTIONS[shape]).format(
        year=t.year, actor=actor, director=director, genre=casual_genre(genre) if genre else ""
    )
    return text, {k: args[k] for k in sorted(args)}
