"""Errors in what a user gave the package (a task file, an env id, a CLI argument), not bugs in it.

Why one base type: the message of such an error is the whole story (which
file, which line, which field, and the fix), so the ``agentenv`` command prints
it as one line, without a traceback, and exits with status 2; library users
catch it like any ``ValueError``.

Example:
    >>> raise UserInputError("tasks.jsonl line 3: missing field 'answer'; add it")
    Traceback (most recent call last):
    ...
    agentenv.errors.UserInputError: tasks.jsonl line 3: missing field 'answer'; add it
"""

from __future__ import annotations


class UserInputError(ValueError):
    """User input the package cannot use; the message names where it is and how to fix it."""


class UserFileNotFound(UserInputError, FileNotFoundError):
    """A file the user named (a reward config) that does not exist.

    Both types: the command prints it as any user error (one line, exit 2), and library code
    that catches ``FileNotFoundError`` for a missing path still does.

    Example:
        >>> isinstance(UserFileNotFound("reward.yaml does not exist"), FileNotFoundError)
        True
    """
