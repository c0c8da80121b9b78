"""Scripted reasoning lines for the MediaSearch oracle's SFT turns: templates filled from the gold plan.

The family's ``Family.reasoning`` (see :mod:`agentenv.data.reasoning` for why
the lines are scripted and what they are not). Each line is one of a few fixed
phrasings per step type (search, filter, open a record, look up a person,
answer), picked with the episode's seeded generator and filled with what the
gold plan says the step is for (e.g. the record is opened "to read its
director" because the plan's ``extract`` rule reads ``directors.0``) and with
titles seen in the previous tool output. It teaches the format and a
plausible plan narration, not reasoning skill.

Example:
    >>> plan = ({"tool": "search", "arguments": {"query": "Psycho III", "k": 5}},
    ...         {"tool": "get_title", "arguments": {"title_id": "tt0091799"}})
    >>> extract = {"op": "field", "step": -1, "path": "directors.0"}
    >>> purposes = step_purposes(plan, extract)
    >>> purposes
    {1: 'director'}
    >>> writer = MediaReasoningWriter(plan, extract, np.random.default_rng(0))
    >>> writer.tool_line(0, "search", {"query": "Psycho III", "k": 5}, None)
    "Let me start by searching the catalog for 'Psycho III'."
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from agentenv.core import Task
from agentenv.data.reasoning import GenericReasoningWriter

#: What a record field is called in a sentence (the head of an extract path).
FIELD_NOUNS: dict[str, str] = {
    "directors": "director",
    "writers": "writer",
    "cast": "cast list",
    "year": "release year",
    "runtime": "runtime",
    "rating": "critics' rating",
    "count": "number of matching films",
    "title": "title",
}

_FIRST_SEARCH = (
    "I'll search the catalog for {query} first.",
    "First I need to find {query} in the catalog, so I'll search for it.",
    "Let me start by searching the catalog for {query}.",
)
_LATER_SEARCH = (
    "Now the other one: I'll search for {query}.",
    "Next I'll look up {query} the same way.",
    "Then I need {query}; another search should find it.",
)
_OPEN_RECORD = (
    "Now I'll open {title}'s details to read its {field}.",
    "I'll read the full record of {title} to get its {field}.",
    "The {field} is in {title}'s record, so I'll open it.",
)
_FILTER = (
    "I'll filter the catalog for {constraints}.",
    "A structured filter fits here: {constraints}.",
    "Let me narrow the catalog down to {constraints}.",
)
_PERSON = (
    "I'll look up {name} to see their credits.",
    "{name}'s filmography should answer this, so I'll look them up.",
    "Let me find {name} and check the totals per role.",
)
_ANSWER_BY_OP: dict[str, tuple[str, ...]] = {
    "field": (
        "The {field} is {answer}, so that's my answer.",
        "That settles it: the {field} is {answer}.",
        "I have the {field} now: {answer}.",
    ),
    "only": (
        "Exactly one film matches: {answer}.",
        "The filter leaves a single title, {answer}.",
        "Only {answer} fits every constraint.",
    ),
    "argmin": (
        "Comparing the two {field}s, {answer} has the {adjective} one.",
        "{answer} has the {adjective} {field}, so it's the answer.",
        "Side by side, {answer}'s {field} is {adjective}.",
    ),
    "argmax": (
        "Comparing the two {field}s, {answer} has the {adjective} one.",
        "{answer} has the {adjective} {field}, so it's the answer.",
        "Side by side, {answer}'s {field} is {adjective}.",
    ),
    "member": (
        "{answer} is the one in the {field}.",
        "The {field} includes {answer}, not the other name.",
        "Checking the {field}: it's {answer}.",
    ),
}
#: How the winner of a comparison compares, by (op, field noun); the default is lower/higher.
_COMPARATIVES: dict[tuple[str, str], str] = {
    ("argmin", "release year"): "earlier",
    ("argmax", "release year"): "later",
    ("argmin", "runtime"): "shorter",
    ("argmax", "runtime"): "longer",
}
_ANSWER_GENERIC = (
    "I have what I need; my answer is {answer}.",
    "That answers the question: {answer}.",
    "So the answer is {answer}.",
)


def field_noun(path: str) -> str:
    """The sentence noun of a record field, from an extract path such as ``directors.0``.

    Example:
        >>> field_noun("directors.0"), field_noun("people.0.totals.wrote"), field_noun("results.0.title")
        ('director', 'credit count', 'title')
    """
    parts = [p for p in path.split(".") if p and not p.lstrip("-").isdigit()]
    if parts[:1] == ["people"]:
        return "credit count"
    for part in reversed(parts):
        if part in FIELD_NOUNS:
            return FIELD_NOUNS[part]
    return parts[-1].replace("_", " ") if parts else "value"


def step_purposes(
    plan: Sequence[Mapping[str, Any]], extract: Mapping[str, Any] | None
) -> dict[int, str]:
    """Which field each plan step is read for, by step index, according to ``extract``."""
    if not plan or not extract:
        return {}
    n = len(plan)
    op = extract.get("op")
    if op in ("argmin", "argmax"):
        return {
            int(s) % n: FIELD_NOUNS.get(extract["field"], extract["field"])
            for s in extract["steps"]
        }
    if op == "field":
        return {int(extract["step"]) % n: field_noun(extract["path"])}
    if op == "member":
        return {int(extract["step"]) % n: field_noun(extract["path"])}
    if op == "only":
        return {int(extract["step"]) % n: "title"}
    return {}


def describe_filter(arguments: Mapping[str, Any]) -> str:
    """A short noun phrase for ``filter_titles`` arguments.

    Example:
        >>> describe_filter({"genre": "Family", "year_min": 2008, "year_max": 2008, "feature_only": True,
        ...                  "runtime_max": 119, "sort_by": "rating", "order": "desc"})
        'family feature films from 2008, running at most 119 minutes, sorted by rating, highest first'
        >>> describe_filter({"cast": ["Viva", "Mark Goddard"], "year_min": 1970, "year_max": 1979})
        'films from 1970 to 1979 starring Viva and Mark Goddard'
        >>> describe_filter({"director": "William Wyler", "cast": ["Marco Tulli"]})
        'films directed by William Wyler and starring Marco Tulli'
    """
    phrase = "feature films" if arguments.get("feature_only") else "films"
    if arguments.get("genre"):
        phrase = f"{str(arguments['genre']).lower()} {phrase}"
    lo, hi = arguments.get("year_min"), arguments.get("year_max")
    if lo is not None and lo == hi:
        phrase += f" from {lo}"
    elif lo is not None and hi is not None:
        phrase += f" from {lo} to {hi}"
    elif lo is not None:
        phrase += f" from {lo} on"
    elif hi is not None:
        phrase += f" up to {hi}"
    people = []
    if arguments.get("director"):
        people.append(f"directed by {arguments['director']}")
    cast = [str(name) for name in arguments.get("cast") or []]
    if cast:
        people.append(
            "starring "
            + (" and ".join(cast) if len(cast) <= 2 else ", ".join(cast[:-1]) + f" and {cast[-1]}")
        )
    if people:
        phrase += " " + " and ".join(people)
    parts = [phrase]
    if arguments.get("runtime_min") is not None:
        parts.append(f"running at least {arguments['runtime_min']} minutes")
    if arguments.get("runtime_max") is not None:
        parts.append(f"running at most {arguments['runtime_max']} minutes")
    if arguments.get("min_rating") is not None:
        parts.append(f"rated at least {arguments['min_rating']}")
    if arguments.get("sort_by"):
        direction = "lowest first" if arguments.get("order") == "asc" else "highest first"
        parts.append(f"sorted by {arguments['sort_by']}, {direction}")
    return ", ".join(parts)


def _title_in(output: Any, title_id: str) -> str | None:
    """The title of ``title_id`` if the previous tool output listed it."""
    if not isinstance(output, Mapping):
        return None
    for row in output.get("results") or ():
        if isinstance(row, Mapping) and row.get("id") == title_id and row.get("title"):
            return f"{row['title']} ({row['year']})" if row.get("year") else str(row["title"])
    return None


class MediaReasoningWriter(GenericReasoningWriter):
    """Writes one line per oracle turn for one MediaSearch episode; every choice comes from ``rng``.

    The plan's lines narrate tool outputs, so they are used only once the
    episode has called a tool: a single-turn episode (no tools) or a question
    without a plan gets the generic answer lines.
    """

    named_tools = frozenset({"search", "get_title", "filter_titles", "find_person"})
    """The catalog tools that have their own phrasings; other tools get generic ones."""

    def __init__(
        self,
        plan: Sequence[Mapping[str, Any]] | None,
        extract: Mapping[str, Any] | None,
        rng: np.random.Generator,
    ) -> None:
        super().__init__(rng)
        self.plan = list(plan or [])
        self.extract = dict(extract) if extract else None
        self.purposes = step_purposes(self.plan, self.extract)
        self._searches = 0
        self._called = False

    def tool_line(
        self, step: int, tool: str, arguments: Mapping[str, Any], previous_output: Any
    ) -> str:
        """The line before calling ``tool``, the ``step``-th call of the episode."""
        self._called = True
        if tool == "search":
            self._searches += 1
            options = _FIRST_SEARCH if self._searches == 1 else _LATER_SEARCH
            return self._pick(options, query=repr(str(arguments.get("query", ""))))
        if tool == "get_title":
            title = _title_in(previous_output, str(arguments.get("title_id", ""))) or "the film"
            return self._pick(_OPEN_RECORD, title=title, field=self.purposes.get(step, "details"))
        if tool == "filter_titles":
            return self._pick(_FILTER, constraints=describe_filter(arguments))
        if tool == "find_person":
            return self._pick(_PERSON, name=str(arguments.get("name", "the person")))
        return super().tool_line(step, tool, arguments, previous_output)

    def turn_line(
        self, step: int, calls: Sequence[tuple[str, Mapping[str, Any]]], previous_output: Any
    ) -> str:
        """The line before one turn's calls; see :meth:`GenericReasoningWriter.turn_line`."""
        self._called = True
        return super().turn_line(step, calls, previous_output)

    def answer_line(self, answer: str) -> str:
        """The line before the final answer: tied to the plan's ``extract`` rule when the plan was followed."""
        if not self._called or not self.plan or self.extract is None:
            return super().answer_line(answer)
        op = self.extract.get("op", "")
        field = next(iter(self.purposes.values()), "value")
        if op == "field" and field == "title":
            return self._pick(
                (
                    "The top result is {answer}.",
                    "{answer} comes first in that order.",
                    "First in the sorted list: {answer}.",
                ),
                answer=answer,
            )
        if op == "field" and field in ("number of matching films", "credit count"):
            return self._pick(
                ("The count is {answer}.", "That makes {answer}.", "The total comes to {answer}."),
                answer=answer,
            )
        default = "lower" if op == "argmin" else "higher"
        adjective = _COMPARATIVES.get((op, field), default)
        options = _ANSWER_BY_OP.get(op, _ANSWER_GENERIC)
        return self._pick(options, answer=answer, field=field, adjective=adjective)


def reasoning_writer(task: Task, rng: np.random.Generator) -> MediaReasoningWriter:
    """``Family.reasoning`` of MediaSearch: a writer narrating the task's gold plan (if it has one)."""
    return MediaReasoningWriter(
        getattr(task.case, "plan", None), getattr(task.case, "extract", None), rng
    )
