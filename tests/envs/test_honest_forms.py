"""Every gold of every test split (and of MediaSearch's casual split) is credited in each documented form.

Why: a closed grammar that refuses attacks is worth little if it also refuses
honest answers (``**2006**`` and ``Glaucoma - sleep apnea (OMIM:137763)``
scored 0 under the old grader). The forms are the ones the env pages list:
name or title, id, ``Name (id)``, ``id (Name)``, ``id - Name``, ``Title (Year)``,
``Title (id)``, bold, italics in both spellings, inline code, decoration around
the name part of a pair (``**Title** (Year)``), a sentence period after a name
that ends with its own (``Monsters, Inc..``), numbered and bullet lists, number
words for small counts, and integers written with ``.0``. Every gold is
read by the grader directly; the first tasks of every registered id also go
through the env's own ``step``.
"""

from __future__ import annotations

from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import gymnasium as gym
import pytest

import agentenv  # noqa: F401  (registers the ids)
from agentenv.corpora.hpo.knowledge_base import HpoKnowledgeBase, load_hpo_kb
from agentenv.envs.media_search.grading.answer_catalog import answer_catalog
from agentenv.envs.media_search.grading.grade import number_words, read_answer
from agentenv.envs.media_search.questions.record import Question
from agentenv.envs.media_search.tasks.question_tasks import split_questions
from agentenv.envs.rare_disease.grading.answers import resolve_answer
from agentenv.envs.rare_disease.grading.disease_names import disease_spelling_index
from agentenv.envs.rare_disease.grading.grade import grade
from agentenv.multiagent import as_single_agent, make

THROUGH_THE_ENV = 12
"""Tasks per registered id answered through ``env.step`` in every form."""
MEDIA_IDS = ("MediaSearch-v0", "MediaSearch-SingleTurn-v0")
RARE_IDS = ("RareDiseaseDiagnosis-v0", "RareDiseaseDiagnosis-SingleTurn-v0")


def rare_forms(
    kb: HpoKnowledgeBase, did: str, others: tuple[str, str]
) -> Iterator[tuple[str, str]]:
    """``(form, answer text)`` for one gold disease; the bare name only where no other disease shares it."""
    name = kb.disease_name(did)
    names = disease_spelling_index(kb)
    shared = names.lookup(name).ref != did
    yield "id", did
    yield "code_id", f"`{did}`"
    yield "name_id", f"{name} ({did})"
    yield "id_paren_name", f"{did} ({name})"
    yield "bold_name_id", f"**{name}** ({did})"
    yield "italic_name_id", f"_{name}_ ({did})."
    yield "id_name", f"{did} - {name}"
    yield "numbered", f"1. {others[0]}\n2. {did}\n3. {others[1]}"
    yield "bullets", f"- {others[0]}\n- **{name} ({did})**"
    if not shared:
        yield "name", name
        yield "bold", f"**{name}**."
        yield "italics", f"*{name}*"
        yield "underscores", f"_{name}_"
        yield "code", f"`{name}`"
        yield "sentence_period", f"{name}."
        yield "numbered_names", f"1. {name}\n2. {others[0]}"


def media_forms(q: Question) -> Iterator[tuple[str, str]]:
    """``(form, answer text)`` for one gold; a title that several films share only with its year or id."""
    if q.answer_type in ("number", "year"):
        yield from (
            ("digits", q.answer),
            ("bold", f"**{q.answer}**"),
            ("numbered", f"1. {q.answer}"),
            ("bullet", f"- {q.answer}."),
            ("code", f"`{q.answer}`"),
            ("italics", f"*{q.answer}*"),
            ("underscores", f"_{q.answer}_"),
            ("zero_fraction", f"{q.answer}.0"),
            ("bold_zero_fraction", f"**{q.answer}.0**."),
        )
        value = int(q.answer)
        if q.answer_type == "number" and value < 100:  # number_words writes 0 to 99
            yield "word", str(number_words(value))
        return
    if q.answer_type == "title":
        film_id = next(a for a in q.aliases if a.startswith(("tt", "m")))
        dated = next(a for a in q.aliases if a.endswith(")"))
        title, year = dated[: dated.rindex(" (")], dated[dated.rindex("(") :]
        yield from (
            ("id", film_id),
            ("title_year", dated),
            ("bold", f"**{dated}**"),
            ("numbered", f"1. {dated}"),
            ("bullet", f"* {dated}"),
            ("code", f"`{dated}`"),
            ("italics", f"*{dated}*"),
            ("underscores", f"_{dated}_."),
            ("bold_title_year", f"**{title}** {year}"),
            ("italic_title_year", f"*{title}* {year}."),
            ("code_title_year", f"`{title}` {year}"),
            ("title_id", f"{title} ({film_id})"),
            ("id_title", f"{film_id} ({title})"),
            ("id_title_year", f"{film_id} (**{dated}**)"),
            ("code_id", f"`{film_id}`"),
        )
        if read_answer(q.answer, q).correct:
            yield "title", q.answer
            yield "sentence_period", f"{q.answer}."
            yield "italic_title", f"_{q.answer}_"
        return
    yield from (
        ("name", q.answer),
        ("bold", f"**{q.answer}**"),
        ("numbered", f"1. {q.answer}"),
        ("quoted", f'"{q.answer}"'),
        ("code", f"`{q.answer}`"),
        ("italics", f"*{q.answer}*"),
        ("underscores", f"_{q.answer}_"),
        ("sentence_period", f"{q.answer}."),
    )


@pytest.fixture(scope="module")
def kb() -> HpoKnowledgeBase:
    return load_hpo_kb()


def _rare_golds(env: gym.Env) -> list[str]:
    return list(dict.fromkeys(t.gold["diagnosis"][0] for t in env.unwrapped.tasks))


def test_every_rare_disease_test_gold_is_credited_in_every_form(kb: HpoKnowledgeBase) -> None:
    golds = _rare_golds(gym.make(RARE_IDS[1], split="test"))
    refused, shared = [], 0
    for i, did in enumerate(golds):
        others = (golds[i - 1], golds[i - 2])
        forms = list(rare_forms(kb, did, others))
        shared += not any(form == "name" for form, _ in forms)
        for form, text in forms:
            if grade(resolve_answer(kb, text), [did], k=3)["accuracy"] != 1.0:
                refused.append((did, form, text, resolve_answer(kb, text).feedback))
    assert not refused, refused[:5]
    assert len(golds) > 100 and shared <= 5, (len(golds), shared)


def test_every_media_test_gold_is_credited_in_every_form() -> None:
    refused, shared_titles = [], 0
    questions = split_questions("test")
    for q in questions:
        forms = list(media_forms(q))
        shared_titles += q.answer_type == "title" and not any(form == "title" for form, _ in forms)
        for form, text in forms:
            reading = read_answer(text, q)
            if not reading.correct:
                refused.append((q.answer, form, text, reading.feedback))
    assert not refused, refused[:5]
    assert len(questions) == 1000 and shared_titles < 50, shared_titles


def test_every_media_casual_gold_is_credited_in_every_form() -> None:
    """The hand-written split too: its golds are credited in every documented form."""
    refused = []
    questions = split_questions("casual")
    for q in questions:
        for form, text in media_forms(q):
            reading = read_answer(text, q)
            if not reading.correct:
                refused.append((q.answer, form, text, reading.feedback))
    assert not refused, refused[:5]
    assert len(questions) >= 100


def _answer(env: Any, index: int, text: str) -> float:
    env.reset(seed=0, options={"index": index})
    _, reward, terminated, _, info = env.step(f"<answer>{text}</answer>")
    assert terminated and "answer_feedback" in info
    return float(reward)


@pytest.mark.parametrize("env_id", MEDIA_IDS + ("MediaConcierge-v0",))
def test_media_forms_through_the_env(env_id: str) -> None:
    env = (
        as_single_agent(make(env_id, split="test"))
        if "Concierge" in env_id
        else gym.make(env_id, split="test")
    )
    tasks = env.aec_env.tasks if hasattr(env, "aec_env") else env.unwrapped.tasks
    for index in range(THROUGH_THE_ENV):
        for form, text in media_forms(tasks[index].case):
            assert _answer(env, index, text) == 1.0, (env_id, index, form, text)


@pytest.mark.parametrize("env_id", RARE_IDS + ("DiagnosisDialogue-v0",))
def test_rare_disease_forms_through_the_env(env_id: str, kb: HpoKnowledgeBase) -> None:
    env = (
        as_single_agent(make(env_id, split="test"))
        if "Dialogue" in env_id
        else gym.make(env_id, split="test")
    )
    tasks = env.aec_env.tasks if hasattr(env, "aec_env") else env.unwrapped.tasks
    golds = [tasks[i].gold["diagnosis"][0] for i in range(THROUGH_THE_ENV + 2)]
    for index in range(THROUGH_THE_ENV):
        others = tuple(g for g in golds if g != golds[index])[:2]
        for form, text in rare_forms(kb, golds[index], others):
            assert _answer(env, index, text) == 1.0, (env_id, index, form, text)


def test_every_catalog_title_ending_in_a_period_reads_with_the_sentence_period() -> None:
    """``Monsters, Inc..``: the sentence's period after the title's own is decoration, the title's stays."""
    cat = answer_catalog()
    ending = [f for f in cat.catalog if f.title.endswith(".")]
    misread = []
    for film in ending:
        shared = cat.titles.lookup(film.title).ref != film.id
        texts = [f"{film.title} ({film.year}).", f"{film.id} ({film.title})."]
        texts += [] if shared else [f"{film.title}.", f"**{film.title}**."]
        gold = SimpleNamespace(answer=film.title, aliases=(film.id,), answer_type="title")
        misread += [
            (t, read_answer(t, gold).feedback) for t in texts if not read_answer(t, gold).correct
        ]
    assert not misread, misread[:5]
    assert len(ending) >= 90, len(ending)
