"""``casual-heldout`` (``benchmarks/data/casual_heldout_questions.jsonl``), checked against the catalog.

Hand-written casual questions about films of the generated test split's film pool,
written after ``hybrid-minilm``'s fusion was fixed and measured once, never tuned on.
Every answer is read out of the real tool outputs by replaying the row's plan (as
the casual split's and the casual validation questions' are), and no film is one
that another question set of ``benchmarks/retrieval_quality.py`` asks about.
"""

from __future__ import annotations

import importlib.util
import json
import re
from collections import Counter
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
_FILM = re.compile(r"\b(?:tt|m)\d+\b")


@pytest.fixture(scope="module")
def bench():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location(
        "retrieval_quality", REPO / "benchmarks" / "retrieval_quality.py"
    )
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


@pytest.fixture(scope="module")
def registry() -> ToolRegistry:
    catalog = load_catalog()
    ids, texts = catalog.documents()
    return ToolRegistry(make_media_tools(catalog, BM25Retriever.from_texts(texts, ids)))


def test_casual_heldout_answers_are_read_out_of_the_real_tool_outputs(bench, registry) -> None:  # type: ignore[no-untyped-def]
    questions = bench.casual_heldout_questions()
    assert 120 <= len(questions) <= 150
    assert len({q.question for q in questions}) == len(questions)
    assert set(Counter(q.kind for q in questions)) == {"lookup", "constraint", "two_hop"}
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
        found = execute_plan_extract(q.extract or {}, outputs)
        if q.answer_type == "title":
            found = dated_title(found, outputs)
        if not read_answer(found, q).correct:
            wrong.append((q.question, q.answer, found))
    assert not wrong, wrong[:5]


def test_casual_heldout_films_are_test_films_no_other_set_asks_about(bench) -> None:  # type: ignore[no-untyped-def]
    pairs = bench.question_set("casual-heldout")
    films = [g for _, g in pairs]
    assert len(pairs) == len(bench.casual_heldout_questions())  # one gold film each
    assert None not in films
    assert len(set(films)) == len(films)  # one question per film: the resamples are of films
    assert all(split_of(f) == "test" for f in films)
    elsewhere = set(_FILM.findall(CASUAL_FILE.read_text(encoding="utf-8")))
    for path in (bench.CASUAL_VALIDATION, bench.OWN_QUESTIONS, bench.PEOPLE_FILMS):
        elsewhere |= set(_FILM.findall(path.read_text(encoding="utf-8")))
    assert not set(films) & elsewhere
