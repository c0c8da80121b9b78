"""An agent on an env it cannot play says which envs it supports, in one line, instead of a KeyError."""

from __future__ import annotations

import dataclasses
import subprocess
import sys

import numpy as np
import pytest

import agentenv  # noqa: F401 - registers the ids
from agentenv.baselines.bm25_agent import BM25Agent
from agentenv.baselines.oracle import OracleAgent
from agentenv.core import Task
from agentenv.envs.rare_disease.agents.phenotype_ranker_agent import PhenotypeRankerAgent
from agentenv.errors import UserInputError
from agentenv.evaluation.agents import UnsupportedEnv
from agentenv.evaluation.runner import RunConfig, timed_run
from agentenv.families import get_family, register_family, unregister_family


def test_phenotype_ranker_on_media_search_names_the_envs_it_plays() -> None:
    with pytest.raises(UnsupportedEnv) as err:
        timed_run(RunConfig("MediaSearch-v0", "phenotype-ranker", episodes=1), progress=False)
    message = str(err.value)
    assert isinstance(err.value, UserInputError) and "\n" not in message
    assert message.startswith(
        "the phenotype-ranker agent plays only rare-disease envs (RareDiseaseDiagnosis-v0, "
    )
    assert "family 'media_search'" in message and "pick another agent" in message
    media = Task(
        prompt="Who directed Inception?",
        gold={"answer": "Christopher Nolan"},
        family="media_search",
    )
    with pytest.raises(UnsupportedEnv, match="plays only rare-disease envs"):
        PhenotypeRankerAgent().reset("?", {}, task=media, rng=np.random.default_rng(0))


def test_phenotype_ranker_still_plays_rare_disease() -> None:
    records, _ = timed_run(
        RunConfig("RareDiseaseDiagnosis-SingleTurn-v0", "phenotype-ranker", episodes=2),
        progress=False,
    )
    assert len(records) == 2


@pytest.fixture
def bare_family():
    """A family that declares neither an oracle nor a bm25 strategy."""
    family = dataclasses.replace(
        get_family("media_search"),
        name="bare_test_family",
        oracle=None,
        bm25=None,
        envs=(),
        dialogues=(),
        corpora={},
        agents={},
        reward_presets={},
    )
    register_family(family)
    yield Task(prompt="?", gold={}, split="test", family=family.name)
    unregister_family(family.name)


@pytest.mark.parametrize(
    ("agent", "part"), [(OracleAgent, "an oracle"), (BM25Agent, "a bm25 strategy")]
)
def test_oracle_and_bm25_on_a_family_without_them(
    bare_family: Task, agent: type, part: str
) -> None:
    with pytest.raises(UnsupportedEnv) as err:
        agent().reset("?", {}, task=bare_family, rng=np.random.default_rng(0))
    message = str(err.value)
    assert "task family 'bare_test_family' defines no" in message
    assert (
        f"families with {part}: " in message
        and "media_search" in message
        and "rare_disease" in message
    )


def test_the_agentenv_command_prints_it_in_one_line(tmp_path) -> None:
    cmd = [
        sys.executable,
        "-m",
        "agentenv.cli.main",
        "eval",
        "MediaSearch-v0",
        "--agent",
        "phenotype-ranker",
        "--episodes",
        "1",
        "--no-progress",
        "--out",
        str(tmp_path),
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr[-2000:]
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith(
        "agentenv: error: the phenotype-ranker agent plays only rare-disease envs"
    )
