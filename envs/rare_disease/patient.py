"""The :class:`Patient` record: one rare-disease case, simulated, real or imported.

Its own module, at the family's root because ``patients/``, ``dialogue/`` and
``tasks/`` all read it, so that the sampler
(:mod:`agentenv.envs.rare_disease.patients.simulated`, which re-exports it), the
presentation protocol (:mod:`agentenv.envs.rare_disease.patients.presentation`)
and the patient's answers (:mod:`agentenv.envs.rare_disease.dialogue.patient_answers`)
share it without importing each other.

Example:
    >>> Patient("OMIM:1", present=("HP:0001250",), findings=("HP:0001250",)).all_present
    ('HP:0001250',)
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Patient"]


@dataclass(frozen=True)
class Patient:
    """One case: what is shown, what is hidden, what is absent, and the diagnosis.

    Attributes:
        disease_id: the gold diagnosis (a universe disease id).
        present: visible presenting terms, as reported (possibly imprecise or noise).
        hidden: present findings not reported; revealed by :func:`~agentenv.envs.rare_disease.dialogue.patient_answers.ask`.
        excluded: terms reported absent.
        findings: the patient's true findings (precise disease terms and noise,
            hidden ones included). Private: used to answer questions, never shown.
        seed: the patient seed (``sample_case(disease_id, seed)`` rebuilds it); None when imported.
        source: ``"simulated"`` or the file/record it was imported from.
        closed_world: True when every finding is known, so a question about anything
            else is answered "no"; False (every simulated, real and imported patient since
            the one presentation protocol, :mod:`~agentenv.envs.rare_disease.patients.presentation`): "unknown" ("not sure").
        also_accept: other diagnoses that count as correct (imported cases with several).
        row_id: the ``id`` its task row or phenopacket gave it ("" otherwise), carried into each
            episode record (:attr:`agentenv.engine.task.Task.row_id`).
    """

    disease_id: str
    present: tuple[str, ...]
    hidden: tuple[str, ...] = ()
    excluded: tuple[str, ...] = ()
    findings: tuple[str, ...] = ()
    seed: int | None = None
    source: str = "simulated"
    closed_world: bool = True
    also_accept: tuple[str, ...] = ()
    row_id: str = ""

    @property
    def all_present(self) -> tuple[str, ...]:
        """Visible then hidden present terms (what a fully informed ranker would see)."""
        return self.present + tuple(h for h in self.hidden if h not in self.present)

    @property
    def diagnoses(self) -> tuple[str, ...]:
        """Every accepted diagnosis, the gold one first."""
        return (self.disease_id, *self.also_accept)
