"""SFT datasets render every tool call exactly as the exported row does (no other tools' arguments)."""

from __future__ import annotations

import pytest

pytest.importorskip("datasets")
pytest.importorskip("transformers")

from agentenv.data.chat_dataset import chat_dataset, row_tools  # noqa: E402


def _call(name: str, arguments: dict) -> dict:
    return {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"type": "function", "function": {"name": name, "arguments": arguments}}],
    }


ROWS = [
    {
        "messages": [
            {"role": "user", "content": "Who directed Heat?"},
            _call("search", {"query": "Heat", "k": 5}),
            {"role": "tool", "content": "tt0113277 | Heat | 1995"},
            _call("get_title", {"title_id": "tt0113277"}),
            {"role": "tool", "content": "directors: Michael Mann"},
            {"role": "assistant", "content": "<answer>Michael Mann</answer>"},
        ]
    },
    {
        "messages": [
            {"role": "user", "content": "Which 1998 film stars Sonja Sohn?"},
            _call("filter_titles", {"cast": ["Sonja Sohn"], "year_min": 1998, "year_max": 1998}),
            {"role": "tool", "content": "tt0139615 | Slam | 1998"},
            {"role": "assistant", "content": "<answer>Slam</answer>"},
        ]
    },
]


@pytest.fixture(scope="module")
def tokenizers():
    from agentenv.integrations.trl import qwen3_tokenizer
    from agentenv.lessons.scratch.base import shipped_base
    from agentenv.lessons.scratch.tokenizer import load_tokenizer

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


TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "search",
            "description": "Search titles.",
            "parameters": {
                "type": "object",
                "properties": {"query": {"type": "string"}, "k": {"type": "integer"}},
                "required": ["query"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "get_title",
            "description": "One title.",
            "parameters": {
                "type": "object",
                "properties": {"title_id": {"type": "string"}},
                "required": ["title_id"],
            },
        },
    },
]


def test_tool_schemas_render_as_exported(tokenizers) -> None:
    """A ``tools`` column renders each schema as exported: no other tool's properties as ``null``."""
    from datasets import Dataset

    rows = [{**row, "tools": TOOLS} for row in ROWS]
    qwen3 = tokenizers["qwen3"]
    for row, stored in zip(rows, chat_dataset(rows), strict=True):
        expected = qwen3.apply_chat_template(row["messages"], tools=TOOLS, tokenize=False)
        assert (
            qwen3.apply_chat_template(stored["messages"], tools=row_tools(stored), tokenize=False)
            == expected
        )
    naive = Dataset.from_list(rows)[0]["tools"]
    assert (
        naive[0]["function"]["parameters"]["properties"]["title_id"] is None
    )  # what Arrow's union does
