"""The schema of an SFT export's ``manifest.json``: what was exported, from what, and how much."""

from __future__ import annotations

from pydantic import BaseModel, Field

MANIFEST_FORMAT = 1
"""Bump when the files' layout changes."""
CHAT_FILE = "chat.jsonl"
TOKENS_FILE = "tokens.jsonl"
MANIFEST_FILE = "manifest.json"


class TokenizerInfo(BaseModel):
    """The chat template whose ids are in ``tokens.jsonl``."""

    name: str = Field(description="'qwen3-offline' or the Hugging Face tokenizer's name or path.")
    vocab_size: int
    enable_thinking: bool | None = Field(
        None, description="Qwen3 thinking mode; None for other templates."
    )
    source_sha256: str | None = Field(
        None, description="sha256 of the BPE ranks the offline tokenizer is built from."
    )


class SFTManifest(BaseModel):
    """One export: enough to reproduce it and to refuse mixing it with another corpus."""

    format: int = MANIFEST_FORMAT
    env_id: str
    split: str
    agent: str
    reasoning: str | None = Field(
        description="'scripted' when the oracle's turns carry templated <think> lines; None otherwise."
    )
    seed: int
    reward_preset: str
    min_reward: float | None = Field(
        description="Episodes below this reward were dropped; None keeps all."
    )
    episodes: int = Field(description="Episodes run.")
    kept: int = Field(description="Episodes written (rows in each JSONL file).")
    dropped: int = Field(description="Episodes run but not written, for any reason.")
    ungrounded: int = Field(
        description="Solved episodes dropped for using an id the conversation never showed."
    )
    turns: int = Field(description="Assistant turns over the kept episodes.")
    tool_calls: int = Field(description="Tool calls over the kept episodes.")
    tokens: int = Field(description="Ids over the kept episodes in tokens.jsonl.")
    policy_tokens: int = Field(description="Ids with loss_mask 1 over the kept episodes.")
    corpus_checksums: dict[str, str] = Field(default_factory=dict)
    package_version: str
    tokenizer: TokenizerInfo
    files: dict[str, str] = Field(description="File name -> sha256 of its bytes.")
    task_ids: list[str] = Field(
        description="Task id of each row, in row order (the same in both files)."
    )
