"""The default simulated user of ``MediaConcierge-v0``: a vague opening, then truthful reveals.

Why scripted: a dialogue env needs a simulated side that is cheap,
deterministic and *provably* truthful, so that a learned assistant is measured
against the task and not against simulator noise, and so that an LLM user can
be compared with it (``agentenv simulator-check``).

:class:`ScriptedUser` opens with the vague request the env drew
(``info["private"]["opening_text"]``) and then, for each field the
assistant's last message asks about
(:func:`~agentenv.envs.media_search.dialogue.film_requests.fields_asked`), says the one
reveal sentence of its request (:func:`~agentenv.envs.media_search.dialogue.film_requests.reveal`).
It is a pure function of ``(observation, info)``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentenv.envs.media_search.dialogue.film_requests import Request, fields_asked, reveal
from agentenv.multiagent.policy_helpers import last_heard, say

NOT_UNDERSTOOD_USER = (
    "I'm not sure what you mean. You can ask me about the release year, the genre, the director, "
    "the cast or the running time."
)


class ScriptedUser:
    """The default user: the drawn vague opening, then one reveal sentence per field asked about."""

    name = "scripted-user"

    def act(self, obs: str, info: Mapping[str, Any]) -> str:
        private = info["private"]
        if info.get("turn", 0) == 0:
            return say(private["opening_text"])
        request = Request.from_dict(private["request"])
        fields = fields_asked(last_heard(obs, info))
        if not fields:
            return say(NOT_UNDERSTOOD_USER)
        return say(" ".join(reveal(request, f) for f in fields))
