"""``agentenv judge-consistency``: how stable is an LLM judge on the answers of an ``agentenv eval`` run?

It reads ``episodes.jsonl``, asks the judge every answer in each paraphrased
prompt, prints the consistency report, and exits 0 when the judge is stable
(Fleiss' kappa >= ``--min-kappa`` and flip rate <= ``--max-flip-rate``), 1
when it is not, and 2 when the endpoint or the input fails. The lead wires it
into ``agentenv.cli.main`` with :func:`add_parser` and :func:`run`.

The env id (``--env``) picks the task family whose ``gold_text`` shows the
gold to the judge; without it, the env id recorded in the ``summary.json``
next to the episodes file is used, and the two must agree when both exist.

Example:
    >>> import argparse
    >>> sub = argparse.ArgumentParser(prog="agentenv").add_subparsers(dest="command")
    >>> parser = add_parser(sub)
    >>> args = parser.parse_args(["--env", "MediaSearch-v0", "--episodes", "e.jsonl", "--endpoint", "http://127.0.0.1:8000"])
    >>> args.model, args.min_kappa, args.retries
    ('judge', 0.8, 2)
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from pathlib import Path
from typing import Any

from agentenv.cli.limit_flags import number_in, positive_int
from agentenv.cli.report_file import add_overwrite_flag, check_report_file


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``judge-consistency`` sub-command to an ``add_subparsers()`` object."""
    from agentenv.cli.help_format import HelpFormatter, plain

    p = subparsers.add_parser(
        "judge-consistency",
        help="measure an LLM judge's agreement across paraphrased prompts and with the rule-based grader",
        description=plain(__doc__.split("\n\n")[0].replace("\n", " "))
        + " Exit status: 0 stable, 1 unstable, "
        "2 the endpoint or the input failed.",
        formatter_class=HelpFormatter,
    )
    p.add_argument(
        "--env",
        help="the env id the episodes come from (a registered id); "
        "default: env_id in the summary.json next to --episodes",
    )
    p.add_argument(
        "--episodes", required=True, type=Path, help="episodes.jsonl written by `agentenv eval`"
    )
    p.add_argument(
        "--endpoint",
        required=True,
        help="base URL of an OpenAI-compatible server, e.g. http://127.0.0.1:8000",
    )
    p.add_argument(
        "--model", default="judge", help="model name sent to the endpoint, as the server serves it"
    )
    p.add_argument(
        "--api-key-env",
        metavar="VAR",
        help="environment variable holding a bearer token, if the endpoint needs one",
    )
    p.add_argument(
        "--cache",
        type=Path,
        help="JSONL verdict cache: a rerun makes no request for cached verdicts (default: no cache)",
    )
    p.add_argument(
        "--limit", type=positive_int, help="judge only the first N records (default: all)"
    )
    p.add_argument("--workers", type=positive_int, default=4, help="concurrent requests")
    p.add_argument(
        "--timeout", type=number_in(0.001, 3600.0), default=30.0, help="seconds per request"
    )
    p.add_argument("--retries", type=int, default=2, help="extra attempts on timeouts, 429 and 5xx")
    p.add_argument(
        "--min-kappa",
        type=number_in(-1.0, 1.0),
        default=0.8,
        help="Fleiss' kappa a stable judge reaches",
    )
    p.add_argument(
        "--max-flip-rate",
        type=number_in(0.0, 1.0),
        default=0.05,
        help="flip rate a stable judge stays under",
    )
    p.add_argument("--json", type=Path, help="also write the report as JSON")
    add_overwrite_flag(p, "--json")
    return p


def run(args: argparse.Namespace) -> int:
    """Run the sub-command; returns the exit code."""
    from agentenv.errors import UserInputError
    from agentenv.judge.client import JudgeEndpointError
    from agentenv.judge.consistency import judge_consistency, read_episodes
    from agentenv.judge.gold import family_gold_text, run_env_id
    from agentenv.judge.prompts import JudgeReplyError
    from agentenv.judge.reward import JudgeReward
    from agentenv.registration import env_ids

    if args.env is not None and ":" not in args.env and args.env not in env_ids():
        return _fail(f"--env {args.env!r} is not a registered id; known: {', '.join(env_ids())}")
    if not args.episodes.exists():
        return _fail(
            f"--episodes {args.episodes}: no such file (write one with `agentenv eval ... --out DIR`)"
        )
    check_report_file(args.json, "--json", overwrite=args.overwrite, inputs=(args.episodes,))
    try:
        recorded = run_env_id(args.episodes)
    except ValueError as exc:
        return _fail(str(exc))
    if args.env is None and recorded is None:
        return _fail(f"--env is needed: no summary.json with an env_id next to {args.episodes}")
    if args.env is not None and recorded is not None and recorded != args.env:
        return _fail(
            f"--env {args.env!r} disagrees with the run's summary.json (env_id {recorded!r})"
        )
    env_id = args.env or recorded
    try:
        gold_text = family_gold_text(env_id)
    except (UserInputError, ImportError) as exc:
        return _fail(f"env {env_id!r}: {exc}")
    api_key = None
    if args.api_key_env:
        api_key = os.environ.get(args.api_key_env)
        if not api_key:
            return _fail(
                f"--api-key-env {args.api_key_env}: that environment variable is empty or unset"
            )
    try:
        records = read_episodes(args.episodes)[: args.limit]
        judge = JudgeReward(
            args.endpoint,
            args.model,
            cache_path=args.cache,
            timeout_s=args.timeout,
            retries=args.retries,
            api_key=api_key,
        )
        report = judge_consistency(
            records, judge, gold_text=gold_text, workers=max(1, args.workers)
        )
    except (JudgeEndpointError, JudgeReplyError, ValueError) as exc:
        return _fail(str(exc))
    stable = report.stable(args.min_kappa, args.max_flip_rate)
    from agentenv.terminal_text import terminal_text

    print(terminal_text(f"judge {args.model!r} at {args.endpoint} on {env_id} ({args.episodes})"))
    print(report.format())
    if math.isnan(report.fleiss_kappa):
        print(
            "\nnote: every verdict was the same, so the judge is stable across prompts without "
            "telling one answer from another; read its agreement with the rules above before "
            "using it as a reward"
        )
    print(
        f"\n{'STABLE' if stable else 'UNSTABLE'} across prompts: kappa >= {args.min_kappa} and flip rate <= "
        f"{args.max_flip_rate} {'hold' if stable else 'do not hold'} (agreement with the rules is reported above, "
        f"not judged); HTTP requests made: {judge.client.requests}"
    )
    if args.json is not None:
        from agentenv.evaluation.run_dir import write_atomic

        payload = {"env": env_id, "model": args.model, "stable": stable, **report.to_dict()}
        write_atomic(args.json, json.dumps(payload, indent=2) + "\n")
    return 0 if stable else 1


def _fail(message: str) -> int:
    """One error line on stderr, terminal-safe (it quotes paths and the judge endpoint's replies);
    exit status 2."""
    from agentenv.terminal_text import terminal_text

    print(terminal_text(f"agentenv judge-consistency: error: {message}"), file=sys.stderr)
    return 2
