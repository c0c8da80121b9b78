"""Gymnasium registration of every family's ids: nothing built, nothing listed here.

The ids live in each family's :class:`~agentenv.families.Family` record;
this module only asks the registry (:mod:`agentenv.families`) to load the
installed families, which registers their ids with Gymnasium. Variants are
kwargs, not subclasses: the single-turn MediaSearch is the same class as the
multi-turn one with ``mode="single_turn"``.

Example:
    >>> env_ids()[:2]
    ['MediaSearch-v0', 'MediaSearch-SingleTurn-v0']
"""

from __future__ import annotations

from agentenv.families import env_specs, load_installed_families


def register_envs() -> None:
    """Register the ids of every installed family with Gymnasium; idempotent, builds nothing."""
    load_installed_families()


def env_ids() -> list[str]:
    """All registered single-agent ids, family by family, in each record's order."""
    return [spec.id for spec in env_specs()]
