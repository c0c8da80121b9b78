"""The reference phenotype ranker's arrays on disk, memory-mapped by every process that ranks.

Why: the ranker precomputes about 21 MB from the KB (hub similarity rows,
transposed annotations) in about 2 s. Every process used to compute its own
copy, so each worker of an async vector env of a rare-disease id paid 2 s and
21 MB at its first reset. Now the first process of a home computes them once
and saves them; every process (the first included) loads them with
``np.load(mmap_mode="r")``: read-only file pages, which the kernel shares
between every process that maps them, however they were started (forked or
spawned).

One directory per key under ``cache_dir("rankers")``; the key holds this
module's format, the KB's source checksum and universe, and the hub
threshold. Entries are the package's checksummed directories
(:mod:`agentenv.storage.checksummed_cache`): verified before use, rebuilt when damaged,
published atomically. Where the home cannot be written, the arrays are
computed in memory, as before.
"""

from __future__ import annotations

import hashlib
import json
import logging
from pathlib import Path

import numpy as np

from agentenv.corpora.hpo.knowledge_base import HpoKnowledgeBase
from agentenv.envs.rare_disease.tools.ranker_precompute import ARRAY_NAMES, ranker_arrays
from agentenv.storage.checksummed_cache import ChecksummedDir
from agentenv.storage.fork_sharing import share_heap_with_forks
from agentenv.storage.paths import cache_dir

__all__ = ["cached_ranker_arrays", "ranker_cache_path"]

log = logging.getLogger(__name__)
FORMAT = 1
"""Bump when :func:`~agentenv.envs.rare_disease.tools.ranker_precompute.ranker_arrays` changes what it computes."""
ENTRY = ChecksummedDir(
    "manifest.json",
    files=tuple(f"{name}.npy" for name in ARRAY_NAMES),
    what="phenotype ranker cache",
)


def _header(kb: HpoKnowledgeBase, hub_min_diseases: int) -> dict[str, object]:
    return {
        "format": FORMAT,
        "kb_checksum": kb.checksum,
        "universe": kb.universe,
        "hub_min_diseases": int(hub_min_diseases),
    }


def ranker_cache_path(kb: HpoKnowledgeBase, hub_min_diseases: int) -> Path:
    """Where the arrays of this KB and threshold live (the directory may not exist yet)."""
    key = hashlib.sha256(
        json.dumps(_header(kb, hub_min_diseases), sort_keys=True).encode()
    ).hexdigest()
    return cache_dir("rankers") / f"phenomizer-{key[:24]}"


def _mapped(path: Path) -> dict[str, np.ndarray]:
    return {
        name: np.load(path / f"{name}.npy", mmap_mode="r", allow_pickle=False)
        for name in ARRAY_NAMES
    }


def cached_ranker_arrays(kb: HpoKnowledgeBase, hub_min_diseases: int) -> dict[str, np.ndarray]:
    """The ranker arrays of ``kb``, memory-mapped read-only from the cache (computed and saved on a miss)."""
    share_heap_with_forks()
    header = _header(kb, hub_min_diseases)
    try:
        path = ranker_cache_path(kb, hub_min_diseases)
    except OSError as err:  # an unwritable home: compute in memory, as every process did before
        log.warning("phenotype ranker arrays not cached (%s); computing them in memory", err)
        return ranker_arrays(kb, hub_min_diseases)
    if ENTRY.check(path, header):
        try:
            return _mapped(path)
        except (OSError, ValueError) as err:
            log.warning("phenotype ranker cache %s failed to load (%s); rebuilding it", path, err)
    arrays = ranker_arrays(kb, hub_min_diseases)

    def save(tmp: Path) -> None:
        for name in ARRAY_NAMES:
            np.save(tmp / f"{name}.npy", np.ascontiguousarray(arrays[name]), allow_pickle=False)

    try:
        ENTRY.publish(path, header, save, extra={"release": kb.release})
        return _mapped(path)
    except OSError as err:
        log.warning(
            "phenotype ranker arrays not cached at %s (%s); using them from memory", path, err
        )
        return arrays
