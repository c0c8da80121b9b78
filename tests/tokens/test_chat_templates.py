"""Qwen3's chat format: the Python renderer, the Jinja template, and hf_template's env turns."""

from __future__ import annotations

import pytest

from agentenv.tokens import TemplateNotPrefixStable, TokenEnv, hf_template, qwen3_template
from agentenv.tokens.qwen3_chat import render_qwen3

TOOL = {
    "type": "function",
    "function": {
        "name": "search",
        "description": "Search films.",
        "parameters": {
            "type": "object",
            "properties": {"query": {"type": "string"}},
            "required": ["query"],
        },
    },
}


def call(call_id: str, query: str, as_string: bool = True) -> dict:
    arguments = f'{{"query": "{query}"}}' if as_string else {"query": query}
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": "search", "arguments": arguments},
    }


def tool(call_id: str, content: str) -> dict:
    return {"role": "tool", "tool_call_id": call_id, "name": "search", "content": content}


SYSTEM = {"role": "system", "content": "Be brief."}
USER = {"role": "user", "content": "Who directed Amélie?"}
CONVERSATIONS = {
    "user only": [USER],
    "system": [SYSTEM, USER],
    "tool loop": [
        SYSTEM,
        USER,
        {
            "role": "assistant",
            "content": "",
            "reasoning_content": "Search.",
            "tool_calls": [call("c1", "Amélie")],
        },
        tool("c1", "Amélie (2001), Jean-Pierre Jeunet."),
        {
            "role": "assistant",
            "content": "Two more.",
            "tool_calls": [call("c2", "a", False), call("c3", "b")],
        },
        tool("c2", "x"),
        tool("c3", "y"),
    ],
    "finished exchange, then a new query": [
        USER,
        {"role": "assistant", "content": "<think>\nold thoughts\n</think>\n\nJeunet."},
        {"role": "user", "content": "And the year?"},
        {"role": "assistant", "content": "2001", "reasoning_content": "\nnew thoughts\n"},
    ],
    "error message": [
        SYSTEM,
        USER,
        {"role": "assistant", "content": "hmm", "reasoning_content": "thinking"},
        {"role": "user", "content": "Error: no tool call."},
    ],
    "wrapped tool output in a user turn": [
        USER,
        {
            "role": "assistant",
            "content": "",
            "reasoning_content": "r",
            "tool_calls": [call("c1", "q")],
        },
        {"role": "user", "content": "<tool_response>\nz\n</tool_response>"},
        {"role": "assistant", "content": "done"},
    ],
    "late system message and null content": [
        USER,
        {"role": "assistant", "content": None, "tool_calls": [call("c1", "q")]},
        tool("c1", "r"),
        {"role": "system", "content": "Hurry."},
    ],
}
GOLDEN = (
    "<|im_start|>system\nBe brief.\n\n# Tools\n\nYou may call one or more functions to assist with the user query."
    "\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>\n"
    '{"type": "function", "function": {"name": "search", "description": "Search films.", "parameters": '
    '{"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}}}\n</tools>\n\n'
    "For each function call, return a json object with function name and arguments within "
    "<tool_call></tool_call> XML tags:\n<tool_call>\n"
    '{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call><|im_end|>\n'
    "<|im_start|>user\nWho directed Amélie?<|im_end|>\n"
    "<|im_start|>assistant\n<think>\nSearch.\n</think>\n\n"
    '<tool_call>\n{"name": "search", "arguments": {"query": "Amélie"}}\n</tool_call><|im_end|>\n'
    "<|im_start|>user\n<tool_response>\nAmélie (2001), Jean-Pierre Jeunet.\n</tool_response><|im_end|>\n"
    "<|im_start|>assistant\nTwo more.\n"
    '<tool_call>\n{"name": "search", "arguments": {"query": "a"}}\n</tool_call>\n'
    '<tool_call>\n{"name": "search", "arguments": {"query": "b"}}\n</tool_call><|im_end|>\n'
    "<|im_start|>user\n<tool_response>\nx\n</tool_response>\n<tool_response>\ny\n</tool_response><|im_end|>\n"
    "<|im_start|>assistant\n"
)


def test_golden_tool_loop_rendering():
    assert render_qwen3(CONVERSATIONS["tool loop"], [TOOL], add_generation_prompt=True) == GOLDEN


def test_qwen3_drops_reasoning_of_finished_exchanges():
    text = render_qwen3(CONVERSATIONS["finished exchange, then a new query"])
    assert "old thoughts" not in text
    assert text.endswith(
        "<|im_start|>assistant\n<think>\nnew thoughts\n</think>\n\n2001<|im_end|>\n"
    )


@pytest.mark.parametrize("name", list(CONVERSATIONS))
@pytest.mark.parametrize("tools", [None, [TOOL]], ids=["no tools", "tools"])
@pytest.mark.parametrize("generation", [False, True], ids=["", "gen"])
def test_jinja_template_renders_like_python(hf_qwen3, name, tools, generation):
    messages = CONVERSATIONS[name]
    for thinking in (True, False):
        ours = render_qwen3(
            messages, tools, add_generation_prompt=generation, enable_thinking=thinking
        )
        jinja = hf_qwen3.apply_chat_template(
            messages,
            tools=tools,
            add_generation_prompt=generation,
            tokenize=False,
            enable_thinking=thinking,
        )
        assert jinja == ours


ENV_TURNS = {
    "one tool": [tool("call_1_0", "Inception (2010).")],
    "two tools": [tool("call_1_0", "a"), tool("call_1_1", "b")],
    "error": [{"role": "user", "content": "Error: expected a <tool_call>."}],
    "nothing": [],
}


@pytest.mark.parametrize("name", list(ENV_TURNS))
@pytest.mark.parametrize("thinking", [True, False])
def test_hf_template_env_turns_match_qwen3_template(hf_qwen3, name, thinking):
    ours = qwen3_template(enable_thinking=thinking)
    theirs = hf_template(hf_qwen3, enable_thinking=thinking)
    assert theirs.eos_ids[0] == ours.eos_ids[0] == 151645 and theirs.vocab_size == ours.vocab_size
    messages = CONVERSATIONS["system"]
    assert theirs.render_prefix(messages, [TOOL]) == ours.render_prefix(messages, [TOOL])
    new = ENV_TURNS[name]
    for closed in (True, False):
        for generation in (True, False):
            kwargs = {"closed": closed, "add_generation_prompt": generation}
            assert theirs.render_env_turn(new, [TOOL], **kwargs) == ours.render_env_turn(
                new, [TOOL], **kwargs
            )


def test_token_env_with_hf_template_equals_qwen3_template(hf_qwen3, make_fake_env):
    trajectories = []
    for template in (qwen3_template(), hf_template(hf_qwen3)):
        env = TokenEnv(make_fake_env(), template)
        env.reset(seed=1)
        eos = template.eos_ids[0]
        env.step(
            template.encode(
                '<tool_call>\n{"name": "search", "arguments": {"query": "jeunet"}}\n</tool_call>'
            )
        )
        env.step(template.encode("no idea") + [eos])
        *_, info = env.step(template.encode("<answer>Jean-Pierre Jeunet</answer>") + [eos])
        trajectories.append((info["input_ids"], info["loss_mask"]))
    assert trajectories[0] == trajectories[1]


def test_hf_template_rejects_templates_that_rewrite_the_assistant_turn(hf_qwen3):
    unstable = (
        "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}"
        "{% if m.role == 'assistant' and not loop.last %} (edited){% endif %}<|im_end|>\n{% endfor %}"
        "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
    )
    template = hf_template(hf_qwen3, chat_template=unstable)
    with pytest.raises(TemplateNotPrefixStable, match="assistant turn"):
        template.render_env_turn([{"role": "user", "content": "Error"}], None)


def test_hf_template_needs_to_know_the_end_of_turn(hf_qwen3):
    no_eos = "{% for m in messages %}[{{ m.role }}] {{ m.content }}\n{% endfor %}"
    with pytest.raises(ValueError, match="end_of_turn"):
        hf_template(hf_qwen3, chat_template=no_eos)
    template = hf_template(hf_qwen3, chat_template=no_eos, end_of_turn="\n", eos_ids=[151645])
    assert (
        template.decode(template.render_env_turn([{"role": "user", "content": "x"}], None))
        == "[user] x\n"
    )
