"""Is a MediaSearch question answerable with the env's tools? A reachability check for your own tasks.

Why: a question of your own has no gold tool plan, so the oracle can only
answer its gold text, which proves that the grader accepts the gold and
nothing more. This check plays the tools the way an agent would, reading the
question with the shared reader (:func:`agentenv.envs.media_search.questions.reading.read_question`,
as the ``bm25`` baseline does), so a question as people type it ("who directd
goodfellas", "how many films did spielberg direct in the 90s") is not reported
unreachable for its wording (issue 30: the raw-question check flagged 4 of 44
reachable casual questions).

Steps, each one turn of parallel calls:

1. **search** with the rewritten query, and with every named entity
   (quoted and capitalised spans, the two options of "A or B");
   **find_person** on every catalog person the question names in full, on
   its capitalised spans and on the words left once question words, years and
   genre are taken out (a partial name such as "spielberg" finds the full one);
   and, when the question names a genre and years, the **filter_titles**
   group a superlative ranks, sorted each way (by rating and runtime, up and down);
2. **filter_titles** counts for each person found, by the role, years and
   genre the question names (what a count question needs), and the films
   that narrow the people down as an agent would: each person's films as
   director and as cast within the genre and years the question names, and the
   films the people named share (a famous actor has more films than can be
   opened one by one; "the sci-fi movie from the 2000s with liam neeson"), and
3. **get_title** on those narrowed films first, then the best-fitting search
   hits, the films named in full, and the films the people found are credited on.

The task is reachable when the gold answer (or an alias) appears in those
outputs, after the grader's normalisation (a number gold written in words, ``four``, also as
its digits, as the tools print it). Otherwise the reason names the step
that failed: no search found the gold film, no person was found, or the
answer appears in none of the opened records.

It is the family's ``Family.solvability``, run by ``agentenv check-tasks``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from agentenv.core import Task
from agentenv.corpora.media.catalog import normalize_key
from agentenv.engine.actions import tool_calls
from agentenv.envs.media_search.agents.bm25_strategy import SEARCH_K, shortlist, tool_outputs
from agentenv.envs.media_search.grading.grade import read_integer
from agentenv.envs.media_search.questions.reading import QuestionReading, read_question

MAX_NAMES = 8
"""People looked up (``find_person`` calls) and entities searched for, each."""
MAX_TITLES = 24
"""Films whose records are opened (``get_title`` calls)."""
PER_SEARCH = 5
"""Best-fitting hits of each search that are opened."""
PER_PERSON = 3
"""People of one ``find_person`` answer that are followed (their films opened, their counts taken)."""
_WORDS = re.compile(r"[\w'’.-]+", re.UNICODE)


def named_in(question: str, keys: Any, longest: int = 6) -> list[str]:
    """The catalog keys (normalised names) that appear in ``question`` as a run of words, longest first.

    Example:
        >>> named_in("Did Cary Grant work with Grace Kelly?", {"cary grant", "grace kelly", "grant"})
        ['cary grant', 'grace kelly']
    """
    words = normalize_key(question).split()
    found: list[str] = []
    taken = [False] * len(words)
    for size in range(min(longest, len(words)), 0, -1):
        for start in range(len(words) - size + 1):
            if any(taken[start : start + size]):
                continue
            key = " ".join(words[start : start + size])
            if key in keys and (size > 1 or len(key) > 3):
                found.append(key)
                taken[start : start + size] = [True] * size
    order = {k: normalize_key(question).find(k) for k in found}
    return sorted(found, key=order.__getitem__)


def titles_starting(catalog: Any, name: str, most: int = 3) -> list[int]:
    """Positions of the films titled ``name`` (without a leading article), then of those whose title begins
    with it as whole words (a partial title, "E.T."), then of those that hold it as whole words elsewhere
    ("will rock" for *Cradle Will Rock*), the most reviewed first within each group.

    Example:
        >>> from agentenv.corpora.media.catalog import load_catalog
        >>> [load_catalog()[i].title for i in titles_starting(load_catalog(), "E.T.")]
        ['E.T. the Extra-Terrestrial']
    """
    key = normalize_key(name)
    if len(key.replace(" ", "")) < 2:
        return []
    exact = list(catalog.by_title.get(key, ()))
    found = [
        i
        for title, positions in catalog.by_title.items()
        if title.startswith(key + " ")
        for i in positions
    ]
    found.sort(key=lambda i: (-(catalog[i].reviews or 0), i))
    inside = [
        i
        for title, positions in catalog.by_title.items()
        if f" {key} " in f" {title} " and not title.startswith(key + " ") and title != key
        for i in positions
    ]
    inside.sort(key=lambda i: (-(catalog[i].reviews or 0), i))
    return (exact + found + inside)[:most]


def _first_calls(reading: QuestionReading, catalog: Any) -> list[tuple[str, dict[str, Any]]]:
    """Step 1: the searches, person look-ups and (for a ranked group) the filter an agent would start with."""
    calls: list[tuple[str, dict[str, Any]]] = [("search", {"query": reading.query, "k": SEARCH_K})]
    calls += [
        ("search", {"query": name[:500], "k": SEARCH_K}) for name in reading.names[:MAX_NAMES]
    ]
    people = [catalog.people[key].name for key in named_in(reading.question, catalog.people)]
    people += [s for s in reading.spans if " " in s or s[:1].isupper()]
    if reading.rest:
        people.append(reading.rest)
    for name in list(dict.fromkeys(people))[:MAX_NAMES]:
        calls.append(("find_person", {"name": name[:200]}))
    if reading.genre and (reading.years or reading.years_between):
        # the group a superlative ranks, in each order (a misspelt "worst" must not hide the answer)
        for key, order in (
            ("rating", "desc"),
            ("rating", "asc"),
            ("runtime", "desc"),
            ("runtime", "asc"),
        ):
            group = {
                "genre": reading.genre,
                "feature_only": True,
                "sort_by": key,
                "order": order,
                "limit": 3,
                **_years(reading),
            }
            if reading.runtime_under:
                group["runtime_max"] = reading.runtime_under - 1
            calls.append(("filter_titles", group))
    return calls


def _years(reading: QuestionReading) -> dict[str, int]:
    if reading.years_between:
        return {"year_min": reading.years_between[0], "year_max": reading.years_between[1]}
    if reading.years:
        return {"year_min": min(reading.years), "year_max": max(reading.years)}
    return {}


def _counts(
    reading: QuestionReading, people: list[Mapping[str, Any]]
) -> list[tuple[str, dict[str, Any]]]:
    """Step 2: a ``filter_titles`` count per person found, by the roles the question may mean."""
    if reading.asks != "count":
        return []
    calls = []
    for person in people:
        name = str(person.get("name", ""))
        for key, value in (("director", name), ("cast", [name])):
            args: dict[str, Any] = {key: value, "limit": 1, **_years(reading)}
            if reading.genre:
                args["genre"] = reading.genre
            calls.append(("filter_titles", args))
    return calls


def _narrowing(
    reading: QuestionReading, leads: list[Mapping[str, Any]]
) -> list[tuple[str, dict[str, Any]]]:
    """Step 2: the ``filter_titles`` calls that narrow the people found (the best match of each look-up,
    ``leads``) by the genre and years the question names, and the films the people named share."""
    names = list(dict.fromkeys(str(p.get("name", "")) for p in leads if p.get("name")))[:MAX_NAMES]
    scope: dict[str, Any] = dict(_years(reading))
    if reading.genre:
        scope["genre"] = reading.genre
    calls: list[tuple[str, dict[str, Any]]] = []
    if len(names) >= 2:
        calls.append(("filter_titles", {"cast": names[:2], "limit": PER_SEARCH}))
    if scope:
        for name in names:
            calls.append(("filter_titles", {"director": name, "limit": PER_SEARCH, **scope}))
            calls.append(("filter_titles", {"cast": [name], "limit": PER_SEARCH, **scope}))
    return calls


def why_unreachable(env: Any, task: Task) -> str | None:
    """``None`` when the gold answer shows up in the tool outputs reachable from the question, else why not."""
    base = env.unwrapped
    if not {"search", "get_title"} <= set(base.tools.names):
        return (
            "this env offers no search and get_title tools (single-turn?); check the multi-turn id"
        )
    gold = task.gold if isinstance(task.gold, dict) else {"answer": str(task.gold), "aliases": []}
    golds = [str(a) for a in [gold.get("answer"), *gold.get("aliases", [])] if a is not None]
    forms = {normalize_key(a) for a in golds}
    if gold.get("answer_type") == "number":  # "four", "forty-two": the tools print digits
        forms |= {str(n) for n in (read_integer(a, words=True) for a in golds) if n is not None}
    forms.discard("")
    catalog = base.catalog
    reading = read_question(task.prompt)
    base.reset(options={"task": task})
    first = _first_calls(reading, catalog)
    first_out = tool_outputs(base.step(tool_calls(first))[0])
    texts = [json.dumps(o, ensure_ascii=False) for o in first_out if o is not None]
    ids: list[str] = []
    people: list[Mapping[str, Any]] = []
    leads: list[Mapping[str, Any]] = []
    for (tool, _), out in zip(first, first_out, strict=False):
        if not isinstance(out, Mapping):
            continue
        if tool == "search":
            hits = [h for h in out.get("results") or () if isinstance(h, Mapping) and "id" in h]
            ids += [str(h["id"]) for h in shortlist(reading, hits, PER_SEARCH)]
        elif tool == "find_person":
            found = list(out.get("people") or ())[:PER_PERSON]
            people += found
            leads += found[:1]
            for person in found:
                for role in ("directed", "wrote", "acted"):
                    ids += [str(f["id"]) for f in person.get(role) or () if isinstance(f, Mapping)]
        elif tool == "filter_titles":
            ids += [str(r["id"]) for r in out.get("results") or () if isinstance(r, Mapping)]
    ids += [
        catalog[i].id
        for key in named_in(task.prompt, catalog.by_title)
        for i in catalog.by_title[key]
    ]
    ids += [
        catalog[i].id
        for name in dict.fromkeys([*reading.names, reading.query])
        if name
        for i in titles_starting(catalog, name)
    ]
    counts = _counts(reading, people)
    if counts:
        texts += [
            json.dumps(o) for o in tool_outputs(base.step(tool_calls(counts))[0]) if o is not None
        ]
    narrowing = _narrowing(reading, leads)
    if narrowing:  # its own turn: with the counts it could pass the env's cap on calls per action
        narrowed = [
            str(r["id"])
            for o in tool_outputs(base.step(tool_calls(narrowing))[0])
            if isinstance(o, Mapping)
            for r in o.get("results") or ()
            if isinstance(r, Mapping) and "id" in r
        ]
        ids = narrowed + ids
    ids = list(dict.fromkeys(ids))[:MAX_TITLES]
    if ids:
        texts += [
            json.dumps(o, ensure_ascii=False)
            for o in tool_outputs(
                base.step(tool_calls(("get_title", {"title_id": i}) for i in ids))[0]
            )
            if o is not None
        ]
    seen = f" {normalize_key(' '.join(texts))} "
    if any(f" {form} " in seen for form in forms):
        return None
    return _reason(reading, gold, first, first_out, people, len(counts), len(ids))


def _reason(
    reading: QuestionReading,
    gold: Mapping[str, Any],
    first: list[tuple[str, dict[str, Any]]],
    first_out: list[Any],
    people: list[Mapping[str, Any]],
    counts: int,
    opened: int,
) -> str:
    """Which step failed, in words."""
    shown = gold.get("answer")
    searches = [args["query"] for tool, args in first if tool == "search"]
    asked = [args["name"] for tool, args in first if tool == "find_person"]
    hits = sum(
        len(o.get("results") or ())
        for (tool, _), o in zip(first, first_out, strict=False)
        if tool == "search" and isinstance(o, Mapping)
    )
    steps = [
        f"search with {searches!r} gave {hits} hits",
        f"find_person on {asked!r} found {[p.get('name') for p in people] or 'no one'}",
    ]
    if counts:
        steps.append(f"{counts} filter_titles counts")
    steps.append(f"get_title on {opened} films")
    where = "; ".join(steps)
    if gold.get("answer_type") in ("number", "year") or str(shown).strip().isdigit():
        return (
            f"the number {shown!r} appears in none of the outputs ({where}); a count over several outputs "
            "cannot be checked"
        )
    if not opened:
        return f"the answer {shown!r} appears in none of the outputs: no step found a film to open ({where})"
    return f"the answer {shown!r} appears in none of the outputs ({where})"
