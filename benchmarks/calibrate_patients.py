"""Do simulated patients rank agents the way real ones do? Agents, case statistics and the ranker, in one run.

Prints:

1. **Agents on simulated and real patients** (``--sections agents``): for each
   shipped agent (phenotype-ranker, bm25, random, oracle; ``--sb3 RUN_DIR`` adds
   a Stable-Baselines3 policy) and each rare-disease id, the accuracy (hit@k,
   the strict reward's score) on the simulated split asked for (test by
   default) and on the ``real`` split (536 published patients), both through
   ``gym.make`` with the package defaults, so both go through the same
   presentation protocol. Each side's 95% CI, and the ratio's, are resampled by
   disease (cases of one disease move together); so is the ranker-minus-bm25
   gap on each side. One pass over each split: task ``i`` with seed ``i``.
2. **Case statistics** (``statistics``): every per-case statistic of
   :mod:`agentenv.envs.rare_disease.patients.case_statistics` for the real cases (the
   target), the simulated validation and test splits (default sampler and
   disease mix, every present term) and the previous default
   (``summary_calibrated``, uniform mix), with the +/-15% band; and the
   summary figures of two other collections that were the targets before.
3. **Ranker accuracy per preset** (``presets``): top-1/3/10 of the reference
   ranker on the split's patients under each sampler preset.
4. **Latency** (``latency``): ms per ``PhenotypeRanker.rank`` against a
   straightforward vectorised version (budget 1 ms).
5. ``ties`` and ``universe`` (not run by default): the tie rule and the
   universe filter of earlier changes.

Usage:
    python benchmarks/calibrate_patients.py [--split test] [--sections agents,statistics,presets,latency]
        [--agents phenotype-ranker,bm25,random,oracle] [--limit 0] [--boot 2000]
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from collections import Counter
from collections.abc import Sequence

import gymnasium as gym
import numpy as np

import agentenv  # noqa: F401 - registers the ids
from agentenv.corpora.hpo.knowledge_base import HpoKnowledgeBase, load_hpo_kb
from agentenv.corpora.hpo.omim_titles import non_clinical_reason
from agentenv.envs.rare_disease.patients.case_statistics import (
    PUBLISHED_SUMMARIES,
    REAL_CASES,
    STATISTICS,
    TOLERANCE,
    case_statistics,
    within_tolerance,
)
from agentenv.envs.rare_disease.patients.disease_mix import mixed_case_list
from agentenv.envs.rare_disease.patients.simulated import PRESETS, Patient, PatientSampler
from agentenv.envs.rare_disease.patients.splits import SPLITS, split_cases, split_of
from agentenv.envs.rare_disease.tasks.real_cases import load_real_patients
from agentenv.envs.rare_disease.tools.phenotype_ranker import PhenotypeRanker, resolve_terms, top_k
from agentenv.evaluation.agents import make_agent
from agentenv.evaluation.runner import RunConfig, run_episode

IDS = ("RareDiseaseDiagnosis-v0", "RareDiseaseDiagnosis-SingleTurn-v0")
AGENTS = ("phenotype-ranker", "bm25", "random", "oracle")


@dataclasses.dataclass(frozen=True)
class Args:
    split: str = "test"
    """Split whose cases are ranked (calibration was tuned on ``validation``)."""
    universe: str = "omim"
    """Disease universe of the KB."""
    limit: int = 0
    """Use only the first N cases of each split (0: all)."""
    repeats: int = 3
    """Timed passes over the calibrated cases (the best p50 is reported)."""
    sections: str = "agents,statistics,presets,latency"
    """Which tables to print (also: ties, universe)."""
    agents: str = ",".join(AGENTS)
    """Agents of the agents table."""
    ids: str = ",".join(IDS)
    """Env ids of the agents table."""
    boot: int = 2000
    """Bootstrap resamples (by disease) for the CIs."""
    sb3: str = ""
    """A Stable-Baselines3 run directory: adds the ``sb3`` agent to the agents table."""


def straightforward_scores(
    kb: HpoKnowledgeBase, cols: list[np.ndarray], terms: list[int]
) -> np.ndarray:
    """The plain vectorised Phenomizer: per term, overwrite diseases ancestor by ancestor (IC ascending)."""
    acc = np.zeros(kb.n_universe)
    for t in terms:
        anc = kb.graph.ancestors(t)
        sim = np.zeros(kb.n_universe)
        for a in anc[np.argsort(kb.ic[anc], kind="stable")].tolist():
            sim[cols[a]] = kb.ic[a]
        acc += sim
    return acc / len(terms)


def accuracy(
    ranker: PhenotypeRanker, patients: list[Patient], use_hidden: bool = False
) -> np.ndarray:
    hits = np.zeros(3)
    for p in patients:
        terms = p.all_present if use_hidden else p.present
        top = [d for d, _ in ranker.rank(terms, k=10)]
        r = top.index(p.disease_id) if p.disease_id in top else 10
        hits += [r < 1, r < 3, r < 10]
    return hits / max(len(patients), 1)


def calibration_table(kb: HpoKnowledgeBase, split: str, limit: int) -> None:
    """Print the per-statistic table: the real cases, the band, simulated splits, the previous default."""
    real = list(load_real_patients(kb))
    columns: dict[str, dict[str, float]] = {"real": case_statistics(kb, real)}
    for label, preset, name, mix in (
        ("validation", "calibrated", "validation", "published"),
        (split, "calibrated", split, "published"),
        (f"{split} previous", "summary_calibrated", split, "uniform"),
    ):
        cases = mixed_case_list(kb, name, mix)  # type: ignore[arg-type]
        cases = cases[:limit] if limit else cases
        sampler = PatientSampler(kb, PRESETS[preset])
        columns[label] = case_statistics(
            kb, [sampler.sample_case(c.disease_id, c.seed) for c in cases]
        )
    head = (
        f"{'statistic':<28}{'band ±15%':>14}"
        + "".join(f"{c:>16}" for c in columns)
        + f"{'summary A':>11}{'B':>7}"
    )
    print(head)
    for stat in STATISTICS:
        target = REAL_CASES[stat]
        band = f"{target * (1 - TOLERANCE):.3g}-{target * (1 + TOLERANCE):.3g}"
        cells = "".join(
            f"{columns[c][stat]:>15.3f}{' ' if within_tolerance(stat, columns[c][stat]) else '!'}"
            for c in columns
        )
        a, b = PUBLISHED_SUMMARIES[stat]
        print(f"{stat:<28}{band:>14}{cells}{a:>11.3g}{'—' if b is None else f'{b:.3g}':>7}")
    print(
        "('!' marks a figure outside the band; summary A/B: the two collections' summary figures, the old targets)\n"
    )


def by_disease_ci(
    values: np.ndarray, groups: Sequence[str], rng: np.random.Generator, n: int
) -> np.ndarray:
    """``n`` bootstrap means of ``values``, resampling whole diseases (their cases together)."""
    keys = sorted(set(groups))
    index = {k: i for i, k in enumerate(keys)}
    g = np.asarray([index[x] for x in groups])
    sums = np.bincount(g, weights=values, minlength=len(keys))
    counts = np.bincount(g, minlength=len(keys)).astype(np.float64)
    picks = rng.integers(0, len(keys), size=(n, len(keys)))
    return sums[picks].sum(axis=1) / counts[picks].sum(axis=1)


def play_split(
    env_id: str, agent: str, split: str, limit: int, agent_args: dict[str, str]
) -> tuple[np.ndarray, list[str]]:
    """Accuracy per task of one pass over ``split`` (task ``i``, seed ``i``) and each task's gold disease."""
    config = RunConfig(
        env_id=env_id, agent=agent, split=split, agent_args=tuple(agent_args.items())
    )
    env = gym.make(env_id, split=split)
    bot = make_agent(agent, **agent_args)
    n = len(env.unwrapped.tasks)
    n = min(n, limit) if limit else n
    scores, golds = [], []
    for i in range(n):
        record = run_episode(env, bot, config, i, i)
        scores.append(float(record["reward_components"]["accuracy"]))
        golds.append(env.unwrapped.tasks[i].gold["diagnosis"][0])
    return np.asarray(scores), golds


def agents_table(
    split: str, limit: int, agents: Sequence[str], ids: Sequence[str], boot: int, sb3: str
) -> None:
    """Print each agent's accuracy on simulated ``split`` against the real split, with the ratio (see the docstring)."""
    rng = np.random.default_rng(0)
    print(
        f"agents: accuracy (hit@k) on simulated {split} patients against the real split; 95% CIs resampled by disease"
    )
    print(f"{'id':<36}{'agent':<18}{'simulated ' + split:>22}{'real':>22}{'simulated / real':>24}")
    runs: dict[tuple[str, str], dict[str, np.ndarray]] = {}
    for env_id in ids:
        for agent in (*agents, *(["sb3"] if sb3 else [])):
            args = {"path": sb3} if agent == "sb3" else {}
            t0 = time.perf_counter()
            sim, sim_g = play_split(env_id, agent, split, limit, args)
            real, real_g = play_split(env_id, agent, "real", limit, args)
            bs, br = by_disease_ci(sim, sim_g, rng, boot), by_disease_ci(real, real_g, rng, boot)
            runs[(env_id, agent)] = {"sim": bs, "real": br}
            ratio = bs / np.where(br > 0, br, np.nan)
            cell = (
                "—"
                if real.mean() == 0
                else (
                    f"×{sim.mean() / real.mean():.2f} [{np.nanpercentile(ratio, 2.5):.2f}, {np.nanpercentile(ratio, 97.5):.2f}]"
                )
            )
            print(
                f"{env_id:<36}{agent:<18}{_mean_ci(sim.mean(), bs):>22}{_mean_ci(real.mean(), br):>22}{cell:>24}"
                f"   ({len(sim)} + {len(real)} episodes, {time.perf_counter() - t0:.0f} s)"
            )
    for env_id in ids:
        if (env_id, "phenotype-ranker") in runs and (env_id, "bm25") in runs:
            r, b = runs[(env_id, "phenotype-ranker")], runs[(env_id, "bm25")]
            gaps = {
                side: r[side] - b[side] for side in ("sim", "real")
            }  # same resampled diseases per side
            print(
                f"{env_id}: ranker - bm25 on simulated {_mean_ci(float(np.mean(gaps['sim'])), gaps['sim'])}, "
                f"on real {_mean_ci(float(np.mean(gaps['real'])), gaps['real'])}"
            )
    print()


def _mean_ci(mean: float, samples: np.ndarray) -> str:
    return f"{mean:.3f} [{np.percentile(samples, 2.5):.3f}, {np.percentile(samples, 97.5):.3f}]"


def tie_rules(kb: HpoKnowledgeBase, ranker: PhenotypeRanker, split: str, limit: int) -> None:
    """Print top-1/3/10 under the v0.1 tie rule and the current one, and the Marfan triad."""
    size = np.diff(kb.pheno_indptr)
    ids = kb.disease_ids

    def v01(terms: tuple[str, ...]) -> list[str]:
        return [ids[i] for i in top_k(ranker.scores(terms), 10, tiebreak=size).tolist()]

    def current(terms: tuple[str, ...]) -> list[str]:
        return [d for d, _ in ranker.rank(terms, k=10)]

    cases = split_cases(kb, split)  # type: ignore[arg-type]
    cases = cases[:limit] if limit else cases
    print(f"{'ties (' + split + ')':<34}{'top-1':>7}{'top-3':>7}{'top-10':>8}")
    for preset in ("calibrated", "clean"):
        sampler = PatientSampler(kb, PRESETS[preset])
        patients = [sampler.sample_case(c.disease_id, c.seed) for c in cases]
        for label, rank in (("v0.1: smaller profile", v01), ("exact, likelier, smaller", current)):
            hits = np.zeros(3)
            for p in patients:
                top = rank(p.present)
                r = top.index(p.disease_id) if p.disease_id in top else 10
                hits += [r < 1, r < 3, r < 10]
            hits /= max(len(patients), 1)
            print(f"{preset + ' / ' + label:<34}{hits[0]:>7.3f}{hits[1]:>7.3f}{hits[2]:>8.3f}")
    triad = ("HP:0001166", "HP:0001083", "HP:0002616")
    for label, rank in (("v0.1", v01), ("current", current)):
        top = rank(triad)
        print(
            f"Marfan triad, {label:<8} Marfan syndrome ranks {top.index('OMIM:154700') + 1}: {top[:4]}"
        )
    print()


def universe_sizes(kb: HpoKnowledgeBase) -> None:
    """Print the OMIM universe before and after the title filter, per split and per category."""
    before: Counter[str] = Counter()
    reasons: Counter[str] = Counter()
    for did in kb.all_disease_ids():
        if not did.startswith("OMIM:") or not kb.disease(did).phenotypes:
            continue
        before[split_of(did)] += 1
        reason = non_clinical_reason(kb.disease_name(did))
        if reason:
            reasons[reason] += 1
    after = Counter(split_of(d) for d in kb.disease_ids)
    print(f"{'universe (' + kb.universe + ')':<22}{'before':>8}{'after':>8}")
    for name in (*SPLITS, "total"):
        b = sum(before.values()) if name == "total" else before[name]
        a = sum(after.values()) if name == "total" else after[name]
        print(f"{name:<22}{b:>8}{a:>8}")
    print("left out:", dict(sorted(reasons.items())), "\n")


def main(args: Args) -> None:
    sections = {x.strip() for x in args.sections.split(",") if x.strip()}
    t0 = time.perf_counter()
    kb = load_hpo_kb(args.universe)  # type: ignore[arg-type]
    load_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    ranker = PhenotypeRanker(kb)
    init_s = time.perf_counter() - t0
    cases = mixed_case_list(kb, args.split)  # type: ignore[arg-type]  # the default (published) mix
    cases = cases[: args.limit] if args.limit else cases[:]
    print(
        f"HPO {kb.release}  universe={kb.universe} ({kb.n_universe} diseases)  split={args.split} ({len(cases)} cases, "
        "published disease mix)"
    )
    print(f"KB load {load_s * 1e3:.0f} ms (warm if cached)  ranker init {init_s * 1e3:.0f} ms\n")
    if "agents" in sections:
        agents_table(
            args.split,
            args.limit,
            [a for a in args.agents.split(",") if a],
            [i for i in args.ids.split(",") if i],
            args.boot,
            args.sb3,
        )
    if "statistics" in sections:
        calibration_table(kb, args.split, args.limit)
    sampler = PatientSampler(kb, PRESETS["calibrated"])
    calibrated = [sampler.sample_case(c.disease_id, c.seed) for c in cases]
    if "presets" in sections:
        print(f"{'preset':<28}{'top-1':>7}{'top-3':>7}{'top-10':>8}{'terms':>7}")
        real = list(load_real_patients(kb))
        for name, params in [*PRESETS.items(), ("real cases (all recorded)", None)]:
            if params is None:
                patients = real
            else:
                patients = [
                    PatientSampler(kb, params).sample_case(c.disease_id, c.seed) for c in cases
                ]
            rows = [(name, False)] + (
                [(name + " (all present)", True)] if params and params.hidden_fraction else []
            )
            for label, use_hidden in rows:
                acc = accuracy(ranker, patients, use_hidden)
                n = np.mean([len(p.all_present if use_hidden else p.present) for p in patients])
                print(f"{label:<28}{acc[0]:>7.3f}{acc[1]:>7.3f}{acc[2]:>8.3f}{n:>7.1f}")
        print("\nCALIBRATED =", PRESETS["calibrated"], "\n")
    if "ties" in sections:
        tie_rules(kb, ranker, args.split, args.limit)
    if "universe" in sections:
        universe_sizes(kb)
    if "latency" in sections:
        latency(kb, calibrated, args.repeats)


def latency(kb: HpoKnowledgeBase, calibrated: list[Patient], repeats: int) -> None:
    """Print the ranker's latency on the calibrated patients against a straightforward version."""
    queries = [p.present for p in calibrated]
    fresh = PhenotypeRanker(kb)
    t0 = time.perf_counter()
    for q in queries:
        fresh.rank(q, k=10)
    first_ms = (time.perf_counter() - t0) / len(queries) * 1e3
    best: np.ndarray | None = None
    for _ in range(repeats):
        times = []
        for q in queries:
            s = time.perf_counter()
            fresh.rank(q, k=10)
            times.append(time.perf_counter() - s)
        arr = np.asarray(times) * 1e3
        if best is None or np.median(arr) < np.median(best):
            best = arr
    assert best is not None
    cols = [fresh._col(t) for t in range(kb.n_terms)]
    plain = []
    for q in queries[:200]:
        idx = resolve_terms(kb, q)
        s = time.perf_counter()
        straightforward_scores(kb, cols, idx)
        plain.append(time.perf_counter() - s)
    plain_ms = np.asarray(plain) * 1e3
    print(f"\nranker latency over {len(queries)} calibrated cases (k=10, whole universe):")
    print(
        f"  PhenotypeRanker.rank  p50 {np.median(best):.3f} ms  mean {best.mean():.3f} ms  (first pass, cold plans: mean {first_ms:.3f} ms)"
    )
    print(
        f"  straightforward       p50 {np.median(plain_ms):.3f} ms  mean {plain_ms.mean():.3f} ms  (scores only, 200 cases)"
    )
    print(
        f"  ratio (p50)           {np.median(plain_ms) / np.median(best):.1f}x faster; budget 1 ms"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    for f in dataclasses.fields(Args):
        parser.add_argument(f"--{f.name}", type=type(f.default), default=f.default)
    main(Args(**vars(parser.parse_args())))
