"""Simulator validity report: is the patient (or user) simulator truthful, and does it leak?

Why: agent benchmarks blame a share of their failures on the user simulator.
Before a simulator (scripted or an LLM) is used to train or rank agents, this
report measures it over N dialogues driven by a fixed probe on the lead side:

* ``truthfulness``: true claims / judged claims, by the rule-based checkers
  (:mod:`~agentenv.multiagent.patient_claims`, :mod:`~agentenv.multiagent.media_claims`);
* ``leakage``: share of the simulator's messages that name the diagnosis or
  the film (``leak_dialogues``: share of dialogues with at least one);
* ``answered``: share of asked items (findings, fields) that a reply addressed;
* ``volunteered``, ``evasions``, ``contradictions``, ``invalid``: counts.

Probes (they read only their own chat): for the patient,
:class:`~agentenv.multiagent.scripted_leads.AskingDoctor`, asking by ids in
even dialogues and by names in odd ones; for the user, :class:`FieldProbe`,
which asks about one field per message, in an order that rotates with the
dialogue, so a user that gives more than it was asked is caught.

Example:
    >>> FieldProbe(rotate=1).order
    ('genre', 'director', 'cast', 'runtime', 'year')
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from agentenv.actions import answer
from agentenv.multiagent.base import DialogueEnv
from agentenv.multiagent.media_requests import FIELDS
from agentenv.multiagent.policies import PolicyLike, act_with, say
from agentenv.multiagent.single_agent import as_single_agent

FIELD_QUESTIONS = {
    "year": "When did it come out?",
    "genre": "What genre is it?",
    "director": "Do you know who directed it?",
    "cast": "Who is in the cast?",
    "runtime": "How long does it run?",
}


class FieldProbe:
    """Ask the user about one field per message (rotated order), then give up with an empty guess."""

    name = "field-probe"

    def __init__(self, rotate: int = 0) -> None:
        self.order = FIELDS[rotate % len(FIELDS):] + FIELDS[: rotate % len(FIELDS)]

    def act(self, obs: str, info: Mapping[str, Any]) -> str:
        asked = sum(m.get("role") == "assistant" for m in info.get("messages") or ())
        if asked < len(self.order):
            return say(FIELD_QUESTIONS[self.order[asked]])
        return answer("unknown")


@dataclass(frozen=True)
class SimulatorReport:
    """What :func:`simulator_check` measured (rates are ``None`` when nothing was measured)."""

    env_id: str
    side: str
    policy: str
    dialogues: int
    messages: int
    asked: int
    claims: int
    false_claims: int
    unanswered: int
    evasions: int
    leaks: int
    leak_dialogues: int
    volunteered: int
    contradictions: int
    invalid: int

    @property
    def truthfulness(self) -> float | None:
        return 1.0 - self.false_claims / self.claims if self.claims else None

    @property
    def leakage(self) -> float:
        return self.leaks / self.messages if self.messages else 0.0

    @property
    def answered(self) -> float | None:
        return 1.0 - self.unanswered / self.asked if self.asked else None

    def to_dict(self) -> dict[str, Any]:
        """Counts and rates, JSON-ready."""
        return {**asdict(self), "truthfulness": self.truthfulness, "leakage": self.leakage,
                "leak_dialogues_rate": self.leak_dialogues / self.dialogues if self.dialogues else 0.0,
                "answered": self.answered}

    def format(self) -> str:
        """A small table for the terminal."""
        rows = [("env", self.env_id), ("side", f"{self.side} ({self.policy})"), ("dialogues", self.dialogues),
                ("messages", self.messages), ("claims judged", self.claims),
                ("truthfulness", _rate(self.truthfulness)), ("leakage", _rate(self.leakage)),
                ("dialogues with a leak", self.leak_dialogues), ("answered", _rate(self.answered)),
                ("volunteered", self.volunteered), ("evasions", self.evasions),
                ("contradictions", self.contradictions), ("unreadable messages", self.invalid)]
        return "\n".join(f"{k:24s} {v}" for k, v in rows)


def _rate(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3f}"


def simulator_check(
    env: DialogueEnv,
    *,
    side: str | None = None,
    policy: PolicyLike | None = None,
    dialogues: int = 50,
    seed: int = 0,
    policy_name: str | None = None,
) -> SimulatorReport:
    """Run ``dialogues`` probe dialogues (tasks 0..N-1 of the env's split, seeds ``seed + i``)."""
    side = side or env.other
    if side != env.other:
        raise ValueError(f"{env} simulates the {env.other!r} side, not {side!r}")
    if dialogues < 1:
        raise ValueError(f"dialogues must be >= 1, got {dialogues}")
    policy = policy if policy is not None else env.default_policy(side)
    totals: Counter[str] = Counter()
    for i in range(dialogues):
        probe = _probe(env, i)
        single = as_single_agent(env, agent=env.lead, others={side: policy})
        obs, info = single.reset(seed=seed + i, options={"index": i % len(env.tasks)})
        done = False
        while not done:
            obs, _, terminated, truncated, info = single.step(act_with(probe, obs, info))
            done = terminated or truncated
        dialogue: Counter[str] = Counter()
        for judgment in env.judgments:
            dialogue.update(judgment.counts)
        totals.update(dialogue)
        totals["messages"] += len(env.judgments)
        totals["leak_dialogues"] += dialogue["leaks"] > 0
        totals["asked"] += int(info["reward_components"].get("questions_asked", 0))
    name = policy_name or getattr(policy, "name", type(policy).__name__)
    return SimulatorReport(
        env_id=str(env), side=side, policy=name, dialogues=dialogues,
        **{k: int(totals[k]) for k in ("messages", "asked", "claims", "false_claims", "unanswered", "evasions",
                                       "leaks", "leak_dialogues", "volunteered", "contradictions", "invalid")},
    )


def _probe(env: DialogueEnv, i: int) -> Any:
    from agentenv.multiagent.scripted_leads import AskingDoctor

    kb = getattr(env, "kb", None)
    if kb is not None:
        return AskingDoctor(kb, style="ids" if i % 2 == 0 else "names")
    return FieldProbe(rotate=i)
