"""The env checkers pass on every registered id and catch envs that break the contract.

Every broken env below breaks one rule through public behaviour only
(``reset``/``step`` return values, ``_grade``, the hook a family fills), so
each test shows that the check it targets can fail.
"""

from __future__ import annotations

import copy
from typing import Any

import gymnasium as gym
import pytest
from pydantic import BaseModel, ConfigDict, Field

import agentenv  # noqa: F401 - registers the single-agent ids
from agentenv.checks import (
    DIALOGUE_CHECKS,
    TOOL_CHECKS,
    EnvCheckError,
    check_dialogue_env,
    check_tool_env,
)
from agentenv.checks.contract import example_arguments, first_difference
from agentenv.core import Task, ToolEnv
from agentenv.engine.parsing import Answer
from agentenv.engine.tools import Tool, ToolRegistry
from agentenv.families import dialogue_specs, env_specs

ENV_IDS = [s.id for s in env_specs()]
DIALOGUE_IDS = [s.id for s in dialogue_specs()]


# ------------------------------------------------------------ registered ids
@pytest.mark.parametrize("env_id", ENV_IDS)
def test_every_registered_env_passes(env_id: str) -> None:
    env = gym.make(env_id)
    report = check_tool_env(env)
    turn_check = "single_turn" if env.unwrapped.max_turns == 1 else "truncation"
    assert set(report.checks) == set(TOOL_CHECKS) - {"single_turn", "truncation"} | {turn_check}
    assert {"accuracy", "format", "turns"} <= report.components


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("env_id", DIALOGUE_IDS)
def test_every_registered_dialogue_passes(env_id: str) -> None:
    from agentenv.multiagent import make

    report = check_dialogue_env(make(env_id))
    assert set(report.checks) == set(DIALOGUE_CHECKS)
    assert {"accuracy", "faithful", "messages"} <= report.components


# ------------------------------------------------------------------ a toy env
class KeyArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    key: str = Field(description="Which entry, e.g. 'b'.")


TABLE = {"a": "apple", "b": "banana", "c": "cherry"}


class FruitEnv(ToolEnv):
    """Three tasks, one lookup tool: the smallest env that keeps the contract."""

    family = "fruit"

    def __init__(self, **kwargs: Any) -> None:
        tasks = [
            Task(
                prompt=f"Which fruit is under {k!r}?",
                gold={"answer": v},
                split="test",
                kind="fruit",
            )
            for k, v in TABLE.items()
        ]
        tools = ToolRegistry(
            [Tool("lookup", "The fruit under a key.", KeyArgs, lambda a: TABLE.get(a.key, "none"))]
        )
        super().__init__(tasks, tools, **{"max_turns": 4, **kwargs})

    def _grade(self, task: Task, answer: Answer | None, *episode: Any) -> dict[str, float]:
        # *episode: the engine passes the finished episode too (older engines did not)
        return {
            "accuracy": float(answer is not None and answer.text.strip() == task.gold["answer"])
        }


def test_the_toy_env_passes() -> None:
    assert check_tool_env(FruitEnv()).checks
    assert check_tool_env(FruitEnv(single_turn=True)).checks[-3:] == (
        "single_turn",
        "reward_mix",
        "components_documented",
    )
    assert check_tool_env(
        FruitEnv(reward="efficient", observation_mode="transcript"), seed=7
    ).checks


def _fails(env: gym.Env, check: str, **kwargs: Any) -> EnvCheckError:
    with pytest.raises(EnvCheckError) as err:
        check_tool_env(env, **kwargs)
    assert err.value.check == check, str(err.value)
    assert "why it matters: " in str(err.value) and err.value.why == TOOL_CHECKS[check]
    return err.value


class LeaksGold(FruitEnv):
    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = super().step(action)
        info["gold"] = copy.deepcopy(self.task.gold)
        return obs, reward, terminated, truncated, info


class LeaksGoldAtReset(FruitEnv):
    def reset(self, **kwargs: Any) -> tuple[str, dict[str, Any]]:
        obs, info = super().reset(**kwargs)
        return obs, {**info, "gold": copy.deepcopy(self.task.gold)}


class ConstantReward(FruitEnv):
    """Pays 1.0 for any answer: ignores the graded components."""

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        obs, _, terminated, truncated, info = super().step(action)
        return obs, float(terminated), terminated, truncated, info


class ZeroReward(FruitEnv):
    """Pays nothing, ever: matches the strict preset on wrong answers, so only the probe configs catch it."""

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        obs, _, terminated, truncated, info = super().step(action)
        return obs, 0.0, terminated, truncated, info


class RaisesOnProse(FruitEnv):
    """Raises on one kind of bad input: plain prose without tags (the checker sends such a sentence)."""

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        if action.startswith("I think"):
            raise ValueError("could not parse the action")
        return super().step(action)


class SilentOnError(FruitEnv):
    """Drops the parse_error key: the agent's mistake goes unexplained in info."""

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = super().step(action)
        info.pop("parse_error", None)
        return obs, reward, terminated, truncated, info


class RemembersEpisodes(FruitEnv):
    """Tool output carries a counter across episodes: the same seed no longer replays."""

    calls = 0

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = super().step(action)
        self.calls += 1
        return f"{obs} (call {self.calls})", reward, terminated, truncated, info


class NeverTruncates(FruitEnv):
    """Hides the end of the turn budget: reports truncated=False (and no gold) at max_turns."""

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = super().step(action)
        if truncated:
            info.pop("gold")
        return obs, reward, terminated, False, info


class SingleTurnTruncates(FruitEnv):
    """A single-turn env whose unparseable action truncates instead of terminating."""

    def __init__(self) -> None:
        super().__init__(single_turn=True)

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = super().step(action)
        if "parse_error" in info:
            terminated, truncated = False, True
        return obs, reward, terminated, truncated, info


class DropsToolCalls(FruitEnv):
    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = super().step(action)
        info.pop("tool_calls")
        return obs, reward, terminated, truncated, info


class MysteryComponent(FruitEnv):
    def _grade(self, task: Task, answer: Answer | None, *episode: Any) -> dict[str, float]:
        return {**super()._grade(task, answer, *episode), "mystery_bonus": 1.0}


class AnswerDoesNotEnd(FruitEnv):
    """Treats an answer as a message: the episode runs on until the budget ends."""

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        if action.startswith("<answer>"):
            action = "no tags"
        return super().step(action)


@pytest.mark.parametrize(
    ("env", "check", "fragment", "skip"),
    [
        (LeaksGold(), "no_gold_before_end", "info['gold']", ()),
        (LeaksGoldAtReset(), "no_gold_before_end", "at reset", ()),
        (ConstantReward(), "reward_mix", "the final reward is 1.0, expected 0.0", ()),
        (ZeroReward(), "reward_mix", "env-checker-probe", ()),
        (RaisesOnProse(), "unparseable_action", "raised ValueError: could not parse", ()),
        (SilentOnError(), "unparseable_action", "gave no info['parse_error']", ()),
        (RemembersEpisodes(), "gymnasium", "", ()),
        (RemembersEpisodes(), "same_seed_same_transcript", "(call ", ("gymnasium",)),
        (NeverTruncates(), "truncation", "raised RuntimeError", ()),
        (SingleTurnTruncates(), "gymnasium", "truncates after 1 step", ()),
        (SingleTurnTruncates(), "single_turn", "terminated=False, truncated=True", ("gymnasium",)),
        (DropsToolCalls(), "info_keys", "lacks ['tool_calls']", ()),
        (MysteryComponent(), "components_documented", "['mystery_bonus']", ()),
        (AnswerDoesNotEnd(), "info_keys", "did not end", ()),
        (AnswerDoesNotEnd(), "info_keys", "did not end", ("answer_terminates",)),
    ],
    ids=lambda v: type(v).__name__ if isinstance(v, ToolEnv) else None,
)
def test_the_checker_catches_a_broken_env(
    env: ToolEnv, check: str, fragment: str, skip: tuple[str, ...]
) -> None:
    error = _fails(env, check, skip=skip)
    assert fragment in error.what


def test_an_answer_that_does_not_end_is_caught_by_its_own_check() -> None:
    from agentenv.engine.actions import tool_call

    _fails(AnswerDoesNotEnd(), "answer_terminates", actions=[tool_call("lookup", key="a")] * 4)


def test_skip_names_are_checked() -> None:
    with pytest.raises(ValueError, match="cannot skip \\['gymnastics'\\]"):
        check_tool_env(FruitEnv(), skip=("gymnastics",))
    with pytest.raises(ValueError, match="no_gold_before_end"):
        check_tool_env(FruitEnv(), skip=("no_gold_before_end",))


def test_the_env_is_left_with_its_own_reward_config() -> None:
    env = ZeroReward()
    config = env.reward_config
    with pytest.raises(EnvCheckError):
        check_tool_env(env)
    assert env.reward_config is config


# --------------------------------------------------------- broken dialogues
@pytest.fixture(scope="module")
def dialogue() -> Any:
    from agentenv.multiagent import make

    return make(DIALOGUE_IDS[0])


FAST = ("pettingzoo_api", "pettingzoo_parallel_api")


def _dialogue_fails(env: Any, check: str, **kwargs: Any) -> EnvCheckError:
    with pytest.raises(EnvCheckError) as err:
        check_dialogue_env(env, skip=FAST, **kwargs)
    assert err.value.check == check, str(err.value)
    assert err.value.why == DIALOGUE_CHECKS[check]
    return err.value


def _patch_step(monkeypatch: pytest.MonkeyPatch, env: Any, after: Any, before: Any = None) -> None:
    step = env.step

    def patched(action: str | None) -> None:
        agent = env.agent_selection
        if before is not None:
            before(agent, action)
        step(action)
        after(agent, action)

    monkeypatch.setattr(env, "step", patched)


def test_dialogue_leaking_gold_is_caught(dialogue: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    def leak(agent: str, action: Any) -> None:
        for a in dialogue.agents:
            dialogue.infos[a] = {**dialogue.infos[a], "gold": dialogue.task.gold}

    _patch_step(monkeypatch, dialogue, leak)
    assert "info['gold']" in _dialogue_fails(dialogue, "no_gold_before_end").what


def test_dialogue_raising_on_a_bad_reply_is_caught(
    dialogue: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(agent: str, action: Any) -> None:
        if agent != dialogue.lead and isinstance(action, str) and "<say>" not in action:
            raise ValueError("unreadable reply")

    _patch_step(monkeypatch, dialogue, lambda *_: None, before=refuse)
    error = _dialogue_fails(dialogue, "unparseable_action")
    assert "raised ValueError: unreadable reply" in error.what and dialogue.other in error.what


def test_dialogue_reward_ignoring_components_is_caught(
    dialogue: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    def pay(agent: str, action: Any) -> None:
        if action is not None and dialogue.agents and all(dialogue.truncations.values()):
            dialogue.rewards[dialogue.lead] = 0.5

    _patch_step(monkeypatch, dialogue, pay)
    assert "the final reward is 0.5" in _dialogue_fails(dialogue, "reward_mix").what


def test_dialogue_truncating_late_is_caught(dialogue: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The env declares max_turns=N (what the checker reads first) but every reset allows N + 1."""
    declared = dialogue.max_turns
    monkeypatch.setattr(dialogue, "max_turns", declared)  # restored after the test
    reset = dialogue.reset

    def late_reset(*args: Any, **kwargs: Any) -> None:
        dialogue.max_turns = declared + 1
        reset(*args, **kwargs)

    monkeypatch.setattr(dialogue, "reset", late_reset)
    error = _dialogue_fails(dialogue, "truncation")
    assert f"ended after {declared + 1} unparseable lead actions" in error.what


def test_dialogue_skip_names_are_checked(dialogue: Any) -> None:
    with pytest.raises(ValueError, match="cannot skip"):
        check_dialogue_env(dialogue, skip=("info_keys",))


def test_the_checkers_share_one_table_of_checks() -> None:
    from agentenv.checks.check_table import CHECKS

    assert len({c.name for c in CHECKS}) == len(CHECKS)
    shared = [c.name for c in CHECKS if c.applies == "both"]
    assert shared == [name for name in TOOL_CHECKS if name in DIALOGUE_CHECKS]
    assert all(
        TOOL_CHECKS[name] is DIALOGUE_CHECKS[name] for name in shared
    )  # one reason, not two copies
    assert set(TOOL_CHECKS) ^ set(DIALOGUE_CHECKS) == {
        "gymnasium",
        "single_turn",
        "pettingzoo_api",
        "pettingzoo_parallel_api",
    }
    with pytest.raises(
        ValueError, match=r"cannot skip \['gymnasium'\]"
    ):  # a single-agent check, not a dialogue's
        check_dialogue_env(object(), skip=("gymnasium",))


# ------------------------------------------------------------------ helpers
def test_example_arguments_prefer_the_schema_examples() -> None:
    schema = {
        "function": {
            "parameters": {
                "required": ["ids", "k", "mode", "name"],
                "properties": {
                    "ids": {
                        "type": "array",
                        "items": {"type": "string"},
                        "description": "e.g. ['HP:1', 'HP:2']",
                    },
                    "k": {"type": "integer", "default": 5},
                    "mode": {
                        "anyOf": [{"type": "null"}, {"type": "string", "enum": ["fast", "slow"]}]
                    },
                    "name": {"type": "string", "minLength": 6},
                },
            }
        }
    }
    assert example_arguments(schema) == {
        "ids": ["HP:1", "HP:2"],
        "k": 5,
        "mode": "fast",
        "name": "testxx",
    }


def test_first_difference_names_the_path() -> None:
    assert first_difference([{"a": 1}], [{"a": 1}]) is None
    assert first_difference([{"a": 1}], [{"b": 1}]) == "[0]: keys ['a'] != ['b']"
    assert first_difference([1, 2], [1]) == "top level: length 2 != 1"


def test_messages_must_only_grow() -> None:
    from agentenv.checks.contract import check_messages

    first = [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]
    assert check_messages(first, None) is None
    assert "rewrote" in check_messages([first[0], {"role": "user", "content": "changed"}], first)
    assert "tool_call_id" in check_messages(
        [*first, {"role": "tool", "tool_call_id": "x", "content": ""}], None
    )
