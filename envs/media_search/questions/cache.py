"""The MediaSearch questions on disk: each split made once per home (test and validation alone, from the
shipped draw positions; train by drawing every split), written as canonical JSON lines
behind a checksummed header, and read back one question at a time (:class:`QuestionRows`)."""

from __future__ import annotations

import hashlib
import json
import logging
import warnings
from collections import Counter
from collections.abc import Iterator, Sequence
from typing import Any, overload

from agentenv.corpora.media.catalog import MOVIES_DB_SHA256
from agentenv.corpora.media.files import paused_gc, write_atomic
from agentenv.envs.media_search.questions.generation import Generation, generation_workers
from agentenv.envs.media_search.questions.record import (
    DEFAULT_STYLE,
    GENERATION_SEED,
    PUBLISHED_CHECKSUMS,
    QUESTIONS_FORMAT,
    SPLIT_SIZES,
    STYLES,
    Question,
    canonical_json,
    checksum_of_lines,
    split_checksum,
)
from agentenv.storage.checksummed_cache import pack_bytes, unpack_lines

log = logging.getLogger(__name__)

_PENDING: dict[tuple[int, str], Generation] = {}


def prefetch_questions(
    seed: int = GENERATION_SEED, style: str = DEFAULT_STYLE, split: str | None = None
) -> None:
    """Start generating the questions in worker processes when they are not cached; return at once.

    :func:`question_rows` collects the result. Does nothing when every split
    is loaded or has a cache file (verified when read), when there is one
    worker only (then the first :func:`question_rows` generates them), or when
    ``split`` is one the shipped draw positions make alone (faster than drawing all).
    """
    from agentenv.envs.media_search.questions.draws import REPLAYED_SPLITS

    if split in REPLAYED_SPLITS and seed == GENERATION_SEED:
        return
    if (seed, style) in _PENDING or all(
        (s, seed, style) in _LOADED or _cache_file(s, seed, style).is_file() for s in SPLIT_SIZES
    ):
        return
    workers = generation_workers()
    if workers > 1:
        from agentenv.corpora.media.catalog import load_catalog

        _PENDING[seed, style] = Generation(load_catalog(), seed, workers, style)


# --------------------------------------------------------------------------- loading


def _cache_file(split: str, seed: int, style: str = DEFAULT_STYLE) -> Any:
    from agentenv.corpora.media.catalog import cache_path

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

    The first call makes the test or validation split alone from the shipped
    draw positions (:mod:`.question_draws`, under a second), or draws every
    split (train, or when those do not give the published split: ~10 s of
    CPU), and caches them next to the catalog; later calls read the cache (verified by sha256;
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
        if rows is None and not _replay_and_cache(split, seed, style):
            _generate_and_cache(seed, style)
        elif rows is not None:
            _LOADED[key] = rows
    return _LOADED[key]


def _replay_and_cache(split: str, seed: int, style: str) -> bool:
    """Make ``split`` alone from the shipped draw positions (:mod:`.question_draws`) and cache it; ``False``
    when that cannot give the published split (then every split is drawn).

    Why: a first evaluation serves the test split; drawing all three made up most of its cold start.
    """
    from agentenv.corpora.media.catalog import load_catalog
    from agentenv.envs.media_search.questions.draws import REPLAYED_SPLITS, replay_split
    from agentenv.storage.progress import build_step

    if split not in REPLAYED_SPLITS or (seed, style) in _PENDING:
        return False
    catalog = load_catalog()
    with build_step(f"making the MediaSearch {split} questions ({style} style)"), paused_gc():
        lines = replay_split(catalog, split, style, seed)
    if lines is None:
        return False
    _write_split(split, seed, style, lines)
    return True


def _write_split(split: str, seed: int, style: str, lines: list[bytes]) -> None:
    header = {**_header(split, seed, style), "rows": len(lines)}
    path = _cache_file(split, seed, style)
    body = b"\n".join(lines)
    digest = hashlib.sha256(body).hexdigest()
    write_atomic(path, pack_bytes(header, body, digest=digest))
    _LOADED[(split, seed, style)] = QuestionRows(lines, where=str(path), checksum=digest)


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
    from agentenv.corpora.media.catalog import load_catalog
    from agentenv.storage.progress import build_step

    with build_step(f"generating the MediaSearch questions of every split ({style} style)"):
        generation = _PENDING.pop((seed, style), None) or Generation(
            load_catalog(), seed, generation_workers(), style
        )
        splits = generation.lines()
        for name, lines in splits.items():
            published = PUBLISHED_CHECKSUMS[style].get(name)
            if seed == GENERATION_SEED and published and checksum_of_lines(lines) != published:
                warnings.warn(
                    f"the generated {name!r} split ({style} style) differs from the published one "
                    "(a different numpy?); results are not comparable",
                    stacklevel=4,
                )
            _write_split(name, seed, style, lines)


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
