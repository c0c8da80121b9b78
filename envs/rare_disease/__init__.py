"""RareDiseaseDiagnosis: phenotypes in, top-k diseases out (single-agent ids and the doctor-patient dialogue).

This ``__init__`` only builds the family's :class:`~agentenv.families.Family`
record (``FAMILY``), which the package declares as an entry point; every
reference in it is a ``"module:attribute"`` string, so importing it builds
and imports nothing heavy.
"""

from __future__ import annotations

from agentenv.families import DialogueSpec, EnvSpec, Family

_ENV = "agentenv.envs.rare_disease.env:RareDiseaseEnv"

FAMILY = Family(
    name="rare_disease",
    envs=(
        EnvSpec(
            "RareDiseaseDiagnosis-v0",
            _ENV,
            {"mode": "multi_turn", "max_turns": 10},
            "Multi-turn diagnosis: presenting phenotypes, then disease search, profiles, HPO lookup, "
            "the reference ranker and ask_patient; a final top-3.",
        ),
        EnvSpec(
            "RareDiseaseDiagnosis-SingleTurn-v0",
            _ENV,
            {"mode": "single_turn", "max_turns": 1},
            "All presenting phenotypes plus the reference ranker's candidates in the prompt; one top-3 answer.",
        ),
    ),
    dialogues=(
        DialogueSpec(
            "DiagnosisDialogue-v0",
            "agentenv.envs.rare_disease.dialogue.doctor_patient:DiagnosisDialogueEnv",
            ("doctor", "patient"),
            {"max_turns": 10},
            "Doctor (rare-disease tools, no ask_patient) and patient (private phenotype record) talk; "
            "the doctor answers a top-3 diagnosis.",
        ),
    ),
    corpora={"rare-disease": "agentenv.envs.rare_disease.tools.documents:disease_corpus"},
    oracle="agentenv.envs.rare_disease.agents.oracle:RareDiseaseOracle",
    bm25="agentenv.envs.rare_disease.agents.bm25_strategy:RareDiseaseBM25",
    gold_text="agentenv.envs.rare_disease.grading.gold:gold_text",
    solvability="agentenv.envs.rare_disease.tasks.solvability:why_unreachable",
    structured="agentenv.envs.rare_disease.structured.menus:MENUS",
    components={
        "hit@K": "the gold is among the first K predictions (e.g. hit@1, hit@3)",
        "hit@any": "the gold is anywhere in the list, however long (the hackable reward, for teaching)",
        "reciprocal_rank": "1 / rank of the gold, 0 if absent",
        "n_predictions": "how many predictions the answer listed",
        "over_limit": "1.0 if the answer listed more predictions than allowed; see RewardConfig.over_limit",
        "unresolved": "entries that are no disease reference (one makes the answer unreadable: every hit 0)",
        "questions_asked": "findings asked about: ask_patient calls, or findings named to the patient in dialogue",
    },
    splits=("train", "validation", "test", "real"),  # real: published patients (real_cases.py)
    agents={
        "phenotype-ranker": "agentenv.envs.rare_disease.agents.phenotype_ranker_agent:PhenotypeRankerAgent",
    },
    docs="docs/envs/rare_disease.md",
)
