"""The factory inside TRL 1.16's asynchronous GRPO rollout loop (``trl.experimental.async_grpo``), on CPU.

``AsyncGRPOTrainer`` cannot run here: its constructor reads the GPU's name for
its FLOPs metric (``torch.cuda.get_device_name``: an ``AssertionError`` with a
CPU build of torch), its ``AsyncRolloutWorker`` refuses to start without vLLM
and aiohttp (``ImportError``), and it generates through a vLLM server's
``/v1/completions`` and syncs weights to that server.
What the worker does with our objects is testable without them: it pickles
``environment_factory`` and ``reward_funcs`` (with the dataset and tokenizer)
into a spawned process, where ``_AsyncRolloutLoop`` draws env instances from
a pool, runs ``reset`` and the tool methods in a thread pool, and scores each
finished group with the reward functions (without ``environments``). This test
pickles those kwargs as the worker does, builds the loop from the copies, and
runs TRL's own generate and score loops with a scripted ``_generate_one_turn``
in place of the HTTP call to vLLM.
"""

from __future__ import annotations

import asyncio
import pickle
import queue
import threading
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import gymnasium as gym
import pytest

pytest.importorskip("torch")
pytest.importorskip("datasets")
async_worker = pytest.importorskip("trl.experimental.async_grpo.async_rollout_worker")

import agentenv  # noqa: E402, F401 - registers the ids
from agentenv.baselines.oracle import OracleAgent  # noqa: E402
from agentenv.engine.actions import answer, tool_call  # noqa: E402
from agentenv.integrations.trl import AgentEnvFactory, dataset  # noqa: E402

from ..scripted_play import agent_actions  # noqa: E402

ENV_ID = "MediaSearch-v0"
SHAPED = {"preset": "efficient", "shaping": True}


def scripts_for(task_index: int) -> tuple[str, dict[str, list[str]], dict[str, float]]:
    """Two policies for one task (an oracle plan with two calls in one message; a wrong answer),
    and the plain env's episode return for each."""
    env = gym.make(ENV_ID, split="train", reward=SHAPED)
    oracle, info = agent_actions(env, OracleAgent(), index=task_index)
    first = tool_call("search", query="family film 2008", k=1)
    scripts = {
        "a": [f"Plan a.\n{first}\n" + "\n".join(oracle[:-1]), f"Plan a.\n{oracle[-1]}"],
        "b": ["Plan b.\n" + answer("I do not know")],
    }
    returns = {}
    for key, texts in scripts.items():
        env.reset(options={"index": task_index})
        total = 0.0
        for text in texts:
            total += env.step(text)[1]
        returns[key] = total
    return info["task_id"], scripts, returns


@pytest.mark.slow
def test_async_rollout_loop_runs_the_pickled_factory_and_scores_episode_returns(
    tiny_qwen3: Path,
) -> None:
    from accelerate.state import PartialState
    from transformers import AutoTokenizer

    PartialState()  # as the worker's child does before it builds the loop (accelerate's logger needs it)
    task_id, scripts, returns = scripts_for(task_index=0)
    factory = AgentEnvFactory(ENV_ID, split="train", reward=SHAPED, seed=0)
    tokenizer = AutoTokenizer.from_pretrained(tiny_qwen3)
    kwargs = {
        "dataset": dataset(ENV_ID, "train", n=1),
        "reward_funcs": [factory.reward_func],
        "environment_factory": factory,
        "processing_class": tokenizer,
    }
    kwargs = pickle.loads(
        pickle.dumps(kwargs)
    )  # what AsyncRolloutWorker.start() checks and spawn does
    buffer: queue.Queue = queue.Queue()
    loop = async_worker._AsyncRolloutLoop(
        model_name="tiny",
        eos_token_ids=[tokenizer.convert_tokens_to_ids("<|im_end|>")],
        rollout_buffer=buffer,
        model_version_value=SimpleNamespace(value=0),
        heartbeat_value=SimpleNamespace(value=0.0),
        failed_event=threading.Event(),
        exception_info_queue=queue.Queue(),
        metrics_queue=queue.Queue(maxsize=4096),
        num_generations=2,
        max_inflight_tasks=2,
        max_tool_calling_iterations=4,
        **kwargs,
    )
    end = tokenizer.convert_tokens_to_ids("<|im_end|>")
    fresh = iter(["a", "b"] * 100)

    async def scripted(prompt_ids: list[int]) -> tuple[list[int], list[float]]:
        text = tokenizer.decode(prompt_ids)
        turn = text.count("<|im_start|>assistant") - 1
        key = next(fresh) if turn == 0 else next(k for k in scripts if f"Plan {k}." in text)
        ids = tokenizer.encode(scripts[key][turn], add_special_tokens=False) + [end]
        return ids, [0.0] * len(ids)

    loop._generate_one_turn = scripted  # in place of the POST to vLLM's /v1/completions

    async def run() -> list[Any]:
        stop = asyncio.Event()
        tasks = [
            asyncio.create_task(loop._generate_loop(stop)),
            asyncio.create_task(loop._score_loop(stop)),
        ]
        samples: list[Any] = []
        while len(samples) < 2:
            done = [t for t in tasks if t.done()]
            if done:
                done[0].result()  # a loop that died raises here
            try:
                samples.append(buffer.get_nowait())
            except queue.Empty:
                await asyncio.sleep(0.05)
        stop.set()
        await asyncio.wait_for(asyncio.gather(*tasks), timeout=60)
        return samples

    try:
        samples = asyncio.run(run())
    finally:
        loop._tool_pool.shutdown(wait=True)
    by_plan = {s.completion[0]["content"].split(".")[0]: s for s in samples}
    assert sorted(by_plan) == ["Plan a", "Plan b"]
    for key in ("a", "b"):
        metrics = by_plan[f"Plan {key}"].metrics
        assert metrics["rewards/MediaSearch_v0"] == pytest.approx(returns[key]), key
    assert (
        returns["a"] > returns["b"]
        and by_plan["Plan a"].advantage > 0 > by_plan["Plan b"].advantage
    )
    calls = by_plan["Plan a"].completion[0]["tool_calls"]
    assert len(calls) >= 2  # two calls in one message, run by TRL's thread pool, one env turn
    results = loop.reward_funcs[0].last_results
    assert {r.task_id for r in results} == {task_id} and all(
        r.reward == sum(r.step_rewards) for r in results
    )
