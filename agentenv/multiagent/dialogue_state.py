"""The records of a dialogue: its per-episode state, the checker's verdicts, and chat messages.

Why apart from the env: these are plain data and small pure helpers, so the
AEC machinery in :mod:`agentenv.multiagent.base` reads as the step contract
alone. The lead's part of the state and its turn rules are the shared
engine's (:mod:`agentenv.engine.turns`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from agentenv.engine.turns import Episode


class TextObservation(str):
    """A ``str`` that carries the dtype of :class:`~agentenv.engine.spaces.Text` (``<U``).

    Why: PettingZoo's ``api_test`` assumes numpy observations and compares
    ``observation.dtype`` with the space's dtype. This subclass passes that
    check and is a plain ``str`` everywhere else (equality, JSON, pickling).

    Example:
        >>> from agentenv.engine.spaces import Text
        >>> obs = TextObservation("hi")
        >>> obs == "hi", obs.dtype == Text(8).dtype
        (True, True)
    """

    __slots__ = ()
    dtype = np.dtype(str)


@dataclass(frozen=True)
class Judgment:
    """The rule-based verdict on one message of the simulated side.

    ``counts`` holds per-message counts: ``claims`` (statements the checker
    could tie to a fact), ``false_claims``, ``evasions`` (“not sure” about a
    known fact), ``unanswered`` (asked items not addressed), ``leaks``
    (the diagnosis or title named), ``volunteered`` (held-back facts given
    unasked), ``invalid`` (1 when the message could not be read). A message
    is *faithful* when all but ``claims`` are zero.
    """

    counts: Mapping[str, int]
    claims: tuple[Any, ...] = ()

    @property
    def faithful(self) -> bool:
        """No false claim, evasion, unanswered item, leak or volunteered fact."""
        return not any(v for k, v in self.counts.items() if k != "claims")


@dataclass
class Dialogue(Episode):
    """Mutable per-episode state; one object, replaced at every ``reset``.

    The :class:`~agentenv.engine.turns.Episode` part is the lead's (its chat is
    ``messages``, its counters are the engine's, ``context`` is the family's
    per-episode state), so the lead's turns run on the same engine as a
    single-agent env. The rest is the dialogue's: each agent's chat
    (``chats``), what each reads next (``last``), the rendered log, and the
    simulated side's own counts.
    """

    chats: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    last: dict[str, str] = field(default_factory=dict)
    log: list[tuple[str, str]] = field(default_factory=list)
    other_turns: int = 0
    other_invalid: int = 0
    judged: Counter[str] = field(default_factory=Counter)
    said: int = 0


SPEAKER_COUNTS = (
    "claims",
    "false_claims",
    "evasions",
    "unanswered",
    "leaks",
    "volunteered",
    "contradictions",
)
"""The simulated side's summed :class:`Judgment` counts, reported at the end."""


def speaker_components(d: Dialogue) -> dict[str, float]:
    """The simulated side's end-of-episode components: its messages, the faithful share, summed counts."""
    sent = d.other_turns
    out = {"messages": float(sent), "faithful": d.judged["faithful"] / sent if sent else 1.0}
    out.update({k: float(d.judged[k]) for k in SPEAKER_COUNTS})
    claims = d.judged["claims"]
    out["truthfulness"] = 1.0 - d.judged["false_claims"] / claims if claims else 1.0
    out["invalid_actions"] = float(d.other_invalid)
    return out
