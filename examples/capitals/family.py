"""The Family record of "capitals", registered on import: ``gym.make("capitals.family:Capitals-v0")`` and
``--corpus capitals.family:capitals`` import this module first. Parts are "module:attribute" strings, built on use."""

from agentenv.families import EnvSpec, Family, register_family

FAMILY = register_family(
    Family(
        name="capitals",
        envs=(
            EnvSpec(
                "Capitals-v0",
                "capitals.env:CapitalsEnv",
                {"max_turns": 4},
                "Multi-turn: search and get_country over 100 countries, then one answer.",
            ),
            EnvSpec(
                "Capitals-SingleTurn-v0",
                "capitals.env:CapitalsEnv",
                {"single_turn": True},
                "Linear RAG: the top 3 retrieved country passages are in the prompt; one answer, no tools.",
            ),
        ),
        splits=("train", "validation", "test", "hard"),  # hard: env.HARD, its own evaluation split
        corpora={"capitals": "capitals.env:documents"},
        oracle="capitals.agents:CapitalsOracle",
        bm25="capitals.agents:CapitalsBM25",
        structured="capitals.structured:MENUS",  # the structured wrapper's menus and features
        gold_text="builtins:str",  # a task's gold is the answer string
        docs="docs/new-family.md",
    )
)
