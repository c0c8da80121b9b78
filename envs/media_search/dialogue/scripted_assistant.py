"""Scripted assistants of ``MediaConcierge-v0``: one answers at once, one asks first; and the field probe.

Why: the dialogue claims that asking the user pays. These baselines test that
claim on the same seeds with no learning involved. None reads the gold: each
sees only its own chat (``info["messages"]``), so each is a legal policy, and
each is stateless (the stage is the number of its own turns so far).

* :class:`AnswerAtOnceAssistant`: ``filter_titles`` with the constraints of
  the user's opening, answer the first title.
* :class:`AskingAssistant`: ask for every field in one message, then filter
  with everything the user said, answer the first title.
* :class:`FieldProbe`: the probe of ``simulator-check``; it asks about one
  field per message, in an order that rotates with the dialogue, so a user
  that gives more than it was asked is caught.

Example:
    >>> FieldProbe(rotate=1).order
    ('genre', 'director', 'cast', 'runtime', 'year')
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from agentenv.engine.actions import answer, tool_call
from agentenv.envs.media_search.dialogue.film_requests import FIELDS
from agentenv.envs.media_search.dialogue.user_claims import Vocabulary, user_claims
from agentenv.multiagent.policy_helpers import first_user_message, own_turns, say, tool_outputs

ASK_EVERYTHING = "Could you tell me more: the release year, the genre, the director, the cast and the running time?"
FIELD_QUESTIONS = {
    "year": "When did it come out?",
    "genre": "What genre is it?",
    "director": "Do you know who directed it?",
    "cast": "Who is in the cast?",
    "runtime": "How long does it run?",
}


def _filter_args(vocab: Vocabulary, texts: Sequence[str]) -> dict[str, Any]:
    """``filter_titles`` arguments from everything the user said."""
    args: dict[str, Any] = {}
    years: list[int] = []
    cast: list[str] = []
    for text in texts:
        for c in user_claims(vocab, text):
            if c.kind == "year":
                years += [c.value, c.value]
            elif c.kind == "decade":
                years += [c.value, c.value + 9]
            elif c.kind == "genre":
                args["genre"] = c.value
            elif c.kind == "director":
                args["director"] = vocab.people[c.value].name
            elif c.kind in ("cast", "person"):
                cast.append(vocab.people[c.value].name)
            elif c.kind == "max":
                args["runtime_max"] = c.value - 1
            elif c.kind == "min":
                args["runtime_min"] = c.value
            elif c.kind == "criterion":
                args["sort_by"], args["order"] = c.value
        if "feature" in text.casefold():
            args["feature_only"] = True
    if years:
        args["year_min"], args["year_max"] = min(years), max(years)
    if cast:
        args["cast"] = list(dict.fromkeys(cast))[:5]
    return args


def _first_title(output: Any) -> str:
    """The first result as ``Title (Year)``: the year makes a title that several films share readable."""
    try:
        first = output["results"][0]
        return f"{first['title']} ({first['year']})" if "year" in first else str(first["title"])
    except (KeyError, IndexError, TypeError):
        return "unknown"


class AnswerAtOnceAssistant:
    """Filter with the constraints of the user's opening and answer the first title."""

    name = "answer-at-once"

    def __init__(self, vocab: Vocabulary) -> None:
        self.vocab = vocab

    def act(self, obs: str, info: Mapping[str, Any]) -> str:
        if not own_turns(info):
            return tool_call(
                "filter_titles", limit=3, **_filter_args(self.vocab, [first_user_message(info)])
            )
        return answer(_first_title((tool_outputs(info, 0) or [None])[0]))


class AskingAssistant:
    """Ask for every field in one message, filter with all the user said, answer the first title."""

    name = "asking"

    def __init__(self, vocab: Vocabulary) -> None:
        self.vocab = vocab

    def act(self, obs: str, info: Mapping[str, Any]) -> str:
        stage = len(own_turns(info))
        if stage == 0:
            return say(ASK_EVERYTHING)
        if stage == 1:
            said = [
                str(m.get("content") or "")
                for m in info.get("messages") or ()
                if m.get("role") == "user"
            ]
            return tool_call("filter_titles", limit=3, **_filter_args(self.vocab, said))
        return answer(_first_title((tool_outputs(info, 1) or [None])[0]))


class FieldProbe:
    """Ask the user about one field per message (rotated order), then give up with an empty guess."""

    name = "field-probe"

    def __init__(self, rotate: int = 0) -> None:
        self.order = FIELDS[rotate % len(FIELDS) :] + FIELDS[: rotate % len(FIELDS)]

    def act(self, obs: str, info: Mapping[str, Any]) -> str:
        asked = sum(m.get("role") == "assistant" for m in info.get("messages") or ())
        if asked < len(self.order):
            return say(FIELD_QUESTIONS[self.order[asked]])
        return answer("unknown")
