"""Bring your own patients: task dicts and GA4GH Phenopacket v2 JSON.

Why: simulated patients calibrate the task, but researchers also want to
evaluate on real, curated cases (e.g. the phenopacket-store collection). Two
inputs are accepted and both become :class:`Patient` objects (``seed=None``,
``closed_world=False``: a question about an unrecorded feature is answered
"unknown", not "no"):

* a task dict ``{"phenotypes": [HPO ids], "excluded": [HPO ids] (optional),
  "diagnosis": [disease ids], "id": str (optional)}``;
* a Phenopacket v2 JSON object, file, or a directory of ``*.json`` files
  (searched recursively, in sorted order). Present terms are
  ``phenotypicFeatures[].type.id``, absent ones those with ``"excluded": true``;
  diagnoses are ``interpretations[].diagnosis.disease.id`` then
  ``diseases[].term.id`` (diseases marked excluded are ignored).

Nothing is dropped silently. Alternative and obsolete HPO ids are mapped to
the current id and reported; unknown ids are dropped and reported, in
``ImportResult.warnings``. A case whose diagnoses are all outside the KB's
universe (say an ORPHA-only case in the OMIM universe), or that has no known
present term left, is skipped and counted in ``ImportResult.skipped``. Input
that is malformed (a missing field, a wrong type) raises ``ValueError`` naming
the source, the field and the fix.

Example:
    >>> normalize_disease_id(" MIM:154700 ")
    'OMIM:154700'
    >>> _check_task({"phenotypes": "HP:0001166", "diagnosis": ["OMIM:154700"]}, "cases.jsonl:3")
    Traceback (most recent call last):
    ...
    ValueError: cases.jsonl:3: field 'phenotypes' must be a list of id strings, e.g. ["HP:0001166"]; got str
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentenv.corpora.hpo import HpoKnowledgeBase
from agentenv.envs.rare_disease.patients import Patient

TASK_FIELDS = ("phenotypes", "excluded", "diagnosis", "id")
"""Keys a task dict may have (``phenotypes`` and ``diagnosis`` are required)."""


@dataclass(frozen=True)
class ImportResult:
    """Imported patients, warnings about mapped or dropped ids, and skipped cases by reason."""

    patients: tuple[Patient, ...]
    warnings: tuple[str, ...] = ()
    skipped: dict[str, int] = field(default_factory=dict)

    def __add__(self, other: ImportResult) -> ImportResult:
        return ImportResult(
            self.patients + other.patients,
            self.warnings + other.warnings,
            dict(Counter(self.skipped) + Counter(other.skipped)),
        )


def normalize_disease_id(text: str) -> str:
    """Trim a disease id and spell OMIM's prefix one way (``MIM:``/``omim:`` -> ``OMIM:``)."""
    did = text.strip()
    prefix, sep, rest = did.partition(":")
    if sep and prefix.upper() in ("OMIM", "MIM"):
        return f"OMIM:{rest.strip()}"
    if sep and prefix.upper() in ("ORPHA", "ORPHANET"):
        return f"ORPHA:{rest.strip()}"
    return did


def _id_list(value: Any, source: str, name: str, example: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        got = type(value).__name__
        if isinstance(value, list):
            got = "a list containing " + ", ".join(sorted({type(v).__name__ for v in value}))
        raise ValueError(
            f'{source}: field {name!r} must be a list of id strings, e.g. ["{example}"]; got {got}'
        )
    return value


def _check_task(task: Any, source: str) -> tuple[list[str], list[str], list[str]]:
    if not isinstance(task, dict):
        raise ValueError(
            f"{source}: a task must be a JSON object like "
            '{"phenotypes": ["HP:0001166"], "diagnosis": ["OMIM:154700"]}; '
            f"got {type(task).__name__}"
        )
    unknown = sorted(set(task) - set(TASK_FIELDS))
    if unknown:
        raise ValueError(
            f"{source}: unknown field(s) {unknown}; a task has only {list(TASK_FIELDS)} "
            "(for a GA4GH phenopacket use load_phenopackets)"
        )
    for required in ("phenotypes", "diagnosis"):
        if required not in task:
            raise ValueError(
                f"{source}: missing field {required!r}; add it, e.g. "
                + (
                    '"phenotypes": ["HP:0001166"]'
                    if required == "phenotypes"
                    else '"diagnosis": ["OMIM:154700"]'
                )
            )
    phenotypes = _id_list(task["phenotypes"], source, "phenotypes", "HP:0001166")
    excluded = _id_list(task.get("excluded", []), source, "excluded", "HP:0001250")
    diagnosis = _id_list(task["diagnosis"], source, "diagnosis", "OMIM:154700")
    if not diagnosis:
        raise ValueError(f"{source}: field 'diagnosis' is empty; give at least one disease id")
    return phenotypes, excluded, diagnosis


def _resolve(
    kb: HpoKnowledgeBase, ids: Iterable[str], source: str, warnings: list[str]
) -> list[str]:
    out: list[str] = []
    for raw in ids:
        term = kb.resolve_term(raw)
        if term is None:
            warnings.append(
                f"{source}: unknown or retired HPO id {raw!r} (HPO {kb.release}); dropped"
            )
            continue
        if term != raw:
            warnings.append(f"{source}: HPO id {raw!r} is an old/alternative id; mapped to {term}")
        if term not in out:
            out.append(term)
    return out


def _make_case(
    kb: HpoKnowledgeBase,
    phenotypes: list[str],
    excluded: list[str],
    diagnosis: list[str],
    source: str,
) -> ImportResult:
    warnings: list[str] = []
    present = _resolve(kb, phenotypes, source, warnings)
    absent = _resolve(kb, excluded, source, warnings)
    clash = [t for t in absent if t in present]
    if clash:
        warnings.append(f"{source}: {clash} listed as both present and excluded; kept as present")
        absent = [t for t in absent if t not in present]
    diseases = list(dict.fromkeys(normalize_disease_id(d) for d in diagnosis))
    in_universe = [d for d in diseases if kb.in_universe(d)]
    if not in_universe:
        warnings.append(
            f"{source}: diagnosis {diseases} not in the {kb.universe!r} universe; case skipped"
        )
        return ImportResult((), tuple(warnings), {"diagnosis_not_in_universe": 1})
    if not present:
        warnings.append(f"{source}: no known present HPO term; case skipped")
        return ImportResult((), tuple(warnings), {"no_known_phenotypes": 1})
    patient = Patient(
        disease_id=in_universe[0],
        present=tuple(present),
        excluded=tuple(absent),
        findings=tuple(present),
        seed=None,
        source=source,
        closed_world=False,
        also_accept=tuple(in_universe[1:]),
    )
    return ImportResult((patient,), tuple(warnings), {})


def import_task(kb: HpoKnowledgeBase, task: dict, source: str = "<task>") -> ImportResult:
    """Import one task dict (see the module docstring for its fields).

    Raises:
        ValueError: a malformed task, naming ``source``, the field and the fix.
    """
    phenotypes, excluded, diagnosis = _check_task(task, source)
    label = f"{source}#{task['id']}" if isinstance(task.get("id"), str) else source
    return _make_case(kb, phenotypes, excluded, diagnosis, label)


def import_tasks(
    kb: HpoKnowledgeBase, tasks: Iterable[dict], source: str = "<tasks>"
) -> ImportResult:
    """Import many task dicts; ``source:<n>`` (1-based) names each in messages."""
    result = ImportResult(())
    for n, task in enumerate(tasks, 1):
        result = result + import_task(kb, task, f"{source}:{n}")
    return result


def _get(obj: Any, key: str, kind: type, source: str, path: str, fix: str) -> Any:
    if not isinstance(obj, dict) or key not in obj:
        raise ValueError(f"{source}: missing field {path}; {fix}")
    value = obj[key]
    if not isinstance(value, kind):
        raise ValueError(
            f"{source}: field {path} must be a {kind.__name__}, got {type(value).__name__}; {fix}"
        )
    return value


def from_phenopacket(
    kb: HpoKnowledgeBase, packet: Any, source: str = "<phenopacket>"
) -> ImportResult:
    """Import one Phenopacket v2 object (already parsed from JSON).

    Raises:
        ValueError: a malformed phenopacket, naming ``source``, the field and the fix.
    """
    if not isinstance(packet, dict):
        raise ValueError(
            f"{source}: a phenopacket must be a JSON object, got {type(packet).__name__}"
        )
    features = packet.get("phenotypicFeatures", [])
    if not isinstance(features, list):
        raise ValueError(
            f"{source}: field phenotypicFeatures must be a list of objects, got {type(features).__name__}"
        )
    present, excluded = [], []
    for i, feature in enumerate(features):
        path = f"phenotypicFeatures[{i}]"
        fix = 'each feature needs "type": {"id": "HP:…", "label": "…"}'
        tid = _get(
            _get(feature, "type", dict, source, f"{path}.type", fix),
            "id",
            str,
            source,
            f"{path}.type.id",
            fix,
        )
        flag = feature.get("excluded", False)
        if not isinstance(flag, bool):
            raise ValueError(f"{source}: field {path}.excluded must be true or false, got {flag!r}")
        (excluded if flag else present).append(tid)

    diagnosis: list[str] = []
    fix = 'give interpretations[].diagnosis.disease.id or diseases[].term.id, e.g. "OMIM:154700"'
    interpretations = packet.get("interpretations", [])
    if not isinstance(interpretations, list):
        raise ValueError(
            f"{source}: field interpretations must be a list, got {type(interpretations).__name__}"
        )
    for i, interp in enumerate(interpretations):
        if isinstance(interp, dict) and "diagnosis" in interp:
            path = f"interpretations[{i}].diagnosis"
            disease = _get(interp["diagnosis"], "disease", dict, source, f"{path}.disease", fix)
            diagnosis.append(_get(disease, "id", str, source, f"{path}.disease.id", fix))
    diseases = packet.get("diseases", [])
    if not isinstance(diseases, list):
        raise ValueError(f"{source}: field diseases must be a list, got {type(diseases).__name__}")
    for i, disease in enumerate(diseases):
        term = _get(disease, "term", dict, source, f"diseases[{i}].term", fix)
        if not disease.get("excluded", False):
            diagnosis.append(_get(term, "id", str, source, f"diseases[{i}].term.id", fix))
    if not diagnosis:
        raise ValueError(f"{source}: no diagnosis; {fix}")
    label = (
        f"{source}#{packet['id']}"
        if isinstance(packet.get("id"), str) and source.startswith("<")
        else source
    )
    return _make_case(kb, present, excluded, diagnosis, label)


def load_phenopackets(kb: HpoKnowledgeBase, path: str | Path) -> ImportResult:
    """Import a phenopacket JSON file, or every ``*.json`` under a directory (sorted, recursive).

    Raises:
        FileNotFoundError: the path does not exist.
        ValueError: a file that is not JSON or not a valid phenopacket, naming the file.
    """
    root = Path(path)
    if not root.exists():
        raise FileNotFoundError(f"{root}: no such file or directory of phenopacket JSON files")
    files = sorted(root.rglob("*.json")) if root.is_dir() else [root]
    result = ImportResult(())
    for file in files:
        try:
            packet = json.loads(file.read_text(encoding="utf-8"))
        except json.JSONDecodeError as err:
            raise ValueError(
                f"{file}: not valid JSON ({err}); export the phenopacket as JSON"
            ) from None
        result = result + from_phenopacket(kb, packet, str(file))
    return result


def to_phenopacket(
    patient: Patient, kb: HpoKnowledgeBase | None = None, created: str = "1970-01-01T00:00:00Z"
) -> dict:
    """A Phenopacket v2 dict for a patient (hidden findings become ordinary present features).

    Labels and the HPO version are filled in when ``kb`` is given. ``created``
    defaults to a fixed time so that the output is deterministic.

    Example:
        >>> p = Patient("OMIM:154700", present=("HP:0001166",), excluded=("HP:0001250",), seed=7)
        >>> pp = to_phenopacket(p)
        >>> [(f["type"]["id"], f.get("excluded", False)) for f in pp["phenotypicFeatures"]]
        [('HP:0001166', False), ('HP:0001250', True)]
        >>> pp["interpretations"][0]["diagnosis"]["disease"]["id"]
        'OMIM:154700'
    """

    def term(tid: str, is_disease: bool = False) -> dict:
        out = {"id": tid}
        if kb is not None:
            try:
                out["label"] = kb.disease_name(tid) if is_disease else kb.term_name(tid)
            except KeyError:
                pass
        return out

    features = [{"type": term(t)} for t in patient.all_present]
    features += [{"type": term(t), "excluded": True} for t in patient.excluded]
    ident = f"agentenv-{patient.disease_id}-{patient.seed}".replace(":", "_")
    resources = [
        {
            "id": "hp",
            "name": "human phenotype ontology",
            "url": "http://purl.obolibrary.org/obo/hp.owl",
            "version": kb.release if kb is not None else "unknown",
            "namespacePrefix": "HP",
            "iriPrefix": "http://purl.obolibrary.org/obo/HP_",
        }
    ]
    return {
        "id": ident,
        "subject": {"id": f"{ident}-subject"},
        "phenotypicFeatures": features,
        "interpretations": [
            {
                "id": f"{ident}-interpretation-{k}",
                "progressStatus": "SOLVED",
                "diagnosis": {"disease": term(d, is_disease=True)},
            }
            for k, d in enumerate(patient.diagnoses)
        ],
        "metaData": {
            "created": created,
            "createdBy": "agentenv",
            "phenopacketSchemaVersion": "2.0",
            "resources": resources,
        },
    }
