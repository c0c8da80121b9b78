"""Row fields a trainer sends are checked against what is served, never ignored.

A probe had ``{"env_id": "RareDiseaseDiagnosis-v0", "seed": 0, "index": 0}`` play MediaSearch
over OpenEnv and verl-tool (only rows with ``task_index`` were checked), a SkyRL row for another
id play that id under the MediaSearch env class, and ``env_kwargs`` naming ``split: train``
beside ``split: test`` play a train task as a test episode.
"""

from __future__ import annotations

import pytest

from agentenv.integrations.row_episodes import EpisodeSpec
from agentenv.integrations.serve_env.sessions import StartError, start_from_fields

ROW = {"split": "test", "task_index": 0, "seed": 0}


@pytest.mark.parametrize(
    ("fields", "said"),
    [
        ({"env_id": "RareDiseaseDiagnosis-v0", "seed": 0, "index": 0}, "this server serves"),
        ({"env_id": 5, "seed": 0}, "'env_id' must be an env id string"),
        ({"env_kwargs": "not json"}, "not valid JSON"),
    ],
)
def test_start_fields_name_the_served_env_or_are_refused(fields: dict, said: str) -> None:
    with pytest.raises(StartError, match=said):
        start_from_fields(fields, env_id="MediaSearch-v0")


def test_start_fields_of_the_served_env_start_it() -> None:
    start = start_from_fields(
        {"env_id": "agentenv:MediaSearch-v0", "seed": 3, "index": 1, "env_kwargs": "{}"},
        env_id="MediaSearch-v0",
    )
    assert start.options == {"index": 1} and start.env_kwargs == {}


def test_env_kwargs_may_not_name_the_split() -> None:
    with pytest.raises(ValueError, match="names 'split'"):
        EpisodeSpec.from_fields(
            {**ROW, "env_kwargs": '{"split": "train"}'}, env_id="MediaSearch-v0"
        )


def test_a_skyrl_row_for_another_id_is_refused() -> None:
    skyrl_gym = pytest.importorskip("skyrl_gym")
    from agentenv.integrations.skyrl import register_envs

    register_envs()
    extras = {"extra_info": {**ROW, "env_id": "RareDiseaseDiagnosis-v0"}}
    with pytest.raises(ValueError, match="this env class plays 'MediaSearch-v0'"):
        skyrl_gym.make("agentenv/MediaSearch-v0", env_config={}, extras=extras)
