"""Read the text of an ``<answer>`` as a ranked list of diseases, by a closed grammar.

Why closed: the reward counts how many diseases an answer lists and whether
the gold is among the first k, so an answer must say exactly which diseases
it names, and nothing else. The grammar (documented on the env page,
"What counts as an answer"):

* **Entries** are separated by newlines and ``;``. Each entry may carry the
  decoration of :mod:`agentenv.engine.answer_grammar` (a list marker, bold, quotes,
  a trailing period) and nothing else.
* **An entry is one disease reference**, one of:

  - an id: ``OMIM:154700``, ``OMIM 154700``, ``MIM #154700``, ``154700``
    (and ``ORPHA:558`` in the ``omim+orpha`` universe), ASCII digits;
  - several ids separated by commas: ``OMIM:154700, OMIM:609192`` is two
    entries;
  - a name: a primary name or listed synonym, spelled by the rules of
    :mod:`~agentenv.envs.rare_disease.grading.disease_names` (no typo tolerance);
    in the ``omim+orpha`` universe a name matching exactly a pair of twins
    (one disease in both catalogs, :mod:`~.disease_twins`) names that
    disease, a twin's name goes with either id in ``Name (id)``, and a later
    entry naming its twin is a duplicate;
  - ``Name (id)``, ``id (Name)``, ``id - Name``, ``id: Name`` or ``id Name``,
    where the name is one of that id's own names, whatever characters it
    holds (``Glaucoma - sleep apnea (OMIM:137763)``); the name part may be
    wrapped as a whole entry may (``**Marfan syndrome** (OMIM:154700)``,
    :func:`~agentenv.engine.answer_grammar.strip_wrappers`).

* **Anything else makes the whole answer unreadable**: accuracy 0, and
  ``feedback`` says which entry and why ("entry 2: 'not' is not a disease
  name or id"). That covers negations and remarks in their own entry
  (``Ruled out:``, ``not``), hedges (``G?``, ``G or H``), symbols (``¬G``,
  ``G ❌``), markup (``~~G~~``, ``<!-- G -->``), headings, and ids outside
  the universe. Nothing is silently dropped.
* **Bounds.** Entries past :data:`MAX_READ_ENTRIES` are not read; such an
  answer is unreadable (far above any limit k). An entry longer than
  :data:`~agentenv.envs.rare_disease.grading.disease_names.MAX_NAME_CHARS` is no
  name. Every rule is linear in the answer's length.
* **Duplicates** (the same disease again) are kept as entries: they count
  against the limit, and only the first can be a hit.

Example:
    >>> [m.group(0) for m in find_ids("OMIM:154700, 609192 and MIM #101200; HP:0001166")]
    ['OMIM:154700', '609192', 'MIM #101200']
    >>> canonical_id(next(find_ids("mim 154700")))
    'OMIM:154700'
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from agentenv.corpora.hpo.knowledge_base import HpoKnowledgeBase
from agentenv.engine.answer_grammar import (
    LIST_MARKER,
    answer_entries,
    count_entries,
    quoted,
    strip_decoration,
    strip_wrappers,
)
from agentenv.engine.spelling import SpellingIndex
from agentenv.envs.rare_disease.grading.disease_names import MAX_NAME_CHARS, disease_spelling_index
from agentenv.envs.rare_disease.grading.disease_twins import disease_twins

MAX_READ_ENTRIES = 100
"""Entries past this many are not read: the answer is unreadable (and far over any limit k)."""
ENTRY_SEPARATORS = "\n;"

# find_ids: ids inside free text (tool arguments, patient replies); each optional run is one
# bounded character class, so the regex never backtracks more than a constant per position.
_IDS = re.compile(
    r"\b(?:(?P<orpha>ORPHA(?:NET)?[\s:#]{0,4}(?P<o>[0-9]{1,7}))|(?:(?:OMIM|MIM)[\s:#]{0,4})?(?P<m>[0-9]{6}))\b",
    re.IGNORECASE,
)
# The grammar's id: the whole reference, no free text around it.
_ID = r"(?:(?:OMIM|MIM)[ ]?[:#]?[ ]?[0-9]{6}|[0-9]{6}|ORPHA(?:NET)?[ ]?[:#]?[ ]?[0-9]{1,7})"
_ONE_ID = re.compile(_ID, re.IGNORECASE)
_ID_LIST = re.compile(rf"{_ID}(?:[ \t]*,[ \t]*{_ID})+", re.IGNORECASE)
_ID_THEN_PAREN_NAME = re.compile(rf"(?P<id>{_ID})[ \t]*\((?P<name>.+)\)", re.IGNORECASE | re.DOTALL)
_ID_THEN_NAME = re.compile(
    rf"(?P<id>{_ID})(?:[ \t]*[-\u2013\u2014:][ \t]*|[ \t]+)(?P<name>.+)", re.IGNORECASE | re.DOTALL
)
_DIGITS = re.compile(r"[0-9]+")


def name_then_id(entry: str) -> tuple[str, str] | None:
    """``(name, id)`` of an entry written ``Name (id)``, else None; linear in the entry's length.

    Why not one pattern: ``(?P<name>.+?)[ \\t]*\\((?P<id>…)\\)`` tried every split of a run of
    spaces or tabs between the name and the bracket, so 81 entries of 400 tabs took 27-35 ms to
    grade. The id is the last bracket's content; the name is what comes before it, without the
    blanks next to the bracket (at least one character, as the pattern had it).

    Example:
        >>> name_then_id("Marfan syndrome (type 1) \\t(OMIM:154700)")
        ('Marfan syndrome (type 1)', 'OMIM:154700')
        >>> name_then_id("a" + "\\t" * 400 + "(OMIM:") is None, name_then_id("(OMIM:154700)") is None
        (True, True)
    """
    if not entry.endswith(")"):
        return None
    opened = entry.rfind("(")
    if opened < 1 or _ONE_ID.fullmatch(entry, opened + 1, len(entry) - 1) is None:
        return None
    before = entry[:opened]
    return before.rstrip(" \t") or before[:1], entry[opened + 1 : -1]


def find_ids(text: str) -> Iterator[re.Match[str]]:
    """Disease-id matches inside free text (OMIM with or without prefix, ORPHA); not the answer grammar."""
    return _IDS.finditer(text)


def canonical_id(match: re.Match[str]) -> str:
    """``OMIM:nnnnnn`` or ``ORPHA:n`` for one :func:`find_ids` match."""
    if match.group("orpha"):
        return f"ORPHA:{int(match.group('o'))}"
    return f"OMIM:{match.group('m')}"


def id_of(written: str) -> str:
    """The canonical id of a grammar id (``MIM #154700`` → ``OMIM:154700``, ``ORPHA 0558`` → ``ORPHA:558``)."""
    digits = _DIGITS.search(written)
    assert digits is not None  # a grammar id always holds digits
    if written[:1] in "oO" and written[1:2] in "rR":
        return f"ORPHA:{int(digits.group(0))}"
    return f"OMIM:{digits.group(0)}"


@dataclass(frozen=True)
class Entry:
    """One prediction: what was written, which disease it names (None: not read as one), how it was read."""

    text: str
    disease_id: str | None
    how: str
    """``id``, ``name`` (an ``exact`` or ``numeral`` spelling), ``name_id`` (``Name (id)`` and its forms),
    or why it is no reference: ``unreadable``, ``unknown_id``, ``ambiguous``, ``mismatch``."""
    duplicate: bool = False
    """The disease was already named by an earlier entry."""


@dataclass(frozen=True)
class ResolvedAnswer:
    """A ranked list of predictions; every entry counts, read or not.

    Example:
        >>> r = ResolvedAnswer((Entry("OMIM:2", "OMIM:2", "id"), Entry("OMIM:1", "OMIM:1", "id")))
        >>> r.n_predictions, r.unresolved, r.ids, r.rank_of(["OMIM:1"]), r.unreadable
        (2, 0, ('OMIM:2', 'OMIM:1'), 2, None)
        >>> bad = ResolvedAnswer((Entry("not", None, "unreadable"),), unreadable="entry 1: ...")
        >>> bad.rank_of(["OMIM:1"]) is None, bad.unresolved
        (True, 1)
    """

    entries: tuple[Entry, ...]
    unread: int = 0
    """Entries past :data:`MAX_READ_ENTRIES`: counted as predictions, not read."""
    unreadable: str | None = None
    """Why the answer does not parse (the first entry that is no reference); None if it does."""

    @property
    def ids(self) -> tuple[str | None, ...]:
        """The disease of each entry, in order (None for an entry that is no reference)."""
        return tuple(e.disease_id for e in self.entries)

    @property
    def n_predictions(self) -> int:
        """Every entry: read, unreadable, duplicates and unread."""
        return len(self.entries) + self.unread

    @property
    def unresolved(self) -> int:
        """Entries that named no disease of the universe (unread ones included)."""
        return sum(e.disease_id is None for e in self.entries) + self.unread

    def rank_of(self, diagnoses: Sequence[str]) -> int | None:
        """1-based position of the first entry naming an accepted diagnosis; None if absent or unreadable."""
        if self.unreadable is not None:
            return None
        accepted = set(diagnoses)
        for position, entry in enumerate(self.entries, 1):
            if entry.disease_id in accepted:
                return position
        return None

    @property
    def feedback(self) -> str:
        """How the answer was read, for ``info["answer_feedback"]``: the reason it is unreadable,
        or the diseases it names in order."""
        if self.unreadable is not None:
            return f"unreadable answer: {self.unreadable}"
        if not self.entries:
            return "unreadable answer: it names no disease"
        shown = ", ".join(str(e.disease_id) for e in self.entries[:10])
        more = f" and {self.n_predictions - 10} more" if self.n_predictions > 10 else ""
        return f"read {self.n_predictions} prediction(s): {shown}{more}"


def resolve_answer(kb: HpoKnowledgeBase, text: str) -> ResolvedAnswer:
    """Read an answer against the KB's universe (see the module docstring); never raises on a ``str``."""
    reader = _EntryReader(kb)
    entries: list[Entry] = []
    reasons: list[str] = []
    seen: set[str] = set()
    number = 0
    for number, raw in answer_entries(text, ENTRY_SEPARATORS, MAX_READ_ENTRIES):
        marker = LIST_MARKER.match(raw)
        written = marker.group(0).rstrip(" \t.)") if marker is not None else ""
        if written.isdigit() and int(written) != number:
            # "3. A / 1. B": the entries' order is the ranking, and the numbers say another one
            reasons.append(
                f"entry {number} is numbered {written}: list the diseases in the order "
                "of their rank (the numbers, if any, 1, 2, 3)"
            )
        for disease_id, how, reason in reader.read(strip_decoration(raw)):
            entries.append(
                Entry(raw, disease_id, how, disease_id is not None and disease_id in seen)
            )
            if disease_id is not None:
                seen.add(disease_id)
                seen.add(reader.twins.get(disease_id, disease_id))  # a twin names the same disease
            if reason is not None:
                reasons.append(f"entry {number}: {reason}")
    unread = (
        count_entries(text, ENTRY_SEPARATORS) - MAX_READ_ENTRIES
        if number >= MAX_READ_ENTRIES
        else 0
    )
    if unread > 0:
        reasons.append(f"{unread} entries past the {MAX_READ_ENTRIES}th are not read")
    unreadable = None
    if reasons:
        unreadable = reasons[0] + (f" (and {len(reasons) - 1} more)" if len(reasons) > 1 else "")
    return ResolvedAnswer(tuple(entries), max(unread, 0), unreadable)


class _EntryReader:
    """Reads one entry (decoration removed) as one or more disease references, or says why it is none."""

    def __init__(self, kb: HpoKnowledgeBase) -> None:
        self.kb = kb
        self.names: SpellingIndex = disease_spelling_index(kb)
        self.twins = disease_twins(kb)

    def read(self, core: str) -> list[tuple[str | None, str, str | None]]:
        """``(disease or None, how, reason or None)`` per prediction in one entry."""
        if not core:
            return [(None, "unreadable", "nothing but decoration (a bullet, a number, bold)")]
        if len(core) > MAX_NAME_CHARS:
            return [(None, "unreadable", f"{len(core)} characters is no disease name or id")]
        core = unicodedata.normalize("NFKC", core)
        if _ONE_ID.fullmatch(core):
            return [self._by_id(core)]
        if _ID_LIST.fullmatch(core):
            return [self._by_id(m.group(0)) for m in _ONE_ID.finditer(core)]
        named = self.names.lookup(core)
        if named.ref is not None:
            return [(named.ref, "name", None)]
        if named.how == "ambiguous":
            if len(named.refs) == 2 and self.twins.get(named.refs[0]) == named.refs[1]:
                return [(named.refs[0], "name", None)]  # one disease in two catalogs
            return [
                (
                    None,
                    "ambiguous",
                    f"{quoted(core)} names {len(named.refs)} diseases "
                    f"({', '.join(named.refs[:4])}): write the id",
                )
            ]
        named_id = name_then_id(core)
        if named_id is not None:
            return [self._name_with_id(*named_id)]
        pair = _ID_THEN_PAREN_NAME.fullmatch(core) or _ID_THEN_NAME.fullmatch(core)
        if pair is not None:
            return [self._name_with_id(pair.group("name"), pair.group("id"))]
        return [(None, "unreadable", f"{quoted(core)} is not a disease name or id")]

    def _by_id(self, written: str) -> tuple[str | None, str, str | None]:
        did = id_of(written)
        if self.kb.in_universe(did):
            return did, "id", None
        return None, "unknown_id", f"{did} is not a disease of the {self.kb.universe} universe"

    def _name_with_id(self, name: str, written_id: str) -> tuple[str | None, str, str | None]:
        did, how, reason = self._by_id(written_id)
        if did is None:
            return did, how, reason
        name = strip_wrappers(name)
        named = self.names.lookup(name, narrow=False)
        if did in named.refs or self.twins.get(did) in named.refs:  # a twin's name is its name too
            return did, "name_id", None
        return None, "mismatch", f"{quoted(name)} is not a name of {did}"
