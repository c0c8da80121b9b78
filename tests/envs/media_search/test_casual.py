"""The hand-written ``casual`` split: loads pinned, every answer proven by replaying its tool plan, served by the env."""

from __future__ import annotations

import json
from pathlib import Path

import gymnasium as gym
import pytest

import agentenv  # noqa: F401 - registers the ids
from agentenv.corpora.media.catalog import load_catalog
from agentenv.engine.tools import ToolRegistry
from agentenv.envs.media_search.agents.oracle import dated_title
from agentenv.envs.media_search.grading.grade import read_answer
from agentenv.envs.media_search.questions.record import execute_plan_extract
from agentenv.envs.media_search.tasks import casual
from agentenv.envs.media_search.tasks.casual import CASUAL_FILE, casual_questions
from agentenv.envs.media_search.tools.film_tools import make_media_tools
from agentenv.retrieval.bm25 import BM25Retriever


@pytest.fixture(scope="module")
def registry() -> ToolRegistry:
    catalog = load_catalog()
    ids, texts = catalog.documents()
    return ToolRegistry(make_media_tools(catalog, BM25Retriever.from_texts(texts, ids)))


def test_the_split_is_large_distinct_and_casual() -> None:
    questions = casual_questions()
    assert len(questions) >= 100  # issue 30: 100+ hand-written questions
    assert len({q.id for q in questions}) == len({q.question for q in questions}) == len(questions)
    assert {q.kind for q in questions} == {
        "lookup",
        "constraint",
        "superlative",
        "two_hop",
        "comparison",
        "count",
    }
    lower = sum(q.question == q.question.lower() for q in questions)
    assert lower / len(questions) > 0.5, lower  # written as people type, mostly in lower case
    assert all(q.split == "casual" and q.plan for q in questions)


def test_every_answer_is_read_out_of_the_real_tool_outputs(registry: ToolRegistry) -> None:
    """Replay each plan; a filter that picks the film a question describes must match that film alone."""
    wrong = []
    for q in casual_questions():
        outputs = []
        for step in q.plan or ():
            tool = registry[step["tool"]]
            result = registry.execute(tool, tool.args_model.model_validate(step["arguments"]))
            assert result.ok, (q.question, result.content)
            outputs.append(json.loads(result.content))
        for i, step in enumerate(q.plan or ()):
            nxt = (q.plan or ())[i + 1] if i + 1 < len(q.plan or ()) else None
            if step["tool"] == "filter_titles" and nxt and nxt["tool"] == "get_title":
                assert (
                    outputs[i]["count"] == 1
                    and outputs[i]["results"][0]["id"] == nxt["arguments"]["title_id"]
                ), q
        found = execute_plan_extract(q.extract or {}, outputs)
        if q.answer_type == "title":
            found = dated_title(found, outputs)
        if not read_answer(found, q).correct:
            wrong.append((q.question, q.answer, found))
    assert not wrong, wrong[:5]


def test_an_edited_file_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    edited = tmp_path / "casual_questions.jsonl"
    edited.write_bytes(
        CASUAL_FILE.read_bytes().replace(b"who directed jaws", b"who directed jaws?")
    )
    monkeypatch.setattr(casual, "CASUAL_FILE", edited)
    casual_questions.cache_clear()
    try:
        with pytest.raises(RuntimeError, match="was edited"):
            casual_questions()
    finally:
        monkeypatch.undo()
        casual_questions.cache_clear()


@pytest.mark.parametrize(
    "row",
    [
        {"question": "q", "answer": "a"},
        {
            "question": "q",
            "answer": "a",
            "aliases": [],
            "answer_type": "title",
            "kind": "lookup",
            "plan": [{"tool": "delete_all", "arguments": {}}],
            "extract": {"op": "field"},
        },
        {
            "question": "q",
            "answer": "a",
            "aliases": [],
            "answer_type": "essay",
            "kind": "lookup",
            "plan": [{"tool": "search", "arguments": {}}],
            "extract": {"op": "field"},
        },
    ],
)
def test_rows_outside_the_allow_list_are_refused(row: dict) -> None:
    with pytest.raises(ValueError, match="casual_questions.jsonl:3"):
        casual._check_row(row, "casual_questions.jsonl:3")


@pytest.mark.parametrize("env_id", ["MediaSearch-v0", "MediaSearch-SingleTurn-v0"])
def test_the_env_serves_it_tagged_apart_from_the_generated_splits(env_id: str) -> None:
    env = gym.make(env_id, split="casual")
    test = gym.make(env_id, split="test")
    assert len(env.unwrapped.tasks) == len(casual_questions())
    assert env.unwrapped.corpus_checksums["questions"] == casual.CASUAL_SHA256
    assert test.unwrapped.corpus_checksums["questions"] != casual.CASUAL_SHA256
    obs, info = env.reset(seed=0)
    assert info["split"] == "casual" and obs
