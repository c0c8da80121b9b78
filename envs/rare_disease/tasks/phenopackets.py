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
``ImportResult.warnings``; each warning names the user's file and line
(``cases.jsonl:3: ...``, or the line of the id in a phenopacket file), and so
does a key this module does not know (``phenotypicFeature``: did you mean
``phenotypicFeatures``?). A term listed both present and excluded, or an
excluded term that is an HPO ancestor of a present one (no "Abnormality of the
eye" with "Cataract"), contradicts the case: it is reported and kept as present
only (the simulator never draws such an excluded term either). A case whose
diagnoses are all outside the KB's universe (say an ORPHA-only case in the OMIM
universe), or that has no known present term left, is skipped and counted in
``ImportResult.skipped``. Input that is malformed (a missing field, a wrong type) raises
:class:`~agentenv.errors.UserInputError` (a ``ValueError``) naming the source,
the field and the fix.

Example:
    >>> normalize_disease_id(" MIM:154700 ")
    'OMIM:154700'
    >>> _check_task({"phenotypes": "HP:0001166", "diagnosis": ["OMIM:154700"]}, "cases.jsonl:3")
    Traceback (most recent call last):
    ...
    agentenv.errors.UserInputError: cases.jsonl:3: field 'phenotypes' must be a list of id strings, e.g. ["HP:0001166"]; got str
"""

from __future__ import annotations

import difflib
import json
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentenv.corpora.hpo.knowledge_base import HpoKnowledgeBase
from agentenv.engine.strict_json import RepeatedKey, loads_unique
from agentenv.engine.task_files import TaskSourceReads
from agentenv.envs.rare_disease.patients.simulated import Patient
from agentenv.errors import UserInputError
from agentenv.terminal_text import control_at

TASK_FIELDS = ("phenotypes", "excluded", "diagnosis", "id")
"""Keys a task dict may have (``phenotypes`` and ``diagnosis`` are required)."""

PHENOPACKET_FIELDS = (
    "id",
    "subject",
    "phenotypicFeatures",
    "measurements",
    "biosamples",
    "interpretations",
    "diseases",
    "medicalActions",
    "files",
    "metaData",
)
"""Top-level keys of a GA4GH Phenopacket v2; any other key is reported (it is usually a typo)."""

FEATURE_FIELDS = (
    "description",
    "type",
    "excluded",
    "severity",
    "modifiers",
    "onset",
    "resolution",
    "evidence",
)
"""Keys of a Phenopacket v2 ``PhenotypicFeature``."""


class ImportNote(str):
    """One import warning: its text (which starts with ``file:line``), and that file and line apart.

    A ``str``, so ``env.import_warnings`` reads as before; ``filename`` and
    ``lineno`` let the warning be attributed to the user's file
    (:func:`agentenv.envs.rare_disease.tasks.user_patients.warn_import`) instead of
    a line of Gymnasium's.
    """

    filename: str | None
    lineno: int | None

    def __new__(
        cls, text: str, filename: str | None = None, lineno: int | None = None
    ) -> ImportNote:
        note = super().__new__(cls, text)
        note.filename, note.lineno = filename, lineno
        return note


@dataclass(frozen=True)
class Where:
    """Where a case is in the user's input, to name it in messages.

    ``label`` names the case (``cases.jsonl:3``, ``tasks[0]``, ``p.json``);
    ``file`` and ``line`` locate it; ``text`` is a phenopacket file's text, in
    which an id's own line is looked up.
    """

    label: str
    file: str | None = None
    line: int | None = None
    text: str | None = field(default=None, repr=False)

    def note(self, message: str, needle: str | None = None) -> ImportNote:
        """``message`` prefixed with ``file:line`` (the line of ``needle`` in a file, when found)."""
        line = self.line
        if self.text is not None and needle is not None:
            line = _line_of(self.text, needle) or line
        if self.file is not None and line is not None:
            return ImportNote(f"{self.file}:{line}: {message}", self.file, line)
        return ImportNote(f"{self.label}: {message}", self.file, line)


def _line_of(text: str, needle: str) -> int | None:
    """The 1-based line of the first quoted ``needle`` in ``text``, or None."""
    at = text.find(json.dumps(needle))
    return None if at < 0 else text.count("\n", 0, at) + 1


def did_you_mean(key: str, known: Sequence[str]) -> str:
    """``" (did you mean 'x'?)"`` for the closest known key, or ``""``.

    Example:
        >>> did_you_mean("phenotypicFeature", PHENOPACKET_FIELDS)
        " (did you mean 'phenotypicFeatures'?)"
    """
    close = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


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
        raise UserInputError(
            f'{source}: field {name!r} must be a list of id strings, e.g. ["{example}"]; got {got}'
        )
    return value


def _check_task(task: Any, source: str) -> tuple[list[str], list[str], list[str]]:
    if not isinstance(task, dict):
        raise UserInputError(
            f"{source}: a task must be a JSON object like "
            '{"phenotypes": ["HP:0001166"], "diagnosis": ["OMIM:154700"]}; '
            f"got {type(task).__name__}"
        )
    unknown = sorted(set(task) - set(TASK_FIELDS))
    if unknown:
        hints = "".join(did_you_mean(k, TASK_FIELDS) for k in unknown)
        raise UserInputError(
            f"{source}: unknown field(s) {unknown}{hints}; a task has only {list(TASK_FIELDS)} "
            "(for a GA4GH phenopacket use load_phenopackets)"
        )
    for required in ("phenotypes", "diagnosis"):
        if required not in task:
            raise UserInputError(
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
        raise UserInputError(f"{source}: field 'diagnosis' is empty; give at least one disease id")
    return phenotypes, excluded, diagnosis


def _resolve(
    kb: HpoKnowledgeBase, ids: Iterable[str], where: Where, warnings: list[str]
) -> list[str]:
    out: list[str] = []
    for raw in ids:
        term = kb.resolve_term(raw)
        if term is None:
            warnings.append(
                where.note(f"unknown or retired HPO id {raw!r} (HPO {kb.release}); dropped", raw)
            )
            continue
        if term != raw:
            warnings.append(
                where.note(f"HPO id {raw!r} is an old/alternative id; mapped to {term}", raw)
            )
        if term not in out:
            out.append(term)
    return out


def _implied_by(kb: HpoKnowledgeBase, present: list[str], absent: list[str]) -> dict[str, str]:
    """Each excluded term that is a proper ancestor of a present one -> the first such present term.

    Why: a patient cannot lack "Abnormality of the eye" while having "Cataract"; such a row
    contradicts itself as a term both present and excluded does, and is read the same way.
    """
    wanted = set(absent)
    implied: dict[str, str] = {}
    for finding in present:
        for term in kb.ancestors(finding, include_self=False):
            if term in wanted:
                implied.setdefault(term, finding)
    return {t: implied[t] for t in absent if t in implied}  # in the row's order


def _make_case(
    kb: HpoKnowledgeBase,
    phenotypes: list[str],
    excluded: list[str],
    diagnosis: list[str],
    where: Where,
    label: str,
    unknown_keys: Sequence[tuple[str, str]] = (),
    *,
    row_id: str = "",
) -> ImportResult:
    """One case; ``unknown_keys`` are ``(key, message)`` pairs, reported and named if the case is
    skipped; ``row_id`` is the row's (or phenopacket's) ``id``, kept on the patient."""
    warnings: list[str] = [where.note(f"{message}; ignored", key) for key, message in unknown_keys]
    present = _resolve(kb, phenotypes, where, warnings)
    absent = _resolve(kb, excluded, where, warnings)
    clash = [t for t in absent if t in present]
    if clash:
        warnings.append(
            where.note(f"{clash} listed as both present and excluded; kept as present", clash[0])
        )
        absent = [t for t in absent if t not in present]
    implied = _implied_by(kb, present, absent)
    for term, finding in implied.items():
        warnings.append(
            where.note(
                f"excluded {term} ({kb.term_name(term)}) is an ancestor of present {finding} "
                f"({kb.term_name(finding)}), which implies it (HPO's true-path rule); kept as "
                "present, dropped from excluded",
                term,
            )
        )
    absent = [t for t in absent if t not in implied]
    diseases = list(dict.fromkeys(normalize_disease_id(d) for d in diagnosis))
    in_universe = [d for d in diseases if kb.in_universe(d)]
    if not in_universe:
        warnings.append(
            where.note(
                f"diagnosis {diseases} not in the {kb.universe!r} universe; case skipped",
                diagnosis[0],
            )
        )
        return ImportResult((), tuple(warnings), {"diagnosis_not_in_universe": 1})
    if not present:
        why = f" ({'; '.join(message for _, message in unknown_keys)})" if unknown_keys else ""
        warnings.append(where.note(f"no known present HPO term{why}; case skipped"))
        return ImportResult((), tuple(warnings), {"no_known_phenotypes": 1})
    patient = Patient(
        disease_id=in_universe[0],
        present=tuple(present),
        excluded=tuple(absent),
        findings=tuple(present),
        seed=None,
        source=label,
        closed_world=False,
        also_accept=tuple(in_universe[1:]),
        row_id=row_id,
    )
    return ImportResult((patient,), tuple(warnings), {})


def import_task(
    kb: HpoKnowledgeBase,
    task: dict,
    source: str = "<task>",
    *,
    file: str | None = None,
    line: int | None = None,
) -> ImportResult:
    """Import one task dict (see the module docstring for its fields).

    ``file`` and ``line`` locate it in the user's file, for warnings.

    Raises:
        UserInputError: a malformed task, naming ``source``, the field and the fix.
    """
    phenotypes, excluded, diagnosis = _check_task(task, source)
    row_id = task["id"] if isinstance(task.get("id"), str) else ""
    label = f"{source}#{row_id}" if row_id else source
    return _make_case(
        kb, phenotypes, excluded, diagnosis, Where(label, file, line), label, row_id=row_id
    )


def import_tasks(
    kb: HpoKnowledgeBase, tasks: Iterable[dict], source: str = "<tasks>"
) -> ImportResult:
    """Import many task dicts; ``source:<n>`` (1-based, the n-th dict) names each in messages."""
    result = ImportResult(())
    for n, task in enumerate(tasks, 1):
        result = result + import_task(kb, task, f"{source}:{n}")
    return result


def _get(obj: Any, key: str, kind: type, source: str, path: str, fix: str) -> Any:
    if not isinstance(obj, dict) or key not in obj:
        raise UserInputError(f"{source}: missing field {path}; {fix}")
    value = obj[key]
    if not isinstance(value, kind):
        raise UserInputError(
            f"{source}: field {path} must be a {kind.__name__}, got {type(value).__name__}; {fix}"
        )
    return value


def from_phenopacket(
    kb: HpoKnowledgeBase,
    packet: Any,
    source: str = "<phenopacket>",
    *,
    file: str | None = None,
    line: int | None = None,
) -> ImportResult:
    """Import one Phenopacket v2 object (already parsed from JSON).

    ``file`` and ``line`` locate it in the user's file, for warnings.

    Raises:
        UserInputError: a malformed phenopacket, naming ``source``, the field and the fix.
    """
    return _from_phenopacket(kb, packet, source, Where(source, file, line))


def _from_phenopacket(kb: HpoKnowledgeBase, packet: Any, source: str, where: Where) -> ImportResult:
    if not isinstance(packet, dict):
        raise UserInputError(
            f"{source}: a phenopacket must be a JSON object, got {type(packet).__name__}"
        )
    unknown_keys = [
        (key, f"unknown key {key!r}{did_you_mean(key, PHENOPACKET_FIELDS)}")
        for key in packet
        if key not in PHENOPACKET_FIELDS
    ]
    features = packet.get("phenotypicFeatures", [])
    if not isinstance(features, list):
        raise UserInputError(
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
        unknown_keys += [
            (key, f"unknown key {key!r} in {path}{did_you_mean(key, FEATURE_FIELDS)}")
            for key in feature
            if key not in FEATURE_FIELDS
        ]
        flag = feature.get("excluded", False)
        if not isinstance(flag, bool):
            raise UserInputError(
                f"{source}: field {path}.excluded must be true or false, got {flag!r}"
            )
        (excluded if flag else present).append(tid)

    diagnosis: list[str] = []
    fix = 'give interpretations[].diagnosis.disease.id or diseases[].term.id, e.g. "OMIM:154700"'
    interpretations = packet.get("interpretations", [])
    if not isinstance(interpretations, list):
        raise UserInputError(
            f"{source}: field interpretations must be a list, got {type(interpretations).__name__}"
        )
    for i, interp in enumerate(interpretations):
        if isinstance(interp, dict) and "diagnosis" in interp:
            path = f"interpretations[{i}].diagnosis"
            disease = _get(interp["diagnosis"], "disease", dict, source, f"{path}.disease", fix)
            diagnosis.append(_get(disease, "id", str, source, f"{path}.disease.id", fix))
    diseases = packet.get("diseases", [])
    if not isinstance(diseases, list):
        raise UserInputError(
            f"{source}: field diseases must be a list, got {type(diseases).__name__}"
        )
    for i, disease in enumerate(diseases):
        term = _get(disease, "term", dict, source, f"diseases[{i}].term", fix)
        if not disease.get("excluded", False):
            diagnosis.append(_get(term, "id", str, source, f"diseases[{i}].term.id", fix))
    if not diagnosis:
        raise UserInputError(f"{source}: no diagnosis; {fix}")
    label = (
        f"{source}#{packet['id']}"
        if isinstance(packet.get("id"), str) and source.startswith("<")
        else source
    )
    row_id = packet["id"] if isinstance(packet.get("id"), str) else ""
    _check_no_control(row_id, source, "id")
    return _make_case(kb, present, excluded, diagnosis, where, label, unknown_keys, row_id=row_id)


def _check_no_control(text: str, source: str, name: str) -> None:
    """Refuse a control character (:func:`agentenv.terminal_text.control_at`) in a phenopacket's
    ``id``, the one free-text field a case keeps (as its ``row_id``, in every episode record and in
    what ``check-tasks`` prints); labels and descriptions are never read.

    Example:
        >>> _check_no_control("PMID_1_case\\u202e1", "p.json", "id")
        Traceback (most recent call last):
        ...
        agentenv.errors.UserInputError: p.json: field 'id' holds a control character U+202E at position 12; remove it
    """
    at = control_at(text)
    if at >= 0:
        raise UserInputError(
            f"{source}: field {name!r} holds a control character U+{ord(text[at]):04X} at "
            f"position {at + 1}; remove it"
        )


def load_phenopackets(
    kb: HpoKnowledgeBase, path: str | Path, *, reads: TaskSourceReads | None = None
) -> ImportResult:
    """Import a phenopacket JSON file, or every ``*.json`` under a directory (sorted, recursive).

    Each file is read within the bounds of a task source (:mod:`agentenv.engine.task_files`), as
    it is read; ``reads`` counts them for a larger source ``path`` belongs to (a folder of cases).

    Raises:
        FileNotFoundError: the path does not exist.
        UserInputError: a file that is not JSON or not a valid phenopacket, naming the file; the
            files passing a size, line or text bound.
    """
    root = Path(path)
    if not root.exists():
        raise FileNotFoundError(f"{root}: no such file or directory of phenopacket JSON files")
    files = sorted(root.rglob("*.json")) if root.is_dir() else [root]
    reads = reads or TaskSourceReads(root)
    result = ImportResult(())
    for file in files:
        with reads.open(file) as fh:  # as file.read_text(encoding="utf-8-sig"), counted
            text = fh.read()
        try:
            packet = loads_unique(text)
        except RepeatedKey as err:
            raise UserInputError(f"{file}: {err}; a phenopacket names each field once") from None
        except json.JSONDecodeError as err:
            raise UserInputError(
                f"{file}:{err.lineno}: not valid JSON ({err.msg} at column {err.colno}); "
                "a phenopacket file holds one JSON object (export it as JSON, not YAML or protobuf)"
            ) from None
        result = result + _from_phenopacket(
            kb, packet, str(file), Where(str(file), str(file), 1, text)
        )
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
