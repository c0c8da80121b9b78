"""Twins: one disease listed in two catalogs (OMIM and Orphanet) under the same name.

Why: under the ``omim+orpha`` universe Floating-Harbor syndrome is both
OMIM:136140 and ORPHA:2044. Without a cross-map its name matched two diseases
and was refused as ambiguous, and the other catalog's id scored 0, although
both name the disease the patient has.

The cross-map is built from data the package already ships: HPO's
``phenotype.hpoa`` (release 2025-01-16, through
:class:`~agentenv.corpora.hpo.knowledge_base.HpoKnowledgeBase`). That file carries no
OMIM↔Orphanet cross-references (its ``reference`` column cites each
disease's own catalog or papers), so twins are found by name:

* an OMIM disease and an Orphanet disease are **twins** when their primary
  names spell the same words under the answer grammar's own name rules
  (:mod:`~.disease_names`: case, hyphen = space, possessive, accents, and
  ``type II`` = ``type 2`` = ``2``) **and** no other disease of the universe
  has a primary name with those words. A name shared by two OMIM entries (8
  such, e.g. "Nasopharyngeal carcinoma"), or by more than one disease of a
  catalog, makes no twins: it stays ambiguous;
* 657 pairs in HPO 2025-01-16 (578 spelled alike word for word; 79 more
  differ only in how they write the type number, e.g. "Gaucher disease,
  type I" = "Gaucher disease type 1").

What twins change (only where the universe holds two catalogs; the default
``omim`` universe has no twins, and nothing changes there): a name whose
matches are exactly a pair of twins names that disease
(:mod:`~.answers`), and an answer naming either twin is credited for a
patient with the other (:mod:`~.grading`). The rule is by name only: a
catalog entry that names a group of disorders under the same words as an
entry of the other catalog is twinned with it.

Example:
    >>> twin_key("Gaucher disease, type I") == twin_key("Gaucher disease type 1")
    True
    >>> twin_key("Floating-Harbor syndrome") == twin_key("Floating Harbor syndrome")
    True
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache

from agentenv.corpora.hpo.knowledge_base import HpoKnowledgeBase
from agentenv.engine.spelling import Spelling, apply_rule, spell_once, without_accents
from agentenv.envs.rare_disease.grading.disease_names import numeral_rule


def twin_key(name: str) -> str:
    """The words a primary name is matched on: the name rules' spelling, accents and marks aside."""
    spelled = spell_once(name)
    plain = Spelling(tuple(without_accents(w) for w in spelled.words), ())
    return " ".join(apply_rule(numeral_rule, plain).words)


@lru_cache(maxsize=4)
def disease_twins(kb: HpoKnowledgeBase) -> Mapping[str, str]:
    """Each twinned disease id -> its twin's id (both directions); empty for a one-catalog universe."""
    prefixes = {d.split(":", 1)[0] for d in kb.disease_ids}
    if len(prefixes) < 2:
        return {}
    return twins_by_name((d, kb.disease_name(d)) for d in kb.disease_ids)


def twins_by_name(diseases: Iterable[tuple[str, str]]) -> dict[str, str]:
    """The twins among ``(id, primary name)`` pairs (see the module docstring).

    Example:
        >>> twins_by_name([("OMIM:1", "A syndrome"), ("ORPHA:9", "A Syndrome"), ("OMIM:2", "B"),
        ...                ("OMIM:3", "B"), ("ORPHA:8", "B")])
        {'OMIM:1': 'ORPHA:9', 'ORPHA:9': 'OMIM:1'}
    """
    by_key: dict[str, list[str]] = defaultdict(list)
    for disease_id, name in diseases:
        by_key[twin_key(name)].append(disease_id)
    twins: dict[str, str] = {}
    for ids in by_key.values():
        if len(ids) == 2:
            a, b = ids
            if a.split(":", 1)[0] != b.split(":", 1)[0]:
                twins[a], twins[b] = b, a
    return twins


def with_twins(kb: HpoKnowledgeBase, diagnoses: Sequence[str]) -> tuple[str, ...]:
    """The accepted diagnoses and their twins, the given ones first (unchanged without twins)."""
    twins = disease_twins(kb)
    if not twins:
        return tuple(diagnoses)
    return tuple(dict.fromkeys([*diagnoses, *(twins[d] for d in diagnoses if d in twins)]))
