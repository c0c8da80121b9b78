"""Chat rows as a ``datasets.Dataset`` that renders exactly as the rows do.

Arrow stores a column of nested dicts as one struct type with the union of every row's keys,
filling the missing ones with ``None``. For tool calls that is a silent corruption: after
``Dataset.from_list`` or ``load_dataset("json", ...)`` a ``search`` call carries every other
tool's arguments as ``null``, the chat template renders them, and SFT teaches the model to call
``search`` with ``"title_id": null``, which the env refuses. Arguments therefore go in as JSON
text; chat templates (Qwen3's, the from-scratch one) print a string argument as is, and
``json.dumps`` writes what their ``tojson`` filter writes.

>>> row = {"messages": [{"role": "assistant", "content": "",
...     "tool_calls": [{"type": "function", "function": {"name": "get_title", "arguments": {"title_id": "tt1"}}}]}]}
>>> arrow_safe(row)["messages"][0]["tool_calls"][0]["function"]["arguments"]
'{"title_id": "tt1"}'

Tool schemas (a ``tools`` column) have the same problem: each function's ``parameters`` would
gain every other tool's properties as ``null``. They go in as JSON text too, one string per row;
TRL's ``SFTTrainer`` decodes a string ``tools`` column before rendering (:func:`row_tools` does the
same for other callers).

>>> arrow_safe({"messages": [], "tools": [{"type": "function", "function": {"name": "search"}}]})["tools"]
'[{"type": "function", "function": {"name": "search"}}]'
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any


def arrow_safe(row: Mapping[str, Any], *, keep_tools: bool = True) -> dict[str, Any]:
    """``row`` with every tool call's arguments and its ``tools`` as JSON text (``tools`` dropped unless kept)."""
    out: dict[str, Any] = {"messages": [_message(m) for m in row["messages"]]}
    if keep_tools and "tools" in row:
        out["tools"] = _arguments(row["tools"])
    return out


def row_tools(row: Mapping[str, Any]) -> list[dict[str, Any]] | None:
    """The tool schemas of a stored row, for ``apply_chat_template(..., tools=...)``: decoded from JSON text."""
    tools = row.get("tools")
    return json.loads(tools) if isinstance(tools, str) else tools


def _message(message: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(message)
    calls = out.get("tool_calls")
    if calls:
        out["tool_calls"] = [
            {
                **call,
                "function": {
                    **call["function"],
                    "arguments": _arguments(call["function"].get("arguments", {})),
                },
            }
            for call in calls
        ]
    return out


def _arguments(arguments: Any) -> str:
    return arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)


def chat_dataset(rows: Sequence[Mapping[str, Any]], *, keep_tools: bool = True) -> Any:
    """A ``datasets.Dataset`` of ``rows`` (each ``{"messages": [...]}``) made :func:`arrow_safe`."""
    from datasets import Dataset

    return Dataset.from_list([arrow_safe(r, keep_tools=keep_tools) for r in rows])


def read_chat_jsonl(path: str | Path) -> list[dict[str, Any]]:
    """The rows of an ``export-sft`` ``chat.jsonl``; a line that is not a chat row names itself.

    Read under the run files' bounds (:mod:`agentenv.evaluation.run_files`): a FIFO is refused
    before it is opened, a line is read within a bound, and a line that is not JSON, or JSON nested
    past the parser's depth, is a one-line error with its number instead of a traceback.

    Raises:
        RunFileError: (a ``ValueError``) naming the file and line.
    """
    from agentenv.evaluation.run_files import RunFileError, iter_lines, parse_object

    rows = []
    for number, raw in iter_lines(Path(path), "a chat row written by `agentenv export-sft`"):
        if raw.strip():
            where = f"{path} line {number}"
            row = parse_object(raw, where, "a chat row {'messages': [...]}")
            if not isinstance(row.get("messages"), list):
                raise RunFileError(f"{where}: expected a chat row {{'messages': [...]}}")
            rows.append(row)
    return rows
