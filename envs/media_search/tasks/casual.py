"""The ``casual`` evaluation split: hand-written MediaSearch questions as people type them.

Why a hand-written split: generated questions, however varied, share their
generator's habits, and a baseline tuned on them can look 3-10x better than it
serves people (issue 30). These questions were written by hand, apart from the
generator's templates: lower case, typos, partial titles, films described by
year, cast, genre or director instead of named, commands, asides and
self-corrections. It is an evaluation split only (``split="casual"``,
``agentenv eval --split casual``); nothing trains on it.

Each row carries a gold tool plan and an ``extract`` rule like a generated
question, so the oracle reads every answer out of the real tool outputs
(``tests/envs/media_search/test_casual.py`` replays all of them, and checks
that every ``filter_titles`` step that names a film matches that film alone).
The file's sha256 is pinned (:data:`CASUAL_SHA256`): an edited file is an
error, so results on two versions of the set are never compared.

Row format (one JSON object per line; only these fields)::

    {"question": "who directed jaws", "answer": "Steven Spielberg", "aliases": [],
     "answer_type": "person", "kind": "lookup",
     "plan": [{"tool": "search", "arguments": {...}}, ...], "extract": {"op": "field", ...}}
"""

from __future__ import annotations

import hashlib
import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from agentenv.envs.media_search.questions.record import Question, question_id

CASUAL_FILE = Path(__file__).with_name("casual_questions.jsonl")
CASUAL_SHA256 = "0f47e75410b1ba9ef9d71114a15494b24b0d065ee1800b98700779f9fdcc3c61"
"""sha256 of :data:`CASUAL_FILE` (257 questions); a result records it as the split's checksum."""
CASUAL_SPLIT = "casual"

_FIELDS = frozenset({"question", "answer", "aliases", "answer_type", "kind", "plan", "extract"})
_ANSWER_TYPES = frozenset({"title", "person", "number", "year"})
_KINDS = frozenset({"lookup", "constraint", "superlative", "two_hop", "comparison", "count"})
_TOOLS = frozenset({"search", "filter_titles", "get_title", "find_person"})
_OPS = frozenset({"field", "only", "argmin", "argmax", "member"})


def _check_row(row: Any, where: str) -> dict[str, Any]:
    """Validate one row against the allow-list of fields and values; ``ValueError`` naming ``where``."""
    if not isinstance(row, dict) or set(row) != _FIELDS:
        got = sorted(row) if isinstance(row, dict) else type(row).__name__
        raise ValueError(
            f"{where}: a casual row has exactly the fields {sorted(_FIELDS)}, got {got}"
        )
    if not isinstance(row["question"], str) or not row["question"].strip():
        raise ValueError(f"{where}: 'question' must be a non-empty string")
    if not isinstance(row["answer"], str) or not row["answer"].strip():
        raise ValueError(f"{where}: 'answer' must be a non-empty string")
    if not isinstance(row["aliases"], list) or not all(
        isinstance(a, str) and a for a in row["aliases"]
    ):
        raise ValueError(f"{where}: 'aliases' must be a list of non-empty strings")
    if row["answer_type"] not in _ANSWER_TYPES:
        raise ValueError(f"{where}: 'answer_type' must be one of {sorted(_ANSWER_TYPES)}")
    if row["kind"] not in _KINDS:
        raise ValueError(f"{where}: 'kind' must be one of {sorted(_KINDS)}")
    plan = row["plan"]
    if (
        not isinstance(plan, list)
        or not plan
        or not all(
            isinstance(s, dict)
            and set(s) == {"tool", "arguments"}
            and s["tool"] in _TOOLS
            and isinstance(s["arguments"], dict)
            for s in plan
        )
    ):
        raise ValueError(
            f"{where}: 'plan' must be a non-empty list of {{'tool', 'arguments'}} steps of {sorted(_TOOLS)}"
        )
    if not isinstance(row["extract"], dict) or row["extract"].get("op") not in _OPS:
        raise ValueError(
            f"{where}: 'extract' must be an object whose 'op' is one of {sorted(_OPS)}"
        )
    return row


def casual_checksum(path: Path | None = None) -> str:
    """The sha256 of a casual question file's bytes (default: :data:`CASUAL_FILE`)."""
    return hashlib.sha256((path or CASUAL_FILE).read_bytes()).hexdigest()


@lru_cache(maxsize=1)
def casual_questions() -> tuple[Question, ...]:
    """The shipped casual questions, in file order; a file that differs from the pinned one raises.

    Raises:
        RuntimeError: the file's sha256 is not :data:`CASUAL_SHA256`.
        ValueError: a row outside the allow-list (see :func:`_check_row`).
    """
    found = casual_checksum()
    if found != CASUAL_SHA256:
        raise RuntimeError(
            f"{CASUAL_FILE} has sha256 {found}, not the pinned {CASUAL_SHA256}: the casual split "
            "was edited; results on it would not compare with published ones"
        )
    out: list[Question] = []
    for lineno, line in enumerate(CASUAL_FILE.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        row = _check_row(json.loads(line), f"{CASUAL_FILE.name}:{lineno}")
        out.append(
            Question(
                id=question_id(row["kind"], row["question"], row["answer"]),
                question=row["question"],
                answer=row["answer"],
                aliases=tuple(row["aliases"]),
                answer_type=row["answer_type"],
                kind=row["kind"],
                difficulty="casual",
                plan=tuple(row["plan"]),
                extract=row["extract"],
                split=CASUAL_SPLIT,
                group=f"casual:{lineno}",
            )
        )
    return tuple(out)
