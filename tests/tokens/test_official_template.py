"""The package's Qwen3 rendering against the official Qwen3 chat template (TRL's copy of it).

``agentenv.tokens.qwen3_chat`` writes Qwen3's format twice (a Jinja template
and a Python renderer) so everything works offline. This checks both against
the template the Qwen team publishes, as TRL ships it in
``trl/chat_templates/qwen3.jinja``, rendered by transformers'
``apply_chat_template``: identical strings and ids over varied
conversations (tools, parallel tool calls, reasoning kept or dropped,
several queries, no-think mode), and the newline after the last
``<|im_end|>``, which a finished TokenEnv trajectory does not contain.
"""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest

from agentenv.tokens import TokenEnv
from agentenv.tokens.qwen3_chat import render_qwen3

SEARCH = {
    "type": "function",
    "function": {
        "name": "search",
        "description": "Search films by keywords; returns titles and years.",
        "parameters": {
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "Free text."},
                "k": {"type": "integer"},
            },
            "required": ["query"],
            "additionalProperties": False,
        },
    },
}
DETAILS = {
    "type": "function",
    "function": {
        "name": "get_title",
        "description": "One film's record.",
        "parameters": {"type": "object", "properties": {"title_id": {"type": "string"}}},
    },
}


def call(call_id: str, name: str, arguments: dict | str) -> dict:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def tool(call_id: str, content: str) -> dict:
    return {"role": "tool", "tool_call_id": call_id, "name": "search", "content": content}


SYSTEM = {"role": "system", "content": "You answer questions about films. Be brief."}
USER = {"role": "user", "content": "Which 2001 film did Jean-Pierre Jeunet direct? (Amélie?)"}
CONVERSATIONS = {
    "user only": [USER],
    "system and user": [SYSTEM, USER],
    "one call with reasoning, string arguments": [
        SYSTEM,
        USER,
        {
            "role": "assistant",
            "content": "",
            "reasoning_content": "I should search.",
            "tool_calls": [call("c1", "search", '{"query": "Jeunet 2001", "k": 3}')],
        },
        tool("c1", '{"results": [{"title": "Amélie", "year": 2001}]}'),
    ],
    "object arguments with unicode, compact string arguments": [
        SYSTEM,
        USER,
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [call("c1", "search", {"query": "Amélie — 2001 🎬", "k": 1})],
        },
        tool("c1", "Amélie (2001)"),
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [call("c2", "get_title", '{"title_id":"tt0211915"}')],
        },
        tool("c2", "{}"),
    ],
    "parallel calls with content, grouped tool responses": [
        USER,
        {
            "role": "assistant",
            "content": "Two searches.",
            "reasoning_content": "\nBoth at once.\n",
            "tool_calls": [
                call("c1", "search", {"query": "a"}),
                call("c2", "search", {"query": "b"}),
            ],
        },
        tool("c1", "x"),
        tool("c2", "y"),
        {"role": "assistant", "content": "<answer>Amélie</answer>", "reasoning_content": "Done."},
    ],
    "inline think without reasoning_content": [
        SYSTEM,
        USER,
        {
            "role": "assistant",
            "content": "<think>\nLet me search.\n</think>\n\n",
            "tool_calls": [call("c1", "search", {"query": "Jeunet"})],
        },
        tool("c1", "Amélie"),
        {"role": "assistant", "content": "<think>\nFound it.\n</think>\n\n<answer>Amélie</answer>"},
    ],
    "an error message drops earlier reasoning": [
        SYSTEM,
        USER,
        {
            "role": "assistant",
            "content": "",
            "reasoning_content": "Search.",
            "tool_calls": [call("c1", "search", {"query": "Jeunet"})],
        },
        tool("c1", "Amélie"),
        {"role": "assistant", "content": "Amélie, I think", "reasoning_content": "Answer now."},
        {
            "role": "user",
            "content": "Error: expected <tool_call>…</tool_call> or <answer>…</answer>.",
        },
        {
            "role": "assistant",
            "content": "<answer>Amélie</answer>",
            "reasoning_content": "Use the tag.",
        },
    ],
    "several queries": [
        SYSTEM,
        USER,
        {"role": "assistant", "content": "Amélie.", "reasoning_content": "Known."},
        {"role": "user", "content": "And its runtime?"},
        {
            "role": "assistant",
            "content": "",
            "reasoning_content": "Look it up.",
            "tool_calls": [call("c1", "get_title", {"title_id": "tt0211915"})],
        },
        tool("c1", '{"runtime": 122}'),
        {"role": "assistant", "content": "122 minutes."},
    ],
    "tool output wrapped in a user turn, late system message": [
        USER,
        {
            "role": "assistant",
            "content": "",
            "reasoning_content": "r",
            "tool_calls": [call("c1", "search", {"query": "q"})],
        },
        {"role": "user", "content": "<tool_response>\nz\n</tool_response>"},
        {"role": "assistant", "content": "done", "reasoning_content": ""},
        {"role": "system", "content": "Hurry."},
    ],
}
TOOLSETS = {"no tools": None, "one tool": [SEARCH], "two tools": [SEARCH, DETAILS]}


def render_official(
    tokenizer, official: str, messages, tools, *, generation: bool, thinking: bool | None
) -> str:
    kwargs = {} if thinking is None else {"enable_thinking": thinking}
    return tokenizer.apply_chat_template(
        list(messages),
        tools=tools,
        chat_template=official,
        add_generation_prompt=generation,
        tokenize=False,
        **kwargs,
    )


@pytest.mark.parametrize("name", list(CONVERSATIONS))
@pytest.mark.parametrize("tools", list(TOOLSETS))
def test_package_renderers_equal_the_official_template(
    hf_qwen3, qwen3, official, name, tools
) -> None:
    messages, schemas = CONVERSATIONS[name], TOOLSETS[tools]
    for generation, thinking in itertools.product((False, True), (None, True, False)):
        theirs = render_official(
            hf_qwen3, official, messages, schemas, generation=generation, thinking=thinking
        )
        ours = render_qwen3(
            messages,
            schemas,
            add_generation_prompt=generation,
            enable_thinking=thinking is not False,
        )
        assert ours == theirs, (generation, thinking)
        jinja = hf_qwen3.apply_chat_template(
            list(messages),
            tools=schemas,
            add_generation_prompt=generation,
            tokenize=False,
            **({} if thinking is None else {"enable_thinking": thinking}),
        )
        assert jinja == theirs, (
            generation,
            thinking,
        )  # the package's own Jinja copy (load_tokenizer's default)
        assert qwen3.encode(ours) == hf_qwen3.encode(theirs, add_special_tokens=False)


def test_prompts_of_qwen3_template_equal_the_official_generation_prompt(
    hf_qwen3, qwen3, official
) -> None:
    from agentenv.tokens import qwen3_template

    no_think = qwen3_template(enable_thinking=False)
    for messages in CONVERSATIONS.values():
        for schemas in TOOLSETS.values():
            for template, thinking in ((qwen3, True), (no_think, False)):
                text = render_official(
                    hf_qwen3, official, messages, schemas, generation=True, thinking=thinking
                )
                assert template.render_prefix(messages, schemas) == hf_qwen3.encode(
                    text, add_special_tokens=False
                )


def test_a_finished_conversation_ends_with_im_end_and_a_newline(hf_qwen3, qwen3, official) -> None:
    for messages in CONVERSATIONS.values():
        text = render_official(
            hf_qwen3, official, messages, [SEARCH], generation=False, thinking=None
        )
        assert text.endswith("<|im_end|>\n") and not text.endswith("<|im_end|>\n\n")
        assert render_qwen3(messages, [SEARCH]).endswith("<|im_end|>\n")
        ids = qwen3.encode(text)
        assert ids[-2:] == [151645, 198]  # <|im_end|>, "\n"


def test_a_token_env_trajectory_is_the_official_rendering_without_the_final_newline(
    hf_qwen3, qwen3, official, make_fake_env
) -> None:
    """The policy writes each turn as the template would (and makes no invalid turn, after which the
    template would drop the earlier <think>); the episode ends on the sampled <|im_end|>.

    The official rendering of the same conversation adds "\\n" after that <|im_end|>: a trainer that
    re-renders with ``apply_chat_template`` gets one more id (198) than the trajectory, never another.
    """
    eos = qwen3.eos_ids[0]
    actions = [
        '<think>\nSearch first.\n</think>\n\n<tool_call>\n{"name": "search", "arguments": {"query": "jeunet"}}\n</tool_call>',
        '<think>\nOnce more.\n</think>\n\n<tool_call>\n{"name": "search", "arguments": {"query": "amélie", "k": 1}}\n</tool_call>',
        "<think>\nAnswer.\n</think>\n\n<answer>Jean-Pierre Jeunet</answer>",
    ]
    env = TokenEnv(make_fake_env(), qwen3)
    _, info = env.reset(seed=1, options={"index": 1})
    for action in actions:
        *_, info = env.step(qwen3.encode(action) + [eos])
    theirs = render_official(
        hf_qwen3, official, info["messages"], info["tools"], generation=False, thinking=None
    )
    assert info["input_ids"][-1] == eos
    assert info["input_ids"] + [198] == hf_qwen3.encode(theirs, add_special_tokens=False)
    assert qwen3.decode(info["input_ids"]) + "\n" == theirs
    assert int(np.sum(info["loss_mask"])) == sum(len(qwen3.encode(a)) + 1 for a in actions)
    assert json.loads(info["messages"][2]["tool_calls"][0]["function"]["arguments"]) == {
        "query": "jeunet"
    }
