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
* **One entry, one disease.** Every part of an entry must name the *same*
  single disease, or the entry is a wrong prediction. This is what keeps
  negations ("not Lowe syndrome"), hedges ("Lowe syndrome or Marfan
  syndrome", "Lowe syndrome (or Marfan syndrome)", "Marfan syndrome?") and
  lists squeezed into one line from being credited to either disease.
* **Ids.** ``OMIM:154700``, ``MIM #154700`` or a bare ``154700`` (and
  ``ORPHA:558`` in the ``omim+orpha`` universe), ASCII digits only. An entry
  of ids alone (separated by spaces, commas, ``/`` or ``|``) is a list: each
  distinct id counts as one prediction, so two ids on a line are two. A word
  between ids ("OMIM:154700 or OMIM:101200") makes the entry a hedge: one
  wrong prediction per id. An
  id outside the universe is a wrong entry. An entry with one id and other
  text is credited only when that text is the same disease's name:
  "Marfan syndrome (OMIM:154700)" and "OMIM:154700 - Marfan syndrome" are
  one correct prediction; "not OMIM:154700", "OMIM:154700 (unlikely)" and
  "Apert syndrome (OMIM:154700)" are one wrong prediction (an entry with
  several ids and other text counts one wrong prediction per id).
* **Names.** The whole entry is resolved by
  :class:`~agentenv.envs.rare_disease.disease_names.DiseaseNameIndex` (exact,
  synonym, normalised, reordered, typo-tolerant word by word: extra words are
  never absorbed). If the whole entry is no name, it is cut at brackets and
  at `` - `` / ``: `` separators, and every part must resolve to the same
  disease: "Marfan syndrome (MFS)" is Marfan syndrome; "Apert syndrome (most
  likely)" and "Marfan syndrome - classic habitus" are wrong, since a remark
  is not a name (reasoning belongs in ``<think>``, outside the answer). A
  question mark is a hedge: an entry holding one is wrong unless the
  disease's own name holds it. A name that does not resolve to exactly one
  disease is a wrong entry, never a guess.
* **Bounds.** Typo tolerance is tried for the first :data:`MAX_FUZZY_ENTRIES`
  name parts only, and entries past the :data:`MAX_READ_ENTRIES` th are not
  read at all: each counts as one wrong prediction (one per non-blank line
  or ``;`` part). Far above any limit k,
  these keep a 32 KB answer graded in a few milliseconds.
* **Duplicates** (the same disease again) are kept as entries: they count
  against the limit, and only the first can be a hit.

Every rule is applied in time linear in the answer's length.

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
from agentenv.envs.rare_disease.disease_names import MAX_NAME_CHARS, NameMatch, disease_name_index

MAX_FUZZY_ENTRIES = 20
"""Name parts past this many are matched exactly/normalised only (no typo tolerance)."""
MAX_READ_ENTRIES = 100
"""Entries past this many are not read: each counts as one wrong prediction (``how="unread"``)."""

_SPLIT = re.compile(r"[\n;]+")
_PARTS = re.compile(r"[^\n;]+")
_BULLET = re.compile(r"^\s*(?:[-*•·]+|\(?[0-9]{1,3}[.)])\s*")
_EMPHASIS = re.compile(r"\*\*|__|`")
# Each optional run is one bounded character class, so the regex never backtracks
# more than a constant per position (nested \s* runs made it cubic).
_IDS = re.compile(
    r"\b(?:(?P<orpha>ORPHA(?:NET)?[\s:#]{0,4}(?P<o>[0-9]{1,7}))|(?:(?:OMIM|MIM)[\s:#]{0,4})?(?P<m>[0-9]{6}))\b",
    re.IGNORECASE,
)
_ONLY_IDS = re.compile(r"[\s,/|]*")
_PART_SEPARATORS = re.compile(r"[()\[\]{}]|\s[-–—]+\s|:\s")
_PART_PUNCTUATION = " \t,.-–—:#"
_HEDGE = "?"
_NUMBER_STARTS = frozenset("1(")
_BULLET_MARKS = frozenset("-*•·")


def split_entries(text: str, limit: int | None = None) -> list[str]:
    """The entries of an answer, in order (see the module docstring); the first ``limit`` only, if given."""
    entries: list[str] = []
    for match in _PARTS.finditer(text):
        part = match.group(0).strip()
        if not part:
            continue
        inline = part[0] in _NUMBER_STARTS and ("2." in part or "2)" in part)
        for piece in _split_inline_numbers(part) if inline else (part,):
            if piece[0] in _BULLET_MARKS:
                piece = piece.lstrip("-*•· \t")
            elif piece[0] in _NUMBER_STARTS or piece[0].isdigit():
                piece = _BULLET.sub("", piece, count=1)
            if "*" in piece or "_" in piece or "`" in piece:
                piece = _EMPHASIS.sub("", piece)
            piece = piece.strip().strip("\"'").strip()
            if piece and piece[-1] != ":":
                entries.append(piece)
        if limit is not None and len(entries) >= limit:
            return entries[:limit]
    return entries


def count_entries_after(text: str, limit: int) -> int:
    """How many entries follow the first ``limit``: exact within the line that reaches the limit,
    then one per non-blank line or ``;`` part (counted, not parsed)."""
    for match in _PARTS.finditer(text):
        limit -= len(split_entries(match.group(0)))
        if limit <= 0:
            rest = text[match.end() :]
            later = sum(1 for part in _SPLIT.split(rest) if part.strip(" \t-*•·\"'`") and not part.rstrip().endswith(":"))
            return later - limit
    return 0


def _split_inline_numbers(line: str) -> list[str]:
    """'1. A 2. B 3. C' -> ['1. A', '2. B', '3. C'] (consecutive numbers only); one pass over the line."""
    first = re.match(r"^\(?1([.)])\s*", line)
    if not first:
        return [line]
    marker = re.compile(rf"\s\(?([0-9]{{1,4}}){re.escape(first.group(1))}(?=\s)")
    pieces, start, n = [], 0, 2
    for m in marker.finditer(line):
        if m.group(1) == str(n):
            pieces.append(line[start : m.start()].strip())
            start, n = m.start() + 1, n + 1
    pieces.append(line[start:].strip())
    return pieces


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
    """``id``, ``unknown_id``, a name stage (``exact`` … ``fuzzy``), or why a name failed:
    ``ambiguous``, ``hedged``, ``unresolved``, ``mixed`` (parts naming different diseases or none)."""
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
    unread: int = 0
    """Entries past :data:`MAX_READ_ENTRIES`: counted as wrong predictions, not read."""

    @property
    def ids(self) -> tuple[str | None, ...]:
        """The disease of each entry, in order (None for a wrong entry)."""
        return tuple(e.disease_id for e in self.entries)

    @property
    def n_predictions(self) -> int:
        """Every entry: resolved, unresolved, duplicates and unread."""
        return len(self.entries) + self.unread

    @property
    def unresolved(self) -> int:
        """Entries that named no disease of the universe (unread ones included)."""
        return sum(e.disease_id is None for e in self.entries) + self.unread

    def rank_of(self, diagnoses: Sequence[str]) -> int | None:
        """1-based position of the first entry naming an accepted diagnosis, or None."""
        accepted = set(diagnoses)
        for position, entry in enumerate(self.entries, 1):
            if entry.disease_id in accepted:
                return position
        return None


def resolve_answer(kb: HpoKnowledgeBase, text: str) -> ResolvedAnswer:
    """Split and resolve an answer against the KB's universe; never raises on any ``str``, linear time."""
    resolver = _EntryResolver(kb)
    entries: list[Entry] = []
    seen: set[str] = set()
    for piece in split_entries(text, MAX_READ_ENTRIES):
        for disease_id, how, written in resolver.resolve(piece):
            entries.append(Entry(written, disease_id, how, disease_id is not None and disease_id in seen))
            if disease_id is not None:
                seen.add(disease_id)
    unread = count_entries_after(text, MAX_READ_ENTRIES) if len(entries) >= MAX_READ_ENTRIES else 0
    return ResolvedAnswer(tuple(entries), unread)


class _EntryResolver:
    """Resolves entries one by one, counting name parts so typo tolerance stays bounded."""

    def __init__(self, kb: HpoKnowledgeBase) -> None:
        self.kb = kb
        self.names = disease_name_index(kb)
        self.name_parts = 0

    def resolve(self, piece: str) -> list[tuple[str | None, str, str]]:
        """``(disease or None, how, text)`` per prediction in one entry (see the module docstring)."""
        ids = _distinct(list(find_ids(piece)))
        rest = _IDS.sub(" ", piece) if ids else piece
        if ids and _ONLY_IDS.fullmatch(rest):
            return [self._by_id(m, m.group(0) if len(ids) > 1 else piece) for m in ids]
        if not ids:
            whole = self._name(piece)
            if whole.disease_id is not None or len(piece) > MAX_NAME_CHARS:
                return [(whole.disease_id, whole.how, piece)]
        parts = [p for p in (p.strip(_PART_PUNCTUATION) for p in _PART_SEPARATORS.split(rest)) if p]
        if not ids and len(parts) == 1 and parts[0] == piece.strip(_PART_PUNCTUATION):
            return [(whole.disease_id, whole.how, piece)]
        matches = [self._name(p) for p in parts]
        named = {m.disease_id for m in matches}
        if ids:
            named |= {canonical_id(m) for m in ids}
        if len(named) == 1 and None not in named and len(ids) <= 1:
            disease = next(iter(named))
            if not ids or self.kb.in_universe(disease):
                return [(disease, "id" if ids else matches[0].how, piece)]
        how = _failure(matches, ids)
        return [(None, how, piece)] * max(1, len(ids))

    def _by_id(self, match: re.Match[str], written: str) -> tuple[str | None, str, str]:
        did = canonical_id(match)
        return (did, "id", written) if self.kb.in_universe(did) else (None, "unknown_id", written)

    def _name(self, text: str) -> NameMatch:
        self.name_parts += 1
        found = self.names.resolve(text, fuzzy=self.name_parts <= MAX_FUZZY_ENTRIES)
        if found.disease_id is not None and _HEDGE in text and _HEDGE not in self.kb.disease_name(found.disease_id):
            return NameMatch(None, "hedged")
        return found


def _failure(matches: list[NameMatch], ids: list[re.Match[str]]) -> str:
    """Why an entry is wrong: ``ambiguous``/``hedged``/``unresolved`` for one name part, else ``mixed``."""
    if len(matches) == 1 and not ids and matches[0].disease_id is None:
        return matches[0].how
    if ids and len(ids) == 1 and not matches:
        return "unknown_id"
    return "mixed"


def _distinct(matches: list[re.Match[str]]) -> list[re.Match[str]]:
    """One match per distinct id, first occurrence kept: 'OMIM:154700 (154700)' is one prediction."""
    out, seen = [], set()
    for m in matches:
        key = canonical_id(m)
        if key not in seen:
            seen.add(key)
            out.append(m)
    return out
