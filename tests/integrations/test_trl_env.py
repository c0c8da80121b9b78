"""The TRL adapter driven directly, the way TRL 1.16 calls it (no TRL needed, except for the schema check).

TRL calls, per rollout: ``reset(**row)``; each tool call of each assistant
message as one method call, in order; then the reward functions with
``prompts``, ``completions`` (the messages: assistant with ``tool_calls``, tool,
final assistant) and, in the synchronous trainer, ``environments``. The helpers
below play that part.
"""

from __future__ import annotations

import inspect
import json
import pickle
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import gymnasium as gym
import pytest

import agentenv  # noqa: F401 - registers the ids
from agentenv.baselines.oracle import OracleAgent
from agentenv.engine.actions import answer, tool_call, tool_calls
from agentenv.engine.parsing import Answer, ToolCalls, parse_action
from agentenv.integrations.tools_as_methods import tool_method
from agentenv.integrations.trl import AgentEnvFactory, AgentEnvReward, message_action

from ..scripted_play import agent_actions

ENV_ID = "MediaSearch-v0"
SHAPED = {"preset": "efficient", "shaping": True}


def trl_tools(instance: Any) -> dict[str, Any]:
    """What TRL exposes as tools: public functions of the class except reset and get_reward."""
    return {
        name: getattr(instance, name)
        for name, _ in inspect.getmembers(type(instance), predicate=inspect.isfunction)
        if name not in ("reset", "get_reward") and not name.startswith("_")
    }


def as_message(action: str) -> dict[str, Any]:
    """The assistant message TRL's response parser makes of an action text (Qwen3 template)."""
    parsed = parse_action(action)
    if isinstance(parsed, ToolCalls):
        calls = [
            {"type": "function", "function": {"name": c.name, "arguments": dict(c.arguments)}}
            for c in parsed.calls
        ]
        message: dict[str, Any] = {
            "role": "assistant",
            "content": parsed.content,
            "tool_calls": calls,
        }
        if parsed.reasoning is not None:
            message["reasoning_content"] = parsed.reasoning
        return message
    return {"role": "assistant", "content": action}


def trl_rollout(
    instance: Any, row: dict[str, Any], actions: list[str]
) -> tuple[Any, list[dict[str, Any]]]:
    """Play TRL's loop: reset, then each message's calls one method call at a time; the rollout ends at
    the first message without tool calls. Returns the prompt messages and the completion messages."""
    text = instance.reset(**row)
    prompt = list(row.get("prompt") or [{"role": "user", "content": ""}])
    if text is not None:
        prompt = prompt[:-1] + [{**prompt[-1], "content": prompt[-1]["content"] + text}]
    tools = trl_tools(instance)
    completion: list[dict[str, Any]] = []
    for action in actions:
        message = as_message(action)
        completion.append(message)
        if not message.get("tool_calls"):
            break
        for call in message["tool_calls"]:
            name, arguments = call["function"]["name"], call["function"]["arguments"]
            result = (
                tools[name](**arguments) if name in tools else {"error": f"Tool {name} not found."}
            )  # as TRL
            completion.append({"role": "tool", "name": name, "content": str(result)})
    return prompt, completion


_PLAIN: dict[str, gym.Env] = {}


def plain_env(**make_kwargs: Any) -> gym.Env:
    """One plain env per settings for the module (a gym.make costs about a second)."""
    key = json.dumps(make_kwargs, sort_keys=True)
    if key not in _PLAIN:
        _PLAIN[key] = gym.make(ENV_ID, **make_kwargs)
    return _PLAIN[key]


def plain_return(
    actions: list[str], task_id: str, seed: int | None = None, **make_kwargs: Any
) -> tuple[float, dict]:
    """The plain env's episode return (sum of step rewards) and components for the same action texts."""
    env = plain_env(**make_kwargs)
    env.reset(seed=seed, options={"task_id": task_id})
    total, info = 0.0, {}
    for action in actions:
        _, reward, terminated, truncated, info = env.step(action)
        total += reward
        if terminated or truncated:
            break
    return total, info["reward_components"]


def oracle_actions(index: int, split: str = "train") -> tuple[str, list[str]]:
    actions, info = agent_actions(plain_env(split=split), OracleAgent(), index=index)
    return info["task_id"], actions


@pytest.fixture(scope="module")
def factory() -> AgentEnvFactory:
    return AgentEnvFactory(ENV_ID, split="train", reward="efficient", seed=7)


@pytest.fixture(scope="module")
def instance(factory: AgentEnvFactory) -> Any:
    """One adapter for the module: TRL too reuses instances, resetting them per rollout."""
    return factory()


def test_the_class_exposes_the_env_tools_and_is_built_once_per_process(
    factory: AgentEnvFactory, instance: Any
) -> None:
    assert sorted(trl_tools(instance)) == ["filter_titles", "find_person", "get_title", "search"]
    assert type(instance).__name__ == "MediaSearch_v0" == factory.reward_func.__name__
    assert not hasattr(
        type(instance), "get_reward"
    )  # the reward is a reward function: it sees the final text
    same = AgentEnvFactory(ENV_ID, split="train", reward="efficient", seed=7)
    assert (
        same.env_class is factory.env_class is type(instance)
    )  # TRL compares `type(e) is _env_type`
    assert all(
        not isinstance(v, gym.Env) for v in vars(type(instance)).values()
    )  # no live env in class state


def test_the_reward_is_the_episode_return_under_shaping() -> None:
    """Issue 14: two searches and an answer; the last step alone is -0.02, the return is -0.16."""
    shaped = AgentEnvFactory(ENV_ID, split="train", reward=SHAPED, seed=1)
    env = shaped()
    actions = [
        tool_call("search", query="Inception"),
        tool_call("search", query="Nolan"),
        answer("Inception"),
    ]
    prompt, completion = trl_rollout(env, {"index": 0}, actions)
    rewards = shaped.reward_func(prompts=[prompt], completions=[completion], environments=[env])
    result = env.result
    assert result.step_rewards == pytest.approx((-0.07, -0.07, -0.02))
    assert rewards == [pytest.approx(-0.16)] and result.reward == pytest.approx(
        sum(result.step_rewards)
    )
    expected, components = plain_return(actions, env.episode.task_id, split="train", reward=SHAPED)
    assert rewards[0] == pytest.approx(expected) and result.components == components


@pytest.mark.parametrize("index", [0, 1, 2, 3, 5, 8])
def test_oracle_rollouts_earn_the_plain_env_return(
    factory: AgentEnvFactory, instance: Any, index: int
) -> None:
    task_id, actions = oracle_actions(index)
    prompt, completion = trl_rollout(instance, {"task_id": task_id, "split": "train"}, actions)
    (reward,) = factory.reward_func(
        prompts=[prompt], completions=[completion], environments=[instance]
    )
    expected, components = plain_return(actions, task_id, split="train", reward="efficient")
    assert reward == pytest.approx(expected) and instance.result.components == components
    assert 0 < reward < 1  # the efficient preset charges the calls: a non-trivial value to match


def test_parallel_calls_in_one_message_are_one_turn(
    factory: AgentEnvFactory, instance: Any
) -> None:
    """TRL runs a message's calls one method call at a time; the env counts the message as one turn."""
    task_id, actions = oracle_actions(1)
    calls = [c for a in actions if isinstance(p := parse_action(a), ToolCalls) for c in p.calls]
    assert len(calls) >= 2
    parallel = [tool_calls((c.name, c.arguments) for c in calls), actions[-1]]
    prompt, completion = trl_rollout(instance, {"task_id": task_id}, parallel)
    assert sum(m["role"] == "tool" for m in completion) == len(calls)  # every call was run live
    (reward,) = factory.reward_func(
        prompts=[prompt], completions=[completion], environments=[instance]
    )
    components = instance.result.components
    assert components["turns"] == 2.0 and components["tool_calls"] == float(len(calls))
    expected, plain = plain_return(parallel, task_id, split="train", reward="efficient")
    assert reward == pytest.approx(expected) and components == plain
    sequential, _ = plain_return(actions, task_id, split="train", reward="efficient")
    assert reward > sequential  # fewer turns, lower turn cost: the same plan is cheaper in parallel


def test_a_final_message_without_an_answer_is_one_invalid_turn_then_truncated(
    factory: AgentEnvFactory, instance: Any
) -> None:
    prompt, completion = trl_rollout(
        instance, {"index": 4}, [tool_call("search", query="Inception"), "It is Inception."]
    )
    (reward,) = factory.reward_func(
        prompts=[prompt], completions=[completion], environments=[instance]
    )
    result = instance.result
    assert result.truncated and not result.terminated
    components = result.components
    assert components["accuracy"] == 0.0 and components["format"] == 0.0
    assert (
        components["turns"] == 2.0
        and components["invalid_actions"] == 1.0
        and components["tool_calls"] == 1.0
    )
    assert reward == pytest.approx(
        -(0.05 * 1 + 0.02 * 2)
    )  # efficient: the env's own costs, nothing made up


def test_an_answer_inside_a_tool_call_message_is_what_eval_makes_of_it(
    factory: AgentEnvFactory, instance: Any
) -> None:
    """No `answer` tool any more: a call named `answer` is an unknown tool, as in the env itself."""
    task_id, actions = oracle_actions(0)
    final = parse_action(actions[-1])
    assert isinstance(final, Answer)
    calling = [tool_call("answer", answer=final.text)]
    prompt, completion = trl_rollout(instance, {"task_id": task_id}, [*calling, actions[-1]])
    assert (
        "not found" in completion[1]["content"]
    )  # TRL's own reply: the class has no `answer` method
    (reward,) = factory.reward_func(
        prompts=[prompt], completions=[completion], environments=[instance]
    )
    expected, components = plain_return(
        [*calling, actions[-1]], task_id, split="train", reward="efficient"
    )
    assert reward == pytest.approx(expected) and instance.result.components == components


def test_rows_of_any_split_are_served_and_scored_from_their_columns(
    factory: AgentEnvFactory, instance: Any
) -> None:
    """TRL resets the same pool with eval rows; a reward function without `environments` reads the row."""
    for split in ("validation", "test"):
        task_id, actions = oracle_actions(2, split)
        row = {"task_id": task_id, "split": split}
        prompt, completion = trl_rollout(instance, dict(row), actions)
        assert instance.info["task_id"] == task_id and instance.episode.split == split
        (with_env,) = factory.reward_func(
            prompts=[prompt], completions=[completion], environments=[instance]
        )
        (from_row,) = factory.reward_func(
            prompts=[prompt], completions=[completion], task_id=[task_id], split=[split]
        )
        expected, _ = plain_return(actions, task_id, split=split, reward="efficient")
        assert with_env == from_row == pytest.approx(expected) and expected > 0
    instance.reset(index=3, split="validation")
    assert instance.info["task_id"] == plain_env(split="validation").unwrapped.tasks[3].id
    with pytest.raises(
        KeyError, match="not in split 'test'"
    ):  # a validation task named as a test one
        instance.reset(task_id=instance.episode.task_id, split="test")


def test_without_a_dataset_each_rollout_draws_its_own_task(factory: AgentEnvFactory) -> None:
    """TRL's placeholder rows carry no task: four instances, four tasks; the same seed draws them again."""
    placeholder = {"prompt": [{"role": "user", "content": ""}]}
    first = [factory() for _ in range(3)]
    texts = [e.reset(**placeholder) for e in first]
    drawn = [e.episode.task_id for e in first]
    again = first[0].reset(**placeholder)
    drawn.append(first[0].episode.task_id)  # the next episode of the same instance draws anew
    assert len(set(drawn)) == 4 and all(t and "<answer>" in t for t in [*texts, again])
    repeat = pickle.loads(
        pickle.dumps(factory)
    )  # the same seed and instance number draw the same tasks
    twin = repeat.env_class(repeat, first[0]._number)
    assert [twin.reset(**placeholder) and twin.episode.task_id for _ in range(2)] == [
        drawn[0],
        drawn[3],
    ]
    # a reward function given no `environments` (the async trainer) finds the episode by its prompt text
    env = first[1]
    prompt, completion = trl_rollout(env, placeholder, [answer("no idea")])
    by_prompt = factory.reward_func(prompts=[prompt], completions=[completion])
    by_env = factory.reward_func(prompts=[prompt], completions=[completion], environments=[env])
    assert by_prompt == by_env  # the same episode either way
    assert env.result.task_id == env.episode.task_id


def test_instances_share_nothing_mutable_under_a_thread_pool(factory: AgentEnvFactory) -> None:
    """The async trainer calls reset and tools of many instances from a thread pool at once."""
    jobs = [oracle_actions(i) for i in (0, 1, 2)]
    # One instance per rollout, as TRL does: an instance is never stepped by two threads at once
    # (Gymnasium envs, and Gymnasium's own checker wrapper, are not thread-safe objects). Six
    # rollouts on three threads, so some instances run while others are reset.
    envs = [factory() for _ in range(6)]

    def play(j: int) -> tuple[float, dict]:
        task_id, actions = jobs[j % 3]
        prompt, completion = trl_rollout(envs[j], {"task_id": task_id}, actions)
        reward = AgentEnvReward(factory)(
            prompts=[prompt], completions=[completion], environments=[envs[j]]
        )
        return reward[0], envs[j].result.components

    with ThreadPoolExecutor(max_workers=3) as pool:
        parallel = list(pool.map(play, range(6)))
    for k, (reward, components) in enumerate(parallel):
        expected, plain = plain_return(
            jobs[k % 3][1], jobs[k % 3][0], split="train", reward="efficient"
        )
        assert reward == pytest.approx(expected) and components == plain


def test_factory_and_reward_function_survive_pickling_into_a_fresh_process(
    factory: AgentEnvFactory,
) -> None:
    """AsyncGRPOTrainer pickles environment_factory and reward_funcs into a spawned process."""
    blob = pickle.dumps((factory, factory.reward_func))
    copy, reward_func = pickle.loads(blob)
    assert (
        copy == factory
        and copy.env_class is factory.env_class
        and reward_func.__name__ == "MediaSearch_v0"
    )
    task_id, actions = oracle_actions(0)
    script = f"""
import pickle, sys
factory, reward_func = pickle.loads(sys.stdin.buffer.read())
env = factory()
actions = {actions!r}
env.reset(task_id={task_id!r})
completion = []
for action in actions:
    if action.startswith("<answer>"):
        completion.append({{"role": "assistant", "content": action}})
        break
    import json
    call = json.loads(action.split("<tool_call>")[1].split("</tool_call>")[0])
    completion.append({{"role": "assistant", "content": "", "tool_calls": [{{"type": "function", "function": call}}]}})
    completion.append({{"role": "tool", "content": getattr(env, call["name"])(**call["arguments"])}})
print(type(env).__name__, reward_func(prompts=[None], completions=[completion], task_id=[{task_id!r}])[0])
"""
    out = subprocess.run(
        [sys.executable, "-c", script], input=blob, capture_output=True, timeout=120
    )
    assert out.returncode == 0, out.stderr.decode()[-2000:]
    name, reward = out.stdout.decode().split()
    expected, _ = plain_return(actions, task_id, split="train", reward="efficient")
    assert name == "MediaSearch_v0" and float(reward) == pytest.approx(expected)


MESSAGES = [
    {"role": "assistant", "content": "<answer>Heat</answer>"},
    {
        "role": "assistant",
        "content": "Let me look.",
        "reasoning_content": "search first",
        "tool_calls": [
            {"type": "function", "function": {"name": "search", "arguments": {"query": "Heat"}}},
            {
                "type": "function",
                "function": {"name": "get_title", "arguments": {"title_id": "tt1"}},
            },
        ],
    },
    {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "type": "function",
                "function": {"name": "search", "arguments": '{"query": "Heat", "k": 3}'},
            }
        ],
    },
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"type": "function", "function": {"name": "search", "arguments": '{"query": '}}
        ],
    },
    {"role": "assistant", "content": "plain text", "reasoning_content": "hmm"},
    {
        "role": "assistant",
        "content": [{"type": "text", "text": "<answer>"}, {"type": "text", "text": "x</answer>"}],
    },
]


@pytest.mark.parametrize("message", MESSAGES)
def test_messages_become_the_action_text_the_llm_eval_agent_sends(message: dict[str, Any]) -> None:
    from agentenv.baselines.llm_agent import action_from_message

    assert message_action(message) == action_from_message(message, "native")


def test_method_schemas_keep_the_argument_constraints_of_the_env_tools(instance: Any) -> None:
    """TRL renders a method through transformers' get_json_schema (apply_chat_template, parse_response)."""
    get_json_schema = pytest.importorskip("transformers.utils").get_json_schema
    structural = {"type", "description", "title", "default", "enum", "items", "anyOf"}
    media = {
        s["function"]["name"]: getattr(instance, s["function"]["name"])
        for s in plain_env().unwrapped.tools.schemas
    }
    rare = gym.make("RareDiseaseDiagnosis-v0").unwrapped.tools
    cases = [
        (plain_env().unwrapped.tools.schemas, media),
        (rare.schemas, {n: tool_method(rare[n]) for n in rare.names}),
    ]
    for schemas, methods in cases:
        for schema in schemas:
            name = schema["function"]["name"]
            ours = get_json_schema(methods[name])["function"]["parameters"]["properties"]
            for arg, spec in schema["function"]["parameters"]["properties"].items():
                for option in (o for o in spec.get("anyOf", [spec]) if o.get("type") != "null"):
                    for key, value in [*option.items(), *option.get("items", {}).items()]:
                        if key not in structural:
                            assert json.dumps(value) in ours[arg]["description"], (name, arg, key)
                    if "enum" in option:
                        assert ours[arg]["enum"] == option["enum"]


def test_dataset_rows_are_the_env_prompts_of_the_split() -> None:
    pytest.importorskip("datasets")
    from agentenv.integrations.trl import dataset

    rows = dataset(ENV_ID, "validation", n=3)
    assert rows.column_names == ["prompt", "task_id", "index", "split"]
    env = plain_env(split="validation")
    for i, row in enumerate(rows):
        _, info = env.reset(options={"index": i})
        assert (
            row["index"] == i and row["task_id"] == info["task_id"] and row["split"] == "validation"
        )
        assert row["prompt"] == [
            dict(m) for m in info["messages"][:2]
        ]  # what `agentenv eval` sends


def test_unknown_rollouts_are_refused_with_a_reason(factory: AgentEnvFactory) -> None:
    with pytest.raises(ValueError, match="give the rows a task_id"):
        factory.reward_func(prompts=[[{"role": "user", "content": "unseen"}]], completions=[[]])
