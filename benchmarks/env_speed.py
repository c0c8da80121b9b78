"""Env step speed against a bare Gymnasium floor and TextArena, in one run (not a test; prints tables).

    python benchmarks/env_speed.py [--passes 5] [--steps 20000] [--episodes 3000] [--json out.json]

Every figure is the median over ``--passes`` interleaved passes (with the
spread), after a warm-up pass, on the machine printed first:

* **constant-tool step**: median µs of ``step`` for a tool that returns a
  constant, in :class:`ConstantToolEnv` (agentenv's ``ToolEnv``, every
  guarantee on: validation, time limit, messages, info) and in
  :class:`BareFloorEnv` (a plain ``gymnasium.Env`` doing the same parse, call
  and messages); with the ratio and the budget (≤ 8 µs or ≤ 3× the floor);
* **answer step** beyond grading: the answer step minus the family's own
  ``_grade`` time (budget ≤ 5 µs);
* **TextArena**'s step (GuessTheNumber-v0, a guess parsed from text), when
  ``textarena`` is installed beside the package; otherwise it says so;
* **step time against turn index** (1 to 64) for ``ToolEnv`` and for
  ``TokenEnv`` over it (Qwen3 template), so that growth with the conversation
  shows (the budget: flat);
* **episodes per second** on one core: a scripted two-turn MediaSearch episode
  (a real ``search`` call, then an answer), and the scripted oracle;
* **memory**: peak RSS of a fresh process with every registered env made and
  reset (the budget's figure), and this benchmark's own peak beside it.

Search and ``get_title`` steps are in ``benchmarks/search_step.py``; start-up
(cold build, warm ``gym.make``, import) in ``benchmarks/startup.py``.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _bench_common import interleaved, print_machine, spread_text  # noqa: E402
from _step_floor import ANSWER_ACTION, TOOL_ACTION, BareFloorEnv, ConstantToolEnv  # noqa: E402

TURN_MARKS = (1, 2, 4, 8, 16, 32, 64)
STEP_BUDGET_US, FLOOR_RATIO_BUDGET, ANSWER_BUDGET_US, EPISODES_BUDGET = 8.0, 3.0, 5.0, 5000.0
MEMORY_BUDGET_MB = 400.0


def tool_step_pass(env: Any, steps: int) -> Callable[[], float]:
    """A pass: ``steps`` constant-tool steps (resets untimed), returning the median µs per step."""

    def run() -> float:
        samples = []
        env.reset(seed=0)
        clock = time.perf_counter_ns
        for _ in range(steps):
            if env_turn(env) >= 6:
                env.reset(seed=0)
            start = clock()
            env.step(TOOL_ACTION)
            samples.append(clock() - start)
        return statistics.median(samples) / 1000.0

    return run


def env_turn(env: Any) -> int:
    episode = getattr(env, "_episode", None)
    return episode.turn if episode is not None else env.turn


def answer_step_pass(env: Any, episodes: int) -> Callable[[], float]:
    """A pass: ``episodes`` two-turn episodes, returning the median µs of the answer step."""

    def run() -> float:
        samples = []
        clock = time.perf_counter_ns
        for _ in range(episodes):
            env.reset(seed=0)
            env.step(TOOL_ACTION)
            start = clock()
            env.step(ANSWER_ACTION)
            samples.append(clock() - start)
        return statistics.median(samples) / 1000.0

    return run


def grade_pass(env: ConstantToolEnv, repeats: int) -> Callable[[], float]:
    """A pass timing the family's ``_grade`` alone, what the answer budget excludes."""
    from agentenv.engine.parsing import parse_action

    env.reset(seed=0)
    answer = parse_action(ANSWER_ACTION)
    episode = env._episode

    def run() -> float:
        clock = time.perf_counter_ns
        start = clock()
        for _ in range(repeats):
            env._grade(episode.task, answer, episode)
        return (clock() - start) / repeats / 1000.0

    return run


def textarena_pass(steps: int) -> Callable[[], float] | str:
    """A pass of TextArena steps (a guess in GuessTheNumber-v0), or why it cannot run."""
    try:
        import textarena
    except ImportError:
        return "unavailable: textarena is not installed beside agentenv (pip install textarena)"

    def run() -> float:
        # A fresh env per pass: one TextArena instance slows down as it accumulates steps
        # (2,000 steps took 13x the time of 500 here), which would misstate its step.
        env = textarena.make(env_id="GuessTheNumber-v0")
        samples = []
        clock = time.perf_counter_ns
        env.reset(num_players=1, seed=0)
        for turn in range(steps):
            if turn % 5 == 0:
                env.reset(num_players=1, seed=0)
            env.get_observation()
            start = clock()
            env.step(action="[7]")
            samples.append(clock() - start)
        return statistics.median(samples) / 1000.0

    return run


def turn_curve_pass(
    make_env: Callable[[], Any], action: Any, episodes: int
) -> Callable[[], dict[int, float]]:
    """Median µs of the step at each turn index of 64-turn episodes (the env allows 80)."""
    env = make_env()

    def run() -> dict[int, float]:
        per_turn: list[list[int]] = [[] for _ in range(65)]
        clock = time.perf_counter_ns
        for _ in range(episodes):
            env.reset(seed=0)
            for turn in range(1, 65):
                start = clock()
                env.step(action)
                per_turn[turn].append(clock() - start)
        return {turn: statistics.median(per_turn[turn]) / 1000.0 for turn in TURN_MARKS}

    return run


def token_env_case() -> tuple[Callable[[], Any], Any] | str:
    """``TokenEnv`` over the constant env with the Qwen3 template, and the policy's action ids."""
    try:
        from agentenv.tokens import TokenEnv, qwen3_template

        template = qwen3_template()
    except Exception as exc:  # noqa: BLE001 - an optional extra: report, do not fail the run
        return f"unavailable: {type(exc).__name__}: {exc} (pip install 'agentenv[tokens]')"
    ids = template.encode(TOOL_ACTION) + [template.eos_ids[0]]
    return (lambda: TokenEnv(ConstantToolEnv(max_turns=80), template)), ids


def media_episodes_pass(episodes: int) -> Callable[[], float]:
    """A pass of scripted two-turn MediaSearch episodes (search the question, then answer): episodes/s."""
    import gymnasium as gym

    import agentenv  # noqa: F401
    from agentenv.engine.actions import answer, tool_call

    env = gym.make("MediaSearch-v0", split="train").unwrapped
    searches = [tool_call("search", query=task.prompt[:200]) for task in env.tasks]
    final = answer("Inception")
    n_tasks = len(searches)

    def run() -> float:
        start = time.perf_counter()
        for i in range(episodes):
            index = i % n_tasks
            env.reset(options={"index": index})
            env.step(searches[index])
            env.step(final)
        return episodes / (time.perf_counter() - start)

    return run


def oracle_episodes_pass(episodes: int) -> Callable[[], float]:
    """A pass of the scripted oracle on MediaSearch train questions: episodes/s (env + oracle)."""
    import gymnasium as gym
    import numpy as np

    import agentenv  # noqa: F401
    from agentenv.baselines.oracle import OracleAgent

    env = gym.make("MediaSearch-v0", split="train").unwrapped
    agent = OracleAgent()
    rng = np.random.default_rng(0)
    n_tasks = len(env.tasks)

    def run() -> float:
        start = time.perf_counter()
        for i in range(episodes):
            obs, info = env.reset(options={"index": i % n_tasks})
            agent.reset(obs, info, task=env.task, rng=rng)
            done = False
            while not done:
                obs, _, terminated, truncated, info = env.step(agent.act(obs, info))
                done = terminated or truncated
        return episodes / (time.perf_counter() - start)

    return run


ALL_ENVS_PEAK_RSS = """
import resource
import gymnasium as gym
import agentenv
ids = agentenv.env_ids() if hasattr(agentenv, "env_ids") else [
    "MediaSearch-v0", "MediaSearch-SingleTurn-v0", "RareDiseaseDiagnosis-v0", "RareDiseaseDiagnosis-SingleTurn-v0"]
envs = [gym.make(env_id) for env_id in ids]
for env in envs:
    env.reset(seed=0)
try:  # VmHWM: this process's own peak (ru_maxrss would keep the forking parent's across exec)
    with open("/proc/self/status") as status:
        print(next(int(line.split()[1]) for line in status if line.startswith("VmHWM:")) / 1024)
except OSError:
    print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
"""


def all_envs_peak_rss_mb() -> float:
    """Peak RSS (MB) of a fresh interpreter that makes and resets every registered env: the budget's figure.

    A fresh process, because this one's peak also holds the benchmark's own work (the Qwen3
    tokenizer, the floors, a first build of a cache), which a user's env worker does not.
    It runs twice: the first run builds any cache this home lacks, the second is measured.
    """
    for _ in range(2):
        done = subprocess.run(
            [sys.executable, "-c", ALL_ENVS_PEAK_RSS], capture_output=True, text=True, check=True
        )
    return float(done.stdout.split()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--passes", type=int, default=5, help="interleaved passes per figure (median and spread)"
    )
    parser.add_argument("--steps", type=int, default=20_000, help="constant-tool steps per pass")
    parser.add_argument("--episodes", type=int, default=3_000, help="MediaSearch episodes per pass")
    parser.add_argument(
        "--curve-episodes",
        type=int,
        default=300,
        help="64-turn episodes per pass for the turn curve",
    )
    parser.add_argument("--json", help="write every figure to this file")
    args = parser.parse_args()
    figures: dict[str, Any] = {
        "machine": print_machine("env step speed: agentenv vs a bare gymnasium.Env floor")
    }

    constant, floor = ConstantToolEnv(), BareFloorEnv()
    cases: dict[str, Callable[[], float]] = {
        "bare gymnasium.Env floor": tool_step_pass(floor, args.steps),
        "agentenv ToolEnv": tool_step_pass(constant, args.steps),
    }
    textarena = textarena_pass(min(args.steps // 4, 1000))
    if callable(textarena):
        cases["TextArena GuessTheNumber-v0"] = textarena
    steps = interleaved(cases, passes=args.passes)
    figures["tool_step_us"] = steps
    print("\n## constant-tool step, median µs (min–max over passes)")
    for name, figure in steps.items():
        print(f"  {name:32s} {spread_text(figure, 2)}")
    if not callable(textarena):
        print(f"  {'TextArena':32s} {textarena}")
    ours, bare = steps["agentenv ToolEnv"]["median"], steps["bare gymnasium.Env floor"]["median"]
    ratio = ours / bare
    figures["tool_step_ratio_to_floor"] = ratio
    met = ours <= STEP_BUDGET_US or ratio <= FLOOR_RATIO_BUDGET
    print(
        f"  ratio agentenv / floor: {ratio:.2f}x   budget: <= {STEP_BUDGET_US:g} us or <= "
        f"{FLOOR_RATIO_BUDGET:g}x the floor -> {'met' if met else 'NOT met'}"
    )

    answer = interleaved(
        {
            "agentenv answer step": answer_step_pass(constant, args.steps // 4),
            "bare floor answer step": answer_step_pass(floor, args.steps // 4),
            "agentenv _grade alone": grade_pass(ConstantToolEnv(), args.steps),
        },
        passes=args.passes,
    )
    beyond = answer["agentenv answer step"]["median"] - answer["agentenv _grade alone"]["median"]
    figures["answer_step_us"] = answer
    figures["answer_step_beyond_grading_us"] = beyond
    print("\n## answer step, median µs")
    for name, figure in answer.items():
        print(f"  {name:32s} {spread_text(figure, 2)}")
    print(
        f"  beyond grading: {beyond:.2f} us   budget: <= {ANSWER_BUDGET_US:g} us -> "
        f"{'met' if beyond <= ANSWER_BUDGET_US else 'NOT met'}"
    )

    curve_cases: dict[str, Callable[[], dict[int, float]]] = {
        "ToolEnv": turn_curve_pass(
            lambda: ConstantToolEnv(max_turns=80), TOOL_ACTION, args.curve_episodes
        ),
    }
    token_case = token_env_case()
    if isinstance(token_case, tuple):
        curve_cases["TokenEnv(ToolEnv)"] = turn_curve_pass(
            token_case[0], token_case[1], args.curve_episodes
        )
    curves: dict[str, dict[int, list[float]]] = {
        name: {t: [] for t in TURN_MARKS} for name in curve_cases
    }
    for run in curve_cases.values():
        run()  # warm-up
    for _ in range(args.passes):
        for name, run in curve_cases.items():
            for turn, value in run().items():
                curves[name][turn].append(value)
    figures["step_us_by_turn"] = {
        name: {turn: statistics.median(values) for turn, values in by_turn.items()}
        for name, by_turn in curves.items()
    }
    print("\n## step time against turn index, median µs over passes")
    print("  " + f"{'turn':20s}" + "".join(f"{t:>8d}" for t in TURN_MARKS) + f"{'64 / 1':>9s}")
    for name, by_turn in figures["step_us_by_turn"].items():
        row = "".join(f"{by_turn[t]:8.2f}" for t in TURN_MARKS)
        print(f"  {name:20s}{row}{by_turn[64] / by_turn[1]:8.2f}x")
    if isinstance(token_case, str):
        print(f"  TokenEnv: {token_case}")

    episodes = interleaved(
        {
            "two-turn MediaSearch (search, answer)": media_episodes_pass(args.episodes),
            "scripted oracle, MediaSearch": oracle_episodes_pass(args.episodes),
        },
        passes=args.passes,
    )
    figures["episodes_per_s"] = episodes
    print("\n## episodes per second, one core")
    for name, figure in episodes.items():
        print(f"  {name:40s} {spread_text(figure, 0)}")
    two_turn = episodes["two-turn MediaSearch (search, answer)"]["median"]
    print(
        f"  budget: >= {EPISODES_BUDGET:,.0f} two-turn episodes/s -> {'met' if two_turn >= EPISODES_BUDGET else 'NOT met'}"
        f" ({two_turn / EPISODES_BUDGET:.2f}x)"
    )
    own_peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    figures["peak_rss_mb_all_envs"] = all_envs_peak_rss_mb()
    figures["peak_rss_mb_this_run"] = own_peak
    print(
        f"\n## memory: peak RSS of a fresh process with every registered env made and reset (warm cache): "
        f"{figures['peak_rss_mb_all_envs']:.0f} MB   budget: <= {MEMORY_BUDGET_MB:g} MB -> "
        f"{'met' if figures['peak_rss_mb_all_envs'] <= MEMORY_BUDGET_MB else 'NOT met'}"
    )
    print(
        f"  (this benchmark's own process, with its tokenizer, floors and first builds: {own_peak:.0f} MB)"
    )
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2, default=str), encoding="utf-8")


if __name__ == "__main__":
    main()
