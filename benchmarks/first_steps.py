"""First steps in a fresh process: make + reset + each tool's first call + the first answer.

    python benchmarks/first_steps.py [--ids RareDiseaseDiagnosis-v0 MediaSearch-v0] [--passes 3]
                                     [--before REV] [--json out.json]

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

``--before REV`` also runs an older revision of the repository (installed as
``benchmarks/before_after.py`` does: its own venv over this interpreter's
packages, its own warm home), passes alternating with this checkout's, and
prints both columns, so the two sides meet the same load.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
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
from agentenv.engine.actions import answer, tool_call
out = {}
def timed(name, fn):
    t, c = time.perf_counter(), cpu()
    result = fn()
    out[name] = (time.perf_counter() - t, cpu() - c)
    return result
env = timed("make", lambda: gym.make(env_id, max_turns=2 * len(calls) + 2))
timed("reset", lambda: env.reset(seed=0))
failed = []
for name, args in calls:
    obs = timed(f"first {name}", lambda: env.step(tool_call(name, **args)))[0]
    if "error" in obs[:40].lower() and name != "get_title":  # e.g. a first call that ran past the tool's deadline
        failed.append(name)
for name, args in calls:
    timed(f"again {name}", lambda: env.step(tool_call(name, **args)))
gold = env.unwrapped.task.gold
text = gold.get("name") or gold.get("answer")
timed("first answer", lambda: env.step(answer(str(text))))
print("RESULT " + json.dumps({"timings": out, "failed": failed}))
"""


def one_pass(
    env_id: str, home: str | None = None, python: str = sys.executable
) -> dict[str, tuple[float, float]]:
    """Every timed phase of one fresh process: ``{phase: (wall s, cpu s)}`` (``home``: its ``$AGENTENV_HOME``)."""
    env = dict(os.environ, **({"AGENTENV_HOME": home} if home else {}))
    proc = subprocess.run(
        [python, "-c", PASS_CODE, env_id, json.dumps(CALLS[env_id])],
        capture_output=True,
        text=True,
        check=True,
        env=env,
        cwd=os.path.dirname(__file__),
    )
    line = next(x for x in proc.stdout.splitlines() if x.startswith("RESULT "))
    result = json.loads(line[7:])
    FAILED.setdefault((env_id, python), []).extend(result["failed"])
    return {k: tuple(v) for k, v in result["timings"].items()}  # type: ignore[misc]


FAILED: dict[tuple[str, str], list[str]] = {}
"""First tool calls whose observation was an error (a build that ran past the tool's deadline), per id and side."""


def _median_cell(passes: list[dict[str, tuple[float, float]]], phase: str) -> str:
    walls = [p[phase][0] * 1e3 for p in passes]
    cpus = [p[phase][1] * 1e3 for p in passes]
    return f"{statistics.median(walls):.1f} [{min(walls):.1f}-{max(walls):.1f}] / {statistics.median(cpus):.0f}"


def _totals(passes: list[dict[str, tuple[float, float]]]) -> tuple[list[float], list[float]]:
    total = [sum(v[0] for k, v in p.items() if not k.startswith("again ")) * 1e3 for p in passes]
    worst = [max(v[0] for k, v in p.items() if k.startswith("first ")) * 1e3 for p in passes]
    return total, worst


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ids", nargs="+", default=list(CALLS), choices=list(CALLS))
    parser.add_argument("--passes", type=int, default=3)
    parser.add_argument(
        "--before", default=None, help="also run this git revision, passes alternating"
    )
    parser.add_argument("--json", default=None, help="also write the figures here")
    args = parser.parse_args()
    sides: dict[str, tuple[str | None, str]] = {"after": (None, sys.executable)}
    if args.before:
        from before_after import prepare_before

        _, python, home = prepare_before(
            args.before, Path(tempfile.gettempdir()) / f"agentenv-before-{args.before}"
        )
        sides = {"before": (str(home), str(python)), **sides}
    print(
        f"# first steps in a fresh process (warm cache); {os.cpu_count()} cores, "
        f"load average {os.getloadavg()[0]:.2f}; median [min-max] of {args.passes} passes, wall ms / cpu ms"
        + (f"; before = {args.before}, passes alternating" if args.before else "")
    )
    record: dict[str, Any] = {}
    for env_id in args.ids:
        runs: dict[str, list[dict[str, tuple[float, float]]]] = {side: [] for side in sides}
        for home, python in sides.values():
            one_pass(
                env_id, home, python
            )  # fills the disk caches, so every timed pass meets a warm home
        for _ in range(args.passes):
            for side, (home, python) in sides.items():
                runs[side].append(one_pass(env_id, home, python))
        names = list(sides)
        print(
            f"\n## {env_id}\n\n| phase | "
            + " | ".join(names)
            + " | first / again (after) |\n"
            + "|---" * (len(names) + 2)
            + "|"
        )
        after = runs["after"]
        for phase in after[0]:
            if phase.startswith("again "):
                continue
            again = phase.replace("first ", "again ", 1)
            ratio = ""
            if phase.startswith("first ") and again in after[0]:
                ratio = (
                    f"{statistics.median(p[phase][0] / max(p[again][0], 1e-6) for p in after):.1f}x"
                )
            cells = [_median_cell(runs[n], phase) if phase in runs[n][0] else "-" for n in names]
            print(f"| {phase} | " + " | ".join(cells) + f" | {ratio} |")
        sums = {n: _totals(runs[n]) for n in names}
        print(
            "| make + reset + first tool steps + first answer, wall ms | "
            + " | ".join(f"{statistics.median(sums[n][0]):.0f}" for n in names)
            + " | |"
        )
        print(
            "| worst first step after reset, wall ms | "
            + " | ".join(f"{statistics.median(sums[n][1]):.1f}" for n in names)
            + " | |"
        )
        print(
            "| first calls that failed (all passes, warm-up included) | "
            + " | ".join(", ".join(FAILED.get((env_id, sides[n][1]), [])) or "none" for n in names)
            + " | |"
        )
        record[env_id] = {
            n: {"passes": runs[n], "total_ms": sums[n][0], "worst_first_step_ms": sums[n][1]}
            for n in names
        }
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(record, f, indent=1)


if __name__ == "__main__":
    main()
