"""Test tiers: which tests a developer runs before every commit, and at what property budget.

Two tiers, named in the README:

* ``python -m pytest -m fast``: about two minutes on 2 cores. The contract checks on every
  registered id, the graders' property tests (hypothesis) at a small budget, the command
  line's errors, and one episode per id. Selecting ``-m fast`` also loads the hypothesis
  profile ``fast`` (:data:`FAST_EXAMPLES` examples a property, explicit larger budgets capped
  to it), unless ``--hypothesis-profile`` names another.
* ``python -m pytest``: the full suite as CI runs it, everything but the tests marked
  ``slow``; ``python -m pytest -m slow`` runs those (CI runs them as a step of their own).

The fast tier is a list of files and test ids kept here rather than marks scattered
over the files, so the tier can be read, and changed, in one place.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pytest

#: Examples a property test draws in the fast tier (hypothesis' default is 100; CI budgets are 40–2,000).
FAST_EXAMPLES = 15

#: Whole files in the fast tier, relative to the repository root.
FAST_FILES: tuple[str, ...] = (
    # the contract: every registered id against the checker, and the checker against broken envs
    "tests/utils/test_env_checker.py",
    "tests/core/test_toy_contract.py",
    # the graders' grammars and their property searches
    "tests/core/test_answer_grammar.py",
    "tests/redteam/test_grammar_property.py",
    "tests/envs/media_search/test_score_text.py",
    "tests/envs/media_search/test_grading.py",
    "tests/rewards/test_reward_config.py",
    # the command line: every bad input one line, no traceback
    "tests/test_cli_errors.py",
    "tests/test_cli_help.py",
    "tests/test_task_file_rows.py",
    "tests/play/test_play_input.py",
)

#: Single tests (node ids without parameters) in the fast tier: one episode per registered id.
FAST_TESTS: tuple[str, ...] = (
    "tests/envs/test_registered_envs.py::test_import_registers_every_id",
    "tests/envs/test_registered_envs.py::test_check_env",
)


def in_fast_tier(nodeid: str) -> bool:
    """Whether a collected test (its pytest node id) belongs to the fast tier.

    >>> in_fast_tier("tests/test_cli_errors.py::test_unknown_agent[bm52]")
    True
    >>> in_fast_tier("tests/envs/test_registered_envs.py::test_check_env[MediaSearch-v0]")
    True
    >>> in_fast_tier("tests/envs/test_registered_envs.py::test_same_seed_same_rollout[MediaSearch-v0]")
    False
    """
    path, _, name = nodeid.partition("::")
    return path in FAST_FILES or f"{path}::{name.split('[', 1)[0]}" in FAST_TESTS


def fast_selected(config: pytest.Config) -> bool:
    """True when the run selects the fast tier (``-m fast``, alone or in an expression)."""
    return "fast" in (config.option.markexpr or "").replace("(", " ").replace(")", " ").split()


def load_fast_profile(config: pytest.Config) -> None:
    """Register the ``fast`` hypothesis profile; load it for ``-m fast`` unless a profile was named."""
    from hypothesis import settings

    settings.register_profile("fast", max_examples=FAST_EXAMPLES)
    if fast_selected(config) and not config.getoption("hypothesis_profile", None):
        settings.load_profile("fast")


def mark_fast(items: Iterable[pytest.Item], cap_budgets: bool) -> None:
    """Add the ``fast`` mark to the fast tier's items (never to a ``slow`` one); under the fast profile, cap budgets.

    A test's own ``@settings(max_examples=N)`` outranks any profile, so the cap rewrites the
    settings hypothesis keeps on the test function (``_hypothesis_internal_use_settings``); a
    hypothesis without that attribute leaves the budgets as written.
    """
    for item in items:
        if not in_fast_tier(item.nodeid) or item.get_closest_marker("slow"):
            continue
        item.add_marker(pytest.mark.fast)
        if cap_budgets:
            _cap_examples(getattr(item, "obj", None))


def _cap_examples(test: Any) -> None:
    from hypothesis import settings

    own = getattr(test, "_hypothesis_internal_use_settings", None)
    if isinstance(own, settings) and own.max_examples > FAST_EXAMPLES:
        test._hypothesis_internal_use_settings = settings(own, max_examples=FAST_EXAMPLES)
