"""Micro-batching: many concurrent requests, few ``search_batch`` calls.

The vectorised back-ends answer a batch of queries much faster per query
than one query at a time, and a server answering many env workers sees
their requests arrive together. The batcher queues what concurrent requests
ask, runs one ``search_batch`` per distinct ``k``, and hands each request
its slice, already encoded as JSON so the event loop only joins bytes.

It needs only asyncio, so it is testable without the server extra.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import math
from collections import deque
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

from agentenv.retrieval.base import Hit, Retriever

_encode_str = json.encoder.encode_basestring  # type: ignore[attr-defined]


class Overloaded(Exception):
    """The in-flight queue is full: the client should retry later."""


@dataclasses.dataclass
class BatchStats:
    """Live counters; ``batches < requests`` shows that batching happens."""

    requests: int = 0
    queries: int = 0
    batches: int = 0
    rejected: int = 0
    invalid: int = 0
    largest_batch: int = 0


@dataclasses.dataclass
class _Job:
    queries: list[str]
    k: int
    future: asyncio.Future[list[bytes]]


def _number(value: float) -> str:
    value = float(value)
    # repr is the shortest text that reads back as the same float: scores
    # survive the trip exactly. JSON has no inf/nan; json writes them as
    # Infinity/NaN, which Python's json (the client) reads back.
    return repr(value) if math.isfinite(value) else json.dumps(value)


def encode_hits(hits: Sequence[Hit]) -> bytes:
    """Encode one query's hits as a JSON array (hand-formatted: this is the hot path).

    Example:
        >>> encode_hits([Hit("d1", 2.5, 0), Hit('say "hi"', 1.0, 1)])
        b'[{"doc_id":"d1","score":2.5,"rank":0},{"doc_id":"say \\\\"hi\\\\"","score":1.0,"rank":1}]'
        >>> json.loads(encode_hits([Hit("d1", 0.1 + 0.2, 0)]))[0]["score"] == 0.1 + 0.2
        True
    """
    parts = [
        f'{{"doc_id":{_encode_str(str(h.doc_id))},"score":{_number(h.score)},"rank":{int(h.rank)}}}'
        for h in hits
    ]
    return ("[" + ",".join(parts) + "]").encode()


class HitEncoder:
    """``encode_hits`` with the per-document and per-rank text cached: the same bytes, ~1.5x faster.

    A served corpus answers with the same few thousand documents over and
    over, so each hit's ``{"doc_id":"…","score":`` prefix (JSON string
    escaping included) and ``,"rank":N}`` suffix are formatted once; only
    the score is formatted per hit. The cache holds at most
    ``max_cached_ids`` ids (it is emptied when full), so a corpus of any size
    bounds its memory.

    Example:
        >>> hits = [Hit("d1", 2.5, 0), Hit('say "hi"', float("inf"), 1)]
        >>> HitEncoder().encode(hits) == encode_hits(hits)
        True
    """

    def __init__(self, max_cached_ids: int = 1 << 17) -> None:
        self.max_cached_ids = max_cached_ids
        self._prefix: dict[str, str] = {}
        self._suffix = {rank: f',"rank":{rank}}}' for rank in range(256)}

    def encode(self, hits: Sequence[Hit]) -> bytes:
        """One query's hits as the JSON array ``encode_hits`` gives."""
        prefix, suffix = self._prefix, self._suffix
        try:
            # Fast path: known str ids, float scores (all finite), int ranks below 256.
            if _isfinite(_fsum([hit[1] for hit in hits])):
                parts = [prefix[doc_id] + _float_repr(score) + suffix[rank]
                         for doc_id, score, rank in hits]
                return ("[" + ",".join(parts) + "]").encode()
        except (KeyError, TypeError, ValueError, OverflowError):
            pass  # an unseen id, another type, or a sum of scores past the float range
        return self._encode_slowly(hits)

    def _encode_slowly(self, hits: Sequence[Hit]) -> bytes:
        parts = []
        for doc_id, score, rank in hits:
            head = self._prefix.get(doc_id) if type(doc_id) is str else None
            if head is None:
                head = f'{{"doc_id":{_encode_str(str(doc_id))},"score":'
                if type(doc_id) is str:  # other types are formatted each time (str() may vary)
                    if len(self._prefix) >= self.max_cached_ids:
                        self._prefix.clear()
                    self._prefix[doc_id] = head
            parts.append(f'{head}{_number(score)},"rank":{int(rank)}}}')
        return ("[" + ",".join(parts) + "]").encode()


_float_repr = float.__repr__
_fsum = math.fsum
_isfinite = math.isfinite


class MicroBatcher:
    """Queues concurrent requests' queries and answers them in batches.

    One consumer task owns the back-end, so back-ends need not be
    thread-safe. By default it calls ``search_batch`` inline: for the sparse
    back-ends a batch takes a few ms of pure-Python-and-numpy work that holds
    the GIL anyway, and a worker thread only adds GIL hand-offs (measured:
    ~40% more CPU per request). ``offload=True`` runs it in one worker thread
    instead, for back-ends that release the GIL (faiss, torch), so the event
    loop keeps reading requests while a batch runs.

    While idle, the first query waits ``max_wait_s`` for company. Under load
    (a batch ended less than ``max_wait_s`` ago) there is no window: the
    queries that arrived while the last batch ran and its answers went out
    form the next one. With closed-loop clients a fixed window restarted after
    every batch (the clients just answered send again at once), so every
    query paid it on top of the batch (measured: the wait from submit to
    batch start fell by a third without it).
    """

    def __init__(self, retriever: Retriever, *, max_batch_queries: int = 512,
                 max_wait_s: float = 0.001, max_inflight_queries: int = 8192,
                 offload: bool = False) -> None:
        self.retriever = retriever
        self.max_batch_queries = max_batch_queries
        self.max_wait_s = max_wait_s
        self.max_inflight_queries = max_inflight_queries
        self.offload = offload
        self.stats = BatchStats()
        self._pending: deque[_Job] = deque()
        self._queued = 0
        self._inflight = 0
        self._wakeup: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[None] | None = None
        self._executor: ThreadPoolExecutor | None = None
        self._encoder = HitEncoder()

    async def start(self) -> None:
        """Start the consumer task on the running loop."""
        self._wakeup = asyncio.Event()
        self._loop = asyncio.get_running_loop()
        if self.offload:
            self._executor = ThreadPoolExecutor(1, thread_name_prefix="retrieval-batch")
        self._task = asyncio.get_running_loop().create_task(self._consume())

    async def stop(self) -> None:
        """Stop the consumer, fail what still waits, and free the worker thread."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        while self._pending:
            job = self._pending.popleft()
            if not job.future.done():
                job.future.set_exception(Overloaded("server shutting down"))
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)

    def submit(self, queries: list[str], k: int) -> asyncio.Future[list[bytes]]:
        """Queue ``queries``; the future resolves to one encoded hit list per query.

        Raises:
            Overloaded: if accepting them would exceed ``max_inflight_queries``.
        """
        assert self._wakeup is not None, "MicroBatcher.start() was not awaited"
        if self._inflight + len(queries) > self.max_inflight_queries:
            self.stats.rejected += 1
            raise Overloaded(f"{self._inflight} queries in flight, "
                             f"limit {self.max_inflight_queries}")
        assert self._loop is not None
        future: asyncio.Future[list[bytes]] = self._loop.create_future()
        self._inflight += len(queries)
        self._queued += len(queries)
        self.stats.requests += 1
        self.stats.queries += len(queries)
        self._pending.append(_Job(queries, k, future))
        self._wakeup.set()
        return future

    async def _consume(self) -> None:
        assert self._wakeup is not None
        loop = asyncio.get_running_loop()
        busy_until = 0.0  # a batch ended less than max_wait_s ago: requests are flowing
        while True:
            if not self._pending:
                self._wakeup.clear()
                await self._wakeup.wait()
                # Wait for company only when idle. Under load the clients answered by
                # the last batch are sending their next queries right now: a window
                # would restart after every batch and add to every query's latency.
                if (self.max_wait_s > 0 and self._queued < self.max_batch_queries
                        and loop.time() >= busy_until):
                    await asyncio.sleep(self.max_wait_s)
            jobs, groups = self._take()
            try:
                if self._executor is not None:
                    outcome = await loop.run_in_executor(self._executor, self._run, jobs, groups)
                else:
                    outcome = self._run(jobs, groups)
            except Exception as exc:  # noqa: BLE001 - reported to every waiting request
                outcome = [exc] * len(jobs)
            for job, result in zip(jobs, outcome, strict=True):
                self._inflight -= len(job.queries)
                if job.future.done():  # cancelled: the client went away
                    continue
                if isinstance(result, BaseException):
                    job.future.set_exception(result)
                else:
                    job.future.set_result(result)
            busy_until = loop.time() + self.max_wait_s
            # Let the answered requests' tasks write their responses (and the loop read
            # new requests) before the next batch, instead of after the queue drains.
            await asyncio.sleep(0)

    def _take(self) -> tuple[list[_Job], dict[int, list[int]]]:
        """Pop up to ``max_batch_queries`` queries (at least one job), grouped by ``k``."""
        jobs = [self._pending.popleft()]
        size = len(jobs[0].queries)
        while self._pending and size + len(self._pending[0].queries) <= self.max_batch_queries:
            job = self._pending.popleft()
            size += len(job.queries)
            jobs.append(job)
        self._queued -= size
        groups: dict[int, list[int]] = {}
        for index, job in enumerate(jobs):
            groups.setdefault(job.k, []).append(index)
        for indices in groups.values():
            self.stats.batches += 1
            n = sum(len(jobs[i].queries) for i in indices)
            self.stats.largest_batch = max(self.stats.largest_batch, n)
        return jobs, groups

    def _run(self, jobs: list[_Job],
             groups: dict[int, list[int]]) -> list[list[bytes] | BaseException]:
        """One ``search_batch`` per distinct ``k``, then encode; failures go to their jobs."""
        outcome: list[list[bytes] | BaseException] = [[] for _ in jobs]
        encode = self._encoder.encode
        for k, indices in groups.items():
            queries = [q for i in indices for q in jobs[i].queries]
            try:
                results = self.retriever.search_batch(queries, k)
                if len(results) != len(queries):
                    raise RuntimeError(
                        f"{type(self.retriever).__name__}.search_batch returned "
                        f"{len(results)} result lists for {len(queries)} queries")
                encoded = [encode(hits) for hits in results]
            except Exception as exc:  # noqa: BLE001 - each request gets the failure
                for i in indices:
                    outcome[i] = exc
                continue
            start = 0
            for i in indices:
                n = len(jobs[i].queries)
                outcome[i] = encoded[start : start + n]
                start += n
        return outcome
