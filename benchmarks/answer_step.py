"""The MediaSearch answer step, this checkout beside older revisions, passes interleaved in one run.

    python benchmarks/answer_step.py [--against REV ...] [--passes 9] [--tasks 200] [--json out.json]

Not a test; it prints one table. The **answer step** is ``env.step("<answer>…</answer>")``
right after ``reset`` (untimed), on ``MediaSearch-v0``'s test split: the first ``--tasks``
tasks, each answered with its gold as written in the task (``gold["answer"]``: a title, a
name, a number), so every side reads the same kind of answer; a pass is one step per task,
and its figure is the median µs over those steps. Also timed, in the same passes: the
answer step with the gold written in markdown (``**gold**.``), which takes the decoration
path of the grammar; and the gold as item N of a list, N the pass's number (``7. gold``), a
text no earlier pass sent: the grader reads it afresh (its memory of answers is keyed by the
text), though the name's spelling was seen before.

Each side is one worker process (``--worker``) that makes the env once, warms up, and then
runs a pass whenever the parent asks: the parent asks each side in turn (the order rotating
every round), so load that comes and goes on a shared machine falls on every side alike.
The figure per side is the median over ``--passes`` rounds, with the spread.

A side ``REV`` (any git revision) is exported and installed in a venv of its own by
:func:`before_after.prepare_before` (only agentenv differs); its ``$AGENTENV_HOME`` starts as a
copy of this one's (the same corpora; an older revision rebuilds what its format lacks).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from _bench_common import print_machine, spread_text  # noqa: E402

FORMS = ("gold as written", "**gold**.", "new text each pass")


def worker(tasks: int) -> None:
    """Serve passes over stdin: each line ``pass`` answers with one JSON line of figures."""
    import gymnasium as gym

    import agentenv  # noqa: F401  (registers the ids)

    env = gym.make("MediaSearch-v0", split="test")
    found = env.unwrapped.tasks
    golds = [str(found[i].gold["answer"]) for i in range(min(tasks, len(found)))]
    actions = {
        FORMS[0]: [f"<answer>{g}</answer>" for g in golds],
        FORMS[1]: [f"<answer>**{g}**.</answer>" for g in golds],
    }

    passes = 0

    def one_pass() -> dict[str, float]:
        nonlocal passes
        passes += 1
        clock = time.perf_counter_ns
        figures = {}
        actions[FORMS[2]] = [f"<answer>{passes}. {g}</answer>" for g in golds]
        for form, texts in actions.items():
            samples = []
            for index, text in enumerate(texts):
                env.reset(seed=0, options={"index": index})
                start = clock()
                env.step(text)
                samples.append(clock() - start)
            figures[form] = statistics.median(samples) / 1000.0
        return figures

    for _ in range(3):
        one_pass()
    print(json.dumps({"ready": len(golds)}), flush=True)
    for line in sys.stdin:
        if line.strip() != "pass":
            break
        print(json.dumps(one_pass()), flush=True)


class Side:
    """One worker process: this checkout or a prepared revision."""

    def __init__(self, name: str, python: str, home: str | None, tasks: int) -> None:
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        if home is not None:
            env["AGENTENV_HOME"] = home
        self.name = name
        self.proc = subprocess.Popen(
            [python, str(BENCH / "answer_step.py"), "--worker", "--tasks", str(tasks)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
            cwd=str(BENCH),
        )
        self.ready = self._read()

    def _read(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise SystemExit(f"{self.name}: the worker exited (rc {self.proc.wait()})")
        return json.loads(line)

    def run_pass(self) -> dict[str, float]:
        assert self.proc.stdin is not None
        self.proc.stdin.write("pass\n")
        self.proc.stdin.flush()
        return self._read()

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait(timeout=60)


def revision_side(rev: str, tasks: int) -> tuple[str, str, str]:
    """``(label, python, home)`` of a prepared revision (see :mod:`before_after`)."""
    from before_after import prepare_before

    commit = subprocess.run(
        ["git", "-C", str(BENCH.parent), "rev-parse", "--short", f"{rev}^{{commit}}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    work = Path(tempfile.gettempdir()) / f"agentenv-answer-step-{commit}"
    _, python, home = prepare_before(rev, work)
    if not home.exists():
        source = os.environ.get("AGENTENV_HOME")
        if source and Path(source).is_dir():
            shutil.copytree(source, home)
    return f"{rev} ({commit})", str(python), str(home)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", nargs="*", default=[], help="git revisions to run beside")
    parser.add_argument("--passes", type=int, default=9)
    parser.add_argument("--tasks", type=int, default=200)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.tasks)
        return
    record = print_machine("MediaSearch answer step, µs (median over interleaved passes)")
    specs = [("this checkout", sys.executable, os.environ.get("AGENTENV_HOME"))]
    specs += [revision_side(rev, args.tasks) for rev in args.against]
    sides = [Side(name, python, home, args.tasks) for name, python, home in specs]
    samples: dict[str, dict[str, list[float]]] = {s.name: {f: [] for f in FORMS} for s in sides}
    try:
        for n in range(args.passes):
            order = sides[n % len(sides) :] + sides[: n % len(sides)]
            for side in order:
                for form, value in side.run_pass().items():
                    samples[side.name][form].append(value)
    finally:
        for side in sides:
            side.close()
    figures = {
        name: {
            form: {
                "median": statistics.median(values),
                "min": min(values),
                "max": max(values),
                "passes": len(values),
            }
            for form, values in by_form.items()
        }
        for name, by_form in samples.items()
    }
    print(f"\n{'side':<24} " + " ".join(f"{f:>30}" for f in FORMS))
    for name, by_form in figures.items():
        print(f"{name:<24} " + " ".join(f"{spread_text(by_form[f]):>30}" for f in FORMS))
    print(f"\n{args.tasks} tasks per pass, {args.passes} passes per side")
    if args.json:
        args.json.write_text(
            json.dumps({"machine": record, "answer_step_us": figures}, indent=2) + "\n",
            encoding="utf-8",
        )


if __name__ == "__main__":
    main()
