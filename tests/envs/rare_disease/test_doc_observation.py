"""The env page's example observation is the env's own: a reader compares it with what they see.

Why: the page showed a patient that no longer exists after the samplers changed, and an
instruction line older than the prompt's; nothing checked it.
"""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym

import agentenv  # noqa: F401 - registers the ids

PAGE = Path(__file__).resolve().parents[3] / "docs" / "envs" / "rare_disease.md"
ELIDED = "…"


def _example_block() -> list[str]:
    text = PAGE.read_text(encoding="utf-8")
    section = text[text.index("## Observation") :]
    start = section.index("```\n") + 4
    return section[start : section.index("```\n", start)].splitlines()


def test_the_example_observation_is_test_case_0_as_the_env_shows_it() -> None:
    env = gym.make("RareDiseaseDiagnosis-SingleTurn-v0", split="test", presentation="both")
    shown = env.reset(options={"index": 0})[0].splitlines()
    example = _example_block()
    assert example[-1] == shown[-1]  # the instruction line, whole
    position = 0
    for line in example:  # in order; a "…" or "- …" line stands for lines left out
        if line.lstrip("- ") == ELIDED:
            continue
        assert line in shown[position:], f"{line!r} is not in test case 0's observation (in order)"
        position = shown.index(line, position) + 1
