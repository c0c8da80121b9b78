"""The checksummed on-disk cache of the HPO knowledge base tables.

One directory per pair of source files, ``cache_dir("hpo", <checksum>)``: the
tables of :mod:`agentenv.corpora.hpo.build` as JSON and npz files, plus a
manifest with the sha256 of each, written last. A cache whose format, source
checksum or file hashes do not match is rebuilt, with a warning that names it
(the package's one checksummed-cache mechanism, :mod:`agentenv.storage.checksummed_cache`).
The temporary directory of a build that was killed is removed by the next
build (see :func:`agentenv.storage.paths.make_temp_dir`).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from agentenv.corpora.hpo.build import UNIVERSE_PREFIXES, build_tables, universe_arrays
from agentenv.corpora.hpo.files import HpoFiles, hpo_files
from agentenv.corpora.hpo.obo import TermGraph
from agentenv.storage.checksummed_cache import ChecksummedDir
from agentenv.storage.paths import cache_dir

CACHE_FORMAT = 3
"""Bump when the cache layout changes; old caches are then rebuilt."""

_CACHE_FILES = (
    "terms.json",
    "graph.npz",
    "diseases.json",
    "annotations.npz",
    *(f"universe-{name}.npz" for name in UNIVERSE_PREFIXES),
)


_LEGACY_TEMPS = (".*.*",)
"""Temporaries of versions before owned names (``.<checksum>.*``): swept once stale."""

ENTRY = ChecksummedDir("manifest.json", files=_CACHE_FILES, legacy=_LEGACY_TEMPS, what="HPO cache")
"""The layout of a cache directory: the shared checksummed-cache mechanism, with HPO's file list."""


def _header(files: HpoFiles) -> dict[str, object]:
    """The manifest fields a cache must match to be used: its format and its source files."""
    return {"format": CACHE_FORMAT, "source_checksum": files.checksum}


def write_cache(target: Path, files: HpoFiles) -> None:
    """Build and write the cache directory atomically (temp dir, manifest last, rename)."""
    ENTRY.check(
        target, _header(files)
    )  # warns, with the reason, when a cache is there but unusable
    terms, graph_arrays, diseases, ann = build_tables(files)

    def save(tmp: Path) -> None:
        # json.dumps, not json.dump: dump streams through the pure-Python encoder (~5x slower); same text.
        (tmp / "terms.json").write_text(
            json.dumps(terms, ensure_ascii=False, separators=(",", ":")), encoding="utf-8"
        )
        (tmp / "diseases.json").write_text(
            json.dumps(diseases, ensure_ascii=False, separators=(",", ":")), encoding="utf-8"
        )
        np.savez(tmp / "graph.npz", **graph_arrays)
        np.savez(tmp / "annotations.npz", **ann)
        graph = TermGraph.from_arrays(terms["ids"], graph_arrays)
        for name in UNIVERSE_PREFIXES:
            np.savez(tmp / f"universe-{name}.npz", **universe_arrays(name, graph, diseases, ann))

    extra = {
        "obo_sha256": files.obo_sha256,
        "hpoa_sha256": files.hpoa_sha256,
        "release": files.release,
    }
    ENTRY.publish(target, _header(files), save, extra)


def cache_is_valid(target: Path, files: HpoFiles) -> bool:
    """True when ``target`` holds a complete cache of these files in the current format."""
    return invalid_reason(target, files) is None


def invalid_reason(target: Path, files: HpoFiles) -> str | None:
    """Why ``target`` is not a usable cache of these files (``None`` when it is).

    Why a reason and not a bool: the rebuild warning should say what was wrong.
    """
    return ENTRY.problem(target, _header(files))


def kb_cache_path(files: HpoFiles | None = None) -> Path:
    """The cache directory of the KB built from these files (not created)."""
    files = files or hpo_files()
    return cache_dir("hpo") / files.checksum[:32]


def read_only_npz(path: Path) -> dict[str, np.ndarray]:
    """Load every array of an npz and make it read-only: one KB is shared by every env."""
    with np.load(path) as npz:
        arrays = {k: npz[k] for k in npz.files}
    for array in arrays.values():
        array.flags.writeable = False
    return arrays


def read_cache(
    target: Path, universe: str
) -> tuple[dict, dict, TermGraph, dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Read a valid cache: (terms json, diseases json, graph, annotation arrays, universe arrays)."""
    terms = json.loads((target / "terms.json").read_text(encoding="utf-8"))
    diseases = json.loads((target / "diseases.json").read_text(encoding="utf-8"))
    graph = TermGraph.from_arrays(terms["ids"], read_only_npz(target / "graph.npz"))
    ann = read_only_npz(target / "annotations.npz")
    uni = read_only_npz(target / f"universe-{universe}.npz")
    return terms, diseases, graph, ann, uni
