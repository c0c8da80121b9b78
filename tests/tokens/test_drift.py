"""Re-tokenization drift, with real Qwen3 ids: the naive loop changes what the policy sampled.

Each case samples ids that decode to a valid tool call, steps the fake env, and
compares two trajectories:

- TokenEnv's ``input_ids``: prompt ids + the sampled ids + the env turn;
- the naive path: decode -> env messages -> ``apply_chat_template`` -> encode.

The prompt and env turn are the same in both, so any difference is in the
assistant span: the ids the trainer would score are not the ids sampled.
The ids asserted here are quoted in ``docs/token-in-token-out.md``.
"""

from __future__ import annotations

import pytest

from agentenv.tokens import TokenEnv

CALL = '<tool_call>\n{{"name": "search", "arguments": {args}}}\n</tool_call>'


def step_once(template, env, sampled: list[int]) -> tuple[list[int], dict]:
    token_env = TokenEnv(env, template)
    prompt, _ = token_env.reset(seed=0, options={"index": 0})
    env_turn, *_, info = token_env.step(sampled)
    return prompt.tolist() + sampled + env_turn.tolist(), info


def naive(hf, info: dict) -> list[int]:
    text = hf.apply_chat_template(
        info["messages"], tools=info["tools"], add_generation_prompt=True, tokenize=False
    )
    return hf.encode(text, add_special_tokens=False)


def assistant_span(ids: list[int], prompt_len: int, env_len: int) -> list[int]:
    return ids[prompt_len : len(ids) - env_len]


def check_drift(qwen3, hf, env, sampled: list[int]) -> list[int]:
    """Step with ``sampled``; return the naive path's ids for the same assistant turn."""
    expected, info = step_once(qwen3, env, sampled)
    assert info["input_ids"] == expected  # TokenEnv keeps the sampled ids exactly
    assert [i for i, m in zip(info["input_ids"], info["loss_mask"], strict=True) if m] == sampled
    retokenized = naive(hf, info)
    prompt_len = info["loss_mask"].index(1)
    env_len = len(info["loss_mask"]) - prompt_len - len(sampled)
    assert retokenized[:prompt_len] == expected[:prompt_len]
    assert retokenized[len(retokenized) - env_len :] == expected[len(expected) - env_len :]
    return assistant_span(retokenized, prompt_len, env_len)


@pytest.fixture
def eos(qwen3) -> list[int]:
    return [qwen3.eos_ids[0]]


def test_control_canonical_ids_do_not_drift(qwen3, hf_qwen3, fake_env, eos):
    sampled = qwen3.encode(CALL.format(args='{"query": "Christopher Nolan"}')) + eos
    assert check_drift(qwen3, hf_qwen3, fake_env, sampled) == sampled


def test_a_non_canonical_merge(qwen3, hf_qwen3, fake_env, eos):
    """BPE has many encodings of one string; encode() returns only the canonical one."""
    assert qwen3.encode(" Nolan") == [61632]
    assert qwen3.encode(" No") + qwen3.encode("lan") == [2308, 10715]
    canonical = qwen3.encode(CALL.format(args='{"query": "Christopher Nolan"}'))
    at = canonical.index(61632)
    sampled = canonical[:at] + [2308, 10715] + canonical[at + 1 :] + eos
    assert qwen3.decode(sampled) == qwen3.decode(canonical + eos)  # same text ...
    span = check_drift(qwen3, hf_qwen3, fake_env, sampled)
    assert span == canonical + eos != sampled  # ... other ids


def test_b_whitespace_around_the_tool_call_json(qwen3, hf_qwen3, fake_env, eos):
    """The parser strips what surrounds the JSON; the template re-renders its own layout."""
    body = '{"name": "search", "arguments": {"query": "Christopher Nolan"}}'
    sampled = (
        [151657, 90, 1]  # "<tool_call>" then "{" + '"' where canonical is "\n" + '{"'
        + qwen3.encode(body[2:])
        + qwen3.encode("  \n")  # trailing spaces the parser strips: [2303]
        + [151658]
        + eos
    )
    assert qwen3.encode('{"') == [4913] and qwen3.encode("  \n") == [2303]
    span = check_drift(qwen3, hf_qwen3, fake_env, sampled)
    assert span == qwen3.encode(CALL.format(args='{"query": "Christopher Nolan"}')) + eos
    assert span[:3] == [151657, 198, 4913] and sampled[:3] == [151657, 90, 1]


def test_c_tool_call_json_is_parsed_and_reserialised(qwen3, hf_qwen3, fake_env, eos):
    """json.loads -> json.dumps changes separators and unescapes \\u escapes."""
    compact = (
        '<tool_call>\n{"name":"search","arguments":{"k":1,"query":"Am\\u00e9lie"}}\n</tool_call>'
    )
    sampled = qwen3.encode(compact) + eos
    span = check_drift(qwen3, hf_qwen3, fake_env, sampled)
    rendered = CALL.format(args='{"k": 1, "query": "Amélie"}')
    assert span == qwen3.encode(rendered) + eos
    assert len(sampled) == 25 and len(span) == 27
    assert qwen3.encode('"Am\\u00e9lie"') == [1, 6091, 3770, 15, 15, 68, 24, 11567, 1]
    assert qwen3.encode(' "Amélie"') == [330, 6091, 963, 11567, 1]


def test_d_unicode_normalisation(qwen3, hf_qwen3, fake_env, eos):
    """Qwen's tokenizer NFC-normalises: sampled decomposed accents come back composed."""
    head = qwen3.encode(CALL.format(args='{"query": "Ame').split("Ame")[0] + "Ame")
    tail = qwen3.encode('lie"}}\n</tool_call>')
    accent = [53839]  # U+0301 COMBINING ACUTE ACCENT, the canonical id of the lone accent
    assert qwen3.encode("\u0301") == accent
    sampled = head + accent + tail + eos
    span = check_drift(qwen3, hf_qwen3, fake_env, sampled)
    assert span == qwen3.encode(CALL.format(args='{"query": "Amélie"}')) + eos
    assert qwen3.encode("Amélie") == [6091, 963, 11567]


def test_e_template_rewrites_earlier_turns(qwen3, hf_qwen3, fake_env, eos):
    """After a new user message Qwen3's template drops earlier reasoning from the history."""
    thought = "<think>\nSearch first.\n</think>\n\n" + CALL.format(args='{"query": "Nolan"}')
    env = TokenEnv(fake_env, qwen3)
    env.reset(seed=0, options={"index": 0})
    first = qwen3.encode(thought) + eos
    env.step(first)
    *_, info = env.step(qwen3.encode("oops") + eos)  # an error turn: a user message
    assert info["input_ids"][info["loss_mask"].index(1) :][: len(first)] == first
    retokenized = naive(hf_qwen3, info)
    assert 151667 in info["input_ids"] and 151667 not in retokenized  # <think> is gone
    assert len(retokenized) < len(info["input_ids"])
