"""What a wake-up costs a process on this machine: the in-process MediaSearch loop with a short sleep after each episode (not a test).

    python benchmarks/wake_cost.py [--passes 3] [--seconds 2] [--pause-us 100]

Why: ``benchmarks/serve_env_load.py`` compares the server's CPU per episode with an in-process
loop that never waits, while a served env always waits for its clients. On a small virtual
machine a thread that sleeps and wakes may find its caches and branch predictors cold, and then
the same Python work costs more. This measures that directly, in one process, on the env the
server steps (``gym.make("MediaSearch-v0", split="train")``, 64 envs in lockstep, the two-step
episode of ``serve_env_load.py``), in three modes per pass:

* **no pause**: the loop as ``serve_env_load.py`` times it;
* **sleep**: ``time.sleep(pause)`` after each episode (the thread leaves the CPU and wakes);
* **spin**: a busy wait of the same length (the thread keeps the CPU).

Printed per mode: CPU per episode (``time.process_time``), the pause's own CPU, and the wall
time of the episode's work alone (reset, search, answer, timed around the env calls). If the
work's wall time grows after a sleep but not after a spin, waking costs the work itself, not
the sleep call.
"""

from __future__ import annotations

import argparse
import time


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--passes", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=2.0, help="seconds per mode and pass")
    parser.add_argument("--pause-us", type=float, default=100.0, help="pause after each episode")
    args = parser.parse_args()

    import gymnasium as gym

    import agentenv  # noqa: F401 - registers the ids
    from agentenv.engine.actions import answer, tool_call

    envs = [gym.make("MediaSearch-v0", split="train") for _ in range(64)]
    searches = [tool_call("search", query=t.prompt[:200]) for t in envs[0].unwrapped.tasks]
    final, n_tasks = answer("Inception"), len(searches)
    clock, cpu_clock = time.perf_counter, time.process_time
    task = [0]

    def run(seconds: float, mode: str, pause_s: float) -> tuple[float, float, float]:
        """(CPU µs per episode, the pause's CPU µs per episode, work wall µs per episode)."""
        episodes, start, cpu = 0, clock(), cpu_clock()
        work_s = pause_cpu_s = 0.0
        while clock() - start < seconds:
            for env in envs:
                k = task[0] % n_tasks
                task[0] += 1
                began = clock()
                env.reset(options={"index": k})
                env.step(searches[k])
                env.step(final)
                work_s += clock() - began
                episodes += 1
                if mode == "no pause":
                    continue
                paused = cpu_clock()
                if mode == "sleep":
                    time.sleep(pause_s)
                else:
                    until = clock() + pause_s
                    while clock() < until:
                        pass
                pause_cpu_s += cpu_clock() - paused
        per = 1e6 / episodes
        return (cpu_clock() - cpu) * per, pause_cpu_s * per, work_s * per

    run(1.0, "no pause", 0.0)  # warm the memos and caches
    pause_s = args.pause_us / 1e6
    print(
        f"# 64 MediaSearch envs in lockstep; pause {args.pause_us:g} us after each episode; "
        f"{args.passes} passes x {args.seconds:g} s per mode"
    )
    print("pass | mode | CPU us/episode | pause's own CPU us | work wall us/episode")
    for number in range(1, args.passes + 1):
        for mode in ("no pause", "sleep", "spin"):
            cpu, pause_cpu, work = run(args.seconds, mode, pause_s)
            print(f"{number} | {mode} | {cpu:.0f} | {pause_cpu:.0f} | {work:.0f}", flush=True)


if __name__ == "__main__":
    main()
