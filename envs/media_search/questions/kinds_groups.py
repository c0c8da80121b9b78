"""Question generators about groups of films: the one film meeting constraints (``constraint``), the top of a
group (``superlative``), and how many films a person made (``count``); each proves its answer unique.

The registry of all kinds, and the rules every generator follows, are in
:mod:`agentenv.envs.media_search.questions.kinds`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from agentenv.envs.media_search.questions import styles as sty
from agentenv.envs.media_search.questions import templates as tpl
from agentenv.envs.media_search.questions.context import (
    Context,
    Draft,
    difficulty,
    field_step,
    number_step,
    plan_step,
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
    plan: tuple[dict[str, Any], ...] = (plan_step("filter_titles", **args),)
    if ctx.casual(rng):
        surname = ctx.director_word(chosen["director"], rng) if "director" in chosen else None
        text = sty.casualise(
            sty.frame(rng, sty.CONSTRAINT), {"desc": _casual_description(chosen, rng, surname)}, rng
        )
        if surname is not None:  # the director's full name is found first
            plan = (plan_step("find_person", name=surname), *plan)
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
        (plan_step("filter_titles", **args),),
        field_step("results.0.title"),
        winner.id,
        f"superlative|{sorted(args.items())}",
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
        plan = (
            plan_step("filter_titles", director=person.name, year_min=y0, year_max=y1, limit=5),
        )
        extract, fact, constraints = field_step("count"), f"count|directed|{key}|{y0}|{y1}", 2
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
        plan = (plan_step("filter_titles", genre=genre, cast=[person.name], limit=5),)
        extract, fact, constraints = field_step("count"), f"count|acted|{key}|{genre}", 2
    else:
        key = ctx.pick(rng, ctx.writer_pool)
        person = ctx.people[key]
        n = len(person.wrote)
        text = ctx.pick(rng, tpl.COUNT["wrote"]).format(person=person.name)
        plan = (plan_step("find_person", name=person.name),)
        extract, fact, constraints = field_step("people.0.totals.wrote"), f"count|wrote|{key}", 1
    if n < 2:
        return None
    if ctx.casual(rng):
        surname = ctx.director_word(person.name, rng) if fact.startswith("count|directed") else None
        text = _casual_count(fact, surname or person.name, plan, rng)
        if surname is not None:  # the director's full name is found first
            plan = (plan_step("find_person", name=surname), *plan)
    answer, aliases = number_step(n)
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
