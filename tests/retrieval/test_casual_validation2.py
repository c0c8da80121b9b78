"""``casual-validation-2`` (``benchmarks/data/casual_validation2_questions.jsonl``), checked against the catalog.

A second set of hand-written casual questions to tune ``hybrid-minilm``'s fusion on, with
``casual-validation``: lookups, constraints, two-hop questions and superlatives in about the first
set's proportions, most of them describing their film rather than naming it. Every answer is read
out of the real tool outputs by replaying the row's plan, every film is a train or validation film,
and no film is one that another question set of ``benchmarks/retrieval_quality.py`` (the casual
split, a test split, included) asks about.
"""

from __future__ import annotations

from collections import Counter

from agentenv.corpora.media.catalog import load_catalog

from ._casual_sets import assert_films_are_new, title_words, wrong_answers


def test_casual_validation2_answers_are_read_out_of_the_real_tool_outputs(bench, registry) -> None:  # type: ignore[no-untyped-def]
    questions = bench.casual_validation2_questions()
    assert len(questions) >= 120
    assert len({q.question for q in questions}) == len(questions)
    kinds = Counter(q.kind for q in questions)
    assert set(kinds) == {"lookup", "constraint", "two_hop", "superlative"}
    assert kinds["lookup"] >= kinds["constraint"] >= kinds["two_hop"] >= kinds["superlative"] > 0
    wrong = wrong_answers(questions, registry)
    assert not wrong, wrong[:5]


def test_casual_validation2_films_are_train_or_validation_films_no_other_set_asks_about(
    bench,
) -> None:  # type: ignore[no-untyped-def]
    assert_films_are_new(
        bench,
        "casual-validation-2",
        bench.casual_validation2_questions(),
        bench.CASUAL_VALIDATION2,
        ("train", "validation"),
    )


def test_few_casual_validation2_questions_name_their_film_in_full(bench) -> None:  # type: ignore[no-untyped-def]
    catalog = load_catalog()
    named = [
        q
        for q, f in bench.question_set("casual-validation-2")
        if title_words(catalog.get(f).title) in title_words(q)
    ]
    assert len(named) < 0.2 * len(bench.casual_validation2_questions()), named


def test_the_tunes_content_gate_counts_the_words_that_describe_a_film(bench) -> None:  # type: ignore[no-untyped-def]
    # an agent's query of names and a year describes nothing; a casual question may describe more
    assert bench.described_words("1991 jodie foster anthony hopkins") == []
    assert bench.described_words("tom hanks vs somali pirates, how long is that one") == [
        "somali",
        "pirates",
        "one",
    ]
    assert bench.strip_people("tom hanks vs somali pirates") == "vs somali pirates"
    assert bench.strip_people("who wrote juno?") == "who wrote juno"
