"""Start-up budgets: cold corpus and index build, warm ``gym.make``, ``import agentenv``, a first eval.

    python benchmarks/startup.py [--ids MediaSearch-v0 ...] [--cold-passes 3] [--warm-passes 5]
                                 [--eval-episodes 200] [--no-eval | --eval-only] [--warm-only]
                                 [--baseline DIR] [--json out.json]

The warm-make budget alone, against an older checkout in the same run::

    git worktree add --detach /tmp/base HEAD~5
    python benchmarks/startup.py --warm-only --baseline /tmp/base

Not a test: it prints tables. Every figure comes from a fresh Python
process, as a user meets it (nothing is reused from this process):

* **machine**: cores and the load average at the start (the figures of a
  loaded machine are not comparable with a quiet one's; compare ratios or
  CPU seconds measured in one run);
* **cold**, per registered env id: ``gym.make`` in a fresh process with a
  fresh, empty ``$AGENTENV_HOME`` (corpus, caches and index built from the
  pinned packages), then the first ``reset``; median and spread of
  ``--cold-passes`` passes, against the 8 s budget;
* **warm**, per id: ``gym.make`` in a fresh process after ``import agentenv``,
  the cache already built; a warm-up pass, then the median and spread of
  ``--warm-passes`` passes, against the 0.3 s budget (issue 33). The
  dialogue ids (``MediaConcierge-v0``, ``DiagnosisDialogue-v0``) are made with
  ``agentenv.multiagent.make``. Modules are compiled to bytecode once, in the
  warm-up (into a scratch ``PYTHONPYCACHEPREFIX``, even where
  ``PYTHONDONTWRITEBYTECODE`` is set), as they are in an installed package:
  otherwise every pass would time the compiler. ``--warm-only`` runs just
  this table, and ``--home DIR`` runs it over an existing home (e.g. the
  default one, already built) rather than a scratch one; ``--baseline DIR`` adds, pass by pass, the same make of the tree
  checked out in ``DIR`` (its ``agentenv``, ``envs``, ``corpora`` and
  ``baselines`` folders imported in place of this tree's), over the same warm
  home, and the ratio of the two medians;
* **import agentenv**: its time in a fresh process (median of the warm
  passes), that it creates no cache folder, and the largest costs reported by
  ``python -X importtime``;
* **first steps**, per id that ``benchmarks/first_steps.py`` knows: make +
  reset + the first call of every tool + the first answer in a fresh process
  over a warm home, and the worst of those first steps (a one-time build left
  inside a step shows there);
* **first eval**: ``agentenv eval MediaSearch-v0 --agent oracle --episodes 200``
  (the README's first job) in a fresh home, broken down into interpreter start,
  imports, each corpus and index build, question generation, the rest of the
  env's construction, the episodes and writing the outputs. The phases are
  timed by wrapping the functions that do them (wall and CPU seconds, each
  phase without the phases nested in it).

Wall figures include waiting for the CPU on a shared machine; the CPU column
(user + system of the process) is less sensitive to other load, so compare
before/after on it when the load average is high.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

COLD_BUDGET_S, WARM_BUDGET_S = 8.0, 0.3
EVAL_ARGS = ("eval", "MediaSearch-v0", "--agent", "oracle", "--no-progress")

# argv: env id, then the root of another checkout to import agentenv from ("" for this one).
TREE_PRELUDE = r"""
import sys
if len(sys.argv) > 2 and sys.argv[2]:
    import importlib.util, os
    _ROOT, _MAP = sys.argv[2], {"agentenv": "agentenv", "agentenv.envs": "envs", "agentenv.corpora": "corpora",
                               "agentenv.baselines": "baselines"}
    class _TreeFinder:  # ahead of the editable install's finder: this checkout's packages instead
        @classmethod
        def find_spec(cls, name, path=None, target=None):
            if name not in _MAP:
                return None
            folder = os.path.join(_ROOT, _MAP[name])
            return importlib.util.spec_from_file_location(name, os.path.join(folder, "__init__.py"),
                                                          submodule_search_locations=[folder])
    sys.meta_path.insert(0, _TreeFinder)
"""

MAKE_CODE = (
    TREE_PRELUDE
    + r"""
import json, sys, time, resource
def cpu():  # this process and its children that have ended (a build's worker processes)
    r, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime + c.ru_utime + c.ru_stime
t0, c0 = time.perf_counter(), cpu()
import gymnasium as gym
import agentenv
assert sys.argv[2] in agentenv.__file__, agentenv.__file__
t1, c1 = time.perf_counter(), cpu()
if sys.argv[1] in gym.registry:
    env = gym.make(sys.argv[1])
else:  # a dialogue id
    from agentenv import multiagent
    env = multiagent.make(sys.argv[1])
t2, c2 = time.perf_counter(), cpu()
env.reset(seed=0)
t3, c3 = time.perf_counter(), cpu()
print("RESULT " + json.dumps({"import_s": t1 - t0, "import_cpu": c1 - c0, "make_s": t2 - t1,
                              "make_cpu": c2 - c1, "reset_s": t3 - t2, "reset_cpu": c3 - c2}))
"""
)

IMPORT_CODE = r"""
import json, time, resource
t0 = time.perf_counter()
import agentenv
t1 = time.perf_counter()
r = resource.getrusage(resource.RUSAGE_SELF)
print("RESULT " + json.dumps({"import_s": t1 - t0, "process_cpu": r.ru_utime + r.ru_stime}))
"""

# Wraps the functions that do each phase of a first eval, then runs the CLI as the
# console script would. A phase's time excludes the phases nested in it.
EVAL_CODE = r"""
import importlib, json, os, sys, time, resource
def cpu():  # this process and its children that have ended (a build's worker processes)
    r, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime + c.ru_utime + c.ru_stime
started = time.time()
c_start = cpu()
import gymnasium, agentenv, agentenv.cli.main
imported, c_imported = time.time(), cpu()
PHASES = [
    ("media catalog (corpus)", "agentenv.corpora.media.catalog", "load_catalog"),
    ("HPO knowledge base (corpus)", "agentenv.corpora.hpo.knowledge_base", "load_hpo_kb"),
    ("search index (build or load)", "agentenv.retrieval.cache", "cached_index"),
    ("question generation", "agentenv.envs.media_search.questions.record", "prefetch_questions"),
    ("question generation", "agentenv.envs.media_search.questions.cache", "_generate_and_cache"),
    ("env construction (rest)", "agentenv.evaluation.runner", "make_env"),
]
times = {}
stack = []
def wrap(label, func):
    def timed(*args, **kwargs):
        stack.append([0.0, 0.0])
        t, c = time.perf_counter(), cpu()
        try:
            return func(*args, **kwargs)
        finally:
            wall, used = time.perf_counter() - t, cpu() - c
            nested = stack.pop()
            total = times.setdefault(label, [0.0, 0.0])
            total[0] += wall - nested[0]
            total[1] += used - nested[1]
            if stack:
                stack[-1][0] += wall
                stack[-1][1] += used
    return timed
missing = []
for label, module, name in PHASES:
    try:
        mod = importlib.import_module(module)
        setattr(mod, name, wrap(label, getattr(mod, name)))
    except (ImportError, AttributeError):
        missing.append(f"{module}.{name}")
import agentenv.evaluation.runner as runner
result_box = {}
real_run = runner.run
def run(*args, **kwargs):
    result_box.update(entered=time.time(), c_entered=cpu())
    t, c = time.perf_counter(), cpu()
    result = real_run(*args, **kwargs)
    result_box.update(run_s=time.perf_counter() - t, run_cpu=cpu() - c, build_s=result.build_s,
                      loop_s=result.loop_s, returned=time.time(), c_returned=cpu())
    return result
runner.run = run
code = agentenv.cli.main.main(sys.argv[1:])
ended, c_ended = time.time(), cpu()
print("RESULT " + json.dumps({"started": started, "imported": imported, "ended": ended, "phases": times,
                              "c_start": c_start, "c_imported": c_imported, "c_ended": c_ended,
                              "run": result_box, "code": code, "missing": missing}))
"""


# --------------------------------------------------------------------------- helpers


def machine() -> dict[str, Any]:
    """Cores, load average at the start, Python."""
    load = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
    return {
        "cores": os.cpu_count(),
        "load_avg_1_5_15": [round(x, 2) for x in load],
        "python": platform.python_version(),
        "platform": platform.platform(terse=True),
    }


def child(
    code: str, *args: str, home: Path, cwd: Path, bytecode: Path | None = None
) -> tuple[dict[str, Any], float]:
    """Run ``code`` in a fresh interpreter with ``$AGENTENV_HOME=home``; return its RESULT and the wall time.

    ``bytecode``: a folder to keep compiled modules in (``PYTHONPYCACHEPREFIX``), so that passes after the
    first load bytecode as an installed package does, even where ``PYTHONDONTWRITEBYTECODE`` is set.
    """
    env = dict(os.environ, AGENTENV_HOME=str(home))
    if bytecode is not None:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(bytecode)
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", code, *args], cwd=cwd, env=env, capture_output=True, text=True
    )
    wall = time.perf_counter() - start
    lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    if proc.returncode != 0 or not lines:
        raise RuntimeError(
            f"child failed ({proc.returncode}):\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}"
        )
    return json.loads(lines[-1][len("RESULT ") :]), wall


def stats(values: list[float]) -> dict[str, float]:
    return {
        "median": statistics.median(values),
        "min": min(values),
        "max": max(values),
        "passes": len(values),
    }


def cell(figure: dict[str, float], digits: int = 2) -> str:
    return (
        f"{figure['median']:.{digits}f} ({figure['min']:.{digits}f}–{figure['max']:.{digits}f}, "
        f"n={int(figure['passes'])})"
    )


# --------------------------------------------------------------------------- measures


def cold_and_warm(
    env_id: str,
    cold_passes: int,
    warm_passes: int,
    scratch: Path,
    baseline: Path | None = None,
    warm_home: Path | None = None,
) -> dict[str, Any]:
    """Cold passes, each in a fresh home; then warm passes over the last cold pass's home.

    With ``baseline``, each warm pass also makes the id from that checkout (alternating which goes first).
    ``warm_home``: an existing home for the warm passes (left in place), instead of the cold passes' one.
    """
    cold: list[dict[str, Any]] = []
    home = scratch / f"home-{env_id}"
    bytecode = scratch / "bytecode"
    trees = {"": ""} if baseline is None else {"": "", "baseline": str(baseline)}
    for _ in range(cold_passes):
        shutil.rmtree(home, ignore_errors=True)
        cold.append(child(MAKE_CODE, env_id, "", home=home, cwd=scratch)[0])
    if warm_home is not None:
        shutil.rmtree(home, ignore_errors=True)
        home = warm_home
    for tree in (
        trees.values()
    ):  # builds what is missing (each tree its own cache files), compiles, warms the page cache
        child(MAKE_CODE, env_id, tree, home=home, cwd=scratch, bytecode=bytecode)
        child(MAKE_CODE, env_id, tree, home=home, cwd=scratch, bytecode=bytecode)
    warm: dict[str, list[dict[str, Any]]] = {name: [] for name in trees}
    for i in range(warm_passes):
        for name in list(trees) if i % 2 == 0 else list(reversed(trees)):
            warm[name].append(
                child(MAKE_CODE, env_id, trees[name], home=home, cwd=scratch, bytecode=bytecode)[0]
            )
    if warm_home is None:
        shutil.rmtree(home, ignore_errors=True)
    out: dict[str, Any] = {}
    if cold:
        out.update(
            {
                "cold_make_s": stats([r["make_s"] for r in cold]),
                "cold_make_cpu": stats([r["make_cpu"] for r in cold]),
                "cold_reset_s": stats([r["reset_s"] for r in cold]),
            }
        )
    for name, runs in warm.items():
        prefix = f"{name}_" if name else ""
        out.update(
            {
                f"{prefix}warm_make_s": stats([r["make_s"] for r in runs]),
                f"{prefix}warm_make_cpu": stats([r["make_cpu"] for r in runs]),
                f"{prefix}warm_reset_s": stats([r["reset_s"] for r in runs]),
                f"{prefix}import_s": stats([r["import_s"] for r in runs]),
            }
        )
    return out


def import_costs(passes: int, scratch: Path) -> dict[str, Any]:
    """``import agentenv`` in fresh processes; that it builds nothing; the top ``-X importtime`` costs."""
    home = scratch / "import-home-never-created"
    child(IMPORT_CODE, home=home, cwd=scratch)  # warm-up
    runs = [child(IMPORT_CODE, home=home, cwd=scratch) for _ in range(passes)]
    env = dict(os.environ, AGENTENV_HOME=str(home))
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import agentenv"],
        cwd=scratch,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    rows = []  # (self µs, cumulative µs, depth, name); depth 0 is a top-level import
    for line in proc.stderr.splitlines():
        parts = line.removeprefix("import time:").split("|")
        if len(parts) == 3 and parts[0].strip().isdigit():
            name = parts[2].rstrip()
            depth = (len(name) - len(name.lstrip()) - 1) // 2
            rows.append((int(parts[0]), int(parts[1]), depth, name.strip()))
    # -X importtime lists a module after what it imports: agentenv's subtree is the run of deeper rows before it.
    at = next((i for i, r in enumerate(rows) if r[2] == 0 and r[3] == "agentenv"), None)
    subtree: list[tuple[int, int, int, str]] = []
    for r in reversed(rows[:at] if at is not None else []):
        if r[2] == 0:
            break
        subtree.append(r)
    total = rows[at][1] if at is not None else 0
    children = sorted(
        (r for r in subtree if r[2] == 1), key=lambda r: -r[1]
    )  # what `import agentenv` imports
    own = sorted((r for r in rows if r[3].startswith("agentenv")), key=lambda r: -r[0])
    return {
        "import_s": stats([r[0]["import_s"] for r in runs]),
        "process_wall_s": stats([r[1] for r in runs]),
        "builds_nothing": not home.exists(),
        "importtime_total_ms": total / 1000,
        "imported_by_agentenv_ms": [(name, cum / 1000) for _, cum, _, name in children[:8]],
        "agentenv_modules_self_ms": [(name, own_us / 1000) for own_us, _, _, name in own[:6]],
    }


def first_eval(episodes: int, scratch: Path) -> dict[str, Any]:
    """The breakdown of a first ``agentenv eval MediaSearch-v0 --agent oracle`` in a fresh home."""
    home, cwd = scratch / "eval-home", scratch / "eval-cwd"
    cwd.mkdir()
    parent_start = time.time()
    result, wall = child(EVAL_CODE, *EVAL_ARGS, "--episodes", str(episodes), home=home, cwd=cwd)
    phases: dict[str, tuple[float, float]] = {
        "interpreter start": (result["started"] - parent_start, float("nan")),
        "imports (gymnasium, agentenv, cli)": (
            result["imported"] - result["started"],
            result["c_imported"] - result["c_start"],
        ),
    }
    for label, (p_wall, p_cpu) in result["phases"].items():
        phases[label] = (p_wall, p_cpu)
    run = result["run"]
    nested = sum(w for w, _ in result["phases"].values())
    nested_cpu = sum(c for _, c in result["phases"].values())
    phases["episodes (incl. first reset)"] = (run["run_s"] - nested, run["run_cpu"] - nested_cpu)
    phases["summary + writing outputs"] = (
        result["ended"] - run["returned"],
        result["c_ended"] - run["c_returned"],
    )
    phases["CLI checks before the run"] = (
        run["entered"] - result["imported"],
        run["c_entered"] - result["c_imported"],
    )
    phases["process exit (freeing the heap)"] = (
        parent_start + wall - result["ended"],
        float("nan"),
    )
    shutil.rmtree(home, ignore_errors=True)
    return {
        "total_s": wall,
        "phases": phases,
        "runner_build_s": run["build_s"],
        "runner_loop_s": run["loop_s"],
        "unwrapped": result["missing"],
    }


def make_table(
    ids: list[str],
    cold_passes: int,
    warm_passes: int,
    scratch: Path,
    baseline: Path | None = None,
    warm_home: Path | None = None,
) -> dict[str, Any]:
    print(
        f"\n## gym.make: cold (fresh $AGENTENV_HOME, {cold_passes} passes) and warm "
        f"(cache built, warm-up + {warm_passes} passes); seconds, median (min–max)"
    )
    head = (
        f"{'id':36} {'cold wall':>24} {'cold cpu':>24} {'÷ 8 s':>6} "
        if cold_passes
        else f"{'id':36} "
    )
    head += f"{'warm wall':>24} {'warm cpu':>24} {'÷ 0.3 s':>7}"
    if baseline is not None:
        head += (
            f" {'baseline warm wall':>24} {'baseline warm cpu':>24} {'÷ 0.3 s':>7} {'new/base':>8}"
        )
    print(head)
    figures = {}
    for env_id in ids:
        fig = figures[env_id] = cold_and_warm(
            env_id, cold_passes, warm_passes, scratch, baseline, warm_home
        )
        row = f"{env_id:36} "
        if cold_passes:
            row += (
                f"{cell(fig['cold_make_s']):>24} {cell(fig['cold_make_cpu']):>24} "
                f"{fig['cold_make_s']['median'] / COLD_BUDGET_S:6.2f} "
            )
        row += (
            f"{cell(fig['warm_make_s'], 3):>24} {cell(fig['warm_make_cpu'], 3):>24} "
            f"{fig['warm_make_s']['median'] / WARM_BUDGET_S:7.2f}"
        )
        if baseline is not None:
            row += (
                f" {cell(fig['baseline_warm_make_s'], 3):>24} {cell(fig['baseline_warm_make_cpu'], 3):>24} "
                f"{fig['baseline_warm_make_s']['median'] / WARM_BUDGET_S:7.2f} "
                f"{fig['warm_make_s']['median'] / fig['baseline_warm_make_s']['median']:8.2f}"
            )
        print(row, flush=True)
    if cold_passes:
        print(
            "(first reset after a cold make, median s: "
            + ", ".join(f"{i} {figures[i]['cold_reset_s']['median']:.3f}" for i in ids)
            + ")"
        )
    print(f"(load average at the end: {[round(x, 2) for x in os.getloadavg()]})")
    return figures


def import_section(passes: int, scratch: Path) -> dict[str, Any]:
    imp = import_costs(passes, scratch)
    print(f"\n## import agentenv (fresh process, warm-up + {passes} passes)")
    print(
        f"import agentenv: {cell(imp['import_s'], 3)} s; whole process: {cell(imp['process_wall_s'], 3)} s; "
        f"builds nothing: {imp['builds_nothing']}"
    )
    print(
        f"-X importtime (one run): agentenv {imp['importtime_total_ms']:.0f} ms in all; what it imports "
        "(cumulative ms): "
        + ", ".join(f"{name} {ms:.0f}" for name, ms in imp["imported_by_agentenv_ms"])
    )
    print(
        "agentenv's own modules (self ms): "
        + ", ".join(f"{n} {ms:.1f}" for n, ms in imp["agentenv_modules_self_ms"])
    )
    return imp


def first_steps_section(ids: list[str], passes: int, scratch: Path) -> dict[str, Any]:
    """make + reset + each tool's first call + the first answer, warm home (details: benchmarks/first_steps.py)."""
    from first_steps import CALLS, one_pass  # this folder is on sys.path when the script runs

    chosen = [i for i in ids if i in CALLS]
    if not chosen:
        return {}
    print(
        f"\n## first steps, warm home (warm-up + {passes} passes): make + reset + the first call of every "
        "tool + the first answer; ms, median (min–max)"
    )
    out: dict[str, Any] = {}
    for env_id in chosen:
        home = scratch / f"home-first-{env_id}"
        one_pass(env_id, str(home))  # builds the caches
        runs = [one_pass(env_id, str(home)) for _ in range(passes)]
        total = [sum(v[0] for k, v in r.items() if not k.startswith("again ")) * 1e3 for r in runs]
        worst = [max(v[0] for k, v in r.items() if k.startswith("first ")) * 1e3 for r in runs]
        out[env_id] = {"total_ms": stats(total), "worst_first_step_ms": stats(worst)}
        print(
            f"{env_id:36} make+reset+first steps+answer {cell(out[env_id]['total_ms'], 0)}; worst first step "
            f"{cell(out[env_id]['worst_first_step_ms'], 1)}",
            flush=True,
        )
        shutil.rmtree(home, ignore_errors=True)
    return out


def eval_section(episodes: int, scratch: Path) -> dict[str, Any]:
    ev = first_eval(episodes, scratch)
    print(
        f"\n## first eval, fresh home: agentenv eval MediaSearch-v0 --agent oracle "
        f"--episodes {episodes}: {ev['total_s']:.2f} s wall"
    )
    print(f"{'phase':40} {'wall s':>8} {'cpu s':>8} {'share':>6}")
    for label, (wall, used) in ev["phases"].items():
        print(f"{label:40} {wall:8.2f} {used:8.2f} {wall / ev['total_s']:6.1%}")
    print(
        f"(the runner's own figures: build_s {ev['runner_build_s']:.2f}, loop_s {ev['runner_loop_s']:.2f}"
        + (f"; not found, so not split out: {ev['unwrapped']}" if ev["unwrapped"] else "")
        + ")"
    )
    print(
        "(CPU includes worker processes once they have ended; workers started during one phase and "
        "collected in a later one count in the later one)"
    )
    return ev


# --------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--ids", nargs="*", help="env ids (default: every registered single-agent id)"
    )
    parser.add_argument("--cold-passes", type=int, default=3)
    parser.add_argument("--warm-passes", type=int, default=5)
    parser.add_argument("--eval-episodes", type=int, default=200)
    parser.add_argument("--no-eval", action="store_true", help="skip the first-eval breakdown")
    parser.add_argument("--eval-only", action="store_true", help="only the first-eval breakdown")
    parser.add_argument(
        "--warm-only",
        action="store_true",
        help="only the warm gym.make table (no cold passes, import, first steps or eval)",
    )
    parser.add_argument(
        "--baseline", type=Path, help="an older checkout whose warm make is timed alongside"
    )
    parser.add_argument(
        "--home",
        type=Path,
        help="warm passes over this existing $AGENTENV_HOME (used, never deleted) instead of a "
        "scratch one built by a cold make",
    )
    parser.add_argument("--json", type=Path, help="also write every figure here")
    args = parser.parse_args(argv)
    if args.cold_passes < 0 or args.warm_passes < 1:
        parser.error("--cold-passes must be at least 0 and --warm-passes at least 1")
    if args.baseline is not None and not (args.baseline / "agentenv" / "__init__.py").is_file():
        parser.error(
            f"--baseline: {args.baseline} holds no agentenv/__init__.py; give the root of a checkout"
        )
    if args.warm_only:
        args.cold_passes, args.no_eval = 0, True

    record: dict[str, Any] = {"machine": machine()}
    m = record["machine"]
    print("# agentenv start-up: cold build, warm gym.make, import, first eval")
    print(
        f"# machine: {m['cores']} cores, load average {m['load_avg_1_5_15']} at start, "
        f"Python {m['python']} on {m['platform']}"
    )
    ids = [] if args.eval_only else args.ids
    if not ids and not args.eval_only:
        probe = subprocess.run(
            [
                sys.executable,
                "-c",
                "import agentenv, agentenv.multiagent as m; "
                "print(*agentenv.env_ids(), *m.env_ids())",
            ],
            capture_output=True,
            text=True,
            check=True,
            cwd=tempfile.gettempdir(),
        )
        ids = probe.stdout.split()
    scratch = Path(tempfile.mkdtemp(prefix="agentenv-startup-"))
    try:
        if ids:
            record["envs"] = make_table(
                ids, args.cold_passes, args.warm_passes, scratch, args.baseline, args.home
            )
        if not args.eval_only and not args.warm_only:
            record["import"] = import_section(args.warm_passes, scratch)
            record["first_steps"] = first_steps_section(ids, args.warm_passes, scratch)
        if not args.no_eval:
            record["first_eval"] = eval_section(args.eval_episodes, scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if args.json:
        args.json.write_text(json.dumps(record, indent=1, default=str) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
