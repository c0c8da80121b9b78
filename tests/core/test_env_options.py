"""One constructor validator for every env: a wrong option fails at make, in one line naming the field and the fix.

The single-agent ids (``gym.make``) and the dialogue ids (``agentenv.multiagent.make``)
must refuse the same arguments the same way; before they shared one check,
``max_turns=True`` made a one-turn MediaSearch env and was a ``ValueError`` in a dialogue.
"""

from __future__ import annotations

import gymnasium as gym
import pytest

import agentenv  # noqa: F401 - registers the ids
from agentenv.engine.env_options import check_env_options
from agentenv.families import env_specs
from agentenv.multiagent.registry import env_ids as dialogue_ids
from agentenv.multiagent.registry import make as make_dialogue

SINGLE_AGENT = [spec.id for spec in env_specs()]
DIALOGUE = list(dialogue_ids())

BAD_OPTIONS = [
    ("max_turns", True),
    ("max_turns", 0),
    ("max_turns", 2.0),
    ("max_turns", "3"),
    ("max_action_length", False),
    ("max_observation_length", 0),
    ("observation_mode", "messages"),
    ("render_mode", "rgb_array"),
]


def _make(env_id: str, **options: object) -> object:
    if env_id in DIALOGUE:
        return make_dialogue(env_id, split="test", **options)
    return gym.make(env_id, split="test", **options).unwrapped


def test_every_kind_of_registered_id_is_covered() -> None:
    assert len(SINGLE_AGENT) >= 4 and len(DIALOGUE) >= 2
    assert not set(SINGLE_AGENT) & set(DIALOGUE)


@pytest.mark.filterwarnings(
    "ignore:.*render_mode='rgb_array'.*:UserWarning"
)  # gym.make's own note, before ours
@pytest.mark.parametrize("env_id", SINGLE_AGENT + DIALOGUE)
def test_every_id_refuses_the_same_bad_options_naming_the_field_and_the_fix(env_id: str) -> None:
    for field, value in BAD_OPTIONS:
        with pytest.raises(ValueError) as caught:
            _make(env_id, **{field: value})
        message = str(caught.value)
        assert message.startswith(f"{field} must be"), (env_id, field, value, message)
        assert repr(value) in message and "pass " in message and "\n" not in message, message


@pytest.mark.parametrize("env_id", SINGLE_AGENT + DIALOGUE)
def test_every_id_takes_valid_options(env_id: str) -> None:
    env = _make(env_id, max_turns=3, observation_mode="transcript", render_mode="ansi")
    single_turn = getattr(env, "single_turn", False)
    assert env.max_turns == (1 if single_turn else 3)
    assert env.observation_mode == "transcript" and env.render_mode == "ansi"


def test_a_bool_is_not_a_count_and_an_int_is_not_a_flag() -> None:
    with pytest.raises(
        ValueError, match=r"max_turns must be a positive int, got True: a bool is not a count"
    ):
        check_env_options(max_turns=True)
    with pytest.raises(ValueError, match=r"single_turn must be True or False, got 1"):
        check_env_options(max_turns=1, single_turn=1)
    with pytest.raises(
        ValueError, match=r"no tasks in split 'casual': choose another split \(--split"
    ):
        check_env_options(tasks=[], split="casual")
    check_env_options(
        max_turns=1, single_turn=True, max_action_length=5, max_observation_length=5, tasks=[1]
    )
