"""``agentenv reproduce sft-then-rl --quick`` and ``holdout-selection --quick`` run end to end from the
shipped base checkpoint: the SFT loss falls, GRPO batches are token-exact, selection keeps the fraction."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("trl")
pytest.importorskip("matplotlib")

from agentenv.cli.main import main  # noqa: E402


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


def test_sft_more_data_scores_seen_and_unseen_tasks_and_grpo_against_sft(tmp_path) -> None:
    """The lesson tells train tasks it trained on from test tasks, and pairs GRPO with SFT per test task."""
    assert (
        main(
            [
                "reproduce",
                "sft-more-data",
                "--quick",
                "--eval-episodes",
                "2",
                "--out",
                str(tmp_path),
            ]
        )
        == 0
    )
    summary = json.loads((tmp_path / "summary.json").read_text())
    data = summary["data"]
    assert data["conversations"] > 0 and data["assistant_tokens"] > 0
    export = json.loads((tmp_path / "data" / "multi" / "manifest.json").read_text())
    # names copied from the question by default, and the export says which demonstrator wrote it
    assert data["demonstrator"] == export["agent"] == "oracle-question-spelling"
    rows = (tmp_path / "data" / "multi" / "tokens.jsonl").read_text().splitlines()
    assert data["assistant_tokens"] == sum(sum(json.loads(r)["loss_mask"]) for r in rows)
    seen = summary["sft"]["train_seen"]
    kept = set(export["task_ids"])
    assert seen["trained_on"] == sum(t in kept for t in seen["task_ids"]) >= 1
    test_ids = summary["sft"]["test"]["task_ids"]
    assert summary["sft_grpo"]["test"]["task_ids"] == test_ids  # the same test tasks, in order
    assert not set(test_ids) & kept  # never trained on a test task
    assert summary["grpo_minus_sft"]["n"] == len(test_ids)
    assert summary["sft_grpo"]["train"]["settings"]["temperature"] == 0.7
    credit = summary["sft_grpo_first_call"]  # the same GRPO, rewarded with the first-call credit
    assert (
        credit["reward"] == "first-call-credit"
        and credit["train"]["env_kwargs"]["reward"] == credit["reward"]
    )
    assert credit["test"]["task_ids"] == test_ids
    assert summary["first_call_grpo_minus_sft"]["n"] == len(test_ids)
    assert 0.0 <= summary["sft"]["test"]["first_call"] <= 1.0
    assert (tmp_path / "sft_more_data_accuracy.png").stat().st_size > 1000


def test_demos_is_refused_where_it_cannot_apply(tmp_path, capsys) -> None:
    """--demos chooses sft-more-data's demonstrator; another lesson refuses it before writing anything."""
    out = tmp_path / "run"
    assert (
        main(["reproduce", "sft-then-rl", "--quick", "--demos", "oracle", "--out", str(out)]) == 2
    )
    assert "--demos applies to sft-more-data only" in capsys.readouterr().err
    assert not out.exists()


def test_every_quick_scale_keeps_enough_holdout_rows_for_the_shift_check(tmp_path) -> None:
    """holdout-selection runs ``shift_check`` on each holdout, and its classifier test refuses fewer
    than 5 rows a file. The export drops oracle episodes that miss the gold (5 asked for gave 4),
    which stopped ``reproduce holdout-selection --model smollm2-135m --quick``: each quick scale's
    holdouts, exported as the lesson does, keep at least 5 rows."""
    import numpy as np
    from scipy import sparse

    from agentenv.data.shift_statistics import classifier_test
    from agentenv.errors import UserInputError
    from agentenv.lessons.scratch.experiment import export_rows
    from agentenv.lessons.scratch.lessons import MULTI_TURN, QUICK, REAL_QUICK

    for scale in (QUICK, REAL_QUICK):
        for name, kinds in (("matched", None), ("mismatched", ["constraint"])):
            extra = {"kinds": kinds} if kinds else {}
            out = tmp_path / f"{scale.holdout_rows}-{name}"
            rows = export_rows(MULTI_TURN, "validation", scale.holdout_rows, out, **extra)
            assert len(rows) >= 5, (scale.holdout_rows, name, len(rows))
    rng = np.random.default_rng(0)
    rows5 = sparse.csr_matrix(rng.random((5, 3)))
    classifier_test(rows5, rows5, rng=rng)
    with pytest.raises(UserInputError):
        classifier_test(rows5[:4], rows5, rng=rng)
