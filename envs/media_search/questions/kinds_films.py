"""Question generators about named films: a field of one film (``lookup``), a film reached through another
(``two_hop``), and which of two films (``comparison``); each proves its answer unique.

The registry of all kinds, and the rules every generator follows, are in
:mod:`agentenv.envs.media_search.questions.kinds`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from agentenv.corpora.media.catalog import normalize_key
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
        plan_step("search", query=name, k=5),
        plan_step("get_title", title_id=t.id),
    )
    constraints = 1
    if variant == "director":
        answer, aliases, kind, extract = t.directors[0], (), "person", field_step("directors.0")
    elif variant == "writer":
        answer, aliases, kind, extract = t.writers[0], (), "person", field_step("writers.0")
    elif variant == "year":
        answer, aliases, kind, extract = str(t.year), (), "year", field_step("year")
    elif variant == "runtime":
        answer, aliases = number_step(int(t.runtime or 0))
        kind, extract = "number", field_step("runtime")
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
                (
                    plan_step("filter_titles", **args, limit=5),
                    plan_step("get_title", title_id=t.id),
                ),
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
            return (
                ref,
                (plan_step("search", query=partial, k=5), plan_step("get_title", title_id=t.id)),
                0,
            )
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
    plan = (plan_step("filter_titles", cast=[a, b], limit=5), plan_step("get_title", title_id=t.id))
    return Draft(
        "two_hop",
        text,
        answer,
        (),
        kind,
        difficulty(2, 2),
        plan,
        field_step(path),
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
        plan_step("search", query=first.title, k=5),
        plan_step("get_title", title_id=first.id),
        plan_step("search", query=second.title, k=5),
        plan_step("get_title", title_id=second.id),
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
