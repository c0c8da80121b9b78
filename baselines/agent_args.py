"""Build an agent's typed args dataclass from ``--agent-args K=V`` strings.

The conversion lives in :mod:`agentenv.evaluation.arguments`, shared with the training
scripts' command lines; this name stays so that existing imports keep working.
"""

from agentenv.evaluation.arguments import args_from_strings, convert

__all__ = ["args_from_strings", "convert"]
