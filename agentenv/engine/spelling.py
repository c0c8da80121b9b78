"""Spellings of catalog names: the benign variants an answer may write, and nothing else.

Why not normalise both sides to ``[0-9a-z ]`` and compare: that erases every
character the grader does not know, so ``¬G``, ``G ❌`` and ``~~G~~`` all
become ``G``. Here nothing is erased that the catalog does not account for.
A text is read as a :class:`Spelling`:

* **words**: runs of characters that are neither whitespace nor punctuation
  nor symbols, after Unicode NFKC and case folding. Combining marks, format
  characters and emoji modifiers stay inside their word, so ``G̶`` is not
  ``G``;
* **marks**: each punctuation or symbol character (Unicode categories P* and
  S*), with the number of words before it.

The explicit benign rules, applied the same way to the catalog and to the
answer:

* case and Unicode NFKC (full-width forms, ligatures);
* a hyphen or en dash *between two word characters* is a space
  (``Loeys-Dietz`` = ``Loeys Dietz``); anywhere else it is a mark;
* a possessive ``'s`` is dropped (``Alzheimer's disease`` = ``Alzheimer disease``).

A text matches a catalog name when its words are the name's words and its
marks are a **subsequence** of the name's marks: an answer may leave out
punctuation that the name has (``Neurofibromatosis type II`` for
``Neurofibromatosis, type II``), never add any (``G?``, ``!G``, ``G, not``).
The catalog side also indexes each name without accents (``Sjogren`` for
``Sjögren``), and a name holding the dotless ``ı`` with it written ``i`` (with and without its
accents: ``AÇIKBAŞ`` upper-cased, cased back, is ``açikbaş``); the answer side never strips any. A family adds its own word
rules (Roman numerals, a leading article) as further *tiers*, tried only when
no earlier tier matched anything.

Example:
    >>> spell("Loeys–Dietz syndrome, type II")
    Spelling(words=('loeys', 'dietz', 'syndrome', 'type', 'ii'), marks=((3, ','),))
    >>> spell("¬ Marfan's syndrome?").marks
    ((0, '¬'), (2, '?'))
    >>> index = SpellingIndex([("OMIM:1", "Neurofibromatosis, type II"), ("OMIM:2", "Sjögren syndrome")])
    >>> [index.lookup(t).refs for t in ("neurofibromatosis type II", "Sjogren syndrome", "Sjögren syndrome?")]
    [('OMIM:1',), ('OMIM:2',), ()]
"""

from __future__ import annotations

import re
import unicodedata
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache
from typing import Any, NamedTuple

from agentenv.engine.answer_grammar import is_space

_HYPHEN_IN_WORD = re.compile(r"(?<=\w)[-\u2010\u2013](?=\w)")
_POSSESSIVE = re.compile(r"(?<=\w)['\u2019]s(?!\w)")
_ASCII_MARK = r"!-/:-@\[-`{-~"
_ASCII_TOKEN = re.compile(rf"[{_ASCII_MARK}]|[^ \t\r{_ASCII_MARK}]+")
_ASCII_PLAIN_BREAK = re.compile(rf"[{_ASCII_MARK}\n\x0b\x0c\x1c-\x1f]")
"""What keeps an ASCII text off the plain path: a mark, or whitespace that ``str.split`` cuts at and the
token pattern does not (without any, the words are ``str.split()``'s and there are no marks)."""
_ASCII_PUNCTUATION = frozenset(chr(c) for c in range(0x21, 0x7F) if not chr(c).isalnum())
"""ASCII fast path: every ASCII punctuation or symbol character is a mark (all are Unicode P* or S*)."""

RULES_VERSION = 2
"""Bump when a benign rule changes: cached indexes (:mod:`agentenv.engine.spelling_cache`) are then rebuilt.
2: the catalog side also indexes a name with the dotless ``ı`` written ``i``, with its accents and
without them (upper-casing writes ``ı`` as ASCII ``I``)."""

Marks = tuple[tuple[int, str], ...]
WordRule = Callable[[Sequence[str]], "list[str | None]"]
"""A family's word rule: the replacement of each word (``None``: the word is dropped)."""


class Spelling(NamedTuple):
    """A text as words and marks (see the module docstring)."""

    words: tuple[str, ...]
    marks: Marks


@lru_cache(maxsize=1 << 12)
def spell(text: str) -> Spelling:
    """The :class:`Spelling` of ``text`` under the benign rules; linear in its length (memoised: a
    policy repeats its answers)."""
    return spell_once(text)


def spell_once(text: str) -> Spelling:
    """:func:`spell` without the memo, for building an index of many names once.

    An ASCII text with no punctuation (most people's names) takes a plain path, ``str.split`` (the
    same words: a test compares both paths on generated texts).
    """
    if text.isascii():
        folded = text.lower()
        if _ASCII_PLAIN_BREAK.search(folded) is None:
            return Spelling(tuple(folded.split()), ())
        return _spell_folded(folded)
    return _spell_folded(unicodedata.normalize("NFKC", text).casefold())


def _spell_folded(folded: str) -> Spelling:
    """:func:`spell_once` of an already folded text (lower-cased ASCII, or NFKC and case-folded)."""
    folded = _POSSESSIVE.sub("", _HYPHEN_IN_WORD.sub(" ", folded))
    words: list[str] = []
    marks: list[tuple[int, str]] = []
    if folded.isascii():
        for token in _ASCII_TOKEN.findall(folded):
            if len(token) == 1 and not token.isalnum() and token in _ASCII_PUNCTUATION:
                marks.append((len(words), token))
            else:
                words.append(token)
        return Spelling(tuple(words), tuple(marks))
    start = None
    for i, ch in enumerate(folded):
        mark = unicodedata.category(ch)[0] in "PS"
        if mark or is_space(ch):
            if start is not None:
                words.append(folded[start:i])
                start = None
            if mark:
                marks.append((len(words), ch))
        elif start is None:
            start = i
    if start is not None:
        words.append(folded[start:])
    return Spelling(tuple(words), tuple(marks))


def without_accents(word: str) -> str:
    """``word`` with the accents of its letters removed, and the dotless ``ı`` written ``i`` (catalog
    side only).

    Why ``ı``: it has no decomposition, and upper-casing writes it as ASCII ``I``, so
    ``"Aykut Kayacık".upper()`` cased back is ``kayacik``; case never counts, so that must read
    as the name, as ``Kayacik`` (written without the Turkish letter, as ``Sjogren`` is).

    Example:
        >>> without_accents("sjögren"), without_accents("armendáriz"), without_accents("kayacık")
        ('sjogren', 'armendariz', 'kayacik')
    """
    if word.isascii():
        return word
    decomposed = unicodedata.normalize("NFD", word.replace("ı", "i"))
    return unicodedata.normalize(
        "NFC", "".join(c for c in decomposed if unicodedata.category(c) != "Mn")
    )


def apply_rule(rule: WordRule, spelling: Spelling) -> Spelling:
    """``spelling`` with a family word rule applied; marks keep their place between the same words."""
    replaced = rule(spelling.words)
    position = [0] * (len(replaced) + 1)
    kept: list[str] = []
    for i, word in enumerate(replaced):
        position[i] = len(kept)
        if word is not None:
            kept.append(word)
    position[len(replaced)] = len(kept)
    return Spelling(tuple(kept), tuple((position[p], ch) for p, ch in spelling.marks))


def _compact(table: dict[str, list[tuple[str, Marks]]]) -> Table:
    """A tier with each lone, unmarked row stored as its bare ref (see :data:`Table`)."""
    return {
        key: rows[0][0] if len(rows) == 1 and not rows[0][1] else rows
        for key, rows in table.items()
    }


def _marks(marks: Any) -> Marks:
    """Marks as tuples (a table loaded from JSON holds them as lists)."""
    return marks if type(marks) is tuple else tuple(tuple(m) for m in marks)


def is_subsequence(part: Marks, whole: Marks) -> bool:
    """Whether every mark of ``part`` appears in ``whole``, in order (linear).

    Example:
        >>> is_subsequence(((1, ","),), ((1, ","), (3, ",")))
        True
        >>> is_subsequence(((0, "!"),), ((2, "!"),))
        False
    """
    j = 0
    for mark in part:
        while j < len(whole) and whole[j] != mark:
            j += 1
        if j == len(whole):
            return False
        j += 1
    return True


class SpellingMatch(NamedTuple):
    """The catalog references a text matches in the first tier that matched any, and how (a named tuple:
    made on every lookup, so it costs a tuple's construction, not a frozen dataclass's)."""

    refs: tuple[str, ...]
    how: str
    """The tier's name (``exact`` or a family rule's), ``ambiguous`` with several refs, or ``none``."""

    @property
    def ref(self) -> str | None:
        """The one reference matched, or None (no match, or several)."""
        return self.refs[0] if len(self.refs) == 1 else None


Table = dict[str, "str | list[tuple[str, Marks]]"]
"""One tier: the words of a spelling joined by spaces (no word holds one) -> ``(ref, marks)`` of each name
with those words, or just the ref where it is the only one and has no marks (most names: compact in
memory, and quick to load from the disk cache)."""


class SpellingIndex:
    """Catalog names by their spelling, in tiers: exact words first, then each family rule.

    ``rules`` are ``(tier name, rule)`` pairs; a rule's tier indexes every
    name with the rule applied, and the answer is looked up with the same
    rule. ``extra`` are ``(tier name, [(ref, spelling)])`` tiers the family
    builds itself (e.g. titles without a leading article that collide with
    no other title), tried last. Built once per catalog (or loaded from a
    disk cache with :meth:`from_state`); read-only after.
    """

    def __init__(
        self,
        names: Iterable[tuple[str, str]],
        rules: Sequence[tuple[str, WordRule]] = (),
        extra: Sequence[tuple[str, Iterable[tuple[str, Spelling]]]] = (),
    ) -> None:
        self.rules = tuple(rules)
        tables: list[tuple[str, WordRule | None, Table]] = [
            ("exact", None, defaultdict(list)),
            *((name, rule, defaultdict(list)) for name, rule in self.rules),
        ]
        for ref, name in names:
            base = spell_once(name)
            variants = [base]
            if not name.isascii():
                plain = tuple(without_accents(w) for w in base.words)
                if plain != base.words:
                    variants.append(Spelling(plain, base.marks))
                dotted = tuple(w.replace("ı", "i") for w in base.words)
                if dotted != base.words and dotted != plain:  # upper-cased: ÇIKBAŞ is çikbaş
                    variants.append(Spelling(dotted, base.marks))
            for _, rule, table in tables:
                for spelling in variants:
                    ruled = apply_rule(rule, spelling) if rule is not None else spelling
                    table[" ".join(ruled.words)].append((ref, ruled.marks))
        for tier_name, pairs in extra:
            table = defaultdict(list)
            for ref, spelling in pairs:
                table[" ".join(spelling.words)].append((ref, spelling.marks))
            tables.append((tier_name, None, table))
        self._tiers = [(how, rule, _compact(table)) for how, rule, table in tables]

    def state(self) -> list[list[Any]]:
        """The tables as JSON-ready data, for a disk cache (the rules are code: they are not stored)."""
        return [[how, table] for how, _, table in self._tiers]

    @classmethod
    def from_state(
        cls, state: Sequence[Sequence[Any]], rules: Sequence[tuple[str, WordRule]] = ()
    ) -> SpellingIndex:
        """The index :meth:`state` described, with the same ``rules`` (in the same order) it was built with."""
        index = cls.__new__(cls)
        index.rules = tuple(rules)
        rule_of = dict(index.rules)
        index._tiers = [(how, rule_of.get(how), table) for how, table in state]
        return index

    def lookup(self, text: str, *, narrow: bool = True) -> SpellingMatch:
        """The references whose names ``text`` spells, from the first tier with any (see the class).

        With ``narrow`` (the default) several matches narrow to the one whose
        marks equal the text's, if exactly one does; without it every match
        of the tier is returned (to check that a written id is among them).
        """
        return self.lookup_spelling(spell(text), narrow=narrow)

    def lookup_spelling(self, spelling: Spelling, *, narrow: bool = True) -> SpellingMatch:
        """:meth:`lookup` of an already spelled text."""
        if not spelling.words:
            return SpellingMatch((), "none")
        for how, rule, table in self._tiers:
            probe = apply_rule(rule, spelling) if rule is not None else spelling
            rows = table.get(" ".join(probe.words), ())
            if type(rows) is str:
                if not probe.marks:  # the common case: one unmarked name, written without marks
                    return SpellingMatch((rows,), how)
                rows = ((rows, ()),)
            found = [
                (ref, _marks(marks))
                for ref, marks in rows
                if is_subsequence(probe.marks, _marks(marks))
            ]
            refs = tuple(dict.fromkeys(ref for ref, _ in found))
            if len(refs) == 1:
                return SpellingMatch(refs, how)
            if refs and not narrow:
                return SpellingMatch(refs, how)
            if refs:
                exact = tuple(dict.fromkeys(ref for ref, marks in found if marks == probe.marks))
                if len(exact) == 1:
                    return SpellingMatch(exact, how)
                return SpellingMatch(refs, "ambiguous")
        return SpellingMatch((), "none")
