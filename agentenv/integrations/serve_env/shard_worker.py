"""One worker process of ``serve-env --protocol verl-tool --workers N``: the trajectories one shard owns.

Started by the front (:mod:`agentenv.integrations.serve_env.shards`) as
``python -m agentenv.integrations.serve_env.shard_worker CONFIG_JSON`` with one end of a
``socketpair`` as file descriptor ``CONFIG["fd"]``. It builds the env id's trajectories as the
one-process server does (:func:`agentenv.integrations.verl_tool.create_app`), says it is ready,
then answers the front's messages (:mod:`.shard_wire`) with the same
:class:`~agentenv.integrations.verl_tool.app.VerlToolApp` methods the one-process server runs, so
the two serve the same episodes, observations and errors. Messages in progress take turns a slice
each (see :func:`serve_shard`), and idle trajectories are evicted as the one-process server's
sweep evicts them.

It exits when the front closes the socket or says ``stop``: a worker never outlives its server.
"""

from __future__ import annotations

import dataclasses
import gc
import json
import logging
import select
import signal
import socket
import sys
import time
from collections.abc import Generator
from typing import Any

from agentenv.integrations.serve_env.fair import ClientRounds
from agentenv.integrations.serve_env.shard_wire import HEADER, decode, encode, frame_length
from agentenv.integrations.verl_tool.app import error_body
from agentenv.retrieval.server_requests import RequestError

logger = logging.getLogger("agentenv.serve_env.worker")

PART_BYTES = 1 << 17
"""A step message sends the observations it has stepped once they pass this many bytes (128 KB)."""


def _read_exactly(sock: socket.socket, n: int) -> bytes | None:
    """``n`` bytes, or None when the front has closed the socket."""
    chunks, left = [], n
    while left:
        chunk = sock.recv(min(left, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


class ShardWorker:
    """Answers the front's messages with a :class:`VerlToolApp`'s own methods (no HTTP, no event loop)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    def job(self, kind: str, payload: Any) -> Generator[list[bytes] | None, None, tuple[bool, Any]]:
        """One message's work, yielding where the app's phases yield (every ``YIELD_EVERY_S``);
        returns ``(ok, payload)``, a refusal as ``(False, (status, body, headers, reason))``.

        A step yields, at the end of a slice, the observations (JSON, encoded) stepped since its
        last part once they pass :data:`PART_BYTES`, for :func:`serve_shard` to send at once; its
        return carries the rest. So neither end ever holds one frame of a whole answer at the
        limits (256 observations of 50 KB: one 13 MB pickle and ``sendall``, during which this
        worker stepped nothing, and one read and unpickle in the front's event loop).
        """
        app = self.app
        if kind == "step":
            _, items = payload
            texts: list[Any] = []
            dones: list[bool] = []
            valids: list[bool] = []
            sent = counted = size = 0
            for _ in app.step_all(items, texts, dones, valids, as_text=True):
                size += sum(map(len, texts[counted:]))
                counted = len(texts)
                if size >= PART_BYTES:
                    yield texts[sent:counted]
                    sent, size = counted, 0
                else:
                    yield None
            return True, (texts[sent:], dones, valids, len(app.trajectories.live))
        if kind == "run":  # a request whose trajectories are all this worker's: start, then step
            client, fresh, items = payload
            if fresh:
                ok, answer = yield from self.job("start", (client, [(p, items[p]) for p in fresh]))
                if not ok:
                    return ok, answer
            return (yield from self.job("step", (client, items)))
        if kind == "start":
            client, parts = payload
            positions = [position for position, _ in parts]
            items = [item for _, item in parts]
            try:
                new = app.new_starts(items, positions)
                refused = app.refusal(len(new), client)
                if refused is not None:
                    return False, (*refused, None)
                yield from app.start_all(new, client)
            except RequestError as err:  # the front logs and counts it, as a bad request of its own
                return False, (err.status, error_body(err.reason), [], err.reason)
            return True, [tid for tid, _ in new]
        if kind == "undo":
            app.undo([tid for tid in payload if tid in app.trajectories.live])
            return True, None
        if kind == "info":
            trajectories = app.trajectories
            return True, {
                "live_trajectories": len(trajectories.live),
                "envs_built": trajectories.pool.built,
                "stats": dataclasses.asdict(trajectories.stats),
            }
        raise ValueError(f"unknown message kind {kind!r} from the serve-env front")


def serve_shard(sock: socket.socket, app: Any) -> None:
    """Answer the front on ``sock`` until it closes it or says ``stop``; then end every trajectory.

    Messages in progress take turns, a slice each (a slice ends where the app's phases yield,
    every ``YIELD_EVERY_S``), round robin per client (:class:`~.fair.ClientRounds`: a client's
    messages run in order, in one place of the round): a client at the limits, however many
    requests it keeps open, delays another client's message by about one slice, as the
    one-process server does, not by its whole batch. A new message is read between two slices,
    so it joins the turns at once.
    """
    worker = ShardWorker(app)
    trajectories = app.trajectories
    pool = trajectories.pool
    built = pool.built
    sweep_every_s = min(max(trajectories.limits.trajectory_idle_s / 4, 0.05), 30.0)
    next_sweep = time.monotonic() + sweep_every_s
    jobs: ClientRounds[tuple[int, str, Generator[list[bytes] | None, None, tuple[bool, Any]]]] = (
        ClientRounds()
    )
    try:
        while True:
            wait = 0.0 if jobs else max(next_sweep - time.monotonic(), 0.0)
            ready, _, _ = select.select([sock], [], [], wait)
            if time.monotonic() >= next_sweep:  # busy or not, as the one-process server's sweep
                trajectories.sweep()
                next_sweep = time.monotonic() + sweep_every_s
            if ready:
                header = _read_exactly(sock, HEADER.size)
                if header is None:
                    return
                body = _read_exactly(sock, frame_length(header))
                if body is None:
                    return
                kind, number, payload = decode(body)
                if kind == "stop":
                    return
                client = payload[0] if kind in ("start", "step", "run") else ""
                jobs.add(client, (number, kind, worker.job(kind, payload)))
            if pool.built != built:  # envs built since: out of the collector's sight, as at start
                built = pool.built
                gc.freeze()
            if not jobs:
                continue
            client, (number, kind, job) = jobs.next()
            try:
                part = next(job)
            except StopIteration as done:
                sock.sendall(encode((number, *done.value)))
                continue
            except Exception as err:  # noqa: BLE001 - a bug answers one error, the worker lives on
                logger.error(
                    "serve-env worker: %s message failed: %s: %s", kind, type(err).__name__, err
                )
                body_text = json.dumps({"error": f"internal error: {type(err).__name__}"}).encode()
                sock.sendall(encode((number, False, (500, body_text, [], None))))
                continue
            if part is not None:  # a step's observations so far (see ShardWorker.job)
                sock.sendall(encode((number, None, part)))
            jobs.again(client, (number, kind, job))
    finally:
        trajectories.close()


def main(argv: list[str] | None = None) -> int:
    """Build the shard's app from the JSON config in ``argv[0]``, say ready, and serve the front."""
    from agentenv.integrations.serve_env.limits import EnvServerLimits
    from agentenv.integrations.verl_tool import create_app

    # Ctrl-C in a terminal reaches the whole process group: the front stops the workers (or its
    # socket closes and they exit), so a worker ignores it rather than print a traceback.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    config = json.loads((argv or sys.argv[1:])[0])
    logging.basicConfig(
        level=config.get("log_level", "warning").upper(),
        format="%(asctime)s serve-env worker %(levelname)s: %(message)s",
    )
    sock = socket.socket(fileno=config["fd"])
    limits = EnvServerLimits(**config["limits"])
    app = create_app(
        config["env_id"], split=config["split"], env_kwargs=config["env_kwargs"], limits=limits
    )
    try:
        # One env built now: a bad id, split or kwarg fails at start, and the first trajectory is quick.
        app.trajectories.pool.give(config["split"], app.trajectories.pool.take(config["split"]))
    except Exception as err:  # noqa: BLE001 - reported to the front, which exits with it
        sock.sendall(
            encode((0, False, f"{type(err).__name__}: {' '.join(str(err).split())[:300]}"))
        )
        return 1
    gc.collect()
    gc.freeze()  # the corpora and indexes are built: full collections need not walk them
    sock.sendall(encode((0, True, None)))
    serve_shard(sock, app)
    return 0


if __name__ == "__main__":
    sys.exit(main())
