"""``agentenv reproduce sft-then-rl --quick`` and ``holdout-selection --quick`` run end to end from the
shipped base checkpoint: the SFT loss falls, GRPO batches are token-exact, selection keeps the fraction."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("trl")
pytest.importorskip("matplotlib")

from agentenv.cli import main  # noqa: E402


@pytest.fixture(scope="module")
def sft_then_rl(tmp_path_factory):
    out = tmp_path_factory.mktemp("sft_then_rl")
    assert main(["reproduce", "sft-then-rl", "--quick", "--out", str(out)]) == 0
    return out, json.loads((out / "summary.json").read_text())


@pytest.fixture(scope="module")
def holdout_selection(tmp_path_factory):
    out = tmp_path_factory.mktemp("holdout_selection")
    assert main(["reproduce", "holdout-selection", "--quick", "--out", str(out)]) == 0
    return out, json.loads((out / "summary.json").read_text())


def test_sft_then_rl_reports_each_arm_with_a_ci_and_its_plots(sft_then_rl) -> None:
    out, summary = sft_then_rl
    assert (
        summary["smoke_run"] is True and "not results" in summary["smoke_note"]
    )  # --quick is labelled
    for arm in ("sft", "sft_rl_multi_turn", "sft_rl_single_turn", "random"):
        low, high = summary[arm]["ci"]
        assert 0.0 <= low <= summary[arm]["accuracy"] <= high <= 1.0, arm
        assert summary[arm]["MediaSearch-v0"]["n"] == summary["meta"]["scale"]["eval_episodes"]
    assert (out / "sft_then_rl_accuracy.png").stat().st_size > 1000
    assert (out / "sft_then_rl_curves.png").stat().st_size > 1000
    assert (
        summary["meta"]["wall_s"] > 0
    )  # the run reports its time; tests never bound it (benchmarks/ time things)


def test_the_sft_loss_falls(sft_then_rl) -> None:
    train = sft_then_rl[1]["sft"]["train"]
    assert train["loss_after"] < train["loss_before"] - 0.05


def test_grpo_batches_are_token_exact(sft_then_rl) -> None:
    for arm in ("sft_rl_multi_turn", "sft_rl_single_turn"):
        check = sft_then_rl[1][arm]["train"]["token_check"]
        assert check["rollouts"] > 0 and check["exact"] == check["rollouts"], (
            arm,
            check["mismatches"],
        )
        assert check["policy_tokens"] > 0


def test_selection_keeps_the_requested_fraction(holdout_selection) -> None:
    _, summary = holdout_selection
    total = summary["all"]["rows"]
    kept = max(1, round(summary["meta"]["scale"]["fraction"] * total))
    for arm in ("random", "matched_holdout", "mismatched_holdout"):
        assert summary[arm]["rows"] == kept, arm
    for holdout in ("matched", "mismatched"):
        auc = summary["shift"][holdout]["classifier"]["auc"]
        assert 0.0 <= auc <= 1.0
    assert (
        summary["shift"]["mismatched"]["kind"]["js_divergence"]
        > summary["shift"]["matched"]["kind"]["js_divergence"]
    )
