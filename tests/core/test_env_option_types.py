"""Env options of the wrong type are refused, not read some other way. ``reset(options=...)``
takes a dict: a string was read key by key ("reset options ['a', 'c',
...] are not used") and the episode went on with a random task."""

from __future__ import annotations

import gymnasium as gym
import pytest

import agentenv  # noqa: F401 - registers the ids
from agentenv.multiagent import make


@pytest.mark.parametrize("options", ["notadict", [("index", 1)], 3])
def test_options_that_are_not_a_dict_are_refused(options: object) -> None:
    with pytest.raises(TypeError, match="reset options must be a dict"):
        gym.make("MediaSearch-v0").reset(options=options)
    with pytest.raises(TypeError, match="reset options must be a dict"):
        make("DiagnosisDialogue-v0").reset(options=options)


@pytest.mark.parametrize("value", ["no", 1, None])
def test_on_off_options_take_true_or_false_only(value: object) -> None:
    """``bool("no")`` is True: ``tools_in_prompt="no"`` used to turn the option on."""
    with pytest.raises(TypeError, match="tools_in_prompt must be True or False"):
        gym.make("MediaSearch-v0", tools_in_prompt=value)
    with pytest.raises(TypeError, match="tools_in_prompt must be True or False"):
        make("DiagnosisDialogue-v0", tools_in_prompt=value)
