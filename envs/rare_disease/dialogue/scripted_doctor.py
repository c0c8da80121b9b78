"""Scripted doctors of ``DiagnosisDialogue-v0``: one answers at once, one asks the patient first.

Why: the dialogue claims that talking to the patient pays. These baselines
test that claim on the same seeds with no learning involved, and the asking
doctor doubles as the probe of ``simulator-check``. Neither reads the gold:
each sees only its own chat (``info["messages"]``), so each is a legal policy.

They are stateless: the stage is the number of the doctor's own turns so far,
and everything else is read back from the chat, so they need no ``reset``.

* :class:`AnswerAtOnceDoctor`: ``rank_by_phenotypes`` on the referral's
  present terms, answer its top k.
* :class:`AskingDoctor`: rank, read the top ``candidates`` profiles
  (``get_disease``), ask the patient in one message about up to ``questions``
  of their frequent findings not in the referral (round-robin over
  candidates), re-rank with the findings the patient affirms, move each read
  candidate up ``evidence`` places per frequent finding of its profile that
  the patient affirmed and down as much per denied one, answer the top k.
  (Defaults tuned on 300 validation cases: 20 questions over 10 candidates.)
  ``ask_with="ask_patient"`` plays the same doctor in ``RareDiseaseDiagnosis-v0``:
  the questions are parallel ``ask_patient`` calls and the answers are read
  from their outputs, so the two envs can be compared doctor for doctor.

The blind sweep, a policy that knows nothing of the case, is in
:mod:`~agentenv.envs.rare_disease.dialogue.blind_sweep`.

Example:
    >>> referral_terms("Present phenotypes:\\n- HP:0000001 A\\n\\nExcluded phenotypes:\\n- HP:0000002 B")
    (['HP:0000001'], ['HP:0000002'])
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from agentenv.corpora.hpo.knowledge_base import HpoKnowledgeBase
from agentenv.engine.actions import answer, tool_call, tool_calls
from agentenv.envs.rare_disease.dialogue.patient_claims import (
    MAX_FINDINGS_PER_MESSAGE,
    Claim,
    reply_claims,
)
from agentenv.multiagent.policy_helpers import first_user_message, own_turns, say, tool_outputs

FREQUENT = ("obligate", "very frequent", "frequent")
RERANK = 20
"""Candidates the asking doctor re-ranks after the patient's answers."""
ASK_WITH = ("say", "ask_patient")
"""How a scripted doctor asks: a ``<say>`` message (the dialogue) or ``ask_patient`` calls (single-agent)."""
_POLARITY = {"yes": "yes", "no": "no", "not sure": "unsure"}
_HPO = re.compile(r"HP:\d{7}")


def referral_terms(text: str) -> tuple[list[str], list[str]]:
    """The present and excluded HPO ids of a referral (``presentation="hpo"`` or ``"both"``)."""
    present, _, excluded = text.partition("Excluded phenotypes:")
    return list(dict.fromkeys(_HPO.findall(present))), list(dict.fromkeys(_HPO.findall(excluded)))


def tool_claims(outputs: Sequence[Any]) -> tuple[Claim, ...]:
    """The claims in ``ask_patient`` outputs: each answer, and every detail of a yes as a yes."""
    claims: list[Claim] = []
    for out in outputs:
        if not isinstance(out, Mapping) or out.get("answer") not in _POLARITY:
            continue
        claims.append(Claim(str(out.get("id")), _POLARITY[out["answer"]]))  # type: ignore[arg-type]
        claims += [
            Claim(str(d.get("id")), "yes") for d in out.get("details", []) if isinstance(d, Mapping)
        ]
    return tuple(dict.fromkeys(claims))


def _ranking(output: Any) -> list[str]:
    try:
        return [row["id"] for row in output["ranking"]]
    except (KeyError, TypeError):
        return []


class AnswerAtOnceDoctor:
    """Rank the referral's present terms and answer the top k, asking nothing."""

    name = "answer-at-once"

    def __init__(self, k: int = 3) -> None:
        self.k = k

    def act(self, obs: str, info: Mapping[str, Any]) -> str:
        present, _ = referral_terms(first_user_message(info))
        if not own_turns(info) and present:
            return tool_call("rank_by_phenotypes", hpo_ids=present, k=self.k)
        ranked = _ranking((tool_outputs(info, 0) or [None])[0])
        return answer(ranked[: self.k] or ["no diagnosis"])


class AskingDoctor:
    """Ask the patient about the top candidates' frequent findings before answering (see the module docstring)."""

    name = "asking"

    def __init__(
        self,
        kb: HpoKnowledgeBase,
        *,
        questions: int = 20,
        candidates: int = 10,
        k: int = 3,
        style: str = "ids",
        evidence: float = 2.0,
        ask_with: str = "say",
    ) -> None:
        if style not in ("ids", "names"):
            raise ValueError(f"style must be 'ids' or 'names', got {style!r}")
        if ask_with not in ASK_WITH:
            raise ValueError(f"ask_with must be one of {ASK_WITH}, got {ask_with!r}")
        if ask_with == "say" and not 1 <= questions <= MAX_FINDINGS_PER_MESSAGE:
            raise ValueError(
                f"questions must be 1..{MAX_FINDINGS_PER_MESSAGE} (the patient's cap per message), "
                f"got {questions}"
            )
        self.kb, self.questions, self.candidates, self.k, self.style = (
            kb,
            questions,
            candidates,
            k,
            style,
        )
        self.evidence, self.ask_with = evidence, ask_with
        self.name = "asking" if ask_with == "say" else "asking-tool"

    def act(self, obs: str, info: Mapping[str, Any]) -> str:
        present, excluded = referral_terms(first_user_message(info))
        stage = len(own_turns(info))
        first = _ranking((tool_outputs(info, 0) or [None])[0])
        if stage == 0 and present:
            return tool_call("rank_by_phenotypes", hpo_ids=present, k=self.candidates)
        if stage == 1 and first:
            return tool_calls(("get_disease", {"disease_id": d}) for d in first)
        if stage == 2:
            asked = self._pick(tool_outputs(info, 1), set(present) | set(excluded))
            if asked and self.ask_with == "ask_patient":
                return tool_calls(("ask_patient", {"hpo_id": term}) for term, _ in asked)
            if asked:
                shown = [
                    f"{label} ({term})" if self.style == "ids" else label for term, label in asked
                ]
                return say("Do you have any of these? " + "; ".join(shown) + "?")
        if stage == 3:
            found = [c.term for c in self._claims(info, present, excluded) if c.polarity == "yes"]
            return tool_call(
                "rank_by_phenotypes", hpo_ids=list(dict.fromkeys(present + found))[:50], k=RERANK
            )
        final = _ranking((tool_outputs(info, stage - 1) or [None])[0]) if stage else []
        return answer(
            self._reorder(final or first, info, present, excluded)[: self.k] or ["no diagnosis"]
        )

    def _claims(
        self, info: Mapping[str, Any], present: list[str], excluded: list[str]
    ) -> tuple[Any, ...]:
        """What the patient said in reply to the one question message (the last user message after it)."""
        turns = own_turns(info)
        if len(turns) < 3:
            return ()
        if self.ask_with == "ask_patient":
            return tool_claims(tool_outputs(info, 2))
        messages = list(info["messages"])
        replies = [m for m in messages[turns[2] + 1 :] if m.get("role") == "user"]
        asked = [t for t, _ in self._pick(tool_outputs(info, 1), set(present) | set(excluded))]
        return reply_claims(self.kb, str(replies[0].get("content") or ""), asked) if replies else ()

    def _reorder(
        self, ranked: list[str], info: Mapping[str, Any], present: list[str], excluded: list[str]
    ) -> list[str]:
        """Re-sort by evidence: each read candidate moves up ``evidence`` places per affirmed frequent
        finding of its profile and down as much per denied one."""
        claims = self._claims(info, present, excluded)
        said = {c.term: c.polarity for c in claims if c.polarity != "unsure"}
        score: dict[str, int] = {}
        for profile in tool_outputs(info, 1):
            if isinstance(profile, Mapping) and "id" in profile:
                rows = [
                    r["id"]
                    for r in profile.get("phenotypes", [])
                    if str(r.get("frequency", "")).startswith(FREQUENT)
                ]
                score[profile["id"]] = sum(
                    (said.get(t) == "yes") - (said.get(t) == "no") for t in rows
                )
        return sorted(ranked, key=lambda d: ranked.index(d) - self.evidence * score.get(d, 0))

    def _pick(self, profiles: Sequence[Any], known: set[str]) -> list[tuple[str, str]]:
        """Up to ``questions`` (id, label) pairs: frequent unasked findings, round-robin over candidates."""
        queues = []
        for profile in profiles:
            rows = profile.get("phenotypes", []) if isinstance(profile, Mapping) else []
            queues.append(
                [
                    (r["id"], r["label"])
                    for r in rows
                    if str(r.get("frequency", "")).startswith(FREQUENT) and r["id"] not in known
                ]
            )
        picked: dict[str, str] = {}
        depth = 0
        while len(picked) < self.questions and any(depth < len(q) for q in queues):
            for queue in queues:
                if depth < len(queue) and len(picked) < self.questions:
                    picked.setdefault(*queue[depth])
            depth += 1
        return list(picked.items())
