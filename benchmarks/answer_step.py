"""The MediaSearch answer step, this checkout beside older revisions, passes interleaved in one run.

    python benchmarks/answer_step.py [--against REV ...] [--passes 9] [--tasks 200] [--budget 20] [--json out.json]

Not a test; it prints one table and a verdict. The **answer step** is
``env.step("<answer>…</answer>")`` right after ``reset`` (untimed), on ``MediaSearch-v0``'s
test split made with ``gym.make`` (its wrappers included): the first ``--tasks`` tasks, each
answered with its gold as written in the task (``gold["answer"]``: a title, a name, a number),
so every side reads the same kind of answer; a pass is one step per task, and its figure is
the median µs over those steps. Four forms, timed in the same passes:

* **gold as written**: the same text every pass, a **repeated answer** (a policy sends the
  same answer again and again: a GRPO group, every epoch);
* ``**gold**.``: the gold in markdown, the decoration path of the grammar, repeated too;
* **new text each pass**: the gold as item N of a list, N the pass's number (``7. gold``), a
  text no earlier pass sent. This checkout reads its decoration afresh and then recalls how
  the entry inside (the gold) reads, which it remembers apart from the decoration;
* **new spelling each pass**: the gold with the case of its letters changed by the pass's
  number (``HeAt``, ``hEAt``), so that no memory of a text or of an entry holds it and the
  whole grammar runs (spelling, catalog look-ups). A gold without letters (a number) cannot
  vary and stays repeated; a gold of fewer than five letters runs out of patterns after
  2^letters passes, the others after 32.

Each side is one worker process (``--worker``) that makes the env once, warms up, and then
runs a pass whenever the parent asks: the parent asks each side in turn (the order rotating
every round), so load that comes and goes on a shared machine falls on every side alike.
The figure per side is the median over ``--passes`` rounds, with the spread.

In the same rounds this checkout's worker times the **bare floor**: :class:`BareFloorEnv`
(``benchmarks/_step_floor.py``, a plain ``gymnasium.Env`` that only reads the tag and writes
the message) behind the same wrappers ``gym.make`` adds, answered right after ``reset`` as
above; and that env's constant-tool step, the floor ``env_speed.py`` compares tool steps with.
The verdict line sets the repeated answer against ``--budget`` µs, the bare answer floor and
each ``--against`` revision.

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

FORMS = ("gold as written", "**gold**.", "new text each pass", "new spelling each pass")
FLOORS = ("bare floor: answer step", "bare floor: tool step")


def spelled(gold: str, number: int) -> str:
    """``gold`` with letter ``i`` upper-cased when bit ``i % 5`` of ``number`` is set, others lower.

    Example:
        >>> spelled("Heat", 1), spelled("Heat", 6), spelled("1995", 3)
        ('Heat', 'hEAt', '1995')
    """
    return "".join(
        ch.upper() if (number >> (i % 5)) & 1 else ch.lower() for i, ch in enumerate(gold)
    )


def worker(tasks: int, floor: bool) -> None:
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
    bare = bare_floor_env() if floor else None

    passes = 0

    def one_pass() -> dict[str, float]:
        nonlocal passes
        passes += 1
        clock = time.perf_counter_ns
        figures = {}
        actions[FORMS[2]] = [f"<answer>{passes}. {g}</answer>" for g in golds]
        actions[FORMS[3]] = [f"<answer>{spelled(g, passes)}</answer>" for g in golds]
        for form, texts in actions.items():
            samples = []
            for index, text in enumerate(texts):
                env.reset(seed=0, options={"index": index})
                start = clock()
                env.step(text)
                samples.append(clock() - start)
            figures[form] = statistics.median(samples) / 1000.0
        if bare is not None:
            figures.update(floor_pass(bare, len(golds)))
        return figures

    for _ in range(3):
        one_pass()
    print(json.dumps({"ready": len(golds)}), flush=True)
    for line in sys.stdin:
        if line.strip() != "pass":
            break
        print(json.dumps(one_pass()), flush=True)


def bare_floor_env() -> Any:
    """:class:`BareFloorEnv` behind the wrappers ``gym.make`` puts around every env (the env
    checker, then the order check), so the floor pays the layers the MediaSearch side pays."""
    from _step_floor import BareFloorEnv
    from gymnasium.wrappers import OrderEnforcing, PassiveEnvChecker

    return OrderEnforcing(PassiveEnvChecker(BareFloorEnv()))


def floor_pass(env: Any, steps: int) -> dict[str, float]:
    """The bare floor's answer step right after ``reset``, and its constant-tool step, as medians."""
    from _step_floor import ANSWER_ACTION, TOOL_ACTION

    clock = time.perf_counter_ns
    figures = {}
    for form, action in zip(FLOORS, (ANSWER_ACTION, TOOL_ACTION), strict=True):
        samples = []
        for _ in range(steps):
            env.reset(seed=0)
            start = clock()
            env.step(action)
            samples.append(clock() - start)
        figures[form] = statistics.median(samples) / 1000.0
    return figures


class Side:
    """One worker process: this checkout or a prepared revision."""

    def __init__(
        self, name: str, python: str, home: str | None, tasks: int, floor: bool = False
    ) -> None:
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        if home is not None:
            env["AGENTENV_HOME"] = home
        self.name = name
        self.proc = subprocess.Popen(
            [python, str(BENCH / "answer_step.py"), "--worker", "--tasks", str(tasks)]
            + (["--floor"] if floor else []),
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
    parser.add_argument("--budget", type=float, default=20.0, help="µs, for the verdict line")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--floor", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.tasks, args.floor)
        return
    record = print_machine("MediaSearch answer step, µs (median over interleaved passes)")
    specs = [("this checkout", sys.executable, os.environ.get("AGENTENV_HOME"))]
    specs += [revision_side(rev, args.tasks) for rev in args.against]
    sides = [
        Side(name, python, home, args.tasks, floor=i == 0)
        for i, (name, python, home) in enumerate(specs)
    ]
    samples: dict[str, dict[str, list[float]]] = {s.name: {} for s in sides}
    try:
        for n in range(args.passes):
            order = sides[n % len(sides) :] + sides[: n % len(sides)]
            for side in order:
                for form, value in side.run_pass().items():
                    samples[side.name].setdefault(form, []).append(value)
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
    floors = {f: figures["this checkout"].pop(f) for f in FLOORS}
    print(f"\n{'side':<24} " + " ".join(f"{f:>30}" for f in FORMS))
    for name, by_form in figures.items():
        print(
            f"{name:<24} "
            + " ".join(f"{spread_text(by_form[f]) if f in by_form else '-':>30}" for f in FORMS)
        )
    print()
    for form, figure in floors.items():
        print(f"{form:<40} {spread_text(figure, 2)}")
    print(f"\n{args.tasks} tasks per pass, {args.passes} passes per side")
    verdict = verdict_line(figures, floors, args.budget)
    print(verdict)
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "machine": record,
                    "answer_step_us": figures,
                    "bare_floor_us": floors,
                    "budget_us": args.budget,
                    "verdict": verdict,
                },
                indent=2,
            )
            + "\n",
            encoding="utf-8",
        )


def verdict_line(
    figures: dict[str, dict[str, dict[str, float]]],
    floors: dict[str, dict[str, float]],
    budget: float,
) -> str:
    """This checkout's repeated answer against ``budget``, the bare answer floor and every other side."""
    ours = figures["this checkout"]
    repeated, new_text = ours[FORMS[0]]["median"], ours[FORMS[2]]["median"]
    floor = floors[FLOORS[0]]["median"]
    parts = [
        f"verdict: answer step {repeated:.1f} us (repeated answer) -> "
        f"{'met' if repeated <= budget else 'NOT met'} against <= {budget:g} us; "
        f"{repeated - floor:.1f} us above the bare answer floor ({floor:.1f} us)"
    ]
    for name, theirs in figures.items():
        if name != "this checkout" and FORMS[0] in theirs:
            parts.append(
                f"x{repeated / theirs[FORMS[0]]['median']:.2f} of {name} "
                f"(new text x{new_text / theirs[FORMS[2]]['median']:.2f})"
            )
    return "; ".join(parts)


if __name__ == "__main__":
    main()
