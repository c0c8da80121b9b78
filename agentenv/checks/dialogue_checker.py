"""Check that a PettingZoo dialogue env keeps agentenv's step contract, for each of its agents.

Why: PettingZoo's ``api_test`` checks the AEC protocol (agent selection,
dead steps, spaces), which a dialogue can pass while leaking the diagnosis
into the doctor's ``info``, raising on a patient's malformed reply, or
paying the lead a reward that is not its configured mix.
:func:`check_dialogue_env` runs PettingZoo's ``api_test`` and
``parallel_api_test`` (on the turn-based parallel conversion, the one that
fits a dialogue: see :mod:`agentenv.multiagent.registry`), then scripted
dialogues that test the contract of :mod:`agentenv.multiagent.base` from
each agent's side.

The *lead* is ``env.lead`` (else the first of ``possible_agents``): it has
the tools, ends the dialogue with ``<answer>`` and owns the turn budget
``max_turns``. The other agents are simulated sides that only talk, in
``<say>…</say>``. The scripted lead calls its tools with the examples of
their schemas, asks a question and answers; the simulated side plays the
env's ``default_policy`` when it has one (else a fixed reply).

Checks, in order (skip any but ``info_keys`` and ``no_gold_before_end`` with ``skip=``):

* ``pettingzoo_api``: PettingZoo's ``api_test``;
* ``pettingzoo_parallel_api``: PettingZoo's ``parallel_api_test`` on
  ``turn_based_aec_to_parallel(env)``;
* ``info_keys``: per agent, at reset and after every step: ``messages``,
  ``tools``, ``turn`` (that agent's actions), ``task_id``, ``split``,
  ``reward_components`` (and ``tool_calls`` for the lead), with types;
* ``no_gold_before_end``: ``gold`` in no agent's info until the end, in every one then;
* ``answer_terminates``: the lead's ``<answer>`` terminates every agent,
  and each then leaves with one ``None`` step;
* ``components_documented``: every component an agent reports is documented;
* ``same_seed_same_transcript``: same seed, same actions → same
  observations, rewards, flags and infos, with another seed in between;
* ``unparseable_action``: malformed actions of the lead and of the
  simulated side are error observations with ``info["parse_error"]``;
* ``truncation``: ``max_turns`` unparseable lead actions truncate every agent;
* ``reward_mix``: the lead's rewards are its ``reward_config``'s mix of its
  final components (own config and two probe configs), and the simulated
  side earns 1 per faithful message (``faithful × messages``) when it reports both.

Example:
    >>> from agentenv.multiagent import make
    >>> from agentenv.checks import check_dialogue_env
    >>> check_dialogue_env(make("DiagnosisDialogue-v0")).checks[:2]
    ('pettingzoo_api', 'pettingzoo_parallel_api')
"""

from __future__ import annotations

import contextlib
import io
import warnings
from collections import Counter
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentenv.checks.check_table import checks_for, refuse_unknown_skips
from agentenv.checks.checker import run_contract
from agentenv.checks.contract import (
    BAD_ACTIONS,
    INFO_KEYS,
    TOOL_USER_KEYS,
    UNPARSEABLE,
    Checker,
    CheckReport,
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

__all__ = ["DIALOGUE_CHECKS", "check_dialogue_env"]

DIALOGUE_CHECKS: dict[str, str] = checks_for("dialogue")
"""Check name -> why it matters (the second line of every failure message): the rows of
:data:`agentenv.checks.check_table.CHECKS` that apply to dialogue envs."""


_FALLBACK_REPLY = "<say>I am not sure.</say>"
_QUESTION = "<say>Can you tell me more about it?</say>"
_BAD_SPEAKER: tuple[tuple[str, str], ...] = (
    ("empty", ""),
    ("prose", "I think so, yes."),
    ("an answer", "<answer>something</answer>"),
    ("a tool call", '<tool_call>{"name": "search", "arguments": {"query": "x"}}</tool_call>'),
    ("unclosed say", "<say>unclosed"),
    ("empty say", "<say></say>"),
)
_BAD_LEAD: tuple[tuple[str, str], ...] = (
    *BAD_ACTIONS,
    ("unclosed say", "<say>unclosed"),
    ("empty say", "<say></say>"),
)

Speaker = Callable[[str, str, Mapping[str, Any]], str]
"""A simulated side's policy for the scripted dialogues: ``(agent, observation, info) -> action text``."""


@dataclass
class _Dialogue:
    """One dialogue as the checker saw it."""

    records: list[Any] = field(default_factory=list)
    rewards: dict[str, list[float]] = field(default_factory=dict)
    final: dict[str, dict[str, Any]] = field(default_factory=dict)
    acted: Counter[str] = field(default_factory=Counter)
    flags: dict[str, tuple[bool, bool]] = field(default_factory=dict)
    ended: bool = False


class _DialogueChecker(Checker):
    def __init__(self, env: Any, seed: int, skip: Collection[str], speaker: Speaker | None) -> None:
        name = str(env.unwrapped)
        super().__init__(
            env.unwrapped,
            name if name and "<" not in name else type(env.unwrapped).__name__,
            "dialogue",
            seed,
            skip,
        )
        self.outer = env
        agents = list(self.env.possible_agents)
        self.lead: str = getattr(self.env, "lead", agents[0])
        self.others = [a for a in agents if a != self.lead]
        self.given_speaker = speaker
        self.speaker: Speaker = speaker or self._default_speaker()

    def _default_speaker(self) -> Speaker:
        """The env's ``default_policy`` of each simulated agent (``act(obs, info)`` or a callable),
        built afresh for every dialogue so no state of the checker's own carries over; a fixed
        reply when the env has none."""
        policies = {}
        for agent in self.others:
            try:
                policies[agent] = self.env.default_policy(agent)
            except (AttributeError, NotImplementedError):
                return lambda agent, obs, info: _FALLBACK_REPLY

        def speak(agent: str, obs: str, info: Mapping[str, Any]) -> str:
            policy = policies[agent]
            return policy(obs, info) if callable(policy) else policy.act(obs, info)

        return speak

    def required(self, agent: str) -> dict[str, type | tuple[type, ...]]:
        return TOOL_USER_KEYS if agent == self.lead else INFO_KEYS

    # ----------------------------------------------------------- dialogues
    def reset(self, seed: int | None, check: str) -> None:
        try:
            self.env.reset(seed=seed)
        except Exception as err:
            raise self.fail(
                check, f"reset(seed={seed}) raised {type(err).__name__}: {err}"
            ) from err
        if self.given_speaker is None:
            self.speaker = self._default_speaker()
        for agent in self.env.agents:
            problem = check_info(
                self.env.infos.get(agent), self.required(agent), turn=0, ended=False, previous=None
            )
            if problem:
                raise self.fail(problem[0], f"{agent} at reset: {problem[1]}")

    def step(self, action: str | None, check: str) -> None:
        agent = self.env.agent_selection
        try:
            self.env.step(action)
        except Exception as err:
            raise self.fail(
                check,
                f"{agent}.step({short(action, 60)}) raised {type(err).__name__}: {err}"
                f"{raised_where(err)}",
            ) from err

    def reply(self, obs: str, info: Mapping[str, Any], agent: str) -> str:
        try:
            return self.speaker(agent, obs, info)
        except Exception as err:
            raise self.fail(
                "same_seed_same_transcript",
                f"the simulated {agent}'s scripted policy raised "
                f"{type(err).__name__}: {err}; pass speaker= to check_dialogue_env",
            ) from err

    def play(self, seed: int, lead_actions: Sequence[str], check: str) -> _Dialogue:
        """Reset, then let the lead take ``lead_actions`` and the simulated side reply, to the end;
        check every agent's info after every step, then the dead steps."""
        env, d = self.env, _Dialogue()
        self.reset(seed, check)
        d.rewards = {a: [] for a in env.agents}
        previous = {a: env.infos[a] for a in env.agents}
        script = iter(lead_actions)
        for _ in range(4 * (len(lead_actions) + self.max_turns) + 8):
            agent = env.agent_selection
            obs, reward, terminated, truncated, info = env.last()
            d.records.append(
                (agent, str(obs), float(reward), bool(terminated), bool(truncated), info)
            )
            if terminated or truncated:
                break
            action = next(script, None) if agent == self.lead else self.reply(str(obs), info, agent)
            if action is None:
                return d
            self.step(action, check)
            d.acted[agent] += 1
            ended = {a: bool(env.terminations[a] or env.truncations[a]) for a in env.agents}
            for a in env.agents:
                d.rewards[a].append(float(env.rewards[a]))
                problem = check_info(
                    env.infos[a],
                    self.required(a),
                    turn=d.acted[a],
                    ended=ended[a],
                    previous=previous[a],
                )
                if problem:
                    raise self.fail(
                        problem[0],
                        f"{a}'s info after {agent} sent {short(action, 60)}: {problem[1]}",
                    )
            self.fail.expect(
                len(env.infos[agent]["messages"]) > len(previous[agent]["messages"]),
                "info_keys",
                f"{agent} sent {short(action, 60)} and its info['messages'] did not grow; every "
                "action must be in its transcript, or token-exact training loses it",
            )
            previous = {a: env.infos[a] for a in env.agents}
            if any(ended.values()):
                self.fail.expect(
                    all(ended.values()),
                    check,
                    f"the dialogue ended for {[a for a in ended if ended[a]]} only; it ends for every agent",
                )
                d.ended = True
                d.final = {a: env.infos[a] for a in env.agents}
                d.flags = {
                    a: (bool(env.terminations[a]), bool(env.truncations[a])) for a in env.agents
                }
                self.report.components |= {
                    c for a in env.agents for c in env.infos[a]["reward_components"]
                }
                self.dead_steps(check)
                return d
        return d

    def dead_steps(self, check: str) -> None:
        """Every agent takes PettingZoo's one ``None`` step after the end; then no agent is left."""
        env = self.env
        for _ in range(len(env.possible_agents)):
            if not env.agents:
                break
            self.step(None, check)
        self.fail.expect(
            not env.agents,
            check,
            f"after every agent took its None step, agents {env.agents} remain; each done agent "
            "leaves after one None step",
        )

    def to_lead(self, check: str) -> None:
        """Let the simulated side speak until it is the lead's turn (a side that opens the dialogue)."""
        for _ in range(4):
            agent = self.env.agent_selection
            if agent == self.lead:
                return
            obs, *_, info = self.env.last()
            self.step(self.reply(str(obs), info, agent), check)
        raise self.fail(
            check, f"the lead {self.lead!r} did not get the turn after its simulated side spoke"
        )

    # -------------------------------------------------------------- checks
    def pettingzoo_api(self, num_cycles: int) -> None:
        from pettingzoo.test import api_test

        self._pettingzoo("pettingzoo_api", lambda: api_test(self.outer, num_cycles=num_cycles))

    def pettingzoo_parallel(self, num_cycles: int) -> None:
        from pettingzoo.test import parallel_api_test
        from pettingzoo.utils.conversions import turn_based_aec_to_parallel

        par = turn_based_aec_to_parallel(self.outer)
        self._pettingzoo(
            "pettingzoo_parallel_api", lambda: parallel_api_test(par, num_cycles=num_cycles)
        )

    def _pettingzoo(self, check: str, run: Callable[[], None]) -> None:
        # api_test prints progress and warns about text agents (non-numpy spaces, agent names
        # without "_<n>", its {"options": 1} reset probe): advice for numeric envs, not failures.
        with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            try:
                run()
            except Exception as err:
                raise self.fail(check, f"{type(err).__name__}: {err}") from err

    def scripted_actions(self) -> list[str]:
        self.reset(self.seed, "info_keys")
        tools = self.env.infos[self.lead]["tools"]
        calls = tool_call_actions(tools, min(3, max(0, self.max_turns - 3)))
        return [*calls[:1], _QUESTION, *calls[1:], _QUESTION, answer("I do not know.")][
            -self.max_turns :
        ]

    def episode_contract(self, script: Sequence[str]) -> _Dialogue:
        d = self.play(self.seed, script, "info_keys")
        self.fail.expect(
            d.ended,
            "info_keys",
            f"the scripted dialogue (lead actions {[short(a, 30) for a in script]}) did not end",
        )
        return d

    def answer_terminates(self) -> _Dialogue:
        d = self.play(self.seed, [answer("I do not know.")], "answer_terminates")
        self.fail.expect(
            d.ended, "answer_terminates", "the lead's first-turn <answer> did not end the dialogue"
        )
        wrong = {a: f for a, f in d.flags.items() if f != (True, False)}
        self.fail.expect(
            not wrong,
            "answer_terminates",
            f"after the lead's <answer>, (terminated, truncated) is {wrong}; expected (True, False) for every agent",
        )
        return d

    def determinism(self, script: Sequence[str], first: _Dialogue) -> None:
        self.play(self.seed + 1, script, "same_seed_same_transcript")
        again = self.play(self.seed, script, "same_seed_same_transcript")
        diff = first_difference(
            [first.records, first.rewards, first.final], [again.records, again.rewards, again.final]
        )
        self.fail.expect(
            diff is None,
            "same_seed_same_transcript",
            f"two dialogues with seed {self.seed} and the same lead actions differ at "
            f"[0: records [step][agent, obs, reward, terminated, truncated, info] | 1: rewards | "
            f"2: final infos]{diff}",
        )

    def unparseable(self) -> None:
        env, check = self.env, "unparseable_action"

        def too_long(agent: str) -> list[tuple[str, str]]:
            limit = getattr(env.action_space(agent), "max_length", None)
            return [("over max_length", "x" * (limit + 1))] if isinstance(limit, int) else []

        cases = [(self.lead, label, a) for label, a in (*_BAD_LEAD, *too_long(self.lead))]
        if (
            self.max_turns > 1
        ):  # the lead's question that gives the others the turn uses one of its turns
            cases += [
                (o, label, a) for o in self.others for label, a in (*_BAD_SPEAKER, *too_long(o))
            ]
        for agent, label, action in cases:
            self.reset(self.seed, check)
            self.to_lead(check)
            if agent != self.lead:
                self.step(_QUESTION, check)
                self.fail.expect(
                    env.agent_selection == agent,
                    check,
                    f"after the lead sent {_QUESTION!r} it is {env.agent_selection}'s turn, not {agent}'s",
                )
            self.step(action, check)
            what = f"the {agent}'s {label} action {short(action, 50)}"
            info = env.infos.get(agent, {})
            self.fail.expect(
                isinstance(info.get("parse_error"), str) and info["parse_error"],
                check,
                f"{what} gave no info['parse_error'] saying what was wrong (info keys {sorted(info)})",
            )
            self.fail.expect(
                str(env.observe(agent)).strip(),
                check,
                f"{what} gave an empty observation; it must say what was wrong and what is expected",
            )
            if agent != self.lead or self.max_turns > 1:
                self.fail.expect(
                    not any(env.terminations.values()) and not any(env.truncations.values()),
                    check,
                    f"{what} ended the dialogue; it must only cost a turn",
                )
            else:
                continue  # a one-turn lead: its one unparseable action ends the dialogue by truncation
            self.fail.expect(
                env.agent_selection == self.lead and str(env.observe(self.lead)).strip(),
                check,
                f"after {what} the turn is {env.agent_selection}'s with observation "
                f"{short(str(env.observe(self.lead)))}; the lead must get the turn, with the error "
                "or a note that the reply could not be read",
            )

    def truncation(self) -> _Dialogue:
        check = "truncation"
        d = self.play(self.seed, [UNPARSEABLE] * (self.max_turns + 1), check)
        n = d.acted[self.lead]
        self.fail.expect(
            d.ended,
            check,
            f"{n} unparseable lead actions did not end the dialogue; max_turns is {self.max_turns}",
        )
        wrong = {a: f for a, f in d.flags.items() if f != (False, True)}
        self.fail.expect(
            n == self.max_turns and not wrong,
            check,
            f"the dialogue ended after {n} unparseable lead actions with (terminated, truncated) "
            f"{d.flags}; expected (False, True) for every agent after exactly max_turns={self.max_turns}",
        )
        components = d.final[self.lead]["reward_components"]
        for key, expected in (("invalid_actions", float(n)), ("turns", float(n)), ("format", 0.0)):
            if key in components:
                self.fail.expect(
                    components[key] == expected,
                    check,
                    f"after {n} unparseable lead actions its reward_components[{key!r}] is "
                    f"{components[key]!r}, expected {expected!r}",
                )
        return d

    def episode(self, seed: int, actions: Sequence[str], check: str) -> _Dialogue:
        """What the driver (:func:`agentenv.checks.checker.run_contract`) calls to play one dialogue."""
        return self.play(seed, actions, check)

    def turn_limit(self) -> tuple[str, Sequence[str], _Dialogue] | None:
        """``max_turns`` unparseable lead actions truncate every agent."""
        truncated = self.timed("truncation", self.truncation)
        if truncated is None:
            return None
        return (
            f"{self.max_turns} unparseable lead actions",
            [UNPARSEABLE] * self.max_turns,
            truncated,
        )

    def reward_mix(self, dialogues: list[tuple[str, Sequence[str], _Dialogue]]) -> None:
        for label, _, d in dialogues:
            self._rewards_match(self.env.reward_config, label, d)
        for probe in probe_configs(dialogues[0][2].final[self.lead]["reward_components"]):
            with reward_config(self.env, probe):
                for label, script, _ in dialogues:
                    self._rewards_match(probe, label, self.play(self.seed, script, "reward_mix"))

    def _rewards_match(self, config: Any, label: str, d: _Dialogue) -> None:
        problem = reward_problem(
            config, d.final[self.lead]["reward_components"], d.rewards[self.lead]
        )
        self.fail.expect(
            problem is None, "reward_mix", f"{label}, the lead {self.lead!r}: {problem}"
        )
        for other in self.others:
            components = d.final[other]["reward_components"]
            if "faithful" in components and "messages" in components:
                expected = components["faithful"] * components["messages"]
                got = sum(d.rewards[other])
                self.fail.expect(
                    abs(got - expected) <= 1e-6,
                    "reward_mix",
                    f"{label}, the simulated {other!r}: return {got!r}, expected faithful × messages "
                    f"= {expected!r} (1 per faithful message)",
                )


def check_dialogue_env(
    env: Any,
    *,
    seed: int = 0,
    lead_actions: Sequence[str] | None = None,
    speaker: Speaker | None = None,
    skip: Collection[str] = (),
    num_cycles: int = 100,
    parallel: bool = True,
) -> CheckReport:
    """Check a PettingZoo AEC dialogue env against agentenv's contract; see the module docstring.

    Args:
        env: the AEC env (``agentenv.multiagent.make(id)`` or an instance); PettingZoo's
            tests run on it as given, the agentenv checks on ``env.unwrapped``.
        seed: the seed of every scripted dialogue (``seed + 1`` is the "other" seed).
        lead_actions: the lead's script for the contract, determinism and reward
            checks (it must end the dialogue); by default a tool call, a question,
            more tool calls, a question and an answer.
        speaker: ``(agent, obs, info) -> text`` for the simulated side; by default
            the env's ``default_policy`` (or a fixed reply).
        skip: names of checks not to run (see :data:`DIALOGUE_CHECKS`).
        num_cycles: cycles of PettingZoo's random-play tests.
        parallel: run ``parallel_api_test`` on the turn-based parallel conversion.

    Returns:
        A :class:`~agentenv.checks.CheckReport`.

    Raises:
        EnvCheckError: an ``AssertionError`` naming the failed check, what
            failed, and why it matters.
        ValueError: ``skip`` names an unknown check, or one that always runs.
    """
    refuse_unknown_skips("dialogue", skip)
    c = _DialogueChecker(env, seed, skip, speaker)
    c.timed("pettingzoo_api", c.pettingzoo_api, num_cycles)
    if parallel:
        c.timed("pettingzoo_parallel_api", c.pettingzoo_parallel, num_cycles)

    script = list(lead_actions) if lead_actions is not None else c.scripted_actions()
    return run_contract(
        c, script, f"the scripted dialogue (lead: {[short(a, 40) for a in script]})"
    )
