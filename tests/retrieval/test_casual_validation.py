"""The question sets ``benchmarks/retrieval_quality.py`` tunes and reports on, checked against the catalog.

* ``casual-validation`` (``benchmarks/data/casual_validation_questions.jsonl``): hand-written casual
  questions that ``hybrid-minilm``'s fusion is tuned on. Every answer is read out of the real tool
  outputs by replaying the row's plan, as the casual split's are, and every film is a train or
  validation film that neither the casual split (a test split) nor the people-written set asks about.
* ``people`` (``benchmarks/data/people_question_films.jsonl``): the one film each single-film question
  of ``tests/data/people_questions.jsonl`` is about; that film must hold the question's answer.
"""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pytest

from agentenv.corpora.media.catalog import load_catalog
from agentenv.engine.tools import ToolRegistry
from agentenv.envs.media_search.agents.oracle import dated_title
from agentenv.envs.media_search.grading.grade import read_answer
from agentenv.envs.media_search.questions.record import execute_plan_extract, split_of
from agentenv.envs.media_search.tasks.casual import CASUAL_FILE
from agentenv.envs.media_search.tools.film_tools import make_media_tools
from agentenv.retrieval.bm25 import BM25Retriever

REPO = Path(__file__).resolve().parents[2]


def _benchmark():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location(
        "retrieval_quality", REPO / "benchmarks" / "retrieval_quality.py"
    )
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


@pytest.fixture(scope="module")
def bench():  # type: ignore[no-untyped-def]
    return _benchmark()


@pytest.fixture(scope="module")
def registry() -> ToolRegistry:
    catalog = load_catalog()
    ids, texts = catalog.documents()
    return ToolRegistry(make_media_tools(catalog, BM25Retriever.from_texts(texts, ids)))


def _people_films(bench) -> set[str]:  # type: ignore[no-untyped-def]
    return {g for _, g in bench.question_set("people")}


def test_casual_validation_answers_are_read_out_of_the_real_tool_outputs(bench, registry) -> None:  # type: ignore[no-untyped-def]
    questions = bench.casual_validation_questions()
    assert len(questions) >= 100
    assert len({q.question for q in questions}) == len(questions)
    assert {q.kind for q in questions} == {"lookup", "constraint", "two_hop", "superlative"}
    wrong = []
    for q in questions:
        outputs = []
        for step in q.plan:
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
    assert not wrong, wrong[:5]


def test_casual_validation_films_are_train_or_validation_films_no_test_set_asks_about(
    bench,
) -> None:  # type: ignore[no-untyped-def]
    pairs = bench.question_set("casual-validation")
    films = [g for _, g in pairs]
    assert len(pairs) == len(bench.casual_validation_questions())  # one gold film each
    assert all(split_of(f) in ("train", "validation") for f in films)
    casual_films = set(re.findall(r"\b(?:tt|m)\d+\b", CASUAL_FILE.read_text(encoding="utf-8")))
    assert not set(films) & casual_films
    assert not set(films) & _people_films(bench)


def test_each_people_question_film_holds_its_answer(bench) -> None:  # type: ignore[no-untyped-def]
    catalog = load_catalog()
    rows = {
        r["id"]: r
        for r in map(json.loads, bench.PEOPLE_QUESTIONS.read_text(encoding="utf-8").splitlines())
    }
    films = [
        json.loads(line) for line in bench.PEOPLE_FILMS.read_text(encoding="utf-8").splitlines()
    ]
    assert len({f["id"] for f in films}) == len(films) >= 40
    for f in films:
        title = catalog.get(f["gold"])
        answer = rows[f["id"]]["answer"]
        held = {str(title.year), str(title.runtime), title.title, f"{title.title} ({title.year})"}
        held |= set(title.directors) | set(title.writers) | set(title.cast)
        assert answer in held, (f, answer)
        assert f["title"] == f"{title.title} ({title.year})"
