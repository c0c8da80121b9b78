"""A run's fingerprint: what the agent was shown and how it was graded, as hashes.

Why: two runs of one env id on one split are comparable only when the agent
read the same instructions, could call the same tools, and was graded and
rewarded by the same rules. The env id and the corpus checksums do not say
that: a reworded system prompt, one more tool or a grading fix leaves them as
they were. So every run records, beside the task set's sha256:

* ``system_prompt``: sha256 of the system message(s) the agent reads first;
* ``tools``: sha256 of the OpenAI tool schemas offered (canonical JSON);
* ``reward``: sha256 of the reward preset's resolved definition (every field of
  its :class:`~agentenv.rewards.config.RewardConfig`, not just its name);
* ``grader``: ``family/version``, the family's
  :attr:`~agentenv.families.Family.grader_version`, which a family bumps when
  its grading changes (its answer grammar, components or gold rules).
* ``retriever`` (only where the env searches with a fused retriever, such as
  ``retriever="hybrid-minilm"``): its
  :meth:`~agentenv.retrieval.hybrid.HybridRetriever.ranking_fingerprint`, the
  fusion's weights, constant, depth, rewrites and the version their owner bumps.
  The default ``bm25`` adds no part, so its runs' fingerprints are as before.

The task set has its own sha256 beside it (the corpus checksums of a split's
questions or patients, or ``tasks_file.sha256`` of a ``--tasks`` file).

``agentenv leaderboard`` ranks runs of one env id only when every part is the
same, and otherwise says which part differs. The fingerprint is computed from
what the env shows after a reset, so it never depends on wall time.

Example:
    >>> fp = fingerprint_parts("You are...", [{"type": "function", "function": {"name": "f"}}],
    ...                        {"name": "strict", "weights": {"accuracy": 1.0}}, "media_search/1")
    >>> sorted(fp), fp["grader"]
    (['grader', 'reward', 'system_prompt', 'tools'], 'media_search/1')
    >>> differing(fp, {**fp, "tools": "0" * 64})
    ['tools']
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["PARTS", "describe_part", "differing", "env_fingerprint", "fingerprint_parts"]

PARTS = ("system_prompt", "tools", "reward", "grader")
"""The fingerprint's parts, in the order a mismatch is reported."""
_NAMES = {
    "system_prompt": "system prompt",
    "tools": "tool schemas",
    "reward": "reward definition",
    "grader": "grader version",
    "retriever": "retriever's ranking",
}


def _sha(value: Any) -> str:
    text = (
        value if isinstance(value, str) else json.dumps(value, sort_keys=True, ensure_ascii=False)
    )
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def fingerprint_parts(
    system_prompt: str,
    tools: Sequence[Mapping[str, Any]],
    reward: Mapping[str, Any],
    grader: str,
) -> dict[str, str]:
    """The fingerprint of the given pieces (see the module docstring)."""
    return {
        "system_prompt": _sha(system_prompt),
        "tools": _sha(list(tools)),
        "reward": reward_digest(reward),
        "grader": grader,
    }


def reward_digest(reward: Mapping[str, Any]) -> str:
    """The fingerprint's ``reward`` part: sha256 of a reward's resolved definition (a
    :class:`~agentenv.rewards.config.RewardConfig` dumped as JSON)."""
    return _sha(dict(reward))


def served_env(env: Any) -> Any:
    """The env that holds the tasks, tools and reward: the unwrapped env, or a dialogue's AEC env."""
    inner = env.unwrapped
    return getattr(inner, "aec_env", inner)


def env_fingerprint(env_id: str, env: Any, info: Mapping[str, Any]) -> dict[str, str]:
    """The fingerprint of ``env`` (of id ``env_id``), from ``info`` of a reset and the env's own records.

    The system prompt is every ``system`` message before the first user message of ``info["messages"]``
    (``""`` when there is none, as in an env that sends no system message).
    """
    from agentenv.families import family_of_env

    served = served_env(env)
    system = []
    for message in info.get("messages", ()):
        if message.get("role") != "system":
            break
        system.append(str(message.get("content", "")))
    reward = served.reward_config.model_dump(mode="json")
    try:
        family = family_of_env(env_id)
        grader = f"{family.name}/{family.grader_version}"
    except ValueError:  # an env no family registers (a plain gymnasium id): nothing to version
        grader = "unversioned"
    parts = fingerprint_parts("\n".join(system), info.get("tools") or [], reward, grader)
    ranking = getattr(getattr(served, "retriever", None), "ranking_fingerprint", None)
    if callable(ranking):
        parts["retriever"] = str(ranking())
    return parts


def describe_part(part: str) -> str:
    """A part's name as the leaderboard says it ("system prompt", "tool schemas", ...)."""
    return _NAMES.get(part, part)


def _parts(fingerprint: Any) -> dict[str, str]:
    """A recorded fingerprint as a mapping (anything else, e.g. a hand-edited list, differs from all)."""
    if fingerprint is None:
        return {}
    if isinstance(fingerprint, Mapping):
        return {str(k): v for k, v in fingerprint.items()}
    return {"malformed": repr(fingerprint)}


def differing(a: Mapping[str, str] | None, b: Mapping[str, str] | None) -> list[str]:
    """The parts in which two fingerprints differ, in :data:`PARTS` order (unknown parts after)."""
    a, b = _parts(a), _parts(b)
    keys = [*PARTS, *sorted((set(a) | set(b)) - set(PARTS))]
    return [k for k in keys if a.get(k) != b.get(k)]
