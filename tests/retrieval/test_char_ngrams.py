"""Character-trigram retrieval over short texts: loose and misspelt names still find their document."""

from __future__ import annotations

import numpy as np

from agentenv.retrieval.char_ngrams import CharNgramRetriever, char_ngrams

TITLES = [
    "Harry Potter and the Order of the Phoenix",
    "The Order",
    "Pan's Labyrinth",
    "Amélie",
    "Jaws",
    "Jaws 2",
]


def test_trigrams_fold_case_accents_and_punctuation() -> None:
    assert (
        char_ngrams("AMÉLIE!")
        == char_ngrams("amelie")
        == [" am", "ame", "mel", "eli", "lie", "ie "]
    )
    assert char_ngrams("pan's") == [" pa", "pan", "an ", " s "]


def test_misspelt_and_loose_titles_find_their_film() -> None:
    r = CharNgramRetriever.from_texts(TITLES, [f"t{i}" for i in range(len(TITLES))])
    assert r.search("order of the pheonix harry potter", 1)[0].doc_id == "t0"
    assert r.search("amelie", 1)[0].doc_id == "t3"
    assert r.search("pans labyrinth", 1)[0].doc_id == "t2"


def test_scores_are_cosines_ties_go_to_the_lower_row_and_unknown_grams_find_nothing() -> None:
    r = CharNgramRetriever.from_texts(["jaws", "jaws", "jaws 2"])
    hits = r.search("jaws", 3)
    assert [h.doc_id for h in hits] == ["0", "1", "2"]
    assert np.isclose(hits[0].score, 1.0) and hits[2].score < 1.0
    assert [h.rank for h in hits] == [0, 1, 2]
    assert r.search("xq", 3) == [] and r.search("jaws", 0) == []
    assert r.search_batch(["jaws", "xq"], 2) == [hits[:2], []]
