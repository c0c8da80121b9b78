"""Token-exact rollouts on Ray actors for a trainer: ``RolloutPool(env_id, policy).run(n)`` streams them as they finish.

Why a pool of actors: an RL step needs many episodes, and the env work (tool
calls, retrieval, grading) of each is small next to the policy's sampling, so
many env workers per sampler keep the sampler busy. Each actor builds its env
(``gym.make`` from the id and kwargs) and the chat template once, wraps the
env in :class:`~agentenv.tokens.TokenEnv`, and plays the episodes it is given
with the policy (see :mod:`~agentenv.integrations.ray.policies`).

Each rollout is token-exact: ``input_ids`` is prompt, sampled and env ids
interleaved exactly as the episode ran, ``loss_mask`` marks the sampled ids,
and ``logprobs`` carries the sampler's values where the policy returned them.
Episode ``i`` of a pool with seed ``s`` resets with ``seed=s + i`` on the task
of the run plan (:func:`~agentenv.evaluation.runner.episode_plan`), and the
policy's generator is seeded from ``(s, i)``: a repeated pool repeats its
episodes, whichever actor runs them. Episodes are numbered on across calls
of :meth:`RolloutPool.run`, so each training step gets fresh tasks. With
``group_size=G`` (GRPO's generations per prompt), episodes ``G·j … G·j+G-1``
form group ``j``: one task, each with its own seed.

:func:`trl_fields` turns rollouts into what TRL's ``GRPOTrainer(rollout_func=...)``
expects (``prompt_ids``, ``completion_ids``, ``logprobs``, ``env_mask``), with
the episode returns as an extra field for a reward function.

Actors that die have their episodes run again elsewhere; episodes that still
cannot run are named by :class:`RolloutsIncomplete` after the others are out.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import gymnasium as gym
import numpy as np

from agentenv.errors import UserInputError
from agentenv.evaluation.agents import AgentFailure
from agentenv.evaluation.runner import episode_plan
from agentenv.integrations.ray.cluster import connect, require_ray
from agentenv.integrations.ray.dispatch import Dispatcher
from agentenv.tokens.rollout import TokenRollout

Rollout = TokenRollout
"""The pool's rollouts are :class:`agentenv.tokens.TokenRollout` (one type with the served model's rollouts);
the pool fills ``episode``, ``seed``, ``task_id``, ``task_index``, ``group`` and ``failure``."""


class RolloutsIncomplete(RuntimeError):
    """Some rollouts could not run (their actors died and the retries ran out); ``missing`` lists them."""

    def __init__(self, missing: list[int]) -> None:
        self.missing = missing
        super().__init__(
            f"{len(missing)} rollouts could not run (their Ray workers died): episodes {missing[:20]}"
        )


class _Observed(gym.Wrapper):
    """Puts the text observation into ``info["observation"]`` (``TokenEnv`` passes only ``info`` on)."""

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        obs, info = self.env.reset(**kwargs)
        return obs, {**info, "observation": obs}

    def step(self, action: Any) -> tuple[Any, Any, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        return obs, reward, terminated, truncated, {**info, "observation": obs}


def resolve_template(spec: Any) -> Any:
    """A chat template from ``"qwen3"``, ``"qwen3-nothink"``, a zero-argument factory, or a template itself."""
    if spec in ("qwen3", "qwen3-nothink"):
        from agentenv.tokens import qwen3_template

        return qwen3_template(enable_thinking=spec == "qwen3")
    if hasattr(spec, "render_prefix"):
        return spec
    if callable(spec):
        return spec()
    raise UserInputError(
        f"template must be 'qwen3', 'qwen3-nothink', a ChatTemplate or a factory of one, not {spec!r}"
    )


class RolloutWorker:
    """One Ray actor: the env, the template and the policy, and the episode loop through ``TokenEnv``."""

    def __init__(
        self,
        env_id: str,
        env_kwargs: Mapping[str, Any],
        template: Any,
        policy: Any,
        seed: int,
        group_size: int = 1,
    ) -> None:
        import agentenv  # noqa: F401 - registers the ids

        self.env = gym.make(env_id, **dict(env_kwargs))
        self.template = resolve_template(template)
        self.policy = policy
        self.seed = seed
        self.group_size = group_size
        self.env.reset(seed=seed)
        self._plan: list[int] = []

    def ready(self) -> dict[str, Any]:
        """Where this actor runs (its env is built once this answers)."""
        ray = require_ray()
        return {
            "pid": os.getpid(),
            "node": ray.get_runtime_context().get_node_id(),
            "ip": ray.util.get_node_ip_address(),
        }

    def run(self, episodes: tuple[int, ...]) -> list[Rollout]:
        """Play the given episodes, in order."""
        return [self._play(episode) for episode in episodes]

    def _task_index(self, episode: int) -> int:
        group = episode // self.group_size
        if group >= len(self._plan):
            self._plan = episode_plan(len(self.env.unwrapped.tasks), max(2 * group, 64), self.seed)
        return self._plan[group]

    def _play(self, episode: int) -> Rollout:
        from agentenv.tokens import TokenEnv

        index = self._task_index(episode)
        token_env = TokenEnv(_Observed(self.env), self.template)
        _, info = token_env.reset(seed=self.seed + episode, options={"index": index})
        begin = getattr(self.policy, "begin", None)
        if begin is not None:
            begin(
                info,
                task=self.env.unwrapped.task,
                rng=np.random.default_rng([self.seed, episode]),
                template=self.template,
            )
        rewards: list[float] = []
        failure: str | None = None
        terminated = truncated = False
        while not (terminated or truncated):
            try:
                action = self.policy(list(info["input_ids"]), info)
            except AgentFailure as err:
                failure = err.reason
                break
            _, reward, terminated, truncated, info = token_env.step(action)
            rewards.append(float(reward))
        return Rollout(
            episode=episode,
            seed=self.seed + episode,
            task_id=str(info["task_id"]),
            task_index=index,
            group=episode // self.group_size,
            input_ids=list(info["input_ids"]),
            loss_mask=list(info["loss_mask"]),
            logprobs=list(info["logprobs"]),
            rewards=rewards,
            terminated=bool(terminated),
            truncated=bool(truncated),
            reward_components=dict(info.get("reward_components") or {}),
            messages=list(info["messages"]),
            failure=failure,
        )


class RolloutPool:
    """Ray actors that play token-exact episodes of ``env_id`` with ``policy``; see the module docstring.

    Args:
        env_id: a registered id, e.g. ``MediaSearch-v0``.
        policy: a picklable callable (see :mod:`~agentenv.integrations.ray.policies`).
        workers: actors (one CPU each).
        template: ``"qwen3"`` (default), ``"qwen3-nothink"``, a picklable ChatTemplate or a zero-argument
            factory of one (built in each actor), e.g. ``functools.partial(hf_template, tokenizer)``.
        seed: episode ``i`` resets with ``seed + i``.
        group_size: consecutive episodes that play the same task (GRPO's generations per prompt).
        env_kwargs: ``gym.make`` kwargs (``split`` defaults to ``train``, as for ``gym.make``); a shared
            retrieval service goes in as ``retriever=URL``.
        address: the Ray cluster, if this process is not connected yet (default: start a local one).
        episodes_per_call: episodes per actor call (1 streams each one as it ends).
        max_attempts: times an episode may be lost with a dying actor before it is given up.
    """

    def __init__(
        self,
        env_id: str,
        policy: Callable[..., Any],
        *,
        workers: int = 2,
        template: Any = "qwen3",
        seed: int = 0,
        group_size: int = 1,
        env_kwargs: Mapping[str, Any] | None = None,
        address: str = "local",
        episodes_per_call: int = 1,
        max_attempts: int = 3,
        startup_timeout_s: float = 300.0,
    ) -> None:
        if group_size < 1:
            raise UserInputError(f"group_size must be at least 1, got {group_size}")
        if not callable(policy):
            raise UserInputError(
                f"policy must be callable (input_ids, info) -> ids, got {type(policy).__name__}"
            )
        ray = require_ray()
        local_cpus = max(os.cpu_count() or 1, workers) if address == "local" else None
        self._started = connect(address, num_cpus=local_cpus)
        try:
            ray.cloudpickle.dumps(policy)
        except Exception as err:  # noqa: BLE001 - any pickling failure has the same fix
            self._shutdown()
            raise UserInputError(
                f"the policy cannot be sent to Ray workers: it does not pickle ({type(err).__name__}: {err}). "
                "Keep clients, locks and open files out of it and open them lazily in begin() or on first call "
                "(as EndpointPolicy does)"
            ) from None
        kwargs = dict(env_kwargs or {})
        kwargs.setdefault("split", "train")
        remote = ray.remote(num_cpus=1, max_restarts=0)(RolloutWorker)
        self.episodes_per_call = episodes_per_call
        self.next_episode = 0
        self.dispatcher = Dispatcher(
            lambda _: remote.remote(env_id, kwargs, template, policy, seed, group_size),
            workers,
            "run",
            max_replacements=workers,
            max_attempts=max_attempts,
            startup_timeout_s=startup_timeout_s,
        )
        try:
            self.dispatcher.start()
        except BaseException:
            self._shutdown()
            raise

    def run(self, episodes: int) -> Iterator[Rollout]:
        """The next ``episodes`` rollouts, each as soon as it ends (not in episode order).

        With ``group_size > 1`` ask for whole groups (a multiple of it), or a group is split across calls.
        """
        numbers = list(range(self.next_episode, self.next_episode + episodes))
        self.next_episode += episodes
        step = self.episodes_per_call
        chunks = [tuple(numbers[i : i + step]) for i in range(0, len(numbers), step)]
        seen: set[int] = set()
        for _, rollouts in self.dispatcher.run(chunks):
            for rollout in rollouts:
                if rollout.episode not in seen:  # a chunk run again may repeat one
                    seen.add(rollout.episode)
                    yield rollout
        if len(seen) < len(numbers):
            self.dispatcher.failed.clear()
            raise RolloutsIncomplete(sorted(set(numbers) - seen))

    def close(self) -> None:
        """Stop the actors (and Ray, if the pool started it)."""
        self.dispatcher.close()
        self._shutdown()

    def _shutdown(self) -> None:
        if self._started:
            require_ray().shutdown()
            self._started = False

    def __enter__(self) -> RolloutPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def trl_fields(rollouts: Sequence[Rollout]) -> dict[str, list[Any]]:
    """What TRL's ``GRPOTrainer(rollout_func=...)`` takes, from rollouts in the order given.

    ``completion_ids`` is everything after the prompt (sampled and env ids),
    ``env_mask`` is 1 on sampled ids and 0 on env ids (TRL leaves the latter out
    of the loss), ``logprobs`` has 0.0 where the policy gave none, and
    ``env_return`` (each episode's return) is handed on to reward functions.

    Example:
        >>> r = Rollout([1, 2, 3, 4, 5], [0, 0, 1, 0, 1], [0.0, 0.0, -0.5, 0.0, None], [0.0, 1.0], True, False)
        >>> trl_fields([r])
        {'prompt_ids': [[1, 2]], 'completion_ids': [[3, 4, 5]], 'logprobs': [[-0.5, 0.0, 0.0]], 'env_mask': [[1, 0, 1]], 'env_return': [1.0]}
    """
    out: dict[str, list[Any]] = {
        "prompt_ids": [],
        "completion_ids": [],
        "logprobs": [],
        "env_mask": [],
        "env_return": [],
    }
    for r in rollouts:
        n = r.prompt_length
        out["prompt_ids"].append(r.input_ids[:n])
        out["completion_ids"].append(r.input_ids[n:])
        out["logprobs"].append([lp if lp is not None else 0.0 for lp in r.logprobs[n:]])
        out["env_mask"].append(r.loss_mask[n:])
        out["env_return"].append(r.episode_return)
    return out
