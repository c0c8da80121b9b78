"""The constructor options every agentenv env takes, checked by one function for both kinds of env.

Why one: ``ToolEnv`` (:mod:`agentenv.core`) and the dialogue base
(:mod:`agentenv.multiagent.base`) take the same options (``max_turns``,
``observation_mode``, the text lengths, ``render_mode``), and while each kept
its own copy of the checks they drifted: ``gym.make("MediaSearch-v0",
max_turns=True)`` made a one-turn env, while a dialogue refused the same
argument. The options are user input (``gym.make`` keywords, ``--env-arg``),
so a wrong one fails at construction, in one line that names the field and
the fix, never later as a strange episode.

The rules:

* ``max_turns``, ``max_action_length``, ``max_observation_length``: ints of at
  least 1. A bool is refused: ``True`` is not a turn budget, whatever Python's
  ``bool`` subclassing ``int`` says; so is a float, even a whole one;
* ``single_turn`` (single-agent envs): ``True`` or ``False``, not ``0`` or ``1``;
* ``observation_mode``: ``"message"`` or ``"transcript"``;
* ``render_mode``: ``None`` or one of the env's ``metadata["render_modes"]``;
* ``tasks``: at least one in the split.

Example:
    >>> check_env_options(max_turns=True)
    Traceback (most recent call last):
    ...
    ValueError: max_turns must be a positive int, got True: a bool is not a count; pass a whole number, e.g. max_turns=8
    >>> check_env_options(max_turns=8, observation_mode="transcript")
"""

from __future__ import annotations

from collections.abc import Collection, Sized
from typing import Any

OBSERVATION_MODES = ("message", "transcript")
"""What an observation holds: the newest message alone, or the whole conversation rendered as text."""

_EXAMPLES = {"max_turns": 8, "max_action_length": 32_768, "max_observation_length": 262_144}


def check_env_options(
    *,
    max_turns: Any = 1,
    single_turn: Any = False,
    observation_mode: Any = "message",
    max_action_length: Any = 1,
    max_observation_length: Any = 1,
    render_mode: Any = None,
    render_modes: Collection[str] = (),
    tasks: Sized | None = None,
    split: str = "",
) -> None:
    """Raise ``ValueError`` naming the first option that breaks the rules above, and its fix.

    ``render_modes`` is the env's ``metadata["render_modes"]``; ``tasks`` (with its ``split``
    for the message) is checked only when given.
    """
    for name, value in (
        ("max_turns", max_turns),
        ("max_action_length", max_action_length),
        ("max_observation_length", max_observation_length),
    ):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            why = "a bool is not a count; " if isinstance(value, bool) else ""
            raise ValueError(
                f"{name} must be a positive int, got {value!r}: {why}pass a whole number, "
                f"e.g. {name}={_EXAMPLES[name]}"
            )
    if not isinstance(single_turn, bool):
        raise ValueError(
            f"single_turn must be True or False, got {single_turn!r}: pass single_turn=True for "
            "a one-action env"
        )
    if observation_mode not in OBSERVATION_MODES:
        raise ValueError(
            f"observation_mode must be 'message' or 'transcript', got {observation_mode!r}: pass "
            "observation_mode='message' (the newest message) or 'transcript' (the whole conversation)"
        )
    if render_mode is not None and render_mode not in render_modes:
        raise ValueError(
            f"render_mode must be one of {list(render_modes)}, got {render_mode!r}: pass one of "
            "them, or leave it out (None) to render nothing"
        )
    if tasks is not None and not len(tasks):
        raise ValueError(
            f"no tasks in split {split!r}: choose another split (--split on the command line, "
            "split= in Python)"
        )


def bool_option(name: str, value: Any) -> bool:
    """An on/off env option as given: ``True`` or ``False``, never the truth of something else
    (``bool("no")`` is True: ``tools_in_prompt="no"`` turned the option on).

    >>> bool_option("compact", False)
    False
    >>> bool_option("tools_in_prompt", "no")
    Traceback (most recent call last):
    ...
    TypeError: tools_in_prompt must be True or False, got 'no'
    """
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be True or False, got {value!r}")
    return value
