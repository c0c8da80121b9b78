"""Pre-training text for a model that must learn to copy: catalog prose plus copy and lookup drills.

A small transformer trained only on a few thousand agent trajectories learns
the format but not to copy names: it searches for titles it makes up. Copying
is an in-context skill (induction heads), and it forms from many cheap
examples where a span earlier in the context must be repeated. So before SFT
the model reads:

* **catalog prose**: every film's description, so names and their pieces are
  familiar tokens;
* **drills** rendered in the chat format the agent will use, with the env's
  own tool outputs (the real ``search`` and ``get_title`` of the env given):

  - *copy a query*: "Find <title>." → a ``search`` call with that title;
  - *pick an id*: search results → ``get_title`` of the row whose title was asked;
  - *read a field*: a ``get_title`` record → ``<answer>`` with the field asked for;
  - *recall* (plain text, dense in copies): real ``search`` output lines, then
    eight one-line questions each answered by copying a span of one line (an
    id from a title, a title from an id, a director, a year);
  - *repeat* (plain text): a list of random names and ids, then the same list
    again. This is the plainest task that induction heads solve: every token of
    the second copy is predictable only by finding the first.

A first pre-training run with the chat drills alone learned the format in 500
steps but still made up titles and ids: a chat drill holds one to three copies
in 200-450 tokens. The recall drills put a copy in every line.

The drills use random catalog titles and no question of any split, so they
teach skills, not answers. No drill asks about, lists for copying or answers with a title that any
validation or test question is about (its group, plan or answer names the
id), so pre-training never rehearses a held-out question's lookup; a drill's
search listing may still show one, as the tool shows it to any agent. The
catalog prose (the tools' knowledge base, which every split shares) is read
in part (every third description), held-out titles included.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

Message = dict[str, Any]

#: Field questions a drill asks of a ``get_title`` record, with how to read the answer off a title.
FIELD_QUESTIONS: tuple[tuple[str, Callable[[Any], str]], ...] = (
    ("Who directed {title}?", lambda t: t.directors[0] if t.directors else ""),
    ("Who wrote {title}?", lambda t: t.writers[0] if t.writers else ""),
    ("What year did {title} come out?", lambda t: str(t.year)),
    ("What is the runtime of {title} in minutes?", lambda t: str(t.runtime) if t.runtime else ""),
)


@dataclass(frozen=True)
class DrillMix:
    """How many of each drill to write (the catalog prose is written once, whole)."""

    copy_query: int = 6_000
    pick_id: int = 6_000
    read_field: int = 6_000
    recall: int = 20_000
    repeat: int = 30_000


_TITLE_ID = re.compile(r"\b(?:tt\d+|m\d+)\b")


def held_out_title_ids(tasks: Iterable[Any]) -> frozenset[str]:
    """Ids of the titles that ``tasks`` (validation and test questions) are about.

    Any title id in a question's record counts: its group, its gold tool plan, its answer and aliases.
    """
    ids: set[str] = set()
    for task in tasks:
        ids.update(_TITLE_ID.findall(json.dumps(task.case.to_dict())))
    return frozenset(ids)


def _call(name: str, arguments: dict[str, Any]) -> Message:
    return {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"type": "function", "function": {"name": name, "arguments": arguments}}],
    }


def _run_tool(registry: Any, name: str, arguments: dict[str, Any]) -> str:
    tool = registry[name]
    return registry.execute(tool, tool.args_model(**arguments)).content


def drill_conversations(
    env: Any, mix: DrillMix, seed: int, exclude: frozenset[str] = frozenset()
) -> Iterator[list[Message]]:
    """Yield drill conversations (lists of chat messages) on ``env``'s catalog and tools.

    ``env`` is a multi-turn MediaSearch env (``gym.make("agentenv:MediaSearch-v0", compact=True)``);
    its system prompt opens every drill, so the model sees the frame it will act in. Titles
    whose id is in ``exclude`` (:func:`held_out_title_ids`) are never drilled.
    """
    base = env.unwrapped
    catalog, registry = base.catalog, base.tools
    _, info = env.reset(seed=seed)
    system = info["messages"][0]
    rng = np.random.default_rng(seed)
    titles = [t for t in catalog.titles if t.id not in exclude]
    kinds = (
        ["copy_query"] * mix.copy_query
        + ["pick_id"] * mix.pick_id
        + ["read_field"] * mix.read_field
    )
    order = rng.permutation(len(kinds))
    for i in order:
        kind = kinds[i]
        t = titles[int(rng.integers(len(titles)))]
        question_text, read = FIELD_QUESTIONS[int(rng.integers(len(FIELD_QUESTIONS)))]
        answer = read(t)
        if not answer:
            continue
        question = {"role": "user", "content": question_text.format(title=t.title)}
        search = _call("search", {"query": t.title})
        if kind == "copy_query":
            yield [system, question, search]
            continue
        results = _run_tool(registry, "search", {"query": t.title})
        if t.id not in results:
            continue  # the title is not found by its own name: nothing to copy
        lookup = _call("get_title", {"title_id": t.id})
        if kind == "pick_id":
            yield [system, question, search, {"role": "tool", "content": results}, lookup]
            continue
        record = _run_tool(registry, "get_title", {"title_id": t.id})
        yield [
            system,
            question,
            search,
            {"role": "tool", "content": results},
            lookup,
            {"role": "tool", "content": record},
            {"role": "assistant", "content": f"<answer>{answer}</answer>"},
        ]


def recall_drills(
    env: Any, n: int, seed: int, exclude: frozenset[str] = frozenset()
) -> Iterator[str]:
    """Yield ``n`` recall drills: search output lines, then questions answered by copying from them.

    The lines come from the env's own ``search`` on a random title's name, so they look
    exactly like the tool output the agent reads.
    """
    base = env.unwrapped
    catalog, registry = base.catalog, base.tools
    rng = np.random.default_rng([seed, 1])
    titles = [t for t in catalog.titles if t.id not in exclude]
    by_id = {t.id: t for t in titles}
    written = 0
    while written < n:
        t = titles[int(rng.integers(len(titles)))]
        lines = _run_tool(registry, "search", {"query": t.title}).splitlines()
        rows = [
            by_id[line.split(" | ", 1)[0]] for line in lines if line.split(" | ", 1)[0] in by_id
        ]
        names = [r.title for r in rows]
        rows = [r for r in rows if names.count(r.title) == 1]  # a question must have one answer
        if len(rows) < 2:
            continue
        questions = []
        for _ in range(8):
            r = rows[int(rng.integers(len(rows)))]
            form = int(rng.integers(4))
            if form == 0:
                questions.append(f"id of {r.title}: {r.id}")
            elif form == 1:
                questions.append(f"title of {r.id}: {r.title}")
            elif form == 2 and r.directors:
                questions.append(f"director of {r.title}: {r.directors[0]}")
            else:
                questions.append(f"year of {r.title}: {r.year}")
        yield "\n".join(lines) + "\n\n" + "\n".join(questions)
        written += 1


def repeat_drills(
    env: Any, n: int, seed: int, exclude: frozenset[str] = frozenset()
) -> Iterator[str]:
    """Yield ``n`` repeat drills: 4-10 random titles, people and ids, one per line, then the same lines.

    >>> import gymnasium as gym
    >>> env = gym.make("agentenv:MediaSearch-v0", compact=True)  # doctest: +SKIP
    >>> first, second = next(repeat_drills(env, 1, seed=0)).split("\\n\\n")  # doctest: +SKIP
    >>> first == second  # doctest: +SKIP
    True
    """
    titles = [t for t in env.unwrapped.catalog.titles if t.id not in exclude]
    rng = np.random.default_rng([seed, 2])
    for _ in range(n):
        items = []
        for _ in range(int(rng.integers(4, 11))):
            t = titles[int(rng.integers(len(titles)))]
            people = list(t.directors) + list(t.cast[:3])
            form = int(rng.integers(3))
            if form == 0 or not people:
                items.append(t.title)
            elif form == 1:
                items.append(people[int(rng.integers(len(people)))])
            else:
                items.append(t.id)
        listing = "\n".join(items)
        yield listing + "\n\n" + listing


def catalog_prose(env: Any) -> Sequence[str]:
    """Every film's description, as the single-turn env's passages show it."""
    _, texts = env.unwrapped.catalog.documents()
    return texts
