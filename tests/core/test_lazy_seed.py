"""``reset(seed=s)`` builds the generator on the first draw, and every draw is what gymnasium's eager seeding gives."""

from __future__ import annotations

import gymnasium
import pytest
from gymnasium.utils import seeding
from hypothesis import given, settings
from hypothesis import strategies as st

from .toy_env import SquareEnv


def _eager(seed: int):  # type: ignore[no-untyped-def]
    return seeding.np_random(seed)[0]


@settings(max_examples=40, deadline=None, derandomize=True)
@given(
    seed=st.integers(min_value=0, max_value=2**63 - 1),
    pinned=st.booleans(),
    resets=st.integers(0, 3),
)
def test_every_draw_after_a_seeded_reset_is_gymnasium_s(
    seed: int, pinned: bool, resets: int
) -> None:
    env = SquareEnv()
    options = {"index": 1} if pinned else None
    _, info = env.reset(seed=seed, options=options)
    stream = _eager(seed)
    if not pinned:  # the task itself was the first draw
        assert env._episode.task is env.tasks[int(stream.integers(len(env.tasks)))]  # type: ignore[union-attr]
    assert env.np_random_seed == seed
    for _ in range(resets):  # unseeded resets keep the stream
        env.reset(options={"index": 0})
    assert int(env.np_random.integers(2**62)) == int(stream.integers(2**62))


def test_a_pinned_seeded_reset_builds_no_generator() -> None:
    env = SquareEnv()
    env.reset(seed=5, options={"index": 0})
    assert env._np_random is None and env.np_random_seed == 5


@pytest.mark.parametrize("seed", [-1, 1.5, "3"])
def test_a_bad_seed_is_refused_as_gymnasium_refuses_it(seed: object) -> None:
    with pytest.raises(gymnasium.error.Error):
        SquareEnv().reset(seed=seed, options={"index": 0})  # type: ignore[arg-type]


def test_a_generator_set_by_hand_is_kept_until_the_next_seed() -> None:
    import numpy as np

    env = SquareEnv()
    mine = np.random.default_rng(123)
    env.np_random = mine
    env.reset(options={"index": 0})
    assert env.np_random is mine and env.np_random_seed == -1
    env.reset(seed=9, options={"index": 0})
    assert env.np_random is not mine and env.np_random_seed == 9
