"""The blind sweep: a scripted doctor that knows nothing of the case and asks about everything broad.

Why keep an attack as a policy: a reward that pays a policy for not looking at
the patient is a bug an RL run will find. This one asks the patient about the
HPO terms one level below the organ-system roots (157 in HPO 2025-01-16: "any
problem with your heart valves?", "…your hands?") in batches as large as the
env allows, optionally drills into the children of the broad terms affirmed
(``drill=True``), then ranks the referral plus the specific findings the
patient named (``broad=True`` adds the broad terms it affirmed, which dilutes
the ranking: on 300 validation cases top-3 0.250 against 0.337) and answers
the top ``k``. It reads only its own chat, so it is a legal policy.

Before the patient answered as a person does
(:mod:`~agentenv.envs.rare_disease.dialogue.patient_answers`), this sweep revealed
99.4% of the hidden findings and beat every honest scripted doctor.
``benchmarks/asking_doctor.py`` and ``tests/envs/rare_disease/test_asking.py``
hold it to not beating the best honest one, under every reward preset.

Example (not run: it needs the KB):

    doctor = BlindSweepDoctor(kb, ask_with="ask_patient", batch=32)   # RareDiseaseDiagnosis-v0
    doctor = BlindSweepDoctor(kb)                                     # DiagnosisDialogue-v0: 20 per message
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from agentenv.corpora.hpo.knowledge_base import HpoKnowledgeBase
from agentenv.engine.actions import answer, tool_call, tool_calls
from agentenv.envs.rare_disease.dialogue.patient_claims import (
    MAX_FINDINGS_PER_MESSAGE,
    Claim,
    reply_claims,
)
from agentenv.envs.rare_disease.dialogue.scripted_doctor import (
    ASK_WITH,
    referral_terms,
    tool_claims,
)
from agentenv.multiagent.policy_helpers import first_user_message, own_turns, say, tool_outputs

MAX_RANKED = 50
"""``rank_by_phenotypes`` takes at most this many terms."""


@lru_cache(maxsize=4)
def second_level_terms(kb: HpoKnowledgeBase) -> tuple[str, ...]:
    """The terms one level below the organ-system roots, sorted by id (157 in HPO 2025-01-16)."""
    roots = kb.organ_system_roots
    return tuple(sorted({c for r in roots for c in kb.children(r)} - set(roots)))


class BlindSweepDoctor:
    """Ask about every second-level HPO term, rank the referral plus what was affirmed, answer.

    Args:
        kb: the knowledge base (for the term list and for reading replies).
        k: how many diseases to answer.
        ask_with: ``"say"`` (one message per batch) or ``"ask_patient"`` (parallel calls).
        batch: findings per turn; default the patient's cap per message (20) or the tool-call cap
            per action (32).
        budget: the env's turn budget; two turns are kept for ranking and answering.
        drill: after the sweep, ask about the children of the affirmed broad terms while turns last.
        broad: rank the broad terms the patient affirmed too, not only the findings it named.
    """

    def __init__(
        self,
        kb: HpoKnowledgeBase,
        *,
        k: int = 3,
        ask_with: str = "say",
        batch: int | None = None,
        budget: int = 10,
        drill: bool = False,
        broad: bool = False,
    ) -> None:
        if ask_with not in ASK_WITH:
            raise ValueError(f"ask_with must be one of {ASK_WITH}, got {ask_with!r}")
        self.kb, self.k, self.ask_with, self.budget, self.drill, self.broad = (
            kb,
            k,
            ask_with,
            budget,
            drill,
            broad,
        )
        self.batch = batch or (MAX_FINDINGS_PER_MESSAGE if ask_with == "say" else 32)
        self.name = (
            "blind-sweep"
            + ("+drill" if drill else "")
            + ("+broad" if broad else "")
            + ("" if ask_with == "say" else "-tool")
        )

    def act(self, obs: str, info: Mapping[str, Any]) -> str:
        present, excluded = referral_terms(first_user_message(info))
        turns = own_turns(info)
        heard = [self._heard(info, i) for i in range(len(turns))]
        ranking = next(
            (
                out
                for outs in (tool_outputs(info, i) for i in range(len(turns)))
                for out in outs
                if isinstance(out, Mapping) and "ranking" in out
            ),
            None,
        )
        if ranking is not None:
            return answer([row["id"] for row in ranking["ranking"]][: self.k] or ["no diagnosis"])
        claims = [c for batch in heard for c in batch]
        batch = self._next_batch(claims, set(present) | set(excluded))
        if batch and len(turns) < self.budget - 2:
            if self.ask_with == "ask_patient":
                return tool_calls(("ask_patient", {"hpo_id": t}) for t in batch)
            return say(
                "Do you have any of these? "
                + "; ".join(f"{self.kb.term_name(t)} ({t})" for t in batch)
                + "?"
            )
        return tool_call(
            "rank_by_phenotypes", hpo_ids=self._evidence(present, claims)[:MAX_RANKED], k=self.k
        )

    def _heard(self, info: Mapping[str, Any], turn: int) -> tuple[Claim, ...]:
        """The claims the patient made in answer to the doctor's ``turn``-th action."""
        if self.ask_with == "ask_patient":
            return tool_claims(tool_outputs(info, turn))
        messages, turns = list(info.get("messages") or ()), own_turns(info)
        following = messages[turns[turn] + 1 : turns[turn + 1] if turn + 1 < len(turns) else None]
        reply = next((m for m in following if m.get("role") == "user"), None)
        return reply_claims(self.kb, str(reply.get("content") or ""), ()) if reply else ()

    def _plan(self, claims: list[Claim]) -> list[str]:
        """Every term this doctor asks about, in order: the sweep, then (``drill``) the children of
        the sweep terms affirmed so far."""
        sweep = second_level_terms(self.kb)
        if not self.drill:
            return list(sweep)
        swept = set(sweep)
        yes = [c.term for c in claims if c.polarity == "yes" and c.term in swept]
        return list(dict.fromkeys([*sweep, *(child for t in yes for child in self.kb.children(t))]))

    def _next_batch(self, claims: list[Claim], known: set[str]) -> list[str]:
        """The next terms of the plan not yet answered nor in the referral."""
        answered = {c.term for c in claims} | known
        return [t for t in self._plan(claims) if t not in answered][: self.batch]

    def _evidence(self, present: list[str], claims: list[Claim]) -> list[str]:
        """The referral, then the findings the patient named unasked-for by name (the details of a
        yes), then (``broad``) the planned terms it affirmed."""
        plan = set(self._plan(claims))
        yes = [c.term for c in claims if c.polarity == "yes"]
        named = [t for t in yes if t not in plan]
        broad = [t for t in yes if t in plan] if self.broad else []
        return list(dict.fromkeys([*present, *named, *broad]))
