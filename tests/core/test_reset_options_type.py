"""``reset(options=...)`` takes a dict: a string was read key by key ("reset options ['a', 'c',
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
