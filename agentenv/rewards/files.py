"""Read a reward config from a JSON or YAML file, and explain invalid ones.

Why files: a reward is part of an experiment's definition, so it belongs in a
file that is versioned next to the run, not in a command line. JSON needs
nothing extra; YAML needs PyYAML, which is optional, so its absence is a
clear error rather than an import failure deep in a stack.

Example:
    >>> import json, tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "reward.json"
    >>> _ = path.write_text(json.dumps({"preset": "efficient", "latency_cost": 0.001}))
    >>> read_reward_file(path)
    {'preset': 'efficient', 'latency_cost': 0.001}
"""

from __future__ import annotations

import io
import json
import os
import re
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from agentenv.errors import UserFileNotFound, UserInputError
from agentenv.rewards.components import closest


def read_reward_file(path: Path) -> dict[str, Any]:
    """The mapping of fields in a ``.json``, ``.yaml`` or ``.yml`` file; errors name the file."""
    if not path.exists():
        raise UserFileNotFound(f"reward config file {path} does not exist")
    if not path.is_file():
        raise ValueError(f"{path}: not a regular file; a reward config is a .json or .yaml file")
    if path.stat().st_size > MAX_REWARD_FILE_BYTES:
        raise _too_large(path, path.stat().st_size)
    with path.open("rb") as f:  # bounded as read: a file that grew after the stat is not read whole
        raw = f.read(MAX_REWARD_FILE_BYTES + 1)
        if len(raw) > MAX_REWARD_FILE_BYTES:
            raise _too_large(path, os.fstat(f.fileno()).st_size)
    try:  # decoded as path.read_text(encoding="utf-8") decodes (universal newlines)
        text = io.TextIOWrapper(io.BytesIO(raw), encoding="utf-8").read()
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    if path.suffix not in (".json", ".yaml", ".yml"):
        raise ValueError(f"{path}: a reward config file must end in .json, .yaml or .yml")
    _check_digit_runs(path, text)
    data = _load_json(path, text) if path.suffix == ".json" else _load_yaml(path, text)
    if not isinstance(data, Mapping):
        raise ValueError(
            f"{path}: a reward config file must hold a mapping of fields, got {type(data).__name__}"
        )
    return dict(data)


def _too_large(path: Path, size: int) -> ValueError:
    """The refusal of a reward file past :data:`MAX_REWARD_FILE_BYTES` (``size``: as ``stat`` gives it,
    which for a file that grows as it is read may still be the smaller size)."""
    shown = (
        f"{size:,} bytes"
        if size > MAX_REWARD_FILE_BYTES
        else f"more than {MAX_REWARD_FILE_BYTES:,} bytes"
    )
    return ValueError(
        f"{path}: {shown}; a reward config is at most {MAX_REWARD_FILE_BYTES:,} (a handful of fields)"
    )


MAX_REWARD_FILE_BYTES = 65_536
"""The largest reward config file read: a config is a handful of fields."""

MAX_REWARD_DEPTH = 8
"""The deepest nesting of mappings and lists read. A reward config is a flat mapping, two levels
at most (``weights: {name: number}``); the slack lets a list where a dict belongs reach the
field check, which explains it. Deeper text never reaches a parser: 60 KB of ``[`` made PyYAML
run for minutes (its time grows with the square of the depth) and ``json`` raise
``RecursionError``."""

MAX_YAML_BRACKETS = 64
"""The most flow collections (``[`` and ``{``, counted anywhere, quoted or not) a YAML reward file
may open. Why a count as well as a depth: PyYAML's scanner looks up to 1,024 characters ahead at
a cost that grows with the depth it sees there, before any depth check can stop it; a config
opens one or two."""

MAX_NUMBER_DIGITS = 100
"""The longest run of digits read. A reward's numbers are weights and rates (``0.05``); Python
refuses to turn an integer of more than 4,300 digits into text, or text into one."""

_JSON_SYNTAX = re.compile(r'[\[\]{}"\\\n]')
_DIGIT_RUN = re.compile(rf"(?<![0-9])[0-9]{{{MAX_NUMBER_DIGITS + 1}}}")


def _line_of(text: str, index: int) -> int:
    return text.count("\n", 0, index) + 1


def _check_digit_runs(path: Path, text: str) -> None:
    """Refuse a run of digits longer than :data:`MAX_NUMBER_DIGITS`, naming its line, before a
    parser turns it into an ``int`` (a ``ValueError`` past 4,300 digits, with no file named)."""
    long = _DIGIT_RUN.search(text)
    if long is not None:
        raise UserInputError(
            f"{path}:{_line_of(text, long.start())}: a number of more than {MAX_NUMBER_DIGITS} "
            "digits; a reward config's numbers are weights and rates, such as 0.05"
        )


def _too_deep(path: Path, line: int) -> UserInputError:
    return UserInputError(
        f"{path}:{line}: nested more than {MAX_REWARD_DEPTH} levels deep; a reward config is a "
        "flat mapping of fields, at most two levels (weights: {name: number}); nothing was parsed"
    )


def json_depth_passed(text: str, limit: int) -> int | None:
    """The line where brackets outside JSON strings first nest deeper than ``limit``, or None.

    One linear pass, so it runs before the parser: ``json`` recurses once per level. It follows
    JSON's strings (``"`` to ``"``, ``\\`` escaping the next character), so a bracket in a
    string is not counted. Where the text is not JSON the count may be off, but only past the
    point where ``json`` stops with an error anyway.

    Example:
        >>> json_depth_passed('{"w": {"a": [1]}}', 2), json_depth_passed('{"w": "[[[["}', 1)
        (1, None)
    """
    depth, line, in_string, escaped = 0, 1, False, -1
    for match in _JSON_SYNTAX.finditer(text):
        char, at = match.group(), match.start()
        if char == "\n":
            line += 1
        elif at == escaped:
            continue
        elif in_string:
            if char == "\\":
                escaped = at + 1
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            if depth > limit:
                return line
        elif char in "]}":
            depth = max(depth - 1, 0)
    return None


def _load_json(path: Path, text: str) -> Any:
    """The decoded JSON, its depth checked first (:func:`json_depth_passed`)."""
    line = json_depth_passed(text, MAX_REWARD_DEPTH)
    if line is not None:
        raise _too_deep(path, line)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(
            f"{path}: invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}"
        ) from None
    except ValueError as exc:  # a conversion the decoder refuses (none is known past the checks)
        raise UserInputError(f"{path}: invalid JSON: {str(exc)[:200]}") from None


def _check_yaml_brackets(path: Path, text: str) -> None:
    """Refuse YAML text opening more than :data:`MAX_YAML_BRACKETS` flow collections, naming the
    line of the first one past it; nothing of such text reaches PyYAML."""
    for count, match in enumerate(re.finditer(r"[\[{]", text), start=1):
        if count > MAX_YAML_BRACKETS:
            raise UserInputError(
                f"{path}:{_line_of(text, match.start())}: more than {MAX_YAML_BRACKETS} '[' and "
                "'{' in the file; a reward config is a flat mapping of fields, at most two "
                "levels (weights: {name: number}); nothing was parsed"
            )


def _check_yaml_events(path: Path, text: str, yaml: Any) -> None:
    """Walk PyYAML's parse events (no recursion, no values built) and stop at the first alias or
    the first collection deeper than :data:`MAX_REWARD_DEPTH`: building the values recurses once
    per level (``RecursionError`` at a few hundred ``- `` on one line) and aliases multiply."""
    depth = 0
    for event in yaml.parse(text, yaml.SafeLoader):
        if isinstance(event, yaml.AliasEvent):
            raise UserInputError(
                f"{path}: YAML aliases (*name) are not read: nine lines of nested aliases expand "
                "to gigabytes; write each value out"
            )
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_REWARD_DEPTH:
                raise _too_deep(path, event.start_mark.line + 1)
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1


def _load_yaml(path: Path, text: str) -> Any:
    """The loaded YAML, its structure bounded first, every failure naming the file."""
    try:
        import yaml
    except ImportError:
        raise ImportError(
            f"reading {path} needs PyYAML: pip install pyyaml, or write the config as JSON"
        ) from None
    _check_yaml_brackets(path, text)
    try:
        _check_yaml_events(path, text, yaml)
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ValueError(f"{path}: invalid YAML: {exc}") from None
    except UserInputError:
        raise
    except (ValueError, OverflowError) as exc:  # a value PyYAML cannot build (1:2:...:3.5 floats)
        raise UserInputError(
            f"{path}: a value YAML cannot build ({str(exc)[:200]}); a reward config's values "
            "are numbers such as 0.05, names and true/false"
        ) from None


def _shown(value: Any) -> str:
    """``repr(value)``, cut to 200 characters: a bad value 2 GB long was repeated in the message.

    An integer too long for ``repr`` (past 4,300 digits: YAML builds one from ``0x`` and 60,000
    hex digits) is described by its size instead of raising from inside the explanation.
    """
    limit = sys.get_int_max_str_digits()  # 0: no limit
    if limit and isinstance(value, int) and value.bit_length() > 3 * limit:  # 3 bits < 1 digit
        return f"an integer of {value.bit_length():,} bits"
    text = repr(value)
    return text if len(text) <= 200 else f"{text[:200]}... ({len(text):,} characters)"


def explain(exc: ValidationError, fields: Iterable[str]) -> str:
    """One line per invalid field: the field's name, what is wrong, and the value given."""
    parts = []
    for e in exc.errors(include_url=False):
        where = ".".join(str(p) for p in e["loc"])
        if e["type"] == "extra_forbidden":
            hint = closest(where, fields)
            parts.append(
                f"field {where!r}: unknown field" + (f"; did you mean {hint!r}?" if hint else "")
            )
            continue
        msg = e["msg"].removeprefix("Value error, ")
        given = (
            "" if e["type"] in ("missing", "value_error") else f" (got {_shown(e.get('input'))})"
        )
        parts.append(f"field {where!r}: {msg}{given}" if e["loc"] else msg)
    return "; ".join(parts)
