"""The :class:`Task` record: one episode's case, shared by the engine and every env.

It lives in its own module so that :mod:`agentenv.engine.turns` (which pins
tasks) and :mod:`agentenv.core` (which re-exports it as the public
``agentenv.core.Task``) both import it without importing each other.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Task"]


@dataclass(frozen=True, eq=False)
class Task:
    """One episode's case: public fields the agent may see, private gold and case, a content-hash id.

    ``case`` is the family's typed payload behind the gold (a media question
    with its tool plan, a simulated patient): privileged code (graders,
    oracles, simulated users) reads it; a policy never sees it.

    ``family`` names the registered :class:`~agentenv.families.Family` the task
    belongs to, so that generic code (the oracle, SFT export) finds the
    family's parts without probing the gold's shape.

    The id hashes the public content only, so it reveals nothing about the gold.

    Example:
        >>> Task(prompt="Who directed Inception?", gold={"answer": "Christopher Nolan"}).id
        'task-b42b58ecb176'
    """

    prompt: str
    gold: Any = field(repr=False)
    split: str = "custom"
    family: str = "custom"
    kind: str = "custom"
    difficulty: str = "unknown"
    public: Mapping[str, Any] = field(default_factory=dict)
    case: Any = field(default=None, repr=False)
    id: str = ""
    row_id: str = ""
    """The ``id`` a user's task row gave it ("" for a split's tasks and rows without one): each
    episode record carries it as ``row_id``, so results trace back to the row. Not hashed into
    :attr:`id` and never shown to the agent."""

    def __post_init__(self) -> None:
        if not self.id:
            content = json.dumps([self.kind, self.prompt, self.public], sort_keys=True, default=str)
            digest = hashlib.sha256(content.encode("utf-8")).hexdigest()[:12]
            object.__setattr__(self, "id", f"task-{digest}")
