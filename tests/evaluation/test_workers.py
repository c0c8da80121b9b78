"""``agentenv eval`` gives the same episodes and metrics for any number of worker processes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentenv.cli.main import main

EPISODES = 60
TIMING = {"wall_time_s", "build_s", "episodes_per_s", "workers"}


def run(out: Path, agent: str, workers: int) -> tuple[list[str], dict]:
    code = main(
        [
            "eval",
            "MediaSearch-v0",
            "--agent",
            agent,
            "--split",
            "validation",
            "--episodes",
            str(EPISODES),
            "--seed",
            "7",
            "--workers",
            str(workers),
            "--out",
            str(out),
            "--no-progress",
        ]
    )
    assert code == 0
    lines = (out / "episodes.jsonl").read_text(encoding="utf-8").splitlines()
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    return lines, summary


@pytest.mark.parametrize("agent", ["random", "bm25"])
def test_one_and_two_workers_give_identical_results(agent: str, tmp_path: Path, capsys) -> None:
    one_lines, one = run(tmp_path / "w1", agent, 1)
    two_lines, two = run(tmp_path / "w2", agent, 2)
    assert len(one_lines) == EPISODES
    assert one_lines == two_lines  # every record, transcripts included, byte for byte
    assert (one["workers"], two["workers"]) == (1, 2)
    assert {k: v for k, v in one.items() if k not in TIMING} == {
        k: v for k, v in two.items() if k not in TIMING
    }
    episodes = [json.loads(line)["episode"] for line in one_lines]
    assert episodes == list(range(EPISODES))
