"""Number words in MediaSearch answers: English cardinals from zero to 999, by a closed grammar.

Why searched and not listed: the grammar must credit every honest spelling of a count or a
runtime (``forty-two``, ``forty two``, ``a hundred and five``) and read nothing else as a
number. The spellings are enumerated here by a second, independent writer of the grammar
(:func:`spellings`), and hypothesis searches word sequences and edits of honest spellings for a
text the grader reads otherwise than that writer.
"""

from __future__ import annotations

from types import SimpleNamespace

import gymnasium as gym
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import agentenv  # noqa: F401 - registers the ids
from agentenv.engine.actions import answer
from agentenv.envs.media_search.grading.grade import (
    MAX_WORDS_NUMBER,
    NUMBER_WORDS_GRAMMAR,
    read_answer,
    read_integer,
    read_number_words,
)
from agentenv.envs.media_search.tasks.user_answer_types import typed_answer
from agentenv.envs.media_search.tasks.user_tasks import question_from_dict
from agentenv.errors import UserInputError

ONES = "zero one two three four five six seven eight nine".split()
TEENS = "ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen".split()
TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()


def _below_hundred(n: int) -> list[str]:
    """Every spelling of ``1 <= n <= 99``."""
    if n < 10:
        return [ONES[n]]
    if n < 20:
        return [TEENS[n - 10]]
    tens, unit = TENS[n // 10 - 2], n % 10
    return [tens] if unit == 0 else [f"{tens}-{ONES[unit]}", f"{tens} {ONES[unit]}"]


def spellings(n: int) -> list[str]:
    """Every spelling of ``0 <= n <= 999`` the grammar accepts, in lower case."""
    if n == 0:
        return ["zero"]
    hundreds, rest = divmod(n, 100)
    if not hundreds:
        return _below_hundred(rest)
    heads = [f"{ONES[hundreds]} hundred"] + (["a hundred"] if hundreds == 1 else [])
    if not rest:
        return heads
    return [
        f"{h}{joiner}{tail}"
        for h in heads
        for joiner in (" ", " and ")
        for tail in _below_hundred(rest)
    ]


SPELLED = {form: n for n in range(MAX_WORDS_NUMBER + 1) for form in spellings(n)}
"""Every accepted spelling (lower case) -> the number it writes."""


def expected(text: str) -> int | None:
    """What the grammar reads ``text`` as (ASCII in any case; nothing else is a number word here)."""
    return SPELLED.get(text.lower()) if text.isascii() else None


def test_the_writer_spells_each_number_its_own_way() -> None:
    assert len(SPELLED) == sum(len(spellings(n)) for n in range(MAX_WORDS_NUMBER + 1))
    assert MAX_WORDS_NUMBER == 999 and "hundred" in NUMBER_WORDS_GRAMMAR
    assert [SPELLED[t] for t in ("thirty", "forty two", "one hundred", "a hundred and five")] == [
        30,
        42,
        100,
        105,
    ]


def test_every_spelling_of_every_number_up_to_999_reads_back() -> None:
    """All of them (5,000-odd), in three cases: not a sample."""
    wrong = [
        (form, variant, n)
        for form, n in SPELLED.items()
        for variant in (form, form.upper(), form.title())
        if read_integer(variant, words=True) != n
    ]
    assert not wrong, wrong[:5]


def test_words_are_never_a_year_and_stop_at_999() -> None:
    assert all(read_integer(form, words=False) is None for form in SPELLED)
    refused = [
        "one thousand",
        "a thousand",
        "twelve hundred",
        "ten hundred",
        "zero hundred",
        "nineteen ninety-four",
        "hundred",
        "a hundred hundred",
        "one-hundred",
        "one hundred and",
        "and five",
        "one hundred zero",
        "one hundred and zero",
        "zero seven",
        "oh seven",
        "fortytwo",
        "forty  two",
        "forty -two",
        "forty--two",
        "forty-",
        "-two",
        "twenty-ten",
        "twenty-zero",
        "twenty twenty",
        "nine hundred and ninety nine hundred",
        "an hundred",
        "a",
        "",
        " seven",
        "seven ",
        "forty\ttwo",
        "forty\u00a0two",
        "forty\u2010two",
        "minus seven",
        "seven and a half",
        "a dozen",
    ]
    assert [t for t in refused if read_integer(t, words=True) is not None] == []


def test_full_width_letters_read_as_their_ascii() -> None:
    """NFKC maps full-width ASCII one to one (as it does for full-width digits); nothing else."""

    def wide(text: str) -> str:
        return "".join(c if c == " " else chr(ord(c) + 0xFEE0) for c in text)

    assert [read_integer(wide(t), words=True) for t in ("forty-two", "a hundred and five")] == [
        42,
        105,
    ]


TOKENS = [
    *ONES,
    *TEENS,
    *TENS,
    "hundred",
    "a",
    "and",
    "an",
    "thousand",
    "oh",
    "hundreds",
    "point",
    "dozen",
    "first",
    "twenty-",
    "-one",
]
SEPARATORS = [" ", " ", " ", "-", "", "  ", "\t", ",", " and ", " - ", "\u00a0"]
CASES = [str.lower, str.upper, str.title, str.capitalize]


@settings(max_examples=3000, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(TOKENS), st.sampled_from(SEPARATORS)), min_size=1, max_size=7
    ),
    st.sampled_from(CASES),
)
def test_a_word_sequence_reads_only_as_the_number_it_spells(pairs, case) -> None:
    text = case(pairs[0][0] + "".join(sep + token for token, sep in pairs[1:]))
    assert read_integer(text, words=True) == expected(text), text


@st.composite
def edited_spellings(draw) -> str:
    """An honest spelling with one edit: a word dropped, repeated, swapped with the next or
    replaced, or one separator changed."""
    n = draw(st.integers(0, MAX_WORDS_NUMBER))
    words = draw(st.sampled_from(spellings(n))).replace("-", " - ").split(" ")
    i = draw(st.integers(0, len(words) - 1))
    edit = draw(st.sampled_from(["drop", "repeat", "swap", "replace", "separator"]))
    if edit == "drop":
        del words[i]
    elif edit == "repeat":
        words.insert(i, words[i])
    elif edit == "swap" and i + 1 < len(words):
        words[i], words[i + 1] = words[i + 1], words[i]
    elif edit == "replace":
        words[i] = draw(st.sampled_from(TOKENS))
    text = " ".join(words).replace(" - ", "-")
    if edit == "separator" and " " in text:
        at = draw(st.sampled_from([k for k, c in enumerate(text) if c == " "]))
        text = text[:at] + draw(st.sampled_from(SEPARATORS)) + text[at + 1 :]
    return text


@settings(max_examples=3000, deadline=None)
@given(edited_spellings())
def test_an_edited_spelling_is_read_as_what_it_now_spells_or_not_at_all(text) -> None:
    assert read_integer(text, words=True) == expected(text), text


def _count(n: int, aliases: tuple[str, ...] = ()) -> SimpleNamespace:
    return SimpleNamespace(answer=str(n), aliases=aliases, answer_type="number")


DECORATIONS = ["{}", "**{}**", "{}.", "1. {}", "- {}", "`{}`", '"{}"', "  {}  "]


@settings(max_examples=400, deadline=None)
@given(
    st.integers(0, MAX_WORDS_NUMBER),
    st.integers(0, MAX_WORDS_NUMBER),
    st.integers(0, 5),
    st.sampled_from(DECORATIONS),
    st.sampled_from(CASES),
)
def test_an_honest_count_in_words_is_credited_and_another_number_is_not(
    gold, other, which, decoration, case
) -> None:
    forms = spellings(gold)
    text = decoration.format(case(forms[which % len(forms)]))
    reading = read_answer(text, _count(gold))
    assert reading.correct and reading.feedback == f"read as the number {gold}", text
    if other != gold:
        wrong = read_answer(decoration.format(spellings(other)[0]), _count(gold))
        assert not wrong.correct and wrong.feedback == f"read as the number {other}"


def test_a_gold_or_alias_in_words_is_its_number() -> None:
    """``thirty`` among a gold's aliases (or as the gold) is 30, as ``seven`` is 7."""
    assert read_answer("thirty", _count(30, ("thirty",))).correct
    words_gold = SimpleNamespace(answer="one hundred and five", aliases=(), answer_type="number")
    assert read_answer("105", words_gold).correct and not read_answer("106", words_gold).correct


def test_a_year_takes_digits_only_and_the_refusal_names_the_bound() -> None:
    year = SimpleNamespace(answer="1994", aliases=(), answer_type="year")
    assert read_answer("nineteen ninety-four", year).feedback.startswith("unreadable answer")
    assert read_answer(
        "forty-two", SimpleNamespace(answer="42", aliases=(), answer_type="year")
    ).feedback == (
        "unreadable answer: 'forty-two' is not an integer (digits; no signs, units or decimals but .0;"
        " a first thousands group never starts with 0)"
    )
    refused = read_answer("one thousand", _count(1000))
    assert not refused.correct and "number words up to 999" in refused.feedback


def test_your_own_number_gold_in_words() -> None:
    assert typed_answer("forty-two", None, "row 1").answer_type == "number"
    q = question_from_dict({"question": "How many films?", "answer": "one hundred and five"})
    assert q.answer_type == "number"
    assert all(read_answer(a, q).correct for a in ("105", "a hundred five", "One Hundred And Five"))
    with pytest.raises(
        UserInputError,
        match=r"row 4: answer 'Heat' is no number \(digits, or number words up to 999",
    ):
        typed_answer("Heat", "number", "row 4")
    with pytest.raises(UserInputError, match=r"row 4: answer 'forty-two' is no year \(digits\)"):
        typed_answer("forty-two", "year", "row 4")
    # a number wins over a film of the same title, as "Seven" does; stating the type picks the film
    assert typed_answer("Sixty Six", None, "row 5").answer_type == "number"
    assert typed_answer("Sixty Six", "title", "row 5").film_ids


def test_words_through_the_env() -> None:
    env = gym.make("MediaSearch-v0")
    for written, reward in (("forty two", 1.0), ("**Forty-Two**", 1.0), ("forty-three", 0.0)):
        env.reset(options={"task": {"question": "How many minutes?", "answer": "42"}})
        assert env.step(answer(written))[1] == reward, written
    assert read_number_words("nine hundred and ninety-nine") == 999
