"""Chat templates as :class:`agentenv.tokens.TokenEnv` needs them: prompt ids and env-turn ids.

A multi-turn trajectory is prompt ids, then policy ids and env ids in turns.
The policy ids are what the model sampled and are never re-encoded; a template
only renders the other parts: the prompt up to the first assistant header, and
each env turn (closing the assistant turn, tool results or an error message,
the next assistant header). Two implementations:

- :func:`qwen3_template`: Qwen3's format rendered in Python, encoded with the
  offline Qwen3 tokenizer (needs only ``tokenizers`` once the cache is built).
- :func:`hf_template`: any Hugging Face tokenizer with a chat template. An env
  turn is the difference between rendering a probe conversation with and
  without the new messages, so no per-model code is needed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from agentenv.tokens.plain_content import (
    encode_content,
    encode_with_markup,
    holds_special,
    markup_offsets,
    neutral_messages,
    special_pattern,
    turn_delimiters,
)
from agentenv.tokens.qwen3_chat import EMPTY_THINK, GENERATION_PROMPT, render_qwen3, render_turns
from agentenv.tokens.qwen3_tokenizer import QWEN3_ADDED_TOKENS

if TYPE_CHECKING:  # pragma: no cover - typing only
    import tokenizers

Message = Mapping[str, Any]
Tools = Sequence[Mapping[str, Any]]


class ChatTemplate(Protocol):
    """The chat format of one policy: what TokenEnv renders around the policy's tokens."""

    eos_ids: tuple[int, ...]
    """Ids that end an assistant turn when sampled; the first is the template's end-of-turn."""
    vocab_size: int
    """Number of token ids the tokenizer can produce (the action/observation space bound)."""

    def encode(self, text: str) -> list[int]:
        """Encode markup text; special-token strings in it become special tokens."""
        ...

    def encode_text(self, text: str) -> list[int]:
        """Encode content: a turn-delimiting token string in it (``<|im_end|>``) is read as
        characters; other special tokens keep their ids (see :mod:`~agentenv.tokens.plain_content`)."""
        ...

    def decode(self, ids: Sequence[int]) -> str:
        """Decode ids to text, skipping nothing."""
        ...

    def render_prefix(self, messages: Sequence[Message], tools: Tools | None) -> list[int]:
        """Prompt ids for the conversation so far, ending with the first assistant header;
        message content is encoded as text (:mod:`~agentenv.tokens.plain_content`)."""
        ...

    def render_env_turn(
        self,
        new_messages: Sequence[Message],
        tools: Tools | None,
        *,
        closed: bool = True,
        add_generation_prompt: bool = True,
    ) -> list[int]:
        """Ids that follow the policy's ids: the end-of-turn unless ``closed`` (the policy
        already sampled it), the separator, the rendered new messages, then the next
        assistant header when ``add_generation_prompt``. Message content is encoded as text."""
        ...


class TemplateNotPrefixStable(ValueError):
    """The chat template rewrites earlier turns when messages are appended, so env turns
    cannot be computed as a suffix; trajectories would not be token-exact."""


class Qwen3Template:
    """Qwen3's chat format on the offline Qwen3 tokenizer.

    ``enable_thinking=False`` appends Qwen3's empty ``<think>`` block after each
    assistant header, as Qwen3's template does for its no-thinking mode.
    """

    END_OF_TURN = "<|im_end|>"

    def __init__(self, backend: tokenizers.Tokenizer, *, enable_thinking: bool = True) -> None:
        self._tok = backend
        self.enable_thinking = enable_thinking
        self.eos_ids = (backend.token_to_id("<|im_end|>"), backend.token_to_id("<|endoftext|>"))
        self.vocab_size = backend.get_vocab_size(with_added_tokens=True)
        delimiters = {"<|im_start|>", "<|im_end|>", "<|endoftext|>"}
        self._delimiter_re = special_pattern(delimiters)
        self._other_re = special_pattern(
            name for name, _ in QWEN3_ADDED_TOKENS if name not in delimiters
        )
        self._plain: tokenizers.Tokenizer | None = None

    def encode(self, text: str) -> list[int]:
        return self._tok.encode(text, add_special_tokens=False).ids

    def encode_text(self, text: str) -> list[int]:
        return encode_content(
            text, self._delimiter_re, self._other_re, self.encode, self._encode_plain
        )

    def _encode_plain(self, text: str) -> list[int]:
        if self._plain is None:  # a copy that reads special-token strings as text, made once
            from tokenizers import Tokenizer

            self._plain = Tokenizer.from_str(self._tok.to_str())
            self._plain.encode_special_tokens = True
        return self._plain.encode(text, add_special_tokens=False).ids

    def decode(self, ids: Sequence[int]) -> str:
        return self._tok.decode([int(i) for i in ids], skip_special_tokens=False)

    def _header(self) -> str:
        return GENERATION_PROMPT + ("" if self.enable_thinking else EMPTY_THINK)

    def _encode_messages(
        self, messages: Sequence[Message], render: Callable[[Sequence[Message]], str]
    ) -> list[int]:
        """``render(messages)`` encoded, content as text (see :mod:`~agentenv.tokens.plain_content`)."""
        rendered = render(messages)
        if not holds_special(messages, self._delimiter_re):
            return self.encode(rendered)
        markup = markup_offsets(rendered, render(neutral_messages(messages)), self._delimiter_re)
        if markup is None:  # pragma: no cover - this renderer pastes content unchanged
            raise TemplateNotPrefixStable("the Qwen3 renderer changed a message's content")
        return encode_with_markup(rendered, markup, self._tok.token_to_id, self.encode_text)

    def render_prefix(self, messages: Sequence[Message], tools: Tools | None) -> list[int]:
        return self._encode_messages(messages, lambda ms: render_qwen3(ms, tools) + self._header())

    def render_env_turn(
        self,
        new_messages: Sequence[Message],
        tools: Tools | None,
        *,
        closed: bool = True,
        add_generation_prompt: bool = True,
    ) -> list[int]:
        head = ("" if closed else self.END_OF_TURN) + "\n"
        tail = self._header() if add_generation_prompt else ""
        return self._encode_messages(new_messages, lambda ms: head + render_turns(ms) + tail)


def qwen3_template(*, enable_thinking: bool = True, directory: Path | None = None) -> Qwen3Template:
    """The offline Qwen3 template (builds and caches the tokenizer on first use)."""
    from agentenv.tokens.qwen3_tokenizer import shared_backend

    return Qwen3Template(shared_backend(directory), enable_thinking=enable_thinking)


# A string no template produces by itself: it marks where the probe assistant's content sits.
_SENTINEL = "\u2063agentenv-probe-7f3a\u2063"


class HFTemplate:
    """Any Hugging Face tokenizer with a chat template.

    Env turns are computed against a probe conversation (a user message, then an
    assistant message whose content is a sentinel and whose tool calls match the
    new tool messages): rendered without the new messages, everything after the
    sentinel up to the end-of-turn is the assistant's own; rendered with them,
    the rest is the env turn. Anchoring at the assistant turn makes this work for
    templates, like Qwen3's, that rewrite *earlier* turns (dropping old
    reasoning); a template that rewrites the assistant turn itself raises
    :class:`TemplateNotPrefixStable`.
    """

    def __init__(
        self,
        tokenizer: Any,
        *,
        eos_ids: Sequence[int] | None = None,
        end_of_turn: str | None = None,
        **chat_kwargs: Any,
    ) -> None:
        self.tokenizer = tokenizer
        self.chat_kwargs = chat_kwargs
        self._specials = {
            t.content: int(i) for i, t in tokenizer.added_tokens_decoder.items() if t.special
        }
        if eos_ids is None:
            eos = tokenizer.eos_token_id
            eos_ids = [eos] if isinstance(eos, int) else list(eos or [])
        self.vocab_size = len(tokenizer)
        probe = self._render([{"role": "user", "content": "probe"}, self._probe([])], None, False)
        tail = self._after_sentinel(probe)
        if end_of_turn is None:
            found = [t for t in (tokenizer.decode([i]) for i in eos_ids) if t and t in tail]
            if not found:
                raise ValueError(
                    f"cannot tell which token ends an assistant turn (turn tail {tail!r}); "
                    "pass end_of_turn= and eos_ids="
                )
            end_of_turn = found[0]
        self.end_of_turn = end_of_turn
        eot_ids = self.encode(end_of_turn)
        self.eos_ids = tuple(dict.fromkeys(list(eot_ids[-1:]) + [int(i) for i in eos_ids]))
        turn = self._render([{"role": "user", "content": "x"}], None, True)
        named = ("bos_token", "eos_token", "pad_token", "unk_token", "sep_token", "cls_token")
        ends = [tokenizer.decode([i]) for i in self.eos_ids]
        ends += [t for t in (getattr(tokenizer, n, None) for n in named) if isinstance(t, str)]
        delimiters = turn_delimiters(turn, self._specials, ends)
        delimiters &= set(self._specials)
        self._delimiter_re = special_pattern(delimiters)
        self._other_re = special_pattern(
            t.content
            for t in tokenizer.added_tokens_decoder.values()
            if t.content not in delimiters
        )

    def encode(self, text: str) -> list[int]:
        return list(self.tokenizer.encode(text, add_special_tokens=False))

    def encode_text(self, text: str) -> list[int]:
        if self._delimiter_re is None:
            return self.encode(text)
        return encode_content(
            text, self._delimiter_re, self._other_re, self.encode, self._encode_plain
        )

    def _encode_plain(self, text: str) -> list[int]:
        return list(
            self.tokenizer.encode(text, add_special_tokens=False, split_special_tokens=True)
        )

    def _encode_content_as_text(
        self, new_messages: Sequence[Message], rendered: str, neutral: Callable[[], str]
    ) -> list[int]:
        """``rendered`` encoded with ``new_messages``' content unable to end a turn; ``neutral()``
        renders the same with :func:`~agentenv.tokens.plain_content.neutral_messages` in their place."""
        if not holds_special(new_messages, self._delimiter_re):
            return self.encode(rendered)
        markup = markup_offsets(rendered, neutral(), self._delimiter_re)
        if markup is None:
            raise TemplateNotPrefixStable(
                "the chat template changes message content, so special-token strings inside it "
                "cannot be told from the template's own; render this model with a template that "
                "pastes content unchanged"
            )
        return encode_with_markup(rendered, markup, self._specials.__getitem__, self.encode_text)

    def decode(self, ids: Sequence[int]) -> str:
        return self.tokenizer.decode(
            [int(i) for i in ids], skip_special_tokens=False, clean_up_tokenization_spaces=False
        )

    def _render(self, messages: Sequence[Message], tools: Tools | None, generation: bool) -> str:
        return self.tokenizer.apply_chat_template(
            list(messages),
            tools=list(tools) if tools else None,
            add_generation_prompt=generation,
            tokenize=False,
            **self.chat_kwargs,
        )

    @staticmethod
    def _probe(new_messages: Sequence[Message]) -> dict[str, Any]:
        calls = []
        for m in new_messages:
            if m.get("role") != "tool":
                break
            name = m.get("name", "tool")
            calls.append(
                {
                    "id": m.get("tool_call_id", f"call_{len(calls)}"),
                    "type": "function",
                    "function": {"name": name, "arguments": {}},
                }
            )
        probe: dict[str, Any] = {"role": "assistant", "content": _SENTINEL}
        if calls:
            probe["tool_calls"] = calls
        return probe

    @staticmethod
    def _after_sentinel(text: str) -> str:
        # The first one: the probe's, ahead of the new messages (whose content may quote it).
        at = text.find(_SENTINEL)
        if at < 0:
            raise TemplateNotPrefixStable("the chat template dropped the assistant's content")
        return text[at + len(_SENTINEL) :]

    def render_prefix(self, messages: Sequence[Message], tools: Tools | None) -> list[int]:
        return self._encode_content_as_text(
            messages,
            self._render(messages, tools, True),
            lambda: self._render(neutral_messages(messages), tools, True),
        )

    def render_env_turn(
        self,
        new_messages: Sequence[Message],
        tools: Tools | None,
        *,
        closed: bool = True,
        add_generation_prompt: bool = True,
    ) -> list[int]:
        base = [{"role": "user", "content": "probe"}, self._probe(new_messages)]
        without = self._after_sentinel(self._render(base, tools, False))
        with_new = self._after_sentinel(
            self._render(base + list(new_messages), tools, add_generation_prompt)
        )
        eot = self.end_of_turn
        cut = without.rfind(eot)
        own = without[: cut + len(eot)] if cut >= 0 else without
        if not with_new.startswith(own):
            raise TemplateNotPrefixStable(
                "appending messages changed how the assistant turn is rendered:\n"
                f"  alone:    {own!r}\n  followed: {with_new[: len(own) + 40]!r}"
            )

        def env_text(after_probe: str) -> str:
            text = after_probe[len(own) :]
            if cut < 0 and text.startswith(eot):
                text = text[len(eot) :]  # the template closes a turn only when more follows
            return ("" if closed else eot) + text

        return self._encode_content_as_text(
            new_messages,
            env_text(with_new),
            lambda: env_text(
                self._after_sentinel(
                    self._render(
                        base + neutral_messages(new_messages), tools, add_generation_prompt
                    )
                )
            ),
        )


def hf_template(
    tokenizer: Any,
    *,
    eos_ids: Sequence[int] | None = None,
    end_of_turn: str | None = None,
    **chat_kwargs: Any,
) -> HFTemplate:
    """Wrap a Hugging Face tokenizer that has a chat template.

    ``chat_kwargs`` go to every ``apply_chat_template`` call (e.g.
    ``enable_thinking=False``). ``eos_ids`` defaults to the tokenizer's eos, and
    ``end_of_turn`` to whichever eos text closes an assistant turn in the template.
    """
    return HFTemplate(tokenizer, eos_ids=eos_ids, end_of_turn=end_of_turn, **chat_kwargs)
