"""One presentation protocol for every patient: simulated, real (``split="real"``) or the user's own.

Why one protocol: a case read with ``tasks=`` used to show every recorded term
and hide nothing, while a simulated patient hid 40% of its findings, so the
same agent met two different tasks and scores on simulated patients could not
predict scores on real ones. Now every case is a *record* (its present
findings, its recorded exclusions, its diagnoses) presented the same way:

* in multi-turn mode a seeded share of the findings (``hidden_fraction``, 40%
  by default) is hidden until asked about, at least ``min_visible`` (3) stay
  presented; single-turn hides nothing;
* every recorded exclusion is presented;
* the patient answers from the full record, in an open world
  (:mod:`~.patient_answers`): "yes" for a recorded finding and its ancestors,
  "no" for a recorded exclusion and anything under one, "not sure" for
  anything the record does not say.

Simulated patients draw their hidden share inside the sampler
(:meth:`~.patients.PatientSampler.sample_case`, with :func:`hidden_mask`); a
record read from a file is presented by :func:`present_record`, its seed a
hash of the record, so the same file always shows the same presentation; a
file's records are planned together (:mod:`~.presentation_plan`) so that no
two show the same presentation.

Example:
    >>> import numpy as np
    >>> hidden_mask(5, 0.4, 3, np.random.default_rng(0)).count(False) >= 3
    True
"""

from __future__ import annotations

import dataclasses
import hashlib
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from agentenv.envs.rare_disease.patient import Patient

MAX_ATTEMPTS = 20
"""Seeded hiding draws a record may be shown by, before its whole (see :mod:`~.presentation_plan`)."""


def hidden_mask(n: int, fraction: float, min_visible: int, rng: np.random.Generator) -> list[bool]:
    """Which of ``n`` findings are hidden: each with probability ``fraction``, at least ``min_visible`` shown."""
    hidden = rng.random(n) < fraction
    n_keep = min(min_visible, n)
    if (~hidden).sum() < n_keep:
        reveal = rng.permutation(np.flatnonzero(hidden))[: n_keep - (~hidden).sum()]
        hidden[reveal] = False
    return hidden.tolist()


def record_seed(patient: Patient, attempt: int = 0) -> int:
    """The presentation seed of a record: a hash of its findings, exclusions and diagnoses (order aside)."""
    findings = sorted(patient.findings or patient.all_present)
    text = repr((findings, sorted(patient.excluded), list(patient.diagnoses), attempt))
    return int.from_bytes(
        hashlib.sha256(f"agentenv/rare-disease/presentation/v1:{text}".encode()).digest()[:8], "big"
    )


def present_record(
    patient: Patient, hidden_fraction: float, min_visible: int, attempt: int = 0
) -> Patient:
    """A record with a seeded share of its findings hidden; the presented ones keep the record's order."""
    findings = tuple(dict.fromkeys(patient.findings or patient.all_present))
    if hidden_fraction <= 0:
        return dataclasses.replace(patient, present=findings, hidden=(), findings=findings)
    mask = hidden_mask(
        len(findings),
        hidden_fraction,
        min_visible,
        np.random.default_rng(record_seed(patient, attempt)),
    )
    shown = tuple(t for t, h in zip(findings, mask, strict=True) if not h)
    hidden = tuple(t for t, h in zip(findings, mask, strict=True) if h)
    return dataclasses.replace(patient, present=shown, hidden=hidden, findings=findings)
