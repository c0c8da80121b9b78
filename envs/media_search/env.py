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
questions, mostly in casual forms (``question_style="varied"``, the default;
``"template"`` serves the old template phrasings); ``casual``: 257 hand-written
questions for evaluation; or your own JSONL via ``tasks=``.

## Options for small models
``compact=True``: a short system prompt and plain-text tool outputs
(:mod:`agentenv.envs.media_search.tools.compact`) instead of JSON; the same tasks,
tools, arguments, errors and grading. ``kinds=["lookup", ...]``: serve only
questions of these kinds (of ``comparison``, ``constraint``, ``count``,
``lookup``, ``superlative``, ``two_hop``), in the split's order, with the same
task ids; it filters ``tasks=`` questions too.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from functools import lru_cache
from typing import Any, Literal

from agentenv.core import Task, ToolEnv
from agentenv.corpora.media.catalog import Catalog, load_catalog
from agentenv.engine.env_options import bool_option
from agentenv.engine.parsing import Answer
from agentenv.engine.tools import ToolRegistry
from agentenv.engine.turns import Episode
from agentenv.envs.media_search.grading.answer_catalog import AnswerCatalog, answer_catalog
from agentenv.envs.media_search.grading.first_call import first_call_component
from agentenv.envs.media_search.grading.grade import read_answer
from agentenv.envs.media_search.questions.cache import prefetch_questions
from agentenv.envs.media_search.questions.record import (
    DEFAULT_STYLE,
    KIND_SHARES,
    STYLES,
    Question,
)
from agentenv.envs.media_search.tasks.question_tasks import (
    ANSWER_RULES,
    EVAL_SPLITS,
    SPLITS,
    QuestionTasks,
    TaskSource,
    question_set_checksum,
    question_task_from_dict,
    question_tasks,
    split_questions,
)
from agentenv.envs.media_search.tools.film_tools import catalog_retriever, make_media_tools
from agentenv.retrieval.base import Retriever


class PassageTexts(Mapping[str, str]):
    """Each title's passage text (:meth:`Title.document`) by id, written when a prompt asks for it.

    Why not a dict of all 17,472: written at make they were a tenth of a warm ``gym.make`` (about
    40 ms), and per env 6.8 MB (``benchmarks/vector_memory.py``); a prompt needs ``passages`` of
    them, a few microseconds each. Holds nothing but the catalog, so it is shared as is.
    """

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog

    def __getitem__(self, doc_id: str) -> str:
        title = self.catalog.get(doc_id)
        if title is None:
            raise KeyError(doc_id)
        return title.document()

    def __iter__(self) -> Iterator[str]:
        return (t.id for t in self.catalog)

    def __len__(self) -> int:
        return len(self.catalog)


@lru_cache(maxsize=4)
def passage_texts(catalog: Catalog) -> PassageTexts:
    """The :class:`PassageTexts` of a catalog, one per process."""
    return PassageTexts(catalog)


__all__ = ["ANSWER_RULES", "KINDS", "MediaSearchEnv"]

KINDS = tuple(sorted(KIND_SHARES))
"""The question kinds of the generated splits, the values ``kinds=`` accepts."""

COMPACT_ANSWER_RULE = "Answer as <answer>…</answer> holding only the title, name or number."
""":data:`ANSWER_RULES`, shortened for ``compact=True``."""


GRADED_COMPONENTS = frozenset(("accuracy", "first_call"))
"""What :meth:`MediaSearchEnv._grade` reports, beside the behaviour components."""


class MediaSearchEnv(ToolEnv):
    """Multi-turn agentic RAG (``mode="multi_turn"``) or linear RAG (``"single_turn"``).

    ``compact=True`` shortens the system prompt and writes tool outputs as plain
    lines (for small models with short contexts); ``kinds`` keeps only questions
    of those kinds. See "Options for small models" in the module docstring.
    ``question_style="template"`` serves the generated splits in the old template
    phrasings instead of the default ``varied`` ones (mostly casual); results
    record the set served (``corpus_checksums["questions"]``).
    """

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
        compact: bool = False,
        kinds: Sequence[str] | None = None,
        question_style: str = DEFAULT_STYLE,
        **kwargs: Any,
    ) -> None:
        if mode not in ("multi_turn", "single_turn"):
            raise ValueError(f"mode must be 'multi_turn' or 'single_turn', got {mode!r}")
        if not 1 <= passages <= 20:
            raise ValueError(f"passages must be in 1..20, got {passages}")
        self.mode = mode
        self.passages = passages
        self.tools_in_prompt = bool_option("tools_in_prompt", tools_in_prompt)
        self.compact = bool_option("compact", compact)
        if catalog is not None and not isinstance(catalog, Catalog):
            raise TypeError(
                f"catalog must be a Catalog (agentenv.corpora.media.catalog.load_catalog()), got "
                f"{type(catalog).__name__}; leave it out for the shipped catalog"
            )
        self.catalog = catalog or load_catalog()
        self.answers = (answer_catalog() if catalog is None else AnswerCatalog(self.catalog)).load()
        self._models: dict[str, Any] = {}
        self._models_of: ToolRegistry | None = None
        # One per process; it writes each passage when a prompt needs it (no dict of all of them to build or copy).
        self._doc_text: Mapping[str, str] | None = (
            passage_texts(self.catalog) if mode == "single_turn" else None
        )
        if question_style not in STYLES:
            raise ValueError(
                f"question_style must be one of {', '.join(STYLES)}, got {question_style!r}"
            )
        self.question_style = question_style
        if tasks is None and split in SPLITS:
            prefetch_questions(
                style=question_style, split=split
            )  # with $AGENTENV_BUILD_WORKERS > 1, drawn while the index builds (train only)
        self.retriever = catalog_retriever(self.catalog, retriever)
        served = question_tasks(split, tasks, question_style)
        if kinds is not None:
            served = only_kinds(served, kinds)
        self.kinds = None if kinds is None else tuple(kinds)
        tools = ToolRegistry(
            make_media_tools(self.catalog, self.retriever, compact=compact)
            if mode == "multi_turn"
            else []
        )
        kwargs["single_turn"] = mode == "single_turn"
        super().__init__(served, tools, split=served.split, **kwargs)
        self.check_reward_components()
        self.corpus_checksums = {"media": self.catalog.checksum}
        questions = question_set_checksum(served.split, question_style)
        if questions is not None:
            self.corpus_checksums["questions"] = questions

    # ------------------------------------------------------------------ hooks
    def _system_prompt(self) -> str:
        if self.compact:
            return self._compact_system_prompt()
        if self.mode == "single_turn":
            return (
                "You answer questions about films using the catalog passages given with the question. "
                + ANSWER_RULES
            )
        lines = [
            "You answer questions about films by searching a film catalog (1940-2014) with tools.",
            'Call a tool with <tool_call>{"name": TOOL, "arguments": {...}}</tool_call>; '
            "several calls in one turn are allowed. "
            + self.tools.prompt_text(self.tools_in_prompt),
        ]
        lines.append(f"You have at most {self.max_turns} turns. " + ANSWER_RULES)
        return "\n".join(lines)

    def _compact_system_prompt(self) -> str:
        """About three short lines (one in single-turn): tools with their arguments, call format, answer rule."""
        if self.mode == "single_turn":
            return "Answer the film question from the passages. " + COMPACT_ANSWER_RULE
        signatures = ", ".join(
            f"{name}({', '.join(self.tools[name].args_model.model_fields)})"
            for name in self.tools.names
        )
        lines = [
            f"Tools: {signatures}.",
            'Call: <tool_call>{"name": ..., "arguments": {...}}</tool_call>',
            f"At most {self.max_turns} turns. {COMPACT_ANSWER_RULE}",
        ]
        if self.tools_in_prompt:
            lines.insert(1, self.tools.prompt_text(True))
        return "\n".join(lines)

    def _task_prompt(self, task: Task) -> str:
        if self.mode == "multi_turn":
            return task.prompt
        if self._doc_text is None:
            self._doc_text = passage_texts(self.catalog)
        hits = self.retriever.search(task.prompt, self.passages)
        passages = "\n".join(f"[{i + 1}] {self._doc_text[h.doc_id]}" for i, h in enumerate(hits))
        return f"Passages:\n{passages}\n\nQuestion: {task.prompt}"

    def _grade(self, task: Task, answer: Answer | None, episode: Episode) -> dict[str, float]:
        question: Question = task.case
        # Only a call that ran (tool_calls) or was refused (invalid_actions) writes a tool call to
        # the chat: an episode with neither has no first call, and its messages need no walk.
        first_call = (
            first_call_component(episode.messages, question.plan, self._argument_models())
            if episode.tool_calls or episode.invalid_actions
            else 0.0
        )
        if answer is None:
            return {"accuracy": 0.0, "first_call": first_call}
        correct, episode.answer_feedback = read_answer(answer.text, question, self.answers)
        return {"accuracy": 1.0 if correct else 0.0, "first_call": first_call}

    def _graded_components(self) -> frozenset[str]:
        return GRADED_COMPONENTS

    def _argument_models(self) -> dict[str, Any]:
        """Each tool's argument model, by name (the ``first_call`` component validates calls with them)."""
        tools = self.tools
        if self._models_of is not tools:  # the registry can be swapped after make
            self._models = {name: tools[name].args_model for name in tools.names}
            self._models_of = tools
        return self._models

    def _task_from_dict(self, data: Mapping[str, Any]) -> Task:
        return question_task_from_dict(data)


def only_kinds(served: QuestionTasks, kinds: Sequence[str]) -> QuestionTasks:
    """The questions of ``served`` whose kind is in ``kinds``, in ``served``'s order (same task ids).

    A kind must be one of :data:`KINDS` or a kind of the served questions (your
    own ``tasks=`` may use others); else ``ValueError`` naming the valid kinds,
    as for a filter that keeps no question.
    """
    if isinstance(kinds, str):
        raise TypeError(
            f"kinds must be a list of kinds, e.g. [{kinds!r}], got the string {kinds!r}"
        )
    wanted = list(kinds)
    if not wanted:
        raise ValueError(f"kinds is empty; give some of {', '.join(KINDS)}")
    # A generated split's questions directly: building all of its Tasks (an id hash each) would double the cost.
    questions = (
        split_questions(served.split, served.style)
        if served.split in SPLITS + EVAL_SPLITS
        else [t.case for t in served]
    )
    present = {q.kind for q in questions}
    valid = sorted(set(KINDS) | present)
    unknown = [k for k in wanted if k not in valid]
    if unknown:
        raise ValueError(f"unknown question kinds {unknown}; valid kinds: {', '.join(valid)}")
    keep = set(wanted)
    chosen = [q for q in questions if q.kind in keep]
    if not chosen:
        raise ValueError(
            f"no question of kinds {wanted} in split {served.split!r}; its kinds: {', '.join(sorted(present))}"
        )
    return QuestionTasks(chosen, served.split, served.style)
