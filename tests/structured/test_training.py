"""Training writes its logs and a model the sb3 agent plays; PPO, A2C and DQN all train; bad configs are refused."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

pytest.importorskip("stable_baselines3", reason='needs the rl extra: pip install -e ".[rl]"')

from agentenv.errors import UserInputError  # noqa: E402
from agentenv.lessons.structured.lessons import score  # noqa: E402
from agentenv.lessons.structured.training import TrainConfig, train  # noqa: E402


@pytest.mark.parametrize("algo", ["maskable_ppo", "ppo", "a2c", "dqn"])
def test_each_algorithm_trains_and_plays_under_the_harness(algo: str, tmp_path: Path) -> None:
    config = TrainConfig(
        "RareDiseaseDiagnosis-SingleTurn-v0", algo=algo, timesteps=600, n_envs=2, train_tasks=40
    )
    result = train(config, tmp_path)
    rows = list(csv.DictReader((tmp_path / "episodes.csv").open()))
    assert len(rows) == len(result.curve) > 0
    meta = json.loads((tmp_path / "model.json").read_text())
    assert (meta["algo"], meta["menu"], meta["env_id"]) == (
        algo,
        "diagnosis-candidates",
        config.env_id,
    )
    records = score(
        "sb3",
        config.env_id,
        "strict",
        {},
        episodes=3,
        seed=0,
        agent_args={"path": str(tmp_path)},
        split="validation",
    )
    assert len(records) == 3 and all("n_predictions" in r["components"] for r in records)


def test_the_same_seed_trains_the_same_policy(tmp_path: Path) -> None:
    config = TrainConfig(
        "MediaSearch-SingleTurn-v0", timesteps=256, n_envs=2, train_tasks=50, seed=3
    )
    first = train(config, tmp_path / "a").curve
    second = train(config, tmp_path / "b").curve
    assert first == second


def test_training_refuses_the_test_split_and_bad_budgets() -> None:
    with pytest.raises(UserInputError, match="train split"):
        TrainConfig("MediaSearch-v0", env_kwargs={"split": "test"})
    with pytest.raises(UserInputError, match="timesteps must be >= 1"):
        TrainConfig("MediaSearch-v0", timesteps=0)
    with pytest.raises(UserInputError, match="algo must be one of"):
        TrainConfig("MediaSearch-v0", algo="sac")


def test_training_leaves_no_folder_in_the_temp_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SB3's default logger made an empty tempdir/SB3-<time> folder per run; none may be left."""
    import tempfile

    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    monkeypatch.delenv("SB3_LOGDIR", raising=False)
    config = TrainConfig("MediaSearch-SingleTurn-v0", timesteps=128, n_envs=2, train_tasks=20)
    train(config, tmp_path / "run")
    assert list(temp.iterdir()) == []
