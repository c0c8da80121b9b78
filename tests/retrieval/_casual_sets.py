"""Shared checks of the hand-written casual question sets of ``benchmarks/retrieval_quality.py``.

A row's answer is proven by replaying its plan through the real tools; a held-out set's films
must be test-pool films that no other question set asks about.
"""

from __future__ import annotations

import importlib.util
import json
import re
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

from agentenv.corpora.media.catalog import load_catalog
from agentenv.engine.tools import ToolRegistry
from agentenv.envs.media_search.agents.oracle import dated_title
from agentenv.envs.media_search.grading.grade import read_answer
from agentenv.envs.media_search.questions.record import Question, execute_plan_extract, split_of
from agentenv.envs.media_search.tasks.casual import CASUAL_FILE
from agentenv.envs.media_search.tools.film_tools import make_media_tools
from agentenv.retrieval.bm25 import BM25Retriever

REPO = Path(__file__).resolve().parents[2]
_FILM = re.compile(r"\b(?:tt|m)\d+\b")


def load_benchmark() -> ModuleType:
    """``benchmarks/retrieval_quality.py`` as a module (it is a script, not part of the package)."""
    spec = importlib.util.spec_from_file_location(
        "retrieval_quality", REPO / "benchmarks" / "retrieval_quality.py"
    )
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def tool_registry() -> ToolRegistry:
    """The MediaSearch tools over the catalog (BM25 behind ``search``, which no answer depends on)."""
    catalog = load_catalog()
    ids, texts = catalog.documents()
    return ToolRegistry(make_media_tools(catalog, BM25Retriever.from_texts(texts, ids)))


def wrong_answers(
    questions: Sequence[Question], registry: ToolRegistry
) -> list[tuple[str, str, str]]:
    """Replay each question's plan and return ``(question, gold, found)`` for each answer the tool
    outputs do not give; a constraint's or two-hop's filter must leave exactly one film, and a
    superlative's ranking must have no tie for first place."""
    wrong = []
    for q in questions:
        outputs = []
        for step in q.plan or ():
            tool = registry[step["tool"]]
            result = registry.execute(tool, tool.args_model.model_validate(step["arguments"]))
            assert result.ok, (q.question, result.content)
            outputs.append(json.loads(result.content))
        if q.kind in ("constraint", "two_hop"):  # the filter describes one film alone
            assert outputs[0]["count"] == 1, q.question
        if q.kind == "superlative":  # no tie for first place
            key = q.plan[0]["arguments"]["sort_by"]
            first = outputs[0]["results"]
            assert len(first) < 2 or first[0][key] != first[1][key], q.question
        found = execute_plan_extract(q.extract or {}, outputs)
        if q.answer_type == "title":
            found = dated_title(found, outputs)
        if not read_answer(found, q).correct:
            wrong.append((q.question, q.answer, found))
    return wrong


def films_asked_elsewhere(bench: ModuleType, but: Path) -> set[str]:
    """Every film id named in the package's casual split and the benchmark's question files, ``but`` one."""
    paths = [
        CASUAL_FILE,
        bench.CASUAL_VALIDATION,
        bench.CASUAL_VALIDATION2,
        bench.CASUAL_VALIDATION3,
        bench.OWN_QUESTIONS,
        bench.PEOPLE_FILMS,
        bench.PEOPLE_QUESTIONS,
        bench.CASUAL_HELDOUT,
        bench.CASUAL_HELDOUT2,
        bench.CASUAL_HELDOUT3,
    ]
    assert but in paths
    return {f for p in paths if p != but for f in _FILM.findall(p.read_text(encoding="utf-8"))}


def assert_films_are_new(
    bench: ModuleType,
    name: str,
    questions: Sequence[Question],
    path: Path,
    splits: tuple[str, ...],
) -> None:
    """Set ``name``'s films (its ``questions``, read from ``path``): one gold film a question, each asked
    once (the resamples are of films), all of ``splits``, and none another question set asks about."""
    pairs = bench.question_set(name)
    films = [g for _, g in pairs]
    assert len(pairs) == len(questions)  # one gold film each
    assert None not in films
    assert len(set(films)) == len(films)  # one question per film
    assert all(split_of(f) in splits for f in films)
    assert not set(films) & films_asked_elsewhere(bench, but=path)


def title_words(text: str) -> str:
    """``text``'s lowercase words, spaced at both ends, so ``in`` finds a title's whole words in a question."""
    return " " + " ".join(re.findall(r"[a-z0-9]+", text.lower())) + " "
