"""What the front of a multi-process verl-tool server and its workers say to each other, and who owns an id.

Why a wire of our own: the front and its workers are one program on one machine, joined by a
``socketpair``; each message is a length-prefixed pickle. Pickle is safe here because both ends
are this package's own processes (a worker is started by the front, with the socket as its only
input); nothing from the network is ever unpickled: clients speak JSON to the front.

Messages from the front are tuples ``(kind, request_number, payload)``:

* ``("start", n, (client, [(position, Item), ...]))``: start the trajectories among these items
  that are new (phases 1 and 2 of :class:`~agentenv.integrations.verl_tool.app.VerlToolApp`, all
  or none), for ``client`` (the request's peer address: the cap is shared per client);
* ``("step", n, (client, [Item, ...]))``: phase 3, each observation returned as its JSON text,
  encoded; a worker takes the messages in progress a slice each, round robin per client
  (:class:`~agentenv.integrations.serve_env.fair.ClientRounds`), and sends the observations
  stepped so far as parts ``(n, None, [bytes, ...])`` once they pass 128 KB, before the answer,
  which carries the rest (an answer at the limits is 13 MB: never one frame);
* ``("undo", n, [trajectory_id, ...])``: end and forget trajectories a refused request started;
* ``("info", n, None)``: the worker's counters;
* ``("stop", n, None)``: end every trajectory and exit.

A worker answers every message but ``stop`` with ``(request_number, ok, payload)``; ``ok`` False
carries ``(status, body, headers, reason)``, the HTTP answer the front gives: with a ``reason``,
a bad request that the front logs and counts (one line, as the one-process server does).

Example:
    >>> frame = encode(("info", 7, None))
    >>> decode(frame[HEADER.size:])
    ('info', 7, None)
    >>> shard_of("traj-0", 2), shard_of("traj-4", 2)
    (0, 1)
"""

from __future__ import annotations

import pickle
import struct
import zlib
from typing import Any

HEADER = struct.Struct("!I")
"""A frame's length, before its pickle."""

MAX_FRAME_BYTES = 1 << 30
"""Refuse a frame longer than this (a broken peer, not a request: requests are capped far lower)."""


def shard_of(trajectory_id: str, workers: int) -> int:
    """The worker that owns ``trajectory_id``: a fixed hash (the same in every process and run)."""
    return zlib.crc32(trajectory_id.encode("utf-8", "surrogatepass")) % workers


def encode(message: Any) -> bytes:
    """One frame: length, then the pickle."""
    body = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    return HEADER.pack(len(body)) + body


def decode(body: bytes) -> Any:
    """The message of one frame's body."""
    return pickle.loads(body)


def frame_length(header: bytes) -> int:
    """The body length a header announces; a ``ValueError`` past :data:`MAX_FRAME_BYTES`."""
    (length,) = HEADER.unpack(header)
    if length > MAX_FRAME_BYTES:
        raise ValueError(
            f"frame of {length} bytes from a serve-env peer; the limit is {MAX_FRAME_BYTES}"
        )
    return length
