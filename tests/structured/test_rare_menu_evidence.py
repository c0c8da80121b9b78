"""The rare-disease menu's fused ranking weighs the patient's answers only as evidence about the diseases.

Why: candidates whose profiles were read had their fused score multiplied by a likelihood of at most 0.9
at every answer, while the others kept theirs, so a question the patient answered "no" about a finding
no candidate has pushed the leading candidates below the rest.
"""

from __future__ import annotations

import agentenv  # noqa: F401 - registers the ids
from agentenv.envs.rare_disease.structured.menus import PROFILES
from agentenv.lessons.structured.wrapper import make_structured


def test_an_answer_about_a_finding_no_candidate_has_keeps_the_leaders() -> None:
    env = make_structured("RareDiseaseDiagnosis-v0", split="validation")
    moved = 0
    for episode in range(5):
        env.reset(seed=episode, options={"index": episode})
        labels = list(env.menu.labels)
        for entry in (0, 1, 2):  # rank, search, read the leading profiles
            env.step(entry)
        menu = env.menu
        assert len(menu.profiles) == PROFILES and len(menu.pool) > PROFILES, labels
        leaders = menu.fused()[:PROFILES]
        menu._read_answer({"id": "HP:9999999", "answer": "no"})  # annotated in no profile
        moved += menu.fused()[:PROFILES] != leaders
    assert moved == 0
