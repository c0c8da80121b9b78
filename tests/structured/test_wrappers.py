"""The structured wrappers: standard Gymnasium envs over every single-agent id, graded by the text env."""

from __future__ import annotations

import subprocess
import sys
import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import agentenv  # noqa: F401 - registers the ids
from agentenv.errors import UserInputError
from agentenv.families import (
    EnvSpec,
    Family,
    env_specs,
    get_family,
    register_family,
    unregister_family,
)
from agentenv.lessons.structured import StructuredEnv, family_menus, make_structured, menu_for

IDS = [spec.id for spec in env_specs() if spec.id.startswith(("MediaSearch", "RareDisease"))]


def test_every_single_agent_id_of_both_families_is_covered() -> None:
    assert set(IDS) == {
        "MediaSearch-v0",
        "MediaSearch-SingleTurn-v0",
        "RareDiseaseDiagnosis-v0",
        "RareDiseaseDiagnosis-SingleTurn-v0",
    }


@pytest.mark.parametrize("env_id", IDS)
def test_check_env_passes(env_id: str) -> None:
    env = make_structured(env_id, split="validation")
    assert isinstance(env.action_space, gym.spaces.Discrete)
    assert env.observation_space.shape == (len(env.menu.feature_names),)
    assert env.action_space.n == len(env.menu.labels)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*is different from the unwrapped version.*")
        check_env(env, skip_render_check=True)


@pytest.mark.parametrize("env_id", IDS)
def test_rewards_and_components_are_the_text_envs(env_id: str) -> None:
    """Replaying the wrapper's action texts on a bare text env gives the same rewards, components and transcript."""
    wrapped = make_structured(env_id, split="validation")
    text = gym.make(env_id, split="validation")
    rng = np.random.default_rng(0)
    for episode in range(4):
        obs, info = wrapped.reset(seed=episode, options={"index": episode})
        text.reset(seed=episode, options={"index": episode})
        assert wrapped.observation_space.contains(obs)
        done = False
        while not done:
            obs, reward, terminated, truncated, info = wrapped.step(
                int(rng.integers(wrapped.action_space.n))
            )
            _, r2, t2, tr2, info2 = text.step(info["structured"]["action_text"])
            assert (reward, terminated, truncated) == (r2, t2, tr2)
            assert info["messages"] == info2["messages"]
            assert wrapped.observation_space.contains(obs)
            done = terminated or truncated
        assert info["reward_components"] == info2["reward_components"]


def test_the_top_k_menu_lists_k_diseases() -> None:
    env = make_structured("RareDiseaseDiagnosis-v0", split="validation")
    labels = list(env.menu.labels)
    for k in (1, 3, 5, 10, 50):
        assert f"answer top {k}" in labels
    env.reset(seed=0, options={"index": 0})
    env.step(labels.index("rank_by_phenotypes(presented ids, k=20)"))
    env.step(labels.index("search_diseases(presented labels, k=20)"))
    *_, info = env.step(labels.index("answer top 10"))
    assert info["reward_components"]["n_predictions"] == 10
    assert info["reward_components"]["over_limit"] == 1.0


def test_shipped_menus_come_from_the_family_records() -> None:
    """The wrapper holds no family's menus: each comes from the family's ``structured`` part in the registry."""
    assert {m.name for m in family_menus(get_family("media_search"))} == {
        "media-tools",
        "media-passages",
    }
    assert {m.name for m in family_menus(get_family("rare_disease"))} == {
        "diagnosis-tools",
        "diagnosis-candidates",
    }
    assert (
        menu_for(
            "media_search", frozenset({"search", "get_title", "find_person", "filter_titles"})
        ).name
        == "media-tools"
    )
    assert menu_for("rare_disease", frozenset()).name == "diagnosis-candidates"


def test_a_family_without_a_structured_menu_is_refused_naming_the_field() -> None:
    bare = register_family(
        Family(
            name="structless_test",
            envs=(
                EnvSpec("Structless-v0", "agentenv.core:ToolEnv", description="no structured menu"),
            ),
        )
    )
    try:
        with pytest.raises(
            UserInputError, match=r"no structured menu for family 'structless_test'.*'structured'"
        ):
            menu_for(bare, frozenset())
    finally:
        unregister_family("structless_test")


def test_menus_refuse_what_they_cannot_play() -> None:
    with pytest.raises(UserInputError, match="rank_by_phenotypes"):
        StructuredEnv(gym.make("RareDiseaseDiagnosis-v0", split="validation", ranker_tool=False))
    env = make_structured("MediaSearch-SingleTurn-v0", split="validation")
    env.reset(seed=0)
    with pytest.raises(ValueError, match="outside the menu's action space"):
        env.step(99)


def test_importing_agentenv_and_the_wrappers_stays_light() -> None:
    code = (
        "import sys, agentenv, agentenv.lessons.structured, agentenv.cli.main; agentenv.cli.main.build_parser(); "
        "heavy = [m for m in ('torch', 'stable_baselines3', 'matplotlib') if m in sys.modules]; "
        "assert not heavy, heavy"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_a_missing_rl_extra_names_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    from agentenv.lessons.structured import rl_extra

    monkeypatch.setitem(sys.modules, "stable_baselines3", None)
    with pytest.raises(rl_extra.MissingRLExtra, match=r'pip install -e "\.\[rl\]"'):
        rl_extra.sb3()
