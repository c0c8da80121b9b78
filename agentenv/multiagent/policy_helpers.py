"""Writing dialogue policies: the policy protocol, message actions, and reading one's own chat.

Why here: scripted simulators (a family's patient or user), scripted leads
(its doctors and assistants), probes and wrappers all turn ``(observation,
info)`` into action text, and all read the same things back from
``info["messages"]``. These helpers are generic; the scripted policies
themselves live with their families (``agentenv.envs.<family>``), and a
dialogue env hands them out through its ``default_policy``,
``scripted_leads`` and ``probe_policy`` hooks.

A policy is any callable ``(observation, info) -> str`` or any object with
``act(observation, info) -> str`` (an optional ``reset(obs, info, *, task,
rng)`` is called at each episode start by
:func:`~agentenv.multiagent.single_agent.as_single_agent`). Scripted policies
should be pure functions of ``(observation, info)``, so that they are
deterministic given the env's seed.

Example:
    >>> say("Yes.")
    '<say>Yes.</say>'
    >>> act_with(lambda obs, info: say(obs.upper()), "no", {})
    '<say>NO</say>'
    >>> chat = {"messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "hi"},
    ...                      {"role": "assistant", "content": ""}, {"role": "tool", "content": '{"x": 1}'}]}
    >>> own_turns(chat), first_user_message(chat), tool_outputs(chat, 0)
    ([2], 'hi', [{'x': 1}])
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any, Protocol, runtime_checkable

_THINK = re.compile(r"<think>.*?</think>", re.DOTALL)
_ACTION_TAGS = ("<tool_call>", "<answer>")


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


def own_turns(info: Mapping[str, Any]) -> list[int]:
    """Positions of the agent's own (assistant) messages in its chat: one per turn it took."""
    return [i for i, m in enumerate(info.get("messages") or ()) if m.get("role") == "assistant"]


def first_user_message(info: Mapping[str, Any]) -> str:
    """The first message the agent read (a referral, a user's opening)."""
    return next(
        (
            str(m.get("content") or "")
            for m in info.get("messages") or ()
            if m.get("role") == "user"
        ),
        "",
    )


def tool_outputs(info: Mapping[str, Any], turn: int) -> list[Any]:
    """Parsed outputs of the tool calls of the agent's ``turn``-th action (0-based); None for one
    that is not JSON."""
    messages, turns = list(info.get("messages") or ()), own_turns(info)
    if turn >= len(turns):
        return []
    out = []
    for m in messages[turns[turn] + 1 :]:
        if m.get("role") != "tool":
            break
        try:
            out.append(json.loads(m["content"]))
        except (ValueError, KeyError, TypeError):
            out.append(None)
    return out


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
