"""verl-tool bodies read by orjson give the stdlib's values and errors, or are left to the stdlib.

``parse_request`` reads a body with orjson where it can (about 4x cheaper) and with ``json``
otherwise; a search over JSON documents (big integers, floats, unpaired surrogates, deep nesting,
broken text) checks that the two readings never differ, and that every request, valid or not,
gets the same items or the same error with orjson as without it.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentenv.integrations.serve_env.limits import EnvServerLimits
from agentenv.integrations.verl_tool import protocol
from agentenv.retrieval.server_requests import RequestError, bounded_int

pytest.importorskip("orjson")

LIMITS = EnvServerLimits(max_actions_per_request=8, max_id_chars=16)

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.sampled_from(["\ud800", "x\udfff", "é", "\x00"]),
)
documents = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=20,
)


def _typed(value: Any) -> str:
    """A reading as text that tells 1 from 1.0 from True, and NaN from NaN."""
    return json.dumps(value, sort_keys=False) if not isinstance(value, str) else repr(value)


def _stdlib(body: bytes) -> Any:
    return json.loads(body, parse_int=bounded_int)


@settings(max_examples=300, deadline=None)
@given(documents)
def test_orjson_reads_what_the_stdlib_reads_or_leaves_it(document: Any) -> None:
    body = json.dumps(document).encode()
    fast = protocol._fast_loads(body)
    if fast is not protocol._NOT_FAST:
        assert _typed(fast) == _typed(_stdlib(body))


@pytest.mark.parametrize(
    "body",
    [
        b"[18446744073709551616]",  # orjson: a float
        b"[-9223372036854775809]",
        b"[1E400]",
        b'["\\ud800"]',
        b"[NaN]",
        b"\xef\xbb\xbf[1]",
        "[1]".encode("utf-16"),
        b"[" * 950 + b"]" * 950,  # the stdlib fails near the recursion limit; orjson would not
        b'{"a": 1, "a": 2}',
    ],
)
def test_bodies_where_orjson_and_the_stdlib_part_are_left_to_the_stdlib(body: bytes) -> None:
    fast = protocol._fast_loads(body)
    if fast is not protocol._NOT_FAST:
        assert _typed(fast) == _typed(_stdlib(body))
    assert protocol._fast_loads(b"[1, 2.5, true]") == [1, 2.5, True]


def _outcome(body: bytes) -> str:
    try:
        return repr(protocol.parse_request(body, LIMITS))
    except RequestError as err:
        return f"{err.status} {err.reason}"


requests = st.fixed_dictionaries(
    {
        "trajectory_ids": st.one_of(st.lists(st.text(max_size=20), max_size=10), documents),
        "actions": st.one_of(st.lists(st.text(max_size=10), max_size=10), documents),
    },
    optional={
        "finish": st.one_of(
            st.lists(st.sampled_from([True, False, 0, 1, 2]), max_size=10), documents
        ),
        "is_last_step": st.lists(st.booleans(), max_size=10),
        "extra_fields": st.one_of(st.lists(documents, max_size=10), documents),
    },
)


@settings(max_examples=300, deadline=None)
@given(requests, st.booleans())
def test_parse_request_answers_the_same_with_and_without_orjson(payload: dict, cut: bool) -> None:
    body = json.dumps(payload).encode()
    if cut:
        body = body[: len(body) // 2]
    with_orjson = _outcome(body)
    saved = protocol._orjson_loads
    protocol._orjson_loads = None
    try:
        without = _outcome(body)
    finally:
        protocol._orjson_loads = saved
    assert with_orjson == without
