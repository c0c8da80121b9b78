"""A dialogue env refuses, when made, a reward that reads a component it never reports.

It used to accept ``reward={"weights": {"acuracy": 1}}`` (and another family's preset,
``first-call-credit``) and raise ``KeyError`` at the end of the first episode, after the work,
as the single-agent ids stopped doing long ago.
"""

from __future__ import annotations

import pytest

from agentenv.multiagent import as_single_agent, make

IDS_AND_ANSWERS = [
    ("DiagnosisDialogue-v0", "<answer>OMIM:154700</answer>"),
    ("MediaConcierge-v0", "<answer>Heat (1995)</answer>"),
]


@pytest.mark.parametrize(("env_id", "answer"), IDS_AND_ANSWERS)
@pytest.mark.parametrize(
    ("reward", "unread"),
    [({"weights": {"acuracy": 1.0}}, "['acuracy']"), ("first-call-credit", "['first_call']")],
)
def test_a_reward_reading_an_unreported_component_is_refused_at_make(
    env_id: str, answer: str, reward: object, unread: str
) -> None:
    with pytest.raises(ValueError, match=rf"reads {unread.replace('[', '.').replace(']', '.')}"):
        make(env_id, reward=reward)


@pytest.mark.parametrize(("env_id", "answer"), IDS_AND_ANSWERS)
def test_an_episode_reports_every_component_the_env_declares(env_id: str, answer: str) -> None:
    """The declaration the check reads is true: a real episode reports each declared name."""
    dialogue = make(env_id)
    declared = dialogue._graded_components()
    env = as_single_agent(dialogue)
    env.reset(seed=1)
    *_, info = env.step(answer)
    assert declared <= set(info["reward_components"])
    for preset in ("strict", "lenient", "efficient"):
        make(env_id, reward=preset)
