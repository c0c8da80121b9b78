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

With ``serve-env --fronts F`` (:mod:`.fronts`) a worker has one socket per front (``CONFIG["fds"]``,
in front order) and serves them all: messages from every front join one round of turns (per
client, whichever front carried them), and a front that closes its socket is dropped while the
others are served on.

It exits when every front has closed its socket, or one says ``stop``: a worker never outlives
its server.
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
from agentenv.integrations.verl_tool.observation_json import error_body
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
        self.messages: list[int] = []
        """Start, step and run messages taken from each front, in front order (``/info``'s ``per_front``)."""

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
            counts = {
                "live_trajectories": len(trajectories.live),
                "envs_built": trajectories.pool.built,
                "stats": dataclasses.asdict(trajectories.stats),
            }
            if len(self.messages) > 1:  # --fronts: which fronts carried this worker's requests
                counts["messages_per_front"] = list(self.messages)
            return True, counts
        raise ValueError(f"unknown message kind {kind!r} from the serve-env front")


SEND_TIMEOUT_S = 30.0
"""A front that reads none of its answers for this long (stopped, not exited) is dropped, so that the
worker goes on serving the other fronts (``--fronts``); a front that exits closes its socket at once."""


def serve_shard(links: list[socket.socket], app: Any) -> None:
    """Answer the fronts on ``links`` until all have closed them or one says ``stop``; then end every trajectory.

    Messages in progress take turns, a slice each (a slice ends where the app's phases yield,
    every ``YIELD_EVERY_S``), round robin per client (:class:`~.fair.ClientRounds`: a client's
    messages run in order, in one place of the round), whichever front carried them: a client at
    the limits, however many requests it keeps open, delays another client's message by about
    one slice, as the one-process server does, not by its whole batch. New messages (one from
    each front with one waiting) are read between two slices, so they join the turns at once.
    A front whose socket closes or breaks is dropped, with its messages in progress; the others
    are served on (one front: the worker exits, as before).
    """
    worker = ShardWorker(app)
    trajectories = app.trajectories
    sweep_every_s = min(max(trajectories.limits.trajectory_idle_s / 4, 0.05), 30.0)
    next_sweep = time.monotonic() + sweep_every_s
    jobs: ClientRounds[
        tuple[socket.socket, int, str, Generator[list[bytes] | None, None, tuple[bool, Any]]]
    ] = ClientRounds()
    open_links = list(links)
    front_of = {link: index for index, link in enumerate(links)}
    messages = worker.messages = [0] * len(links)
    counted = ("start", "step", "run")
    if len(links) > 1:
        for link in links:
            link.settimeout(SEND_TIMEOUT_S)

    def drop(link: socket.socket, why: str, level: int = logging.WARNING) -> None:
        """Stop serving ``link``'s front (a front that exits is the supervisor's to report)."""
        if link in open_links:
            open_links.remove(link)
            if len(links) > 1:
                logger.log(level, "serve-env worker: front %d %s", front_of[link], why)
            link.close()

    def send(link: socket.socket, frame: bytes) -> None:
        if link not in open_links:  # its front is gone: the answer has no reader
            return
        try:
            link.sendall(frame)
        except OSError as err:
            drop(link, f"is not reading its answers ({type(err).__name__}): dropped")

    try:
        while open_links:
            wait = 0.0 if jobs else max(next_sweep - time.monotonic(), 0.0)
            ready, _, _ = select.select(open_links, [], [], wait)
            if time.monotonic() >= next_sweep:  # busy or not, as the one-process server's sweep
                trajectories.sweep()
                next_sweep = time.monotonic() + sweep_every_s
            for link in ready:
                try:
                    header = _read_exactly(link, HEADER.size)
                    body = None if header is None else _read_exactly(link, frame_length(header))
                except OSError as err:
                    header = body = None
                    logger.warning("serve-env worker: a front's socket broke: %s", err)
                if body is None:
                    drop(link, "closed its socket", logging.INFO)
                    continue
                kind, number, payload = decode(body)
                if kind == "stop":
                    return
                if kind in counted:
                    messages[front_of[link]] += 1
                client = payload[0] if kind in counted else ""
                jobs.add(client, (link, number, kind, worker.job(kind, payload)))
            if not jobs:
                continue
            client, (link, number, kind, job) = jobs.next()
            if link not in open_links:  # its front is gone: the rest of this message is not stepped
                job.close()
                continue
            try:
                part = next(job)
            except StopIteration as done:
                send(link, encode((number, *done.value)))
                continue
            except Exception as err:  # noqa: BLE001 - a bug answers one error, the worker lives on
                logger.error(
                    "serve-env worker: %s message failed: %s: %s", kind, type(err).__name__, err
                )
                body_text = json.dumps({"error": f"internal error: {type(err).__name__}"}).encode()
                send(link, encode((number, False, (500, body_text, [], None))))
                continue
            if part is not None:  # a step's observations so far (see ShardWorker.job)
                send(link, encode((number, None, part)))
            jobs.again(client, (link, number, kind, job))
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
    links = [socket.socket(fileno=fd) for fd in config.get("fds") or [config["fd"]]]
    limits = EnvServerLimits(**config["limits"])
    app = create_app(
        config["env_id"], split=config["split"], env_kwargs=config["env_kwargs"], limits=limits
    )
    try:
        # One env built now: a bad id, split or kwarg fails at start, and the first trajectory is quick.
        app.trajectories.pool.give(config["split"], app.trajectories.pool.take(config["split"]))
    except Exception as err:  # noqa: BLE001 - reported to the front(s), which exit with it
        failure = encode((0, False, f"{type(err).__name__}: {' '.join(str(err).split())[:300]}"))
        for link in links:
            link.sendall(failure)
        return 1
    gc.collect()
    gc.freeze()  # the corpora and indexes are built: full collections need not walk them
    for link in links:
        link.sendall(encode((0, True, None)))
    serve_shard(links, app)
    return 0


if __name__ == "__main__":
    sys.exit(main())
