"""Read the ``tasks=`` argument of the rare-disease env: your own patients instead of a split.

Accepted, so that ``agentenv eval --tasks PATH`` and ``gym.make(..., tasks=...)``
take what researchers have at hand:

* a ``.jsonl`` file of task dicts ``{"phenotypes": [...], "excluded"?: [...],
  "diagnosis": [...], "id"?: str}``, one per line (blank lines allowed);
* a GA4GH Phenopacket v2 ``.json`` file, or a directory of them (recursive);
* a list whose items are task dicts or phenopacket dicts (a dict with
  ``phenotypicFeatures``), or :class:`~agentenv.envs.rare_disease.patients.Patient` objects.

The reading itself is :mod:`agentenv.envs.rare_disease.phenopackets`: ids are
mapped and unknown ones reported; cases outside the universe are skipped and
counted. Malformed input raises ``ValueError`` naming the file, line or item,
the field and the fix.

Example:
    >>> is_phenopacket({"phenotypicFeatures": []}), is_phenopacket({"phenotypes": []})
    (True, False)
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from agentenv.corpora.hpo import HpoKnowledgeBase
from agentenv.envs.rare_disease.patients import Patient
from agentenv.envs.rare_disease.phenopackets import (
    ImportResult,
    from_phenopacket,
    import_task,
    load_phenopackets,
)

UserTasks = str | Path | Sequence[Mapping[str, Any] | Patient]
FORMATS = (
    "a .jsonl file of task dicts, a phenopacket .json file or directory, "
    "or a list of task dicts, phenopacket dicts or Patient objects"
)


def is_phenopacket(obj: Mapping[str, Any]) -> bool:
    """A dict is read as a phenopacket when it has phenopacket fields and no task-dict fields."""
    return "phenotypes" not in obj and (
        "phenotypicFeatures" in obj or "interpretations" in obj or "diseases" in obj
    )


def read_jsonl(path: Path) -> list[Any]:
    """The JSON values of a JSONL file; a bad line raises ValueError naming file and line."""
    rows = []
    with path.open(encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as err:
                raise ValueError(f"{path}:{n}: not valid JSON ({err.msg}); write one task object per line") from None
    return rows


def load_user_patients(kb: HpoKnowledgeBase, tasks: UserTasks) -> ImportResult:
    """Import the patients of ``tasks`` (see the module docstring).

    Raises:
        ValueError: unreadable or malformed input, or an unsupported type.
        FileNotFoundError: a path that does not exist.
    """
    if isinstance(tasks, (str, Path)):
        path = Path(tasks)
        if not path.exists():
            raise FileNotFoundError(f"tasks={str(tasks)!r}: no such file or directory; give {FORMATS}")
        if path.is_file() and path.suffix == ".jsonl":
            return _import_items(kb, read_jsonl(path), str(path))
        if path.is_dir() or path.suffix == ".json":
            return load_phenopackets(kb, path)
        raise ValueError(f"tasks={str(tasks)!r}: unknown file type {path.suffix!r}; give {FORMATS}")
    if isinstance(tasks, Mapping) or not isinstance(tasks, Sequence):
        raise ValueError(f"tasks must be {FORMATS}; got {type(tasks).__name__}")
    return _import_items(kb, list(tasks), "tasks")


def _import_items(kb: HpoKnowledgeBase, items: list[Any], source: str) -> ImportResult:
    result = ImportResult(())
    for n, item in enumerate(items, 1):
        where = f"{source}:{n}" if source != "tasks" else f"tasks[{n - 1}]"
        if isinstance(item, Patient):
            if not kb.in_universe(item.disease_id):
                raise ValueError(f"{where}: diagnosis {item.disease_id!r} is not in the {kb.universe!r} universe")
            result = result + ImportResult((item,))
        elif isinstance(item, Mapping) and is_phenopacket(item):
            result = result + from_phenopacket(kb, dict(item), where)
        else:
            result = result + import_task(kb, item if not isinstance(item, Mapping) else dict(item), where)
    return result
