"""Parse a dialogue turn: a ``<say>`` message, tool calls, an answer, or an explained error.

Why a tag for messages: the single-agent parser is strict (plain text is an
error that says what is expected), and a dialogue must stay strict too, or a
malformed tool call would silently go to the patient as small talk. So a
message to the other agent is exactly one ``<say>…</say>`` block; everything
else follows :func:`agentenv.engine.parsing.parse_action` to the letter (``<think>``
handling, tool-call JSON, answers, error wording).

* The lead (doctor, assistant) may say, call tools or answer, one of them per turn.
* The simulated side (patient, user) may only say.

:func:`sentences` splits a message into sentences, the unit every family's
rule-based checker reads claims and questions from.

Example:
    >>> parse_lead("<think>ask first</think><say>Do you have seizures?</say>", "patient")
    Say(text='Do you have seizures?', content='', reasoning='ask first')
    >>> print(parse_lead("Do you have seizures?", "patient").reason)
    no <say>, <tool_call> or <answer> found in the action: wrap a message to the patient in <say>…</say>
    >>> parse_speaker("<say>Yes, I have seizures.</say>", "doctor").text
    'Yes, I have seizures.'
    >>> print(parse_speaker('<answer>OMIM:154700</answer>', "doctor").reason)
    the patient side only talks: reply to the doctor in <say>…</say> (no tool calls, no answer)
    >>> sentences("It came out in 1995. Directed by D.J. Caruso!\\nYes")
    ['It came out in 1995.', 'Directed by D.J. Caruso!', 'Yes']
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from agentenv.engine.parsing import Answer, ParseError, ToolCalls, check_text, parse_action

SAY_OPEN, SAY_CLOSE = "<say>", "</say>"
_ACTION_TAGS = ("<tool_call>", "</tool_call>", "<answer>", "</answer>")
_INNER_TAGS = (*_ACTION_TAGS, "<think>", "</think>", SAY_OPEN)
_PLACEHOLDER = "\x00"
_NOT_FOUND = "no <tool_call> or <answer> found in the action"
_SENTENCES = re.compile(r"(?<!\b[A-Z]\.)(?<=[.!?])\s+|\n+")


@dataclass(frozen=True, slots=True)
class Say:
    """A message to the other agent; ``text`` is what it reads."""

    text: str
    content: str = ""
    reasoning: str | None = None


def lead_expected(other: str) -> str:
    """What a lead agent may send, phrased for its error observations."""
    return (
        f"Expected one <say>…</say> message to the {other}, one or more "
        '<tool_call>{"name": TOOL, "arguments": {...}}</tool_call> blocks, or a final '
        "<answer>…</answer> (optionally after <think>…</think>)."
    )


def speaker_expected(lead: str) -> str:
    """What the simulated side may send."""
    return f"Expected one <say>…</say> reply to the {lead} (optionally after <think>…</think>)."


def parse_lead(
    text: str, other: str, max_length: int | None = None
) -> Say | ToolCalls | Answer | ParseError:
    """Parse a lead agent's action; never raises on any input.

    ``max_length``: a longer action is refused before it is read (see :func:`~agentenv.engine.parsing.check_text`).
    """
    expected = lead_expected(other)
    if not isinstance(text, str):
        return ParseError(f"action must be a str, got {type(text).__name__}", expected)
    unreadable = check_text(text, max_length)
    if unreadable is not None:
        return ParseError(unreadable.reason, expected)
    if SAY_OPEN not in text and SAY_CLOSE not in text:
        parsed = parse_action(text)
        if isinstance(parsed, ParseError):
            reason = parsed.reason
            if reason == _NOT_FOUND:
                reason = (
                    f"no <say>, <tool_call> or <answer> found in the action: wrap a message to the "
                    f"{other} in <say>…</say>"
                )
            return ParseError(reason, expected)
        return parsed
    return _parse_say(text, expected)


def parse_speaker(
    text: str, lead: str, side: str = "patient", max_length: int | None = None
) -> Say | ParseError:
    """Parse a reply of the simulated side; never raises on any input."""
    expected = speaker_expected(lead)
    if not isinstance(text, str):
        return ParseError(f"action must be a str, got {type(text).__name__}", expected)
    unreadable = check_text(text, max_length)
    if unreadable is not None:
        return ParseError(unreadable.reason, expected)
    if SAY_OPEN not in text and SAY_CLOSE not in text:
        if any(tag in text for tag in _ACTION_TAGS):
            return ParseError(
                f"the {side} side only talks: reply to the {lead} in <say>…</say> (no tool calls, no answer)",
                expected,
            )
        return ParseError(
            f"no <say> message found: wrap the reply to the {lead} in <say>…</say>", expected
        )
    parsed = _parse_say(text, expected)
    if isinstance(parsed, ParseError) and parsed.reason.startswith("a <say> message cannot"):
        return ParseError(
            f"the {side} side only talks: reply to the {lead} in <say>…</say> (no tool calls, no answer)",
            expected,
        )
    return parsed


def _parse_say(text: str, expected: str) -> Say | ParseError:
    opens, closes = text.count(SAY_OPEN), text.count(SAY_CLOSE)
    start, end = text.find(SAY_OPEN), text.find(SAY_CLOSE)
    if opens != closes or end < start:
        return ParseError("unmatched <say> tag: every <say> needs its closing </say>", expected)
    if opens > 1:
        return ParseError(f"{opens} <say> blocks: send exactly one message per turn", expected)
    body = text[start + len(SAY_OPEN) : end]
    before, after = text[:start], text[end + len(SAY_CLOSE) :]
    if any(tag in body for tag in _INNER_TAGS):
        return ParseError("tags inside <say>…</say>: the message must be plain text", expected)
    if not body.strip():
        return ParseError("empty <say></say>: put the message between the tags", expected)
    if any(tag in before or tag in after for tag in _ACTION_TAGS):
        return ParseError(
            "a <say> message cannot be combined with tool calls or an answer: send one of them per turn",
            expected,
        )
    if before.count("<think>") > before.count("</think>"):
        return ParseError(
            "the <say> message is inside <think>…</think>: put it after the reasoning", expected
        )
    # The single-agent parser handles <think> exactly; a placeholder answer stands in for the message.
    probe = parse_action(f"{before}<answer>{_PLACEHOLDER}</answer>{after}")
    if isinstance(probe, ParseError):
        return ParseError(probe.reason, expected)
    if not isinstance(probe, Answer) or probe.text != _PLACEHOLDER:
        return ParseError("could not read the <say> message", expected)
    return Say(text=body.strip(), content=probe.content, reasoning=probe.reasoning)


def sentences(text: str, protect: Sequence[str] = (), limit: int | None = None) -> list[str]:
    """Sentences of a message: split at line breaks and after ``.``, ``!``, ``?`` (not after an
    initial such as "D.J."), never inside one of the ``protect`` strings ("Franc. Reyes");
    the first ``limit`` only, if given."""
    guarded = [
        (m.start(), m.end()) for name in protect if name for m in re.finditer(re.escape(name), text)
    ]
    out, start = [], 0
    for m in _SENTENCES.finditer(text):
        if any(lo < m.start() < hi for lo, hi in guarded):
            continue
        sentence = text[start : m.start()].strip()
        start = m.end()
        if sentence:
            out.append(sentence)
            if limit is not None and len(out) >= limit:
                return out
    tail = text[start:].strip()
    return [*out, tail] if tail else out
