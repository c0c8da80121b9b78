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
from collections.abc import Callable, Sequence
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


QUERY_OVERHEAD = 6_000
"""Work units of one query besides the postings it reads: tokenizing it, a dozen numpy calls, ranking.

Work is counted in postings read (:meth:`~agentenv.retrieval.bm25.BM25Retriever.query_work`):
measured on BM25 over the film catalog at 1x to 16x its size, a query costs about 2.5 ns a
posting plus about 15 us, i.e. 6,000 postings."""
HIT_COST = 200
"""Work units of one requested hit (ranking and encoding it, about 0.5 us)."""
CHARACTER_EXPONENT = 1.5
"""For back-ends that cannot count postings: a query costs ``100 * characters ** 1.5`` units (longer
queries have more terms, and their terms reach more postings; measured on BM25 over the film catalog: a
4-word query 0.03 ms, a 2,048-character one 23 ms)."""


def character_work(query: str) -> int:
    """The work of ``query`` estimated from its length alone (see :data:`CHARACTER_EXPONENT`).

    >>> character_work("a b c d")
    1852
    """
    return int(100 * len(query) ** CHARACTER_EXPONENT)


@dataclasses.dataclass
class _Job:
    """One request's queries; answered slice by slice, so one large request never fills a whole batch."""

    queries: list[str]
    k: int
    future: asyncio.Future[list[bytes]]
    next: int = 0
    """The first query not yet taken into a batch."""
    answers: list[bytes] = dataclasses.field(default_factory=list)
    answered: int = 0
    costs: list[int] = dataclasses.field(default_factory=list)
    """The cost of each query looked at so far (computed once: estimating a query's work tokenizes it)."""

    def cost(self, i: int, work: Callable[[str], int]) -> int:
        """What query ``i`` costs a batch: its ``work`` (postings read), :data:`QUERY_OVERHEAD`, and
        :data:`HIT_COST` per requested hit."""
        costs = self.costs
        while len(costs) <= i:
            costs.append(work(self.queries[len(costs)]) + QUERY_OVERHEAD + HIT_COST * self.k)
        return costs[i]


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
                parts = [
                    prefix[doc_id] + _float_repr(score) + suffix[rank]
                    for doc_id, score, rank in hits
                ]
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

    Fair shares: a batch holds what fits ``max_batch_cost``, counted in work, not
    in queries (about 10 ms of BM25 work: the postings its queries read, from the
    back-end's ``query_work`` where it has one, else estimated from their length;
    see :meth:`_Job.cost`), split evenly between the requests waiting, plus
    at most one query that fits no share, and that only every other batch (see
    :meth:`_take`). So a request at the limits (256 queries of 2,048 characters,
    k=100: seconds of CPU in one batch) is answered one query per two batches,
    while every small request is answered by the next batch (measured: a
    legitimate client's p50 beside one such client was 1.6 s when requests were
    taken whole). A request whose client went away is dropped with its
    remaining queries.

    While idle, the first query waits ``max_wait_s`` for company. Under load
    (a batch ended less than ``max_wait_s`` ago) there is no window: the
    queries that arrived while the last batch ran and its answers went out
    form the next one. With closed-loop clients a fixed window restarted after
    every batch (the clients just answered send again at once), so every
    query paid it on top of the batch (measured: the wait from submit to
    batch start fell by a third without it).
    """

    def __init__(
        self,
        retriever: Retriever,
        *,
        max_batch_queries: int = 512,
        max_wait_s: float = 0.001,
        max_inflight_queries: int = 8192,
        offload: bool = False,
        max_batch_cost: int = 4_000_000,
    ) -> None:
        self.retriever = retriever
        self._work: Callable[[str], int] = getattr(retriever, "query_work", None) or character_work
        self.max_batch_queries = max_batch_queries
        self.max_batch_cost = max_batch_cost
        self.max_wait_s = max_wait_s
        self.max_inflight_queries = max_inflight_queries
        self.offload = offload
        self.stats = BatchStats()
        self._pending: deque[_Job] = deque()
        self._last_expensive = False
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
            raise Overloaded(
                f"{self._inflight} queries in flight, limit {self.max_inflight_queries}"
            )
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
                if (
                    self.max_wait_s > 0
                    and self._queued < self.max_batch_queries
                    and loop.time() >= busy_until
                ):
                    await asyncio.sleep(self.max_wait_s)
            if self._last_expensive:
                # After a query that fit no share, let the requests that arrived during it reach the
                # queue (reading, parsing and submitting them takes a few loop turns) before the next
                # batch, so they are not queued behind another expensive query.
                await asyncio.sleep(self.max_wait_s)
            slices, groups = self._take()
            if not slices:
                continue
            try:
                if self._executor is not None:
                    outcome = await loop.run_in_executor(self._executor, self._run, slices, groups)
                else:
                    outcome = self._run(slices, groups)
            except Exception as exc:  # noqa: BLE001 - reported to every waiting request
                outcome = [exc] * len(slices)
            for (job, start, stop), result in zip(slices, outcome, strict=True):
                self._inflight -= stop - start
                if job.future.done():  # cancelled (the client went away) or already failed
                    continue
                if isinstance(result, BaseException):
                    job.future.set_exception(result)
                    continue
                job.answers[start:stop] = result
                job.answered += stop - start
                if job.answered == len(job.queries):
                    job.future.set_result(job.answers)
            busy_until = loop.time() + self.max_wait_s
            # Let the answered requests' tasks write their responses (and the loop read
            # new requests) before the next batch, instead of after the queue drains.
            await asyncio.sleep(0)

    def _take(self) -> tuple[list[tuple[_Job, int, int]], dict[int, list[int]]]:
        """Pop the next batch as ``(job, start, stop)`` query slices, grouped by ``k``.

        First every waiting request gives what fits its even share of ``max_batch_cost`` (in queue
        order). Then, when the batch is empty or the last batch held none, one query that did not fit
        (a request at the limits) joins, and its request goes to the back of the queue. So cheap
        requests are answered by the next batch, and at most every other batch carries an expensive
        query. Requests whose future is done are dropped.
        """
        slices: list[tuple[_Job, int, int]] = []
        cost = count = 0
        share = max(1, self.max_batch_cost // max(len(self._pending), 1))
        waiting: deque[_Job] = deque()
        while self._pending:
            job = self._pending.popleft()
            if job.future.done():  # the client went away (or a slice failed): skip what is left
                left = len(job.queries) - job.next
                self._inflight -= left
                self._queued -= left
                continue
            if not job.answers:
                job.answers = [b""] * len(job.queries)
            start = stop = job.next
            mine = 0
            while stop < len(job.queries) and count < self.max_batch_queries:
                c = job.cost(stop, self._work)
                if mine + c > share or cost + c > self.max_batch_cost:
                    break
                mine += c
                cost += c
                count += 1
                stop += 1
            if stop > start:
                slices.append((job, start, stop))
                job.next = stop
            if stop < len(job.queries):
                waiting.append(job)
        expensive = False
        if waiting and (not slices or not self._last_expensive):
            job = next((j for j in waiting if j.next < len(j.queries)), None)
            if job is not None:
                waiting.remove(job)
                slices.append((job, job.next, job.next + 1))
                job.next += 1
                count += 1
                expensive = True
                if job.next < len(job.queries):
                    waiting.append(
                        job
                    )  # to the back: the next expensive query is another request's
        self._last_expensive = expensive
        self._pending = waiting
        self._queued -= count
        groups: dict[int, list[int]] = {}
        for index, (job, _, _) in enumerate(slices):
            groups.setdefault(job.k, []).append(index)
        for indices in groups.values():
            self.stats.batches += 1
            n = sum(slices[i][2] - slices[i][1] for i in indices)
            self.stats.largest_batch = max(self.stats.largest_batch, n)
        return slices, groups

    def _run(
        self, slices: list[tuple[_Job, int, int]], groups: dict[int, list[int]]
    ) -> list[list[bytes] | BaseException]:
        """One ``search_batch`` per distinct ``k``, then encode; failures go to their slices."""
        outcome: list[list[bytes] | BaseException] = [[] for _ in slices]
        encode = self._encoder.encode
        for k, indices in groups.items():
            queries = [
                q for i in indices for q in slices[i][0].queries[slices[i][1] : slices[i][2]]
            ]
            try:
                results = self.retriever.search_batch(queries, k)
                if len(results) != len(queries):
                    raise RuntimeError(
                        f"{type(self.retriever).__name__}.search_batch returned "
                        f"{len(results)} result lists for {len(queries)} queries"
                    )
                encoded = [encode(hits) for hits in results]
            except Exception as exc:  # noqa: BLE001 - each request gets the failure
                for i in indices:
                    outcome[i] = exc
                continue
            start = 0
            for i in indices:
                n = slices[i][2] - slices[i][1]
                outcome[i] = encoded[start : start + n]
                start += n
        return outcome
