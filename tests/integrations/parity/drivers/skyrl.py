"""SkyRL-gym: ``skyrl_gym.make("agentenv/<id>", extras=row)``, ``init``, then ``step`` with each action text,
the chat grown as SkyRL's generator grows it (assistant text, then the step's observations)."""

from __future__ import annotations

from ..scripts import ParityRecord, Script

REQUIRES = "skyrl_gym"


def run(env_id: str, script: Script) -> ParityRecord:
    import skyrl_gym

    from agentenv.integrations.row_episodes import SHARED_POOL, EpisodeSpec
    from agentenv.integrations.skyrl import register_envs
    from agentenv.integrations.verl.rows import skyrl_row

    register_envs()
    # The row as `agentenv prepare-verl --trainer skyrl` writes it; SkyRL passes the row's fields but
    # prompt and env_class to the env as its extras.
    row = skyrl_row(EpisodeSpec(env_id, script.split, script.task_index, script.seed), SHARED_POOL)
    extras = {k: v for k, v in row.items() if k not in ("prompt", "env_class")}
    env = skyrl_gym.make(row["env_class"], env_config={}, extras=extras)
    try:
        chat, _ = env.init(row["prompt"])
        assert chat[:2] == [{"role": m["role"], "content": m["content"]} for m in row["prompt"]]
        reward, done, metadata = 0.0, False, {}
        for action in script.actions:
            chat.append({"role": "assistant", "content": action})
            out = env.step(action)
            chat.extend(out["observations"])
            reward += out["reward"]
            metadata = out["metadata"]
            if out["done"]:
                done = True
                break
        assert done, "the script ended before the env did"
        # SkyRL's chat holds the model's raw text where the env's transcript holds parsed tool calls;
        # every other message is the same.
        transcript = metadata["messages"]
        assert [m for m in chat if m["role"] != "assistant"] == [
            m for m in transcript if m["role"] != "assistant"
        ]
        return ParityRecord(reward=reward, turns=env.turns, messages=transcript)
    finally:
        env.close()
