"""Deterministic train / validation / test splits of the rare-disease task, by disease.

Why by disease: a policy trained on patients of a disease must not be tested
on other patients of the same disease, or the test measures memorisation of
disease profiles rather than diagnosis. Each disease goes to one split by a
stable hash of its id (sha256 with a fixed salt, never Python's salted
``hash()``), 80/10/10. The assignment depends on the id alone, so a disease
keeps its split across universes and HPO releases; only new diseases are new.

A *case* is ``(disease_id, patient_seed)``; with a :class:`PatientSampler` it
gives one patient, bit for bit. Test and validation have one case per
disease, train has :data:`CASES_PER_DISEASE` ``["train"]`` per disease. The
published sizes and case-list checksums (:data:`PUBLISHED`) are asserted by the
tests, so any change to a split is deliberate.

Example:
    >>> split_of("OMIM:154700")
    'train'
    >>> case_seed("OMIM:154700", 0)
    4327994014147624178
    >>> cases_checksum([Case("OMIM:154700", 1)])[:12]
    '0c602674a562'
"""

from __future__ import annotations

import hashlib
import weakref
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal, NamedTuple, get_args, overload

from agentenv.corpora.hpo.knowledge_base import HpoKnowledgeBase

SplitName = Literal["train", "validation", "test"]
SPLITS: tuple[SplitName, ...] = get_args(SplitName)
SPLIT_SALT = "agentenv/rare-disease/split/v1"
"""Changing the salt reshuffles every split: don't, or bump the env version."""
SPLIT_FRACTIONS = {"train": 0.8, "validation": 0.1, "test": 0.1}
CASES_PER_DISEASE: dict[str, int] = {"train": 5, "validation": 1, "test": 1}
"""Default number of cases (patient seeds) per disease in each split."""


class Case(NamedTuple):
    """One task instance: a disease and the seed of its simulated patient."""

    disease_id: str
    seed: int


@dataclass(frozen=True)
class SplitInfo:
    """Size and fingerprint of one split's case list."""

    name: str
    n_diseases: int
    n_cases: int
    checksum: str


PUBLISHED: dict[tuple[str, str], dict[str, SplitInfo]] = {
    ("2025-01-16", "omim"): {
        "train": SplitInfo(
            "train", 6569, 32845, "c142c8900415ad43f492cb266d746e428c270141bb8315cc83b4001b4a0f1265"
        ),
        "validation": SplitInfo(
            "validation",
            815,
            815,
            "b72a047ffa8a75013eaf6cb159e7f0ccb0d4076fbcd48638fe6467ed5fb8bba8",
        ),
        "test": SplitInfo(
            "test", 786, 786, "3d98247f00806edcba4332815e18f0ee5bfed16ed041a8d95222102ee5343f81"
        ),
    },
}
"""(HPO release, universe) -> the published split figures, with the default cases per disease."""


def _hash_int(text: str) -> int:
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")


def split_of(disease_id: str) -> SplitName:
    """The split a disease belongs to (depends on the id only)."""
    u = _hash_int(f"{SPLIT_SALT}:{disease_id}") / 2.0**64
    if u < SPLIT_FRACTIONS["train"]:
        return "train"
    if u < SPLIT_FRACTIONS["train"] + SPLIT_FRACTIONS["validation"]:
        return "validation"
    return "test"


def case_seed(disease_id: str, k: int) -> int:
    """The seed of the k-th case of a disease: a stable 63-bit integer."""
    return _hash_int(f"{SPLIT_SALT}:case:{disease_id}:{k}") & (2**63 - 1)


def _check_split(split: str) -> None:
    if split not in SPLITS:
        raise ValueError(f"split must be one of {list(SPLITS)}, got {split!r}")


def split_diseases(kb: HpoKnowledgeBase, split: SplitName) -> tuple[str, ...]:
    """The universe diseases of one split, in id order."""
    _check_split(split)
    return _split_diseases(kb, split)


_SPLIT_DISEASES: weakref.WeakKeyDictionary[HpoKnowledgeBase, dict[str, tuple[str, ...]]] = (
    weakref.WeakKeyDictionary()
)
"""Per KB (one is shared read-only by every env of a process), each split's diseases; dropped with the KB."""


def _split_diseases(kb: HpoKnowledgeBase, split: SplitName) -> tuple[str, ...]:
    known = _SPLIT_DISEASES.setdefault(kb, {})
    if split not in known:
        known[split] = tuple(d for d in kb.disease_ids if split_of(d) == split)
    return known[split]


def split_cases(
    kb: HpoKnowledgeBase, split: SplitName, cases_per_disease: int | None = None
) -> tuple[Case, ...]:
    """The case list of one split: for each disease (id order), its first n seeds.

    Args:
        kb: gives the universe.
        split: ``"train"``, ``"validation"`` or ``"test"``.
        cases_per_disease: default :data:`CASES_PER_DISEASE` ``[split]``.
    """
    return tuple(case_list(kb, split, cases_per_disease))


def case_list(
    kb: HpoKnowledgeBase, split: SplitName, cases_per_disease: int | None = None
) -> CaseList:
    """:func:`split_cases` as a sequence that computes each case's seed on access.

    Why: the train split has 33,590 cases and an env draws a few, so hashing
    every seed up front made up a quarter of a warm ``gym.make``.
    """
    _check_split(split)
    n = CASES_PER_DISEASE[split] if cases_per_disease is None else cases_per_disease
    if n < 1:
        raise ValueError(f"cases_per_disease must be >= 1, got {n}")
    return CaseList(_split_diseases(kb, split), n)


class IndexedCases(Sequence[Case]):
    """A read-only sequence of cases computed from their position: one indexing rule (slices, bounds,
    negative indices) for every case list; a list says only how it computes case ``i``."""

    def _case(self, i: int) -> Case:
        """Case ``i``, for ``0 <= i < len(self)``."""
        raise NotImplementedError

    @overload
    def __getitem__(self, index: int) -> Case: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[Case, ...]: ...
    def __getitem__(self, index: int | slice) -> Case | tuple[Case, ...]:
        if isinstance(index, slice):
            return tuple(self[i] for i in range(*index.indices(len(self))))
        size = len(self)
        if not -size <= index < size:
            raise IndexError(f"case index {index} out of range for {size} cases")
        return self._case(index % size)


class CaseList(IndexedCases):
    """The cases of ``diseases`` (in order), ``n`` seeds each: case ``i`` is seed ``i % n`` of disease ``i // n``."""

    def __init__(self, diseases: tuple[str, ...], n: int) -> None:
        self._diseases, self._n = diseases, n

    @property
    def cases_per_disease(self) -> int:
        """``n``: the seeds drawn per disease."""
        return self._n

    @property
    def mix(self) -> str:
        """The disease mix of this list (:mod:`~.disease_mix`): every disease alike."""
        return "uniform"

    def __len__(self) -> int:
        return len(self._diseases) * self._n

    def _case(self, i: int) -> Case:
        disease, k = divmod(i, self._n)
        disease_id = self._diseases[disease]
        return Case(disease_id, case_seed(disease_id, k))


def cases_checksum(cases: Iterable[Case]) -> str:
    """sha256 over the case list, one ``disease_id<TAB>seed`` line each, in order."""
    digest = hashlib.sha256()
    for case in cases:
        digest.update(f"{case.disease_id}\t{case.seed}\n".encode())
    return digest.hexdigest()


def split_summary(kb: HpoKnowledgeBase) -> dict[str, SplitInfo]:
    """Sizes and checksums of the three splits (default cases per disease)."""
    out = {}
    for split in SPLITS:
        cases = split_cases(kb, split)
        out[split] = SplitInfo(
            split, len({c.disease_id for c in cases}), len(cases), cases_checksum(cases)
        )
    return out
