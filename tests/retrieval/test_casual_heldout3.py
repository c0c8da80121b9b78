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

from ._casual_sets import assert_films_are_new, wrong_answers


def test_casual_heldout3_answers_are_read_out_of_the_real_tool_outputs(bench, registry) -> None:  # type: ignore[no-untyped-def]
    questions = bench.casual_heldout3_questions()
    assert len(questions) == 200
    assert len({q.question for q in questions}) == len(questions)
    kinds = Counter(q.kind for q in questions)
    assert kinds == {"lookup": 100, "constraint": 60, "two_hop": 40}
    wrong = wrong_answers(questions, registry)
    assert not wrong, wrong[:5]


def test_casual_heldout3_films_are_test_films_no_other_set_asks_about(bench) -> None:  # type: ignore[no-untyped-def]
    assert_films_are_new(
        bench,
        "casual-heldout-3",
        bench.casual_heldout3_questions(),
        bench.CASUAL_HELDOUT3,
        ("test",),
    )
