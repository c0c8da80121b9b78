"""Reading a question's answer out of its gold plan's tool outputs, following its ``extract`` rule.

Why apart from :mod:`~agentenv.envs.media_search.questions.record`: the scripted oracle and the tests apply
:func:`execute_plan_extract` to real tool outputs without generating or loading any question; the
rules themselves are listed in that module's docstring.

Example:
    >>> execute_plan_extract({"op": "only", "step": 0, "field": "title"},
    ...                      [{"count": 1, "results": [{"title": "Inception"}]}])
    'Inception'
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from agentenv.corpora.media.catalog import normalize_key


def _at(output: Any, path: str) -> Any:
    value = output
    for part in path.split(".") if path else ():
        if isinstance(value, list) and part.lstrip("-").isdigit():
            value = value[int(part)]
        elif isinstance(value, Mapping) and part in value:
            value = value[part]
        else:
            raise ValueError(f"path {path!r}: no {part!r} in the tool output")
    return value


def _output(outputs: Sequence[Any], step: int) -> Any:
    out = outputs[step]
    if not isinstance(out, Mapping):
        raise ValueError(f"step {step} did not return a JSON object: {str(out)[:200]}")
    return out


def _text(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def execute_plan_extract(extract: Mapping[str, Any], outputs: Sequence[Any]) -> str:
    """Read the answer out of a plan's tool outputs (parsed JSON), following ``extract``.

    Raises ``ValueError`` when the outputs do not support one answer (a tool
    error, a missing field, a tie, a filter matching several titles), so a
    broken plan is loud instead of producing a wrong answer.
    """
    op = extract.get("op")
    try:
        if op == "field":
            return _text(_at(_output(outputs, extract["step"]), extract["path"]))
        if op == "only":
            out = _output(outputs, extract["step"])
            if out.get("count") != 1:
                raise ValueError(
                    f"expected exactly one matching title, the tool found {out.get('count')}"
                )
            return _text(out["results"][0][extract["field"]])
        if op in ("argmin", "argmax"):
            rows = [_output(outputs, s) for s in extract["steps"]]
            values = [row.get(extract["field"]) for row in rows]
            if any(v is None for v in values):
                raise ValueError(f"a compared output has no {extract['field']!r}")
            best = min(values) if op == "argmin" else max(values)
            winners = [row for row, v in zip(rows, values, strict=True) if v == best]
            if len(winners) != 1:
                raise ValueError(f"tie on {extract['field']!r}")
            return _text(winners[0][extract["return"]])
        if op == "member":
            present = {
                normalize_key(str(x))
                for x in _at(_output(outputs, extract["step"]), extract["path"])
            }
            found = [o for o in extract["options"] if normalize_key(o) in present]
            if len(found) != 1:
                raise ValueError(f"expected exactly one option in the list, found {len(found)}")
            return found[0]
    except (IndexError, KeyError, TypeError) as exc:
        raise ValueError(f"cannot apply {dict(extract)} to the outputs: {exc!r}") from exc
    raise ValueError(f"unknown extract op {op!r}")
