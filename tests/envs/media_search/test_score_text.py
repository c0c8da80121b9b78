"""A search result's score is written as ``json`` writes ``round(score, 3)``, whatever the float."""

from __future__ import annotations

import struct

from hypothesis import given, settings
from hypothesis import strategies as st

from agentenv.envs.media_search.tools.tool_json import score_text

# Exact ties between two three-decimal neighbours, and their binary neighbours: where a
# fast path that rounds another way than ``round`` would show first.
_TIES = st.integers(-(10**9), 10**9).map(lambda n: (2 * n + 1) / 2000)


def _next_after(x: float, up: bool) -> float:
    bits = struct.unpack("<q", struct.pack("<d", x))[0]
    step = 1 if (x >= 0) == up else -1
    return struct.unpack("<d", struct.pack("<q", bits + step))[0]


@settings(max_examples=2000, deadline=None)
@given(
    st.one_of(
        st.floats(allow_nan=True, allow_infinity=True),
        st.floats(min_value=-1e6, max_value=1e6),
        _TIES,
        _TIES.map(lambda x: _next_after(x, True)),
        _TIES.map(lambda x: _next_after(x, False)),
    )
)
def test_score_text_is_the_repr_of_the_rounded_score(score: float) -> None:
    assert score_text(score) == repr(round(score, 3))
