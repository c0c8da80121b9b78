"""The ``media`` corpus the retrieval server indexes: one document per film of the catalog.

Why a function of its own: the family record names it, so ``agentenv
serve-retrieval --corpus media`` and the env's in-process index read the same
documents with the same checksum.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

from agentenv.retrieval.base import Hit

if TYPE_CHECKING:
    from agentenv.corpora.media.catalog import Person
    from agentenv.retrieval.base import Retriever


def media_documents() -> tuple[tuple[str, ...], tuple[str, ...], str]:
    """``(ids, texts, checksum)`` of the film catalog's documents."""
    from agentenv.corpora.media.catalog import load_catalog

    catalog = load_catalog()
    ids, texts = catalog.documents()
    return tuple(ids), tuple(texts), str(catalog.checksum)


def media_titles() -> list[str]:
    """Each film's title, in the order of :func:`media_documents` (the title trigrams ``retrieval_quality.py --tune`` can fuse)."""
    from agentenv.corpora.media.catalog import load_catalog

    catalog = load_catalog()
    ids, _ = catalog.documents()
    return [catalog.get(i).title for i in ids]  # type: ignore[union-attr]


def bm25_search_query(query: str) -> str:
    """What ``hybrid-minilm``'s BM25 part searches for: the question reader's search query.

    Why: question words and filler ("who wrote", "the one where") match every
    film document that has them; the package's question reader
    (:func:`~agentenv.envs.media_search.questions.reading.read_question`) drops
    them and keeps names, titles and years, which lifted BM25's recall@10 on
    the validation questions from 0.75 to 0.80. MiniLM gets the query as sent
    (:func:`minilm_search_query`): it reads sentences. The reader returns a
    search query unchanged (idempotent on every validation and casual
    question), so an agent that already sends one (the bm25 agent) searches
    for the same words.

    Example:
        >>> bm25_search_query("who wrote juno?")
        'juno'
    """
    from agentenv.envs.media_search.questions.reading import read_question

    return read_question(query).query


def bm25_fused_query(query: str) -> str | None:
    """``hybrid-minilm``'s BM25 part: :func:`bm25_search_query`, or nothing when the credited-films list answers by a sort.

    Why: for *longest peter jackson movie* the credited-films list holds his
    films longest first (:func:`sorted_filmography`); BM25's films for the
    words *longest peter jackson*, fused in, outranked the longest (a film in
    both lists beats one at the top of one), so BM25 sits that query out.

    Example:
        >>> bm25_fused_query("who wrote juno?")
        'juno'
        >>> bm25_fused_query("longest peter jackson movie") is None
        True
    """
    return None if sorted_filmography(query) is not None else bm25_search_query(query)


def minilm_search_query(query: str) -> str | None:
    """What ``hybrid-minilm``'s MiniLM part searches for: the query less the people it names, or nothing when no more describes the film.

    Why: MiniLM finds films named or described loosely, but cannot find a film
    by its people: with the names in, its list for a query of names (two-hop
    and constraint questions, or the bm25 agent's query "1991 jodie foster
    anthony hopkins") only pushes BM25's hits out of the fused top k (the bm25
    agent's accuracy on validation two-hop questions fell 0.86 -> 0.69 with it),
    so a query that names a person and says nothing else about the film leaves
    MiniLM out. One that also names or describes the film (*the pianist adrien
    brody*, *reese witherspoon hiking the pacific crest trail*) keeps MiniLM on
    what is left once the names are taken out (BM25 and the credited-films list
    read the names); with surnames read as people
    (:class:`CreditedFilms`) this lifted recall@10 on the pooled casual
    validation questions from 0.880 to 0.899 (docs/envs/media_search.md,
    Retrievers). A query names a person when two or three of its consecutive
    words are a credited name in the catalog; it describes the film when a word
    of the question reader's query is neither a name's, a number nor phrasing
    (:data:`~agentenv.envs.media_search.tools.phrasing.PHRASING_WORDS`: *together*,
    *one*, genres, decades). A query longer than :data:`MINILM_QUERY_CHARS` characters is
    cut there, so an agent's 500-character query does not cost a search step ~100 ms.

    Example:
        >>> minilm_search_query("who wrote juno?")
        'who wrote juno?'
        >>> minilm_search_query("the pianist adrien brody - director?")
        'the pianist director'
        >>> minilm_search_query("the 1991 movie with jodie foster") is None
        True
        >>> minilm_search_query("jodie foster and anthony hopkins were in a movie together") is None
        True
    """
    from agentenv.corpora.media.catalog import normalize_key
    from agentenv.envs.media_search.tools.phrasing import PHRASING_WORDS

    people = named_people(query)
    if not people:
        return _first_words(query)
    names = name_words_said(query)
    read = normalize_key(bm25_search_query(query)).split()
    if all(w in names or w.isdigit() or w in PHRASING_WORDS for w in read):
        return None
    return _first_words(" ".join(w for w in normalize_key(query).split() if w not in names))


MINILM_QUERY_CHARS = 160
"""MiniLM reads at most this many characters of a query (cut at a word): its cost grows with the
tokens (about 6 ms for a casual question, 90 ms for a 500-character one), and no question of any
set is longer than 116."""


def _first_words(text: str) -> str:
    """``text`` as it is, or its words that fit in :data:`MINILM_QUERY_CHARS` characters.

    Example:
        >>> _first_words("who wrote juno?")
        'who wrote juno?'
        >>> len(_first_words("word " * 100)) <= MINILM_QUERY_CHARS
        True
    """
    if len(text) <= MINILM_QUERY_CHARS:
        return text
    cut = text.rfind(" ", 0, MINILM_QUERY_CHARS + 1)
    return text[: cut if cut > 0 else MINILM_QUERY_CHARS]


def named_people(query: str) -> list[Person]:
    """The credited people a query names: each run of two or three of its words that is a name in the catalog.

    A run of two words that names no one but is a known person's first name and a
    surname one letter off counts too (*benedict cumberbach*;
    :mod:`~agentenv.envs.media_search.tools.misspelt_names`).

    Example:
        >>> [p.name for p in named_people("the 1991 movie with jodie foster")]
        ['Jodie Foster']
        >>> named_people("who wrote juno?")
        []
    """
    return list(_people_said(query)[0])


def name_words_said(query: str) -> frozenset[str]:
    """The words of the people a query names, as the catalog spells them and as the query does.

    Example:
        >>> sorted(name_words_said("jodie foster and anthony hopkins"))
        ['anthony', 'foster', 'hopkins', 'jodie']
    """
    return _people_said(query)[1]


@lru_cache(maxsize=4096)
def _people_said(query: str) -> tuple[tuple[Person, ...], frozenset[str]]:
    from agentenv.corpora.media.catalog import load_catalog, normalize_key
    from agentenv.envs.media_search.tools.misspelt_names import misspelt_names

    people = load_catalog().people
    words = normalize_key(query).split()
    found = []
    said: set[str] = set()
    covered: set[int] = set()
    for n in (2, 3):
        for i in range(len(words) - n + 1):
            person = people.get(" ".join(words[i : i + n]))
            if person is not None:
                found.append(person)
                said.update(words[i : i + n])
                covered.update(range(i, i + n))
    for i in range(len(words) - 1):
        if i in covered or i + 1 in covered:
            continue
        key = misspelt_names().person(words[i], words[i + 1])
        if key is not None:
            found.append(people[key])
            said.update(words[i : i + 2])
            covered.update((i, i + 1))
    said.update(w for p in found for w in normalize_key(p.name).split())
    return tuple(found), frozenset(said)


@lru_cache(maxsize=4096)
def sorted_filmography(query: str) -> tuple[int, ...] | None:
    """The catalog rows of the named people's films in the order a sort question asks, or ``None``.

    ``None`` unless the query asks for the longest, shortest, first or latest of
    the films crediting every person it names and says nothing else
    (:func:`~agentenv.envs.media_search.tools.filmography_order.filmography_sort`),
    and some film credits them all. People are read as :class:`CreditedFilms` reads
    them (full names, and surnames said alone, a surname meaning the person of
    that name with the most films); one person's main line of work comes first (:func:`~agentenv.envs.media_search.tools.filmography_order.main_credits`),
    ties keep the catalog's order. Memoised: both of ``hybrid-minilm``'s parts
    ask, and a policy repeats its queries.

    Example:
        >>> from agentenv.corpora.media.catalog import load_catalog
        >>> load_catalog().titles[sorted_filmography("longest peter jackson movie")[0]].title
        'The Lord of the Rings: The Return of the King'
        >>> sorted_filmography("peter jackson's ring movies") is None
        True
    """
    from agentenv.corpora.media.catalog import load_catalog
    from agentenv.envs.media_search.tools.filmography_order import (
        filmography_sort,
        main_credits,
        sort_key,
    )
    from agentenv.envs.media_search.tools.surnames import surname_index

    people = named_people(query)
    said = surnames_said(query)
    sort = filmography_sort(query, name_words_said(query) | set(said))
    if sort is None:
        return None
    index = surname_index()
    surnames = list(said.values())
    credited = [credits_of(p) for p in people] + [set(index.films(s) or ()) for s in surnames]
    rows = set.intersection(*credited) if credited else set()
    if not rows:
        return None
    catalog = load_catalog()
    main: frozenset[int] = frozenset()
    if len(people) == 1 and not surnames:
        main = main_credits(people[0])
    elif len(surnames) == 1 and not people:  # *spielbergs first movie*: Steven's, not Sasha's
        best_known = index.best_known(surnames[0])
        if best_known is not None:
            main = main_credits(catalog.people[best_known])
    by_sort = sort_key(*sort)
    return tuple(sorted(rows, key=lambda n: (n not in main, by_sort(catalog.titles[n]), n)))  # type: ignore[operator]


def credits_of(person: Person) -> set[int]:
    """The catalog rows of every film ``person`` directed, wrote or acted in."""
    return {*person.directed, *person.wrote, *person.acted}


def surnames_said(query: str) -> dict[str, str]:
    """Each word of the reader's query, less the named people's, that names a surname (as said -> surname).

    Read as :meth:`~agentenv.envs.media_search.tools.surnames.SurnameIndex.surnames_said` reads
    them, misspellings included; memoised, since both of ``hybrid-minilm``'s
    catalog-reading lists ask for every query.

    Example:
        >>> surnames_said("bigelow's bin laden manhunt film")
        {'bigelow': 'bigelow'}
    """
    return dict(_surnames_said(query))


@lru_cache(maxsize=4096)
def _surnames_said(query: str) -> tuple[tuple[str, str], ...]:
    from agentenv.corpora.media.catalog import normalize_key
    from agentenv.envs.media_search.tools.misspelt_names import misspelt_names
    from agentenv.envs.media_search.tools.surnames import surname_index

    names = name_words_said(query)
    read = [w for w in normalize_key(bm25_search_query(query)).split() if w not in names]
    return tuple(surname_index().surnames_said(query, read, misspelt_names().surname).items())


class CreditedFilms:
    """``hybrid-minilm``'s third list: the films crediting every person a query names, in BM25's order.

    Why: a question that describes a film by its people (*bruce willis and milla
    jovovich sci fi from 97*) is BM25's to find, but BM25 ranks by shared words, so
    a film with a long cast, or one whose genre or year is written otherwise, falls
    behind films that share more words (*The Fifth Element* was 12th). Keeping, of
    BM25's top :attr:`scan` for the question reader's query, only the films that credit
    (direct, write or act in) every named person, in BM25's order, puts the films
    that meet all the named credits first; fused, this list lifted recall@10 on the
    casual validation questions from 0.92 to 0.96 and on train + validation
    questions from 0.81 to 0.83 (docs/envs/media_search.md, Retrievers). A person
    named by the surname alone (*bigelow's bin laden manhunt film*) counts too,
    where the catalog uses the word as nothing but a surname
    (:mod:`~agentenv.envs.media_search.tools.surnames`): the film must then credit
    someone of that surname. A question that asks for the longest, shortest,
    first or latest of the named people's films and says nothing else
    (:func:`~agentenv.envs.media_search.tools.filmography_order.filmography_sort`)
    gets those films in that order instead of BM25's. A query that names nobody
    gets the film it asks for by its place in a series, if any
    (:func:`~agentenv.envs.media_search.tools.sequels.series_film`: *third iron
    man movie*), else an empty list (left out of the fusion).
    """

    scan = 1000
    title_words_from = 10
    """A surname found in the title of one of BM25's first this many films is read as a title word."""

    def __init__(self, bm25: Retriever) -> None:
        from agentenv.corpora.media.catalog import load_catalog
        from agentenv.envs.media_search.tools.surnames import surname_index

        self.bm25 = bm25
        self.titles = load_catalog().titles
        self.surnames = surname_index()
        self.row = {t.id: n for n, t in enumerate(self.titles)}

    def search(self, query: str, k: int) -> list[Hit]:
        """Of BM25's top :attr:`scan` for the reader's query, the first ``k`` films crediting every named person."""
        from agentenv.corpora.media.catalog import normalize_key
        from agentenv.envs.media_search.tools.sequels import series_film

        if k <= 0:
            return []
        order = sorted_filmography(query)
        if order is not None:  # *longest peter jackson movie*: the catalog's order, not BM25's
            return [Hit(self.titles[n].id, 1.0 / (r + 1), r) for r, n in enumerate(order[:k])]
        credited = [credits_of(p) for p in named_people(query)]
        if credited and not set.intersection(*credited):
            return []  # no film credits everyone named in full
        said = surnames_said(query)
        if not credited and not said:
            film = series_film(query)  # *third iron man movie*: the film at that place
            return [] if film is None else [Hit(self.titles[film].id, 1.0, 0)]
        hits = self.bm25.search(bm25_search_query(query), self.scan)
        if said:  # a word of a top title names the film, not a person (*sullivan's travels*)
            in_titles = {
                w
                for h in hits[: self.title_words_from]
                for w in normalize_key(self.titles[self.row[h.doc_id]].title).split()
            }
            said = {w: s for w, s in said.items() if w not in in_titles and s not in in_titles}
        credited += [set(self.surnames.films(s) or ()) for s in said.values()]
        if not credited:
            return []
        films = {self.titles[n].id for n in set.intersection(*credited)}
        kept = [h for h in hits if h.doc_id in films][:k]
        return [Hit(h.doc_id, h.score, rank) for rank, h in enumerate(kept)]

    def search_batch(self, queries: Sequence[str], k: int) -> list[list[Hit]]:
        """:meth:`search` for each query."""
        return [self.search(q, k) for q in queries]


MEDIA_FUSION_WEIGHTS = (1.0, 1.0, 1.5)
"""``hybrid-minilm``'s weights over the film catalog: BM25, MiniLM and the credited-films list.

Chosen as :data:`~agentenv.retrieval.HYBRID_MINILM`'s were (``benchmarks/retrieval_quality.py
--tune``: R@10 on the pooled casual validation sets plus R@10 on train + validation questions,
never a test split), again once the credited-films list had learned sorts, sequels and surnames
(it was 1.0 / 0.75 / 1.0): casual validation 372 -> 375 of 422, train and validation samples
-0.6% R@10, the bm25 agent on 1,000 validation episodes 0.937 -> 0.939. Other corpora keep
:data:`~agentenv.retrieval.HYBRID_MINILM`'s."""


MEDIA_HYBRID_VERSION = "media/2"
"""The version of ``hybrid-minilm``'s film-catalog code (its query rewrites and the credited-films
list), in every run's fingerprint beside the fusion's weights (part ``retriever``): bump it in the
commit that changes what they return, so runs searched before and after never share a board.
2: the weights of :data:`MEDIA_FUSION_WEIGHTS` (44e7bec), with filmography sorts, sequels,
possessives and misspelt names; runs before it recorded no ``retriever`` part."""


def media_retriever_params(spec: str) -> dict[str, object]:
    """The family's own arguments for a retriever name (``build_retriever``'s ``params``); none but for ``hybrid-minilm``."""
    if spec == "hybrid-minilm":
        return {
            "rewrites": (bm25_fused_query, minilm_search_query, None),
            "extra_part": CreditedFilms,
            "weights": MEDIA_FUSION_WEIGHTS,
            "version": MEDIA_HYBRID_VERSION,
        }
    return {}


media_documents.retriever_params = media_retriever_params  # type: ignore[attr-defined]  # read by serve-retrieval
