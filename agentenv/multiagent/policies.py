"""The scripted simulated sides: the default patient and the default user.

Why scripted defaults: a dialogue env needs a simulated side that is cheap,
deterministic and *provably* truthful, so that a learned doctor or assistant
is measured against the task and not against simulator noise, and so that an
LLM simulator can be compared with it (``agentenv simulator-check``).

* :class:`ScriptedPatient` answers with the single-agent ``ask_patient`` logic
  itself (:func:`agentenv.envs.rare_disease.patients.ask`), so the two envs
  can never disagree about a patient. Replies are canonical and checkable,
  one line per finding asked about: ``Yes, I have <lay label> (<id>)[, in
  particular <finding> (<id>) …].``, ``No, I don't have <lay label> (<id>).``
  or ``I'm not sure about <lay label> (<id>).``
* :class:`ScriptedUser` opens with the vague request the env drew and reveals
  a held-back constraint when the assistant's message asks about its field
  (:func:`~agentenv.multiagent.media_requests.fields_asked`).

Both are pure functions of ``(observation, info)``: they read the other
agent's last message from ``info["messages"]`` and their facts from
``info["private"]``, so they are deterministic given the env's seed.

A policy is any callable ``(observation, info) -> str`` or any object with
``act(observation, info) -> str`` (an optional ``reset(obs, info, *, task,
rng)`` is called at each episode start by
:func:`~agentenv.multiagent.single_agent.as_single_agent`).

Example:
    >>> say("Yes.")
    '<say>Yes.</say>'
    >>> act_with(lambda obs, info: say(obs.upper()), "no", {})
    '<say>NO</say>'
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any, Protocol, runtime_checkable

from agentenv.corpora.hpo import HpoKnowledgeBase
from agentenv.envs.rare_disease.lay_text import join_phrases, lay_label, sentence_case
from agentenv.envs.rare_disease.patients import AskAnswer, Patient, ask
from agentenv.multiagent.media_requests import Request, fields_asked, reveal
from agentenv.multiagent.patient_claims import asked_terms

_THINK = re.compile(r"<think>.*?</think>", re.DOTALL)
_ACTION_TAGS = ("<tool_call>", "<answer>")
NOT_UNDERSTOOD_PATIENT = "I'm not sure what you are asking about. Could you ask me about a specific symptom?"
NOT_UNDERSTOOD_USER = (
    "I'm not sure what you mean. You can ask me about the release year, the genre, the director, "
    "the cast or the running time."
)


@runtime_checkable
class Policy(Protocol):
    """An agent that turns what it sees into action text."""

    def act(self, obs: str, info: Mapping[str, Any]) -> str:
        """Return the next action text."""
        ...


PolicyLike = Policy | Callable[[str, Mapping[str, Any]], str]


def act_with(policy: PolicyLike, obs: str, info: Mapping[str, Any]) -> Any:
    """Call a policy object's ``act`` or a plain callable."""
    act = getattr(policy, "act", None)
    return act(obs, info) if callable(act) else policy(obs, info)  # type: ignore[operator]


def say(text: str) -> str:
    """A message action: ``<say>text</say>``."""
    return f"<say>{text}</say>"


def last_heard(obs: str, info: Mapping[str, Any]) -> str:
    """The other agent's last message: the last user message of the chat, else the observation."""
    for message in reversed(info.get("messages") or ()):
        if message.get("role") == "user":
            return str(message.get("content") or "")
    return obs


def patient_of(private: Mapping[str, Any]) -> Patient:
    """The record in ``info["private"]`` as a :class:`Patient` (the diagnosis is not part of it)."""
    return Patient(
        disease_id="",
        present=tuple(private["present"]),
        hidden=tuple(private["hidden"]),
        excluded=tuple(private["excluded"]),
        findings=tuple(private["findings"]),
        closed_world=bool(private["closed_world"]),
    )


def spoken(kb: HpoKnowledgeBase, term: str) -> str:
    """How the patient names a term: its lay wording and, for checkability, its id."""
    return f"{sentence_case(lay_label(kb, term))} ({term})"


def answer_line(kb: HpoKnowledgeBase, reply: AskAnswer) -> str:
    """One canonical line for one :class:`~agentenv.envs.rare_disease.patients.AskAnswer`."""
    named = spoken(kb, reply.term_id)
    if reply.answer == "yes":
        details = [spoken(kb, t) for t in reply.revealed if t != reply.term_id]
        more = f", in particular {join_phrases(details)}" if details else ""
        return f"Yes, I have {named}{more}."
    if reply.answer == "no":
        return f"No, I don't have {named}."
    return f"I'm not sure about {named}."


class SayWrapper:
    """Wrap a reply that has no ``<say>`` tags into one: an explicit, opt-in format repair.

    Why: a chat LLM used as a *simulator* often answers in plain text. Its
    format is not what is being measured (nothing is trained on it), so
    ``simulator-check`` wraps it by default; a learned patient or user is never
    wrapped. ``<think>`` blocks are dropped first; replies with tool or answer
    tags are left as they are, for the env to explain.

    Example:
        >>> SayWrapper(lambda obs, info: "<think>hm</think>Yes, I do.").act("", {})
        '<say>Yes, I do.</say>'
    """

    def __init__(self, policy: PolicyLike) -> None:
        self.policy = policy
        self.name = f"{getattr(policy, 'name', 'policy')}+say"

    def reset(self, obs: str, info: Mapping[str, Any], **kwargs: Any) -> None:
        reset = getattr(self.policy, "reset", None)
        if callable(reset):
            reset(obs, info, **kwargs)

    def act(self, obs: str, info: Mapping[str, Any]) -> Any:
        reply = act_with(self.policy, obs, info)
        if not isinstance(reply, str) or "<say>" in reply or any(t in reply for t in _ACTION_TAGS):
            return reply
        text = _THINK.sub("", reply).strip()
        return say(text) if text and "<think>" not in text and "</think>" not in text else reply


class ScriptedPatient:
    """The default patient: ``ask`` on its record, one canonical line per finding asked about."""

    name = "scripted-patient"

    def __init__(self, kb: HpoKnowledgeBase) -> None:
        self.kb = kb

    def act(self, obs: str, info: Mapping[str, Any]) -> str:
        patient = patient_of(info["private"])
        terms = asked_terms(self.kb, last_heard(obs, info))
        if not terms:
            return say(NOT_UNDERSTOOD_PATIENT)
        return say("\n".join(answer_line(self.kb, ask(self.kb, patient, t)) for t in terms))


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
