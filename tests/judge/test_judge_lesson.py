"""The judge-consistency lesson's pieces: the verdict allow-list, the agreement figures against a
hand-computed example, deterministic pair drawing; and (slow, with the model installed) the pipeline."""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentenv.judge.agreement import cohen_kappa, fleiss_kappa
from agentenv.judge.judge_pairs import ATTACKS, CATEGORIES, draw_pairs, quotas
from agentenv.judge.lesson import (
    LESSON_PROMPTS,
    VERDICT_PAIRS,
    JudgeScale,
    _clean,
    judge_pairs,
    read_row,
    rescore,
    summarize,
)
from agentenv.judge.prompt_sensitivity import bootstrap, fleiss_from_counts, prompt_statistics
from agentenv.judge.verdict_words import CORRECT_INCORRECT, PAIRS, YES_NO, read_verdict

# --- the verdict allow-list -------------------------------------------------------------------

ALL_WORDS = [
    (pair, word, verdict)
    for pair in PAIRS
    for word, verdict in zip(pair, (True, False), strict=True)
]


@pytest.mark.parametrize(
    ("reply", "pair", "verdict"),
    [
        ("Yes", YES_NO, True),
        ("yes.", YES_NO, True),
        ("  YES\n", YES_NO, True),
        ("No!", YES_NO, False),
        ("**Correct**", CORRECT_INCORRECT, True),
        ("**Yes**.", YES_NO, True),
        ('"no"', YES_NO, False),
        ("`no.`", YES_NO, False),
        ("INCORRECT", CORRECT_INCORRECT, False),
        ("CORRECT\n", CORRECT_INCORRECT, True),
    ],
)
def test_allow_listed_verdicts_are_read(reply: str, pair: tuple[str, str], verdict: bool) -> None:
    assert read_verdict(reply, pair) is verdict


@pytest.mark.parametrize(
    ("reply", "pair"),
    [
        ("", YES_NO),
        (":", YES_NO),
        ("Thought process:", YES_NO),
        ("Not sure", YES_NO),
        ("Yesterday", YES_NO),
        ("Nope", YES_NO),
        ("Y", YES_NO),
        ("1", YES_NO),
        ("True", YES_NO),
        ("Correctly", CORRECT_INCORRECT),
        ("Incorrectly stated", CORRECT_INCORRECT),
        # replies the SmolLM2 judge gave in the committed run
        ("CORRECT or INCOR", CORRECT_INCORRECT),
        ("CORRECT\n\nThe", CORRECT_INCORRECT),
        ("yes\n\nNo,", YES_NO),
        ("1. Yes", YES_NO),
        ("The answer is yes.", YES_NO),
        ("No, the answer is", YES_NO),
        # a justification, a think block, the other pair's word, broken decorations
        ("No, the candidate names another film.", YES_NO),
        ("<think>they differ</think> no", YES_NO),
        ("CORRECT", YES_NO),
        ("yes", CORRECT_INCORRECT),
        ("not correct", CORRECT_INCORRECT),
        ("Yes..", YES_NO),
        ("Yes.!", YES_NO),
        ("**yes*", YES_NO),
        ("\"yes'", YES_NO),
        ("**yes.**.", YES_NO),
        ("\uff39es", YES_NO),  # a full-width Y
        ("yes\u200b", YES_NO),  # a zero-width space is not whitespace
    ],
)
def test_anything_else_is_unparseable(reply: str, pair: tuple[str, str]) -> None:
    assert read_verdict(reply, pair) is None


def test_an_unknown_pair_is_refused() -> None:
    with pytest.raises(ValueError, match="allow-listed pairs"):
        read_verdict("yes", ("yes", "nope"))


@st.composite
def decorated(draw: st.DrawFn, word: str) -> str:
    """Any decoration of ``word`` the grammar allows: case, one wrapper, one end mark, surrounding space."""
    cased = "".join(c.upper() if draw(st.booleans()) else c for c in word)
    wrap = draw(st.sampled_from(["", "**", '"', "'", "`"]))
    end = draw(st.sampled_from(["", ".", "!"]))
    inside = draw(st.booleans()) or not wrap
    body = wrap + cased + end + wrap if inside else wrap + cased + wrap + end
    space = st.text(alphabet=" \t\n\r", max_size=3)
    return draw(space) + body + draw(space)


@given(data=st.data(), which=st.sampled_from(ALL_WORDS))
def test_every_allowed_decoration_of_a_bare_word_is_read(data: st.DataObject, which: tuple) -> None:
    pair, word, verdict = which
    assert read_verdict(data.draw(decorated(word)), pair) is verdict


@given(
    data=st.data(),
    pair=st.sampled_from(PAIRS),
    swap=st.booleans(),
    middle=st.text(max_size=12),
    edges=st.tuples(st.text(max_size=8), st.text(max_size=8)),
)
def test_a_reply_naming_both_words_is_never_read(
    data: st.DataObject, pair: tuple[str, str], swap: bool, middle: str, edges: tuple[str, str]
) -> None:
    first, second = pair[::-1] if swap else pair
    reply = (
        edges[0] + data.draw(decorated(first)) + middle + data.draw(decorated(second)) + edges[1]
    )
    assert read_verdict(reply, pair) is None


WORDY = st.text(min_size=1, max_size=20).filter(lambda t: any(c.isalnum() for c in t))


@given(
    data=st.data(), which=st.sampled_from(ALL_WORDS), before=WORDY, gap=st.sampled_from(" \n:,-")
)
def test_a_verdict_word_after_other_words_is_never_read(
    data: st.DataObject, which: tuple, before: str, gap: str
) -> None:
    pair, word, _ = which
    assert read_verdict(before + gap + data.draw(decorated(word)), pair) is None


@given(
    data=st.data(),
    which=st.sampled_from(ALL_WORDS),
    negation=st.sampled_from(["not", "NOT", "Not", "never", "isn't", "no,", "hardly"]),
)
def test_a_negated_verdict_word_is_never_read(
    data: st.DataObject, which: tuple, negation: str
) -> None:
    pair, word, _ = which
    assert read_verdict(negation + " " + data.draw(decorated(word)), pair) is None


PIECES = st.lists(
    st.sampled_from(
        [
            "yes",
            "no",
            "correct",
            "incorrect",
            "YES",
            "Correct",
            "in",
            "not",
            "*",
            "**",
            '"',
            "'",
            "`",
        ]
        + [".", "!", ",", ":", " ", "\n", "x", "1", "<think>", "</think>"]
    ),
    max_size=8,
).map("".join)


@settings(max_examples=600)
@given(reply=st.one_of(PIECES, st.text(max_size=30)), pair=st.sampled_from(PAIRS))
def test_a_read_verdict_is_exactly_one_decorated_word_of_the_pair(
    reply: str, pair: tuple[str, str]
) -> None:
    verdict = read_verdict(reply, pair)
    if verdict is None:
        return
    body = reply.strip().lower()
    assert re.findall(r"[a-z]+", body) == [pair[0] if verdict else pair[1]]
    shape = re.sub(
        r"[a-z]+", "W", body
    )  # what is left is one wrapper, both sides, and one end mark
    assert re.fullmatch(r"(\*\*|[\"'`]|)W[.!]?\1[.!]?", shape), shape
    assert shape.count(".") + shape.count("!") <= 1


def test_each_prompt_names_both_words_of_its_pair() -> None:
    assert len(VERDICT_PAIRS) == len(LESSON_PROMPTS)
    for prompt, pair in zip(LESSON_PROMPTS, VERDICT_PAIRS, strict=True):
        for other in PAIRS:
            named = all(re.search(rf"\b{w}\b", prompt.closing.lower()) for w in other)
            assert named is (other == pair), (prompt.name, other)


# --- agreement figures, hand-computed ---------------------------------------------------------

# 5 pairs x 3 prompts; None is an unparseable reply (no credit).
VERDICTS = [
    [True, True, True],
    [False, False, False],
    [True, False, None],
    [False, False, True],
    [None, None, None],
]
RULES = [True, False, True, False, False]
ATTACK = [False, False, False, False, True]


def test_figures_match_the_hand_computation() -> None:
    s = prompt_statistics(VERDICTS, RULES, ATTACK, ["a", "b", "c"])
    # credit counts (no, yes) per pair: (0,3) (3,0) (2,1) (2,1) (3,0); P = 11/15, p_yes = 1/3, P_e = 5/9
    assert s["fleiss_kappa"] == pytest.approx(0.4)
    # yes/no/unparseable: P = 2/3, p = (6, 5, 4)/15, P_e = 77/225 -> 73/148
    assert s["fleiss_kappa_3way"] == pytest.approx(73 / 148)
    assert s["flip_rate"] == pytest.approx(2 / 5)  # pairs 3 and 4 change with the prompt
    assert s["pairwise_flips"] == pytest.approx({"a|b": 1 / 5, "a|c": 2 / 5, "b|c": 1 / 5})
    assert s["pairwise_flip_rate"] == pytest.approx(4 / 15)
    assert s["unparseable"] == pytest.approx(4 / 15)
    acc = {n: s["per_prompt"][n]["rule_accuracy"] for n in "abc"}
    assert acc == pytest.approx({"a": 1.0, "b": 0.8, "c": 0.6})
    # b credits [1,0,0,0,0] against rules [1,0,1,0,0]: p_o = .8, p_e = .2*.4 + .8*.6 = .56
    assert s["per_prompt"]["b"]["rule_kappa"] == pytest.approx(0.24 / 0.44)
    assert s["majority_rule_accuracy"] == pytest.approx(0.8)  # majority credits only pair 1
    assert s["per_prompt"]["c"]["unparseable"] == pytest.approx(2 / 5)
    assert s["attack_false_positive"] == 0.0 and s["attack_any_prompt"] == 0.0


def test_kappas_agree_with_the_reference_implementations() -> None:
    rng = np.random.default_rng(1)
    for _ in range(20):
        grid = rng.integers(0, 3, size=(30, 5))
        counts = np.stack([(grid == c).sum(axis=1) for c in range(3)], axis=1)
        assert fleiss_from_counts(counts) == pytest.approx(fleiss_kappa(grid.tolist()))
        verdicts = [[{0: False, 1: True, 2: None}[int(v)] for v in row] for row in grid]
        rules = rng.integers(0, 2, size=30).astype(bool).tolist()
        s = prompt_statistics(verdicts, rules, [False] * 30)
        credit = [row[0] is True for row in verdicts]
        expected = cohen_kappa(credit, rules)
        got = s["per_prompt"]["prompt_0"]["rule_kappa"]
        assert (math.isnan(got) and math.isnan(expected)) or got == pytest.approx(expected)


def test_an_attack_credited_by_one_prompt_counts() -> None:
    s = prompt_statistics([[True, False], [False, False]], [False, False], [True, True])
    assert s["attack_false_positive"] == pytest.approx(1 / 4)
    assert s["attack_any_prompt"] == pytest.approx(1 / 2)


def test_bootstrap_is_seeded_and_brackets_the_point() -> None:
    rng = np.random.default_rng(0)
    verdicts = [[bool(x) for x in rng.integers(0, 2, size=4)] for _ in range(40)]
    rules = [bool(x) for x in rng.integers(0, 2, size=40)]
    attack = [i < 8 for i in range(40)]
    a = bootstrap(verdicts, rules, attack, list("abcd"), resamples=50, seed=3)
    b = bootstrap(verdicts, rules, attack, list("abcd"), resamples=50, seed=3)
    assert a == b
    lo, hi = a["flip_rate"]["ci"]
    assert lo <= a["flip_rate"]["value"] <= hi and lo < hi


def test_verdicts_need_two_prompts() -> None:
    with pytest.raises(ValueError, match="at least 2 prompts"):
        prompt_statistics([[True], [False]], [True, False], [False, False])


# --- pairs ------------------------------------------------------------------------------------


def test_quotas_fill_n_and_every_category() -> None:
    for n in (5, 10, 30, 150, 151):
        q = quotas(n)
        assert sum(q.values()) == n and set(q) == set(CATEGORIES) and min(q.values()) >= 1


@pytest.fixture(scope="module")
def pairs10() -> list:
    return draw_pairs(10, seed=0)


def test_pair_drawing_is_deterministic_and_rule_graded(pairs10: list) -> None:
    first = pairs10
    assert first == draw_pairs(10, seed=0)
    media = [p for p in first if p.family == "media_search"]
    assert draw_pairs(5, seed=1, families=["media_search"]) != media
    assert {p.family for p in first} == {"media_search", "rare_disease"}
    assert {p.category for p in first} == set(CATEGORIES)
    for p in first:
        if p.category == "attack":
            assert p.answer in ATTACKS and not p.rule_correct
        if p.category in ("near_miss", "wrong", "hedge"):
            assert not p.rule_correct, p
    assert any(p.rule_correct for p in first)


def test_too_few_pairs_are_refused() -> None:
    with pytest.raises(ValueError, match="at least 10 pairs"):
        draw_pairs(6)


# --- the lesson without a model ---------------------------------------------------------------


def test_replies_come_back_per_pair_and_prompt_and_summarize(pairs10: list) -> None:
    pairs = pairs10
    asked: list[list[dict[str, str]]] = []

    def reply(conversations: list) -> list[str]:
        asked.extend(conversations)
        # a fake judge that always says yes (CORRECT where the teacher-marks prompt asks for it)
        return ["Yes" if "teacher" not in c[0]["content"] else "CORRECT" for c in conversations]

    replies = judge_pairs(pairs, LESSON_PROMPTS, reply)
    assert len(asked) == 10 * len(LESSON_PROMPTS) and len(LESSON_PROMPTS) >= 5
    assert [len(r) for r in replies] == [len(LESSON_PROMPTS)] * 10
    assert pairs[3].answer.strip() in asked[3 * len(LESSON_PROMPTS)][1]["content"]
    verdicts = [read_row(row) for row in replies]
    summary = summarize(pairs, verdicts, JudgeScale(pairs=10, resamples=20))
    head = summary["judge"]
    assert head["pairs"] == 10 and head["unparseable"] == 0.0
    assert head["attack_false_positive"] == 1.0  # a judge that always says yes credits every attack
    assert math.isnan(head["fleiss_kappa"])  # every verdict alike: kappa is undefined
    assert summary["by_category"]["attack"]["judge_credit"] == 1.0


def test_rescore_rereads_the_saved_replies_without_a_model(pairs10: list, tmp_path) -> None:
    from agentenv.judge.lesson import main

    echoes = ["Yes.", "yes", "CORRECT or INCOR", "The answer is yes.", "No"]  # as the judge replied
    lines = []
    for pair in pairs10:
        old = [True, True, True, True, False]  # what the first-word reader made of them
        lines.append(json.dumps({**pair.to_dict(), "replies": echoes, "verdicts": old}))
    (tmp_path / "verdicts.jsonl").write_text("\n".join(lines) + "\n")
    scale = JudgeScale(pairs=10, resamples=20)
    meta = {"lesson": "judge-consistency", "scale": scale.__dict__, "judge_s": 12.5}
    (tmp_path / "summary.json").write_text(json.dumps({"smoke_run": False, "meta": meta}))

    summary = rescore(tmp_path, plots=False)
    assert summary["smoke_run"] is False and summary["meta"]["judge_s"] == 12.5
    assert summary["meta"]["rescored"]["transitions"] == {"yes->unparseable": 20}
    assert summary["judge"]["unparseable"] == pytest.approx(2 / 5)
    assert summary["per_prompt"]["teacher-marks"]["unparseable"] == 1.0
    saved = [json.loads(x) for x in (tmp_path / "verdicts.jsonl").read_text().splitlines()]
    assert [r["verdicts"] for r in saved] == [[True, True, None, None, False]] * 10
    assert [r["replies"] for r in saved] == [echoes] * 10
    assert json.loads((tmp_path / "summary.json").read_text())["judge"] == _clean(summary["judge"])
    # a second rescore changes nothing more
    assert main(["--rescore", str(tmp_path), "--no-plots"]) == 0
    assert json.loads((tmp_path / "summary.json").read_text())["meta"]["rescored"]["changed"] == 0


def test_rescore_refuses_a_folder_without_replies(tmp_path) -> None:
    with pytest.raises(FileNotFoundError, match="no saved replies"):
        rescore(tmp_path)


# --- the pipeline with the real model (slow) --------------------------------------------------


@pytest.mark.slow
def test_the_tiny_pipeline_runs_with_the_installed_model(tmp_path) -> None:
    from agentenv.judge import lesson
    from agentenv.models import smollm2

    try:
        smollm2.model_dir()
    except smollm2.ModelNotInstalled:
        pytest.skip(f"smollm2-135m is not installed ({smollm2.INSTALL_COMMAND})")
    summary = lesson.run(
        tmp_path, model="smollm2-135m", scale=JudgeScale(pairs=10, resamples=20), threads=1
    )
    lines = (tmp_path / "verdicts.jsonl").read_text().splitlines()
    assert len(lines) == 10
    record = json.loads(lines[0])
    assert len(record["replies"]) == len(record["verdicts"]) == len(LESSON_PROMPTS)
    assert summary["judge"]["pairs"] == 10
    assert 0.0 <= summary["judge"]["unparseable"] <= 1.0
    assert summary["meta"]["judge"]["decoding"] == "greedy"
    assert (tmp_path / "judge_consistency_prompts.png").is_file()
    assert (
        json.loads((tmp_path / "summary.json").read_text())["meta"]["prompts"][2] == "teacher-marks"
    )
