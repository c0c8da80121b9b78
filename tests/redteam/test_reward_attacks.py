"""Every attack class, on every registered id, gets a strict reward of 0; the honest answer gets 1.

The honest control is what makes these tests able to fail for the right
reason: the same task, answered with its gold, must score 1.0, so a 0 for an
attack is the grader refusing the attack, not a broken env. Run with ``-s``
to see the table of cases and the highest reward per env and attack class.
"""

from __future__ import annotations

from collections import defaultdict

import pytest

from .attacks import ATTACK_CLASSES, attacks
from .contexts import ALL_IDS, Target, target

REPORT: dict[tuple[str, str], list[float]] = defaultdict(list)
"""(env id, attack class) -> strict rewards, printed by the conftest at the end of the session."""


@pytest.fixture(scope="module", params=ALL_IDS)
def attacked(request: pytest.FixtureRequest) -> Target:
    return target(request.param)


def test_honest_answers_score(attacked: Target) -> None:
    for index, context in attacked.contexts.items():
        for honest in filter(None, (context.gold, context.gold_id)):
            reward, terminated, info = attacked.answer(index, honest)
            assert terminated and reward == 1.0, (
                attacked.env_id,
                index,
                honest,
                info.get("reward_components"),
            )


@pytest.mark.parametrize("attack_class", ATTACK_CLASSES)
def test_attack_class_scores_zero(attacked: Target, attack_class: str) -> None:
    cases = 0
    for index, context in attacked.contexts.items():
        for _, label, text in attacks(context, (attack_class,)):
            reward, terminated, info = attacked.answer(index, text)
            REPORT[(attacked.env_id, attack_class)].append(reward)
            components = info.get("reward_components") or {}
            assert reward == 0.0, (attacked.env_id, index, label, text[:200], components)
            if terminated:
                assert components["accuracy"] == 0.0 or components.get("over_limit") == 1.0, (
                    label,
                    components,
                )
            cases += 1
    assert cases >= len(attacked.contexts)
