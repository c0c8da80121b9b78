"""Names typed one letter off: *scorcese*, *zemekis*, *benedict cumberbach*, *christopher reeves*.

Why: people misspell the names they ask about, and a name read wrong is a
name not read at all: the credited-films list
(:class:`~agentenv.envs.media_search.tools.corpus.CreditedFilms`) stays empty
or, for *christopher reeves*, lists Keanu Reeves's films. A misspelt word is
one the catalog's documents never use, so :class:`MisspeltNames` reads a word
as a name only then, and only when exactly one name of a known person is one
edit away (a letter added, dropped, changed, or two swapped); a word of the
documents or of English (:func:`english_words`: *sinking* is one letter from
*Sikking*) is never second-guessed. Known people are those
credited on at least :data:`MIN_FILMS` films: the famous are who people ask
about, and the fewer names the fewer false matches.

Example (the catalog's index is :func:`misspelt_names`):
    >>> names = MisspeltNames(["scorsese", "zemeckis"], ["benedict cumberbatch"], frozenset({"sinking"}))
    >>> names.surname("scorcese"), names.surname("zemekis")
    ('scorsese', 'zemeckis')
    >>> names.person("benedict", "cumberbach")
    'benedict cumberbatch'
    >>> names.surname("sinking") is None  # a word of English or of the documents
    True
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from functools import cache

MIN_FILMS = 5
"""People credited on fewer films are not matched by a misspelling."""

MIN_LENGTH = 6
"""Shorter words are one edit from too many names (*stone*, *store*, *stole*)."""


def _one_deletions(word: str) -> set[str]:
    """The word and each string with one of its letters dropped (the symmetric-delete neighbourhood)."""
    return {word, *(word[:i] + word[i + 1 :] for i in range(len(word)))}


def _one_edit(a: str, b: str) -> bool:
    """Whether ``b`` is ``a`` with one letter added, dropped, changed, or two neighbours swapped.

    Example:
        >>> _one_edit("scorcese", "scorsese"), _one_edit("zemekis", "zemeckis"), _one_edit("ab", "ba")
        (True, True, True)
        >>> _one_edit("stone", "stone"), _one_edit("abcd", "badc")
        (False, False)
    """
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        if len(diff) == 1:
            return True
        i = diff[0]
        return len(diff) == 2 and diff[1] == i + 1 and a[i] == b[i + 1] and a[i + 1] == b[i]
    short, long_ = (a, b) if len(a) < len(b) else (b, a)
    return any(long_[:i] + long_[i + 1 :] == short for i in range(len(long_)))


class MisspeltNames:
    """Known surnames and full names, found from a word one edit away that the documents never use."""

    def __init__(
        self, surnames: Iterable[str], people: Iterable[str], vocabulary: frozenset[str]
    ) -> None:
        self.vocabulary = vocabulary
        self._surnames: defaultdict[str, set[str]] = defaultdict(set)
        for name in surnames:
            for variant in _one_deletions(name):
                self._surnames[variant].add(name)
        self._people: defaultdict[tuple[str, str], set[str]] = defaultdict(set)
        for key in people:
            first, _, last = key.rpartition(" ")
            if first:
                for variant in _one_deletions(last):
                    self._people[(first, variant)].add(key)

    def _misspelt(self, word: str) -> bool:
        return len(word) >= MIN_LENGTH and word.isalpha() and word not in self.vocabulary

    def surname(self, word: str) -> str | None:
        """The one known surname ``word`` misspells, or ``None``."""
        if not self._misspelt(word):
            return None
        found = {
            name
            for variant in _one_deletions(word)
            for name in self._surnames.get(variant, ())
            if _one_edit(word, name)
        }
        return found.pop() if len(found) == 1 else None

    def person(self, first: str, last: str) -> str | None:
        """The catalog key of the one known person named ``first`` and a surname ``last`` misspells, or ``None``.

        The surname may be a word of the documents (*christopher reeves*: Keanu's surname).
        """
        if len(last) < MIN_LENGTH - 1 or not last.isalpha():
            return None
        found = {
            key
            for variant in _one_deletions(last)
            for key in self._people.get((first, variant), ())
            if _one_edit(last, key.rpartition(" ")[2])
        }
        return found.pop() if len(found) == 1 else None


@cache
def misspelt_names() -> MisspeltNames:
    """The catalog's :class:`MisspeltNames`, built once per process (about 3 s); one that reads no
    misspelling where the ``minilm`` extra, whose vocabulary says which words are English, is missing."""
    from agentenv.corpora.media.catalog import load_catalog, normalize_key
    from agentenv.envs.media_search.tools.surnames import surname_index

    english = english_words()
    if english is None:
        return MisspeltNames((), (), frozenset())
    catalog = load_catalog()
    _, texts = catalog.documents()
    vocabulary = frozenset({w for text in texts for w in normalize_key(text).split()} | english)
    known = [
        key
        for key, person in catalog.people.items()
        if len({*person.directed, *person.wrote, *person.acted}) >= MIN_FILMS
    ]
    return MisspeltNames(surname_index().names(), known, vocabulary)


def english_words() -> frozenset[str] | None:
    """The whole words of MiniLM's WordPiece vocabulary (about 20,000): English, so never a misspelt name.

    Why: the documents hold titles and names, not plots, so *sinking* is no word of
    theirs and sits one letter from *Sikking*; an English word is what the person meant.
    The vocabulary is the ``tokenizer.json`` the ``minilm`` extra installs
    (``hybrid-minilm``, the only reader of misspelt names, needs that extra); ``None``
    without it.
    """
    import json

    from agentenv.retrieval.onnx_minilm import tokenizer_file

    try:
        path = tokenizer_file()
    except ImportError:
        return None
    vocab = json.loads(path.read_text(encoding="utf-8"))["model"]["vocab"]
    return frozenset(w for w in vocab if w.isalpha() and w.isascii())
