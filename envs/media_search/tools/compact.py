"""Compact plain-text tool outputs for MediaSearch (``compact=True``).

Why: a very small model trained from scratch on a CPU has a short context, and
the default JSON outputs spend most of their tokens on quotes, braces and
repeated keys. These renderers write the same information as the JSON (every
id, title, year, credit and number an answer may need; only the search
scores are dropped) as short lines, one record or one field a line:

* ``search``: ``id | title | year | directors`` per hit, best first.
* ``filter_titles``: ``count: N``, then ``id | title | year | runtime | rating``.
* ``get_title``: ``key: value`` lines with the JSON's keys; lists joined by
  ``", "``; ``null`` (and an empty list) shown as ``-``.
* ``find_person``: ``match: …``, then per person a ``person: NAME`` line and
  one line per role, ``ROLE TOTAL: id | title | year; …``.

:func:`parse_compact` reads each back into the JSON's structure (less the
scores), so code that follows a plan over the outputs (the oracle's extract
rules) can read either form. The catalog's names hold no ``,``, ``|`` or
newline, which keeps the lines unambiguous.

Example:
    >>> search_lines([{"id": "tt0091799", "title": "Psycho III", "year": 1986,
    ...                "directors": ["Anthony Perkins"], "score": 12.5}])
    'tt0091799 | Psycho III | 1986 | Anthony Perkins'
    >>> filter_lines({"count": 1, "results": [{"id": "tt1", "title": "A", "year": 2001,
    ...                                         "runtime": 90, "rating": None}]})
    'count: 1\\ntt1 | A | 2001 | 90 | -'
    >>> parse_compact("filter_titles", 'count: 1\\ntt1 | A | 2001 | 90 | -')["results"][0]["rating"] is None
    True
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["filter_lines", "parse_compact", "person_lines", "search_lines", "title_lines"]

NULL = "-"
"""How a missing value (JSON ``null``) or an empty list is written."""

ROLES = ("directed", "wrote", "acted")
"""The roles of a ``find_person`` entry, in the order they are written."""

_LIST_FIELDS = frozenset({"genres", "directors", "writers", "cast", "languages", "countries"})
_INT_FIELDS = frozenset({"year", "runtime", "meter", "reviews", "box_office", "oscars_won"})
_FLOAT_FIELDS = frozenset({"rating"})
_BOOL_FIELDS = frozenset({"is_feature"})
_FILM_SPLIT = re.compile(
    r"; (?=[^ |;]+ \| )"
)  # between "id | title | year" items; no title holds " | "
_ROLE_LINE = re.compile(r"^(directed|wrote|acted) (\d+): (.*)$")


def _value(value: Any) -> str:
    """One value as a compact line writes it: ``-`` for null, lists joined by ``", "``, booleans as yes/no."""
    if value is None:
        return NULL
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (list, tuple)):
        return ", ".join(map(str, value)) if value else NULL
    return str(value)


def search_lines(results: Iterable[Mapping[str, Any]]) -> str:
    """``search`` hits, one ``id | title | year | directors`` line each, without the scores.

    The scores only rank the hits, and the order already shows the ranking.
    """
    return "\n".join(
        f"{r['id']} | {r['title']} | {_value(r['year'])} | {_value(r['directors'])}"
        for r in results
    )


def filter_lines(output: Mapping[str, Any]) -> str:
    """``filter_titles``: ``count: N``, then one ``id | title | year | runtime | rating`` line per result."""
    lines = [f"count: {output['count']}"]
    lines.extend(
        " | ".join(_value(r[k]) for k in ("id", "title", "year", "runtime", "rating"))
        for r in output["results"]
    )
    return "\n".join(lines)


def title_lines(record: Mapping[str, Any]) -> str:
    """``get_title``: one ``key: value`` line per field of the JSON record, in its order.

    Every public field stays (questions may ask about any of them); the keys
    are the JSON's, so a model trained on either form reads the same names.
    """
    return "\n".join(f"{key}: {_value(value)}" for key, value in record.items())


def _films(films: Iterable[Mapping[str, Any]]) -> str:
    text = "; ".join(f"{f['id']} | {f['title']} | {_value(f['year'])}" for f in films)
    return text or NULL


def person_lines(output: Mapping[str, Any]) -> str:
    """``find_person``: the match, then per person ``person: NAME`` and ``ROLE TOTAL: films`` lines.

    ``TOTAL`` is the person's number of films in the role (the JSON's
    ``totals``); the films listed (oldest first) may be fewer, as in the JSON.
    """
    head = f"match: {output['match']}"
    if "total_people" in output:
        head += f", {output['total_people']} people"
    lines = [head]
    for person in output["people"]:
        lines.append(f"person: {person['name']}")
        totals = person["totals"]
        lines.extend(f"{role} {totals[role]}: {_films(person[role])}" for role in ROLES)
    return "\n".join(lines)


# ---------------------------------------------------------------------- parsing back


def _scalar(key: str, text: str) -> Any:
    if text == NULL:
        return [] if key in _LIST_FIELDS else None
    if key in _LIST_FIELDS:
        return text.split(", ")
    if key in _BOOL_FIELDS:
        return text == "yes"
    if key in _INT_FIELDS:
        return int(text)
    if key in _FLOAT_FIELDS:
        return float(text)
    return text


def _parse_film(item: str) -> dict[str, Any]:
    film_id, title, year = item.split(" | ")
    return {"id": film_id, "title": title, "year": _scalar("year", year)}


def _parse_search(text: str) -> dict[str, Any]:
    results = []
    for line in text.split("\n"):
        film_id, title, year, directors = line.split(" | ")
        results.append(
            {
                "id": film_id,
                "title": title,
                "year": _scalar("year", year),
                "directors": _scalar("directors", directors),
            }
        )
    return {"results": results}


def _parse_filter(text: str) -> dict[str, Any]:
    first, *rows = text.split("\n")
    if not first.startswith("count: "):
        raise ValueError("no count line")
    results = []
    for line in rows:
        film_id, title, year, runtime, rating = line.split(" | ")
        results.append(
            {
                "id": film_id,
                "title": title,
                "year": _scalar("year", year),
                "runtime": _scalar("runtime", runtime),
                "rating": _scalar("rating", rating),
            }
        )
    return {"count": int(first[len("count: ") :]), "results": results}


def _parse_title(text: str) -> dict[str, Any]:
    record = {}
    for line in text.split("\n"):
        key, sep, value = line.partition(": ")
        if not sep:
            key, value = key.rstrip(":"), ""
        record[key] = _scalar(key, value)
    if "id" not in record:
        raise ValueError("no id line")
    return record


def _parse_person(text: str) -> dict[str, Any]:
    first, *rest = text.split("\n")
    if not first.startswith("match: "):
        raise ValueError("no match line")
    match, _, people_count = first[len("match: ") :].partition(", ")
    output: dict[str, Any] = {"match": match}
    if people_count:
        output["total_people"] = int(people_count.split(" ")[0])
    people: list[dict[str, Any]] = []
    for line in rest:
        if line.startswith("person: "):
            people.append({"name": line[len("person: ") :], "totals": {}})
            continue
        role_line = _ROLE_LINE.match(line)
        if role_line is None or not people:
            raise ValueError(f"unexpected line {line[:80]!r}")
        role, total, films = role_line.groups()
        people[-1][role] = (
            [] if films == NULL else [_parse_film(f) for f in _FILM_SPLIT.split(films)]
        )
        people[-1]["totals"][role] = int(total)
    output["people"] = [
        {"name": p["name"], **{r: p.get(r, []) for r in ROLES}, "totals": p["totals"]}
        for p in people
    ]
    return output


_PARSERS = {
    "search": _parse_search,
    "filter_titles": _parse_filter,
    "get_title": _parse_title,
    "find_person": _parse_person,
}


def parse_compact(tool: str, text: str) -> Any:
    """The JSON structure behind ``tool``'s compact output ``text`` (search without scores).

    Returns ``text`` itself when it is not such an output (a tool error, or a
    tool without a compact form), as a JSON reader returns non-JSON text.
    """
    parser = _PARSERS.get(tool)
    if parser is None or text.startswith("Error"):
        return text
    try:
        return parser(text)
    except ValueError:
        return text
