"""phenotype.hpoa parsing, frequencies in every form, on the real file (HPO 2025-01-16)."""

from __future__ import annotations

from collections import Counter

import pytest

from agentenv.corpora.hpo.files import hpo_files
from agentenv.corpora.hpo.hpoa import (
    COLUMNS,
    FREQUENCY_RANGES,
    FrequencyClass,
    HpoaFile,
    frequency_class_of,
    parse_frequency,
    parse_hpoa,
    read_hpoa,
)

F = FrequencyClass


@pytest.fixture(scope="module")
def hpoa() -> HpoaFile:
    return read_hpoa(hpo_files().hpoa_path)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("HP:0040280", (F.OBLIGATE, None)),
        ("HP:0040281", (F.VERY_FREQUENT, None)),
        ("HP:0040282", (F.FREQUENT, None)),
        ("HP:0040283", (F.OCCASIONAL, None)),
        ("HP:0040284", (F.VERY_RARE, None)),
        ("HP:0040285", (F.EXCLUDED, None)),
        ("", (F.UNKNOWN, None)),
        ("7/7", (F.OBLIGATE, 1.0)),
        ("9/10", (F.VERY_FREQUENT, 0.9)),
        ("1/2", (F.FREQUENT, 0.5)),
        ("1/10", (F.OCCASIONAL, 0.1)),
        ("1/40", (F.VERY_RARE, 0.025)),
        ("1/200", (F.VERY_RARE, 0.005)),
        ("0/3", (F.EXCLUDED, 0.0)),
        ("100%", (F.OBLIGATE, 1.0)),
        ("24.3%", (F.OCCASIONAL, 0.243)),
        ("35%", (F.FREQUENT, 0.35)),
        ("1%", (F.VERY_RARE, 0.01)),
    ],
)
def test_parse_frequency_forms(raw: str, expected: tuple) -> None:
    cls, value = parse_frequency(raw)
    assert cls == expected[0]
    if expected[1] is None:
        assert value is None
    else:
        assert value == pytest.approx(expected[1])


@pytest.mark.parametrize("raw", ["5/4", "3/0", "-1/2", "often", "12", "120%", "a/b", "HP:0000001"])
def test_parse_frequency_rejects(raw: str) -> None:
    with pytest.raises(ValueError, match="frequency"):
        parse_frequency(raw)


def test_class_boundaries_follow_the_hpo_definitions() -> None:
    for cls, (lo, hi) in FREQUENCY_RANGES.items():
        assert frequency_class_of(lo) == cls and frequency_class_of(hi) == cls
    assert frequency_class_of(0.79) == F.FREQUENT and frequency_class_of(0.80) == F.VERY_FREQUENT


def test_real_file_shape(hpoa: HpoaFile) -> None:
    assert hpoa.header["version"] == "2025-01-16"
    assert len(hpoa.records) == 271_702
    assert len({r.database_id for r in hpoa.records}) == 12_687
    prefixes = Counter(r.database_id.split(":")[0] for r in hpoa.records)
    assert prefixes == {"OMIM": 156_446, "ORPHA": 114_960, "DECIPHER": 296}
    assert Counter(r.aspect for r in hpoa.records) == {
        "P": 254_621,
        "I": 8_854,
        "C": 8_020,
        "H": 130,
        "M": 77,
    }
    assert sum(r.negated for r in hpoa.records) == 711
    assert Counter(r.evidence for r in hpoa.records) == {
        "TAS": 135_577,
        "PCS": 104_850,
        "IEA": 31_275,
    }
    assert Counter(r.sex for r in hpoa.records if r.sex) == {"MALE": 449, "FEMALE": 190}


def test_real_frequencies(hpoa: HpoaFile) -> None:
    raw = Counter(
        "term"
        if r.frequency_raw.startswith("HP:")
        else "fraction"
        if "/" in r.frequency_raw
        else "percent"
        if r.frequency_raw.endswith("%")
        else "empty"
        for r in hpoa.records
    )
    assert raw == {"fraction": 89_578, "term": 117_794, "empty": 64_217, "percent": 113}
    by_term = Counter(r.frequency_raw for r in hpoa.records if r.frequency_raw.startswith("HP:"))
    assert by_term["HP:0040280"] == 648 and by_term["HP:0040283"] == 44_818
    phenotype_rows = [r for r in hpoa.records if r.aspect == "P"]
    with_frequency = sum(r.frequency_class != F.UNKNOWN for r in phenotype_rows) / len(
        phenotype_rows
    )
    assert with_frequency == pytest.approx(0.79, abs=0.005)  # "frequencies on 79% of rows"
    for r in hpoa.records:
        if r.frequency_value is not None:
            assert frequency_class_of(r.frequency_value) == r.frequency_class


def test_first_rows(hpoa: HpoaFile) -> None:
    first = hpoa.records[0]
    assert (first.database_id, first.disease_name, first.hpo_id) == (
        "OMIM:619340",
        "Developmental and epileptic encephalopathy 96",
        "HP:0011097",
    )
    assert (first.frequency_raw, first.frequency_class, first.frequency_value) == (
        "1/2",
        F.FREQUENT,
        0.5,
    )
    assert first.reference == "PMID:31675180" and first.evidence == "PCS" and first.aspect == "P"
    assert not first.negated and first.biocuration.startswith("HPO:probinson")


def test_malformed_input_names_the_line() -> None:
    header = "\t".join(COLUMNS)
    with pytest.raises(ValueError, match=r"x\.hpoa:2: expected 12 columns"):
        parse_hpoa([header, "OMIM:1\tfoo"], source="x.hpoa")
    with pytest.raises(ValueError, match="column header"):
        parse_hpoa(["database_id\tname"], source="x.hpoa")
    row = ["OMIM:1", "Foo", "", "HP:0001250", "PMID:1", "PCS", "", "often", "", "", "P", ""]
    with pytest.raises(ValueError, match=r"x\.hpoa:2: unrecognised frequency 'often'"):
        parse_hpoa([header, "\t".join(row)], source="x.hpoa")
    row[2], row[7] = "MAYBE", ""
    with pytest.raises(ValueError, match="qualifier"):
        parse_hpoa([header, "\t".join(row)], source="x.hpoa")
