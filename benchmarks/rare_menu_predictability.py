"""Can the ``diagnosis-tools`` features tell which answer entry is right? A classifier against the best single entry.

    nice -n 10 python benchmarks/rare_menu_predictability.py [--train 2000] [--validation 815] [--seed 0]
        [--extra | --base-only] [--cache /tmp/rare_menu.pkl]

Why: on ``RareDiseaseDiagnosis-v0`` under ``strict`` the best fixed sequence
("rank -> search -> answer fused top 3") scores 0.353 on the lesson's test
episodes while picking the best sequence per episode in hindsight scores 0.459.
A learned policy can only close part of that gap if the features it sees at the
answer decision carry the information. This script measures that directly,
without RL: after each strong tool prefix (:data:`PREFIXES`) it records the
menu's features and the strict return of every answer entry on TRAIN episodes
(the first ``--train`` train tasks; the lessons' pool is the first 2,000), fits
one logistic regression per answer entry (numpy, L2, Newton steps; on the
features, and on them plus their pairwise products) and a small multi-label MLP
(torch, epochs chosen on a held-out fifth of train), each predicting "this
entry is correct", and on VALIDATION episodes (never test) compares

* the best single answer entry after the prefix (chosen on train),
* the classifier's pick (the entry of highest predicted probability, among
  those the mask allows),
* the hindsight best entry per episode (the ceiling after that prefix).

``--extra`` adds raw evidence the menu's features only summarise (each list's
first six scores, the leading fused candidates' places in both lists, their
fused scores and answer likelihoods: :func:`extra_features`), to test whether a
new feature could make the choice learnable; ``--base-only`` reads such a cache
with the menu's own features alone. ``--cache`` keeps the collected episodes.

Episode ``i`` of a split is task ``i`` reset with seed ``--seed + i``. Prints
the figures with 95% bootstrap intervals (paired differences too), the seeds
and the wall time.
"""

from __future__ import annotations

import argparse
import pickle
import time
from pathlib import Path

import gymnasium as gym
import numpy as np

import agentenv  # noqa: F401 - registers the ids
from agentenv.envs.rare_disease.structured.menus import DiagnosisToolsMenu
from agentenv.lessons.structured.fixed_sequences import (
    _CachedTools,
    _copy_episode,
    _Node,
    _step_tool,
)

PREFIXES = ((0, 1), (0, 1, 2), (0, 1, 2, 3), (0, 1, 2, 3, 4))
"""rank -> search, then read profiles, then ask the patient once and twice."""
PAIRS_UP_TO = 60
"""The pairwise-product model is fitted only on at most this many features (the menu's own 42)."""


def extra_features(menu: DiagnosisToolsMenu) -> list[float]:
    """Raw evidence the menu's features summarise (for ``--extra``): each list's first 6 scores relative to its
    top, and for each of the 5 leading fused candidates its place in each list, its fused score relative to
    the top and the likelihood of the patient's answers."""

    def rel(scores: list[float]) -> list[float]:
        top = scores[0] if scores and scores[0] > 0 else 1.0
        return [(scores[i] / top if i < len(scores) else 0.0) for i in range(6)]

    fused_scores = menu._fused_scores()
    fused = menu.fused()
    top = fused_scores[fused[0]] if fused else 1.0
    out = [*rel(menu.rank_scores), *rel(menu.search_scores)]
    for i in range(5):
        d = fused[i] if i < len(fused) else None
        out += [
            1.0 / (1 + menu.rank_ids.index(d)) if d in menu.rank_ids else 0.0,
            1.0 / (1 + menu.search_ids.index(d)) if d in menu.search_ids else 0.0,
            fused_scores[d] / top if d is not None and top > 0 else 0.0,
            menu.evidence.get(d, 1.0) if d is not None else 0.0,
        ]
    return out


def collect(
    split: str, n: int, seed: int, extra: bool = False
) -> tuple[dict[tuple[int, ...], np.ndarray], dict[tuple[int, ...], np.ndarray], dict, list[int]]:
    """Per prefix: features (episodes x features), returns (episodes x menu entries, NaN for tool entries),
    masks; and the answer entries."""
    env = gym.make("RareDiseaseDiagnosis-v0", split=split, reward="strict")
    inner = env.unwrapped
    max_turns = int(inner.max_turns)
    n = min(n, len(inner.tasks))
    probe = DiagnosisToolsMenu()
    probe.reset("", max_turns)
    answers = [i for i in range(probe.size) if probe.preview(i).kind == "answer"]
    feats: dict[tuple[int, ...], list] = {p: [] for p in PREFIXES}
    rets: dict[tuple[int, ...], list] = {p: [] for p in PREFIXES}
    masks: dict[tuple[int, ...], list] = {p: [] for p in PREFIXES}
    original = inner.tools
    inner.tools = _CachedTools(original, {})
    try:
        for i in range(n):
            obs, _ = inner.reset(seed=seed + i, options={"index": i})
            menu = DiagnosisToolsMenu()
            menu.reset(obs, max_turns)
            node = _Node(_copy_episode(inner._episode), menu, 0.0)
            done: tuple[int, ...] = ()
            for prefix in PREFIXES:
                for t in prefix[len(done) :]:
                    node = _step_tool(inner, node, t)
                done = prefix
                row = np.full(probe.size, np.nan)
                graded: dict[str, float] = {}
                for a in answers:
                    text = node.menu.preview(a).text
                    if text not in graded:
                        inner._episode = _copy_episode(node.episode)
                        _, reward, _, _, _ = inner.step(text)
                        graded[text] = node.paid + float(reward)
                    row[a] = graded[text]
                feature = node.menu.features()
                if extra:
                    feature = np.concatenate([feature, extra_features(node.menu)])
                feats[prefix].append(feature)
                rets[prefix].append(row)
                masks[prefix].append(node.menu.action_mask())
    finally:
        inner.tools = original
        env.close()
    return (
        {p: np.asarray(v, dtype=np.float64) for p, v in feats.items()},
        {p: np.asarray(v) for p, v in rets.items()},
        {p: np.asarray(v) for p, v in masks.items()},
        answers,
    )


def fit_logistic(x: np.ndarray, y: np.ndarray, l2: float = 1.0, steps: int = 30) -> np.ndarray:
    """Weights (bias last) of an L2-regularised logistic regression, by Newton's method."""
    xb = np.hstack([x, np.ones((len(x), 1))])
    w = np.zeros(xb.shape[1])
    reg = l2 * np.eye(xb.shape[1])
    reg[-1, -1] = 0.0
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-xb @ w))
        grad = xb.T @ (p - y) + reg @ w
        hess = (xb * (p * (1 - p))[:, None]).T @ xb + reg + 1e-9 * np.eye(len(w))
        w -= np.linalg.solve(hess, grad)
    return w


def predict(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.hstack([x, np.ones((len(x), 1))]) @ w))


def fit_mlp(x: np.ndarray, y: np.ndarray, seed: int, hidden: int = 64, epochs: int = 400):
    """A one-hidden-layer net with one sigmoid output per column of ``y`` (multi-label), Adam with weight decay;
    the epoch count is chosen on a fifth of the train rows held out, then the net is refitted on all of them."""
    import torch

    def run(xs: np.ndarray, ys: np.ndarray, n_epochs: int, held: tuple | None):
        torch.manual_seed(seed)
        net = torch.nn.Sequential(
            torch.nn.Linear(xs.shape[1], hidden),
            torch.nn.ReLU(),
            torch.nn.Linear(hidden, ys.shape[1]),
        )
        opt = torch.optim.Adam(net.parameters(), lr=3e-3, weight_decay=1e-3)
        xt, yt = torch.as_tensor(xs, dtype=torch.float32), torch.as_tensor(ys, dtype=torch.float32)
        losses = []
        for _ in range(n_epochs):
            loss = torch.nn.functional.binary_cross_entropy_with_logits(net(xt), yt)
            opt.zero_grad()
            loss.backward()
            opt.step()
            if held is not None:
                with torch.no_grad():
                    hx, hy = (torch.as_tensor(a, dtype=torch.float32) for a in held)
                    losses.append(
                        float(torch.nn.functional.binary_cross_entropy_with_logits(net(hx), hy))
                    )
        return net, losses

    cut = len(x) * 4 // 5
    _, losses = run(x[:cut], y[:cut], epochs, (x[cut:], y[cut:]))
    best = int(np.argmin(losses)) + 1
    net, _ = run(x, y, best, None)

    def prob(z: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            return torch.sigmoid(net(torch.as_tensor(z, dtype=torch.float32))).numpy()

    return prob


def expand(x: np.ndarray) -> np.ndarray:
    """Features plus their pairwise products (a cheap non-linearity for a linear model)."""
    i, j = np.triu_indices(x.shape[1])
    return np.hstack([x, x[:, i] * x[:, j]])


def ci(values: np.ndarray, rng: np.random.Generator, n: int = 2000) -> tuple[float, float, float]:
    idx = rng.integers(len(values), size=(n, len(values)))
    means = values[idx].mean(axis=1)
    return float(values.mean()), float(np.quantile(means, 0.025)), float(np.quantile(means, 0.975))


def fmt(t: tuple[float, float, float]) -> str:
    return f"{t[0]:.3f} [{t[1]:.3f}, {t[2]:.3f}]"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--train", type=int, default=2000)
    parser.add_argument("--validation", type=int, default=815)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--extra",
        action="store_true",
        help="add raw list scores and the leading candidates' places to the features",
    )
    parser.add_argument(
        "--base-only",
        action="store_true",
        help="with an --extra cache: use only the menu's own features",
    )
    parser.add_argument(
        "--cache",
        default="",
        help="a .pkl file: read the collected episodes from it, or write them",
    )
    args = parser.parse_args()
    start = time.perf_counter()
    rng = np.random.default_rng(args.seed)
    if args.cache and Path(args.cache).is_file():
        tr, va = pickle.loads(Path(args.cache).read_bytes())
    else:
        tr = collect("train", args.train, args.seed, args.extra)
        va = collect("validation", args.validation, args.seed, args.extra)
        if args.cache:
            Path(args.cache).write_bytes(pickle.dumps((tr, va)))
    collected = time.perf_counter() - start
    if args.base_only:
        n_base = len(DiagnosisToolsMenu.feature_names)
        tr = ({p: x[:, :n_base] for p, x in tr[0].items()}, *tr[1:])
        va = ({p: x[:, :n_base] for p, x in va[0].items()}, *va[1:])
    labels = DiagnosisToolsMenu.labels
    answers = tr[3]
    print(
        f"train episodes {len(tr[0][PREFIXES[0]])}, validation episodes {len(va[0][PREFIXES[0]])}, "
        f"features {tr[0][PREFIXES[0]].shape[1]}, "
        f"seed {args.seed}; collection {collected:.0f} s"
    )
    names = {0: "rank", 1: "search", 2: "profiles", 3: "ask", 4: "ask2"}
    best_any_val = np.zeros(len(va[0][PREFIXES[0]]))
    for prefix in PREFIXES:
        xtr, rtr, mtr = tr[0][prefix], tr[1][prefix], tr[2][prefix]
        xva, rva, mva = va[0][prefix], va[1][prefix], va[2][prefix]
        train_means = {a: float(rtr[:, a].mean()) for a in answers}
        single = max(answers, key=lambda a: train_means[a])
        best_any_val = np.maximum(best_any_val, np.nanmax(rva[:, answers], axis=1))
        results = {"best single": rva[:, single], "hindsight": np.nanmax(rva[:, answers], axis=1)}
        kinds = [("logistic", lambda x: x), ("logistic+pairs", expand)]
        if (
            xtr.shape[1] > PAIRS_UP_TO
        ):  # Newton steps on thousands of pair columns would take an hour
            kinds = kinds[:1]
        for kind, transform in kinds:
            ftr, fva = transform(xtr), transform(xva)
            mu, sd = ftr.mean(axis=0), ftr.std(axis=0) + 1e-6
            ftr, fva = (ftr - mu) / sd, (fva - mu) / sd
            probs_tr = np.full((len(xtr), len(labels)), -np.inf)
            probs_va = np.full((len(xva), len(labels)), -np.inf)
            for a in answers:
                w = fit_logistic(ftr, (rtr[:, a] > 0).astype(float))
                probs_tr[:, a], probs_va[:, a] = predict(ftr, w), predict(fva, w)
            # ties to the best single entry: a tiny bonus for it
            probs_va[:, single] += 1e-6
            probs_tr[:, single] += 1e-6
            pick_va = np.argmax(np.where(mva, probs_va, -np.inf), axis=1)
            pick_tr = np.argmax(np.where(mtr, probs_tr, -np.inf), axis=1)
            results[kind] = rva[np.arange(len(rva)), pick_va]
            results[kind + " (train fit)"] = rtr[np.arange(len(rtr)), pick_tr]
            picks = np.bincount(pick_va, minlength=len(labels))
            results[kind + " picks"] = picks
        mu, sd = xtr.mean(axis=0), xtr.std(axis=0) + 1e-6
        prob = fit_mlp(
            (xtr - mu) / sd, (np.nan_to_num(rtr[:, answers]) > 0).astype(float), args.seed
        )
        for kind, x, r, m in (("mlp", xva, rva, mva), ("mlp (train fit)", xtr, rtr, mtr)):
            scores = np.full((len(x), len(labels)), -np.inf)
            scores[:, answers] = prob((x - mu) / sd)
            scores[:, single] += 1e-6
            pick = np.argmax(np.where(m, scores, -np.inf), axis=1)
            results[kind] = r[np.arange(len(r)), pick]
            if kind == "mlp":
                results["mlp picks"] = np.bincount(pick, minlength=len(labels))
        chain = " -> ".join(names[t] for t in prefix)
        print(
            f"\nprefix {chain}; best single answer on train: {labels[single]!r} ({train_means[single]:.3f})"
        )
        for key in ("best single", "hindsight", "logistic", "logistic+pairs", "mlp"):
            if key not in results:
                continue
            print(f"  validation {key:16s} {fmt(ci(results[key], rng))}")
        for key in [k for k in ("logistic", "logistic+pairs", "mlp") if k in results]:
            diff = results[key] - results["best single"]
            print(
                f"  {key} minus best single (paired): {fmt(ci(diff, rng))}; "
                f"on train (in-sample) {results[key + ' (train fit)'].mean():.3f} vs {rtr[:, single].mean():.3f}"
            )
            top = np.argsort(-results[key + " picks"])[:4]
            print(
                "    picks: "
                + ", ".join(
                    f"{labels[a]!r} {results[key + ' picks'][a]}"
                    for a in top
                    if results[key + " picks"][a]
                )
            )
        print(
            "  per entry (validation mean): "
            + ", ".join(f"{labels[a]!r} {np.nanmean(rva[:, a]):.3f}" for a in answers)
        )
    rng2 = np.random.default_rng(args.seed)
    print(f"\nvalidation hindsight over these prefixes' answers: {fmt(ci(best_any_val, rng2))}")
    print(f"wall {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
