"""Build the HPO knowledge base tables from ``hp.obo`` and ``phenotype.hpoa``.

The parse, the per-(disease, term) merge of annotations, the disease names, and
the universe-dependent arrays (closures, term counts, information content).
The decisions these functions implement are listed in :mod:`agentenv.corpora.hpo.knowledge_base`;
:mod:`agentenv.corpora.hpo.cache` stores their output.

Example:
    >>> split_disease_name("Bardet-Biedl syndrome 1; BBS1")
    ['Bardet-Biedl syndrome 1', 'BBS1']
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Sequence
from typing import Literal

import numpy as np

from agentenv.corpora.hpo.files import HpoFiles
from agentenv.corpora.hpo.hpoa import (
    Frequency,
    FrequencyClass,
    HpoaRecord,
    checked_rows,
    frequency_class_of,
)
from agentenv.corpora.hpo.obo import TermGraph, read_obo
from agentenv.corpora.hpo.omim_titles import is_clinical_omim

Universe = Literal["omim", "omim+orpha"]
UNIVERSE_PREFIXES: dict[str, tuple[str, ...]] = {
    "omim": ("OMIM",),
    "omim+orpha": ("OMIM", "ORPHA"),
}
"""Database prefixes admitted by each universe."""


def split_disease_name(name: str) -> list[str]:
    """Split an OMIM-style title into its ';'-separated names (empty parts dropped)."""
    return [part.strip() for part in name.split(";") if part.strip()]


def resolve_id(
    tid: str,
    index: dict[str, int],
    obsolete: np.ndarray,
    replaced_by: dict[str, list[str]],
    alt_ids: dict[str, str],
) -> str | None:
    """Follow ``alt_id`` and ``replaced_by`` links from ``tid`` to a live primary id, or None."""
    for _ in range(16):
        idx = index.get(tid)
        if idx is not None and not obsolete[idx]:
            return tid
        nxt = alt_ids.get(tid) or (replaced_by.get(tid) or [None])[0]
        if nxt is None:
            return None
        tid = nxt
    return None


def merge_phenotypes(
    rows: Sequence[HpoaRecord | Frequency],
) -> tuple[FrequencyClass, float | None]:
    """Pool one (disease, term)'s positive rows into one class and value (see :mod:`agentenv.corpora.hpo.knowledge_base`).

    Only the frequency fields of a row are read: an :class:`~agentenv.corpora.hpo.hpoa.HpoaRecord`
    or its :class:`~agentenv.corpora.hpo.hpoa.Frequency` will do.
    """
    n_sum = m_sum = 0.0
    numeric = False
    classes = []
    for r in rows:
        if r.frequency_value is not None:
            numeric = True
            if "/" in r.frequency_raw:
                n, m = r.frequency_raw.split("/")
                n_sum, m_sum = n_sum + int(n), m_sum + int(m)
            else:
                n_sum, m_sum = n_sum + 100.0 * r.frequency_value, m_sum + 100.0
        elif r.frequency_class != FrequencyClass.UNKNOWN:
            classes.append(r.frequency_class)
    if numeric:
        value = n_sum / m_sum
        return frequency_class_of(value), value
    if classes:
        return min(classes), None
    return FrequencyClass.UNKNOWN, None


def _disease_names(names: list[str]) -> tuple[str, list[str]]:
    counts = Counter(names)
    best = max(counts, key=lambda n: (counts[n], -names.index(n)))
    parts = split_disease_name(best) or [best]
    primary = parts[0]
    synonyms: list[str] = []
    for name in [best, *counts]:
        for part in split_disease_name(name) or [name]:
            if part != primary and part not in synonyms:
                synonyms.append(part)
    return primary, synonyms


def _csr_rows(rows: list[list[int]], dtype: type = np.int32) -> tuple[np.ndarray, np.ndarray]:
    indptr = np.zeros(len(rows) + 1, dtype=np.int64)
    indptr[1:] = np.cumsum([len(r) for r in rows])
    flat = np.fromiter((x for r in rows for x in r), dtype=dtype, count=int(indptr[-1]))
    return indptr, flat


def build_tables(
    files: HpoFiles,
) -> tuple[dict, dict[str, np.ndarray], dict, dict[str, np.ndarray]]:
    """Parse both files into the cache payload: (terms json, graph arrays, diseases json, annotation arrays)."""
    onto = read_obo(files.obo_path)
    graph = TermGraph.from_terms(onto.terms)
    alt_ids: dict[str, str] = {}
    alt_ids_of: dict[str, list[str]] = {}
    for t in onto.terms:
        if not t.is_obsolete:
            for alt in t.alt_ids:
                alt_ids[alt] = t.id
            if t.alt_ids:
                alt_ids_of[t.id] = list(t.alt_ids)
    terms = {
        "release": files.release,
        "ids": list(graph.ids),
        "names": [t.name for t in onto.terms],
        "definitions": [t.definition for t in onto.terms],
        "synonyms": [[list(s) for s in t.synonyms] for t in onto.terms],
        "obsolete": [i for i, t in enumerate(onto.terms) if t.is_obsolete],
        "alt_ids": alt_ids,
        "alt_ids_of": alt_ids_of,
        "replaced_by": {t.id: list(t.replaced_by) for t in onto.terms if t.replaced_by},
        "consider": {t.id: list(t.consider) for t in onto.terms if t.consider},
    }

    obsolete = np.zeros(len(graph.ids), dtype=bool)
    obsolete[terms["obsolete"]] = True
    canonical_of: dict[
        str, int | None
    ] = {}  # ~270k rows name ~12k distinct terms: resolve each once

    def canonical(tid: str) -> int | None:
        found = canonical_of.get(tid, -1)
        if found == -1:
            primary = resolve_id(tid, graph.index, obsolete, terms["replaced_by"], alt_ids)
            found = canonical_of[tid] = None if primary is None else graph.index[primary]
        return found

    names: dict[str, list[str]] = defaultdict(list)
    pos: dict[str, dict[int, list[Frequency]]] = defaultdict(dict)
    neg: dict[str, set[int]] = defaultdict(set)
    other: dict[tuple[str, str], list[int]] = defaultdict(list)
    hpoa_header: dict[str, str] = {}
    with open(files.hpoa_path, encoding="utf-8") as handle:
        for cells, negated, frequency in checked_rows(handle, files.hpoa_path.name, hpoa_header):
            database_id, aspect = cells[0], cells[10]
            names[database_id].append(cells[1])
            t = canonical(cells[3])
            if t is None:
                continue
            if aspect == "P":
                if negated:
                    neg[database_id].add(t)
                else:
                    pos[database_id].setdefault(t, []).append(frequency)
            elif not negated and t not in other[(database_id, aspect)]:
                other[(database_id, aspect)].append(t)

    disease_ids = sorted(names)
    dnames, dsyn = [], []
    pos_rows: list[list[int]] = []
    pos_class: list[int] = []
    pos_value: list[float] = []
    neg_rows, inh_rows, course_rows = [], [], []
    for did in disease_ids:
        primary, synonyms = _disease_names(names[did])
        dnames.append(primary)
        dsyn.append(synonyms)
        row, absent = [], set(neg[did])
        for t in sorted(pos[did]):
            cls, value = merge_phenotypes(pos[did][t])
            if cls == FrequencyClass.EXCLUDED:
                absent.add(t)
                continue
            row.append(t)
            pos_class.append(int(cls))
            pos_value.append(math.nan if value is None else value)
        pos_rows.append(row)
        neg_rows.append(sorted(absent - set(row)))
        inh_rows.append(other[(did, "I")])
        course_rows.append(other[(did, "C")])

    ann: dict[str, np.ndarray] = {}
    for name, rows in (
        ("pos", pos_rows),
        ("neg", neg_rows),
        ("inh", inh_rows),
        ("course", course_rows),
    ):
        ann[f"{name}_indptr"], ann[f"{name}_term"] = _csr_rows(rows)
    ann["pos_class"] = np.asarray(pos_class, dtype=np.int8)
    ann["pos_value"] = np.asarray(pos_value, dtype=np.float64)
    diseases = {"ids": disease_ids, "names": dnames, "synonyms": dsyn, "hpoa_header": hpoa_header}
    return terms, graph.to_arrays(), diseases, ann


def universe_arrays(
    universe: str, graph: TermGraph, diseases: dict, ann: dict[str, np.ndarray]
) -> dict[str, np.ndarray]:
    """Select the universe's diseases and compute their closures, term counts and IC.

    A universe disease has the universe's prefix, at least one positive phenotype,
    and is a diagnosable disease: OMIM susceptibility entries, QTLs and
    non-diseases are left out (:mod:`agentenv.corpora.hpo.omim_titles`).
    """
    prefixes = UNIVERSE_PREFIXES[universe]
    ptr = ann["pos_indptr"]
    keep = [
        k
        for k, (did, title) in enumerate(zip(diseases["ids"], diseases["names"], strict=True))
        if did.split(":", 1)[0] in prefixes and ptr[k + 1] > ptr[k] and is_clinical_omim(did, title)
    ]
    keep_arr = np.asarray(keep, dtype=np.int64)
    lengths = ptr[keep_arr + 1] - ptr[keep_arr]
    pheno_indptr = np.zeros(len(keep) + 1, dtype=np.int64)
    pheno_indptr[1:] = np.cumsum(lengths)
    take = (
        np.concatenate([np.arange(ptr[k], ptr[k + 1]) for k in keep]) if keep else np.zeros(0, int)
    )
    pheno_terms = ann["pos_term"][take]

    # Closure: for every (disease, phenotype) pair, the phenotype's ancestors; dedupe per disease.
    a_ptr, a_idx = graph.ancestors_indptr, graph.ancestors_indices
    n_anc = a_ptr[pheno_terms + 1] - a_ptr[pheno_terms]
    starts = np.repeat(a_ptr[pheno_terms] - np.concatenate([[0], np.cumsum(n_anc)[:-1]]), n_anc)
    anc = a_idx[np.arange(int(n_anc.sum())) + starts]
    disease_of_ann = np.repeat(np.arange(len(keep)), lengths)
    n_terms = len(graph.ids)
    keys = np.sort(np.repeat(disease_of_ann, n_anc).astype(np.int64) * n_terms + anc)
    keys = keys[np.concatenate([[True], keys[1:] != keys[:-1]])]
    closure_d, closure_t = np.divmod(keys, n_terms)
    closure_indptr = np.zeros(len(keep) + 1, dtype=np.int64)
    closure_indptr[1:] = np.cumsum(np.bincount(closure_d, minlength=len(keep)))
    n_diseases = np.bincount(closure_t, minlength=n_terms).astype(np.int32)
    total = max(len(keep), 1)
    ic = -np.log(np.maximum(n_diseases, 1) / total)
    return {
        "disease_rows": keep_arr,
        "pheno_indptr": pheno_indptr,
        "pheno_terms": pheno_terms,
        "pheno_class": ann["pos_class"][take],
        "pheno_value": ann["pos_value"][take],
        "closure_indptr": closure_indptr,
        "closure_indices": closure_t.astype(np.int32),
        "n_diseases": n_diseases,
        "ic": ic,
    }
