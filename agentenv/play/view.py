"""What ``agentenv play`` prints: tool results as tables and lists, help, the turn line, the final score.

Pure functions from text and dicts to text, so they are tested without a terminal.

Example:
    >>> print(render_json({"count": 2, "results": [{"id": "tt1", "title": "Up", "year": 2009},
    ...                                             {"id": "tt2", "title": "Heat", "year": 1995}]}))
    count: 2
    results:
       #  id   title  year
       1  tt1  Up     2009
       2  tt2  Heat   1995
"""

from __future__ import annotations

import json
import re
import shutil
import textwrap
from collections.abc import Mapping, Sequence
from typing import Any

_BLOCK = re.compile(r"^\[([A-Za-z_][A-Za-z0-9_]*)\]\n", re.MULTILINE)


def width() -> int:
    return max(60, min(shutil.get_terminal_size((100, 24)).columns, 160))


def _scalar(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, list) and all(not isinstance(v, (dict, list)) for v in value):
        return ", ".join(_scalar(v) for v in value) or "-"
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def _flat(item: Any) -> bool:
    return isinstance(item, dict) and all(
        not isinstance(v, dict)
        and not (isinstance(v, list) and any(isinstance(x, (dict, list)) for x in v))
        for v in item.values()
    )


MAX_ROWS = 25
"""Rows a table shows: a disease profile lists ~70 phenotypes, more than a terminal screen."""


def table(
    rows: Sequence[Mapping[str, Any]],
    *,
    indent: str = "   ",
    max_width: int | None = None,
    max_rows: int = MAX_ROWS,
) -> str:
    """Numbered rows, one column per key (in first-seen order), cells cut to fit the terminal; the
    first ``max_rows`` rows, then how many more there are (the agent's observation keeps them all)."""
    hidden = max(0, len(rows) - max_rows)
    rows = rows[:max_rows]
    columns: list[str] = []
    for row in rows:
        columns += [k for k in row if k not in columns]
    cells = [
        [str(i)] + [_scalar(row.get(c)) if c in row else "" for c in columns]
        for i, row in enumerate(rows, 1)
    ]
    header = ["#", *columns]
    widths = [max(len(r[j]) for r in [header, *cells]) for j in range(len(header))]
    budget = (max_width or width()) - len(indent) - 2 * (len(widths) - 1)
    while sum(widths) > budget and max(widths) > 12:
        widest = widths.index(max(widths))
        widths[widest] = max(12, widths[widest] - (sum(widths) - budget))

    def line(values: Sequence[str], right: int = 0) -> str:
        out = []
        for j, (v, w) in enumerate(zip(values, widths, strict=True)):
            v = v if len(v) <= w else v[: w - 1] + "…"
            out.append(v.rjust(w) if j < right else v.ljust(w))
        return (indent + "  ".join(out)).rstrip()

    more = (
        [f"{indent}… and {hidden} more rows (type `full` to see the whole output)"]
        if hidden
        else []
    )
    return "\n".join([line(header, 1)] + [line(r, 1) for r in cells] + more)


def render_json(value: Any, indent: str = "", max_rows: int = MAX_ROWS) -> str:
    """A readable view of a JSON tool output: ``key: value`` lines, lists of records as numbered tables."""
    wrap = width() - len(indent)
    if isinstance(value, dict):
        lines = []
        for key, item in value.items():
            if isinstance(item, list) and item and all(_flat(x) for x in item):
                lines += [f"{indent}{key}:", table(item, indent=indent + "   ", max_rows=max_rows)]
            elif isinstance(item, list) and item and all(isinstance(x, dict) for x in item):
                lines.append(f"{indent}{key}:")
                for i, sub in enumerate(item, 1):
                    lines += [f"{indent}  {i}.", render_json(sub, indent + "     ", max_rows)]
            elif isinstance(item, dict) and item:
                lines += [f"{indent}{key}:", render_json(item, indent + "  ", max_rows)]
            else:
                lines.append(
                    textwrap.fill(
                        f"{key}: {_scalar(item)}",
                        wrap,
                        initial_indent=indent,
                        subsequent_indent=indent + "    ",
                    )
                    or f"{indent}{key}:"
                )
        return "\n".join(lines)
    if isinstance(value, list) and value and all(_flat(x) for x in value):
        return table(value, indent=indent + "   ", max_rows=max_rows)
    return textwrap.fill(_scalar(value), wrap, initial_indent=indent, subsequent_indent=indent)


def render_output(text: str, max_rows: int = MAX_ROWS) -> str:
    """One tool output: JSON made readable, anything else (errors, plain text) as it is."""
    try:
        return render_json(json.loads(text), max_rows=max_rows)
    except (ValueError, TypeError):
        return text


def render_observation(obs: str, max_rows: int = MAX_ROWS) -> str:
    """An observation: ``[tool]`` blocks of several calls each rendered under their name; tables
    show ``max_rows`` rows (``full`` shows them all)."""
    blocks = _BLOCK.split(obs)
    if len(blocks) < 3 or blocks[0].strip():
        return render_output(obs, max_rows)
    parts = []
    for name, body in zip(blocks[1::2], blocks[2::2], strict=True):
        parts.append(f"[{name}]\n{render_output(body.strip(), max_rows)}")
    return "\n\n".join(parts)


def shortcuts(
    tools: Sequence[Mapping[str, Any]], *, say_to: str | None = None, can_answer: bool = True
) -> str:
    """The input forms, with examples drawn from this env's own tools."""
    lines = ["How to type an action (a typo is caught here and costs no turn):"]
    example = next(
        (
            t["function"]
            for t in tools
            if len(t["function"].get("parameters", {}).get("required", [])) == 1
        ),
        None,
    )
    if example:
        name, arg = example["name"], example["parameters"]["required"][0]
        lines += [
            f"  TOOL key=value ...     {name} {arg}=some words k=3   (a value runs until the next key=; quotes optional)",
            f"  TOOL VALUE             {name} some words   (the bare value goes to the one required argument)",
            f'  TOOL {{json}}            {name} {{"{arg}": "some words"}}',
        ]
    elif tools:
        lines.append("  TOOL key=value ...  |  TOOL {json}")
    if say_to:
        lines.append(
            f"  say TEXT               a message to the {say_to} (uses a turn; the reply comes back)"
        )
    if can_answer:
        lines.append(
            "  answer TEXT            the final answer (ends the game); several: answer A; B; C"
        )
    lines += [
        "  <tool_call>… / <answer>… / <say>…   raw action text, sent exactly as a model would",
        "  help  |  full (the last output, every row)  |  quit",
    ]
    return "\n".join(lines)


def tool_help(tools: Sequence[Mapping[str, Any]]) -> str:
    """One block per tool: name, description and arguments."""
    lines = []
    for schema in tools:
        fn = schema["function"]
        lines.append(f"{fn['name']}: {fn.get('description', '')}")
        params = fn.get("parameters") or {}
        required = set(params.get("required", []))
        for arg, spec in params.get("properties", {}).items():
            kinds = spec.get("type") or "/".join(s.get("type", "?") for s in spec.get("anyOf", []))
            if spec.get("enum"):
                kinds = " | ".join(map(str, spec["enum"]))
            elif kinds == "array":
                kinds = f"list of {spec.get('items', {}).get('type', 'values')}"
            flag = (
                "required"
                if arg in required
                else f"optional, default {json.dumps(spec['default'])}"
                if "default" in spec
                else "optional"
            )
            lines.append(f"    {arg} ({kinds}, {flag}): {spec.get('description', '')}")
    return "\n".join(lines) or "This env has no tools."


def briefing(system: str, tool_names: Sequence[str]) -> str:
    """The system message without the model-syntax tool listing (``help`` shows the tools readably)."""
    keep = [
        line
        for line in system.splitlines()
        if not line.startswith("Call a tool with")
        and not any(line.startswith(f"- {n}(") for n in tool_names)
    ]
    return "\n".join(keep).strip()


def turn_line(turn: int, max_turns: int | None) -> str:
    if max_turns is None:
        return f"turn {turn + 1}"
    return f"turn {turn + 1}/{max_turns}, {max_turns - turn} left"


UNREADABLE = "unreadable answer"
"""How a family's ``info["answer_feedback"]`` starts when its grammar could not read the answer."""

_OVER_LIMIT = {
    "zero": "the reward is 0, whatever accuracy says",
    "penalty": "a penalty is taken off the reward",
    "allow": "scored on hit@any instead of accuracy",
}


def component_notes(
    components: Mapping[str, Any],
    info: Mapping[str, Any],
    *,
    answered: bool = True,
    says: bool = False,
    asks_are_calls: bool = False,
    over_limit: str | None = None,
) -> dict[str, str]:
    """What the score screen says beside a component a player could misread (display only).

    ``format`` 1 means the tags were right, not the answer; ``accuracy`` 0 beside an unreadable
    answer gets the grader's reason; ``turns`` counts every message sent, ``tool_calls`` only the
    calls that ran. ``answered`` is False when the episode ran out of turns; ``says`` when the
    player could message the other side of a dialogue; ``asks_are_calls`` when each item asked in
    a message counts as a tool call (``DialogueEnv.item_tool_calls``); ``over_limit`` is the
    env's ``RewardConfig.over_limit``.

    Example:
        >>> notes = component_notes({"accuracy": 0.0, "format": 1.0},
        ...     {"answer_feedback": "unreadable answer: '???' is not a film title of the catalog"})
        >>> notes["accuracy"]
        "the answer could not be read, so 0: '???' is not a film title of the catalog"
        >>> notes["format"]
        'tags well formed, nothing more: the answer inside them was unreadable'
    """
    feedback = str(info.get("answer_feedback") or "")
    unreadable = feedback.startswith(UNREADABLE)
    notes: dict[str, str] = {}
    if "accuracy" in components:
        if not answered:
            notes["accuracy"] = "no answer was given"
        elif unreadable:
            reason = feedback[len(UNREADABLE) :].lstrip(": ")
            notes["accuracy"] = f"the answer could not be read, so 0: {reason}"
    if "format" in components:
        if components["format"]:
            notes["format"] = (
                "tags well formed, nothing more: the answer inside them was unreadable"
                if unreadable
                else "tags well formed (answered, nothing refused); not the answer's correctness"
            )
        elif not answered:
            notes["format"] = "no answer was given"
        elif components.get("invalid_actions"):
            notes["format"] = "tags not well formed: an action was refused (invalid_actions)"
        else:
            notes["format"] = "tags not well formed"
    if components.get("over_limit"):
        notes["over_limit"] = "more predictions than allowed" + (
            f": {_OVER_LIMIT[over_limit]}" if over_limit in _OVER_LIMIT else ""
        )
    if components.get("unresolved"):
        notes["unresolved"] = "entries that name no disease: one makes the answer unreadable"
    if "tool_calls" in components:
        notes["tool_calls"] = (
            "tool calls that ran, plus one per item your messages asked about"
            if asks_are_calls
            else "only the tool calls that ran (several in one message count one each)"
        )
    if "turns" in components:
        notes["turns"] = (
            "every message you sent: tool calls, says, the answer, refused ones"
            if says
            else "every message you sent: tool calls, the answer, refused ones"
        )
    if "latency_ms" in components:
        notes["latency_ms"] = (
            "modelled (a fixed cost per tool call or item asked), not the time you took"
            if says
            else "modelled (a fixed cost per tool call), not the time you took"
        )
    return notes


def final_summary(
    reward: float,
    info: Mapping[str, Any],
    *,
    truncated: bool = False,
    says: bool = False,
    asks_are_calls: bool = False,
    over_limit: str | None = None,
) -> str:
    """The reward, how the answer was read, the components as a small table (with a note beside
    those a player could misread: :func:`component_notes`), and the gold answer."""
    lines = [
        "",
        "=" * 40,
        ("Out of turns. " if truncated else "Game over. ") + f"Reward: {reward:g}",
    ]
    if info.get("answer_feedback"):
        lines.append(f"Answer: {info['answer_feedback']}")
    components = info.get("reward_components") or {}
    if components:
        lines.append("Components:")
        notes = component_notes(
            components,
            info,
            answered=not truncated,
            says=says,
            asks_are_calls=asks_are_calls,
            over_limit=over_limit,
        )
        pad = max(len(k) for k in components)
        values = {k: _scalar(v) for k, v in components.items()}
        value_pad = max(len(v) for v in values.values())
        for key, value in values.items():
            row = f"  {key.ljust(pad)}  {value}"
            if key not in notes:
                lines.append(row)
                continue
            lead = f"  {key.ljust(pad)}  {value.ljust(value_pad)}  "
            lines.append(
                textwrap.fill(
                    notes[key],
                    width(),
                    initial_indent=lead,
                    subsequent_indent=" " * len(lead),
                    break_on_hyphens=False,
                )
            )
    gold = info.get("gold")
    if gold is not None:
        lines.append("Gold:")
        lines.append(render_json(gold, "  ") if isinstance(gold, dict) else f"  {_scalar(gold)}")
    return "\n".join(lines)
