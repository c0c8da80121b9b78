"""Does a blind sweep of questions pay? Scripted doctors in both rare-disease envs, under every preset.

The issue this answers: a patient that answered a broad question with every
finding under it paid a policy that knows nothing of the case to sweep the
ontology (157 broad terms revealed 99.4% of hidden findings; the sweep scored
0.495 strict against 0.365 for the referral alone). The patient now answers a
broad term with presence and names a finding only when asked about it or its
direct parent (``envs/rare_disease/dialogue/patient_answers.py``); a dialogue message
asks about at most 20 findings, and each finding asked costs one tool call in
both envs. This script checks that the sweep no longer pays.

Doctors (each reads only its own chat; none reads the task):

* ``answer-at-once``: rank the referral, answer the top 3 (honest).
* ``asking`` / ``asking-tool``: the tuned asking doctor (rank, read 10 profiles,
  ask about 20 of their frequent findings, re-rank, reorder by the answers);
  in ``RareDiseaseDiagnosis-v0`` it asks with parallel ``ask_patient`` calls (honest).
* ``blind-sweep`` / ``blind-sweep-tool``: ask about the 157 terms below the
  organ systems (20 per message, or 32 calls per action), rank the referral
  plus the findings the patient named, answer the top 3 (blind).
* ``+drill``: the same, then the children of the affirmed broad terms while
  turns last (the dialogue has no turns left for it); ``+broad``: rank the
  affirmed broad terms too.

Episode ``i`` is task ``i`` of the split with seed ``i``. Each policy's episode
components are scored under every preset with ``RewardConfig.combine`` (what
the env itself pays). Printed: mean reward with a bootstrap 95% CI, and for
each blind policy the paired difference to the best honest doctor of the same
env and preset (CI over the same episodes). ``--transcripts N`` prints the
first N single-agent asking-doctor episodes in which the patient affirmed
something, with the patient's record (read after the episode, for the reader).

Usage:
    python benchmarks/asking_doctor.py [--split validation] [--episodes 300] [--transcripts 0]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import gymnasium as gym
import numpy as np

import agentenv  # noqa: F401 - registers the ids
from agentenv.envs.rare_disease.dialogue.blind_sweep import BlindSweepDoctor, second_level_terms
from agentenv.envs.rare_disease.dialogue.patient_answers import ask
from agentenv.envs.rare_disease.dialogue.scripted_doctor import AnswerAtOnceDoctor, AskingDoctor
from agentenv.envs.rare_disease.patients.case_statistics import classify_terms
from agentenv.multiagent import make as make_dialogue
from agentenv.multiagent.policy_helpers import PolicyLike, act_with
from agentenv.multiagent.single_agent import as_single_agent
from agentenv.rewards.config import PRESETS

SINGLE, DIALOGUE = "RareDiseaseDiagnosis-v0", "DiagnosisDialogue-v0"
BOOTSTRAP = 2000


def doctors(kb: Any) -> dict[str, dict[str, tuple[PolicyLike, bool]]]:  # noqa: ANN401 - a KB
    """Per env: name -> (policy, honest)."""
    return {
        SINGLE: {
            "answer-at-once": (AnswerAtOnceDoctor(), True),
            "asking-tool": (AskingDoctor(kb, ask_with="ask_patient"), True),
            "blind-sweep-tool": (BlindSweepDoctor(kb, ask_with="ask_patient"), False),
            "blind-sweep+drill-tool": (
                BlindSweepDoctor(kb, ask_with="ask_patient", drill=True),
                False,
            ),
            "blind-sweep+broad-tool": (
                BlindSweepDoctor(kb, ask_with="ask_patient", broad=True),
                False,
            ),
        },
        DIALOGUE: {
            "answer-at-once": (AnswerAtOnceDoctor(), True),
            "asking": (AskingDoctor(kb), True),
            "blind-sweep": (BlindSweepDoctor(kb), False),
            "blind-sweep+broad": (BlindSweepDoctor(kb, broad=True), False),
        },
    }


def play(
    env: gym.Env, policy: PolicyLike, episodes: int, keep: Callable[[dict], bool] | None = None
) -> tuple[list[dict[str, float]], list[dict[str, Any]]]:
    """Episode components of ``policy`` on tasks 0..episodes-1 (seed = index); and kept chats."""
    rows, kept = [], []
    for i in range(episodes):
        obs, info = env.reset(seed=i, options={"index": i})
        done = False
        while not done:
            obs, reward, terminated, truncated, info = env.step(act_with(policy, obs, info))
            done = terminated or truncated
        rows.append(dict(info["reward_components"]))
        if keep is not None and keep(info):
            kept.append(
                {
                    "messages": list(info["messages"]),
                    "task": env.unwrapped.task,
                    "gold": info["gold"],
                    "reward": float(reward),
                }
            )
    return rows, kept


def bootstrap(values: np.ndarray, rng: np.random.Generator) -> tuple[float, float]:
    """95% percentile interval of the mean."""
    means = values[rng.integers(0, len(values), size=(BOOTSTRAP, len(values)))].mean(axis=1)
    return float(np.quantile(means, 0.025)), float(np.quantile(means, 0.975))


def swept_share(kb: Any, tasks: Sequence[Any]) -> tuple[int, float]:  # noqa: ANN401 - a KB
    """Hidden findings, and the share a sweep of the second-level terms names (``revealed``)."""
    sweep, total, named = second_level_terms(kb), 0, 0
    for task in tasks:
        patient = task.case
        hidden = {h for h in patient.hidden if h not in patient.present}
        revealed = {t for q in sweep for t in ask(kb, patient, q).revealed}
        total, named = total + len(hidden), named + len(hidden & revealed)
    return total, named / max(total, 1)


def _affirmed(info: Mapping[str, Any]) -> bool:
    return any(
        m.get("role") == "tool" and '"answer": "yes"' in str(m.get("content"))
        for m in info["messages"]
    )


def _kind(kb: Any, disease_id: str, term: str) -> str:  # noqa: ANN401 - a KB
    kinds = classify_terms(kb, disease_id, [term])
    return next(k for k in ("exact", "ancestor", "descendant", "unrelated") if getattr(kinds, k))


def print_transcripts(kb: Any, kept: list[dict[str, Any]], max_chars: int) -> None:  # noqa: ANN401 - a KB
    """The kept chats, each after its patient's record (terms labelled by relation to the gold)."""
    for episode in kept:
        p = episode["task"].case
        gold = episode["gold"]["diagnosis"]
        print("=" * 78)
        print(f"gold {gold} {kb.disease_name(gold[0])}  reward {episode['reward']}")
        print(
            "patient record (not shown to the doctor): terms by relation to the gold's annotations"
        )
        for label, terms in (
            ("presented", p.present),
            ("hidden", p.hidden),
            ("excluded", p.excluded),
        ):
            print(
                f"  {label}: "
                + "; ".join(f"{t} {kb.term_name(t)} [{_kind(kb, p.disease_id, t)}]" for t in terms)
            )
        for m in episode["messages"][1:]:
            text = str(m.get("content") or "") + "".join(
                f"\n{c['function']['name']}({c['function']['arguments']})"
                for c in m.get("tool_calls") or ()
            )
            more = len(text) - max_chars
            cut = text if more <= 0 else text[:max_chars] + f" … [{more} more characters]"
            print(f"--- {m['role']}\n{cut.strip()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--split", default="validation")
    parser.add_argument("--episodes", type=int, default=300)
    parser.add_argument("--transcripts", type=int, default=0)
    parser.add_argument(
        "--max-chars", type=int, default=400, help="cut each printed message to this length"
    )
    args = parser.parse_args()
    single = gym.make(f"agentenv:{SINGLE}", split=args.split)
    dialogue = as_single_agent(make_dialogue(DIALOGUE, split=args.split), agent="doctor")
    kb = single.unwrapped.kb
    n = min(args.episodes, len(single.unwrapped.tasks))
    t0 = time.perf_counter()
    runs: dict[tuple[str, str], list[dict[str, float]]] = {}
    honest: dict[tuple[str, str], bool] = {}
    kept: list[dict[str, Any]] = []
    for env_id, env in ((SINGLE, single), (DIALOGUE, dialogue)):
        for name, (policy, is_honest) in doctors(kb)[env_id].items():
            keep = (
                _affirmed
                if (env_id, name) == (SINGLE, "asking-tool") and args.transcripts
                else None
            )
            runs[env_id, name], chats = play(env, policy, n, keep)
            honest[env_id, name] = is_honest
            kept += chats
    wall = time.perf_counter() - t0
    hidden, share = swept_share(kb, [single.unwrapped.tasks[i] for i in range(n)])
    print(
        f"{args.split} split, tasks 0-{n - 1} (task i with seed i), {len(runs) * n} episodes in {wall:.1f} s; "
        f"a sweep of the {len(second_level_terms(kb))} second-level terms names {share:.1%} "
        f"of {hidden} hidden findings"
    )
    print("\nmean of each policy's questions, tool calls (questions included) and turns:")
    for (env_id, name), rows in runs.items():
        mean = {
            k: float(np.mean([r[k] for r in rows]))
            for k in ("questions_asked", "tool_calls", "turns", "accuracy")
        }
        print(
            f"  {env_id:<24} {name:<24} accuracy {mean['accuracy']:.3f}  questions {mean['questions_asked']:6.1f}  "
            f"tool calls {mean['tool_calls']:6.1f}  turns {mean['turns']:4.1f}"
        )
    rng = np.random.default_rng(0)
    for preset, config in PRESETS.items():
        print(f"\n[{preset}]")
        for env_id in (SINGLE, DIALOGUE):
            rewards = {
                name: np.asarray([config.combine(r) for r in rows])
                for (e, name), rows in runs.items()
                if e == env_id
            }
            for name, values in rewards.items():
                lo, hi = bootstrap(values, rng)
                tag = "honest" if honest[env_id, name] else "blind "
                print(
                    f"  {env_id:<24} {tag} {name:<24} {values.mean():+.3f} [{lo:+.3f}, {hi:+.3f}]"
                )
            best = max(
                (name for name in rewards if honest[env_id, name]),
                key=lambda name: rewards[name].mean(),
            )
            for name in (name for name in rewards if not honest[env_id, name]):
                diff = rewards[name] - rewards[best]
                lo, hi = bootstrap(diff, rng)
                verdict = "does not beat" if diff.mean() <= 0 else "BEATS"
                print(
                    f"  {env_id:<24} {name} - {best} (best honest): {diff.mean():+.3f} [{lo:+.3f}, {hi:+.3f}] "
                    f"-> {verdict}"
                )
    if kept:
        print_transcripts(kb, kept[: args.transcripts], args.max_chars)


if __name__ == "__main__":
    main()
