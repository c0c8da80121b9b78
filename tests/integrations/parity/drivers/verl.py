"""verl: the ``agentenv_qwen3`` agent loop, built by hydra from verl's own registry as verl's worker builds it,
its ``run`` awaited with a scripted rollout server that answers each ``generate`` with the script's ids."""

from __future__ import annotations

import asyncio
from typing import Any

from ..scripts import ParityRecord, Script, policy_ids, qwen3

REQUIRES = "verl"


class ScriptedServer:
    """Stands in for verl's ``LLMServerClient``: ``generate`` returns the next action's ids as a ``TokenOutput``."""

    def __init__(self, actions: tuple[str, ...]) -> None:
        self.actions = list(actions)
        self.prompts: list[list[int]] = []

    async def generate(
        self,
        request_id: str,
        *,
        prompt_ids: list[int],
        sampling_params: dict[str, Any],
        **kwargs: Any,
    ) -> Any:
        from verl.workers.rollout.replica import TokenOutput

        self.prompts.append(list(prompt_ids))
        ids = policy_ids(self.actions[len(self.prompts) - 1], qwen3())
        return TokenOutput(token_ids=ids, log_probs=[-0.5] * len(ids))


def agent_loop(server: ScriptedServer, name: str = "agentenv_qwen3", **rollout: Any) -> Any:
    """The agent loop ``name`` as verl's ``AgentLoopWorker._run_agent_loop`` instantiates it."""
    import hydra.utils
    from omegaconf import OmegaConf
    from verl.experimental.agent_loop.agent_loop import (
        DictConfigWrap,
        ToolListWrap,
        _agent_loop_registry,
    )

    import agentenv.integrations.verl.agent_loop  # noqa: F401 - registers the loops
    from agentenv.tokens.qwen3_tokenizer import load_tokenizer

    config = OmegaConf.create(
        {
            "actor_rollout_ref": {
                "rollout": {"prompt_length": 8192, "response_length": 32768, **rollout}
            },
            "data": {"apply_chat_template_kwargs": {}},
        }
    )
    return hydra.utils.instantiate(
        config=_agent_loop_registry[name],
        trainer_config=DictConfigWrap(config=config),
        server_manager=server,
        tokenizer=load_tokenizer(),
        processor=None,
        hf_model_type="qwen3",
        dataset_cls=None,
        data_config=DictConfigWrap(config.data),
        tools=ToolListWrap([]),
    )


def extra_info(script: Script) -> dict[str, Any]:
    from agentenv.integrations.row_episodes import EpisodeSpec

    return EpisodeSpec(script.env_id, script.split, script.task_index, script.seed).fields()


def run(env_id: str, script: Script) -> ParityRecord:
    server = ScriptedServer(script.actions)
    loop = agent_loop(server)
    output = asyncio.run(
        loop.run({"temperature": 1.0}, raw_prompt=[], extra_info=extra_info(script))
    )
    prompt, response = list(output.prompt_ids), list(output.response_ids)
    ids = prompt + response
    # Each generate call saw the whole trajectory so far, as TokenEnv holds it.
    for seen in server.prompts:
        assert ids[: len(seen)] == seen
    assert output.response_logprobs is not None and len(output.response_logprobs) == len(response)
    return ParityRecord(
        reward=float(output.reward_score),
        turns=int(output.extra_fields["agentenv_turns"]),
        messages=list(output.extra_fields["agentenv_messages"]),
        token_ids=ids,
        loss_mask=[0] * len(prompt) + list(output.response_mask),
    )
