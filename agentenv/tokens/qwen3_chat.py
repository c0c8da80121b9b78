"""Qwen3's chat format, as a Jinja template and as plain Python.

Qwen3 (the Qwen team, Alibaba) publishes its chat format as a Jinja template in
the model's ``tokenizer_config.json``: ChatML turns (``<|im_start|>role\\n …
<|im_end|>\\n``), the tool schemas in a ``<tools>`` block of the system turn,
Hermes-style ``<tool_call>`` JSON, tool results grouped into one user turn of
``<tool_response>`` blocks, and ``<think>`` reasoning that is kept only for the
assistant turns after the last real user query. The format is a public fact;
the template and the renderer below are written for agentenv to render the
same text, so that everything works offline without fetching the model repo.

The two implementations exist for different readers: ``QWEN3_CHAT_TEMPLATE``
lets ``tokenizer.apply_chat_template`` work on the offline tokenizer, and
``render_qwen3`` lets :mod:`agentenv.tokens` render prompts and env turns
without Jinja or transformers. The tests check they agree.

Example:
    >>> render_qwen3([{"role": "user", "content": "Hi"}], add_generation_prompt=True)
    '<|im_start|>user\\nHi<|im_end|>\\n<|im_start|>assistant\\n'
    >>> render_turns([{"role": "tool", "tool_call_id": "c0", "name": "f", "content": "1"},
    ...               {"role": "tool", "tool_call_id": "c1", "name": "f", "content": "2"}])
    '<|im_start|>user\\n<tool_response>\\n1\\n</tool_response>\\n<tool_response>\\n2\\n</tool_response><|im_end|>\\n'
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

Message = Mapping[str, Any]

TOOLS_PREAMBLE = (
    "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
    "You are provided with function signatures within <tools></tools> XML tags:\n<tools>"
)
TOOLS_EPILOGUE = (
    "\n</tools>\n\nFor each function call, return a json object with function name and "
    "arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n"
    '{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>'
)
GENERATION_PROMPT = "<|im_start|>assistant\n"
EMPTY_THINK = "<think>\n\n</think>\n\n"

# Jinja string literals below use '\n' escapes, so the Python string is raw.
QWEN3_CHAT_TEMPLATE = r"""
{%- set n = messages | length -%}
{%- set ns = namespace(query=n - 1, searching=true) -%}
{%- for i in range(n - 1, -1, -1) -%}
  {%- set m = messages[i] -%}
  {%- if ns.searching and m.role == 'user' and m.content is string
        and not (m.content.startswith('<tool_response>') and m.content.endswith('</tool_response>')) -%}
    {%- set ns.query = i -%}
    {%- set ns.searching = false -%}
  {%- endif -%}
{%- endfor -%}
{%- if tools -%}
  {{- '<|im_start|>system\n' -}}
  {%- if n > 0 and messages[0].role == 'system' -%}{{- messages[0].content + '\n\n' -}}{%- endif -%}
  {{- '# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>' -}}
  {%- for tool in tools -%}{{- '\n' + (tool | tojson) -}}{%- endfor -%}
  {{- '\n</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call><|im_end|>\n' -}}
{%- elif n > 0 and messages[0].role == 'system' -%}
  {{- '<|im_start|>system\n' + messages[0].content + '<|im_end|>\n' -}}
{%- endif -%}
{%- for m in messages -%}
  {%- set content = m.content if m.content is string else '' -%}
  {%- if m.role == 'user' or (m.role == 'system' and not loop.first) -%}
    {{- '<|im_start|>' + m.role + '\n' + content + '<|im_end|>\n' -}}
  {%- elif m.role == 'assistant' -%}
    {%- set reasoning = m.reasoning_content if m.reasoning_content is string else '' -%}
    {%- if m.reasoning_content is not string and '</think>' in content -%}
      {%- set reasoning = content.split('</think>')[0].rstrip('\n').split('<think>')[-1].lstrip('\n') -%}
      {%- set content = content.split('</think>')[-1].lstrip('\n') -%}
    {%- endif -%}
    {{- '<|im_start|>assistant\n' -}}
    {%- if loop.index0 > ns.query and (loop.last or reasoning) -%}
      {{- '<think>\n' + reasoning.strip('\n') + '\n</think>\n\n' + content.lstrip('\n') -}}
    {%- else -%}
      {{- content -}}
    {%- endif -%}
    {%- for call in (m.tool_calls or []) -%}
      {%- if content or not loop.first -%}{{- '\n' -}}{%- endif -%}
      {%- set f = call.function if call.function is defined else call -%}
      {{- '<tool_call>\n{"name": "' + f.name + '", "arguments": ' -}}
      {{- f.arguments if f.arguments is string else (f.arguments | tojson) -}}
      {{- '}\n</tool_call>' -}}
    {%- endfor -%}
    {{- '<|im_end|>\n' -}}
  {%- elif m.role == 'tool' -%}
    {%- if loop.first or loop.previtem.role != 'tool' -%}{{- '<|im_start|>user' -}}{%- endif -%}
    {{- '\n<tool_response>\n' + content + '\n</tool_response>' -}}
    {%- if loop.last or loop.nextitem.role != 'tool' -%}{{- '<|im_end|>\n' -}}{%- endif -%}
  {%- endif -%}
{%- endfor -%}
{%- if add_generation_prompt -%}
  {{- '<|im_start|>assistant\n' -}}
  {%- if enable_thinking is defined and enable_thinking is false -%}{{- '<think>\n\n</think>\n\n' -}}{%- endif -%}
{%- endif -%}
""".strip()


def _text(message: Message) -> str:
    content = message.get("content")
    return content if isinstance(content, str) else ""


def last_query_index(messages: Sequence[Message]) -> int:
    """Index of the last user message that is a real query (not wrapped tool output).

    Qwen3 keeps ``<think>`` blocks only for assistant turns after this index: the
    reasoning of finished exchanges is dropped from the history.
    """
    for i in range(len(messages) - 1, -1, -1):
        m = messages[i]
        content = m.get("content")
        if m.get("role") == "user" and isinstance(content, str):
            if not (content.startswith("<tool_response>") and content.endswith("</tool_response>")):
                return i
    return len(messages) - 1


def render_system(messages: Sequence[Message], tools: Sequence[Mapping[str, Any]] | None) -> str:
    """The system turn: the first system message, and the tool schemas when there are tools."""
    system = messages[0]["content"] if messages and messages[0].get("role") == "system" else None
    if tools:
        head = "<|im_start|>system\n" + (system + "\n\n" if system is not None else "")
        schemas = "".join("\n" + json.dumps(tool, ensure_ascii=False) for tool in tools)
        return head + TOOLS_PREAMBLE + schemas + TOOLS_EPILOGUE + "<|im_end|>\n"
    if system is not None:
        return f"<|im_start|>system\n{system}<|im_end|>\n"
    return ""


def _render_assistant(message: Message, *, keep_think: bool, is_last: bool) -> str:
    content = _text(message)
    reasoning = message.get("reasoning_content")
    if not isinstance(reasoning, str):
        reasoning = ""
        if "</think>" in content:
            reasoning = content.split("</think>")[0].rstrip("\n").split("<think>")[-1].lstrip("\n")
            content = content.split("</think>")[-1].lstrip("\n")
    out = GENERATION_PROMPT
    if keep_think and (is_last or reasoning):
        out += "<think>\n" + reasoning.strip("\n") + "\n</think>\n\n" + content.lstrip("\n")
    else:
        out += content
    for j, call in enumerate(message.get("tool_calls") or []):
        if content or j > 0:
            out += "\n"
        function = call.get("function", call)
        arguments = function["arguments"]
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments, ensure_ascii=False)
        out += (
            '<tool_call>\n{"name": "'
            + function["name"]
            + '", "arguments": '
            + arguments
            + "}\n</tool_call>"
        )
    return out + "<|im_end|>\n"


def render_turns(messages: Sequence[Message], *, query_index: int = -1) -> str:
    """Render messages as turns that follow an existing conversation.

    Unlike :func:`render_qwen3`, a leading system message is rendered as a turn
    of its own; assistant turns after ``query_index`` keep their ``<think>``
    block (Qwen3's rule). Consecutive tool messages share one user turn.
    """
    out = []
    n = len(messages)
    for i, m in enumerate(messages):
        role = m["role"]
        if role in ("user", "system"):
            out.append(f"<|im_start|>{role}\n{_text(m)}<|im_end|>\n")
        elif role == "assistant":
            out.append(_render_assistant(m, keep_think=i > query_index, is_last=i == n - 1))
        elif role == "tool":
            if i == 0 or messages[i - 1]["role"] != "tool":
                out.append("<|im_start|>user")
            out.append(f"\n<tool_response>\n{_text(m)}\n</tool_response>")
            if i == n - 1 or messages[i + 1]["role"] != "tool":
                out.append("<|im_end|>\n")
        # Other roles are not part of Qwen3's format; its template skips them too.
    return "".join(out)


def render_qwen3(
    messages: Sequence[Message],
    tools: Sequence[Mapping[str, Any]] | None = None,
    *,
    add_generation_prompt: bool = False,
    enable_thinking: bool = True,
) -> str:
    """Render a whole conversation as Qwen3's chat template does."""
    has_system = bool(messages) and messages[0].get("role") == "system"
    out = render_system(messages, tools)
    rest = messages[1:] if has_system else messages
    out += render_turns(rest, query_index=last_query_index(messages) - (1 if has_system else 0))
    if add_generation_prompt:
        out += GENERATION_PROMPT + ("" if enable_thinking else EMPTY_THINK)
    return out
