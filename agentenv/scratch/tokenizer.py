"""A byte-level BPE tokenizer trained on the package's own text, saved as a Hugging Face tokenizer.

Why train one: Qwen3's 151k-token vocabulary would make the embedding table
of a 5M-parameter model 30 times larger than the model, and no tokenizer may be
fetched at run time. A vocabulary trained on the catalog, the questions, the
tool outputs and the system prompts keeps film titles and people's names to a
few tokens each, which is what a small model has to copy.

It speaks Qwen3's chat format (:mod:`agentenv.scratch.chat_template`): the same
turn, tool-call and tool-response markers, so TRL parses its completions with
its Qwen3 response template and :func:`agentenv.tokens.chat_templates.hf_template`
renders env turns token-exactly.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from agentenv.scratch.chat_template import (
    CHAT_TEMPLATE,
    SPECIAL_TOKENS,
    WHOLE_TOKENS,
    response_template,
)

END_OF_TURN = "<|im_end|>"
PAD = "<|endoftext|>"


def train_tokenizer(texts: Iterable[str], *, vocab_size: int = 8192, min_frequency: int = 2) -> Any:
    """Train a byte-level BPE on ``texts`` and wrap it as a ``PreTrainedTokenizerFast``.

    Every byte is in the alphabet, so any text encodes (no unknown token); the
    special tokens are never split; ``<answer>`` and the tool-call opening are
    whole tokens.
    """
    if vocab_size < 512:
        raise ValueError(f"vocab_size must be at least 512 (256 bytes plus merges and specials), got {vocab_size}")
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    backend = Tokenizer(models.BPE())
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    backend.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        min_frequency=min_frequency,
        special_tokens=list(SPECIAL_TOKENS),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    backend.train_from_iterator(texts, trainer=trainer)
    backend.add_tokens([AddedToken(t, special=False, normalized=False) for t in WHOLE_TOKENS])
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=backend, eos_token=END_OF_TURN, pad_token=PAD, chat_template=CHAT_TEMPLATE,
    )
    tokenizer.add_special_tokens({"additional_special_tokens": [t for t in SPECIAL_TOKENS if t not in (END_OF_TURN, PAD)]})
    return with_response_template(tokenizer)


def with_response_template(tokenizer: Any) -> Any:
    """Attach TRL's Qwen3 response template, so ``parse_response`` reads tool calls as for Qwen3."""
    tokenizer.response_template = response_template()
    return tokenizer


def load_tokenizer(path: str | Path) -> Any:
    """Load a tokenizer saved by :func:`train_tokenizer` (offline) with its response template."""
    from transformers import AutoTokenizer

    path = Path(path)
    if not (path / "tokenizer.json").is_file():
        raise FileNotFoundError(f"no tokenizer.json in {path}; train one with agentenv.scratch.tokenizer.train_tokenizer")
    return with_response_template(AutoTokenizer.from_pretrained(path, local_files_only=True))
