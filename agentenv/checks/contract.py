"""Pieces shared by the single-agent and the dialogue checkers: the error, the report, the checker
base, and the contract checks on one ``info`` that both step contracts share (the table of checks
is :mod:`agentenv.checks.check_table`).

Why apart: both checkers test the same contract (:mod:`agentenv.core`, seen
from one agent or from each agent of a dialogue), so they must fail the same
way, with the same words.
"""

from __future__ import annotations

import ast
import json
import math
import re
import time
import traceback
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, TypeVar

from agentenv.checks.check_table import EnvKind, checks_for
from agentenv.rewards.config import RewardConfig

T = TypeVar("T")

ROLES = frozenset({"system", "user", "assistant", "tool"})
"""The OpenAI chat roles ``info["messages"]`` may use."""

TOLERANCE = 1e-6
"""How far a reward may be from the configured mix (``RewardConfig.combine`` rounds to 1e-10)."""

BAD_ACTIONS: tuple[tuple[str, str], ...] = (
    ("empty", ""),
    ("prose", "I think the answer is probably somewhere in there."),
    ("broken JSON", '<tool_call>{"name": "search", "arguments": {"query": </tool_call>'),
    (
        "unknown tool",
        '<tool_call>{"name": "no_such_tool_env_checker", "arguments": {}}</tool_call>',
    ),
    ("unclosed answer", "<answer>unclosed"),
    ("arguments not an object", '<tool_call>{"name": "search", "arguments": [1]}</tool_call>'),
    ("only thinking", "<think>only thinking, no action</think>"),
    ("empty answer", "<answer></answer>"),
)
"""Actions no env may accept: each must be an error observation with ``info["parse_error"]``."""

UNPARSEABLE = "this is not an action: no tags at all"
"""The action the truncation checks repeat until the turn budget runs out."""


class EnvCheckError(AssertionError):
    """A contract check failed. ``check`` names it; the message says what failed and why it matters.

    An ``AssertionError`` so that pytest shows it as a failed assertion, like
    Gymnasium's and PettingZoo's own checkers.
    """

    def __init__(self, env: str, check: str, what: str, why: str) -> None:
        self.env, self.check, self.what, self.why = env, check, what, why
        super().__init__(f"{env}: check {check!r} failed: {what}\n  why it matters: {why}")


@dataclass
class CheckReport:
    """What a checker ran: seconds per check (in order) and the component names seen at episode ends."""

    env: str
    seconds: dict[str, float] = field(default_factory=dict)
    components: set[str] = field(default_factory=set)

    @property
    def checks(self) -> tuple[str, ...]:
        """The checks that ran and passed, in order."""
        return tuple(self.seconds)

    @property
    def total_seconds(self) -> float:
        return sum(self.seconds.values())

    def __str__(self) -> str:
        parts = ", ".join(f"{name} {s:.2f}s" for name, s in self.seconds.items())
        return (
            f"{self.env}: {len(self.seconds)} checks passed in {self.total_seconds:.2f}s ({parts})"
        )


class Failer:
    """Raises :class:`EnvCheckError` for one env; ``why`` holds each check's reason."""

    def __init__(self, env: str, why: Mapping[str, str]) -> None:
        self.env, self.why = env, why

    def __call__(self, check: str, what: str) -> EnvCheckError:
        return EnvCheckError(self.env, check, what, self.why[check])

    def expect(self, condition: object, check: str, what: str) -> None:
        if not condition:
            raise self(check, what)


class Checker:
    """What both checkers share: the failure messages of their checks (:mod:`agentenv.checks.check_table`),
    the report, the seed and the skipped checks, timing a check, and the checks that read no episode."""

    def __init__(
        self, env: Any, name: str, kind: EnvKind, seed: int, skip: Collection[str]
    ) -> None:
        self.env, self.name, self.seed, self.skip = env, name, seed, set(skip)
        self.fail = Failer(name, checks_for(kind))
        self.report = CheckReport(name)
        for attr in ("max_turns", "reward_config"):
            if not hasattr(env, attr):
                raise self.fail(
                    "truncation" if attr == "max_turns" else "reward_mix",
                    f"the env has no {attr!r} attribute; the checker reads it from env.unwrapped",
                )
        self.max_turns: int = env.max_turns

    def timed(self, name: str, fn: Callable[..., T], *args: Any) -> T | None:
        """``fn(*args)``, its seconds added to the report under ``name``; ``None`` when ``name`` is skipped."""
        if name in self.skip:
            return None
        start = time.perf_counter()
        out = fn(*args)
        self.report.seconds[name] = self.report.seconds.get(name, 0.0) + time.perf_counter() - start
        return out

    def components_documented(self) -> None:
        """Every component name seen at an episode's end (``report.components``) has a documented meaning."""
        from agentenv.rewards.components import undocumented

        missing = undocumented(self.report.components)
        self.fail.expect(
            not missing,
            "components_documented",
            f"reward components {missing} have no documented meaning",
        )


INFO_KEYS: dict[str, type | tuple[type, ...]] = {
    "messages": list,
    "tools": list,
    "turn": int,
    "task_id": str,
    "split": str,
    "reward_components": dict,
}
"""The documented info keys every agent of every env reports, and their types."""

TOOL_USER_KEYS: dict[str, type | tuple[type, ...]] = {**INFO_KEYS, "tool_calls": int}
"""An agent with tools (a ToolEnv, a dialogue's lead) also reports its tool calls."""


def short(value: object, limit: int = 80) -> str:
    """``repr`` cut to ``limit`` characters, for error messages about long texts."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


_FAMILY_HOOKS = {
    "_grade": "the family's grader: an answer it cannot read scores 0, never raises",
    "_task_prompt": "the family's _task_prompt",
    "_start_episode": "the family's _start_episode",
    "_system_prompt": "the family's _system_prompt",
}


def raised_where(err: BaseException) -> str:
    """Where a step's exception came from, and whose fix it is, for the checker's failure line.

    Why: a grader raising ``ValueError`` on ``int(answer.text)`` was reported as an agent-text
    problem under ``info_keys``, with advice about chat-template keys; the family author needs
    the hook and the line. Names the innermost family hook on the stack (``_grade``...) if any,
    and the innermost frame.

    Example:
        >>> def _grade(): int("I do not know")
        >>> try:
        ...     _grade()
        ... except ValueError as err:
        ...     print(raised_where(err))  # doctest: +ELLIPSIS
        ; raised in _grade (the family's grader: an answer it cannot read scores 0, never raises), at <doctest ...>:1 in _grade
    """
    frames = traceback.extract_tb(err.__traceback__)
    if not frames:
        return ""
    hooks = [f.name for f in frames if f.name in _FAMILY_HOOKS]
    last = frames[-1]
    at = f"at {last.filename.rsplit('/', 1)[-1]}:{last.lineno} in {last.name}"
    if hooks:
        return f"; raised in {hooks[-1]} ({_FAMILY_HOOKS[hooks[-1]]}), {at}"
    return (
        f"; {at}. Agent text must never raise: an error observation with info['parse_error'] "
        "instead"
    )


def first_difference(a: Any, b: Any, path: str = "") -> str | None:
    """Where two traces first differ (``None`` if equal): a path and both values.

    Example:
        >>> first_difference({"x": [1, 2]}, {"x": [1, 3]})
        "['x'][1]: 2 != 3"
        >>> first_difference([float("nan")], [float("nan")]) is None
        True
    """
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        if set(a) != set(b):
            return f"{path or 'top level'}: keys {sorted(map(str, a))} != {sorted(map(str, b))}"
        for key in a:
            found = first_difference(a[key], b[key], f"{path}[{key!r}]")
            if found:
                return found
        return None
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        if len(a) != len(b):
            return f"{path or 'top level'}: length {len(a)} != {len(b)}"
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            found = first_difference(x, y, f"{path}[{i}]")
            if found:
                return found
        return None
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return None
    try:
        equal = bool(a == b)
    except Exception:  # noqa: BLE001 - e.g. numpy arrays: compare them as arrays
        import numpy as np

        equal = bool(np.array_equal(a, b))
    return None if equal else f"{path or 'top level'}: {short(a)} != {short(b)}"


# ------------------------------------------------------------------------- info
def check_messages(messages: Any, previous: Sequence[Any] | None) -> str | None:
    """What is wrong with ``info["messages"]`` (``None`` if nothing): OpenAI chat format, and an
    append-only log (``previous``, the last step's messages, must be its prefix)."""
    if isinstance(messages, (str, bytes)) or not isinstance(messages, Sequence):
        return f"'messages' must be a list of chat messages, got {type(messages).__name__}"
    call_ids: set[str] = set()
    for i, m in enumerate(messages):
        if not isinstance(m, Mapping):
            return f"messages[{i}] must be a dict, got {type(m).__name__}"
        role = m.get("role")
        if role not in ROLES:
            return f"messages[{i}]['role'] is {short(role)}; expected one of {sorted(ROLES)}"
        content = m.get("content")
        if not isinstance(content, str) and not (
            role == "assistant" and content is None and m.get("tool_calls")
        ):
            return f"messages[{i}] ({role}) 'content' must be a str, got {type(content).__name__}"
        for j, call in enumerate(m.get("tool_calls") or ()):
            where = f"messages[{i}]['tool_calls'][{j}]"
            if role != "assistant":
                return f"{where}: only assistant messages carry tool_calls, this one is {role}"
            fn = call.get("function") if isinstance(call, Mapping) else None
            if (
                not isinstance(fn, Mapping)
                or not isinstance(call.get("id"), str)
                or call.get("type") != "function"
            ):
                return f"{where} must be {{'id': str, 'type': 'function', 'function': {{...}}}}, got {short(call)}"
            if not isinstance(fn.get("name"), str) or not isinstance(fn.get("arguments"), str):
                return f"{where}['function'] needs 'name' and 'arguments' as str (arguments JSON-encoded)"
            try:
                args = json.loads(fn["arguments"])
            except ValueError:
                return f"{where}['function']['arguments'] is not JSON: {short(fn['arguments'])}"
            if not isinstance(args, dict):
                return (
                    f"{where}['function']['arguments'] must encode a JSON object, got {short(args)}"
                )
            call_ids.add(call["id"])
        if role == "tool" and m.get("tool_call_id") not in call_ids:
            return f"messages[{i}] (tool) answers tool_call_id {short(m.get('tool_call_id'))}, which no earlier call has"
    if previous is not None:
        if len(messages) < len(previous) or any(
            x != y for x, y in zip(previous, messages, strict=False)
        ):
            return "'messages' rewrote earlier messages: the conversation must only grow"
    return None


def check_tools(tools: Any) -> str | None:
    """What is wrong with ``info["tools"]`` (``None`` if nothing): OpenAI function schemas, unique names."""
    if isinstance(tools, (str, bytes)) or not isinstance(tools, Sequence):
        return f"'tools' must be a list of OpenAI function schemas, got {type(tools).__name__}"
    names = []
    for i, tool in enumerate(tools):
        fn = tool.get("function") if isinstance(tool, Mapping) else None
        if not isinstance(fn, Mapping) or tool.get("type") != "function":
            return (
                f"tools[{i}] must be {{'type': 'function', 'function': {{...}}}}, got {short(tool)}"
            )
        if not isinstance(fn.get("name"), str) or not isinstance(fn.get("parameters", {}), Mapping):
            return (
                f"tools[{i}]['function'] needs a str 'name' and a JSON-schema 'parameters' object"
            )
        names.append(fn["name"])
    if len(set(names)) != len(names):
        return f"tool names repeat: {names}"
    return None


def check_components(components: Any, ended: bool) -> str | None:
    """What is wrong with ``info["reward_components"]``: a dict, filled with finite floats at the end."""
    if not isinstance(components, Mapping):
        return f"'reward_components' must be a dict, got {type(components).__name__}"
    if ended and not components:
        return "'reward_components' is empty at the end of the episode; it must hold the graded components"
    for key, value in components.items():
        if not isinstance(key, str):
            return f"reward component names must be str, got {short(key)}"
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or not math.isfinite(value)
        ):
            return f"reward component {key!r} must be a finite float, got {short(value)}"
    return None


def check_info(
    info: Any,
    required: Mapping[str, type | tuple[type, ...]],
    *,
    turn: int,
    ended: bool,
    previous: Mapping[str, Any] | None,
) -> tuple[str, str] | None:
    """``(check, problem)`` for the first contract breach in one info, else ``None``.

    ``turn`` is how many actions the agent took since reset; ``previous`` is
    its info before this step (``None`` at reset).
    """
    if not isinstance(info, dict):
        return "info_keys", f"info must be a dict, got {type(info).__name__}"
    missing = [k for k in required if k not in info]
    if missing:
        return "info_keys", f"info lacks {missing} (has {sorted(info)})"
    for key, kind in required.items():
        value = info[key]
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            return (
                "info_keys",
                f"info[{key!r}] must be {getattr(kind, '__name__', kind)}, got {type(value).__name__}",
            )
    if "turn" in required and info["turn"] != turn:
        return (
            "info_keys",
            f"info['turn'] is {info['turn']} after {turn} action(s); it counts actions, invalid ones included",
        )
    for key in ("task_id", "split"):
        if key in required and not info[key]:
            return "info_keys", f"info[{key!r}] is empty"
    problem = check_messages(info["messages"], previous["messages"] if previous else None)
    problem = (
        problem or check_tools(info["tools"]) or check_components(info["reward_components"], ended)
    )
    if problem:
        return "info_keys", problem
    if previous is not None:
        for key in ("task_id", "split", "tools"):
            if key in required and info[key] != previous[key]:
                return (
                    "info_keys",
                    f"info[{key!r}] changed within an episode: {short(previous[key])} -> {short(info[key])}",
                )
        if "tool_calls" in required and info["tool_calls"] < previous["tool_calls"]:
            return (
                "info_keys",
                f"info['tool_calls'] went down: {previous['tool_calls']} -> {info['tool_calls']}",
            )
    if "parse_error" in info and not (isinstance(info["parse_error"], str) and info["parse_error"]):
        return (
            "info_keys",
            f"info['parse_error'] must be a non-empty str saying what was wrong, got {short(info['parse_error'])}",
        )
    if ended and "gold" not in info:
        return (
            "no_gold_before_end",
            "info has no 'gold' at the end of the episode; graders and logs need it then",
        )
    if not ended and "gold" in info:
        return (
            "no_gold_before_end",
            f"info['gold'] = {short(info['gold'])} before the episode ended (turn {turn})",
        )
    return None


# ---------------------------------------------------------------------- rewards
def reward_problem(
    config: RewardConfig, components: Mapping[str, float], rewards: Sequence[float]
) -> str | None:
    """Why the rewards of one episode are not ``config``'s mix of its final components (``None`` if they are).

    Without shaping every step but the last earns 0 and the last earns
    ``config.combine(components)``; with shaping only the return must match.
    """
    try:
        expected = config.combine(components)
    except KeyError as err:
        return f"reward_config {config.name!r} cannot score the reported components: {err.args[0]}"
    where = f"reward_config {config.name!r} on components {dict(components)}"
    if config.shaping:
        total = math.fsum(rewards)
        if abs(total - expected) > TOLERANCE:
            return f"{where}: the return is {total!r}, expected {expected!r} (shaping moves costs, never the return)"
        return None
    early = [(i, r) for i, r in enumerate(rewards[:-1]) if r != 0.0]
    if early:
        return f"{where}: step {early[0][0] + 1} earned {early[0][1]!r} before the end; without shaping only the last step is rewarded"
    if not rewards or abs(rewards[-1] - expected) > TOLERANCE:
        got = rewards[-1] if rewards else None
        return f"{where}: the final reward is {got!r}, expected {expected!r}"
    return None


def probe_configs(components: Mapping[str, float]) -> list[RewardConfig]:
    """Reward configs under which a wrong reward cannot hide behind a zero.

    Why: under the default ``strict`` preset a scripted (wrong) answer scores
    0, which an env returning 0 always would match too. These weight
    ``format`` and charge tool calls, turns and latency, whichever of them
    the env reports, so the expected reward is non-zero; one shapes costs,
    one does not.
    """
    weights = {k: w for k, w in (("accuracy", 1.0), ("format", 0.5)) if k in components}
    if not weights:
        weights = {sorted(components)[0]: 1.0}
    costs = {
        f: rate
        for f, key, rate in (
            ("tool_call_cost", "tool_calls", 0.03),
            ("turn_cost", "turns", 0.01),
            ("latency_cost", "latency_ms", 1e-5),
        )
        if key in components
    }
    plain = RewardConfig(name="env-checker-probe", weights=weights, **costs)
    return [
        plain,
        RewardConfig(**{**plain.model_dump(), "name": "env-checker-probe-shaped", "shaping": True}),
    ]


@contextmanager
def reward_config(env: Any, config: RewardConfig) -> Iterator[None]:
    """Run with ``env.reward_config`` set to ``config``, restored after (even on failure)."""
    old = env.reward_config
    env.reward_config = config
    try:
        yield
    finally:
        env.reward_config = old


# ------------------------------------------------------------------------ tools
_EXAMPLE = re.compile(r"e\.g\.,?\s*(\[[^\]]*\]|'[^']*'|\"[^\"]*\"|-?\d+(?:\.\d+)?)")


def example_arguments(schema: Mapping[str, Any]) -> dict[str, Any]:
    """Plausible arguments for a tool from its OpenAI schema: the required ones only.

    Each value is the first of: an ``e.g.`` example in the description, the
    default, the first enum value, the minimum, then a plain value of the
    type. Why examples first: a call with realistic ids reaches the tool's
    real code path, not only its validation error.

    Example:
        >>> example_arguments({"function": {"parameters": {"required": ["id", "n"], "properties": {
        ...     "id": {"type": "string", "description": "A title id, e.g. 'tt1375666'."},
        ...     "n": {"type": "integer", "minimum": 1}}}}})
        {'id': 'tt1375666', 'n': 1}
    """
    params = schema.get("function", {}).get("parameters", {})
    props = params.get("properties", {})
    return {name: _example_value(props.get(name, {})) for name in params.get("required", ())}


def _example_value(prop: Mapping[str, Any]) -> Any:
    branches = [b for b in prop.get("anyOf", ()) if b.get("type") != "null"]
    if branches:
        prop = {**branches[0], "description": prop.get("description", "")}
    kind = prop.get("type")
    match = _EXAMPLE.search(str(prop.get("description", "")))
    if match:
        try:
            value = ast.literal_eval(match.group(1))
        except (ValueError, SyntaxError):
            value = None
        if (
            kind == "array"
            and isinstance(value, list)
            or kind == "string"
            and isinstance(value, str)
        ):
            return value
        if (
            kind in ("integer", "number")
            and isinstance(value, (int, float))
            and not isinstance(value, bool)
        ):
            return value
    if "default" in prop:
        return prop["default"]
    if prop.get("enum"):
        return prop["enum"][0]
    if kind in ("integer", "number"):
        return prop.get("minimum", 1)
    if kind == "boolean":
        return False
    if kind == "array":
        return [_example_value(prop.get("items", {}))] * max(1, int(prop.get("minItems", 1)))
    if kind == "object":
        return {}
    return "test".ljust(int(prop.get("minLength", 1)), "x")


def tool_call_actions(tools: Sequence[Mapping[str, Any]], limit: int) -> list[str]:
    """Up to ``limit`` actions calling the tools with example arguments; the first thinks first, and
    one calls two tools at once, so both the reasoning and the parallel-call paths run."""
    from agentenv.engine.actions import think, tool_call, tool_calls

    calls = [(t["function"]["name"], example_arguments(t)) for t in tools]
    actions = [tool_call(name, **args) for name, args in calls]
    if len(calls) >= 2:
        actions.append(tool_calls(calls[:2]))
    actions = actions[: max(0, limit)]
    if actions:
        actions[0] = think("Checking the tools first.", actions[0])
    return actions
