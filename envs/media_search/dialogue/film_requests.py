"""A user's film request as structured constraints: what is said at first, what is held back.

Why structured: the constraint and superlative questions of MediaSearch come
with a gold ``filter_titles`` plan, i.e. the exact constraints (year or
decade, genre, director, cast, runtime bound, and for superlatives the
ordering). A :class:`Request` holds them, so the user's vague opening, every
reveal and every truth check are functions of the same record:

* :func:`describe` renders the request from any subset of its fields (the
  opening leaves the held-back fields out; a superlative always keeps its
  ordering, "the highest-rated …", and "feature film");
* :func:`reveal` is the one sentence that gives a field's value ("It came out
  in 1995.") or says the request has no such constraint ("I don't mind about
  the director.");
* :func:`fields_asked` matches an assistant's message to fields by keywords
  (:data:`FIELD_WORDS`): "When was it released?" asks for ``year``.

Example:
    >>> r = Request("constraint", year=(1990, 1999), director="Tony Scott", cast=("Michael Ironside",))
    >>> r.fields()
    ('year', 'director', 'cast')
    >>> describe(r, ["year", "director"])
    "I'm looking for a film from the 1990s directed by Tony Scott."
    >>> describe(r, r.fields())
    "I'm looking for a film from the 1990s directed by Tony Scott and starring Michael Ironside."
    >>> reveal(r, "cast"), reveal(r, "genre")
    ('It stars Michael Ironside.', "I don't mind about the genre.")
    >>> fields_asked("Do you remember who directed it, or when it came out?")
    ('year', 'director')
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from agentenv.corpora.media.catalog import normalize_key
from agentenv.envs.media_search.questions.templates import genre_adjective
from agentenv.envs.media_search.tools.index import GENRE_SYNONYMS

FIELDS: tuple[str, ...] = ("year", "genre", "director", "cast", "runtime")
"""The constraint fields, in the order they are rendered and revealed."""
FIELD_NAMES = {
    "year": "release year",
    "genre": "genre",
    "director": "director",
    "cast": "cast",
    "runtime": "running time",
}
CRITERIA = {
    ("rating", "desc"): "highest-rated",
    ("rating", "asc"): "lowest-rated",
    ("runtime", "desc"): "longest",
    ("runtime", "asc"): "shortest",
}
"""How a superlative's ordering is said."""
FIELD_WORDS: dict[str, frozenset[str]] = {
    "year": frozenset(
        {
            "year",
            "years",
            "when",
            "decade",
            "decades",
            "released",
            "release",
            "era",
            "date",
            "period",
            "recent",
            "old",
            "came out",
            "come out",
            "how old",
        }
    ),
    "genre": frozenset({"genre", "genres", "kind", "type", "sort", "category", "style"}),
    "director": frozenset(
        {
            "director",
            "directors",
            "directed",
            "direct",
            "directs",
            "directing",
            "filmmaker",
            "who made",
        }
    ),
    "cast": frozenset(
        {
            "actor",
            "actors",
            "actress",
            "actresses",
            "cast",
            "star",
            "stars",
            "starring",
            "starred",
            "featuring",
            "appear",
            "appears",
            "appeared",
            "lead",
            "leads",
            "who is in",
            "who s in",
            "plays",
            "played",
        }
    ),
    "runtime": frozenset(
        {"long", "length", "runtime", "minutes", "duration", "running time", "how long", "lasts"}
    ),
}
"""Words and phrases (after :func:`~agentenv.corpora.media.catalog.normalize_key`) that ask about a field."""


@dataclass(frozen=True)
class Request:
    """The constraints of one constraint or superlative question (see the module docstring)."""

    kind: str
    year: tuple[int, int] | None = None
    genre: str | None = None
    director: str | None = None
    cast: tuple[str, ...] = ()
    runtime_min: int | None = None
    runtime_max: int | None = None
    criterion: tuple[str, str] | None = None
    feature_only: bool = False

    @classmethod
    def from_plan(cls, kind: str, args: Mapping[str, Any]) -> Request:
        """The request behind a ``filter_titles`` call's arguments."""
        year = None
        if args.get("year_min") is not None or args.get("year_max") is not None:
            year = (
                int(args.get("year_min", args.get("year_max"))),
                int(args.get("year_max", args.get("year_min"))),
            )
        criterion = (
            (str(args["sort_by"]), str(args.get("order", "desc")))
            if kind == "superlative"
            else None
        )
        return cls(
            kind=kind,
            year=year,
            genre=args.get("genre"),
            director=args.get("director"),
            cast=tuple(args.get("cast", ())),
            runtime_min=args.get("runtime_min"),
            runtime_max=args.get("runtime_max"),
            criterion=criterion,
            feature_only=bool(args.get("feature_only", False)),
        )

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Request:
        """Inverse of :meth:`to_dict`."""
        values = dict(data)
        for key in ("year", "criterion"):
            if values.get(key) is not None:
                values[key] = tuple(values[key])
        values["cast"] = tuple(values.get("cast", ()))
        return cls(**values)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready fields (tuples become lists)."""
        return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self).items()}

    def fields(self) -> tuple[str, ...]:
        """The fields this request constrains, in :data:`FIELDS` order."""
        present = {
            "year": self.year is not None,
            "genre": self.genre is not None,
            "director": self.director is not None,
            "cast": bool(self.cast),
            "runtime": self.runtime_min is not None or self.runtime_max is not None,
        }
        return tuple(f for f in FIELDS if present[f])


def request_of(question: Any) -> Request | None:
    """The request of a generated constraint/superlative question (None for any other question)."""
    plan = getattr(question, "plan", None)
    if question.kind not in ("constraint", "superlative") or not plan or len(plan) != 1:
        return None
    if plan[0].get("tool") != "filter_titles":
        return None
    return Request.from_plan(question.kind, plan[0]["arguments"])


def choose_held_back(request: Request, rng: np.random.Generator) -> tuple[str, ...]:
    """The fields the opening leaves out: at least one; a constraint request keeps one in the opening."""
    fields = request.fields()
    most = len(fields) if request.kind == "superlative" else len(fields) - 1
    if most < 1:
        return ()
    n = int(rng.integers(1, most + 1))
    chosen = set(rng.choice(len(fields), size=n, replace=False).tolist())
    return tuple(f for i, f in enumerate(fields) if i in chosen)


def join_and(items: tuple[str, ...]) -> str:
    """``a``, ``a and b``, ``a, b and c`` (empty for no items)."""
    return ", ".join(items[:-1]) + " and " + items[-1] if len(items) > 1 else "".join(items)


def _runtime(request: Request) -> str:
    if request.runtime_max is not None:
        return f"running under {request.runtime_max + 1} minutes"
    return f"running at least {request.runtime_min} minutes"


def describe(request: Request, shown: Collection[str]) -> str:
    """The request, saying only the ``shown`` fields (the ordering of a superlative always)."""
    year = request.year if "year" in shown else None
    exact = year is not None and year[0] == year[1]
    words = []
    if request.criterion is not None:
        words.append(CRITERIA[request.criterion])
    if exact:
        words.append(str(year[0]))
    if "genre" in shown and request.genre:
        words.append(genre_adjective(request.genre))
    words.append("feature film" if request.feature_only else "film")
    tail = []
    if year is not None and not exact:
        tail.append(
            f"from the {year[0]}s"
            if year[1] - year[0] == 9 and year[0] % 10 == 0
            else f"from {year[0]} to {year[1]}"
        )
    credits = []
    if "director" in shown and request.director:
        credits.append(f"directed by {request.director}")
    if "cast" in shown and request.cast:
        credits.append(f"starring {join_and(request.cast)}")
    if credits:
        tail.append(" and ".join(credits))
    if "runtime" in shown and "runtime" in request.fields():
        tail.append(_runtime(request))
    phrase = " ".join(words + tail)
    if request.criterion is not None and request.criterion[0] == "rating":
        phrase += ", by critics' rating"
    article = "the" if request.criterion is not None else ("an" if phrase[0] in "aeiou" else "a")
    return f"I'm looking for {article} {phrase}."


def reveal(request: Request, field: str) -> str:
    """The sentence that gives one field's value, or says the request does not constrain it."""
    if field not in request.fields():
        return f"I don't mind about the {FIELD_NAMES[field]}."
    if field == "year":
        lo, hi = request.year  # type: ignore[misc]
        if lo == hi:
            return f"It came out in {lo}."
        return (
            f"It's from the {lo}s."
            if hi - lo == 9 and lo % 10 == 0
            else f"It came out between {lo} and {hi}."
        )
    if field == "genre":
        adjective = genre_adjective(request.genre or "")
        return f"It's {'an' if adjective[0] in 'aeiou' else 'a'} {adjective} film."
    if field == "director":
        return f"It was directed by {request.director}."
    if field == "cast":
        return f"It stars {join_and(request.cast)}."
    return f"It runs {_runtime(request).removeprefix('running ')}."


_GENRE_WORDS = frozenset(
    {normalize_key(w) for w in GENRE_SYNONYMS}
    | {
        normalize_key(w)
        for g in (
            "Action",
            "Adventure",
            "Animation",
            "Biography",
            "Comedy",
            "Crime",
            "Documentary",
            "Drama",
            "Family",
            "Fantasy",
            "History",
            "Horror",
            "Music",
            "Musical",
            "Mystery",
            "Romance",
            "Sci-Fi",
            "Sport",
            "Thriller",
            "War",
            "Western",
        )
        for w in (g, genre_adjective(g))
    }
)


def fields_asked(text: str) -> tuple[str, ...]:
    """The fields an assistant's message asks about (keywords of :data:`FIELD_WORDS`; genre names ask for genre)."""
    words = normalize_key(text).split()
    grams = set(words) | {" ".join(words[i : i + 2]) for i in range(len(words) - 1)}
    grams |= {" ".join(words[i : i + 3]) for i in range(len(words) - 2)}
    asked = {f for f, keys in FIELD_WORDS.items() if grams & keys}
    if grams & _GENRE_WORDS:
        asked.add("genre")
    return tuple(f for f in FIELDS if f in asked)
