"""Does asking the patient pay? A scripted asking doctor on RareDiseaseDiagnosis-v0, with transcripts.

The doctor reads only its observations (never the task's private fields):

1. ``rank_by_phenotypes`` on the presented terms (top 10);
2. ``get_disease`` on the top ``--candidates`` candidates;
3. ``ask_patient`` about up to ``--questions`` of their frequent features
   (obligate, very frequent, frequent) that were neither presented nor excluded;
4. ``rank_by_phenotypes`` again on the presented terms plus every affirmed one;
5. answers that ranking's top 3.

It prints top-3 accuracy (with a bootstrap 95% CI) of this doctor and of
answering the first ranking at once, on the same episodes, the mean number of
questions, and ``--transcripts`` episodes in which the patient affirmed at least
one question, each with the patient's record (read after the episode, for the
reader; the doctor never sees it).

Usage:
    python benchmarks/asking_doctor.py [--split validation] [--episodes 200] [--transcripts 3]
"""

from __future__ import annotations

import argparse
import json
import re
import time

import gymnasium as gym
import numpy as np

import agentenv  # noqa: F401 - registers the ids
from agentenv.actions import answer, tool_call, tool_calls
from agentenv.envs.rare_disease.case_statistics import classify_terms

FREQUENT = ("obligate", "very frequent", "frequent")
_HPO = re.compile(r"HP:\d{7}")


def _sections(obs: str) -> list[dict]:
    """The JSON bodies of a (possibly multi-call) tool observation."""
    bodies = [part.split("\n", 1)[1] if part.startswith("[") else part for part in obs.split("\n\n[")]
    return [json.loads(b) for b in bodies if b.strip().startswith("{")]


def presented_and_excluded(first: str) -> tuple[list[str], list[str]]:
    present, _, rest = first.partition("Excluded phenotypes:")
    return _HPO.findall(present), _HPO.findall(rest)


def run_episode(env: gym.Env, seed: int, questions: int, candidates: int) -> dict:
    """One episode of the asking doctor; returns the transcript and both answers' outcomes."""
    obs, info = env.reset(seed=seed)
    transcript = [("observation", obs)]
    present, excluded = presented_and_excluded(obs)

    def act(action: str) -> tuple[str, float, dict]:
        nonlocal obs
        obs, reward, terminated, truncated, step_info = env.step(action)
        transcript.append(("action", action))
        transcript.append(("observation", obs))
        return obs, float(reward), step_info

    ranked = _sections(act(tool_call("rank_by_phenotypes", hpo_ids=present, k=10))[0])[0]["ranking"]
    at_once = [r["id"] for r in ranked[:3]]
    profiles = _sections(
        act(tool_calls([("get_disease", {"disease_id": r["id"]}) for r in ranked[:candidates]]))[0]
    )
    seen = set(present) | set(excluded)
    asked: list[str] = []
    for i in range(max(len(p.get("phenotypes", [])) for p in profiles) if profiles else 0):
        for p in profiles:  # round-robin over the candidates, most frequent features first
            phenos = p.get("phenotypes", [])
            if i < len(phenos) and phenos[i]["id"] not in seen and len(asked) < questions:
                if phenos[i]["frequency"].startswith(FREQUENT):
                    asked.append(phenos[i]["id"])
                    seen.add(phenos[i]["id"])
    affirmed: list[str] = []
    if asked:
        replies = _sections(act(tool_calls([("ask_patient", {"hpo_id": h}) for h in asked]))[0])
        affirmed = [r["id"] for r in replies if r.get("answer") == "yes"]
    final = at_once
    if affirmed:
        reranked = _sections(
            act(tool_call("rank_by_phenotypes", hpo_ids=present + affirmed, k=3))[0]
        )[0]["ranking"]
        final = [r["id"] for r in reranked]
    _, reward, step_info = act(answer(final))
    gold = step_info["gold"]["diagnosis"]
    patient = env.unwrapped.task.case  # read after the episode, for the reader only
    return {
        "record": patient,
        "transcript": transcript,
        "asking": float(reward),
        "at_once": float(any(g in at_once for g in gold)),
        "questions": len(asked),
        "affirmed": len(affirmed),
        "gold": gold,
    }


def _kind(kb, disease_id: str, term: str) -> str:  # noqa: ANN001 - a KB
    kinds = classify_terms(kb, disease_id, [term])
    return next(k for k in ("exact", "ancestor", "descendant", "unrelated") if getattr(kinds, k))


def bootstrap_ci(values: np.ndarray, rng: np.random.Generator, n: int = 2000) -> tuple[float, float]:
    means = values[rng.integers(0, len(values), size=(n, len(values)))].mean(axis=1)
    return float(np.quantile(means, 0.025)), float(np.quantile(means, 0.975))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--split", default="validation")
    parser.add_argument("--episodes", type=int, default=200)
    parser.add_argument("--questions", type=int, default=20)
    parser.add_argument("--candidates", type=int, default=5)
    parser.add_argument("--transcripts", type=int, default=3)
    parser.add_argument("--max-chars", type=int, default=700, help="cut each printed observation to this length")
    args = parser.parse_args()
    env = gym.make("agentenv:RareDiseaseDiagnosis-v0", split=args.split, max_turns=10)
    t0 = time.perf_counter()
    runs = [run_episode(env, seed, args.questions, args.candidates) for seed in range(args.episodes)]
    wall = time.perf_counter() - t0
    rng = np.random.default_rng(0)
    for key, label in (("at_once", "answer the first ranking"), ("asking", "asking doctor")):
        values = np.asarray([r[key] for r in runs])
        lo, hi = bootstrap_ci(values, rng)
        print(f"{label:<26} top-3 {values.mean():.3f} [{lo:.3f}, {hi:.3f}]")
    print(
        f"questions per episode {np.mean([r['questions'] for r in runs]):.2f}, affirmed "
        f"{np.mean([r['affirmed'] for r in runs]):.2f}; {args.episodes} episodes of the "
        f"{args.split} split (seeds 0..{args.episodes - 1}) in {wall:.1f} s\n"
    )
    kb = env.unwrapped.kb
    shown = [r for r in runs if r["affirmed"]][: args.transcripts]  # episodes where asking found something
    for r in shown:
        print("=" * 78)
        p = r["record"]
        print(f"gold {r['gold']} {kb.disease_name(r['gold'][0])}  reward {r['asking']}")
        print("patient record (not shown to the doctor): terms by relation to the gold's annotations")
        for label, terms in (("presented", p.present), ("hidden", p.hidden), ("excluded", p.excluded)):
            kinds = [_kind(kb, p.disease_id, t) for t in terms]
            print(f"  {label}: " + "; ".join(f"{t} {kb.term_name(t)} [{k}]" for t, k in zip(terms, kinds, strict=True)))
        for kind, text in r["transcript"]:
            cut = text if len(text) <= args.max_chars else text[: args.max_chars] + f" … [{len(text) - args.max_chars} more characters]"
            print(f"--- {kind}\n{cut}")


if __name__ == "__main__":
    main()
