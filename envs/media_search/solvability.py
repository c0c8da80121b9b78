"""Is a MediaSearch question answerable with the env's tools? A reachability check for your own tasks.

Why: a question of your own has no gold tool plan, so the oracle can only
answer its gold text, which proves that the grader accepts the gold and
nothing more. This check plays the tools the way an agent would start: one
``search`` with the question, ``find_person`` on every catalog person the
question names, then ``get_title`` on every film found or named. The task is
reachable when the gold answer (or an alias) appears in those outputs, after
the grader's normalisation. Numeric answers (counts, years) are looked for as
numbers: a count computed over several outputs is reported as unreachable, and
the reason says so, since the check cannot prove it.

It is the family's ``Family.solvability``, run by ``agentenv check-tasks``.
"""

from __future__ import annotations

import re
from typing import Any

from agentenv.actions import tool_calls
from agentenv.core import Task
from agentenv.corpora.media import normalize_key

MAX_NAMES = 8
"""People named in one question that are looked up (``find_person`` calls)."""
MAX_TITLES = 24
"""Films whose records are opened (``get_title`` calls)."""
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


def why_unreachable(env: Any, task: Task) -> str | None:
    """``None`` when the gold answer shows up in the tool outputs reachable from the question, else why not."""
    base = env.unwrapped
    names = set(base.tools.names)
    if not {"search", "get_title"} <= names:
        return "this env offers no search and get_title tools (single-turn?); check the multi-turn id"
    gold = task.gold if isinstance(task.gold, dict) else {"answer": str(task.gold), "aliases": []}
    forms = {normalize_key(str(a)) for a in [gold.get("answer"), *gold.get("aliases", [])] if a is not None}
    forms.discard("")
    catalog = base.catalog
    people = named_in(task.prompt, catalog.people)[:MAX_NAMES]
    titles = named_in(task.prompt, catalog.by_title)
    base.reset(options={"task": task})
    first = [("search", {"query": task.prompt[:500], "k": 10})]
    first += [("find_person", {"name": catalog.people[key].name}) for key in people]
    outputs = [base.step(tool_calls(first))[0]]
    ids = re.findall(r'"id":\s*"(tt\d+)"', outputs[0])
    ids += [catalog[i].id for key in titles for i in catalog.by_title[key]]
    ids = list(dict.fromkeys(ids))[:MAX_TITLES]
    if ids:
        outputs.append(base.step(tool_calls(("get_title", {"title_id": i}) for i in ids))[0])
    seen = f" {normalize_key(' '.join(outputs))} "
    if any(f" {form} " in seen for form in forms):
        return None
    looked = f"search(question), find_person on {len(people)} named people, get_title on {len(ids)} films"
    shown = gold.get("answer")
    if gold.get("answer_type") in ("number", "year") or str(shown).strip().isdigit():
        return f"the number {shown!r} appears in none of the outputs of {looked} (a count over several outputs cannot be checked)"
    return f"the answer {shown!r} appears in none of the outputs of {looked}"
