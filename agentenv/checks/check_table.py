"""The checks of both contract checkers, in one table: each says which envs it applies to and why it matters.

Why one table: :func:`~agentenv.checks.check_tool_env` (single-agent) and
:func:`~agentenv.checks.check_dialogue_env` (PettingZoo dialogues) test one step
contract, seen from one agent or from each agent of a dialogue, so most checks
are the same check. When each checker kept its own table the shared checks were
written twice, and their reasons had begun to read differently. Here each check
is listed once, with the kinds of env it applies to (``single-agent``,
``dialogue`` or ``both``), whether it runs on every episode (and so cannot be
skipped), and the reason a failure message gives as its second line.

Example:
    >>> [c.name for c in CHECKS if c.applies != "both"]
    ['gymnasium', 'pettingzoo_api', 'pettingzoo_parallel_api', 'single_turn']
    >>> list(checks_for("dialogue"))[:3]
    ['pettingzoo_api', 'pettingzoo_parallel_api', 'info_keys']
    >>> refuse_unknown_skips("single-agent", ["pettingzoo_api"])
    Traceback (most recent call last):
    ...
    ValueError: cannot skip ['pettingzoo_api']: skip takes ['answer_terminates', 'components_documented', 'gymnasium', 'reward_mix', 'same_seed_same_transcript', 'single_turn', 'truncation', 'unparseable_action'] (info_keys, no_gold_before_end run on every episode)
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Literal, NamedTuple

EnvKind = Literal["single-agent", "dialogue"]


class Check(NamedTuple):
    """One contract check: its name, the envs it applies to, and why it matters."""

    name: str
    applies: Literal["single-agent", "dialogue", "both"]
    why: str
    always: bool = False
    """Made on every info of every episode the checker runs, so it cannot be skipped."""


CHECKS: tuple[Check, ...] = (
    Check(
        "gymnasium",
        "single-agent",
        "vector envs, wrappers and RL libraries assume Gymnasium's API (spaces, reset/step signatures, "
        "seeding); they fail far from the env when it is broken",
    ),
    Check(
        "pettingzoo_api",
        "dialogue",
        "multi-agent trainers and PettingZoo's wrappers assume its AEC protocol (agent selection, rewards, "
        "terminations, the one None step of an agent that is done)",
    ),
    Check(
        "pettingzoo_parallel_api",
        "dialogue",
        "the parallel version (turn-based conversion) is what parallel trainers step; it must keep "
        "PettingZoo's parallel API",
    ),
    Check(
        "info_keys",
        "both",
        "trainers prompt each agent from its info['messages'] and info['tools'] (chat-template inputs) and "
        "log the other keys; a missing or mistyped key breaks a training run at its first episode, far "
        "from the env",
        always=True,
    ),
    Check(
        "no_gold_before_end",
        "both",
        "a policy that can read the gold learns to copy it, and the reward then measures nothing; after the "
        "end, graders and logs need it",
        always=True,
    ),
    Check(
        "answer_terminates",
        "both",
        "an answer must end the episode (for every agent of a dialogue) and be graded, or the return never "
        "includes accuracy",
    ),
    Check(
        "components_documented",
        "both",
        "a reward component without a documented meaning cannot be weighted or interpreted; document it in "
        "the family's record (Family.components: name -> meaning), which changes no file outside the "
        "family's folder",
    ),
    Check(
        "same_seed_same_transcript",
        "both",
        "RL runs, evaluations and bug reports must replay bit for bit from a seed",
    ),
    Check(
        "unparseable_action",
        "both",
        "a model's malformed output (a dialogue's lead or simulated side alike) must cost a turn and say what "
        "was expected; an exception kills the rollout worker, and a silent repair trains nothing",
    ),
    Check(
        "single_turn",
        "single-agent",
        "a single-turn env has one action by definition; a second one would let a policy retry a graded "
        "answer",
    ),
    Check(
        "truncation",
        "both",
        "the turn budget (a dialogue's lead's) bounds every episode; without truncation at exactly max_turns "
        "a looping policy never ends, and turn costs and budgets mean something else than configured",
    ),
    Check(
        "reward_mix",
        "both",
        "the reward must be the configured mix of the reported components (a dialogue's simulated side: "
        "1 per faithful message), or what you log is not what you optimise (and RewardConfig presets and "
        "wrappers change nothing)",
    ),
)
"""Every check of both checkers, in the order they run."""

ALWAYS = tuple(c.name for c in CHECKS if c.always)
"""The checks made on every info of every episode a checker runs: they cannot be skipped."""


def checks_for(kind: EnvKind) -> dict[str, str]:
    """Check name -> why it matters, for the checks that apply to ``kind``, in order."""
    return {c.name: c.why for c in CHECKS if c.applies in (kind, "both")}


def refuse_unknown_skips(kind: EnvKind, skip: Collection[str]) -> None:
    """Raise ``ValueError`` when ``skip`` names a check that ``kind``'s checker does not run, or one
    that always runs; the message lists what ``skip`` takes."""
    names = checks_for(kind)
    bad = {s for s in skip if s not in names or s in ALWAYS}
    if bad:
        takes = sorted(set(names) - set(ALWAYS))
        raise ValueError(
            f"cannot skip {sorted(bad)}: skip takes {takes} ({', '.join(ALWAYS)} run on every episode)"
        )
