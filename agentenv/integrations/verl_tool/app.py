"""The verl-tool tool server as a bare ASGI app: ``POST /get_observation``, ``GET /health``, ``GET /info``.

Bare ASGI rather than a framework: the endpoint is the hot path (thousands of
steps a second), and env steps are a few µs to a few ms of Python, so they run
inline on the event loop (a thread hand-off would cost more than most steps).
A request of many trajectories lets other requests in between its steps every
millisecond, so a batch at the limits cannot hold the server; a step itself is
never interrupted, so no two requests ever step one env at once.

One request is answered in three phases, so that a request refused for any
reason has changed nothing:

1. parse and check the body (:func:`~.protocol.parse_request`) and every new
   trajectory's start fields; count the new trajectories against
   ``max_live_envs`` (503 with ``Retry-After`` at the cap);
2. start the new trajectories (an id seen for the first time takes an env from
   the pool and resets it with its ``extra_fields``: ``seed``, ``index`` or
   ``task_id``, ``split``); a start that fails undoes this request's others and
   answers 422;
3. per item: ``finish`` ends the trajectory (``""``, done, valid, as
   verl-tool's finish tool answers); a live id is stepped with its action; an
   id that already ended gets an error observation naming why, done.

An action longer than ``max_action_chars`` is not stepped: its trajectory gets an
error observation saying so (valid False, not done), and the batch goes on.

Each observation is an object ``{"obs": text, "reward": step reward}``, the
form verl-tool's agent loop reads a tool reward from; the step that ends an
episode adds ``terminated``, ``truncated``, ``turns``, ``total_reward`` and
``reward_components`` (and the env's ``messages`` when the trajectory's
``extra_fields`` has ``"return_messages": true``). ``valids`` is False where
the env could not parse the action; ``dones`` is True when the trajectory ended.

Errors are one JSON line ``{"error": reason}`` and one log line, never a
traceback: 400 malformed JSON, 404/405 unknown path or method, 408/431 (the
connection guard), 413 body too large, 422 a body or start field that breaks
the protocol (naming the field), 503 at ``max_live_envs``.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import os
import time
import types
from collections.abc import Callable, Coroutine, Generator, Iterator, Mapping
from typing import Any

from agentenv.integrations.serve_env.answer_body import (
    ObservationChunks,
    answer_headers,
    observations_answer,
)
from agentenv.integrations.serve_env.fair import FairTurns, client_of
from agentenv.integrations.serve_env.limits import EnvServerLimits
from agentenv.integrations.serve_env.sessions import (
    Start,
    StartError,
    Trajectories,
    start_from_fields,
)
from agentenv.integrations.verl_tool.observation_json import (
    Headers,
    encode_observation,
    error_body,
    observation,
    observation_json,
    refused_answer,
)
from agentenv.integrations.verl_tool.protocol import Item, parse_request
from agentenv.retrieval.server_app import read_body
from agentenv.retrieval.server_requests import RequestError

logger = logging.getLogger("agentenv.serve_env.verl_tool")

YIELD_EVERY_S = 0.001
"""How long a request steps its trajectories before letting other requests in (see ``answer``)."""


class VerlToolApp:
    """The ASGI app serving ``trajectories`` through verl-tool's protocol; ``info`` is echoed by ``/info``."""

    def __init__(self, trajectories: Trajectories, info: Mapping[str, Any]) -> None:
        self.trajectories = trajectories
        self._serve(trajectories.limits, info)

    def _serve(self, limits: EnvServerLimits, info: Mapping[str, Any]) -> None:
        """The routes and the fields every verl-tool app has (the sharded front has no trajectories)."""
        self.limits: EnvServerLimits = limits
        self.info = dict(info)
        self.state = types.SimpleNamespace(connections=None)
        self.turns = FairTurns(alone=self._only_client)
        """Slices of work handed out round robin per client (:mod:`~agentenv.integrations.serve_env.fair`)."""
        self.answers_in_process = type(self).answer is VerlToolApp.answer
        """Whether :meth:`answer_soon` is this app's answer (a subclass may answer otherwise)."""
        self.routes: dict[str, tuple[str, Callable[..., Any]]] = {
            "/get_observation": ("POST", self.get_observation),
            "/health": ("GET", self.health),
            "/info": ("GET", self.show_info),
        }

    def _only_client(self, client: str) -> bool:
        """Whether ``client`` is the only one connected (False when no connection guard says)."""
        guard = self.state.connections
        return guard is not None and guard.only_client(client)

    async def lifespan(self, receive: Any, send: Any) -> None:
        """Start the idle sweep with the server; end every trajectory when it stops."""
        await _lifespan(receive, send, trajectories=self.trajectories)

    def count_invalid(self) -> None:
        """Count one refused request (``/info``'s ``invalid_requests``)."""
        self.trajectories.stats.invalid_requests += 1

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await self.lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        path, method = scope.get("path", ""), scope.get("method", "")
        route = self.routes.get(path)
        try:
            if route is None:
                raise RequestError(
                    404,
                    f"no endpoint {path[:100]!r}; endpoints are "
                    "POST /get_observation, GET /health, GET /info",
                )
            if method != route[0]:
                raise RequestError(405, f"{path} takes {route[0]}, not {method[:10]}")
            status, body, extra = await route[1](scope, receive)
        except Exception as err:  # noqa: BLE001 - a bug still answers one JSON line
            status, body, extra = self.error_answer(err, scope.get("client"), path)
        await self.send_answer(send, status, body, extra)

    def error_answer(self, err: Exception, peer: Any, path: str) -> tuple[int, bytes, Headers]:
        """The answer (and log line) for a refused request, or one JSON line for a bug."""
        if isinstance(err, RequestError):
            self.count_invalid()
            logger.warning(
                "bad request from %s to %s: %d %s",
                (peer or ("?", 0))[0],
                path[:100],
                err.status,
                err.reason,
            )
            return err.status, error_body(err.reason), []
        logger.error("internal error answering %s: %s: %s", path[:100], type(err).__name__, err)
        return 500, error_body(f"internal error: {type(err).__name__}"), []

    async def send_answer(
        self, send: Any, status: int, body: bytes | ObservationChunks, extra: Headers
    ) -> None:
        """Send an answer as ASGI messages (a long body in pieces, one a turn of the loop)."""
        headers = answer_headers(body, extra)
        await send({"type": "http.response.start", "status": status, "headers": headers})
        if isinstance(body, bytes):
            await send({"type": "http.response.body", "body": body})
            return
        for piece in body:  # one a turn of the loop: other requests run between them
            await send({"type": "http.response.body", "body": piece, "more_body": True})
            await asyncio.sleep(0)
        await send({"type": "http.response.body", "body": b""})

    def observe_body(
        self, body: bytes, peer: Any
    ) -> tuple[int, bytes | ObservationChunks, Headers] | Coroutine[Any, Any, Any]:
        """``POST /get_observation`` on a whole body of at most ``max_body_bytes`` from ``peer``
        (the lean HTTP cycle's call): the answer :meth:`__call__` would send, as a tuple when it
        is ready at once (:meth:`answer_soon`), else a coroutine that returns it.

        Why: the ASGI call costs a task, a ``receive`` and two ``send`` messages a request, for
        an answer that one-trajectory requests usually have in hand when the body is read.
        """
        path = "/get_observation"
        try:
            items = parse_request(body, self.limits)
            client = str(peer[0]) if peer else "?"
            if self.answers_in_process:
                answer = self.answer_soon(items, client)
            else:
                answer = self.answer(items, client)
        except Exception as err:  # noqa: BLE001 - as __call__
            return self.error_answer(err, peer, path)
        if type(answer) is tuple:
            return answer
        return self._answer_or_error(answer, peer, path)

    async def _answer_or_error(
        self, answer: Coroutine[Any, Any, Any], peer: Any, path: str
    ) -> tuple[int, bytes | ObservationChunks, Headers]:
        try:
            return await answer
        except Exception as err:  # noqa: BLE001 - as __call__
            return self.error_answer(err, peer, path)

    async def health(self, scope: dict[str, Any], receive: Any) -> tuple[int, bytes, Headers]:
        # "healthy" is the word verl-tool's router waits for before routing to a server.
        return 200, b'{"status":"healthy"}', []

    async def show_info(self, scope: dict[str, Any], receive: Any) -> tuple[int, bytes, Headers]:
        trajectories = self.trajectories
        body = {
            **self.info,
            "protocol": "verl-tool",
            "pid": os.getpid(),
            "live_trajectories": len(trajectories.live),
            "envs_built": trajectories.pool.built,
            "stats": dataclasses.asdict(trajectories.stats),
            "limits": dataclasses.asdict(self.limits),
        }
        guard = self.state.connections
        if guard is not None:
            body["connections"] = dataclasses.asdict(guard.stats)
        return 200, json.dumps(body).encode(), []

    async def get_observation(
        self, scope: dict[str, Any], receive: Any
    ) -> tuple[int, bytes, Headers]:
        body = await read_body(scope, receive, self.limits.max_body_bytes)
        items = parse_request(body, self.limits)
        return await self.answer(items, client_of(scope))

    async def answer(
        self, items: list[Item], client: str = "?"
    ) -> tuple[int, bytes | ObservationChunks, Headers]:
        """The three phases above, for parsed ``items``: (status, JSON body, extra headers).

        Phase 1 runs in one slice and reserves the new trajectories' slots under the cap (the
        client's share of it); phases 2 and 3 end a slice whenever ``YIELD_EVERY_S`` has passed,
        and slices are handed out round robin per client (:class:`~.fair.FairTurns`), so a client
        at the limits, however many requests it keeps open, delays another client's request by
        one slice: one start or step past ``YIELD_EVERY_S`` (~15 ms to build an env when the pool
        has none waiting; µs to a few ms for a step, whose tools share one work budget). Each
        observation is written as JSON text, encoded, in the slice that stepped it, and a long
        answer is sent in pieces (:mod:`~agentenv.integrations.serve_env.answer_body`).
        """
        answer = self.answer_soon(items, client)
        return answer if type(answer) is tuple else await answer

    def answer_soon(
        self, items: list[Item], client: str = "?"
    ) -> tuple[int, bytes | ObservationChunks, Headers] | Coroutine[Any, Any, Any]:
        """:meth:`answer`'s tuple when the request is answered in one slice taken at once, else
        a coroutine that finishes it (awaiting its turns).

        Why: with one trajectory a request, a slice nobody else wants cost a turn of the event
        loop, and the request a task of its own; taken at once (:meth:`~.fair.FairTurns.take_now`)
        a one-slice request is answered in the call that read it. A request of finishes only
        (verl-tool's agent loop ends each episode with one) steps no env: when no slice runs or
        waits, it is answered without taking one.

        Raises:
            RequestError: 422 from phase 1 or 2, as :meth:`answer` raises it.
        """
        turns = self.turns
        if len(items) == 1:
            one = self._one_soon(items, client)
            if one is not None:
                return one
        texts: list[Any] = []
        dones: list[bool] = []
        valids: list[bool] = []
        if turns.idle and all(item.finish for item in items):
            # Only finishes, and no slice runs or waits: no env is stepped, so there is no turn
            # to take. Past YIELD_EVERY_S (a long list of them), the rest takes its turns.
            self.trajectories.sweep()
            finishing = self.step_all(items, texts, dones, valids, as_text=True)
            for _ in finishing:
                return self._finish_later(finishing, client, texts, dones, valids)
            return 200, observations_answer(texts, dones, valids), []
        if not turns.take_now(client):
            return self._answer_later(items, client)
        work = self._phases(items, client, texts, dones, valids)
        try:
            next(work)
        except StopIteration as done:
            turns.release()
            return done.value or (200, observations_answer(texts, dones, valids), [])
        except BaseException:
            turns.release()
            raise
        return self._go_on(work, client, texts, dones, valids)

    def _one_soon(
        self, items: list[Item], client: str
    ) -> tuple[int, bytes | ObservationChunks, Headers] | Coroutine[Any, Any, Any] | None:
        """:meth:`answer_soon` for a request of one trajectory (verl-tool's agent loop sends
        them), without the generators that cut a long request into slices: one start and one
        step make one slice. None: a finish while a slice runs or waits (the general path)."""
        item = items[0]
        turns = self.turns
        if item.finish:
            if not turns.idle:
                return None
            self.trajectories.sweep()
            text, done, valid = self.one_text(item)
            return 200, observations_answer([text], [done], [valid]), []
        if not turns.take_now(client):
            return self._answer_later(items, client)
        try:
            new = self.new_starts(items)
            if new:
                refused = self.refusal(1, client)
                if refused is not None:
                    return refused
                for _ in self.start_all(new, client):
                    pass  # a yield before its only start ends a slice with nothing done
            text, done, valid = self.one_text(item)
        finally:
            turns.release()
        return 200, observations_answer([text], [done], [valid]), []

    def _phases(
        self,
        items: list[Item],
        client: str,
        texts: list[Any],
        dones: list[bool],
        valids: list[bool],
    ) -> Generator[None, None, tuple[int, bytes, Headers] | None]:
        """Phases 1-3 in slices (a yield ends one); returns the 503 answer, or None once answered."""
        new = self.new_starts(items)
        if new:
            refused = self.refusal(len(new), client)
            if refused is not None:
                return refused
            yield from self.start_all(new, client)
        yield from self.step_all(items, texts, dones, valids, as_text=True)
        return None

    async def _go_on(
        self,
        work: Generator[None, None, tuple[int, bytes, Headers] | None],
        client: str,
        texts: list[Any],
        dones: list[bool],
        valids: list[bool],
        *,
        first_slice_ran: bool = True,
    ) -> tuple[int, bytes | ObservationChunks, Headers]:
        """The rest of a request holding its turn: one slice a turn (the first at once unless
        ``first_slice_ran``), then its answer; the turn is released however it ends."""
        turns = self.turns
        try:
            pass_first = first_slice_ran
            while True:
                if pass_first:
                    await turns.pass_on(client)
                pass_first = True
                try:
                    next(work)
                except StopIteration as done:
                    if done.value is not None:
                        return done.value
                    break
        finally:
            turns.release()
        return 200, observations_answer(texts, dones, valids), []

    async def _answer_later(
        self, items: list[Item], client: str
    ) -> tuple[int, bytes | ObservationChunks, Headers]:
        """A request that waits for its first slice (another runs or waits), then as :meth:`_go_on`."""
        texts: list[Any] = []
        dones: list[bool] = []
        valids: list[bool] = []
        await self.turns.acquire(client)
        work = self._phases(items, client, texts, dones, valids)
        return await self._go_on(work, client, texts, dones, valids, first_slice_ran=False)

    async def _finish_later(
        self,
        finishing: Iterator[None],
        client: str,
        texts: list[Any],
        dones: list[bool],
        valids: list[bool],
    ) -> tuple[int, bytes | ObservationChunks, Headers]:
        """The rest of a long list of finishes, in turns as any request."""
        turns = self.turns
        await turns.acquire(client)
        try:
            for _ in finishing:
                await turns.pass_on(client)
        finally:
            turns.release()
        return 200, observations_answer(texts, dones, valids), []

    def new_starts(
        self, items: list[Item], positions: list[int] | None = None
    ) -> list[tuple[str, Start]]:
        """Phase 1's reading: each trajectory of ``items`` seen for the first time, with its start.

        ``positions`` are the items' places in the request (default: 0, 1, ...), which errors name.

        Raises:
            RequestError: 422 naming the first ``extra_fields`` that cannot start an episode.
        """
        trajectories = self.trajectories
        trajectories.sweep()
        new = []
        for i, item in zip(positions or range(len(items)), items, strict=True):
            if (
                not item.finish
                and item.trajectory_id not in trajectories.live
                and item.trajectory_id not in trajectories.ended
            ):
                try:
                    new.append(
                        (
                            item.trajectory_id,
                            start_from_fields(item.extra_fields, env_id=trajectories.env_id),
                        )
                    )
                except StartError as err:
                    raise RequestError(422, f"'extra_fields'[{i}]: {err}") from None
        return new

    def refusal(self, new: int, client: str = "?") -> tuple[int, bytes, Headers] | None:
        """The 503 answer when ``new`` more trajectories of ``client`` do not fit under
        ``max_live_envs`` (after taking back its share, :meth:`~.sessions.Trajectories.room_for`); else None."""
        if not new or self.trajectories.room_for(new, client):
            return None
        self.trajectories.stats.refused += 1
        return refused_answer(self.limits)

    def start_all(self, new: list[tuple[str, Start]], client: str = "?") -> Iterator[None]:
        """Phase 2: start ``new`` (reserved first), all or none; yields whenever ``YIELD_EVERY_S`` has passed.

        A generator, so that the event loop's caller lets other requests in at each yield
        and a worker process (:mod:`~agentenv.integrations.serve_env.shard_worker`) just runs it out.

        Raises:
            RequestError: 422 when a start fails; the request's other starts are undone.
        """
        trajectories = self.trajectories
        started: list[str] = []
        pending = len(new)
        trajectories.reserved += pending
        last_yield = time.perf_counter()
        try:
            for tid, start in new:
                if time.perf_counter() - last_yield > YIELD_EVERY_S:  # building an env takes ~15 ms
                    yield
                    last_yield = time.perf_counter()
                pending -= 1
                trajectories.reserved -= 1
                if (
                    tid in trajectories.live or tid in trajectories.ended
                ):  # another request started it meanwhile
                    continue
                try:
                    trajectories.start(tid, start, client)
                except StartError as err:
                    self.undo(started)
                    raise RequestError(422, f"trajectory {tid[:80]!r}: {err}") from None
                started.append(tid)
        finally:
            trajectories.reserved -= pending

    def undo(self, started: list[str]) -> None:
        """End trajectories a refused request started, and forget them (a retry starts them anew)."""
        for tid in started:
            self.trajectories.end(tid, "its request was refused")
            self.trajectories.ended.pop(tid, None)

    def step_all(
        self,
        items: list[Item],
        observations: list[Any],
        dones: list[bool],
        valids: list[bool],
        *,
        as_text: bool = False,
    ) -> Iterator[None]:
        """Phase 3: answer each item into the three lists; yields whenever ``YIELD_EVERY_S`` has passed.

        ``as_text``: each observation goes in as its JSON, encoded to bytes, in the slice that stepped
        it (256 observations of 50 KB took one 30 ms ``json.dumps`` at the end), ready to be sent in
        pieces (:mod:`~agentenv.integrations.serve_env.answer_body`).
        """
        one = self.one_text if as_text else self.one
        clock = time.perf_counter
        last_yield = clock()
        for item in items:
            if clock() - last_yield > YIELD_EVERY_S:
                yield
                last_yield = clock()
            obs, done, valid = one(item)
            observations.append(obs)
            dones.append(done)
            valids.append(valid)

    def one(self, item: Item) -> tuple[str | dict[str, Any], bool, bool]:
        """(observation, done, valid) for one item whose trajectory, if new, has started."""
        trajectories, tid = (
            self.trajectories,
            item.trajectory_id,
        )  # another request may have ended tid
        if item.finish:
            trajectories.finish(tid)
            return "", True, True
        if tid not in trajectories.live:
            why = trajectories.ended.get(tid, "it is unknown")
            return (
                (
                    f"Error: trajectory {tid[:80]!r} has ended: {why}. Start a new trajectory id for a new "
                    "episode."
                ),
                True,
                False,
            )
        if (
            len(item.action) > self.limits.max_action_chars
        ):  # not stepped: the env's turn budget is untouched
            return (
                {
                    "obs": f"Error: the action has {len(item.action)} characters; this server steps at most "
                    f"{self.limits.max_action_chars}. Write a shorter tool call or answer.",
                    "reward": 0.0,
                },
                False,
                False,
            )
        outcome = trajectories.step(tid, item.action, last_step=item.is_last_step)
        return (
            observation(outcome, messages=item.extra_fields.get("return_messages") is True),
            outcome.done,
            outcome.valid,
        )

    def one_text(self, item: Item) -> tuple[bytes, bool, bool]:
        """:meth:`one` with the observation as its JSON, encoded: the same bytes as
        ``encode_observation(obs).encode()``, written directly for a step (:func:`observation_json`)."""
        tid = item.trajectory_id
        trajectories = self.trajectories
        if item.finish:
            trajectories.finish(tid)
            return b'""', True, True
        if tid not in trajectories.live or len(item.action) > self.limits.max_action_chars:
            obs, done, valid = self.one(item)
            return encode_observation(obs).encode(), done, valid
        outcome = trajectories.step(tid, item.action, last_step=item.is_last_step)
        return (
            observation_json(outcome, messages=item.extra_fields.get("return_messages") is True),
            outcome.terminated or outcome.truncated,
            outcome.valid,
        )


async def _lifespan(receive: Any, send: Any, *, trajectories: Trajectories) -> None:
    """Start the idle sweep with the server; end every trajectory when it stops."""
    sweeper: asyncio.Task[None] | None = None
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            sweeper = asyncio.create_task(_sweep_forever(trajectories))
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            if sweeper is not None:
                sweeper.cancel()
            trajectories.close()
            await send({"type": "lifespan.shutdown.complete"})
            return


async def _sweep_forever(trajectories: Trajectories) -> None:
    """Evict idle trajectories even while no request arrives (requests also sweep, at once)."""
    every_s = min(max(trajectories.limits.trajectory_idle_s / 4, 0.05), 30.0)
    while True:
        await asyncio.sleep(every_s)
        trajectories.sweep()
