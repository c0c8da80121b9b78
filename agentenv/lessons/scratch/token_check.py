"""Token-exactness of GRPO batches: the trainer's ids, replayed through ``TokenEnv``, are the env's ids.

Why check it: decoding a model's tokens and re-tokenizing the text for
training broke multi-turn RL in the workshop. TRL builds a multi-turn
completion itself (the model's ids, then the tool results it renders, then the
model's next ids). This check replays each recorded rollout of
:class:`agentenv.lessons.scratch.grpo.RecordingGRPOTrainer` through
:class:`agentenv.tokens.TokenEnv` on the same task: the prompt must be the ids
``TokenEnv.reset`` returns, each run of policy ids (tool mask 1) is sent to
``TokenEnv.step`` unchanged, and the env ids the trainer holds (tool mask 0)
must be exactly the ids ``TokenEnv`` appends.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass
class TokenCheck:
    """Outcome over a set of rollouts."""

    rollouts: int = 0
    exact: int = 0
    policy_tokens: int = 0
    env_tokens: int = 0
    prompt_tokens: int = 0
    mismatches: list[dict[str, Any]] = field(default_factory=list)

    @property
    def all_exact(self) -> bool:
        return self.rollouts > 0 and self.exact == self.rollouts

    def to_dict(self) -> dict[str, Any]:
        return {
            "rollouts": self.rollouts,
            "exact": self.exact,
            "policy_tokens": self.policy_tokens,
            "env_tokens": self.env_tokens,
            "prompt_tokens": self.prompt_tokens,
            "mismatches": self.mismatches[:5],
        }


def runs(mask: Sequence[int]) -> list[tuple[int, int, int]]:
    """``(value, start, end)`` of each run of equal values in ``mask``.

    >>> runs([1, 1, 0, 0, 0, 1])
    [(1, 0, 2), (0, 2, 5), (1, 5, 6)]
    """
    out: list[tuple[int, int, int]] = []
    start = 0
    for i in range(1, len(mask) + 1):
        if i == len(mask) or mask[i] != mask[start]:
            out.append((int(mask[start]), start, i))
            start = i
    return out


def check_rollouts(
    rollouts: Iterable[Mapping[str, Any]],
    env_id: str,
    env_kwargs: Mapping[str, Any],
    tokenizer: Any,
) -> TokenCheck:
    """Replay ``rollouts`` (recorded batches' entries) through ``TokenEnv`` and compare ids."""
    import gymnasium as gym

    from agentenv.tokens import TokenEnv
    from agentenv.tokens.chat_templates import hf_template

    template = hf_template(tokenizer)
    envs: dict[str, Any] = {}
    tasks: dict[str, dict[str, Any]] = {}
    result = TokenCheck()
    for rollout in rollouts:
        split = rollout.get("split") or "train"
        if split not in envs:
            envs[split] = TokenEnv(
                gym.make(f"agentenv:{env_id}", split=split, **env_kwargs), template
            )
            tasks[split] = {t.id: t for t in envs[split].unwrapped.tasks}
        env = envs[split]
        result.rollouts += 1
        problem = _replay(env, tasks[split][rollout["task_id"]], rollout)
        mask = rollout["tool_mask"]
        result.prompt_tokens += len(rollout["prompt_ids"])
        result.policy_tokens += sum(1 for m in mask if m)
        result.env_tokens += sum(1 for m in mask if not m)
        if problem is None:
            result.exact += 1
        else:
            result.mismatches.append({"task_id": rollout["task_id"], **problem})
    return result


def _replay(env: Any, task: Any, rollout: Mapping[str, Any]) -> dict[str, Any] | None:
    prompt, _ = env.reset(seed=0, options={"task": task})
    prompt = [int(i) for i in prompt]  # plain ints: the mismatch report goes into summary.json
    if prompt != list(rollout["prompt_ids"]):
        return {
            "where": "prompt",
            "env": prompt[-20:],
            "trainer": list(rollout["prompt_ids"])[-20:],
        }
    ids, mask = rollout["completion_ids"], rollout["tool_mask"]
    pending: list[int] | None = None
    for value, start, end in runs(mask):
        segment = list(ids[start:end])
        if value == 1:
            obs, _, terminated, truncated, _ = env.step(segment)
            pending = [int(i) for i in obs] if obs is not None and len(obs) else None
            continue
        if pending is None:
            return {
                "where": f"tokens {start}-{end}",
                "reason": "env ids where the env had ended the episode",
            }
        if pending != segment:
            return {"where": f"tokens {start}-{end}", "env": pending[:40], "trainer": segment[:40]}
        pending = None
    return None
