"""The example family kept outside the package (``examples/capitals``) works end to end.

Why this test: a family must touch no file outside its own folder, and every
generic tool (``gym.make("module:Id")``, the evaluation runner and its
``oracle``/``random``/``bm25`` agents, ``agentenv eval``, the corpus loader of
``serve-retrieval``, ``check_tool_env``) must find it through the registry
alone. ``docs/new-family.md`` walks through the same family.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

from agentenv.engine.actions import answer, tool_call
from agentenv.families import (
    corpus_names,
    family_of_env,
    get_family,
    load_corpus,
)

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
IDS = ("capitals.family:Capitals-v0", "capitals.family:Capitals-SingleTurn-v0")


def run_config(env_id: str, agent: str, episodes: int) -> list[dict]:
    from agentenv.evaluation.runner import RunConfig, timed_run

    records, _ = timed_run(
        RunConfig(env_id=env_id, agent=agent, split="test", episodes=episodes), progress=False
    )
    return records


def test_gym_make_imports_the_module_before_the_colon() -> None:
    env = gym.make(IDS[0])
    obs, info = env.reset(seed=0)
    assert env.unwrapped.split == "train"  # gym.make defaults to train, like every family
    assert [t["function"]["name"] for t in info["tools"]] == ["search", "get_country"]
    assert obs.endswith("?") and "gold" not in info
    assert family_of_env(IDS[1]).name == "capitals"
    assert get_family("capitals").ids == ("Capitals-v0", "Capitals-SingleTurn-v0")


def test_splits_are_by_country_and_cover_the_table() -> None:
    countries = {
        s: {t.case.id for t in gym.make(IDS[0], split=s).unwrapped.tasks}
        for s in ("train", "validation", "test")
    }
    assert all(countries.values())
    assert len(set().union(*countries.values())) == sum(map(len, countries.values())) == 100


@pytest.mark.parametrize("env_id", IDS)
def test_oracle_scores_one_on_every_test_task(env_id: str) -> None:
    tasks = gym.make(env_id, split="test").unwrapped.tasks
    records = run_config(env_id, "oracle", len(tasks))
    assert {r["task_id"] for r in records} == {t.id for t in tasks}
    assert [r["reward_components"]["accuracy"] for r in records] == [1.0] * len(tasks)
    if env_id == IDS[0]:  # it used the real tools: search, then get_country
        assert all(r["tool_calls"] == 2 for r in records)


@pytest.mark.parametrize("env_id", IDS)
def test_random_agent_runs_without_errors(env_id: str) -> None:
    records = run_config(env_id, "random", 30)
    assert len(records) == 30 and all(r["terminated"] or r["truncated"] for r in records)


@pytest.mark.parametrize("env_id", IDS)
def test_bm25_strategy_answers_from_the_top_hit(env_id: str) -> None:
    records = run_config(env_id, "bm25", 30)
    # Every question names its country or capital verbatim, so BM25's top passage holds the answer:
    # a drop means the search, the passages or the question wording changed.
    assert [r["reward_components"]["accuracy"] for r in records] == [1.0] * 30


def test_agentenv_eval_cli_finds_the_family_through_pythonpath(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(EXAMPLES), os.environ.get("PYTHONPATH", "")]),
    }
    command = [
        sys.executable,
        "-m",
        "agentenv.cli.main",
        "eval",
        IDS[0],
        "--agent",
        "oracle",
        "--episodes",
        "20",
        "--out",
        str(tmp_path),
        "--no-progress",
    ]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["metrics"]["accuracy"] == 1.0 and summary["split"] == "test"
    assert set(summary["corpus_checksums"]) == {"capitals"}


def test_its_own_split_runs_with_agentenv_eval_split(tmp_path: Path) -> None:
    """``hard`` is declared in the family's record only: the CLI accepts it for this family's ids,
    refuses it for MediaSearch (naming the splits MediaSearch has), and the run is on that split."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(EXAMPLES), os.environ.get("PYTHONPATH", "")]),
    }

    def run_eval(env_id: str, out: Path) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "agentenv.cli.main", "eval", env_id, "--agent", "oracle"]
        command += ["--split", "hard", "--episodes", "6", "--out", str(out), "--no-progress"]
        return subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)

    done = run_eval(IDS[0], tmp_path / "hard")
    assert done.returncode == 0, done.stderr[-2000:]
    summary = json.loads((tmp_path / "hard" / "summary.json").read_text())
    assert summary["split"] == "hard" and summary["metrics"]["accuracy"] == 1.0
    assert len((tmp_path / "hard" / "episodes.jsonl").read_text().splitlines()) == 6
    assert {t.kind for t in gym.make(IDS[0], split="hard").unwrapped.tasks} == {"continent"}
    refused = run_eval("MediaSearch-v0", tmp_path / "media")
    assert refused.returncode == 2
    assert (
        "split 'hard' is not one of MediaSearch-v0's: train, validation, test, casual"
        in refused.stderr
    )


# Its env reads a task file of yours (``tasks=``, ``--tasks``): tests/examples/test_capitals_tasks.py.


def test_its_ids_get_a_skyrl_env_from_the_registry() -> None:
    """``register_envs("capitals.family")`` names the family's ids as ``prepare-verl`` writes them."""
    pytest.importorskip("skyrl_gym")
    import skyrl_gym

    from agentenv.integrations.row_episodes import SHARED_POOL, EpisodeSpec
    from agentenv.integrations.skyrl import register_envs
    from agentenv.integrations.verl.rows import skyrl_row

    names = register_envs("capitals.family")
    assert {"agentenv/capitals.family:Capitals-v0", "agentenv/MediaSearch-v0"} <= set(names)
    row = skyrl_row(EpisodeSpec(IDS[0], "hard", 0, 0), SHARED_POOL)
    extras = {k: v for k, v in row.items() if k not in ("prompt", "env_class")}
    env = skyrl_gym.make(row["env_class"], env_config={}, extras=extras)
    chat, _ = env.init(row["prompt"])
    out = env.step(answer("I do not know."))
    assert chat[-1]["role"] == "user" and out["done"] and out["reward"] == 0.0
    env.close()


def test_serve_retrieval_corpus_loader_returns_the_documents() -> None:
    ids, texts, checksum = load_corpus("capitals.family:capitals")
    assert len(ids) == len(texts) == 100 and "capitals" in corpus_names()
    assert (
        texts[ids.index("PER")] == "Peru (PER) is a country in South America. Its capital is Lima."
    )
    assert checksum == gym.make(IDS[0]).unwrapped.corpus_checksums["capitals"]


def test_tools_and_grading() -> None:
    from capitals.env import load_table, make_task

    env = gym.make(IDS[0]).unwrapped
    usa = next(c for c in load_table()[0] if c.id == "USA")
    env.reset(options={"task": make_task(usa, "country", "custom")})
    obs, *_ = env.step(tool_call("get_country", country="Atlantis"))
    assert obs.startswith("Error:") and "Atlantis" not in obs
    obs, *_ = env.step(tool_call("search", query="Washington"))
    assert obs.startswith("[1] United States (USA)")
    *_, info = env.step(answer("the U.S.A."))  # an alias, normalized
    assert info["reward_components"]["accuracy"] == 1.0 and info["gold"] == "United States"
    for kind, said, right in (
        ("capital", "Kiev", 1.0),
        ("capital", "bogota", 0.0),
        ("continent", "europe", 1.0),
        ("continent", "Asia", 0.0),
    ):
        env.reset(
            options={
                "task": make_task(next(c for c in load_table()[0] if c.id == "UKR"), kind, "custom")
            }
        )
        assert env.step(answer(said))[4]["reward_components"]["accuracy"] == right


@pytest.mark.parametrize("env_id", IDS)
def test_check_tool_env_passes(env_id: str) -> None:
    checker = pytest.importorskip("agentenv.checks.env_checker")
    checker.check_tool_env(gym.make(env_id))


@pytest.mark.parametrize("env_id", IDS)
def test_the_structured_wrapper_plays_the_family_through_its_declared_menus(env_id: str) -> None:
    """``Family.structured`` is all it takes: check_env passes, and the menu's right field scores what the text env gives."""
    import warnings

    from gymnasium.utils.env_checker import check_env

    from agentenv.lessons.structured import make_structured

    env = make_structured(env_id, split="test")
    assert env.menu.name == ("capitals-passages" if "SingleTurn" in env_id else "capitals-tools")
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*is different from the unwrapped version.*")
        check_env(env, skip_render_check=True)
    fields = ("capital", "country", "continent")
    for index in range(len(env.unwrapped.tasks)):
        env.reset(seed=index, options={"index": index})
        field = fields.index(
            env.unwrapped.task.kind
        )  # the test picks the right entry; the menu never sees the kind
        actions = [field] if "SingleTurn" in env_id else [0, 1, 2 + field]
        for action in actions:
            *_, info = env.step(action)
        assert info["reward_components"]["accuracy"] == 1.0, (env_id, info["messages"])


def test_scripted_agents_directly_through_the_env() -> None:
    """Without the agent registry: the Family's own oracle and bm25 factories, as the generic agents build them."""
    from agentenv.families import family_part

    family = get_family("capitals")
    for env_id in IDS:
        env = gym.make(env_id, split="test").unwrapped
        for agent in (family_part(family, "oracle")(), family_part(family, "bm25")(None)):
            for index in range(len(env.tasks)):
                obs, info = env.reset(seed=index, options={"index": index})
                agent.reset(obs, info, task=env.task, rng=np.random.default_rng(index))
                terminated = truncated = False
                while not (terminated or truncated):
                    obs, reward, terminated, truncated, info = env.step(agent.act(obs, info))
                assert info["reward_components"]["accuracy"] == 1.0, (
                    env_id,
                    agent.name,
                    info["messages"],
                )
