"""``TASKSET_ID``: the name verifiers imports this taskset by.

Its own module so that the package ``__init__`` (which re-exports it and loads
:mod:`agentenv.integrations.verifiers.environment` lazily) and the environment
(which puts the id in its config) share it without importing each other.
"""

from __future__ import annotations

__all__ = ["TASKSET_ID"]

TASKSET_ID = "agentenv_verifiers"
"""The taskset id verifiers resolves (``vf-eval agentenv_verifiers``, ``--env.taskset.id``). verifiers imports a
taskset id as an installed top-level package exporting its ``Taskset`` (and ``Env``) subclass in ``__all__``,
so setup.cfg installs this package a second time under that name; both names reach the same classes
(the package's ``__getattr__`` imports them from :mod:`agentenv.integrations.verifiers.environment`, lazily)."""
