"""The one driver of the contract checks, for single-agent and dialogue envs alike.

Why one driver: the single-agent checker (:mod:`agentenv.checks.env_checker`) and the dialogue
checker (:mod:`agentenv.checks.dialogue_checker`) run the same contract in the same order: a
scripted episode (its infos and gold checked on the way), an answer on the first turn,
determinism, unparseable actions, the turn limit, the reward mix and the documented components.
Two copies of that sequence drifted before (a check added to one only). Each kind keeps only
what differs: how it plays an episode (``episode``), its scripted actions, its turn-limit check
and the library check it runs first (Gymnasium's ``check_env``, PettingZoo's ``api_test``).

:func:`~agentenv.checks.any_env.check_env` takes either kind and dispatches by what the env is;
it lives in its own module because it imports both checkers, which import this driver.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any, Protocol

from agentenv.checks.contract import CheckReport
from agentenv.engine.actions import answer

ANSWER_NOW = (answer("I do not know."),)
"""The shortest episode every env must end: an answer on the first turn."""


class ContractChecker(Protocol):
    """What a kind of env gives the driver (both checkers subclass ``_checks.Checker``)."""

    seed: int
    report: CheckReport

    def timed(self, name: str, fn: Any, *args: Any) -> Any: ...
    def episode(self, seed: int, actions: Sequence[str], check: str) -> Any: ...
    def episode_contract(self, actions: Sequence[str]) -> Any: ...
    def answer_terminates(self) -> Any: ...
    def determinism(self, actions: Sequence[str], first: Any) -> None: ...
    def unparseable(self) -> None: ...
    def turn_limit(self) -> tuple[str, Sequence[str], Any] | None: ...
    def reward_mix(self, episodes: list[tuple[str, Sequence[str], Any]]) -> None: ...
    def components_documented(self) -> None: ...


def run_contract(c: ContractChecker, script: Sequence[str], script_label: str) -> CheckReport:
    """Run the contract checks, in order, on a checker whose library check already ran."""
    start = time.perf_counter()
    scripted = c.episode_contract(script)
    # info keys and gold are checked on every episode the checker plays; this is the first one's time
    c.report.seconds["info_keys"], c.report.seconds["no_gold_before_end"] = (
        time.perf_counter() - start,
        0.0,
    )
    answer_now = list(ANSWER_NOW)
    answered = c.timed("answer_terminates", c.answer_terminates) or c.episode(
        c.seed, answer_now, "answer_terminates"
    )
    c.timed("same_seed_same_transcript", c.determinism, script, scripted)
    c.timed("unparseable_action", c.unparseable)
    episodes: list[tuple[str, Sequence[str], Any]] = [
        (script_label, script, scripted),
        ("an answer on the first turn", answer_now, answered),
    ]
    limited = c.turn_limit()
    if limited is not None:
        episodes.append(limited)
    c.timed("reward_mix", c.reward_mix, episodes)
    c.timed("components_documented", c.components_documented)
    return c.report
