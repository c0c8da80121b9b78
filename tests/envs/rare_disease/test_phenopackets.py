"""Bring-your-own patients: task dicts and GA4GH phenopackets, with mapping, warnings and errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentenv.corpora.hpo.knowledge_base import HpoKnowledgeBase
from agentenv.envs.rare_disease.patients.simulated import CALIBRATED, PatientSampler
from agentenv.envs.rare_disease.tasks.phenopackets import (
    ImportNote,
    from_phenopacket,
    import_task,
    import_tasks,
    load_phenopackets,
    to_phenopacket,
)
from agentenv.errors import UserInputError


def packet(features: list, diagnosis: str | None = "OMIM:154700", **extra: object) -> dict:
    out: dict = {"id": "case-1", "phenotypicFeatures": features, **extra}
    if diagnosis:
        out["interpretations"] = [{"id": "i1", "diagnosis": {"disease": {"id": diagnosis}}}]
    return out


def feature(tid: str, excluded: bool = False) -> dict:
    return {"type": {"id": tid, "label": "x"}, **({"excluded": True} if excluded else {})}


def test_round_trip(kb: HpoKnowledgeBase, tmp_path: Path) -> None:
    sampler = PatientSampler(kb, CALIBRATED.replace(hidden_fraction=0.3, excluded_range=(1, 2)))
    originals = [sampler.sample_case(d, 1) for d in ("OMIM:154700", "OMIM:117550", "OMIM:101000")]
    (tmp_path / "nested").mkdir()
    for i, p in enumerate(originals):
        folder = tmp_path / "nested" if i == 2 else tmp_path
        (folder / f"p{i}.json").write_text(json.dumps(to_phenopacket(p, kb)))
    (tmp_path / "notes.txt").write_text("not a phenopacket")
    result = load_phenopackets(kb, tmp_path)
    assert not result.warnings and not result.skipped
    back = {p.disease_id: p for p in result.patients}
    for p in originals:
        q = back[p.disease_id]
        assert q.present == p.all_present  # hidden findings come back as present
        assert q.excluded == p.excluded
        assert q.seed is None and not q.closed_world and q.source.endswith(".json")
    single = load_phenopackets(kb, tmp_path / "p0.json")
    assert len(single.patients) == 1
    pp = to_phenopacket(originals[0], kb)
    assert pp["metaData"]["resources"][0]["version"] == "2025-01-16"
    assert pp["interpretations"][0]["diagnosis"]["disease"]["label"].startswith("Marfan")
    assert to_phenopacket(originals[0], kb) == pp  # deterministic


def test_id_mapping_and_warnings(kb: HpoKnowledgeBase) -> None:
    result = from_phenopacket(
        kb,
        packet(
            [
                feature("HP:0001275"),
                feature("HP:0000057"),
                feature("HP:9999999"),
                feature("HP:0001166"),
            ]
        ),
    )
    (p,) = result.patients
    assert p.present == ("HP:0001250", "HP:0008665", "HP:0001166")
    text = "\n".join(result.warnings)
    assert "'HP:0001275'" in text and "mapped to HP:0001250" in text
    assert "mapped to HP:0008665" in text
    assert "unknown or retired HPO id 'HP:9999999'" in text and "dropped" in text
    assert p.source == "<phenopacket>#case-1"


def test_diagnosis_sources(kb: HpoKnowledgeBase) -> None:
    via_diseases = packet(
        [feature("HP:0001166")],
        diagnosis=None,
        diseases=[
            {"term": {"id": "OMIM:000000"}, "excluded": True},
            {"term": {"id": "MIM:154700"}},
        ],
    )
    (p,) = from_phenopacket(kb, via_diseases).patients
    assert p.disease_id == "OMIM:154700" and p.also_accept == ()
    two = packet([feature("HP:0001166")], diseases=[{"term": {"id": "OMIM:117550"}}])
    (q,) = from_phenopacket(kb, two).patients
    assert q.diagnoses == ("OMIM:154700", "OMIM:117550")


def test_skipped_cases_are_counted(kb: HpoKnowledgeBase) -> None:
    result = import_tasks(
        kb,
        [
            {"phenotypes": ["HP:0001166"], "diagnosis": ["ORPHA:558"]},
            {"phenotypes": ["HP:9999999"], "diagnosis": ["OMIM:154700"]},
            {
                "phenotypes": ["HP:0001166"],
                "excluded": ["HP:0001166", "HP:0001250"],
                "diagnosis": ["OMIM:154700"],
                "id": "ok",
            },
        ],
        source="cases.jsonl",
    )
    assert result.skipped == {"diagnosis_not_in_universe": 1, "no_known_phenotypes": 1}
    (p,) = result.patients
    assert p.excluded == ("HP:0001250",) and p.source == "cases.jsonl:3#ok"
    assert any("cases.jsonl:1" in w and "not in the 'omim' universe" in w for w in result.warnings)
    assert any("both present and excluded" in w for w in result.warnings)


EYE, CATARACT, LENS = "HP:0000478", "HP:0000518", "HP:0000517"
"""Abnormality of the eye, Cataract (a descendant of both others), Abnormality of the lens."""


def test_an_excluded_ancestor_of_a_present_finding_is_reported_and_kept_as_present(
    kb: HpoKnowledgeBase,
) -> None:
    """A patient cannot lack "Abnormality of the eye" while having "Cataract": read as a term both
    present and excluded is (warned, kept as present), not accepted in silence."""
    assert {EYE, LENS} <= set(kb.ancestors(CATARACT, include_self=False))
    result = import_task(
        kb,
        {
            "phenotypes": ["HP:0001166", CATARACT],
            "excluded": [EYE, "HP:0001250", LENS],
            "diagnosis": ["OMIM:154700"],
        },
        "cases.jsonl:4",
        file="cases.jsonl",
        line=4,
    )
    (p,) = result.patients
    assert p.present == ("HP:0001166", CATARACT) and p.excluded == ("HP:0001250",)
    assert list(result.warnings) == [
        f"cases.jsonl:4: excluded {t} ({kb.term_name(t)}) is an ancestor of present {CATARACT} "
        f"(Cataract), which implies it (HPO's true-path rule); kept as present, dropped from excluded"
        for t in (EYE, LENS)
    ]
    # a phenopacket reads alike; an excluded descendant of a present term is no contradiction
    packet_result = from_phenopacket(
        kb, packet([feature(CATARACT), feature(EYE, excluded=True)]), "p.json"
    )
    assert packet_result.patients[0].excluded == ()
    assert (
        "excluded HP:0000478 (Abnormality of the eye) is an ancestor of present HP:0000518"
        in (packet_result.warnings[0])
    )
    fine = import_task(
        kb, {"phenotypes": [EYE], "excluded": [CATARACT], "diagnosis": ["OMIM:154700"]}
    )
    assert fine.patients[0].excluded == (CATARACT,) and not fine.warnings


@pytest.mark.parametrize(
    ("task", "match"),
    [
        ({"diagnosis": ["OMIM:154700"]}, "missing field 'phenotypes'"),
        ({"phenotypes": ["HP:0001166"]}, "missing field 'diagnosis'"),
        (
            {"phenotypes": "HP:0001166", "diagnosis": ["OMIM:154700"]},
            "field 'phenotypes' must be a list",
        ),
        ({"phenotypes": [1], "diagnosis": ["OMIM:154700"]}, "list containing int"),
        (
            {"phenotypes": ["HP:0001166"], "diagnosis": "OMIM:154700"},
            "field 'diagnosis' must be a list",
        ),
        ({"phenotypes": ["HP:0001166"], "diagnosis": []}, "'diagnosis' is empty"),
        ({"phenotype": ["HP:0001166"], "diagnosis": ["OMIM:154700"]}, "unknown field"),
        (["HP:0001166"], "must be a JSON object"),
    ],
)
def test_task_errors(kb: HpoKnowledgeBase, task: object, match: str) -> None:
    with pytest.raises(UserInputError, match=match) as err:
        import_task(kb, task, source="mine.json")  # type: ignore[arg-type]
    assert str(err.value).startswith("mine.json: ")


def test_phenopacket_errors(kb: HpoKnowledgeBase, tmp_path: Path) -> None:
    bad = {
        "no_type.json": packet([{"excluded": True}]),
        "no_id.json": packet([{"type": {"label": "Seizure"}}]),
        "flag.json": packet([{"type": {"id": "HP:0001250"}, "excluded": "yes"}]),
        "no_dx.json": packet([feature("HP:0001250")], diagnosis=None),
        "features.json": {"phenotypicFeatures": {"type": "x"}},
    }
    expected = {
        "no_type.json": r"phenotypicFeatures\[0\]\.type",
        "no_id.json": r"phenotypicFeatures\[0\]\.type\.id",
        "flag.json": "must be true or false",
        "no_dx.json": "no diagnosis; give interpretations",
        "features.json": "phenotypicFeatures must be a list",
    }
    for name, content in bad.items():
        path = tmp_path / name
        path.write_text(json.dumps(content))
        with pytest.raises(UserInputError, match=expected[name]) as err:
            load_phenopackets(kb, path)
        assert str(path) in str(err.value)
    broken = tmp_path / "broken.json"
    broken.write_text('{"id": "x",\n not json}')
    with pytest.raises(UserInputError, match=r"broken\.json:2: not valid JSON \(.* at column 2\)"):
        load_phenopackets(kb, broken)
    with pytest.raises(FileNotFoundError):
        load_phenopackets(kb, tmp_path / "missing")


def test_a_misspelled_key_is_named_with_the_fix(kb: HpoKnowledgeBase, tmp_path: Path) -> None:
    typo = packet([feature("HP:0001166")])
    typo["phenotypicFeature"] = typo.pop("phenotypicFeatures")
    path = tmp_path / "typo.json"
    path.write_text(json.dumps(typo, indent=1))
    result = load_phenopackets(kb, path)
    assert result.skipped == {"no_known_phenotypes": 1}
    unknown, skipped = result.warnings
    hint = "unknown key 'phenotypicFeature' (did you mean 'phenotypicFeatures'?)"
    line = next(
        n
        for n, text in enumerate(path.read_text().splitlines(), 1)
        if '"phenotypicFeature"' in text
    )
    assert (
        line > 1 and unknown == f"{path}:{line}: {hint}; ignored"
    )  # the key's own line in the file
    assert skipped == f"{path}:1: no known present HPO term ({hint}); case skipped"
    assert isinstance(unknown, ImportNote) and (unknown.filename, unknown.lineno) == (
        str(path),
        line,
    )
    (bad_feature,) = from_phenopacket(
        kb, packet([{**feature("HP:0001166"), "exclude": True}])
    ).warnings
    assert (
        "unknown key 'exclude' in phenotypicFeatures[0] (did you mean 'excluded'?)" in bad_feature
    )


def test_warnings_point_at_the_line_of_the_id(kb: HpoKnowledgeBase, tmp_path: Path) -> None:
    path = tmp_path / "p.json"
    path.write_text(json.dumps(packet([feature("HP:0001166"), feature("HP:9999999")]), indent=2))
    line = next(
        n for n, text in enumerate(path.read_text().splitlines(), 1) if "HP:9999999" in text
    )
    (note,) = load_phenopackets(kb, path).warnings
    assert note.startswith(f"{path}:{line}: unknown or retired HPO id 'HP:9999999'")
    assert (note.filename, note.lineno) == (str(path), line)


def test_a_misspelled_task_field_suggests_the_right_one(kb: HpoKnowledgeBase) -> None:
    with pytest.raises(
        UserInputError, match=r"unknown field\(s\) \['phenotype'\] \(did you mean 'phenotypes'\?\)"
    ):
        import_task(
            kb, {"phenotype": ["HP:0001166"], "diagnosis": ["OMIM:154700"]}, source="mine.jsonl:1"
        )
