"""Readers of RareDiseaseDiagnosis's public prompt: findings, candidates, the limit; the family's one set.

Why a module of its own: everything the family's prompt-reading policies know
comes through these functions (the structured menus, ``structured.py``, with
the tool outputs they decode as JSON; the bm25 strategy, ``bm25_strategy.py``),
so the no-leakage promise is checkable here, and a change to the prompt format
(docs/envs/rare_disease.md) is followed in one place. Each reader takes the
prompt the env showed the agent and nothing else.

Example:
    >>> disease_limit("List up to 5 diseases."), listed_candidates(" 1. OMIM:100100 Some syndrome")
    (5, ['OMIM:100100'])
"""

from __future__ import annotations

import re

_HPO_LINE = re.compile(r"^-\s+(HP:\d{7})\s*(.*)$")
_CANDIDATE = re.compile(r"^\s*\d+\.\s+((?:OMIM|ORPHA):\d+)\b", re.MULTILINE)
_LIMIT = re.compile(r"up to (\d+) diseases")


def _block(prompt: str, heading: str) -> list[tuple[str, str]]:
    body = prompt.partition(heading)[2].partition("\n\n")[0]
    return [
        (m.group(1), m.group(2).strip())
        for line in body.splitlines()
        if (m := _HPO_LINE.match(line.strip()))
    ]


def presented_phenotypes(prompt: str) -> list[tuple[str, str]]:
    """``(HPO id, label)`` of each presented phenotype (empty with ``presentation="text"``)."""
    return _block(prompt, "Present phenotypes:\n")


def excluded_phenotypes(prompt: str) -> list[tuple[str, str]]:
    """``(HPO id, label)`` of each excluded phenotype."""
    return _block(prompt, "Excluded phenotypes:\n")


def presented_query(prompt: str) -> str:
    """The presented findings as a search query: their labels, or the lay sentence, or the prompt.

    Example:
        >>> presented_query("Present phenotypes:\\n- HP:0001166 Arachnodactyly\\n- HP:0000545 Myopia\\n\\n"
        ...                 "Excluded phenotypes:\\n- HP:0001250 Seizure")
        'Arachnodactyly Myopia'
        >>> presented_query("The patient presents with long fingers and short sight. Who is it?")
        'long fingers and short sight'
    """
    labels = [label for _, label in presented_phenotypes(prompt) if label]
    if labels:
        return " ".join(labels)
    sentence = re.search(r"The patient presents with (.*?)\.(?:\s|$)", prompt, re.DOTALL)
    return sentence.group(1) if sentence else prompt


def listed_candidates(prompt: str) -> list[str]:
    """Disease ids the prompt lists as candidates (single-turn), best first."""
    return _CANDIDATE.findall(prompt)


def disease_limit(prompt: str) -> int:
    """The prompt's "up to N diseases", else 3."""
    found = _LIMIT.search(prompt)
    return int(found.group(1)) if found else 3


def warns_over_limit(prompt: str) -> float:
    """1.0 when the prompt says that listing too many diseases is scored down (it says so unless the reward allows it)."""
    return 1.0 if re.search(r"Listing more than \d+ diseases", prompt) else 0.0
