"""``casual-heldout`` (``benchmarks/data/casual_heldout_questions.jsonl``), checked against the catalog.

Hand-written casual questions about films of the generated test split's film pool,
written after ``hybrid-minilm``'s fusion was fixed and measured once, never tuned on.
Every answer is read out of the real tool outputs by replaying the row's plan (as
the casual split's and the casual validation questions' are), and no film is one
that another question set of ``benchmarks/retrieval_quality.py`` asks about.
"""

from __future__ import annotations

from collections import Counter

from ._casual_sets import assert_films_are_new, wrong_answers


def test_casual_heldout_answers_are_read_out_of_the_real_tool_outputs(bench, registry) -> None:  # type: ignore[no-untyped-def]
    questions = bench.casual_heldout_questions()
    assert 120 <= len(questions) <= 150
    assert len({q.question for q in questions}) == len(questions)
    assert set(Counter(q.kind for q in questions)) == {"lookup", "constraint", "two_hop"}
    wrong = wrong_answers(questions, registry)
    assert not wrong, wrong[:5]


def test_casual_heldout_films_are_test_films_no_other_set_asks_about(bench) -> None:  # type: ignore[no-untyped-def]
    assert_films_are_new(
        bench, "casual-heldout", bench.casual_heldout_questions(), bench.CASUAL_HELDOUT, ("test",)
    )
