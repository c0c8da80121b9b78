"""Generating every MediaSearch split from the catalog: each kind from its own random stream, in one process
or in forked workers (``$AGENTENV_BUILD_WORKERS``), every answer proven unique by its generator."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from agentenv.corpora.media.catalog import Catalog
from agentenv.envs.media_search.questions.record import (
    DEFAULT_STYLE,
    GENERATION_SEED,
    KIND_SHARES,
    SPLIT_SIZES,
    Question,
    canonical_json,
    question_id,
    split_of,
)


def quota(split: str, kind: str, sizes: Mapping[str, int] = SPLIT_SIZES) -> int:
    """Number of questions of ``kind`` in ``split``."""
    return round(sizes[split] * KIND_SHARES[kind])


def generate_questions(
    catalog: Catalog,
    seed: int = GENERATION_SEED,
    sizes: Mapping[str, int] = SPLIT_SIZES,
    style: str = DEFAULT_STYLE,
) -> dict[str, list[Question]]:
    """Generate every split from ``catalog`` with ``np.random.default_rng``.

    Each kind draws from its own stream (``default_rng([seed, k])``), so
    changing one generator leaves the others' questions unchanged. A draft is
    dropped if ambiguous, if its fact or its wording was already drawn (a task
    id hashes the kind and the wording, so two questions worded alike would
    share one), or if its split is full; drawing stops when every split has
    its quota of the kind. Each
    split is sorted by question id. ``style`` picks the phrasings (:data:`STYLES`).
    """
    from agentenv.envs.media_search.questions.kinds import Context

    ctx = Context(catalog, style)
    out: dict[str, list[Question]] = {s: [] for s in sizes}
    for k in range(len(kind_names())):
        for q in generate_kind(ctx, k, seed, sizes):
            out[q.split].append(q)
    for questions in out.values():
        questions.sort(key=lambda q: q.id)
    _check_unique_ids(q.id for qs in out.values() for q in qs)
    return out


def kind_names() -> list[str]:
    from agentenv.envs.media_search.questions.kinds import GENERATORS

    return list(GENERATORS)


def generate_kind(
    ctx: Any,
    k: int,
    seed: int,
    sizes: Mapping[str, int],
    draws: list[dict[str, Any]] | None = None,
) -> list[Question]:
    """The questions of the ``k``-th kind, in the order drawn (see :func:`generate_questions`).

    ``draws``, when given, gains the bit generator's state before each kept
    draft, one per returned question (what :mod:`.question_draws` ships).
    """
    from agentenv.envs.media_search.questions.kinds import GENERATORS

    kind, generate = list(GENERATORS.items())[k]
    rng = np.random.default_rng([seed, k])
    need = {s: quota(s, kind, sizes) for s in sizes}
    seen: set[str] = set()
    worded: set[str] = set()
    budget = 200 * sum(need.values()) + 10_000
    out: list[Question] = []
    while any(need.values()):
        budget -= 1
        if budget < 0:
            raise RuntimeError(f"could not generate enough {kind!r} questions: still need {need}")
        before = rng.bit_generator.state if draws is not None else None
        draft = generate(ctx, rng)
        if draft is None or draft.fact in seen or draft.question in worded:
            continue
        seen.add(draft.fact)
        worded.add(draft.question)
        split = split_of(draft.anchor)
        if need.get(split, 0) == 0:
            continue
        need[split] -= 1
        out.append(draft_question(kind, draft, split))
        if draws is not None:
            draws.append(before)  # type: ignore[arg-type]
    return out


def draft_question(kind: str, draft: Any, split: str) -> Question:
    """The :class:`Question` a kept draft of ``kind`` becomes in ``split``."""
    return Question(
        id=question_id(kind, draft.question, draft.answer),
        question=draft.question,
        answer=draft.answer,
        aliases=draft.aliases,
        answer_type=draft.answer_type,
        kind=kind,
        difficulty=draft.difficulty,
        plan=draft.plan,
        extract=draft.extract,
        split=split,
        group=draft.anchor,
    )


def _check_unique_ids(ids: Iterable[str]) -> None:
    listed = list(ids)
    if len(listed) != len(set(listed)):
        raise RuntimeError("two generated questions share an id")


# Generation in worker processes: each kind is drawn from its own stream, so the
# kinds can be drawn in parallel and give the same questions as one process.

_WORKER_CONTEXT: Any = None
"""The generators' :class:`~agentenv.envs.media_search.questions.kinds.Context`, inherited by forked workers."""


def _kind_lines(job: tuple[int, int]) -> list[tuple[str, str, bytes]]:
    """In a worker: ``(split, id, canonical JSON)`` of each question of one kind (the context holds the style)."""
    k, seed = job
    return [
        (q.split, q.id, canonical_json(q))
        for q in generate_kind(_WORKER_CONTEXT, k, seed, SPLIT_SIZES)
    ]


KIND_COST_ORDER = ("constraint", "superlative", "two_hop", "lookup", "count", "comparison")
"""Kinds, costliest to draw first (measured): a pool takes them in this order, so the longest starts first."""


BUILD_WORKERS_ENV = "AGENTENV_BUILD_WORKERS"
"""Environment variable: how many forked processes draw the questions on a first use (default 1)."""


def generation_workers() -> int:
    """How many processes draw the questions: ``$AGENTENV_BUILD_WORKERS`` (default 1), at most one per kind.

    Why one by default: on the shared 2-vCPU machine this was measured on,
    two workers next to the index build were slower than one process
    (wall and CPU, interleaved runs); on a quiet machine with more cores, a
    value of 2-3 lets the kinds be drawn in parallel (the questions are the
    same: each kind has its own random stream). One always where ``fork`` is
    unavailable, or in a daemonic process (a pool worker cannot start its own).
    """
    import multiprocessing as mp

    try:
        wanted = int(os.environ.get(BUILD_WORKERS_ENV) or 1)
    except ValueError:
        wanted = 1
    if wanted <= 1 or "fork" not in mp.get_all_start_methods() or mp.current_process().daemon:
        return 1
    return min(wanted, len(kind_names()))


class Generation:
    """A generation of every split in progress: in a pool of forked workers, or (one worker) done at once.

    Why a handle: :func:`prefetch_questions` starts the workers and returns,
    so that the env builds its search index meanwhile; :meth:`lines` waits.
    """

    def __init__(
        self, catalog: Catalog, seed: int, workers: int, style: str = DEFAULT_STYLE
    ) -> None:
        import multiprocessing as mp

        from agentenv.envs.media_search.questions.kinds import Context

        global _WORKER_CONTEXT
        kinds = kind_names()
        order = sorted(
            range(len(kinds)),
            key=lambda k: KIND_COST_ORDER.index(kinds[k]) if kinds[k] in KIND_COST_ORDER else -1,
        )
        jobs = [(k, seed) for k in order]
        self._pool: Any = None
        self._parts: list[list[tuple[str, str, bytes]]] | None = None
        _WORKER_CONTEXT = Context(catalog, style)
        try:
            if workers > 1:
                self._pool = mp.get_context("fork").Pool(workers)  # the workers inherit the context
                self._pending = self._pool.map_async(_kind_lines, jobs, chunksize=1)
            else:
                self._parts = [_kind_lines(job) for job in jobs]
        finally:
            _WORKER_CONTEXT = None

    def lines(self) -> dict[str, list[bytes]]:
        """Every split's canonical JSON lines, sorted by question id (waits for the workers)."""
        if self._parts is None:
            try:
                self._parts = self._pending.get()
            finally:
                self._pool.terminate()
                self._pool.join()
        rows = sorted(row for part in self._parts for row in part)  # by split, then id
        _check_unique_ids(qid for _, qid, _ in rows)
        out: dict[str, list[bytes]] = {s: [] for s in SPLIT_SIZES}
        for split, _, line in rows:
            out[split].append(line)
        return out
