"""Bring your own patients: JSONL task dicts and phenopacket directories, in gym.make and `agentenv eval`."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

from agentenv.corpora.hpo.knowledge_base import HpoKnowledgeBase
from agentenv.envs.rare_disease.env import RareDiseaseEnv
from agentenv.envs.rare_disease.patients.simulated import PatientSampler
from agentenv.envs.rare_disease.patients.splits import split_cases
from agentenv.envs.rare_disease.tasks.phenopackets import to_phenopacket
from agentenv.errors import UserInputError
from agentenv.evaluation.runner import RunConfig, timed_run

MARFAN = {
    "id": "marfan-1",
    "phenotypes": [
        "HP:0001505",
        "HP:0001083",
        "HP:0002616",
        "HP:0001519",
    ],  # HP:0001505: alt id of Arachnodactyly
    "excluded": ["HP:0001250"],
    "diagnosis": ["OMIM:154700"],
}
ACHONDROPLASIA = {
    "phenotypes": ["HP:0004322", "HP:0000256", "HP:0002983"],
    "diagnosis": ["OMIM:100800"],
}
ORPHA_ONLY = {"phenotypes": ["HP:0001166"], "diagnosis": ["ORPHA:558"]}


def _jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def jsonl(tmp_path: Path) -> Path:
    return _jsonl(tmp_path / "cases.jsonl", [MARFAN, ACHONDROPLASIA, ORPHA_ONLY])


@pytest.fixture
def packets(tmp_path: Path, kb: HpoKnowledgeBase) -> Path:
    root = tmp_path / "packets"
    (root / "nested").mkdir(parents=True)
    sampler = PatientSampler(kb)
    for n, case in enumerate(split_cases(kb, "test")[:4]):
        packet = to_phenopacket(sampler.sample_case(*case), kb)
        (root / ("nested" if n % 2 else ".") / f"case{n}.json").write_text(
            json.dumps(packet), encoding="utf-8"
        )
    return root


def test_jsonl_tasks(jsonl: Path) -> None:
    with pytest.warns(UserWarning) as caught:
        env = gym.make("RareDiseaseDiagnosis-v0", tasks=str(jsonl))
    # each warning is attributed to the user's file and line (not to Gymnasium's registration.py)
    assert [(w.filename, w.lineno) for w in caught] == [(str(jsonl), 1), (str(jsonl), 3)]
    assert (
        str(caught[1].message)
        == f"{jsonl}:3: diagnosis ['ORPHA:558'] not in the 'omim' universe; case skipped"
    )
    inner = env.unwrapped
    assert inner.import_warnings == tuple(str(w.message) for w in caught)
    assert len(inner.tasks) == 2 and inner.split == "custom"
    assert inner.import_skipped == {"diagnosis_not_in_universe": 1}
    assert any("HP:0001505" in w and "HP:0001166" in w for w in inner.import_warnings)
    obs, info = env.reset(options={"index": 0})
    assert (
        "HP:0001166 Arachnodactyly" in obs
        and "Excluded phenotypes" in obs
        and info["split"] == "custom"
    )
    assert inner.task.kind == "imported" and inner.task.gold == {
        "diagnosis": ["OMIM:154700"],
        "name": "Marfan syndrome",
    }
    reward = env.step("<answer>Marfan syndrome</answer>")[1]
    assert reward == 1.0


def test_phenopacket_directory_round_trip(packets: Path, kb: HpoKnowledgeBase) -> None:
    env = RareDiseaseEnv(mode="single_turn", tasks=packets)
    sampler = PatientSampler(kb)
    originals = {
        p.disease_id: p for p in (sampler.sample_case(*c) for c in split_cases(kb, "test")[:4])
    }
    assert len(env.tasks) == 4 and not env.import_warnings
    for task in env.tasks:
        patient = task.case
        original = originals[patient.disease_id]
        assert set(patient.present) == set(original.all_present) and set(patient.excluded) == set(
            original.excluded
        )
    records, _ = timed_run(
        RunConfig(
            "RareDiseaseDiagnosis-v0", "oracle", episodes=4, env_kwargs=(("tasks", str(packets)),)
        ),
        progress=False,
    )
    assert [r["reward"] for r in records] == [1.0] * 4


def test_a_list_of_dicts_and_a_single_phenopacket_file(packets: Path, kb: HpoKnowledgeBase) -> None:
    packet = json.loads((packets / "case0.json").read_text(encoding="utf-8"))
    env = RareDiseaseEnv(tasks=[ACHONDROPLASIA, packet])
    assert [t.gold["diagnosis"][0] for t in env.tasks] == [
        "OMIM:100800",
        packet["interpretations"][0]["diagnosis"]["disease"]["id"],
    ]
    assert len(RareDiseaseEnv(tasks=packets / "case0.json").tasks) == 1


@pytest.mark.parametrize(
    ("content", "match"),
    [
        (
            '{"phenotypes": ["HP:0001166"], "diagnosis": ["OMIM:154700"]}\n{"phenotypes": [}\n',
            r"cases\.jsonl:2: not valid JSON",
        ),
        (
            '{"phenotypes": ["HP:0001166"], "diagnosis": ["OMIM:154700"], "age": 3}\n',
            "unknown field",
        ),
        ('{"phenotypes": "HP:0001166", "diagnosis": ["OMIM:154700"]}\n', "field 'phenotypes'"),
        ('{"phenotypes": ["HP:0001166"]}\n', "missing field 'diagnosis'"),
        ('{"phenotypes": ["HP:0001166"], "diagnosis": ["ORPHA:558"]}\n', "no usable patient"),
    ],
)
def test_bad_task_files_fail_early_and_say_why(tmp_path: Path, content: str, match: str) -> None:
    path = tmp_path / "cases.jsonl"
    path.write_text(content, encoding="utf-8")
    with (
        pytest.warns(UserWarning) if "usable" in match else contextlib.nullcontext(),
        pytest.raises(UserInputError, match=match),
    ):
        RareDiseaseEnv(tasks=path)


def test_bad_task_arguments(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no such file"):
        RareDiseaseEnv(tasks=tmp_path / "missing.jsonl")
    (tmp_path / "cases.txt").write_text("x", encoding="utf-8")
    with pytest.raises(UserInputError, match="unknown file type"):
        RareDiseaseEnv(tasks=tmp_path / "cases.txt")
    with pytest.raises(
        UserInputError,
        match=r"cases\.txt is not a case file .*\.json phenopackets and \.jsonl task",
    ):
        RareDiseaseEnv(tasks=tmp_path)
    (tmp_path / "empty").mkdir()
    with pytest.raises(UserInputError, match="the folder holds no files"):
        RareDiseaseEnv(tasks=tmp_path / "empty")
    with pytest.raises(UserInputError, match="tasks must be"):
        RareDiseaseEnv(tasks={"phenotypes": []})


@pytest.mark.parametrize("which", ["jsonl", "packets"])
def test_agentenv_eval_on_user_patients(
    which: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    path = request.getfixturevalue(which)
    out = tmp_path / "out"
    cmd = [
        sys.executable,
        "-m",
        "agentenv.cli.main",
        "eval",
        "RareDiseaseDiagnosis-v0",
        "--agent",
        "phenotype-ranker",
        "--tasks",
        str(path),
        "--episodes",
        "5",
        "--no-progress",
        "--out",
        str(out),
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["episodes"] == 5 and summary["corpus_checksums"]["hpo"]
    episodes = [
        json.loads(line)
        for line in (out / "episodes.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    assert all(
        e["tool_calls"] == 1 and e["reward_components"]["n_predictions"] == 3 for e in episodes
    )
    assert np.mean([e["reward"] for e in episodes]) == summary["metrics"]["mean_reward"]


def test_jsonl_line_numbers_count_blank_lines(tmp_path: Path) -> None:
    path = tmp_path / "cases.jsonl"
    path.write_text(
        "\n" + json.dumps(ACHONDROPLASIA) + "\n\n" + json.dumps(ORPHA_ONLY) + "\n", encoding="utf-8"
    )
    with pytest.warns(UserWarning) as caught:
        env = RareDiseaseEnv(tasks=path)
    assert [(w.filename, w.lineno) for w in caught] == [(str(path), 4)]
    assert env.import_warnings == (
        f"{path}:4: diagnosis ['ORPHA:558'] not in the 'omim' universe; case skipped",
    )


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (
            '{"phenotypes": ["HP:0001166"], "diagnosis": ["OMIM:154700"]}\n{"phenotypes": ["HP:0001166"] "diagnosis": []}\n',
            "cases.jsonl:2: not valid JSON (Expecting ',' delimiter at column 31); write one task object per line",
        ),
        ('{"phenotypes": ["HP:0001166"]}\n', "cases.jsonl:1: missing field 'diagnosis'; add it"),
    ],
)
def test_agentenv_eval_prints_a_bad_task_file_in_one_line(
    tmp_path: Path, content: str, message: str
) -> None:
    path = tmp_path / "cases.jsonl"
    path.write_text(content, encoding="utf-8")
    cmd = [
        sys.executable,
        "-m",
        "agentenv.cli.main",
        "eval",
        "RareDiseaseDiagnosis-v0",
        "--agent",
        "oracle",
        "--tasks",
        str(path),
        "--no-progress",
        "--out",
        str(tmp_path / "out"),
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr[-2000:]
    (line,) = done.stderr.strip().splitlines()  # no traceback
    assert line.startswith(f"agentenv: error: {tmp_path}/{message}"), line


def test_a_folder_reads_json_and_jsonl_case_files(packets: Path, kb: HpoKnowledgeBase) -> None:
    _jsonl(packets / "nested" / "more.jsonl", [MARFAN, ACHONDROPLASIA])
    with pytest.warns(UserWarning, match="old/alternative id"):  # MARFAN's HP:0001505
        env = RareDiseaseEnv(mode="single_turn", tasks=packets)
    assert len(env.tasks) == 6
    assert sum(t.case.source.endswith("more.jsonl:1#marfan-1") for t in env.tasks) == 1
    (packets / "README.md").write_text("my cases", encoding="utf-8")
    with pytest.raises(UserInputError, match=r"README\.md is not a case file"):
        RareDiseaseEnv(mode="single_turn", tasks=packets)


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        (
            [MARFAN, {**ACHONDROPLASIA, "id": "marfan-1"}],
            r"cases\.jsonl:2: id 'marfan-1' is already the id of .*cases\.jsonl:1",
        ),
        (
            [{**ACHONDROPLASIA, "id": 12}],
            r"cases\.jsonl:1: field 'id' must be a string .*; got int 12",
        ),
    ],
)
def test_a_bad_or_repeated_id_fails_early_naming_the_row(
    tmp_path: Path, rows: list[dict], message: str
) -> None:
    with pytest.raises(UserInputError, match=message):
        RareDiseaseEnv(tasks=_jsonl(tmp_path / "cases.jsonl", rows))
