"""``agentenv eval`` throughput against the number of workers and threads, in one run (not a test).

    python benchmarks/eval_scaling.py [--passes 3] [--episodes 1000] [--wait-episodes 60] [--endpoint-episodes 256]

Every figure is the median episodes/s of the episode loop (env builds
excluded, as in ``summary.json``) over interleaved passes, with each record
written to a run directory in a fresh temporary folder, as ``agentenv eval``
writes it. MediaSearch-v0, validation split:

* scripted (bm25): ``--workers 1`` against ``--workers 2`` (budget: never slower);
* an agent that waits 20 ms per turn (a sleeping stub for an LLM):
  ``--workers 1`` against ``--workers 2`` (budget: ≥ 1.6×);
* a stub endpoint agent that waits 50 ms per turn (one search, then an answer):
  sequential against ``--concurrency 64`` threads, with the turn throughput against the ideal 64 / 0.05 s (budget: ≥ 0.8×);
* the shipped ``llm`` agent against a stub OpenAI-compatible model on loopback HTTP
  that answers after 50 ms: sequential against ``--concurrency 64`` in one process and
  against ``--workers 2 --concurrency 32`` (64 in flight too, the agents' own request
  building spread over two processes).

Why it exists: issue 33 measured ``--workers 2`` at 0.64× ``--workers 1`` for bm25,
because each record's whole transcript was pickled through the process pool.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _bench_common import interleaved, print_machine, spread_text  # noqa: E402

from agentenv.engine.actions import answer, tool_call  # noqa: E402
from agentenv.evaluation.agents import make_agent, register_agent  # noqa: E402
from agentenv.evaluation.run_dir import RunDirectory  # noqa: E402
from agentenv.evaluation.runner import RunConfig, run  # noqa: E402


class Waiting:
    """The bm25 agent, plus a fixed wait per turn: a stand-in for an LLM endpoint's latency."""

    def __init__(self, wait_s: str = "0.02") -> None:
        self.inner = make_agent("bm25")
        self.wait_s = float(wait_s)
        self.name = "waiting-bm25"

    def reset(self, obs: str, info: Mapping[str, Any], *, task: Any, rng: Any) -> None:
        self.inner.reset(obs, info, task=task, rng=rng)

    def act(self, obs: str, info: Mapping[str, Any]) -> str:
        time.sleep(self.wait_s)
        return self.inner.act(obs, info)


class Endpoint:
    """A stub LLM behind an endpoint with a fixed latency: one search (the question's first words), then an
    answer; almost no CPU of its own, so the figure is the runner's and the env's."""

    name = "endpoint-stub"

    def __init__(self, wait_s: str = "0.05") -> None:
        self.wait_s = float(wait_s)
        self.question = ""

    def reset(self, obs: str, info: Mapping[str, Any], *, task: Any, rng: Any) -> None:
        self.question = " ".join(obs.split()[:8])

    def act(self, obs: str, info: Mapping[str, Any]) -> str:
        time.sleep(self.wait_s)
        if info["turn"] == 0:
            return tool_call("search", query=self.question)
        return answer(" ".join(obs.split()[:3]))


class _Model(BaseHTTPRequestHandler):
    """A stub OpenAI-compatible model on loopback: after 50 ms, a search (the question's first words), then,
    once a tool answered, an answer."""

    protocol_version = "HTTP/1.1"  # keep-alive, as a real endpoint

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet
        pass

    def _reply(self, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        self._reply({"object": "list", "data": [{"id": "stub", "object": "model"}]})

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        time.sleep(0.05)
        messages = request.get("messages", [])
        message: dict[str, Any] = {"role": "assistant", "content": "<answer>unknown</answer>"}
        if not any(m["role"] == "tool" for m in messages):
            question = next((m["content"] for m in messages if m["role"] == "user"), "")
            arguments = json.dumps({"query": " ".join(str(question).split()[:8])})
            message = {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_0",
                        "type": "function",
                        "function": {"name": "search", "arguments": arguments},
                    }
                ],
            }
        self._reply(
            {
                "id": "x",
                "object": "chat.completion",
                "model": "stub",
                "created": 0,
                "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
            }
        )


class _Server(ThreadingHTTPServer):
    request_queue_size = 512  # 64 clients connecting at once
    daemon_threads = True


register_agent("waiting-bm25", Waiting)  # registered before the pool forks, so workers find it
register_agent("endpoint-stub", Endpoint)


def eval_pass(config: RunConfig, turns: list[int]) -> Callable[[], float]:
    """One run into a fresh run directory; returns its episodes/s (and records its turns)."""

    def once() -> float:
        with tempfile.TemporaryDirectory(prefix="agentenv-eval-scaling-") as tmp:
            run_dir = RunDirectory(Path(tmp) / "run", {"episodes": config.episodes})
            result = run(
                config,
                progress=False,
                on_start=run_dir.start,
                on_record=run_dir.append,
                max_agent_failures=None,
            )
            run_dir.close()
        turns.append(sum(r["turns"] for r in result.records))
        return len(result.records) / result.loop_s

    return once


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--passes", type=int, default=3)
    parser.add_argument("--episodes", type=int, default=1000, help="bm25 episodes per pass")
    parser.add_argument(
        "--wait-episodes", type=int, default=60, help="20 ms-per-turn episodes per pass"
    )
    parser.add_argument(
        "--endpoint-episodes",
        type=int,
        default=256,
        help="50 ms-per-turn episodes per threaded pass",
    )
    args = parser.parse_args(argv)
    print_machine("agentenv eval: workers and threads (MediaSearch-v0, validation)")
    base = RunConfig("MediaSearch-v0", "bm25", split="validation", episodes=args.episodes, seed=0)
    wait = RunConfig(
        "MediaSearch-v0",
        "waiting-bm25",
        split="validation",
        episodes=args.wait_episodes,
        seed=0,
        agent_args=(("wait_s", "0.02"),),
    )
    turns: list[int] = []
    cases = {
        "bm25 workers=1": eval_pass(base, turns),
        "bm25 workers=2": eval_pass(RunConfig(**{**base.__dict__, "workers": 2}), turns),
        "wait 20 ms workers=1": eval_pass(wait, turns),
        "wait 20 ms workers=2": eval_pass(RunConfig(**{**wait.__dict__, "workers": 2}), turns),
    }
    figures = interleaved(cases, passes=args.passes, warmup=1)
    for name, figure in figures.items():
        print(f"{name:<28} {spread_text(figure)} episodes/s")
    print(
        f"ratio bm25 workers 2/1:        {figures['bm25 workers=2']['median'] / figures['bm25 workers=1']['median']:.2f}"
        "  (budget: >= 1.0)"
    )
    print(
        f"ratio wait 20 ms workers 2/1:  "
        f"{figures['wait 20 ms workers=2']['median'] / figures['wait 20 ms workers=1']['median']:.2f}"
        "  (budget: >= 1.6)"
    )

    endpoint = RunConfig(
        "MediaSearch-v0",
        "endpoint-stub",
        split="validation",
        episodes=args.endpoint_episodes,
        seed=0,
        agent_args=(("wait_s", "0.05"),),
    )
    seq_turns: list[int] = []
    thr_turns: list[int] = []
    seq_config = RunConfig(
        **{**endpoint.__dict__, "episodes": max(8, args.endpoint_episodes // 32)}
    )
    threaded = interleaved(
        {
            "wait 50 ms sequential": eval_pass(seq_config, seq_turns),
            "wait 50 ms concurrency=64": eval_pass(
                RunConfig(**{**endpoint.__dict__, "concurrency": 64}), thr_turns
            ),
        },
        passes=args.passes,
        warmup=1,
    )
    for name, figure in threaded.items():
        print(f"{name:<28} {spread_text(figure)} episodes/s")
    ratio = (
        threaded["wait 50 ms concurrency=64"]["median"]
        / threaded["wait 50 ms sequential"]["median"]
    )
    turns_per_episode = thr_turns[-1] / args.endpoint_episodes
    turn_rate = threaded["wait 50 ms concurrency=64"]["median"] * turns_per_episode
    print(f"ratio concurrency 64 / sequential: {ratio:.1f}")
    print(
        f"turns/s at concurrency 64: {turn_rate:.0f} = {turn_rate / (64 / 0.05):.2f} x the ideal 64/0.05 s "
        "(budget: >= 0.8)"
    )

    server = _Server(
        ("127.0.0.1", 0), _Model
    )  # bound here, served by its own process (its own GIL)
    model = multiprocessing.get_context("fork").Process(target=server.serve_forever, daemon=True)
    model.start()
    server.socket.close()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    llm = RunConfig(
        "MediaSearch-v0",
        "llm",
        split="validation",
        episodes=args.endpoint_episodes,
        seed=0,
        agent_args=(("base_url", url), ("model", "stub")),
    )
    llm_turns: list[int] = []
    http = interleaved(
        {
            "llm loopback sequential": eval_pass(
                RunConfig(**{**llm.__dict__, "episodes": seq_config.episodes}), []
            ),
            "llm loopback concurrency=64": eval_pass(
                RunConfig(**{**llm.__dict__, "concurrency": 64}), llm_turns
            ),
            "llm loopback workers=2 concurrency=32": eval_pass(
                RunConfig(**{**llm.__dict__, "workers": 2, "concurrency": 32}), []
            ),
        },
        passes=args.passes,
        warmup=1,
    )
    model.terminate()
    model.join()
    for name, figure in http.items():
        print(f"{name:<38} {spread_text(figure)} episodes/s")
    ratio = (
        http["llm loopback concurrency=64"]["median"] / http["llm loopback sequential"]["median"]
    )
    turn_rate = (
        http["llm loopback concurrency=64"]["median"] * llm_turns[-1] / args.endpoint_episodes
    )
    print(
        f"ratio llm concurrency 64 / sequential: {ratio:.1f}; turns/s {turn_rate:.0f} = "
        f"{turn_rate / (64 / 0.05):.2f} x the ideal"
    )
    both = http["llm loopback workers=2 concurrency=32"]["median"]
    print(
        f"ratio llm workers 2 x concurrency 32 / concurrency 64: {both / http['llm loopback concurrency=64']['median']:.2f}; "
        f"turns/s {both * llm_turns[-1] / args.endpoint_episodes:.0f} = "
        f"{both * llm_turns[-1] / args.endpoint_episodes / (64 / 0.05):.2f} x the ideal"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
