"""``casual-validation-3`` (``benchmarks/data/casual_validation3_questions.jsonl``), checked against the catalog.

A third set of hand-written casual questions to tune ``hybrid-minilm`` on, beside
``casual-validation`` and ``casual-validation-2``: lookups, constraints, two-hop questions and
superlatives in about the second set's proportions, over films from the 1940s to 2014, most of
them describing their film (by cast, director, year, plot, a sequel's number) rather than naming it.
Every answer is read out of the real tool outputs by replaying the row's plan, every film is a
train or validation film, and no film is one that another question set of
``benchmarks/retrieval_quality.py`` (the casual split, a test split, included) asks about.
"""

from __future__ import annotations

from collections import Counter

from agentenv.corpora.media.catalog import load_catalog

from ._casual_sets import assert_films_are_new, title_words, wrong_answers


def test_casual_validation3_answers_are_read_out_of_the_real_tool_outputs(bench, registry) -> None:  # type: ignore[no-untyped-def]
    questions = bench.casual_validation3_questions()
    assert len(questions) >= 140
    assert len({q.question for q in questions}) == len(questions)
    assert all(q.question == q.question.lower() for q in questions)  # typed as people type
    kinds = Counter(q.kind for q in questions)
    assert set(kinds) == {"lookup", "constraint", "two_hop", "superlative"}
    assert kinds["lookup"] >= kinds["constraint"] >= kinds["two_hop"] >= kinds["superlative"] > 0
    wrong = wrong_answers(questions, registry)
    assert not wrong, wrong[:5]


def test_casual_validation3_films_are_train_or_validation_films_no_other_set_asks_about(
    bench,
) -> None:  # type: ignore[no-untyped-def]
    assert_films_are_new(
        bench,
        "casual-validation-3",
        bench.casual_validation3_questions(),
        bench.CASUAL_VALIDATION3,
        ("train", "validation"),
    )


def test_few_casual_validation3_questions_name_their_film_in_full(bench) -> None:  # type: ignore[no-untyped-def]
    catalog = load_catalog()
    named = [
        q
        for q, f in bench.question_set("casual-validation-3")
        if title_words(catalog.get(f).title) in title_words(q)
    ]
    assert len(named) < 0.2 * len(bench.casual_validation3_questions()), named


def test_casual_validation3_spans_the_decades(bench) -> None:  # type: ignore[no-untyped-def]
    catalog = load_catalog()
    decades = Counter(
        catalog.get(f).year // 10 * 10 for _, f in bench.question_set("casual-validation-3")
    )
    assert len(decades) >= 6, decades  # not only the 2000s and 2010s
    assert max(decades.values()) < 0.6 * sum(decades.values()), decades
