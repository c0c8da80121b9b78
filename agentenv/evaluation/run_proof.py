"""What a ``summary.json`` must agree with before a leaderboard ranks it: its ``run.json`` and its rows.

Why a module of its own: the digest chain proves the rows (:func:`~agentenv.evaluation.run_dir.read_chain`),
but a summary is what the board reads, and a summary checked on only a few fields let other fields
be edited freely: a validation run relabelled ``split: test`` joined the test board, rows cut from
the end with the summary's count and means rewritten passed as a complete run, an interval of
[-5, 7] was shown as it was. So every field that the run's definition (``run.json``) records is
compared with it, and every field that the rows alone decide (:data:`~agentenv.evaluation.report.ROW_FIGURES`)
is recomputed from the verified rows and compared. A summary that differs anywhere is refused,
naming the field, both values and the file. The corpus checksums, the reward preset's name and the
task count are compared too where ``run.json`` records them (runs written since they join its
header, :data:`~agentenv.evaluation.run_dir.SERVED_KEYS`); timings are shown as the summary says.
The fingerprint covers what was shown and how it was graded.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from agentenv.evaluation.run_dir import SERVED_KEYS
from agentenv.evaluation.run_files import RunFileError, shown_value
from agentenv.evaluation.summary import Summary

__all__ = ["check_against_identity", "check_row_figures", "same_value"]


def same_value(a: Any, b: Any) -> bool:
    """Whether two JSON values are the same, floats to within rounding (1e-9 relative).

    Example:
        >>> same_value({"a": [1, 0.1 + 0.2]}, {"a": [1, 0.3]}), same_value({"a": 1}, {"a": 1, "b": 2})
        (True, False)
    """
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(same_value(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def check_against_identity(
    summary_file: Path, summary: Summary, run_json: Path, recorded: Mapping[str, Any], rows: int
) -> None:
    """The summary's definition fields against ``run.json`` (``recorded``), and its completeness against
    the planned episodes there and the ``rows`` verified.

    Raises:
        RunFileError: naming the field, both values and both files.
    """
    tasks_sha256 = summary.tasks_file.sha256 if summary.tasks_file is not None else None
    agent_args = recorded.get("agent_args")
    expected: list[tuple[str, Any, Any]] = [
        ("env_id", summary.env_id, recorded.get("env_id")),
        ("env_kwargs", summary.env_kwargs, recorded.get("env_kwargs")),
        ("split", summary.split, recorded.get("split")),
        ("tasks_file.sha256", tasks_sha256, recorded.get("tasks_sha256")),
        ("seed", summary.seed, recorded.get("seed")),
        ("package_version", summary.package_version, recorded.get("package_version")),
        ("fingerprint", summary.fingerprint, recorded.get("fingerprint")),
        ("agent", summary.agent, recorded.get("agent")),
        (
            "agent_args",
            summary.agent_args,
            {str(k): str(v) for k, v in agent_args.items()}
            if isinstance(agent_args, Mapping)
            else agent_args,
        ),
    ]
    served = {
        "corpus_checksums": summary.corpus_checksums,
        "reward_preset": summary.reward_preset,
        "n_tasks": summary.n_tasks,
    }
    expected += [(key, served[key], recorded[key]) for key in SERVED_KEYS if key in recorded]
    if summary.tasks_file is not None and "n_tasks" in recorded:
        # the board's caption shows the task file's count: it is the task count the env served
        expected.append(("tasks_file.count", summary.tasks_file.count, recorded["n_tasks"]))
    for name, mine, theirs in expected:
        if not same_value(json.loads(json.dumps(mine, default=str)), theirs):
            raise RunFileError(
                f"{summary_file}: {name} is {shown_value(mine)} but {run_json} says {shown_value(theirs)}; "
                "the summary does not belong to these episodes (or was edited)"
            )
    version = int(summary.env_id.rsplit("-v", 1)[-1]) if "-v" in summary.env_id else 0
    if summary.env_version != version:
        raise RunFileError(
            f"{summary_file}: env_version is {summary.env_version} but its env id "
            f"{summary.env_id!r} is version {version}; the summary was edited"
        )
    planned = recorded.get("episodes")
    if type(planned) is not int:
        raise RunFileError(
            f"{run_json}: 'episodes' is {shown_value(planned)}, not the number of episodes planned"
        )
    if summary.complete and rows != planned:
        raise RunFileError(
            f"{summary_file}: says the run is complete, but {run_json} planned {planned} episodes "
            f"and {rows} were run; finish it with `agentenv eval ... --resume`"
        )
    if not summary.complete and summary.episodes_planned != planned:
        raise RunFileError(
            f"{summary_file}: episodes_planned is {summary.episodes_planned} but {run_json} planned "
            f"{planned}; the summary was edited"
        )


def check_row_figures(
    summary_file: Path, summary: Summary, episodes: Path, records: Sequence[Mapping[str, Any]]
) -> None:
    """Every field the rows alone decide, recomputed from the verified ``records`` (as many as the
    summary's ``episodes``: :func:`~agentenv.evaluation.leaderboard.verify_run` checks that first)
    and compared.

    Raises:
        RunFileError: naming the first field that differs, the summary's value and the rows'.
    """
    from agentenv.evaluation.report import row_figures

    figures = json.loads(json.dumps(_plain(row_figures(records, summary.seed))))
    stored = json.loads(summary.model_dump_json(include=set(figures)))
    for name, actual in figures.items():
        claimed = stored.get(name)
        if same_value(claimed, actual):
            continue
        where, mine, theirs = name, claimed, actual
        if isinstance(claimed, Mapping) and isinstance(actual, Mapping):
            for key in sorted(set(claimed) | set(actual)):
                if not same_value(claimed.get(key), actual.get(key)):
                    where, mine, theirs = f"{name}.{key}", claimed.get(key), actual.get(key)
                    break
        raise RunFileError(
            f"{summary_file}: {where} is {shown_value(mine)} but its {len(records)} episodes in "
            f"{episodes} give {shown_value(theirs)}; the summary was edited"
        )


def _plain(figures: Mapping[str, Any]) -> dict[str, Any]:
    """``row_figures`` with its pydantic intervals as plain dicts."""
    out = dict(figures)
    out["intervals"] = {k: m.model_dump() for k, m in figures["intervals"].items()}
    return out
