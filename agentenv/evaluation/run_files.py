"""Reading a run's files safely, and the digest chain that lets a run verify itself.

Why: ``--resume`` and ``agentenv leaderboard`` read files that anyone could
have edited, truncated, pasted into or replaced. A leaderboard is only worth
what its rows prove, so each ``episodes.jsonl`` row carries a digest that
chains it to the row before it and to the run's *header* (env id and kwargs,
agent, split, task set, seed, package version and the env's fingerprint), and
every read here is bounded and explains itself:

* only regular files are opened (``os.stat`` first: a FIFO or a device in
  place of ``episodes.jsonl`` or ``summary.json`` is refused at once, never
  opened);
* a JSON file is at most :data:`MAX_JSON_BYTES` and a line at most
  :data:`MAX_LINE_BYTES`, read with a bound (a 200 MB line is never loaded);
* every malformed input (bad JSON, nesting too deep, a list where an object
  belongs, a cut or edited digest) is a :class:`RunFileError` naming the file
  and line, in one line.

The chain. Row ``i`` is the record's JSON with ``"digest"`` as its last key::

    {"episode": 0, ..., "digest": "<sha256 hex>"}

where ``digest_i = sha256(digest_{i-1} + "\\n" + body_i)``, ``body_i`` is the
line's bytes with the digest entry cut out, and ``digest_{-1}`` is the
header's digest (:func:`header_digest`). It depends on nothing but the header
and the rows, never on wall time, so a resumed run stays byte-identical to an
uninterrupted one. An edited row, a row cut out or moved, or a row pasted from
another run (another env, seed or task set) breaks the chain at that row.

What it is not: a signature. Anyone can recompute a sha256, so the chain
catches edits, accidents and mix-ups, not a forger who rewrites every digest
after them; sign or publish the final digest (``summary.json``'s
``episodes_digest``) where that matters.

Example:
    >>> h = header_digest({"env_id": "MediaSearch-v0", "seed": 0})
    >>> line = chain_line('{"episode": 0, "reward": 1.0}\\n', h)
    >>> line.startswith('{"episode": 0, "reward": 1.0, "digest": "')
    True
    >>> body, digest = split_digest(line.encode())
    >>> body == b'{"episode": 0, "reward": 1.0}', digest == row_digest(h, body)
    (True, True)
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from agentenv.errors import UserInputError

__all__ = [
    "DIGEST_FORMAT",
    "MAX_JSON_BYTES",
    "MAX_LINE_BYTES",
    "RunFileError",
    "chain_line",
    "header_digest",
    "iter_lines",
    "parse_object",
    "read_json_object",
    "require_regular",
    "row_digest",
    "shown_value",
    "split_digest",
]

DIGEST_FORMAT = "agentenv-run-digest/1"
"""Names the chain's rules; it goes into the header, so a change of rules cannot verify old rows."""
MAX_JSON_BYTES = 16 * 1024 * 1024
"""Largest ``summary.json`` or ``run.json`` read (a real one is a few KB)."""
MAX_LINE_BYTES = 8 * 1024 * 1024
"""Longest ``episodes.jsonl`` line read (a 64-turn transcript of 32 KB actions stays well under it)."""

_DIGEST_TAIL = re.compile(rb', "digest": "([0-9a-f]{64})"\}\n?$')


class RunFileError(UserInputError):
    """A run file that cannot be trusted or read; the message names the file (and line) and the fix."""


def require_regular(path: Path) -> os.stat_result:
    """``os.stat`` of ``path`` (following links) when it is a regular file; anything else is refused
    before it is opened (a FIFO would block the reader forever).

    Raises:
        FileNotFoundError: there is nothing at ``path``.
        RunFileError: a folder, FIFO, socket or device.
    """
    info = os.stat(path)
    if not stat.S_ISREG(info.st_mode):
        kind = (
            "a folder"
            if stat.S_ISDIR(info.st_mode)
            else "a FIFO"
            if stat.S_ISFIFO(info.st_mode)
            else "a socket"
            if stat.S_ISSOCK(info.st_mode)
            else "a device or special file"
        )
        raise RunFileError(f"{path}: {kind}, not a regular file; refusing to read it")
    return info


def _open_regular(path: Path) -> Any:
    require_regular(path)
    # Non-blocking: a file that stat calls regular but whose reads block (/proc/kmsg) answers
    # EAGAIN instead of hanging the reader; an ordinary file reads as it always does.
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    f = os.fdopen(fd, "rb")
    if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):  # replaced between stat and open
        f.close()
        raise RunFileError(f"{path}: not a regular file; refusing to read it")
    return f


def parse_object(raw: bytes, where: str, what: str = "a JSON object") -> dict[str, Any]:
    """``raw`` as a JSON object; anything else is a one-line :class:`RunFileError` naming ``where``."""
    try:
        # Decoded here, not by json: json.loads reads bytes starting b"\xff\xfe" as UTF-16, so a
        # file that is not UTF-8 was called "not JSON (Expecting value)" or even read.
        value = json.loads(raw.decode("utf-8-sig"))
    except RecursionError:
        raise RunFileError(f"{where}: JSON nested too deeply to be {what}") from None
    except UnicodeDecodeError:
        raise RunFileError(f"{where}: not UTF-8 text") from None
    except ValueError as err:
        msg = getattr(err, "msg", str(err))
        col = getattr(err, "colno", None)
        raise RunFileError(
            f"{where}: not JSON ({msg}" + (f", column {col})" if col else ")")
        ) from None
    if not isinstance(value, dict):
        raise RunFileError(f"{where}: a JSON {_json_kind(value)} where {what} belongs")
    return value


def _json_kind(value: Any) -> str:
    return {list: "list", str: "string", bool: "boolean", type(None): "null"}.get(
        type(value), "number"
    )


def read_json_object(path: Path, what: str) -> dict[str, Any]:
    """A small JSON file (``summary.json``, ``run.json``) as an object, read within :data:`MAX_JSON_BYTES`.

    Raises:
        FileNotFoundError: no file at ``path``.
        RunFileError: not a regular file, too large, not JSON, or not an object (naming the line).
    """
    with _open_regular(path) as f:
        raw = f.read(MAX_JSON_BYTES + 1)
    if raw is None:  # non-blocking read with nothing to give: a kernel file such as /proc/kmsg
        raise RunFileError(f"{path}: reading it would block; not an ordinary file, refusing it")
    if len(raw) > MAX_JSON_BYTES:
        raise RunFileError(
            f"{path}: larger than {_size(MAX_JSON_BYTES)}; not {what} written by agentenv"
        )
    try:
        value = json.loads(raw.decode("utf-8-sig"))  # decoded here: see parse_object
    except RecursionError:
        raise RunFileError(f"{path}: JSON nested too deeply to be {what}") from None
    except UnicodeDecodeError:
        raise RunFileError(f"{path}: not UTF-8 text, not {what}") from None
    except ValueError as err:
        line = getattr(err, "lineno", None)
        where = f"{path} line {line}" if line else str(path)
        raise RunFileError(f"{where}: not JSON ({getattr(err, 'msg', err)})") from None
    if not isinstance(value, dict):
        raise RunFileError(f"{path} line 1: a JSON {_json_kind(value)} where {what} belongs")
    return value


def iter_lines(
    path: Path, what: str = "an episode record written by agentenv"
) -> Iterator[tuple[int, bytes]]:
    """``(line number, bytes)`` for each line of ``path``, each read within :data:`MAX_LINE_BYTES`.

    The last line may lack its newline (a run killed mid-write): the caller decides. A longer line is
    refused without being read whole, as not ``what``.
    """
    with _open_regular(path) as f:
        number = 0
        while True:
            raw = f.readline(MAX_LINE_BYTES + 1)
            if not raw:
                return
            number += 1
            if len(raw) > MAX_LINE_BYTES:
                raise RunFileError(
                    f"{path} line {number}: longer than {_size(MAX_LINE_BYTES)}; not {what}"
                )
            yield number, raw


def _size(n: int) -> str:
    return f"{n / 2**20:g} MB" if n >= 2**20 else f"{n:,} bytes"


def _canonical(value: Any) -> bytes:
    return json.dumps(
        value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False
    ).encode("utf-8")


def header_digest(header: Mapping[str, Any]) -> str:
    """The chain's root: sha256 of the header's canonical JSON (sorted keys, no spaces) and the rules' name."""
    return hashlib.sha256(DIGEST_FORMAT.encode() + b"\n" + _canonical(dict(header))).hexdigest()


def row_digest(previous: str, body: bytes) -> str:
    """``sha256(previous + "\\n" + body)``: one link of the chain."""
    return hashlib.sha256(previous.encode("ascii") + b"\n" + body).hexdigest()


def chain_line(line: str, previous: str) -> str:
    """An ``episodes.jsonl`` line (one JSON object and a newline) with its digest added as the last key."""
    body = line[:-1] if line.endswith("\n") else line
    if not body.endswith("}") or body == "{}":
        raise ValueError(f"not a one-line JSON record: {body[:80]!r}")
    digest = row_digest(previous, body.encode("utf-8"))
    return f'{body[:-1]}, "digest": "{digest}"}}\n'


def split_digest(raw: bytes) -> tuple[bytes, str] | None:
    """``(body, digest)`` of a chained line (``body`` as it was hashed), or None when it carries no digest
    in the place :func:`chain_line` puts it."""
    match = _DIGEST_TAIL.search(raw)
    if match is None:
        return None
    return raw[: match.start()] + b"}", match.group(1).decode("ascii")


def shown_value(value: Any) -> str:
    """``value`` as JSON for an error message, cut to 120 characters.

    Example:
        >>> shown_value({"b": 1, "a": [2]}), shown_value("x" * 200)[-5:]
        ('{"a": [2], "b": 1}', 'xx...')
    """
    text = json.dumps(value, default=str, sort_keys=True)
    return text if len(text) <= 120 else text[:117] + "..."
