"""Where in its kind's random stream each shipped test and validation question was drawn, so a fresh home
makes the one split it is asked for from those ~1,000 drafts instead of drawing all 26,000 questions.

Why: drawing every split costs ~10 s of CPU on a first use (most of it the 24,000 train questions),
while an evaluation serves the test split only. Each kind draws from its own stream
(``default_rng([seed, k])``) and a draft depends only on the catalog and the stream's state, so
replaying a question's draft from the position it started at gives the same question, bit for bit.
The file holds positions, not questions: the questions are still made from the catalog by the
generators. A replayed split is checked against its published sha256; on a mismatch (another numpy,
a changed generator or catalog) the caller draws every split as before.

A position is the number of 64-bit outputs the PCG64 stream had given before the draft; or, when
half of an output was held back for a later 32-bit draw (numpy's ``has_uint32``), ``[outputs, back]``
where the held half is the high half of the output ``back`` places before the last one given.

Maintainers: after a change to the generators, ``python -m agentenv.envs.media_search.questions.draws``
rewrites the file (it draws every split once per style).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from agentenv.envs.media_search.questions.record import (
    GENERATION_SEED,
    PUBLISHED_CHECKSUMS,
    QUESTIONS_FORMAT,
    SPLIT_SIZES,
    STYLES,
    Question,
    canonical_json,
    checksum_of_lines,
    split_of,
)

DRAWS_FILE = Path(__file__).with_name("question_draws.json")
REPLAYED_SPLITS = ("test", "validation")
"""The splits the file holds; train (24,000 questions) is drawn in full when asked for."""
DRAWS_FORMAT = 1

_PCG64_MULTIPLIER = 0x2360ED051FC65DA44385DF649FCCF645
"""numpy's PCG64 LCG multiplier (``PCG_DEFAULT_MULTIPLIER_128``)."""
_MASK = (1 << 128) - 1


def lcg_distance(start: int, end: int, increment: int) -> int:
    """How many steps the PCG64 LCG (numpy's multiplier, ``increment``) takes from state ``start`` to ``end``.

    Bit by bit, as ``pcg_distance`` in the PCG reference code does (after O'Neill, *PCG: A Family of
    Simple Fast Space-Efficient Statistically Good Algorithms for Random Number Generation*, 2014).

    Example:
        >>> g = np.random.default_rng([1, 2]).bit_generator
        >>> s0 = g.state["state"]
        >>> _ = g.random_raw(37)
        >>> lcg_distance(s0["state"], g.state["state"]["state"], s0["inc"])
        37
    """
    mult, plus, bit, distance = _PCG64_MULTIPLIER, increment, 1, 0
    while start != end:
        if (start & bit) != (end & bit):
            start = (start * mult + plus) & _MASK
            distance |= bit
        bit <<= 1
        plus = ((mult + 1) * plus) & _MASK
        mult = (mult * mult) & _MASK
    return distance


Position = int | list[int]
"""See the module docstring."""

_HELD_SEARCH = 1 << 16
"""How far back :func:`position` looks for the output whose high half is held (a recording error past it)."""


def position(stream: np.random.Generator, state: dict[str, Any]) -> Position:
    """The position (see the module docstring) of ``state`` in the fresh ``stream``."""
    first = stream.bit_generator.state["state"]
    steps = lcg_distance(first["state"], state["state"]["state"], first["inc"])
    if not state["has_uint32"]:
        return steps
    look = min(steps, _HELD_SEARCH)
    bits = np.random.PCG64()
    bits.state = {**stream.bit_generator.state}
    bits.advance(steps - look)
    high = bits.random_raw(look) >> np.uint64(32)
    found = np.flatnonzero(high == np.uint64(state["uinteger"]))
    if not len(found):
        raise RuntimeError(f"the held half of a 32-bit draw is not within {look} outputs")
    return [steps, int(look - 1 - found[-1])]


def stream_at(seed: int, k: int, pos: Position) -> np.random.Generator:
    """The ``k``-th kind's stream, moved to ``pos`` (see the module docstring)."""
    rng = np.random.default_rng([seed, k])
    bits = rng.bit_generator
    steps, back = (pos, None) if isinstance(pos, int) else pos
    if back is None:
        bits.advance(steps)
        return rng
    bits.advance(steps - 1 - back)
    held = int(bits.random_raw()) >> 32  # the high half a 32-bit draw keeps for the next one
    bits.advance(back)
    state = bits.state
    state["has_uint32"], state["uinteger"] = 1, held
    bits.state = state
    return rng


def record(
    catalog: Any, style: str, seed: int = GENERATION_SEED
) -> dict[str, dict[str, list[Position]]]:
    """Draw every split of ``style`` and return, per replayed split and kind, its questions' positions."""
    from agentenv.envs.media_search.questions.generation import generate_kind, kind_names
    from agentenv.envs.media_search.questions.kinds import Context

    ctx = Context(catalog, style)
    out: dict[str, dict[str, list[Position]]] = {s: {} for s in REPLAYED_SPLITS}
    for k, kind in enumerate(kind_names()):
        states: list[dict[str, Any]] = []
        questions = generate_kind(ctx, k, seed, SPLIT_SIZES, draws=states)
        fresh = np.random.default_rng([seed, k])
        for split in REPLAYED_SPLITS:
            out[split][kind] = [
                position(fresh, st)
                for q, st in zip(questions, states, strict=True)
                if q.split == split
            ]
    return out


def _read_file(path: Path = DRAWS_FILE) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if (
        not isinstance(data, dict)
        or data.get("format") != DRAWS_FORMAT
        or data.get("questions_format") != QUESTIONS_FORMAT
    ):
        return None
    return data


def replay_split(
    catalog: Any, split: str, style: str, seed: int = GENERATION_SEED, path: Path = DRAWS_FILE
) -> list[bytes] | None:
    """The canonical JSON lines of ``split`` made from the shipped positions, sorted by id; ``None`` when
    the file does not hold the split, or when what it gives is not the published split (draw all then)."""
    from agentenv.envs.media_search.questions.generation import draft_question, kind_names
    from agentenv.envs.media_search.questions.kinds import GENERATORS, Context

    published = PUBLISHED_CHECKSUMS.get(style, {}).get(split)
    data = _read_file(path)
    if data is None or split not in REPLAYED_SPLITS or data.get("seed") != seed:
        return None
    kinds = data.get("styles", {}).get(style, {}).get(split)
    if published is None or not isinstance(kinds, dict) or list(kinds) != kind_names():
        return None
    ctx = Context(catalog, style)
    questions: list[Question] = []
    for k, (kind, generate) in enumerate(GENERATORS.items()):
        for pos in kinds[kind]:
            draft = generate(ctx, stream_at(seed, k, pos))
            if draft is None or split_of(draft.anchor) != split:
                return None
            questions.append(draft_question(kind, draft, split))
    lines = [canonical_json(q) for q in sorted(questions, key=lambda q: q.id)]
    if len(lines) != SPLIT_SIZES[split] or checksum_of_lines(lines) != published:
        return None
    return lines


def write_file(catalog: Any, path: Path = DRAWS_FILE, styles: Sequence[str] = STYLES) -> None:
    """Record every style's positions into ``path`` (compact JSON, one kind's list per line)."""
    data = {
        "format": DRAWS_FORMAT,
        "questions_format": QUESTIONS_FORMAT,
        "seed": GENERATION_SEED,
        "styles": {style: record(catalog, style) for style in styles},
    }
    path.write_text(json.dumps(data, separators=(",", ":")) + "\n", encoding="utf-8")
    for style in styles:
        for split in REPLAYED_SPLITS:
            if replay_split(catalog, split, style, path=path) is None:
                raise RuntimeError(
                    f"{path}: the {style} {split} split does not replay as published"
                )


if __name__ == "__main__":  # pragma: no cover - a maintainers' tool
    from agentenv.corpora.media.catalog import load_catalog

    write_file(load_catalog())
    print(f"wrote {DRAWS_FILE}")
