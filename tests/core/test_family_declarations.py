"""What a family declares in its record (splits, agents, reward presets) is all generic code needs.

Why: a family in one folder, in this repo or outside it, must get its own ``--split``, ``--agent``
and ``--reward`` with no line anywhere else; so the record checks them early, and the CLI, the agent
registry and the reward presets read them from the registry.
"""

from __future__ import annotations

import gymnasium as gym
import pytest

from agentenv.errors import UserInputError
from agentenv.families import (
    EnvSpec,
    Family,
    all_splits,
    check_split,
    register_family,
    reward_preset_names,
    unregister_family,
)
from agentenv.rewards.config import resolve_reward


def test_the_shipped_families_declare_their_evaluation_splits() -> None:
    assert check_split("MediaSearch-v0", "casual") == "casual"
    assert check_split("RareDiseaseDiagnosis-SingleTurn-v0", "real") == "real"
    assert check_split("DiagnosisDialogue-v0", "real") == "real"  # dialogue ids too
    with pytest.raises(UserInputError, match="split 'real' is not one of MediaSearch-v0's"):
        check_split("MediaSearch-v0", "real")
    assert {"train", "validation", "test", "casual", "real"} <= set(all_splits())


@pytest.mark.parametrize(
    "splits",
    [("train", "test"), ("test", "train", "validation"), ("train", "validation", "test", "Hard!")],
)
def test_a_split_list_without_the_standard_three_first_is_refused(splits: tuple[str, ...]) -> None:
    with pytest.raises(UserInputError, match="splits must be a tuple starting with"):
        Family(name="bad_splits", splits=splits)


def test_a_family_reward_preset_resolves_by_name_and_clashes_are_refused() -> None:
    config = resolve_reward("first-call-credit")  # MediaSearch's, declared in its record
    assert config.name == "first-call-credit" and config.weights["first_call"] == 0.2
    assert "first-call-credit" in reward_preset_names()
    toy = Family(
        name="presets_toy",
        envs=(EnvSpec("PresetsToy-v0", "agentenv.core:ToolEnv"),),
        reward_presets={"first-call-credit": {"weights": {"accuracy": 1.0}}},
    )
    with pytest.raises(UserInputError, match="reward presets .* already belong to family"):
        register_family(toy)
    assert "PresetsToy-v0" not in gym.registry
    with pytest.raises(ValueError, match="unknown reward preset 'first-cal-credit'.*did you mean"):
        resolve_reward("first-cal-credit")


def test_a_third_party_family_gets_its_own_split_checked() -> None:
    register_family(
        Family(
            name="splits_toy",
            envs=(EnvSpec("SplitsToy-v0", "agentenv.core:ToolEnv"),),
            splits=("train", "validation", "test", "hard"),
        )
    )
    try:
        assert check_split("SplitsToy-v0", "hard") == "hard"
        assert "hard" in all_splits()
    finally:
        unregister_family("splits_toy")
