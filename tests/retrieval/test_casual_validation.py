"""The question sets ``benchmarks/retrieval_quality.py`` tunes and reports on, checked against the catalog.

* ``casual-validation`` (``benchmarks/data/casual_validation_questions.jsonl``): hand-written casual
  questions that ``hybrid-minilm``'s fusion is tuned on. Every answer is read out of the real tool
  outputs by replaying the row's plan, as the casual split's are, and every film is a train or
  validation film that neither the casual split (a test split) nor the people-written set asks about.
* ``people`` (``benchmarks/data/people_question_films.jsonl``): the one film each single-film question
  of ``tests/data/people_questions.jsonl`` is about; that film must hold the question's answer.
"""

from __future__ import annotations

import json
import re

from agentenv.corpora.media.catalog import load_catalog
from agentenv.envs.media_search.questions.record import split_of
from agentenv.envs.media_search.tasks.casual import CASUAL_FILE

from ._casual_sets import wrong_answers


def _people_films(bench) -> set[str]:  # type: ignore[no-untyped-def]
    return {g for _, g in bench.question_set("people")}


def test_casual_validation_answers_are_read_out_of_the_real_tool_outputs(bench, registry) -> None:  # type: ignore[no-untyped-def]
    questions = bench.casual_validation_questions()
    assert len(questions) >= 100
    assert len({q.question for q in questions}) == len(questions)
    assert {q.kind for q in questions} == {"lookup", "constraint", "two_hop", "superlative"}
    wrong = wrong_answers(questions, registry)
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
