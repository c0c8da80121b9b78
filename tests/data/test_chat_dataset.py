"""SFT datasets render every tool call exactly as the exported row does (no other tools' arguments)."""

from __future__ import annotations

import pytest

pytest.importorskip("datasets")
pytest.importorskip("transformers")

from agentenv.data.chat_dataset import chat_dataset  # noqa: E402


def _call(name: str, arguments: dict) -> dict:
    return {"role": "assistant", "content": "",
            "tool_calls": [{"type": "function", "function": {"name": name, "arguments": arguments}}]}


ROWS = [
    {"messages": [{"role": "user", "content": "Who directed Heat?"}, _call("search", {"query": "Heat", "k": 5}),
                  {"role": "tool", "content": "tt0113277 | Heat | 1995"}, _call("get_title", {"title_id": "tt0113277"}),
                  {"role": "tool", "content": "directors: Michael Mann"},
                  {"role": "assistant", "content": "<answer>Michael Mann</answer>"}]},
    {"messages": [{"role": "user", "content": "Which 1998 film stars Sonja Sohn?"},
                  _call("filter_titles", {"cast": ["Sonja Sohn"], "year_min": 1998, "year_max": 1998}),
                  {"role": "tool", "content": "tt0139615 | Slam | 1998"},
                  {"role": "assistant", "content": "<answer>Slam</answer>"}]},
]


@pytest.fixture(scope="module")
def tokenizers():
    from agentenv.integrations.trl import qwen3_tokenizer
    from agentenv.scratch.base import shipped_base
    from agentenv.scratch.tokenizer import load_tokenizer

    return {"qwen3": qwen3_tokenizer(), "from-scratch": load_tokenizer(shipped_base())}


@pytest.mark.parametrize("name", ["qwen3", "from-scratch"])
def test_the_dataset_renders_as_the_rows_do(tokenizers, name) -> None:
    tokenizer = tokenizers[name]
    for row, stored in zip(ROWS, chat_dataset(ROWS), strict=True):
        expected = tokenizer.apply_chat_template(row["messages"], tokenize=False)
        assert tokenizer.apply_chat_template(stored["messages"], tokenize=False) == expected
        assert "null" not in expected


def test_without_it_arrow_gives_each_call_the_other_tools_arguments(tokenizers) -> None:
    """Why the module exists: a plain ``Dataset.from_list`` renders ``"title_id": null`` into a search call."""
    from datasets import Dataset

    naive = Dataset.from_list(ROWS)
    rendered = tokenizers["from-scratch"].apply_chat_template(naive[0]["messages"], tokenize=False)
    assert '"title_id": null' in rendered or '"cast": null' in rendered
