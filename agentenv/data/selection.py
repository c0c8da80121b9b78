"""Choose which SFT examples to keep by how much they lower the loss on held-out examples.

Method: the in-context approximation to holdout-loss data selection from
"Holdout-Loss-Based Data Selection for LLM Finetuning via In-Context Learning".
Training on an example and measuring the change in holdout loss is too slow
to do per example, so the example is placed in the model's *context* instead
and the change in loss on each holdout row is measured::

    score(x) = mean over holdout rows h of [ loss(h | no context) - loss(h | x, h) ]

Higher is more useful: the example makes the holdout's assistant turns more
predictable. :func:`select_top` keeps the best fraction; :func:`select_random`
is the same-size baseline to compare a finetune against. This module is an
independent implementation of the idea, not a port of the paper's code.

Rows are the chat rows written by ``agentenv export-sft`` (``chat.jsonl``):
``{"messages": [...], "tools": [...]}``. The model is any Hugging Face causal
LM; the tokenizer must have a chat template.

How a sequence is built (decisions that change the numbers, so written here):

* **Rendering.** ``tokenizer.apply_chat_template(messages, tools=tools or None,
  tokenize=False)``; the text is tokenized with ``add_special_tokens=False``
  (the template writes any BOS itself).
* **Which tokens count.** Only the holdout's assistant turns. Assistant turn
  ``i`` spans from the end of ``render(messages[:i], add_generation_prompt=True)``
  (so the ``assistant`` header does not count) to the end of
  ``render(messages[:i + 1])`` (so the end-of-turn marker counts). This works
  with any template that renders a conversation as the prefix of its longer
  continuations; a template that re-renders earlier turns (the official
  Qwen3 template drops earlier turns' reasoning) is refused with an error,
  because its spans would be wrong. A token counts when its first character
  lies in a span (fast tokenizers' offsets; slow tokenizers encode the text
  piece by piece at span edges).
* **Context.** The candidate's rendered text goes in front of the holdout's
  (each is tokenized on its own and the ids are joined, so the holdout's
  tokens are the same with and without context).
  When both start with the same system message and carry the same tools, the
  candidate is rendered without its system message and without tools, so the
  instructions are not read twice and the context is spent on the
  demonstration; otherwise the candidate is rendered whole.
* **Truncation.** The holdout is cut to its first ``max_length`` tokens,
  identically with and without context, so the two losses cover the same
  tokens. The context gets the room left (``max_length`` minus the holdout's
  length) and is cut from the *left*, keeping the end of the demonstration,
  which sits next to the holdout. A holdout of ``max_length`` tokens or more
  leaves no room: every candidate scores 0 against it.

Torch and transformers are imported inside the functions that need them, so
``import agentenv.data.selection`` stays cheap (see :mod:`agentenv.data`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import torch

Row = Mapping[str, Any]
Progress = Callable[[int, int], None]

__all__ = [
    "SelectionConfig",
    "gradient_alignment_scores",
    "holdout_losses",
    "in_context_scores",
    "select_random",
    "select_top",
    "write_selection",
]


@dataclass(frozen=True)
class SelectionConfig:
    """How candidates are scored and how many are kept.

    >>> SelectionConfig(fraction=0.5).holdout_per_example
    8
    >>> SelectionConfig(fraction=0)
    Traceback (most recent call last):
    ...
    ValueError: fraction must be in (0, 1], got 0
    """

    fraction: float = 0.3
    """Share of candidates :func:`select_top` keeps."""
    holdout_per_example: int = 8
    """Holdout rows each candidate is scored against: the same rows for every candidate."""
    max_length: int = 1024
    """Tokens per sequence (context plus holdout); the context is cut first."""
    batch_size: int = 8
    """Sequences per forward pass."""
    seed: int = 0
    """Seeds the draw of holdout rows, so scores are reproducible."""

    def __post_init__(self) -> None:
        _check_fraction(self.fraction)
        for name in ("holdout_per_example", "max_length", "batch_size"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise ValueError(f"seed must be a non-negative integer, got {self.seed!r}")


def _check_fraction(fraction: float) -> None:
    if (
        isinstance(fraction, bool)
        or not isinstance(fraction, (int, float))
        or not 0 < fraction <= 1
    ):
        raise ValueError(f"fraction must be in (0, 1], got {fraction!r}")


# ---------------------------------------------------------------------------
# Rendering and tokenizing


def _render(
    tokenizer: Any, messages: Sequence[Row], tools: Any, *, generation_prompt: bool = False
) -> str:
    text = tokenizer.apply_chat_template(
        list(messages), tools=tools or None, tokenize=False, add_generation_prompt=generation_prompt
    )
    if not isinstance(text, str):  # some versions return a list for batched input
        raise TypeError(f"apply_chat_template returned {type(text).__name__}, expected str")
    return text


def _messages(row: Row) -> list[Row]:
    messages = row.get("messages") if isinstance(row, Mapping) else None
    if not isinstance(messages, Sequence) or not messages:
        raise ValueError("each row must be a mapping with a non-empty 'messages' list")
    return list(messages)


def _assistant_spans(tokenizer: Any, row: Row) -> tuple[str, list[tuple[int, int]]]:
    """The rendered row and the character spans of its assistant turns (see module docstring)."""
    messages, tools = _messages(row), row.get("tools")
    full = _render(tokenizer, messages, tools)
    spans = []
    for i, message in enumerate(messages):
        if message.get("role") != "assistant":
            continue
        before = _render(tokenizer, messages[:i], tools, generation_prompt=True) if i else ""
        upto = _render(tokenizer, messages[: i + 1], tools)
        if not (upto.startswith(before) and full.startswith(upto)):
            raise ValueError(
                f"the chat template does not render assistant turn {i} as a prefix of the whole "
                "conversation (it re-renders earlier turns, e.g. drops their reasoning), so its "
                "tokens cannot be located; strip 'reasoning_content' or use a prefix-stable template"
            )
        if len(upto) > len(before):
            spans.append((len(before), len(upto)))
    return full, spans


def _encode(tokenizer: Any, text: str) -> list[int]:
    return list(tokenizer(text, add_special_tokens=False)["input_ids"])


def _encode_with_mask(
    tokenizer: Any, text: str, spans: Sequence[tuple[int, int]]
) -> tuple[list[int], list[int]]:
    if getattr(tokenizer, "is_fast", False):
        enc = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
        starts = [start for start, _ in enc["offset_mapping"]]
        mask = [int(any(a <= s < b for a, b in spans)) for s in starts]
        return list(enc["input_ids"]), mask
    ids: list[int] = []
    mask: list[int] = []
    cursor = 0
    for a, b in [*spans, (len(text), len(text))]:
        for piece, flag in ((text[cursor:a], 0), (text[a:b], 1)):
            if piece:
                piece_ids = _encode(tokenizer, piece)
                ids += piece_ids
                mask += [flag] * len(piece_ids)
        cursor = b
    return ids, mask


@dataclass(frozen=True)
class _Holdout:
    ids: list[int]
    mask: list[int]
    system: Any
    tools: Any


def _prepare_holdout(tokenizer: Any, row: Row, max_length: int, index: int) -> _Holdout:
    text, spans = _assistant_spans(tokenizer, row)
    ids, mask = _encode_with_mask(tokenizer, text, spans)
    ids, mask = ids[:max_length], mask[:max_length]
    if not any(mask[1:]):  # the first token has nothing before it to be predicted from
        raise ValueError(
            f"holdout row {index} has no assistant tokens within max_length={max_length}"
        )
    messages = _messages(row)
    system = messages[0].get("content") if messages[0].get("role") == "system" else None
    return _Holdout(ids, mask, system, row.get("tools"))


def _context_ids(
    tokenizer: Any, row: Row, holdout: _Holdout, cache: dict[tuple[int, bool], list[int]]
) -> list[int]:
    messages = _messages(row)
    shared = (
        holdout.system is not None
        and messages[0].get("role") == "system"
        and messages[0].get("content") == holdout.system
        and (row.get("tools") or None) == (holdout.tools or None)
    )
    key = (id(row), shared)
    if key not in cache:
        if shared:
            cache[key] = (
                _encode(tokenizer, _render(tokenizer, messages[1:], None)) if messages[1:] else []
            )
        else:
            cache[key] = _encode(tokenizer, _render(tokenizer, messages, row.get("tools")))
    return cache[key]


def _join(context: list[int], holdout: _Holdout, max_length: int) -> tuple[list[int], list[int]]:
    room = max_length - len(holdout.ids)
    context = (
        context[len(context) - room :] if 0 < room < len(context) else (context if room > 0 else [])
    )
    return context + holdout.ids, [0] * len(context) + holdout.mask


# ---------------------------------------------------------------------------
# Losses


def _device(model: Any) -> torch.device:
    return next(model.parameters()).device


def _pad_id(tokenizer: Any) -> int:
    for value in (tokenizer.pad_token_id, tokenizer.eos_token_id):
        if value is not None:
            return int(value)
    return 0


def _batch(
    sequences: Sequence[tuple[list[int], list[int]]], pad_id: int, device: Any
) -> tuple[Any, Any, Any]:
    import torch

    width = max(len(ids) for ids, _ in sequences)
    ids = torch.full((len(sequences), width), pad_id, dtype=torch.long)
    attention = torch.zeros((len(sequences), width), dtype=torch.long)
    mask = torch.zeros((len(sequences), width), dtype=torch.bool)
    for row, (seq, seq_mask) in enumerate(sequences):  # right padding: positions need no shift
        ids[row, : len(seq)] = torch.tensor(seq)
        attention[row, : len(seq)] = 1
        mask[row, : len(seq)] = torch.tensor(seq_mask, dtype=torch.bool)
    return ids.to(device), attention.to(device), mask.to(device)


def _row_losses(model: Any, ids: Any, attention: Any, mask: Any) -> Any:
    """Mean next-token loss over each row's masked tokens (float32)."""
    import torch

    logits = model(input_ids=ids, attention_mask=attention).logits[:, :-1].float()
    labels, counted = ids[:, 1:], mask[:, 1:].float()
    token_loss = torch.nn.functional.cross_entropy(
        logits.reshape(-1, logits.shape[-1]), labels.reshape(-1), reduction="none"
    ).view(labels.shape)
    return (token_loss * counted).sum(1) / counted.sum(1).clamp_min(1.0)


def _losses(
    model: Any,
    tokenizer: Any,
    sequences: Sequence[tuple[list[int], list[int]]],
    batch_size: int,
    progress: Progress | None,
) -> np.ndarray:
    """Losses of many sequences, batched by length so padding stays small."""
    import torch

    out = np.empty(len(sequences), dtype=np.float64)
    order = sorted(range(len(sequences)), key=lambda i: len(sequences[i][0]))
    device, pad_id, was_training = _device(model), _pad_id(tokenizer), model.training
    model.eval()
    try:
        with torch.no_grad():
            for start in range(0, len(order), batch_size):
                chunk = order[start : start + batch_size]
                losses = _row_losses(model, *_batch([sequences[i] for i in chunk], pad_id, device))
                out[chunk] = losses.cpu().numpy()
                if progress is not None:
                    progress(min(start + batch_size, len(order)), len(order))
    finally:
        model.train(was_training)
    return out


def holdout_losses(
    model: Any,
    tokenizer: Any,
    holdout_rows: Sequence[Row],
    *,
    context_rows: Sequence[Row | None] | None = None,
    max_length: int,
    batch_size: int,
    progress: Progress | None = None,
) -> np.ndarray:
    """Each holdout row's mean loss on its assistant tokens, optionally after a context row.

    ``context_rows``, when given, has one entry per holdout row (``None``: no
    context for that row). Context building and truncation follow the module
    docstring; the model is put in eval mode for the pass and restored after.
    """
    SelectionConfig(max_length=max_length, batch_size=batch_size)  # same checks, same messages
    if context_rows is not None and len(context_rows) != len(holdout_rows):
        raise ValueError(
            f"context_rows has {len(context_rows)} entries but holdout_rows has {len(holdout_rows)}"
        )
    holdouts = [
        _prepare_holdout(tokenizer, row, max_length, i) for i, row in enumerate(holdout_rows)
    ]
    cache: dict[tuple[int, bool], list[int]] = {}
    sequences = []
    for i, holdout in enumerate(holdouts):
        context = context_rows[i] if context_rows is not None else None
        ids = _context_ids(tokenizer, context, holdout, cache) if context is not None else []
        sequences.append(_join(ids, holdout, max_length))
    return _losses(model, tokenizer, sequences, batch_size, progress)


def _draw_holdout(holdout: Sequence[Row], config: SelectionConfig) -> list[Row]:
    if not holdout:
        raise ValueError("holdout is empty")
    rng = np.random.default_rng(config.seed)
    count = min(config.holdout_per_example, len(holdout))
    return [holdout[int(i)] for i in np.sort(rng.choice(len(holdout), size=count, replace=False))]


def in_context_scores(
    model: Any,
    tokenizer: Any,
    candidates: Sequence[Row],
    holdout: Sequence[Row],
    config: SelectionConfig,
    *,
    progress: Progress | None = None,
) -> np.ndarray:
    """One score per candidate: mean drop in holdout loss when the candidate is the context.

    ``config.holdout_per_example`` holdout rows are drawn once with
    ``numpy.random.default_rng(config.seed)`` and used for every candidate,
    so scores are comparable across candidates; their no-context losses are
    computed once. Cost: ``len(candidates) * holdout_per_example`` forward
    sequences of up to ``max_length`` tokens. ``progress(done, total)`` counts
    sequences, the baseline included.

    Keep ``candidates`` and ``holdout`` disjoint: a candidate that *is* a
    drawn holdout row lets the model copy its answer and scores high for
    that reason alone.
    """
    drawn = _draw_holdout(holdout, config)
    if not candidates:
        return np.empty(0, dtype=np.float64)
    holdouts = [
        _prepare_holdout(tokenizer, row, config.max_length, i) for i, row in enumerate(drawn)
    ]
    baseline_seqs = [(h.ids, h.mask) for h in holdouts]
    cache: dict[tuple[int, bool], list[int]] = {}
    pair_seqs = [
        _join(_context_ids(tokenizer, candidate, h, cache), h, config.max_length)
        for candidate in candidates
        for h in holdouts
    ]
    total = len(baseline_seqs) + len(pair_seqs)
    base_report = None if progress is None else (lambda done, _n: progress(done, total))
    pair_report = (
        None if progress is None else (lambda done, _n: progress(len(baseline_seqs) + done, total))
    )
    baseline = _losses(model, tokenizer, baseline_seqs, config.batch_size, base_report)
    with_context = _losses(model, tokenizer, pair_seqs, config.batch_size, pair_report)
    return (baseline[None, :] - with_context.reshape(len(candidates), len(holdouts))).mean(axis=1)


# ---------------------------------------------------------------------------
# Gradient alignment (a cheaper-to-explain alternative score)


def _alignment_parameters(model: Any) -> list[Any]:
    """The last transformer block and the output head: where a finetune's first steps act most."""
    named = dict(model.named_parameters())
    layer_of = {}
    for name in named:
        found = re.search(r"\.(?:layers|h|blocks|layer)\.(\d+)\.", name)
        if found:
            layer_of[name] = int(found.group(1))
    chosen: dict[int, Any] = {}
    if layer_of:
        last = max(layer_of.values())
        chosen.update({id(named[n]): named[n] for n, i in layer_of.items() if i == last})
    head = model.get_output_embeddings()
    if head is not None:
        chosen.update({id(p): p for p in head.parameters()})
    if not chosen:
        raise ValueError("could not find a last layer or an output head to take gradients of")
    return list(chosen.values())


def gradient_alignment_scores(
    model: Any,
    tokenizer: Any,
    candidates: Sequence[Row],
    holdout: Sequence[Row],
    config: SelectionConfig,
    *,
    progress: Progress | None = None,
) -> np.ndarray:
    """Cosine between each candidate's loss gradient and the mean holdout gradient.

    A first-order stand-in for "one SGD step on this example lowers the
    holdout loss". Gradients are restricted to the last transformer block
    and the output head (tied input embeddings included, if tied) to keep
    memory and time near one forward-backward per row; rows are processed
    one at a time (no padding effects). Holdout rows are drawn as in
    :func:`in_context_scores`. Parameters' ``.grad`` is left untouched.
    """
    import torch

    drawn = _draw_holdout(holdout, config)
    params = _alignment_parameters(model)
    device, was_training = _device(model), model.training

    def gradient(row: Row, index: int) -> Any:
        h = _prepare_holdout(tokenizer, row, config.max_length, index)
        ids, attention, mask = _batch([(h.ids, h.mask)], _pad_id(tokenizer), device)
        loss = _row_losses(model, ids, attention, mask).sum()
        grads = torch.autograd.grad(loss, params, allow_unused=True)
        return torch.cat(
            [
                (g if g is not None else torch.zeros_like(p)).reshape(-1).float()
                for g, p in zip(grads, params, strict=True)
            ]
        )

    model.eval()  # no dropout: the score must not depend on a random mask
    try:
        total, done = len(drawn) + len(candidates), 0
        target = None
        for i, row in enumerate(drawn):
            g = gradient(row, i)
            target = g if target is None else target + g
            done += 1
            if progress is not None:
                progress(done, total)
        target = target / len(drawn)
        target_norm = target.norm()
        scores = np.empty(len(candidates), dtype=np.float64)
        for i, row in enumerate(candidates):
            g = gradient(row, i)
            denominator = float(g.norm() * target_norm)
            scores[i] = float(g @ target) / denominator if denominator > 0 else 0.0
            done += 1
            if progress is not None:
                progress(done, total)
    finally:
        model.train(was_training)
    return scores


# ---------------------------------------------------------------------------
# Selection and output


def _keep_count(n: int, fraction: float) -> int:
    _check_fraction(fraction)
    return 0 if n == 0 else max(1, min(n, round(fraction * n)))


def select_top(
    rows: Sequence[Row], scores: Sequence[float] | np.ndarray, fraction: float
) -> list[Row]:
    """The ``round(fraction * len(rows))`` best-scored rows (at least 1), in their original order.

    Ties go to the earlier row; NaN scores rank last. Original order is kept
    so a selection reads like a subset of the export, not a re-shuffle.

    >>> select_top(["a", "b", "c", "d"], [0.1, 0.9, 0.5, 0.9], 0.5)
    ['b', 'd']
    """
    scores = np.asarray(scores, dtype=np.float64)
    if scores.shape != (len(rows),):
        raise ValueError(f"scores has shape {scores.shape}, expected ({len(rows)},): one per row")
    count = _keep_count(len(rows), fraction)
    key = np.where(np.isnan(scores), -np.inf, scores)
    order = sorted(range(len(rows)), key=lambda i: (-key[i], i))
    return [rows[i] for i in sorted(order[:count])]


def select_random(rows: Sequence[Row], fraction: float, seed: int) -> list[Row]:
    """A uniform random subset the same size :func:`select_top` keeps, in original order.

    >>> len(select_random(list(range(10)), 0.3, seed=0))
    3
    """
    count = _keep_count(len(rows), fraction)
    picked = np.random.default_rng(seed).choice(len(rows), size=count, replace=False)
    return [rows[int(i)] for i in np.sort(picked)]


def write_selection(rows: Sequence[Row], path: str | Path) -> Path:
    """Write rows as JSONL (one row a line, UTF-8), the format ``export-sft`` writes and TRL reads."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    return path
