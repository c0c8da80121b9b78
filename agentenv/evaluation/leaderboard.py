"""The leaderboard: many ``summary.json`` files in, one comparison out (Markdown, HTML, PNG).

Why it refuses instead of warning: two numbers on one board must be
comparable. Results of one env id are compared only when they were run on
the same corpus (checksums), the same env version and the same split; a
run on the user's own tasks (``--tasks``, split ``custom``) is compared only
with runs on the same task file (sha256), never with a split. A mismatch is
an error naming both files and both values, since a silently mixed board is
worse than none.

RESULTS may be run directories, their ``summary.json`` files, or any folder
above them: :func:`find_results` collects every ``summary.json`` below a
folder, so ``agentenv leaderboard results/`` reads all the runs of
``agentenv eval --out results/<run>``.

A failed run (more than half of its episodes ended in an agent failure: the
model endpoint was down, timed out or refused the request) is refused too,
naming the file and the failure count: its accuracy measures the endpoint,
not the policy. ``keep_failed=True`` (``--keep-failed``) keeps such runs; their
episodes cell then says how many episodes failed.

Each row is one run: the agent (with its ``--agent-args``, secrets and URL credentials left out),
accuracy with its 95% bootstrap interval, mean reward, mean tool calls and
turns, invalid-action rate and the number of episodes. Rows are sorted by
accuracy. :func:`write_leaderboard` writes ``leaderboard.md``,
``leaderboard.html`` (self-contained, sortable) and, with matplotlib (the
``leaderboard`` extra), ``accuracy_vs_tool_calls.png`` and
``accuracy_by_difficulty.png``.

Why it checks the rows: a board is only worth what its rows prove. A
summary written with row digests (``episodes_digest``) is ranked only after
its ``episodes.jsonl`` is verified (:func:`verify_run`): every row's digest
chains from ``run.json``'s header, the last one is the summary's, the
summary's definition is ``run.json``'s and every figure the rows decide is
recomputed from them (:mod:`~agentenv.evaluation.run_proof`); values out of
range (NaN, inf, an accuracy above 1) are refused where they are read, naming
file and line. A summary written without digests by an older agentenv (no
fingerprint, no chained ``run.json``) is shown, marked *unverified* in its row
and its table's caption; one whose digest was taken out is refused. Runs of
one split are ranked together only when they played the same episodes (same
seed and count, or every task once). Runs of one env id are ranked together only when their
fingerprints (system prompt, tool schemas, reward definition, grader
version: :mod:`~agentenv.evaluation.fingerprint`) are the same; otherwise the
error names the part that differs.

Every string on a board that the package did not write itself (an agent's
name and arguments, a ``--tasks`` path, a reward's name, env options, the
title, anything else a ``summary.json`` holds) is shown as inert text: in the
Markdown as HTML entities or a code span with a long enough fence, on one
line; escaped in the HTML; drawn literally (no mathtext) in the plots. A label
leaves out secret arguments (by whole words of their names: ``api_key``,
``hf_token``, not ``max_tokens``) and the credentials of a URL. A table's
caption names the env options that differ from the id's registered defaults
(runs with different options never share a table) and tells a custom reward
from the shipped preset of the same name by the fingerprint's reward hash.

The pieces every rendering shares (entries, labels, row cells) live in
:mod:`~agentenv.evaluation.leaderboard_rows`, below this module and the
renderers it calls, so no two of them import each other.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from pydantic import ValidationError

from agentenv.evaluation.fingerprint import describe_part, differing
from agentenv.evaluation.leaderboard_html import render_html
from agentenv.evaluation.leaderboard_plots import (
    accuracy_by_difficulty,
    accuracy_vs_tool_calls,
    plot_library,
)
from agentenv.evaluation.leaderboard_rows import (
    COLUMNS,
    PLOT_FILES,
    Entry,
    agent_label,
    env_caption,
    md_text,
    row_cells,
)
from agentenv.evaluation.run_dir import (
    EPISODES_FILE,
    IDENTITY_FILE,
    read_chain,
    run_header,
)
from agentenv.evaluation.run_files import (
    RunFileError,
    header_digest,
    read_json_object,
)
from agentenv.evaluation.run_proof import check_against_identity, check_row_figures
from agentenv.evaluation.run_values import check_summary
from agentenv.evaluation.summary import Summary


class LeaderboardError(ValueError):
    """Results that cannot share a board (or cannot be read); the message says which and why."""


def load_entry(path: Path) -> Entry:
    """Read one result: a run directory holding ``summary.json``, or the file itself; check its figures'
    ranges and, when it was written with row digests, its rows (:func:`verify_run`).

    Raises:
        LeaderboardError: naming the file (and line, or field) and what is wrong, in one line.
    """
    file = path / "summary.json" if path.is_dir() else path
    try:
        data = read_json_object(file, "a summary.json")
    except RunFileError as exc:
        raise LeaderboardError(str(exc)) from None
    except OSError as exc:
        raise LeaderboardError(
            f"{path}: cannot read a summary.json ({exc.strerror or exc})"
        ) from None
    try:
        summary = Summary.model_validate(data, strict=True)  # "6" is no count, true no seed
    except ValidationError as exc:
        # One line: the first problem and where; the whole pydantic report is many lines of noise here.
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ())) or "the file"
        more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
        raise LeaderboardError(
            f"{file}: not a valid summary.json: {where}: {first['msg']}{more}"
        ) from None
    try:
        check_summary(summary, str(file))
        verified = summary.episodes_digest is not None
        if verified:
            verify_run(file, summary)
        else:
            refuse_unchained(file, summary)
    except RunFileError as exc:
        raise LeaderboardError(str(exc)) from None
    return Entry(summary, file, agent_label(summary.agent, summary.agent_args), verified)


def verify_run(summary_file: Path, summary: Summary) -> None:
    """Check a summary against the rows it claims: ``run.json`` and ``episodes.jsonl`` beside it.

    Every row's digest must chain from ``run.json``'s header and the last must be the summary's
    ``episodes_digest``; the summary's definition (env, kwargs, split or task file, seed, agent and its
    arguments, package version, fingerprint) must be ``run.json``'s, a complete run must hold the
    episodes ``run.json`` planned, and every figure the rows decide (means, intervals, rates, per-kind
    and per-difficulty accuracy, component means, agent failures) must be the rows'
    (:mod:`~agentenv.evaluation.run_proof`).

    Raises:
        RunFileError: naming the file (and line, or field) that breaks the proof.
    """
    folder = summary_file.parent
    run_json, episodes = folder / IDENTITY_FILE, folder / EPISODES_FILE
    try:
        recorded = read_json_object(run_json, "a run.json")
    except FileNotFoundError:
        raise RunFileError(
            f"{summary_file}: names an episodes_digest but {run_json} is missing; copy the whole run "
            "directory (run.json, episodes.jsonl, summary.json)"
        ) from None
    header = run_header(recorded)
    try:
        records, last, _ = read_chain(episodes, header_digest(header))
    except FileNotFoundError:
        raise RunFileError(
            f"{summary_file}: names an episodes_digest but {episodes} is missing; copy the whole run "
            "directory"
        ) from None
    if len(records) != summary.episodes:
        raise RunFileError(
            f"{episodes}: holds {len(records)} episodes, {summary_file} says {summary.episodes}; "
            "rows were cut from its end or the summary was edited"
        )
    check_against_identity(summary_file, summary, run_json, recorded, len(records))
    if last != summary.episodes_digest:
        raise RunFileError(
            f"{summary_file}: episodes_digest does not match the last row of {episodes} "
            f"(line {len(records)}); the summary was edited or belongs to another run"
        )
    check_row_figures(summary_file, summary, episodes, records)


def refuse_unchained(summary_file: Path, summary: Summary) -> None:
    """A summary without ``episodes_digest`` is shown unverified only if it is what an older agentenv
    wrote: no fingerprint, and no ``run.json`` with row digests beside it.

    Raises:
        RunFileError: a summary whose digest was taken out of a run that has one.
    """
    run_json = summary_file.parent / IDENTITY_FILE
    chained = False
    if os.path.lexists(run_json):
        try:
            chained = "digest_format" in read_json_object(run_json, "a run.json")
        except FileNotFoundError:
            chained = False
    if chained or summary.fingerprint is not None:
        why = f"{run_json} says its rows are chained" if chained else "it has a run fingerprint"
        raise RunFileError(
            f"{summary_file}: has no episodes_digest, but {why}: a summary written by this agentenv "
            "always names its last row's digest, so it was edited; re-run it or restore the summary"
        )


def find_results(paths: Sequence[Path]) -> list[Path]:
    """Each path as a result: a file as itself, a folder as every ``summary.json`` at any depth below it.

    Raises:
        LeaderboardError: a path that does not exist, or a folder with no ``summary.json`` below it.
    """
    found: list[Path] = []
    for path in map(Path, paths):
        if path.is_dir():
            summaries = sorted(  # not in hidden folders: an overwritten run waits in one
                f
                for f in path.rglob("summary.json")
                if not any(part.startswith(".") for part in f.relative_to(path).parts[:-1])
            )
            if not summaries:
                raise LeaderboardError(
                    f"{path}: no summary.json in it or below it (write runs with `agentenv eval --out`)"
                )
            found += summaries
        elif path.exists():
            found.append(path)
        else:
            hint = (
                " (a shell pattern that matched nothing?)"
                if any(c in str(path) for c in "*?[")
                else ""
            )
            raise LeaderboardError(f"{path}: no such file or directory{hint}")
    return list(dict.fromkeys(found))


def refuse_failed(entries: Sequence[Entry]) -> None:
    """Raise for the first failed run (most episodes ended in an agent failure) or incomplete one.

    Raises:
        LeaderboardError: naming the file, the failure count and the most common reason.
    """
    for entry in entries:
        s = entry.summary
        if not s.complete:
            raise LeaderboardError(
                f"{entry.source}: an incomplete run ({s.episodes} of {s.episodes_planned} episodes; {s.stopped or 'stopped early'}); "
                "finish it with the same `agentenv eval` command and --resume, or pass --keep-failed to show it"
            )
        if s.failed:
            reason = next(iter(s.agent_failure_reasons), "unknown")
            raise LeaderboardError(
                f"{entry.source}: a failed run: {s.agent_failures} of {s.episodes} episodes "
                f"({s.agent_failure_rate:.0%}) ended in an agent failure (most common: {reason}); its accuracy "
                "measures the endpoint, not the policy. Re-run it, or pass --keep-failed to show it anyway"
            )


def group_by_env(entries: Sequence[Entry]) -> dict[str, list[Entry]]:
    """Entries per env id (registry order, then other ids by name), rows sorted by accuracy.

    Raises:
        LeaderboardError: results of one env id that are not comparable.
    """
    from agentenv.registration import env_ids

    groups: dict[str, list[Entry]] = {}
    for entry in entries:
        groups.setdefault(entry.summary.env_id, []).append(entry)
    for env_id, group in groups.items():
        _check_comparable(env_id, group)
        group.sort(key=lambda e: (-e.summary.metrics.get("accuracy", 0.0), e.label))
    order = {env_id: i for i, env_id in enumerate(env_ids())}
    return dict(sorted(groups.items(), key=lambda item: (order.get(item[0], len(order)), item[0])))


def _md_row(cells: Sequence[str]) -> str:
    """A table row in Markdown. The label (the first cell, a user's text) goes through
    :func:`~agentenv.evaluation.leaderboard_rows.md_text`: an allow-list that turns ``|``, ``<``,
    ``[``, a backslash and every other character that could build markup into an HTML entity, so a
    label splits no row and starts no HTML, link or image (a backslash escape would not do:
    ``x\\|`` ends one in Python-Markdown's tables). The other cells are numbers formatted by
    :func:`~agentenv.evaluation.leaderboard_rows.row_cells`, shown as they are."""
    label, *numbers = cells
    return "| " + " | ".join([md_text(label), *numbers]) + " |"


def _whole_split(summary: Summary) -> bool:
    """Whether a run played every task of its task set once (then its seed only orders them)."""
    return summary.n_tasks is not None and summary.episodes == summary.n_tasks


def _check_comparable(env_id: str, group: Sequence[Entry]) -> None:
    first = group[0]
    seen = {first.label: first}
    for other in group[1:]:
        a, b = first.summary, other.summary
        if (
            (a.tasks_file is None) != (b.tasks_file is None)
            or "custom" in {a.split, b.split}
            and a.split != b.split
        ):
            custom, split = (
                (first, other)
                if a.tasks_file is not None or a.split == "custom"
                else (other, first)
            )
            raise LeaderboardError(
                f"{env_id}: {custom.source} ran on custom tasks"
                + (f" ({custom.summary.tasks_file.path})" if custom.summary.tasks_file else "")
                + f" but {split.source} on the {split.summary.split!r} split; "
                "a board never compares a custom task file with a split: make one board per task set"
            )
        if (
            a.tasks_file is not None
            and b.tasks_file is not None
            and a.tasks_file.sha256 != b.tasks_file.sha256
        ):
            raise LeaderboardError(
                f"{env_id}: {first.source} and {other.source} ran on different task files "
                f"({a.tasks_file.path} sha256 {a.tasks_file.sha256[:12]} vs {b.tasks_file.path} sha256 "
                f"{b.tasks_file.sha256[:12]}); a board compares runs on one task set"
            )
        for what, x, y in (
            ("env version", a.env_version, b.env_version),
            ("split", a.split, b.split),
        ):
            if x != y:
                raise LeaderboardError(
                    f"{env_id}: {first.source} and {other.source} differ in {what} ({x!r} vs {y!r}); "
                    "a board compares runs of one version on one split: give `agentenv leaderboard` "
                    "the runs of one split (keep each split's runs in a folder of their own, e.g. "
                    "results/casual/)"
                )
        if a.env_kwargs != b.env_kwargs:
            raise LeaderboardError(_different_options(env_id, first, other))
        if (a.seed, a.episodes) != (b.seed, b.episodes) and not (
            _whole_split(a) and _whole_split(b)
        ):
            raise LeaderboardError(
                f"{env_id}: {first.source} and {other.source} played different tasks (seed "
                f"{a.seed}, {a.episodes} episodes vs seed {b.seed}, {b.episodes} episodes: episode i "
                "plays the i-th task of a permutation drawn with the seed); a board ranks runs on "
                "the same episodes: use one --seed and --episodes, or run every task of the split"
            )
        for corpus in sorted(set(a.corpus_checksums) | set(b.corpus_checksums)):
            x, y = a.corpus_checksums.get(corpus), b.corpus_checksums.get(corpus)
            if x != y:
                raise LeaderboardError(
                    f"{env_id}: {first.source} and {other.source} were run on different {corpus!r} corpora "
                    f"(checksum {x} vs {y}); re-run them on the same corpus"
                )
        parts = differing(a.fingerprint, b.fingerprint)
        if parts:
            described = ", ".join(describe_part(p) for p in parts)
            if a.fingerprint is None or b.fingerprint is None:
                old = first if a.fingerprint is None else other
                raise LeaderboardError(
                    f"{env_id}: {old.source} has no run fingerprint (written by an older agentenv), "
                    f"so it cannot be compared with {(other if old is first else first).source}; "
                    "re-run it with this version"
                )
            shown = "; ".join(
                f"{describe_part(p)} {str(a.fingerprint.get(p))[:12]} vs {str(b.fingerprint.get(p))[:12]}"
                for p in parts
            )
            raise LeaderboardError(
                f"{env_id}: {first.source} and {other.source} differ in their {described} ({shown}): "
                "the agents were shown or graded differently, so a board does not rank them together; "
                "re-run them with one version of the env"
            )
        if other.label in seen:
            raise LeaderboardError(
                f"{env_id}: {seen[other.label].source} and {other.source} are both {other.label!r}; keep one"
            )
        seen[other.label] = other


def _different_options(env_id: str, first: Entry, other: Entry) -> str:
    """Why two runs with different env options are not ranked together, naming the options that
    differ (a reward preset is the env's ``reward`` option, set by ``--reward``, not ``--env-arg``)."""
    a, b = first.summary.env_kwargs, other.summary.env_kwargs
    keys = sorted(k for k in set(a) | set(b) if a.get(k, "(default)") != b.get(k, "(default)"))
    shown = ", ".join(f"{k} {a.get(k, '(default)')!r} vs {b.get(k, '(default)')!r}" for k in keys)
    flags = " and ".join(dict.fromkeys("--reward" if k == "reward" else "--env-arg" for k in keys))
    what = "reward presets" if keys == ["reward"] else "env options"
    return (
        f"{env_id}: {first.source} and {other.source} were run with different {what} ({shown}); "
        f"a board ranks runs of one configuration: make one board per {flags} setting"
    )


# ---------------------------------------------------------------------------- Markdown


def markdown_tables(groups: Mapping[str, Sequence[Entry]]) -> str:
    """One Markdown table per env id, with a caption line; every user's string in them is inert
    text (:func:`~agentenv.evaluation.leaderboard_rows.md_text`, ``md_code``)."""
    parts = []
    for env_id, group in groups.items():
        lines = [
            f"### {md_text(env_id)}",
            "",
            env_caption(group),
            "",
            "| " + " | ".join(COLUMNS) + " |",
            "|" + "---|" * len(COLUMNS),
        ]
        lines += [_md_row(row_cells(e.summary, e.label, e.verified)) for e in group]
        parts.append("\n".join(lines))
    return "\n\n".join(parts) + "\n"


def markdown_board(groups: Mapping[str, Sequence[Entry]], title: str) -> str:
    """``leaderboard.md``: the title as a one-line heading of inert text, then :func:`markdown_tables`."""
    return f"# {md_text(title)}\n\n" + markdown_tables(groups)


# ---------------------------------------------------------------------------- writing


def write_leaderboard(
    results: Sequence[Path],
    out: Path,
    *,
    plots: bool = True,
    title: str = "agentenv leaderboard",
    keep_failed: bool = False,
) -> list[Path]:
    """Write the board for ``results`` (run directories or summary files) into ``out``; return the paths.

    ``keep_failed`` shows failed runs (most episodes ended in an agent failure) instead of refusing them.

    The title is one line of inert text in the Markdown (:func:`~agentenv.evaluation.leaderboard_rows.md_text`)
    and escaped in the HTML. The tables are written before the plots are drawn.

    Raises:
        LeaderboardError: unreadable, incomparable or (without ``keep_failed``) failed results:
            nothing is written; or plots that failed to draw: the tables are written, the message
            names them and ``--no-plots``.
        ImportError: ``plots=True`` without matplotlib (``pip install 'agentenv[leaderboard]'``);
            nothing is written.
    """
    if not results:
        raise LeaderboardError("no results given")
    entries = [load_entry(p) for p in find_results(results)]
    if not keep_failed:
        refuse_failed(entries)
    groups = group_by_env(entries)
    if plots:
        plot_library()  # without matplotlib: ImportError (it names --no-plots) before anything is written
    out.mkdir(parents=True, exist_ok=True)
    md = out / "leaderboard.md"
    md.write_text(markdown_board(groups, title), encoding="utf-8")
    html = out / "leaderboard.html"
    images: dict[str, bytes] = {}
    if plots:
        try:
            images = {
                PLOT_FILES[0]: accuracy_vs_tool_calls(groups),
                PLOT_FILES[1]: accuracy_by_difficulty(groups),
            }
        except Exception as exc:  # the tables stand without the plots: write them, then say why
            html.write_text(render_html(groups, {}, title), encoding="utf-8")
            raise LeaderboardError(
                f"drawing the plots failed ({type(exc).__name__}: {exc}); {md} and {html} are "
                "written without them: pass --no-plots to skip the plots"
            ) from exc
    html.write_text(render_html(groups, images, title), encoding="utf-8")
    written = [md, html]
    for name, data in images.items():
        (out / name).write_bytes(data)
        written.append(out / name)
    return written
