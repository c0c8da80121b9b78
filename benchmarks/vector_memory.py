"""Memory and build time of ``gym.make_vec(id, num_envs=N)`` for every id, sync and async (not a test).

    python benchmarks/vector_memory.py [--num-envs 64] [--modes sync async] [--ids ID ...] [--compare-old]

Each case runs in a fresh interpreter (so one case's caches do not help the
next), builds the vector env, resets it and steps it once with a tool call,
then reports the build time and the memory held: the RSS of the process for
``sync``, and for ``async`` the proportional set size (PSS) of the parent and
all its workers, so pages that forked workers share are counted once.
Budget (issue 33): a 64-env ``MediaSearch-v0`` holds ≤ 400 MB and builds in ≤ 3 s warm.

``--compare-old`` adds, for each ``async`` case, a row with what lets workers share
memory switched off inside that case's interpreter, as before it existed: no heap freeze
around forks (:mod:`agentenv.storage.fork_sharing`), every env finding its index's cache
entry by hashing the corpus ids again (:func:`agentenv.retrieval.cache.loaded_for`), and
the rare-disease phenotype ranker computed in each process instead of memory-mapped from
its disk cache (:mod:`agentenv.envs.rare_disease.tools.ranker_cache`). Old and new then run in
the same run, under the same load. Not undone there: the ranker's tie check no longer calls
``np.unique`` (whose first call imported ``numpy.ma``, about 6 MB), so the old rare-disease rows
are a little lighter than the old code was.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _bench_common import print_machine  # noqa: E402

CASE = r"""
import json, os, sys, time
import gymnasium as gym
import agentenv
from agentenv.engine.actions import tool_call

def pss_mb(pid):
    try:
        for line in open(f"/proc/{pid}/smaps_rollup"):
            if line.startswith("Pss:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return 0.0
    return 0.0

def children(pid):
    out = []
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            out += [int(c) for c in open(f"/proc/{pid}/task/{task}/children").read().split()]
        except OSError:
            pass
    return out

env_id, n, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3]
if len(sys.argv) > 4 and sys.argv[4] == "old":  # the sharing of issue 33 switched off (see --compare-old)
    import agentenv.storage.fork_sharing as fork_sharing
    import agentenv.envs.rare_disease.tools.ranker_cache as ranker_cache
    import agentenv.retrieval.cache as index_cache
    fork_sharing._registered = True  # never registers its fork hooks
    ranker_cache.cached_ranker_arrays = lambda kb, hubs: ranker_cache.ranker_arrays(kb, hubs)
    index_cache.loaded_for = lambda key, load: load()  # every env hashes the corpus ids for its cache key
base = pss_mb(os.getpid())
start = time.perf_counter()
vec = gym.make_vec(env_id, num_envs=n, vectorization_mode=mode)
vec.reset(seed=0)
build_s = time.perf_counter() - start
vec.step(tuple(tool_call("search", query="a film from 1999") for _ in range(n)))
pids = [os.getpid(), *children(os.getpid())]
print(json.dumps({"build_s": build_s, "import_mb": base, "pss_mb": sum(pss_mb(p) for p in pids),
                  "processes": len(pids)}))
vec.close()
"""


def case(env_id: str, n: int, mode: str, old: bool = False) -> dict:
    argv = [sys.executable, "-c", CASE, env_id, str(n), mode, *(["old"] if old else [])]
    done = subprocess.run(
        argv,
        capture_output=True,
        text=True,
        timeout=900,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
    )
    if done.returncode != 0:
        return {
            "error": done.stderr.strip().splitlines()[-1]
            if done.stderr.strip()
            else f"exit {done.returncode}"
        }
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    import agentenv  # noqa: F401 - registers the ids
    from agentenv.registration import env_ids

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--num-envs", type=int, default=64)
    parser.add_argument("--modes", nargs="+", default=["sync", "async"])
    parser.add_argument("--ids", nargs="+", default=None)
    parser.add_argument(
        "--compare-old",
        action="store_true",
        help="async cases also with fork sharing and the ranker cache switched off",
    )
    args = parser.parse_args(argv)
    print_machine(f"gym.make_vec memory, {args.num_envs} envs")
    print(
        "| id | mode | envs | build+reset s | memory MB (sync: RSS-like PSS; async: PSS of all processes) | "
        "one env MB | per extra env MB |"
    )
    print("|---|---|---|---|---|---|---|")
    for env_id in args.ids or env_ids():
        runs = [(mode, False) for mode in args.modes]
        if args.compare_old and "async" in args.modes:
            runs.insert(runs.index(("async", False)), ("async", True))
        for mode, old in runs:
            one, many = case(env_id, 1, mode, old), case(env_id, args.num_envs, mode, old)
            label = f"{mode} (old: no sharing)" if old else mode
            if "error" in one or "error" in many:
                print(
                    f"| {env_id} | {label} | {args.num_envs} | error: {one.get('error') or many.get('error')} |||"
                )
                continue
            extra = (many["pss_mb"] - one["pss_mb"]) / (args.num_envs - 1)
            print(
                f"| {env_id} | {label} | {args.num_envs} | {many['build_s']:.2f} | {many['pss_mb']:.0f} | "
                f"{one['pss_mb']:.0f} | {extra:+.1f} |",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
