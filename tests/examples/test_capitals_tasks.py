"""The example family reads a task file of the user's (``tasks=``, ``agentenv eval --tasks``) and refuses a
reward it cannot pay when the env is made.

Why this test: ``docs/new-family.md`` tells a family author to read ``tasks=`` with
:func:`agentenv.engine.task_rows.read_task_rows` and to declare ``_graded_components()``; the example
family is what they copy, so it must do both, end to end through the command line.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import pytest

from agentenv.engine.actions import answer
from agentenv.errors import UserInputError
from agentenv.families import unregister_family

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
IDS = ("capitals.family:Capitals-v0", "capitals.family:Capitals-SingleTurn-v0")
ROWS = [
    {"question": "What is the capital of Peru?", "answer": "Lima", "id": "peru"},
    {
        "question": "Which country has Canberra as its capital?",
        "answer": "Australia",
        "kind": "country",
    },
    {"question": "What is the capital of Ukraine?", "answer": "Kyiv", "aliases": ["Kiev"]},
]


def write_rows(path: Path, rows: list) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def cli_env() -> dict[str, str]:
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(EXAMPLES), os.environ.get("PYTHONPATH", "")]),
    }


@pytest.mark.parametrize("from_file", [True, False], ids=["file", "list"])
def test_tasks_from_a_file_or_a_list_are_served_as_split_custom(
    tmp_path: Path, from_file: bool
) -> None:
    source = write_rows(tmp_path / "q.jsonl", ROWS) if from_file else ROWS
    env = gym.make(IDS[0], tasks=source).unwrapped
    assert env.split == "custom"
    assert [(t.prompt, t.gold, t.kind, t.row_id) for t in env.tasks] == [
        ("What is the capital of Peru?", "Lima", "custom", "peru"),
        ("Which country has Canberra as its capital?", "Australia", "country", ""),
        ("What is the capital of Ukraine?", "Kyiv", "custom", ""),
    ]
    assert {(t.split, t.family) for t in env.tasks} == {("custom", "capitals")}


@pytest.mark.parametrize(
    ("index", "said", "accuracy"),
    [
        (0, "lima", 1.0),
        (0, "Bogota", 0.0),
        (2, "Kiev", 1.0),
        (2, "the Kyiv", 1.0),
        (1, "Austria", 0.0),
    ],
)
def test_a_row_is_graded_against_its_answer_and_aliases(
    index: int, said: str, accuracy: float
) -> None:
    env = gym.make(IDS[0], tasks=ROWS).unwrapped
    env.reset(seed=0, options={"index": index})
    assert env.step(answer(said))[4]["reward_components"]["accuracy"] == accuracy


def test_bad_rows_are_named_by_line_and_field(tmp_path: Path) -> None:
    path = write_rows(
        tmp_path / "q.jsonl",
        [
            ROWS[0],
            {"question": "Q?", "answer": "A", "kind": "planet"},
            {"question": "Q2?", "answer": "A", "aliases": "B"},
            {"question": "Q3?", "answer": "?!"},
            {"question": "Q4?", "answr": "A"},
        ],
    )
    with pytest.raises(UserInputError) as err:
        gym.make(IDS[0], tasks=path)
    assert [line.split(": ", 1)[0].strip() for line in str(err.value).splitlines()[1:]] == [
        f"{path}:{n}" for n in (2, 3, 4, 5)
    ]
    for field in ("'kind'", "'aliases'", "'answer'", "'answr' (did you mean 'answer'?)"):
        assert f"field {field}" in str(err.value)


def test_the_oracle_proves_rows_it_can_reach_and_says_so_when_it_cannot() -> None:
    from capitals.agents import CapitalsOracle

    rows = [*ROWS, {"question": "What is the capital of Atlantis?", "answer": "Poseidonia"}]
    for env_id in IDS:
        env = gym.make(env_id, tasks=rows).unwrapped
        scores, answers = [], []
        for index in range(len(rows)):
            agent = CapitalsOracle()
            obs, info = env.reset(seed=index, options={"index": index})
            agent.reset(obs, info, task=env.task, rng=None)
            done = False
            while not done:
                obs, _, terminated, truncated, info = env.step(agent.act(obs, info))
                done = terminated or truncated
            scores.append(info["reward_components"]["accuracy"])
            answers.append(info["messages"][-1]["content"])
        assert scores == [1.0, 1.0, 1.0, 0.0], (env_id, answers)
        assert "not" in answers[-1] and "Poseidonia" not in answers[-1]


def test_agentenv_eval_tasks_scores_the_bm25_agent(tmp_path: Path) -> None:
    tasks = write_rows(tmp_path / "q.jsonl", [*ROWS, ["not a row"]])
    out = tmp_path / "run"
    command = [sys.executable, "-m", "agentenv.cli.main", "eval", IDS[0], "--agent", "bm25"]
    command += ["--tasks", str(tasks), "--out", str(out), "--no-progress"]
    done = subprocess.run(command, env=cli_env(), capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and f"{tasks}:4: expected a JSON object" in done.stderr
    done = subprocess.run(
        [*command, "--skip-bad-rows"], env=cli_env(), capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["split"] == "custom" and summary["n_tasks"] == 3
    assert summary["metrics"]["accuracy"] == 1.0 and summary["skipped_task_rows"] == 1


def test_a_reward_reading_a_component_it_never_reports_is_refused_at_make(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from agentenv.cli.main import main

    with pytest.raises(
        ValueError,
        match=r"reward 'first-call-credit' reads \['first_call'\], which CapitalsEnv does not report",
    ):
        gym.make(IDS[0], reward="first-call-credit")
    out = tmp_path / "run"
    argv = ["eval", IDS[0], "--agent", "bm25", "--reward", "first-call-credit", "--out", str(out)]
    assert main([*argv, "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert (
        err.startswith("agentenv: error: ") and "first_call" in err and len(err.splitlines()) == 1
    )
    assert not (out / "episodes.jsonl").exists()


NO_TASKS_FAMILY = """
from capitals.env import CapitalsEnv
from agentenv.families import EnvSpec, Family, register_family


class FixedEnv(CapitalsEnv):
    def __init__(self, *, split: str = "train", max_turns: int = 4) -> None:
        super().__init__(split=split, max_turns=max_turns)


register_family(Family(
    name="fixed_capitals",
    envs=(EnvSpec("FixedCapitals-v0", "fixed_capitals_family:FixedEnv", {}, "No tasks keyword."),),
    docs="docs/new-family.md",
))
"""


def test_a_family_whose_env_takes_no_tasks_keyword_is_refused_naming_the_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--tasks`` for an env without a ``tasks`` keyword was Python's ``got multiple values for
    argument 'tasks'``; it is one line naming the flag and the fix (capitals took none before)."""
    from agentenv.cli.main import main

    (tmp_path / "fixed_capitals_family.py").write_text(NO_TASKS_FAMILY)
    monkeypatch.syspath_prepend(str(tmp_path))
    tasks = write_rows(tmp_path / "q.jsonl", ROWS)
    env_id = "fixed_capitals_family:FixedCapitals-v0"
    refusal = (
        f"agentenv: error: --tasks: {env_id} reads no task file of yours (its env takes no 'tasks' "
        "keyword); use --split train/validation/test instead, or give the family's env a "
        "keyword-only 'tasks' parameter that reads the file (see docs/new-family.md)\n"
    )
    try:
        for command in ("eval", "export-sft"):
            argv = [command, env_id, "--tasks", str(tasks), "--out", str(tmp_path / command)]
            assert main(argv + (["--agent", "oracle"] if command == "eval" else [])) == 2
            assert capsys.readouterr().err == refusal
    finally:
        unregister_family("fixed_capitals")
        sys.modules.pop("fixed_capitals_family", None)
    assert not (tmp_path / "eval").exists() and not (tmp_path / "export-sft").exists()
