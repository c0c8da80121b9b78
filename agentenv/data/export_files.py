"""Read an ``export-sft`` folder back, refusing one that is not what ``export-sft`` wrote.

Why: a trainer that reads a truncated, hand-edited or half-copied export trains on it without a
word (an edited ``chat.jsonl`` whose sha256 no longer matched its manifest was accepted), or
fails deep inside TRL (an empty file gave ``StopIteration``). Every refusal here names the
file, and the line where there is one, and says what was expected.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from agentenv.errors import UserInputError

MANIFEST = "manifest.json"
CHAT = "chat.jsonl"
_MANIFEST_KEYS = ("env_id", "split", "agent", "reasoning", "kept", "files")
_ROLES = frozenset({"system", "user", "assistant", "tool"})
_MADE_BY = "a folder written by `agentenv export-sft ENV --out DIR`"


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def read_manifest(directory: Path) -> dict[str, Any]:
    """The export's ``manifest.json``, with the fields a reader needs."""
    path = directory / MANIFEST
    if not directory.is_dir():
        raise UserInputError(f"{directory}: no such folder; expected {_MADE_BY}")
    if not path.is_file():
        raise UserInputError(f"{path}: missing; expected {_MADE_BY}")
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as err:
        raise UserInputError(
            f"{path}: not a JSON manifest ({type(err).__name__}); re-export"
        ) from None
    if not isinstance(manifest, dict):
        raise UserInputError(f"{path}: expected a JSON object, got {type(manifest).__name__}")
    missing = [key for key in _MANIFEST_KEYS if key not in manifest]
    if missing:
        raise UserInputError(f"{path}: no {', '.join(map(repr, missing))}; expected {_MADE_BY}")
    files = manifest["files"]
    if not isinstance(files, dict) or not isinstance(files.get(CHAT), str):
        raise UserInputError(f"{path}: 'files' names no sha256 for {CHAT}; expected {_MADE_BY}")
    if not isinstance(manifest["kept"], int) or isinstance(manifest["kept"], bool):
        raise UserInputError(f"{path}: 'kept' must be a count, got {manifest['kept']!r}")
    return manifest


def _check_row(row: Any, where: str) -> dict[str, Any]:
    messages = row.get("messages") if isinstance(row, dict) else None
    if not isinstance(messages, list) or not messages:
        raise UserInputError(f"{where}: expected a chat row {{'messages': [...], 'tools': [...]}}")
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") not in _ROLES:
            raise UserInputError(
                f"{where}: messages[{i}] must be an object with a role of "
                f"{', '.join(sorted(_ROLES))}"
            )
        for j, call in enumerate(message.get("tool_calls") or []):
            function = call.get("function") if isinstance(call, dict) else None
            if not isinstance(function, dict) or not isinstance(function.get("name"), str):
                raise UserInputError(
                    f"{where}: messages[{i}].tool_calls[{j}] needs a 'function' with a 'name'"
                )
    return row


def read_export(directory: str | Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(manifest, chat rows) of an export, its ``chat.jsonl`` checked against the manifest's
    sha256 and row count.

    Raises:
        UserInputError: naming the file (and line) that is not what ``export-sft`` wrote.
    """
    directory = Path(directory)
    manifest = read_manifest(directory)
    path = directory / CHAT
    if not path.is_file():
        raise UserInputError(f"{path}: missing; expected {_MADE_BY}")
    if _sha256(path) != manifest["files"][CHAT]:
        raise UserInputError(
            f"{path}: changed since it was exported (its sha256 is not the one in {MANIFEST}); "
            "re-export it (the manifest's counts and task ids would no longer describe an edited file)"
        )
    rows = []
    with path.open(encoding="utf-8") as fh:
        for number, line in enumerate(fh, 1):
            if line.strip():
                where = f"{path}:{number}"
                try:
                    row = json.loads(line)
                except (json.JSONDecodeError, RecursionError):
                    raise UserInputError(f"{where}: not valid JSON; re-export") from None
                rows.append(_check_row(row, where))
    if len(rows) != manifest["kept"]:
        raise UserInputError(
            f"{path}: {len(rows)} rows, but {MANIFEST} says {manifest['kept']} were kept; re-export"
        )
    if not rows:
        raise UserInputError(
            f"{path}: the export kept no episodes (see 'dropped' in {MANIFEST}); export more, "
            "or lower --min-reward"
        )
    return manifest, rows
