"""JudgeReward and judge_consistency against a fake endpoint on loopback."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from agentenv.judge import (
    PROMPTS,
    JudgeEndpointError,
    JudgeReplyError,
    JudgeReward,
    items_from_records,
    judge_consistency,
    parse_verdict,
)

from .fake_endpoint import FakeJudge


def toy_gold(gold: dict[str, Any]) -> str:
    """The toy square env's gold as text: it is no registered family, so the tests pass its renderer."""
    return str(gold["answer"])


def judge(fake: FakeJudge, model: str, **kwargs: Any) -> JudgeReward:
    return JudgeReward(fake.url, model, backoff_s=0.0, **kwargs)


# ------------------------------------------------------------------ prompts
def test_prompts_are_paraphrases() -> None:
    assert len(PROMPTS) >= 4
    assert len({p.system for p in PROMPTS}) == len(PROMPTS) and len({p.order for p in PROMPTS}) >= 3
    words = [
        "accept" in " ".join(m["content"] for m in p.messages("q", "a", "g")).lower()
        for p in PROMPTS
    ]
    assert any(words) and not all(words), "the flippy fake needs a word that only some prompts use"


@pytest.mark.parametrize(
    ("reply", "verdict"),
    [
        ("yes", True),
        ("No.", False),
        ("<think>\nhmm, yes\n</think>\nno", False),
        ('"Yes"', True),
    ],
)
def test_parse_verdict(reply: str, verdict: bool) -> None:
    assert parse_verdict(reply) is verdict


@pytest.mark.parametrize(
    "reply",
    [
        "maybe",
        "",
        "The answer is yes",
        "Yesterday",
        " YES, same film",
        "No, because yes",
        "yes or no",
    ],
)
def test_unreadable_replies_raise(reply: str) -> None:
    with pytest.raises(JudgeReplyError, match="not one word, 'yes' or 'no'"):
        parse_verdict(reply)


# -------------------------------------------------------------- judge reward
def test_verdicts_score_and_cache(fake_judge: FakeJudge) -> None:
    j = judge(fake_judge, "stable")
    assert j.verdicts("Who directed Alien?", "ridley scott.", "Ridley Scott") == (True,) * len(
        PROMPTS
    )
    assert j.score("Who directed Alien?", "James Cameron", "Ridley Scott") == 0.0
    assert fake_judge.requests["stable"] == 2 * len(PROMPTS) == j.client.requests
    assert j.score("Who directed Alien?", "ridley scott.", "Ridley Scott") == 1.0
    assert fake_judge.requests["stable"] == 2 * len(PROMPTS), "cached: no new request"
    assert judge(fake_judge, "flippy").score("q", "a", "a") == pytest.approx(
        sum("accept" in p.system.lower() for p in PROMPTS) / len(PROMPTS)
    )


def test_disk_cache_survives_a_new_judge(fake_judge: FakeJudge, tmp_path: Path) -> None:
    path = tmp_path / "verdicts.jsonl"
    judge(fake_judge, "stable", cache_path=path).verdicts("q", "x", "x")
    assert len(path.read_text().splitlines()) == len(PROMPTS)
    again = judge(fake_judge, "stable", cache_path=path)
    assert len(again) == len(PROMPTS) and again.verdicts("q", "x", "x") == (True,) * len(PROMPTS)
    assert fake_judge.requests["stable"] == len(PROMPTS)
    other_model = judge(fake_judge, "flippy", cache_path=path)
    other_model.verdict("q", "x", "x")
    assert fake_judge.requests["flippy"] == 1, "the cache key includes the model"
    path.write_text('{"key": "k"}\n')
    with pytest.raises(ValueError, match="verdicts.jsonl:1: not a judge cache line"):
        judge(fake_judge, "stable", cache_path=path)


def test_retries_then_succeeds(fake_judge: FakeJudge) -> None:
    j = judge(fake_judge, "flaky", retries=2)
    assert j.verdict("q", "a", "a") is True
    assert fake_judge.requests["flaky"] == 3


@pytest.mark.parametrize(
    ("model", "kwargs", "error", "fragment"),
    [
        (
            "broken",
            {"retries": 2},
            JudgeEndpointError,
            "failed after 3 attempts; last error: HTTP 500",
        ),
        (
            "flaky",
            {"retries": 1},
            JudgeEndpointError,
            "failed after 2 attempts; last error: HTTP 503",
        ),
        ("slow", {"retries": 1, "timeout_s": 0.1}, JudgeEndpointError, "failed after 2 attempts"),
        ("garbage", {}, JudgeReplyError, "judge replied 'maybe'"),
    ],
)
def test_failures_raise_with_context(
    fake_judge: FakeJudge, model: str, kwargs: dict, error: type, fragment: str
) -> None:
    with pytest.raises(error) as err:
        judge(fake_judge, model, **kwargs).verdict("q", "my answer", "gold")
    assert fragment in str(err.value)
    assert f"model '{model}'" in str(err.value) and "prompt 'grader'" in str(err.value)


def test_unreachable_and_wrong_route(fake_judge: FakeJudge) -> None:
    with FakeJudge() as gone:
        url = gone.url
    with pytest.raises(
        JudgeEndpointError, match=f"{url}/v1/chat/completions .*failed after 2 attempts"
    ):
        JudgeReward(url, "stable", retries=1, backoff_s=0.0).verdict("q", "a", "a")
    with pytest.raises(JudgeEndpointError, match="HTTP 404"):
        JudgeReward(fake_judge.url + "/api", "stable", backoff_s=0.0).verdict("q", "a", "a")
    with pytest.raises(ValueError, match="http:// or https://"):
        JudgeReward("127.0.0.1:8000")


# ------------------------------------------------------------- consistency
def test_records_to_items(records: list[dict]) -> None:
    items, skipped = items_from_records(records, gold_text=toy_gold)
    assert skipped == 1 and len(items) == 9
    assert (items[0].question, items[0].answer, items[0].gold, items[0].rule_correct) == (
        "What is 0 squared?",
        "The 0.",
        "0",
        False,
    )
    assert items[2].rule_correct and not items[1].rule_correct
    with pytest.raises(ValueError, match="record 0 .*missing key 'messages'"):
        items_from_records([{k: v for k, v in records[0].items() if k != "messages"}])


def test_a_gold_that_is_not_text_needs_its_familys_renderer(records: list[dict]) -> None:
    with pytest.raises(ValueError, match="record 0 .*the gold is not text"):
        items_from_records(records)
    as_text = [{**r, "gold": toy_gold(r["gold"])} for r in records]
    assert items_from_records(as_text)[0] == items_from_records(records, gold_text=toy_gold)[0]


def test_gold_text_comes_from_the_family_of_the_env() -> None:
    from agentenv.judge.gold import family_gold_text, gold_as_text

    media, disease = (
        family_gold_text("MediaSearch-SingleTurn-v0"),
        family_gold_text("RareDiseaseDiagnosis-v0"),
    )
    assert (
        media({"answer": "Alien", "aliases": []}) == "Alien" and media({"answer": 1979}) == "1979"
    )
    assert disease({"diagnosis": ["OMIM:1", "OMIM:2"], "name": "X"}) == "OMIM:1 or OMIM:2 (X)"
    assert media("already text") == disease("already text") == "already text"
    with pytest.raises(
        ValueError, match="record 3: the family's gold_text cannot render this gold"
    ):
        gold_as_text({"label": "?"}, disease, "record 3")


def test_the_env_id_of_a_run_is_read_from_its_summary(tmp_path: Path) -> None:
    from agentenv.judge.gold import run_env_id

    episodes = tmp_path / "episodes.jsonl"
    assert run_env_id(episodes) is None
    (tmp_path / "summary.json").write_text(json.dumps({"env_id": "RareDiseaseDiagnosis-v0"}))
    assert run_env_id(episodes) == "RareDiseaseDiagnosis-v0"


def test_stable_judge_passes(fake_judge: FakeJudge, records: list[dict]) -> None:
    report = judge_consistency(records, judge(fake_judge, "stable"), gold_text=toy_gold)
    assert (report.n_items, report.skipped, report.fleiss_kappa, report.flip_rate) == (
        9,
        1,
        1.0,
        0.0,
    )
    assert report.stable() and report.flipped == ()
    # The judge forgives "The 0.", "The 16." and "The 64." where the exact-match rule does not.
    assert report.rule_agreement == pytest.approx(6 / 9)
    assert report.rule_kappa == pytest.approx(16 / 43)  # p_o = 54/81, p_e = 38/81
    assert set(report.yes_rate.values()) == {5 / 9}
    assert "Fleiss' kappa across prompts: 1.000" in report.format()


def test_flipping_judge_is_caught(fake_judge: FakeJudge, records: list[dict]) -> None:
    report = judge_consistency(records, judge(fake_judge, "flippy"), workers=4, gold_text=toy_gold)
    assert report.flip_rate == 1.0 and len(report.flipped) == 9
    assert report.fleiss_kappa < 0.0 and not report.stable()
    assert set(report.yes_rate.values()) == {0.0, 1.0}


def test_second_scoring_makes_no_request(fake_judge: FakeJudge, records: list[dict]) -> None:
    j = judge(fake_judge, "stable")
    first = judge_consistency(records, j, workers=3, gold_text=toy_gold)
    made = fake_judge.requests["stable"]
    assert made == 9 * len(PROMPTS)
    assert (
        judge_consistency(records, j, gold_text=toy_gold) == first
        and fake_judge.requests["stable"] == made
    )


def test_degenerate_reports(fake_judge: FakeJudge, records: list[dict]) -> None:
    right = [r for r in records if r["reward_components"]["accuracy"] == 1.0]
    report = judge_consistency(right, judge(fake_judge, "stable"), gold_text=toy_gold)
    assert math.isnan(report.fleiss_kappa) and report.stable(), "all yes: kappa undefined, no flips"
    assert json.loads(json.dumps(report.to_dict()))["fleiss_kappa"] is None
    assert "undefined" in report.format()
    with pytest.raises(ValueError, match="no answered episodes"):
        judge_consistency(records[-1:], judge(fake_judge, "stable"), gold_text=toy_gold)
