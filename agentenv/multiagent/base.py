"""The shared machinery of the two-agent text dialogues, as a PettingZoo AEC env.

Why one base: both dialogues have the same shape. A *lead* agent (doctor,
assistant) has tools and ends the episode with an ``<answer>``; a *simulated
side* (patient, user) holds private facts and only talks. The step contract
is the single-agent one (:mod:`agentenv.core`) seen from each agent:

* **Turns.** The lead acts until it sends a ``<say>`` message; the simulated
  side then replies once, and the lead acts again. Tool calls, errors and
  messages each use one of the lead's ``max_turns``; replies use none. A
  family may let the simulated side open (``first``).
* **Questions.** A message is charged per item it asks about: modelled
  latency (:data:`SAY_LATENCY_MS` each) and, where the family sets
  ``item_tool_calls``, tool calls, so that a question costs in the dialogue
  what the single-agent tool it replaces costs under any reward that charges
  tool calls. A family may refuse a message it cannot pass on (too many
  items: :class:`SayRefused`); the refusal is an explained invalid action
  and the other side never reads it.
* **Reset** pins a task with ``options`` exactly as ``ToolEnv`` does
  (``task`` as a Task or a dict, ``task_id``, ``index``; at most one; any
  other key is ignored with a warning): one rule, :mod:`agentenv.engine.turns`.
* **Actions** are text, parsed by :mod:`agentenv.multiagent.messages`
  (``<say>``, ``<tool_call>``, ``<answer>``, optional ``<think>``). Anything
  unparseable is an error observation for the agent that sent it, with the
  reason in ``info["parse_error"]``; agent input never raises, and an action
  over the action space's ``max_length`` is refused unread. A non-``str``
  action for an agent still in play is the caller's bug: ``TypeError``. A
  reply that cannot be read reaches the lead as a note saying so.
* **Rewards.** The lead gets the family's graded components weighted by its
  :class:`~agentenv.rewards.config.RewardConfig` when the episode ends (or shaped
  costs per step, as ``ToolEnv``). Every message of the simulated side is
  judged at once by a rule-based checker (:class:`Judgment`) and rewarded
  1.0 when faithful, else 0.0.
* **End.** An answer terminates both agents; the lead's spent budget
  truncates both. Each agent then takes PettingZoo's one ``None`` step; any
  other action there raises ``ValueError`` before anything changes, as in
  PettingZoo's own envs (``AECEnv._was_dead_step``): it is the caller's bug,
  not agent text.
* ``info`` per agent: ``messages`` (OpenAI chat format, from that agent's
  side), ``tools``, ``turn``, ``task_id``, ``split``, ``reward_components``
  (filled at the end), ``parse_error``; the simulated side also gets
  ``private`` (its facts, structured, for scripted policies) and
  ``judgment`` (the checker's counts on its last message; ``{}`` before it
  speaks). ``gold`` appears only after the end. Infos are the caller's:
  gold and private facts are copies, and messages are read-only.

A family subclasses :class:`DialogueEnv` and fills the hooks marked below. The
lead's turns (taking an action through the single-agent step path,
:func:`~agentenv.engine.turns.take_action`, with its tools, chat messages and
behaviour components) are the shared engine's, :mod:`agentenv.engine.turns`, so they
follow the single-agent rules to the letter; only a ``<say>`` is the
dialogue's own. The constructor options are checked as ``ToolEnv`` checks them
(:func:`~agentenv.engine.env_options.check_env_options`). The family's per-episode state is
the context its ``_start_episode(task)`` returns: the engine hands it to the
hooks that read or update it, and keeps it in ``Dialogue.context``, so a family
keeps no episode state on the env.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Literal

from gymnasium.utils import seeding
from pettingzoo import AECEnv

from agentenv.core import Task, copy_plain, render_transcript
from agentenv.engine.env_options import check_env_options
from agentenv.engine.frozen import MessageLog
from agentenv.engine.parsing import Answer, ParseError, printable
from agentenv.engine.spaces import Text
from agentenv.engine.tools import ToolRegistry
from agentenv.engine.turns import (
    BEHAVIOUR_COMPONENTS,
    TaskChooser,
    assistant_message,
    behaviour_components,
    cost_counts,
    record_invalid,
    take_action,
)
from agentenv.multiagent.dialogue_state import (
    Dialogue,
    Judgment,
    TextObservation,
    speaker_components,
)
from agentenv.multiagent.messages import Say, lead_expected, parse_lead, parse_speaker
from agentenv.multiagent.policy_helpers import PolicyLike
from agentenv.rewards.config import RewardConfig, check_reported_components, resolve_reward

__all__ = ["SAY_LATENCY_MS", "DialogueEnv", "Judgment", "SayRefused"]

SAY_LATENCY_MS = 2000.0
"""Modelled latency of one finding or detail asked of the other side (as ``ask_patient``)."""


class SayRefused(Exception):
    """Raised by a family's ``_heard`` for a message the other side will not take (e.g. too many
    questions at once), before it changes any state. Its text is the reason the lead reads; the
    message counts as an invalid action (``info["parse_error"]``) and is never passed on."""


class DialogueEnv(AECEnv[str, str, str]):
    """Base AEC env of a lead agent and a simulated side; see the module docstring."""

    metadata: ClassVar[dict[str, Any]] = {
        "render_modes": ["ansi", "human"],
        "name": "Dialogue",
        "is_parallelizable": False,
    }
    lead: ClassVar[str] = "lead"
    other: ClassVar[str] = "other"
    first: ClassVar[str] = "lead"
    item_tool_calls: ClassVar[int] = 0
    """Tool calls charged per item a message asks about (at least one item per message): 1 where
    the single-agent env answers each item with one tool call (rare disease's ``ask_patient``), so
    a flood of questions in one message costs what the same questions cost as tool calls."""

    def __init__(
        self,
        tasks: Sequence[Task],
        tools: ToolRegistry,
        *,
        split: str,
        max_turns: int = 10,
        reward: Any = None,
        observation_mode: Literal["message", "transcript"] = "message",
        max_action_length: int = 32_768,
        max_observation_length: int = 262_144,
        render_mode: str | None = None,
    ) -> None:
        super().__init__()
        check_env_options(
            max_turns=max_turns,
            observation_mode=observation_mode,
            max_action_length=max_action_length,
            max_observation_length=max_observation_length,
            render_mode=render_mode,
            render_modes=self.metadata["render_modes"],
            tasks=tasks,
            split=split,
        )
        self.tasks, self.tools, self.split = tasks, tools, split
        self.max_turns = max_turns
        self.reward_config: RewardConfig = resolve_reward(reward)
        graded = self._graded_components()
        if (
            graded is not None
        ):  # a reward reading what this env never reports fails now, not at an episode's end
            check_reported_components(
                self.reward_config,
                graded | BEHAVIOUR_COMPONENTS | {"messages"},
                type(self).__name__,
            )
        self.observation_mode, self.render_mode = observation_mode, render_mode
        self.possible_agents = [self.lead, self.other]
        self.agents: list[str] = []
        self._action_spaces = {a: Text(max_action_length) for a in self.possible_agents}
        self._observation_spaces = {a: Text(max_observation_length) for a in self.possible_agents}
        self.np_random, self._np_random_seed = seeding.np_random(None)
        self._seeded = False
        self._chooser = TaskChooser()
        self._dialogue: Dialogue | None = None
        self.judgments: list[Judgment] = []
        """The checker's verdicts on the simulated side's messages this episode, in order."""

    # ------------------------------------------------------------------ hooks
    def _lead_system(self) -> str:
        """The lead's system message: its role, tools, turn budget and answer rules."""
        raise NotImplementedError

    def _lead_opening(self, task: Task) -> str | None:
        """The lead's first observation, or None when the simulated side opens."""
        raise NotImplementedError

    def _start_episode(self, task: Task) -> Any:
        """The family's per-episode state (the context), drawn with ``self.np_random`` only.

        Raise ``ValueError`` for a task this dialogue cannot play.
        """
        return None

    def _other_briefing(self, task: Task, context: Any) -> str:
        """The simulated side's private facts and rules, in words (its system message)."""
        raise NotImplementedError

    def _other_private(self, context: Any) -> dict[str, Any]:
        """The same facts, structured, for scripted policies (``info["private"]``)."""
        raise NotImplementedError

    def _heard(self, text: str, context: Any) -> int:
        """The lead said ``text`` to the simulated side; return how many items it asks about.

        Raise :class:`SayRefused` (before changing ``context``) to refuse the message.
        """
        return 1

    def _judge(self, text: str | None, context: Any) -> Judgment:
        """Judge a message of the simulated side (None: it could not be read)."""
        raise NotImplementedError

    def _grade(self, task: Task, answer: Answer | None, dialogue: Dialogue) -> dict[str, float]:
        """The lead's task components; a pure function of the task, the answer and the dialogue."""
        raise NotImplementedError

    def _graded_components(self) -> frozenset[str] | None:
        """The names :meth:`_grade` reports (None: not declared, and the reward is not checked)."""
        return None

    def _task_from_dict(self, data: Mapping[str, Any]) -> Task:
        """Build a task from a user dict given as ``options={"task": {...}}``."""
        raise TypeError(
            f"{type(self).__name__} builds no tasks from dicts: pass options={{'task': Task}}"
        )

    def default_policy(self, agent: str) -> PolicyLike:
        """The scripted policy of a simulated agent (a family's scripted patient or user)."""
        raise NotImplementedError

    def scripted_leads(self) -> dict[str, PolicyLike]:
        """The family's scripted lead baselines by name, ``answer-at-once`` and ``asking``
        (:mod:`agentenv.multiagent.compare` prints one against the other)."""
        raise NotImplementedError(f"{type(self).__name__} defines no scripted lead baselines")

    def probe_policy(self, dialogue: int) -> PolicyLike:
        """The lead-side probe of ``simulator_check``'s dialogue number ``dialogue``: it asks the
        simulated side questions (varied with ``dialogue``) so its replies can be checked."""
        raise NotImplementedError(f"{type(self).__name__} defines no simulator probe")

    # ---------------------------------------------------------------- spaces
    def observation_space(self, agent: str) -> Text:
        return self._observation_spaces[agent]

    def action_space(self, agent: str) -> Text:
        return self._action_spaces[agent]

    @property
    def task(self) -> Task | None:
        """The current task, gold included: for harnesses and privileged scripts, never a policy."""
        return self._dialogue.task if self._dialogue else None

    # -------------------------------------------------------------- contract
    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        if seed is not None or not self._seeded:
            self.np_random, self._np_random_seed = seeding.np_random(seed)
            self._seeded = True
        task = self._chooser.choose(
            self.tasks, options, self.np_random, split=self.split, from_dict=self._task_from_dict
        )
        context = self._start_episode(task)
        briefing = self._other_briefing(task, context)
        lead_chat = MessageLog([{"role": "system", "content": self._lead_system()}])
        other_chat = MessageLog([{"role": "system", "content": briefing}])
        d = self._dialogue = Dialogue(
            task=task,
            messages=lead_chat,
            context=context,
            chats={self.lead: lead_chat, self.other: other_chat},
            last={self.lead: "", self.other: briefing},
        )
        self.judgments = []
        opening = self._lead_opening(task)
        if opening is not None:
            lead_chat.append({"role": "user", "content": opening})
            d.last[self.lead] = opening
        else:
            kickoff = f"Start the conversation: tell the {self.lead} what you need."
            other_chat.append({"role": "user", "content": kickoff})
            d.last[self.other] = f"{briefing}\n\n{kickoff}"
        self.agents = list(self.possible_agents)
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: self._info(a, {}) for a in self.agents}
        self.agent_selection = self.first

    def observe(self, agent: str) -> TextObservation:
        d = self._dialogue
        if d is None:
            raise RuntimeError("call reset() before observe()")
        text = (
            render_transcript(d.chats[agent])
            if self.observation_mode == "transcript"
            else d.last[agent]
        )
        return TextObservation(text[: self._observation_spaces[agent].max_length])

    def step(self, action: str | None) -> None:
        if self._dialogue is None or not self.agents:
            raise RuntimeError("call reset() before step(), and again after the dialogue ends")
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            if (
                action is not None
            ):  # PettingZoo's rule (AECEnv._was_dead_step); checked first, so nothing changes
                ended = "terminated" if self.terminations[agent] else "truncated"
                raise ValueError(
                    f"the {agent} is done ({ended}): when an agent is dead, the only valid action is None; "
                    f"step it with None (got {type(action).__name__})"
                )
            self._was_dead_step(None)
            return
        if not isinstance(action, str):
            raise TypeError(
                f"{type(self).__name__}.step takes the agent's text (str), got {type(action).__name__}; "
                "None is only for an agent that is done"
            )
        self._cumulative_rewards[agent] = 0.0
        for a in self.rewards:
            self.rewards[a] = 0.0
        extra = self._lead_step(action) if agent == self.lead else self._other_step(action)
        for a in self.agents:
            self.infos[a] = self._info(a, extra if a == agent else {})
        d = self._dialogue
        if not d.done and d.turn >= self.max_turns:
            self._finish(truncated=True)
        elif d.done:
            self._finish(truncated=False)
        self._accumulate_rewards()
        if d.done:
            self._deads_step_first()

    def render(self) -> str | None:
        d = self._dialogue
        text = "\n\n".join(f"{who.upper()}: {body.strip()}" for who, body in d.log) if d else ""
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        """Nothing to release: tools and corpora are read-only and shared."""

    def __str__(self) -> str:
        return str(self.metadata.get("name", type(self).__name__))

    # ------------------------------------------------------------- the turns
    def _lead_step(self, action: str) -> dict[str, Any]:
        d, lead, other = self._dialogue, self.lead, self.other
        d.turn += 1
        max_length = self._action_spaces[lead].max_length
        parsed = parse_lead(action, other, max_length)
        # the single-agent step path; a rejected call is answered in a user turn, as any invalid action here
        taken = take_action(d, action, parsed, self.tools, max_length, rejected_calls="user")
        if taken is None:  # a <say>: the engine's only unknown kind here
            return self._lead_says(action, parsed, max_length)
        observation, parse_error, results = taken
        d.last[lead] = observation
        if parse_error is not None:
            d.log += [(lead, printable(action, max_length)), (f"error to {lead}", observation)]
            return {"parse_error": parse_error}
        if d.answer is not None:
            d.done = True
            d.log.append((lead, f"<answer>{d.answer.text}</answer>"))
        else:
            for call, result in zip(parsed.calls, results, strict=True):
                d.log += [
                    (lead, f"{call.name}({json.dumps(call.arguments, ensure_ascii=False)})"),
                    (f"tool {result.name}", result.content),
                ]
        return self._shaped()

    def _lead_says(self, action: str, said: Say, max_length: int) -> dict[str, Any]:
        """The lead's message to the simulated side: refused by the family (an invalid action, never
        passed on), or counted, charged per item asked, and passed on."""
        d, lead, other = self._dialogue, self.lead, self.other
        try:
            items = max(1, self._heard(said.text, d.context))
        except SayRefused as refusal:
            error = ParseError(str(refusal), lead_expected(other))
            message = record_invalid(d, action, error, max_length)
            d.last[lead] = message
            d.log += [(lead, printable(action, max_length)), (f"error to {lead}", message)]
            return {"parse_error": error.reason}
        d.think_turns += said.reasoning is not None
        d.said += 1
        d.latency_ms += SAY_LATENCY_MS * items
        d.tool_calls += self.item_tool_calls * items
        d.messages.append(
            assistant_message(f"{said.content}\n<say>{said.text}</say>".lstrip(), said.reasoning)
        )
        d.chats[other].append({"role": "user", "content": said.text})
        d.last[other] = said.text
        d.log.append((lead, f"<say>{said.text}</say>"))
        self.agent_selection = other
        return self._shaped()

    def _shaped(self) -> dict[str, Any]:
        """Pay the lead its shaped costs after a turn that did not end the dialogue; no extra info."""
        d = self._dialogue
        if self.reward_config.shaping and not d.done:
            self.rewards[self.lead], d.paid = self.reward_config.step_reward(d.paid, cost_counts(d))
        return {}

    def _other_step(self, action: str) -> dict[str, Any]:
        d, lead, other = self._dialogue, self.lead, self.other
        d.other_turns += 1
        max_length = self._action_spaces[other].max_length
        parsed = parse_speaker(action, lead, other, max_length)
        text = printable(action, max_length)
        chat = d.chats[other]
        extra: dict[str, Any] = {}
        if isinstance(parsed, ParseError):
            d.other_invalid += 1
            chat += [
                {"role": "assistant", "content": text},
                {"role": "user", "content": parsed.message()},
            ]
            d.last[other] = parsed.message()
            note = f"(The {other} did not reply: their message could not be read.)"
            d.log += [(other, text), (f"error to {other}", parsed.message())]
            judgment = Judgment({**self._judge(None, d.context).counts, "invalid": 1})
            extra["parse_error"] = parsed.reason
        else:
            chat.append(
                assistant_message(
                    f"{parsed.content}\n<say>{parsed.text}</say>".lstrip(), parsed.reasoning
                )
            )
            d.last[other] = ""
            note = parsed.text
            d.log.append((other, parsed.text))
            judgment = self._judge(parsed.text, d.context)
        self.judgments.append(judgment)
        d.judged.update(judgment.counts)
        d.judged["faithful"] += judgment.faithful
        self.rewards[other] = float(judgment.faithful)
        d.messages.append({"role": "user", "content": note})
        d.last[lead] = note
        self.agent_selection = lead
        return extra

    def _finish(self, *, truncated: bool) -> None:
        d = self._dialogue
        d.done = True
        task = d.task
        lead_components = {
            **self._grade(task, d.answer, d),
            **behaviour_components(d, self.reward_config.require_think),
            "messages": float(d.said),
        }
        reward, d.paid = self.reward_config.step_reward(d.paid, cost_counts(d), lead_components)
        self.rewards[self.lead] += reward
        other_components = speaker_components(d)
        for agent, components in ((self.lead, lead_components), (self.other, other_components)):
            self.terminations[agent], self.truncations[agent] = not truncated, truncated
            info = dict(self.infos[agent])
            info.update(reward_components=components, gold=copy_plain(task.gold))
            if agent == self.lead and d.answer_feedback is not None:
                info["answer_feedback"] = d.answer_feedback
            self.infos[agent] = info

    # --------------------------------------------------------------- helpers
    def _info(self, agent: str, extra: dict[str, Any]) -> dict[str, Any]:
        d = self._dialogue
        is_lead = agent == self.lead
        info: dict[str, Any] = {
            "turn": d.turn if is_lead else d.other_turns,
            "task_id": d.task.id,
            "split": d.task.split,
            "messages": list(d.chats[agent]),  # frozen messages: shared safely, no per-step copy
            "tools": self.tools.info_schemas if is_lead else [],
            "reward_components": {},
        }
        if is_lead:
            info["tool_calls"] = d.tool_calls
        else:
            info["private"] = copy.deepcopy(self._other_private(d.context))
            info["judgment"] = dict(self.judgments[-1].counts) if self.judgments else {}
        info.update(extra)
        return info
