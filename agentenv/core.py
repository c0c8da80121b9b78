"""The step contract shared by every agentenv task: ``ToolEnv`` and ``Task``.

A newcomer learns the whole contract here. An env is a
``gymnasium.Env[str, str]``: the action is the agent's raw text, the
observation is the next text it must read.

* ``reset(seed=, options=)``: ``options`` may pin a task with ``{"task": Task |
  dict}``, ``{"task_id": str}`` or ``{"index": int}``; otherwise a task is drawn
  from the split with ``self.np_random``. The observation is the task prompt.
* ``step(text)``:
    - tool calls are validated and run; the observation is their output;
    - an answer is graded: ``terminated=True``, reward = the configured mix of
      ``info["reward_components"]``;
    - anything unparseable is an error observation saying what was wrong and
      what is expected; it counts as a turn and ``info["parse_error"]`` holds
      the reason. Agent input never raises, and an action longer than
      ``action_space.max_length`` is such an error, refused before it is read.
      A non-``str`` action is the caller's bug, not agent text: ``TypeError``;
    - ``truncated=True`` when ``max_turns`` actions pass without an answer.
      A ``single_turn`` env has one action by definition: whatever it is, the
      episode *terminates* (an unparseable action is graded as no answer).
* ``info``: ``messages`` (OpenAI chat format), ``tools`` (OpenAI function
  schemas), ``turn``, ``tool_calls``, ``task_id``, ``split`` and
  ``reward_components`` (filled at the end). ``gold`` appears only after the
  episode ends. Every info is the caller's: gold is a copy, and messages are
  read-only (:mod:`agentenv.frozen`), so no step can change another's.

A task family subclasses :class:`ToolEnv` and fills four hooks:
``_task_prompt``, ``_grade``, ``_task_from_dict`` and (optionally)
``_system_prompt``. Tools and tasks are passed to ``__init__``.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, ClassVar, Literal

import gymnasium as gym

from agentenv.frozen import MessageLog
from agentenv.parsing import Answer, ParseError, ToolCalls, parse_action, printable
from agentenv.rewards import RewardConfig, resolve_reward
from agentenv.spaces import Text
from agentenv.tools import ToolRegistry

# One encoder for the hot path: json.dumps with keyword arguments builds a new encoder per call.
_JSON = json.JSONEncoder(ensure_ascii=False)


class MessageKind(Enum):
    """What the env just said: the prompt, a tool result, an error, or the end."""

    PROMPT = "prompt"
    TOOL_RESULT = "tool_result"
    ERROR = "error"
    END = "end"


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

    def __post_init__(self) -> None:
        if not self.id:
            content = json.dumps([self.kind, self.prompt, self.public], sort_keys=True, default=str)
            digest = hashlib.sha256(content.encode("utf-8")).hexdigest()[:12]
            object.__setattr__(self, "id", f"task-{digest}")


@dataclass
class Episode:
    """Mutable per-episode state; one object, reset at every ``reset``."""

    task: Task
    messages: list[dict[str, Any]]
    turn: int = 0
    tool_calls: int = 0
    invalid_actions: int = 0
    tool_errors: int = 0
    think_turns: int = 0
    latency_ms: float = 0.0
    wall_ms: float = 0.0
    paid: float = 0.0
    answer: Answer | None = None
    done: bool = False


class ToolEnv(gym.Env[str, str]):
    """Base env for tool-using agents; see the module docstring for the contract."""

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["ansi", "human"], "render_fps": 1}
    family: ClassVar[str] = "tool"

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
        if observation_mode not in ("message", "transcript"):
            raise ValueError(f"observation_mode must be 'message' or 'transcript', got {observation_mode!r}")
        if not isinstance(max_turns, int) or max_turns < 1:
            raise ValueError(f"max_turns must be a positive int, got {max_turns!r}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']}, got {render_mode!r}")
        if not tasks:
            raise ValueError(f"no tasks in split {split!r}: pass tasks or choose another split")
        self.tasks = tasks
        self.tools = tools
        self.split = split
        self.single_turn = single_turn
        self.max_turns = 1 if single_turn else max_turns
        self.reward_config: RewardConfig = resolve_reward(reward)
        self.observation_mode = observation_mode
        self.render_mode = render_mode
        self.action_space = Text(max_action_length)
        self.observation_space = Text(max_observation_length)
        self._task_index: dict[str, int] | None = None
        self._episode: Episode | None = None
        self._system_text: str | None = None
        self._last_obs = ""

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

    def _grade(self, task: Task, answer: Answer | None) -> dict[str, float]:
        """Task components, at least ``accuracy``; ``answer`` is None when truncated."""
        raise NotImplementedError

    def _task_from_dict(self, data: Mapping[str, Any]) -> Task:
        """Build a task from a user dict given as ``options={"task": {...}}``."""
        raise NotImplementedError(f"{type(self).__name__} does not accept task dicts")

    # --------------------------------------------------------------- contract
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        super().reset(seed=seed)
        task = self._choose_task(options or {})
        prompt = self._task_prompt(task)
        if self._system_text is None:
            self._system_text = self._system_prompt()
        messages = [{"role": "system", "content": self._system_text}, {"role": "user", "content": prompt}]
        self._episode = Episode(task=task, messages=MessageLog(messages))
        return self._observe(prompt), self._info({})

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        ep = self._episode
        if ep is None or ep.done:
            raise RuntimeError("call reset() before step(), and again after an episode ends")
        if not isinstance(action, str):
            raise TypeError(not_text(f"{type(self).__name__}.step", action))
        ep.turn += 1
        parsed = parse_action(action, self.action_space.max_length)
        if isinstance(parsed, ToolCalls):
            validated = self.tools.validate(parsed)
            if isinstance(validated, ParseError):
                parsed = validated
        extra: dict[str, Any] = {}
        reward, terminated = 0.0, False
        if isinstance(parsed, ParseError):
            ep.invalid_actions += 1
            ep.messages.append({"role": "assistant", "content": printable(action, self.action_space.max_length)})
            obs = parsed.message()
            ep.messages.append({"role": "user", "content": obs})
            extra["parse_error"] = parsed.reason
        elif isinstance(parsed, Answer):
            ep.think_turns += parsed.reasoning is not None
            said = f"<answer>{parsed.text}</answer>"
            ep.messages.append(_assistant_message(f"{parsed.content}\n{said}".lstrip(), parsed.reasoning))
            ep.answer, terminated, obs = parsed, True, ""
        else:
            ep.think_turns += parsed.reasoning is not None
            call_ids = [f"call_{ep.turn}_{i}" for i in range(len(validated))]
            ep.messages.append(_assistant_message(parsed.content, parsed.reasoning, validated, call_ids))
            outputs = []
            for call_id, call in zip(call_ids, validated, strict=False):
                result = self.tools.execute(call.tool, call.args)
                ep.tool_calls += 1
                ep.tool_errors += not result.ok
                ep.latency_ms += call.tool.latency_ms
                ep.wall_ms += result.wall_ms
                ep.messages.append({"role": "tool", "tool_call_id": call_id, "name": result.name, "content": result.content})
                outputs.append(result)
            obs = outputs[0].content if len(outputs) == 1 else "\n\n".join(f"[{r.name}]\n{r.content}" for r in outputs)
        terminated = terminated or self.single_turn
        truncated = not terminated and ep.turn >= self.max_turns
        components = None
        if terminated or truncated:
            ep.done = True
            components = self._components(ep)
            extra["reward_components"] = components
            extra["gold"] = copy_plain(ep.task.gold)  # a copy: the task's own object stays as it was
        if components is not None or self.reward_config.shaping:
            counts = {"tool_calls": ep.tool_calls, "turns": ep.turn, "latency_ms": ep.latency_ms}
            reward, ep.paid = self.reward_config.step_reward(ep.paid, counts, components)
        return self._observe(obs), float(reward), terminated, truncated, self._info(extra)

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
    def _choose_task(self, options: Mapping[str, Any]) -> Task:
        unknown = set(options) - {"task", "task_id", "index"}
        if unknown or len(options) > 1:
            raise ValueError(
                f"reset options {sorted(options)}: give at most one of 'task', 'task_id', 'index'"
            )
        if "task" in options:
            task = options["task"]
            return task if isinstance(task, Task) else self._task_from_dict(task)
        if "task_id" in options:
            if self._task_index is None:
                self._task_index = {t.id: i for i, t in enumerate(self.tasks)}
            if options["task_id"] not in self._task_index:
                raise KeyError(f"task_id {options['task_id']!r} is not in split {self.split!r}")
            return self.tasks[self._task_index[options["task_id"]]]
        if "index" in options:
            index = options["index"]
            if not isinstance(index, int) or not 0 <= index < len(self.tasks):
                raise IndexError(f"index must be an int in [0, {len(self.tasks)}), got {index!r}")
            return self.tasks[index]
        return self.tasks[int(self.np_random.integers(len(self.tasks)))]

    def _components(self, ep: Episode) -> dict[str, float]:
        components = dict(self._grade(ep.task, ep.answer))
        answered = ep.answer is not None
        well_formed = answered and ep.invalid_actions == 0
        if self.reward_config.require_think:
            well_formed = well_formed and ep.think_turns == ep.turn
        components.update(
            format=float(well_formed),
            tool_calls=float(ep.tool_calls),
            turns=float(ep.turn),
            invalid_actions=float(ep.invalid_actions),
            tool_errors=float(ep.tool_errors),
            latency_ms=float(ep.latency_ms),
        )
        return components

    def _observe(self, text: str) -> str:
        self._last_obs = text
        if self.observation_mode == "transcript" and self._episode is not None:
            text = render_transcript(self._episode.messages)
        return text[: self.observation_space.max_length]

    def _info(self, extra: dict[str, Any]) -> dict[str, Any]:
        ep = self._episode
        info = {
            "turn": ep.turn,
            "tool_calls": ep.tool_calls,
            "task_id": ep.task.id,
            "split": ep.task.split,
            "messages": list(ep.messages),  # frozen messages: shared safely, no per-step copy
            "tools": list(self.tools.schemas),
            "reward_components": {},
        }
        info.update(extra)
        return info


def not_text(where: str, action: object) -> str:
    """Why a non-``str`` action is a caller's bug (raised as ``TypeError``), not agent text to charge."""
    return (
        f"{where} takes the agent's text (str), got {type(action).__name__}; "
        "for token ids wrap the env in agentenv.tokens.TokenEnv"
    )


def copy_plain(value: Any) -> Any:
    """A deep copy of JSON-like data (dicts, lists, scalars) at about a third of ``copy.deepcopy``'s
    cost; anything else goes through ``copy.deepcopy``. For gold, copied at every episode end."""
    kind = type(value)
    if kind is dict:
        return {k: copy_plain(v) for k, v in value.items()}
    if kind is list:
        return [copy_plain(v) for v in value]
    if kind in _IMMUTABLE or value is None:
        return value
    return copy.deepcopy(value)


_IMMUTABLE = frozenset((str, int, float, bool))


def _assistant_message(
    content: str, reasoning: str | None, calls: Sequence[Any] = (), call_ids: Sequence[str] = ()
) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if reasoning is not None:
        message["reasoning_content"] = reasoning
    if calls:
        message["tool_calls"] = [
            {
                "id": call_id,
                "type": "function",
                "function": {"name": call.tool.name, "arguments": _JSON.encode(call.arguments)},
            }
            for call_id, call in zip(call_ids, calls, strict=False)
        ]
    return message


def render_transcript(messages: Sequence[Mapping[str, Any]]) -> str:
    """A plain-text rendering of the conversation, for humans and non-LLM agents."""
    lines = []
    for m in messages:
        role = m["role"].upper() if m["role"] != "tool" else f"TOOL {m.get('name', '')}".rstrip()
        body = [m.get("content") or ""]
        body.extend(f"\n-> {c['function']['name']}({c['function']['arguments']})" for c in m.get("tool_calls", ()))
        lines.append(f"{role}: {''.join(body).strip()}")
    return "\n\n".join(lines)
