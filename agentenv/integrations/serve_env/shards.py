"""``serve-env --protocol verl-tool --workers N``: one HTTP front, N worker processes, each trajectory pinned to one.

Why: one process steps every env on one core, and on top of each step it parses
and writes HTTP and JSON. A GRPO batch of 64 trajectories then runs slower
through the server than in the trainer's own process. With workers, the front
(uvicorn and this app) reads each request, sends every trajectory's item to the
worker that owns that id (a fixed hash of the id, :func:`~.shard_wire.shard_of`),
and writes the answer; the workers step their envs at the same time, each on its
own core. verl-tool's client needs no change: the pinning happens here, so any
connection may carry any trajectory.

A request is answered in two rounds, so that a refused request still changes
nothing (as in the one-process server, :mod:`agentenv.integrations.verl_tool.app`):

1. **start**: the items whose ids the front has not yet seen started go to their
   workers, which read their start fields, check room and start the new ones, all
   or none. If any worker refuses (422 for a start field, 503 at its cap), the
   others end and forget what they started, and the answer is the refusal of the
   worker holding the earliest refused item. Requests whose ids are all running
   skip this round.
2. **step**: every item goes to its worker; each returns its observations as JSON
   text, which the front joins in the request's order.

A request whose trajectories are all one worker's (one trajectory a request, verl-tool's
agent loop) is one message, ``run``: that worker starts the new ones, all or none, then
steps them, so the request takes one turn in the worker's rounds instead of two. A worker
sends a long answer's observations in parts as it steps them, and the front writes a long
answer in pieces, one a turn of its event loop (:class:`~.answer_body.ObservationChunks`): an answer at
the limits is 13 MB, which took the front 15-30 ms to join in one go, a wait for every
other client's request.

Differences from one process, all documented in ``docs/training-with-verl-tool.md``:

* ``max_live_envs`` is split between the workers (each holds at most
  ``ceil(max_live_envs / N)``); ids spread by hash, so a worker can be full a
  little before the server as a whole is;
* a worker that exits is not restarted: its trajectories' requests are answered
  503 and ``/health`` says unhealthy (restart the server). A worker that exits in
  the middle of round 2 leaves the other workers' steps of that request done.

Registered env ids only: a worker builds its envs with ``gym.make(env_id, ...)``
in its own process.

With ``--fronts F`` (:mod:`.fronts`), F processes run this app on one port, each linked to every
worker (``worker_fds``). Everything that decides an answer lives in the workers (live and ended
trajectories, the per-client shares of the cap, the idle and at-cap eviction), so any front
answers any trajectory as one front would. What stays in each front: :attr:`known`, a hint only
(an id started through another front takes round 1 once here, where its worker finds it live and
starts nothing), the connection guard's caps and counters, and ``invalid_requests``; ``/info``
adds the requests each front carried (``per_front``, counted by the workers).
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import math
import os
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from agentenv.integrations.serve_env.answer_body import ObservationChunks, observations_answer
from agentenv.integrations.serve_env.limits import EnvServerLimits
from agentenv.integrations.serve_env.shard_link import WorkerGone, WorkerLink
from agentenv.integrations.serve_env.shard_wire import shard_of
from agentenv.integrations.verl_tool.app import VerlToolApp
from agentenv.integrations.verl_tool.observation_json import Headers, error_body
from agentenv.integrations.verl_tool.protocol import Item
from agentenv.retrieval.server_requests import RequestError

logger = logging.getLogger("agentenv.serve_env.verl_tool")


class ShardedVerlToolApp(VerlToolApp):
    """The verl-tool app of a front whose trajectories live in ``workers`` processes (see the module docstring)."""

    def __init__(
        self,
        env_id: str,
        *,
        workers: int,
        split: str = "train",
        env_kwargs: Mapping[str, Any] | None = None,
        limits: EnvServerLimits | None = None,
        info: Mapping[str, Any] | None = None,
        log_level: str = "warning",
        worker_fds: Sequence[int] | None = None,
        front: int | None = None,
    ) -> None:
        """``worker_fds``: this front's sockets to workers started beside it (``--fronts``, one per
        worker), instead of spawning them; ``front``: its place among the fronts (``/info``)."""
        if workers < 2:
            raise ValueError(f"a sharded server needs at least 2 workers, got {workers}")
        limits = limits or EnvServerLimits()
        self._serve(limits, {"env_id": env_id, "split": split, "workers": workers, **(info or {})})
        config = worker_config(env_id, workers, split, env_kwargs, limits, log_level)
        fds = list(worker_fds) if worker_fds is not None else [None] * workers
        if len(fds) != workers:
            raise ValueError(f"{len(fds)} worker sockets for {workers} workers")
        self.links = [WorkerLink(i, config, fd=fd) for i, fd in enumerate(fds)]
        self.front = front
        self.known: OrderedDict[str, None] = OrderedDict()
        """Ids the workers started and the front has not seen end: their requests skip round 1."""
        self._known_cap = 2 * limits.max_live_envs
        self.invalid_requests = 0

    # ------------------------------------------------------------------ serving
    def count_invalid(self) -> None:
        self.invalid_requests += 1

    async def lifespan(self, receive: Any, send: Any) -> None:
        """Start the workers with the server (startup fails if one cannot build its env); stop them with it."""
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                try:
                    await asyncio.gather(*(link.start() for link in self.links))
                except WorkerGone as err:
                    await asyncio.gather(*(link.stop() for link in self.links))
                    await send({"type": "lifespan.startup.failed", "message": str(err)})
                    return
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await asyncio.gather(*(link.stop() for link in self.links))
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def health(self, scope: dict[str, Any], receive: Any) -> tuple[int, bytes, Headers]:
        gone = [link.gone for link in self.links if link.gone is not None]
        if gone:
            return 503, json.dumps({"status": "unhealthy", "error": gone[0]}).encode(), []
        return 200, b'{"status":"healthy"}', []

    async def show_info(self, scope: dict[str, Any], receive: Any) -> tuple[int, bytes, Headers]:
        counts: dict[str, Any] = {"live_trajectories": 0, "envs_built": 0, "stats": {}}
        per_front: list[int] = []
        workers = []
        for link in self.links:
            try:
                _, answer = await link.ask("info", None)
            except WorkerGone as err:
                workers.append({"error": str(err)})
                continue
            workers.append(answer)
            counts["live_trajectories"] += answer["live_trajectories"]
            counts["envs_built"] += answer["envs_built"]
            for name, value in answer["stats"].items():
                counts["stats"][name] = counts["stats"].get(name, 0) + value
            sent = answer.get("messages_per_front", [])
            per_front.extend([0] * (len(sent) - len(per_front)))
            for index, value in enumerate(sent):
                per_front[index] += value
        counts["stats"]["invalid_requests"] = (
            counts["stats"].get("invalid_requests", 0) + self.invalid_requests
        )
        body = {
            **self.info,
            "protocol": "verl-tool",
            "pid": os.getpid(),
            **counts,
            "per_worker": workers,
            "limits": dataclasses.asdict(self.limits),
        }
        if self.front is not None:  # --fronts: this front, and the worker messages each front sent
            body["front"] = self.front
            body["per_front"] = [
                {"front": i, "worker_messages": n} for i, n in enumerate(per_front)
            ]
        guard = self.state.connections
        if guard is not None:
            body["connections"] = dataclasses.asdict(guard.stats)
        return 200, json.dumps(body).encode(), []

    # ---------------------------------------------------------------- answering
    async def answer(
        self, items: list[Item], client: str = "?"
    ) -> tuple[int, bytes | ObservationChunks, Headers]:
        n = len(self.links)
        owners = [shard_of(item.trajectory_id, n) for item in items]
        if len(set(owners)) == 1:
            return await self._answer_on_one(items, owners[0], client)
        refusal = await self._start_round(items, owners, client)
        if refusal is not None:
            return refusal
        positions: dict[int, list[int]] = {}
        for position, owner in enumerate(owners):
            positions.setdefault(owner, []).append(position)
        shards = list(positions)
        futures = [
            self.links[w].send("step", (client, [items[p] for p in positions[w]])) for w in shards
        ]
        answers = []
        for future in futures:
            try:
                answers.append(await future)
            except WorkerGone as err:
                failed: WorkerGone | None = err
                break
        else:
            failed = None
        if failed is not None:
            for future in futures:  # the others' answers are not needed: retrieve them, unread
                future.cancel()
            return _gone_answer(failed)
        texts: list[bytes] = [b""] * len(items)
        dones: list[bool] = [False] * len(items)
        valids: list[bool] = [False] * len(items)
        known = self.known
        for w, (ok, answer) in zip(shards, answers, strict=True):
            if not ok:
                return _refusal(answer)
            shard_texts, shard_dones, shard_valids, _live = answer
            for position, text, done, valid in zip(
                positions[w], shard_texts, shard_dones, shard_valids, strict=True
            ):
                texts[position], dones[position], valids[position] = text, done, valid
                if done:
                    known.pop(items[position].trajectory_id, None)
        return 200, observations_answer(texts, dones, valids), []

    async def _answer_on_one(
        self, items: list[Item], worker: int, client: str
    ) -> tuple[int, bytes | ObservationChunks, Headers]:
        """A request whose trajectories are all one worker's: rounds 1 and 2 in one message.

        All or none still holds (the worker starts the new ones, all or none, before it steps
        any), and the request takes one turn in the worker's rounds instead of two: beside a
        client at the limits, a one-trajectory request waits for one slice of its, not two.
        """
        known = self.known
        fresh = [
            position
            for position, item in enumerate(items)
            if not item.finish and item.trajectory_id not in known
        ]
        link = self.links[worker]
        future = (
            link.send("run", (client, fresh, items))
            if fresh
            else link.send("step", (client, items))
        )
        try:
            ok, answer = await future
        except WorkerGone as err:
            return _gone_answer(err)
        if not ok:
            return _refusal(answer)
        self._remember(items[position].trajectory_id for position in fresh)
        texts, dones, valids, _live = answer
        for item, done in zip(items, dones, strict=True):
            if done:
                known.pop(item.trajectory_id, None)
        return 200, observations_answer(texts, dones, valids), []

    def _remember(self, ids: Iterable[str]) -> None:
        """Ids now live (or live or ended before): their requests skip round 1."""
        known = self.known
        for tid in ids:
            known[tid] = None
        while len(known) > self._known_cap:
            known.popitem(last=False)

    async def _start_round(
        self, items: list[Item], owners: list[int], client: str = "?"
    ) -> tuple[int, bytes, Headers] | None:
        """Round 1 (see the module docstring): None when every new trajectory has started, else the refusal."""
        parts: dict[int, list[tuple[int, Item]]] = {}
        known = self.known
        for position, (item, owner) in enumerate(zip(items, owners, strict=True)):
            if not item.finish and item.trajectory_id not in known:
                # Without its action: a start reads the id and the start fields, and an action
                # may be 32k characters (sent once, with the step).
                parts.setdefault(owner, []).append((position, item._replace(action="")))
        if not parts:
            return None
        shards = list(parts)
        futures = [self.links[w].send("start", (client, parts[w])) for w in shards]
        answers: list[Any] = []
        for future in futures:
            try:
                answers.append(await future)
            except WorkerGone as err:
                answers.append(err)
        refusals: list[tuple[int, tuple[int, bytes, Headers]]] = []
        started: dict[int, list[str]] = {}
        for w, answer in zip(shards, answers, strict=True):
            if isinstance(answer, WorkerGone):
                refusals.append((parts[w][0][0], _gone_answer(answer)))
                continue
            ok, payload = answer
            if ok:
                started[w] = payload
            else:
                refusals.append((parts[w][0][0], payload))
        if refusals:
            undo = [self.links[w].ask("undo", ids) for w, ids in started.items() if ids]
            await asyncio.gather(*undo, return_exceptions=True)
            return _refusal(min(refusals, key=lambda refusal: refusal[0])[1])
        # every item sent is now live, or was live or ended already
        self._remember(item.trajectory_id for w in shards for _, item in parts[w])
        return None


def worker_config(
    env_id: str,
    workers: int,
    split: str,
    env_kwargs: Mapping[str, Any] | None,
    limits: EnvServerLimits,
    log_level: str,
) -> dict[str, Any]:
    """What a worker is started with (:func:`~.shard_worker.main`), less its socket: its share of the cap."""
    per_worker = dataclasses.replace(
        limits, max_live_envs=math.ceil(limits.max_live_envs / workers)
    )
    return {
        "env_id": env_id,
        "split": split,
        "env_kwargs": dict(env_kwargs or {}),
        "limits": dataclasses.asdict(per_worker),
        "log_level": log_level,
    }


def _refusal(answer: Any) -> tuple[int, bytes, Headers]:
    """A worker's refusal as the front's answer; a bad request is raised, so that the front logs and counts it."""
    if len(answer) == 3:  # a worker that is gone (_gone_answer)
        return answer  # type: ignore[no-any-return]
    status, body, headers, reason = answer
    if reason is not None:
        raise RequestError(status, reason)
    return status, body, headers


def _gone_answer(err: WorkerGone) -> tuple[int, bytes, Headers]:
    return (
        503,
        error_body(f"{err}: this server cannot step its trajectories; restart serve-env"),
        [],
    )
