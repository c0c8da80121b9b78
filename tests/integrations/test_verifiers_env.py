"""``agentenv.integrations.verifiers.load_environment`` builds a verifiers env over ``agentenv eval``'s episodes,
and verifiers' own loader finds it by its taskset id. (Episodes through verifiers' loop: the parity test.)"""

from __future__ import annotations

import pytest

pytest.importorskip("verifiers")

ENV_ID = "RareDiseaseDiagnosis-v0"


def test_verifiers_taskset_is_the_eval_episodes() -> None:
    from agentenv.evaluation.runner import RunConfig, episode_plan, make_env
    from agentenv.integrations.verifiers import load_environment

    env = load_environment(ENV_ID, split="test", episodes=3, seed=4)
    tasks = list(env.taskset)
    gym_env = make_env(RunConfig(env_id=ENV_ID, agent="none", split="test"))
    plan = episode_plan(len(gym_env.unwrapped.tasks), 3, 4)
    assert [t.data.info["task_index"] for t in tasks] == plan
    assert [t.data.info["seed"] for t in tasks] == [4, 5, 6]
    _, info = gym_env.reset(seed=4, options={"index": plan[0]})
    system, user = info["messages"][0]["content"], info["messages"][1]["content"]
    assert tasks[0].data.prompt[0].content == user
    assert tasks[0].data.system_prompt.startswith(system)
    for tool in info[
        "tools"
    ]:  # the schemas follow the env's system prompt, which says they come with it
        assert f'"name": "{tool["function"]["name"]}"' in tasks[0].data.system_prompt


def test_verifiers_loader_resolves_the_taskset_id() -> None:
    from verifiers.v1.utils.loaders import environment_class, taskset_class

    from agentenv.integrations.verifiers import TASKSET_ID
    from agentenv.integrations.verifiers.environment import AgentenvEnv, AgentenvTaskset

    assert taskset_class(TASKSET_ID) is AgentenvTaskset
    assert environment_class(TASKSET_ID) is AgentenvEnv


def test_verifiers_observation_text_wraps_tool_results() -> None:
    from agentenv.integrations.verifiers.environment import observation_text

    text = observation_text(
        [{"role": "tool", "content": '{"a": 1}'}, {"role": "tool", "content": "[]"}]
    )
    assert (
        text == '<tool_response>\n{"a": 1}\n</tool_response>\n<tool_response>\n[]\n</tool_response>'
    )
    assert observation_text([{"role": "user", "content": "Error: bad JSON"}]) == "Error: bad JSON"
