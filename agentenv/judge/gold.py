"""The gold as the judge reads it, rendered by the family the episodes come from.

Why the family: only a family knows what its gold means (a film question's
``answer``; a diagnosis's accepted ids and disease name), so guessing from
the gold's keys would break on the first family with other keys. Each family
names a ``Family.gold_text`` function; :func:`family_gold_text` finds it from
the run's env id, which ``agentenv eval`` records in the ``summary.json``
next to ``episodes.jsonl`` (:func:`run_env_id`). A gold that is already text
is used as it is.

Example:
    >>> render = family_gold_text("MediaSearch-v0")
    >>> render({"answer": 1979}), render("Alien")
    ('1979', 'Alien')
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from agentenv.families import family_of_env, family_part

GoldText = Callable[[Any], str]
"""A function from a gold (as stored in an episode record) to the text the judge is shown."""

SUMMARY_FILE = "summary.json"


def family_gold_text(env_id: str) -> GoldText:
    """The ``gold_text`` of the family that registers ``env_id``; a str gold passes through unchanged."""
    render = family_part(family_of_env(env_id), "gold_text")

    def text(gold: Any) -> str:
        return gold if isinstance(gold, str) else str(render(gold))

    return text


def gold_as_text(gold: Any, gold_text: GoldText | None, where: str = "gold") -> str:
    """``gold`` as text: itself if a str, else ``gold_text(gold)``; a failure names ``where``."""
    if isinstance(gold, str):
        return gold
    if gold_text is None:
        raise ValueError(
            f"{where}: the gold is not text ({str(gold)[:80]}); name the env the episodes come from, "
            "so that its family's gold_text can render it"
        )
    try:
        return gold_text(gold)
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(
            f"{where}: the family's gold_text cannot render this gold: {exc}"
        ) from None


def summary_path(episodes: str | Path) -> Path:
    """The ``summary.json`` beside ``episodes``: an input too, so no output may replace it."""
    return Path(episodes).with_name(SUMMARY_FILE)


def run_env_id(episodes: str | Path) -> str | None:
    """The env id of the run that wrote ``episodes`` (from its ``summary.json``), or None if there is none.

    Read as ``leaderboard`` reads a summary (:func:`agentenv.evaluation.run_files.read_json_object`):
    a FIFO or device is refused unopened, the size is bounded, and deep nesting or bad bytes are one
    line naming the file, never a ``RecursionError``.

    Raises:
        RunFileError: the summary is not a regular file, too large, not JSON or not an object.
    """
    from agentenv.evaluation.run_files import read_json_object

    try:
        summary = read_json_object(summary_path(episodes), "a summary written by `agentenv eval`")
    except (FileNotFoundError, NotADirectoryError):
        return None
    env_id = summary.get("env_id")
    return str(env_id) if env_id else None
