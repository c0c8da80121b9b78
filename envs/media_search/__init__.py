"""MediaSearch: questions about films in a real catalog (single-agent ids and the concierge dialogue).

This ``__init__`` only builds the family's :class:`~agentenv.families.Family`
record (``FAMILY``), which the package declares as an entry point; every
reference in it is a ``"module:attribute"`` string, so importing it builds
and imports nothing heavy.
"""

from __future__ import annotations

from agentenv.families import DialogueSpec, EnvSpec, Family

_ENV = "agentenv.envs.media_search.env:MediaSearchEnv"

FAMILY = Family(
    name="media_search",
    envs=(
        EnvSpec(
            "MediaSearch-v0",
            _ENV,
            {"mode": "multi_turn", "max_turns": 8},
            "Multi-turn agentic RAG over the film catalog: search, filter, title details, person lookup.",
        ),
        EnvSpec(
            "MediaSearch-SingleTurn-v0",
            _ENV,
            {"mode": "single_turn", "max_turns": 1},
            "Linear RAG: the top retrieved passages are in the prompt; one answer, no tools.",
        ),
    ),
    dialogues=(
        DialogueSpec(
            "MediaConcierge-v0",
            "agentenv.envs.media_search.dialogue.concierge:MediaConciergeEnv",
            ("assistant", "user"),
            {"max_turns": 10},
            "A user opens with a vague film request and reveals held-back constraints when asked; "
            "the assistant has the film-catalog tools and answers a title.",
        ),
    ),
    corpora={"media": "agentenv.envs.media_search.tools.corpus:media_documents"},
    oracle="agentenv.envs.media_search.agents.oracle:MediaSearchOracle",
    bm25="agentenv.envs.media_search.agents.bm25_strategy:MediaSearchBM25",
    gold_text="agentenv.envs.media_search.grading.gold:gold_text",
    solvability="agentenv.envs.media_search.tasks.solvability:why_unreachable",
    structured="agentenv.envs.media_search.structured.menus:MENUS",
    reasoning="agentenv.envs.media_search.agents.reasoning:reasoning_writer",
    components={
        "first_call": "MediaSearch: 1.0 when the first tool call is the gold plan's first call (same tool and "
        "arguments, k and limit aside, text casefolded); weighted by the first-call-credit preset",
        "questions_asked": "concierge: the assistant's questions to the user, counted by field asked about",
        "held_back": "concierge: request fields the user held back at the start",
        "revealed": "concierge: held-back fields the user revealed after being asked",
    },
    splits=("train", "validation", "test", "casual"),  # casual: hand-written questions (casual.py)
    agents={
        "oracle-question-spelling": "agentenv.envs.media_search.agents.spelling_oracle:QuestionSpellingOracle",
    },
    reward_presets={
        "first-call-credit": {"weights": {"accuracy": 1.0, "first_call": 0.2}},
    },
    docs="docs/envs/media_search.md",
    # 2: number words to 999 (were to twenty), a person or film gold's aliases credited as the
    # task file lists them, a repeated JSON key refused (an answer it graded is now invalid);
    # 3: a name with the dotless ı also read with i (so "AYKUT KAYACIK" is "Aykut Kayacık")
    grader_version=3,
)
