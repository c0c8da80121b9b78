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
import warnings
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

import numpy as np

from agentenv.corpora.media import MOVIES_DB_SHA256, Catalog, normalize_key
from agentenv.corpora.media_files import pack, paused_gc, unpack, write_atomic

AnswerType = Literal["title", "person", "number", "year", "text"]
"""Generated questions use the first four; ``"text"`` is a free-text answer of your own questions."""
Split = Literal["train", "validation", "test"]

GENERATION_SEED = 20260
"""Seed of the published splits."""
QUESTIONS_FORMAT = 3
"""Bump when generation changes; cached splits of older formats are regenerated."""
SPLIT_SIZES: dict[str, int] = {"train": 24_000, "validation": 1_000, "test": 1_000}
KIND_SHARES: dict[str, float] = {"lookup": 0.2, "constraint": 0.2, "superlative": 0.15,
                                 "two_hop": 0.15, "comparison": 0.15, "count": 0.15}
"""Share of each kind in every split (sizes × shares are whole numbers)."""
SPLIT_BUCKETS = {"test": 800, "validation": 1600}
"""A group whose hash bucket (0-9999) is below 800 is test, below 1600 validation, else train."""
SPLIT_CHECKSUMS: dict[str, str] = {
    "train": "53c4e31721fb8cc3ec4c31d328ce5ee4cdde8eaba42cbeaa416942eccb28b8ef",
    "validation": "556db6db28b3ef6ffce220d00ef1e0b34ce3d2a089b45c0141921a7b93d6b200",
    "test": "b33799c0d0b433413a30bc65ec0cee49c1d56f44625d19278f8205dc5912a8df",
}
"""sha256 of each published split (see :func:`split_checksum`)."""


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
        """Return a JSON-ready dict (tuples become lists)."""
        data = asdict(self)
        data["aliases"] = list(self.aliases)
        data["plan"] = None if self.plan is None else list(self.plan)
        return data

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
    blob = json.dumps([kind, question, answer], ensure_ascii=False).encode()
    return "mq-" + hashlib.sha256(blob).hexdigest()[:16]


def split_of(group: str) -> Split:
    """Return the split of a question group (stable: a hash, not a random draw)."""
    digest = hashlib.sha256(f"agentenv-media-split-v1|{group}".encode()).digest()
    bucket = int.from_bytes(digest[:8], "big") % 10_000
    return "test" if bucket < SPLIT_BUCKETS["test"] else "validation" if bucket < SPLIT_BUCKETS["validation"] else "train"


def split_checksum(questions: Sequence[Question]) -> str:
    """Return the sha256 of a question list in canonical JSON."""
    blob = json.dumps([q.to_dict() for q in questions], sort_keys=True, ensure_ascii=False,
                      separators=(",", ":")).encode()
    return hashlib.sha256(blob).hexdigest()


def quota(split: str, kind: str, sizes: Mapping[str, int] = SPLIT_SIZES) -> int:
    """Number of questions of ``kind`` in ``split``."""
    return round(sizes[split] * KIND_SHARES[kind])


def generate_questions(
    catalog: Catalog, seed: int = GENERATION_SEED, sizes: Mapping[str, int] = SPLIT_SIZES
) -> dict[str, list[Question]]:
    """Generate every split from ``catalog`` with ``np.random.default_rng``.

    Each kind draws from its own stream (``default_rng([seed, k])``), so
    changing one generator leaves the others' questions unchanged. A draft is
    dropped if ambiguous, if its fact was already drawn, or if its split is
    full; drawing stops when every split has its quota of the kind.
    """
    from agentenv.envs.media_search.question_kinds import GENERATORS, Context

    ctx = Context(catalog)
    out: dict[str, list[Question]] = {s: [] for s in sizes}
    for k, (kind, generate) in enumerate(GENERATORS.items()):
        rng = np.random.default_rng([seed, k])
        need = {s: quota(s, kind, sizes) for s in sizes}
        seen: set[str] = set()
        budget = 200 * sum(need.values()) + 10_000
        while any(need.values()):
            budget -= 1
            if budget < 0:
                raise RuntimeError(f"could not generate enough {kind!r} questions: still need {need}")
            draft = generate(ctx, rng)
            if draft is None or draft.fact in seen:
                continue
            seen.add(draft.fact)
            split = split_of(draft.anchor)
            if need.get(split, 0) == 0:
                continue
            need[split] -= 1
            out[split].append(Question(
                id=question_id(kind, draft.question, draft.answer), question=draft.question,
                answer=draft.answer, aliases=draft.aliases, answer_type=draft.answer_type,  # type: ignore[arg-type]
                kind=kind, difficulty=draft.difficulty, plan=draft.plan, extract=draft.extract,
                split=split, group=draft.anchor,
            ))
    for questions in out.values():
        questions.sort(key=lambda q: q.id)
    ids = [q.id for qs in out.values() for q in qs]
    if len(ids) != len(set(ids)):
        raise RuntimeError("two generated questions share an id")
    return out


# --------------------------------------------------------------------------- loading


def _cache_file(split: str, seed: int) -> Any:
    from agentenv.corpora.media import cache_path

    return cache_path().with_name(f"questions-v{QUESTIONS_FORMAT}-seed{seed}-{split}.json")


def _header(split: str, seed: int) -> dict[str, Any]:
    return {"format": QUESTIONS_FORMAT, "source_sha256": MOVIES_DB_SHA256, "seed": seed, "split": split}


_LOADED: dict[tuple[str, int], list[Question]] = {}


def load_questions(split: str, *, seed: int = GENERATION_SEED) -> list[Question]:
    """Return the questions of ``split`` ("train", "validation" or "test").

    The first call generates all splits from the catalog (a few seconds) and
    caches them next to it; later calls read the cache (verified by sha256;
    a corrupt file is regenerated).
    """
    if split not in SPLIT_SIZES:
        raise ValueError(f"unknown split {split!r}; use one of {', '.join(SPLIT_SIZES)}")
    key = (split, seed)
    if key not in _LOADED:
        with paused_gc():
            body = unpack(_cache_file(split, seed), _header(split, seed))
            if isinstance(body, list) and len(body) == SPLIT_SIZES[split]:
                try:
                    _LOADED[key] = [Question.from_dict(row) for row in body]
                except (TypeError, KeyError):
                    pass
        if key not in _LOADED:
            _generate_and_cache(seed)
    return list(_LOADED[key])


def _generate_and_cache(seed: int) -> None:
    from agentenv.corpora.media import load_catalog
    from agentenv.progress import build_step

    catalog = load_catalog()
    with build_step("generating the MediaSearch questions of every split"):
        splits = generate_questions(catalog, seed)
    for name, questions in splits.items():
        published = SPLIT_CHECKSUMS.get(name)
        if seed == GENERATION_SEED and published and split_checksum(questions) != published:
            warnings.warn(f"the generated {name!r} split differs from the published one "
                          "(a different numpy?); results are not comparable", stacklevel=3)
        write_atomic(_cache_file(name, seed), pack(_header(name, seed), [q.to_dict() for q in questions]))
        _LOADED[(name, seed)] = questions


def question_stats(seed: int = GENERATION_SEED) -> dict[str, Any]:
    """Return sizes, checksums and counts per kind, difficulty and answer type, per split."""
    stats: dict[str, Any] = {}
    for split in SPLIT_SIZES:
        questions = load_questions(split, seed=seed)
        stats[split] = {
            "size": len(questions),
            "sha256": split_checksum(questions),
            "kinds": dict(sorted(Counter(q.kind for q in questions).items())),
            "difficulty": dict(sorted(Counter(q.difficulty for q in questions).items())),
            "answer_types": dict(sorted(Counter(q.answer_type for q in questions).items())),
        }
    return stats


# --------------------------------------------------------------------------- extraction


def _at(output: Any, path: str) -> Any:
    value = output
    for part in path.split(".") if path else ():
        if isinstance(value, list) and part.lstrip("-").isdigit():
            value = value[int(part)]
        elif isinstance(value, Mapping) and part in value:
            value = value[part]
        else:
            raise ValueError(f"path {path!r}: no {part!r} in the tool output")
    return value


def _output(outputs: Sequence[Any], step: int) -> Any:
    out = outputs[step]
    if not isinstance(out, Mapping):
        raise ValueError(f"step {step} did not return a JSON object: {str(out)[:200]}")
    return out


def _text(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def execute_plan_extract(extract: Mapping[str, Any], outputs: Sequence[Any]) -> str:
    """Read the answer out of a plan's tool outputs (parsed JSON), following ``extract``.

    Raises ``ValueError`` when the outputs do not support one answer (a tool
    error, a missing field, a tie, a filter matching several titles), so a
    broken plan is loud instead of producing a wrong answer.
    """
    op = extract.get("op")
    try:
        if op == "field":
            return _text(_at(_output(outputs, extract["step"]), extract["path"]))
        if op == "only":
            out = _output(outputs, extract["step"])
            if out.get("count") != 1:
                raise ValueError(f"expected exactly one matching title, the tool found {out.get('count')}")
            return _text(out["results"][0][extract["field"]])
        if op in ("argmin", "argmax"):
            rows = [_output(outputs, s) for s in extract["steps"]]
            values = [row.get(extract["field"]) for row in rows]
            if any(v is None for v in values):
                raise ValueError(f"a compared output has no {extract['field']!r}")
            best = min(values) if op == "argmin" else max(values)
            winners = [row for row, v in zip(rows, values, strict=True) if v == best]
            if len(winners) != 1:
                raise ValueError(f"tie on {extract['field']!r}")
            return _text(winners[0][extract["return"]])
        if op == "member":
            present = {normalize_key(str(x)) for x in _at(_output(outputs, extract["step"]), extract["path"])}
            found = [o for o in extract["options"] if normalize_key(o) in present]
            if len(found) != 1:
                raise ValueError(f"expected exactly one option in the list, found {len(found)}")
            return found[0]
    except (IndexError, KeyError, TypeError) as exc:
        raise ValueError(f"cannot apply {dict(extract)} to the outputs: {exc!r}") from exc
    raise ValueError(f"unknown extract op {op!r}")
