"""The JSON text the MediaSearch tools answer with, written once per title, and every title's search row cached.

Why: a ``search`` step spends its time ranking, not re-encoding records, so each
title's search-result JSON (up to its score) and ``get_title`` record are
written once and reused (:class:`~agentenv.envs.media_search.tools.film_tools.SharedFragments`).
The search rows of all 17,472 titles take 17 ms to write, too long for every
warm ``gym.make`` and, written lazily, 9 µs added to each search of a fresh
process (five new titles a search). So they are written once per home, next
to the catalog cache, and a make reads them (about 3 ms).

The text is byte for byte what ``ToolRegistry.execute`` gives for the dict
the tool would return (``json`` with ``ensure_ascii=False``).
"""

from __future__ import annotations

import hashlib
import json
import logging
import marshal
from pathlib import Path
from typing import Any

from agentenv.corpora.media.catalog import MOVIES_DB_SHA256, Catalog, Title, cache_path
from agentenv.corpora.media.files import write_atomic
from agentenv.storage.checksummed_cache import pack_bytes, unpack_bytes

__all__ = ["encode", "result_prefix", "rows_path", "score_text", "search_prefixes", "title_text"]

log = logging.getLogger(__name__)

_JSON = json.JSONEncoder(ensure_ascii=False)
_STR = json.encoder.encode_basestring  # how that encoder writes a str (ensure_ascii=False)
# JSONEncoder.encode builds a C encoder on every call; this one is built once (no cycle check:
# only for the acyclic records of a Title).
_C_ENCODE = getattr(json.encoder, "c_make_encoder", None)
_ENCODE = (
    _C_ENCODE(None, _JSON.default, _STR, None, ": ", ", ", False, False, True)
    if _C_ENCODE is not None
    else None
)
_FIELDS = Title._fields


def encode(value: Any) -> str:
    """``json.dumps(value, ensure_ascii=False)``, byte for byte, without building an encoder per call.

    Example:
        >>> encode({"title": "Amélie", "year": 2001})
        '{"title": "Amélie", "year": 2001}'
    """
    return "".join(_ENCODE(value, 0)) if _ENCODE is not None else _JSON.encode(value)


def score_text(score: float) -> str:
    """``repr(round(score, 3))``, the score as ``json`` writes the rounded float, in 40% of its time.

    Why: a search step writes five scores, and rounding then finding the shortest repr cost
    3.8 µs of it. ``format(score, ".3f")`` is the correctly rounded three-decimal text of the
    same binary value (half to even, as ``round`` rounds), and the double nearest that text
    prints as that text with its trailing zeros dropped: below 1e12 doubles lie less than 0.001
    apart, so no other decimal of three places or fewer maps to the same double. (Above 2^43
    that fails: 70368744177664.625 prints as ``...664.62``.) A property test compares the two
    on random and tie-breaking floats.

    Example:
        >>> [score_text(x) for x in (12.3456, 7.0, 0.0004, 0.0625, 2.0005, -0.0004)]
        ['12.346', '7.0', '0.0', '0.062', '2.001', '-0.0']
    """
    if not -1e12 < score < 1e12:  # large scores, inf, nan: the general path
        return repr(round(score, 3))
    text = format(score, ".3f").rstrip("0")
    return text + "0" if text[-1] == "." else text


def result_prefix(t: Title) -> str:
    """A search result as JSON up to its score: ``{"id": …, "directors": […], "score": ``."""
    if (
        type(t.year) is not int
    ):  # pragma: no cover - the catalog's years are ints; stay exact anyway
        return encode(
            {
                "id": t.id,
                "title": t.title,
                "year": t.year,
                "directors": list(t.directors),
                "score": 0,
            }
        )[:-2]
    directors = ", ".join(map(_STR, t.directors))
    return f'{{"id": {_STR(t.id)}, "title": {_STR(t.title)}, "year": {t.year!r}, "directors": [{directors}], "score": '


def title_text(t: Title) -> str:
    """The ``get_title`` output of ``t`` as JSON text: ``t.to_dict()`` plus ``is_feature``.

    Written from the fields directly (json writes a tuple as it writes a list).
    """
    record = dict(zip(_FIELDS, t, strict=True))
    record["is_feature"] = t.is_feature
    return encode(record)


def _code_version() -> str:
    """What changes whenever :func:`result_prefix` writes other text: its compiled code, constants included."""
    return hashlib.sha256(marshal.dumps(result_prefix.__code__)).hexdigest()[:16]


def rows_path() -> Path:
    """The cache file of the search rows written by this code: named by its version, like the catalog's
    files, so two versions of the package sharing a home do not rewrite each other's file at every make."""
    return cache_path().with_name(f"search-rows-{_code_version()}.bin")


def search_prefixes(catalog: Catalog) -> dict[str, str]:
    """Every title's :func:`result_prefix`, by id: from the cache for the pinned catalog, else written now.

    The cache is keyed by the catalog's checksum and size and by the code that
    writes the rows, so a new version of :func:`result_prefix` writes it again.
    A catalog of your own (another checksum) gets its rows written here, once.
    """
    ids = [t[0] for t in catalog.titles]  # t[0] is t.id
    if catalog.checksum != MOVIES_DB_SHA256:
        return dict(zip(ids, map(result_prefix, catalog.titles), strict=True))
    header = {
        "format": 1,
        "source_sha256": catalog.checksum,
        "titles": len(ids),
        "code": _code_version(),
        "marshal": marshal.version,
    }
    path = rows_path()
    found = unpack_bytes(path, header)
    if found is not None:
        try:
            rows = marshal.loads(found[1])
        except (EOFError, TypeError, ValueError):
            rows = None
        if isinstance(rows, list) and len(rows) == len(ids) and all(type(r) is str for r in rows):
            return dict(zip(ids, rows, strict=True))
        log.warning(
            "cache file %s is corrupt: its rows do not match this catalog; rebuilding it", path
        )
    rows = [result_prefix(t) for t in catalog.titles]
    try:
        write_atomic(path, pack_bytes(header, marshal.dumps(rows)))
    except OSError as err:  # a read-only home still serves, writing the rows in each process
        log.warning("could not cache the search rows in %s (%s)", path, err)
    return dict(zip(ids, rows, strict=True))
