"""agentenv envs inside TRL's ``GRPOTrainer(environment_factory=...)`` (checked with TRL 1.16.0).

How TRL 1.16 drives an environment (``trl/trainer/grpo_trainer.py``):

* ``environment_factory`` is a zero-argument callable; TRL calls it for one
  instance per concurrent rollout and reuses instances across batches.
* Every public method of the instance's *class* except ``reset`` and
  ``get_reward`` is a tool. TRL builds its schema from the signature and the
  Google-style docstring, parses the model's tool calls with the tokenizer's
  response template, calls the method with the parsed arguments and shows
  ``str(result)`` to the model as a tool message. A method that raises is
  shown as ``{"error": ...}``.
* ``reset(**row)`` is called with the dataset row before generation; a string
  it returns is appended to the last prompt message (``None`` appends nothing).
* ``get_reward()`` is called once per finished rollout, after generation; its
  value is a reward column named after the class, weight 1.

What this adapter does with that:

* :func:`environment_factory` makes a class whose methods are the env's tools
  (:mod:`agentenv.integrations.tools_as_methods`), plus ``answer(answer)``. Each
  tool call is one ``env.step`` of the canonical ``<tool_call>`` text, so the
  env validates, runs, counts and explains exactly as for a text policy. Note
  that TRL runs the calls of one message one by one: a message with three
  parallel calls is three env turns here, one turn in the env's own loop.
* The final answer reaches the env through the ``answer`` tool: TRL shows a
  rollout's final text to reward functions but never to the environment, so
  an answer written as ``<answer>…</answer>`` text could not be graded by the
  env. The prompts of :func:`dataset` say so after the env's own system prompt.
* ``get_reward()`` returns the reward the env computed when the episode
  ended. If the model stopped without calling ``answer`` (or TRL's length or
  tool-iteration limits stopped it), its last message is counted as what the
  env would make of it, one invalid turn, and the episode is truncated there:
  the env's "no answer" reward and components, never a made-up number.
* ``reset(**row)`` pins the task from the row's ``task_id`` (or ``index``, or a
  user ``task`` dict); a row without one (TRL's placeholder rows when no
  dataset is given) draws a task with the env's seeded generator and returns
  the instructions and question as text.

Nothing here imports TRL, torch or ``datasets`` at module level; :func:`dataset`
needs ``datasets`` and :func:`qwen3_tokenizer` needs TRL.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

import gymnasium as gym

from agentenv.actions import answer as answer_text
from agentenv.actions import tool_call
from agentenv.integrations.tools_as_methods import RESERVED_NAMES, tool_method

if TYPE_CHECKING:  # pragma: no cover - typing only
    import datasets
    import transformers

ANSWER_NOTE = (
    "In this session the final answer is given by calling the `answer` tool: pass it exactly what you "
    "would put inside <answer>…</answer>. The episode ends with that call."
)
"""Appended to the env's system prompt in :func:`dataset`: only what reaches the env is graded."""

EPISODE_OVER = "The episode is over; this call was not run. Stop here."
BUDGET_SPENT = "\n\n[The turn budget is spent: the episode is over.]"


class AgentEnvTRL:
    """One rollout's env for TRL; subclasses made by :func:`environment_factory` add the tool methods.

    Public attributes (read them, e.g. in callbacks): ``reward`` (the env's
    reward once the episode has ended, else None), ``info`` (the env's last
    ``info``: ``messages``, ``reward_components``, ...), ``done``.
    """

    env_id: ClassVar[str] = ""
    make_kwargs: ClassVar[Mapping[str, Any]] = {}
    seed: ClassVar[int | None] = None
    _spare_env: ClassVar[gym.Env | None] = None

    def __init__(self) -> None:
        cls = type(self)
        if cls._spare_env is not None:  # the env built to read the tools serves the first instance
            self._env, cls._spare_env = cls._spare_env, None
        else:
            import agentenv  # noqa: F401 - registers the ids

            self._env = gym.make(self.env_id, **self.make_kwargs)
        self._seeded = False
        self._budget = self._env.unwrapped.max_turns
        self.reward: float | None = None
        self.info: dict[str, Any] = {}
        self.done = False

    # -------------------------------------------------------------- TRL contract
    def reset(self, **row: Any) -> str | None:
        """Start an episode on the row's task; return the prompt text only when the row has no task."""
        options = _task_options(row)
        split = row.get("split")
        env_split = self._env.unwrapped.split
        if options and split is not None and split != env_split:
            raise ValueError(
                f"dataset row is from split {split!r} but this env serves {env_split!r}; "
                f"pass split={split!r} to environment_factory"
            )
        seed = None if self._seeded else self.seed
        self._seeded = True
        self._env.unwrapped.max_turns = self._budget
        _, self.info = self._env.reset(seed=seed, options=options or None)
        self.reward, self.done = None, False
        if options:
            return None
        system, user = (m["content"] for m in self.info["messages"][:2])
        return f"{system}\n\n{ANSWER_NOTE}\n\n{user}"

    def get_reward(self) -> float:
        """The env's reward for the episode; an unfinished episode is ended first (see the module doc)."""
        if not self.done:
            self._end_without_answer()
        assert self.reward is not None
        return self.reward

    def answer(self, answer: str) -> str:
        """Give the final answer and end the episode. Call this once, at the end.

        Args:
            answer: The final answer only, exactly as it would go inside <answer>…</answer>; several items (such as ranked diagnoses) one per line.
        """
        if self.done:
            return EPISODE_OVER
        if isinstance(answer, list):
            text = answer_text([str(item) for item in answer])
        else:
            text = answer_text(str(answer))
        self._step(text)
        return "Answer received. The episode is over."

    # ------------------------------------------------------------------ helpers
    def _call_tool(self, name: str, arguments: Mapping[str, Any]) -> str:
        if self.done:
            return EPISODE_OVER
        obs, truncated = self._step(tool_call(name, **dict(arguments)))
        return obs + BUDGET_SPENT if truncated else obs

    def _step(self, action: str) -> tuple[str, bool]:
        obs, reward, terminated, truncated, self.info = self._env.step(action)
        if terminated or truncated:
            self.done = True
            self.reward = float(reward)
        return obs, bool(truncated)

    def _end_without_answer(self) -> None:
        # The model's last message was neither a tool call nor an ``answer`` call: the env would
        # count it as one invalid turn. Lower the turn budget to that turn so the env truncates the
        # episode there and computes its own no-answer reward and components.
        inner = self._env.unwrapped
        inner.max_turns = self.info["turn"] + 1
        try:
            self._step("")
        finally:
            inner.max_turns = self._budget


def _task_options(row: Mapping[str, Any]) -> dict[str, Any]:
    """Reset options from a dataset row: ``task_id`` first, then ``index``, then a ``task`` dict."""
    if row.get("task_id") is not None:
        return {"task_id": row["task_id"]}
    if row.get("index") is not None:
        return {"index": int(row["index"])}
    if row.get("task") is not None:
        return {"task": row["task"]}
    return {}


def _class_name(env_id: str) -> str:
    """``MediaSearch-v0`` -> ``MediaSearch_v0``: TRL logs the reward column under the class name."""
    return re.sub(r"\W", "_", env_id)


def environment_factory(env_id: str, *, seed: int | None = None, **make_kwargs: Any) -> type[AgentEnvTRL]:
    """A class for ``GRPOTrainer(environment_factory=...)``: each instance is one ``gym.make(env_id, **make_kwargs)``.

    Its public methods are the env's tools (typed, documented) and ``answer``;
    ``reset(**row)`` and ``get_reward()`` follow TRL's contract. ``seed``
    seeds each instance's first reset (only used when rows carry no task).
    Pass the split of your :func:`dataset` as ``split=``; without it the env serves ``train``
    (``gym.make``'s default), never an evaluation split.
    """
    import agentenv  # noqa: F401 - registers the ids

    probe = gym.make(env_id, **make_kwargs)
    tools = probe.unwrapped.tools
    namespace: dict[str, Any] = {
        "__doc__": f"{env_id} for TRL: tools {', '.join(tools.names) or 'none'}, then answer(answer).",
        "__module__": __name__,
        "env_id": env_id,
        "make_kwargs": dict(make_kwargs),
        "seed": seed,
        "_spare_env": probe,
    }
    for name in tools.names:
        if name in RESERVED_NAMES:
            raise ValueError(f"{env_id} has a tool named {name!r}, which the TRL adapter reserves")
        namespace[name] = tool_method(tools[name])
    return type(_class_name(env_id), (AgentEnvTRL,), namespace)


def dataset(env_id: str, split: str, n: int | None = None, **make_kwargs: Any) -> datasets.Dataset:
    """The prompt dataset for :func:`environment_factory`: one row per task of ``split``, in split order.

    Columns: ``prompt`` (chat messages: the env's system prompt plus
    :data:`ANSWER_NOTE`, then the task's user message), ``task_id``, ``index``
    and ``split``. ``n`` keeps the first ``n`` tasks.
    """
    from datasets import Dataset

    import agentenv  # noqa: F401 - registers the ids

    env = gym.make(env_id, split=split, **make_kwargs)
    count = len(env.unwrapped.tasks) if n is None else min(int(n), len(env.unwrapped.tasks))
    rows: dict[str, list[Any]] = {"prompt": [], "task_id": [], "index": [], "split": []}
    for index in range(count):
        _, info = env.reset(options={"index": index})
        system, user = info["messages"][:2]
        rows["prompt"].append([
            {"role": "system", "content": f"{system['content']}\n\n{ANSWER_NOTE}"},
            {"role": "user", "content": user["content"]},
        ])
        rows["task_id"].append(info["task_id"])
        rows["index"].append(index)
        rows["split"].append(env.unwrapped.split)
    env.close()
    return Dataset.from_dict(rows)


def checkpointing_option(config_cls: type, enabled: bool) -> dict[str, bool]:
    """The activation-checkpointing switch under the name this transformers version uses.

    transformers 5.2x renamed ``gradient_checkpointing`` to ``activation_checkpointing``
    (the old name warns); TRL 1.16 works with either release.
    """
    import dataclasses

    names = {f.name for f in dataclasses.fields(config_cls)}
    key = "activation_checkpointing" if "activation_checkpointing" in names else "gradient_checkpointing"
    return {key: enabled}


def qwen3_tokenizer() -> transformers.PreTrainedTokenizerFast:
    """agentenv's offline Qwen3 tokenizer carrying Qwen3's own chat template as shipped inside TRL.

    TRL recognises a chat template by its exact text: for Qwen3's it sets the
    response template that parses tool calls and swaps in its
    prefix-preserving training template. agentenv's template renders the same
    text but is not byte-identical, so for TRL the tokenizer carries TRL's
    copy of Qwen3's template (read from the installed TRL, nothing fetched).
    """
    from trl.chat_template_utils import qwen3_chat_template

    from agentenv.tokens.qwen3_tokenizer import load_tokenizer

    tokenizer = load_tokenizer()
    tokenizer.chat_template = qwen3_chat_template
    return tokenizer
