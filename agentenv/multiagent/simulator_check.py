"""Simulator validity report: is the patient (or user) simulator truthful, and does it leak?

Why: agent benchmarks blame a share of their failures on the user simulator.
Before a simulator (scripted or an LLM) is used to train or rank agents, this
report measures it over N dialogues driven by a fixed probe on the lead side:

* ``truthfulness``: true claims / judged claims, by the family's rule-based
  checker (the env's ``_judge`` hook: for instance
  :mod:`agentenv.envs.rare_disease.dialogue.patient_claims`);
* ``leakage``: share of the simulator's messages that name the diagnosis or
  the film (``leak_dialogues``: share of dialogues with at least one);
* ``answered``: share of asked items (findings, fields) that a reply addressed;
* ``volunteered``, ``evasions``, ``contradictions``, ``invalid``: counts.

Probes are the family's, from the env's ``probe_policy(i)`` hook; they read
only their own chat and vary with the dialogue number. For the patient: the
asking doctor, naming findings by ids in even dialogues and by names in odd
ones; for the user: a probe asking about one field per message, in an order
that rotates with the dialogue, so a user that gives more than it was asked
is caught.

A policy that gives up (an llm endpoint that is down raises
:class:`~agentenv.evaluation.agents.AgentFailure`) ends the check with an
``AgentFailure`` that names the policy, the dialogue and the endpoint's error:
a report over the dialogues that did run would not measure the simulator.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass
from typing import Any

from agentenv.evaluation.agents import AgentFailure
from agentenv.multiagent.base import DialogueEnv
from agentenv.multiagent.policy_helpers import PolicyLike, act_with
from agentenv.multiagent.single_agent import as_single_agent


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
        return {
            **asdict(self),
            "truthfulness": self.truthfulness,
            "leakage": self.leakage,
            "leak_dialogues_rate": self.leak_dialogues / self.dialogues if self.dialogues else 0.0,
            "answered": self.answered,
        }

    def format(self) -> str:
        """A small table for the terminal."""
        rows = [
            ("env", self.env_id),
            ("side", f"{self.side} ({self.policy})"),
            ("dialogues", self.dialogues),
            ("messages", self.messages),
            ("claims judged", self.claims),
            ("truthfulness", _rate(self.truthfulness)),
            ("leakage", _rate(self.leakage)),
            ("dialogues with a leak", self.leak_dialogues),
            ("answered", _rate(self.answered)),
            ("volunteered", self.volunteered),
            ("evasions", self.evasions),
            ("contradictions", self.contradictions),
            ("unreadable messages", self.invalid),
        ]
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
    """Run ``dialogues`` probe dialogues (tasks 0..N-1 of the env's split, seeds ``seed + i``).

    Raises:
        AgentFailure: the simulated side's policy gave up (e.g. its endpoint is down); the reason
            names the policy, the dialogue and the policy's own reason.
    """
    side = side or env.other
    if side != env.other:
        raise ValueError(f"{env} simulates the {env.other!r} side, not {side!r}")
    if dialogues < 1:
        raise ValueError(f"dialogues must be >= 1, got {dialogues}")
    policy = policy if policy is not None else env.default_policy(side)
    name = policy_name or getattr(policy, "name", type(policy).__name__)
    totals: Counter[str] = Counter()
    for i in range(dialogues):
        probe = env.probe_policy(i)
        single = as_single_agent(env, agent=env.lead, others={side: policy})
        try:
            obs, info = single.reset(seed=seed + i, options={"index": i % len(env.tasks)})
            done = False
            while not done:
                obs, _, terminated, truncated, info = single.step(act_with(probe, obs, info))
                done = terminated or truncated
        except AgentFailure as err:
            raise AgentFailure(
                f"the {name} policy on the {side} side failed in dialogue {i + 1} of {dialogues}: {err.reason}"
            ) from err
        dialogue: Counter[str] = Counter()
        for judgment in env.judgments:
            dialogue.update(judgment.counts)
        totals.update(dialogue)
        totals["messages"] += len(env.judgments)
        totals["leak_dialogues"] += dialogue["leaks"] > 0
        totals["asked"] += int(info["reward_components"].get("questions_asked", 0))
    return SimulatorReport(
        env_id=str(env),
        side=side,
        policy=name,
        dialogues=dialogues,
        **{
            k: int(totals[k])
            for k in (
                "messages",
                "asked",
                "claims",
                "false_claims",
                "unanswered",
                "evasions",
                "leaks",
                "leak_dialogues",
                "volunteered",
                "contradictions",
                "invalid",
            )
        },
    )
