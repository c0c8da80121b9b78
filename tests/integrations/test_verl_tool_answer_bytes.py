"""The verl-tool app's cheaper paths write the bytes its plain paths write.

An observation is written piece by piece (:func:`~agentenv.integrations.verl_tool.observation_json.observation_json`),
a short answer joined at once (:func:`~agentenv.integrations.serve_env.answer_body.observations_answer`),
a plainly valid body read in one pass (``protocol._plain_items``) and a request of finishes
answered without taking a turn when none runs. Each is checked against the path it replaces:
``json.dumps`` of the observation object, the answer in pieces, the field-by-field checks, and
the turns a finish waits for while another request runs.
"""

from __future__ import annotations

import asyncio
import json
import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentenv.integrations.serve_env.answer_body import (
    ObservationChunks,
    bools_json,
    observations_answer,
)
from agentenv.integrations.serve_env.limits import EnvServerLimits
from agentenv.integrations.serve_env.sessions import EnvPool, Outcome, Trajectories
from agentenv.integrations.verl_tool import protocol
from agentenv.integrations.verl_tool.app import VerlToolApp
from agentenv.integrations.verl_tool.observation_json import (
    encode_observation,
    json_float,
    json_text,
    observation,
    observation_json,
)
from agentenv.retrieval.server_requests import RequestError

texts = st.one_of(
    st.text(max_size=40),
    st.text(alphabet=st.characters(max_codepoint=127), max_size=40),  # ASCII, DEL and controls
    st.sampled_from(["", "\x7f", "a\x7fb", "\ud800", "é\x00", '"\\/\n\t', "\u2028"]),
)
floats = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.0, -0.0, 1e16, -1e-7, 0.1, 2.0**53]),
)
components = st.dictionaries(
    st.text(max_size=8),
    st.one_of(floats, st.integers(-5, 5), st.booleans(), floats.map(np.float64)),
    max_size=5,
)


@settings(max_examples=300, deadline=None)
@given(texts, floats)
def test_text_and_floats_are_written_as_json_writes_them(text: str, value: float) -> None:
    assert json_text(text) == json.dumps(text).encode()
    assert json_float(value) == json.dumps(value).encode()
    assert json_float(np.float32(1.5)) == json.dumps(1.5).encode()


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(texts, st.just({"not": "text"})),
    floats,
    st.booleans(),
    st.booleans(),
    st.integers(0, 10**6),
    floats,
    st.one_of(st.none(), components),
    st.booleans(),
    st.one_of(st.none(), st.lists(st.dictionaries(st.sampled_from(["role", "content"]), texts))),
)
def test_an_observation_is_the_json_of_its_object(
    text: Any,
    reward: float,
    terminated: bool,
    truncated: bool,
    turns: int,
    total: float,
    parts: dict[str, Any] | None,
    messages: bool,
    transcript: list[dict[str, str]] | None,
) -> None:
    info: dict[str, Any] = {}
    if parts is not None:
        info["reward_components"] = parts
    if transcript is not None:
        info["messages"] = transcript
    outcome = Outcome(text, reward, terminated, truncated, True, info, turns, total)
    assert observation_json(outcome, messages=messages) == (
        encode_observation(observation(outcome, messages=messages)).encode()
    )


def test_counters_of_another_type_fall_back_to_json() -> None:
    outcome = Outcome("x", 1.0, np.bool_(True), False, True, {}, np.int64(3), 1.0)  # type: ignore[arg-type]
    assert observation_json(outcome) == encode_observation(observation(outcome)).encode()


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.one_of(st.booleans(), st.integers(0, 2)), max_size=6),
    st.lists(texts.map(lambda t: json.dumps({"obs": t}).encode()), max_size=6),
)
def test_a_short_answer_is_the_answer_in_pieces(flags: list[Any], encoded: list[bytes]) -> None:
    assert bools_json(flags) == json.dumps(flags).encode()
    n = min(len(flags), len(encoded))
    body = observations_answer(encoded[:n], flags[:n], flags[:n])
    assert body == b"".join(ObservationChunks(encoded[:n], flags[:n], flags[:n]))


def test_a_long_answer_still_goes_in_pieces() -> None:
    big = [json.dumps({"obs": "x" * 100_000}).encode()] * 4
    body = observations_answer(big, [True] * 4, [True] * 4)
    assert isinstance(body, ObservationChunks)
    assert (
        b"".join(body)
        == json.dumps(
            {
                "observations": [{"obs": "x" * 100_000}] * 4,
                "dones": [True] * 4,
                "valids": [True] * 4,
            }
        ).encode()
    )


# -- parse_request: the one-pass reading of a plain body against the field-by-field checks ------

LIMITS = EnvServerLimits(max_actions_per_request=6, max_id_chars=12)
scalars = st.one_of(st.none(), st.booleans(), st.integers(-3, 2**64), st.floats(), texts)
fields = st.one_of(
    st.none(),
    st.dictionaries(st.text(max_size=5), scalars, max_size=3),
    st.dictionaries(st.text(max_size=5), st.lists(scalars, max_size=2), max_size=2),
    scalars,
)


ANY_SIZE = st.integers(0, 7)
"""Trajectories in a drawn request: none (refused), one, and up to past ``max_actions_per_request``."""


@st.composite
def plain_requests(draw: st.DrawFn, sizes: st.SearchStrategy[int] = ANY_SIZE) -> dict[str, Any]:
    """Mostly valid bodies, with one field at a time off: near the edge of every check."""
    n = draw(sizes)
    ids = draw(
        st.lists(st.one_of(st.text(max_size=14), texts), min_size=n, max_size=n, unique=True)
    )
    if draw(st.booleans()) and ids:
        ids[-1] = ids[0]  # a repeated id
    payload: dict[str, Any] = {
        "trajectory_ids": ids,
        "actions": draw(st.lists(texts, min_size=n, max_size=n + draw(st.integers(0, 1)))),
    }
    for name in ("finish", "is_last_step"):
        flag = st.one_of(st.booleans(), st.sampled_from([0, 1, 2, None, "true"]))
        kind = draw(st.sampled_from(["absent", "null", "bools", "mixed"]))
        if kind == "null":
            payload[name] = None
        elif kind == "bools":
            payload[name] = draw(st.lists(st.booleans(), min_size=n, max_size=n))
        elif kind == "mixed":
            payload[name] = draw(st.lists(flag, min_size=n, max_size=n + 1))
    if draw(st.booleans()):
        payload["extra_fields"] = draw(
            st.one_of(st.none(), st.lists(fields, min_size=n, max_size=n + 1), scalars)
        )
    return payload


def _reading(body: bytes) -> str:
    try:
        return repr(protocol.parse_request(body, LIMITS))
    except RequestError as err:
        return f"{err.status} {err.reason}"


def _checked_reading(payload: dict[str, Any]) -> str:
    """:func:`_reading` with the one-pass readings off: the field-by-field checks alone."""
    saved = protocol._plain_items
    protocol._plain_items = lambda payload, limits: None  # type: ignore[assignment]
    try:
        return _reading(json.dumps(payload).encode())
    finally:
        protocol._plain_items = saved


@settings(max_examples=400, deadline=None)
@given(plain_requests())
def test_the_one_pass_reading_gives_the_checks_items_or_leaves_them_to_the_checks(
    payload: dict[str, Any],
) -> None:
    assert _reading(json.dumps(payload).encode()) == _checked_reading(payload)


@settings(max_examples=400, deadline=None)
@given(plain_requests(st.just(1)))
def test_the_one_trajectory_reading_gives_the_checks_items_or_leaves_them_to_the_checks(
    payload: dict[str, Any],
) -> None:
    """One trajectory a request has a reading of its own (``_plain_one``): searched alone."""
    assert _reading(json.dumps(payload).encode()) == _checked_reading(payload)


def test_the_one_pass_reading_takes_the_usual_bodies() -> None:
    usual = {
        "trajectory_ids": ["a", "b"],
        "actions": ["<answer>x</answer>", "é"],
        "finish": [False, True],
        "is_last_step": [False, False],
        "extra_fields": [{"index": 3, "seed": 1}, None],
    }
    items = protocol._plain_items(json.loads(json.dumps(usual)), LIMITS)
    assert items is not None and [i.finish for i in items] == [False, True]
    assert items[0].extra_fields == {"index": 3, "seed": 1} and items[1].extra_fields == {}
    assert protocol._plain_items({"trajectory_ids": ["a"], "actions": ["\ud800"]}, LIMITS) is None
    one = {"trajectory_ids": ["a"], "actions": [""], "finish": [True], "extra_fields": [None]}
    (item,) = protocol._plain_items(one, LIMITS) or [None]
    assert item == protocol.Item("a", "", True, False, {})


# -- the app: the observations it writes, and a finish that takes no turn -----------------------


class ScriptedEnv:
    """Steps to what the action says (JSON: obs, reward, terminated, truncated, components, ...)."""

    def reset(self, seed: int | None = None, options: Any = None) -> tuple[str, dict[str, Any]]:
        return "start", {}

    def step(self, action: str) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        try:
            said = json.loads(action)
        except ValueError:
            return "Error: not JSON", 0.0, False, False, {"parse_error": "not JSON"}
        info: dict[str, Any] = {"messages": [{"role": "tool", "content": said.get("obs", "")}]}
        if "components" in said:
            info["reward_components"] = {k: np.float64(v) for k, v in said["components"].items()}
        reward = said.get("reward", 0.0)
        return said.get("obs", ""), reward, said.get("end", False), False, info

    def close(self) -> None:
        pass


def _app(limits: EnvServerLimits) -> VerlToolApp:
    pool = EnvPool(lambda split: ScriptedEnv(), max_idle=8)
    return VerlToolApp(Trajectories(pool, limits, default_split="test"), {})


def _answer(app: VerlToolApp, items: list[protocol.Item]) -> tuple[int, bytes]:
    status, body, _ = asyncio.run(app.answer(items, "10.0.0.1"))
    return status, body if isinstance(body, bytes) else b"".join(body)


def _plain_answer(app: VerlToolApp, items: list[protocol.Item]) -> tuple[int, bytes]:
    """The answer as the app wrote it before: each observation object through json.dumps."""
    new = app.new_starts(items)
    for _ in app.start_all(new):
        pass
    observations: list[Any] = []
    dones: list[bool] = []
    valids: list[bool] = []
    for _ in app.step_all(items, observations, dones, valids):
        pass
    whole = {"observations": observations, "dones": dones, "valids": valids}
    return 200, json.dumps(whole, default=lambda v: v.item()).encode()


steps = st.one_of(
    st.fixed_dictionaries(
        {"obs": texts, "reward": floats},
        optional={
            "end": st.booleans(),
            "components": st.dictionaries(st.text(max_size=6), floats, max_size=3),
        },
    ).map(json.dumps),
    texts,  # not JSON: the env's parse error, valid False
)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(steps, min_size=1, max_size=3), min_size=1, max_size=4), st.booleans())
def test_the_app_answers_with_the_bytes_of_its_observation_objects(
    script: list[list[str]], messages: bool
) -> None:
    limits = EnvServerLimits(max_action_chars=200, max_turns=3)
    fast, plain = _app(limits), _app(limits)
    width = max(map(len, script))
    for turn in range(width + 1):  # a last round of finishes (and of ids that have ended)
        items = [
            protocol.Item(
                f"t{k}",
                episode[turn] if turn < len(episode) else "",
                turn >= len(episode),
                False,
                {"return_messages": messages} if turn == 0 else {},
            )
            for k, episode in enumerate(script)
        ]
        assert _answer(fast, items) == _plain_answer(plain, items)


def test_a_long_action_and_an_ended_id_answer_as_before() -> None:
    limits = EnvServerLimits(max_action_chars=10)
    fast, plain = _app(limits), _app(limits)
    for action in ('{"obs": "x", "end": true}', "y" * 11, "z"):
        items = [protocol.Item("a", action, False, False, {})]
        assert _answer(fast, items) == _plain_answer(plain, items)


def test_a_request_of_finishes_takes_no_turn_when_none_runs_and_waits_its_turn_otherwise() -> None:
    app = _app(EnvServerLimits())
    start = [protocol.Item("a", '{"obs": "x"}', False, False, {})]
    finish = [protocol.Item("a", "", True, False, {})]

    async def main() -> None:
        assert (await app.answer(start, "10.0.0.1"))[0] == 200
        granted = app.turns.granted
        assert (await app.answer(finish, "10.0.0.1"))[1].startswith(b'{"observations": [""]')
        assert app.turns.granted == granted and "a" not in app.trajectories.live  # no turn taken

        again = [protocol.Item("b", '{"obs": "x"}', False, False, {})]
        await app.answer(again, "10.0.0.1")
        await app.turns.acquire("10.0.0.2")  # another client's slice runs
        waiting = asyncio.create_task(
            app.answer([protocol.Item("b", "", True, False, {})], "10.0.0.1")
        )
        for _ in range(10):
            await asyncio.sleep(0)
        assert not waiting.done() and "b" in app.trajectories.live
        app.turns.release()
        status, body, _ = await waiting
        assert status == 200 and "b" not in app.trajectories.live
        assert app.turns.idle

    asyncio.run(main())


def test_nan_reward_is_written_as_json_writes_it() -> None:
    app = _app(EnvServerLimits())
    items = [protocol.Item("n", json.dumps({"obs": "x", "reward": math.nan}), False, False, {})]
    status, body = _answer(app, items)
    assert status == 200 and b'"reward": NaN' in body


if __name__ == "__main__":  # pragma: no cover
    pytest.main([__file__, "-q"])
