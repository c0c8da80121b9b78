"""agentenv: Gymnasium environments for tool-using LLM agents.

Importing the package registers every env id with Gymnasium and builds
nothing: corpora and indexes are built on the first ``gym.make``.
"""

from __future__ import annotations

__version__ = "0.1.0"
