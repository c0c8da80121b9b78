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
from pathlib import Path
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
    "tests/envs/test_honest_forms.py",
    "tests/envs/rare_disease/test_answers.py",
    "tests/envs/media_search/test_user_answer_types.py",
    # the command line: every bad input one line, no traceback
    "tests/test_cli_errors.py",
    "tests/test_cli_help.py",
    "tests/test_task_file_rows.py",
    "tests/play/test_play_input.py",
    "tests/play/test_play.py",
    "tests/evaluation/test_eval_cli.py",
    "tests/evaluation/test_agents.py",
    # the README's first commands are CI's, and its Quickstart earns the reward it prints
    "tests/test_readme.py",
)

#: Single tests (node ids without parameters) in the fast tier: one episode per registered id.
FAST_TESTS: tuple[str, ...] = (
    "tests/envs/test_registered_envs.py::test_import_registers_every_id",
    "tests/envs/test_registered_envs.py::test_check_env",
)


#: Tests (node ids, without parameters unless a parameter is named) marked ``slow`` here rather than
#: in their files: measured work the default run leaves out (it still runs under ``-m slow``, in CI).
#: Each took 9 s or more (wall, at load average 5-7 on 2 cores) in the full run that docs/benchmarks.md
#: ("Test suite") describes; a quick lesson's module fixtures go with all the tests that use them.
SLOW_TESTS: tuple[str, ...] = (
    # training runs: the quick LLM lessons (SFT, GRPO, holdout selection), PPO lessons, pre-training
    "tests/scratch/test_llm_lessons_quick.py::test_sft_then_rl_reports_each_arm_with_a_ci_and_its_plots",
    "tests/scratch/test_llm_lessons_quick.py::test_the_sft_loss_falls",
    "tests/scratch/test_llm_lessons_quick.py::test_grpo_batches_are_token_exact",
    "tests/scratch/test_llm_lessons_quick.py::test_selection_keeps_the_requested_fraction",
    "tests/scratch/test_llm_lessons_quick.py::test_sft_more_data_scores_seen_and_unseen_tasks_and_grpo_against_sft",
    "tests/scratch/test_llm_lessons_quick.py::test_demos_is_refused_where_it_cannot_apply",
    "tests/data/test_selection.py::test_a_copy_of_the_holdout_helps_more_than_unrelated_text_once_the_model_can_copy",
    "tests/structured/test_lessons_quick.py::test_lenient_lists_more_diseases_than_strict",
    "tests/structured/test_lessons_quick.py::test_efficient_calls_fewer_tools_than_accuracy_only",
    "tests/scratch/test_pretrain.py::test_loss_falls_and_a_resumed_run_matches_an_unbroken_one",
    # cold builds and whole-split regenerations
    "tests/envs/rare_disease/test_env.py::test_omim_plus_orpha_universe_accepts_orpha_ids",
    "tests/envs/rare_disease/test_env.py::test_sampler_presets_change_the_patients",
    "tests/envs/media_search/test_questions.py::test_generation_is_deterministic_and_matches_the_published_checksums",
    "tests/envs/media_search/test_questions.py::test_the_template_style_is_the_old_question_set",
    "tests/envs/media_search/test_questions.py::test_answers_are_unique",
    "tests/envs/media_search/test_retriever_choices.py::test_check_env_with_each_backend[dense]",
    "tests/envs/media_search/test_retriever_choices.py::test_check_env_with_each_backend[hybrid-hashed-svd]",
    "tests/corpora/test_catalog.py::test_cache_is_rebuilt_when_corrupt",
    # measurement-like sweeps over many episodes or queries
    "tests/envs/rare_disease/test_realistic_patients.py::test_results_record_which_patients",
    "tests/envs/rare_disease/test_real_split.py::test_agents_score_on_simulated_patients_as_on_real_ones",
    "tests/envs/rare_disease/test_asking.py::test_the_blind_sweep_does_not_beat_the_best_honest_doctor",
    "tests/retrieval/test_reference_parity.py::test_top10_parity_on_1000_queries",
    # a Ray head node started for one test
    "tests/integrations/test_ray_cli.py::test_eval_on_a_head_node_started_on_loopback",
    "tests/integrations/test_ray_retrieval.py::test_one_service_is_shared_by_two_workers_and_survives_a_restart",
)


def in_slow_list(nodeid: str) -> bool:
    """Whether a test is in :data:`SLOW_TESTS`, by its full node id or its id without parameters."""
    path, _, name = nodeid.partition("::")
    return nodeid in SLOW_TESTS or f"{path}::{name.split('[', 1)[0]}" in SLOW_TESTS


def mark_slow(items: Iterable[pytest.Item]) -> None:
    """Add the ``slow`` mark to the tests :data:`SLOW_TESTS` names."""
    for item in items:
        if in_slow_list(item.nodeid):
            item.add_marker(pytest.mark.slow)


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


class FastCollection:
    """Under ``-m fast``, collect only the fast tier's files: importing every other module (and
    every module's doctests) to deselect it afterwards would cost most of the tier's time."""

    def __init__(self, root: Path) -> None:
        self.files = {root / f for f in FAST_FILES} | {
            root / t.split("::", 1)[0] for t in FAST_TESTS
        }

    def pytest_ignore_collect(self, collection_path: Path) -> bool | None:
        if collection_path.is_dir() or collection_path in self.files:
            return None
        return True


def load_fast_profile(config: pytest.Config) -> None:
    """Register the ``fast`` hypothesis profile; for ``-m fast`` collect only the tier's files and
    load the profile, unless ``--hypothesis-profile`` named another."""
    from hypothesis import settings

    settings.register_profile("fast", max_examples=FAST_EXAMPLES)
    if not fast_selected(config):
        return
    config.pluginmanager.register(FastCollection(Path(config.rootpath)), "agentenv-fast-tier")
    if not config.getoption("hypothesis_profile", None):
        settings.load_profile("fast")


def mark_fast(items: Iterable[pytest.Item], cap_budgets: bool) -> None:
    """Add the ``fast`` mark to the fast tier's items (never to a ``slow`` one); under the fast profile, cap budgets.

    A test's own ``@settings(max_examples=N)`` outranks any profile, so the cap rewrites the
    settings hypothesis keeps on the test function (``_hypothesis_internal_use_settings``), and
    the module's named budgets (``CI_BUDGET = settings(...)``, read when a test builds its search
    inside its body); a hypothesis without that attribute leaves the decorated budgets as written.
    """
    capped: set[int] = set()
    for item in items:
        if not in_fast_tier(item.nodeid) or item.get_closest_marker("slow"):
            continue
        item.add_marker(pytest.mark.fast)
        if cap_budgets:
            _cap_examples(getattr(item, "obj", None))
            module = getattr(item, "module", None)
            if module is not None and id(module) not in capped:
                capped.add(id(module))
                _cap_module_budgets(vars(module))


def _capped(own: Any) -> Any:
    from hypothesis import settings

    if isinstance(own, settings) and own.max_examples > FAST_EXAMPLES:
        return settings(own, max_examples=FAST_EXAMPLES)
    return own


def _cap_module_budgets(namespace: dict[str, Any]) -> None:
    for name, value in list(namespace.items()):
        namespace[name] = _capped(value)


def _cap_examples(test: Any) -> None:
    own = getattr(test, "_hypothesis_internal_use_settings", None)
    if own is not None:
        test._hypothesis_internal_use_settings = _capped(own)
