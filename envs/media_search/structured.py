"""MediaSearch menus: tool-call templates filled from the question and earlier results, and answers.

The family's ``structured`` part (:data:`MENUS`), which ``agentenv.structured`` reaches through the registry.

``media-tools`` (``MediaSearch-v0``) lets a policy search with the question,
open the first or second hit, look up the person the question names, and
answer a hit's title or a field of the opened film. ``media-passages``
(``MediaSearch-SingleTurn-v0``) answers a passage's title or a field of the
top passage. Which field to answer is the policy's to learn from the
question cues in the features.

The question is read by :func:`agentenv.envs.media_search.question_reading.read_question`, the
reader the ``bm25`` baseline and ``check-tasks`` use: the search template
sends its rewritten query (no question words: "who wrote X" no longer
retrieves films titled *Wrote*), the person template its first named span or
the words left of a count question ("spielberg" finds Steven Spielberg), and
the cue features add the field it reads from the question's meaning to the
wording cues, so a casual "when was boyhood released (year)?" cues a year.
"""

from __future__ import annotations

from typing import Any

from agentenv.actions import answer, tool_call
from agentenv.envs.media_search.question_reading import read_question
from agentenv.envs.media_search.structured_reading import (
    CUES,
    media_passages,
    media_question,
    named_in,
    parse_passage,
    person_in_question,
    question_cues,
)
from agentenv.structured.menu import COMMON_FEATURES, Choice, Menu
from agentenv.structured.reading import json_or_none, squash

SEARCH_K = 10
"""Hits asked of the menu's ``search``."""
ANSWER_HITS = 5
""""Answer with candidate i" entries, i = 1..5."""
FIELDS = ("year", "director", "writer", "runtime", "cast member")
NOTHING = "unknown"
"""What an answer entry says when its source is not there yet (graded wrong by the env, as it should be)."""


def field_value(record: dict[str, Any] | None, field: str, question: str) -> str:
    """The ``field`` of a film record as answer text, or :data:`NOTHING`."""
    if not record:
        return NOTHING
    if field == "year":
        return str(record["year"]) if record.get("year") is not None else NOTHING
    if field == "runtime":
        return str(record["runtime"]) if record.get("runtime") is not None else NOTHING
    key = {"director": "directors", "writer": "writers", "cast member": "cast"}[field]
    names = [str(n) for n in record.get(key) or []]
    if not names:
        return NOTHING
    if field == "cast member":
        return named_in(question, names) or names[0]
    return names[0]


_ASKS_CUE = {"runtime": "runtime", "count": "count", "cast": "cast", "director": "director", "writer": "writer",
             "year": "year", "compare": "comparison", "superlative": "superlative"}
"""The cue of :data:`~agentenv.envs.media_search.structured_reading.CUES` that each field :func:`read_question` reads turns on."""


def reading_cues(question: str) -> dict[str, float]:
    """The wording cues, plus the cue of the field the shared reader finds (same names, same order)."""
    cues = question_cues(question)
    cue = _ASKS_CUE.get(read_question(question).asks)
    if cue is not None:
        cues[cue] = 1.0
    return cues


class MediaToolsMenu(Menu):
    """Menu of ``MediaSearch-v0``: 4 tool templates, 5 hit titles, 5 fields of the opened film."""

    name = "media-tools"
    required_tools = frozenset({"search", "get_title", "find_person"})
    labels = (
        f"search(question, k={SEARCH_K})",
        "get_title(hit 1)",
        "get_title(hit 2)",
        "find_person(name in question)",
        *(f"answer title of hit {i + 1}" for i in range(ANSWER_HITS)),
        *(f"answer {f} of opened film" for f in FIELDS),
    )
    feature_names = (
        *COMMON_FEATURES,
        *(f"cue_{c}" for c in CUES),
        "used_search", "used_get_1", "used_get_2", "used_find_person",
        "hits", "top_score", "top_gap", "opened_film", "opened_has_director", "opened_has_writer",
        "question_names_person", "person_found",
    )

    def _start(self) -> None:
        self.question = media_question(self.prompt)
        self.reading = read_question(self.question)
        self.cues = reading_cues(self.question)
        self.person = person_in_question(self.question) or (self.reading.rest if self.reading.asks == "count" else None)
        self.hits: list[dict[str, Any]] = []
        self.record: dict[str, Any] | None = None
        self.person_found = 0.0

    def _render(self, index: int) -> Choice:
        if index == 0:
            return Choice(tool_call("search", query=self.reading.query, k=SEARCH_K), self.labels[index], "tool")
        if index in (1, 2):
            hit = self.hits[index - 1] if len(self.hits) >= index else None
            title_id = str(hit["id"]) if hit else "tt0000000"
            return Choice(tool_call("get_title", title_id=title_id), self.labels[index], "tool")
        if index == 3:
            return Choice(tool_call("find_person", name=(self.person or self.question)[:200]), self.labels[index], "tool")
        if index < 4 + ANSWER_HITS:
            i = index - 4
            text = str(self.hits[i]["title"]) if i < len(self.hits) else NOTHING
            return Choice(answer(text), self.labels[index], "answer", 1)
        field = FIELDS[index - 4 - ANSWER_HITS]
        return Choice(answer(field_value(self.record, field, self.question)), self.labels[index], "answer", 1)

    def _read(self, index: int, obs: str) -> None:
        output = json_or_none(obs)
        if not isinstance(output, dict):
            return
        if index == 0:
            self.hits = [h for h in output.get("results") or [] if isinstance(h, dict) and "id" in h]
        elif index in (1, 2) and "title" in output:
            self.record = output
        elif index == 3:
            self.person_found = 1.0 if output.get("people") else 0.0

    def _features(self) -> list[float]:
        scores = [float(h.get("score") or 0.0) for h in self.hits[:2]]
        top = scores[0] if scores else 0.0
        gap = (scores[0] - scores[1]) / scores[0] if len(scores) > 1 and scores[0] > 0 else 0.0
        record = self.record or {}
        return [
            *self.cues.values(),
            *(min(float(u), 3.0) / 3.0 for u in self.used[:4]),
            len(self.hits) / SEARCH_K, squash(top, 20.0), gap,
            1.0 if self.record else 0.0, 1.0 if record.get("directors") else 0.0,
            1.0 if record.get("writers") else 0.0,
            1.0 if self.person else 0.0, self.person_found,
        ]


class MediaPassagesMenu(Menu):
    """Menu of ``MediaSearch-SingleTurn-v0``: the title of passage 1..5, or a field of the top passage."""

    name = "media-passages"
    labels = (
        *(f"answer title of passage {i + 1}" for i in range(ANSWER_HITS)),
        *(f"answer {f} of passage 1" for f in FIELDS),
    )
    feature_names = (
        *COMMON_FEATURES,
        *(f"cue_{c}" for c in CUES),
        "passages", *(f"passage_{i + 1}_title_in_question" for i in range(ANSWER_HITS)),
        "top_has_director", "top_has_writer", "top_has_cast",
    )

    def _start(self) -> None:
        self.question = media_question(self.prompt)
        self.cues = reading_cues(self.question)
        self.records = [parse_passage(p) for p in media_passages(self.prompt)]

    def _render(self, index: int) -> Choice:
        if index < ANSWER_HITS:
            text = str(self.records[index]["title"]) if index < len(self.records) else NOTHING
            return Choice(answer(text), self.labels[index], "answer", 1)
        top = self.records[0] if self.records else None
        field = FIELDS[index - ANSWER_HITS]
        return Choice(answer(field_value(top, field, self.question)), self.labels[index], "answer", 1)

    def _features(self) -> list[float]:
        in_question = [
            1.0 if i < len(self.records) and named_in(self.question, [str(self.records[i]["title"])]) else 0.0
            for i in range(ANSWER_HITS)
        ]
        top = self.records[0] if self.records else {}
        return [
            *self.cues.values(),
            len(self.records) / ANSWER_HITS, *in_question,
            1.0 if top.get("directors") else 0.0, 1.0 if top.get("writers") else 0.0,
            1.0 if top.get("cast") else 0.0,
        ]


MENUS = (MediaToolsMenu, MediaPassagesMenu)
"""The family's structured menus, the ``Family.structured`` part: the tools menu, then the single-turn one."""
