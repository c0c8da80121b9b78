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


def test_a_port_in_use_is_one_line_naming_it() -> None:
    """serve-env and serve-retrieval ended in "OSError: [Errno 98]" after announcing the port."""
    import socket

    from agentenv.errors import UserInputError
    from agentenv.retrieval.server import bind_listener

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(UserInputError, match=rf"cannot listen on 127.0.0.1:{port}: address"):
            bind_listener("127.0.0.1", port)
