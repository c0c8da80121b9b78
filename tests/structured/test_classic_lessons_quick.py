"""The behaviour-cloning lessons' parts: the menu oracle, the BC loss, cloning, holdout selection, and a quick lesson.

Demonstrations come from ``MediaSearch-SingleTurn-v0`` (the oracle grades ten
answer entries a task, a few ms) except where the multi-turn search is the
point; the policy is the PPO lessons' network, built by the lessons' builder.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("stable_baselines3", reason='needs the rl extra: pip install -e ".[rl]"')

from agentenv.data.selection import select_random, select_top  # noqa: E402
from agentenv.lessons.structured import make_structured  # noqa: E402
from agentenv.lessons.structured.behaviour_cloning import (  # noqa: E402
    agreement,
    clone,
    dataset_loss,
    demonstrate,
    holdout_gains,
    new_model,
    save_run,
)
from agentenv.lessons.structured.classic_common import best_sequence  # noqa: E402
from agentenv.lessons.structured.training import TrainConfig  # noqa: E402

SINGLE = "MediaSearch-SingleTurn-v0"


@pytest.fixture(scope="module")
def single_demos() -> tuple[object, object]:
    env = make_structured(SINGLE, split="train", reward="strict")
    return env, demonstrate(env, range(60))


def test_demonstrations_are_solved_episodes_the_wrapper_replays(
    single_demos: tuple[object, object],
) -> None:
    env, demos = single_demos
    assert demos.tasks == 60 and 0 < len(demos.episodes) == demos.planned_solved < 60
    assert demos.replayed_reward == pytest.approx(len(demos.episodes) / 60, abs=1e-4)
    for d in demos.episodes:
        assert d.reward == 1.0 and d.observations.shape == (
            len(d.actions),
            env.observation_space.shape[0],
        )
    # the oracle beats any one fixed answer: it picks per task in hindsight
    _, fixed = best_sequence(demos.tables)
    assert demos.replayed_reward > fixed


def test_multi_turn_oracle_searches_before_answering() -> None:
    env = make_structured("MediaSearch-v0", split="train", reward="strict")
    demos = demonstrate(env, range(8))
    assert demos.episodes, "the menu oracle solved none of 8 multi-turn train tasks"
    for d in demos.episodes:  # no menu answer is right before a tool has returned something
        env.reset(options={"index": d.task_index})
        assert env.step(int(d.actions[0]))[4]["structured"]["kind"] == "tool"


def test_cloning_lowers_the_loss_and_copies_the_demonstrator(
    single_demos: tuple[object, object], tmp_path: Path
) -> None:
    env, demos = single_demos
    model = new_model(TrainConfig(SINGLE, algo="ppo", seed=0, train_tasks=50))
    before = dataset_loss(model.policy, demos.episodes)
    losses = clone(model.policy, demos.episodes, steps=150, rng=np.random.default_rng(0))
    assert losses[0] == pytest.approx(before)
    assert losses[-1] < 0.5 * losses[0]
    assert agreement(model.policy, demos.episodes) >= 0.8
    save_run(
        model,
        env,
        tmp_path / "bc",
        {"algo": "ppo", "env_id": SINGLE, "reward": "strict", "seed": 0},
    )
    meta = json.loads((tmp_path / "bc" / "model.json").read_text())
    assert meta["menu"] == env.menu.name and (tmp_path / "bc" / "model.zip").is_file()


def test_holdout_selection_keeps_30_percent_leaning_to_the_holdout(
    single_demos: tuple[object, object],
) -> None:
    env, demos = single_demos
    episodes = demos.episodes
    common = Counter(int(d.actions[0]) for d in episodes).most_common(1)[0][0]
    holdout = [d for d in episodes if int(d.actions[0]) != common]
    model = new_model(TrainConfig(SINGLE, algo="ppo", seed=0, train_tasks=50))
    clone(model.policy, episodes, steps=20, rng=np.random.default_rng(0))
    params = [p.detach().clone() for p in model.policy.parameters()]
    gains = holdout_gains(model.policy, episodes, holdout)
    assert all(
        np.array_equal(a, b.detach())
        for a, b in zip(params, model.policy.parameters(), strict=True)
    )
    indices = list(range(len(episodes)))
    top = select_top(indices, gains, 0.3)
    assert len(top) == round(0.3 * len(episodes)) == len(select_random(indices, 0.3, seed=0))
    share = np.mean([int(episodes[i].actions[0]) != common for i in top])
    assert share > len(holdout) / len(
        episodes
    )  # the selection leans towards what the holdout demonstrates


@pytest.mark.slow
def test_quick_sft_then_rl_classic_summary(tmp_path: Path) -> None:
    from agentenv.lessons.structured.classic_sft_then_rl import run

    summary = run(tmp_path, quick=True, plots=False, log=lambda _: None)
    for key in ("multi_turn", "single_turn"):
        block = summary[key]
        for name in (
            "bc",
            "bc_ppo",
            "ppo",
            "bm25",
            "best_fixed_sequence",
            "fixed_sequence_chosen_on_train",
        ):
            lo, hi = block[name]["ci"]
            assert lo <= block[name]["accuracy"] <= hi
        seed0 = block["per_seed"][0]
        assert seed0["bc_loss_last"] < seed0["bc_loss_first"] and seed0["bc_agreement_train"] >= 0.6
    assert isinstance(summary["claim"]["reproduced"], bool)
    assert json.loads((tmp_path / "summary.json").read_text()) == summary
    assert (tmp_path / "runs" / "multi_turn" / "bc_ppo" / "seed0" / "model.zip").is_file()
