"""The rare-disease tools' lookup index, from a checksummed disk cache, so no step builds it.

Why: the phenotype index behind ``lookup_phenotype`` takes about 0.5 s to
build (0.8-1.4 s on a loaded machine). Built on the first call, that time
landed inside a step, under the tool's 5 s deadline, once in every process
(each vector-env worker, each Ray actor), so on a busy machine an episode's
outcome could depend on load. The tools now ask for it when the env is made
(:func:`~agentenv.envs.rare_disease.tools.diagnosis_tools.make_rare_disease_tools`), and it
comes from one cache file under ``$AGENTENV_HOME/phenotype-index`` in a
fraction of its build time, then from memory for every later env of the
process (:func:`phenotype_index`
is memoised per KB). The disease index behind ``search_diseases`` goes the
same way through the retrieval index cache
(:func:`~agentenv.envs.rare_disease.tools.documents.disease_retriever`).

The entry is keyed by the HPO files' checksum, the universe, the index
layout's version and the sha256 of the code that tokenises names (this
module's neighbours :mod:`.phenotype_lookup` and :mod:`.normalize`), so
changing how a name is tokenised can never serve a stale index. A stale or
damaged entry is rebuilt, with a warning (see :mod:`agentenv.storage.checksummed_cache`).

The body is an uncompressed ``.npz``: the integer lists as int32 arrays and
each list of strings as its UTF-8 text, one string a line.
"""

from __future__ import annotations

import gc
import hashlib
import io
import logging
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from agentenv.corpora.hpo.knowledge_base import HpoKnowledgeBase
from agentenv.envs.rare_disease.tools.phenotype_lookup import PhenotypeIndex
from agentenv.storage.checksummed_cache import pack_bytes, unpack_bytes
from agentenv.storage.paths import atomic_write_bytes, cache_dir

__all__ = ["CACHE_FORMAT", "cached_phenotype_index", "phenotype_index", "phenotype_index_path"]

log = logging.getLogger(__name__)

CACHE_FORMAT = 1
_TEXT_FIELDS = ("texts", "exact_keys", "words")
_ARRAY_FIELDS = ("exact_ptr", "exact_entries", "post_ptr", "post_entries")


@lru_cache(maxsize=1)
def code_checksum() -> str:
    """sha256 of the source files that decide what the index holds (its tokenisation and layout)."""
    here = Path(__file__).parent
    digest = hashlib.sha256()
    for name in ("phenotype_lookup.py", "normalize.py"):
        digest.update((here / name).read_bytes())
    return digest.hexdigest()


def phenotype_index_path(kb: HpoKnowledgeBase) -> Path:
    """The cache file of ``kb``'s phenotype index (it may not exist yet)."""
    return cache_dir("phenotype-index") / f"{kb.universe}.npz.pack"


def _header(kb: HpoKnowledgeBase) -> dict[str, Any]:
    return {
        "format": CACHE_FORMAT,
        "layout": PhenotypeIndex.STATE_VERSION,
        "code_sha256": code_checksum(),
        "hpo_sha256": kb.checksum,
        "universe": kb.universe,
    }


def encode_state(state: dict[str, Any]) -> bytes:
    """A :meth:`PhenotypeIndex.state` as ``.npz`` bytes (the strings must hold no newline)."""
    arrays: dict[str, np.ndarray] = {}
    for name, values in state.items():
        if name in _TEXT_FIELDS:
            if any("\n" in v for v in values):
                raise ValueError(
                    f"phenotype index field {name!r} holds a newline; it cannot be cached"
                )
            arrays[name] = np.frombuffer("\n".join(values).encode("utf-8"), dtype=np.uint8)
            arrays[f"{name}__count"] = np.array([len(values)], dtype=np.int64)
        else:
            arrays[name] = np.asarray(values, dtype=np.int32)
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)  # type: ignore[arg-type]  # numpy's stub types allow_pickle among the kwargs
    return buffer.getvalue()


def decode_state(blob: bytes) -> dict[str, Any]:
    """The inverse of :func:`encode_state`."""
    with np.load(io.BytesIO(blob), allow_pickle=False) as data:
        state: dict[str, Any] = {}
        for name in data.files:
            if name.endswith("__count"):
                continue
            if name in _TEXT_FIELDS:
                count = int(data[f"{name}__count"][0])
                state[name] = data[name].tobytes().decode("utf-8").split("\n") if count else []
            elif name in _ARRAY_FIELDS:
                state[name] = data[
                    name
                ]  # kept as an array (PhenotypeIndex holds these as int32 arrays)
            else:
                state[name] = data[name].tolist()
    return state


def cached_phenotype_index(kb: HpoKnowledgeBase) -> PhenotypeIndex:
    """``kb``'s phenotype index from its verified cache entry, else built, stored atomically and returned."""
    path, header = phenotype_index_path(kb), _header(kb)
    found = unpack_bytes(path, header)
    if found is not None:
        enabled = gc.isenabled()
        gc.disable()  # tens of thousands of small objects: collection passes would slow the load
        try:
            return PhenotypeIndex(kb, decode_state(found[1]))
        except (
            KeyError,
            ValueError,
            OSError,
        ) as err:  # verified but unreadable: a format bug, still only a miss
            log.warning("phenotype index cache %s failed to load (%s); rebuilding it", path, err)
        finally:
            if enabled:
                gc.enable()
    index = PhenotypeIndex.build(kb)
    atomic_write_bytes(path, pack_bytes(header, encode_state(index.state())))
    return index


@lru_cache(maxsize=4)
def phenotype_index(kb: HpoKnowledgeBase) -> PhenotypeIndex:
    """The index of a KB, from the disk cache (built and stored on a miss), shared by every env of the process.

    The rare-disease tools call it at ``make``, so the first ``lookup_phenotype`` step builds nothing.
    """
    return cached_phenotype_index(kb)
