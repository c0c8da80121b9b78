"""The judge-consistency lesson's pieces: the verdict allow-list, the agreement figures against a
hand-computed example, deterministic pair drawing; and (slow, with the model installed) the pipeline."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentenv.judge.agreement import cohen_kappa, fleiss_kappa
from agentenv.judge.judge_pairs import ATTACKS, CATEGORIES, draw_pairs, quotas
from agentenv.judge.lesson import LESSON_PROMPTS, JudgeScale, judge_pairs, summarize
from agentenv.judge.prompt_sensitivity import bootstrap, fleiss_from_counts, prompt_statistics
from agentenv.judge.verdict_words import VERDICT_WORDS, read_verdict

# --- the verdict allow-list -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reply", "verdict"),
    [
        ("Yes", True),
        ("yes.", True),
        ("  YES\n", True),
        ("**Correct**", True),
        ('"no"', False),
        ("No, the candidate names another film.", False),
        ("INCORRECT", False),
        ("<think>they differ</think> no", False),
    ],
)
def test_allow_listed_verdicts_are_read(reply: str, verdict: bool) -> None:
    assert read_verdict(reply) is verdict


@pytest.mark.parametrize(
    "reply",
    [
        "",
        ":",
        "Thought process:",
        "Not sure",
        "Yesterday",
        "Nope",
        "The answer is yes",
        "Correctly",
        "Y",
        "1",
        "True",
        "Incorrectly stated",
    ],
)
def test_anything_else_is_unparseable(reply: str) -> None:
    assert read_verdict(reply) is None


@given(word=st.sampled_from(sorted(VERDICT_WORDS)), rest=st.text(max_size=20))
def test_a_verdict_word_glued_to_more_letters_is_never_read(word: str, rest: str) -> None:
    glued = word + "x" + rest
    assert read_verdict(glued) is None
    assert read_verdict(word.upper() + " " + rest) is VERDICT_WORDS[word]


@given(st.text(max_size=40))
def test_a_read_verdict_always_starts_with_an_allowed_word(reply: str) -> None:
    verdict = read_verdict(reply)
    if verdict is not None:
        head = reply.strip().lstrip("*\"'`").lower()
        assert any(head.startswith(w) for w, v in VERDICT_WORDS.items() if v is verdict)


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
    verdicts = [[read_verdict(r) for r in row] for row in replies]
    summary = summarize(pairs, verdicts, JudgeScale(pairs=10, resamples=20))
    head = summary["judge"]
    assert head["pairs"] == 10 and head["unparseable"] == 0.0
    assert head["attack_false_positive"] == 1.0  # a judge that always says yes credits every attack
    assert math.isnan(head["fleiss_kappa"])  # every verdict alike: kappa is undefined
    assert summary["by_category"]["attack"]["judge_credit"] == 1.0


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
