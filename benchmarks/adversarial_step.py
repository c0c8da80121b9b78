"""Worst-case step time on hostile actions, per env, against the 20 ms budget (not a test; prints a table).

    python benchmarks/adversarial_step.py [--timeout 15] [--ids MediaSearch-v0 ...] [--json out.json] [--arguments]

Why: DESIGN.md budgets "any action <= 32 KB parsed and graded" at 20 ms worst
case. A policy under RL pressure finds the slowest inputs, so the figure that
matters is the maximum over crafted inputs, not a mean. The inputs are the
catalogue of ``tests/core/test_hostile_actions.py`` plus generated ones:
every fragment of :data:`FRAGMENTS` repeated to the action limit (bare,
inside ``<answer>``, inside a tool-call argument), floods of *distinct* ids
(:func:`distinct_id_cases`: a repeated id is cheap to look up once, thousands
of different ones are not), and seeded random mixtures of fragments from 1 KB
to 32 KB, and a seeded random search over tool arguments (:func:`argument_cases`: partial
names, wildcards, common words to the length limit joined by spaces, ``_``, ``-``, ``.``, ``/``
or ``½``, full lists, lists of ids the env itself printed (:func:`harvest_ids`), boundary
numbers, from each tool's own schema) sent as 32 copies of one call or 32 mixed calls. Dialogues also get the distinct-id flood as a ``<say>`` message
sent on turns 1 to 6 (each earlier flood played untimed, with the other
side's scripted reply), since per-dialogue state can make a later turn slower
than the first.

Each env runs in a worker process. A case that passes ``--timeout`` seconds
is recorded as ">T s", the worker is killed and a fresh one continues with
the next case, so the script finishes even on a quadratic or cubic path.
Dialogues (``agentenv.multiagent``) are timed for both agents, as
``id:agent``. Each case is timed on a fresh episode (reset not timed) up to
three times and the minimum kept, so the figure is the input's cost rather
than the machine's noise or a one-off index build on first use.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import multiprocessing as mp
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

BUDGET_MS = 20.0
ROOT = Path(__file__).resolve().parent.parent
CATALOGUE_FILE = ROOT / "tests" / "core" / "test_hostile_actions.py"

FRAGMENTS = (
    "<think>",
    "</think>",
    "<answer>",
    "</answer>",
    "<tool_call>",
    "</tool_call>",
    "<say>",
    "</say>",
    "{",
    "}",
    "[",
    "]",
    '"',
    "\\",
    "\\u",
    ":",
    ",",
    " ",
    "\n",
    "(",
    ")",
    "OMIM",
    "OMIM:",
    "ORPHA:",
    "HP:0001250",
    "1",
    "9",
    "x",
    "é",
    "😀",
    "\x00",
    '{"name": "search", "arguments": {"query": "x"}}',
    '"answer"',
    "NaN",
    "-",
    "_",
    "<",
    ">",
    "</",
    "the ",
)


@dataclass(frozen=True)
class Target:
    """One env to time: a gym id, or a dialogue id and the agent whose actions are timed."""

    env_id: str
    role: str | None = None

    @property
    def label(self) -> str:
        return self.env_id if self.role is None else f"{self.env_id}:{self.role}"


def load_catalogue() -> Any:
    """The test module holding :func:`hostile_cases`, imported by path (tests/ is not a package)."""
    spec = importlib.util.spec_from_file_location("hostile_actions_catalogue", CATALOGUE_FILE)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


def generated_cases(
    max_length: int, tool: str, arg: str, seed: int = 0, mixtures: int = 24
) -> list[tuple[str, str]]:
    """Fragments repeated to the limit, bare and wrapped, plus seeded random mixtures (1-32 KB)."""
    n = max_length - 80
    cases = []
    for fragment in FRAGMENTS:
        body = fragment * max(1, n // len(fragment))
        cases.append((f"repeat {fragment!r}", body))
        cases.append((f"answer(repeat {fragment!r})", f"<answer>{body}</answer>"))
        quoted = json.dumps(body)
        if len(quoted) < n:
            cases.append(
                (
                    f"argument(repeat {fragment!r})",
                    f'<tool_call>{{"name": "{tool}", "arguments": {{"{arg}": {quoted}}}}}</tool_call>',
                )
            )
    rng = np.random.default_rng(seed)
    for index in range(mixtures):
        size = int(2 ** rng.uniform(10, 15))
        pieces, length = [], 0
        while length < size:
            piece = FRAGMENTS[int(rng.integers(len(FRAGMENTS)))]
            pieces.append(piece)
            length += len(piece)
        cases.append((f"mixture #{index} ({length} chars)", "".join(pieces)[:max_length]))
    return cases


def distinct_ids(prefix: str, width: int, length: int, start: int = 1) -> str:
    """``PREFIX:000…1, PREFIX:000…2, …`` up to ``length`` characters: every id a different one."""
    out, size, number = [], 0, start
    while True:
        piece = f"{prefix}:{number:0{width}d}, "
        if size + len(piece) > length:
            return "".join(out)
        out.append(piece)
        size += len(piece)
        number += 1


def distinct_id_cases(max_length: int, tool: str, arg: str) -> list[tuple[str, str]]:
    """Floods of distinct HPO and OMIM ids: bare, as an answer, as a message, as a tool argument."""
    n = max_length - 80
    cases = []
    for label, body in (
        ("HP", distinct_ids("HP", 7, n)),
        ("OMIM", distinct_ids("OMIM", 6, n, 100000)),
    ):
        cases.append((f"distinct {label} ids", body))
        cases.append((f"answer(distinct {label} ids)", f"<answer>{body}</answer>"))
        cases.append((f"say(distinct {label} ids)", f"<say>Do you have {body}?</say>"))
        quoted = json.dumps(distinct_ids(label, 7 if label == "HP" else 6, n - 80))
        cases.append(
            (
                f"argument(distinct {label} ids)",
                f'<tool_call>{{"name": "{tool}", "arguments": {{"{arg}": {quoted}}}}}</tool_call>',
            )
        )
    return cases


ARGUMENT_STRINGS = (
    "john",
    "j",
    "a",
    "de la",
    "van der",
    "michael john",
    "smith smith",
    "*",
    "%",
    "?",
    ".*",
    "jo*",
    "the",
    "1990",
    "HP:",
    "OMIM:",
    "seizure",
    "abnormality of the",
)
"""Partial names, wildcards and common words: the string arguments that make a look-up broad."""
LONG_WORDS = ("john", "the", "love", "man", "war", "night", "drama", "david", "abnormal", "seizure")
SEPARATORS = (" ", " ", "_", "-", ".", "/", "\u00bd")
"""What joins the words of a generated string: a tool that counts ``\\w+`` words saw ``de_la_de``
as one word while its tokenizer read three (and ``\u00bd`` normalises to two terms)."""
SEEN_IDS: list[str] = []
"""Ids the env itself printed (HPO terms, film ids), harvested by :func:`harvest_ids`: a list argument
of made-up ids fails fast, one of real ids does the work (32 rankings of 50 real findings)."""
_ID = re.compile(r"\b(?:[A-Z]{2,}:\d{3,}|tt\d{7})\b")


def _ids_for(schema: dict[str, Any], rng: np.random.Generator) -> list[str]:
    """Seen ids of one kind: the kind the schema's description shows (``e.g. ['HP:0001166']``), else
    a random kind; a list mixing kinds is refused by its first foreign id and does no work."""
    kinds: dict[str, list[str]] = {}
    for seen in SEEN_IDS:
        kinds.setdefault(seen.split(":")[0] if ":" in seen else seen[:2], []).append(seen)
    described = [k for k in kinds if f"{k}:" in str(schema.get("description", ""))]
    names = sorted(kinds)
    return kinds[described[0] if described else names[int(rng.integers(len(names)))]]


def argument_values(schema: dict[str, Any], rng: np.random.Generator) -> Any:
    """One hostile value for a JSON-schema property: a broad string, a boundary number, a full list."""
    options = schema.get("anyOf")
    if options:
        usable = [o for o in options if o.get("type") != "null"] or options
        return argument_values(usable[int(rng.integers(len(usable)))], rng)
    if "enum" in schema:
        return schema["enum"][int(rng.integers(len(schema["enum"])))]
    kind = schema.get("type")
    if kind == "integer":
        low, high = schema.get("minimum", 0), schema.get("maximum", 1_000)
        return int(rng.choice([low, high, (low + high) // 2]))
    if kind == "number":
        return float(rng.choice([schema.get("minimum", 0.0), schema.get("maximum", 100.0)]))
    if kind == "boolean":
        return bool(rng.integers(2))
    if kind == "array":
        size = int(schema.get("maxItems", 8))
        items = schema.get("items", {"type": "string"})
        if SEEN_IDS and items.get("type") == "string" and rng.random() < 0.5:
            pool = _ids_for(schema, rng)
            return [str(x) for x in rng.choice(pool, size=min(size, len(pool)), replace=False)]
        return [argument_values(items, rng) for _ in range(size)]
    limit = int(schema.get("maxLength", 500))
    pick = int(rng.integers(4))
    separator = str(rng.choice(SEPARATORS))
    if pick == 0:  # a broad short string
        return str(rng.choice(ARGUMENT_STRINGS))[:limit]
    if pick == 1:  # distinct common words to the length limit
        words = list(rng.permutation(LONG_WORDS)) + [f"w{i}" for i in range(200)]
        return separator.join(words)[:limit].strip() or "a"
    if pick == 2 and SEEN_IDS and limit <= 40:  # an id the env printed
        return str(rng.choice(SEEN_IDS))[:limit]
    word = str(rng.choice(ARGUMENT_STRINGS))
    return (word + separator) * (limit // (len(word) + 1))  # one broad word, repeated


def argument_cases(
    max_length: int, tools: list[dict[str, Any]], seed: int = 0, searches: int = 48
) -> list[tuple[str, str]]:
    """A seeded random search over tool arguments: per tool, actions of as many copies of one
    hostile call as the limits take (32 calls, or fewer when the action would pass
    ``max_length``), and mixed actions of hostile calls to every tool."""
    from agentenv.engine.tools import DEFAULT_MAX_CALLS_PER_ACTION

    rng = np.random.default_rng(seed)
    functions = [t["function"] for t in tools]

    def call(function: dict[str, Any]) -> str:
        properties = function["parameters"].get("properties", {})
        arguments = {
            k: argument_values(v, rng) for k, v in properties.items() if rng.random() < 0.8
        }
        for k in function["parameters"].get("required", []):
            arguments.setdefault(k, argument_values(properties[k], rng))
        return f"<tool_call>{json.dumps({'name': function['name'], 'arguments': arguments})}</tool_call>"

    def fit(calls: list[str]) -> str:
        out, size = [], 0
        for c in calls[:DEFAULT_MAX_CALLS_PER_ACTION]:
            if size + len(c) > max_length:
                break
            out.append(c)
            size += len(c)
        return "".join(out)

    cases = []
    for index in range(searches):
        if functions and index % 3 < 2:
            function = functions[int(rng.integers(len(functions)))]
            one = call(function)
            cases.append(
                (f"arguments #{index} ({function['name']} x32): {one[:70]}", fit([one] * 32))
            )
        elif functions:
            mixed = [call(functions[int(rng.integers(len(functions)))]) for _ in range(32)]
            cases.append((f"arguments #{index} (mixed)", fit(mixed)))
    return cases


ONLY_ARGUMENTS = False
"""Set by ``--arguments``: time only the search over tool arguments (twice as many searches)."""
FLOOD_TURNS = 6
"""The distinct-id ``<say>`` flood is timed on each of the timed agent's turns 1..this."""


def build(target: Target) -> Any:
    """The env of a target (gym.make with its registered wrappers, or the AEC dialogue)."""
    if target.role is None:
        import gymnasium as gym

        import agentenv  # noqa: F401

        return gym.make(target.env_id)
    from agentenv.multiagent import make

    return make(target.env_id)


def ready(env: Any, target: Target) -> tuple[int, list[dict[str, Any]]]:
    """Reset to a fixed task and play scripted moves until the timed agent acts; (max_length, tools)."""
    if target.role is None:
        _, info = env.reset(seed=0, options={"index": 0})
        return env.action_space.max_length, info["tools"]
    env.reset(seed=0, options={"index": 0})
    agent = env.lead if target.role == "lead" else env.other
    while env.agent_selection != agent:
        env.step(
            "<say>I need help.</say>"
            if env.agent_selection == env.other
            else "<say>What do you need?</say>"
        )
    return env.action_space(agent).max_length, env.infos[env.lead]["tools"]


def harvest_ids(env: Any, target: Target, tools: list[dict[str, Any]]) -> None:
    """Fill :data:`SEEN_IDS` with ids from a single-agent env's own answers to broad calls of each
    tool (one call each, on a fresh episode, untimed)."""
    found: set[str] = set()
    for tool in tools:
        function = tool["function"]
        properties = function["parameters"].get("properties", {})
        arguments: dict[str, Any] = {
            name: prop["maximum"]  # as many results as the tool lists
            for name, prop in properties.items()
            if prop.get("type") == "integer" and "maximum" in prop
        }
        for name in function["parameters"].get("required", []):
            if properties.get(name, {}).get("type") == "string":
                arguments[name] = "abnormality of the hand"
        ready(env, target)
        call = json.dumps({"name": function["name"], "arguments": arguments})
        try:
            observation = env.step(f"<tool_call>{call}</tool_call>")[0]
        except Exception:  # noqa: BLE001 - a tool that needs other arguments gives no ids
            continue
        found.update(_ID.findall(str(observation)))
    SEEN_IDS[:] = sorted(found)[:400]


def cases_for(env: Any, target: Target) -> list[tuple[str, str, int]]:
    """Catalogue and generated cases, sized for this env's action limit and tools, as
    ``(name, text, earlier turns)``: the text is sent that many times untimed before the timed step."""
    catalogue = load_catalogue()
    max_length, tools = ready(env, target)
    if target.role is None:
        harvest_ids(env, target, tools)
        max_length, tools = ready(env, target)
    if ONLY_ARGUMENTS:
        return [(name, text, 0) for name, text in argument_cases(max_length, tools, searches=96)]
    tool, arg = catalogue.string_tool(tools)
    listed = [(c.name, c.text) for c in catalogue.hostile_cases(max_length, tool, arg)]
    cases = [
        (name, text, 0)
        for name, text in listed
        + generated_cases(max_length, tool, arg)
        + distinct_id_cases(max_length, tool, arg)
        + argument_cases(max_length, tools)
    ]
    if target.role is not None:
        flood = next(text for name, text, _ in cases if name == "say(distinct HP ids)")
        cases += [
            (f"say(distinct HP ids), turn {k}", flood, k - 1) for k in range(2, FLOOD_TURNS + 1)
        ]
    return cases


def replay(env: Any, target: Target, text: str, times: int) -> None:
    """Send ``text`` as the timed agent ``times`` times, the other side answering with its scripted
    policy, and stop when it is the timed agent's turn again (or the dialogue ended)."""
    if target.role is None:
        for _ in range(times):
            env.step(text)
        return
    agent = env.lead if target.role == "lead" else env.other
    for _ in range(times):
        env.step(text)
        while env.agents and env.agent_selection != agent:
            other = env.agent_selection
            policy = env.default_policy(other) if other == env.other else None
            env.step(
                policy.act(env.observe(other), env.infos[other]) if policy else "<say>Go on.</say>"
            )


def time_case(env: Any, target: Target, text: str, earlier: int = 0) -> tuple[float, str]:
    """Seconds of one step on a fresh episode (after ``earlier`` untimed sends of the same text),
    the minimum of up to three runs, and any exception.

    A slow first run is always repeated: an index a family builds on first use (a disease-name
    index, say) is a one-off cost, not the input's. A run over 5 s is not repeated.
    """
    best = float("inf")
    for run in range(3):
        ready(env, target)
        replay(env, target, text, earlier)
        if target.role is not None and not env.agents:
            return 0.0, ""  # the dialogue ended before this turn: nothing to time
        start = time.perf_counter()
        try:
            env.step(text)
        except Exception as exc:  # noqa: BLE001 - an escaping exception is a finding, not a crash
            return time.perf_counter() - start, f"{type(exc).__name__}: {str(exc)[:80]}"
        best = min(best, time.perf_counter() - start)
        if best > 5.0 or (run >= 1 and best > 0.1):
            break
    return best, ""


def worker(target: Target, start: int, conn: Any) -> None:
    """Build the env, send the case names, then (index, seconds, exception) per case from ``start``."""
    env = build(target)
    cases = cases_for(env, target)
    conn.send([name for name, _, _ in cases])
    for index in range(start, len(cases)):
        _, text, earlier = cases[index]
        seconds, error = time_case(env, target, text, earlier)
        conn.send((index, seconds, error))
    conn.close()


def run_target(target: Target, timeout_s: float) -> list[dict[str, Any]]:
    """Every case of one target, restarting the worker after a case that times out."""
    ctx = mp.get_context("fork")
    results: list[dict[str, Any]] = []
    start, names = 0, None
    while names is None or start < len(names):
        parent, child = ctx.Pipe(duplex=False)
        proc = ctx.Process(target=worker, args=(target, start, child), daemon=True)
        proc.start()
        child.close()
        if not parent.poll(300):
            raise RuntimeError(f"{target.label}: the env did not build in 300 s")
        names = parent.recv()
        while start < len(names):
            if not parent.poll(timeout_s):
                proc.kill()
                proc.join()
                results.append({"case": names[start], "ms": None, "error": f">{timeout_s:g} s"})
                start += 1
                break
            index, seconds, error = parent.recv()
            results.append({"case": names[index], "ms": seconds * 1000.0, "error": error})
            start = index + 1
        else:
            proc.join()
    return results


def targets(ids: list[str] | None) -> list[Target]:
    """Every registered gym id, and both agents of every dialogue (or the ids asked for)."""
    import agentenv
    from agentenv.multiagent import env_ids

    out = [Target(i) for i in agentenv.env_ids()]
    for dialogue_id in env_ids():
        out += [Target(dialogue_id, "lead"), Target(dialogue_id, "other")]
    return [t for t in out if not ids or t.env_id in ids]


def report(target: Target, results: list[dict[str, Any]]) -> dict[str, Any]:
    """The worst case of one target, the cases over budget, timeouts and exceptions."""
    timed = [r for r in results if r["ms"] is not None]
    worst = max(timed, key=lambda r: r["ms"]) if timed else None
    timeouts = [r["case"] for r in results if r["error"].startswith(">")]
    raised = [f"{r['case']}: {r['error']}" for r in results if r["ms"] is not None and r["error"]]
    return {
        "target": target.label,
        "cases": len(results),
        "worst_case": timeouts[0] if timeouts else (worst["case"] if worst else None),
        "worst_ms": None if timeouts else (round(worst["ms"], 2) if worst else None),
        "worst_timed_case": worst["case"] if worst else None,
        "worst_timed_ms": round(worst["ms"], 2) if worst else None,
        "ratio_to_budget": None if timeouts or not worst else round(worst["ms"] / BUDGET_MS, 3),
        "over_budget": sorted(r["case"] for r in timed if r["ms"] > BUDGET_MS),
        "timeouts": timeouts,
        "raised": raised,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--timeout", type=float, default=15.0, help="seconds before a case counts as '>T s'"
    )
    parser.add_argument("--ids", nargs="*", help="only these env ids")
    parser.add_argument("--json", help="write the full results to this file")
    parser.add_argument(
        "--arguments", action="store_true", help="only the search over tool arguments"
    )
    args = parser.parse_args()
    global ONLY_ARGUMENTS
    ONLY_ARGUMENTS = args.arguments
    rows = []
    for target in targets(args.ids):
        row = report(target, run_target(target, args.timeout))
        rows.append(row)
        if row["worst_ms"] is None and not row["timeouts"]:
            print(f"{row['target']:<36} no cases (no tools to call)", flush=True)
            continue
        worst = f">{args.timeout:g} s" if row["timeouts"] else f"{row['worst_ms']:.2f} ms"
        ratio = "n/a" if row["ratio_to_budget"] is None else f"{row['ratio_to_budget']:.2f}x"
        print(
            f"{row['target']:<36} worst {worst:>10} ({ratio} of {BUDGET_MS:g} ms) on {row['worst_case']!r}; "
            f"{len(row['over_budget'])} over budget, {len(row['timeouts'])} timeouts, {len(row['raised'])} raised",
            flush=True,
        )
        for case in row["timeouts"]:
            print(f"    timeout: {case!r}", flush=True)
        for case in row["raised"]:
            print(f"    raised:  {case}", flush=True)
        if row["timeouts"]:
            print(
                f"    worst finished: {row['worst_timed_ms']} ms on {row['worst_timed_case']!r}",
                flush=True,
            )
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2), encoding="utf-8")


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    main()
