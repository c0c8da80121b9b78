"""An oracle that writes names as the question wrote them, so a small model can learn to copy them.

Why: the MediaSearch oracle calls tools with the catalog's spelling ("Sam
Mendes") while people type "sam mendes". The tools ignore case, so both calls
return the same rows, but a model trained on the oracle's conversations must
learn to re-case every name it copies. A 5M-parameter model trained from
scratch cannot: on unseen questions it wrote names it had memorised instead
(``docs/REPRODUCE.md`` §5b). This oracle follows the same gold plan and
replaces each text argument by the question's own span when the two differ in
case alone, so the argument is a plain copy of the question's tokens.

The rule is an allow-list: a value is rewritten only where the question holds
it at word boundaries with the same characters up to case (``re.IGNORECASE``).
Any other difference (accents, spacing, punctuation, a typo) keeps the
catalog's spelling, so a rewritten call returns what the original call
returns: every text argument the plan uses (``query``, ``director``,
``cast``, ``genre``, ``name``) is matched case-insensitively by its tool.

Example:
    >>> question_spelling({"director": "Sam Mendes", "year_min": 2005}, "the 2005 sam mendes one")
    {'director': 'sam mendes', 'year_min': 2005}
    >>> question_spelling({"cast": ["Luis Gómez"]}, "with luis gomez")  # accents differ: kept
    {'cast': ['Luis Gómez']}
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import numpy as np

from agentenv.core import Task
from agentenv.envs.media_search.agents.oracle import MediaSearchOracle
from agentenv.evaluation.agents import UnsupportedEnv

FAMILY = "media_search"


def question_span(value: str, question: str) -> str:
    """The question's own spelling of ``value`` if it holds it up to case at word boundaries, else ``value``.

    Example:
        >>> question_span("Bolt", "what year did bolt come out")
        'bolt'
        >>> question_span("Bolt", "what year did boltzmann live")
        'Bolt'
    """
    if not value.strip():
        return value
    pattern = r"(?<!\w)" + re.escape(value) + r"(?!\w)"
    found = re.search(pattern, question, flags=re.IGNORECASE)
    if found is None or found.group(0).casefold() != value.casefold():
        return value
    return found.group(0)


def question_spelling(arguments: Mapping[str, Any], question: str) -> dict[str, Any]:
    """``arguments`` with every text value (and every text in a list) spelled as ``question`` spells it."""
    spelled: dict[str, Any] = {}
    for name, value in arguments.items():
        if isinstance(value, str):
            spelled[name] = question_span(value, question)
        elif isinstance(value, list | tuple):
            spelled[name] = [
                question_span(item, question) if isinstance(item, str) else item for item in value
            ]
        else:
            spelled[name] = value
    return spelled


class QuestionSpellingOracle(MediaSearchOracle):
    """The MediaSearch oracle, with text arguments copied from the question where only case differs.

    Declared as the ``oracle-question-spelling`` agent, e.g. for
    ``agentenv export-sft MediaSearch-v0 --agent oracle-question-spelling``.
    """

    name = "oracle-question-spelling"

    def reset(
        self, obs: str, info: Mapping[str, Any], *, task: Task, rng: np.random.Generator
    ) -> None:
        if task.family != FAMILY:
            raise UnsupportedEnv(
                f"the {self.name} agent follows MediaSearch question plans only; this task is of the "
                f"{task.family!r} family (use --agent oracle)"
            )
        super().reset(obs, info, task=task, rng=rng)
        self._steps = [
            {**step, "arguments": question_spelling(step["arguments"], task.prompt)}
            for step in self._steps
        ]
