"""Build attack contexts for every registered id: which tasks to attack, and their distractors.

Why per family: what an "answer" is differs (a title, a name, a number; a
ranked list of diseases), so each family says how to read its gold and where
wrong answers of the same type come from. Everything else is shared.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import gymnasium as gym

import agentenv  # noqa: F401  (registers the ids)
from agentenv.envs.media_search.grading.grade import read_answer
from agentenv.multiagent import as_single_agent, env_ids, make

from .attacks import AttackContext

GYM_IDS = (
    "MediaSearch-v0",
    "MediaSearch-SingleTurn-v0",
    "RareDiseaseDiagnosis-v0",
    "RareDiseaseDiagnosis-SingleTurn-v0",
)
ALL_IDS = (*GYM_IDS, *env_ids())
MEDIA_TYPES = ("title", "person", "number", "year")


@dataclass
class Target:
    """One env, the indices of the tasks under attack, and a context per task."""

    env_id: str
    env: Any
    contexts: dict[int, AttackContext]
    family: str = ""

    def answer(self, index: int, text: str) -> tuple[float, bool, dict[str, Any]]:
        """Reset to task ``index``, send ``<answer>text</answer>``: (reward, terminated, info)."""
        self.env.reset(seed=0, options={"index": index})
        _, reward, terminated, _, info = self.env.step(f"<answer>{text}</answer>")
        return float(reward), bool(terminated), info


def build_env(env_id: str) -> Any:
    if env_id in GYM_IDS:
        return gym.make(env_id, split="test")
    return as_single_agent(make(env_id, split="test"))


def _tasks(env: Any) -> Any:
    inner = getattr(env, "aec_env", None)
    return inner.tasks if inner is not None else env.unwrapped.tasks


def _family(env: Any) -> str:
    task = _tasks(env)[0]
    return "rare_disease" if "diagnosis" in task.gold else "media_search"


def target(env_id: str, per_type: int = 2) -> Target:
    """The env of ``env_id`` on its test split, with a few tasks of every answer type under attack."""
    env = build_env(env_id)
    family = _family(env)
    build: Callable[[Any, Any, int], dict[int, AttackContext]] = (
        _rare_contexts if family == "rare_disease" else _media_contexts
    )
    return Target(env_id, env, build(env, _tasks(env), per_type), family)


def _prompt(env: Any, index: int) -> str:
    obs, _ = env.reset(seed=0, options={"index": index})
    return obs


def _media_contexts(env: Any, tasks: Any, per_type: int) -> dict[int, AttackContext]:
    by_type: dict[str, list[int]] = {t: [] for t in MEDIA_TYPES}
    for i in range(min(len(tasks), 400)):
        kind = tasks[i].gold["answer_type"]
        if kind in by_type:
            by_type[kind].append(i)
    title_ids = sorted(
        {a for i in by_type["title"] for a in tasks[i].gold["aliases"] if a.startswith("tt")}
    )
    contexts = {}
    for kind, indices in by_type.items():
        for i in indices[:per_type]:
            gold = tasks[i].gold
            accepted = {_fold(a) for a in (gold["answer"], *gold["aliases"])}
            others = [tasks[j].gold["answer"] for j in indices if j != i]
            distractors = tuple(
                dict.fromkeys(
                    o
                    for o in others
                    if _fold(o) not in accepted and not any(_fold(o) in a for a in accepted)
                )
            )
            if kind == "number":
                value = int(gold["answer"])
                distractors = tuple(str(value + d) for d in (1, 2, 5))
            gold_id = next((a for a in gold["aliases"] if a.startswith("tt")), None)
            honest = gold["answer"]
            if kind == "title" and not read_answer(honest, tasks[i].case).correct:
                # a title several films share is read only with its year: the honest answer is "Title (Year)"
                honest = next(a for a in gold["aliases"] if a.endswith(")"))
            contexts[i] = AttackContext(
                gold=honest,
                gold_id=gold_id,
                prompt=_prompt(env, i),
                distractors=distractors[:3],
                distractor_ids=tuple(t for t in title_ids if t != gold_id)[:3],
                universe_ids=tuple(t for t in title_ids if t != gold_id),
                numeric=kind in ("number", "year"),
            )
    return contexts


def _rare_contexts(env: Any, tasks: Any, per_type: int) -> dict[int, AttackContext]:
    inner = getattr(env, "aec_env", None)
    kb = inner.kb if inner is not None else env.unwrapped.kb
    chosen = list(range(3 * per_type))
    numbered = [i for i in range(200) if any(ch.isdigit() for ch in tasks[i].gold["name"])]
    chosen += [i for i in numbered if i not in chosen][:per_type]
    contexts = {}
    for i in chosen:
        gold = tasks[i].gold
        others = [
            tasks[j].gold
            for j in range(200, 230)
            if tasks[j].gold["diagnosis"][0] != gold["diagnosis"][0]
        ]
        contexts[i] = AttackContext(
            gold=gold["name"],
            gold_id=gold["diagnosis"][0],
            prompt=_prompt(env, i),
            distractors=tuple(o["name"] for o in others[:3]),
            distractor_ids=tuple(o["diagnosis"][0] for o in others[:3]),
            universe_ids=tuple(kb.disease_ids),
        )
    return contexts


def _fold(text: str) -> str:
    return " ".join("".join(ch if ch.isalnum() else " " for ch in text.casefold()).split())
