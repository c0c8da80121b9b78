"""Episodes per second of ``agentenv eval`` on Ray actors against local processes, in one run (not a test).

    python benchmarks/ray_eval.py [--passes 3] [--oracle-episodes 1200] [--bm25-episodes 400] [--json out.json]

For the oracle and bm25 agents on MediaSearch-v0 (validation split), each
figure is the median episodes/s of the episode loop (env builds excluded, as
in ``summary.json``) over ``--passes`` interleaved passes, after a warm-up:

* local ``--workers 1`` and ``--workers 2`` (processes, ``agentenv.evaluation.runner``);
* Ray with 1 and 2 workers (actors on a local 2-CPU Ray started once here);
* bm25 only: Ray with 2 workers asking one shared BM25 service (an actor on
  loopback, given no CPU of its own here) instead of an index in each worker.

Ray's overhead per episode is the single-worker difference of the time per
episode (Ray minus local): what dispatching chunks to an actor and shipping
records back costs. The searches each worker sends per second (bm25 via the
service) size how many workers one service can feed; ``benchmarks/retrieval_server.py``
measures what one service answers.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _bench_common import interleaved, print_machine, spread_text  # noqa: E402

from agentenv.evaluation.runner import RunConfig, run  # noqa: E402


def local_pass(config: RunConfig) -> Callable[[], float]:
    """A pass: the run in local processes; returns episodes/s of the loop."""

    def one() -> float:
        result = run(config, progress=False)
        return len(result.records) / result.loop_s

    return one


def ray_pass(config: RunConfig, searches: list[float]) -> Callable[[], float]:
    """A pass: the run on Ray actors; returns episodes/s of the loop (records searches per episode)."""
    from agentenv.integrations.ray.evaluation import RayEvaluation

    def one() -> float:
        with RayEvaluation(config, progress=False) as evaluation:
            start = time.perf_counter()
            records = list(evaluation.records())
            loop_s = time.perf_counter() - start
        searches.append(
            sum(
                1
                for r in records
                for m in r["messages"]
                if m["role"] == "assistant"
                for c in m.get("tool_calls") or []
                if c["function"]["name"] == "search"
            )
            / len(records)
        )
        return len(records) / loop_s

    return one


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--passes", type=int, default=3)
    parser.add_argument("--oracle-episodes", type=int, default=1200)
    parser.add_argument("--bm25-episodes", type=int, default=400)
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = parser.parse_args(argv)

    import ray

    from agentenv.integrations.ray.retrieval import start_retrieval_service

    record = {
        "machine": print_machine(
            "agentenv eval on Ray against local processes (episodes/s of the loop)"
        )
    }
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    start = time.perf_counter()
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="warning")
    print(f"# local Ray with 2 CPUs started in {time.perf_counter() - start:.1f} s (once)")
    service = start_retrieval_service("media", host="loopback", num_cpus=0)
    figures: dict[str, dict[str, dict[str, float]]] = {}
    searches: dict[str, list[float]] = {}
    try:
        for agent, episodes in (("oracle", args.oracle_episodes), ("bm25", args.bm25_episodes)):
            base = RunConfig("MediaSearch-v0", agent, split="validation", episodes=episodes, seed=0)
            cases = {
                "local --workers 1": local_pass(replace(base, workers=1)),
                "local --workers 2": local_pass(replace(base, workers=2)),
                "ray 1 worker": ray_pass(
                    replace(base, workers=1), searches.setdefault(f"{agent} ray1", [])
                ),
                "ray 2 workers": ray_pass(
                    replace(base, workers=2), searches.setdefault(f"{agent} ray2", [])
                ),
            }
            if agent == "bm25":
                served = replace(base, workers=2, env_kwargs=(("retriever", service.url),))
                cases["ray 2 workers, shared service"] = ray_pass(
                    served, searches.setdefault("bm25 served", [])
                )
            figures[agent] = interleaved(cases, passes=args.passes, warmup=1)
        served_stats = service.stats()
    finally:
        service.stop()
        ray.shutdown()

    print("\n| agent | episodes | variant | episodes/s (median) | spread | vs local --workers 1 |")
    print("|---|---|---|---|---|---|")
    for agent, cases in figures.items():
        episodes = args.oracle_episodes if agent == "oracle" else args.bm25_episodes
        floor = cases["local --workers 1"]["median"]
        for name, fig in cases.items():
            print(
                f"| {agent} | {episodes} | {name} | {fig['median']:.0f} | {spread_text(fig)} | "
                f"{fig['median'] / floor:.2f}× |"
            )
    print("\n| agent | Ray overhead per episode (1 worker: 1/ray − 1/local) | local ms/episode |")
    print("|---|---|---|")
    overhead = {}
    for agent, cases in figures.items():
        local_ms = 1000 / cases["local --workers 1"]["median"]
        ray_ms = 1000 / cases["ray 1 worker"]["median"]
        overhead[agent] = ray_ms - local_ms
        print(f"| {agent} | {ray_ms - local_ms:+.3f} ms | {local_ms:.3f} ms |")
    per_episode = statistics.median(searches["bm25 served"]) if searches.get("bm25 served") else 0.0
    served_rate = figures["bm25"]["ray 2 workers, shared service"]["median"] / 2
    demand = per_episode * served_rate
    print(
        f"\nbm25 via the shared service: {per_episode:.2f} searches per episode, "
        f"{served_rate:.0f} episodes/s per worker, so each worker asks about {demand:.0f} q/s; "
        f"the service answered {served_stats.get('queries', 0)} queries in "
        f"{served_stats.get('batches', 0)} batches"
    )
    record.update(
        {
            "figures": figures,
            "overhead_ms": overhead,
            "bm25_searches_per_episode": per_episode,
            "bm25_served_qps_per_worker": demand,
        }
    )
    if args.json:
        args.json.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
