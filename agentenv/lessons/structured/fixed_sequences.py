"""The best fixed action sequence of a menu on a lesson's test episodes: the macro a learned policy must beat.

Why: a policy trained on a menu can score well by playing one macro ("search,
then answer the top 3") in every episode, which is a rule, not something
learned from the features. The lessons therefore score every fixed sequence
of menu entries on the very episodes the trained policies played and report
the best one as an arm; a learned result is claimed only where the policy
beats it with non-overlapping intervals.

What is enumerated: every sequence of *distinct* tool entries, at most
``depth`` of them (and at most ``max_turns - 1``, so an answer fits), in
every order, followed by one answer entry. A repeated tool entry sends the
same call again (or a call on the same state), so it cannot add evidence. Past
``full_depth`` tool entries the search is a beam: only the ``beam`` prefixes
whose best answer scores highest (mean return over the episodes) are extended
by one more tool entry. The defaults (:data:`DEPTH`, :data:`FULL_DEPTH`,
:data:`BEAM`) are recorded in ``summary.json``.

How it stays fast: episodes are walked breadth first, one tree level at a
time; each node keeps a copy of the episode's state (the text env's
``Episode`` record and the menu), so the sequences that share a prefix share
its tool calls, and each answer entry is graded from the node's copy. Answer
entries that render the same text at a node are graded once. Tools that read
no episode context (every tool but ``ask_patient``) are answered from a cache
keyed by their call, shared by all nodes and episodes.

The episodes are the evaluation runner's (:func:`agentenv.evaluation.runner.episode_plan`):
episode ``i`` of seed ``s`` is task ``plan[i]`` reset with seed ``s + i``.
"""

from __future__ import annotations

import copy
import dataclasses
import itertools
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym
import numpy as np

from agentenv.lessons.structured.menu import Menu

DEPTH = 4
"""Most tool entries before the answer."""
FULL_DEPTH = 2
"""Tool prefixes up to this length are all extended; longer ones only within the beam."""
BEAM = 4
"""Prefixes extended at each level past :data:`FULL_DEPTH`."""


@dataclass
class SequenceScores:
    """The return and accuracy of each enumerated sequence on each episode (rows in episode order)."""

    labels: tuple[str, ...]
    sequences: list[tuple[int, ...]] = field(default_factory=list)
    returns: list[np.ndarray] = field(default_factory=list)
    accuracy: list[np.ndarray] = field(default_factory=list)
    nodes: int = 0
    """Tool prefixes visited (the tree's size)."""
    graded: int = 0
    """Answers graded (after sharing equal answer texts)."""

    def best(self) -> int:
        """Index of the sequence with the highest mean return; the shorter, then the earlier, on a tie."""
        means = [float(r.mean()) for r in self.returns]
        return max(
            range(len(means)), key=lambda i: (round(means[i], 12), -len(self.sequences[i]), -i)
        )

    def names(self, index: int) -> list[str]:
        """The menu labels of sequence ``index``."""
        return [self.labels[a] for a in self.sequences[index]]

    def hindsight(self) -> np.ndarray:
        """Per episode, the best return of any enumerated sequence (the menu's ceiling in hindsight)."""
        return np.max(np.stack(self.returns), axis=0)


class _CachedTools:
    """A tool registry whose context-free tools answer repeated calls from a cache (outputs are functions
    of the arguments and the read-only corpus alone); everything else is the registry's."""

    def __init__(self, tools: Any, cache: dict[tuple[str, str], Any]) -> None:
        self._tools = tools
        self._cache = cache

    def __getattr__(self, name: str) -> Any:
        return getattr(self._tools, name)

    def __len__(self) -> int:
        return len(self._tools)

    def __iter__(self) -> Any:
        return iter(self._tools)

    def __contains__(self, item: object) -> bool:
        return item in self._tools

    def __getitem__(self, name: str) -> Any:
        return self._tools[name]

    def execute(self, tool: Any, args: Any, context: Any) -> Any:
        if getattr(tool, "takes_context", False):
            return self._tools.execute(tool, args, context)
        key = (tool.name, _key(args))
        if key not in self._cache:
            self._cache[key] = self._tools.execute(tool, args, context)
        return self._cache[key]


def _key(args: Any) -> str:
    if hasattr(args, "model_dump"):
        args = args.model_dump()
    try:
        return json.dumps(args, sort_keys=True, default=str)
    except TypeError:
        return repr(args)


def _copy_context(context: Any) -> Any:
    """A copy of an episode context whose list, dict and set fields are copied (what tools mutate)."""
    if context is None:
        return None
    twin = copy.copy(context)
    for name, value in list(getattr(twin, "__dict__", {}).items()):
        if isinstance(value, (list, dict, set)):
            setattr(twin, name, copy.copy(value))
    return twin


def _copy_episode(episode: Any) -> Any:
    messages = type(episode.messages).__new__(type(episode.messages))
    list.extend(messages, episode.messages)  # the messages are frozen: sharing them is safe
    return dataclasses.replace(episode, messages=messages, context=_copy_context(episode.context))


@dataclass
class _Node:
    episode: Any
    menu: Menu
    paid: float
    """Return collected on the way here (shaping rewards, if any)."""


def _tool_entries(menu: Menu) -> list[int]:
    """Entries that call tools (a menu's entry kinds do not change with its state)."""
    return [i for i in range(menu.size) if menu.preview(i).kind == "tool"]


def score_sequences(
    env: gym.Env,
    menu_cls: type[Menu],
    episodes: Sequence[tuple[int, int]],
    *,
    depth: int = DEPTH,
    full_depth: int = FULL_DEPTH,
    beam: int = BEAM,
) -> SequenceScores:
    """Score every fixed sequence (see the module docstring) on ``episodes`` = ``[(reset seed, task index)]``.

    ``env`` is a text env made with ``gym.make`` (its tools are wrapped with a call cache for the
    enumeration's lifetime and restored after).
    """
    inner = env.unwrapped
    max_turns = int(getattr(inner, "max_turns", 1))
    depth = max(0, min(depth, max_turns - 1))
    probe = menu_cls()
    probe.reset("", max_turns)
    tools = _tool_entries(probe) if depth else []
    answers = [i for i in range(probe.size) if i not in _tool_entries(probe)]
    roots: list[_Node] = []
    original_tools = inner.tools
    inner.tools = _CachedTools(original_tools, {})
    try:
        for seed, index in episodes:
            obs, _ = inner.reset(seed=int(seed), options={"index": int(index)})
            menu = menu_cls()
            menu.reset(obs, max_turns)
            roots.append(_Node(_copy_episode(inner._episode), menu, 0.0))
        scores = SequenceScores(tuple(probe.labels))
        level: dict[tuple[int, ...], list[_Node]] = {(): roots}
        for d in range(depth + 1):
            values = {
                prefix: _grade_answers(inner, prefix, nodes, answers, scores)
                for prefix, nodes in level.items()
            }
            if d == depth:
                break
            keep = list(level)
            if d >= full_depth:
                keep = sorted(keep, key=lambda p: -values[p])[:beam]
            level = {
                prefix + (t,): [_step_tool(inner, node, t) for node in level[prefix]]
                for prefix in keep
                for t in tools
                if t not in prefix
            }
            scores.nodes += len(level)
    finally:
        inner.tools = original_tools
    return scores


def _grade_answers(
    inner: Any,
    prefix: tuple[int, ...],
    nodes: list[_Node],
    answers: list[int],
    scores: SequenceScores,
) -> float:
    """Grade every answer entry after ``prefix`` on every episode; append them; the best mean return."""
    n_entries = nodes[0].menu.size
    returns = np.zeros((n_entries, len(nodes)))
    accuracy = np.zeros((n_entries, len(nodes)))
    for e, node in enumerate(nodes):
        graded: dict[str, tuple[float, float]] = {}
        for a in answers:
            choice = node.menu.preview(a)
            if choice.text not in graded:
                inner._episode = _copy_episode(node.episode)
                _, reward, _, _, info = inner.step(choice.text)
                comps = info.get("reward_components") or {}
                graded[choice.text] = (node.paid + float(reward), float(comps.get("accuracy", 0.0)))
                scores.graded += 1
            returns[a, e], accuracy[a, e] = graded[choice.text]
    for a in answers:
        scores.sequences.append(prefix + (a,))
        scores.returns.append(returns[a])
        scores.accuracy.append(accuracy[a])
    return float(max(returns[a].mean() for a in answers)) if answers else float("-inf")


def _step_tool(inner: Any, node: _Node, entry: int) -> _Node:
    """The node after tool entry ``entry`` from ``node`` (copies: the parent stays usable)."""
    inner._episode = _copy_episode(node.episode)
    menu = node.menu.fork()
    choice = menu.act(entry)
    obs, reward, _, _, _ = inner.step(choice.text)
    menu.observe(obs)
    return _Node(inner._episode, menu, node.paid + float(reward))


def runner_episodes(n_tasks: int, episodes: int, seeds: Iterable[int]) -> list[tuple[int, int]]:
    """``[(reset seed, task index)]`` of the evaluation runner's episodes for each seed, seed after seed."""
    from agentenv.evaluation.runner import episode_plan

    return [
        (seed + i, task)
        for seed in seeds
        for i, task in enumerate(episode_plan(n_tasks, episodes, seed))
    ]


def best_fixed_sequence(
    env_id: str,
    reward: Any,
    env_kwargs: Mapping[str, Any],
    *,
    episodes: int,
    seeds: Sequence[int],
    depth: int = DEPTH,
    full_depth: int = FULL_DEPTH,
    beam: int = BEAM,
    split: str = "test",
) -> tuple[SequenceScores, dict[str, Any]]:
    """Score the menu's fixed sequences on the test episodes the lesson's policies played; the scores and
    the best sequence as a summary arm (``sequence``, ``accuracy``, ``ci``, ``reward``, ``reward_ci``)."""
    import time

    import agentenv  # noqa: F401 - registers the ids
    from agentenv.families import family_of_env
    from agentenv.lessons.structured.stats import mean_ci
    from agentenv.lessons.structured.wrapper import menu_for

    start = time.perf_counter()
    env = gym.make(env_id, split=split, reward=reward, **dict(env_kwargs))
    menu_cls = menu_for(family_of_env(env_id), frozenset(env.unwrapped.tools.names))
    plan = runner_episodes(len(env.unwrapped.tasks), episodes, seeds)
    scores = score_sequences(env, menu_cls, plan, depth=depth, full_depth=full_depth, beam=beam)
    env.close()
    i = scores.best()
    acc, ret = mean_ci(scores.accuracy[i]), mean_ci(scores.returns[i])
    ranked = sorted(range(len(scores.sequences)), key=lambda j: -float(scores.returns[j].mean()))[
        :5
    ]
    arm = {
        "sequence": scores.names(i),
        "accuracy": acc["mean"],
        "ci": acc["ci"],
        "reward": ret["mean"],
        "reward_ci": ret["ci"],
        "episodes": len(plan),
        "seeds": list(seeds),
        "split": split,
        "runner_up": [
            {"sequence": scores.names(j), "reward": round(float(scores.returns[j].mean()), 4)}
            for j in ranked[1:]
        ],
        "hindsight_best_per_episode": round(float(scores.hindsight().mean()), 4),
        "search": {
            "sequences": len(scores.sequences),
            "tool_prefixes": scores.nodes,
            "answers_graded": scores.graded,
            "depth": min(depth, int(getattr(env.unwrapped, "max_turns", 1)) - 1),
            "full_depth": full_depth,
            "beam": beam,
            "wall_s": round(time.perf_counter() - start, 1),
        },
    }
    return scores, arm


def all_orders(items: Sequence[int], depth: int) -> list[tuple[int, ...]]:
    """Every ordered selection of distinct ``items``, of length 0..``depth`` (what a full search visits).

    Example:
        >>> all_orders([0, 1], 2)
        [(), (0,), (1,), (0, 1), (1, 0)]
    """
    return [p for n in range(depth + 1) for p in itertools.permutations(items, n)]
