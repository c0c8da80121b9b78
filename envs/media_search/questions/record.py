"""MediaSearch questions: the record, its id and split, the split checksums, and reading answers out of plans.

Generating the splits is :mod:`agentenv.envs.media_search.questions.generation`; their cache, read one
question at a time, is :mod:`agentenv.envs.media_search.questions.cache`.

Why generated questions with gold plans: every question comes with a list
of concrete tool calls that answers it and an ``extract`` rule that reads the
answer out of those calls' outputs. A scripted oracle that runs the plan
through the env and applies :func:`execute_plan_extract` to the *real* tool
outputs proves that each question is answerable with the tools; the tests do
this for the whole test split. :func:`execute_plan_extract` needs no question
generated or loaded, only a plan's ``extract`` rule and the outputs.

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
    >>> execute_plan_extract({"op": "only", "step": 0, "field": "title"},
    ...                      [{"count": 1, "results": [{"title": "Inception"}]}])
    'Inception'
    >>> split_of("tt1375666") in SPLIT_SIZES
    True
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from copy import deepcopy
from dataclasses import dataclass, field
from typing import Any, Literal

from agentenv.corpora.media.catalog import normalize_key

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
the plain way (:mod:`~agentenv.envs.media_search.questions.styles`); ``template``
questions unchanged."""
STYLES = ("varied", "template")
"""Question styles (:mod:`~agentenv.envs.media_search.questions.styles`): ``varied`` (default, mostly casual
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
    cached = getattr(questions, "lines", None)  # QuestionRows: its lines as read, none decoded
    lines = cached() if callable(cached) else [canonical_json(q) for q in questions]
    return checksum_of_lines(lines)


def checksum_of_lines(lines: Sequence[bytes]) -> str:
    # json.dumps of a list with separators (",", ":") is "[" + ",".join(items) + "]", item by item.
    return hashlib.sha256(b"[" + b",".join(lines) + b"]").hexdigest()


# ---------------------------------------------------------------- reading answers out of plans
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
                raise ValueError(
                    f"expected exactly one matching title, the tool found {out.get('count')}"
                )
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
            present = {
                normalize_key(str(x))
                for x in _at(_output(outputs, extract["step"]), extract["path"])
            }
            found = [o for o in extract["options"] if normalize_key(o) in present]
            if len(found) != 1:
                raise ValueError(f"expected exactly one option in the list, found {len(found)}")
            return found[0]
    except (IndexError, KeyError, TypeError) as exc:
        raise ValueError(f"cannot apply {dict(extract)} to the outputs: {exc!r}") from exc
    raise ValueError(f"unknown extract op {op!r}")
