"""The rule-based readers: <say> parsing, what a doctor asks, what a patient or user claims."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from agentenv.engine.parsing import Answer, ParseError, ToolCalls
from agentenv.envs.media_search.dialogue.film_requests import (
    Request,
    describe,
    fields_asked,
    reveal,
)
from agentenv.envs.media_search.dialogue.user_claims import (
    FieldClaim,
    check_user_message,
    is_true,
    mentions_title,
    user_claims,
)
from agentenv.envs.rare_disease.dialogue.patient_claims import (
    Claim,
    asked_terms,
    check_reply,
    mentions_diagnosis,
    reply_claims,
)
from agentenv.envs.rare_disease.patients.simulated import Patient
from agentenv.multiagent.base import DialogueEnv
from agentenv.multiagent.messages import Say, parse_lead, parse_speaker


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("<say>Hello</say>", Say),
        ("<think>plan</think>\n<say>Hello</say>", Say),
        ('<tool_call>{"name": "search", "arguments": {"query": "x"}}</tool_call>', ToolCalls),
        ("<answer>OMIM:154700</answer>", Answer),
        ("Hello", ParseError),
        ("<say>a</say><say>b</say>", ParseError),
        ("<say>a</say><answer>b</answer>", ParseError),
        ("<say></say>", ParseError),
        ("<say>unclosed", ParseError),
        ("<think>x <say>hidden</say></think>", ParseError),
    ],
)
def test_parse_lead(text: str, kind: type) -> None:
    assert isinstance(parse_lead(text, "patient"), kind)


def test_errors_say_what_is_expected() -> None:
    error = parse_lead("Do you have seizures?", "patient")
    assert isinstance(error, ParseError) and "<say>" in error.reason and "<say>" in error.message()
    reply = parse_speaker('<tool_call>{"name": "x", "arguments": {}}</tool_call>', "doctor")
    assert isinstance(reply, ParseError) and "only talks" in reply.reason
    assert isinstance(parse_speaker("Yes.", "doctor"), ParseError)
    assert parse_speaker(3, "doctor").reason == "action must be a str, got int"  # type: ignore[arg-type]


def test_asked_terms_by_id_and_by_name(dx: DialogueEnv) -> None:
    kb = dx.kb
    assert asked_terms(kb, "Do you have seizures (HP:0001250)?") == ("HP:0001250",)
    assert asked_terms(kb, "Do you have long slender fingers or short stature?") == (
        "HP:0001166",
        "HP:0004322",
    )
    assert asked_terms(kb, "How are you today?") == ()


def test_reply_claims_and_truth(dx: DialogueEnv) -> None:
    kb = dx.kb
    patient = Patient(
        "OMIM:154700",
        present=("HP:0001166",),
        hidden=("HP:0001083",),
        excluded=("HP:0004322",),
        findings=("HP:0001166", "HP:0001083"),
    )
    assert reply_claims(kb, "Yes.", ["HP:0001083"]) == (Claim("HP:0001083", "yes"),)
    assert reply_claims(kb, "No, I don't have short stature.", []) == (Claim("HP:0004322", "no"),)
    check = check_reply(
        kb,
        patient,
        "Yes, I have ectopia lentis (HP:0001083).\nNo, I don't have seizures.",
        ["HP:0001083", "HP:0001250"],
        ["HP:0001083", "HP:0001250"],
    )
    assert (
        not check.false_claims and not check.unanswered and not check.leak and not check.volunteered
    )
    lie = check_reply(
        kb, patient, "No, I don't have ectopia lentis (HP:0001083).", ["HP:0001083"], ["HP:0001083"]
    )
    assert lie.false_claims == (Claim("HP:0001083", "no"),)
    unasked = check_reply(kb, patient, "Yes, I have ectopia lentis (HP:0001083).", [], [])
    assert unasked.volunteered == ("HP:0001083",)
    evasive = check_reply(
        kb, patient, "I'm not sure about short stature.", ["HP:0004322"], ["HP:0004322"]
    )
    assert evasive.evasions and not evasive.false_claims


def test_diagnosis_mentions(dx: DialogueEnv) -> None:
    kb = dx.kb
    assert mentions_diagnosis(kb, "Maybe it is Marfan syndrome?", ["OMIM:154700"])
    assert mentions_diagnosis(kb, "OMIM:154700", ["OMIM:154700"])
    assert not mentions_diagnosis(
        kb, "Yes, I have long slender fingers (HP:0001166).", ["OMIM:154700"]
    )


REQUEST = Request(
    "constraint",
    year=(1990, 1999),
    genre="Crime",
    director="Michael Mann",
    cast=("Al Pacino", "Robert De Niro"),
)


def test_request_rendering_round_trip() -> None:
    assert describe(REQUEST, ["genre"]) == "I'm looking for a crime film."
    assert Request.from_dict(REQUEST.to_dict()) == REQUEST
    assert reveal(REQUEST, "runtime") == "I don't mind about the running time."
    assert fields_asked("Is it a comedy? How long is it?") == ("genre", "runtime")
    assert fields_asked("Thanks!") == ()


def test_user_claims(media: DialogueEnv) -> None:
    vocab = media.vocabulary
    said = user_claims(
        vocab, "It's from the 1990s. It was directed by Michael Mann and stars Al Pacino.", REQUEST
    )
    assert (
        FieldClaim("year", "decade", 1990) in said
        and FieldClaim("director", "director", "michael mann") in said
    )
    assert FieldClaim("cast", "cast", "al pacino") in said and all(
        is_true(c, REQUEST) for c in said
    )
    wrong = user_claims(vocab, "It came out in 2005. It was directed by Steven Spielberg.", REQUEST)
    assert wrong and not any(is_true(c, REQUEST) for c in wrong)
    assert user_claims(vocab, "It's not a comedy.", REQUEST) == ()
    assert user_claims(vocab, "I don't mind about the running time.", REQUEST) == (
        FieldClaim("runtime", "none", None),
    )


def test_user_check_and_title(media: DialogueEnv) -> None:
    question = SimpleNamespace(answer="Heat", aliases=("tt0113277", "Heat (1995)"))
    vocab = media.vocabulary
    check = check_user_message(
        vocab, "It stars Al Pacino.", REQUEST, question, ["cast"], ["cast"], ["cast"]
    )
    assert (
        not check.false_claims and not check.unanswered and not check.volunteered and not check.leak
    )
    early = check_user_message(vocab, "It stars Al Pacino.", REQUEST, question, [], [], ["cast"])
    assert early.volunteered == ("cast",)
    assert mentions_title(vocab, "I think it's Heat.", question, REQUEST)
    assert mentions_title(vocab, "Maybe tt0113277?", question, REQUEST)
    assert not mentions_title(vocab, "It's a crime film from the 1990s.", question, REQUEST)
    assert check_user_message(
        vocab, "No idea.", REQUEST, question, ["year"], ["year"], []
    ).unanswered == ("year",)


def test_feature_film_in_a_request_does_not_name_the_film_the_feature() -> None:
    """A true "feature film" states the request; it is not a leak of the title "The Feature" (train task 8051)."""
    from agentenv.envs.media_search.dialogue.film_requests import request_of
    from agentenv.envs.media_search.dialogue.user_claims import mentions_title, vocabulary
    from agentenv.envs.media_search.questions.cache import load_questions

    question = next(q for q in load_questions("train") if q.answer == "The Feature")
    request = request_of(question)
    assert request is not None and request.feature_only
    from agentenv.corpora.media.catalog import load_catalog

    vocab = vocabulary(load_catalog())
    assert not mentions_title(
        vocab, "I'm looking for the longest 2008 feature film.", question, request
    )
    assert mentions_title(
        vocab, "I think it is called The Feature Presentation, no wait.", question, None
    )


def test_a_repeated_finding_is_one_term(dx: DialogueEnv) -> None:
    """The reading kept every repeat and counted distinct terms after each: quadratic ("seizure"
    x 4,000 in one 32 KB message took 325-593 ms a step); a repeat now costs one lookup."""
    kb = dx.kb
    assert asked_terms(kb, "Do you have seizures? " + "seizure " * 4000) == ("HP:0001250",)


def test_a_name_repeated_thousands_of_times_keeps_the_role_of_its_cue(media: DialogueEnv) -> None:
    """Each name looked back over the whole sentence for its cue word (a second for 4,000 names)."""
    said = user_claims(media.vocabulary, "It stars " + "Al Pacino " * 3000 + ".", REQUEST)
    assert set(said) == {FieldClaim("cast", "cast", "al pacino")}
    said = user_claims(media.vocabulary, "Directed by " + "Michael Mann " * 3000 + ".", REQUEST)
    assert set(said) == {FieldClaim("director", "director", "michael mann")}


@pytest.mark.parametrize(
    ("reply", "leaks"),
    [
        ("Yes, I have arachnodactyly. My cousin says it's Marfan.", True),  # scored 1.0, 0 leaks
        ("Marfan syndrom, the doctor wrote.", True),
        ("M-a-r-f-a-n syndrome.", True),
        ("Marfan syndrome.", True),
        ("They said I have a marfanoid habitus.", False),  # a phenotype, not the disease
        ("Yes, my fingers are long and thin.", False),
    ],
)
def test_a_partial_or_spelt_out_name_of_the_diagnosis_is_a_leak(
    dx: DialogueEnv, reply: str, leaks: bool
) -> None:
    assert mentions_diagnosis(dx.kb, reply, ["OMIM:154700"]) is leaks


def test_a_user_who_leaves_out_the_opening_is_not_faithful() -> None:
    """The briefing says what to open with; "Hello." scored the user 1.0, the opening is now asked."""
    from agentenv.multiagent import make

    dialogue = make("MediaConcierge-v0")
    dialogue.reset(seed=5)
    dialogue.step("<say>Hello.</say>")
    assert dialogue.rewards["user"] == 0.0
    assert dialogue.judgments[-1].counts["unanswered"] >= 1
    dialogue.reset(seed=5)
    dialogue.step(f"<say>{dialogue.infos['user']['private']['opening_text']}</say>")
    assert dialogue.rewards["user"] == 1.0
