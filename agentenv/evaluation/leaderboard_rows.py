"""What a leaderboard is made of: its entries, their labels and the cells of their rows.

Why a module of its own: the board's three renderings (the Markdown tables
in :mod:`~agentenv.evaluation.leaderboard`, the HTML page in
:mod:`~agentenv.evaluation.leaderboard_html`, the plots in
:mod:`~agentenv.evaluation.leaderboard_plots`) share these pieces. Kept
below all three, it lets :mod:`~agentenv.evaluation.leaderboard` import the
renderers without any of them importing it back (no import cycle).

Why the escaping: every string on a board that the package did not write
itself (an agent's name and arguments, a ``--tasks`` path, a reward's name, an
env option, an env id or split read from a ``summary.json``) is somebody's
input, and is shown as inert text, never obeyed. :func:`one_line` keeps it on
one line with every other control character shown as an escape;
:func:`md_text` makes it plain Markdown text by an allow-list (letters, digits,
a space and ``-=+.,()/:`` pass, every other character becomes an HTML entity,
which CommonMark, GFM and Python-Markdown all read back as that character and
never as markup); :func:`md_code` puts it in a code span whose fence is longer
than any run of backticks in it. A label leaves secrets out
(:func:`is_secret_arg`, by whole words of the argument's name) and the
credentials of a URL (:func:`without_credentials`).

Example:
    >>> agent_label("llm", {"model": "Qwen/Qwen3-8B", "api_key": "sk-secret", "max_tokens": "16"})
    'llm (max_tokens=16, model=Qwen/Qwen3-8B)'
    >>> agent_label("llm", {"base_url": "http://alice:hunter2@127.0.0.1:8000/v1"})
    'llm (base_url=http://127.0.0.1:8000/v1)'
    >>> md_text("<img src=x> [t](http://x) a|b _c_")
    '&lt;img src=x&gt; &#91;t&#93;(http://x) a&#124;b &#95;c&#95;'
    >>> md_code("a`b"), one_line("two\\nlines\\x1b[31m")
    ('``a`b``', 'two lines\\\\x1b[31m')
    >>> difficulty_order(["hard", "easy", "unknown", "medium"])
    ['easy', 'medium', 'hard', 'unknown']
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentenv.evaluation.recorded_args import (
    REDACTED,
    SECRET_WORDS,
    is_secret_arg,
    without_credentials,
)
from agentenv.evaluation.summary import Summary
from agentenv.terminal_text import escaped_controls

__all__ = [
    "COLUMNS",
    "DIFFICULTY_ORDER",
    "PLOT_FILES",
    "SECRET_WORDS",
    "Entry",
    "agent_label",
    "difficulty_order",
    "env_caption",
    "is_secret_arg",
    "md_code",
    "md_text",
    "one_line",
    "row_cells",
    "without_credentials",
]

DIFFICULTY_ORDER = ("easy", "medium", "hard")
PLOT_FILES = ("accuracy_vs_tool_calls.png", "accuracy_by_difficulty.png")


@dataclass(frozen=True)
class Entry:
    """One run on the board: its summary, where it came from, and its row label."""

    summary: Summary
    source: Path
    label: str
    verified: bool = True
    """Its rows were checked against their digests; False: written without digests (shown, marked)."""


# ---------------------------------------------------------------------------- user strings

_LINE_BREAKS = re.compile(r"[\t\n\v\f\r\x1c-\x1e\x85\u2028\u2029]+")


def one_line(text: object) -> str:
    """``text`` on one line, every character shown: a run of line breaks or tabs is one space, any
    other unprintable character (C0 and C1 controls such as ESC, bidi overrides, a zero-width space)
    a visible escape (``\\x1b``, ``\\u202e``). Printable characters, Unicode spaces and the
    zero-width (non-)joiners pass as they are.

    Example:
        >>> one_line("a\\r\\n\\tb\\x1b]0;x\\x07 \\u202ec")
        'a b\\\\x1b]0;x\\\\x07 \\\\u202ec'
    """
    return escaped_controls(_LINE_BREAKS.sub(" ", str(text)))


_MD_PLAIN = frozenset(" -=+.,()/:")
"""ASCII punctuation that builds no Markdown inside a line (a ``=`` or ``+`` only alone: doubled,
``==mark==`` and ``++key++`` are markup in some Python-Markdown extensions). A ``_`` passes too
where a letter or digit stands on both its sides (``max_tokens``): there it neither opens nor
closes emphasis in CommonMark, GFM or Python-Markdown."""
_MD_NAMED = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}


def md_text(text: object) -> str:
    """``text`` as inert Markdown text on one line (:func:`one_line`): letters, digits, a space,
    ``-=+.,()/:`` and a ``_`` inside a word pass, any other character is an HTML entity (``|``
    ``&#124;``, ``<`` ``&lt;``, ``[`` ``&#91;``, a backslash ``&#92;``, ``*`` ``&#42;``), so no
    table cell splits and no HTML, link, image, emphasis or code span starts in any CommonMark,
    GFM or Python-Markdown renderer.

    Example:
        >>> md_text("max_tokens=16 x\\\\| ==z== _w_")
        'max_tokens=16 x&#92;&#124; &#61;&#61;z&#61;&#61; &#95;w&#95;'
    """
    line = one_line(text)
    out = []
    for i, ch in enumerate(line):
        before, after = line[i - 1 : i], line[i + 1 : i + 2]
        doubled = ch in "=+" and ch in (before, after)
        intraword = ch == "_" and before.isalnum() and after.isalnum()
        if ch.isalnum() or (ch in _MD_PLAIN and not doubled) or intraword:
            out.append(ch)
        else:
            out.append(_MD_NAMED.get(ch) or f"&#{ord(ch)};")
    return "".join(out)


def md_code(text: object) -> str:
    """``text`` as a Markdown code span on one line (:func:`one_line`): its fence one backtick longer
    than the longest run of backticks in it, padded with a space where CommonMark would otherwise
    read a backtick at an end as part of the fence (or strip a space from each end).

    Example:
        >>> md_code("test"), md_code("`a``"), md_code("")
        ('`test`', '``` `a`` ```', '` `')
    """
    line = one_line(text)
    if not line:
        return "` `"  # an empty span is no span: a space, which CommonMark keeps
    fence = "`" * (max((len(run) for run in re.findall(r"`+", line)), default=0) + 1)
    if (
        line[0] == "`"
        or line[-1] == "`"
        or (line[0] == " " and line[-1] == " " and line.strip(" "))
    ):
        line = f" {line} "
    return f"{fence}{line}{fence}"


# ---------------------------------------------------------------------------- labels


def agent_label(agent: str, args: Mapping[str, str]) -> str:
    """The row label: the agent name and its arguments on one line (:func:`one_line`), secret
    arguments (:func:`is_secret_arg`, or a value the summary redacted) left out and URLs without
    their credentials (:func:`without_credentials`)."""
    shown = [
        f"{k}={without_credentials(str(v))}"
        for k, v in sorted(args.items())
        if not is_secret_arg(k) and v != REDACTED
    ]
    return one_line(f"{agent} ({', '.join(shown)})" if shown else agent)


def difficulty_order(levels: Iterable[str]) -> list[str]:
    """Difficulty levels easy → hard first, any others after them in name order."""
    levels = set(levels)
    known = [d for d in DIFFICULTY_ORDER if d in levels]
    return known + sorted(levels - set(known))


COLUMNS = (
    "agent",
    "accuracy (95% CI)",
    "mean reward",
    "mean tool calls",
    "mean turns",
    "invalid-action rate",
    "episodes",
)


def row_cells(summary: Summary, label: str, verified: bool = True) -> list[str]:
    """The formatted cells of one row, in :data:`COLUMNS` order; an unverified run's episodes cell says so.

    Only the first (the label) holds a user's text; the others are numbers this function formats.
    """
    acc = summary.intervals.get("accuracy")
    m = summary.metrics
    accuracy = (
        f"{acc.mean:.3f} [{acc.ci_low:.3f}, {acc.ci_high:.3f}]"
        if acc
        else f"{m.get('accuracy', 0.0):.3f}"
    )
    return [
        label,
        accuracy,
        f"{m.get('mean_reward', 0.0):.3f}",
        f"{m.get('mean_tool_calls', 0.0):.2f}",
        f"{m.get('mean_turns', 0.0):.2f}",
        f"{m.get('invalid_action_rate', 0.0):.3f}",
        _episodes(summary) + ("" if verified else " (unverified)"),
    ]


def _episodes(summary: Summary) -> str:
    """The episodes cell: the count, and how many ended in an agent failure when any did."""
    if not summary.agent_failures:
        return str(summary.episodes)
    return f"{summary.episodes} ({summary.agent_failures} agent failures)"


# ---------------------------------------------------------------------------- captions

_FINGERPRINT_PARTS = ("system_prompt", "tools", "reward", "grader", "retriever")
"""The parts this package writes: their names are shown as they are, any other escaped."""
_NOT_OPTIONS = ("tasks", "reward")
"""gym.make keywords the caption shows elsewhere (the task file, the reward)."""


def _canonical(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str))


def env_options(summary: Summary) -> dict[str, Any]:
    """The run's env keywords that differ from its id's registered defaults (``gym.spec(id).kwargs``),
    by name; all of them when the id is not registered here. The task file and the reward are not
    among them (the caption names those on their own)."""
    try:
        import gymnasium as gym

        import agentenv  # noqa: F401 - registers the ids

        defaults = _canonical(dict(gym.spec(summary.env_id).kwargs))
    except Exception:  # an id not registered in this process (or a malformed one): no defaults
        defaults = {}
    return {
        k: v
        for k, v in sorted(summary.env_kwargs.items())
        if k not in _NOT_OPTIONS and (k not in defaults or defaults[k] != _canonical(v))
    }


def _option(key: str, value: Any) -> str:
    """``key=value`` as ``--env-arg`` takes it: a string that does not read as JSON as it is, any
    other value as JSON."""
    if isinstance(value, str):
        try:
            json.loads(value)
        except ValueError:
            return f"{key}={value}"
    return f"{key}={json.dumps(value, ensure_ascii=False, sort_keys=True)}"


def _shipped_reward_digest(name: str) -> str | None:
    """The fingerprint's ``reward`` hash of the shipped preset ``name``; None: no preset has that name."""
    from agentenv.evaluation.fingerprint import reward_digest
    from agentenv.rewards.config import preset_names, resolve_reward

    if name not in preset_names():
        return None
    try:
        config = resolve_reward(name)
    except (ValueError, TypeError):
        return None
    return reward_digest(config.model_dump(mode="json"))


def _reward(group: Sequence[Entry], code: Callable[[str], str], text: Callable[[str], str]) -> str:
    """The reward part of a caption: ``reward preset NAME`` only when the recorded definition (the
    fingerprint's ``reward``) is the shipped preset's; otherwise a custom reward by its name, the
    ``--reward`` file it came from and its definition's hash."""
    s = group[0].summary
    digest = (s.fingerprint or {}).get("reward")
    source = s.env_kwargs.get("reward")
    said = []
    for name in sorted({e.summary.reward_preset for e in group}):
        shipped = _shipped_reward_digest(name)
        if digest is not None and shipped == digest:
            said.append(f"reward preset {text(name)}")
            continue
        if digest is None:
            said.append(f"reward {code(name)} (definition not recorded)")
            continue
        where = ""
        if source is not None and source != name:  # a file's path (or a dict given to gym.make)
            shown = source if isinstance(source, str) else json.dumps(source, default=str)
            where = f" from {code(shown)}"
        note = ", not the shipped preset of that name" if shipped is not None else ""
        said.append(
            f"custom reward {code(name)}{where} (definition {code(str(digest)[:12])}{note})"
        )
    return ", ".join(said)


def env_caption(
    group: Sequence[Entry],
    *,
    code: Callable[[str], str] = md_code,
    text: Callable[[str], str] = md_text,
) -> str:
    """What every row of an env's table shares: split (or task file), env options that differ from
    the id's defaults, version, corpora, reward, fingerprint.

    Every string read from the summaries goes through ``code`` (shown as code) or ``text`` (plain
    text): by default :func:`md_code` and :func:`md_text`, a Markdown line; the HTML page passes
    :func:`one_line` for both and escapes the whole line.
    """
    s = group[0].summary
    corpora = (
        ", ".join(f"{text(k)} {code(v[:12])}" for k, v in sorted(s.corpus_checksums.items()))
        or "none recorded"
    )
    split = f"split {code(s.split)}"
    if s.tasks_file is not None:
        split = (
            f"custom tasks {code(s.tasks_file.path)} ({s.tasks_file.count} tasks, sha256 "
            f"{code(s.tasks_file.sha256[:12])})"
        )
    options = env_options(s)
    if options:
        split += ", env options " + " ".join(code(_option(k, v)) for k, v in options.items())
    caption = (
        f"{split}, env version {s.env_version}, corpus {corpora}, {_reward(group, code, text)}"
    )
    if s.fingerprint:
        caption += ", fingerprint " + " ".join(
            f"{part if part in _FINGERPRINT_PARTS else text(part)} "
            f"{code(value if part == 'grader' else value[:12])}"
            for part, value in s.fingerprint.items()
        )
    unverified = sum(not e.verified for e in group)
    if unverified:
        caption += (
            f"; {unverified} of {len(group)} runs unverified (written without row digests: "
            "re-run them to verify)"
        )
    return caption
