"""First steps in a fresh process: make + reset + each tool's first call + the first answer.

    python benchmarks/first_steps.py [--ids RareDiseaseDiagnosis-v0 MediaSearch-v0] [--passes 3] [--json out.json]

Not a test: it prints a table. Why it exists: a one-time build (an index, a
lookup table) that runs inside a step makes that step slow once per process,
under the tool's deadline, in every vector-env worker and Ray actor; the
warm ``gym.make`` figure does not see it. Each pass runs in a fresh Python
process with the warm ``$AGENTENV_HOME`` (the caches already on disk, as a
second run meets them), times ``gym.make``, the first ``reset``, the first
call of every tool of the env (in the order listed below), the first answer,
and then the same tool calls again in the same episode (no build left to
do), so the ratio of a first call to its repeat shows what the first one
still builds. Median and spread over ``--passes`` passes; CPU seconds beside
wall seconds, since wall figures of a loaded machine are not comparable.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from typing import Any

CALLS: dict[str, list[tuple[str, dict[str, Any]]]] = {
    "RareDiseaseDiagnosis-v0": [
        ("search_diseases", {"query": "tall stature long slender fingers dislocated lens"}),
        ("lookup_phenotype", {"text": "long slender fingers"}),
        ("rank_by_phenotypes", {"hpo_ids": ["HP:0001166", "HP:0001083"]}),
        ("get_disease", {"disease_id": "OMIM:154700"}),
        ("phenotype_relatives", {"hpo_id": "HP:0001166"}),
        ("ask_patient", {"hpo_id": "HP:0001166"}),
    ],
    "MediaSearch-v0": [
        ("search", {"query": "space station thriller"}),
        ("filter_titles", {"genre": "Drama", "year_min": 1990, "limit": 5}),
        ("get_title", {"title_id": "tt0000000"}),
        ("find_person", {"name": "Christopher Nolan"}),
    ],
}

PASS_CODE = r"""
import json, resource, sys, time
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
env_id, calls = sys.argv[1], json.loads(sys.argv[2])
import gymnasium as gym
import agentenv
from agentenv.actions import answer, tool_call
out = {}
def timed(name, fn):
    t, c = time.perf_counter(), cpu()
    result = fn()
    out[name] = (time.perf_counter() - t, cpu() - c)
    return result
env = timed("make", lambda: gym.make(env_id, max_turns=2 * len(calls) + 2))
timed("reset", lambda: env.reset(seed=0))
for name, args in calls:
    obs = timed(f"first {name}", lambda: env.step(tool_call(name, **args)))[0]
    assert "error" not in obs[:40].lower() or name == "get_title", obs[:200]
for name, args in calls:
    timed(f"again {name}", lambda: env.step(tool_call(name, **args)))
gold = env.unwrapped.task.gold
text = gold.get("name") or gold.get("answer")
timed("first answer", lambda: env.step(answer(str(text))))
print("RESULT " + json.dumps(out))
"""


def one_pass(env_id: str, home: str | None = None) -> dict[str, tuple[float, float]]:
    """Every timed phase of one fresh process: ``{phase: (wall s, cpu s)}`` (``home``: its ``$AGENTENV_HOME``)."""
    env = dict(os.environ, **({"AGENTENV_HOME": home} if home else {}))
    proc = subprocess.run([sys.executable, "-c", PASS_CODE, env_id, json.dumps(CALLS[env_id])],
                          capture_output=True, text=True, check=True, env=env)
    line = next(x for x in proc.stdout.splitlines() if x.startswith("RESULT "))
    return {k: tuple(v) for k, v in json.loads(line[7:]).items()}  # type: ignore[misc]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ids", nargs="+", default=list(CALLS), choices=list(CALLS))
    parser.add_argument("--passes", type=int, default=3)
    parser.add_argument("--json", default=None, help="also write the figures here")
    args = parser.parse_args()
    print(f"# first steps in a fresh process (warm cache); {os.cpu_count()} cores, "
          f"load average {os.getloadavg()[0]:.2f}; median [min-max] of {args.passes} passes")
    record: dict[str, Any] = {}
    for env_id in args.ids:
        one_pass(env_id)  # fills the disk caches, so every timed pass meets a warm home
        passes = [one_pass(env_id) for _ in range(args.passes)]
        print(f"\n## {env_id}\n\n| phase | wall ms | cpu ms | first / again |\n|---|---|---|---|")
        record[env_id] = {}
        for phase in passes[0]:
            if phase.startswith("again "):
                continue
            walls = [p[phase][0] * 1e3 for p in passes]
            cpus = [p[phase][1] * 1e3 for p in passes]
            again = phase.replace("first ", "again ", 1)
            ratio = ""
            if phase.startswith("first ") and again in passes[0]:
                ratio = f"{statistics.median(p[phase][0] / max(p[again][0], 1e-6) for p in passes):.1f}x"
            print(f"| {phase} | {statistics.median(walls):.1f} [{min(walls):.1f}-{max(walls):.1f}] "
                  f"| {statistics.median(cpus):.0f} | {ratio} |")
            record[env_id][phase] = {"wall_ms": walls, "cpu_ms": cpus}
        total = [sum(v[0] for k, v in p.items() if not k.startswith("again ")) * 1e3 for p in passes]
        print(f"| make + reset + first tool steps + first answer | {statistics.median(total):.0f} | | |")
        worst = [max(v[0] for k, v in p.items() if k.startswith("first ")) * 1e3 for p in passes]
        print(f"| worst first step after reset | {statistics.median(worst):.1f} | | |")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(record, f, indent=1)


if __name__ == "__main__":
    main()
