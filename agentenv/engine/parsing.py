"""Turn an LLM's action text into a tool call, an answer, or an explained error.

The parser is strict on purpose: a call that only parses after silent JSON
repair teaches the policy nothing, so every failure comes back as a
:class:`ParseError` that says what was wrong and what is expected, and the env
shows it to the agent as an error observation.

Accepted forms:

* Qwen3 / Hermes: optional ``<think>…</think>``, then one or more
  ``<tool_call>{"name": …, "arguments": {…}}</tool_call>`` blocks;
* a final answer: ``<answer>…</answer>``;
* OpenAI-style JSON: ``{"tool_calls": [{"name": …, "arguments": {…}}]}`` (or the
  ``{"function": {"name", "arguments"}}`` shape, with arguments as an object or
  a JSON string) or ``{"answer": "…"}``;
* an OpenAI assistant message as a server returns it, e.g. ``json.dumps(choice.message)``:
  ``{"role": "assistant", "content": …, "tool_calls": [{"id": …, "type": "function",
  "function": {"name": …, "arguments": "<JSON string>"}}]}``. Its ``tool_calls`` are the
  action; without them its ``content`` must hold ``<answer>…</answer>`` (plain content is
  not an answer), and ``reasoning_content`` is kept as the reasoning.

Example:
    >>> parse_action('<think>easy</think><answer> Inception </answer>')
    Answer(text='Inception', content='', reasoning='easy')
    >>> parse_action('<tool_call>{"name": "search", "arguments": {"query": "x"}}</tool_call>').calls
    (ToolCall(name='search', arguments={'query': 'x'}),)
    >>> print(parse_action('<tool_call>{"name": "search",}</tool_call>').reason)
    bad JSON in <tool_call> block 1 at character 18: Expecting property name enclosed in double quotes
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from agentenv.engine.strict_json import unique_keys

EXPECTED = (
    'Expected either one or more <tool_call>{"name": TOOL, "arguments": {...}}</tool_call> '
    "blocks, or a final <answer>...</answer> (optionally after <think>...</think>)."
)

THINK_OPEN, THINK_CLOSE = "<think>", "</think>"
MAX_JSON_DEPTH = 64
"""Deepest JSON nesting accepted in an action. Tool arguments are shallow; a bound keeps every
later recursive walk (validation, error messages, serialisation) far from Python's recursion limit."""
_SURROGATE = re.compile(r"[\ud800-\udfff]")
_CALL_KEYS = frozenset(("name", "arguments", "id", "type"))
_OPENAI_CALL_KEYS = frozenset(("id", "type", "function", "index"))
_EMPTY_MESSAGE_KEYS = frozenset(("refusal", "function_call", "audio", "annotations"))
"""Keys of a server's assistant message that carry nothing an env can act on: accepted when empty."""
_MESSAGE_KEYS = (
    frozenset(("role", "content", "tool_calls", "reasoning_content", "reasoning", "name"))
    | _EMPTY_MESSAGE_KEYS
)
_NO_ARGUMENTS: dict[str, Any] = {}
"""Marks a call without ``"arguments"`` (each such call gets a fresh empty dict)."""
_TAGS = ("<tool_call>", "</tool_call>", "<answer>", "</answer>", "<think>", "</think>")
_new_tuple = tuple.__new__
"""Builds a named tuple from all its fields at C speed (``Answer(text=…)`` runs a Python ``__new__``)."""


class ToolCall(NamedTuple):
    """One requested tool call, arguments not yet validated.

    The parsed actions are named tuples, not frozen dataclasses: as immutable, and built in a
    third of the time, which matters on a step budget of a few microseconds.
    """

    name: str
    arguments: dict[str, Any]


class ToolCalls(NamedTuple):
    """An action that calls one or more tools (parallel calls run in order)."""

    calls: tuple[ToolCall, ...]
    content: str = ""
    reasoning: str | None = None


class Answer(NamedTuple):
    """A final answer; the env grades ``text`` and ends the episode."""

    text: str
    content: str = ""
    reasoning: str | None = None


@dataclass(frozen=True, slots=True)
class ParseError:
    """Why an action could not be understood, phrased for the agent to read."""

    reason: str
    expected: str = field(default=EXPECTED)

    def message(self) -> str:
        """The error observation shown to the agent."""
        return f"Error: {self.reason}. {self.expected}"


@dataclass(frozen=True, slots=True)
class CallRejected(ParseError):
    """A well-formed tool call that cannot run: its tool is unknown or its arguments are invalid.

    Why a type of its own: the env answers it in a ``tool`` message, as a chat API and TRL's
    multi-turn loop answer a call that fails, so that the rendered conversation (and the token
    ids a trainer optimises) is the same on both sides. ``index`` is the call's position in its
    action, from 1.
    """

    index: int = 1


ParsedAction = ToolCalls | Answer | ParseError


def parse_action(text: str, max_length: int | None = None) -> ParsedAction:
    """Parse one action; never raises on any ``str``.

    With ``max_length`` a longer action is an error before anything is read, so the
    cost of an over-long action does not grow with its length.
    """
    if not isinstance(text, str):
        return ParseError(f"action must be a str, got {type(text).__name__}")
    if (
        text.startswith("<answer>")
        and text.endswith("</answer>")
        and text.count("<") == 2
        and (max_length is None or len(text) <= max_length)
        and (text.isascii() or surrogate_at(text) < 0)
    ):  # the usual last action, one bare answer block: what check_text and the scan below would find
        answer = text[8:-9].strip()
        if answer:
            return _new_tuple(Answer, (answer, "", None))
    unreadable = check_text(text, max_length)
    if unreadable is not None:
        return unreadable
    if (
        text.count("<") == 2
    ):  # one bare block and no other tag: read directly, as the scan below would
        if text.startswith("<tool_call>") and text.endswith("</tool_call>"):
            return _parse_tagged_calls([text[11:-12]], "", None)
        if text.startswith("<answer>") and text.endswith("</answer>"):
            answer = text[8:-9].strip()
            if answer:
                return Answer(text=answer)
    body, reasoning, error = _strip_think(text)
    if error:
        return ParseError(error)
    stripped = body.strip()
    if not stripped:
        return ParseError("empty action" if reasoning is None else "no action after </think>")
    if stripped[0] == "{":
        if "<tool_call>" not in stripped and "<answer>" not in stripped:
            return _parse_openai_json(stripped, reasoning)
        if stripped[-1] == "}":
            # An OpenAI message whose content holds tags ({"role": "assistant", "content":
            # "<answer>…</answer>"}): JSON when the whole text decodes as an object (one more
            # linear pass); otherwise, as before, the tagged form.
            parsed = _load_json(stripped, "the JSON action")
            if isinstance(parsed, dict):
                return _from_openai_object(parsed, reasoning)
    return _parse_tagged(body, reasoning)


def check_text(text: str, max_length: int | None = None) -> ParseError | None:
    """The reason a ``str`` cannot be read at all: over ``max_length``, or not valid Unicode.

    The length is checked first and in O(1), so nothing past the limit is ever scanned.
    A lone surrogate (possible in a Python ``str``) cannot be encoded as UTF-8, so any
    message or token sequence built from it would fail later, far from the cause.
    """
    if max_length is not None and len(text) > max_length:
        return ParseError(
            f"action too long: {len(text)} characters, the limit is {max_length}; nothing of it was read"
        )
    at = surrogate_at(text)
    if at >= 0:
        return ParseError(
            f"lone surrogate \\u{ord(text[at]):04x} at character {at}: send valid UTF-8 text"
        )
    return None


def surrogate_at(text: str) -> int:
    """The index of the first surrogate code point in ``text``, or -1 (C-speed; ASCII is instant)."""
    if text.isascii():
        return -1
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return exc.start
    return -1


def printable(text: str, max_length: int | None = None) -> str:
    """``text`` as the transcript keeps it: every surrogate code point replaced by U+FFFD, so it
    encodes as UTF-8, and cut at ``max_length`` with a note, so an over-long action costs no more
    to record than one at the limit."""
    cut = max_length is not None and len(text) > max_length
    kept = text[:max_length] if cut else text
    if surrogate_at(kept) >= 0:
        kept = _SURROGATE.sub("\ufffd", kept)
    return f"{kept}[... {len(text) - max_length} more characters, not read]" if cut else kept


def _strip_think(text: str) -> tuple[str, str | None, str | None]:
    """Remove ``<think>…</think>`` blocks in one left-to-right ``str.find`` scan (linear time).

    A lazy regex here retried every unclosed ``<think>`` against the rest of the text,
    which made a flood of openers quadratic (seconds for 32 KB).
    """
    if THINK_OPEN not in text and THINK_CLOSE not in text:
        return text, None, None
    parts: list[str] = []
    outside: list[str] = []
    position = 0
    while True:
        opened = text.find(THINK_OPEN, position)
        if opened < 0:
            break
        closed = text.find(THINK_CLOSE, opened + len(THINK_OPEN))
        if closed < 0:
            break  # no later <think> can close either
        outside.append(text[position:opened])
        parts.append(text[opened + len(THINK_OPEN) : closed].strip())
        position = closed + len(THINK_CLOSE)
    outside.append(text[position:])
    body = "".join(outside)
    if THINK_CLOSE in body and THINK_OPEN not in body:
        # Qwen3's template may open <think> in the prompt: the action starts inside it.
        head, _, body = body.partition(THINK_CLOSE)
        parts.insert(0, head.strip())
    if THINK_OPEN in body:
        return body, None, "unclosed <think> block: close it with </think>"
    if THINK_CLOSE in body:
        return body, None, "stray </think> without a matching <think>"
    return body, "\n".join(parts), None


def _parse_tagged(body: str, reasoning: str | None) -> ParsedAction:
    calls_raw, answers, rest = _split_blocks(body)
    if rest and "<" in rest:
        for tag in _TAGS:
            if tag in rest:
                return ParseError(
                    f"unmatched {tag} tag: every <tool_call> and <answer> needs its closing tag"
                )
    content = rest.strip() if rest else ""
    if calls_raw and answers:
        return ParseError(
            "an action may call tools or answer, not both: send the <answer> after the tool results"
        )
    if len(answers) > 1:
        return ParseError(f"{len(answers)} <answer> blocks: give exactly one final answer")
    if answers:
        text = answers[0].strip()
        if not text:
            return ParseError("empty <answer></answer>: put the answer between the tags")
        return Answer(text=text, content=content, reasoning=reasoning)
    if not calls_raw:
        return ParseError("no <tool_call> or <answer> found in the action")
    return _parse_tagged_calls(calls_raw, content, reasoning)


def _parse_tagged_calls(
    calls_raw: list[str], content: str, reasoning: str | None
) -> ToolCalls | ParseError:
    """The bodies of ``<tool_call>`` blocks as calls; the first unreadable one explains itself."""
    calls = []
    index = 0
    for raw in calls_raw:
        index += 1  # where an error is: named only when there is one (formatting costs a step)
        parsed = _load_json(raw.strip(), "<tool_call> block", index)
        if type(parsed) is dict and _CALL_KEYS.issuperset(parsed):  # the usual call: checked inline
            name, arguments = parsed.get("name"), parsed.get("arguments", _NO_ARGUMENTS)
            if type(name) is str and name and type(arguments) is dict:
                calls.append(ToolCall(name, {} if arguments is _NO_ARGUMENTS else arguments))
                continue
        if isinstance(parsed, ParseError):
            return parsed
        call = _tool_call_from_object(
            parsed, f"<tool_call> block {index}", arguments_as_string=False
        )
        if isinstance(call, ParseError):
            return call
        calls.append(call)
    return ToolCalls(calls=tuple(calls), content=content, reasoning=reasoning)


def _split_blocks(body: str) -> tuple[list[str], list[str], str]:
    """One left-to-right pass with ``str.find`` (several times faster than a regex here):
    the bodies of closed ``<tool_call>`` and ``<answer>`` blocks, and the text outside them.
    An unclosed tag stays in the outside text, where the caller reports it.

    The next position of each opening tag is remembered and searched again only once the
    scan has passed it, so the whole pass reads the text a bounded number of times (linear
    in its length, whatever the number of blocks)."""
    calls: list[str] = []
    answers: list[str] = []
    outside: list[str] = []
    position = 0
    call_at = body.find("<tool_call>")
    answer_at = body.find("<answer>")
    while call_at >= 0 or answer_at >= 0:
        if answer_at < 0 or 0 <= call_at < answer_at:
            opened, open_tag, close_tag, bucket = call_at, "<tool_call>", "</tool_call>", calls
        else:
            opened, open_tag, close_tag, bucket = answer_at, "<answer>", "</answer>", answers
        closed = body.find(close_tag, opened + len(open_tag))
        if closed < 0:
            break
        outside.append(body[position:opened])
        bucket.append(body[opened + len(open_tag) : closed])
        position = closed + len(close_tag)
        if 0 <= call_at < position:
            call_at = body.find("<tool_call>", position)
        if 0 <= answer_at < position:
            answer_at = body.find("<answer>", position)
    outside.append(body[position:])
    return calls, answers, "".join(outside)


def _parse_openai_json(text: str, reasoning: str | None) -> ParsedAction:
    parsed = _load_json(text, "the JSON action")
    if isinstance(parsed, ParseError):
        return parsed
    if not isinstance(parsed, dict):
        return ParseError(
            'the JSON action must be an object with "tool_calls" or "answer", '
            "or an OpenAI assistant message"
        )
    return _from_openai_object(parsed, reasoning)


def _from_openai_object(parsed: dict[str, Any], reasoning: str | None) -> ParsedAction:
    keys = set(parsed)
    if "role" in keys or "content" in keys:
        return _from_assistant_message(parsed, reasoning)
    if keys == {"answer"}:
        answer = parsed["answer"]
        items = answer if isinstance(answer, list) else [answer]
        if any(isinstance(a, float) for a in items):
            # JSON has decoded it already: 6.99999999999999999 and 70e-1 both became 7.0, which
            # the number grammar would have refused as written. Text keeps what was written.
            return ParseError(
                '"answer" is a JSON number with a fraction or exponent; write the answer as a '
                'string ("7.5") or an integer (7)'
            )
        if not all(type(a) in (str, int) for a in items):  # strings and integers, nothing else
            return ParseError('"answer" must be a non-empty string')
        answer = "\n".join(str(a) for a in items)
        if not answer.strip():
            return ParseError('"answer" must be a non-empty string')
        return Answer(text=str(answer).strip(), reasoning=reasoning)
    if keys != {"tool_calls"}:
        return ParseError(
            f'the JSON action has keys {sorted(keys)}; it must have exactly "tool_calls" or "answer", '
            'or be an OpenAI assistant message ("role", "content", "tool_calls")'
        )
    return _openai_tool_calls(parsed["tool_calls"], "", reasoning)


def _openai_tool_calls(
    raw_calls: Any, content: str, reasoning: str | None
) -> ToolCalls | ParseError:
    if not isinstance(raw_calls, list) or not raw_calls:
        return ParseError('"tool_calls" must be a non-empty list')
    calls = []
    for index, obj in enumerate(raw_calls, start=1):
        if isinstance(obj, dict) and "function" in obj:
            if obj.get("type", "function") != "function" or not set(obj) <= _OPENAI_CALL_KEYS:
                extra = sorted(set(obj) - _OPENAI_CALL_KEYS)
                return ParseError(
                    f'tool call {index} must be {{"id", "type": "function", "function": {{...}}}}'
                    + (f"; unexpected keys {extra}" if extra else "")
                )
            obj = obj["function"]
        call = _tool_call_from_object(obj, f"tool call {index}", arguments_as_string=True)
        if isinstance(call, ParseError):
            return call
        calls.append(call)
    return ToolCalls(calls=tuple(calls), content=content, reasoning=reasoning)


def _from_assistant_message(message: dict[str, Any], reasoning: str | None) -> ParsedAction:
    """An OpenAI chat-completions assistant message, as a server returns it.

    ``tool_calls`` (non-empty) are the action, with ``content`` kept beside them; without them
    the ``content`` is read as action text, so it must hold ``<answer>…</answer>`` (or
    ``<tool_call>`` blocks): plain content is not taken for an answer. ``reasoning_content``
    (or ``reasoning``) is kept as the reasoning; the other keys a server sends must be empty.
    """
    extra = sorted(key for key in message if key not in _MESSAGE_KEYS)
    if extra:
        return ParseError(
            f'the assistant message has unexpected keys {extra}; use "role", "content" and "tool_calls"'
        )
    if message.get("role", "assistant") != "assistant":
        return ParseError(
            f'the JSON message has role {str(message["role"])[:40]!r}; an action is an "assistant" message'
        )
    filled = sorted(key for key in _EMPTY_MESSAGE_KEYS if message.get(key))
    if filled:
        return ParseError(
            f"the assistant message has {filled} set; send a tool call or an <answer> instead"
        )
    content = _message_text(message.get("content"))
    if content is None:
        return ParseError(
            '"content" of the assistant message must be a string, null, or a list of text parts'
        )
    thought = None
    for key in ("reasoning_content", "reasoning"):
        value = message.get(key)
        if value is not None and not isinstance(value, str):
            return ParseError(f'"{key}" of the assistant message must be a string or null')
        if value and value.strip():
            thought = value.strip()
    if thought is not None:
        reasoning = thought if reasoning is None else f"{reasoning}\n{thought}"
    raw_calls = message.get("tool_calls")
    if raw_calls:
        if "<answer>" in content or "<tool_call>" in content:
            return ParseError(
                'the assistant message has "tool_calls" and tags in its "content": '
                "call tools or answer, not both (send the <answer> after the tool results)"
            )
        return _openai_tool_calls(raw_calls, content.strip(), reasoning)
    if raw_calls is not None and not isinstance(raw_calls, list):
        return ParseError('"tool_calls" must be a list')
    if not content.strip():
        return ParseError('the assistant message has neither "tool_calls" nor "content"')
    if "<answer>" not in content and "<tool_call>" not in content:
        return ParseError(
            'the assistant message has no "tool_calls", and its "content" has no <answer>…</answer>: '
            "plain content is not a final answer"
        )
    body, inner, error = _strip_think(content)
    if error:
        return ParseError(f"in the assistant message's content: {error}")
    if inner:
        reasoning = inner if reasoning is None else f"{reasoning}\n{inner}"
    return _parse_tagged(body, reasoning)


def _message_text(content: Any) -> str | None:
    """The text of a message's ``content``: a string, null (""), or OpenAI's list of text parts."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if (
                not isinstance(part, dict)
                or part.get("type") != "text"
                or not isinstance(part.get("text"), str)
            ):
                return None
            parts.append(part["text"])
        return "".join(parts)
    return None


class _Unreadable(ValueError):
    """Raised from inside the JSON decoder for input it must not turn into Python values."""


def _parse_int(digits: str) -> int:
    """``int`` for JSON integers, refusing Python's digit limit with an explanation, not a ValueError."""
    limit = sys.get_int_max_str_digits()
    if limit and len(digits) - digits.startswith("-") > limit:
        raise _Unreadable(f"an integer with {len(digits)} digits (at most {limit} are read)")
    return int(digits)


def _refuse_constant(name: str) -> Any:
    raise _Unreadable(f"{name} is not JSON (use a number or null)")


_DECODER = json.JSONDecoder(
    parse_int=_parse_int, parse_constant=_refuse_constant, object_pairs_hook=unique_keys
)
_SCAN = _DECODER.scan_once
"""The decoder's scanner, called directly on stripped text: ``decode`` adds two regex scans for
whitespace that stripped text does not have."""


def _load_json(raw: str, where: str, index: int | None = None) -> Any:
    """Decode strict JSON; every failure, however deep in the decoder, is an explained ParseError.

    ``where`` (with ``index``, as in "<tool_call> block 2") names the text in error messages.
    ``raw`` comes stripped, so the one scan of the C decoder reads it whole when it is valid;
    anything else goes through the full decoder, whose messages the errors quote.
    """
    if raw:
        try:
            value, end = _SCAN(raw, 0)
        except Exception:  # noqa: BLE001 - any failure is explained by the full decode below
            pass
        else:
            if end == len(raw):
                problem = _json_problem(raw, value)
                if problem is None:
                    return value
    if index is not None:
        where = f"{where} {index}"
    if not raw:
        return ParseError(f"empty {where}: it must hold a JSON object")
    try:
        value = _DECODER.decode(raw)
    except json.JSONDecodeError as exc:
        return ParseError(f"bad JSON in {where} at character {exc.pos}: {exc.msg}")
    except _Unreadable as exc:
        return ParseError(f"bad JSON in {where}: {exc}")
    except RecursionError:
        return ParseError(f"bad JSON in {where}: nested too deeply")
    except ValueError as exc:  # anything else the decoder's conversions refuse
        return ParseError(f"bad JSON in {where}: {str(exc)[:200]}")
    problem = _json_problem(raw, value)
    return ParseError(f"bad JSON in {where}: {problem}") if problem else value


def _json_problem(raw: str, value: Any) -> str | None:
    """Why decoded JSON cannot be used: nesting deeper than :data:`MAX_JSON_DEPTH`, or a string
    (key or value) holding a lone surrogate from a ``\\ud800``-style escape.

    Both need a walk over the decoded value; the raw text tells cheaply when neither can occur.
    """
    deep = raw.count("[") + raw.count("{") > MAX_JSON_DEPTH
    escaped = "\\u" in raw or not raw.isascii()
    if not (deep or escaped):
        return None
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, str):
            at = surrogate_at(item) if escaped else -1
            if at >= 0:
                return f"lone surrogate \\u{ord(item[at]):04x} in a JSON string: send valid UTF-8 (pair every surrogate escape)"
        elif isinstance(item, (dict, list)):
            if depth > MAX_JSON_DEPTH:
                return f"nested more than {MAX_JSON_DEPTH} levels deep"
            if isinstance(item, dict):
                stack.extend((key, depth) for key in item)
                item = item.values()
            stack.extend((child, depth + 1) for child in item)
    return None


def _tool_call_from_object(
    obj: Any, where: str, *, arguments_as_string: bool
) -> ToolCall | ParseError:
    if not isinstance(obj, dict):
        return ParseError(f'{where} must be a JSON object with "name" and "arguments"')
    extra = [key for key in obj if key not in _CALL_KEYS]
    if extra:
        return ParseError(
            f'{where} has unexpected keys {sorted(extra)}; use only "name" and "arguments"'
        )
    name = obj.get("name")
    if not isinstance(name, str) or not name:
        return ParseError(f'{where} is missing a string "name"')
    arguments = obj.get("arguments", {})
    if arguments_as_string and isinstance(arguments, str):
        arguments = _load_json(arguments, f"the arguments of {where}")
        if isinstance(arguments, ParseError):
            return arguments
    if not isinstance(arguments, dict):
        return ParseError(f'"arguments" of {where} ({name}) must be a JSON object')
    return ToolCall(name=name, arguments=arguments)
