"""The HPO knowledge base: universe, merged annotations, IC, id mapping and the cache."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from agentenv.corpora.hpo.files import HPO_CITATION, hpo_files
from agentenv.corpora.hpo.hpoa import FrequencyClass, HpoaRecord, parse_frequency
from agentenv.corpora.hpo.knowledge_base import (
    PHENOTYPIC_ABNORMALITY,
    ROOT,
    HpoKnowledgeBase,
    _cache_is_valid,
    _merge_phenotypes,
    kb_cache_path,
    load_hpo_kb,
)

F = FrequencyClass


def test_identity(kb: HpoKnowledgeBase) -> None:
    assert kb.release == "2025-01-16"
    assert kb.checksum == hpo_files().checksum
    assert kb.citation == HPO_CITATION
    assert kb.universe == "omim"
    assert load_hpo_kb() is kb  # one shared read-only KB per process


def test_universe_sizes(kb: HpoKnowledgeBase) -> None:
    # 8,359 OMIM diseases in phenotype.hpoa; 8 have no positive phenotype annotation
    # (7 have no phenotype rows at all, OMIM:617596 only a 0/3 one), leaving 8,351; 181 of
    # those are susceptibility entries (176), QTLs (4) or non-diseases (5 in all with the
    # modifier loci; see omim_titles), leaving 8,170 diagnosable diseases.
    omim = [d for d in kb.all_disease_ids() if d.startswith("OMIM:")]
    assert len(omim) == 8_359
    assert kb.n_universe == 8_170
    assert not kb.in_universe("OMIM:618406")  # Body mass index quantitative trait locus 20
    assert not kb.in_universe("OMIM:612229")  # Colorectal cancer, susceptibility to, 3
    assert kb.disease("OMIM:618406").phenotypes  # still known to the KB, only not a diagnosis
    assert kb.in_universe("OMIM:154700")
    assert all(d.startswith("OMIM:") for d in kb.disease_ids)
    assert list(kb.disease_ids) == sorted(kb.disease_ids)
    assert not kb.in_universe("OMIM:609404")  # Preeclampsia/eclampsia 4: no phenotype rows
    assert not kb.in_universe("OMIM:617596")
    assert kb.disease("OMIM:617596").excluded  # its 0/3 phenotype is kept as an excluded feature
    assert not kb.in_universe("ORPHA:558")
    both = load_hpo_kb("omim+orpha")
    assert both.n_universe == 12_451  # the same 181 OMIM entries left out
    assert {d.split(":")[0] for d in both.disease_ids} == {"OMIM", "ORPHA"}
    with pytest.raises(ValueError, match="universe must be one of"):
        load_hpo_kb("orpha")  # type: ignore[arg-type]


def test_counts(kb: HpoKnowledgeBase) -> None:
    assert kb.n_terms == 19_484
    assert len(kb.pheno_terms) == 136_074  # merged positive phenotype annotations of the universe
    assert (np.diff(kb.pheno_indptr) > 0).all()
    assert int(kb.n_diseases[kb.term_index(ROOT)]) == kb.n_universe
    assert kb.phenotype_mask[kb.pheno_terms].all()  # every phenotype is under HP:0000118
    assert not kb.is_obsolete[kb.pheno_terms].any()


def test_information_content(kb: HpoKnowledgeBase) -> None:
    assert kb.information_content(ROOT) == 0.0
    assert kb.information_content(PHENOTYPIC_ABNORMALITY) == pytest.approx(0.0)
    assert kb.ic.max() == pytest.approx(np.log(kb.n_universe))
    g = kb.graph
    child = np.repeat(np.arange(kb.n_terms), np.diff(g.parents_indptr))
    parent = g.parents_indices
    assert len(child) == 23_392
    assert (kb.ic[child] >= kb.ic[parent] - 1e-12).all()  # IC never decreases along is_a
    assert (kb.n_diseases[child] <= kb.n_diseases[parent]).all()
    seizure = kb.term_index("HP:0001250")
    n = int(kb.n_diseases[seizure])
    assert kb.ic[seizure] == pytest.approx(-np.log(n / kb.n_universe))
    direct = sum(1 for d in range(kb.n_universe) if seizure in kb.closure(d))
    assert n == direct


def test_closure_is_the_union_of_ancestors(kb: HpoKnowledgeBase) -> None:
    for d in np.random.default_rng(0).choice(kb.n_universe, 50, replace=False).tolist():
        expected = set()
        for t in kb.phenotype_indices(d).tolist():
            expected.update(kb.graph.ancestors(t).tolist())
        assert kb.closure(d).tolist() == sorted(expected)


def test_resolve_term(kb: HpoKnowledgeBase) -> None:
    assert kb.resolve_term("HP:0001250") == "HP:0001250"
    assert kb.resolve_term("HP:0001275") == "HP:0001250"  # alt_id of Seizure
    assert kb.resolve_term(" hp_0001275 ") == "HP:0001250"
    assert kb.resolve_term("HP:0000057") == "HP:0008665"  # obsolete, replaced_by
    assert kb.resolve_term("HP:0000535") == "HP:0045075"  # two replaced_by; the alt_id decides
    assert kb.resolve_term("HP:0001726") is None  # obsolete, consider-only
    assert kb.resolve_term("HP:9999999") is None
    assert kb.resolve_term("OMIM:154700") is None
    live = ~kb.is_obsolete
    for alt, primary in kb._terms["alt_ids"].items():
        resolved = kb.resolve_term(alt)
        assert resolved is not None and live[kb.term_index(resolved)], (alt, primary)


def test_term_info(kb: HpoKnowledgeBase) -> None:
    info = kb.term("HP:0001166")
    assert info.name == "Arachnodactyly" and info.definition
    assert info.synonyms[0].text == "Long slender fingers"
    assert info.parents == ("HP:0001238", "HP:0100807")  # Slender finger, Long fingers
    assert info.n_diseases > 0 and info.information_content > 3
    assert kb.term("HP:0000057").is_obsolete
    assert "HP:0001275" in kb.term("HP:0001250").alt_ids
    assert "HP:0000001" in kb.ancestors("HP:0001166")
    assert "HP:0001166" in kb.descendants("HP:0100807")
    assert kb.children("HP:0100807") and kb.parents("HP:0000118") == ("HP:0000001",)
    assert len(kb.organ_system_roots) == 23
    assert kb.too_general.sum() == 25


def test_disease_info(kb: HpoKnowledgeBase) -> None:
    sotos = kb.disease("OMIM:117550")
    assert sotos.name == "Sotos syndrome" and sotos.synonyms == ("Sotos syndrome 1",)
    assert sotos.inheritance == ("HP:0000006",)  # autosomal dominant
    by_term = {a.term_id: a for a in sotos.phenotypes}
    assert by_term["HP:0000028"].frequency_class == F.OBLIGATE
    marfan = kb.disease("OMIM:154700")
    assert marfan.name.startswith("Marfan")
    assert "HP:0001166" in {a.term_id for a in marfan.phenotypes}
    # A pooled annotation: 8/14 and 3/5 on two rows -> 11/19.
    pooled = {a.term_id: a for a in kb.disease("OMIM:616271").phenotypes}["HP:0001252"]
    assert pooled.frequency_value == pytest.approx(11 / 19)
    # 20/78, HP:0040284 and 0/5 -> numbers win: 20/83.
    mixed = {a.term_id: a for a in kb.disease("OMIM:191100").phenotypes}["HP:0012798"]
    assert mixed.frequency_value == pytest.approx(20 / 83)
    assert kb.disease("OMIM:101000").excluded == ("HP:0000997", "HP:0030052")
    assert kb.disease_name("ORPHA:558")  # out-of-universe diseases are still described


def _row(freq: str) -> HpoaRecord:
    cls, value = parse_frequency(freq)
    return HpoaRecord("OMIM:1", "x", False, "HP:1", "", "", "", freq, cls, value, "", "", "P", "")


def test_merge_rules() -> None:
    assert _merge_phenotypes([_row("1/2"), _row("3/4")]) == (F.FREQUENT, pytest.approx(4 / 6))
    assert _merge_phenotypes([_row("HP:0040283"), _row("HP:0040281")]) == (F.VERY_FREQUENT, None)
    assert _merge_phenotypes([_row(""), _row("")]) == (F.UNKNOWN, None)
    assert _merge_phenotypes([_row("50%"), _row("0/100")]) == (F.OCCASIONAL, pytest.approx(0.25))
    assert _merge_phenotypes([_row("0/3"), _row("HP:0040285")]) == (F.EXCLUDED, 0.0)


def test_cache_validation(kb: HpoKnowledgeBase, tmp_path: Path) -> None:
    files = hpo_files()
    copy = tmp_path / "cache"
    shutil.copytree(kb_cache_path(files), copy)
    assert _cache_is_valid(copy, files)
    with open(copy / "terms.json", "a", encoding="utf-8") as fh:
        fh.write(" ")
    assert not _cache_is_valid(copy, files)
    shutil.copy(kb_cache_path(files) / "terms.json", copy / "terms.json")
    manifest = json.loads((copy / "manifest.json").read_text())
    manifest["source_checksum"] = "0" * 64
    (copy / "manifest.json").write_text(json.dumps(manifest))
    assert not _cache_is_valid(copy, files)
    (copy / "manifest.json").unlink()
    assert not _cache_is_valid(copy, files)


def test_importing_builds_nothing(tmp_path: Path) -> None:
    home = tmp_path / "home"
    code = (
        "import agentenv, agentenv.corpora.hpo.knowledge_base, agentenv.envs.rare_disease.patients.simulated, "
        "agentenv.envs.rare_disease.patients.splits, agentenv.envs.rare_disease.tasks.phenopackets, "
        "agentenv.envs.rare_disease.patients.lay_text, agentenv.envs.rare_disease.tools.phenotype_ranker"
    )
    env = {**os.environ, "AGENTENV_HOME": str(home)}
    subprocess.run([sys.executable, "-c", code], check=True, env=env)
    assert not home.exists() or not any(home.rglob("*"))


def test_shared_arrays_are_read_only(kb: HpoKnowledgeBase) -> None:
    for array in (kb.ic, kb.pheno_terms, kb.closure_indices, kb.graph.ancestors_indices):
        with pytest.raises(ValueError, match="read-only"):
            array[0] = 0


@pytest.mark.slow
def test_cold_build_in_a_fresh_home(tmp_path: Path) -> None:
    home = tmp_path / "home"
    code = (
        "from agentenv.corpora.hpo.knowledge_base import load_hpo_kb, kb_cache_path; kb = load_hpo_kb(); "
        "print(kb.n_universe, kb_cache_path())"
    )
    env = {**os.environ, "AGENTENV_HOME": str(home)}
    out = subprocess.run(
        [sys.executable, "-c", code], check=True, env=env, capture_output=True, text=True
    )
    n, path = out.stdout.split()
    assert n == "8170" and Path(path).parent == home / "hpo"
    assert sorted(p.name for p in (home / "hpo").iterdir()) == [
        Path(path).name
    ]  # no temp dirs left
    assert _cache_is_valid(Path(path), hpo_files())
