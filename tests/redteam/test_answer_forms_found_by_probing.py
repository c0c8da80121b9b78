"""Answer forms a generated probe of the graders found credited (or slow), each now read by the grammar.

Why a file of its own: each case is an exploit a policy under RL pressure could find. The
properties search the character classes and shapes behind them, not only the found strings.
"""

from __future__ import annotations

import time
import unicodedata

import gymnasium as gym
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import agentenv  # noqa: F401 - registers the ids
from agentenv.envs.media_search.grading.grade import read_integer
from agentenv.envs.rare_disease.grading.answers import name_then_id


@pytest.fixture(scope="module")
def media() -> gym.Env:
    return gym.make("MediaSearch-v0", split="test")


@pytest.fixture(scope="module")
def rare() -> gym.Env:
    return gym.make("RareDiseaseDiagnosis-v0", split="test")


def _accuracy(env: gym.Env, index: int, action: str) -> float | None:
    env.reset(options={"index": index})
    return env.step(action)[4]["reward_components"].get("accuracy")


@pytest.mark.parametrize(
    ("index", "action"),
    [
        (7, '{"answer": 6.99999999999999999}'),  # gold 7: JSON made it 7.0
        (7, '{"answer": 70e-1}'),
        (0, '{"answer": 2008.99999999999999999}'),  # gold 2009
        (7, '{"answer": ["x", 7.0]}'),
    ],
)
def test_a_json_number_with_a_fraction_is_not_read_as_the_integer_it_rounds_to(
    media: gym.Env, index: int, action: str
) -> None:
    assert _accuracy(media, index, action) is None  # a parse error naming the fix, not an answer
    media.reset(options={"index": index})
    assert "write the answer as a string" in media.step(action)[0]


def test_a_json_integer_answer_still_reads(media: gym.Env) -> None:
    assert _accuracy(media, 7, '{"answer": 7}') == 1.0


@pytest.mark.parametrize(
    ("index", "answer"),
    [(31, "11²"), (40, "1²"), (10, "3⁰"), (22, "200¹"), (40, "⑫")],
)
def test_numeric_symbols_are_not_folded_into_digits(
    media: gym.Env, index: int, answer: str
) -> None:
    """11² is 121, not 112 (gold 112): NFKC had made it 112."""
    assert _accuracy(media, index, f"<answer>{answer}</answer>") == 0.0


NUMERIC_SYMBOLS = [
    chr(c)
    for c in range(0x80, 0x3000)
    if unicodedata.numeric(chr(c), None) is not None and not "\uff10" <= chr(c) <= "\uff19"
]


@settings(max_examples=300, deadline=None)
@given(
    st.text(alphabet="0123456789", max_size=4),
    st.sampled_from(NUMERIC_SYMBOLS),
    st.text(alphabet="0123456789", max_size=4),
)
def test_no_numeric_symbol_is_read_as_part_of_a_number(
    before: str, symbol: str, after: str
) -> None:
    assert read_integer(before + symbol + after, words=True) is None


def test_full_width_digits_still_read() -> None:
    assert read_integer("１９９４", words=False) == 1994


def test_a_film_id_in_upper_case_is_the_film(media: gym.Env) -> None:
    """Test task 2's gold is tt0157075 (The Suburbans)."""
    assert _accuracy(media, 2, "<answer>TT0157075</answer>") == 1.0
    assert _accuracy(media, 2, "<answer>The Suburbans (TT0157075)</answer>") == 1.0


@pytest.mark.parametrize(
    "entry",
    ["a" + "\t" * 392 + "(OMIM:", "a" + "\t" * 398 + "b", "a" + " " * 392 + "(OMIM:1"],
)
def test_a_name_then_id_entry_is_read_in_linear_time(rare: gym.Env, entry: str) -> None:
    """81 such entries took 27-35 ms to grade (the pattern tried every split of the blanks)."""
    action = "<answer>" + ";".join([entry] * 81) + "</answer>"
    best = float("inf")
    for _ in range(3):
        rare.reset(options={"index": 0})
        started = time.perf_counter()
        rare.step(action)
        best = min(best, time.perf_counter() - started)
    assert best < 0.015, f"{best * 1000:.1f} ms"


@settings(max_examples=300, deadline=None)
@given(
    st.text(alphabet="ab ()\t", min_size=1, max_size=12),
    st.sampled_from(["OMIM:154700", "ORPHA:558", "154700", "OMIM:1547", "x"]),
    st.sampled_from([" ", "\t", "", "  \t"]),
)
def test_name_then_id_reads_what_the_pattern_read(name: str, ref: str, blank: str) -> None:
    import re

    from agentenv.envs.rare_disease.grading.answers import _ID

    old = re.compile(rf"(?P<name>.+?)[ \t]*\((?P<id>{_ID})\)", re.IGNORECASE | re.DOTALL)
    entry = f"{name}{blank}({ref})"
    matched = old.fullmatch(entry)
    expected = None if matched is None else (matched.group("name"), matched.group("id"))
    assert name_then_id(entry) == expected


def test_list_numbers_that_contradict_the_order_are_refused(rare: gym.Env) -> None:
    """Test task 0's gold is OMIM:100600: written third with "1." on another entry, it was hit@1."""
    rare.reset(options={"index": 0})
    answer = "<answer>3. OMIM:100600\n1. OMIM:104000\n2. OMIM:104100</answer>"
    _, _, _, _, info = rare.step(answer)
    assert info["reward_components"]["hit@1"] == 0.0
    assert "entry 1 is numbered 3" in info["answer_feedback"]
    rare.reset(options={"index": 0})
    _, _, _, _, info = rare.step("<answer>1. OMIM:100600\n2. OMIM:104000</answer>")
    assert info["reward_components"]["hit@1"] == 1.0
