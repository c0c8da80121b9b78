"""The front's end of one worker process of ``serve-env --workers N``: spawn it, number messages, match answers.

Why a link object: many requests share one worker, each waiting for its own answers. Every
message gets a number and a future; one reader task per worker reads the answers off the socket
and fills the futures. A worker that exits fails every future it owes (:class:`WorkerGone`), and
every later message at once, so a request is answered 503 instead of waiting forever.

With ``--fronts F`` (:mod:`.fronts`) the workers are started beside the fronts, each with one
socket per front; a front's link is then given its end of that socket (``fd``) instead of
spawning the worker, and stopping it only closes that socket (the worker serves the other fronts
until they close theirs too).
"""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import subprocess
import sys
from collections.abc import Mapping
from typing import Any

from agentenv.integrations.serve_env.shard_wire import HEADER, decode, encode, frame_length

logger = logging.getLogger("agentenv.serve_env.verl_tool")

READY_TIMEOUT_S = 900.0
"""How long a worker may take to build its first env (a fresh home builds the corpus first)."""


class WorkerGone(RuntimeError):
    """The worker process has exited or its socket broke; the message says which and why."""


class WorkerLink:
    """One worker process and the socket to it: numbered messages, answers matched to their numbers."""

    def __init__(self, index: int, config: Mapping[str, Any], *, fd: int | None = None) -> None:
        self.index = index
        self.config = dict(config)
        self.fd = fd
        """The socket to a worker started beside this front (``--fronts``); None: spawn the worker."""
        self.process: subprocess.Popen[bytes] | None = None
        self.gone: str | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._waiting: dict[int, asyncio.Future[tuple[bool, Any]]] = {}
        self._parts: dict[int, list[bytes]] = {}
        """Observations a step message has sent ahead of its answer (``shard_wire``'s parts)."""
        self._number = 0
        self._reader_task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Spawn the worker (or take the socket to it) and wait until it has built its first env;
        raise ``WorkerGone`` if it cannot."""
        if self.fd is not None:
            parent = socket.socket(fileno=self.fd)
        else:
            parent, child = socket.socketpair()
            config = {**self.config, "fd": child.fileno()}
            self.process = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "agentenv.integrations.serve_env.shard_worker",
                    json.dumps(config),
                ],
                pass_fds=[child.fileno()],
            )
            child.close()
        reader, self._writer = await asyncio.open_unix_connection(sock=parent)
        try:
            number, ok, payload = await asyncio.wait_for(_read_frame(reader), READY_TIMEOUT_S)
        except (asyncio.IncompleteReadError, asyncio.TimeoutError, ConnectionError) as err:
            self._fail(f"worker {self.index} did not start ({type(err).__name__})")
            raise WorkerGone(self.gone) from None
        if not ok:
            self._fail(f"worker {self.index} could not build its env: {payload}")
            raise WorkerGone(self.gone)
        self._reader_task = asyncio.create_task(self._read_answers(reader))

    def send(self, kind: str, payload: Any) -> asyncio.Future[tuple[bool, Any]]:
        """Send one message; the future gets its answer ``(ok, payload)``, or ``WorkerGone``.

        A plain future, not a task: a request sends to every worker it touches at once, then
        awaits the futures in turn (a task per message cost the front a tenth of a step).
        The socket's buffer takes the frame whole (the stream writer never blocks); the
        reader task fills the future.
        """
        future: asyncio.Future[tuple[bool, Any]] = asyncio.get_running_loop().create_future()
        if self.gone is not None or self._writer is None:
            future.set_exception(WorkerGone(self.gone or f"worker {self.index} has not started"))
            return future
        # Encoded first: a message that cannot be encoded fails its request (raised here, answered
        # 500 by the app), never the link the other requests share.
        frame = encode((kind, self._number + 1, payload))
        self._number += 1
        self._waiting[self._number] = future
        try:
            self._writer.write(frame)
        except (OSError, RuntimeError) as err:  # a closed transport
            self._fail(f"worker {self.index}'s socket broke ({type(err).__name__})")
        return future

    async def ask(self, kind: str, payload: Any) -> tuple[bool, Any]:
        """Send one message and wait for its answer ``(ok, payload)``; ``WorkerGone`` if the worker is not there."""
        return await self.send(kind, payload)

    async def _read_answers(self, reader: asyncio.StreamReader) -> None:
        try:
            while True:
                number, ok, payload = await _read_frame(reader)
                if ok is None:  # a part of a step's observations: its answer brings the rest
                    self._parts.setdefault(number, []).extend(payload)
                    continue
                parts = self._parts.pop(number, None)
                if parts is not None and ok:
                    payload = (parts + payload[0], *payload[1:])
                future = self._waiting.pop(number, None)
                if future is not None and not future.done():
                    future.set_result((ok, payload))
        except asyncio.IncompleteReadError:  # the worker's end closed: it has exited, or is exiting
            self._fail(f"worker {self.index} has exited (exit code {await self._exit_code()})")
        except (ConnectionError, ValueError) as err:
            self._fail(f"worker {self.index}'s socket broke ({type(err).__name__})")

    async def _exit_code(self) -> int | str:
        """The worker's exit code, waited for up to a second off the event loop; "unknown" after that."""
        process = self.process
        if process is None:
            return "unknown"
        try:
            return await asyncio.wait_for(
                asyncio.get_running_loop().run_in_executor(None, process.wait), 1.0
            )
        except asyncio.TimeoutError:
            return "unknown"

    def _fail(self, reason: str) -> None:
        """Mark the link gone and fail every message waiting for an answer."""
        if self.gone is None:
            self.gone = reason
            serving = self._reader_task is not None
            logger.error(
                "serve-env: %s%s", reason, "; its trajectories are answered 503" if serving else ""
            )
        waiting, self._waiting = self._waiting, {}
        self._parts = {}
        for future in waiting.values():
            if not future.done():
                future.set_exception(WorkerGone(reason))

    async def stop(self, timeout_s: float = 10.0) -> None:
        """Tell the worker to end its trajectories and exit; kill it if it does not within ``timeout_s``.

        A worker started beside the fronts (``fd``) is not told: this front closes its socket, and the
        worker exits once every front has (the fronts' supervisor waits for it)."""
        if self._writer is not None and self.gone is None and self.fd is None:
            try:
                self._writer.write(encode(("stop", 0, None)))
                await self._writer.drain()
            except (ConnectionError, RuntimeError):
                pass
        if self.gone is None:
            self.gone = f"worker {self.index} was stopped with the server"
        process = self.process
        if process is not None:
            loop = asyncio.get_running_loop()
            try:
                await asyncio.wait_for(loop.run_in_executor(None, process.wait), timeout_s)
            except asyncio.TimeoutError:
                process.kill()
                process.wait()
        if self._reader_task is not None:
            self._reader_task.cancel()
        if self._writer is not None:
            self._writer.close()


async def _read_frame(reader: asyncio.StreamReader) -> Any:
    header = await reader.readexactly(HEADER.size)
    return decode(await reader.readexactly(frame_length(header)))
