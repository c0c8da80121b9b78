"""What a client of ``serve-env`` may ask: every bound of the env server, in one dataclass.

The connection fields have the names of :class:`agentenv.retrieval.server_requests.ServerLimits`
so that :func:`agentenv.retrieval.server.guard_settings` builds the connection guard from
either; the rest bound what one request, one trajectory and all trajectories may hold.

Example:
    >>> EnvServerLimits().max_live_envs
    1024
    >>> EnvServerLimits(max_live_envs=0)
    Traceback (most recent call last):
    ...
    ValueError: EnvServerLimits.max_live_envs must be positive, got 0
"""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class EnvServerLimits:
    """Bounds that keep one bad or greedy client from taking the server from the others."""

    max_live_envs: int = 1024
    """Trajectories with a live env at once. A request that would start more is answered 503
    (with ``Retry-After``) before anything in it is stepped; OpenEnv sessions past it are refused."""
    trajectory_idle_s: float = 600.0
    """Seconds a trajectory may go without a step before its env is closed. Long, because an
    LLM generates between two steps; the id is remembered, so a late step gets an error, not
    a fresh episode."""
    max_turns: int = 256
    """Steps one trajectory may take, whatever the env's own turn budget; the step that reaches
    it ends the trajectory (truncated)."""
    max_actions_per_request: int = 256
    """Trajectories in one verl-tool request; clients split larger batches."""
    max_action_chars: int = 32768
    """Characters in one action (32 K, the bound every env parses and grades in ≤ 20 ms)."""
    max_id_chars: int = 256
    """Characters in one trajectory id."""
    max_body_bytes: int = 4 << 20
    """Bytes in a request body or a WebSocket message (4 MiB), checked before JSON parsing."""
    remembered_ended: int = 65536
    """Ended trajectory ids remembered (oldest forgotten first), so that a step after the end
    is an error rather than a new episode."""
    retry_after_s: int = 1
    """The ``Retry-After`` value (whole seconds) sent with 503."""
    max_connections: int = 1024
    """Open connections; at the cap the one waiting longest without a request yields."""
    max_connections_per_client: int = 512
    """Open connections from one client address, enforced the same way."""
    header_timeout_s: float = 5.0
    """Seconds to send a request's headers (a silent or trickling connection is closed)."""
    idle_timeout_s: float = 60.0
    """Seconds a keep-alive connection (or an OpenEnv WebSocket) may wait between requests."""
    body_timeout_s: float = 10.0
    """Seconds to send a request's body once its headers are in."""
    max_header_bytes: int = 32768
    """Bytes of request line and headers; beyond this the answer is 431."""

    def __post_init__(self) -> None:
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if value <= 0:
                raise ValueError(f"EnvServerLimits.{field.name} must be positive, got {value!r}")
