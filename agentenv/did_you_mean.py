"""The one "did you mean" hint every user-facing error uses: env ids, sub-commands, flags, agents, splits
and reward presets.

Why one helper: each error had grown its own close-match rule and wording; one function keeps the
cut-off (``difflib`` ratio 0.6) and the text the same everywhere, and a new error gets the hint for free.
It runs only on an error path, so ``difflib`` is imported there.

Example:
    >>> did_you_mean("evl", ["eval", "play", "list"])
    " (did you mean 'eval'?)"
    >>> did_you_mean("--agnt", ["--agent", "--episodes"])
    " (did you mean '--agent'?)"
    >>> did_you_mean("zzz", ["eval", "play"])
    ''
"""

from __future__ import annotations

from collections.abc import Iterable

CUTOFF = 0.6
"""``difflib.get_close_matches``'s similarity cut-off: ``bm52`` finds ``bm25``, ``zzz`` finds nothing."""


def closest(name: str, known: Iterable[str]) -> str | None:
    """The known name nearest to a misspelt one (case-insensitively), or ``None`` when none is close.

    Example:
        >>> closest("BM52", ["bm25", "oracle"])
        'bm25'
    """
    import difflib

    choices = [k for k in known if isinstance(k, str)]
    by_lower = {k.lower(): k for k in reversed(choices)}  # the first spelling of a name wins
    if name.lower() in by_lower and name not in choices:
        return by_lower[name.lower()]
    matches = difflib.get_close_matches(name.lower(), list(by_lower), n=1, cutoff=CUTOFF)
    return by_lower[matches[0]] if matches else None


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """``" (did you mean 'x'?)"`` for the known name nearest to ``name``, else ``""`` (append it to an error)."""
    hint = closest(name, known)
    return f" (did you mean {hint!r}?)" if hint else ""
