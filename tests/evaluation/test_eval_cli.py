"""`agentenv eval` and the defaults a new user meets: gym.make trains on train, eval tests on test,
a --tasks file runs once (split "custom", with its checksum), --env-arg is checked, build time is
reported apart from episodes/s, and every option shows its default."""

from __future__ import annotations

import hashlib
import inspect
import json
from pathlib import Path

import gymnasium as gym
import pytest

import agentenv
from agentenv.cli.main import build_parser, env_kwarg_names, main, parse_env_args

ROWS = [
    {"question": "Which 2010 Christopher Nolan film is about dream heists?", "answer": "Inception"},
    {"question": "Which 1997 James Cameron film is about a sinking ship?", "answer": "Titanic"},
    {"question": "Which 1984 film sends a T-800 back in time?", "answer": "The Terminator"},
]


@pytest.fixture
def tasks_file(tmp_path: Path) -> Path:
    path = tmp_path / "mine.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    return path


def _classes() -> list[type]:
    from agentenv.envs.media_search.dialogue.concierge import MediaConciergeEnv
    from agentenv.envs.media_search.env import MediaSearchEnv
    from agentenv.envs.rare_disease.dialogue.doctor_patient import DiagnosisDialogueEnv
    from agentenv.envs.rare_disease.env import RareDiseaseEnv

    return [MediaSearchEnv, RareDiseaseEnv, MediaConciergeEnv, DiagnosisDialogueEnv]


def test_gym_make_and_every_env_class_default_to_the_train_split() -> None:
    for cls in _classes():
        assert inspect.signature(cls.__init__).parameters["split"].default == "train", cls
    assert gym.make("MediaSearch-v0").unwrapped.split == "train"
    assert gym.make("MediaSearch-v0", split="test").unwrapped.split == "test"


def test_eval_defaults_to_test_and_help_shows_every_default(capsys) -> None:
    args = build_parser().parse_args(["eval", "MediaSearch-v0", "--agent", "oracle"])
    assert (args.split, args.episodes, args.seed, args.workers, str(args.out)) == (
        "test",
        None,
        0,
        1,
        "results",
    )
    with pytest.raises(SystemExit):
        build_parser().parse_args(["eval", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for shown in (
        "(default: test;",
        "(default: 100;",
        "one pass over its tasks",
        "(default: results)",
        "run seed (default: 0)",
        "processes (default: 1)",
        "--env-arg KEY=VALUE",
    ):
        assert shown in text, shown


def test_version(capsys) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert (
        exc.value.code == 0
        and capsys.readouterr().out.strip() == f"agentenv {agentenv.__version__}"
    )


def test_tasks_file_runs_once_as_split_custom_with_its_checksum(
    tasks_file: Path, tmp_path: Path, capsys
) -> None:
    out = tmp_path / "run"
    assert (
        main(
            [
                "eval",
                "MediaSearch-v0",
                "--agent",
                "oracle",
                "--tasks",
                str(tasks_file),
                "--out",
                str(out),
                "--no-progress",
            ]
        )
        == 0
    )
    printed = capsys.readouterr().out
    assert f"(custom tasks {tasks_file}, 3 tasks, 3 episodes, seed 0)" in printed
    assert "tasks repeat" not in printed
    summary = json.loads((out / "summary.json").read_text())
    assert summary["split"] == "custom" and summary["episodes"] == summary["n_tasks"] == 3
    assert summary["tasks_repeated"] is False
    assert summary["tasks_file"] == {
        "path": str(tasks_file),
        "count": 3,
        "sha256": hashlib.sha256(tasks_file.read_bytes()).hexdigest(),
    }
    assert sorted(json.loads(line)["task_index"] for line in (out / "episodes.jsonl").open()) == [
        0,
        1,
        2,
    ]


def test_more_episodes_than_tasks_says_tasks_repeat(
    tasks_file: Path, tmp_path: Path, capsys
) -> None:
    out = tmp_path / "run"
    assert (
        main(
            [
                "eval",
                "MediaSearch-v0",
                "--agent",
                "oracle",
                "--tasks",
                str(tasks_file),
                "--episodes",
                "7",
                "--out",
                str(out),
                "--no-progress",
            ]
        )
        == 0
    )
    assert "7 episodes over 3 tasks: tasks repeat" in capsys.readouterr().out
    summary = json.loads((out / "summary.json").read_text())
    assert (
        summary["tasks_repeated"] is True and summary["episodes"] == 7 and summary["n_tasks"] == 3
    )


def test_split_run_reports_build_time_apart_from_throughput(tmp_path: Path, capsys) -> None:
    out = tmp_path / "run"
    assert (
        main(
            [
                "eval",
                "MediaSearch-v0",
                "--agent",
                "oracle",
                "--episodes",
                "5",
                "--env-arg",
                "max_turns=6",
                "--out",
                str(out),
                "--no-progress",
            ]
        )
        == 0
    )
    printed = capsys.readouterr().out
    assert "oracle on MediaSearch-v0 (test split, " in printed
    assert "build_s" in printed and "episode loop only" in printed
    s = json.loads((out / "summary.json").read_text())
    assert s["split"] == "test" and s["tasks_file"] is None and s["env_kwargs"] == {"max_turns": 6}
    assert s["n_tasks"] > 5 and s["tasks_repeated"] is False
    assert 0 < s["build_s"] < s["wall_time_s"]
    assert s["episodes_per_s"] > s["episodes"] / s["wall_time_s"]  # the loop alone, build excluded


def test_env_args_parse_as_json_else_string() -> None:
    assert parse_env_args(["k=3", "universe=omim+orpha", "x=[1, 2]", 's="3"', "e="]) == {
        "k": 3,
        "universe": "omim+orpha",
        "x": [1, 2],
        "s": "3",
        "e": "",
    }


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["--env-arg", "kk=3"],
            "--env-arg kk: RareDiseaseDiagnosis-v0 takes no keyword 'kk' (did you mean 'k'?); it accepts: ",
        ),
        (
            ["--env-arg", "zzz=3"],
            "--env-arg zzz: RareDiseaseDiagnosis-v0 takes no keyword 'zzz'; it accepts: ",
        ),
        (["--env-arg", "split=train"], "--env-arg split: use --split instead"),
        (["--env-arg", "k"], "--env-arg expects KEY=VALUE, got 'k'"),
    ],
)
def test_bad_env_args_are_one_line_errors(argv: list[str], message: str, capsys) -> None:
    assert main(["eval", "RareDiseaseDiagnosis-v0", "--agent", "oracle", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err
    if "accepts" in message:
        assert all(name in err for name in ("k,", "presentation", "universe", "max_turns"))


def test_accepted_env_kwargs_come_from_the_class_signature() -> None:
    names = env_kwarg_names("MediaSearch-v0")
    assert {"retriever", "passages", "max_turns", "split", "tasks", "reward"} <= names
    assert (
        "tools" not in names and "self" not in names
    )  # the base class's positional arguments are not user kwargs


def test_unknown_id_is_one_line_with_a_close_match(capsys) -> None:
    assert main(["eval", "MediaSerch-v0", "--agent", "oracle"]) == 2
    err = capsys.readouterr().err
    assert (
        err.count("\n") == 1
        and "did you mean 'MediaSearch-v0'?" in err
        and "RareDiseaseDiagnosis-v0" in err
    )


def test_task_file_import_warnings_are_counted_in_the_summary(tmp_path: Path, capsys) -> None:
    tasks = tmp_path / "p.jsonl"
    tasks.write_text(
        json.dumps({"phenotypes": ["HP:0001166", "HP:0000545"], "diagnosis": ["OMIM:154700"]})
        + "\n"
        + json.dumps({"phenotypes": ["HP:0001250"], "diagnosis": ["ORPHA:558"]})
        + "\n",
        encoding="utf-8",
    )
    out = tmp_path / "run"
    with pytest.warns(UserWarning, match="p.jsonl:2"):
        assert (
            main(
                [
                    "eval",
                    "RareDiseaseDiagnosis-v0",
                    "--agent",
                    "oracle",
                    "--tasks",
                    str(tasks),
                    "--out",
                    str(out),
                    "--no-progress",
                ]
            )
            == 0
        )
    summary = json.loads((out / "summary.json").read_text())
    assert len(summary["import_warnings"]) == 1 and "p.jsonl:2" in summary["import_warnings"][0]
    assert "1 import warning(s)" in capsys.readouterr().out


def test_a_run_that_fails_before_its_first_episode_leaves_no_run(tmp_path: Path, capsys) -> None:
    """An agent that cannot play the env fails on the first episode: the fixed command, rerun with the
    same --out, must not be refused as "already holds a run" (run.json and an empty episodes.jsonl)."""
    out = tmp_path / "run"
    argv = ["eval", "MediaSearch-v0", "--episodes", "2", "--out", str(out), "--no-progress"]
    assert main([*argv, "--agent", "phenotype-ranker"]) == 2
    assert "rare-disease" in capsys.readouterr().err and not out.exists()
    assert main([*argv, "--agent", "oracle"]) == 0 and (out / "summary.json").is_file()
    (tmp_path / "kept").mkdir()
    (tmp_path / "kept" / "notes.txt").write_text("mine")  # a folder that held something stays
    assert main([*argv[:4], "--out", str(tmp_path / "kept"), "--agent", "phenotype-ranker"]) == 2
    assert (tmp_path / "kept" / "notes.txt").read_text() == "mine"


def test_a_misspelt_agent_is_named_before_an_existing_run_in_out(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    # Why: the agent's name is checked with the other values, so a typo is reported as a typo,
    # not as "already holds a run" (which would send the user to --overwrite first).
    out = tmp_path / "run"
    argv = ["eval", "MediaSearch-v0", "--episodes", "1", "--no-progress", "--out", str(out)]
    assert main([*argv, "--agent", "oracle"]) == 0
    capsys.readouterr()
    assert main([*argv, "--agent", "oracel"]) == 2
    err = capsys.readouterr().err
    assert "unknown agent 'oracel' (did you mean 'oracle'?)" in err and "already holds" not in err
    assert main([*argv, "--agent", "oracle"]) == 2  # the run is still there, refused as before
    assert "already holds a run" in capsys.readouterr().err
