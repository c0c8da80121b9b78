"""MediaSearch questions: generation, splits, caching, and reading answers out of plans.

Why generated questions with gold plans: every question comes with a list
of concrete tool calls that answers it and an ``extract`` rule that reads the
answer out of those calls' outputs. A scripted oracle that runs the plan
through the env and applies :func:`execute_plan_extract` to the *real* tool
outputs proves that each question is answerable with the tools; the tests do
this for the whole test split.

Splits are decided by a stable hash of each question's *group* (the film it
is about, the film pair of a comparison, or the person of a count), so every
question about a film lands in the same split, whatever its wording, and a
question never moves between splits when generation is extended. Each split
holds fixed numbers per kind (:data:`SPLIT_SIZES`, :data:`KIND_SHARES`); its
content is pinned by :data:`SPLIT_CHECKSUMS`.

Extract rules (``extract["op"]``):

* ``field``: ``{"op": "field", "step": i, "path": "results.0.title"}``, the
  value at a dotted path (list indexes as numbers) of output ``i``;
* ``only``: ``{"op": "only", "step": i, "field": "title"}``, the field of the one
  result of a ``filter_titles`` output whose ``count`` must be 1;
* ``argmin`` / ``argmax``: ``{"op": "argmin", "steps": [i, j], "field": "year",
  "return": "title"}``, the ``return`` field of the output with the smallest
  (largest) ``field``; a tie is an error;
* ``member``: ``{"op": "member", "step": i, "path": "cast", "options": [a, b]}``,
  the one option found in the list at ``path``.

Example:
    >>> outputs = [{"results": [{"id": "tt1", "title": "Inception"}], "count": 1}]
    >>> execute_plan_extract({"op": "field", "step": -1, "path": "results.0.title"}, outputs)
    'Inception'
    >>> execute_plan_extract({"op": "argmin", "steps": [0, 1], "field": "year", "return": "title"},
    ...                      [{"title": "B", "year": 1999}, {"title": "A", "year": 1977}])
    'A'
    >>> split_of("tt1375666") in SPLIT_SIZES
    True
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import warnings
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from copy import deepcopy
from dataclasses import dataclass, field
from typing import Any, Literal, overload

import numpy as np

from agentenv.checksummed_cache import pack_bytes, unpack_lines
from agentenv.corpora.media import MOVIES_DB_SHA256, Catalog
from agentenv.corpora.media_files import write_atomic
from agentenv.envs.media_search.plan_extraction import execute_plan_extract as execute_plan_extract

log = logging.getLogger(__name__)
_json_str = json.encoder.encode_basestring  # a str as JSON with ensure_ascii=False (C-accelerated)

AnswerType = Literal["title", "person", "number", "year", "text"]
"""Generated questions use the first four; ``"text"`` is a free-text answer of your own questions."""
Split = Literal["train", "validation", "test"]

GENERATION_SEED = 20260
"""Seed of the published splits."""
QUESTIONS_FORMAT = 6
"""Bump when generation or the cache layout changes; cached splits of older formats are regenerated.

4: the body holds one canonical JSON object per line (read one line at a
time; the questions are the same as in format 3).
5: a question style (``varied``, the default, or ``template``) in the cache
file's name and header; ``template`` questions are those of format 4.
6: ``varied`` questions about the films and people people ask about, asked mostly
the plain way (:mod:`~agentenv.envs.media_search.question_styles`); ``template``
questions unchanged."""
STYLES = ("varied", "template")
"""Question styles (:mod:`~agentenv.envs.media_search.question_styles`): ``varied`` (default, mostly casual
forms) and ``template`` (the phrasings of format 4, the same questions bit for bit)."""
DEFAULT_STYLE = "varied"
SPLIT_SIZES: dict[str, int] = {"train": 24_000, "validation": 1_000, "test": 1_000}
KIND_SHARES: dict[str, float] = {
    "lookup": 0.2,
    "constraint": 0.2,
    "superlative": 0.15,
    "two_hop": 0.15,
    "comparison": 0.15,
    "count": 0.15,
}
"""Share of each kind in every split (sizes × shares are whole numbers)."""
SPLIT_BUCKETS = {"test": 800, "validation": 1600}
"""A group whose hash bucket (0-9999) is below 800 is test, below 1600 validation, else train."""
PUBLISHED_CHECKSUMS: dict[str, dict[str, str]] = {
    "varied": {
        "train": "c4cfe8fbfbeb7fd68a1d3ffbf69ed194a8455a4a689a63c78d37b7ec8dba04ab",
        "validation": "0d44deaebf9762d711018f1dcb752f0824b1e8c13e573660a363beeb501718de",
        "test": "b0f2749cf2c523b3bc593d0d743e53f1e083a5e10c0e76200562fd8b5aa06b95",
    },
    "template": {
        "train": "53c4e31721fb8cc3ec4c31d328ce5ee4cdde8eaba42cbeaa416942eccb28b8ef",
        "validation": "556db6db28b3ef6ffce220d00ef1e0b34ce3d2a089b45c0141921a7b93d6b200",
        "test": "b33799c0d0b433413a30bc65ec0cee49c1d56f44625d19278f8205dc5912a8df",
    },
}
"""sha256 of each published split per question style (see :func:`split_checksum`); a result records the
served split's as ``corpus_checksums["questions"]``, so results on two styles never share a board."""
SPLIT_CHECKSUMS: dict[str, str] = PUBLISHED_CHECKSUMS[DEFAULT_STYLE]
"""The default style's checksums."""


@dataclass(frozen=True)
class Question:
    """One question with its gold answer; ``plan``/``extract`` are ``None`` for your own questions.

    Only ``question`` is for the agent; everything else is gold or bookkeeping.
    ``aliases`` are other accepted answers (a title's id, "Title (Year)",
    a number in words). ``group`` decides the split.
    """

    id: str
    question: str
    answer: str
    aliases: tuple[str, ...] = ()
    answer_type: AnswerType = "title"
    kind: str = "custom"
    difficulty: str = "unknown"
    plan: tuple[dict[str, Any], ...] | None = field(default=None, hash=False)
    extract: dict[str, Any] | None = field(default=None, hash=False)
    split: str = "custom"
    group: str = ""

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-ready dict (tuples become lists), sharing nothing with this question."""
        data = self._row()
        data["plan"] = deepcopy(data["plan"])
        data["extract"] = deepcopy(data["extract"])
        return data

    def _row(self) -> dict[str, Any]:
        """:meth:`to_dict` without copying ``plan`` and ``extract``: only to serialise at once.

        Why not ``dataclasses.asdict``: it deep-copies every plan, which made
        writing the 26,000 generated questions cost seconds.
        """
        return {
            "id": self.id,
            "question": self.question,
            "answer": self.answer,
            "aliases": list(self.aliases),
            "answer_type": self.answer_type,
            "kind": self.kind,
            "difficulty": self.difficulty,
            "plan": None if self.plan is None else list(self.plan),
            "extract": self.extract,
            "split": self.split,
            "group": self.group,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Question:
        """Inverse of :meth:`to_dict`."""
        values = dict(data)
        values["aliases"] = tuple(values.get("aliases", ()))
        if values.get("plan") is not None:
            values["plan"] = tuple(values["plan"])
        return cls(**values)


def question_id(kind: str, question: str, answer: str) -> str:
    """Return the content-hash id of a question.

    Example:
        >>> question_id("custom", "Who directed Inception?", "Christopher Nolan")
        'mq-d835a874f985447f'
    """
    if isinstance(kind, str) and isinstance(question, str) and isinstance(answer, str):
        # The text json.dumps([kind, question, answer], ensure_ascii=False) writes, without its
        # per-call encoder set-up (26,000 calls per generation).
        text = f"[{_json_str(kind)}, {_json_str(question)}, {_json_str(answer)}]"
    else:
        text = json.dumps([kind, question, answer], ensure_ascii=False)
    return "mq-" + hashlib.sha256(text.encode()).hexdigest()[:16]


def split_of(group: str) -> Split:
    """Return the split of a question group (stable: a hash, not a random draw)."""
    digest = hashlib.sha256(f"agentenv-media-split-v1|{group}".encode()).digest()
    bucket = int.from_bytes(digest[:8], "big") % 10_000
    return (
        "test"
        if bucket < SPLIT_BUCKETS["test"]
        else "validation"
        if bucket < SPLIT_BUCKETS["validation"]
        else "train"
    )


def canonical_json(q: Question) -> bytes:
    """One question as canonical JSON (sorted keys, UTF-8, no spaces): a line of the cache, a part of the checksum."""
    return json.dumps(q._row(), sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode()


def split_checksum(questions: Sequence[Question]) -> str:
    """Return the sha256 of a question list in canonical JSON (a JSON array of :func:`canonical_json`)."""
    lines = (
        questions.lines()
        if isinstance(questions, QuestionRows)
        else [canonical_json(q) for q in questions]
    )
    return _checksum_of_lines(lines)


def _checksum_of_lines(lines: Sequence[bytes]) -> str:
    # json.dumps of a list with separators (",", ":") is "[" + ",".join(items) + "]", item by item.
    return hashlib.sha256(b"[" + b",".join(lines) + b"]").hexdigest()


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
    from agentenv.envs.media_search.question_kinds import Context

    ctx = Context(catalog, style)
    out: dict[str, list[Question]] = {s: [] for s in sizes}
    for k in range(len(_kinds())):
        for q in _generate_kind(ctx, k, seed, sizes):
            out[q.split].append(q)
    for questions in out.values():
        questions.sort(key=lambda q: q.id)
    _check_unique_ids(q.id for qs in out.values() for q in qs)
    return out


def _kinds() -> list[str]:
    from agentenv.envs.media_search.question_kinds import GENERATORS

    return list(GENERATORS)


def _generate_kind(ctx: Any, k: int, seed: int, sizes: Mapping[str, int]) -> list[Question]:
    """The questions of the ``k``-th kind, in the order drawn (see :func:`generate_questions`)."""
    from agentenv.envs.media_search.question_kinds import GENERATORS

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
        draft = generate(ctx, rng)
        if draft is None or draft.fact in seen or draft.question in worded:
            continue
        seen.add(draft.fact)
        worded.add(draft.question)
        split = split_of(draft.anchor)
        if need.get(split, 0) == 0:
            continue
        need[split] -= 1
        out.append(
            Question(
                id=question_id(kind, draft.question, draft.answer),
                question=draft.question,
                answer=draft.answer,
                aliases=draft.aliases,
                answer_type=draft.answer_type,  # type: ignore[arg-type]
                kind=kind,
                difficulty=draft.difficulty,
                plan=draft.plan,
                extract=draft.extract,
                split=split,
                group=draft.anchor,
            )
        )
    return out


def _check_unique_ids(ids: Iterable[str]) -> None:
    listed = list(ids)
    if len(listed) != len(set(listed)):
        raise RuntimeError("two generated questions share an id")


# Generation in worker processes: each kind is drawn from its own stream, so the
# kinds can be drawn in parallel and give the same questions as one process.

_WORKER_CONTEXT: Any = None
"""The generators' :class:`~agentenv.envs.media_search.question_kinds.Context`, inherited by forked workers."""


def _kind_lines(job: tuple[int, int]) -> list[tuple[str, str, bytes]]:
    """In a worker: ``(split, id, canonical JSON)`` of each question of one kind (the context holds the style)."""
    k, seed = job
    return [
        (q.split, q.id, canonical_json(q))
        for q in _generate_kind(_WORKER_CONTEXT, k, seed, SPLIT_SIZES)
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
    return min(wanted, len(_kinds()))


class _Generation:
    """A generation of every split in progress: in a pool of forked workers, or (one worker) done at once.

    Why a handle: :func:`prefetch_questions` starts the workers and returns,
    so that the env builds its search index meanwhile; :meth:`lines` waits.
    """

    def __init__(
        self, catalog: Catalog, seed: int, workers: int, style: str = DEFAULT_STYLE
    ) -> None:
        import multiprocessing as mp

        from agentenv.envs.media_search.question_kinds import Context

        global _WORKER_CONTEXT
        kinds = _kinds()
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


_PENDING: dict[tuple[int, str], _Generation] = {}


def prefetch_questions(seed: int = GENERATION_SEED, style: str = DEFAULT_STYLE) -> None:
    """Start generating the questions in worker processes when they are not cached; return at once.

    :func:`question_rows` collects the result. Does nothing when every split
    is loaded or has a cache file (verified when read), or when there is one
    worker only (then the first :func:`question_rows` generates them).
    """
    if (seed, style) in _PENDING or all(
        (s, seed, style) in _LOADED or _cache_file(s, seed, style).is_file() for s in SPLIT_SIZES
    ):
        return
    workers = generation_workers()
    if workers > 1:
        from agentenv.corpora.media import load_catalog

        _PENDING[seed, style] = _Generation(load_catalog(), seed, workers, style)


# --------------------------------------------------------------------------- loading


def _cache_file(split: str, seed: int, style: str = DEFAULT_STYLE) -> Any:
    from agentenv.corpora.media import cache_path

    return cache_path().with_name(f"questions-v{QUESTIONS_FORMAT}-{style}-seed{seed}-{split}.json")


def _header(split: str, seed: int, style: str = DEFAULT_STYLE) -> dict[str, Any]:
    return {
        "format": QUESTIONS_FORMAT,
        "source_sha256": MOVIES_DB_SHA256,
        "seed": seed,
        "split": split,
        "style": style,
    }


class QuestionRows(Sequence[Question]):
    """A split's questions, read from the cache one line at a time, each on first access.

    Why: an env serves a few questions of 24,000 per process (a worker, an
    evaluation), so decoding all of them made up most of a warm ``gym.make``.
    The whole file is still verified against its sha256 when it is read.
    """

    def __init__(
        self,
        lines: Sequence[bytes] | None,
        questions: Sequence[Question] | None = None,
        where: str = "",
        checksum: str | None = None,
    ) -> None:
        if lines is None and questions is None:
            raise ValueError("QuestionRows needs the cached lines or the questions")
        self._lines = lines
        self._questions: list[Question | None] = (
            list(questions) if questions is not None else [None] * len(lines or ())
        )
        self._where = where
        self.checksum = checksum
        """The sha256 of the cached lines joined by newlines (the cache file's ``body_sha256``), when known:
        what a cache derived from these rows is keyed by."""

    @property
    def where(self) -> str:
        """The cache file the lines were read from or written to (empty when none)."""
        return self._where

    def __len__(self) -> int:
        return len(self._questions)

    @overload
    def __getitem__(self, index: int) -> Question: ...
    @overload
    def __getitem__(self, index: slice) -> list[Question]: ...
    def __getitem__(self, index: int | slice) -> Question | list[Question]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        q = self._questions[index]
        if q is None:
            q = self._questions[index] = self._decode(index)
        return q

    def __iter__(self) -> Iterator[Question]:
        for i in range(len(self)):
            yield self[i]

    def _decode(self, index: int) -> Question:
        assert self._lines is not None  # every slot is filled when built from questions
        try:
            return Question.from_dict(json.loads(self._lines[index]))
        except (ValueError, TypeError, KeyError) as err:
            raise RuntimeError(
                f"question {index} of the cache file {self._where} cannot be read ({err}); "
                "delete the file to regenerate it"
            ) from err

    def lines(self) -> Sequence[bytes]:
        """The canonical JSON of every question (see :func:`canonical_json`), without decoding any."""
        if self._lines is None:
            self._lines = [canonical_json(q) for q in self]
        return self._lines


_LOADED: dict[tuple[str, int, str], QuestionRows] = {}


def load_questions(
    split: str, *, seed: int = GENERATION_SEED, style: str = DEFAULT_STYLE
) -> list[Question]:
    """Return the questions of ``split`` ("train", "validation" or "test").

    The first call generates all splits from the catalog (a few seconds) and
    caches them next to it; later calls read the cache (verified by sha256;
    a corrupt file is regenerated). :func:`question_rows` is the same list,
    decoded on access.
    """
    return list(question_rows(split, seed=seed, style=style))


def question_rows(
    split: str, *, seed: int = GENERATION_SEED, style: str = DEFAULT_STYLE
) -> QuestionRows:
    """The questions of ``split`` in ``style`` as a read-only sequence that decodes each on first access."""
    if split not in SPLIT_SIZES:
        raise ValueError(f"unknown split {split!r}; use one of {', '.join(SPLIT_SIZES)}")
    if style not in STYLES:
        raise ValueError(f"unknown question style {style!r}; use one of {', '.join(STYLES)}")
    key = (split, seed, style)
    if key not in _LOADED:
        rows = (
            None if (seed, style) in _PENDING else _read_cached(split, seed, style)
        )  # a started one is collected
        if rows is None:
            _generate_and_cache(seed, style)
        else:
            _LOADED[key] = rows
    return _LOADED[key]


def _read_cached(split: str, seed: int, style: str) -> QuestionRows | None:
    path = _cache_file(split, seed, style)
    found = unpack_lines(path, _header(split, seed, style))
    if found is None:
        return None
    head, lines = found
    rows = QuestionRows(lines, where=str(path), checksum=head.get("body_sha256"))
    try:
        if (
            head.get("rows") != len(lines)
            or len(lines) != SPLIT_SIZES[split]
            or rows[0].split != split
        ):
            raise ValueError(f"{len(lines)} rows")
    except (ValueError, RuntimeError):
        log.warning(
            "cache file %s is corrupt: its rows do not match this version; rebuilding it", path
        )
        return None
    return rows


def _generate_and_cache(seed: int, style: str = DEFAULT_STYLE) -> None:
    from agentenv.corpora.media import load_catalog
    from agentenv.progress import build_step

    with build_step(f"generating the MediaSearch questions of every split ({style} style)"):
        generation = _PENDING.pop((seed, style), None) or _Generation(
            load_catalog(), seed, generation_workers(), style
        )
        splits = generation.lines()
        for name, lines in splits.items():
            published = PUBLISHED_CHECKSUMS[style].get(name)
            if seed == GENERATION_SEED and published and _checksum_of_lines(lines) != published:
                warnings.warn(
                    f"the generated {name!r} split ({style} style) differs from the published one "
                    "(a different numpy?); results are not comparable",
                    stacklevel=4,
                )
            header = {**_header(name, seed, style), "rows": len(lines)}
            path = _cache_file(name, seed, style)
            body = b"\n".join(lines)
            digest = hashlib.sha256(body).hexdigest()
            write_atomic(path, pack_bytes(header, body, digest=digest))
            _LOADED[(name, seed, style)] = QuestionRows(lines, where=str(path), checksum=digest)


def question_stats(seed: int = GENERATION_SEED, style: str = DEFAULT_STYLE) -> dict[str, Any]:
    """Return sizes, checksums and counts per kind, difficulty and answer type, per split."""
    stats: dict[str, Any] = {}
    for split in SPLIT_SIZES:
        questions = load_questions(split, seed=seed, style=style)
        stats[split] = {
            "size": len(questions),
            "sha256": split_checksum(questions),
            "kinds": dict(sorted(Counter(q.kind for q in questions).items())),
            "difficulty": dict(sorted(Counter(q.difficulty for q in questions).items())),
            "answer_types": dict(sorted(Counter(q.answer_type for q in questions).items())),
        }
    return stats
