"""The allow-list reading of a judge's verdict: the whole reply is one word of the prompt's pair, or unparseable.

Why the whole reply: every judge prompt of the lesson asks for one word, YES or
NO (or CORRECT or INCORRECT). A reader that looked only at the first word read
``"CORRECT or INCORRECT"`` (the instruction repeated back) as CORRECT, and
``"The answer is yes."`` could not be told from ``"The answer is not yes."``
by any first-word rule. So :func:`read_verdict` accepts a reply only when it
is, as a whole, one word of the pair that prompt asked for, in this grammar::

    reply     := space* body space*
    body      := wrapped end? | open word end? close
    wrapped   := word | open word close
    open/close:= "**" ... "**" | '"' ... '"' | "'" ... "'" | "`" ... "`"
    end       := "." | "!"                  (at most one, inside or outside the wrapper)
    word      := pair[0] (True) | pair[1] (False), in any ASCII letter case

Nothing else is read: no second word, no justification (``"No, because..."``
is unparseable: the prompt asked for one word, and a justification may name
the other word), no ``<think>`` block, no word of the other pair (CORRECT
under a yes/no prompt). Everything else is ``None`` and is counted as an
unparseable verdict; for credit an unparseable verdict grants none. The
package's :func:`agentenv.judge.prompts.parse_verdict` (yes/no, raising on
anything else) stays the reading of the HTTP judge.

Example:
    >>> [read_verdict(r, YES_NO) for r in ("Yes.", "**no**", ' "YES" ', "No!")]
    [True, False, True, False]
    >>> [read_verdict(r, CORRECT_INCORRECT) for r in ("CORRECT", "incorrect.", "CORRECT or INCORRECT")]
    [True, False, None]
    >>> [read_verdict(r, YES_NO) for r in ("No, because...", "The answer is yes.", "Correct", "Yes..")]
    [None, None, None, None]
"""

from __future__ import annotations

__all__ = [
    "CORRECT_INCORRECT",
    "DECORATIONS",
    "PAIRS",
    "YES_NO",
    "accepted_replies",
    "read_verdict",
]

YES_NO: tuple[str, str] = ("yes", "no")
"""The pair most prompts ask for: (the word that credits, the word that does not)."""

CORRECT_INCORRECT: tuple[str, str] = ("correct", "incorrect")
"""The pair the ``teacher-marks`` prompt asks for."""

PAIRS: tuple[tuple[str, str], ...] = (YES_NO, CORRECT_INCORRECT)
"""Every pair a prompt may ask for."""

_WRAPPERS = ("", "**", '"', "'", "`")
_ENDS = ("", ".", "!")


def accepted_replies(word: str) -> frozenset[str]:
    """Every decoration of ``word`` the grammar accepts, lower case and without surrounding space.

    >>> sorted(accepted_replies("no"))[:6]
    ['"no!"', '"no"', '"no"!', '"no".', '"no."', "'no!'"]
    >>> len(accepted_replies("no"))  # 3 ends bare + 4 wrappers x (3 inside + 2 outside)
    23
    """
    forms = {word + end for end in _ENDS}
    for wrap in _WRAPPERS[1:]:
        forms |= {wrap + word + end + wrap for end in _ENDS}
        forms |= {wrap + word + wrap + end for end in _ENDS[1:]}
    return frozenset(forms)


DECORATIONS: dict[str, frozenset[str]] = {
    word: accepted_replies(word) for pair in PAIRS for word in pair
}
"""The whole allow-list: for each verdict word, every reply (lower-cased, stripped) that means it."""


def read_verdict(reply: str, pair: tuple[str, str]) -> bool | None:
    """``True`` for ``pair[0]``, ``False`` for ``pair[1]``, ``None`` when the whole reply is not one of them.

    ``pair`` is the pair the prompt asked for, one of :data:`PAIRS`.
    """
    if pair not in PAIRS:
        raise ValueError(f"pair {pair!r} is not one of the allow-listed pairs {PAIRS}")
    body = reply.strip()
    if not body.isascii():
        return None
    body = body.lower()
    if body in DECORATIONS[pair[0]]:
        return True
    if body in DECORATIONS[pair[1]]:
        return False
    return None
