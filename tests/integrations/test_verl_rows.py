"""``agentenv prepare-verl`` writes ``agentenv eval``'s episodes as verl rows, and ``compute_score`` grades a
row's text as ``agentenv eval`` does. Needs pyarrow (the verl extra; also installed with datasets), not verl."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentenv.cli.main import main

pq = pytest.importorskip("pyarrow.parquet")

ENV_ID = "MediaSearch-SingleTurn-v0"


@pytest.fixture(scope="module")
def rows(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    out = tmp_path_factory.mktemp("verl") / "rows.parquet"
    assert (
        main(
            [
                "prepare-verl",
                ENV_ID,
                "--split",
                "test",
                "--episodes",
                "4",
                "--seed",
                "5",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    return pq.read_table(out).to_pylist()


def eval_records() -> list[dict]:
    from agentenv.evaluation.runner import (
        RunConfig,
        build_agent,
        build_env,
        episode_plan,
        run_episode,
    )

    config = RunConfig(env_id=ENV_ID, agent="oracle", split="test", episodes=4, seed=5)
    env, agent = build_env(config), build_agent(config)
    plan = episode_plan(len(env.unwrapped.tasks), 4, 5)
    return [run_episode(env, agent, config, i, index) for i, index in enumerate(plan)]


def test_prepare_verl_rows_are_the_eval_episodes(rows: list[dict]) -> None:
    records = eval_records()
    assert [r["extra_info"]["seed"] for r in rows] == [5, 6, 7, 8]
    assert [r["extra_info"]["task_id"] for r in rows] == [r["task_id"] for r in records]
    for row, record in zip(rows, records, strict=True):
        assert row["agent_name"] == "agentenv" and row["data_source"] == "agentenv/" + ENV_ID
        assert row["prompt"] == [
            {"role": m["role"], "content": m["content"]} for m in record["messages"][:2]
        ]
        assert record["gold"] is None or str(record["gold"]) not in str(
            row
        )  # the gold stays in the env


def test_verl_compute_score_is_the_eval_reward(rows: list[dict]) -> None:
    from agentenv.integrations.verl.reward import compute_score

    for row, record in zip(rows, eval_records(), strict=True):
        oracle_text = record["messages"][-1]["content"]
        score = compute_score(
            row["data_source"], oracle_text, row["reward_model"]["ground_truth"], row["extra_info"]
        )
        assert score["score"] == record["reward"] == 1.0 and score["turns"] == 1
        wrong = compute_score(
            row["data_source"], "<answer>Casablanca (1942)</answer>", None, row["extra_info"]
        )
        assert wrong["score"] == 0.0 and wrong["accuracy"] == 0.0


def test_verl_compute_score_reads_the_agent_loops_reward() -> None:
    from agentenv.integrations.verl.reward import compute_score

    score = compute_score(
        "agentenv/MediaSearch-v0",
        "",
        None,
        {
            "agentenv_reward": 0.5,
            "agentenv_turns": 3,
            "agentenv_reward_components": {"accuracy": 1.0},
        },
    )
    assert score == {"score": 0.5, "accuracy": 1.0, "turns": 3}


def test_prepare_verl_rejects_a_bad_out_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["prepare-verl", ENV_ID, "--out", str(tmp_path / "rows.csv")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--out must name a .parquet file" in err[0]


def test_prepare_verl_never_replaces_rows_unless_told(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "rows.parquet"
    assert main(["prepare-verl", ENV_ID, "--episodes", "2", "--out", str(out)]) == 0
    before = out.read_bytes()
    assert main(["prepare-verl", ENV_ID, "--episodes", "3", "--out", str(out)]) == 2
    assert "--overwrite" in capsys.readouterr().err and out.read_bytes() == before
    assert main(["prepare-verl", ENV_ID, "--episodes", "3", "--out", str(out), "--overwrite"]) == 0
    assert pq.read_table(out).num_rows == 3 and [p.name for p in tmp_path.iterdir()] == [
        "rows.parquet"
    ]


def test_verl_compute_score_has_the_same_keys_whether_or_not_the_episode_ended(
    tmp_path: Path,
) -> None:
    """verl gathers a batch's extra reward fields by the first rollout's keys; a tool call that
    did not end the episode returned only score and turns."""
    from agentenv.integrations.verl.reward import compute_score

    out = tmp_path / "rows.parquet"
    assert main(["prepare-verl", ENV_ID, "--out", str(out), "--episodes", "2"]) == 0
    row = pq.read_table(out).to_pylist()[0]
    call = '<tool_call>{"name": "search", "arguments": {"query": "x"}}</tool_call>'
    keys = [
        sorted(compute_score(row["data_source"], text, None, row["extra_info"]))
        for text in ("<answer>x</answer>", call)
    ]
    assert keys[0] == keys[1] and "accuracy" in keys[0]


@pytest.mark.parametrize(
    ("extra_info", "said"),
    [
        ({"agentenv_reward": float("nan")}, "must be a finite number"),
        ({"agentenv_reward": "abc"}, "must be a finite number"),
        ({"agentenv_reward": 1.0, "agentenv_reward_components": "abc"}, "must be an object"),
        ("abc", "extra_info must be the row's object"),
    ],
)
def test_verl_compute_score_refuses_unreadable_loop_fields(extra_info: object, said: str) -> None:
    from agentenv.integrations.verl.reward import compute_score

    with pytest.raises(ValueError, match=said):
        compute_score("agentenv/MediaSearch-v0", "", None, extra_info)
