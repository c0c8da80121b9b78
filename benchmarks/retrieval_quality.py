"""Retrieval quality of the named retrievers on MediaSearch questions: recall, MRR, CIs and latency, in one run.

    python benchmarks/retrieval_quality.py                      # test split, casual split, own questions
    python benchmarks/retrieval_quality.py --tasks my.jsonl     # ... and a task file of your own
    python benchmarks/retrieval_quality.py --tune               # choose hybrid-minilm's fusion (train + validation)

The query is the question as asked (what an agent that forwards the question
sends); the target is the question's one gold film: the film its gold plan
opens with ``get_title``, or its answer when the answer is a film. Questions
with no gold film or several (comparisons, counts) are left out, and the
count kept is printed. Question sets:

* ``test``: the generated test split (1,000 questions, varied phrasings);
* ``casual``: the package's hand-written casual split;
* ``own``: ``benchmarks/data/casual_film_questions.jsonl``, 35 films described
  the way people ask for them (not named, or named loosely), written for this
  benchmark apart from the casual split;
* ``--tasks FILE``: any MediaSearch task file (``agentenv eval --tasks`` format).

For each retriever and set it prints R@1, R@5, R@10 and MRR@10 with 95%
percentile-bootstrap intervals (``--boot`` resamples of the questions, seeded),
and the paired difference of R@10 against ``bm25`` with its interval. Latency
is one ``search`` tool step of a ``MediaSearch-v0`` env made with that
retriever (the agent's view: retrieval plus the JSON the tool writes), p50 and
p90 over the first pass of the questions (query embeddings not cached yet) and
p50 of a second pass (cached).

``--tune`` never reads a test split: it scores every fusion of BM25 and MiniLM
on a seeded sample of the train and validation questions (weights, the RRF
constant, and which query each part gets: the question, or the package's
question reader's search query) and prints them best first.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

OWN_QUESTIONS = Path(__file__).with_name("data") / "casual_film_questions.jsonl"
DEFAULT_RETRIEVERS = ("bm25", "dense-minilm", "hybrid-minilm", "hybrid-hashed-svd")
_TITLE_ID = re.compile(r"tt\d+")
K = 10


def gold_film(question: object) -> str | None:
    """The one film a question is about, or ``None`` when it has none or several."""
    films = {
        step["arguments"]["title_id"]
        for step in getattr(question, "plan", None) or ()
        if step.get("tool") == "get_title"
    }
    if getattr(question, "answer_type", None) == "title":
        films |= {a for a in (question.answer, *question.aliases) if _TITLE_ID.fullmatch(a)}  # type: ignore[attr-defined]
    return next(iter(films)) if len(films) == 1 else None


def question_set(name: str) -> list[tuple[str, str]]:
    """``(question, gold film id)`` pairs of a named set or a task file."""
    if name == "own":
        rows = [json.loads(line) for line in OWN_QUESTIONS.read_text().splitlines() if line.strip()]
        return [(r["question"], r["gold"]) for r in rows]
    if name in ("train", "validation", "test", "casual"):
        from agentenv.envs.media_search.tasks.question_tasks import split_questions

        questions = list(split_questions(name))
    else:
        from agentenv.envs.media_search.tasks.user_tasks import load_user_tasks

        questions = load_user_tasks(Path(name))
    pairs = [(q.question, gold_film(q)) for q in questions]
    return [(q, g) for q, g in pairs if g is not None]


def ranks(results: Sequence[Sequence[str]], gold: Sequence[str]) -> np.ndarray:
    """1-based rank of each gold film in its result list, 0 when it is not in the top ``K``."""
    out = np.zeros(len(gold), dtype=np.int64)
    for i, (ids, g) in enumerate(zip(results, gold, strict=True)):
        if g in ids[:K]:
            out[i] = list(ids).index(g) + 1
    return out


def metrics(r: np.ndarray) -> dict[str, np.ndarray]:
    """Per-question R@1, R@5, R@10 and reciprocal rank (the means are the metrics)."""
    found = r > 0
    return {
        "R@1": (found & (r <= 1)).astype(float),
        "R@5": (found & (r <= 5)).astype(float),
        "R@10": found.astype(float),
        "MRR": np.where(found, 1.0 / np.maximum(r, 1), 0.0),
    }


def bootstrap(values: np.ndarray, boot: int, rng: np.random.Generator) -> tuple[float, float]:
    """95% percentile interval of the mean of ``values`` over ``boot`` resamples."""
    idx = rng.integers(0, len(values), size=(boot, len(values)))
    means = values[idx].mean(axis=1)
    return float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5))


def step_latency(name: str, queries: Sequence[str]) -> tuple[float, float, float]:
    """p50 and p90 ms of a ``search`` step on a fresh env, then p50 of the same queries again (cached)."""
    import gymnasium as gym

    import agentenv  # noqa: F401
    from agentenv.engine.actions import tool_call

    env = gym.make("MediaSearch-v0", retriever=name)
    retriever = env.unwrapped.retriever  # type: ignore[attr-defined]
    for part in getattr(retriever, "retrievers", [retriever]):  # the first pass runs the model
        getattr(getattr(part, "encoder", None), "clear_query_cache", lambda: None)()
    passes = []
    for _ in range(2):
        times = []
        for i, q in enumerate(queries):
            action = tool_call("search", query=q, k=K)
            if i % 4 == 0:  # well inside the turn budget
                env.reset(seed=i)
            start = time.perf_counter()
            env.step(action)
            times.append((time.perf_counter() - start) * 1e3)
        passes.append(times)
    first, second = passes
    return statistics.median(first), float(np.percentile(first, 90)), statistics.median(second)


def evaluate(args: argparse.Namespace) -> None:
    from agentenv.corpora.media.catalog import load_catalog
    from agentenv.envs.media_search.tools.film_tools import catalog_retriever

    catalog = load_catalog()
    sets = {name: question_set(name) for name in args.sets.split(",") + list(args.tasks)}
    rng = np.random.default_rng(args.seed)
    print(
        f"gold film in the top {K}; 95% bootstrap CIs over {args.boot} resamples (seed {args.seed})"
    )
    print(", ".join(f"{n}: {len(p)} questions" for n, p in sets.items()))
    table: dict[tuple[str, str], dict[str, np.ndarray]] = {}
    for name in args.retrievers.split(","):
        start = time.perf_counter()
        retriever = catalog_retriever(catalog, name)  # as MediaSearch-v0 builds it
        loaded = time.perf_counter() - start
        for set_name, pairs in sets.items():
            results = retriever.search_batch([q for q, _ in pairs], K)
            r = ranks([[h.doc_id for h in hits] for hits in results], [g for _, g in pairs])
            table[(name, set_name)] = metrics(r)
        lat_queries = [q for q, _ in sets.get("casual", next(iter(sets.values())))][
            : args.latency_queries
        ]
        p50, p90, cached = step_latency(name, lat_queries)
        print(
            f"\n{name} (loaded in {loaded:.1f} s); search step p50 {p50:.2f} ms, p90 {p90:.2f} ms, "
            f"p50 with the query embedding cached {cached:.2f} ms ({len(lat_queries)} casual queries)"
        )
        print(
            f"  {'set':10s} "
            + " ".join(f"{m:>19s}" for m in ("R@1", "R@5", "R@10", "MRR"))
            + "   R@10 - bm25"
        )
        for set_name in sets:
            cells = []
            for values in table[(name, set_name)].values():
                lo, hi = bootstrap(values, args.boot, rng)
                cells.append(f"{values.mean():.2f} [{lo:.2f}, {hi:.2f}]")
            diff = ""
            if name != "bm25" and ("bm25", set_name) in table:
                d = table[(name, set_name)]["R@10"] - table[("bm25", set_name)]["R@10"]
                lo, hi = bootstrap(d, args.boot, rng)
                diff = f"{d.mean():+.2f} [{lo:+.2f}, {hi:+.2f}]"
            print(f"  {set_name:10s} " + " ".join(f"{c:>19s}" for c in cells) + "   " + diff)
        sys.stdout.flush()


def tune(args: argparse.Namespace) -> None:
    """Score every fusion on train + validation samples; never a test split."""
    from agentenv.corpora.media.catalog import load_catalog
    from agentenv.envs.media_search.tools.corpus import bm25_search_query
    from agentenv.retrieval import build_retriever
    from agentenv.retrieval.hybrid import rrf_fuse

    catalog = load_catalog()
    ids, texts = catalog.documents()
    rng = np.random.default_rng(args.seed)
    pairs = []
    for split, n in (("train", args.tune_train), ("validation", args.tune_validation)):
        got = question_set(split)
        pairs += [
            got[i] for i in sorted(rng.choice(len(got), size=min(n, len(got)), replace=False))
        ]
    questions, gold = [q for q, _ in pairs], [g for _, g in pairs]
    print(f"tuning on {len(pairs)} train + validation questions (seed {args.seed})")
    bm25 = build_retriever("bm25", texts, ids, corpus_checksum=catalog.checksum)
    dense = build_retriever("dense-minilm", texts, ids, corpus_checksum=catalog.checksum)
    read: Callable[[str], str] = bm25_search_query
    depth = 100
    lists = {
        ("bm25", "question"): bm25.search_batch(questions, depth),
        ("bm25", "reader"): bm25.search_batch([read(q) for q in questions], depth),
    }
    start = time.perf_counter()
    lists[("dense", "question")] = dense.search_batch(questions, depth)
    print(f"  {len(questions)} MiniLM queries in {time.perf_counter() - start:.1f} s")
    lists[("dense", "reader")] = dense.search_batch([read(q) for q in questions], depth)
    rows = []
    for (part, query), results in lists.items():
        m = metrics(ranks([[h.doc_id for h in hits] for hits in results], gold))
        rows.append((f"{part} alone, {query}", m))
    for bm25_query in ("question", "reader"):
        for dense_query in ("question", "reader"):
            for w in (0.25, 0.5, 0.75, 1.0, 1.5, 2.0):
                for rrf_k in (10, 30, 60):
                    fused = [
                        [h.doc_id for h in rrf_fuse([b, d], [1.0, w], rrf_k, K)]
                        for b, d in zip(
                            lists[("bm25", bm25_query)], lists[("dense", dense_query)], strict=True
                        )
                    ]
                    label = f"bm25 {bm25_query} + minilm {dense_query}, weight {w}, rrf_k {rrf_k}"
                    rows.append((label, metrics(ranks(fused, gold))))
    rows.sort(key=lambda row: -(row[1]["R@10"].mean() + row[1]["MRR"].mean()))
    print(f"  {'fusion':60s}   R@1   R@5  R@10   MRR")
    for label, m in rows[: args.show]:
        print(f"  {label:60s} " + " ".join(f"{v.mean():5.3f}" for v in m.values()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--retrievers", default=",".join(DEFAULT_RETRIEVERS))
    parser.add_argument("--sets", default="test,casual,own", help="question sets, comma-separated")
    parser.add_argument("--tasks", action="append", default=[], help="a task file (repeatable)")
    parser.add_argument("--boot", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--latency-queries", type=int, default=200)
    parser.add_argument("--tune", action="store_true", help="choose hybrid-minilm's fusion instead")
    parser.add_argument("--tune-train", type=int, default=600)
    parser.add_argument("--tune-validation", type=int, default=600)
    parser.add_argument("--show", type=int, default=25)
    args = parser.parse_args()
    print(f"{os.cpu_count()} CPUs; OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}")
    (tune if args.tune else evaluate)(args)


if __name__ == "__main__":
    main()
