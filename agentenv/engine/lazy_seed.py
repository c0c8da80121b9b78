"""``reset(seed=s)`` that builds the env's generator only when something draws from it.

Why: gymnasium's ``Env.reset`` builds ``np.random.Generator(PCG64(SeedSequence(s)))`` at
once, about 13 µs, and the whole seeded reset of a MediaSearch env cost 27 µs against 7 µs
unseeded. Most resets pin their task (``options={"index": i}``, as every trainer row and
every ``serve-env`` start does) and draw nothing, yet a server seeds every start. With
:class:`LazySeed` the seed is kept and the generator is built from it on the first draw,
so what any draw returns is what gymnasium's eager seeding gives: the same seed, the same
stream, and ``np_random_seed`` answers at once.

Example:
    >>> import gymnasium as gym
    >>> from gymnasium.utils import seeding
    >>> class Env(LazySeed, gym.Env):
    ...     def reset(self, *, seed=None, options=None):
    ...         self.seed_lazily(seed)
    ...         return 0, {}
    >>> env = Env()
    >>> _ = env.reset(seed=3)
    >>> env._np_random is None, env.np_random_seed
    (True, 3)
    >>> int(env.np_random.integers(10**9)) == int(seeding.np_random(3)[0].integers(10**9))
    True
"""

from __future__ import annotations

import numpy as np
from gymnasium.utils import seeding


class LazySeed:
    """Mixin before ``gym.Env``: :meth:`seed_lazily` in ``reset`` instead of ``super().reset(seed=seed)``."""

    _np_random: np.random.Generator | None
    _np_random_seed: int | None

    def seed_lazily(self, seed: int | None) -> None:
        """Keep ``seed`` for the next draw; anything but a plain non-negative ``int`` goes to gymnasium
        as it is (``None`` keeps the generator, a bad seed gets gymnasium's own error)."""
        if type(seed) is int and seed >= 0:
            self._np_random, self._np_random_seed = None, seed
        else:
            super().reset(seed=seed)  # type: ignore[misc]

    @property
    def np_random(self) -> np.random.Generator:
        """The env's generator, built on first use from the kept seed (or from entropy if none)."""
        if self._np_random is None:
            self._np_random, self._np_random_seed = seeding.np_random(self._np_random_seed)
        return self._np_random

    def draw_generator(self) -> np.random.Generator:
        """:attr:`np_random`, as a function to hand to code that may not draw (the task chooser)."""
        return self.np_random

    @np_random.setter
    def np_random(self, value: np.random.Generator) -> None:
        self._np_random = value
        self._np_random_seed = -1  # as gymnasium: a generator set by hand has no seed
