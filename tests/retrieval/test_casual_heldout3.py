"""``casual-heldout-3`` (``benchmarks/data/casual_heldout3_questions.jsonl``), checked against the catalog.

A third set of hand-written casual questions about films of the generated test split's film
pool: half lookups, three in ten constraints and one in five two-hop questions, one gold film
each. It was written blind (no retriever was run on the questions to choose or word them) and
committed before its first measurement, so it measures the retrievers fairly. Every answer is
read out of the real tool outputs by replaying the row's plan, and no film is one that another
question set of ``benchmarks/retrieval_quality.py`` (both earlier held-out sets included) asks about.
"""

from __future__ import annotations

from collections import Counter

from agentenv.envs.media_search.questions.record import split_of

from ._casual_sets import films_asked_elsewhere, wrong_answers


def test_casual_heldout3_answers_are_read_out_of_the_real_tool_outputs(bench, registry) -> None:  # type: ignore[no-untyped-def]
    questions = bench.casual_heldout3_questions()
    assert len(questions) == 200
    assert len({q.question for q in questions}) == len(questions)
    kinds = Counter(q.kind for q in questions)
    assert kinds == {"lookup": 100, "constraint": 60, "two_hop": 40}
    wrong = wrong_answers(questions, registry)
    assert not wrong, wrong[:5]


def test_casual_heldout3_films_are_test_films_no_other_set_asks_about(bench) -> None:  # type: ignore[no-untyped-def]
    pairs = bench.question_set("casual-heldout-3")
    films = [g for _, g in pairs]
    assert len(pairs) == len(bench.casual_heldout3_questions())  # one gold film each
    assert None not in films
    assert len(set(films)) == len(films)  # one question per film: the resamples are of films
    assert all(split_of(f) == "test" for f in films)
    elsewhere = films_asked_elsewhere(bench, but=bench.CASUAL_HELDOUT3)
    assert not set(films) & elsewhere
