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


def test_a_user_who_leaves_out_the_opening_is_not_faithful() -> None:
    """The briefing says what to open with; "Hello." scored the user 1.0, the opening is now asked."""
    dialogue = make("MediaConcierge-v0")
    dialogue.reset(seed=5)
    dialogue.step("<say>Hello.</say>")
    assert dialogue.rewards["user"] == 0.0
    assert dialogue.judgments[-1].counts["unanswered"] >= 1
    dialogue.reset(seed=5)
    dialogue.step(f"<say>{dialogue.infos['user']['private']['opening_text']}</say>")
    assert dialogue.rewards["user"] == 1.0
