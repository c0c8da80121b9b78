"""Search for new attack forms: hypothesis composes the gold with distractors, hedges and negations.

Why a search: hand-written attacks only cover the forms someone thought of.
Here any mix of the gold answer (as text or id), wrong answers of the same
type and qualifying words, joined by the separators agents write, in one
answer entry, must score 0 under the strict reward, as long as at least one
poison fragment (a distractor or a qualifier) is in it. Newlines and ``;``
are never generated: they start a new entry, which the rules count as a
separate prediction (covered by the over-limit tests).
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .contexts import Target, target

QUALIFIERS = (
    "or",
    "not",
    "maybe",
    "and",
    "vs",
    "?",
    "probably",
    "either",
    "no",
    "unlikely",
    "possibly",
    "nor",
)
SEPARATORS = (" ", ", ", " / ", " (", ") ", " - ", ": ", " | ", " & ", "/", "-")
SEARCH = settings(
    max_examples=120,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@pytest.fixture(scope="module", params=["MediaSearch-v0", "RareDiseaseDiagnosis-SingleTurn-v0"])
def searched(request: pytest.FixtureRequest) -> Target:
    return target(request.param, per_type=1)


@st.composite
def poisoned_answers(draw: st.DrawFn, t: Target) -> tuple[int, str]:
    index = draw(st.sampled_from(sorted(t.contexts)))
    c = t.contexts[index]
    golds = [g for g in (c.gold, c.gold_id) if g]
    poison = [*QUALIFIERS, *c.distractors]
    fragments = draw(
        st.lists(st.one_of(st.sampled_from(golds), st.sampled_from(poison)), min_size=1, max_size=5)
    )
    fragments.insert(draw(st.integers(0, len(fragments))), draw(st.sampled_from(golds)))
    fragments.insert(draw(st.integers(0, len(fragments))), draw(st.sampled_from(poison)))
    text = fragments[0]
    for fragment in fragments[1:]:
        text += draw(st.sampled_from(SEPARATORS)) + fragment
    return index, text


def test_no_composed_attack_scores(searched: Target) -> None:
    @SEARCH
    @given(data=st.data())
    def search(data: st.DataObject) -> None:
        index, text = data.draw(poisoned_answers(searched))
        reward, terminated, info = searched.answer(index, text)
        assert terminated and reward == 0.0, (searched.env_id, text, info.get("reward_components"))

    search()
