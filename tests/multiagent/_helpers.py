"""Test helpers: dialogue-shaped random actions, deliberately bad simulators, and rollouts."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from agentenv.engine.spaces import Text
from agentenv.envs.media_search.dialogue.film_requests import FIELDS, Request, reveal
from agentenv.envs.media_search.dialogue.scripted_user import ScriptedUser
from agentenv.envs.rare_disease.dialogue.scripted_patient import ScriptedPatient
from agentenv.multiagent.base import DialogueEnv
from agentenv.multiagent.policy_helpers import PolicyLike, act_with, say
from agentenv.multiagent.single_agent import as_single_agent

FRAGMENTS = (
    "<say>Do you have seizures (HP:0001250)?</say>",
    "<say>Do you have any of these? short stature; hypotonia; intellectual disability?</say>",
    "<say>When did it come out, and who directed it?</say>",
    "<say>Yes, I have seizures (HP:0001250).</say>",
    "<say>It came out in 1995. It's a comedy film.</say>",
    '<tool_call>{"name": "rank_by_phenotypes", "arguments": {"hpo_ids": ["HP:0001250"], "k": 3}}</tool_call>',
    '<tool_call>{"name": "search", "arguments": {"query": "Heat"}}</tool_call>',
    '<tool_call>{"name": "nope", "arguments": {}}</tool_call>',
    "<answer>OMIM:154700</answer>",
    "<answer>Heat</answer>",
    '{"answer": "x"}',
    "<think>hm</think>",
    "<say>",
    "</say>",
    "<think>",
    "plain words",
    "",
    "\u00e9\u2713",
)


class DialogueText(Text):
    """A Text space whose samples are dialogue-shaped: 1-3 fragments, so random play reaches every branch."""

    def sample(self, mask: Any = None, probability: Any = None) -> str:
        n = int(self.np_random.integers(1, 4))
        return "".join(FRAGMENTS[int(i)] for i in self.np_random.integers(len(FRAGMENTS), size=n))


def with_dialogue_actions(env: DialogueEnv) -> DialogueEnv:
    """The same env, sampling dialogue-shaped actions (``api_test`` samples from the action space)."""
    env._action_spaces = {a: DialogueText(32_768) for a in env.possible_agents}
    return env


class LyingPatient:
    """The scripted patient with every yes and no swapped, and a yes for what it is not sure about
    (patients live in an open world: most questions are about findings their record does not hold)."""

    name = "lying-patient"

    def __init__(self, kb: Any) -> None:
        self.inner = ScriptedPatient(kb)

    def act(self, obs: str, info: Mapping[str, Any]) -> str:
        text = self.inner.act(obs, info)
        return (
            text.replace("Yes, I have", "\0")
            .replace("No, I don't have", "Yes, I have")
            .replace("I'm not sure about", "Yes, I have")
            .replace("\0", "No, I don't have")
        )


class LeakyPatient:
    """A truthful patient that also names its diagnosis (it peeks at the task: a bad simulator)."""

    name = "leaky-patient"

    def __init__(self, kb: Any) -> None:
        self.inner, self.name_ = ScriptedPatient(kb), ""

    def reset(
        self, obs: str, info: Mapping[str, Any], *, task: Any, rng: np.random.Generator
    ) -> None:
        self.name_ = task.gold["name"]

    def act(self, obs: str, info: Mapping[str, Any]) -> str:
        return self.inner.act(obs, info).replace("</say>", f"\nI think I have {self.name_}.</say>")


class LeakyUser:
    """A truthful user that names the film it wants (it peeks at the task)."""

    name = "leaky-user"

    def __init__(self) -> None:
        self.inner, self.title = ScriptedUser(), ""

    def reset(
        self, obs: str, info: Mapping[str, Any], *, task: Any, rng: np.random.Generator
    ) -> None:
        self.title = task.gold["answer"]

    def act(self, obs: str, info: Mapping[str, Any]) -> str:
        return self.inner.act(obs, info).replace(
            "</say>", f" I think it is called {self.title}.</say>"
        )


def oversharing_user(obs: str, info: Mapping[str, Any]) -> str:
    """Says every constraint at once, held-back ones included (a plain callable policy)."""
    request = Request.from_dict(info["private"]["request"])
    return say(" ".join(reveal(request, f) for f in FIELDS if f in request.fields()))


def lying_user(obs: str, info: Mapping[str, Any]) -> str:
    """Shifts every year it states by 20."""
    text = ScriptedUser().act(obs, info)
    return "".join(
        str(int(w) + 20) if w.isdigit() and len(w) == 4 else w for w in _split_digits(text)
    )


def _split_digits(text: str) -> list[str]:
    out, current = [], ""
    for ch in text:
        if current and ch.isdigit() != current[-1].isdigit():
            out.append(current)
            current = ""
        current += ch
    return out + [current]


def rollout(
    env: DialogueEnv,
    lead: PolicyLike,
    indices: range,
    others: Mapping[str, PolicyLike] | None = None,
) -> list[dict]:
    """Run the lead policy on tasks ``indices`` (seed = index); the lead's final reward components."""
    single = as_single_agent(env, agent=env.lead, others=others)
    out = []
    for i in indices:
        obs, info = single.reset(seed=i, options={"index": i})
        done = False
        while not done:
            obs, _, terminated, truncated, info = single.step(act_with(lead, obs, info))
            done = terminated or truncated
        out.append(info["reward_components"])
    return out
