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
* ``people``: the single-film questions of ``tests/data/people_questions.jsonl``
  (44 of 48 questions written as people write them; each one's film is in
  ``benchmarks/data/people_question_films.jsonl``);
* ``own``: ``benchmarks/data/casual_film_questions.jsonl``, 35 films described
  the way people ask for them (not named, or named loosely), written for this
  benchmark apart from the casual split;
* ``casual-validation``: ``benchmarks/data/casual_validation_questions.jsonl``,
  101 hand-written casual questions about train and validation films (answers
  proven by replaying each row's tool plan, as the casual split's are), written
  to tune on, since the casual split is a test split;
* ``casual-validation-2``: ``benchmarks/data/casual_validation2_questions.jsonl``,
  166 more such questions (95 lookups, 33 constraints, 25 two-hop, 13
  superlatives; few name their film in full) about train and validation films
  no other set asks about, written to tune on with ``casual-validation``;
* ``casual-validation-3``: ``benchmarks/data/casual_validation3_questions.jsonl``,
  155 more (72 lookups, 37 constraints, 30 two-hop, 16 superlatives; two name
  their film in full) about train and validation films no other set asks about,
  from the 1940s to 2014, written from the catalog records without running a
  retriever on them, to tune on with the first two;
* ``casual-heldout``: ``benchmarks/data/casual_heldout_questions.jsonl``, 150
  hand-written casual questions about films of the generated test split's film
  pool that no other set asks about, written from the catalog records after
  the fusion was fixed, without running a retriever on them, and measured once
  (same row format and replay proof as ``casual-validation``); never tuned on;
* ``casual-heldout-2``: ``benchmarks/data/casual_heldout2_questions.jsonl``, 250
  more such questions (125 lookups, 75 constraints, 50 two-hop), written the
  same way about test-pool films that no other set here asks about (not
  ``casual-heldout``'s either), committed before their one measurement;
* ``casual-heldout-3``: ``benchmarks/data/casual_heldout3_questions.jsonl``, 200
  more such questions (100 lookups, 60 constraints, 40 two-hop) about test-pool
  films that no other set here asks about, written blind (no retriever was run
  on them to choose or word them) and committed before their first measurement;
* ``casual-heldout-all``: the three held-out sets above as one set (600
  questions), for intervals narrow enough to compare retrievers on questions
  written by hand (pooled after each set had been measured on its own);
* ``--tasks FILE``: any MediaSearch task file (``agentenv eval --tasks`` format).

For each retriever and set it prints R@1, R@5, R@10 and MRR@10 with 95%
percentile-bootstrap intervals (``--boot`` resamples of the questions, seeded),
and the paired difference of R@10 against ``bm25`` with its interval. Latency
is one ``search`` tool step of a ``MediaSearch-v0`` env made with that
retriever (the agent's view: retrieval plus the JSON the tool writes), p50, p90
and p99 over the first pass of the casual questions (or of the first set when
``casual`` is not asked for; nothing cached yet), p50 and p99 of a second pass
(each query's embedding and MiniLM hits cached) and of a third (only the
embeddings cached: faiss runs), with the load average before and after; the
three passes must show the same observations (asserted).

``--tune`` never reads a test split: it scores every fusion of BM25 and MiniLM
on the casual validation questions (``--tune-casual``: ``casual-validation``,
by default, and/or ``casual-validation-2`` and ``casual-validation-3``, pooled) and a seeded sample of the train and
validation questions (BM25 on the question reader's query, on the question, or
both, with their weights; MiniLM on the question, on the reader's query, on
the question unless it names a person (``gated``), on what ``hybrid-minilm``'s
MiniLM part reads (``rewrite``: ``minilm_search_query``, the question less the
names it holds unless only phrasing is left), or
unless it names a person and fewer than n other words of the reader's query
describe the film (``contentN``; ``stripped-contentN`` reads the question less
the names), with its weight, and optionally a second MiniLM list
(``--tune-minilm-second``, by default ``reader-gated``: the reader's query, gated); the films
crediting every person the question names (``CreditedFilms``), with its weight;
optionally character trigrams over the titles (``--tune-title-weights``); the RRF
constant; how deep each list is read) and prints them best
first by R@10 on the (pooled) casual validation questions plus R@10 on train +
validation, then their MRRs, and for the first 40 the paired difference of R@10
against the shipped fusion with its bootstrap interval. Recall of the question as asked is not the whole
story: the bm25 agent sends its own query and reads 20 hits, so a candidate is
also run as ``agentenv eval MediaSearch-v0 --agent bm25 --split validation``
(docs/envs/media_search.md, Retrievers, says which were and what they gave).
"""

from __future__ import annotations

import argparse
import itertools
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
CASUAL_VALIDATION = Path(__file__).with_name("data") / "casual_validation_questions.jsonl"
CASUAL_VALIDATION2 = Path(__file__).with_name("data") / "casual_validation2_questions.jsonl"
CASUAL_VALIDATION3 = Path(__file__).with_name("data") / "casual_validation3_questions.jsonl"
CASUAL_HELDOUT = Path(__file__).with_name("data") / "casual_heldout_questions.jsonl"
CASUAL_HELDOUT2 = Path(__file__).with_name("data") / "casual_heldout2_questions.jsonl"
CASUAL_HELDOUT3 = Path(__file__).with_name("data") / "casual_heldout3_questions.jsonl"
PEOPLE_QUESTIONS = Path(__file__).parents[1] / "tests" / "data" / "people_questions.jsonl"
PEOPLE_FILMS = Path(__file__).with_name("data") / "people_question_films.jsonl"
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
    if name == "casual-validation":
        return [(q.question, gold_film(q)) for q in casual_validation_questions()]  # type: ignore[misc]
    if name == "casual-validation-2":
        return [(q.question, gold_film(q)) for q in casual_validation2_questions()]  # type: ignore[misc]
    if name == "casual-validation-3":
        return [(q.question, gold_film(q)) for q in casual_validation3_questions()]  # type: ignore[misc]
    if name == "casual-heldout":
        return [(q.question, gold_film(q)) for q in casual_heldout_questions()]  # type: ignore[misc]
    if name == "casual-heldout-2":
        return [(q.question, gold_film(q)) for q in casual_heldout2_questions()]  # type: ignore[misc]
    if name == "casual-heldout-3":
        return [(q.question, gold_film(q)) for q in casual_heldout3_questions()]  # type: ignore[misc]
    if name == "casual-heldout-all":
        return [
            pair
            for part in ("casual-heldout", "casual-heldout-2", "casual-heldout-3")
            for pair in question_set(part)
        ]
    if name == "people":
        asked = {r["id"]: r["question"] for r in _jsonl(PEOPLE_QUESTIONS)}
        return [(asked[r["id"]], r["gold"]) for r in _jsonl(PEOPLE_FILMS)]
    if name in ("train", "validation", "test", "casual"):
        from agentenv.envs.media_search.tasks.question_tasks import split_questions

        questions = list(split_questions(name))
    else:
        from agentenv.envs.media_search.tasks.user_tasks import load_user_tasks

        questions = load_user_tasks(Path(name))
    pairs = [(q.question, gold_film(q)) for q in questions]
    return [(q, g) for q, g in pairs if g is not None]


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def casual_validation_questions() -> list[object]:
    """The casual validation questions as :class:`Question` records (rows checked as the casual split's are)."""
    return _casual_rows(CASUAL_VALIDATION, "casual-validation")


def casual_validation2_questions() -> list[object]:
    """The second casual validation set (train and validation films) as :class:`Question` records."""
    return _casual_rows(CASUAL_VALIDATION2, "casual-validation-2")


def casual_validation3_questions() -> list[object]:
    """The third casual validation set (train and validation films, written blind) as :class:`Question` records."""
    return _casual_rows(CASUAL_VALIDATION3, "casual-validation-3")


def casual_heldout_questions() -> list[object]:
    """The held-out casual questions (test-pool films, never tuned on) as :class:`Question` records."""
    return _casual_rows(CASUAL_HELDOUT, "casual-heldout")


def casual_heldout2_questions() -> list[object]:
    """The second held-out casual set (test-pool films no other set asks about) as :class:`Question` records."""
    return _casual_rows(CASUAL_HELDOUT2, "casual-heldout-2")


def casual_heldout3_questions() -> list[object]:
    """The third held-out casual set (test-pool films, written blind) as :class:`Question` records."""
    return _casual_rows(CASUAL_HELDOUT3, "casual-heldout-3")


def _casual_rows(path: Path, split: str) -> list[object]:
    from agentenv.envs.media_search.questions.record import Question, question_id
    from agentenv.envs.media_search.tasks.casual import _check_row

    out = []
    for lineno, raw in enumerate(_jsonl(path), start=1):
        row = _check_row(raw, f"{path.name}:{lineno}")
        out.append(
            Question(
                id=question_id(row["kind"], row["question"], row["answer"]),
                question=row["question"],
                answer=row["answer"],
                aliases=tuple(row["aliases"]),
                answer_type=row["answer_type"],
                kind=row["kind"],
                difficulty="casual",
                plan=tuple(row["plan"]),
                extract=row["extract"],
                split=split,
                group=f"{split}:{lineno}",
            )
        )
    return out


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


def step_latency(name: str, queries: Sequence[str]) -> tuple[list[float], ...]:
    """ms of each ``search`` step on a fresh env: uncached, cached, and with only the embeddings cached.

    The first pass runs the model on every query; the second finds each query's embedding
    and MiniLM hits cached; the third finds the embeddings but not the hits (faiss runs).
    Every pass must show the agent the same observations (asserted), so a cache never
    changes a ranking.
    """
    import gymnasium as gym

    import agentenv  # noqa: F401
    from agentenv.engine.actions import tool_call

    env = gym.make("MediaSearch-v0", retriever=name)
    retriever = env.unwrapped.retriever  # type: ignore[attr-defined]
    parts = getattr(retriever, "retrievers", [retriever])
    for part in parts:  # the first pass runs the model
        getattr(part, "clear_query_cache", lambda **_: None)()
    passes, seen = [], []
    for pass_ in range(3):
        if pass_ == 2:
            for part in parts:
                getattr(part, "clear_query_cache", lambda **_: None)(keep_embeddings=True)
        times, observations = [], []
        for i, q in enumerate(queries):
            action = tool_call("search", query=q, k=K)
            if i % 4 == 0:  # well inside the turn budget
                env.reset(seed=i)
            start = time.perf_counter()
            obs, *_ = env.step(action)
            times.append((time.perf_counter() - start) * 1e3)
            observations.append(obs)
        passes.append(times)
        seen.append(observations)
    assert seen[0] == seen[1] == seen[2], f"{name}: a cached search showed other results"
    return passes[0], passes[1], passes[2]


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
        lat_set = "casual" if "casual" in sets else next(iter(sets))
        lat_queries = [q for q, _ in sets[lat_set]][: args.latency_queries]
        load = os.getloadavg()[0]
        first, cached, embedded = step_latency(name, lat_queries)
        p50, p90, p99 = (float(np.percentile(first, p)) for p in (50, 90, 99))
        print(
            f"\n{name} (loaded in {loaded:.1f} s); search step p50 {p50:.2f} ms, p90 {p90:.2f} ms, "
            f"p99 {p99:.2f} ms; with the query cached p50 {statistics.median(cached):.2f} ms, "
            f"p99 {float(np.percentile(cached, 99)):.2f} ms; with only its embedding cached p50 "
            f"{statistics.median(embedded):.2f} ms, p99 {float(np.percentile(embedded, 99)):.2f} ms "
            f"({len(lat_queries)} {lat_set} queries, the same results in every pass; "
            f"load average {load:.1f} before, {os.getloadavg()[0]:.1f} after)"
        )
        print(
            f"  {'set':17s} "
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
            print(f"  {set_name:17s} " + " ".join(f"{c:>19s}" for c in cells) + "   " + diff)
        sys.stdout.flush()


def described_words(query: str) -> list[str]:
    """The words of the question reader's query that are neither a named person's nor numbers."""
    from agentenv.corpora.media.catalog import normalize_key
    from agentenv.envs.media_search.tools.corpus import bm25_search_query, named_people

    names = {w for p in named_people(query) for w in normalize_key(p.name).split()}
    return [
        w
        for w in normalize_key(bm25_search_query(query)).split()
        if w not in names and not w.isdigit()
    ]


def strip_people(query: str) -> str:
    """The query with the words of the people it names left out (what MiniLM may read of it)."""
    from agentenv.corpora.media.catalog import normalize_key
    from agentenv.envs.media_search.tools.corpus import named_people

    names = {w for p in named_people(query) for w in normalize_key(p.name).split()}
    return " ".join(w for w in normalize_key(query).split() if w not in names) or query


def tune(args: argparse.Namespace) -> None:
    """Score every fusion on the casual validation questions and train + validation samples; never a test split."""
    from agentenv.corpora.media.catalog import load_catalog
    from agentenv.envs.media_search.tools.corpus import (
        MEDIA_FUSION_WEIGHTS,
        CreditedFilms,
        bm25_search_query,
        media_titles,
        minilm_search_query,
        named_people,
    )
    from agentenv.retrieval import HYBRID_MINILM, build_retriever
    from agentenv.retrieval.char_ngrams import CharNgramRetriever
    from agentenv.retrieval.hybrid import rrf_fuse

    catalog = load_catalog()
    ids, texts = catalog.documents()
    rng = np.random.default_rng(args.seed)
    generated = []
    for split, n in (("train", args.tune_train), ("validation", args.tune_validation)):
        got = question_set(split)
        generated += [
            got[i] for i in sorted(rng.choice(len(got), size=min(n, len(got)), replace=False))
        ]
    casual = list(dict.fromkeys(args.tune_casual))
    sets = {name: question_set(name) for name in casual}
    sets["train+validation"] = generated
    print(
        f"tuning on {sum(len(sets[c]) for c in casual)} casual validation questions "
        f"({', '.join(f'{c} {len(sets[c])}' for c in casual)}) and "
        f"{len(generated)} train + validation questions (seed {args.seed})"
    )
    bm25 = build_retriever("bm25", texts, ids, corpus_checksum=catalog.checksum)
    dense = build_retriever("dense-minilm", texts, ids, corpus_checksum=catalog.checksum)
    titles = CharNgramRetriever.from_texts(media_titles(), ids)
    credits = CreditedFilms(bm25)
    read: Callable[[str], str] = bm25_search_query
    depth = 100
    lists: dict[str, dict[tuple[str, str], list[list[str]]]] = {}
    for set_name, pairs in sets.items():
        questions = [q for q, _ in pairs]
        lists[set_name] = {}
        for part, retriever in (
            ("bm25", bm25),
            ("minilm", dense),
            ("titles", titles),
            ("credits", credits),
        ):
            for query, rewrite in (("question", None), ("reader", read)):
                asked = [rewrite(q) for q in questions] if rewrite else questions
                start = time.perf_counter()
                hits = retriever.search_batch(asked, depth)
                lists[set_name][(part, query)] = [[h.doc_id for h in hs] for hs in hits]
                print(
                    f"  {set_name}: {part} on the {query}, {len(asked)} queries "
                    f"in {time.perf_counter() - start:.1f} s"
                )

    for (
        set_name,
        pairs,
    ) in sets.items():  # on the question or the reader's, unless it names a person
        for part in ("minilm", "titles"):
            for query, gated in (("question", "gated"), ("reader", "reader-gated")):
                lists[set_name][(part, gated)] = [
                    [] if named_people(q) else hits
                    for (q, _), hits in zip(pairs, lists[set_name][(part, query)], strict=True)
                ]
        # "rewrite": what hybrid-minilm's MiniLM part reads (minilm_search_query: the question
        # less the names it holds, or nothing when no more than names and phrasing is left)
        rewritten = [minilm_search_query(q) for q, _ in pairs]
        hits = dense.search_batch([q for q in rewritten if q is not None], depth)
        found = iter([[h.doc_id for h in hs] for hs in hits])
        lists[set_name][("minilm", "rewrite")] = [
            [] if q is None else next(found) for q in rewritten
        ]
        # ... or unless it names a person and fewer than n other words describe the film
        # ("contentN": MiniLM on the question; "stripped-contentN": on the question less the names)
        questions = [q for q, _ in pairs]
        described = [len(described_words(q)) for q in questions]
        hits = dense.search_batch([strip_people(q) for q in questions], depth)
        lists[set_name][("minilm", "stripped")] = [[h.doc_id for h in hs] for hs in hits]
        for n in range(1, 7):
            for query, name in (("question", f"content{n}"), ("stripped", f"stripped-content{n}")):
                lists[set_name][("minilm", name)] = [
                    hits if minilm_search_query(q) is not None or d >= n else []
                    for q, d, hits in zip(
                        questions, described, lists[set_name][("minilm", query)], strict=True
                    )
                ]
    doc_index = {d: n for n, d in enumerate(ids)}
    arrays = {  # per set and list: (questions, depth) doc numbers, -1 past a list's end
        set_name: {
            key: np.array(
                [[doc_index[d] for d in hits] + [-1] * (depth - len(hits)) for hits in per_query]
            )
            for key, per_query in by_list.items()
        }
        for set_name, by_list in lists.items()
    }
    gold_docs = {s: np.array([doc_index[g] for _, g in pairs]) for s, pairs in sets.items()}

    def score(fusion: Sequence[tuple[str, str, float]], rrf_k: float, cut: int) -> dict:
        """Per set, the metrics of one fusion (``(part, query, weight)`` lists, RRF constant, depth).

        The same fused order as :func:`rrf_fuse` (weighted reciprocal ranks summed, ties to the
        document met first reading the lists rank by rank), vectorised over the questions.
        """
        used = [(p, q, w) for p, q, w in fusion if w > 0]
        out = {}
        for set_name, gold in gold_docs.items():
            n_q, n_docs = len(gold), len(ids)
            rank = np.arange(cut)
            qs, docs, gain, first = [], [], [], []
            for li, (p, q, w) in enumerate(used):
                top = arrays[set_name][(p, q)][:, :cut]
                ok = top >= 0
                qs.append(np.broadcast_to(np.arange(n_q)[:, None], top.shape)[ok])
                docs.append(top[ok])
                gain.append(np.broadcast_to(w / (rrf_k + rank + 1), top.shape)[ok])
                first.append(np.broadcast_to(rank * len(used) + li, top.shape)[ok])
            key = np.concatenate(qs) * n_docs + np.concatenate(docs)
            met_at = np.concatenate(first)
            # each document's gains summed in the order rrf_fuse adds them, so equal sums are equal
            order = np.lexsort((met_at, key))
            uniq, start, seg = np.unique(key[order], return_index=True, return_inverse=True)
            gains = np.zeros((len(uniq), len(used)))
            gains[seg, np.arange(len(seg)) - start[seg]] = np.concatenate(gain)[order]
            total = np.zeros(len(uniq))
            for column in gains.T:  # left to right, as a Python sum: equal sums come out equal
                total = total + column
            met = met_at[order][start]
            q_of = uniq // n_docs
            is_gold = uniq % n_docs == gold[q_of]
            g_score = np.full(n_q, -1.0)
            g_met = np.zeros(n_q, dtype=np.int64)
            g_score[q_of[is_gold]] = total[is_gold]
            g_met[q_of[is_gold]] = met[is_gold]
            ahead = (total > g_score[q_of]) | ((total == g_score[q_of]) & (met < g_met[q_of]))
            r = 1 + np.bincount(q_of, weights=ahead, minlength=n_q).astype(np.int64)
            r[(g_score < 0) | (r > K)] = 0
            out[set_name] = metrics(r)
        return out

    from agentenv.retrieval.base import Hit

    def fused_by_rrf(fusion: Sequence[tuple[str, str, float]], rrf_k: float, cut: int) -> dict:
        """The same metrics through :func:`rrf_fuse` itself (slow): the check of :func:`score`."""
        used = [(p, q, w) for p, q, w in fusion if w > 0]
        out = {}
        for set_name, pairs in sets.items():
            fused = []
            for i in range(len(pairs)):
                result_lists = [
                    [Hit(d, 0.0, r) for r, d in enumerate(lists[set_name][(p, q)][i][:cut])]
                    for p, q, _ in used
                ]
                got = rrf_fuse(result_lists, [w for *_, w in used], rrf_k, K)
                fused.append([h.doc_id for h in got])
            out[set_name] = metrics(ranks(fused, [g for _, g in pairs]))
        return out

    for fusion, rrf_k, cut in (
        ([("bm25", "reader", 1.0), ("minilm", "question", 0.25)], 10, 100),
        ([("bm25", "reader", 1.0), ("bm25", "question", 1.0), ("minilm", "reader", 0.5)], 1, 20),
        ([("bm25", "reader", 1.0), ("minilm", "gated", 0.5)], 10, 50),
        ([("bm25", "reader", 1.0), ("minilm", "gated", 0.75), ("titles", "gated", 0.25)], 20, 100),
        (
            [("bm25", "reader", 1.0), ("minilm", "rewrite", 0.75), ("credits", "question", 1.0)],
            20,
            100,
        ),
    ):
        fast, slow = score(fusion, rrf_k, cut), fused_by_rrf(fusion, rrf_k, cut)
        assert all(np.array_equal(fast[s][m], slow[s][m]) for s in sets for m in fast[s]), (
            "the vectorised fusion disagrees with rrf_fuse"
        )
    print("  the vectorised fusion ranks as rrf_fuse does (checked on five fusions)")

    bm25_mixes = [(1.0, 0.0), (1.0, 0.25), (1.0, 0.5), (1.0, 1.0), (0.0, 1.0)]  # reader, question
    rows = []
    for reader_w, question_w in bm25_mixes:  # each list alone first, as yardsticks
        if reader_w * question_w == 0:
            q = "reader" if reader_w else "question"
            rows.append((f"bm25 on the {q} alone", score([("bm25", q, 1.0)], 60, depth)))
    for q in ("question", "reader", "gated", "rewrite"):
        rows.append((f"minilm on the {q} alone", score([("minilm", q, 1.0)], 60, depth)))
    for q in ("question", "reader", "gated"):
        rows.append((f"titles on the {q} alone", score([("titles", q, 1.0)], 60, depth)))
    rows.append(("credits alone", score([("credits", "question", 1.0)], 60, depth)))
    grid = itertools.product(
        bm25_mixes,
        args.tune_minilm_queries,
        args.tune_weights,
        args.tune_minilm_reader_weights,
        args.tune_title_queries,
        args.tune_title_weights,
        args.tune_credit_weights,
        args.tune_rrf_k,
        args.tune_depths,
    )
    for (
        reader_w,
        question_w,
    ), minilm_query, w, w2, title_query, title_w, credit_w, rrf_k, cut in grid:
        if title_w == 0 and title_query != args.tune_title_queries[0]:
            continue  # the same fusion as the first title query's
        fusion = [
            ("bm25", "reader", reader_w),
            ("bm25", "question", question_w),
            ("minilm", minilm_query, w),
            ("minilm", args.tune_minilm_second, w2),
            ("titles", title_query, title_w),
            ("credits", "question", credit_w),
        ]
        label = (
            f"bm25 reader {reader_w:g} + question {question_w:g}; minilm {minilm_query} {w:g}"
            + (f" + {args.tune_minilm_second} {w2:g}" if w2 else "")
            + (f"; titles {title_query} {title_w:g}" if title_w else "")
            + f"; credits {credit_w:g}; rrf_k {rrf_k:g}; depth {cut}"
        )
        rows.append((label, score(fusion, rrf_k, cut)))
    print(
        f"  {len(rows)} rows; shipped: {HYBRID_MINILM} with MediaSearch's weights {MEDIA_FUSION_WEIGHTS}"
    )

    def pooled(m: dict, metric: str) -> float:
        """A metric over the casual validation sets' questions pooled (one set: that set's)."""
        return float(np.concatenate([m[c][metric] for c in casual]).mean())

    def objective(row: tuple[str, dict]) -> tuple[float, float]:
        m = row[1]
        return (
            pooled(m, "R@10") + m["train+validation"]["R@10"].mean(),
            pooled(m, "MRR") + m["train+validation"]["MRR"].mean(),
        )

    rows.sort(key=lambda row: tuple(-v for v in objective(row)))
    w_bm25, w_minilm, w_credits = MEDIA_FUSION_WEIGHTS  # as media_retriever_params fuses them
    shipped = score(
        [
            ("bm25", "reader", w_bm25),
            ("minilm", "rewrite", w_minilm),
            ("credits", "question", w_credits),
        ],
        HYBRID_MINILM["rrf_k"],
        HYBRID_MINILM["depth"],
    )
    boot_rng = np.random.default_rng(args.seed)

    def margin(m: dict, on: Sequence[str]) -> str:
        """R@10 against the shipped fusion on the pooled sets ``on``: paired difference [95% CI]."""
        d = np.concatenate([m[s]["R@10"] - shipped[s]["R@10"] for s in on]).astype(float)
        lo, hi = bootstrap(d, args.boot, boot_rng)
        return f"{d.mean():+.3f} [{lo:+.3f}, {hi:+.3f}]"

    shown = [*casual, "train+validation"]
    head = " | ".join(f"{s} R@1 R@10  MRR" for s in shown)
    if len(casual) > 1:
        head = f"pooled R@10 | {head}"
    print(
        "ranked by R@10 (casual validation, pooled) + R@10 (train + validation), then the MRRs\n"
        f"  {'fusion':90s}  {head}"
    )
    for label, m in rows[: args.show]:
        cells = " | ".join(
            " ".join(f"{m[s][k].mean():.3f}" for k in ("R@1", "R@10", "MRR")) for s in shown
        )
        if len(casual) > 1:
            cells = f"{pooled(m, 'R@10'):.3f} | {cells}"
        print(f"  {label:90s}  {cells}")
    print(
        f"R@10 against the shipped fusion, paired ({args.boot} resamples): casual validation "
        "(pooled) | train + validation"
    )
    for label, m in rows[: min(args.show, 40)]:
        print(f"  {label:90s}  {margin(m, casual)} | {margin(m, ['train+validation'])}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--retrievers", default=",".join(DEFAULT_RETRIEVERS))
    parser.add_argument(
        "--sets", default="test,casual,people,own", help="question sets, comma-separated"
    )
    parser.add_argument("--tasks", action="append", default=[], help="a task file (repeatable)")
    parser.add_argument("--boot", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--latency-queries", type=int, default=200)
    parser.add_argument("--tune", action="store_true", help="choose hybrid-minilm's fusion instead")
    parser.add_argument(
        "--tune-casual",
        nargs="+",
        choices=("casual-validation", "casual-validation-2", "casual-validation-3"),
        default=["casual-validation"],
        help="the hand-written casual validation sets to tune on, their questions pooled",
    )
    parser.add_argument("--tune-train", type=int, default=600)
    parser.add_argument("--tune-validation", type=int, default=600)
    parser.add_argument(
        "--tune-weights", type=float, nargs="+", default=[0.1, 0.15, 0.25, 0.35, 0.5, 0.75, 1.0]
    )
    parser.add_argument("--tune-rrf-k", type=float, nargs="+", default=[1, 3, 5, 10, 20, 60])
    parser.add_argument("--tune-depths", type=int, nargs="+", default=[20, 50, 100])
    parser.add_argument("--tune-title-weights", type=float, nargs="+", default=[0.0])
    parser.add_argument(
        "--tune-credit-weights", type=float, nargs="+", default=[0.0, 0.25, 0.5, 0.75, 1.0]
    )
    parser.add_argument("--tune-title-queries", nargs="+", default=["gated", "question", "reader"])
    parser.add_argument(
        "--tune-minilm-queries", nargs="+", default=["question", "reader", "gated", "rewrite"]
    )
    parser.add_argument(
        "--tune-minilm-reader-weights",
        type=float,
        nargs="+",
        default=[0.0],
        help="a second MiniLM list (--tune-minilm-second; by default on the reader's query "
        "unless the question names a person)",
    )
    parser.add_argument(
        "--tune-minilm-second",
        default="reader-gated",
        help="the second MiniLM list's query (a --tune-minilm-queries name)",
    )
    parser.add_argument("--show", type=int, default=25)
    args = parser.parse_args()
    print(f"{os.cpu_count()} CPUs; OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}")
    (tune if args.tune else evaluate)(args)


if __name__ == "__main__":
    main()
