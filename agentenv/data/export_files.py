"""Read an ``export-sft`` folder back, refusing one that is not what ``export-sft`` wrote.

Why: a trainer that reads a truncated, hand-edited or half-copied export trains on it without a
word (an edited ``chat.jsonl`` whose sha256 no longer matched its manifest was accepted), or
fails deep inside TRL (an empty file gave ``StopIteration``). Every refusal here names the
file, and the line where there is one, and says what was expected.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from agentenv.data.manifest import CHAT_FILE, MANIFEST_FILE, SFTManifest
from agentenv.errors import UserInputError
from agentenv.storage.checksums import sha256_file

_ROLES = frozenset({"system", "user", "assistant", "tool"})
_MADE_BY = "a folder written by `agentenv export-sft ENV --out DIR`"


def read_manifest(directory: Path) -> dict[str, Any]:
    """The export's ``manifest.json``, checked against :class:`~agentenv.data.manifest.SFTManifest`."""
    path = directory / MANIFEST_FILE
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
    try:
        SFTManifest.model_validate(manifest, strict=True)
    except ValidationError as err:
        errors = err.errors(include_url=False)
        missing = [str(e["loc"][0]) for e in errors if e["type"] == "missing"]
        if missing:
            raise UserInputError(
                f"{path}: no {', '.join(map(repr, missing))}; expected {_MADE_BY}"
            ) from None
        where = ".".join(map(str, errors[0]["loc"]))
        raise UserInputError(f"{path}: field {where!r}: {errors[0]['msg']}; re-export") from None
    if CHAT_FILE not in manifest["files"]:
        raise UserInputError(
            f"{path}: 'files' names no sha256 for {CHAT_FILE}; expected {_MADE_BY}"
        )
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
    path = directory / CHAT_FILE
    if not path.is_file():
        raise UserInputError(f"{path}: missing; expected {_MADE_BY}")
    if sha256_file(path) != manifest["files"][CHAT_FILE]:
        raise UserInputError(
            f"{path}: changed since it was exported (its sha256 is not the one in {MANIFEST_FILE}); "
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
            f"{path}: {len(rows)} rows, but {MANIFEST_FILE} says {manifest['kept']} were kept; re-export"
        )
    if not rows:
        raise UserInputError(
            f"{path}: the export kept no episodes (see 'dropped' in {MANIFEST_FILE}); export more, "
            "or lower --min-reward"
        )
    return manifest, rows
