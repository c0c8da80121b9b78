"""MediaSearch: find films, people and numbers in a real 17k-film catalog.

## Task
Answer a question about films from the Wikidata-derived catalog shipped in
PyPI ``bokeh-sampledata==2026.1`` (1940-2014): single lookups, constraint
search, superlatives, two-hop questions, comparisons and counts. Every gold
answer is verified unique against the catalog.

## Observation
The question on reset; then tool output as compact JSON, or an error message
for an unparseable action. ``info["messages"]`` holds the chat.

## Actions and tools
Text. ``MediaSearch-v0``: ``search``, ``filter_titles``, ``get_title``,
``find_person`` as ``<tool_call>`` JSON, then ``<answer>…</answer>``; at most
``max_turns`` (8) actions. ``MediaSearch-SingleTurn-v0``: no tools; the top
retrieved passages are in the prompt; one answer.

## Reward components
``accuracy`` (rule-based grader: normalisation, aliases, ids, numbers),
``format``, ``tool_calls``, ``turns``, ``invalid_actions``, ``tool_errors``.

## Splits
``train`` (≥ 20,000), ``validation`` (1,000) and ``test`` (1,000) generated
questions; or your own JSONL via ``tasks=``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from agentenv.core import Task, ToolEnv
from agentenv.corpora.media import Catalog, load_catalog
from agentenv.envs.media_search.grading import grade_answer
from agentenv.envs.media_search.question_tasks import (
    ANSWER_RULES,
    SPLITS,
    TaskSource,
    question_task_from_dict,
    question_tasks,
)
from agentenv.envs.media_search.questions import Question, prefetch_questions
from agentenv.envs.media_search.tools import catalog_retriever, make_media_tools
from agentenv.parsing import Answer
from agentenv.retrieval.base import Retriever
from agentenv.tools import ToolRegistry
from agentenv.turns import Episode

__all__ = ["ANSWER_RULES", "MediaSearchEnv"]


class MediaSearchEnv(ToolEnv):
    """Multi-turn agentic RAG (``mode="multi_turn"``) or linear RAG (``"single_turn"``)."""

    def __init__(
        self,
        *,
        mode: Literal["multi_turn", "single_turn"] = "multi_turn",
        split: str = "train",
        tasks: TaskSource | None = None,
        retriever: str | Retriever = "bm25",
        passages: int = 5,
        catalog: Catalog | None = None,
        tools_in_prompt: bool = False,
        **kwargs: Any,
    ) -> None:
        if mode not in ("multi_turn", "single_turn"):
            raise ValueError(f"mode must be 'multi_turn' or 'single_turn', got {mode!r}")
        if not 1 <= passages <= 20:
            raise ValueError(f"passages must be in 1..20, got {passages}")
        self.mode = mode
        self.passages = passages
        self.tools_in_prompt = bool(tools_in_prompt)
        self.catalog = catalog or load_catalog()
        self._doc_text: dict[str, str] | None = None
        if tasks is None and split in SPLITS:
            prefetch_questions()  # with $AGENTENV_BUILD_WORKERS > 1, a first use draws them while the index builds
        self.retriever = catalog_retriever(self.catalog, retriever)
        served = question_tasks(split, tasks)
        tools = ToolRegistry(make_media_tools(self.catalog, self.retriever) if mode == "multi_turn" else [])
        kwargs["single_turn"] = mode == "single_turn"
        super().__init__(served, tools, split=served.split, **kwargs)
        self.corpus_checksums = {"media": self.catalog.checksum}

    # ------------------------------------------------------------------ hooks
    def _system_prompt(self) -> str:
        if self.mode == "single_turn":
            return (
                "You answer questions about films using the catalog passages given with the question. "
                + ANSWER_RULES
            )
        lines = [
            "You answer questions about films by searching a film catalog (1940-2014) with tools.",
            'Call a tool with <tool_call>{"name": TOOL, "arguments": {...}}</tool_call>; '
            "several calls in one turn are allowed. " + self.tools.prompt_text(self.tools_in_prompt),
        ]
        lines.append(f"You have at most {self.max_turns} turns. " + ANSWER_RULES)
        return "\n".join(lines)

    def _task_prompt(self, task: Task) -> str:
        if self.mode == "multi_turn":
            return task.prompt
        if self._doc_text is None:
            self._doc_text = dict(zip(*self.catalog.documents(), strict=False))
        hits = self.retriever.search(task.prompt, self.passages)
        passages = "\n".join(f"[{i + 1}] {self._doc_text[h.doc_id]}" for i, h in enumerate(hits))
        return f"Passages:\n{passages}\n\nQuestion: {task.prompt}"

    def _grade(self, task: Task, answer: Answer | None, episode: Episode) -> dict[str, float]:
        question: Question = task.case
        correct = answer is not None and grade_answer(answer.text, question)
        return {"accuracy": float(correct)}

    def _task_from_dict(self, data: Mapping[str, Any]) -> Task:
        return question_task_from_dict(data)



