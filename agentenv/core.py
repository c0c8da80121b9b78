"""The step contract shared by every agentenv task: ``ToolEnv`` and ``Task``.

A newcomer learns the whole contract here. An env is a
``gymnasium.Env[str, str]``: the action is the agent's raw text, the
observation is the next text it must read.

* ``reset(seed=, options=)``: ``options`` may pin a task with ``{"task": Task |
  dict}``, ``{"task_id": str}`` or ``{"index": int}`` (at most one; any other
  key is ignored with a warning, see :mod:`agentenv.engine.turns`); otherwise a task
  is drawn from the split with ``self.np_random``. The observation is the task
  prompt.
* ``step(text)``:
    - tool calls are validated and run; the observation is their output;
    - an answer is graded: ``terminated=True``, reward = the configured mix of
      ``info["reward_components"]``;
    - anything unparseable is an error observation saying what was wrong and
      what is expected; it counts as a turn and ``info["parse_error"]`` holds
      the reason. Agent input never raises, and an action longer than
      ``action_space.max_length`` is such an error, refused before it is read.
      A non-``str`` action is the caller's bug, not agent text: ``TypeError``;
    - a well-formed call to an unknown tool, or with invalid arguments, is such an
      error too, but the chat records it as a chat API would: the call in the
      assistant message, the error in a ``tool`` message (as TRL's multi-turn
      loop does, so rendered ids match a trainer's);
    - ``truncated=True`` when ``max_turns`` actions pass without an answer.
      A ``single_turn`` env has one action by definition: whatever it is, the
      episode *terminates* (an unparseable action is graded as no answer).
* ``info``: ``messages`` (OpenAI chat format), ``tools`` (OpenAI function
  schemas), ``turn``, ``tool_calls``, ``task_id``, ``split`` and
  ``reward_components`` (filled at the end). ``gold`` appears only after the
  episode ends. Every info is the caller's: messages are read-only
  (:mod:`agentenv.engine.frozen`), and gold is a copy (of a gold the family
  built read-only with ``freeze``, as MediaSearch does, a new top-level dict
  over the same read-only values), so no step can change another's.

A task family subclasses :class:`ToolEnv`, passes its tasks and tools to
``__init__`` and fills the hooks:

* ``_grade(task, answer, episode)`` (required): the task's components, at
  least ``accuracy``; a pure function of the task, the answer (``None`` when
  truncated) and the finished :class:`~agentenv.engine.turns.Episode`;
* ``_start_episode(task)``: the family's per-episode state (a consultation
  with a simulated patient, say), drawn with ``self.np_random`` only. The
  engine keeps it as ``episode.context`` and hands it to every tool that
  ``takes_context`` and to ``_grade``, so no family overrides ``reset`` or
  keeps episode state on the env;
* ``_task_prompt(task)``, ``_system_prompt()``: what the agent reads;
* ``_task_from_dict(data)``: a task from ``options={"task": {...}}``.

The turn itself (choosing the task, taking the action in one step path,
:func:`~agentenv.engine.turns.take_action`: running tools, the chat messages, the
behaviour components) is :mod:`agentenv.engine.turns`, and the constructor options
are checked by :func:`~agentenv.engine.env_options.check_env_options`; both are
shared with the dialogue envs of :mod:`agentenv.multiagent`.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any, ClassVar, Literal

import gymnasium as gym

from agentenv.engine.env_options import check_env_options
from agentenv.engine.frozen import FrozenDict, FrozenList, MessageLog
from agentenv.engine.lazy_seed import LazySeed
from agentenv.engine.parsing import Answer, parse_action
from agentenv.engine.spaces import Text
from agentenv.engine.task import Task
from agentenv.engine.tools import ToolRegistry
from agentenv.engine.turns import (
    BEHAVIOUR_COMPONENTS,
    Episode,
    TaskChooser,
    add_behaviour_components,
    cost_counts,
    record_answer,
    take_action,
)
from agentenv.rewards.config import (
    MissingComponent,
    RewardConfig,
    check_reported_components,
    resolve_reward,
)

__all__ = ["Episode", "Task", "ToolEnv", "copy_plain", "not_text", "render_transcript"]


class ToolEnv(LazySeed, gym.Env[str, str]):
    """Base env for tool-using agents; see the module docstring for the contract and the hooks.

    The attributes below are the contract harnesses rely on (the evaluation
    runner, SFT export, the oracle, the TRL adapter); a family sets them
    through ``__init__`` (and ``corpus_checksums`` after it).
    """

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["ansi", "human"], "render_fps": 1}

    tasks: Sequence[Task]
    """The split's tasks, in a fixed order: ``options={"index": i}`` pins ``tasks[i]``."""
    tools: ToolRegistry
    """The agent's tools; ``info["tools"]`` holds their OpenAI schemas."""
    reward_config: RewardConfig
    """How the components weigh into the scalar reward (a preset name or a config, resolved)."""
    corpus_checksums: Mapping[str, str] = MappingProxyType({})
    """Corpus name -> checksum of the data behind the tools and tasks, recorded with every
    evaluation so runs on different data are never compared; empty for a family without one."""

    def __init__(
        self,
        tasks: Sequence[Task],
        tools: ToolRegistry,
        *,
        split: str = "test",
        max_turns: int = 8,
        single_turn: bool = False,
        reward: Any = None,
        observation_mode: Literal["message", "transcript"] = "message",
        max_action_length: int = 32_768,
        max_observation_length: int = 262_144,
        render_mode: str | None = None,
    ) -> None:
        check_env_options(
            max_turns=max_turns,
            single_turn=single_turn,
            observation_mode=observation_mode,
            max_action_length=max_action_length,
            max_observation_length=max_observation_length,
            render_mode=render_mode,
            render_modes=self.metadata["render_modes"],
            tasks=tasks,
            split=split,
        )
        self.tasks = tasks
        self.tools = tools
        self.split = split
        self.single_turn = single_turn
        self.max_turns = 1 if single_turn else max_turns
        self.reward_config = resolve_reward(reward)
        self.observation_mode = observation_mode
        self.render_mode = render_mode
        self.action_space = Text(max_action_length)
        self.observation_space = Text(max_observation_length)
        self._chooser = TaskChooser()
        self._episode: Episode | None = None
        self._system_text: str | None = None

    # ------------------------------------------------------------------ hooks
    def _task_prompt(self, task: Task) -> str:
        """The user message that opens an episode."""
        return task.prompt

    def _system_prompt(self) -> str:
        """Instructions on tools and the answer format."""
        names = ", ".join(self.tools.names)
        return (
            f"You are a tool-using assistant. Tools: {names or 'none'}. Call a tool with "
            '<tool_call>{"name": ..., "arguments": {...}}</tool_call>; give the final answer as '
            f"<answer>...</answer>. You have at most {self.max_turns} turns."
        )

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Accept a family written for the earlier two-argument ``_grade(task, answer)`` hook.

        The engine calls ``_grade(task, answer, episode)``; a subclass whose ``_grade`` takes two
        arguments is adapted once, here, so it keeps working instead of failing with a ``TypeError``
        at its first graded step.
        """
        super().__init_subclass__(**kwargs)
        grade = cls.__dict__.get("_grade")
        if grade is not None and _positional_count(grade) == 3:  # self, task, answer

            def _grade(
                self: ToolEnv,
                task: Task,
                answer: Answer | None,
                episode: Episode,
                _two_argument: Any = grade,
            ) -> dict[str, float]:
                return _two_argument(self, task, answer)

            _grade.__doc__ = grade.__doc__
            _grade.__wrapped__ = grade  # type: ignore[attr-defined]
            cls._grade = _grade  # type: ignore[method-assign]

    def _start_episode(self, task: Task) -> Any:
        """The family's per-episode state for ``task`` (``episode.context``); None by default."""
        return None

    def _grade(self, task: Task, answer: Answer | None, episode: Episode) -> dict[str, float]:
        """Task components, at least ``accuracy``; ``answer`` is None when truncated.

        A pure function of its arguments: per-episode state is ``episode.context``.
        """
        raise NotImplementedError

    def _graded_components(self) -> frozenset[str] | None:
        """The names ``_grade`` reports, when the family declares them (None: not declared, not checked)."""
        return None

    def check_reward_components(self) -> None:
        """Refuse, when the env is made, a reward that reads a component this env never reports.

        A family that declares its graded components (``_graded_components``) calls this at the
        end of its ``__init__``; otherwise the reward would fail with a ``KeyError`` at the first
        episode's end. ``tokens`` is left to :class:`~agentenv.tokens.TokenEnv`, which reports it.
        """
        graded = self._graded_components()
        if graded is not None:
            check_reported_components(
                self.reward_config, graded | BEHAVIOUR_COMPONENTS, type(self).__name__
            )

    def _task_from_dict(self, data: Mapping[str, Any]) -> Task:
        """Build a task from a user dict given as ``options={"task": {...}}``."""
        raise TypeError(
            f"{type(self).__name__} builds no tasks from dicts: pass options={{'task': Task}}"
        )

    # --------------------------------------------------------------- contract
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        self.seed_lazily(seed)  # the generator is built on the first draw (engine/lazy_seed.py)
        task = self._chooser.choose(
            self.tasks,
            options,
            self.draw_generator,
            split=self.split,
            from_dict=self._task_from_dict,
        )
        context = self._start_episode(task)
        prompt = self._task_prompt(task)
        if self._system_text is None:
            self._system_text = self._system_prompt()
        messages = [
            {"role": "system", "content": self._system_text},
            {"role": "user", "content": prompt},
        ]
        self._episode = Episode(task=task, messages=MessageLog(messages), context=context)
        return self._observe(prompt), self._info()

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        ep = self._episode
        if ep is None or ep.done:
            raise RuntimeError("call reset() before step(), and again after an episode ends")
        if not isinstance(action, str):
            raise TypeError(not_text(f"{type(self).__name__}.step", action))
        ep.turn += 1
        max_length = self.action_space.max_length
        parsed = parse_action(action, max_length)
        if type(parsed) is Answer:
            # The usual last action, kept as take_action keeps it: an answer ends the episode, with
            # no error and an empty observation, so none of that is worked out below.
            record_answer(ep, parsed)
            info = self._info()
            reward = self._end(ep, info)
            obs = self._observe("") if self.observation_mode == "transcript" else ""
            return obs, float(reward), True, False, info
        obs, parse_error, _ = take_action(ep, action, parsed, self.tools, max_length)
        terminated = (
            self.single_turn or ep.answer is not None
        )  # an answer is the one action that ends
        truncated = not terminated and ep.turn >= self.max_turns
        info = self._info()
        if parse_error is not None:
            info["parse_error"] = parse_error
        reward = 0.0
        if terminated or truncated:
            reward = self._end(ep, info)
        elif self.reward_config.shaping:
            reward, ep.paid = self.reward_config.step_reward(ep.paid, cost_counts(ep))
        if self.observation_mode == "transcript" or len(obs) > self.observation_space.max_length:
            obs = self._observe(obs)
        return obs, float(reward), terminated, truncated, info

    def _end(self, ep: Episode, info: dict[str, Any]) -> float:
        """End the episode: its components, feedback and gold into ``info``; returns the last reward."""
        ep.done = True
        rewards = self.reward_config
        # A copy of the graded components (a family may return the same dict every time), then
        # the behaviour components.
        components = dict(self._grade(ep.task, ep.answer, ep))
        add_behaviour_components(components, ep, rewards.require_think)
        info["reward_components"] = components
        if ep.answer_feedback is not None:
            info["answer_feedback"] = ep.answer_feedback
        gold = ep.task.gold
        # A copy, so the task's own object stays as it was: of a gold built read-only throughout
        # only the top (the inside is shared, as messages are), of any other the whole.
        info["gold"] = gold.copy() if type(gold) is FrozenDict else copy_plain(gold)
        # The last step's reward reads the components, not the running counts; without
        # shaping it is what step_reward returns, one call shorter.
        try:
            if rewards.shaping:
                reward, ep.paid = rewards.step_reward(ep.paid, _NO_COUNTS, components)
                return reward
            return rewards.combine(components)
        except MissingComponent as err:
            if self._graded_components() is not None:
                raise
            raise MissingComponent(
                f"{type(self).__name__}, reward {rewards.name!r}: {err}. Choose a reward for this "
                "env; its family can have such a reward refused when the env is made by declaring "
                "_graded_components() and calling self.check_reward_components() (docs/new-family.md)"
            ) from None

    def render(self) -> str | None:
        text = render_transcript(self._episode.messages) if self._episode else ""
        if self.render_mode == "human":
            print(text)
            return None
        return text

    @property
    def task(self) -> Task | None:
        """The current episode's task (with its gold): for harnesses and oracles, never the policy."""
        return self._episode.task if self._episode else None

    # ---------------------------------------------------------------- helpers
    def _observe(self, text: str) -> str:
        if self.observation_mode == "transcript" and self._episode is not None:
            text = render_transcript(self._episode.messages)
        return text[: self.observation_space.max_length]

    def _info(self) -> dict[str, Any]:
        """The info of the current state; ``messages`` is a new list of the read-only messages
        (no copy of any message), ``tools`` the registry's one read-only list."""
        ep = self._episode
        return {
            "turn": ep.turn,
            "tool_calls": ep.tool_calls,
            "task_id": ep.task.id,
            "split": ep.task.split,
            "messages": list(ep.messages),
            "tools": self.tools.info_schemas,
            "reward_components": {},
        }


def not_text(where: str, action: object) -> str:
    """Why a non-``str`` action is a caller's bug (raised as ``TypeError``), not agent text to charge."""
    return (
        f"{where} takes the agent's text (str), got {type(action).__name__}; "
        "for token ids wrap the env in agentenv.tokens.TokenEnv"
    )


def copy_plain(value: Any) -> Any:
    """A deep copy of JSON-like data (dicts, lists, scalars) at about a third of ``copy.deepcopy``'s
    cost, made of plain, editable ``dict`` and ``list`` objects (read-only ones from
    :mod:`agentenv.engine.frozen` included); anything else goes through ``copy.deepcopy``. For a
    gold that is not read-only, copied at every episode end.

    Example:
        >>> from agentenv.engine.frozen import freeze
        >>> gold = freeze({"answer": "Heat", "aliases": ["tt0113277"]})
        >>> copied = copy_plain(gold)
        >>> copied == gold, type(copied).__name__, type(copied["aliases"]).__name__
        (True, 'dict', 'list')
    """
    kind = type(value)
    # Leaves and flat lists are copied in place, without a call each (golds are small).
    if kind in _DICTS:
        copied = {}
        for k, v in value.items():
            inner = type(v)
            if inner in _IMMUTABLE:
                copied[k] = v
            elif inner in _LISTS:
                copied[k] = [x if type(x) in _IMMUTABLE else copy_plain(x) for x in v]
            else:
                copied[k] = copy_plain(v)
        return copied
    if kind in _LISTS:
        return [v if type(v) in _IMMUTABLE else copy_plain(v) for v in value]
    if kind in _IMMUTABLE:
        return value
    return copy.deepcopy(value)


_IMMUTABLE = frozenset((str, int, float, bool, type(None)))
_DICTS = frozenset((dict, FrozenDict))
_LISTS = frozenset((list, FrozenList))
_NO_COUNTS: Mapping[str, float] = MappingProxyType({})


def render_transcript(messages: Sequence[Mapping[str, Any]]) -> str:
    """A plain-text rendering of the conversation, for humans and non-LLM agents."""
    lines = []
    for m in messages:
        role = m["role"].upper() if m["role"] != "tool" else f"TOOL {m.get('name', '')}".rstrip()
        body = [m.get("content") or ""]
        body.extend(
            f"\n-> {c['function']['name']}({c['function']['arguments']})"
            for c in m.get("tool_calls", ())
        )
        lines.append(f"{role}: {''.join(body).strip()}")
    return "\n\n".join(lines)


def _positional_count(function: Any) -> int | None:
    """How many positional parameters ``function`` takes (None when it takes ``*args``)."""
    import inspect

    try:
        params = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return None
    if any(p.kind is p.VAR_POSITIONAL for p in params):
        return None
    return sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params)
