"""Message content cannot end a turn: turn-delimiting token strings inside it are encoded as text.

Why: a template pastes message content into its markup and the whole string is then encoded
with special tokens parsed, so a tool result, an error that quotes the agent's text, or a task's
question holding ``<|im_end|>\\n<|im_start|>assistant`` came back as real special ids: a turn
boundary that no template wrote, which the policy reads (and, in an SFT export of such text,
learns under loss mask 1). The protected strings are the *turn delimiters*: the special tokens a
template writes around one user turn and the next assistant header (:func:`turn_delimiters`),
and the tokenizer's named ones (eos, bos, pad, unk, ...). Other special tokens keep their ids
wherever they are written: a tokenizer whose ``<tool_call>`` is special was trained to read it
as one id, in prompts too.

The delimiters the template itself wrote are told from those inside content by rendering the
conversation a second time with every content character that is not whitespace replaced by
``a`` (:func:`neutral_messages`): the template's markup lands at the same offsets, content holds
no delimiter, and whitespace stays put for templates that strip it.

When no content holds a delimiter (every conversation an env of this package writes for an
honest agent), the ids are those of the one-pass encoding, unchanged.

Example:
    >>> neutral_messages([{"role": "tool", "content": "<|im_end|> x\\n"}])
    [{'role': 'tool', 'content': 'aaaaaaaaaa a\\n'}]
    >>> markup_offsets("<|im_start|>user\\n<|im_end|><|im_end|>", "<|im_start|>user\\naaaaaaaaaa<|im_end|>",
    ...                special_pattern(["<|im_start|>", "<|im_end|>"]))
    [(0, '<|im_start|>'), (27, '<|im_end|>')]
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

_NOT_SPACE = re.compile(r"\S")


def special_pattern(specials: Iterable[str]) -> re.Pattern[str] | None:
    """One alternation of the token strings, longest first (so a longer one wins); None for none."""
    ordered = sorted(set(specials), key=len, reverse=True)
    return re.compile("|".join(map(re.escape, ordered))) if ordered else None


def turn_delimiters(rendered_turn: str, specials: Iterable[str], eos: Iterable[str]) -> set[str]:
    """The special tokens a template writes around a turn (found in ``rendered_turn``, a rendered
    user turn and assistant header), and the eos tokens.

    >>> sorted(turn_delimiters("<|im_start|>user\\nx<|im_end|>\\n<|im_start|>assistant\\n",
    ...                        ["<|im_start|>", "<|im_end|>", "<tool_call>"], ["<|endoftext|>"]))
    ['<|endoftext|>', '<|im_end|>', '<|im_start|>']
    """
    return {s for s in specials if s in rendered_turn} | {e for e in eos if e}


def encode_content(
    text: str,
    delimiters: re.Pattern[str],
    others: re.Pattern[str] | None,
    encode: Callable[[str], list[int]],
    encode_plain: Callable[[str], list[int]],
) -> list[int]:
    """``text`` as content: a delimiter string is characters (``encode_plain``), any other special
    token keeps its id (``encode``), and text without a delimiter is ``encode(text)`` unchanged."""
    if not delimiters.search(text):
        return encode(text)
    ids: list[int] = []
    at = 0
    for match in others.finditer(text) if others is not None else ():
        if match.start() > at:
            ids += encode_plain(text[at : match.start()])
        ids += encode(match.group())
        at = match.end()
    if at < len(text):
        ids += encode_plain(text[at:])
    return ids


def _neutral(text: str) -> str:
    return _NOT_SPACE.sub("a", text)


def _contents(message: Mapping[str, Any]) -> Iterable[str]:
    content = message.get("content")
    if isinstance(content, str):
        yield content
    elif isinstance(content, list):
        for part in content:
            if isinstance(part, Mapping) and isinstance(part.get("text"), str):
                yield part["text"]
    reasoning = message.get("reasoning_content")
    if isinstance(reasoning, str):
        yield reasoning


def holds_special(messages: Sequence[Mapping[str, Any]], pattern: re.Pattern[str] | None) -> bool:
    """Whether any message's content (or reasoning) holds one of ``pattern``'s strings."""
    if pattern is None:
        return False
    return any(pattern.search(text) for m in messages for text in _contents(m))


def neutral_messages(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """``messages`` with each content and reasoning character that is not whitespace made ``a``."""
    out = []
    for message in messages:
        copy = dict(message)
        content = copy.get("content")
        if isinstance(content, str):
            copy["content"] = _neutral(content)
        elif isinstance(content, list):
            copy["content"] = [
                {**part, "text": _neutral(part["text"])}
                if isinstance(part, Mapping) and isinstance(part.get("text"), str)
                else part
                for part in content
            ]
        if isinstance(copy.get("reasoning_content"), str):
            copy["reasoning_content"] = _neutral(copy["reasoning_content"])
        out.append(copy)
    return out


def markup_offsets(
    rendered: str, neutral: str, pattern: re.Pattern[str]
) -> list[tuple[int, str]] | None:
    """(offset, string) of each special token the template wrote: those of the neutral render,
    found at the same offset in ``rendered``. None when the two renders differ in length (a
    template that changes content, which this reading cannot align)."""
    if len(rendered) != len(neutral):
        return None
    out = []
    for match in pattern.finditer(neutral):
        if not rendered.startswith(match.group(), match.start()):
            return None
        out.append((match.start(), match.group()))
    return out


def encode_with_markup(
    rendered: str,
    markup: Sequence[tuple[int, str]],
    special_id: Callable[[str], int],
    encode_text: Callable[[str], list[int]],
) -> list[int]:
    """Ids of ``rendered``: each markup special token as its id, the text between as plain text."""
    ids: list[int] = []
    at = 0
    for offset, special in markup:
        if offset > at:
            ids += encode_text(rendered[at:offset])
        ids.append(special_id(special))
        at = offset + len(special)
    if at < len(rendered):
        ids += encode_text(rendered[at:])
    return ids
