"""How ``agentenv`` sub-commands print ``--help``: every default shown, no reStructuredText markup.

Why: a user reading ``agentenv export-sft --help`` must see which split, port
or model is used when the flag is left out, and docstrings written for Sphinx
(````like this````) read badly in a terminal.

Example:
    >>> import argparse
    >>> p = argparse.ArgumentParser(prog="x", formatter_class=HelpFormatter, description=plain("Use ``k``."))
    >>> _ = p.add_argument("--port", type=int, default=8700, help="port to bind")
    >>> _ = p.add_argument("--tag", help="a tag")
    >>> text = p.format_help()
    >>> "port to bind (default: 8700)" in text, "(default: None)" in text, "``" in text
    (True, False, False)
"""

from __future__ import annotations

import argparse
import re

__all__ = ["HelpFormatter", "plain"]


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Appends ``(default: …)`` to every option with a help text and a meaningful default.

    A default of ``None``, ``False`` or an empty list (nothing to show) and a
    help text that already says its default are left as written.
    """

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        default = action.default
        if (
            default is None
            or default is False
            or default == []
            or default is argparse.SUPPRESS
            or "default" in text.lower()
        ):
            return text
        return super()._get_help_string(action)


def plain(text: str) -> str:
    """``text`` without reStructuredText inline markup: ````x```` and ``:role:`x``` become ``x``.

    Example:
        >>> plain("``agentenv eval``: see :func:`run`")
        'agentenv eval: see run'
    """
    text = re.sub(r":[a-z]+:`~?([^`]+)`", r"\1", text)
    return text.replace("``", "")
