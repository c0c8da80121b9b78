"""A byte-level BPE tokenizer trained on the package's own text, saved as a Hugging Face tokenizer.

Why train one: Qwen3's 151k-token vocabulary would make the embedding table
of a 5M-parameter model 30 times larger than the model, and no tokenizer may be
fetched at run time. A vocabulary trained on the catalog, the questions, the
tool outputs and the system prompts keeps film titles and people's names to a
few tokens each, which is what a small model has to copy.

It speaks Qwen3's chat format (:mod:`agentenv.lessons.scratch.chat_template`): the same
turn, tool-call and tool-response markers, so TRL parses its completions with
its Qwen3 response template and :func:`agentenv.tokens.chat_templates.hf_template`
renders env turns token-exactly.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from agentenv.lessons.scratch.chat_template import (
    CHAT_TEMPLATE,
    SPECIAL_TOKENS,
    WHOLE_TOKENS,
    response_template,
)

END_OF_TURN = "<|im_end|>"
PAD = "<|endoftext|>"


#: Pre-tokens when spaces stand apart: runs of whitespace, of letters, of digits, of anything else.
SPACES_APART_PATTERN = r"\s+|\p{L}+|\p{N}+|[^\s\p{L}\p{N}]+"

#: Where a copied name can start without a space before it: inside a JSON string, after a tag
#: such as ``<answer>``, at the start of a line. ``aligned_names`` puts a space after each.
NAME_OPENERS = ('"', ">", "\n")


def train_tokenizer(
    texts: Iterable[str],
    *,
    vocab_size: int = 8192,
    min_frequency: int = 2,
    spaces_apart: bool = False,
    aligned_names: bool = False,
) -> Any:
    """Train a byte-level BPE on ``texts`` and wrap it as a ``PreTrainedTokenizerFast``.

    Every byte is in the alphabet, so any text encodes (no unknown token); the
    special tokens are never split; ``<answer>`` and the tool-call opening are
    whole tokens.

    ``spaces_apart`` keeps whitespace out of word tokens, so that a name is the same
    tokens wherever it stands. With GPT-2's pre-tokenizer (``False``) a
    word carries the space before it: "Mississippi" is ``[" Miss", "iss", "ippi"]``
    in a question but ``["M", "iss", "iss", "ippi"]`` after the quote that opens a
    JSON string, so copying a name from the question into a tool call, or from a
    tool output into ``<answer>``, is not a copy of tokens (after SFT the first
    shipped base wrote "Mississippi Masala" as "Camissippi Beruring"). The price is one token per space, and at the
    first shipped base's training budget the model copied worse with it (see
    docs/llm-from-scratch.md), so it is off by default.

    ``aligned_names`` gets the same effect at almost no extra tokens: a normalizer
    writes a space after every ``"``, ``>`` and newline before the pre-tokenizer
    runs, and the decoder takes exactly that space away again, so a name copied into a
    JSON string, after ``<answer>`` or to the start of a line is the same space-led
    tokens as in the question or the tool output it came from. The whole token for ``<answer>`` is then
    ``<answer`` (its ``>`` and the space belong to the text after it, so the answer's first
    word keeps its space; a whole token still starts the turn, so a prompt's ids stay a
    prefix of the rendered conversation). Decoding is exact for any text the tokenizer encoded; it drops
    one real space that a model writes straight after a marker that ends in ``>``, ``"``
    or ``{`` (the chat format never has one there).

        >>> tok = train_tokenizer(["Who directed Mississippi Masala?", '"query": "Mississippi Masala"'] * 50,
        ...                       vocab_size=600, aligned_names=True)
        >>> tok.tokenize("Who directed Mississippi Masala?")[2:4]
        ['ĠMississippi', 'ĠMasala']
        >>> tok.tokenize('{"query": "Mississippi Masala"}')[-5:-3]
        ['ĠMississippi', 'ĠMasala']
        >>> tok.decode(tok('<answer>Mira Nair</answer>')["input_ids"])
        '<answer>Mira Nair</answer>'

        >>> tok = train_tokenizer(["Who directed Mississippi Masala?", '"query": "Mississippi Masala"'] * 50,
        ...                       vocab_size=600, spaces_apart=True)
        >>> tok.tokenize("Who directed Mississippi Masala?")[4:7]
        ['Mississippi', 'Ġ', 'Masala']
        >>> tok.tokenize('"query": "Mississippi Masala"')[-4:-1]
        ['Mississippi', 'Ġ', 'Masala']
    """
    if vocab_size < 512:
        raise ValueError(
            f"vocab_size must be at least 512 (256 bytes plus merges and specials), got {vocab_size}"
        )
    if spaces_apart and aligned_names:
        raise ValueError(
            "choose one of spaces_apart and aligned_names: both keep a name the same tokens everywhere"
        )
    from tokenizers import (
        AddedToken,
        Tokenizer,
        decoders,
        models,
        normalizers,
        pre_tokenizers,
        trainers,
    )
    from transformers import PreTrainedTokenizerFast

    backend = Tokenizer(models.BPE())
    if spaces_apart:
        from tokenizers import Regex

        backend.pre_tokenizer = pre_tokenizers.Sequence(
            [
                pre_tokenizers.Split(Regex(SPACES_APART_PATTERN), behavior="isolated"),
                pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
            ]
        )
    else:
        backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    backend.decoder = decoders.ByteLevel()
    whole_tokens = WHOLE_TOKENS
    if aligned_names:
        backend.normalizer = normalizers.Sequence(
            [normalizers.Replace(c, c + " ") for c in NAME_OPENERS]
        )
        backend.decoder = decoders.Sequence(
            [decoders.ByteLevel()] + [decoders.Replace(c + " ", c) for c in NAME_OPENERS]
        )
        whole_tokens = tuple("<answer" if t == "<answer>" else t for t in WHOLE_TOKENS)
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        min_frequency=min_frequency,
        special_tokens=list(SPECIAL_TOKENS),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    backend.train_from_iterator(texts, trainer=trainer)
    backend.add_tokens([AddedToken(t, special=False, normalized=False) for t in whole_tokens])
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=backend,
        eos_token=END_OF_TURN,
        pad_token=PAD,
        chat_template=CHAT_TEMPLATE,
    )
    tokenizer.add_special_tokens(
        {"additional_special_tokens": [t for t in SPECIAL_TOKENS if t not in (END_OF_TURN, PAD)]}
    )
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
        raise FileNotFoundError(
            f"no tokenizer.json in {path}; train one with agentenv.lessons.scratch.tokenizer.train_tokenizer"
        )
    return with_response_template(AutoTokenizer.from_pretrained(path, local_files_only=True))
