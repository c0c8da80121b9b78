"""The lessons in quick mode: the direction of each effect, the summary's shape, and the sb3 agent under eval.

Each quick lesson trains one seed per condition for a few thousand steps;
the effects it checks are large (a policy under ``lenient`` lists about 20
diseases against 3 under ``strict``; under ``efficient`` it drops about half
of its tool calls), so one seed is enough to show their direction.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("stable_baselines3", reason='needs the rl extra: pip install -e ".[rl]"')

from agentenv.cli.main import build_parser, main  # noqa: E402
from agentenv.errors import UserInputError  # noqa: E402
from agentenv.lessons.structured.lessons import run_lesson  # noqa: E402


def _quiet(_: str) -> None:
    pass


@pytest.fixture(scope="module")
def reward_hacking(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], Path]:
    out = tmp_path_factory.mktemp("reward-hacking")
    return run_lesson(
        "reward-hacking", out, quick=True, baseline_episodes=5, fixed_sequences=False, log=_quiet
    ), out


@pytest.fixture(scope="module")
def tool_cost(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], Path]:
    out = tmp_path_factory.mktemp("tool-cost")
    return run_lesson(
        "tool-cost", out, quick=True, baseline_episodes=5, fixed_sequences=False, log=_quiet
    ), out


def test_lenient_lists_more_diseases_than_strict(
    reward_hacking: tuple[dict[str, Any], Path],
) -> None:
    summary, out = reward_hacking
    for reward in ("lenient", "strict"):
        assert {"mean_predictions", "top3_accuracy", "reward"} <= set(summary[reward])
    assert summary["lenient"]["mean_predictions"] > summary["strict"]["mean_predictions"]
    assert json.loads((out / "summary.json").read_text()) == summary
    assert (out / "reward_hacking_reward.png").stat().st_size > 0
    assert (out / "reward_hacking_k.png").stat().st_size > 0
    assert set(summary["baselines"]["strict"]) == {"random", "bm25", "oracle"}
    meta = summary["meta"]
    assert meta["commit"] and meta["commit_source"] in ("git", "package version")


def test_efficient_calls_fewer_tools_than_accuracy_only(
    tool_cost: tuple[dict[str, Any], Path],
) -> None:
    summary, out = tool_cost
    for reward in ("accuracy_only", "efficient"):
        assert {"tool_calls", "accuracy"} <= set(summary[reward])
    assert summary["efficient"]["tool_calls"] < summary["accuracy_only"]["tool_calls"]
    assert (out / "tool_cost_tool_calls.png").stat().st_size > 0
    assert summary["meta"]["warm_start"]["timesteps"] > 0


def test_a_trained_policy_is_an_eval_agent(
    reward_hacking: tuple[dict[str, Any], Path], tmp_path: Path
) -> None:
    run_dir = reward_hacking[0]["strict"]["per_seed"][0]["run_dir"]
    code = main(
        [
            "eval",
            "RareDiseaseDiagnosis-v0",
            "--agent",
            "sb3",
            "--agent-args",
            f"path={run_dir}",
            "--episodes",
            "5",
            "--out",
            str(tmp_path),
            "--no-progress",
        ]
    )
    assert code == 0
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert (summary["agent"], summary["split"], summary["episodes"]) == ("sb3", "test", 5)


def test_the_sb3_agent_refuses_another_env(
    reward_hacking: tuple[dict[str, Any], Path], tmp_path: Path
) -> None:
    run_dir = reward_hacking[0]["strict"]["per_seed"][0]["run_dir"]
    code = main(
        [
            "eval",
            "MediaSearch-v0",
            "--agent",
            "sb3",
            "--agent-args",
            f"path={run_dir}",
            "--episodes",
            "1",
            "--out",
            str(tmp_path),
            "--no-progress",
        ]
    )
    assert code == 2


def test_bad_input_names_the_fix(tmp_path: Path) -> None:
    from agentenv.evaluation.agents import make_agent

    with pytest.raises(UserInputError, match="model.zip not found"):
        make_agent("sb3", path=str(tmp_path))
    with pytest.raises(UserInputError, match="path=RUN_DIR"):
        make_agent("sb3")
    with pytest.raises(UserInputError, match="--seeds must be >= 1"):
        run_lesson("tool-cost", tmp_path, quick=True, seeds=0)
    args = build_parser().parse_args(
        ["reproduce", "single-vs-multi", "--quick", "--seeds", "2", "--out", "x"]
    )
    assert (args.lesson, args.quick, args.seeds, args.seed_list) == (
        "single-vs-multi",
        True,
        2,
        None,
    )
    args = build_parser().parse_args(
        ["reproduce", "single-vs-multi", "--seed-list", "3,4", "--out", "x"]
    )
    assert args.seed_list == [3, 4]
    with pytest.raises(UserInputError, match="not both"):
        run_lesson("tool-cost", tmp_path, quick=True, seeds=2, seed_list=[3])
    with pytest.raises(UserInputError, match="baselines play the policies' episodes"):
        run_lesson("tool-cost", tmp_path, quick=True, eval_episodes=4, baseline_episodes=9)


def test_single_vs_multi_summary_shape(tmp_path: Path) -> None:
    """Seeds from --seed-list; every condition has its best fixed sequence on the same episodes as the policies."""
    summary = run_lesson(
        "single-vs-multi",
        tmp_path,
        quick=True,
        timesteps=256,
        eval_episodes=4,
        baseline_episodes=2,
        plots=False,
        log=_quiet,
        seed_list=[3],
    )
    assert summary["meta"]["seeds"] == [3]
    for family in ("media_search", "rare_disease"):
        for mode in ("single_turn", "multi_turn"):
            block = summary[family][mode]
            assert 0.0 <= block["accuracy"] <= 1.0 and len(block["ci"]) == 2
            assert block["per_seed"][0]["seed"] == 3 and block["per_seed"][0]["run_dir"].endswith(
                "seed3"
            )
            fixed = block["best_fixed_sequence"]
            assert fixed["episodes"] == block["test_episodes"] == 4 and fixed["seeds"] == [3]
            assert fixed["sequence"][-1].startswith("answer") and len(fixed["ci"]) == 2
            assert fixed["accuracy"] <= fixed["hindsight_best_per_episode"]
            assert block["versus_best_fixed"]["learned"] == (
                block["versus_best_fixed"]["policy_ci"][0] > fixed["reward_ci"][1]
            )
            assert summary["best_fixed_sequence"][f"{family} {mode}"] == fixed
            for agent in ("random", "bm25", "oracle"):
                assert summary["baselines"][f"{family} {mode}"][agent]["episodes"] == 2
