"""MediaSearch ``search`` and ``get_title`` step time against the budgets (not a test; prints a table).

    python benchmarks/search_step.py [--queries 300] [--passes 7] [--seed 0] [--questions] [--baseline DIR]
                                     [--json out.json]

Budgets (DESIGN.md): a ``search`` step <= 100 us (<= 80 us with ``--questions``), a ``get_title`` step <= 15 us.

``--questions`` searches with whole task questions (the prompts of ``MediaSearch-v0``'s train
split, k=5), as an agent that pastes the question into the search box does, instead of
search-box queries.

What is timed, on the real catalog and the default (cached) BM25 index:

* ``env.step`` of one ``search`` call (a realistic query never searched before in this
  process: titles, title fragments, people, "genre film with person", "genre from year
  directed by person"; k from 1 to 10), of one ``get_title`` call, and of one call to a
  *constant* tool registered next to them (no arguments, returns "ok"): the generic step
  overhead, so that ``step(search) - step(constant)`` is what the tool adds;
* the tool bodies alone (``MediaTools.search_text`` / ``get_title_text`` on validated
  arguments) and BM25 alone (``retriever.search``) on the same queries;
* the bodies on a *cold* ``MediaTools`` (per-title JSON caches empty: the first call
  that touches a title encodes it once).

``--baseline DIR`` also times the tools and BM25 of an older tree, in the same run and on
the same inputs: ``DIR`` holds that tree's ``envs/media_search/tools/film_tools.py`` and
``agentenv/retrieval/bm25.py`` as ``tools.py`` and ``bm25.py`` (and, for a tree that has it,
``agentenv/retrieval/bm25_topk.py`` as ``bm25_topk.py``), e.g.::

    mkdir -p /tmp/base && git show HEAD:envs/media_search/tools/film_tools.py > /tmp/base/tools.py \
      && git show HEAD:agentenv/retrieval/bm25.py > /tmp/base/bm25.py \
      && git show HEAD:agentenv/retrieval/bm25_topk.py > /tmp/base/bm25_topk.py
    python benchmarks/search_step.py --baseline /tmp/base

Its steps run in the same env with its tools swapped in; its bodies return dicts, which are
encoded here as ``ToolRegistry.execute`` encodes them.

Every pass runs every measure on its i-th input, for i = 1..n, in a fresh random order
each time (interleaved call by call), so a noisy neighbour slows all of them alike and
measures that share inputs (ours and the baseline) take turns at meeting them first. Searches use a fresh set of distinct queries in every pass (and
another in the warm-up), so no timed search is a repeat (nothing caches whole queries, but
titles met before are encoded already); get_title uses the same titles
in every pass (their JSON text is cached after the warm-up, as it is in a long run). Each
figure is the median over a pass of the per-call times; the table gives the median of
the pass medians and their spread (min-max). Resets (after ``max_turns - 1`` steps) are
not timed.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from _bench_common import load_bm25_baseline, load_module
from _bench_common import machine as common_machine

SEARCH_BUDGET_US = 100.0
GET_TITLE_BUDGET_US = 15.0
QUESTION_BUDGET_US = 80.0
"""A search step with a whole question as the query (issue 33)."""


def machine() -> dict[str, Any]:
    """What the figures were measured on, at the start of the run (see ``_bench_common``), and numpy."""
    return {**common_machine(), "numpy": np.__version__}


def search_queries(catalog: Any, n: int, seed: int) -> list[tuple[str, int]]:
    """``n`` distinct search-box queries drawn from the catalog, each with a k in 1..10."""
    rng = np.random.default_rng(seed)
    titles = catalog.titles
    out: dict[str, int] = {}
    while len(out) < n:
        t = titles[int(rng.integers(len(titles)))]
        people = [*t.directors, *t.cast] or [t.title]
        person = people[int(rng.integers(len(people)))]
        genre = t.genres[0] if t.genres else "Drama"
        words = t.title.split()
        start = int(rng.integers(len(words)))
        query = [
            t.title,
            " ".join(words[start : start + 2]),
            person,
            f"{genre} film with {person}",
            f"{t.title} {t.year}",
            f"{genre} from {t.year} directed by {t.directors[0] if t.directors else person}",
        ][int(rng.integers(6))]
        out.setdefault(query, int(rng.integers(1, 11)))
    return list(out.items())


def question_queries(env: Any, n: int, seed: int) -> list[tuple[str, int]]:
    """``n`` distinct whole task questions (train prompts, at most 500 characters: the tool's limit), k=5."""
    rng = np.random.default_rng(seed)
    prompts = list(dict.fromkeys(t.prompt[:500] for t in env.tasks))
    return [(prompts[int(i)], 5) for i in rng.permutation(len(prompts))[:n]]


def step_timer(env: Any) -> Callable[[str], int]:
    """A function that steps ``env`` with one action and returns the step's nanoseconds (resets untimed)."""
    clock = time.perf_counter_ns

    def run(action: str) -> int:
        ep = env._episode
        if ep is None or ep.done or ep.turn >= env.max_turns - 1:
            env.reset(seed=0)
        t0 = clock()
        env.step(action)
        return clock() - t0

    return run


def call_timer(fn: Callable[[Any], Any]) -> Callable[[Any], int]:
    clock = time.perf_counter_ns

    def run(arg: Any) -> int:
        t0 = clock()
        try:
            fn(arg)
        except Exception:  # noqa: BLE001 - a query without a match is a ToolError, timed like the rest
            pass
        return clock() - t0

    return run


def load_baseline(folder: str, env: Any, constant: Any) -> dict[str, Any]:
    """The older tree's tool bodies, BM25 index and tool registry (see ``--baseline``)."""
    from pathlib import Path

    from agentenv.engine.tools import ToolRegistry

    bm25 = load_bm25_baseline(str(Path(folder) / "bm25.py"))  # with DIR/bm25_topk.py, if there
    tools = load_module("baseline_tools", Path(folder) / "tools.py")
    ids, texts = env.catalog.documents()
    retriever = bm25.BM25Retriever.from_texts(texts, ids)
    bodies = tools.MediaTools(env.catalog, retriever)
    encode = json.JSONEncoder(
        ensure_ascii=False
    ).encode  # what ToolRegistry.execute does with a dict
    registry = ToolRegistry(
        [*tools.make_media_tools(env.catalog, retriever, bodies.index), constant]
    )
    return {
        "retriever": retriever,
        "registry": registry,
        "search": lambda a: encode(bodies.search(a)),
        "get_title": lambda a: encode(bodies.get_title(a)),
    }


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--queries", type=int, default=300, help="queries (new in every pass) and titles per pass"
    )
    ap.add_argument("--passes", type=int, default=7, help="interleaved passes (>= 5)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--questions", action="store_true", help="search with whole task questions (budget 80 us)"
    )
    ap.add_argument(
        "--baseline", help="folder with an older tools.py and bm25.py to time alongside"
    )
    ap.add_argument("--json", help="write the figures here")
    args = ap.parse_args(argv)
    info = machine()
    print("machine:", json.dumps(info))

    import gymnasium as gym
    from pydantic import BaseModel, ConfigDict

    import agentenv  # noqa: F401
    from agentenv.engine.actions import tool_call
    from agentenv.engine.tools import Tool, ToolRegistry
    from agentenv.envs.media_search.tools.film_tools import GetTitleArgs, MediaTools, SearchArgs

    class NoArgs(BaseModel):
        model_config = ConfigDict(extra="forbid", frozen=True)

    env = gym.make("MediaSearch-v0").unwrapped
    constant = Tool("constant", "Return a constant.", NoArgs, lambda _args: "ok")
    env.tools = ToolRegistry([env.tools[name] for name in env.tools.names] + [constant])
    env.reset(seed=0)
    catalog, retriever = env.catalog, env.retriever
    tools: MediaTools = env.tools["search"].fn.__self__  # the env's own tool bodies

    passes = max(args.passes, 5)
    n = args.queries
    # Distinct query sets: two for the warm-up and two per pass (the step and the body each
    # search their own): no timed search is a repeat.
    all_queries = (
        question_queries(env, n * 2 * (passes + 1), args.seed)
        if args.questions
        else search_queries(catalog, n * 2 * (passes + 1), args.seed)
    )
    query_sets = [all_queries[i * n : (i + 1) * n] for i in range(2 * (passes + 1))]
    rng = np.random.default_rng(args.seed + 1)
    title_ids = [catalog.titles[int(i)].id for i in rng.choice(len(catalog), n, replace=False)]
    title_args = [GetTitleArgs(title_id=i) for i in title_ids]

    def search_measures(i: int) -> dict[str, tuple[Callable[[Any], int], list[Any]]]:
        """The search measures of pass ``i`` (0: the warm-up) on that pass's own queries."""
        for_step, for_body = query_sets[2 * i], query_sets[2 * i + 1]
        body_args = [SearchArgs(query=q, k=k) for q, k in for_body]
        return {
            "step: search": (step, [tool_call("search", query=q, k=k) for q, k in for_step]),
            "body: search_text": (call_timer(tools.search_text), body_args),
            "bm25: retriever.search": (
                call_timer(lambda a: retriever.search(a.query, a.k)),
                body_args,
            ),
        }

    def cold_bodies() -> dict[str, float]:
        """Median ns of each body's first call per title, on a fresh MediaTools (empty caches)."""
        fresh = MediaTools(catalog, retriever, tools.index)
        s = [call_timer(fresh.search_text)(SearchArgs(query=q, k=k)) for q, k in query_sets[1]]
        g = [call_timer(fresh.get_title_text)(a) for a in title_args]
        return {
            "body (cold): search_text": float(np.median(s)),
            "body (cold): get_title_text": float(np.median(g)),
        }

    step = step_timer(env)
    baseline = load_baseline(args.baseline, env, constant) if args.baseline else None

    def on(registry: Any, fn: Callable[[Any], int]) -> Callable[[Any], int]:
        """``fn`` with ``registry`` as the env's tools (the baseline's or ours)."""

        def run(item: Any) -> int:
            env.tools = registry
            return fn(item)

        return run

    ours_registry = env.tools
    if baseline is not None:
        step = on(ours_registry, step)
        plain_step = step_timer(env)
        base_step = on(baseline["registry"], plain_step)

        def baseline_measures(i: int) -> dict[str, tuple[Callable[[Any], int], list[Any]]]:
            for_step, for_body = query_sets[2 * i], query_sets[2 * i + 1]
            return {
                "baseline step: search": (
                    base_step,
                    [tool_call("search", query=q, k=k) for q, k in for_step],
                ),
                "baseline body: search": (
                    call_timer(baseline["search"]),
                    [SearchArgs(query=q, k=k) for q, k in for_body],
                ),
                "baseline bm25: search": (
                    call_timer(lambda a: baseline["retriever"].search(a.query, a.k)),
                    [SearchArgs(query=q, k=k) for q, k in for_body],
                ),
            }

    fixed: dict[str, tuple[Callable[[Any], int], list[Any]]] = {
        "step: constant tool": (step, [tool_call("constant")] * n),
        "step: get_title": (step, [tool_call("get_title", title_id=i) for i in title_ids]),
        "body: get_title_text": (call_timer(tools.get_title_text), title_args),
    }
    if baseline is not None:
        fixed["baseline step: get_title"] = (base_step, fixed["step: get_title"][1])
        fixed["baseline body: get_title"] = (call_timer(baseline["get_title"]), title_args)

    def all_measures(i: int) -> dict[str, tuple[Callable[[Any], int], list[Any]]]:
        out = {**search_measures(i), **fixed}
        if baseline is not None:
            out.update(baseline_measures(i))
        return out

    cold = cold_bodies()  # before any warm-up: this process has not encoded these titles yet
    measures = all_measures(0)
    for (
        fn,
        items,
    ) in measures.values():  # warm-up: per-title caches, tokenizer memo, first-use paths
        for item in items:
            fn(item)
    names = list(measures)
    per_pass: dict[str, list[float]] = {name: [] for name in names}
    order_rng = np.random.default_rng(args.seed + 2)
    for p in range(passes):
        measures = all_measures(p + 1)
        times: dict[str, list[int]] = {name: [] for name in names}
        for i in range(n):  # item by item, every measure in turn: noise falls on all of them alike
            for j in order_rng.permutation(len(names)).tolist():  # a new order each time: measures
                name = names[j]  # sharing inputs take turns at meeting them first (cold caches)
                fn, items = measures[name]
                times[name].append(fn(items[i]))
        for name in names:
            per_pass[name].append(float(np.median(times[name])) / 1e3)

    env.tools = ours_registry
    rows = {
        name: {"median_us": statistics.median(v), "min_us": min(v), "max_us": max(v)}
        for name, v in sorted(
            per_pass.items(), key=lambda kv: kv[0].replace("baseline ", "") + kv[0][:1]
        )
    }
    overhead = rows["step: constant tool"]["median_us"]
    print(
        f"\n{n} queries (new in every pass) and {n} titles per pass, {passes} interleaved passes; "
        f"loadavg at start {info['load_avg_1_5_15']}"
    )
    head = f"{'measure':<30}{'median us':>11}{'spread us':>17}{'budget':>9}{'x budget':>10}"
    print(head)
    print("-" * len(head))
    search_budget = QUESTION_BUDGET_US if args.questions else SEARCH_BUDGET_US
    budgets = {
        "step: search": search_budget,
        "step: get_title": GET_TITLE_BUDGET_US,
        "baseline step: search": search_budget,
        "baseline step: get_title": GET_TITLE_BUDGET_US,
    }
    for name, r in rows.items():
        budget = budgets.get(name)
        tail = f"{budget:>9.0f}{r['median_us'] / budget:>10.2f}" if budget else ""
        print(f"{name:<30}{r['median_us']:>11.1f}{r['min_us']:>8.1f} - {r['max_us']:<6.1f}{tail}")
    for name, value in cold.items():
        print(f"{name:<30}{value / 1e3:>11.1f}   (one pass, first touch of each title)")
    tool_search = rows["step: search"]["median_us"] - overhead
    tool_title = rows["step: get_title"]["median_us"] - overhead
    print(
        f"\ntool cost in a step (step - constant-tool step): search {tool_search:.1f} us, "
        f"get_title {tool_title:.1f} us"
    )
    print(
        f"x budget = step median / budget (<= 1 meets it): search {rows['step: search']['median_us'] / search_budget:.2f}, "
        f"get_title {rows['step: get_title']['median_us'] / GET_TITLE_BUDGET_US:.2f}"
    )
    if baseline is not None:
        for what in (
            "step: search",
            "body: search_text",
            "bm25: retriever.search",
            "step: get_title",
            "body: get_title_text",
        ):
            base_name = {
                "body: search_text": "baseline body: search",
                "bm25: retriever.search": "baseline bm25: search",
                "body: get_title_text": "baseline body: get_title",
            }.get(what, f"baseline {what}")
            print(
                f"  baseline / ours, {what:<24}{rows[base_name]['median_us'] / rows[what]['median_us']:>6.2f}x"
            )
    figures = {
        "machine": info,
        "rows": rows,
        "cold_bodies_us": {k: v / 1e3 for k, v in cold.items()},
        "tool_cost_us": {"search": tool_search, "get_title": tool_title},
        "queries": "questions" if args.questions else "search-box",
        "budgets_us": {"search": search_budget, "get_title": GET_TITLE_BUDGET_US},
    }
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(figures, f, indent=2)
        print(f"wrote {args.json}")
    return figures


if __name__ == "__main__":
    sys.exit(main() and 0)
