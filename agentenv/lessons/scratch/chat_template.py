"""The Qwen3-style chat template of the from-scratch tokenizer.

Why not Qwen3's own template: it writes every tool's JSON schema into the
system prompt (hundreds of tokens a small model must read on every turn) and
drops earlier turns' ``<think>`` blocks, so it is not prefix-stable and
:func:`agentenv.tokens.chat_templates.hf_template` could not compute env
turns as suffixes. This template keeps Qwen3's turn markers, tool-call and
tool-response blocks exactly, so TRL parses a completion with its Qwen3
response template (:data:`RESPONSE_TEMPLATE`), and:

* it renders no tool schemas (the env's ``compact=True`` system prompt names
  the tools in one line);
* it never rewrites history (appending messages appends text);
* assistant turns sit inside ``{% generation %}`` so ``SFTTrainer`` with
  ``assistant_only_loss=True`` trains on them only;
* no ``<think>`` block is added: the model answers without thinking (the SFT
  data is exported with ``--no-think``); a ``reasoning_content`` field is still
  rendered as Qwen3 renders it.

Example:
    >>> from jinja2 import Environment
    >>> plain = CHAT_TEMPLATE.replace("{%- generation %}", "").replace("{%- endgeneration %}", "")
    >>> text = Environment().from_string(plain).render(messages=[
    ...     {"role": "user", "content": "Who directed Heat?"},
    ...     {"role": "assistant", "content": "", "tool_calls": [
    ...         {"type": "function", "function": {"name": "search", "arguments": {"query": "Heat"}}}]},
    ...     {"role": "tool", "content": "tt0113277 | Heat | 1995 | Michael Mann"}],
    ...     add_generation_prompt=True)
    >>> print(text)
    <|im_start|>user
    Who directed Heat?<|im_end|>
    <|im_start|>assistant
    <tool_call>
    {"name": "search", "arguments": {"query": "Heat"}}
    </tool_call><|im_end|>
    <|im_start|>user
    <tool_response>
    tt0113277 | Heat | 1995 | Michael Mann
    </tool_response><|im_end|>
    <|im_start|>assistant
    <BLANKLINE>
"""

from __future__ import annotations

#: Jinja source, rendered by ``apply_chat_template`` (whose ``tojson`` keeps key order and
#: non-ASCII text, and which understands ``{% generation %}``; the doctest drops those tags).
CHAT_TEMPLATE = (
    "{%- for message in messages %}"
    "{%- if message.role == 'system' or message.role == 'user' %}"
    "{{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>\\n' }}"
    "{%- elif message.role == 'assistant' %}"
    "{{- '<|im_start|>assistant\\n' }}"
    "{%- generation %}"
    "{%- if message.reasoning_content %}"
    "{{- '<think>\\n' + message.reasoning_content.strip('\\n') + '\\n</think>\\n\\n' }}"
    "{%- endif %}"
    "{%- if message.content %}{{- message.content }}{%- endif %}"
    "{%- if message.tool_calls %}"
    "{%- for tool_call in message.tool_calls %}"
    "{%- if (loop.first and message.content) or (not loop.first) %}{{- '\\n' }}{%- endif %}"
    "{%- set call = tool_call.function if tool_call.function else tool_call %}"
    '{{- \'<tool_call>\\n{"name": "\' + call.name + \'", "arguments": \' }}'
    "{%- if call.arguments is string %}{{- call.arguments }}{%- else %}{{- call.arguments | tojson }}{%- endif %}"
    "{{- '}\\n</tool_call>' }}"
    "{%- endfor %}"
    "{%- endif %}"
    "{{- '<|im_end|>' }}"
    "{%- endgeneration %}"
    "{{- '\\n' }}"
    "{%- elif message.role == 'tool' %}"
    "{%- if loop.first or messages[loop.index0 - 1].role != 'tool' %}{{- '<|im_start|>user' }}{%- endif %}"
    "{{- '\\n<tool_response>\\n' + message.content + '\\n</tool_response>' }}"
    "{%- if loop.last or messages[loop.index0 + 1].role != 'tool' %}{{- '<|im_end|>\\n' }}{%- endif %}"
    "{%- endif %}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}"
)

#: Tokens that must never be split: Qwen3's turn, thinking and tool markers.
SPECIAL_TOKENS = (
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<think>",
    "</think>",
    "<tool_call>",
    "</tool_call>",
    "<tool_response>",
    "</tool_response>",
)

#: Frequent markup kept whole so the model spends one token on it (ordinary, decodable tokens).
WHOLE_TOKENS = ("<answer>", "</answer>", '{"name": "', '", "arguments": {')


def response_template() -> dict:
    """TRL's Qwen3 response template: completions parse into tool calls as they do for Qwen3.

    Imported lazily (TRL is an extra).
    """
    from trl.chat_template_utils import qwen3_template

    return qwen3_template
