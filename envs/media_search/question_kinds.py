"""Question generators, one per kind, each proving its answer unique.

Every generator draws one candidate with the caller's ``numpy`` Generator and
returns a :class:`Draft`, or ``None`` when the candidate is ambiguous (two
films match, a tie at the top, a film whose name is not unique, a film with
two directors when "the director" is asked...). Ambiguous candidates are
dropped, never repaired, so each answer is the only one the catalog allows.

Uniqueness is checked here with plain Python sets over the catalog's person,
year and genre indexes, not with the numpy index behind ``filter_titles``; the
tests then run every gold plan through the real tools, so the two
implementations check each other.

Difficulty: ``score = constraints + 2 × (hops − 1)``, where *constraints* are
the conditions the answer must meet (film named, actors, genre, year range,
ordering...) and *hops* the entities resolved in sequence; ``easy`` ≤ 2,
``medium`` = 3, ``hard`` ≥ 4. For example, a lookup is (1, 1) → easy, a
comparison (1, 2) → medium, a two-hop (2, 2) → hard.

Example:
    >>> difficulty(1, 1), difficulty(3, 1), difficulty(2, 2)
    ('easy', 'medium', 'hard')
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from agentenv.corpora.media import Catalog, Title, normalize_key, title_key
from agentenv.envs.media_search import question_styles as sty
from agentenv.envs.media_search import question_templates as tpl
from agentenv.envs.media_search.grading import number_words
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


def _step(tool: str, **arguments: Any) -> dict[str, Any]:
    return {"tool": tool, "arguments": arguments}


def _field(path: str, step: int = -1) -> dict[str, Any]:
    return {"op": "field", "step": step, "path": path}


def _number(n: int) -> tuple[str, tuple[str, ...]]:
    words = number_words(n)
    return str(n), (words,) if words else ()


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
        self.known_actors = {k for k in people if len(self.people[k].acted) >= KNOWN_ACTOR_FILMS}
        self.actor_pool = [k for k in people if len(self.people[k].acted) >= 5]
        self.director_pool = [k for k in people if len(self.people[k].directed) >= 3]
        self.writer_pool = [k for k in people if len(self.people[k].wrote) >= 3]
        if style != "template":
            self._famous_pools(people)
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

    def _famous_pools(self, people: Sequence[str]) -> None:
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
        self.known_actors = {
            k for k in people if len(self.people[k].acted) >= FAMOUS["actor_films"]
        }
        self.actor_pool = sorted(self.known_actors)
        self.director_pool = [
            k for k in people if len(self.people[k].directed) >= FAMOUS["director_films"]
        ]
        self.writer_pool = [
            k for k in people if len(self.people[k].wrote) >= FAMOUS["writer_films"]
        ]
        directors = [k for k in people if self.people[k].directed]
        shared = Counter(k.split()[-1] for k in directors)
        title_words = {w for t in self.titles for w in normalize_key(t.title).split()}
        self.surnames = {
            k: self.people[k].name.split()[-1]
            for k in directors
            if shared[k.split()[-1]] == 1
            and len(self.people[k].directed) >= FAMOUS_DIRECTOR_FILMS
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


def lookup(ctx: Context, rng: np.random.Generator) -> Draft | None:
    """One fact of a named film: director, writer, year, runtime or which actor is in it."""
    pos = ctx.pick(rng, ctx.known)
    t = ctx.titles[pos]
    name = ctx.name_of(t)
    if name is None:
        return None
    options = [
        v
        for v, ok in (
            ("director", len(t.directors) == 1),
            ("writer", len(t.writers) == 1),
            ("year", ctx.unique_name(t)),
            ("runtime", (t.runtime or 0) >= 40),
            ("cast", bool(ctx.known_cast(t))),
        )
        if ok
    ]
    if not options:
        return None
    if ctx.style == "template":
        variant = ctx.pick(rng, options)
    else:  # "who directed X" is the commonest question about a film, "was A or B in X" a rare one
        weights = np.array([sty.LOOKUP_FIELD_WEIGHTS[v] for v in options])
        variant = options[int(rng.choice(len(options), p=weights / weights.sum()))]
    template = ctx.pick(rng, tpl.LOOKUP[variant])
    plan: tuple[dict[str, Any], ...] = (
        _step("search", query=name, k=5),
        _step("get_title", title_id=t.id),
    )
    constraints = 1
    if variant == "director":
        answer, aliases, kind, extract = t.directors[0], (), "person", _field("directors.0")
    elif variant == "writer":
        answer, aliases, kind, extract = t.writers[0], (), "person", _field("writers.0")
    elif variant == "year":
        answer, aliases, kind, extract = str(t.year), (), "year", _field("year")
    elif variant == "runtime":
        answer, aliases = _number(int(t.runtime or 0))
        kind, extract = "number", _field("runtime")
    else:
        inside = ctx.pick(rng, ctx.known_cast(t))
        cast_keys = {normalize_key(c) for c in t.cast}
        outside = ctx.people[ctx.pick(rng, ctx.actor_pool)].name
        if normalize_key(outside) in cast_keys:
            return None
        options_ab = [inside, outside] if rng.random() < 0.5 else [outside, inside]
        answer, aliases, kind = inside, (), "person"
        extract = {"op": "member", "step": -1, "path": "cast", "options": options_ab}
        constraints = 2
    a, b = extract.get("options", ("", ""))
    text = template.format(film=name, a=a, b=b)
    hops = 1
    if ctx.casual(rng):
        phrasing = sty.frame(rng, sty.LOOKUP[variant])
        ref, plan, extra = _reference(ctx, pos, name, variant, plan, rng, sty.aside_fits(phrasing))
        text = sty.casualise(phrasing, {"ref": ref, "a": a, "b": b}, rng)
        constraints, hops = constraints + extra, 1 + (extra > 0)
    return Draft(
        "lookup",
        text,
        answer,
        aliases,
        kind,
        difficulty(constraints, hops),
        plan,
        extract,
        t.id,
        f"lookup|{t.id}|{variant}",
    )


def _reference(
    ctx: Context,
    pos: int,
    name: str,
    variant: str,
    plan: tuple[dict[str, Any], ...],
    rng: np.random.Generator,
    aside: bool = True,
) -> tuple[str, tuple[dict[str, Any], ...], int]:
    """How a casual lookup names its film, the plan that reaches it, and the constraints the reference adds.

    By title, by a partial title (searched for), or by a description from the
    catalog's fields (a ``filter_titles`` that matches that film alone);
    whichever the catalog cannot prove unique falls back to the title. A cast
    question never describes its film by a cast member. An aside ("heat, the 1995 one") is added only where
    ``aside`` says the phrasing has the film at its start or end, never mid-sentence.
    """
    t = ctx.titles[pos]
    roll = rng.random()
    share_title, share_partial, _ = sty.REFERENCE_SHARES
    if roll >= share_title + share_partial and variant != "cast" and ctx.refs is not None:
        described = sty.describe(ctx, pos, rng, variant)
        if described is not None:
            text, args = described
            return (
                text,
                (_step("filter_titles", **args, limit=5), _step("get_title", title_id=t.id)),
                len(args) - 1,
            )
    elif roll >= share_title and ctx.refs is not None:
        partial = ctx.refs.partial_title(pos, rng)
        if partial is not None:
            ref = partial
            if aside:
                ref = sty.with_aside(
                    partial, t, variant, rng, ctx.known_cast(t) if variant != "cast" else []
                )
            return ref, (_step("search", query=partial, k=5), _step("get_title", title_id=t.id)), 0
    if (
        name != t.title
    ):  # a shared title with its year: "heist from 2001" as often as "heist (2001)"
        return sty.dated(sty.casual_title(t.title, rng), t.year, rng), plan, 0
    ref = sty.casual_title(name, rng)
    if not aside:
        return ref, plan, 0
    return (
        sty.with_aside(ref, t, variant, rng, ctx.known_cast(t) if variant != "cast" else []),
        plan,
        0,
    )


def constraint(ctx: Context, rng: np.random.Generator) -> Draft | None:
    """The one film meeting 2-4 facts (year or decade, genre, director, actors, runtime bound)."""
    pos = ctx.pick(rng, ctx.known)
    t = ctx.titles[pos]
    cast = ctx.known_cast(t)
    parts = ["time", "genre", "director", "cast", "cast", "runtime"]
    genres = t.genres
    if (
        ctx.style != "template"
    ):  # people describe a film by what they remember: no runtime, no "drama"
        parts, genres = parts[:-1], tuple(g for g in t.genres if g in sty.SAYABLE_GENRES)
    order = [parts[i] for i in rng.permutation(len(parts))]
    order.sort(key=lambda p: p == "runtime")  # a runtime bound only ever narrows what is there
    chosen: dict[str, Any] = {}
    matching: set[int] | None = None
    for part in order:
        if matching is not None and len(matching) == 1 and len(chosen) >= 2:
            break
        if len(chosen) >= 4:
            return None
        if part == "time":
            if rng.random() < 0.6:
                chosen["year_min"] = chosen["year_max"] = t.year
            else:
                chosen["year_min"], chosen["year_max"] = (
                    t.year - t.year % 10,
                    t.year - t.year % 10 + 9,
                )
            found = ctx.in_years(chosen["year_min"], chosen["year_max"])
        elif part == "genre" and genres:
            chosen["genre"] = ctx.pick(rng, genres)
            found = ctx.by_genre[chosen["genre"]]
        elif part == "director" and t.directors:
            chosen["director"] = ctx.pick(rng, t.directors)
            found = ctx.films(chosen["director"], "directed")
        elif part == "cast" and cast:
            name = cast.pop(int(rng.integers(len(cast))))
            chosen.setdefault("cast", []).append(name)
            found = ctx.films(name, "acted")
        elif part == "runtime" and t.runtime is not None and matching is not None:
            if rng.random() < 0.5:
                chosen["runtime_max"] = t.runtime - t.runtime % 10 + 9
            else:
                chosen["runtime_min"] = t.runtime - t.runtime % 10
            lo, hi = chosen.get("runtime_min", 0), chosen.get("runtime_max", 10_000)
            found = {i for i in matching if lo <= (ctx.titles[i].runtime or -1) <= hi}
        else:
            continue
        matching = found if matching is None else matching & found
    if matching != {pos} or len(chosen) < 2:
        return None
    desc, clauses = _describe(chosen)
    text = ctx.pick(rng, tpl.CONSTRAINT).format(desc=desc, clauses=clauses)
    text = (
        text.replace(" ?", "?").replace(" .", ".").replace("  ", " ")
    )  # when there are no clauses
    args = {k: chosen[k] for k in sorted(chosen)}
    plan: tuple[dict[str, Any], ...] = (_step("filter_titles", **args),)
    if ctx.casual(rng):
        surname = ctx.director_word(chosen["director"], rng) if "director" in chosen else None
        text = sty.casualise(
            sty.frame(rng, sty.CONSTRAINT), {"desc": _casual_description(chosen, rng, surname)}, rng
        )
        if surname is not None:  # the director's full name is found first
            plan = (_step("find_person", name=surname), *plan)
    answer, aliases = ctx.title_answer(t)
    n = len(chosen) + len(chosen.get("cast", ())) - ("cast" in chosen)
    return Draft(
        "constraint",
        text,
        answer,
        aliases,
        "title",
        difficulty(n, 1),
        plan,
        {"op": "only", "step": -1, "field": "title"},
        t.id,
        f"constraint|{sorted(args.items())}",
    )


def _describe(c: dict[str, Any]) -> tuple[str, str]:
    """Return the noun phrase and the trailing clauses of a constraint question."""
    adjective = f"{tpl.genre_adjective(c['genre'])} " if "genre" in c else ""
    exact_year = "year_min" in c and c["year_min"] == c["year_max"]
    desc = f"{c['year_min']} {adjective}film" if exact_year else f"{adjective}film"
    if "year_min" in c and not exact_year:
        desc += f" from the {c['year_min']}s"
    clauses = []
    if "director" in c:
        clauses.append(f"directed by {c['director']}")
    if "cast" in c:
        clauses.append("starring " + " and ".join(c["cast"]))
    if "runtime_max" in c:
        clauses.append(f"running under {c['runtime_max'] + 1} minutes")
    if "runtime_min" in c:
        clauses.append(f"running at least {c['runtime_min']} minutes")
    if len(clauses) <= 1:
        return desc, "".join(clauses)
    return desc, ", ".join(clauses[:-1]) + " and " + clauses[-1]


def _casual_description(
    c: dict[str, Any], rng: np.random.Generator, surname: str | None = None
) -> str:
    """A constraint question's film as people describe it: "1995 spielberg comedy with A and B" (the
    director by ``surname`` when given)."""
    group = (
        sty.genre_group(c["genre"], rng)
        if "genre" in c
        else sty.pick(rng, ("movie", "movie", "film", "one"))
    )
    year = ""
    if "year_min" in c and c["year_min"] == c["year_max"]:
        year = f"{c['year_min']} "
    tail = (
        f" from {sty.decade_words(c['year_min'], c['year_max'])}"
        if "year_min" in c and not year
        else ""
    )
    head = f"{year}{group}"
    if "director" in c:
        form = rng.random()
        if surname is not None:
            head = f"{year}{surname} {group}"
        elif form < 0.6:
            head = f"{year}{c['director']} {group}"
        else:
            tail += f" by {c['director']}" if form < 0.85 else f" directed by {c['director']}"
    parts = [head + tail]
    cast = c.get("cast", [])
    if len(cast) > 1 and rng.random() < 0.15:
        parts.append(f"where {' and '.join(cast)} are both in it")
    elif cast:
        parts.append(
            sty.pick(rng, ("with", "with", "with", "with", "starring")) + " " + " and ".join(cast)
        )
    if "runtime_max" in c:
        parts.append(f"under {c['runtime_max'] + 1} minutes")
    if "runtime_min" in c:
        parts.append(f"at least {c['runtime_min']} minutes long")
    return " ".join(parts)


def _no_short_tops(
    ctx: Context,
    winner: int,
    genre: str,
    y0: int,
    y1: int,
    cap: int | None,
    sort_by: str,
    order: str,
) -> bool:
    """True when no film shorter than a feature (or of unknown runtime) in the group ties or beats the winner,
    so the winner is the one answer over *all* films, shorts too. Only the few short films are scanned."""
    sign = 1 if order == "asc" else -1
    best = sign * getattr(ctx.titles[winner], sort_by)
    for y in range(y0, y1 + 1):
        for i in ctx.shorts.get((genre, y), ()):
            t = ctx.titles[i]
            value = getattr(t, sort_by)
            if value is None or (cap is not None and (t.runtime is None or t.runtime > cap - 1)):
                continue
            if sign * value <= best:
                return False
    return True


def superlative(ctx: Context, rng: np.random.Generator) -> Draft | None:
    """The highest/lowest-rated or longest/shortest feature of a genre in a year or decade."""
    seed = ctx.titles[ctx.pick(rng, ctx.seeds)]  # the seed is never named: any known film will do
    if not seed.genres:
        return None
    if ctx.style == "template":
        genre = ctx.pick(rng, seed.genres)
    else:  # a genre people name where the film has one ("best western of 1955", not "best drama")
        genre = ctx.pick(rng, [g for g in seed.genres if g in sty.SAYABLE_GENRES] or seed.genres)
    decade = rng.random() < 0.4
    y0, y1 = (
        (seed.year - seed.year % 10, seed.year - seed.year % 10 + 9)
        if decade
        else (seed.year, seed.year)
    )
    sort_by, order = ctx.pick(rng, list(tpl.SUPERLATIVE))
    cap = (
        int(ctx.pick(rng, (90, 100, 120))) if sort_by == "rating" and rng.random() < 0.35 else None
    )
    if ctx.style != "template":
        cap = None  # people do not add a runtime cap to "the best rated comedy of 1995"
    found = ctx.top_feature(genre, y0, y1, cap, sort_by, order)
    if found is None:
        return None
    winner = ctx.titles[found]
    adjective = tpl.genre_adjective(genre)
    when = (f"{y0} ", "") if not decade else ("", f" from the {y0}s")
    limit = f" running under {cap} minutes" if cap else ""
    desc = f"{when[0]}{adjective} feature film{when[1]}{limit}"
    descs = f"{when[0]}{adjective} feature films{when[1]}{limit}"
    text = ctx.pick(rng, tpl.SUPERLATIVE[(sort_by, order)]).format(desc=desc, descs=descs)
    if ctx.casual(rng):
        # "movie" only where no short film would top the group: else the question keeps "feature"
        key = (
            found,
            genre,
            y0,
            y1,
            cap,
            sort_by,
            order,
        )  # the same groups are drawn many times: memoised
        plain = ctx.short_free.get(key)
        if plain is None:
            plain = ctx.short_free[key] = _no_short_tops(
                ctx, found, genre, y0, y1, cap, sort_by, order
            )
        name = sty.genre_group(genre, rng) if plain else f"{sty.casual_genre(genre)} feature"
        period = (
            sty.pick(rng, (f"from {y0}", f"of {y0}"))
            if not decade
            else f"of {sty.decade_words(y0, y1)}"
        )
        group = f"{name} {period}" + (f" {sty.runtime_cap(cap, rng)}" if cap else "")
        text = sty.casualise(
            sty.frame(rng, sty.SUPERLATIVE[(sort_by, order)]), {"desc": group}, rng
        )
    args: dict[str, Any] = {
        "genre": genre,
        "year_min": y0,
        "year_max": y1,
        "feature_only": True,
        "sort_by": sort_by,
        "order": order,
        "limit": 3,
    }
    if cap:
        args["runtime_max"] = cap - 1
    answer, aliases = ctx.title_answer(winner)
    return Draft(
        "superlative",
        text,
        answer,
        aliases,
        "title",
        difficulty(3 + (cap is not None), 1),
        (_step("filter_titles", **args),),
        _field("results.0.title"),
        winner.id,
        f"superlative|{sorted(args.items())}",
    )


def two_hop(ctx: Context, rng: np.random.Generator) -> Draft | None:
    """A fact of the one film two named actors share: its director, writer or year."""
    pos = ctx.pick(rng, ctx.known)
    t = ctx.titles[pos]
    cast = ctx.known_cast(t)
    if len(cast) < 2:
        return None
    i, j = (int(x) for x in rng.choice(len(cast), size=2, replace=False))
    a, b = cast[i], cast[j]
    if ctx.films(a, "acted") & ctx.films(b, "acted") != {pos}:
        return None
    options = [
        v
        for v, ok in (
            ("director", len(t.directors) == 1),
            ("writer", len(t.writers) == 1),
            ("year", True),
        )
        if ok
    ]
    variant = ctx.pick(rng, options)
    text = ctx.pick(rng, tpl.TWO_HOP[variant]).format(a=a, b=b)
    if ctx.casual(rng):
        movie = sty.pick(rng, ("movie", "movie", "film"))
        if variant != "year" and rng.random() < 0.35:
            movie = f"{t.year} {movie}"
        text = sty.casualise(
            sty.frame(rng, sty.TWO_HOP[variant]), {"a": a, "b": b, "movie": movie}, rng
        )
    answer, kind, path = {
        "director": (t.directors[0] if t.directors else "", "person", "directors.0"),
        "writer": (t.writers[0] if t.writers else "", "person", "writers.0"),
        "year": (str(t.year), "year", "year"),
    }[variant]
    plan = (_step("filter_titles", cast=[a, b], limit=5), _step("get_title", title_id=t.id))
    return Draft(
        "two_hop",
        text,
        answer,
        (),
        kind,
        difficulty(2, 2),
        plan,
        _field(path),
        t.id,
        f"two_hop|{t.id}|{sorted([a, b])}|{variant}",
    )


def comparison(ctx: Context, rng: np.random.Generator) -> Draft | None:
    """Which of two named films (sharing a genre) is older, longer or better rated."""
    a = ctx.titles[ctx.pick(rng, ctx.known)]
    if not a.genres or not ctx.unique_name(a) or not ctx.searchable(a):
        return None
    b = ctx.titles[ctx.pick(rng, ctx.known_by_genre[ctx.pick(rng, a.genres)])]
    if b.id == a.id or not ctx.unique_name(b) or not ctx.searchable(b):
        return None
    variant = ctx.pick(rng, list(tpl.COMPARISON))
    va, vb = getattr(a, variant), getattr(b, variant)
    if va is None or vb is None or va == vb:
        return None
    op = "argmin" if variant == "year" else "argmax"
    winner = (a if va < vb else b) if op == "argmin" else (a if va > vb else b)
    first, second = (a, b) if rng.random() < 0.5 else (b, a)
    text = ctx.pick(rng, tpl.COMPARISON[variant]).format(a=first.title, b=second.title)
    if ctx.casual(rng):
        a_ref, b_ref = sty.casual_title(first.title, rng), sty.casual_title(second.title, rng)
        text = sty.casualise(sty.frame(rng, sty.COMPARISON[variant]), {"a": a_ref, "b": b_ref}, rng)
    plan = (
        _step("search", query=first.title, k=5),
        _step("get_title", title_id=first.id),
        _step("search", query=second.title, k=5),
        _step("get_title", title_id=second.id),
    )
    answer, aliases = ctx.title_answer(winner)
    pair = "|".join(sorted((a.id, b.id)))
    return Draft(
        "comparison",
        text,
        answer,
        aliases,
        "title",
        difficulty(1, 2),
        plan,
        {"op": op, "steps": [1, 3], "field": variant, "return": "title"},
        pair,
        f"comparison|{pair}|{variant}",
    )


def count(ctx: Context, rng: np.random.Generator) -> Draft | None:
    """How many films a person directed in a year range, acted in of a genre, or wrote."""
    roll = rng.random()
    if roll < 0.45:
        key = ctx.pick(rng, ctx.director_pool)
        person = ctx.people[key]
        years = sorted(ctx.titles[i].year for i in person.directed)
        lo, hi = sorted(int(x) for x in rng.choice(len(years), size=2, replace=False))
        y0, y1 = years[lo] - years[lo] % 5, min(years[hi] - years[hi] % 5 + 4, 2014)
        n = sum(y0 <= y <= y1 for y in years)
        text = ctx.pick(rng, tpl.COUNT["directed"]).format(person=person.name, y0=y0, y1=y1)
        plan = (_step("filter_titles", director=person.name, year_min=y0, year_max=y1, limit=5),)
        extract, fact, constraints = _field("count"), f"count|directed|{key}|{y0}|{y1}", 2
    elif roll < 0.8:
        key = ctx.pick(rng, ctx.actor_pool)
        person = ctx.people[key]
        genre = ctx.pick(rng, ctx.titles[ctx.pick(rng, person.acted)].genres or ("",))
        if not genre:
            return None
        if ctx.style != "template" and genre not in sty.SAYABLE_GENRES:
            return None
        n = sum(genre in ctx.titles[i].genres for i in person.acted)
        text = ctx.pick(rng, tpl.COUNT["acted"]).format(
            person=person.name, genre=tpl.genre_adjective(genre)
        )
        plan = (_step("filter_titles", genre=genre, cast=[person.name], limit=5),)
        extract, fact, constraints = _field("count"), f"count|acted|{key}|{genre}", 2
    else:
        key = ctx.pick(rng, ctx.writer_pool)
        person = ctx.people[key]
        n = len(person.wrote)
        text = ctx.pick(rng, tpl.COUNT["wrote"]).format(person=person.name)
        plan = (_step("find_person", name=person.name),)
        extract, fact, constraints = _field("people.0.totals.wrote"), f"count|wrote|{key}", 1
    if n < 2:
        return None
    if ctx.casual(rng):
        surname = ctx.director_word(person.name, rng) if fact.startswith("count|directed") else None
        text = _casual_count(fact, surname or person.name, plan, rng)
        if surname is not None:  # the director's full name is found first
            plan = (_step("find_person", name=surname), *plan)
    answer, aliases = _number(n)
    return Draft(
        "count",
        text,
        answer,
        aliases,
        "number",
        difficulty(constraints, 1),
        plan,
        extract,
        f"person:{key}",
        fact,
    )


def _casual_count(
    fact: str, person: str, plan: tuple[dict[str, Any], ...], rng: np.random.Generator
) -> str:
    """A count question as people ask it; the years and genre come from the plan's own filter."""
    role = fact.split("|")[1]
    args = plan[0]["arguments"]
    if role == "directed":
        decade = sty.decade_words(args["year_min"], args["year_max"])
        frames = (
            sty.COUNT["directed_decade"] if decade and rng.random() < 0.7 else sty.COUNT["directed"]
        )
        values = {
            "person": person,
            "y0": args["year_min"],
            "y1": args["year_max"],
            "decade": decade,
        }
    elif role == "acted":
        frames, values = (
            sty.COUNT["acted"],
            {"person": person, "genres": sty.genre_group(args["genre"], rng, True)},
        )
    else:
        frames, values = sty.COUNT["wrote"], {"person": person}
    return sty.casualise(sty.frame(rng, frames), values, rng)


GENERATORS: dict[str, Callable[[Context, np.random.Generator], Draft | None]] = {
    "lookup": lookup,
    "constraint": constraint,
    "superlative": superlative,
    "two_hop": two_hop,
    "comparison": comparison,
    "count": count,
}
"""The question kinds, in a fixed order (the order of generation)."""
