"""``POST /search`` bodies read by their grammar: one value per key.

A probe sent ``{"queries": ["x"], "k": 3, "k": 1}``, which was accepted with the last ``k``.
"""

from __future__ import annotations

import pytest

from agentenv.retrieval.server_requests import RequestError, ServerLimits, parse_search_body


def test_a_key_written_twice_is_refused() -> None:
    with pytest.raises(RequestError, match="the key 'k' appears twice") as err:
        parse_search_body(b'{"queries": ["x"], "k": 3, "k": 1}', ServerLimits())
    assert err.value.status == 422
