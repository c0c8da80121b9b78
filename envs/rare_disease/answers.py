"""Turn the text of an ``<answer>`` into a ranked list of predicted diseases.

Why strict: the reward counts how many diseases an answer lists (listing
more than k scores 0 under the default preset), so the count must be
unambiguous and impossible to game by formatting. The rules:

* **Entries.** The answer is split on newlines and semicolons. Bullets
  (``-``, ``*``, ``•``) and list numbers (``1.``, ``2)``) are stripped; a line
  that starts with ``1.`` is also split at ``2.``, ``3.``, … written inline.
  Commas split only ids (``OMIM:154700, OMIM:609192``), never names, since
  OMIM names hold commas ("Neurofibromatosis, type II"). Blank entries and
  headings (an entry ending in ``:``) are dropped.
* **Ids.** ``OMIM:154700``, ``MIM #154700`` or a bare ``154700`` (and
  ``ORPHA:558`` in the ``omim+orpha`` universe). An entry with ids is
  resolved by its ids alone, each id one prediction: "Marfan syndrome
  (OMIM:154700)" is one prediction; two ids on a line are two. An id outside
  the universe is a wrong entry.
* **Names.** Everything else is resolved by
  :class:`~agentenv.envs.rare_disease.disease_names.DiseaseNameIndex` (exact,
  synonym, normalised, reordered, fuzzy); if that fails, once more without
  parenthesised remarks and without a trailing `` - remark``. Fuzzy matching is
  tried for the first :data:`MAX_FUZZY_ENTRIES` name entries only, to bound
  the cost of very long answers. A name that does not resolve to exactly one
  disease is a wrong entry, never a guess.
* **Duplicates** (the same disease again) are kept as entries: they count
  against the limit, and only the first can be a hit.

Example:
    >>> split_entries("1. Marfan syndrome 2. Loeys-Dietz syndrome\\n- OMIM:154700, 609192")
    ['Marfan syndrome', 'Loeys-Dietz syndrome', 'OMIM:154700, 609192']
    >>> [m.group(0) for m in find_ids("OMIM:154700, 609192 and MIM #101200; HP:0001166")]
    ['OMIM:154700', '609192', 'MIM #101200']
    >>> canonical_id(next(find_ids("mim 154700")))
    'OMIM:154700'
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from agentenv.corpora.hpo import HpoKnowledgeBase
from agentenv.envs.rare_disease.disease_names import disease_name_index

MAX_FUZZY_ENTRIES = 50
"""Name entries past this many are matched exactly/normalised only (no fuzzy matching)."""

_SPLIT = re.compile(r"[\n;]+")
_BULLET = re.compile(r"^\s*(?:[-*•·]+|\(?\d{1,3}[.)])\s*")
_EMPHASIS = re.compile(r"\*\*|__|`")
_IDS = re.compile(
    r"\b(?:(?P<orpha>ORPHA(?:NET)?\s*[:#]?\s*(?P<o>\d{1,7}))|(?:(?:OMIM|MIM)\s*[:#]?\s*#?\s*)?(?P<m>\d{6}))\b",
    re.IGNORECASE,
)
_ONLY_IDS = re.compile(r"^(?:[\s,/|]|\band\b|\bor\b)*$", re.IGNORECASE)
_PARENS = re.compile(r"\s*[(\[][^()\[\]]*[)\]]")
_REMARK = re.compile(r"\s+[-–—:]\s+.*$")


def split_entries(text: str) -> list[str]:
    """The entries of an answer, in order (see the module docstring)."""
    entries: list[str] = []
    for part in _SPLIT.split(text):
        inline = _split_inline_numbers(part.strip())
        for piece in inline:
            piece = _EMPHASIS.sub("", _BULLET.sub("", piece, count=1)).strip().strip("\"'").strip()
            if piece and not piece.endswith(":"):
                entries.append(piece)
    return entries


def _split_inline_numbers(line: str) -> list[str]:
    """'1. A 2. B 3. C' -> ['1. A', '2. B', '3. C'] (consecutive numbers only)."""
    first = re.match(r"^\(?1([.)])\s*", line)
    if not first:
        return [line]
    pieces, rest, n = [], line, 2
    while True:
        m = re.search(rf"\s\(?{n}\{first.group(1)}\s", rest)
        if not m:
            pieces.append(rest)
            return pieces
        pieces.append(rest[: m.start()])
        rest, n = rest[m.start() :].strip(), n + 1


def find_ids(text: str) -> Iterator[re.Match[str]]:
    """Disease-id matches in a text (OMIM with or without prefix, ORPHA)."""
    return _IDS.finditer(text)


def canonical_id(match: re.Match[str]) -> str:
    """``OMIM:nnnnnn`` or ``ORPHA:n`` for one :func:`find_ids` match."""
    if match.group("orpha"):
        return f"ORPHA:{int(match.group('o'))}"
    return f"OMIM:{match.group('m')}"


@dataclass(frozen=True)
class Entry:
    """One prediction: what was written, which disease it names (None: wrong entry), how it resolved."""

    text: str
    disease_id: str | None
    how: str
    """``id``, ``unknown_id`` or a name stage (``exact`` … ``fuzzy``, ``ambiguous``, ``unresolved``)."""
    duplicate: bool = False
    """The disease was already named by an earlier entry."""


@dataclass(frozen=True)
class ResolvedAnswer:
    """A ranked list of predictions; every entry counts, resolved or not.

    Example:
        >>> r = ResolvedAnswer((Entry("x", None, "unresolved"), Entry("OMIM:1", "OMIM:1", "id")))
        >>> r.n_predictions, r.unresolved, r.ids, r.rank_of(["OMIM:1"])
        (2, 1, (None, 'OMIM:1'), 2)
    """

    entries: tuple[Entry, ...]

    @property
    def ids(self) -> tuple[str | None, ...]:
        """The disease of each entry, in order (None for a wrong entry)."""
        return tuple(e.disease_id for e in self.entries)

    @property
    def n_predictions(self) -> int:
        """Every entry: resolved, unresolved and duplicates."""
        return len(self.entries)

    @property
    def unresolved(self) -> int:
        """Entries that named no disease of the universe."""
        return sum(e.disease_id is None for e in self.entries)

    def rank_of(self, diagnoses: Sequence[str]) -> int | None:
        """1-based position of the first entry naming an accepted diagnosis, or None."""
        accepted = set(diagnoses)
        for position, entry in enumerate(self.entries, 1):
            if entry.disease_id in accepted:
                return position
        return None


def resolve_answer(kb: HpoKnowledgeBase, text: str) -> ResolvedAnswer:
    """Split and resolve an answer against the KB's universe; never raises on any ``str``."""
    names = disease_name_index(kb)
    entries: list[Entry] = []
    seen: set[str] = set()
    name_entries = 0

    def add(piece: str, disease_id: str | None, how: str) -> None:
        entries.append(Entry(piece, disease_id, how, disease_id is not None and disease_id in seen))
        if disease_id is not None:
            seen.add(disease_id)

    for piece in split_entries(text):
        ids = list(find_ids(piece))
        if ids:
            for match in ids if _ONLY_IDS.match(_IDS.sub("", piece)) else _distinct(ids):
                did = canonical_id(match)
                known = kb.in_universe(did)
                add(match.group(0) if len(ids) > 1 else piece, did if known else None, "id" if known else "unknown_id")
            continue
        name_entries += 1
        fuzzy = name_entries <= MAX_FUZZY_ENTRIES
        found = names.resolve(piece, fuzzy=fuzzy)
        if found.disease_id is None:
            for variant in (_PARENS.sub("", piece), _REMARK.sub("", _PARENS.sub("", piece))):
                if variant and variant != piece:
                    retry = names.resolve(variant, fuzzy=fuzzy)
                    if retry.disease_id is not None:
                        found = retry
                        break
        add(piece, found.disease_id, found.how)
    return ResolvedAnswer(tuple(entries))


def _distinct(matches: list[re.Match[str]]) -> list[re.Match[str]]:
    """One match per distinct id, first occurrence kept: 'OMIM:154700 (154700)' is one prediction."""
    out, seen = [], set()
    for m in matches:
        key = canonical_id(m)
        if key not in seen:
            seen.add(key)
            out.append(m)
    return out
