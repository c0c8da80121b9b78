"""Retrieval quality of each back-end on the MediaSearch validation questions.

    python benchmarks/retrieval_quality.py [--k 10]

For every validation question whose answer is a title, the question text is
the query and the gold title id (the first alias of a title answer) is the
target; prints recall@k for BM25, the rank-bm25 reference, dense (hashed
TF-IDF + SVD, Flat and HNSW) and the hybrid, per question kind too.
"""

from __future__ import annotations

import argparse
import time
from collections import defaultdict

from agentenv.corpora.media import load_catalog
from agentenv.envs.media_search.question_cache import load_questions
from agentenv.retrieval import build_retriever


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", type=int, default=10)
    args = parser.parse_args()
    catalog = load_catalog()
    ids, texts = catalog.documents()
    questions = [q for q in load_questions("validation") if q.answer_type == "title"]
    gold = [next(a for a in q.aliases if a.startswith(("tt", "m"))) for q in questions]
    specs = {
        "bm25": ("bm25", {}),
        "bm25-reference": ("bm25-reference", {}),
        "dense (flat)": ("dense", {"index": "flat"}),
        "dense (hnsw)": ("dense", {"index": "hnsw"}),
        "hybrid": ("hybrid", {}),
    }
    print(
        f"{len(questions)} validation questions with a title answer; recall@{args.k} of the gold title"
    )
    print(f"{'back-end':16s} {'recall':>7s} {'build s':>8s}  per kind")
    for name, (spec, params) in specs.items():
        start = time.perf_counter()
        retriever = build_retriever(spec, texts, ids, corpus_checksum=catalog.checksum, **params)
        built = time.perf_counter() - start
        results = retriever.search_batch([q.question for q in questions], args.k)
        per_kind: dict[str, list[bool]] = defaultdict(list)
        for q, g, hits in zip(questions, gold, results, strict=True):
            per_kind[q.kind].append(any(h.doc_id == g for h in hits))
        total = [x for v in per_kind.values() for x in v]
        kinds = "  ".join(f"{k} {sum(v) / len(v):.3f}" for k, v in sorted(per_kind.items()))
        print(f"{name:16s} {sum(total) / len(total):7.3f} {built:8.2f}  {kinds}")


if __name__ == "__main__":
    main()
