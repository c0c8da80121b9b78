"""The hf agent on a tiny random Qwen3 and a tiny BPE tokenizer saved to disk: a full ``agentenv eval``
run, seeded sampling, clear errors for bad paths, context-window failures, and decoded text that
reaches the env verbatim."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
tokenizers = pytest.importorskip("tokenizers")

import agentenv  # noqa: E402,F401 - registers the ids
from agentenv.baselines.hf_agent import HFAgent, HFAgentArgs, make_hf_agent  # noqa: E402
from agentenv.cli.main import main  # noqa: E402
from agentenv.errors import UserInputError  # noqa: E402
from agentenv.evaluation.agents import AgentFailure, agent_names, make_agent  # noqa: E402
from agentenv.evaluation.runner import RunConfig, run_episode  # noqa: E402

CONFIG = RunConfig("MediaSearch-v0", "hf", split="validation")

SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
MARKUP = [
    "<tool_call>",
    "</tool_call>",
    "<answer>",
    "</answer>",
    "<tool_response>",
    "</tool_response>",
]

# ChatML with tool calls rendered as Qwen3 does; no whitespace control, so every newline is literal.
CHAT_TEMPLATE = (
    "{% if tools %}<|im_start|>system\n"
    "{% if messages[0].role == 'system' %}{{ messages[0].content }}\n\n{% endif %}"
    "# Tools\n<tools>{% for t in tools %}\n{{ t | tojson }}{% endfor %}\n</tools><|im_end|>\n{% endif %}"
    "{% for m in messages %}"
    "{% if m.role == 'system' %}{% if not tools %}<|im_start|>system\n{{ m.content }}<|im_end|>\n{% endif %}"
    "{% elif m.role == 'assistant' %}<|im_start|>assistant\n{{ m.content or '' }}"
    "{% for tc in m.tool_calls or [] %}{% if loop.first and m.content %}\n{% endif %}"
    '<tool_call>\n{"name": "{{ tc.function.name }}", "arguments": '
    "{% if tc.function.arguments is string %}{{ tc.function.arguments }}"
    "{% else %}{{ tc.function.arguments | tojson }}{% endif %}}\n</tool_call>"
    "{% if not loop.last %}\n{% endif %}{% endfor %}<|im_end|>\n"
    "{% elif m.role == 'tool' %}<|im_start|>user\n<tool_response>\n{{ m.content }}\n</tool_response><|im_end|>\n"
    "{% else %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endif %}"
    "{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)

TOOL_CALL = '<tool_call>\n{"name": "search", "arguments": {"query": "Heat"}}\n</tool_call>'


def training_text(n: int = 300) -> list[str]:
    """MediaSearch-like strings: the env's own prompts and tool results, plus actions."""
    env = gym.make("MediaSearch-v0", split="validation")
    texts: list[str] = []
    for i in range(n // 3):
        obs, info = env.reset(seed=i, options={"index": i % len(env.unwrapped.tasks)})
        texts.append(obs)
        if i < 5:
            texts.append(info["messages"][0]["content"])
            texts.append(json.dumps(info["tools"]))
            _, _, _, _, info = env.step(TOOL_CALL.replace("Heat", obs.split()[-1]))
            texts.append(info["messages"][-1]["content"])
        texts.append(f"<answer>{obs.split()[-1]}</answer>")
    return texts


def build_tokenizer(directory: Path, vocab_size: int = 600) -> Any:
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(training_text(), trainer)
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in SPECIAL])
    tok.add_tokens([AddedToken(t, special=False, normalized=False) for t in MARKUP])
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|endoftext|>"
    )
    fast.chat_template = CHAT_TEMPLATE
    fast.save_pretrained(directory)
    return fast


def build_model(
    directory: Path,
    tokenizer: Any,
    *,
    window: int = 8192,
    hidden: int = 64,
    layers: int = 2,
    seed: int = 0,
) -> None:
    from transformers import Qwen3Config, Qwen3ForCausalLM

    config = Qwen3Config(
        vocab_size=len(tokenizer),
        hidden_size=hidden,
        intermediate_size=2 * hidden,
        num_hidden_layers=layers,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=hidden // 4,
        max_position_embeddings=window,
        tie_word_embeddings=True,
        eos_token_id=tokenizer.convert_tokens_to_ids("<|im_end|>"),
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=None,
    )
    with torch.random.fork_rng():  # the global generator is left as it was
        torch.manual_seed(seed)
        model = Qwen3ForCausalLM(config)
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    """threads=1 (what the agents below ask for) is fastest on a shared CPU; restored afterwards."""
    before = torch.get_num_threads()
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory) -> SimpleNamespace:
    root = tmp_path_factory.mktemp("hf")
    tokenizer = build_tokenizer(root / "tokenizer")
    build_model(root / "model", tokenizer)
    build_model(root / "short", tokenizer, window=32)
    return SimpleNamespace(model=root / "model", short=root / "short", tokenizer=tokenizer)


@pytest.fixture(scope="module")
def env() -> gym.Env:
    return gym.make("MediaSearch-v0", split="validation")


def test_the_entry_point_is_declared() -> None:
    assert "hf" in agent_names()


def test_agentenv_eval_runs_and_writes_a_summary(checkpoints, tmp_path, capsys) -> None:
    out = tmp_path / "run"
    code = main(
        [
            "eval",
            "MediaSearch-v0",
            "--agent",
            "hf",
            "--agent-args",
            f"model={checkpoints.model}",
            "max_new_tokens=16",
            "threads=1",
            "--split",
            "validation",
            "--episodes",
            "3",
            "--out",
            str(out),
            "--no-progress",
        ]
    )
    assert code == 0, capsys.readouterr().err
    summary = json.loads((out / "summary.json").read_text())
    assert summary["agent"] == "hf" and summary["episodes"] == 3 and summary["agent_failures"] == 0
    assert "accuracy" in summary["metrics"] and "accuracy" in summary["intervals"]
    records = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines()]
    assert len(records) == 3 and all(r["turns"] >= 1 for r in records)


def test_sampling_repeats_with_the_seed_and_ignores_the_global_generator(checkpoints, env) -> None:
    def episode(seed: int, episode: int) -> dict:
        agent = make_agent(
            "hf",
            model=str(checkpoints.model),
            max_new_tokens="12",
            temperature="1.0",
            top_p="0.95",
            threads="1",
        )
        torch.manual_seed(seed)  # must not matter: the agent samples from its own generator
        return run_episode(env, agent, CONFIG, episode, 0)

    first, again, other = episode(1, 0), episode(2, 0), episode(3, 1)
    assert first["messages"] == again["messages"]
    actions = [m["content"] for m in first["messages"] if m["role"] == "assistant"]
    assert actions and actions != [
        m["content"] for m in other["messages"] if m["role"] == "assistant"
    ]


def test_greedy_is_deterministic_and_the_model_is_loaded_once(checkpoints, env) -> None:
    a = make_hf_agent(model=str(checkpoints.model), max_new_tokens="8", threads="1")
    b = make_hf_agent(model=str(checkpoints.model), max_new_tokens="8", threads="1")
    assert a.model is b.model and a.tokenizer is b.tokenizer
    assert (
        run_episode(env, a, CONFIG, 0, 2)["messages"]
        == run_episode(env, b, CONFIG, 5, 2)["messages"]
    )


def test_bad_model_paths_are_clear_errors(tmp_path, capsys) -> None:
    with pytest.raises(UserInputError, match="needs model=DIR"):
        make_agent("hf")
    with pytest.raises(UserInputError, match="no such directory"):
        make_agent("hf", model=str(tmp_path / "missing"))
    (tmp_path / "file.bin").write_text("x")
    with pytest.raises(UserInputError, match="not a directory"):
        make_agent("hf", model=str(tmp_path / "file.bin"))
    with pytest.raises(UserInputError, match="no config.json"):
        make_agent("hf", model=str(tmp_path))
    with pytest.raises(UserInputError, match="unknown argument 'temp'"):
        make_agent("hf", model=str(tmp_path), temp="1")
    code = main(
        [
            "eval",
            "MediaSearch-v0",
            "--agent",
            "hf",
            "--agent-args",
            f"model={tmp_path / 'missing'}",
            "--episodes",
            "1",
            "--out",
            str(tmp_path / "out"),
            "--no-progress",
        ]
    )
    assert code == 2 and "no such directory" in capsys.readouterr().err


def test_a_prompt_longer_than_the_window_is_an_agent_failure(checkpoints, env) -> None:
    agent = make_agent("hf", model=str(checkpoints.short), max_new_tokens="8")
    obs, info = env.reset(seed=0, options={"index": 0})
    agent.reset(obs, info, task=env.unwrapped.task, rng=np.random.default_rng(0))
    n = len(agent.prompt_ids(info))
    assert n > 32
    with pytest.raises(AgentFailure, match=rf"prompt is {n} tokens .* context window .* is 32"):
        agent.act(obs, info)
    record = run_episode(env, agent, CONFIG, 0, 0)  # the runner scores it unanswered, no crash
    assert "context window" in record["agent_failure"] and record["reward_components"]


def test_generation_stops_at_the_window(checkpoints, env) -> None:
    agent = make_agent("hf", model=str(checkpoints.model), max_new_tokens="64")
    obs, info = env.reset(seed=0, options={"index": 0})
    agent.reset(obs, info, task=env.unwrapped.task, rng=np.random.default_rng(0))
    agent.window = len(agent.prompt_ids(info)) + 3
    agent.stop_ids = frozenset()  # a random model could stop early by chance
    agent.act(obs, info)
    assert len(agent.last_token_ids) == 3 and agent.last_finish_reason == "window"


class Forced(torch.nn.Module):
    """The real model, with its logits overridden to spell out ``script`` (then to repeat its last id)."""

    def __init__(self, model: Any, script: list[int]) -> None:
        super().__init__()
        self.inner, self.script, self.step = model, script, 0
        self.config = model.config

    def forward(self, **kwargs: Any) -> Any:
        out = self.inner(**kwargs)
        logits = torch.zeros_like(out.logits)
        logits[..., self.script[min(self.step, len(self.script) - 1)]] = 100.0
        self.step += 1
        out.logits = logits
        return out


@pytest.mark.parametrize("temperature", ["0", "0.7"])
def test_decoded_text_reaches_the_env_verbatim(checkpoints, env, temperature) -> None:
    agent: HFAgent = make_agent("hf", model=str(checkpoints.model), temperature=temperature)
    tok = agent.tokenizer
    end = tok.convert_tokens_to_ids("<|im_end|>")
    obs, info = env.reset(seed=0, options={"index": 0})
    agent.reset(obs, info, task=env.unwrapped.task, rng=np.random.default_rng(0))
    model = agent.model
    try:
        agent.model = Forced(model, tok.encode(TOOL_CALL, add_special_tokens=False) + [end])
        action = agent.act(obs, info)
        assert (
            action == TOOL_CALL
            and agent.last_token_ids[-1] == end
            and agent.last_finish_reason == "stop"
        )
        obs, _, terminated, _, info = env.step(action)
        assert not terminated and info["tool_calls"] == 1 and info["messages"][-1]["role"] == "tool"
        # The env's assistant message with tool_calls renders back as the same block.
        prompt = tok.decode(agent.prompt_ids(info), skip_special_tokens=False)
        assert (
            f"<|im_start|>assistant\n{TOOL_CALL}<|im_end|>\n<|im_start|>user\n<tool_response>"
            in prompt
        )
        assert prompt.endswith("<|im_start|>assistant\n")
        answer = "<answer>Heat</answer>"
        agent.model = Forced(model, tok.encode(answer, add_special_tokens=False) + [end])
        action = agent.act(obs, info)
        assert action == answer == tok.decode(agent.last_token_ids[:-1], skip_special_tokens=False)
        _, _, terminated, _, info = env.step(action)
        assert terminated and info["messages"][-1]["content"] == answer
    finally:
        agent.model = model


def test_args_parse_from_strings() -> None:
    with pytest.raises(UserInputError, match="temperature >= 0"):
        HFAgentArgs(model=".", temperature=-1.0)
    with pytest.raises(UserInputError, match="top_p"):
        HFAgentArgs(model=".", top_p=0.0)
