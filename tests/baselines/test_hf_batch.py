"""The hf agent's batched, token-exact mode on the tiny from-scratch checkpoint: the ids it keeps are
exactly TokenEnv's for the ids it sampled, a batch gives each row what it gives that row alone, a
turn stops at the end of a tool call, and ``agentenv eval`` runs episodes in batches."""

from __future__ import annotations

import json

import gymnasium as gym
import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

import agentenv  # noqa: E402,F401 - registers the ids
from agentenv.baselines.hf_agent import load_model, make_hf_agent  # noqa: E402
from agentenv.baselines.hf_batch import Request, generate_batch  # noqa: E402
from agentenv.cli.main import main  # noqa: E402
from agentenv.evaluation.runner import RunConfig, run_episode  # noqa: E402
from agentenv.lessons.scratch.base import shipped_base  # noqa: E402
from agentenv.tokens import TokenEnv  # noqa: E402

SCRATCH = shipped_base()  # the tiny from-scratch checkpoint (Qwen3-style template, 21 MB)
ENV_ARGS = {"compact": True, "kinds": ["lookup"]}
TOOL_CALL = '<tool_call>\n{"name": "search", "arguments": {"query": "Heat"}}\n</tool_call>'


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def env() -> gym.Env:
    return gym.make("MediaSearch-v0", split="validation", **ENV_ARGS)


def test_the_kept_ids_are_token_env_s_for_the_sampled_ids(env) -> None:
    agent = make_hf_agent(
        model=str(SCRATCH), batch_size="2", max_new_tokens="24", temperature="1.0", threads="1"
    )
    config = RunConfig("MediaSearch-v0", "hf", split="validation")
    sampled_turns: list[list[int]] = []
    act = agent.act

    def recording_act(obs, info):
        action = act(obs, info)
        sampled_turns.append(list(agent.last_token_ids))
        return action

    agent.act = recording_act
    record = run_episode(env, agent, config, 3, 5)
    assert len(sampled_turns) >= 2 and record["turns"] >= len(sampled_turns)
    # Replay: TokenEnv, fed the ids the agent sampled, must hold the very ids the agent kept.
    token_env = TokenEnv(
        gym.make("MediaSearch-v0", split="validation", **ENV_ARGS), agent._template
    )
    _, info = token_env.reset(seed=config.seed + 3, options={"index": 5})
    for ids in sampled_turns:
        _, _, terminated, truncated, info = token_env.step(ids)
    n = len(info["input_ids"])
    assert (
        info["input_ids"] == agent.trajectory_ids[:n] and info["loss_mask"] == agent.loss_mask[:n]
    )
    assert n == len(agent.trajectory_ids) or record.get("agent_failure")  # the window ended it
    kept = [m["content"] for m in info["messages"]]
    assert kept == [m["content"] for m in record["messages"]][: len(kept)]
    sampled = [lp for lp, m in zip(agent.logprobs, agent.loss_mask, strict=True) if m]
    assert all(lp is not None and lp <= 0.0 for lp in sampled)


def test_a_batch_gives_each_row_what_it_gives_that_row_alone() -> None:
    model, tokenizer = load_model(str(SCRATCH))
    prompts = [
        tokenizer.encode("<|im_start|>user\nWho directed Heat?<|im_end|>\n<|im_start|>assistant\n"),
        tokenizer.encode("<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"),
        tokenizer.encode("<|im_start|>user\nname a film from 1995 with a long title<|im_end|>\n"),
    ]
    common = {"stop_ids": frozenset(), "pad_id": 0, "decode": tokenizer.decode, "stop_strings": ()}

    def requests(budgets):
        return [Request(list(p), b) for p, b in zip(prompts, budgets, strict=True)]

    together = generate_batch(model, requests([6, 2, 9]), **common)  # rows leave the batch early
    alone = [generate_batch(model, [r], **common)[0] for r in requests([6, 2, 9])]
    assert [g.ids for g in together] == [g.ids for g in alone]
    assert [len(g.ids) for g in together] == [6, 2, 9]
    assert all(g.reason == "length" for g in together)
    for a, b in zip(together, alone, strict=True):
        np.testing.assert_allclose(a.logprobs, b.logprobs, atol=1e-4)


class Scripted(torch.nn.Module):
    """The real model with its logits overridden to spell ``script``, one id per forward call."""

    def __init__(self, model, script: list[int]) -> None:
        super().__init__()
        self.inner, self.script, self.step = model, script, 0

    def forward(self, **kwargs):
        out = self.inner(**kwargs)
        logits = torch.zeros_like(out.logits)
        logits[..., self.script[min(self.step, len(self.script) - 1)]] = 100.0
        self.step += 1
        out.logits = logits
        return out


def test_a_turn_stops_at_the_end_of_a_tool_call() -> None:
    model, tokenizer = load_model(str(SCRATCH))
    call = tokenizer.encode(TOOL_CALL, add_special_tokens=False)
    script = call + tokenizer.encode(" and more text", add_special_tokens=False)
    prompt = tokenizer.encode("<|im_start|>user\nHeat?<|im_end|>\n<|im_start|>assistant\n")
    out = generate_batch(
        Scripted(model, script),
        [Request(prompt, 3), Request(prompt[2:], 200)],
        stop_ids=frozenset({tokenizer.convert_tokens_to_ids("<|im_end|>")}),
        pad_id=0,
        decode=tokenizer.decode,
    )
    assert out[0].ids == call[:3] and out[0].reason == "length"
    assert out[1].ids == call and out[1].reason == "stop_string"
    assert tokenizer.decode(out[1].ids) == TOOL_CALL


def test_agentenv_eval_runs_episodes_in_batches(tmp_path, capsys, monkeypatch) -> None:
    import agentenv.baselines.hf_agent as hf

    seen: list = []
    original = hf._shared_batching

    def spy(agent):
        template, batcher = original(agent)
        seen.append(batcher)
        return template, batcher

    monkeypatch.setattr(hf, "_shared_batching", spy)
    out = tmp_path / "run"
    args = ["model=" + str(SCRATCH), "batch_size=4", "max_new_tokens=8", "threads=1"]
    code = main(
        ["eval", "MediaSearch-v0", "--agent", "hf", "--agent-args", *args]
        + ["--env-arg", "compact=true", "--env-arg", 'kinds=["lookup"]']
        + ["--split", "validation", "--episodes", "5", "--out", str(out), "--no-progress"]
    )
    assert code == 0, capsys.readouterr().err
    summary = json.loads((out / "summary.json").read_text())
    assert summary["episodes"] == 5 and summary["agent_failures"] == 0
    assert len(seen) == 4 and len({id(b) for b in seen}) == 1  # four episode threads, one batcher
    assert max(seen[0].batches) > 1


def test_closing_the_batcher_releases_every_waiting_thread_at_once() -> None:
    import threading
    import time

    from agentenv.baselines.hf_batch import Batcher
    from agentenv.evaluation.agents import AgentFailure

    started = threading.Event()

    def slow(batch, abort):  # a batch that would run for minutes unless aborted
        started.set()
        assert abort.wait(30)
        raise AgentFailure("stopped")

    batcher = Batcher(slow, capacity=1, gather_s=0.0)
    errors: list[BaseException] = []

    def episode() -> None:
        try:
            batcher.submit(Request([1, 2], 4))
        except AgentFailure as err:
            errors.append(err)

    threads = [threading.Thread(target=episode) for _ in range(3)]
    for t in threads:
        t.start()
    assert started.wait(5)
    begin = time.perf_counter()
    batcher.close()
    for t in threads:
        t.join(5)
    assert len(errors) == 3 and time.perf_counter() - begin < 2
    with pytest.raises(AgentFailure, match="stopped"):
        batcher.submit(Request([1], 1))


def test_a_turn_continued_from_the_cache_equals_a_full_reread() -> None:
    model, tokenizer = load_model(str(SCRATCH))
    common = {"stop_ids": frozenset(), "pad_id": 0, "decode": tokenizer.decode, "stop_strings": ()}
    firsts = [
        tokenizer.encode("<|im_start|>user\nWho directed Heat?<|im_end|>\n<|im_start|>assistant\n"),
        tokenizer.encode("<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"),
    ]
    turn1 = generate_batch(
        model,
        [Request(p, b) for p, b in zip(firsts, [5, 3], strict=True)],
        keep_cache=True,
        **common,
    )
    env_turn = tokenizer.encode("<|im_end|>\n<|im_start|>user\n<tool_response>\nHeat (1995)\n")
    seconds = [p + g.ids + env_turn for p, g in zip(firsts, turn1, strict=True)]
    for p, g in zip(firsts, turn1, strict=True):
        assert g.cache is not None and g.cache.length == len(p) + len(g.ids) - 1
    third = tokenizer.encode(
        "<|im_start|>user\nname a film from 1995 with a long title<|im_end|>\n"
    )
    # Two rows continue from their caches, one starts fresh, in one batch; then all re-read in full.
    cont = [Request(s, 6, past=g.cache) for s, g in zip(seconds, turn1, strict=True)]
    continued = generate_batch(model, [*cont, Request(third, 4)], **common)
    reread = generate_batch(model, [Request(s, 6) for s in seconds] + [Request(third, 4)], **common)
    assert [g.ids for g in continued] == [g.ids for g in reread]
    for a, b in zip(continued, reread, strict=True):
        np.testing.assert_allclose(a.logprobs, b.logprobs, atol=1e-4)


def test_an_episode_continued_from_the_cache_is_the_episode_reread_every_turn(env) -> None:
    config = RunConfig("MediaSearch-v0", "hf", split="validation")

    def episode(reuse: str) -> tuple[list, list[int]]:
        agent = make_hf_agent(
            model=str(SCRATCH), batch_size="3", max_new_tokens="20", reuse_cache=reuse, threads="1"
        )
        record = run_episode(env, agent, config, 1, 7)
        return record["messages"], agent.trajectory_ids

    continued, reread = episode("true"), episode("false")
    assert len([m for m in continued[0] if m["role"] == "assistant"]) >= 2
    assert continued == reread
