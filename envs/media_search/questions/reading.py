"""Reading a film question the way an agent would: what it asks for, and what to search with.

Why one reader: the ``bm25`` baseline, the structured (SB3) menus and
``agentenv check-tasks`` all have to turn a question as people type it ("who
directd goodfellas", "that 1999 sci-fi film where Keanu Reeves learns kung
fu", "how many films did spielberg direct in the 90s") into tool calls. The
raw question is a poor search query (question words such as "wrote" match
titles like *Songs She Wrote About People She Knows*), and a rule keyed to
template wording misreads a casual one ("when was boyhood released (year)?"
asks for a year). So the three share this reader, and an improvement to it
reaches all of them.

It reads text alone, never a task or the catalog, and is given only what the
agent sees. It is MediaSearch knowledge, so it lives in the family's folder,
beside the three that use it.

* :func:`read_question` returns a :class:`QuestionReading`: the field asked
  for (``asks``), the rewritten search query (question words and filler
  dropped; quoted and capitalised spans, years and content words kept), the
  quoted and capitalised spans, the years, a decade or year range, a genre,
  the two options of an "A or B" question, a superlative's sort, and the
  words left when everything else is taken out (a person's name, mostly), and
  a runtime cap ("running under 90 minutes").

Example:
    >>> r = read_question("how many films did spielberg direct in the 90s")
    >>> r.asks, r.years_between, r.role, r.rest
    ('count', (1990, 1999), 'directed', 'spielberg')
    >>> read_question("when was boyhood released (year)?").asks
    'year'
    >>> read_question("who wrote Boyhood?").query
    'Boyhood'
    >>> read_question("Which film is older, Alien or Heat?").options
    ('Alien', 'Heat')
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache, wraps
from typing import TypeVar

from agentenv.envs.media_search.questions.comparison_options import OPENERS, find_options

Asks = str
"""What a question asks for: ``title``, ``director``, ``writer``, ``year``, ``runtime``, ``cast``, ``count``,
``compare`` (which of two named films) or ``superlative`` (the top film of a group)."""

GENRES: dict[str, str] = {
    "comedy": "Comedy",
    "comedies": "Comedy",
    "funny": "Comedy",
    "horror": "Horror",
    "scary": "Horror",
    "western": "Western",
    "westerns": "Western",
    "war": "War",
    "musical": "Musical",
    "musicals": "Musical",
    "animated": "Animation",
    "animation": "Animation",
    "cartoon": "Animation",
    "cartoons": "Animation",
    "sci fi": "Sci-Fi",
    "scifi": "Sci-Fi",
    "science fiction": "Sci-Fi",
    "thriller": "Thriller",
    "thrillers": "Thriller",
    "drama": "Drama",
    "dramas": "Drama",
    "romance": "Romance",
    "romantic": "Romance",
    "romances": "Romance",
    "rom com": "Romance",
    "action": "Action",
    "adventure": "Adventure",
    "crime": "Crime",
    "mystery": "Mystery",
    "mysteries": "Mystery",
    "fantasy": "Fantasy",
    "family": "Family",
    "biography": "Biography",
    "biographical": "Biography",
    "biopic": "Biography",
    "historical": "History",
    "history": "History",
    "sport": "Sport",
    "sports": "Sport",
    "documentary": "Documentary",
    "documentaries": "Documentary",
}
"""Words people use for a genre, to the catalog's genre names (longest phrases are matched first)."""

_FILLER = frozenset(
    """
a about according actually am an and any are as at be been being but by called can catalog catalogue credit
credited credits did do does doing done for from get give got had has have he heard her him his how i i'd i'm
if in inclusive into is it it's its just know let lol me my name named nah no not of on or our please pls plz
quick really remember remind say she so some someone something tell than that that's the their them then there
these they this those to u uh um us want was wait we were what what's whats when where which who who's whom
whose why with wonder would yeah yes you your film films movie movies flick flicks picture appear appears
appeared appearing starred starring featuring featured directed direct directs director directors directing
directd filmmaker wrote write writes written writer writers screenplay screenwriter script year years released
release came come comes runtime minutes minute many count number total older oldest newer newest earlier
earliest higher highest lower lowest better worse worst rated rating ratings rate critics critic reviews
reviewed review vs versus cast actor actors actress actresses acted forgot guy made make makes making star
stars
""".split()
)
"""Words that say what is asked or are filler: dropped from the search query."""

_NOT_NAMES = frozenset(
    "between during since until till through before after total all time ever career".split()
)
"""Words left in a count question that are no part of a person's name."""
_NUMBER_WORDS = {
    "nineties": 1990,
    "eighties": 1980,
    "seventies": 1970,
    "sixties": 1960,
    "fifties": 1950,
    "forties": 1940,
    "thirties": 1930,
}
_QUOTED = re.compile(r"[\"“”«»]([^\"“”«»]{2,120})[\"“”«»]|(?<![\w])'([^']{2,120})'(?![\w])")
_CAPITALISED = re.compile(
    r"\b[A-Z0-9][\w'’.&:-]*(?:\s+(?:(?:of|the|and|in|on|a|an|for|to|de|von|van|der|la|le|du)\s+)*"
    r"[A-Z0-9][\w'’.&:-]*)*"
)
_YEAR = re.compile(r"(?<![\d])(19[0-9]{2}|20[0-2][0-9])(?![\d])")
_DECADE = re.compile(r"\b(?:the\s+)?(?:(19|20)?([0-9])0)'?s\b", re.IGNORECASE)
_RANGE = re.compile(
    r"\b(?:between|from)\s+((?:19|20)[0-9]{2})\s+(?:and|to|through|until|till|-)\s+((?:19|20)[0-9]{2})\b",
    re.IGNORECASE,
)
_WORD = re.compile(r"[a-z0-9]+")
_T = TypeVar("_T")
_UNDER = re.compile(r"\b(?:under|less than|shorter than) ([0-9]{2,3}) minutes\b", re.IGNORECASE)
_UNDER_HOURS = {
    r"\b(?:under|less than|shorter than) an hour and a half\b": 90,
    r"\b(?:under|less than|shorter than) (?:two|2) hours\b": 120,
    r"\b(?:under|less than|shorter than) (?:an|one|1) hour\b(?! and)": 60,
}
"""Runtime caps said in hours, in minutes."""

_COUNT = re.compile(
    r"\bhow many\b(?! minutes)|\bcount (?:of|the)\b|^count\b|\bnumber of\b(?! minutes)", re.I
)
_RUNTIME = re.compile(
    r"\bhow long\b|\bruntime\b|\brun ?time\b|\bhow many minutes\b|\bin minutes\b|\blength\b"
    r"|\bminutes (?:does|is|long)\b|\bhow .* run\b",
    re.I,
)
_COMPARE = re.compile(
    r"\b(?:older|newer|earlier|later|first|longer|shorter|higher|lower|better|worse|more|less)\b"
    r"|\brated?\b|\bcame out first\b",
    re.I,
)
_SUPERLATIVE = re.compile(
    r"\b(?:highest|lowest|best|worst|top|longest|shortest|newest|oldest|latest|earliest)\b"
    r"|\bmost\b|\bleast\b",
    re.I,
)
_SORT_WORDS = frozenset(
    "highest lowest best worst top longest shortest newest oldest latest earliest most least recent "
    "rated".split()
)
"""The words of a superlative: what the question sorts by, never part of a person's name."""
_POSSESSIVE = re.compile(r"(?<=[^\W\d_])['’]s\b|(?<=[^\W\d_]s)['’](?=\W|$)")
_FILM_ASKED = re.compile(
    r"\b(?:on|of|for|in|behind)\s+(?:what|which)\b|^(?:what|which)\s+(?:movie|film|flick|one)\b",
    re.I,
)
"""A film asked for even beside a role word: "X listed as director on which film", "director of what"."""
_GLUED_NUMBER = re.compile(r"\b([a-z]{2,})([0-9]{1,2})\b")
_ROMAN = ("", "i", "ii", "iii", "iv", "v", "vi", "vii", "viii", "ix", "x")
_DIGIT_WORDS = ("zero one two three four five six seven eight nine").split()
_CAST = re.compile(
    r"\bcast\b|\bactors?\b|\bactress(?:es)?\b|\bappears?\b|\bwho(?:'s| is| was)? in\b|\bin it\b"
    r"|\bwas it\b|\bis it\b|\bin (?:the|its)\b.*\bor\b|\bfeature[sd]?\b|\bstar(?:s|red)?\b|\bwas .+ or .+ in\b",
    re.I,
)
_WRITER = re.compile(
    r"\bwr[io]te?\b|\bwritten\b|\bwriters?\b|\bscreenplay\b|\bscreenwriter\b|\bscript\b", re.I
)
_DIRECTOR = re.compile(
    r"\bdirect(?:ed|or|s)?\b|\bdirectd\b|\bfilmmaker\b|\bwho made\b|\bwho makes\b", re.I
)
_YEAR_ASKED = re.compile(
    r"\b(?:what|which) year\b|\bwhen (?:was|did|is|were|does)\b|\(year\)|\byear (?:of|was|did)\b"
    r"|\bwhat year\b|\byear\W*$|^(?:the\s+)?year\b|^when\b|\bwhen\W*$|\brelease year\b",
    re.I,
)


@dataclass(frozen=True)
class QuestionReading:
    """What :func:`read_question` found in a question (see the module docstring)."""

    question: str
    asks: Asks
    query: str
    quoted: tuple[str, ...]
    spans: tuple[str, ...]
    years: tuple[int, ...]
    years_between: tuple[int, int] | None
    genre: str | None
    options: tuple[str, str] | None
    sort: tuple[str, str] | None
    role: str | None
    rest: str
    runtime_under: int | None = None

    @property
    def names(self) -> tuple[str, ...]:
        """Quoted and capitalised spans, then the options: every named entity, once each, in order."""
        return tuple(dict.fromkeys((*self.quoted, *self.spans, *(self.options or ()))))


MEMO_CHARS = 1_000
"""Texts up to this long are memoised by :func:`fold`, :func:`numbered_variant` and :func:`possessors`
(questions, titles, names); longer ones, which only an agent's own input makes, are computed each time,
so the memos stay within a few tens of MB whatever an agent writes."""


def _memo_short(maxsize: int) -> Callable[[Callable[[str], _T]], Callable[[str], _T]]:
    """Memoise a pure function of one text, for texts up to :data:`MEMO_CHARS` characters (bounded LRU)."""

    def wrap(compute: Callable[[str], _T]) -> Callable[[str], _T]:
        memo = lru_cache(maxsize=maxsize)(compute)

        @wraps(compute)
        def call(text: str) -> _T:
            return memo(text) if len(text) <= MEMO_CHARS else compute(text)

        call.cache_info = memo.cache_info  # type: ignore[attr-defined]  # for tests and profiling
        return call

    return wrap


@_memo_short(1 << 15)
def fold(text: str) -> str:
    """Lower case, no accents, punctuation as spaces (a hyphen between letters too).

    Memoised (see :data:`MEMO_CHARS`): an agent scoring twenty search hits folds the same question and
    the same credited names again for every hit.

    Example:
        >>> fold("Amélie's SCI-FI")
        'amelies sci fi'
    """
    text = unicodedata.normalize("NFKD", text.casefold())
    text = (
        "".join(ch for ch in text if not unicodedata.combining(ch))
        .replace("’", "")
        .replace("'", "")
    )
    return " ".join(re.sub(r"[^a-z0-9]+", " ", text).split())


def without_possessives(text: str) -> str:
    """The text with the possessive ``'s`` (and the plural's ``'``) taken off every word: a name is
    matched as a name whoever's it is.

    Example:
        >>> without_possessives("blomkamp's film, the coens' best, Wes Anderson’s newest")
        'blomkamp film, the coens best, Wes Anderson newest'
    """
    return _POSSESSIVE.sub("", text)


def numbered_forms(text: str) -> list[str]:
    """Other spellings of the numbers written into title words, to search with as well: a digit that
    stands for its own word inside one (``se7en`` is ``seven``), digits glued to a word (``alien3``, as
    NFKC reads ``alien³``: ``alien 3``), and a sequel number as a Roman numeral (``rocky 4``: ``iv``).

    Example:
        >>> numbered_forms("se7en director"), numbered_forms("alien3"), numbered_forms("rocky 4 director")
        (['seven'], ['alien', '3', 'iii'], ['iv'])
        >>> numbered_forms("jaws 1975"), numbered_forms("r2d2")
        ([], [])
    """
    out: list[str] = []
    for word in fold(text).split():
        inner = re.fullmatch(r"([a-z]+)([0-9])([a-z]+)", word)
        if inner:
            head, digit, tail = inner.groups()
            spelled = _DIGIT_WORDS[int(digit)]
            if (
                spelled.startswith(head)
                and spelled.endswith(tail)
                and len(head + tail) < len(spelled)
            ):
                out.append(spelled)
            continue
        glued = _GLUED_NUMBER.fullmatch(word)
        if glued:
            out += [glued.group(1), glued.group(2)]
            word = glued.group(2)
        if word.isdigit() and 2 <= int(word) < len(_ROMAN) and len(word) <= 2:
            out.append(_ROMAN[int(word)])
    return list(dict.fromkeys(out))


@_memo_short(1 << 12)
def numbered_variant(text: str) -> str:
    """The folded text with each number of a title word in its other spelling (:func:`numbered_forms`):
    a digit for its word inside one, glued digits apart, a sequel number as a Roman numeral.

    Example:
        >>> numbered_variant("who directed Se7en"), numbered_variant("rocky 4 who directed")
        ('who directed seven', 'rocky iv who directed')
        >>> numbered_variant("alien³ director")
        'alien iii director'
    """
    out = []
    for word in fold(unicodedata.normalize("NFKC", text)).split():
        forms = numbered_forms(word)
        if re.fullmatch(r"[a-z]+[0-9][a-z]+", word) and forms:
            out.append(forms[0])
        elif _GLUED_NUMBER.fullmatch(word) and forms:
            out.append(" ".join(f for f in forms if not f.isdigit()))
        elif word.isdigit() and forms:
            out.append(forms[-1])
        else:
            out.append(word)
    return " ".join(out)


@_memo_short(1 << 12)
def possessors(text: str) -> tuple[str, ...]:
    """The folded words a possessive ``'s`` (or a plural's ``'``) is on: "tarantino's django" says the
    film is Tarantino's, "the coens' best" the Coens'.

    Example:
        >>> possessors("tarantino's django movie"), possessors("the Coens' best one")
        (('tarantino',), ('coen',))
    """
    out = []
    for match in re.finditer(r"([^\W\d_]+)(['’]s\b|(?<=s)['’](?=\W|$))", text):
        word = fold(match.group(1))
        out.append(word[:-1] if match.group(2) in ("'", "’") else word)
    return tuple(dict.fromkeys(w for w in out if w))


def genre_of(text: str) -> str | None:
    """The first genre a question names (see :data:`GENRES`), or ``None``.

    Example:
        >>> genre_of("the best science fiction movies"), genre_of("a 1995 comedy")
        ('Sci-Fi', 'Comedy')
    """
    folded = f" {fold(text)} "
    best: tuple[int, str] | None = None
    for word, genre in GENRES.items():
        at = folded.find(f" {word} ")
        if at >= 0 and (best is None or at < best[0]):
            best = (at, genre)
    return best[1] if best else None


def _decade(match: re.Match[str]) -> tuple[int, int]:
    century, digit = match.group(1), int(match.group(2))
    if century:
        start = int(century) * 100 + digit * 10
    else:
        start = (2000 if digit <= 1 else 1900) + digit * 10
    return start, start + 9


def years_between(question: str) -> tuple[int, int] | None:
    """The year range a question sets: "between 1990 and 1995", "in the 90s", "1950s", "the eighties".

    Example:
        >>> years_between("from 2005 to 2014"), years_between("in the 1950s"), years_between("the '80s")
        ((2005, 2014), (1950, 1959), (1980, 1989))
    """
    found = _RANGE.search(question)
    if found:
        lo, hi = int(found.group(1)), int(found.group(2))
        return (min(lo, hi), max(lo, hi))
    decade = _DECADE.search(question.replace("'", ""))
    if decade:
        return _decade(decade)
    for word, start in _NUMBER_WORDS.items():
        if re.search(rf"\b{word}\b", question, re.I):
            return (start, start + 9)
    return None


def _asks(question: str, options: tuple[str, str] | None) -> Asks:
    """The field asked for, from the question's meaning (its verbs and question words), in priority order."""
    if _COUNT.search(question):
        return "count"
    if options:
        outside = question
        for option in options:
            outside = re.sub(re.escape(option), " ", outside, flags=re.I)
        if _COMPARE.search(outside):
            return "compare"
        if (
            _CAST.search(outside)
            or re.search(r"\bin\b", outside, re.I)
            or re.search(r"\sin\s", options[1])
        ):
            return "cast"
    if _YEAR_ASKED.search(question):
        return "year"
    if re.search(r"\bhow long\b|\bhow many minutes\b", question, re.I):
        return "runtime"
    if (
        _SUPERLATIVE.search(question)
        and not _DIRECTOR.search(question)
        and not _WRITER.search(question)
    ):
        return "superlative"
    if _RUNTIME.search(question):
        return "runtime"
    if _WRITER.search(question):
        return "writer"
    if (
        _DIRECTOR.search(question)
        and re.search(
            r"\bwho\b|\bdirector\b|\bfilmmaker\b|\bname the dir|\bby whom\b", question, re.I
        )
        and not (_FILM_ASKED.search(question) and not re.search(r"\bwho\b", question, re.I))
    ):
        return "director"
    if _YEAR_ASKED.search(question):
        return "year"
    return "title"


def _sort(question: str, asks: Asks) -> tuple[str, str] | None:
    """``(field, order)`` of a comparison or superlative: rating, runtime or year; desc or asc."""
    q = question.lower()
    if re.search(r"\b(?:longest|longer|runs? the longest|runs? longer)\b", q):
        return ("runtime", "desc")
    if re.search(r"\b(?:shortest|shorter)\b", q):
        return ("runtime", "asc")
    if re.search(r"\b(?:older|oldest|earlier|earliest|first|came out first|released first)\b", q):
        return ("year", "asc")
    if re.search(r"\b(?:newer|newest|later|latest|more recent|most recent)\b", q):
        return ("year", "desc")
    if re.search(r"\b(?:worst|lowest|worse|lower|least)\b", q):
        return ("rating", "asc")
    if asks in ("compare", "superlative"):
        return ("rating", "desc")
    return None


def _role(question: str) -> str | None:
    if _WRITER.search(question):
        return "wrote"
    if _DIRECTOR.search(question) or re.search(r"\bdid .+ (?:make|do)\b|\bmade\b", question, re.I):
        return "directed"
    if re.search(
        r"\bstar|\bappear|\bacted\b|\bbeen in\b|\bwith\b|\bfeatur|\bcast\b|\bin\b", question, re.I
    ):
        return "acted"
    return None


def _spans(question: str) -> list[str]:
    """Capitalised runs that are not the sentence's opener ("Who", "Which film"...) nor a bare year."""
    out = []
    for match in _CAPITALISED.finditer(question):
        span = match.group(0).strip(" .:'’-")
        words = span.split()
        while words and (words[0].lower() in OPENERS or words[0].lower() in _FILLER):
            words = words[1:]
        while words and words[-1].lower() in _FILLER:
            words = words[:-1]
        span = " ".join(words)
        if (
            re.search(r"[^\W\d_]", span)
            and not re.fullmatch(r"[0-9]+'?s", span)
            and genre_of(span) != span
        ):
            out.append(span)
    return out


_PHRASES = re.compile(
    r"\b(?:how long|how many|what year|which year|came out|come out|comes out|in total|"
    r"which one|the one|one with|i mean|just the name|of all time|in minutes|"
    r"the most|like most|liked most|top rated|best rated|worst rated|feature films?|"
    r"(?:running )?(?:under|at least|over|shorter than) [0-9]+ minutes|"
    r"(?:under|shorter than) (?:two|2) hours|"
    r"under an hour and a half)\b"
)


def _content(text: str, drop: set[str]) -> list[str]:
    words = [
        w
        for w in _WORD.findall(_PHRASES.sub(" ", fold(text)))
        if w not in _FILLER and w not in drop
    ]
    return [w for w in words if not re.fullmatch(r"[0-9]0'?s", w)]


def read_question(question: str) -> QuestionReading:
    """Read one question (any register, any case): see :class:`QuestionReading` and the module docstring."""
    text = " ".join(str(question).split())[:1000]
    plain = without_possessives(text)
    quoted = tuple(a or b for a, b in _QUOTED.findall(text))
    options = find_options(text)
    asks = _asks(text, options)
    if options and asks == "cast":
        options = (options[0], re.split(r"\s+in\s+", options[1], maxsplit=1, flags=re.I)[0])
    if options and asks not in ("compare", "cast"):
        options = None
    between = years_between(text)
    years = tuple(int(y) for y in _YEAR.findall(text))
    genre = genre_of(text)
    spans = tuple(s for s in _spans(plain) if s not in quoted)
    drop: set[str] = set()
    if options and asks == "cast":
        drop = {w for o in options for w in fold(o).split()}
    words = _content(plain, drop)
    query_parts = [
        *quoted,
        *(s for s in spans if not (options and asks == "cast" and s in options)),
    ]
    covered = {w for part in query_parts for w in fold(part).split()}
    query_parts += [w for w in words if w not in covered]
    query_parts += [w for w in numbered_forms(" ".join(words)) if w not in query_parts]
    query = " ".join(dict.fromkeys(p for p in query_parts if p)) or text
    genre_words = {w for g in GENRES for w in g.split()}
    rest_words = [
        w
        for w in words
        if not re.fullmatch(r"[0-9]+s?", w)
        and w not in genre_words
        and w not in _NOT_NAMES
        and w not in _SORT_WORDS
    ]
    return QuestionReading(
        question=text,
        asks=asks,
        query=query[:500],
        quoted=quoted,
        spans=spans,
        years=years,
        years_between=between,
        genre=genre,
        options=options,
        sort=_sort(text, asks),
        role=_role(text) if asks == "count" else None,
        rest=" ".join(rest_words),
        runtime_under=_runtime_under(text),
    )


def _runtime_under(text: str) -> int | None:
    """The runtime cap a question sets, in minutes: "under 90 minutes", "under two hours", "under an hour and a half".

    Example:
        >>> _runtime_under("best drama of 1999 under two hours"), _runtime_under("a film under 100 minutes")
        (120, 100)
    """
    found = _UNDER.search(text)
    if found:
        return int(found.group(1))
    for pattern, minutes in _UNDER_HOURS.items():
        if re.search(pattern, text, re.IGNORECASE):
            return minutes
    return None
