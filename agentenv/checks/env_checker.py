"""Check that a single-agent env keeps agentenv's step contract, not only Gymnasium's API.

Why a checker of our own: Gymnasium's ``check_env`` tests spaces, seeding
and return types, which a text env passes while breaking everything an RL
researcher relies on here: the gold leaking into ``info`` mid-episode, an
exception on a malformed model output, a reward that is not the configured
mix of its components, a transcript that differs between two runs of the
same seed. :func:`check_tool_env` runs Gymnasium's checker and then
scripted episodes that test the contract of :mod:`agentenv.core`, and
raises :class:`~agentenv.checks.EnvCheckError` (an ``AssertionError``) that
names the check, what failed, and why it matters.

It needs no knowledge of the family: scripted tool calls are built from the
env's own tool schemas (``info["tools"]``, with the ``e.g.`` examples of
their descriptions), answers are plain text, and the reward is compared
with ``env.unwrapped.reward_config``. It takes about a second per
registered id once the corpora are cached (the agentenv checks some 50 ms;
the rest is Gymnasium's close check, which builds a second env, and the
first call of each lazily built tool), so a test suite can run it on every id.

Checks, in order (skip any with ``skip=``):

* ``gymnasium``: Gymnasium's ``check_env`` on the unwrapped env;
* ``info_keys``: ``messages`` (OpenAI chat format, append-only), ``tools``
  (function schemas), ``turn`` (actions so far), ``tool_calls``,
  ``task_id``, ``split`` and ``reward_components`` (finite floats, filled
  at the end) at reset and after every step, with their types;
* ``no_gold_before_end``: ``gold`` absent until the episode ends, present then;
* ``answer_terminates``: an ``<answer>`` ends the episode as terminated;
* ``components_documented``: every component name reported at an episode's
  end is documented in :mod:`agentenv.rewards.components` or the family's record;
* ``same_seed_same_transcript``: the same seed and actions give the same
  observations, rewards, flags and infos, bit for bit, even after an
  episode with another seed in between;
* ``unparseable_action``: malformed actions (empty, prose, broken JSON, an
  unknown tool, an over-long text…) are error observations with
  ``info["parse_error"]``, never exceptions, and cost one turn;
* ``single_turn`` (``single_turn`` or ``max_turns == 1`` envs): any one
  action ends the episode, as *terminated* when ``single_turn``;
* ``truncation`` (multi-turn envs): ``max_turns`` unparseable actions end
  the episode as truncated, not one fewer or more;
* ``reward_mix``: the reward is ``reward_config``'s mix of the final
  ``info["reward_components"]`` (every step but the last earns 0 unless
  the config shapes costs; then the return must match), under the env's
  own config and two probe configs that charge costs, so that a wrong
  reward cannot hide behind a zero.

The env is left after a finished episode, with its ``reward_config``
restored; reset it before further use.

Example:
    >>> import gymnasium as gym, agentenv
    >>> from agentenv.checks import check_tool_env
    >>> report = check_tool_env(gym.make("RareDiseaseDiagnosis-SingleTurn-v0"))
    >>> report.checks[:3]
    ('gymnasium', 'info_keys', 'no_gold_before_end')
"""

from __future__ import annotations

import warnings
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym

from agentenv.checks.check_table import checks_for, refuse_unknown_skips
from agentenv.checks.checker import run_contract
from agentenv.checks.contract import (
    BAD_ACTIONS,
    TOOL_USER_KEYS,
    UNPARSEABLE,
    Checker,
    CheckReport,
    EnvCheckError,
    check_info,
    first_difference,
    probe_configs,
    raised_where,
    reward_config,
    reward_problem,
    short,
    tool_call_actions,
)
from agentenv.engine.actions import answer

__all__ = ["TOOL_CHECKS", "EnvCheckError", "check_tool_env"]

TOOL_CHECKS: dict[str, str] = checks_for("single-agent")
"""Check name -> why it matters (the second line of every failure message): the rows of
:data:`agentenv.checks.check_table.CHECKS` that apply to single-agent envs."""


@dataclass
class _Trace:
    """One episode as the checker saw it."""

    reset: tuple[str, dict[str, Any]]
    steps: list[tuple[str, str, float, bool, bool, dict[str, Any]]] = field(default_factory=list)

    @property
    def done(self) -> bool:
        return bool(self.steps) and (self.steps[-1][3] or self.steps[-1][4])

    @property
    def final_info(self) -> dict[str, Any]:
        return self.steps[-1][5] if self.steps else self.reset[1]

    def comparable(self) -> list[Any]:
        return [list(self.reset), *[list(s[1:]) for s in self.steps]]


class _ToolEnvChecker(Checker):
    def __init__(self, env: gym.Env[Any, Any], seed: int, skip: Collection[str]) -> None:
        spec = getattr(env.unwrapped, "spec", None) or getattr(env, "spec", None)
        name = spec.id if spec is not None else type(env.unwrapped).__name__
        super().__init__(env.unwrapped, name, "single-agent", seed, skip)
        self.single_turn = bool(getattr(self.env, "single_turn", False))
        self.tools: Sequence[Mapping[str, Any]] = ()

    # ------------------------------------------------------------ episodes
    def episode(self, seed: int | None, actions: Sequence[str], check: str) -> _Trace:
        """What the driver (:func:`agentenv.checks.checker.run_contract`) calls to play one episode."""
        return self.run(seed, actions, check)

    def reset(self, seed: int | None) -> tuple[str, dict[str, Any]]:
        try:
            obs, info = self.env.reset(seed=seed)
        except Exception as err:
            raise self.fail(
                "gymnasium", f"reset(seed={seed}) raised {type(err).__name__}: {err}"
            ) from err
        problem = check_info(info, TOOL_USER_KEYS, turn=0, ended=False, previous=None)
        if problem:
            raise self.fail(problem[0], f"at reset: {problem[1]}")
        return obs, info

    def run(self, seed: int | None, actions: Sequence[str], check: str) -> _Trace:
        """Reset, then take ``actions`` until the episode ends, checking every info on the way."""
        trace = _Trace(self.reset(seed))
        previous = trace.reset[1]
        for action in actions:
            try:
                obs, reward, terminated, truncated, info = self.env.step(action)
            except Exception as err:
                raise self.fail(
                    check,
                    f"step({short(action, 60)}) raised {type(err).__name__}: {err}"
                    f"{raised_where(err)}",
                ) from err
            turn = len(trace.steps) + 1
            ended = bool(terminated or truncated)
            self.fail.expect(
                isinstance(obs, str),
                "info_keys",
                f"step {turn} returned a {type(obs).__name__} observation, not str",
            )
            problem = check_info(info, TOOL_USER_KEYS, turn=turn, ended=ended, previous=previous)
            if problem:
                raise self.fail(
                    problem[0], f"after step {turn} ({short(action, 60)}): {problem[1]}"
                )
            self.fail.expect(
                len(info["messages"]) > len(previous["messages"]),
                "info_keys",
                f"step {turn} ({short(action, 60)}) added nothing to info['messages']; every "
                "action must be in the transcript, or token-exact training loses it",
            )
            trace.steps.append(
                (action, obs, float(reward), bool(terminated), bool(truncated), info)
            )
            previous = info
            if ended:
                self.report.components |= set(info["reward_components"])
                break
        return trace

    def scripted_actions(self, tools: Sequence[Mapping[str, Any]]) -> list[str]:
        if self.max_turns == 1:
            return [answer("I do not know.")]
        return [*tool_call_actions(tools, min(6, self.max_turns - 1)), answer("I do not know.")]

    # -------------------------------------------------------------- checks
    def gymnasium(self, skip_render_check: bool, skip_close_check: bool) -> None:
        from gymnasium.utils.env_checker import check_env

        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                check_env(
                    self.env, skip_render_check=skip_render_check, skip_close_check=skip_close_check
                )
            except Exception as err:
                raise self.fail(
                    "gymnasium", f"gymnasium check_env: {type(err).__name__}: {err}"
                ) from err
        warned = [
            str(w.message) for w in caught if "WARN:" in str(w.message)
        ]  # Gymnasium's logger.warn
        self.fail.expect(not warned, "gymnasium", f"gymnasium check_env warned: {warned}")

    def episode_contract(self, actions: Sequence[str]) -> _Trace:
        """info keys and gold on a scripted episode (checked in ``run``), then that it ended."""
        trace = self.run(self.seed, actions, "info_keys")
        self.fail.expect(
            trace.done,
            "info_keys",
            f"the scripted episode ({len(actions)} actions, the last an answer) did not end",
        )
        return trace

    def answer_terminates(self) -> _Trace:
        trace = self.run(self.seed, [answer("I do not know.")], "answer_terminates")
        *_, terminated, truncated, _ = trace.steps[-1]
        self.fail.expect(
            terminated and not truncated,
            "answer_terminates",
            f"an <answer> on the first turn gave terminated={terminated}, truncated={truncated}; "
            "expected terminated=True, truncated=False",
        )
        return trace

    def determinism(self, actions: Sequence[str], first: _Trace) -> None:
        self.run(self.seed + 1, actions, "same_seed_same_transcript")  # state must not carry over
        again = self.run(self.seed, actions, "same_seed_same_transcript")
        diff = first_difference(first.comparable(), again.comparable())
        self.fail.expect(
            diff is None,
            "same_seed_same_transcript",
            f"two episodes with seed {self.seed} and the same {len(actions)} actions differ at "
            f"[step][obs, reward, terminated, truncated, info]{diff}",
        )

    def unparseable(self) -> None:
        limit = (
            self.env.action_space.max_length
            if hasattr(self.env.action_space, "max_length")
            else None
        )
        cases = list(BAD_ACTIONS)
        if isinstance(limit, int):
            cases.append(("over max_length", "x" * (limit + 1)))
        for label, action in cases:
            trace = self.run(self.seed, [action], "unparseable_action")
            obs, reward, terminated, truncated, info = trace.steps[-1][1:]
            what = f"the {label} action {short(action, 50)}"
            self.fail.expect(
                "parse_error" in info,
                "unparseable_action",
                f"{what} gave no info['parse_error'] (info keys {sorted(info)})",
            )
            self.fail.expect(
                isinstance(obs, str) and obs.strip(),
                "unparseable_action",
                f"{what} gave an empty observation; it must say what was wrong and what is expected",
            )
            if self.max_turns > 1:
                self.fail.expect(
                    not terminated and not truncated,
                    "unparseable_action",
                    f"{what} ended the episode (terminated={terminated}, truncated={truncated}) "
                    f"with {self.max_turns - 1} turns left; it must only cost a turn",
                )

    def single_turn_check(self, tools: Sequence[Mapping[str, Any]]) -> None:
        if self.single_turn:
            self.fail.expect(
                self.max_turns == 1,
                "single_turn",
                f"single_turn=True but max_turns={self.max_turns}",
            )
        actions = [answer("I do not know."), UNPARSEABLE, *tool_call_actions(tools, 1)]
        for action in actions:
            trace = self.run(self.seed, [action, action], "single_turn")
            self.fail.expect(
                len(trace.steps) == 1,
                "single_turn",
                f"after {short(action, 60)} the episode had not ended; a one-turn env ends after one action",
            )
            *_, terminated, truncated, _ = trace.steps[-1]
            if self.single_turn:
                self.fail.expect(
                    terminated and not truncated,
                    "single_turn",
                    f"{short(action, 60)} gave terminated={terminated}, truncated={truncated}; a "
                    "single_turn env terminates after its one action, whatever it is",
                )

    def truncation(self) -> _Trace:
        trace = self.run(self.seed, [UNPARSEABLE] * (self.max_turns + 1), "truncation")
        n = len(trace.steps)
        *_, terminated, truncated, info = trace.steps[-1]
        self.fail.expect(
            trace.done,
            "truncation",
            f"{n} unparseable actions did not end the episode; max_turns is {self.max_turns}",
        )
        self.fail.expect(
            n == self.max_turns and truncated and not terminated,
            "truncation",
            f"the episode ended after {n} unparseable actions with terminated={terminated}, "
            f"truncated={truncated}; expected truncated=True after exactly max_turns={self.max_turns}",
        )
        components = info["reward_components"]
        for key, expected in (("invalid_actions", float(n)), ("turns", float(n)), ("format", 0.0)):
            if key in components:
                self.fail.expect(
                    components[key] == expected,
                    "truncation",
                    f"after {n} unparseable actions reward_components[{key!r}] is {components[key]!r}, "
                    f"expected {expected!r}",
                )
        return trace

    def turn_limit(self) -> tuple[str, Sequence[str], _Trace] | None:
        """One action ends a one-turn env; ``max_turns`` unparseable ones truncate any other."""
        if self.max_turns == 1:
            self.timed("single_turn", self.single_turn_check, self.tools)
            return None
        truncated = self.timed("truncation", self.truncation)
        if truncated is None:
            return None
        return f"{self.max_turns} unparseable actions", [UNPARSEABLE] * self.max_turns, truncated

    def reward_mix(self, episodes: list[tuple[str, Sequence[str], _Trace]]) -> None:
        configured = self.env.reward_config
        for label, _, trace in episodes:
            self._reward_matches(configured, label, trace)
        for probe in probe_configs(episodes[0][2].final_info["reward_components"]):
            with reward_config(self.env, probe):
                for label, actions, _ in episodes:
                    self._reward_matches(probe, label, self.run(self.seed, actions, "reward_mix"))

    def _reward_matches(self, config: Any, label: str, trace: _Trace) -> None:
        problem = reward_problem(
            config, trace.final_info["reward_components"], [s[2] for s in trace.steps]
        )
        self.fail.expect(problem is None, "reward_mix", f"{label}: {problem}")


def check_tool_env(
    env: gym.Env[Any, Any],
    *,
    seed: int = 0,
    actions: Sequence[str] | None = None,
    skip: Collection[str] = (),
    skip_render_check: bool = True,
    skip_close_check: bool = False,
) -> CheckReport:
    """Check a single-agent env against agentenv's step contract; see the module docstring.

    Args:
        env: the env (``gym.make(id)`` or an instance); checks run on ``env.unwrapped``,
            because wrappers change rewards and observations on purpose.
        seed: the seed of every scripted episode (``seed + 1`` is the "other" seed).
        actions: the scripted episode for the contract, determinism and reward checks;
            by default, tool calls built from the env's tool schemas, then an answer.
        skip: names of checks not to run (see :data:`TOOL_CHECKS`).
        skip_render_check: passed to Gymnasium's ``check_env``; its render check
            builds a new env per render mode, which costs more than all other checks.
        skip_close_check: passed to Gymnasium's ``check_env``.

    Returns:
        A :class:`~agentenv.checks.CheckReport`: seconds per check and the
        component names seen at episode ends.

    Raises:
        EnvCheckError: an ``AssertionError`` naming the failed check, what
            failed, and why it matters.
        ValueError: ``skip`` names an unknown check.
    """
    refuse_unknown_skips("single-agent", skip)
    c = _ToolEnvChecker(env, seed, skip)
    c.timed("gymnasium", c.gymnasium, skip_render_check, skip_close_check)

    c.tools = c.reset(seed)[1]["tools"]
    script = list(actions) if actions is not None else c.scripted_actions(c.tools)
    return run_contract(c, script, f"the scripted episode {[short(a, 40) for a in script]}")
