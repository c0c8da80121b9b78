"""The ``real`` split: 536 published patients (129 OMIM diseases) from the GA4GH phenopacket-store.

Why ship them: scores on simulated patients mean something only if they
predict scores on real ones, and that needs real patients anyone can run. These
come from the Monarch Initiative's phenopacket-store (BSD 3-Clause; licence in
``data/LICENSE-phenopacket-store``, snapshot b694d17 of 2026-06-25), chosen as
follows (by whoever prepared them for this project): one OMIM diagnosis
annotated in HPO 2025-01-16, at least 3 observed terms, a paper not cited in
the disease's HPO annotations (cited cases copy the annotations), at most 10
cases per disease, and a fixed half of the collection's diseases (the other
half, and a second collection, are held out to check that calibration
carries over).

They are also the **calibration cases** of the simulator: the disease mix
(:mod:`~.disease_mix`) and the per-case statistics (:mod:`~.case_statistics`)
are fitted on them. They span every split's diseases (400 cases of train
diseases, 76 of validation, 60 of test), so a policy trained on ``train`` has
seen simulated patients of some of their diseases.

Each line is ``{"phenotypes", "excluded", "diagnosis", "source"}``. ``source``
(``phenopacket-store:<file>``) is provenance, and its file name often carries
the gene or the paper: it is read by :func:`real_case_sources` only, never put
in a :class:`~.patients.Patient`, a prompt, a Task or an ``info``. A patient's
``source`` is ``real:<line>``.

Example (not run: it needs the KB):

    patients = load_real_patients(load_hpo_kb())   # 536 records, findings all recorded
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

from agentenv.corpora.hpo.knowledge_base import HpoKnowledgeBase
from agentenv.envs.rare_disease.patients.simulated import Patient
from agentenv.envs.rare_disease.tasks.phenopackets import import_task
from agentenv.errors import UserInputError

REAL_CASES_PATH = Path(__file__).parent / "data" / "real_cases.jsonl"
"""The shipped cases (package data)."""
REAL_CASES_SHA256 = "07bdd3dcbaa3fcc30c1e97783b2b44ddcaed32058f79bede0d7d31d4428db572"
"""sha256 of the file, recorded as ``corpus_checksums["patients"]`` of a run on the real split."""
ATTRIBUTION = (
    "Real cases: GA4GH phenopacket-store, Monarch Initiative (BSD 3-Clause), snapshot b694d17 (2026-06-25); "
    "Danis D, et al. A corpus of GA4GH phenopackets: case-level phenotyping for genomic diagnostics and "
    "discovery. HGG Advances. 2025"
)


def _rows() -> list[tuple[int, dict]]:
    rows = []
    with REAL_CASES_PATH.open(encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if line.strip():
                rows.append((n, json.loads(line)))
    return rows


def real_case_sources() -> dict[int, str]:
    """Line number -> provenance (``phenopacket-store:<file>``), for people reading results, never for agents."""
    return {n: str(row.get("source", "")) for n, row in _rows()}


def real_split_patients(kb: HpoKnowledgeBase) -> tuple[Patient, ...]:
    """The records the ``real`` split serves: the shipped cases less exact repeats, 500 of 536.

    Why: 36 records repeat an earlier record of the same disease term for term
    (relatives reported together, or one patient in two papers). A task id names
    what the agent sees, so a repeat would be a second task under the first's id;
    each is served once. Calibration reads every record (:func:`load_real_patients`).
    """
    return _distinct(kb)


@lru_cache(maxsize=4)
def _distinct(kb: HpoKnowledgeBase) -> tuple[Patient, ...]:
    seen: set[tuple] = set()
    out = []
    for p in _load(kb):
        key = (tuple(sorted(p.present)), tuple(sorted(p.excluded)), p.diagnoses)
        if key not in seen:
            seen.add(key)
            out.append(p)
    return tuple(out)


def load_real_patients(kb: HpoKnowledgeBase) -> tuple[Patient, ...]:
    """The shipped real cases as full records (every recorded finding present, none hidden), all 536.

    Raises:
        UserInputError: a case of the shipped file that no longer imports (a changed HPO release).
    """
    return _load(kb)


@lru_cache(maxsize=4)
def _load(kb: HpoKnowledgeBase) -> tuple[Patient, ...]:
    patients: list[Patient] = []
    for n, row in _rows():
        task = {k: v for k, v in row.items() if k != "source"}
        result = import_task(kb, task, f"real:{n}")
        if len(result.patients) != 1:
            raise UserInputError(
                f"{REAL_CASES_PATH.name}:{n}: a shipped real case did not import: {result.warnings}"
            )
        patients.append(result.patients[0])
    return tuple(patients)
