"""The allow-list reading of a judge's verdict: YES/NO or CORRECT/INCORRECT, or unparseable.

Why an allow-list that can say "unparseable": a small judge often replies with
something that is no verdict ("The candidate...", "Not sure"), and guessing a
verdict from it would hide that. :func:`read_verdict` accepts exactly one of
four words, in any case, as the reply's first word (after an optional
``<think>`` block, and optionally in ``**bold**`` or quotes), followed by the
end of the reply, a space or punctuation. Everything else is ``None`` and is
counted as an unparseable verdict; for credit an unparseable verdict grants
none. The package's :func:`agentenv.judge.prompts.parse_verdict` (yes/no,
raising on anything else) stays the reading of the HTTP judge.

Example:
    >>> [read_verdict(r) for r in ("Yes.", "**CORRECT**", "incorrect", "No, because...")]
    [True, True, False, False]
    >>> [read_verdict(r) for r in ("Not sure", "Yesterday", "The answer is yes", "", "Correctly")]
    [None, None, None, None, None]
"""

from __future__ import annotations

import re

__all__ = ["VERDICT_WORDS", "read_verdict"]

VERDICT_WORDS: dict[str, bool] = {"yes": True, "correct": True, "no": False, "incorrect": False}
"""The whole allow-list: each accepted word (lower case) and the verdict it means."""

_THINK = re.compile(r"\A\s*<think>.*?</think>", re.DOTALL)
_VERDICT = re.compile(
    r"\A\s*(\*\*|[\"'`])?(" + "|".join(VERDICT_WORDS) + r")\1?(?=\Z|[\s.,!:;)])",
    re.IGNORECASE,
)


def read_verdict(reply: str) -> bool | None:
    """``True`` (yes / correct), ``False`` (no / incorrect), or ``None`` when the reply is not one of them."""
    match = _VERDICT.match(_THINK.sub("", reply, count=1))
    return VERDICT_WORDS[match.group(2).lower()] if match else None
