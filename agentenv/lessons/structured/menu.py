"""The menu base: a fixed list of actions, a public state, and numeric features of it.

Why one object does all three: the wrapper (training) and the ``sb3`` eval
agent must turn the same public text into the same features and the same
action text, or a trained policy would meet a different env at evaluation.
So both drive a :class:`Menu` through the same three calls:

* ``reset(prompt, max_turns)`` with the episode's first observation;
* ``act(index) -> Choice``: the text action for menu entry ``index``;
* ``observe(obs)`` with the env's reply (a tool output or an error message).

``features()`` is a float32 vector in [0, 1] of the public state. A menu
reads only the strings it is given (see :mod:`agentenv.lessons.structured.reading`);
it never sees the env, ``info`` or the task.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Choice:
    """One menu action rendered: the text sent to the env, its menu label, and what kind it is."""

    text: str
    label: str
    kind: str
    """``"tool"`` or ``"answer"``."""
    n_answered: int = 0
    """How many items the answer lists (diseases, titles): the "chosen k" plotted over training."""


class Menu:
    """Base class of the four menus; subclasses fill ``labels``, ``feature_names`` and the hooks."""

    name: str = "menu"
    labels: tuple[str, ...] = ()
    feature_names: tuple[str, ...] = ()
    required_tools: frozenset[str] = frozenset()
    """Tools the env must offer for this menu (none for the single-turn menus)."""

    def __init__(self) -> None:
        self.prompt = ""
        self.max_turns = 1
        self.turn = 0
        self.last_error = 0.0
        self.used = np.zeros(len(self.labels), dtype=np.int64)
        self._pending: int | None = None

    @property
    def size(self) -> int:
        """Number of menu entries (the ``Discrete`` action space's ``n``)."""
        return len(self.labels)

    def reset(self, prompt: str, max_turns: int) -> None:
        """Start an episode from its first observation (the prompt)."""
        self.prompt = prompt
        self.max_turns = max(int(max_turns), 1)
        self.turn = 0
        self.last_error = 0.0
        self.used = np.zeros(len(self.labels), dtype=np.int64)
        self._pending = None
        self._start()

    def act(self, index: int) -> Choice:
        """The action text for menu entry ``index``; remembers it so that :meth:`observe` knows the reply's source."""
        index = int(index)
        if not 0 <= index < self.size:
            raise ValueError(
                f"action {index} is not on the {self.name} menu; choose 0..{self.size - 1}"
            )
        self.used[index] += 1
        self.turn += 1
        self._pending = index
        return self._render(index)

    def fork(self) -> Menu:
        """An independent copy of the state (containers copied one level down; menus assign what they read)."""
        twin = copy.copy(self)
        for name, value in vars(twin).items():
            if isinstance(value, (list, dict, set, np.ndarray)):
                setattr(twin, name, value.copy())
        return twin

    def preview(self, index: int) -> Choice:
        """The action entry ``index`` would send now, without taking it (the state is unchanged)."""
        return self._render(int(index))

    def action_mask(self) -> np.ndarray:
        """Which entries may be taken now (bool per entry): a masked entry would repeat a call, call a tool
        on evidence that is not there yet, run out the turn budget without answering, or answer with
        nothing. Never all False: with nothing valid, every answer entry is allowed.

        ``MaskablePPO`` samples only allowed entries (``StructuredEnv.action_masks``), and so does the
        ``sb3`` agent for a policy trained with masks.
        """
        mask = np.asarray(self._mask(), dtype=bool)
        if self.turn >= self.max_turns - 1:  # the last turn: only an answer is graded
            mask &= np.asarray([self._render(i).kind == "answer" for i in range(self.size)])
        if not mask.any():
            mask = np.asarray([self._render(i).kind == "answer" for i in range(self.size)])
        return mask

    def observe(self, obs: str) -> None:
        """Read the env's reply to the last action (a tool output, or an error message)."""
        self.last_error = 1.0 if obs.startswith("Error") else 0.0
        if self._pending is not None:
            self._read(self._pending, obs)
        self._pending = None

    def features(self) -> np.ndarray:
        """The public state as float32 features in [0, 1], named by ``feature_names``."""
        common = [min(self.turn / self.max_turns, 1.0), self.last_error]
        values = np.asarray(common + self._features(), dtype=np.float32)
        return np.clip(values, 0.0, 1.0)

    # ------------------------------------------------------------ hooks
    def _start(self) -> None:
        """Parse the prompt."""

    def _render(self, index: int) -> Choice:
        raise NotImplementedError

    def _read(self, index: int, obs: str) -> None:
        """Update the state from the reply to tool action ``index``."""

    def _features(self) -> list[float]:
        raise NotImplementedError

    def _mask(self) -> list[bool]:
        """The menu's own validity rules (every entry allowed unless a menu says otherwise)."""
        return [True] * self.size


COMMON_FEATURES = ("turn_fraction", "last_reply_was_error")
