"""MediaSearch options for small models: ``compact=True`` (short prompt, plain-text tool outputs) and ``kinds``."""

from __future__ import annotations

import json
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import agentenv  # noqa: F401
from agentenv.engine.actions import answer, tool_call
from agentenv.envs.media_search.agents.oracle import dated_title
from agentenv.envs.media_search.env import KINDS
from agentenv.envs.media_search.questions.record import execute_plan_extract
from agentenv.envs.media_search.tools.compact import parse_compact
from agentenv.evaluation.report import summarize
from agentenv.evaluation.runner import RunConfig, timed_run

ALL_KINDS = ("comparison", "constraint", "count", "lookup", "superlative", "two_hop")


@pytest.fixture(scope="module")
def plain() -> gym.Env:
    return gym.make("MediaSearch-v0", split="validation")


@pytest.fixture(scope="module")
def compact() -> gym.Env:
    return gym.make("MediaSearch-v0", split="validation", compact=True)


def call(env: gym.Env, tool: str, **arguments: Any) -> str:
    env.reset(seed=0)
    obs, *_ = env.step(tool_call(tool, **arguments))
    return obs


# ------------------------------------------------------------------------ compact


def test_compact_system_prompt_is_short_and_complete(plain: gym.Env, compact: gym.Env) -> None:
    """The compact line of tools replaces the tool text a model otherwise reads: the prompt's own tool
    lines (``tools_in_prompt=True``) or the JSON schemas a chat template renders beside it."""
    _, info = compact.reset(seed=0)
    short = info["messages"][0]["content"]
    _, info = plain.reset(seed=0)
    with_schemas = info["messages"][0]["content"] + json.dumps(info["tools"])
    _, info = gym.make("MediaSearch-v0", split="validation", tools_in_prompt=True).reset(seed=0)
    with_tool_lines = info["messages"][0]["content"]
    assert len(short) < 0.4 * len(with_tool_lines), (len(short), len(with_tool_lines))
    assert len(short) < 0.1 * len(with_schemas), (len(short), len(with_schemas))
    assert len(short.splitlines()) <= 3
    for piece in (
        "search(query, k)",
        "get_title(title_id)",
        "find_person(name)",
        "filter_titles(genre, year_min",
        "<tool_call>",
        "<answer>",
        "at most 8 turns",
    ):
        assert piece.lower() in short.lower(), piece


def test_compact_single_turn_prompt_is_one_line_with_the_same_passages() -> None:
    default = gym.make("MediaSearch-SingleTurn-v0", split="validation")
    short = gym.make("MediaSearch-SingleTurn-v0", split="validation", compact=True)
    obs_default, info_default = default.reset(seed=3)
    obs_short, info_short = short.reset(seed=3)
    assert obs_short == obs_default and "Passages:" in obs_short
    system = info_short["messages"][0]["content"]
    assert "\n" not in system and "<answer>" in system
    assert len(system) < len(info_default["messages"][0]["content"])


def test_compact_search_lists_the_same_hits_without_json(plain: gym.Env, compact: gym.Env) -> None:
    as_json = json.loads(call(plain, "search", query="Psycho Perkins", k=8))["results"]
    text = call(compact, "search", query="Psycho Perkins", k=8)
    lines = text.splitlines()
    assert not text.startswith("{") and len(lines) == len(as_json) == 8
    for line, row in zip(lines, as_json, strict=True):
        assert (
            line == f"{row['id']} | {row['title']} | {row['year']} | {', '.join(row['directors'])}"
        )
    assert parse_compact("search", text)["results"] == [
        {k: v for k, v in r.items() if k != "score"} for r in as_json
    ]


@pytest.mark.parametrize(
    "arguments",
    [
        {"genre": "Comedy", "year_min": 1995, "year_max": 1995, "sort_by": "runtime"},
        {"director": "Alfred Hitchcock", "sort_by": "year", "order": "asc", "limit": 25},
        {"cast": ["Robert De Niro", "Al Pacino"]},
    ],
)
def test_compact_filter_titles_has_the_same_count_and_rows(
    plain: gym.Env, compact: gym.Env, arguments: dict[str, Any]
) -> None:
    as_json = json.loads(call(plain, "filter_titles", **arguments))
    text = call(compact, "filter_titles", **arguments)
    lines = text.splitlines()
    assert lines[0] == f"count: {as_json['count']}" and len(lines) == len(as_json["results"]) + 1
    for line, row in zip(lines[1:], as_json["results"], strict=True):
        assert line.split(" | ")[:3] == [row["id"], row["title"], str(row["year"])]
    assert parse_compact("filter_titles", text) == as_json


@pytest.mark.parametrize("title_id", ["tt0091799", "tt0054215", "tt0498329", "tt1375666"])
def test_compact_get_title_keeps_every_public_field(
    plain: gym.Env, compact: gym.Env, title_id: str
) -> None:
    as_json = json.loads(call(plain, "get_title", title_id=title_id))
    text = call(compact, "get_title", title_id=title_id)
    keys = [line.split(": ", 1)[0].rstrip(":") for line in text.splitlines()]
    assert keys == list(as_json)  # the same fields, in the same order
    for key in (
        "title",
        "year",
        "released",
        "runtime",
        "genres",
        "directors",
        "writers",
        "cast",
        "languages",
        "countries",
        "rating",
        "meter",
        "box_office",
        "oscars_won",
        "awards",
        "is_feature",
    ):
        assert key in keys
    assert f"title: {as_json['title']}" in text and f"year: {as_json['year']}" in text
    assert parse_compact("get_title", text) == as_json


@pytest.mark.parametrize("name", ["Robert De Niro", "Perkins", "Christopher Nolan"])
def test_compact_find_person_has_the_same_people_films_and_totals(
    plain: gym.Env, compact: gym.Env, name: str
) -> None:
    as_json = json.loads(call(plain, "find_person", name=name))
    text = call(compact, "find_person", name=name)
    assert text.startswith(f"match: {as_json['match']}")
    for person in as_json["people"]:
        assert f"person: {person['name']}" in text
        for role in ("directed", "wrote", "acted"):
            assert f"{role} {person['totals'][role]}: " in text
            for film in person[role]:
                assert f"{film['id']} | {film['title']} | {film['year']}" in text
    assert parse_compact("find_person", text) == as_json


def test_compact_tool_errors_are_unchanged(plain: gym.Env, compact: gym.Env) -> None:
    for tool, arguments in [
        ("get_title", {"title_id": "tt0000000"}),
        ("find_person", {"name": "Zzyzx Qwerty"}),
        ("filter_titles", {"year_min": 2010, "year_max": 1990}),
    ]:
        assert call(compact, tool, **arguments) == call(plain, tool, **arguments)
    error = call(compact, "get_title", title_id="tt0000000")
    assert parse_compact("get_title", error) == error


def test_gold_plans_solve_compact_tasks_from_the_compact_outputs(compact: gym.Env) -> None:
    """Every kind's gold plan, run through the compact tools, extracts an answer the grader accepts."""
    env = gym.make("MediaSearch-v0", split="validation", compact=True)
    tasks = env.unwrapped.tasks
    solved = 0
    for index in range(60):
        task = tasks[index]
        env.reset(options={"index": index})
        outputs = []
        for step in task.case.plan:
            obs, *_ = env.step(tool_call(step["tool"], **step["arguments"]))
            assert not obs.lstrip().startswith("{")
            outputs.append(parse_compact(step["tool"], obs))
        found = execute_plan_extract(task.case.extract, outputs)
        if task.case.answer_type == "title":  # a title that several films share needs its year
            found = dated_title(found, outputs)
        *_, info = env.step(answer(found))
        solved += info["reward_components"]["accuracy"]
    assert solved == 60


def test_oracle_agent_solves_compact_tasks() -> None:
    records, _ = timed_run(
        RunConfig(
            "MediaSearch-v0",
            "oracle",
            split="validation",
            episodes=24,
            env_kwargs=(("compact", True),),
        ),
        progress=False,
    )
    accuracy = np.mean([r["reward_components"]["accuracy"] for r in records])
    assert accuracy == 1.0, [r["gold"] for r in records if not r["reward_components"]["accuracy"]][
        :5
    ]
    assert len({r["kind"] for r in records}) >= 4


def test_compact_must_be_a_bool() -> None:
    with pytest.raises(TypeError, match="compact"):
        gym.make("MediaSearch-v0", split="validation", compact="yes")


# -------------------------------------------------------------------------- kinds


def test_kinds_are_the_generated_ones() -> None:
    assert KINDS == ALL_KINDS


def test_kinds_keep_only_those_kinds_in_split_order(plain: gym.Env) -> None:
    env = gym.make("MediaSearch-v0", split="validation", kinds=["lookup", "constraint"])
    served = env.unwrapped.tasks
    expected = [t.id for t in plain.unwrapped.tasks if t.kind in ("lookup", "constraint")]
    assert [t.id for t in served] == expected and 0 < len(expected) < len(plain.unwrapped.tasks)
    assert {t.kind for t in served} == {"lookup", "constraint"}
    assert env.unwrapped.split == "validation"


def test_seeded_resets_draw_from_the_filtered_tasks_deterministically() -> None:
    one = gym.make("MediaSearch-v0", split="validation", kinds=["count"])
    two = gym.make("MediaSearch-v0", split="validation", kinds=["count"])
    ids = {t.id for t in one.unwrapped.tasks}
    for seed in range(10):
        _, info_one = one.reset(seed=seed)
        _, info_two = two.reset(seed=seed)
        assert info_one["task_id"] == info_two["task_id"] in ids
        assert one.unwrapped.task.kind == "count"


def test_unknown_kind_names_the_valid_kinds() -> None:
    with pytest.raises(
        ValueError, match="valid kinds: comparison, constraint, count, lookup, superlative, two_hop"
    ):
        gym.make("MediaSearch-v0", split="validation", kinds=["lookups"])
    with pytest.raises(TypeError, match="list"):
        gym.make("MediaSearch-v0", split="validation", kinds="lookup")


def test_kinds_filter_your_own_tasks_too() -> None:
    rows = [{"question": "Who directed Psycho (1960)?", "answer": "Alfred Hitchcock"}]
    env = gym.make("MediaSearch-v0", tasks=rows, kinds=["custom"])
    assert len(env.unwrapped.tasks) == 1
    with pytest.raises(ValueError, match="no question of kinds \\['lookup'\\].*its kinds: custom"):
        gym.make("MediaSearch-v0", tasks=rows, kinds=["lookup"])


def test_eval_accepts_the_options_as_env_args() -> None:
    from agentenv.cli.main import _check_env_args, parse_env_args

    env_args = parse_env_args(["compact=true", 'kinds=["lookup"]'])
    assert env_args == {"compact": True, "kinds": ["lookup"]}
    _check_env_args("MediaSearch-v0", env_args)  # raises on a keyword the env does not take
    _check_env_args("MediaSearch-SingleTurn-v0", env_args)
    config = RunConfig(
        "MediaSearch-v0",
        "oracle",
        split="validation",
        episodes=20,
        env_kwargs=tuple(env_args.items()),
    )
    records, wall_s = timed_run(config, progress=False)
    assert {r["kind"] for r in records} == {"lookup"}
    assert np.mean([r["reward_components"]["accuracy"] for r in records]) == 1.0
    # summary.json records the options, so runs with other options are not taken for this one
    assert summarize(config, records, wall_s, {}).env_kwargs == env_args
