"""Before/after for every performance budget, in one run: this checkout against an older revision.

    python benchmarks/before_after.py --before REV [--rounds 5] [--work DIR] [--skip startup,server]
                                      [--json out.json]

Not a test: it prints one table (measure, before, after, gain, budget, met;
gain = how many times better after is) and the
figures behind it. Each row comes from one run of this script, so both sides met the same
machine in the same minutes; on a shared machine compare the ratios, not a figure with
another day's.

``REV`` (any git revision of this repository) is exported with ``git archive`` into
``WORK/tree`` and installed without dependencies, in editable mode, into ``WORK/venv``: a
venv that sees this interpreter's site-packages (the same numpy, gymnasium, uvicorn and
tokenizers), so that only agentenv differs. It gets its own ``$AGENTENV_HOME``
(``WORK/home``), because cache formats change between revisions; this checkout keeps the
caller's. ``WORK`` defaults to a folder under the system temp dir named after the
revision, reused when it already holds that revision.

What runs, with the same benchmark scripts on both sides:

* ``env_speed.py`` ``--rounds`` times per side, alternating (before, after; after, before;
  ...), one pass each: constant-tool step and its ratio to the bare Gymnasium floor
  measured in the same process, answer step beyond grading, step time at turns 1 and 64
  (``ToolEnv``, ``TokenEnv`` over it), two-turn MediaSearch episodes/s, peak memory of a
  fresh process with every env loaded. Each figure is the median over rounds;
* ``search_step.py --baseline``: the revision's MediaSearch tools and BM25 swapped into
  this checkout's env in one process, calls interleaved (the gain); then ``search_step.py``
  alone (the budget's figure: no second set of tools sharing the process's caches);
* ``startup.py --no-eval`` once per side: cold ``gym.make`` (fresh home), warm
  ``gym.make``, ``import agentenv``; and the wall time of the README's first job
  (``agentenv eval MediaSearch-v0 --agent oracle --episodes 200`` in a fresh home);
* ``retrieval_server.py --against``: both servers, passes interleaved.

Where a revision lacks something a script needs, that row says so instead of a figure.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
SECTIONS = ("env_speed", "search_step", "startup", "server")


def prepare_before(rev: str, work: Path) -> tuple[Path, Path, Path]:
    """Export ``rev`` to ``work/tree``, install it into ``work/venv``; return (tree, python, home)."""
    commit = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "--verify", f"{rev}^{{commit}}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    tree, venv, home = work / "tree", work / "venv", work / "home"
    python = venv / "bin" / "python"
    stamp = work / "commit"
    if stamp.is_file() and stamp.read_text().strip() == commit and python.is_file():
        return tree, python, home
    shutil.rmtree(work, ignore_errors=True)
    tree.mkdir(parents=True)
    archive = subprocess.Popen(["git", "-C", str(REPO), "archive", commit], stdout=subprocess.PIPE)
    subprocess.run(["tar", "-x", "-C", str(tree)], stdin=archive.stdout, check=True)
    if archive.wait() != 0:
        raise SystemExit(f"git archive {commit} failed")
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    site = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    # The revision sees this interpreter's packages: only agentenv differs between the sides.
    (site / "this_checkout_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--no-deps", "-e", str(tree)], check=True
    )
    stamp.write_text(commit + "\n")
    return tree, python, home


def run_json(
    python: Path | str, script: str, args: list[str], home: Path | None
) -> dict[str, Any] | str:
    """Run a benchmark script under ``python``; its ``--json`` figures, or why there are none."""
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "figures.json"
        env = dict(os.environ)
        if home is not None:
            env["AGENTENV_HOME"] = str(home)
        done = subprocess.run(
            [str(python), str(BENCH / script), *args, "--json", str(out)],
            capture_output=True,
            text=True,
            env=env,
            cwd=str(BENCH),
        )
        if done.returncode != 0 or not out.is_file():
            last = (done.stderr.strip().splitlines() or ["no output"])[-1]
            return f"unavailable: {script} failed ({last[:160]})"
        return json.loads(out.read_text(encoding="utf-8"))


def env_speed_rows(
    sides: dict[str, tuple[Path | str, Path | None]], rounds: int
) -> dict[str, dict[str, Any]]:
    """``env_speed.py`` alternately under each side, one pass per run; figures per side per round."""
    picks: dict[str, Callable[[dict[str, Any]], float]] = {
        "constant-tool step, µs": lambda f: f["tool_step_us"]["agentenv ToolEnv"]["median"],
        "bare gymnasium.Env floor, µs (same process)": lambda f: f["tool_step_us"][
            "bare gymnasium.Env floor"
        ]["median"],
        "constant-tool step / floor": lambda f: f["tool_step_ratio_to_floor"],
        "answer step beyond grading, µs": lambda f: f["answer_step_beyond_grading_us"],
        "ToolEnv step at turn 64 / turn 1": lambda f: _turn_ratio(f, "ToolEnv"),
        "TokenEnv step at turn 64 / turn 1": lambda f: _turn_ratio(f, "TokenEnv(ToolEnv)"),
        "two-turn MediaSearch episodes/s": lambda f: f["episodes_per_s"][
            "two-turn MediaSearch (search, answer)"
        ]["median"],
        "peak RSS, every env loaded, MB": lambda f: f["peak_rss_mb_all_envs"],
    }
    values: dict[str, dict[str, list[float]]] = {
        name: {side: [] for side in sides} for name in picks
    }
    notes: dict[str, str] = {}
    names = list(sides)
    for n in range(rounds):
        for side in names if n % 2 == 0 else names[::-1]:
            python, home = sides[side]
            figures = run_json(python, "env_speed.py", ["--passes", "1"], home)
            print(
                f"  env_speed round {n + 1}/{rounds}, {side}: "
                + ("done" if isinstance(figures, dict) else figures),
                flush=True,
            )
            if isinstance(figures, str):
                notes[side] = figures
                continue
            for name, pick in picks.items():
                try:
                    values[name][side].append(float(pick(figures)))
                except (KeyError, TypeError, ZeroDivisionError):
                    pass
    return {
        name: {
            side: (statistics.median(v) if v else notes.get(side, "not measured"))
            for side, v in by_side.items()
        }
        for name, by_side in values.items()
    }


def _turn_ratio(figures: dict[str, Any], name: str) -> float:
    by_turn = {int(turn): value for turn, value in figures["step_us_by_turn"][name].items()}
    return by_turn[64] / by_turn[1]


def search_rows(tree: Path) -> dict[str, dict[str, Any]]:
    """``search_step.py --baseline`` with the revision's tool and BM25 files (both sides in one
    process, calls interleaved: the gain), then ``search_step.py`` alone (the budget's figure).

    Why two runs: with the revision's tools swapped in and out of the same env call by call,
    every step meets caches the other side's code just used, which adds some 3 µs to a
    ``get_title`` step on either side. That is fair between the sides, but it is not the
    step a user's process runs.
    """
    files = {
        "tools.py": tree / "envs" / "media_search" / "tools.py",
        "bm25.py": tree / "agentenv" / "retrieval" / "bm25.py",
    }
    missing = [str(p) for p in files.values() if not p.is_file()]
    rows: dict[str, dict[str, Any]] = {}
    if missing:
        rows["MediaSearch search step, µs, both in one process"] = {
            "before": f"unavailable: no {missing[0]}"
        }
    else:
        with tempfile.TemporaryDirectory() as scratch:
            for name, path in files.items():
                shutil.copy(path, Path(scratch) / name)
            figures = run_json(sys.executable, "search_step.py", ["--baseline", scratch], None)
        for tool in ("search", "get_title"):
            rows[f"MediaSearch {tool} step, µs, both in one process"] = (
                {"before": figures, "after": figures}
                if isinstance(figures, str)
                else {
                    "before": figures["rows"][f"baseline step: {tool}"]["median_us"],
                    "after": figures["rows"][f"step: {tool}"]["median_us"],
                }
            )
    alone = run_json(sys.executable, "search_step.py", [], None)
    for tool in ("search", "get_title"):
        rows[f"MediaSearch {tool} step, µs, this checkout alone"] = {
            "after": alone
            if isinstance(alone, str)
            else alone["rows"][f"step: {tool}"]["median_us"]
        }
    return rows


def startup_rows(sides: dict[str, tuple[Path | str, Path | None]]) -> dict[str, dict[str, Any]]:
    """``startup.py --no-eval`` once per side, then the README's first job in a fresh home."""
    rows: dict[str, dict[str, Any]] = {}
    for side, (python, home) in sides.items():
        print(f"  startup, {side} ...", flush=True)
        figures = run_json(
            python, "startup.py", ["--no-eval", "--cold-passes", "3", "--warm-passes", "5"], home
        )
        for env_id in ("MediaSearch-v0", "RareDiseaseDiagnosis-v0"):
            for kind in ("cold", "warm"):
                row = rows.setdefault(f"{kind} gym.make {env_id}, s", {})
                row[side] = _median(figures, "envs", env_id, f"{kind}_make_s")
        rows.setdefault("import agentenv, s", {})[side] = _median(figures, "import", "import_s")
        rows.setdefault("first job (oracle eval, 200 episodes, fresh home), s", {})[side] = (
            first_job_seconds(python)
        )
    return rows


def _median(figures: dict[str, Any] | str, *keys: str) -> float | str:
    """``figures[k1][k2]...["median"]``, or why it is not there."""
    if isinstance(figures, str):
        return figures
    try:
        for key in keys:
            figures = figures[key]
        return float(figures["median"])
    except (KeyError, TypeError):
        return f"not in the figures: {'/'.join(keys)}"


def first_job_seconds(python: Path | str) -> float | str:
    """Wall seconds of ``agentenv eval MediaSearch-v0 --agent oracle --episodes 200`` in a fresh home."""
    agentenv_cli = Path(python).parent / "agentenv"
    with tempfile.TemporaryDirectory() as scratch:
        env = {**os.environ, "AGENTENV_HOME": str(Path(scratch) / "home")}
        started = time.perf_counter()
        done = subprocess.run(
            [
                str(agentenv_cli),
                "eval",
                "MediaSearch-v0",
                "--agent",
                "oracle",
                "--episodes",
                "200",
                "--out",
                str(Path(scratch) / "out"),
            ],
            capture_output=True,
            text=True,
            env=env,
            cwd=scratch,
        )
        wall = time.perf_counter() - started
    if done.returncode != 0:
        return f"unavailable: eval failed ({(done.stderr.strip().splitlines() or ['?'])[-1][:160]})"
    return wall


def server_rows(tree: Path, before_python: Path) -> dict[str, dict[str, Any]]:
    """``retrieval_server.py --against`` the revision's server, passes interleaved."""
    figures = run_json(
        sys.executable,
        "retrieval_server.py",
        ["--against", str(tree), "--against_python", str(before_python)],
        None,
    )
    if isinstance(figures, str):
        return {"retrieval server, queries/s": {"before": figures, "after": figures}}
    after = figures["this checkout"]
    before = next(v for k, v in figures.items() if k != "this checkout")
    return {
        "retrieval server, queries/s": {
            "before": before["queries_per_s"],
            "after": after["queries_per_s"],
        },
        "retrieval server, p99 ms": {"before": before["p99_ms"], "after": after["p99_ms"]},
        "retrieval server, failures": {"before": before["failures"], "after": after["failures"]},
    }


FLAT_RATIO = 1.2
"""Turn 64 may cost at most this many times turn 1 for the step to count as flat."""


def budgets() -> dict[str, tuple[str, float]]:
    """Each budgeted row's comparison ("≤" or "≥") and limit, taken from the benchmark that owns it."""
    from env_speed import ANSWER_BUDGET_US, EPISODES_BUDGET, FLOOR_RATIO_BUDGET, MEMORY_BUDGET_MB
    from retrieval_server import BUDGET_P99_MS, BUDGET_QPS
    from search_step import GET_TITLE_BUDGET_US, SEARCH_BUDGET_US
    from startup import COLD_BUDGET_S, WARM_BUDGET_S

    rows = {
        "constant-tool step / floor": ("≤", FLOOR_RATIO_BUDGET),
        "answer step beyond grading, µs": ("≤", ANSWER_BUDGET_US),
        "ToolEnv step at turn 64 / turn 1": ("≤", FLAT_RATIO),
        "TokenEnv step at turn 64 / turn 1": ("≤", FLAT_RATIO),
        "two-turn MediaSearch episodes/s": ("≥", EPISODES_BUDGET),
        "peak RSS, every env loaded, MB": ("≤", MEMORY_BUDGET_MB),
        "MediaSearch search step, µs, this checkout alone": ("≤", SEARCH_BUDGET_US),
        "MediaSearch get_title step, µs, this checkout alone": ("≤", GET_TITLE_BUDGET_US),
        "retrieval server, queries/s": ("≥", BUDGET_QPS),
        "retrieval server, p99 ms": ("≤", BUDGET_P99_MS),
        "retrieval server, failures": ("≤", 0.0),
    }
    for env_id in ("MediaSearch-v0", "RareDiseaseDiagnosis-v0"):
        rows[f"cold gym.make {env_id}, s"] = ("≤", COLD_BUDGET_S)
        rows[f"warm gym.make {env_id}, s"] = ("≤", WARM_BUDGET_S)
    return rows


def print_table(rows: dict[str, dict[str, Any]]) -> None:
    """One line per measure; "gain" is how many times better after is (>1: improved, <1: worse)."""
    limits = budgets()
    print(
        f"\n{'measure':54} {'before':>10} {'after':>10} {'gain':>7}  {'budget':10} after meets it"
    )
    for name, row in rows.items():
        before, after = row.get("before"), row.get("after")
        op, limit = limits.get(name, ("", 0.0))
        more_is_better = op == "≥"  # where a budget says "at least", a gain is more; elsewhere less
        ratio = ""
        if all(isinstance(v, float | int) for v in (before, after)) and before and after:
            ratio = f"{(after / before if more_is_better else before / after):.2f}x"
        meets = ""
        if op and isinstance(after, float | int):
            meets = "yes" if (after >= limit if more_is_better else after <= limit) else "NO"
        budget = f"{op} {limit:,g}" if op else ""
        print(f"{name:54} {_cell(before):>10} {_cell(after):>10} {ratio:>7}  {budget:10} {meets}")
        for side in ("before", "after"):
            if isinstance(row.get(side), str):
                print(f"    {side}: {row[side]}")


def _cell(value: Any) -> str:
    if isinstance(value, float | int):
        return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.3g}"
    return "-"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--before", required=True, help="git revision to compare against (e.g. a release tag)"
    )
    parser.add_argument(
        "--rounds", type=int, default=5, help="env_speed runs per side, alternating (default 5)"
    )
    parser.add_argument("--work", type=Path, help="where the revision's tree, venv and home go")
    parser.add_argument(
        "--skip", default="", help=f"comma-separated sections to skip: {', '.join(SECTIONS)}"
    )
    parser.add_argument("--json", type=Path, help="also write the table's figures here")
    args = parser.parse_args()
    skip = {s for s in args.skip.split(",") if s}
    if skip - set(SECTIONS):
        parser.error(
            f"--skip: unknown section(s) {sorted(skip - set(SECTIONS))}; choose from {', '.join(SECTIONS)}"
        )
    sys.path.insert(0, str(BENCH))
    from _bench_common import print_machine

    machine = print_machine(f"before/after: {args.before} against this checkout")
    work = (
        args.work
        or Path(tempfile.gettempdir()) / f"agentenv-before-{args.before.replace('/', '_')}"
    )
    tree, before_python, before_home = prepare_before(args.before, work)
    print(
        f"before: {args.before} exported to {tree}, interpreter {before_python}, home {before_home}",
        flush=True,
    )
    sides: dict[str, tuple[Path | str, Path | None]] = {
        "before": (before_python, before_home),
        "after": (sys.executable, None),
    }
    rows: dict[str, dict[str, Any]] = {}
    if "env_speed" not in skip:
        rows |= env_speed_rows(sides, args.rounds)
    if "search_step" not in skip:
        print("  search_step --baseline ...", flush=True)
        rows |= search_rows(tree)
    if "startup" not in skip:
        rows |= startup_rows(sides)
    if "server" not in skip:
        print("  retrieval_server --against ...", flush=True)
        rows |= server_rows(tree, before_python)
    print_table(rows)
    if args.json:
        args.json.write_text(
            json.dumps(
                {"machine": machine, "before": args.before, "rows": rows}, indent=1, default=str
            )
            + "\n",
            encoding="utf-8",
        )


if __name__ == "__main__":
    main()
