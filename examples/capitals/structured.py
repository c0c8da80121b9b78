"""The structured menus of "capitals" (``Family.structured``): the structured wrapper and the sb3 agent on a
family kept outside agentenv. ``make_structured("capitals.family:Capitals-v0")`` finds them through the registry.

A menu is both the ``Discrete`` action list and the feature extractor: it reads only the text the env shows
(the prompt, then each tool output), never the task. Tools menu: search with the question, open the top hit,
answer a field of the opened country or of the top passage. Single-turn menu: a field of passage 1..3."""

from typing import Any

from agentenv.engine.actions import answer, tool_call
from agentenv.lessons.structured.menu import COMMON_FEATURES, Choice, Menu
from agentenv.lessons.structured.reading import json_or_none
from capitals.agents import PASSAGE

FIELDS = ("capital", "country", "continent")
PASSAGES = 3
CUES = {
    "capital": "capital of",
    "country": "which country",
    "continent": "continent",
}  # wording, never the kind


def question_of(prompt: str) -> str:
    """The question: the text after ``Question:`` (single-turn) or the whole prompt."""
    return prompt.rpartition("Question: ")[2]


def cues(question: str) -> list[float]:
    """1.0 for each field the question's wording points at."""
    asked = question.lower()
    return [1.0 if CUES[f] in asked else 0.0 for f in FIELDS]


class CapitalsToolsMenu(Menu):
    """Menu of ``Capitals-v0``: search, open the top hit, answer a field of the opened country or top passage."""

    name = "capitals-tools"
    required_tools = frozenset({"search", "get_country"})
    labels = (
        "search(question)",
        "get_country(hit 1)",
        *(f"answer {f} of opened country" for f in FIELDS),
        *(f"answer {f} of passage 1" for f in FIELDS),
    )
    feature_names = (*COMMON_FEATURES, *(f"cue_{f}" for f in FIELDS), "hits", "opened")

    def _start(self) -> None:
        self.question = question_of(self.prompt)
        self.hits: list[dict[str, str]] = []
        self.record: dict[str, Any] = {}

    def _render(self, index: int) -> Choice:
        if index == 0:
            return Choice(tool_call("search", query=self.question[:500]), self.labels[0], "tool")
        if index == 1:
            top = self.hits[0]["id"] if self.hits else self.question[:100]
            return Choice(tool_call("get_country", country=top), self.labels[1], "tool")
        field = FIELDS[(index - 2) % len(FIELDS)]
        source = self.record if index < 2 + len(FIELDS) else (self.hits[0] if self.hits else {})
        return Choice(answer(str(source.get(field) or "unknown")), self.labels[index], "answer", 1)

    def _read(self, index: int, obs: str) -> None:
        if index == 0:
            self.hits = [m.groupdict() for m in PASSAGE.finditer(obs)]
        elif isinstance(output := json_or_none(obs), dict):
            self.record = output

    def _features(self) -> list[float]:
        return [*cues(self.question), min(len(self.hits), 5) / 5.0, 1.0 if self.record else 0.0]


class CapitalsPassagesMenu(Menu):
    """Menu of ``Capitals-SingleTurn-v0``: the asked field of passage 1..3 of the prompt."""

    name = "capitals-passages"
    labels = tuple(f"answer {f} of passage {i + 1}" for i in range(PASSAGES) for f in FIELDS)
    feature_names = (*COMMON_FEATURES, *(f"cue_{f}" for f in FIELDS), "passages")

    def _start(self) -> None:
        self.question = question_of(self.prompt)
        self.passages = [m.groupdict() for m in PASSAGE.finditer(self.prompt)]

    def _render(self, index: int) -> Choice:
        i, field = divmod(index, len(FIELDS))
        text = self.passages[i][FIELDS[field]] if i < len(self.passages) else "unknown"
        return Choice(answer(text), self.labels[index], "answer", 1)

    def _features(self) -> list[float]:
        return [*cues(self.question), len(self.passages) / PASSAGES]


MENUS = (CapitalsToolsMenu, CapitalsPassagesMenu)
"""``Family.structured``: the tools menu, then the single-turn one."""
