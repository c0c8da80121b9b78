"""Build each index once per corpus and parameters; reuse it from disk after that.

Indexes live under ``cache_dir("indexes")`` (``$AGENTENV_HOME/indexes``), one
directory per key. The key hashes everything that could change the index:
the corpus checksum, the back-end kind, its parameters (a tokenizer or
encoder counts through its ``fingerprint()``) and this module's format
version.

Never trust a cache entry: a directory whose manifest is missing, whose
files do not match their sha256, or that fails to load is rebuilt (the
package's one checksummed-cache mechanism, :mod:`agentenv.storage.checksummed_cache`,
with the layout :data:`agentenv.retrieval.storage.ENTRY`). New entries are written into a temporary sibling directory and renamed into
place, so a crash or a concurrent writer never leaves a half-written index
under the final name; the temporary of a build that was killed is removed by
the next build (see :func:`agentenv.storage.paths.make_temp_dir`).

Example:
    >>> import tempfile
    >>> from agentenv.storage.paths import home_at
    >>> from agentenv.retrieval.bm25 import BM25Retriever
    >>> build = lambda: BM25Retriever.from_texts(["red apple", "blue sky", "green pear"])
    >>> with home_at(tempfile.mkdtemp()):
    ...     a = cached_index("bm25", "corpus-v1", {"k1": 1.5}, build)
    ...     b = cached_index("bm25", "corpus-v1", {"k1": 1.5}, lambda: 1 / 0)  # served from disk
    >>> b.search("apple", 1) == a.search("apple", 1)
    True
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable, Hashable
from pathlib import Path
from typing import Any, TypeVar

from agentenv.retrieval.storage import ENTRY, load_backend
from agentenv.storage.fork_sharing import share_heap_with_forks
from agentenv.storage.paths import agentenv_home, cache_dir

__all__ = ["cache_key", "cached_index", "index_dir", "loaded_for"]

log = logging.getLogger(__name__)
B = TypeVar("B")
_FORMAT = 1


def _canonical(value: Any) -> Any:
    """JSON-able stand-in for a parameter value; objects count by their fingerprint."""
    if hasattr(value, "fingerprint"):
        return {"fingerprint": value.fingerprint()}
    if isinstance(value, dict):
        return {str(k): _canonical(v) for k, v in sorted(value.items())}
    if isinstance(value, (list, tuple)):
        return [_canonical(v) for v in value]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    raise TypeError(f"cannot key an index cache on {type(value).__name__}: give it a fingerprint()")


def cache_key(kind: str, corpus_checksum: str, params: dict[str, Any]) -> str:
    """sha256 over (format, kind, corpus checksum, canonical params).

    Example:
        >>> cache_key("bm25", "abc", {"k1": 1.5}) == cache_key("bm25", "abc", {"k1": 1.5})
        True
        >>> cache_key("bm25", "abc", {"k1": 1.5}) == cache_key("bm25", "abc", {"k1": 1.2})
        False
    """
    blob = json.dumps(
        {"format": _FORMAT, "kind": kind, "corpus": corpus_checksum, "params": _canonical(params)},
        sort_keys=True,
    )
    return hashlib.sha256(blob.encode()).hexdigest()


def index_dir(kind: str, corpus_checksum: str, params: dict[str, Any]) -> Path:
    """Where the index for this key lives (it may not exist yet)."""
    return cache_dir("indexes") / f"{kind}-{cache_key(kind, corpus_checksum, params)[:24]}"


_IN_PROCESS: dict[str, Any] = {}
"""Indexes loaded in this process, by cache entry path (so by home and key): every env of a process shares one read-only index
(searches keep their scratch rows in a pool that each call pops from, so threads may share it too).
Sixteen MediaSearch envs held 555 MB when each loaded its own copy. Forked processes share it too: the
collector leaves the parent's objects alone in them (:mod:`agentenv.storage.fork_sharing`)."""


_BY_CALLER: dict[tuple[Hashable, ...], Any] = {}
"""What :func:`loaded_for` returned, by home and caller's key."""


def forget_loaded() -> None:
    """Drop this process's shared indexes, as a new process would start (the disk entries stay)."""
    _IN_PROCESS.clear()
    _BY_CALLER.clear()


def loaded_for(key: tuple[Hashable, ...], load: Callable[[], B]) -> B:
    """``load()`` once per process, home and ``key``, for as long as the index it returned stays loaded here.

    Why: finding the cache entry of a corpus hashes the corpus's ids (17,472 for the film catalog) on every
    call, which in a forked worker (an async vector env's) also writes to every shared title object's
    page: 11 MB of private memory per worker. A caller that knows what identifies its corpus (a checksum)
    asks here first. What ``load`` returns is kept only while it is one of this process's loaded indexes
    (so :func:`forget_loaded` forgets it too); anything else (a server's client) is loaded each time.
    """
    full = (str(agentenv_home()), *key)
    known = _BY_CALLER.get(full)
    if known is not None and any(known is index for index in _IN_PROCESS.values()):
        return known  # type: ignore[no-any-return]
    loaded = load()
    _BY_CALLER[full] = loaded
    return loaded


def cached_index(
    kind: str, corpus_checksum: str, params: dict[str, Any], build: Callable[[], B]
) -> B:
    """Load the cached index for this key, or ``build()`` it, save it atomically and return it.

    ``kind`` names the on-disk format (see :data:`agentenv.retrieval.storage.BACKENDS`);
    ``build`` must return an object with ``save(path)``. A verified entry
    that fails to load is still just a cache miss: it is rebuilt.
    """
    key = cache_key(kind, corpus_checksum, params)
    final = index_dir(kind, corpus_checksum, params)
    shared = _IN_PROCESS.get(str(final))
    if shared is not None:
        return shared  # type: ignore[no-any-return]
    share_heap_with_forks()  # forked workers (async vector envs, eval workers) keep sharing what loads here
    if ENTRY.check(final, {"key": key}):
        try:
            backend = load_backend(kind, final / "index")
            _IN_PROCESS[str(final)] = backend
            return backend  # type: ignore[no-any-return]
        except Exception as err:
            log.warning("index cache entry %s failed to load (%s); rebuilding it", final, err)
    backend = build()
    ENTRY.publish(
        final,
        {"key": key},
        lambda tmp: backend.save(tmp / "index"),  # type: ignore[attr-defined]
        extra={"kind": kind, "corpus": corpus_checksum},
    )
    _IN_PROCESS[str(final)] = backend
    return backend
