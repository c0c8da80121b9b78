"""A text space that accepts any Unicode string, so LLM actions are never "out of space".

Gymnasium's own :class:`gymnasium.spaces.Text` checks every character against a
charset. An LLM emits arbitrary Unicode (accents, CJK, emoji), and a space that
rejects it would make ``check_env`` and the passive checker fail on real
actions. This subclass keeps Gymnasium's type (so vector-env batching
dispatches on it) but checks only type and length.

Gymnasium's shared-memory helpers for ``Text`` index characters in the
charset, which raises ``KeyError`` on Unicode; they are re-registered here to
store code points instead, so ``gym.make_vec(..., vectorization_mode="async")``
works without ``shared_memory=False``.

Example:
    >>> space = Text(max_length=8)
    >>> space.contains("héllo ✓"), space.contains("x" * 9), space.contains(3)
    (True, False, False)
"""

from __future__ import annotations

import multiprocessing as mp
from collections.abc import Sequence
from types import ModuleType
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector.utils import shared_memory as gym_shared_memory

#: Characters used by :meth:`Text.sample`. Sampling is for fuzzing and
#: ``check_env``; a printable ASCII set plus the markup an LLM would emit is
#: enough to reach every branch of the parser.
SAMPLE_CHARSET = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 {}[]<>/":,._-\n'


class Text(spaces.Text):
    """Any ``str`` of length ``min_length..max_length``.

    ``contains`` checks the type and the length only; ``sample`` draws from
    :data:`SAMPLE_CHARSET` so sampled actions are usually malformed, which is
    what a random agent should produce.
    """

    def __init__(
        self,
        max_length: int,
        *,
        min_length: int = 0,
        seed: int | np.random.Generator | None = None,
    ) -> None:
        super().__init__(
            max_length=max_length, min_length=min_length, charset=SAMPLE_CHARSET, seed=seed
        )

    def contains(self, x: Any) -> bool:
        """Return True for a ``str`` within the length bounds, whatever its characters."""
        return isinstance(x, str) and self.min_length <= len(x) <= self.max_length

    def __repr__(self) -> str:
        return f"Text({self.min_length}, {self.max_length}, charset=unicode)"

    def __eq__(self, other: Any) -> bool:
        return (
            isinstance(other, Text)
            and self.min_length == other.min_length
            and self.max_length == other.max_length
        )

    __hash__ = None  # type: ignore[assignment]


# Shared memory for async vector envs: one int32 code point per character,
# 0 marking the end (code points are stored + 1 so NUL survives).


@gym_shared_memory.create_shared_memory.register(Text)
def _create_unicode_text_memory(space: Text, n: int = 1, ctx: ModuleType = mp) -> Any:
    return ctx.Array(np.dtype(np.int32).char, n * space.max_length)


class SharedTextBatch(Sequence[str]):
    """A live view of the texts in shared memory.

    Gymnasium reads the shared buffer once, at construction, and expects a
    view that follows later writes (numpy arrays do). A tuple of ``str`` would
    be a stale snapshot, so this view decodes on access; ``deepcopy`` (what
    ``AsyncVectorEnv`` returns with ``copy=True``) gives a plain tuple.
    """

    def __init__(self, shared_memory: Any, n: int, max_length: int) -> None:
        self._data = np.frombuffer(shared_memory.get_obj(), dtype=np.int32).reshape((n, max_length))

    def __len__(self) -> int:
        return self._data.shape[0]

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return tuple(self[i] for i in range(*index.indices(len(self))))
        row = self._data[index]
        end = np.flatnonzero(row == 0)
        used = row[: end[0]] if end.size else row
        return (used - 1).astype(np.uint32).tobytes().decode("utf-32-le")

    def __deepcopy__(self, memo: dict[int, Any]) -> tuple[str, ...]:
        return tuple(self)

    def __eq__(self, other: Any) -> bool:
        return (
            tuple(self) == tuple(other)
            if isinstance(other, (tuple, SharedTextBatch))
            else NotImplemented
        )

    def __repr__(self) -> str:
        return f"SharedTextBatch({tuple(self)!r})"


@gym_shared_memory.read_from_shared_memory.register(Text)
def _read_unicode_text_memory(space: Text, shared_memory: Any, n: int = 1) -> SharedTextBatch:
    return SharedTextBatch(shared_memory, n, space.max_length)


@gym_shared_memory.write_to_shared_memory.register(Text)
def _write_unicode_text_memory(space: Text, index: int, values: str, shared_memory: Any) -> None:
    size = space.max_length
    destination = np.frombuffer(shared_memory.get_obj(), dtype=np.int32)
    codes = np.zeros(size, dtype=np.int32)
    encoded = np.frombuffer(values.encode("utf-32-le"), dtype=np.int32)[:size]
    codes[: encoded.size] = encoded + 1
    np.copyto(destination[index * size : (index + 1) * size], codes)
