"""What the rare-disease agent reads: the Task of a patient, the system prompt and the answer rules.

Why a module of its own: the prompt is the contract with the policy, so its
wording (the answer format and what listing more than k costs) sits in one
place, apart from the env mechanics, and says only what is public: the
presenting phenotypes, never the seed, hidden findings or diagnosis.

A patient's Task:

* ``prompt``: the rendered presentation (visible present terms, excluded terms);
* ``public``: ``phenotypes`` and ``excluded`` (the ids shown), ``universe``;
* ``gold``: ``{"diagnosis": [accepted ids, gold first], "name": primary name}``;
* ``private``: ``{"patient": Patient}`` (hidden findings, seed);
* ``kind``: ``simulated`` or ``imported``; ``difficulty``: where the
  reference ranker puts the gold from the visible terms: ``easy`` (rank 1),
  ``medium`` (2-10) or ``hard`` (beyond 10), so evaluations report accuracy
  on cases the ranker solves and on cases it misses.

Example:
    >>> print(answer_rules(3, "omim", "zero"))
    Give the final answer as <answer>…</answer> with up to 3 diseases, one per line, as OMIM ids (e.g. OMIM:154700) or disease names, most likely first, and nothing else: a line that is no disease makes the answer unreadable. Listing more than 3 diseases scores 0.
    >>> answer_rules(3, "omim", "allow").endswith("makes the answer unreadable.")
    True
"""

from __future__ import annotations

from collections.abc import Sequence

from agentenv.core import Task
from agentenv.corpora.hpo.knowledge_base import HpoKnowledgeBase
from agentenv.engine.tools import ToolRegistry
from agentenv.envs.rare_disease.patients.lay_text import render_patient
from agentenv.envs.rare_disease.patients.simulated import Patient
from agentenv.envs.rare_disease.tools.diagnosis_tools import reference_ranker


def difficulty_of(kb: HpoKnowledgeBase, patient: Patient) -> str:
    """``easy`` / ``medium`` / ``hard``: the reference ranker's rank of the gold (1 / 2-10 / beyond)."""
    top = [d for d, _ in reference_ranker(kb).rank(patient.present, k=10)]
    ranks = [top.index(d) for d in patient.diagnoses if d in top]
    if not ranks:
        return "hard"
    return "easy" if min(ranks) == 0 else "medium"


def patient_task(kb: HpoKnowledgeBase, patient: Patient, presentation: str, split: str) -> Task:
    """The Task of one patient (see the module docstring)."""
    return Task(
        prompt=render_patient(kb, patient, presentation),  # type: ignore[arg-type]
        gold={"diagnosis": list(patient.diagnoses), "name": kb.disease_name(patient.disease_id)},
        split=split,
        family="rare_disease",
        kind="simulated" if patient.seed is not None else "imported",
        difficulty=difficulty_of(kb, patient),
        public={
            "phenotypes": list(patient.present),
            "excluded": list(patient.excluded),
            "universe": kb.universe,
        },
        case=patient,
        row_id=patient.row_id,
    )


def answer_rules(k: int, universe: str, over_limit: str) -> str:
    """The answer format, and what an over-limit answer costs under the env's reward config."""
    ids = (
        "OMIM ids (e.g. OMIM:154700)"
        if universe == "omim"
        else "OMIM or ORPHA ids (e.g. OMIM:154700, ORPHA:558)"
    )
    text = (
        f"Give the final answer as <answer>…</answer> with up to {k} diseases, one per line, "
        f"as {ids} or disease names, most likely first, and nothing else: "
        "a line that is no disease makes the answer unreadable."
    )
    if over_limit == "zero":
        text += f" Listing more than {k} diseases scores 0."
    elif over_limit == "penalty":
        text += f" Listing more than {k} diseases is penalised."
    return text


def candidates_block(kb: HpoKnowledgeBase, ranking: Sequence[tuple[str, float]]) -> str:
    """The reference ranker's candidates, as shown in single-turn prompts."""
    lines = [f"{i}. {did} {kb.disease_name(did)}" for i, (did, _) in enumerate(ranking, 1)]
    return (
        "Candidates from a phenotype-similarity search (best first; may not include the diagnosis):\n"
        + "\n".join(lines)
    )


def system_prompt(
    kb: HpoKnowledgeBase,
    tools: ToolRegistry,
    max_turns: int,
    rules: str,
    tools_in_prompt: bool = False,
) -> str:
    """The role, the tools (if any), the turn budget and the answer rules.

    With ``tools_in_prompt`` each tool gets a line (signature and description); without it only
    their names, since the chat template renders their JSON schemas (``info["tools"]``) anyway.
    """
    role = (
        "You are a clinical geneticist. Name the rare disease of a patient from their phenotypes, "
        f"described with the Human Phenotype Ontology (HPO release {kb.release}); diseases come from "
        f"{' and '.join(p for p in kb.universe.upper().split('+'))}."
    )
    if not len(tools):
        return f"{role}\n{rules}"
    lines = [
        role,
        'Call a tool with <tool_call>{"name": TOOL, "arguments": {...}}</tool_call>; '
        "several calls in one turn are allowed. " + tools.prompt_text(tools_in_prompt),
    ]
    if "ask_patient" in tools:
        lines.append(
            "The referral may not list every finding: ask_patient tells you whether the patient has one."
        )
    lines.append(f"You have at most {max_turns} turns. {rules}")
    return "\n".join(lines)
