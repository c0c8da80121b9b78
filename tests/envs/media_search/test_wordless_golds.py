"""A gold or alias with no letter or digit is refused when a task file is read: no answer could match it.

Why: ``"aliases": ["."]`` loaded and was never credited, and a ``text`` gold ``"..."`` made a task
that no answer could win. The rule is an allow-list (a gold holds a letter or digit); the property
below searches texts made only of what the rule refuses and checks the grader never credits one,
so the rule refuses nothing a reader could match.
"""

from __future__ import annotations

import re
import string
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentenv.envs.media_search.grading.grade import read_answer
from agentenv.envs.media_search.tasks.user_tasks import question_from_dict
from agentenv.errors import UserInputError

WORDLESS = st.text(
    alphabet=st.sampled_from(string.punctuation + " \t-–—…·•*_~'\"«»¿¡"), min_size=1, max_size=12
).filter(lambda text: text.strip())


@pytest.mark.parametrize(
    ("row", "field"),
    [
        ({"question": "Which film?", "answer": "Heat (1995)", "aliases": ["."]}, "aliases[0]"),
        ({"question": "Who?", "answer": "Al Pacino", "aliases": ["Pacino", "!!"]}, "aliases[1]"),
        ({"question": "Odd?", "answer": "...", "answer_type": "text"}, "answer"),
    ],
)
def test_a_wordless_gold_or_alias_is_refused_naming_its_field(row: dict, field: str) -> None:
    with pytest.raises(
        UserInputError, match=rf"line 3: field '{re.escape(field)}' .* has no letter or digit"
    ):
        question_from_dict(row, "line 3")


def test_a_gold_with_one_letter_or_digit_among_symbols_still_loads() -> None:
    q = question_from_dict(
        {"question": "Q?", "answer": "C++", "aliases": ["-7-", "«é»"], "answer_type": "text"}
    )
    assert q.aliases == ("-7-", "«é»")


@settings(max_examples=300, deadline=None)
@given(gold=WORDLESS, answer=WORDLESS)
def test_the_grader_credits_no_wordless_text(gold: str, answer: str) -> None:
    """What the rule refuses could never have been matched: not the gold's own text, not another."""
    question = SimpleNamespace(answer="Blue", aliases=(gold,), answer_type="text")
    assert not read_answer(gold, question).correct
    assert not read_answer(answer, question).correct
    with pytest.raises(UserInputError, match="has no letter or digit"):
        question_from_dict({"question": "Q?", "answer": "Blue", "aliases": [gold]})
