"""An eval record's ``reward`` is the episode's return, so eval and training agree under shaping.

With ``shaping`` the env pays each cost on the step that incurs it; the last
step alone then holds the score plus what was already paid back, not the return.
"""

from __future__ import annotations

from agentenv.evaluation.runner import RunConfig, timed_run
from agentenv.rewards.config import resolve_reward


def test_the_recorded_reward_is_the_episode_return_under_shaping() -> None:
    shaped = {"preset": "efficient", "shaping": True}
    config = RunConfig(
        "MediaSearch-v0", "oracle", split="validation", episodes=6, env_kwargs=(("reward", shaped),)
    )
    records, _ = timed_run(config, progress=False)
    unshaped, _ = timed_run(
        RunConfig(
            "MediaSearch-v0",
            "oracle",
            split="validation",
            episodes=6,
            env_kwargs=(("reward", "efficient"),),
        ),
        progress=False,
    )
    efficient = resolve_reward("efficient")
    assert any(r["tool_calls"] > 0 for r in records)  # costs were paid on earlier steps
    for record, plain in zip(records, unshaped, strict=True):
        assert record["reward"] == efficient.combine(record["reward_components"]) == plain["reward"]
