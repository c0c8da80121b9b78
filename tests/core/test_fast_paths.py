"""The step's fast paths give exactly what the general paths give.

The step budget (benchmarks/env_speed.py) is met with shortcuts: a direct
read of an action that is one bare ``<tool_call>`` or ``<answer>`` block, the
C JSON scanner called without ``decode``'s whitespace scans, a cached JSON
encoder, messages built read-only, and a watchdog thread instead of two
``setitimer`` calls per tool. Each shortcut must be invisible: these tests
compare it with the path it short-cuts, on generated inputs.
"""

from __future__ import annotations

import json
import multiprocessing
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from agentenv.engine.frozen import FrozenDict
from agentenv.engine.parsing import parse_action
from agentenv.engine.tool_deadline import WATCHDOG, ToolTimeout
from agentenv.engine.tools import Tool, ToolRegistry, encode_json

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(10**12), 10**12)
    | st.floats(allow_nan=False)
    | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=6), children, max_size=3)
    ),
    max_leaves=8,
)
names = st.sampled_from(["search", "get_title", "", "x<y", "lookup"])
bodies = st.one_of(
    st.builds(
        lambda n, a: json.dumps({"name": n, "arguments": a}),
        names,
        st.dictionaries(st.text(max_size=5), json_values, max_size=3),
    ),
    st.builds(lambda n: json.dumps({"name": n}), names),
    st.builds(lambda v: json.dumps(v), json_values),
    st.text(max_size=20),
    st.sampled_from(
        [
            '{"name": "a", "arguments": {}} ',
            ' {"name": "a"}',
            '{"name": "a",}',
            '{"a": 1} {"b": 2}',
            "NaN",
            "1e999",
        ]
    ),
)
actions = st.one_of(
    st.builds(lambda b: f"<tool_call>{b}</tool_call>", bodies),
    st.builds(lambda b: f"<answer>{b}</answer>", st.text(max_size=20)),
    st.builds(lambda a, b: f"<tool_call>{a}</tool_call><tool_call>{b}</tool_call>", bodies, bodies),
    st.builds(lambda b: f"<answer>{b}</answer>", bodies),
)


def _no_surrogates(text: str) -> bool:
    return not any(0xD800 <= ord(c) <= 0xDFFF for c in text)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(actions)
def test_the_direct_read_of_one_block_equals_the_general_scan(action: str) -> None:
    """A leading space sends the same action through the general scan (it is stripped there)."""
    if not _no_surrogates(action):
        return
    assert parse_action(action) == parse_action(" " + action)


@settings(max_examples=150, deadline=None)
@given(json_values)
def test_the_cached_encoder_writes_what_json_dumps_writes(value: object) -> None:
    assert encode_json(value) == json.dumps(value, ensure_ascii=False)


class _Args(BaseModel):
    seconds: float = 0.0


def _sleep(args: _Args) -> str:
    time.sleep(args.seconds)
    return "slept"


def _spin(args: _Args) -> str:
    end = time.monotonic() + args.seconds
    while time.monotonic() < end:
        pass
    return "spun"


@pytest.mark.parametrize("body", [_sleep, _spin], ids=["blocking", "busy"])
def test_an_overrunning_tool_is_interrupted_near_its_limit(body) -> None:
    registry = ToolRegistry([Tool("slow", "Slow.", _Args, body, timeout_s=0.2)])
    result = registry.execute(registry["slow"], _Args(seconds=3.0))
    assert (
        not result.ok and "did not finish within 0.2 s" in result.content
    )  # interrupted, not waited out
    fast = registry.execute(
        registry["slow"], _Args(seconds=0.0)
    )  # the next call is not hit by a late signal
    assert fast.ok and fast.content == ("slept" if body is _sleep else "spun")


def test_calls_after_a_long_quiet_spell_are_still_guarded() -> None:
    """The watchdog parks when idle; a call must wake it."""
    registry = ToolRegistry([Tool("slow", "Slow.", _Args, _sleep, timeout_s=0.2)])
    registry.execute(registry["slow"], _Args(seconds=0.0))
    time.sleep(WATCHDOG.IDLE_S + 3 * WATCHDOG.POLL_S)
    assert WATCHDOG._parked
    result = registry.execute(registry["slow"], _Args(seconds=3.0))
    assert not result.ok and "did not finish" in result.content


def _timeout_in_child(queue) -> None:  # pragma: no cover - runs in a forked child
    registry = ToolRegistry([Tool("slow", "Slow.", _Args, _sleep, timeout_s=0.2)])
    queue.put(registry.execute(registry["slow"], _Args(seconds=3.0)).content)


def test_a_forked_child_keeps_the_limit() -> None:
    registry = ToolRegistry([Tool("slow", "Slow.", _Args, _sleep, timeout_s=0.2)])
    registry.execute(registry["slow"], _Args(seconds=0.0))  # the parent's watchdog is running
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_timeout_in_child, args=(queue,))
    child.start()
    child.join(20)
    assert "did not finish within 0.2 s" in queue.get(timeout=5)


def test_a_timeout_raised_directly_is_the_tools_timeout() -> None:
    with pytest.raises(ToolTimeout):
        WATCHDOG.run(0.1, time.sleep, 2.0)


def test_info_tools_is_one_read_only_list_equal_to_the_schemas() -> None:
    registry = ToolRegistry([Tool("slow", "Slow.", _Args, _sleep)])
    assert registry.info_schemas == registry.schemas
    assert isinstance(registry.info_schemas[0], FrozenDict)
    with pytest.raises(TypeError, match="read-only"):
        registry.info_schemas[0]["function"]["name"] = "other"
    assert registry.schemas[0]["function"]["name"] == "slow"
