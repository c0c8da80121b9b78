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
from itertools import chain
from typing import Any

import numpy as np

from agentenv.corpora.media.catalog import Catalog, normalize_key

log = logging.getLogger(__name__)

FORMAT = 4
"""Bump when the on-disk layout changes; older files are then rebuilt."""
DISK_MIN_PEOPLE = 5_000
"""Catalogs with fewer people are indexed in memory only (a build takes well under a millisecond each 100)."""


class PersonIndex:
    """Token → ranks of the people whose key has that token as a whole word (read-only once built).

    Held as the flat arrays it is stored as, so reading it from disk is a few views rather than
    65k strings and a 43k-entry dict (33 ms inside the first ``find_person`` step of a process):
    the tokens as one sorted fixed-width byte array (a token is found by binary search), one
    array of ranks cut per token, and the people keys as one text cut by offsets, decoded for
    the few people a call shows.
    """

    def __init__(self, sizes: Mapping[str, Any], body: bytes) -> None:
        n, m, t, width = (int(sizes[k]) for k in ("people", "tokens", "titles", "token_bytes"))
        at = 0

        def take(dtype: str, count: int) -> Any:
            nonlocal at
            array = np.frombuffer(body, dtype=dtype, count=count, offset=at)
            at += array.nbytes
            return array

        self._cuts = take("<i8", m + 1)  # cut points into _ranks, per token
        self._key_cuts = take("<i8", n + 1)  # cut points into _keys, per rank
        self.title_rank: list[int] = take("<i4", t).tolist()
        """Each catalog position's place in (year, id) order: a person's films sort by it, oldest
        first, without building a tuple per film (a prolific actor's 200 films took 60 µs)."""
        self._ranks = take("<i4", int(self._cuts[-1]))
        self._tokens = take(f"S{width}", m) if width else np.zeros(0, dtype="S1")
        self._keys = bytes(body[at : at + int(self._key_cuts[-1])])
        if len(self._keys) != int(self._key_cuts[-1]) or len(self.title_rank) != t:
            raise ValueError("the person index's sizes do not match its header")
        self.sizes = dict(sizes)

    @classmethod
    def build(cls, credits: Mapping[str, int], titles: Sequence[Any] = ()) -> PersonIndex:
        """Index people keys, ranked by ``credits`` (their number of credits, all roles) then key;
        ``titles`` (the catalog's, with ``year`` and ``id``) gives :attr:`title_rank`."""
        return cls.decode(*cls.encode_from(credits, titles))

    @staticmethod
    def encode_from(
        credits: Mapping[str, int], titles: Sequence[Any] = ()
    ) -> tuple[dict[str, int], bytes]:
        """``(sizes, body)``: the stored form of the index of ``credits`` and ``titles`` (see :meth:`build`)."""
        # Most credits first, then by key (a stable sort keeps the keys' order among equal counts).
        order = sorted(sorted(credits), key=credits.__getitem__, reverse=True)
        # Column-wise: (token, rank) pairs grouped by token with a stable sort, so each token's ranks
        # stay ascending, then a repeated pair ("john john") dropped. UTF-8 bytes sort as code points do.
        words = [key.split() for key in order]
        flat = list(chain.from_iterable(words))
        text_tokens = sorted(set(flat))
        tokens = [token.encode() for token in text_tokens]
        width = max(map(len, tokens), default=0)
        if any(b"\0" in token for token in tokens):
            raise ValueError("a name token holds a NUL byte; the person index cannot hold it")
        token_of = dict(zip(text_tokens, range(len(text_tokens)), strict=True))
        pair_token = np.fromiter(map(token_of.__getitem__, flat), dtype=np.int64, count=len(flat))
        pair_rank = np.repeat(np.arange(len(order), dtype="<i4"), [len(w) for w in words])
        by_token = np.argsort(pair_token, kind="stable")
        pair_token, ranks = pair_token[by_token], pair_rank[by_token]
        first = np.ones(len(ranks), dtype=bool)
        first[1:] = (pair_token[1:] != pair_token[:-1]) | (ranks[1:] != ranks[:-1])
        pair_token, ranks = pair_token[first], ranks[first]
        cuts = np.zeros(len(tokens) + 1, dtype="<i8")
        np.cumsum(np.bincount(pair_token, minlength=len(tokens)), out=cuts[1:])
        keys = [k.encode() for k in order]
        key_cuts = np.concatenate([[0], np.cumsum(list(map(len, keys)), dtype=np.int64)])
        by_date = sorted(range(len(titles)), key=lambda i: (titles[i].year, titles[i].id))
        title_rank = np.zeros(len(titles), dtype="<i4")
        title_rank[by_date] = np.arange(len(titles), dtype="<i4")
        sizes = {
            "people": len(order),
            "tokens": len(tokens),
            "titles": len(titles),
            "token_bytes": width,
        }
        body = b"".join(
            [
                cuts.tobytes(),
                key_cuts.astype("<i8").tobytes(),
                title_rank.tobytes(),
                ranks.tobytes(),
                np.asarray(tokens, dtype=f"S{width}").tobytes() if width else b"",
                b"".join(keys),
            ]
        )
        return sizes, body

    @classmethod
    def decode(cls, sizes: Mapping[str, Any], body: bytes) -> PersonIndex:
        """The index :meth:`encode_from` wrote (``ValueError`` when ``body`` does not hold it)."""
        return cls(sizes, body)

    def key(self, rank: int) -> str:
        """The key of the person of this rank."""
        cuts = self._key_cuts
        return self._keys[int(cuts[rank]) : int(cuts[rank + 1])].decode()

    @property
    def order(self) -> list[str]:
        """Every key in rank order (most credits first, then by key); decoded on each call."""
        return [self.key(r) for r in range(len(self._key_cuts) - 1)]

    def postings(self, key: str) -> int:
        """How many entries :meth:`matching` walks for this (normalised) key: its shortest token list
        (each other token costs a binary search per entry still found)."""
        sizes = [len(self._list(t)) for t in set(key.split())]
        return min(sizes) if sizes else 0

    def matching(self, key: str, limit: int = 8) -> tuple[int, list[str]]:
        """``(total, first keys)`` of the people whose key holds every token of ``key``, in rank order."""
        tokens = set(key.split())
        if not tokens:
            return 0, []
        lists = sorted((self._list(t) for t in tokens), key=len)
        found = lists[0]
        for other in lists[1:]:  # binary searches of the few found so far: no pass over `other`
            if not len(found):
                break
            at = np.searchsorted(other, found)
            found = found[other[np.minimum(at, len(other) - 1)] == found]
        if not len(found):
            return 0, []
        return len(found), [self.key(r) for r in found[:limit].tolist()]

    def _list(self, token: str) -> Any:
        """The ranks of ``token`` (empty when no name has it)."""
        raw, tokens = token.encode(), self._tokens
        slot = int(np.searchsorted(tokens, raw))
        if slot >= len(tokens) or tokens[slot] != raw:
            return self._ranks[:0]
        return self._ranks[self._cuts[slot] : self._cuts[slot + 1]]

    def encode(self) -> tuple[dict[str, int], bytes]:
        """``(sizes, body)``: the stored form (:meth:`decode` reads it back)."""
        width = self.sizes["token_bytes"]
        body = b"".join(
            [
                self._cuts.tobytes(),
                self._key_cuts.tobytes(),
                np.asarray(self.title_rank, dtype="<i4").tobytes(),
                self._ranks.tobytes(),
                self._tokens.tobytes() if width else b"",
                self._keys,
            ]
        )
        return dict(self.sizes), body


def credit_counts(titles: Iterable[Any]) -> dict[str, int]:
    """Each person key's number of credits over all roles, counted as :func:`~agentenv.corpora.media.catalog.build_people` lists them."""
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
    from agentenv.corpora.media.files import paused_gc, write_atomic
    from agentenv.storage.checksummed_cache import pack_bytes, unpack_bytes
    from agentenv.storage.paths import cache_dir

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
    with (
        paused_gc()
    ):  # ~10^5 small lists, none cyclic (collection passes were a quarter of the build)
        sizes, body = PersonIndex.encode_from(_credits(catalog), catalog.titles)
    write_atomic(path, pack_bytes({**header, **sizes}, body))
    return PersonIndex.decode(sizes, body)


def _credits(catalog: Catalog) -> dict[str, int]:
    """Each person's number of credits, all roles: :func:`credit_counts`, read from the catalog's people.

    A person's films per role hold one entry per credit (two spellings of one key in one film count
    twice, as in :func:`credit_counts`), and the people are in the order the credits first name them;
    a packed table gives the counts without making a Person each (a tenth of a cold first run's
    ``find_person`` step went to counting every credit again). ``tests`` compare both ways.
    """
    people = catalog.people
    packed = getattr(people, "credit_totals", None)
    if packed is not None:
        return packed()
    return {key: len(p.directed) + len(p.wrote) + len(p.acted) for key, p in people.items()}


__all__ = ["PersonIndex", "credit_counts", "person_index"]
