"""The name-token index behind ``find_person``'s partial matches: a common first name costs like an exact one.

Why: a partial name ("john") used to be answered by scanning every credited
name (~64k keys, ~1 MB of text) for the token, then sorting the ~1,000 people
found by their number of credits: about 3 ms a call against 0.05 ms for an
exact name, and 32 calls an action made one step take 170–390 ms against the
20 ms budget of any step. Here each token maps to the people whose name has it
as a whole word, as a sorted array of *ranks*: people are numbered once in the
order the tool lists them (most credits first, then by key), so an
intersection of the query's token lists is already in answer order, its length
is the total, and its first few entries are the people shown. A call's work is
bounded by the length of the shortest token list it touches, however common
the name is.

Building it (every key split into tokens, every credit counted) takes a few
hundred milliseconds for the film catalog, so it is written once under
``$AGENTENV_HOME`` keyed by the catalog's checksum, like the other indexes,
and read back in a few milliseconds. Small catalogs (tests, a user's own) are
built in memory.

Example:
    >>> index = PersonIndex.build({"ridley scott": 3, "tony scott": 5, "scott glenn": 5, "glenn close": 1})
    >>> index.matching("scott")
    (3, ['scott glenn', 'tony scott', 'ridley scott'])
    >>> index.matching("glenn scott", limit=1)
    (1, ['scott glenn'])
    >>> index.matching("nobody")
    (0, [])
    >>> index.postings("scott")
    3
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from typing import Any

import numpy as np

from agentenv.corpora.media import Catalog, normalize_key

log = logging.getLogger(__name__)

FORMAT = 2
"""Bump when the on-disk layout changes; older files are then rebuilt."""
DISK_MIN_PEOPLE = 5_000
"""Catalogs with fewer people are indexed in memory only (a build takes well under a millisecond each 100)."""


class PersonIndex:
    """Token → ranks of the people whose key has that token as a whole word (read-only once built)."""

    def __init__(
        self,
        order: Sequence[str],
        tokens: Sequence[str],
        cuts: Any,
        ranks: Any,
        title_rank: Sequence[int] = (),
    ) -> None:
        self.order = order
        """People keys in rank order (most credits first, then by key)."""
        self.title_rank: list[int] = list(title_rank)
        """Each catalog position's place in (year, id) order: a person's films sort by it, oldest
        first, without building a tuple per film (a prolific actor's 200 films took 60 µs)."""
        self._slot = dict(zip(tokens, range(len(tokens)), strict=True))
        self._cuts = cuts  # len(tokens) + 1 cut points into ranks
        self._ranks = ranks

    @classmethod
    def build(cls, credits: Mapping[str, int], titles: Sequence[Any] = ()) -> PersonIndex:
        """Index people keys, ranked by ``credits`` (their number of credits, all roles) then key;
        ``titles`` (the catalog's, with ``year`` and ``id``) gives :attr:`title_rank`."""
        order = sorted(credits, key=lambda k: (-credits[k], k))
        lists: dict[str, list[int]] = {}
        for rank, key in enumerate(order):
            for token in set(key.split()):
                found = lists.get(token)
                if found is None:
                    lists[token] = [rank]
                else:
                    found.append(rank)  # ranks arrive ascending: each list is sorted
        tokens = list(lists)
        lengths = np.fromiter((len(lists[t]) for t in tokens), dtype=np.int64, count=len(tokens))
        cuts = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        ranks = np.fromiter(
            (r for t in tokens for r in lists[t]), dtype=np.int32, count=int(cuts[-1])
        )
        by_date = sorted(range(len(titles)), key=lambda i: (titles[i].year, titles[i].id))
        title_rank = [0] * len(titles)
        for place, i in enumerate(by_date):
            title_rank[i] = place
        return cls(order, tokens, cuts, ranks, title_rank)

    def postings(self, key: str) -> int:
        """How many entries :meth:`matching` walks for this (normalised) key: its shortest token list
        (each other token costs a binary search per entry still found)."""
        sizes = [self._size(t) for t in set(key.split())]
        return min(sizes) if sizes else 0

    def matching(self, key: str, limit: int = 8) -> tuple[int, list[str]]:
        """``(total, first keys)`` of the people whose key holds every token of ``key``, in rank order."""
        tokens = set(key.split())
        if not tokens or any(t not in self._slot for t in tokens):
            return 0, []
        lists = sorted((self._list(t) for t in tokens), key=len)
        found = lists[0]
        for other in lists[1:]:  # binary searches of the few found so far: no pass over `other`
            at = np.searchsorted(other, found)
            found = found[other[np.minimum(at, len(other) - 1)] == found]
            if not len(found):
                return 0, []
        order = self.order
        return len(found), [order[r] for r in found[:limit].tolist()]

    def _size(self, token: str) -> int:
        slot = self._slot.get(token)
        return 0 if slot is None else int(self._cuts[slot + 1] - self._cuts[slot])

    def _list(self, token: str) -> Any:
        slot = self._slot[token]
        return self._ranks[self._cuts[slot] : self._cuts[slot + 1]]

    # ------------------------------------------------------------------ disk

    def encode(self) -> tuple[dict[str, int], bytes]:
        """``(sizes, body)``: the keys in rank order, the tokens, then the int arrays (cuts, ranks)."""
        tokens = list(self._slot)
        text = "\n".join(self.order).encode(), "\n".join(tokens).encode()
        pad = b"\0" * (-(len(text[0]) + len(text[1])) % 8)
        sizes = {
            "people": len(self.order),
            "tokens": len(tokens),
            "titles": len(self.title_rank),
            "order_bytes": len(text[0]),
            "tokens_bytes": len(text[1]),
        }
        cuts = np.asarray(self._cuts, dtype="<i8").tobytes()
        ranks = np.asarray(self._ranks, dtype="<i4").tobytes()
        title_rank = np.asarray(self.title_rank, dtype="<i4").tobytes()
        return sizes, b"".join([*text, pad, cuts, title_rank, ranks])

    @classmethod
    def decode(cls, sizes: Mapping[str, Any], body: bytes) -> PersonIndex:
        """The index :meth:`encode` wrote (``ValueError`` when ``body`` does not hold it)."""
        n, m, t = int(sizes["people"]), int(sizes["tokens"]), int(sizes["titles"])
        ob, tb = int(sizes["order_bytes"]), int(sizes["tokens_bytes"])
        order = body[:ob].decode().split("\n") if n else []
        tokens = body[ob : ob + tb].decode().split("\n") if m else []
        start = ob + tb + (-(ob + tb) % 8)
        cuts = np.frombuffer(body, dtype="<i8", count=m + 1, offset=start)
        title_rank = np.frombuffer(body, dtype="<i4", count=t, offset=start + 8 * (m + 1))
        ranks = np.frombuffer(body, dtype="<i4", offset=start + 8 * (m + 1) + 4 * t)
        if len(order) != n or len(tokens) != m or int(cuts[-1]) != len(ranks):
            raise ValueError("the person index's sizes do not match its header")
        return cls(order, tokens, cuts, ranks, title_rank.tolist())


def credit_counts(titles: Iterable[Any]) -> dict[str, int]:
    """Each person key's number of credits over all roles, counted as :func:`~agentenv.corpora.media.build_people` lists them."""
    counts: dict[str, int] = {}
    get = counts.get
    for t in titles:
        for credited in (t.directors, t.writers, t.cast):
            for name in credited:
                key = normalize_key(name)
                counts[key] = get(key, 0) + 1
    return counts


@lru_cache(maxsize=4)
def person_index(catalog: Catalog) -> PersonIndex:
    """The :class:`PersonIndex` of a catalog, one per process; read from disk for large catalogs."""
    people = catalog.people
    if len(people) < DISK_MIN_PEOPLE:
        return PersonIndex.build(_credits(catalog), catalog.titles)
    from agentenv.checksummed_cache import pack_bytes, unpack_bytes
    from agentenv.corpora.media_files import write_atomic
    from agentenv.paths import cache_dir

    path = cache_dir("media", catalog.checksum[:16]) / f"person-index-v{FORMAT}.bin"
    header = {
        "format": FORMAT,
        "catalog_sha256": catalog.checksum,
        "people": len(people),
        "titles": len(catalog.titles),
    }
    found = unpack_bytes(path, header)
    if found is not None:
        try:
            return PersonIndex.decode(*found)
        except (KeyError, TypeError, ValueError, UnicodeDecodeError):
            log.warning("cache file %s holds no person index of this version; rebuilding it", path)
    index = PersonIndex.build(_credits(catalog), catalog.titles)
    sizes, body = index.encode()
    write_atomic(path, pack_bytes({**header, **sizes}, body))
    return index


def _credits(catalog: Catalog) -> dict[str, int]:
    counts = credit_counts(catalog.titles)
    people = catalog.people
    if len(counts) != len(people) or any(k not in people for k in counts):
        raise RuntimeError("the catalog's people do not match its credits; rebuild the catalog")
    return counts


__all__ = ["PersonIndex", "credit_counts", "person_index"]
