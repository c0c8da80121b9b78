"""Rule-based grading of MediaSearch answers by a closed grammar: one catalog reference, or one integer.

Why a grammar and not normalise-then-compare: erasing what the grader does
not recognise credits ``¬Inception``, ``Inception？`` and ``~~Inception~~``.
Here the answer must parse, or it is **unreadable** (accuracy 0, the reason
in ``info["answer_feedback"]``). The grammar (the env page's "What counts as
an answer" lists it with examples):

* **One entry**: one non-blank line, with only the decoration of
  :mod:`agentenv.engine.answer_grammar` around it (a list marker, ``**bold**``,
  ``*italics*``, ```code```, quotes, a trailing period: ``Monsters, Inc..``
  is the title ``Monsters, Inc.``).
* **Title answers**: a film of the catalog, written as its title (spelled by
  :mod:`agentenv.engine.spelling`: case, NFKC, hyphen = space, possessive ``'s``,
  the title's own punctuation and accents optional), its title without a
  leading article where that names no other film, ``Title (Year)``, its id
  (``tt1375666``), or ``Title (id)`` / ``id (Title)`` where the title is that
  film's. The title part of a pair may be wrapped as a whole entry may
  (``**Heat** (1995)``). A title that several films share needs its year or
  id. Credited when it is the gold film.
* **Person answers**: a person credited in the catalog, spelled the same way;
  credited when it is the gold person.
* **Numbers** (counts, runtimes, years): an integer in ASCII (or full-width)
  digits, with or without thousands separators (``1,994``; a first group never starts with
  ``0``, so ``0,011`` is unreadable), optionally with a zero fraction
  (``1977.0``); for counts and runtimes also English number words from zero
  to 999 (:data:`NUMBER_WORDS_GRAMMAR`: ``seven``, ``forty-two``, ``forty two``,
  ``a hundred``, ``one hundred and five``). No other decimals, signs, ranges or
  unit words, and no other numeric symbols (``11²``, ``⑫``, ``½``: NFKC would
  fold some of them into digits). Years are digits only.
* Questions you bring are typed from the catalog
  (:mod:`agentenv.envs.media_search.tasks.user_answer_types`): a film gold is graded
  as a title (a title several films share, as the bare gold, is any of them),
  a person as a person; only a stated ``"text"`` gold is matched against the
  gold and its aliases with the same spelling rules. A person gold also credits an
  alias that names another credited person (``Lilly Wachowski`` beside ``Lana
  Wachowski``): the row lists every accepted answer in its aliases.
* A film gold's **text aliases** are accepted answers too. A text alias is
  an alias that, its decoration off, names no film (:func:`films_named`):
  it holds no film id, and its words, punctuation aside (and, where they
  name no film, a leading article), are no film's title, nor are those of
  its ``Title (Year)`` title part (``Heat '95`` beside ``Heat (1995)``; not ``Alien!``, ``The Alien``,
  ``Heat (1996)``). An answer that names no film in the same sense is
  credited when it spells a text alias, with the same spelling rules and
  decoration. An answer that reads as a film is graded as that film, and a
  title several films share is never credited by a text alias, so no alias
  credits another film (nor ``Heat`` where the gold pins the 1995 film). A
  gold that pins no film (a shared title) credits an answer spelled as the
  gold, and one spelled as an alias only where every film the answer names
  is one the gold may be (``Walking Tall!`` as an alias of ``Heat`` does not
  credit ``Walking Tall``). The shipped questions pin their film and have no text
  aliases (every alias is the gold's id or its ``Title (Year)``), so they
  grade as before.

Example:
    >>> read_integer("1,994", words=False), read_integer("seven", words=True), read_integer("seven", words=False)
    (1994, 7, None)
    >>> [read_integer(t, words=True) for t in ("twenty-one", "Forty two", "a hundred and five")]
    [21, 42, 105]
    >>> [read_integer(t, words=True) for t in ("2005.9", "-7", "7 minutes", "one thousand", "٧", "0,011")]
    [None, None, None, None, None, None]
    >>> read_integer("1977.0", words=False), read_integer("1,977.00", words=False), read_integer("011", words=False)
    (1977, 1977, 11)
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from typing import NamedTuple, Protocol

from agentenv.engine.answer_grammar import (
    answer_entries,
    quoted,
    strip_decoration,
    strip_space,
    strip_wrappers,
)
from agentenv.engine.spelling import Spelling, SpellingIndex, spell
from agentenv.envs.media_search.grading.answer_catalog import (
    ARTICLES,
    AnswerCatalog,
    answer_catalog,
)

UNITS = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen"
).split()
TENS = {
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "sixty": 60,
    "seventy": 70,
    "eighty": 80,
    "ninety": 90,
}
_UNIT_VALUES = {w: i for i, w in enumerate(UNITS)}
NUMBER_WORDS_GRAMMAR = """\
number   := "zero" | below100 | hundreds | hundreds SP ["and" SP] below100
hundreds := ("a" | one..nine) SP "hundred"
below100 := one..nineteen | tens | tens ("-" | SP) one..nine
tens     := "twenty" | "thirty" | "forty" | "fifty" | "sixty" | "seventy" | "eighty" | "ninety"
SP       := one space (U+0020)"""
"""The number words an answer may use for a count or a runtime (0 to 999), matched after case folding
(full-width letters NFKC-folded first). Nothing else: no ``hundred`` alone, ``one-hundred``,
``twelve hundred``, ``thousand``, ``oh``, ``zero`` inside a number, ``fortytwo``, two spaces, a
trailing ``and``, or a year in words (``nineteen ninety-four``)."""
MAX_WORDS_NUMBER = 999
"""The largest number words can write: above every count and runtime gold (the shipped splits' largest
is 263)."""
MAX_REFERENCE_CHARS = 300
"""Longer entries are no title, name or number (the longest catalog title has 126 characters)."""

_INTEGER = re.compile(r"(?P<digits>[1-9][0-9]{0,2}(?:,[0-9]{3})+|[0-9]+)(?:\.0+)?")
"""An integer: plain digits, or thousands groups whose first group does not start with 0 (``0,011`` is no
number), with an optional zero fraction (``1977.0``)."""
FILM_ID = re.compile(r"tt[0-9]{7,8}|m[0-9]{6,7}")
"""The catalog's film ids: IMDb ids, and four ``m…`` ids of films IMDb lacks."""
_TITLE_YEAR = re.compile(r"(?P<title>.+?)[ \t]*\((?P<year>[0-9]{4})\)", re.DOTALL)
_TITLE_ID = re.compile(
    r"(?P<title>.+?)[ \t]*\((?P<id>tt[0-9]{7,8}|m[0-9]{6,7})\)", re.DOTALL | re.IGNORECASE
)
_ID_TITLE = re.compile(
    r"(?P<id>tt[0-9]{7,8}|m[0-9]{6,7})[ \t]*\((?P<title>.+)\)", re.DOTALL | re.IGNORECASE
)
NUMERIC_TYPES = ("number", "year")


class Gradable(Protocol):
    """What the grader reads from a question."""

    answer: str
    aliases: Sequence[str]
    answer_type: str


class Reading(NamedTuple):
    """How an answer was read: whether it is correct, and what ``info["answer_feedback"]`` says (a named
    tuple: one is made per answer step)."""

    correct: bool
    feedback: str


def number_words(n: int) -> str | None:
    """Return the English words for ``0 <= n < 100`` (else ``None``); questions list them as aliases.

    Example:
        >>> number_words(42), number_words(7), number_words(100)
        ('forty-two', 'seven', None)
    """
    if 0 <= n < 20:
        return UNITS[n]
    if 20 <= n < 100:
        tens = next(w for w, v in TENS.items() if v == n - n % 10)
        return tens if n % 10 == 0 else f"{tens}-{UNITS[n % 10]}"
    return None


_FULL_WIDTH_ASCII = re.compile("[\x00-\x7f\uff01-\uff5e]*")
"""What a number may be written in: ASCII, and the full-width forms of ASCII (U+FF01-FF5E), which
NFKC maps one to one onto it. NFKC also folds superscripts, circled numbers and other numeric
symbols into ASCII digits ("11²" read as 112, "3⁰" as 30), so nothing else goes through it."""


def read_integer(text: str, *, words: bool) -> int | None:
    """The integer ``text`` is, under the number grammar (module docstring), or None."""
    if text.isdigit() and text.isascii():
        return int(text)  # the common case, read without the pattern
    if not text.isascii():
        if _FULL_WIDTH_ASCII.fullmatch(text) is None:
            return None  # "11²" is not 112, nor "⑫" 12
        text = unicodedata.normalize("NFKC", text)
    number = _INTEGER.fullmatch(text)
    if number is not None:
        return int(number.group("digits").replace(",", ""))
    if words:
        return read_number_words(text)
    return None


def read_number_words(text: str) -> int | None:
    """The integer ``text`` writes in English words under :data:`NUMBER_WORDS_GRAMMAR`, or None.

    Example:
        >>> [read_number_words(t) for t in ("zero", "Ninety-Nine", "two hundred forty two", "A hundred")]
        [0, 99, 242, 100]
        >>> [read_number_words(t) for t in ("hundred", "one-hundred", "forty  two", "one hundred and")]
        [None, None, None, None]
    """
    if not text.isascii():
        if _FULL_WIDTH_ASCII.fullmatch(text) is None:
            return None
        text = unicodedata.normalize("NFKC", text)
    words = text.casefold().split(" ")
    if len(words) > 6:  # "nine hundred and ninety nine" is the longest
        return None
    value = 0
    if len(words) >= 2 and words[1] == "hundred":
        head = 1 if words[0] == "a" else _UNIT_VALUES.get(words[0], 0)
        if not 1 <= head <= 9:
            return None
        value, words = 100 * head, words[2:]
        if not words:
            return value
        if words[0] == "and":
            words = words[1:]
    rest = _below_hundred(words)
    if rest is None or value and not rest:
        return None  # "one hundred zero" is no number
    return value + rest


def _below_hundred(words: list[str]) -> int | None:
    """``zero`` to ``ninety-nine`` in one or two words (``below100`` of the grammar, and ``zero``)."""
    if len(words) == 1:
        word = words[0]
        value = _UNIT_VALUES.get(word)
        if value is not None:
            return value
        if word in TENS:
            return TENS[word]
        tens, hyphen, unit = word.partition("-")
        words = [tens, unit] if hyphen else []
    if len(words) == 2 and words[0] in TENS and 1 <= _UNIT_VALUES.get(words[1], 0) <= 9:
        return TENS[words[0]] + _UNIT_VALUES[words[1]]
    return None


def grade_answer(
    answer_text: str, question: Gradable, catalog: AnswerCatalog | None = None
) -> bool:
    """Return whether ``answer_text`` answers ``question`` correctly (see the module rules).

    Example:
        >>> from types import SimpleNamespace as Q
        >>> n = Q(answer="7", aliases=("seven",), answer_type="number")
        >>> [grade_answer(a, n) for a in ("7", "**seven**", "7.", "7 or 8", "¬7", "7 films", "")]
        [True, True, True, False, False, False, False]
    """
    return read_answer(answer_text, question, catalog).correct


def read_answer(
    answer_text: str, question: Gradable, catalog: AnswerCatalog | None = None
) -> Reading:
    """Read ``answer_text`` by the grammar and grade it against ``question``; never raises on a ``str``.

    A reading is remembered (bounded, :data:`READINGS_KEPT`), keyed by the text and the question's
    gold: a policy sends the same answer to the same question again and again (a GRPO group, every
    epoch), and reading it is a pure function of the two and the catalog.
    """
    if not isinstance(answer_text, str):
        raise TypeError(f"answer_text must be a str, not {type(answer_text).__name__}")
    if len(answer_text) > MAX_KEPT_CHARS:
        return _read(answer_text, question, catalog)
    if question.answer_type in NUMERIC_TYPES:
        kept = _NUMBER_READINGS
    else:
        catalog = catalog if catalog is not None else answer_catalog()
        kept = catalog.readings
    key = (answer_text, question.answer_type, *_gold_key(question))
    reading = kept.get(key)
    if reading is None:
        reading = _read(answer_text, question, catalog, kept, key[1:])
        if len(kept) >= READINGS_KEPT:
            kept.clear()
        kept[key] = reading
    return reading


def _read(
    answer_text: str,
    question: Gradable,
    catalog: AnswerCatalog | None,
    kept: dict[tuple[str, ...], Reading] | None = None,
    gold: tuple[object, ...] = (),
) -> Reading:
    """:func:`read_answer` without its memory of texts; with ``kept``, the reading of the entry once its
    decoration is off is remembered there too (keyed by the entry and ``gold``, with a trailing
    ``None`` that no text key has): how an entry reads depends on nothing else, and a policy varies
    the decoration around the same few names (``7. Heat``, ``**Heat**``). An entry that is the whole
    text is not kept twice: the caller keeps it under the text."""
    whole = answer_text
    if "\n" in answer_text:
        entries = [raw for _, raw in answer_entries(answer_text, "\n", limit=2)]
        if len(entries) > 1:
            return _unreadable(
                "a media answer is one title, name or number on one line; it has more than one line"
            )
        answer_text = entries[0] if entries else ""
    core = strip_decoration(answer_text)
    if not core:
        if not strip_space(answer_text):
            return _unreadable("the answer is empty")
        return _unreadable("nothing but decoration (a bullet, a number marker, bold)")
    if len(core) > MAX_REFERENCE_CHARS:
        return _unreadable(f"{len(core)} characters is no title, name or number")
    if kept is None:
        return _read_entry(core, question, catalog)
    key = (core, *gold, None)
    reading = kept.get(key)
    if reading is None:
        reading = _read_entry(core, question, catalog, gold)
        if core is not whole:
            if len(kept) >= READINGS_KEPT:
                kept.clear()
            kept[key] = reading
    return reading


def _read_entry(
    core: str, question: Gradable, catalog: AnswerCatalog | None, gold: tuple[object, ...] = ()
) -> Reading:
    """How one entry, its decoration off (``core``), reads against ``question`` (``gold``: the
    question's ``(answer_type, answer, aliases)`` when the caller has built it)."""
    answer_type = question.answer_type
    if answer_type in NUMERIC_TYPES:
        return _read_number(core, question)
    cat = catalog if catalog is not None else answer_catalog()
    gold = gold or (answer_type, *_gold_key(question))
    if answer_type == "title":
        return _read_title(core, question, cat, gold)
    return _read_person(core, question, cat, gold)


def _unreadable(reason: str) -> Reading:
    return Reading(False, f"unreadable answer: {reason}")


def _golds(question: Gradable) -> list[str]:
    return [str(g) for g in (question.answer, *question.aliases)]


READINGS_KEPT = 1 << 14
"""At most this many readings are remembered per catalog (and for numbers): a few MB."""
MAX_KEPT_CHARS = 2 * MAX_REFERENCE_CHARS
"""Longer answers are read every time (they are no reference; remembering them would hold their text)."""
_NUMBER_READINGS: dict[tuple[str, ...], Reading] = {}
_GOLD_NUMBERS: dict[tuple[str, tuple[str, ...]], frozenset[int]] = {}
"""The integers each numeric gold accepts, read once per question (bounded: cleared past
:data:`GOLD_CACHE_SIZE`)."""
GOLD_CACHE_SIZE = 1 << 16


def _gold_key(question: Gradable) -> tuple[str, tuple[str, ...]]:
    aliases = question.aliases
    return question.answer, aliases if type(aliases) is tuple else tuple(aliases)


def _gold_numbers(question: Gradable) -> frozenset[int]:
    """The integers ``question``'s gold and aliases read as (digits, or number words to 999)."""
    key = _gold_key(question)
    numbers = _GOLD_NUMBERS.get(key)
    if numbers is None:
        numbers = frozenset(
            n for g in _golds(question) if (n := read_integer(g, words=True)) is not None
        )
        if len(_GOLD_NUMBERS) >= GOLD_CACHE_SIZE:
            _GOLD_NUMBERS.clear()
        _GOLD_NUMBERS[key] = numbers
    return numbers


class GoldFilms(NamedTuple):
    """What a title question's gold names in the catalog (read once per question and catalog)."""

    film: str | None
    """The gold's film id (the first id among the answer and aliases), or None."""
    candidates: tuple[str, ...]
    """The films the gold may be: the pinned film, or every film of the gold's title."""
    text_aliases: SpellingIndex | None
    """The aliases that name no film (:func:`films_named`), by spelling; None when there are none."""


def _gold_films(question: Gradable, cat: AnswerCatalog, key: tuple[object, ...]) -> GoldFilms:
    """What the gold names (:class:`GoldFilms`), read once per question and catalog (``key``: the
    question's ``("title", answer, aliases)``)."""
    golds = cat.gold_readings.get(key)
    if golds is None:
        gold_film = next((g for g in _golds(question) if FILM_ID.fullmatch(g)), None)
        texts = [
            core
            for alias in question.aliases
            if (core := strip_decoration(str(alias))) and not films_named(core, cat)
        ]
        golds = GoldFilms(
            gold_film,
            ((gold_film,) if gold_film else cat.titles.lookup(question.answer, narrow=False).refs),
            SpellingIndex((t, t) for t in texts) if texts else None,
        )
        cat.remember_gold(key, golds)
    return golds


def films_named(core: str, cat: AnswerCatalog) -> frozenset[str]:
    """Every film ``core`` (an entry, its decoration off) could be taken to name, more than the grammar
    reads: a film id it holds, and every film whose title has its words (its punctuation left out;
    where that names none, a leading article too) or the words of its ``Title (Year)`` title part,
    whatever the year. A text alias is an alias that names none (module docstring): ``Alien!``
    and ``The Alien`` name *Alien*, ``Heat (1996)`` every *Heat*.

    Example:
        >>> cat = answer_catalog()
        >>> [len(films_named(t, cat)) for t in ("Heat '95", "Heat 95", "Film 1", "Heat", "Heat (1996)")]
        [0, 0, 0, 3, 3]
        >>> [sorted(films_named(t, cat)) for t in ("Alien!", "The Alien", "tt0113277 (Alien)")]
        [['tt0078748'], ['tt0078748'], ['tt0078748', 'tt0113277']]
    """
    films: set[str] = set()
    texts = [core]
    if FILM_ID.fullmatch(core.lower()):
        return frozenset((core.lower(),))
    paired = _TITLE_ID.fullmatch(core) or _ID_TITLE.fullmatch(core)
    if paired is not None:
        films.add(paired.group("id").lower())
        texts.append(strip_wrappers(paired.group("title")))
    dated = _TITLE_YEAR.fullmatch(core)
    if dated is not None:
        texts.append(strip_wrappers(dated.group("title")))
    for text in texts:
        words = spell(text).words
        named = cat.titles.lookup_spelling(Spelling(words, ()), narrow=False).refs
        if not named and len(words) > 1 and words[0] in ARTICLES:
            named = cat.titles.lookup_spelling(Spelling(words[1:], ()), narrow=False).refs
        films.update(named)
    return frozenset(films)


def _gold_people(
    question: Gradable, cat: AnswerCatalog, key: tuple[object, ...]
) -> tuple[str | None, frozenset[str]]:
    """``(the person the gold names or None, every person the gold and its aliases name)``, read once
    per question (``key``: the question's ``(answer_type, answer, aliases)``; only this reading keys
    by a type other than ``title``). A name that reads as no one of the catalog, or as several
    people, names no one here: it is credited by its spelling."""
    people = cat.gold_readings.get(key)
    if people is None:
        refs = [cat.people.lookup(g).ref for g in _golds(question)]
        people = (refs[0], frozenset(r for r in refs if r is not None))
        cat.remember_gold(key, people)
    return people


def _read_number(core: str, question: Gradable) -> Reading:
    words = question.answer_type == "number"
    value = read_integer(core, words=words)
    if value is None:
        allowed = "digits, or number words up to 999 like forty-two" if words else "digits"
        return _unreadable(
            f"{quoted(core)} is not an integer ({allowed}; no signs, units or decimals but .0;"
            " a first thousands group never starts with 0)"
        )
    return Reading(value in _gold_numbers(question), f"read as the number {value}")


def _gold_spelling(core: str, question: Gradable) -> bool:
    """Whether ``core`` spells the gold or an alias (questions whose gold the catalog lacks)."""
    return bool(SpellingIndex((g, g) for g in _golds(question)).lookup(core).refs)


def _spells(core: str, text: str) -> bool:
    """Whether ``core`` spells ``text`` (by the spelling rules)."""
    return bool(SpellingIndex(((text, text),)).lookup(core).refs)


def _read_title(
    core: str, question: Gradable, cat: AnswerCatalog, gold: tuple[object, ...]
) -> Reading:
    gold_film, gold_candidates, text_aliases = _gold_films(question, cat, gold)
    film, reason = _film_of(core, cat)
    if film is None:
        # A gold that pins no film (no id; your own "Heat", shared by three films) is credited as written;
        # an alias, where the answer names no film but the gold's ("Walking Tall" stays wrong beside
        # an alias "Walking Tall!").
        if (
            not gold_film
            and _gold_spelling(core, question)
            and (
                _spells(core, str(question.answer))
                or films_named(core, cat) <= set(gold_candidates)
            )
        ):
            return Reading(True, f"read as the gold {quoted(core)}")
        # A text alias ("Heat '95" beside "Heat (1995)") credits an answer that names no film either.
        if (
            text_aliases is not None
            and text_aliases.lookup(core).refs
            and not films_named(core, cat)
        ):
            return Reading(True, f"read as the alias {quoted(core)} (no film title of the catalog)")
        return _unreadable(reason)
    read_as = cat.read_as(film)
    if gold_candidates:
        return Reading(film in gold_candidates, read_as)
    return Reading(_gold_spelling(core, question), read_as)


def film_refs(text: str, cat: AnswerCatalog) -> tuple[str, ...]:
    """The films ``text`` names as a title answer: the one it resolves to, or every film of a shared title.

    Example:
        >>> cat = answer_catalog()
        >>> film_refs("Heat (1995)", cat), film_refs("tt0113277", cat), len(film_refs("Heat", cat))
        (('tt0113277',), ('tt0113277',), 3)
    """
    film, _ = _film_of(text, cat)
    if film is not None:
        return (film,)
    named = cat.titles.lookup(text)
    return tuple(named.refs) if named.how == "ambiguous" else ()


def _film_of(core: str, cat: AnswerCatalog) -> tuple[str | None, str]:
    """The one film ``core`` names, or None and why not."""
    if FILM_ID.fullmatch(core.lower()):  # an id in any case is the id (TT0157075)
        film = core.lower()
        if cat.catalog.get(film) is None:
            return None, f"no film of the catalog has the id {core}"
        return film, ""
    named = cat.titles.lookup(core)
    if named.ref is not None:
        return named.ref, ""
    # before Title (Year): the film 1408 is written tt0450385 (1408)
    paired = _TITLE_ID.fullmatch(core) or _ID_TITLE.fullmatch(core)
    if paired is not None:
        film, title = paired.group("id").lower(), paired.group("title")
        if cat.catalog.get(film) is None:
            return None, f"no film of the catalog has the id {film}"
        if _titles_film(title, film, cat):
            return film, ""
        return None, f"{quoted(title)} is not a title of {film}"
    dated = _TITLE_YEAR.fullmatch(core)
    if dated is not None:
        year = int(dated.group("year"))
        refs = [
            f
            for f, y in cat.years(
                cat.titles.lookup(strip_wrappers(dated.group("title")), narrow=False).refs
            ).items()
            if y == year
        ]
        if len(refs) == 1:
            return refs[0], ""
        if not refs:
            return None, f"no film {quoted(dated.group('title'))} from {year} is in the catalog"
    if named.how == "ambiguous":
        years = sorted(cat.years(named.refs).values())
        return None, (
            f"{quoted(core)} is the title of {len(named.refs)} films ({', '.join(map(str, years[:5]))}): "
            "add the year, e.g. 'Title (Year)', or give the id"
        )
    return None, f"{quoted(core)} is not a film title of the catalog"


def _titles_film(title: str, film: str, cat: AnswerCatalog) -> bool:
    """Whether ``title`` (the title part of ``Title (id)`` or ``id (Title)``) is ``film``'s title, or its
    ``Title (Year)``; wrapped as a whole entry may be."""
    title = strip_wrappers(title)
    if film in cat.titles.lookup(title, narrow=False).refs:
        return True
    dated = _TITLE_YEAR.fullmatch(title)
    return (
        dated is not None
        and cat.years((film,)).get(film) == int(dated.group("year"))
        and film in cat.titles.lookup(strip_wrappers(dated.group("title")), narrow=False).refs
    )


def _read_person(
    core: str, question: Gradable, cat: AnswerCatalog, gold: tuple[object, ...]
) -> Reading:
    named = cat.people.lookup(core)
    if named.ref is None:
        if _gold_spelling(core, question):
            return Reading(True, f"read as the gold {quoted(core)}")
        if named.how == "ambiguous":
            return _unreadable(f"{quoted(core)} names {len(named.refs)} people")
        return _unreadable(f"{quoted(core)} is not a person credited in the catalog")
    gold_person, gold_people = _gold_people(question, cat, gold)
    read_as = f"read as the person {cat.catalog.people[named.ref].name!r}"
    if (
        named.ref in gold_people
    ):  # the gold person, or one an alias names (Lilly beside Lana Wachowski)
        return Reading(True, read_as)
    if gold_person is None or question.answer_type == "text":
        return Reading(_gold_spelling(core, question), read_as)
    return Reading(False, read_as)
