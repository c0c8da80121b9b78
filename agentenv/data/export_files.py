"""Read an ``export-sft`` folder back, refusing one that is not what ``export-sft`` wrote.

Why: a trainer that reads a truncated, hand-edited or half-copied export trains on it without a
word (an edited ``chat.jsonl`` whose sha256 no longer matched its manifest was accepted), or
fails deep inside TRL (an empty file gave ``StopIteration``). Every refusal here names the
file, and the line where there is one, and says what was expected.

The ``--out`` checks of the export commands (``export-sft``'s folder, ``prepare-verl``'s parquet
file) live here too, beside the reader of what they write: :func:`refuse_out_node`,
:func:`refuse_out_over_inputs` and :func:`refuse_non_export`. Why: ``--overwrite`` replaces the
whole ``--out``, so it must see the node itself (a FIFO, a device, a link), the inputs the command
reads (a task file inside the folder), and every file a folder holds (the user's notes beside an
export) before it may replace anything.
"""

from __future__ import annotations

import errno
import json
import os
import stat
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import ValidationError

from agentenv.data.manifest import CHAT_FILE, MANIFEST_FILE, TOKENS_FILE, SFTManifest
from agentenv.errors import UserInputError
from agentenv.storage.checksums import sha256_file

_ROLES = frozenset({"system", "user", "assistant", "tool"})
_MADE_BY = "a folder written by `agentenv export-sft ENV --out DIR`"
EXPORT_FILES = (CHAT_FILE, TOKENS_FILE, MANIFEST_FILE)
"""Every file ``export-sft`` writes in its folder: all that ``--overwrite`` may replace."""
_NODE_KINDS: tuple[tuple[Callable[[int], bool], str], ...] = (
    (stat.S_ISREG, "a file"),
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


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


def node_kind(path: Path) -> str | None:
    """What ``path`` is, in words, its last link not followed; None when nothing is there.

    Why: ``os.replace`` onto a FIFO, a device or a link replaces that node itself (``--out
    /dev/full --overwrite`` replaced the device), so an output check must look at the node, not
    at what it leads to.

    Example:
        >>> node_kind(Path("/")), node_kind(Path("/no/such/path"))
        ('a folder', None)
    """
    try:
        mode = os.lstat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return None
    if stat.S_ISLNK(mode):
        return _link_kind(path)
    return next((kind for test, kind in _NODE_KINDS if test(mode)), "a special file")


def _link_kind(path: Path) -> str:
    """A symbolic link in words: where it leads, or that it leads nowhere."""
    try:
        os.stat(path)
    except OSError as err:
        if err.errno == errno.ELOOP:
            return "a symbolic link loop"
        return f"a symbolic link to nothing ({os.readlink(path)})"
    return f"a symbolic link to {os.path.realpath(path)}"


def refuse_out_node(out: Path, want: Literal["file", "folder"], flag: str = "--out") -> None:
    """Refuse an existing ``out`` that is not a plain ``want`` (a link, a FIFO, a device), naming it.

    Why: the command writes beside ``out`` and renames its result onto it; a link would be
    replaced by the result (the folder or file it leads to left as it was), a FIFO or a device
    node deleted.

    Raises:
        UserInputError: one line naming ``out``, what it is and the fix.
    """
    kind = node_kind(out)
    if kind is None or kind == f"a {want}":
        return
    target = Path(os.path.realpath(out))
    if kind.startswith("a symbolic link to /") and node_kind(target) == f"a {want}":
        fix = f"name the {want} it leads to ({target}) instead, or another path"
    else:
        fix = f"name a new path (or an existing {want})"
    raise UserInputError(f"{flag} {out} is {kind}, not a {want}; {fix}")


def refuse_out_over_inputs(
    out: Path, inputs: Mapping[str, Path | None], flag: str = "--out"
) -> None:
    """Refuse an ``out`` that is, holds or lies inside one of ``inputs`` ({flag: path}), compared
    as resolved paths (links followed).

    Why: ``--overwrite`` replaces ``out`` whole, so a task file inside it (the one the export
    just read, which its manifest names) was deleted with the old export, and ``prepare-verl
    --tasks t.parquet --out t.parquet`` replaced the task file with rows.

    Raises:
        UserInputError: one line naming ``out``, the input and the fix.
    """
    where = Path(os.path.realpath(out))
    for name, path in inputs.items():
        if path is None:
            continue
        source = Path(os.path.realpath(path))
        if source == where:
            relation = "is"
        elif where in source.parents:
            relation = "holds"
        elif source in where.parents:
            relation = "lies inside"
        else:
            continue
        raise UserInputError(
            f"{flag} {out} {relation} the {name} input {path}; write to another {flag}, "
            f"away from what the command reads"
        )


def refuse_non_export(out: Path, *, overwrite: bool) -> None:
    """Refuse an ``export-sft --out`` folder that holds anything but a previous export's files
    (:data:`EXPORT_FILES`, with its manifest), and an export unless ``overwrite``.

    Why: ``--overwrite`` replaces the whole folder, so a user's ``notes.txt`` beside an export
    went with it; ``--out .`` in a project must not delete the project.

    Raises:
        UserInputError: one line naming ``out`` and one file that is not the export's.
    """
    if node_kind(out) != "a folder":
        return
    names = sorted(entry.name for entry in os.scandir(out))
    if not names:
        return
    foreign = next((name for name in names if not _export_file(out / name)), None)
    if foreign is None and MANIFEST_FILE not in names:
        foreign = names[0]  # export file names without a manifest: not an export either
    if foreign is not None:
        raise UserInputError(
            f"--out {out} holds files that are not an SFT export ({foreign}); give a new or empty --out "
            f"(--overwrite replaces only a folder holding nothing but an export's "
            f"{', '.join(EXPORT_FILES)})"
        )
    if not overwrite:
        raise UserInputError(
            f"--out {out} already holds an export; pass --overwrite to replace it, or choose another --out"
        )


def _export_file(path: Path) -> bool:
    """Whether ``path`` could be a file ``export-sft`` wrote: one of its names, a plain file."""
    return path.name in EXPORT_FILES and node_kind(path) == "a file"
