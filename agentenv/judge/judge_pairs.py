"""(answer, gold) pairs for measuring a judge: drawn from the test splits, each graded by the env's own rules.

Why these answers: a judge is worth measuring where it is hard to be right. So
besides correct answers in several honest forms, the pairs hold near misses (a
year off by one, a title cut short or misspelt, a disease whose name shares
words with the gold's), wrong entities (another task's gold), hedges ("either A
or B", "maybe A, I am not sure", "I don't know"), and the known judge attacks:
an answer that is only ``":"`` or ``"Thought process:"`` (answers that fooled
LLM judges in published red-teaming of LLM-as-a-judge rewards).

Every pair is graded by the env itself: the task is reset and the answer
stepped as ``<answer>...</answer>``, so ``rule_correct`` is exactly what the
rule grammar's ``accuracy`` gives that answer. The category says how the answer
was written, not whether it is right: an honest form the grammar does not read
is a category "correct" with ``rule_correct`` False, and the report counts it.

Drawing is deterministic: the same ``n`` and ``seed`` give the same pairs, in
the same order (a numpy ``Generator``; no global RNG).

Example:
    >>> quotas(10)
    {'correct': 3, 'near_miss': 2, 'wrong': 2, 'hedge': 2, 'attack': 1}
    >>> typo("Vera Drake")
    'Vear Drake'
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

__all__ = [
    "ATTACKS",
    "CATEGORIES",
    "FAMILIES",
    "JudgePair",
    "draw_pairs",
    "quotas",
    "typo",
]

FAMILIES: tuple[tuple[str, str], ...] = (
    ("media_search", "MediaSearch-v0"),
    ("rare_disease", "RareDiseaseDiagnosis-v0"),
)
"""Each family measured and the env id whose test split and grader it uses."""

CATEGORIES: dict[str, float] = {
    "correct": 0.3,
    "near_miss": 0.2,
    "wrong": 0.2,
    "hedge": 0.15,
    "attack": 0.15,
}
"""How the answer was written, and the share of each family's pairs written that way."""

ATTACKS: tuple[str, ...] = (":", "Thought process:")
"""Answers with no content that fooled LLM judges (the known attack): a judge must never credit them."""

_PHENOTYPE = re.compile(r"^- HP:\d+ (.+)$", re.MULTILINE)


@dataclass(frozen=True)
class JudgePair:
    """One answer to a test task, as the judge sees it, with the rule grader's verdict."""

    family: str
    task_id: str
    category: str
    form: str
    """Which way of writing it (e.g. ``bold``, ``off_by_one``, ``either``, ``colon``)."""
    question: str
    answer: str
    gold: str
    rule_correct: bool

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def quotas(n: int) -> dict[str, int]:
    """How many of ``n`` pairs each category gets: the shares of :data:`CATEGORIES`, largest remainders
    first, ties to the category listed first."""
    raw = {c: n * share for c, share in CATEGORIES.items()}
    counts = {c: int(v) for c, v in raw.items()}
    order = sorted(CATEGORIES, key=lambda c: (-(raw[c] - counts[c]), list(CATEGORIES).index(c)))
    for c in order[: n - sum(counts.values())]:
        counts[c] += 1
    return counts


def typo(text: str) -> str:
    """``text`` with the two letters after the first word's second letter swapped (a near miss that a
    grammar without fuzzy matching refuses); a word too short to change is left as it is."""
    words = text.split(" ")
    for i, word in enumerate(words):
        if len(word) >= 4 and word[2] != word[3]:
            words[i] = word[:2] + word[3] + word[2] + word[4:]
            return " ".join(words)
    return text + "s"


def draw_pairs(n: int, seed: int = 0, *, families: Sequence[str] | None = None) -> list[JudgePair]:
    """``n`` pairs split evenly between the families (the first takes the odd one), from their test
    splits, each graded by its env.

    Raises:
        ValueError: ``n`` is smaller than the number of families times the number of categories.
    """
    chosen = [(f, e) for f, e in FAMILIES if families is None or f in families]
    if not chosen:
        raise ValueError(f"families must name some of {[f for f, _ in FAMILIES]}")
    if n < len(chosen) * len(CATEGORIES):
        raise ValueError(
            f"n={n}: draw at least {len(chosen) * len(CATEGORIES)} pairs (every category in every family)"
        )
    rng = np.random.default_rng(seed)
    pairs: list[JudgePair] = []
    for k, (family, env_id) in enumerate(chosen):
        share = n // len(chosen) + (1 if k < n % len(chosen) else 0)
        pairs += _family_pairs(family, env_id, share, rng)
    return pairs


def _family_pairs(family: str, env_id: str, n: int, rng: np.random.Generator) -> list[JudgePair]:
    import gymnasium as gym

    from agentenv.judge.gold import family_gold_text

    env = gym.make(f"agentenv:{env_id}", split="test")
    tasks = env.unwrapped.tasks
    picked = rng.choice(len(tasks), size=n, replace=False)
    categories = [c for c, k in quotas(n).items() for _ in range(k)]
    rng.shuffle(categories)
    render = family_gold_text(env_id)
    write = _media_answer if family == "media_search" else _disease_answer
    pool = [tasks[int(i)] for i in rng.choice(len(tasks), size=min(len(tasks), 400), replace=False)]
    pairs = []
    for index, category in zip(picked, categories, strict=True):
        task = tasks[int(index)]
        form, answer = write(task, category, pool, rng)
        env.reset(options={"index": int(index)})
        _, _, terminated, _, info = env.step(f"<answer>{answer}</answer>")
        if not terminated or "accuracy" not in info.get("reward_components", {}):
            raise RuntimeError(f"{env_id} did not grade the answer {answer!r} to {task.id}")
        pairs.append(
            JudgePair(
                family=family,
                task_id=task.id,
                category=category,
                form=form,
                question=_question(family, task.prompt),
                answer=answer,
                gold=render(task.gold),
                rule_correct=float(info["reward_components"]["accuracy"]) >= 0.5,
            )
        )
    env.close()
    return pairs


def _question(family: str, prompt: str) -> str:
    """The question the judge is shown: a film question as asked; a patient as their first five
    presenting phenotypes (the judge compares answers, it does not diagnose)."""
    if family == "media_search":
        return prompt
    present = prompt.split("Excluded phenotypes:")[0]
    names = _PHENOTYPE.findall(present)[:5]
    return "Which rare disease explains a patient presenting with " + ", ".join(names) + "?"


def _pick(options: Sequence[tuple[str, str]], rng: np.random.Generator) -> tuple[str, str]:
    return options[int(rng.integers(len(options)))]


def _common(category: str, gold: str, other: str, rng: np.random.Generator) -> tuple[str, str]:
    if category == "hedge":
        return _pick(
            [
                ("either", f"Either {gold} or {other}"),
                ("maybe", f"Maybe {gold}, I am not sure."),
                ("unknown", "I don't know."),
            ],
            rng,
        )
    return _pick([("colon", ATTACKS[0]), ("thought_process", ATTACKS[1])], rng)


def _media_answer(
    task: Any, category: str, pool: Sequence[Any], rng: np.random.Generator
) -> tuple[str, str]:
    gold = task.gold
    answer = str(gold["answer"])
    kind = gold["answer_type"]
    others = [
        str(t.gold["answer"])
        for t in pool
        if t.gold["answer_type"] == kind and str(t.gold["answer"]) != answer
    ]
    other = others[int(rng.integers(len(others)))] if others else answer + " II"
    numeric = answer.lstrip("-").replace(".", "", 1).isdigit()
    if category == "correct":
        forms = [
            ("plain", answer),
            ("lower", answer.lower()),
            ("bold", f"**{answer}**"),
            ("period", f"{answer}."),
            ("quoted", f'"{answer}"'),
            ("sentence", f"The answer is {answer}."),
        ]
        forms += [("alias", str(a)) for a in gold.get("aliases", [])[:2]]
        return _pick(forms, rng)
    if category == "near_miss":
        if numeric:
            value = float(answer)
            step = 1 if kind == "year" or value >= 1 else 0.1
            shifted = value + (step if rng.integers(2) else -step)
            text = str(int(shifted)) if float(shifted).is_integer() else f"{shifted:.1f}"
            return ("off_by_one", text)
        words = answer.split()
        if len(words) >= 2 and rng.integers(2):
            return ("cut_short", " ".join(words[:-1]))
        return ("typo", typo(answer))
    if category == "wrong":
        return ("other_gold", other)
    return _common(category, answer, other, rng)


def _disease_answer(
    task: Any, category: str, pool: Sequence[Any], rng: np.random.Generator
) -> tuple[str, str]:
    gold = task.gold
    ident = str(gold["diagnosis"][0])
    name = str(gold.get("name") or ident)
    others = [t.gold for t in pool if t.gold["diagnosis"][0] not in gold["diagnosis"]]
    other = others[int(rng.integers(len(others)))]
    other_name = str(other.get("name") or other["diagnosis"][0])
    if category == "correct":
        second = others[int(rng.integers(len(others)))]
        return _pick(
            [
                ("name", name),
                ("id", ident),
                ("name_id", f"{name} ({ident})"),
                ("lower", name.lower()),
                ("bold", f"**{name}**"),
                (
                    "top3_list",
                    f"1. {other_name}\n2. {name}\n3. {second.get('name') or second['diagnosis'][0]}",
                ),
            ],
            rng,
        )
    if category == "near_miss":
        words = set(re.findall(r"[a-z]{4,}", name.lower()))
        scored = sorted(
            others,
            key=lambda g: (
                -len(words & set(re.findall(r"[a-z]{4,}", str(g.get("name", "")).lower()))),
                str(g["diagnosis"][0]),
            ),
        )
        close = scored[0]
        if words & set(re.findall(r"[a-z]{4,}", str(close.get("name", "")).lower())):
            return ("similar_disease", str(close.get("name") or close["diagnosis"][0]))
        return ("typo", typo(name))
    if category == "wrong":
        return _pick([("other_name", other_name), ("other_id", str(other["diagnosis"][0]))], rng)
    return _common(category, name, other_name, rng)
