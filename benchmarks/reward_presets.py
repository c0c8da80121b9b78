"""Which scripted policy does each reward preset favour? A table over the registered envs.

The workshop lessons, measured on the real envs: with accuracy alone
(``strict``) a policy that calls every tool 8 times scores as well as the
oracle, so RL has no reason to call fewer tools; ``efficient`` charges for
them. With the hackable top-k reward (``lenient``) a policy that lists 50
diagnoses scores like the oracle; ``strict`` zeroes it.

Policies:

* ``oracle``: the privileged plan-following oracle (``agentenv.baselines``);
* ``every tool 8x``: one turn calling every tool 8 times (arguments synthesised
  from each tool's schema), then the oracle's episode;
* for families that report ``over_limit`` (rare disease): ``ranker top-3``,
  the honest ``phenotype-ranker`` baseline, and ``list 50``, the same
  reference ranker's top 50 answered at once.

Each episode is played once; the components do not depend on the preset, so
every preset's reward is ``PRESETS[name].combine(components)`` of the same
episode, exactly what ``gym.make(id, reward=name)`` would return.

Usage: ``python benchmarks/reward_presets.py [--episodes 50] [--split test] [--ids ID ...]``
"""

from __future__ import annotations

import argparse
import json
import traceback
from collections.abc import Callable, Mapping
from typing import Any

import gymnasium as gym
import numpy as np

import agentenv  # noqa: F401 - registers the ids
from agentenv.baselines.oracle import OracleAgent
from agentenv.engine.actions import answer
from agentenv.engine.parsing import ParseError, parse_action
from agentenv.evaluation.agents import make_agent
from agentenv.evaluation.runner import episode_plan
from agentenv.families import env_specs
from agentenv.rewards.config import PRESETS

NAMES = ("strict", "lenient", "efficient")


class SpamThenOracle(OracleAgent):
    """Calls every tool 8 times in its first turn, then plays the oracle's episode."""

    def __init__(self, env: gym.Env) -> None:
        super().__init__()
        self._env = env

    def reset(self, obs: str, info: Mapping[str, Any], **kwargs: Any) -> None:
        super().reset(obs, info, **kwargs)
        self._spam = spam_action(self._env, info["tools"])
        self._first = obs

    def act(self, obs: str, info: Mapping[str, Any]) -> str:
        if self._spam is not None:
            action, self._spam = self._spam, None
            return action
        return super().act(obs, info)


class ListFifty:
    """The reference phenotype ranker's top 50, answered at once: the "list 50 diseases" policy."""

    name = "list-50"

    def reset(
        self, obs: str, info: Mapping[str, Any], *, task: Any, rng: np.random.Generator
    ) -> None:
        from agentenv.corpora.hpo.knowledge_base import load_hpo_kb
        from agentenv.envs.rare_disease.tools.diagnosis_tools import reference_ranker

        ranker = reference_ranker(load_hpo_kb(str(task.public.get("universe", "omim"))))
        self._ids = [did for did, _ in ranker.rank(list(task.public["phenotypes"]), k=50)]

    def act(self, obs: str, info: Mapping[str, Any]) -> str:
        return answer(self._ids)


def spam_action(env: gym.Env, schemas: list[dict[str, Any]]) -> str | None:
    """Eight calls to every tool whose schema-synthesised arguments validate, in one action."""
    from agentenv.engine.actions import tool_calls

    calls = []
    for schema in schemas:
        fn = schema["function"]
        params = fn["parameters"]
        args = {name: _example(params["properties"][name]) for name in params.get("required", [])}
        text = tool_calls([(fn["name"], args)])
        if not isinstance(env.unwrapped.tools.validate(parse_action(text)), ParseError):
            calls += [(fn["name"], args)] * 8
    return tool_calls(calls) if calls else None


def _example(prop: Mapping[str, Any]) -> Any:
    if "enum" in prop:
        return prop["enum"][0]
    if "anyOf" in prop:
        return _example(next(p for p in prop["anyOf"] if p.get("type") != "null"))
    kind = prop.get("type")
    if kind == "integer":
        return max(int(prop.get("minimum", 1)), 1)
    if kind == "number":
        return float(prop.get("minimum", 0.0))
    if kind == "boolean":
        return False
    if kind == "array":
        return []
    return "film"[: prop.get("maxLength", 4)].ljust(prop.get("minLength", 1), "x")


def play(env: gym.Env, agent: Any, index: int, seed: int) -> dict[str, float]:
    obs, info = env.reset(seed=seed, options={"index": index})
    agent.reset(obs, info, task=env.unwrapped.task, rng=np.random.default_rng(seed))
    done = False
    while not done:
        obs, _, terminated, truncated, info = env.step(agent.act(obs, info))
        done = terminated or truncated
    return info["reward_components"]


def table_for(
    env_id: str, episodes: int, split: str, seed: int
) -> list[tuple[str, dict[str, float]]]:
    env = gym.make(env_id, split=split)
    plan = episode_plan(len(env.unwrapped.tasks), episodes, seed)
    policies: dict[str, Callable[[], Any]] = {"oracle": OracleAgent}
    if env.unwrapped.tools.names:
        policies["every tool 8x"] = lambda: SpamThenOracle(env)
    first = play(env, OracleAgent(), plan[0], seed)
    if "over_limit" in first:  # a top-k family: the honest ranker against the one that lists 50
        policies["ranker top-3"] = lambda: make_agent("phenotype-ranker", k=3)
        policies["list 50"] = ListFifty
    rows = []
    for name, make in policies.items():
        agent = make()
        runs = [play(env, agent, index, seed + i) for i, index in enumerate(plan)]
        row = {p: float(np.mean([PRESETS[p].combine(c) for c in runs])) for p in NAMES}
        row["accuracy"] = float(np.mean([c["accuracy"] for c in runs]))
        row["tool_calls"] = float(np.mean([c["tool_calls"] for c in runs]))
        rows.append((name, row))
    env.close()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=50)
    parser.add_argument("--split", default="test")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--ids", nargs="*", default=[spec.id for spec in env_specs()])
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = parser.parse_args()
    results: dict[str, Any] = {}
    header = (
        f"{'env':<36}{'policy':<16}"
        + "".join(f"{p:>11}" for p in NAMES)
        + f"{'accuracy':>10}{'calls':>8}"
    )
    if not args.json:
        print(
            f"mean reward over {args.episodes} {args.split} episodes per policy\n{header}\n{'-' * len(header)}"
        )
    for env_id in args.ids:
        try:
            rows = table_for(env_id, args.episodes, args.split, args.seed)
        except Exception as exc:  # noqa: BLE001 - report an env that does not build yet, keep going
            results[env_id] = {"error": f"{type(exc).__name__}: {exc}"}
            if not args.json:
                print(f"{env_id:<36}not run: {type(exc).__name__}: {exc}")
                traceback.print_exc(limit=2)
            continue
        results[env_id] = dict(rows)
        if not args.json:
            for name, row in rows:
                print(
                    f"{env_id:<36}{name:<16}"
                    + "".join(f"{row[p]:>11.3f}" for p in NAMES)
                    + f"{row['accuracy']:>10.3f}{row['tool_calls']:>8.1f}"
                )
    if args.json:
        print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
