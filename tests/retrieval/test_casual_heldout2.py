"""``casual-heldout-2`` (``benchmarks/data/casual_heldout2_questions.jsonl``), checked against the catalog.

A second set of hand-written casual questions about films of the generated test split's
film pool, to measure the retrievers once: half lookups, three in ten constraints and one
in five two-hop questions, one gold film each. Every answer is read out of the real tool
outputs by replaying the row's plan, and no film is one that another question set of
``benchmarks/retrieval_quality.py`` (the first held-out set included) asks about.
"""

from __future__ import annotations

from collections import Counter

from ._casual_sets import assert_films_are_new, wrong_answers


def test_casual_heldout2_answers_are_read_out_of_the_real_tool_outputs(bench, registry) -> None:  # type: ignore[no-untyped-def]
    questions = bench.casual_heldout2_questions()
    assert len(questions) >= 200
    assert len({q.question for q in questions}) == len(questions)
    kinds = Counter(q.kind for q in questions)
    assert set(kinds) == {"lookup", "constraint", "two_hop"}
    assert kinds["lookup"] >= kinds["constraint"] >= kinds["two_hop"] > 0
    wrong = wrong_answers(questions, registry)
    assert not wrong, wrong[:5]


def test_casual_heldout2_films_are_test_films_no_other_set_asks_about(bench) -> None:  # type: ignore[no-untyped-def]
    assert_films_are_new(
        bench,
        "casual-heldout-2",
        bench.casual_heldout2_questions(),
        bench.CASUAL_HELDOUT2,
        ("test",),
    )
