"""Both checkers run one driver: ``check_env`` dispatches by kind, and each kind hands its checker
to :func:`agentenv.checks.checker.run_contract`, so the contract's order cannot drift between them."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import pytest

import agentenv  # noqa: F401 - registers the ids
from agentenv.checks import check_env, dialogue_checker, env_checker
from agentenv.multiagent import make


@pytest.mark.parametrize(
    ("build", "module", "kwargs"),
    [
        (lambda: gym.make("MediaSearch-SingleTurn-v0"), env_checker, {}),
        (
            lambda: make("DiagnosisDialogue-v0"),
            dialogue_checker,
            {"num_cycles": 1, "parallel": False},
        ),
    ],
    ids=["single-agent", "dialogue"],
)
def test_each_kind_runs_the_shared_driver(
    build: Any, module: Any, kwargs: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[str] = []

    def driver(checker: Any, script: Any, label: str) -> str:
        seen.append(type(checker).__name__)
        assert callable(checker.episode) and callable(checker.turn_limit)
        return "report"

    monkeypatch.setattr(module, "run_contract", driver)
    assert check_env(build(), **kwargs) == "report" and len(seen) == 1
