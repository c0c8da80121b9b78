"""The turn engine: the step rules that ``ToolEnv`` and the PettingZoo dialogue base share.

Why one engine: the single-agent env (:mod:`agentenv.core`) and the dialogue
base (:mod:`agentenv.multiagent.base`) run the same turn of a tool-using
agent. When each kept its own copy the two drifted (an unknown reset option
raised in one and warned in the other; a task dict was accepted by one and a
``TypeError`` in the other). Here each rule exists once:

* **Choosing the task** from ``reset`` options (:class:`TaskChooser`):
    - ``{"task": Task | dict}`` (a dict goes through the env's
      ``_task_from_dict`` hook), ``{"task_id": str}`` or ``{"index": int}``
      pin a task; at most one of them, else ``ValueError``;
    - a bool index is refused (``True`` is not task 1): ``IndexError``, as for
      an index out of range; an unknown ``task_id`` is a ``KeyError``;
    - any other key is ignored with a :class:`ResetOptionWarning`. A warning,
      not an error, because wrappers and harnesses pass options meant for other
      layers, and PettingZoo's ``api_test`` passes ``{"options": 1}`` only to
      check that ``reset`` takes options at all;
    - no option: a task is drawn from the split with the env's ``np_random``.
* **Taking an action** (:func:`take_action`), the one step path of both: the
  parsed action's tool calls are validated against the env's tools and run, an
  answer is kept, and a failure is the action's error; each is recorded in the
  OpenAI chat format: an unreadable action
  (:func:`record_invalid`), well-formed calls that cannot run
  (:func:`record_rejected_calls`), an answer (:func:`record_answer`), tool calls
  run under their limits with the episode's context (:func:`run_tools`); one
  :func:`assistant_message` writes every assistant message.
* **Behaviour components** at the end (:func:`behaviour_components`):
  ``format`` (answered, nothing unreadable, and with ``require_think`` a
  ``<think>`` in every turn), ``tool_calls``, ``turns``, ``invalid_actions``,
  ``tool_errors`` and the modelled ``latency_ms``.

Everything here runs on every step of every env, so it is written for speed:
plain functions over one mutable :class:`Episode`, one cached JSON encoder.

Example:
    >>> from agentenv.core import Task
    >>> import numpy as np
    >>> tasks = [Task(prompt="a", gold=1), Task(prompt="b", gold=2)]
    >>> chooser = TaskChooser()
    >>> chooser.choose(tasks, {"index": 1}, np.random.default_rng(0), split="test", from_dict=None).prompt
    'b'
    >>> chooser.choose(tasks, {"index": True}, None, split="test", from_dict=None)
    Traceback (most recent call last):
    ...
    IndexError: index must be an int in [0, 2), got True
"""

from __future__ import annotations

import numbers
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from agentenv.engine.frozen import FrozenDict, FrozenList
from agentenv.engine.parsing import Answer, CallRejected, ParseError, ToolCall, ToolCalls, printable
from agentenv.engine.task import Task
from agentenv.engine.task_index import task_positions
from agentenv.engine.tools import ToolRegistry, ToolResult, ValidatedCall, encode_json

if TYPE_CHECKING:
    import numpy as np

RESET_OPTIONS = ("task", "task_id", "index")
"""The reset options that pin a task; every env reads these and no others."""


class ResetOptionWarning(UserWarning):
    """A reset option no env reads was passed; it is ignored (see the module docstring for why)."""


@dataclass
class Episode:
    """Mutable per-episode state of the acting agent; one object, replaced at every ``reset``.

    ``context`` is what the env's ``_start_episode(task)`` hook returned: the
    family's per-episode state (a consultation with a patient, a user's
    request). Tools that declare ``takes_context`` receive it, and ``_grade``
    reads it, so no family keeps episode state on the env itself.
    """

    task: Task
    messages: list[dict[str, Any]]
    context: Any = None
    turn: int = 0
    tool_calls: int = 0
    invalid_actions: int = 0
    tool_errors: int = 0
    think_turns: int = 0
    latency_ms: float = 0.0
    wall_ms: float = 0.0
    paid: float = 0.0
    answer: Answer | None = None
    answer_feedback: str | None = None
    """How the family's grammar read the answer, or why it is unreadable (``info["answer_feedback"]``)."""
    done: bool = False


class TaskChooser:
    """Chooses an episode's task from ``reset`` options, under the rules of the module docstring.

    One per env: it keeps the ``task_id`` -> position index of the task
    sequence it last served, rebuilt if the env's ``tasks`` are replaced.
    """

    __slots__ = ("_ids", "_ids_of")

    def __init__(self) -> None:
        self._ids: dict[str, int] | None = None
        self._ids_of: Sequence[Task] | None = None

    def choose(
        self,
        tasks: Sequence[Task],
        options: Mapping[str, Any] | None,
        rng: np.random.Generator | Callable[[], np.random.Generator] | None,
        *,
        split: str,
        from_dict: Callable[[Mapping[str, Any]], Task] | None,
    ) -> Task:
        """The task ``options`` pin, else one drawn from ``tasks`` with ``rng`` (or the generator it returns:
        an env seeded lazily builds its generator only for a draw)."""
        if options is not None and not isinstance(options, Mapping):
            raise TypeError(
                f"reset options must be a dict such as {{'index': 3}}, got {type(options).__name__}"
            )
        if not options:
            return tasks[int(_generator(rng).integers(len(tasks)))]
        unknown = [k for k in options if k not in RESET_OPTIONS]
        if unknown:
            warnings.warn(
                f"reset options {sorted(map(str, unknown))} are not used; this env reads {list(RESET_OPTIONS)}",
                ResetOptionWarning,
                stacklevel=3,
            )
        chosen = [k for k in RESET_OPTIONS if k in options]
        if len(chosen) > 1:
            raise ValueError(
                f"reset options {chosen}: give at most one of 'task', 'task_id', 'index'"
            )
        if not chosen:
            return tasks[int(_generator(rng).integers(len(tasks)))]
        if chosen[0] == "task":
            return _pinned_task(options["task"], from_dict)
        if chosen[0] == "task_id":
            return tasks[self._position(tasks, options["task_id"], split)]
        index = options["index"]
        if (
            isinstance(index, bool)
            or not isinstance(index, numbers.Integral)
            or not 0 <= index < len(tasks)
        ):
            raise IndexError(f"index must be an int in [0, {len(tasks)}), got {index!r}")
        return tasks[int(index)]

    def _position(self, tasks: Sequence[Task], task_id: Any, split: str) -> int:
        if self._ids is None or self._ids_of is not tasks:
            # One index per task list and process (kept on disk where the list names its
            # content): building every task of a large split took seconds per env.
            self._ids = task_positions(tasks)
            if self._ids is None:
                self._ids = {t.id: i for i, t in enumerate(tasks)}
            self._ids_of = tasks
        position = self._ids.get(task_id) if isinstance(task_id, str) else None
        if position is None:
            raise KeyError(f"task_id {task_id!r} is not in split {split!r}")
        return position


def _generator(rng: Any) -> np.random.Generator:
    if rng is None:
        raise ValueError("no generator to draw a task with: pin one with options={'index': i}")
    return rng if not callable(rng) else rng()


def _pinned_task(task: Any, from_dict: Callable[[Mapping[str, Any]], Task] | None) -> Task:
    if isinstance(task, Task):
        return task
    if isinstance(task, Mapping):
        if from_dict is None:
            raise TypeError("options['task'] must be a Task: this env builds no tasks from dicts")
        return from_dict(task)
    raise TypeError(f"options['task'] must be a Task or a task dict, not {type(task).__name__}")


def take_action(
    ep: Episode,
    action: str,
    parsed: object,
    tools: ToolRegistry,
    max_length: int,
    *,
    rejected_calls: Literal["tool", "user"] = "tool",
) -> tuple[str, str | None, Sequence[ToolResult]] | None:
    """Read one parsed action of the acting agent and record its turn: the step path that ``ToolEnv``
    and the dialogue lead share. Returns ``(observation, parse_error, results)``:

    * tool calls that validate run (:func:`run_tools`): their output, ``None``, their results;
    * an answer is kept (:func:`record_answer`): ``("", None, ())``; the env decides what ends;
    * an unreadable action, or calls that cannot run, are an invalid action: the error the agent
      reads, its reason (``info["parse_error"]``), ``()``. A well-formed call to an unknown tool or
      with bad arguments (:class:`~agentenv.engine.parsing.CallRejected`) is answered in ``tool`` messages
      (:func:`record_rejected_calls`), or with ``rejected_calls="user"`` in a user turn, as the
      dialogue envs answer it;
    * ``None`` for a kind of action the engine does not read (a dialogue's ``<say>``): the
      caller's, and nothing is recorded.

    ``action`` is the text as sent (an invalid action is written to the chat as it was). The
    fast path: this runs on every step of every env, so the common kinds are told apart by exact
    type first (an answer, then tool calls) and an answer returns one shared tuple; subclasses
    still take their kind's path, through ``isinstance`` after it.
    """
    kind = type(parsed)
    if kind is Answer:
        record_answer(ep, parsed)
        return _ANSWERED
    if kind is ToolCalls or isinstance(parsed, ToolCalls):
        calls = tools.validate(parsed)
        if type(calls) is list:
            results = run_tools(ep, tools, parsed, calls)
            return tool_observation(results), None, results
        if type(calls) is CallRejected and rejected_calls == "tool":
            return record_rejected_calls(ep, parsed, calls, max_length), calls.reason, ()
        return record_invalid(ep, action, calls, max_length), calls.reason, ()
    if isinstance(parsed, Answer):
        record_answer(ep, parsed)
        return _ANSWERED
    if isinstance(parsed, ParseError):
        return record_invalid(ep, action, parsed, max_length), parsed.reason, ()
    return None


_ANSWERED: tuple[str, None, tuple[()]] = ("", None, ())
"""What :func:`take_action` returns for an answer: one shared tuple, built once."""


def record_invalid(ep: Episode, action: str, error: ParseError, max_length: int) -> str:
    """Count an unreadable action and write it, with the error the agent reads, to the chat;
    return that error text."""
    ep.invalid_actions += 1
    message = error.message()
    ep.messages.append({"role": "assistant", "content": printable(action, max_length)})
    ep.messages.append({"role": "user", "content": message})
    return message


def record_rejected_calls(
    ep: Episode, action: ToolCalls, error: CallRejected, max_length: int
) -> str:
    """Count a well-formed call that cannot run and answer it as a chat API would: the assistant
    message with its calls as written, then one ``tool`` message per call (the rejected call's
    error; "not run" for the others, since an action runs whole or not at all). Returns what
    the agent reads.

    Why not a user turn, as for unreadable text: TRL's multi-turn loop (and any OpenAI-style
    client) answers a parsed call with a tool response, so the env's conversation, and the ids
    :class:`~agentenv.tokens.TokenEnv` renders from it, match what a trainer saw.
    """
    ep.invalid_actions += 1
    turn = ep.turn
    shown = [ToolCall(printable(call.name, max_length), call.arguments) for call in action.calls]
    call_ids = [f"call_{turn}_{i}" for i in range(len(shown))]
    reasoning = None if action.reasoning is None else printable(action.reasoning, max_length)
    ep.messages.append(
        assistant_message(printable(action.content, max_length), reasoning, shown, call_ids)
    )
    not_run = (
        f"Error: not run: call {error.index} of this action was rejected, and an action's calls "
        "run all or none. Send them again with that call fixed."
    )
    replies = [
        ToolResult(call.name, error.message() if i == error.index else not_run, False, 0.0)
        for i, call in enumerate(shown, start=1)
    ]
    for call_id, reply in zip(call_ids, replies, strict=True):
        ep.messages.append(
            FrozenDict(role="tool", tool_call_id=call_id, name=reply.name, content=reply.content)
        )
    return tool_observation(replies)


def record_answer(ep: Episode, answer: Answer) -> None:
    """Keep the final answer and write it to the chat (the env decides what ends)."""
    if (
        answer.reasoning is None and not answer.content
    ):  # the usual answer: one read-only message, built directly (the log's freezing append has nothing to do)
        list.append(
            ep.messages, FrozenDict(role="assistant", content=f"<answer>{answer.text}</answer>")
        )
    else:
        ep.think_turns += answer.reasoning is not None
        ep.messages.append(
            assistant_message(
                f"{answer.content}\n<answer>{answer.text}</answer>".lstrip(), answer.reasoning
            )
        )
    ep.answer = answer


def run_tools(
    ep: Episode, tools: ToolRegistry, action: ToolCalls, calls: Sequence[ValidatedCall]
) -> list[ToolResult]:
    """Run validated calls in order, each under its limits and with the episode's context; count
    them and write the assistant message and one tool message per call to the chat."""
    ep.think_turns += action.reasoning is not None
    turn = ep.turn
    call_ids = (
        [f"call_{turn}_0"] if len(calls) == 1 else [f"call_{turn}_{i}" for i in range(len(calls))]
    )
    messages = ep.messages
    append = (
        list.append
    )  # the messages below are built read-only: the log's freezing append has nothing to do
    append(messages, assistant_message(action.content, action.reasoning, action.calls, call_ids))
    context = ep.context
    execute = tools.execute
    results = []
    i = spent = 0  # spent: work units (Tool.work) of this action's calls run so far
    for call in calls:  # not zip(..., strict=...): its keyword costs a step 0.3 µs
        t = call.tool
        work = t.work
        if work is None:
            result = execute(t, call.args, context)
        else:
            need = work(call.args)
            if spent + need > tools.action_work_budget:
                result = tools.budget_spent(t, need, spent)
            else:
                spent += need
                result = execute(t, call.args, context)
        ep.tool_calls += 1
        ep.tool_errors += not result.ok
        ep.latency_ms += t.latency_ms
        ep.wall_ms += result.wall_ms
        # Built read-only here, so the log freezes it in O(1) (see agentenv.engine.frozen).
        append(
            messages,
            FrozenDict(
                role="tool", tool_call_id=call_ids[i], name=result.name, content=result.content
            ),
        )
        results.append(result)
        i += 1
    return results


def tool_observation(results: Sequence[ToolResult]) -> str:
    """What the agent reads after its calls: the one output, or each output under its tool's name."""
    if len(results) == 1:
        return results[0].content
    return "\n\n".join(f"[{r.name}]\n{r.content}" for r in results)


def assistant_message(
    content: str,
    reasoning: str | None,
    calls: Sequence[ToolCall] = (),
    call_ids: Sequence[str] = (),
) -> dict[str, Any]:
    """An OpenAI-format assistant message, with ``reasoning_content`` and ``tool_calls`` when present.

    ``calls`` are the calls as the action wrote them (validation keeps names and arguments as
    they are), so a rejected call is written the same way as one that ran.

    Built read-only (:mod:`agentenv.engine.frozen`) from the start: the chat log would freeze it on
    append anyway, and freezing a nested message after the fact costs more than the rest of
    a step. The arguments are written as compact JSON once (:func:`~agentenv.engine.tools.encode_json`).
    """
    tool_calls = (
        FrozenList(
            [  # a list comprehension: some 0.1 µs faster than a generator here
                FrozenDict(
                    id=call_ids[i],
                    type="function",
                    function=FrozenDict(name=call.name, arguments=encode_json(call.arguments)),
                )
                for i, call in enumerate(calls)
            ]
        )
        if calls
        else None
    )
    if reasoning is None:
        if tool_calls is None:
            return FrozenDict(role="assistant", content=content)
        return FrozenDict(role="assistant", content=content, tool_calls=tool_calls)
    message: dict[str, Any] = {
        "role": "assistant",
        "content": content,
        "reasoning_content": reasoning,
    }
    if tool_calls is not None:
        message["tool_calls"] = tool_calls
    return FrozenDict(message)


BEHAVIOUR_COMPONENTS = frozenset(
    ("format", "tool_calls", "turns", "invalid_actions", "tool_errors", "latency_ms")
)
"""The names :func:`behaviour_components` reports, whatever the family."""


def behaviour_components(ep: Episode, require_think: bool) -> dict[str, float]:
    """How the agent acted, next to the family's graded components (see the module docstring)."""
    components: dict[str, float] = {}
    add_behaviour_components(components, ep, require_think)
    return components


def add_behaviour_components(
    components: dict[str, float], ep: Episode, require_think: bool
) -> None:
    """:func:`behaviour_components` written into ``components`` (after the graded ones, replacing any
    of the same name), so the episode end builds one dict, not two and their merge."""
    well_formed = ep.answer is not None and ep.invalid_actions == 0
    if require_think:
        well_formed = well_formed and ep.think_turns == ep.turn
    components["format"] = float(well_formed)
    components["tool_calls"] = float(ep.tool_calls)
    components["turns"] = float(ep.turn)
    components["invalid_actions"] = float(ep.invalid_actions)
    components["tool_errors"] = float(ep.tool_errors)
    components["latency_ms"] = float(ep.latency_ms)


def cost_counts(ep: Episode) -> dict[str, float]:
    """The counts a :class:`~agentenv.rewards.config.RewardConfig` charges per step or at the end."""
    return {"tool_calls": ep.tool_calls, "turns": ep.turn, "latency_ms": ep.latency_ms}
