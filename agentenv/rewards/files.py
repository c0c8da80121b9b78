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
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from agentenv.errors import UserFileNotFound
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
    if path.suffix == ".json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(
                f"{path}: invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}"
            ) from None
    elif path.suffix in (".yaml", ".yml"):
        data = _load_yaml(path, text)
    else:
        raise ValueError(f"{path}: a reward config file must end in .json, .yaml or .yml")
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


def _load_yaml(path: Path, text: str) -> Any:
    try:
        import yaml
    except ImportError:
        raise ImportError(
            f"reading {path} needs PyYAML: pip install pyyaml, or write the config as JSON"
        ) from None
    try:
        if any(isinstance(event, yaml.AliasEvent) for event in yaml.parse(text, yaml.SafeLoader)):
            raise ValueError(
                f"{path}: YAML aliases (*name) are not read: nine lines of nested aliases expand "
                "to gigabytes; write each value out"
            )
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ValueError(f"{path}: invalid YAML: {exc}") from None


MAX_REWARD_FILE_BYTES = 65_536
"""The largest reward config file read: a config is a handful of fields."""


def _shown(value: Any) -> str:
    """``repr(value)``, cut to 200 characters: a bad value 2 GB long was repeated in the message."""
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
