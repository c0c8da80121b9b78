"""Is a rare-disease task answerable in this env? A check for your own patients.

Why: an imported patient's diagnosis may be an id the env's universe does not
hold, or a disease with no phenotype annotations, which no tool can lead an
agent to by its findings. The oracle would still score it (it answers the
gold id), so ``agentenv check-tasks`` runs this instead.

It is the family's ``Family.solvability``.
"""

from __future__ import annotations

from typing import Any

from agentenv.core import Task


def why_unreachable(env: Any, task: Task) -> str | None:
    """``None`` when some diagnosis is in the env's universe and has annotations, else why not."""
    kb = env.unwrapped.kb
    patient = task.case
    diagnoses = list(getattr(patient, "diagnoses", ()) or ())
    if not diagnoses:
        return "the task names no diagnosis"
    known = [d for d in diagnoses if kb.in_universe(d)]
    if not known:
        return f"diagnosis {', '.join(diagnoses)} is not in the {kb.universe} universe of HPO {kb.release}"
    annotated = [d for d in known if len(kb.phenotype_indices(kb.disease_index[d])) > 0]
    if not annotated:
        return (
            f"diagnosis {', '.join(known)} has no phenotype annotations, so no finding leads to it"
        )
    if not getattr(patient, "present", ()):
        return "the patient presents no known phenotype, so nothing leads to a diagnosis"
    return None
