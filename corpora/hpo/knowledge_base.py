"""The rare-disease knowledge base: HPO terms, disease annotations and information content.

Why a knowledge base object: the sampler, the ranker, the phenopacket importer
and the env tools all need the same facts (term labels and ancestors, which
disease has which phenotype how often, how informative a term is), and they
need them fast. :func:`load_hpo_kb` parses ``hp.obo`` and ``phenotype.hpoa``
once (about 4 s), stores compact arrays under
``cache_dir("hpo", <checksum of both files>)`` and later loads them in well
under half a second. Nothing is built at import time.

Decisions (each a documented choice, not an accident):

* **Universe.** ``"omim"`` (default): OMIM diseases with at least one positive
  phenotype (aspect ``P``) annotation -- 8,351 of the 8,359 OMIM entries in HPO
  2025-01-16 (7 have no phenotype rows, 1 only a frequency-0 one). OMIM and
  Orphanet describe many of the same diseases, so mixing them would let
  duplicates fill top-3 slots. ``"omim+orpha"`` adds Orphanet.
* **Merged annotations.** A disease may list one term on several rows (one
  per source). Rows are merged per (disease, term): ``n/m`` counts are pooled
  (sum n / sum m; a percentage counts as n/100), else the most frequent class
  given wins. A merged positive annotation whose frequency is 0 (``0/n`` or
  ``HP:0040285``) means "looked for and absent": it is kept with the
  ``NOT`` annotations as an *excluded* feature, never as a phenotype.
* **Information content.** ``IC(t) = -log(n_t / N)``, where ``n_t`` counts the
  universe diseases annotated with ``t`` or a descendant of ``t`` and ``N`` is
  the universe size (Resnik 1995; as used by the Phenomizer, Köhler et al.
  2009). Terms no disease reaches get ``log(N)``, the IC of a single disease, so
  IC never decreases from parent to child.
* **Disease names.** ``phenotype.hpoa`` has only names; the most frequent name
  of a disease is its name, the others (and any ';'-separated alternative
  parts of an OMIM title) are its synonyms.

Example:
    >>> normalize_term_id(" hp_0001250 ")
    'HP:0001250'
    >>> split_disease_name("Bardet-Biedl syndrome 1; BBS1")
    ['Bardet-Biedl syndrome 1', 'BBS1']
"""

from __future__ import annotations

import math
import shutil
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from pathlib import Path
from typing import get_args

import numpy as np

from agentenv.corpora.hpo.build import (
    UNIVERSE_PREFIXES,
    Universe,
    merge_phenotypes,
    resolve_id,
)
from agentenv.corpora.hpo.build import split_disease_name as split_disease_name
from agentenv.corpora.hpo.cache import CACHE_FORMAT as CACHE_FORMAT
from agentenv.corpora.hpo.cache import (
    cache_is_valid,
    kb_cache_path,
    read_cache,
    write_cache,
)
from agentenv.corpora.hpo.files import HPO_CITATION, HpoFiles, hpo_files
from agentenv.corpora.hpo.hpoa import FrequencyClass
from agentenv.corpora.hpo.obo import Synonym, TermGraph

# The build and the cache live in hpo_build / hpo_cache; their names stay importable here.
_merge_phenotypes = merge_phenotypes
_cache_is_valid = cache_is_valid

ROOT = "HP:0000001"
"""The HPO root term ('All')."""
PHENOTYPIC_ABNORMALITY = "HP:0000118"
"""Root of the phenotype sub-ontology; its children are the organ-system roots."""


def normalize_term_id(text: str) -> str:
    """Canonical spelling of an HPO id: trims, upper-cases the prefix, ``HP_`` -> ``HP:``."""
    tid = text.strip()
    if tid[:3].upper() in ("HP:", "HP_"):
        tid = "HP:" + tid[3:]
    return tid


@dataclass(frozen=True)
class TermInfo:
    """What the KB knows about one HPO term (built on request, for tools and text)."""

    id: str
    name: str
    definition: str
    synonyms: tuple[Synonym, ...]
    parents: tuple[str, ...]
    alt_ids: tuple[str, ...]
    is_obsolete: bool
    replaced_by: tuple[str, ...]
    information_content: float
    n_diseases: int
    """Universe diseases annotated with this term or a descendant."""


@dataclass(frozen=True)
class Annotation:
    """A merged phenotype annotation of one disease.

    ``frequency_value`` is the pooled fraction where the sources give numbers,
    else None (the class alone is known).
    """

    term_id: str
    frequency_class: FrequencyClass
    frequency_value: float | None


@dataclass(frozen=True)
class DiseaseInfo:
    """One disease: names, phenotypes, explicitly absent features, inheritance and onset terms."""

    id: str
    name: str
    synonyms: tuple[str, ...]
    phenotypes: tuple[Annotation, ...]
    excluded: tuple[str, ...]
    """Terms annotated ``NOT`` or with frequency 0: looked for and absent."""
    inheritance: tuple[str, ...]
    """Mode-of-inheritance terms (aspect ``I``)."""
    clinical_course: tuple[str, ...]
    """Onset and clinical-course terms (aspect ``C``)."""


@dataclass(frozen=True, eq=False)
class HpoKnowledgeBase:
    """Terms, diseases, annotations and IC for one universe; read-only after load.

    Integer layouts (for vectorised users such as the ranker and the sampler):

    * terms are indexed as in ``graph.ids`` (every term in hp.obo, obsolete ones included);
    * universe diseases are indexed as in ``disease_ids`` (sorted); ``disease_rows[d]`` is
      the row of universe disease ``d`` among all diseases of phenotype.hpoa;
    * ``pheno_indptr[d]:pheno_indptr[d+1]`` slices ``pheno_terms`` / ``pheno_class`` /
      ``pheno_value`` (NaN = no number) to give disease ``d``'s positive phenotypes;
    * ``closure_indptr`` / ``closure_indices``: per disease, the sorted term indices of
      all ancestors (reflexive) of its phenotypes -- the set the Phenomizer matches against;
    * ``ic[t]`` and ``n_diseases[t]`` per term index.
    """

    universe: str
    release: str
    checksum: str
    files: HpoFiles = field(repr=False)
    graph: TermGraph = field(repr=False)
    term_names: tuple[str, ...] = field(repr=False)
    _terms: dict = field(repr=False)
    _diseases: dict = field(repr=False)
    _ann: dict[str, np.ndarray] = field(repr=False)
    disease_ids: tuple[str, ...] = field(repr=False)
    disease_rows: np.ndarray = field(repr=False)
    disease_index: dict[str, int] = field(repr=False)
    pheno_indptr: np.ndarray = field(repr=False)
    pheno_terms: np.ndarray = field(repr=False)
    pheno_class: np.ndarray = field(repr=False)
    pheno_value: np.ndarray = field(repr=False)
    closure_indptr: np.ndarray = field(repr=False)
    closure_indices: np.ndarray = field(repr=False)
    n_diseases: np.ndarray = field(repr=False)
    ic: np.ndarray = field(repr=False)

    citation: str = HPO_CITATION

    # ----- terms -------------------------------------------------------------------------

    @property
    def n_terms(self) -> int:
        """Number of terms in hp.obo, obsolete ones included."""
        return len(self.graph.ids)

    @cached_property
    def is_obsolete(self) -> np.ndarray:
        """Boolean mask over term indices."""
        mask = np.zeros(self.n_terms, dtype=bool)
        mask[self._terms["obsolete"]] = True
        return mask

    def term_index(self, hpo_id: str) -> int:
        """Index of a term id as written (no alt-id mapping); KeyError if unknown."""
        return self.graph.index[hpo_id]

    def resolve_term(self, hpo_id: str) -> str | None:
        """Map any HPO id to its current primary id, or None when there is none.

        A live primary id is itself. An id listed as an ``alt_id`` maps to the
        live term that lists it (the live term is the current curation);
        failing that, an obsolete id follows its first ``replaced_by`` (chains
        included). The two routes disagree for 2 ids in HPO 2025-01-16
        (HP:0007901, HP:0010905). Obsolete ids with only ``consider:``
        suggestions, and unknown ids, give None.
        """
        return resolve_id(
            normalize_term_id(hpo_id),
            self.graph.index,
            self.is_obsolete,
            self._terms["replaced_by"],
            self._terms["alt_ids"],
        )

    def term_name(self, hpo_id: str) -> str:
        """Label of a term (KeyError if the id is not a primary id)."""
        return self.term_names[self.graph.index[hpo_id]]

    def term(self, hpo_id: str) -> TermInfo:
        """Everything known about one term id (primary ids, obsolete ones included)."""
        i = self.graph.index[hpo_id]
        t = self._terms
        return TermInfo(
            id=hpo_id,
            name=self.term_names[i],
            definition=t["definitions"][i],
            synonyms=tuple(Synonym(*s) for s in t["synonyms"][i]),
            parents=tuple(self.graph.ids[p] for p in self.graph.parents(i).tolist()),
            alt_ids=tuple(t["alt_ids_of"].get(hpo_id, ())),
            is_obsolete=bool(self.is_obsolete[i]),
            replaced_by=tuple(t["replaced_by"].get(hpo_id, ())),
            information_content=float(self.ic[i]),
            n_diseases=int(self.n_diseases[i]),
        )

    def synonyms(self, hpo_id: str) -> tuple[Synonym, ...]:
        """Synonyms of a term in file order (scope and type included)."""
        return tuple(Synonym(*s) for s in self._terms["synonyms"][self.graph.index[hpo_id]])

    def ancestors(self, hpo_id: str, include_self: bool = True) -> tuple[str, ...]:
        """Ancestor ids of a term (sorted by id)."""
        i = self.graph.index[hpo_id]
        return tuple(
            self.graph.ids[a] for a in self.graph.ancestors(i).tolist() if include_self or a != i
        )

    def descendants(self, hpo_id: str, include_self: bool = True) -> tuple[str, ...]:
        """Descendant ids of a term (sorted by id)."""
        i = self.graph.index[hpo_id]
        return tuple(
            self.graph.ids[d] for d in self.graph.descendants(i).tolist() if include_self or d != i
        )

    def parents(self, hpo_id: str) -> tuple[str, ...]:
        """Direct ``is_a`` parents."""
        return tuple(
            self.graph.ids[p] for p in self.graph.parents(self.graph.index[hpo_id]).tolist()
        )

    def children(self, hpo_id: str) -> tuple[str, ...]:
        """Direct ``is_a`` children."""
        return tuple(
            self.graph.ids[c] for c in self.graph.children(self.graph.index[hpo_id]).tolist()
        )

    def information_content(self, hpo_id: str) -> float:
        """IC of a term in this universe."""
        return float(self.ic[self.graph.index[hpo_id]])

    @cached_property
    def organ_system_roots(self) -> frozenset[str]:
        """Children of 'Phenotypic abnormality' (HP:0000118), e.g. 'Abnormality of the eye'."""
        return frozenset(self.children(PHENOTYPIC_ABNORMALITY))

    @cached_property
    def too_general(self) -> np.ndarray:
        """Mask of the terms too general to report as a finding: root, HP:0000118, organ-system roots."""
        mask = np.zeros(self.n_terms, dtype=bool)
        for tid in (ROOT, PHENOTYPIC_ABNORMALITY, *self.organ_system_roots):
            mask[self.graph.index[tid]] = True
        return mask

    @cached_property
    def phenotype_mask(self) -> np.ndarray:
        """Mask of live terms under 'Phenotypic abnormality' (HP:0000118), itself included."""
        # A term is a descendant exactly when the root is among its (reflexive) ancestors: one
        # vectorised pass over the ancestor CSR instead of a graph walk in Python.
        root = self.graph.index[PHENOTYPIC_ABNORMALITY]
        ptr = self.graph.ancestors_indptr
        term_of = np.repeat(np.arange(self.n_terms), np.diff(ptr))
        mask = np.zeros(self.n_terms, dtype=bool)
        mask[term_of[self.graph.ancestors_indices == root]] = True
        return mask & ~self.is_obsolete

    # ----- diseases ----------------------------------------------------------------------

    @property
    def n_universe(self) -> int:
        """Number of diseases in the universe."""
        return len(self.disease_ids)

    def in_universe(self, disease_id: str) -> bool:
        """True when the id is a disease of this universe."""
        return disease_id in self.disease_index

    def all_disease_ids(self) -> tuple[str, ...]:
        """Every disease in phenotype.hpoa (all databases, in or out of the universe)."""
        return tuple(self._diseases["ids"])

    def disease_name(self, disease_id: str) -> str:
        """Primary name of any disease in phenotype.hpoa (KeyError if unknown)."""
        return self._diseases["names"][self._all_disease_index[disease_id]]

    def disease_names(self, disease_id: str) -> tuple[str, ...]:
        """The primary name and then the synonyms of a disease: what an answer may call it (cheap,
        unlike :meth:`disease`, which also builds the annotations)."""
        k = self._all_disease_index[disease_id]
        return (self._diseases["names"][k], *self._diseases["synonyms"][k])

    def disease(self, disease_id: str) -> DiseaseInfo:
        """Everything known about a disease of phenotype.hpoa (in or out of the universe)."""
        k = self._all_disease_index[disease_id]
        a = self._ann
        lo, hi = a["pos_indptr"][k], a["pos_indptr"][k + 1]
        ids = self.graph.ids
        phenotypes = tuple(
            Annotation(
                ids[t],
                FrequencyClass(int(c)),
                None if math.isnan(v) else float(v),
            )
            for t, c, v in zip(
                a["pos_term"][lo:hi].tolist(),
                a["pos_class"][lo:hi].tolist(),
                a["pos_value"][lo:hi].tolist(),
                strict=True,
            )
        )

        def slice_of(name: str) -> tuple[str, ...]:
            s, e = a[f"{name}_indptr"][k], a[f"{name}_indptr"][k + 1]
            return tuple(ids[t] for t in a[f"{name}_term"][s:e].tolist())

        return DiseaseInfo(
            id=disease_id,
            name=self._diseases["names"][k],
            synonyms=tuple(self._diseases["synonyms"][k]),
            phenotypes=phenotypes,
            excluded=slice_of("neg"),
            inheritance=slice_of("inh"),
            clinical_course=slice_of("course"),
        )

    def phenotype_indices(self, d: int) -> np.ndarray:
        """Term indices of universe disease index ``d``'s positive phenotypes."""
        return self.pheno_terms[self.pheno_indptr[d] : self.pheno_indptr[d + 1]]

    def excluded_indices(self, d: int) -> np.ndarray:
        """Term indices annotated absent (``NOT`` or frequency 0) for universe disease index ``d``."""
        k = self.disease_rows[d]
        ptr = self._ann["neg_indptr"]
        return self._ann["neg_term"][ptr[k] : ptr[k + 1]]

    def closure(self, d: int) -> np.ndarray:
        """Sorted term indices of all ancestors (reflexive) of disease ``d``'s phenotypes."""
        return self.closure_indices[self.closure_indptr[d] : self.closure_indptr[d + 1]]

    @cached_property
    def _all_disease_index(self) -> dict[str, int]:
        return {did: k for k, did in enumerate(self._diseases["ids"])}


def load_hpo_kb(universe: Universe = "omim", *, rebuild: bool = False) -> HpoKnowledgeBase:
    """Load the knowledge base, building its cache on first use.

    The result is memoised per (universe, cache location), so every env in a
    process shares one read-only KB.

    Args:
        universe: ``"omim"`` (default) or ``"omim+orpha"``.
        rebuild: ignore and rewrite the cache (after a manual edit, say).

    Raises:
        ValueError: an unknown universe, with the accepted values.
    """
    if universe not in UNIVERSE_PREFIXES:
        raise ValueError(
            f"load_hpo_kb: universe must be one of {list(get_args(Universe))}, got {universe!r}"
        )
    files = hpo_files()
    path = kb_cache_path(files)
    if rebuild:
        shutil.rmtree(path, ignore_errors=True)
        _load_cached.cache_clear()
    return _load_cached(universe, str(path))


@lru_cache(maxsize=8)
def _load_cached(universe: str, path: str) -> HpoKnowledgeBase:
    from agentenv.storage.fork_sharing import share_heap_with_forks

    share_heap_with_forks()  # forked workers (async vector envs, eval workers) keep sharing the KB's objects
    files = hpo_files()
    target = Path(path)
    if not cache_is_valid(target, files):
        from agentenv.storage.progress import build_step

        with build_step(f"building the HPO {files.release} knowledge base"):
            write_cache(target, files)
    terms, diseases, graph, ann, uni = read_cache(target, universe)
    disease_ids = tuple(diseases["ids"][k] for k in uni["disease_rows"].tolist())
    return HpoKnowledgeBase(
        universe=universe,
        release=files.release,
        checksum=files.checksum,
        files=files,
        graph=graph,
        term_names=tuple(terms["names"]),
        _terms=terms,
        _diseases=diseases,
        _ann=ann,
        disease_ids=disease_ids,
        disease_index={did: i for i, did in enumerate(disease_ids)},
        **uni,
    )
