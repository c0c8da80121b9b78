"""Argument models of the rare-disease tools: validated, bounded, and documented for the agent.

Why separate: the models are the tools' public schema (what the agent reads
in ``info["tools"]``), so they are kept apart from the tool bodies. Every
model forbids unknown fields and bounds every size, so a tool body only
ever sees well-formed, small input.

Example:
    >>> RankArgs(hpo_ids=["HP:0001166"]).k
    10
    >>> GetDiseaseArgs.model_json_schema()["properties"]["disease_id"]["maxLength"]
    40
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


_HPO_ID = Field(min_length=1, max_length=20, description="An HPO term id, e.g. 'HP:0001166'.")


class SearchDiseasesArgs(_Args):
    """Words to search disease names and annotated phenotypes for."""

    query: str = Field(
        min_length=1,
        max_length=500,
        description="Free text: a disease name, or findings such as 'long slender fingers dislocated lens'.",
    )
    k: int = Field(default=10, ge=1, le=20, description="Number of diseases to return (1-20).")


class GetDiseaseArgs(_Args):
    """Which disease profile to show."""

    disease_id: str = Field(
        min_length=1, max_length=40, description="A disease id, e.g. 'OMIM:154700' (or '154700')."
    )


class LookupPhenotypeArgs(_Args):
    """A finding to look up in the Human Phenotype Ontology."""

    text: str = Field(
        min_length=1,
        max_length=200,
        description="A label, synonym or lay phrase ('big head', 'seizures'), or an HPO id.",
    )
    limit: int = Field(
        default=10, ge=1, le=25, description="Maximum number of terms to return (1-25)."
    )


class PhenotypeRelativesArgs(_Args):
    """Which term's parents and children to show."""

    hpo_id: str = _HPO_ID


class RankArgs(_Args):
    """Findings to rank all diseases by."""

    hpo_ids: list[str] = Field(
        min_length=1,
        max_length=50,
        description="HPO ids of the patient's present findings, e.g. ['HP:0001166', 'HP:0000545'].",
    )
    k: int = Field(default=10, ge=1, le=20, description="Number of diseases to return (1-20).")


class AskPatientArgs(_Args):
    """Which finding to ask the patient about."""

    hpo_id: str = Field(
        min_length=1,
        max_length=20,
        description="HPO id of the finding to ask about, e.g. 'HP:0001250' (find ids with lookup_phenotype).",
    )
