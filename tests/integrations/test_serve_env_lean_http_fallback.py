"""Without httptools the server runs on uvicorn's h11 cycle: the lean path must step aside, not fail.

The ``verl`` extra installs plain ``uvicorn`` (no httptools), and its venv serves verl-tool; the
lean path reads httptools' parser, so it applies only to an httptools protocol.
"""

from __future__ import annotations

import sys
from types import SimpleNamespace

import pytest

pytest.importorskip("uvicorn")

from uvicorn.protocols.http.h11_impl import H11Protocol  # noqa: E402

from agentenv.integrations.serve_env.lean_http import lean_protocol  # noqa: E402


class _GuardedH11(H11Protocol):
    """What ``guarded_protocol`` builds on h11: it adds httptools' ``on_headers_complete`` hook too."""

    def guard_send_error(self) -> None:
        return None

    def on_headers_complete(self) -> None:
        return None


def _lean(base: type) -> type:
    return lean_protocol(
        base,
        app=None,
        hot_paths=("/get_observation",),
        max_body_bytes=1 << 20,
        max_header_bytes=1 << 14,
    )


def test_an_h11_base_is_returned_unchanged() -> None:
    assert _lean(_GuardedH11) is _GuardedH11


def test_httptools_missing_returns_the_base_without_importing_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "uvicorn.protocols.http.httptools_impl", None)
    assert _lean(_GuardedH11) is _GuardedH11


def test_the_guarded_protocol_on_h11_is_served_as_it_is(monkeypatch: pytest.MonkeyPatch) -> None:
    from agentenv.retrieval.connections import guarded_protocol

    monkeypatch.setitem(sys.modules, "uvicorn.protocols.http.httptools_impl", None)
    guard = SimpleNamespace(settings=SimpleNamespace(max_header_bytes=1 << 14))
    base = guarded_protocol(guard, 1)
    assert issubclass(base, H11Protocol)
    assert _lean(base) is base
