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

from collections.abc import Callable
from typing import Any

import numpy as np

from agentenv.corpora.media import normalize_key
from agentenv.envs.media_search import question_styles as sty
from agentenv.envs.media_search import question_templates as tpl
from agentenv.envs.media_search.question_context import (
    FAMOUS,
    FAMOUS_DIRECTOR_FILMS,
    KNOWN_ACTOR_FILMS,
    KNOWN_FILM_REVIEWS,
    LEADS,
    SURNAME_SHARE,
    Context,
    Draft,
    _field,
    _number,
    _step,
    difficulty,
)

__all__ = [
    "FAMOUS",
    "FAMOUS_DIRECTOR_FILMS",
    "KNOWN_ACTOR_FILMS",
    "KNOWN_FILM_REVIEWS",
    "LEADS",
    "SURNAME_SHARE",
    "Context",
    "Draft",
    "difficulty",
    "GENERATORS",
]


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
