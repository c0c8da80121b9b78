"""Read the constraints a user states about a film, and check them against the held request.

Why rules: the user simulator is judged on saying only true things about its
request, revealing held-back details only when asked, and never naming the
film. Each rule is deterministic:

* **People**: the request's own names (any length), and any catalog name of
  2-4 words written with capitals. The role is the nearest cue word before
  the name in its sentence ("directed"/"director" → director; "starring",
  "stars", "with", "cast", "actor"… → cast); no cue: either role.
* **Years**: ``1995`` (a year inside the request's range), ``1990s`` (a decade
  containing the whole range).
* **Genres**: catalog genre names, their adjectives and synonyms
  ("science-fiction", "animated", "comedies").
* **Runtime**: "under / less than / shorter than / below N minutes" (an
  exclusive upper bound N), "at most / up to N" (N + 1), "at least N" and
  "over / more than / longer than N" (N + 1) as lower bounds; a bound must equal
  the request's.
* **Ordering**: "highest-rated", "lowest-rated", "longest", "shortest".
* **No constraint**: "I don't mind about the <field>" is true when the
  request does not constrain that field.

Sentences with a negation ("It's not a comedy") state nothing checkable and
are skipped. **Leak**: the film's title (or id) in the text, unless every
word of it there states a true request value ("It stars Mike Tyson" does not
name "Tyson", and "a 2008 feature film" does not name "The Feature"); titles made only of stop-words ("It", "Up") cannot be told
apart from prose and are not checked, and a title made of common words
("Heat") may be flagged in ordinary prose.

Example:
    >>> _RUNTIME.search("it runs under 100 minutes").groups()
    ('under', '100')
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from agentenv.corpora.media.catalog import Catalog, normalize_key
from agentenv.envs.media_search.dialogue.film_requests import FIELD_NAMES, Request
from agentenv.envs.media_search.questions.templates import genre_adjective
from agentenv.envs.media_search.tools.index import GENRE_SYNONYMS
from agentenv.multiagent.messages import sentences
from agentenv.retrieval.tokenize import ENGLISH_STOPWORDS

_WORD = re.compile(r"[^\W_]+")
_YEAR = re.compile(r"^(1[89]\d\d|20\d\d)(s?)$")
_RUNTIME = re.compile(
    r"\b(under|less than|shorter than|below|at most|no more than|up to|at least|over|more than|longer than)"
    r"\s+(\d{1,3})\s+(?:min|mins|minute|minutes)\b"
)
_EXCLUSIVE_MAX, _INCLUSIVE_MAX = (
    {"under", "less than", "shorter than", "below"},
    {"at most", "no more than", "up to"},
)
_AT_LEAST = {"at least"}
_CRITERIA = (
    ("highest rated", ("rating", "desc")),
    ("best rated", ("rating", "desc")),
    ("top rated", ("rating", "desc")),
    ("lowest rated", ("rating", "asc")),
    ("worst rated", ("rating", "asc")),
    ("longest", ("runtime", "desc")),
    ("shortest", ("runtime", "asc")),
)
_CRITERIA_WORDS = re.compile(r"\b(" + "|".join(re.escape(p) for p, _ in _CRITERIA) + r")\b")
"""All criteria phrases in one pass (in :data:`_CRITERIA` order within the alternation: none is a prefix of another)."""
_NONE = re.compile(
    r"\b(?:don t|do not) mind about the (release year|year|genre|director|cast|running time|runtime)\b"
    r"|\bno preference (?:about|for|on) the (release year|year|genre|director|cast|running time|runtime)\b"
)
_NEGATION = re.compile(r"\b(not|never|don t|doesn t|isn t|wasn t|didn t|no)\b")
_DIRECTOR_CUES = frozenset(
    {"directed", "director", "directors", "direct", "directs", "filmmaker", "made"}
)
_CAST_CUES = frozenset(
    {
        "starring",
        "stars",
        "star",
        "starred",
        "cast",
        "actor",
        "actors",
        "actress",
        "actresses",
        "featuring",
        "features",
        "with",
        "appears",
        "plays",
    }
)
_FIELD_OF_NAME = {normalize_key(v): k for k, v in FIELD_NAMES.items()} | {
    "year": "year",
    "runtime": "runtime",
}


@dataclass(frozen=True)
class FieldClaim:
    """One statement about the request: a field, what kind of statement, its value."""

    field: str
    kind: str
    value: Any


@dataclass(frozen=True)
class UserCheck:
    """The verdict on one user message."""

    claims: tuple[FieldClaim, ...]
    false_claims: tuple[FieldClaim, ...]
    unanswered: tuple[str, ...]
    leak: bool
    volunteered: tuple[str, ...]


class Vocabulary:
    """What the checker recognises in free text: the catalog's people and genre words."""

    def __init__(self, catalog: Catalog) -> None:
        self.people = catalog.people
        genres = sorted({g for t in catalog.titles for g in t.genres})
        words: dict[str, str] = {}
        for g in genres:
            for w in (g, genre_adjective(g)):
                words[normalize_key(w)] = g
                words[normalize_key(w) + "s"] = g
        for w, g in GENRE_SYNONYMS.items():
            if g in genres:
                words[normalize_key(w)] = g
        self.genres = words


@lru_cache(maxsize=4)
def vocabulary(catalog: Catalog) -> Vocabulary:
    """The vocabulary of a catalog, built once per process."""
    return Vocabulary(catalog)


def _names(request: Request | None) -> tuple[str, ...]:
    if request is None:
        return ()
    return ((request.director,) if request.director else ()) + request.cast


def _spans(
    vocab: Vocabulary, raw: list[str], keys: list[str], request: Request | None
) -> list[tuple[int, int, str]]:
    """Named people, left to right: the request's own names first, else a 2–4-word catalog name written
    with capitals. Only words that can start a name are visited (linear, and cheap on a long message)."""
    own = sorted(
        (name for n in _names(request) if (name := normalize_key(n).split())), key=len, reverse=True
    )
    own_first = {name[0] for name in own}
    upper = [w[:1].isupper() for w in raw]
    out: list[tuple[int, int, str]] = []
    free = 0
    for i in [i for i, key in enumerate(keys) if upper[i] or key in own_first]:
        if i < free:
            continue
        found = None
        for name in own:
            if keys[i] == name[0] and keys[i : i + len(name)] == name:
                found = (i, i + len(name), " ".join(name))
                break
        if found is None and upper[i]:
            for n in (4, 3, 2):
                if i + n <= len(keys) and upper[i + n - 1]:
                    key = " ".join(keys[i : i + n])
                    if key in vocab.people:
                        found = (i, i + n, key)
                        break
        if found:
            out.append(found)
            free = found[1]
    return out


def _roles_before(keys: list[str]) -> list[str]:
    """``roles[i]``: the role the last cue word before word ``i`` names ("person" with none).

    One pass for the sentence: looking back from each name was quadratic ("Tom Hanks" x 4,000
    in one message took a second).

    >>> _roles_before(["directed", "by", "nolan", "starring", "caine"])
    ['person', 'director', 'director', 'director', 'cast']
    """
    roles, current = [], "person"
    for k in keys:
        roles.append(current)
        if k in _DIRECTOR_CUES:
            current = "director"
        elif k in _CAST_CUES:
            current = "cast"
    return roles


Reading = list[tuple[list[tuple["FieldClaim", tuple[int, ...]]], list[str]]]
"""A message read sentence by sentence: each sentence's claims (with word positions) and words."""


def read_message(vocab: Vocabulary, parts: Sequence[str], request: Request | None) -> Reading:
    """Each sentence read once: :func:`check_user_message` needs them for the claims and again for the
    title, and reading a 32 KB message twice cost twice the step budget."""
    return [_sentence_claims(vocab, sentence, request) for sentence in parts]


def _sentence_claims(
    vocab: Vocabulary, sentence: str, request: Request | None
) -> tuple[list[tuple[FieldClaim, tuple[int, ...]]], list[str]]:
    """The claims of one sentence, each with the word positions it was read from, and the words."""
    raw = _WORD.findall(sentence)
    keys = [normalize_key(w) for w in raw]
    text = " ".join(keys)
    claims: list[tuple[FieldClaim, tuple[int, ...]]] = []
    for m in _NONE.finditer(text):
        name = m.group(1) or m.group(2)
        claims.append((FieldClaim(_FIELD_OF_NAME.get(name, name), "none", None), ()))
    used: set[int] = set()
    people = []
    roles: list[str] | None = None
    for start, end, name in _spans(vocab, raw, keys, request):
        used.update(range(start, end))
        if roles is None:
            roles = _roles_before(keys)
        role = roles[start]
        people.append(
            (FieldClaim(role if role != "person" else "cast", role, name), tuple(range(start, end)))
        )
    if _NEGATION.search(_NONE.sub(" ", text)):
        return claims, keys
    claims += people
    for i, k in enumerate(keys):
        if i in used:
            continue
        year = _YEAR.match(k)
        if year:
            used.add(i)
            claims.append(
                (
                    FieldClaim("year", "decade" if year.group(2) else "year", int(year.group(1))),
                    (i,),
                )
            )
        elif (
            i + 1 < len(keys)
            and i + 1 not in used
            and (pair := f"{k} {keys[i + 1]}") in vocab.genres
        ):
            used.update((i, i + 1))
            claims.append((FieldClaim("genre", "genre", vocab.genres[pair]), (i, i + 1)))
        elif k in vocab.genres:
            used.add(i)
            claims.append((FieldClaim("genre", "genre", vocab.genres[k]), (i,)))
    for m in _RUNTIME.finditer(text):
        word, n = m.group(1), int(m.group(2))
        bound = n if word in _EXCLUSIVE_MAX or word in _AT_LEAST else n + 1
        claims.append(
            (
                FieldClaim(
                    "runtime", "max" if word in _EXCLUSIVE_MAX | _INCLUSIVE_MAX else "min", bound
                ),
                (),
            )
        )
    found = {m.group(1) for m in _CRITERIA_WORDS.finditer(text)}
    claims += [
        (FieldClaim("criterion", "criterion", criterion), ())
        for phrase, criterion in _CRITERIA
        if phrase in found
    ]
    return claims, keys


def user_claims(
    vocab: Vocabulary, text: str, request: Request | None = None, read: Reading | None = None
) -> tuple[FieldClaim, ...]:
    """Every checkable statement of a user message (see the module docstring); ``read``: the
    message already read by :func:`read_message`."""
    if read is None:
        read = read_message(vocab, sentences(text, _names(request)), request)
    return tuple(dict.fromkeys(claim for claims, _ in read for claim, _ in claims))


def is_true(claim: FieldClaim, request: Request) -> bool:
    """Whether a claim agrees with the request."""
    kind, value = claim.kind, claim.value
    if kind == "none":
        return claim.field not in request.fields()
    if kind in ("year", "decade"):
        if request.year is None:
            return False
        lo, hi = request.year
        return lo <= value <= hi if kind == "year" else value <= lo and hi <= value + 9
    if kind == "genre":
        return request.genre is not None and normalize_key(request.genre) == normalize_key(value)
    directors = {normalize_key(request.director)} if request.director else set()
    cast = {normalize_key(c) for c in request.cast}
    if kind in ("director", "cast", "person"):
        return value in {"director": directors, "cast": cast, "person": directors | cast}[kind]
    if kind == "max":
        return request.runtime_max is not None and request.runtime_max + 1 == value
    if kind == "min":
        return request.runtime_min is not None and request.runtime_min == value
    return request.criterion == value


def field_of(claim: FieldClaim, request: Request) -> str:
    """The field a claim speaks about (a name without a role: the role it has in the request)."""
    if claim.kind == "person":
        return (
            "director"
            if request.director and normalize_key(request.director) == claim.value
            else "cast"
        )
    return claim.field


def mentions_title(
    vocab: Vocabulary,
    text: str,
    question: Any,
    request: Request | None = None,
    read: Reading | None = None,
) -> bool:
    """True when the text names the film (title or id), the words that state true request values set aside;
    ``read``: the message already read (split with the title protected), if the caller has it."""
    title = normalize_key(question.answer).split()
    if title and title[0] in ("the", "a", "an") and len(title) > 1:
        title = title[1:]
    ids = {
        normalize_key(a) for a in getattr(question, "aliases", ()) if re.fullmatch(r"(tt|m)\d+", a)
    }
    checkable = not all(w in ENGLISH_STOPWORDS for w in title)
    n = len(title)
    if read is None:
        read = read_message(vocab, sentences(text, (*_names(request), question.answer)), request)
    for claims, keys in read:
        if ids & set(keys):
            return True
        if not checkable:
            continue
        values = {
            i
            for claim, where in claims
            if request is None or is_true(claim, request)
            for i in where
        }
        if (
            request is not None and request.feature_only
        ):  # "feature film" states the request, not "The Feature"
            values |= {i for i, key in enumerate(keys) if key == "feature"}
        for i in range(len(keys) - n + 1):
            if keys[i : i + n] == title and not set(range(i, i + n)) <= values:
                return True
    return False


def check_user_message(
    vocab: Vocabulary,
    text: str,
    request: Request,
    question: Any,
    asked: Sequence[str],
    asked_so_far: Sequence[str],
    held_back: Sequence[str],
) -> UserCheck:
    """Judge one user message: false claims, asked fields left unanswered, title leak, held-back fields volunteered."""
    read = read_message(
        vocab, sentences(text, (*_names(request), question.answer)), request
    )  # read once
    claims = user_claims(vocab, text, request, read)
    false = tuple(c for c in claims if not is_true(c, request))
    spoken = {field_of(c, request) for c in claims}
    unanswered = tuple(f for f in asked if f not in spoken)
    volunteered = tuple(
        dict.fromkeys(
            f
            for c in claims
            if c.kind != "none"
            and (f := field_of(c, request)) in held_back
            and f not in asked_so_far
        )
    )
    return UserCheck(
        claims, false, unanswered, mentions_title(vocab, text, question, request, read), volunteered
    )
