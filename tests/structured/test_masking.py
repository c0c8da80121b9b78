"""Action masks: what each menu allows, MaskablePPO never taking a masked entry, and the sb3 agent sampling as trained."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import agentenv  # noqa: F401 - registers the ids
from agentenv.lessons.structured.wrapper import StructuredEnv, make_structured


def test_media_masks_follow_the_evidence() -> None:
    env = make_structured("MediaSearch-v0", split="validation")
    env.reset(seed=0, options={"index": 0})
    labels = list(env.menu.labels)
    mask = env.action_masks()
    assert mask[labels.index("search(question, k=20)")]
    assert not mask[labels.index("get_title(hit 1)")]  # nothing to open before a search
    assert not any(mask[i] for i, label in enumerate(labels) if label.startswith("answer"))
    env.step(labels.index("search(question, k=20)"))
    mask = env.action_masks()
    assert not mask[labels.index("search(question, k=20)")]  # a repeated call is never allowed
    assert (
        mask[labels.index("get_title(the 5 best-fitting hits)")]
        and mask[labels.index("answer title of hit 1")]
    )
    assert not mask[labels.index("answer year of opened film")]  # no film opened yet
    env.step(labels.index("get_title(the 5 best-fitting hits)"))
    assert env.action_masks()[labels.index("answer the opened film")]


def test_the_last_turn_allows_only_answers() -> None:
    env = make_structured("RareDiseaseDiagnosis-v0", split="validation")
    env.reset(seed=0, options={"index": 0})
    env.menu.turn = env.max_turns - 1
    mask = env.action_masks()
    kinds = [env.menu.preview(i).kind for i in range(env.menu.size)]
    assert mask.any() and all(
        kind == "answer" for kind, allowed in zip(kinds, mask, strict=True) if allowed
    )


class _Checked(gym.Wrapper):
    """Records whether every action taken was allowed by the mask the learner was shown."""

    def __init__(self, env: StructuredEnv) -> None:
        super().__init__(env)
        self.taken: list[bool] = []

    def action_masks(self) -> np.ndarray:
        return self.env.action_masks()

    def step(self, action: Any) -> Any:
        self.taken.append(bool(self.env.action_masks()[int(action)]))
        return self.env.step(action)


def test_maskable_ppo_never_takes_a_masked_entry() -> None:
    pytest.importorskip("sb3_contrib", reason='needs the rl extra: pip install -e ".[rl]"')
    from agentenv.lessons.structured.rl_extra import algorithm

    env = _Checked(make_structured("MediaSearch-v0", split="validation"))
    model = algorithm("maskable_ppo")(
        "MlpPolicy", env, n_steps=64, batch_size=32, n_epochs=1, seed=0, device="cpu", verbose=0
    )
    model.learn(total_timesteps=128)
    assert len(env.taken) >= 128 and all(env.taken)


def test_the_sb3_agent_samples_only_allowed_entries() -> None:
    pytest.importorskip("sb3_contrib", reason='needs the rl extra: pip install -e ".[rl]"')
    from agentenv.lessons.structured.rl_extra import algorithm
    from agentenv.lessons.structured.sb3_agent import action_probabilities

    env = make_structured("MediaSearch-v0", split="validation")
    features, _ = env.reset(seed=0, options={"index": 0})
    model = algorithm("maskable_ppo")("MlpPolicy", env, seed=0, device="cpu", verbose=0)
    mask = env.action_masks()
    probs = action_probabilities(model, features, mask)
    assert probs[~mask].sum() == 0.0 and abs(probs.sum() - 1.0) < 1e-9
    draws = np.random.default_rng(0).choice(probs.size, size=500, p=probs)
    assert all(mask[draws])
