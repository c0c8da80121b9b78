"""The leaderboard: refuses incomparable results, writes Markdown, a parseable sortable HTML page and PNGs."""

from __future__ import annotations

import argparse
import base64
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from agentenv.cli import leaderboard as leaderboard_cli
from agentenv.evaluation.leaderboard import (
    LeaderboardError,
    find_results,
    load_entry,
    write_leaderboard,
)
from agentenv.evaluation.summary import Metric, Summary, TasksFile

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
CHECKSUM = "1d9c6a02e488d0354b2309e16130c58820a91ac2ce417e814c5964f9579a65ac"


def summary(
    agent: str,
    accuracy: float,
    *,
    env_id: str = "MediaSearch-v0",
    checksum: str = CHECKSUM,
    version: int = 0,
    split: str = "test",
    calls: float = 1.0,
    **agent_args: str,
) -> Summary:
    ci = Metric(mean=accuracy, ci_low=max(accuracy - 0.03, 0.0), ci_high=min(accuracy + 0.03, 1.0))
    return Summary(
        env_id=env_id,
        env_version=version,
        package_version="0.1.0",
        corpus_checksums={"media": checksum},
        agent=agent,
        agent_args=agent_args,
        split=split,
        episodes=1000,
        seed=0,
        reward_preset="strict",
        metrics={
            "accuracy": accuracy,
            "mean_reward": accuracy,
            "mean_tool_calls": calls,
            "mean_turns": calls + 1,
            "invalid_action_rate": 0.25 if agent == "random" else 0.0,
            "truncated_rate": 0.0,
        },
        intervals={
            "accuracy": ci,
            "mean_reward": ci,
            "mean_tool_calls": Metric(mean=calls, ci_low=calls, ci_high=calls),
            "mean_turns": Metric(mean=calls + 1, ci_low=calls + 1, ci_high=calls + 1),
        },
        component_means={"accuracy": accuracy},
        per_difficulty_accuracy={
            "easy": min(accuracy + 0.1, 1.0),
            "medium": accuracy,
            "hard": max(accuracy - 0.1, 0.0),
        },
        wall_time_s=1.0,
        episodes_per_s=1000.0,
    )


def save(root: Path, name: str, s: Summary) -> Path:
    run = root / name
    run.mkdir(parents=True)
    (run / "summary.json").write_text(s.model_dump_json(indent=2))
    return run


@pytest.fixture
def runs(tmp_path: Path) -> list[Path]:
    return [
        save(tmp_path, "media/random", summary("random", 0.01, calls=2.5)),
        save(tmp_path, "media/oracle", summary("oracle", 1.0, calls=1.6)),
        save(tmp_path, "media/bm25", summary("bm25", 0.49, calls=1.6, k="5")),
        save(
            tmp_path,
            "single/bm25",
            summary("bm25", 0.48, env_id="MediaSearch-SingleTurn-v0", calls=0.0),
        ),
    ]


class Page(HTMLParser):
    """Collects table rows (cell texts), header texts, image sources and scripts."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[str]] = []
        self.headers: list[str] = []
        self.images: list[str] = []
        self.scripts = 0
        self._cell: list[str] | None = None
        self._in_th = False

    def handle_starttag(self, tag, attrs):
        if tag == "tr":
            self.rows.append([])
        elif tag == "td":
            self._cell = []
        elif tag == "th":
            self._in_th = True
            self.headers.append("")
        elif tag == "img":
            self.images.append(dict(attrs)["src"])
        elif tag == "script":
            self.scripts += 1

    def handle_endtag(self, tag):
        if tag == "td" and self._cell is not None:
            self.rows[-1].append("".join(self._cell))
            self._cell = None
        elif tag == "th":
            self._in_th = False

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)
        elif self._in_th:
            self.headers[-1] += data


def test_writes_markdown_and_a_parseable_sortable_html_page(runs, tmp_path) -> None:
    out = tmp_path / "board"
    written = write_leaderboard(runs, out, plots=False)
    assert [p.name for p in written] == ["leaderboard.md", "leaderboard.html"]
    md = (out / "leaderboard.md").read_text()
    assert "### MediaSearch-v0" in md and "### MediaSearch-SingleTurn-v0" in md
    assert (
        "| oracle | 1.000 [0.970, 1.000] | 1.000 | 1.60 | 2.60 | 0.000 | 1000 (unverified) |" in md
    )
    assert (
        md.index("| oracle") < md.index("| bm25 (k=5)") < md.index("| random")
    )  # sorted by accuracy
    page = Page()
    page.feed((out / "leaderboard.html").read_text())
    page.close()
    body = [row for row in page.rows if row]
    assert [row[0] for row in body] == ["oracle", "bm25 (k=5)", "random", "bm25"]
    assert body[2][1] == "0.010 [0.000, 0.040]" and body[2][5] == "0.250"
    assert page.headers[:2] == ["agent", "accuracy (95% CI)"] and page.scripts == 1
    assert page.images == []


def test_plots_are_pngs_and_embedded_in_the_page(runs, tmp_path) -> None:
    pytest.importorskip("matplotlib")
    out = tmp_path / "board"
    write_leaderboard(runs, out)
    for name in ("accuracy_vs_tool_calls.png", "accuracy_by_difficulty.png"):
        data = (out / name).read_bytes()
        assert data.startswith(PNG_SIGNATURE) and len(data) > 5000
    page = Page()
    page.feed((out / "leaderboard.html").read_text())
    assert len(page.images) == 2
    for src in page.images:
        assert src.startswith("data:image/png;base64,")
        assert base64.b64decode(src.split(",", 1)[1]).startswith(PNG_SIGNATURE)
    again = tmp_path / "again"
    write_leaderboard(runs, again)
    assert (again / "accuracy_by_difficulty.png").read_bytes() == (
        out / "accuracy_by_difficulty.png"
    ).read_bytes()


def test_refuses_a_different_corpus_checksum(runs, tmp_path) -> None:
    other = save(tmp_path, "media/llm", summary("llm", 0.3, checksum="0" * 64, model="m"))
    with pytest.raises(LeaderboardError) as err:
        write_leaderboard([*runs, other], tmp_path / "board", plots=False)
    message = str(err.value)
    assert (
        "MediaSearch-v0" in message
        and CHECKSUM in message
        and "0" * 64 in message
        and "'media'" in message
    )
    assert not (tmp_path / "board").exists()  # nothing written


def test_refuses_a_different_env_version_or_split(runs, tmp_path) -> None:
    newer = save(tmp_path, "media/v1", summary("llm", 0.3, version=1))
    with pytest.raises(LeaderboardError, match="differ in env version \\(0 vs 1\\)"):
        write_leaderboard([runs[0], newer], tmp_path / "board", plots=False)
    validation = save(tmp_path, "media/val", summary("llm", 0.3, split="validation"))
    with pytest.raises(LeaderboardError, match="differ in split \\('test' vs 'validation'\\)"):
        write_leaderboard([runs[0], validation], tmp_path / "board", plots=False)


def test_refuses_duplicates_and_bad_files(runs, tmp_path) -> None:
    twin = save(tmp_path, "media/random2", summary("random", 0.02))
    with pytest.raises(LeaderboardError, match="are both 'random'"):
        write_leaderboard([runs[0], twin], tmp_path / "board", plots=False)
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "summary.json").write_text('{"env_id": "MediaSearch-v0"}')
    with pytest.raises(LeaderboardError, match="not a valid summary.json"):
        load_entry(bad)
    with pytest.raises(LeaderboardError, match="cannot read"):
        load_entry(tmp_path / "missing")


def test_secrets_never_reach_the_board(tmp_path) -> None:
    run = save(tmp_path, "llm", summary("llm", 0.2, api_key="sk-secret", model="m"))
    write_leaderboard([run], tmp_path / "board", plots=False)
    for name in ("leaderboard.md", "leaderboard.html"):
        text = (tmp_path / "board" / name).read_text()
        assert "sk-secret" not in text and "llm (model=m)" in text


def test_cli_glue(runs, tmp_path, capsys) -> None:
    parser = argparse.ArgumentParser(prog="agentenv")
    leaderboard_cli.add_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(
        ["leaderboard", *map(str, runs), "--out", str(tmp_path / "board"), "--no-plots"]
    )
    assert leaderboard_cli.run(args) == 0
    assert "leaderboard.html" in capsys.readouterr().out
    bad = save(tmp_path, "media/v1", summary("llm", 0.3, version=1))
    args = parser.parse_args(
        ["leaderboard", str(runs[0]), str(bad), "--out", str(tmp_path / "b2"), "--no-plots"]
    )
    assert leaderboard_cli.run(args) == 2
    assert "env version" in capsys.readouterr().err


def test_import_agentenv_does_not_import_matplotlib() -> None:
    code = (
        "import sys, agentenv, agentenv.evaluation.leaderboard, agentenv.cli.leaderboard; "
        "assert 'matplotlib' not in sys.modules, 'matplotlib imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_evaluation_modules_import_no_cycle() -> None:
    """No module of ``agentenv.evaluation`` imports one that imports it back, even lazily.

    Why: the leaderboard's renderers once imported the board module that
    imported them inside a function; a cycle works until someone moves an
    import to the top, and makes the layering unreadable.
    """
    import ast
    from pathlib import Path

    import agentenv.evaluation

    root = Path(agentenv.evaluation.__file__).parent
    modules = {p.stem: p for p in root.glob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        deps: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets = (
                [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else ([a.name for a in node.names] if isinstance(node, ast.Import) else [])
            )
            for target in targets:
                parts = target.split(".")
                if parts[:2] == ["agentenv", "evaluation"] and len(parts) > 2:
                    deps.add(parts[2])
                elif parts == ["agentenv", "evaluation"] and isinstance(node, ast.ImportFrom):
                    deps.update(a.name for a in node.names)
        graph[name] = deps & set(modules) - {name}

    def reaches(start: str, goal: str, seen: set[str]) -> bool:
        return any(
            d == goal or (d not in seen and reaches(d, goal, seen | {d})) for d in graph[start]
        )

    assert [m for m in graph if reaches(m, m, {m})] == []


def custom(agent: str, accuracy: float, sha: str = "ab" * 32, path: str = "mine.jsonl") -> Summary:
    s = summary(agent, accuracy)
    return s.model_copy(
        update={
            "split": "custom",
            "n_tasks": 3,
            "tasks_file": TasksFile(path=path, sha256=sha, count=3),
        }
    )


def test_refuses_a_custom_task_file_next_to_a_split(runs, tmp_path) -> None:
    mine = save(tmp_path, "mine/oracle", custom("oracle", 1.0))
    with pytest.raises(
        LeaderboardError, match="ran on custom tasks \\(mine.jsonl\\) but .* on the 'test' split"
    ):
        write_leaderboard([runs[0], mine], tmp_path / "board", plots=False)
    other_file = save(
        tmp_path, "mine/bm25", custom("bm25", 0.5, sha="cd" * 32, path="theirs.jsonl")
    )
    with pytest.raises(LeaderboardError, match="different task files"):
        write_leaderboard([mine, other_file], tmp_path / "board", plots=False)
    same_file = save(tmp_path, "mine2/bm25", custom("bm25", 0.5))
    assert write_leaderboard([mine, same_file], tmp_path / "board", plots=False)


def test_reads_every_run_below_a_parent_folder(runs, tmp_path) -> None:
    """`agentenv eval --out results/<run>` then `agentenv leaderboard results/` (the README pair)."""
    assert find_results([tmp_path]) == sorted(run / "summary.json" for run in runs)
    assert find_results([runs[0], runs[0] / "summary.json"]) == [runs[0] / "summary.json"]
    write_leaderboard([tmp_path / "media"], tmp_path / "board", plots=False)
    assert "bm25 (k=5)" in (tmp_path / "board" / "leaderboard.md").read_text()
    with pytest.raises(LeaderboardError, match="a shell pattern that matched nothing"):
        find_results([tmp_path / "results" / "*" / "*"])
    (tmp_path / "empty").mkdir()
    with pytest.raises(LeaderboardError, match="no summary.json in it or below it"):
        find_results([tmp_path / "empty"])


def test_a_panel_without_tool_calls_is_a_labelled_dot_plot(tmp_path) -> None:
    pytest.importorskip("matplotlib")
    from agentenv.evaluation.leaderboard import group_by_env
    from agentenv.evaluation.leaderboard_plots import _accuracy_rows, _matplotlib

    entries = [
        load_entry(
            save(tmp_path, name, summary(name, acc, env_id="MediaSearch-SingleTurn-v0", calls=0.0))
        )
        for name, acc in (("oracle", 1.0), ("bm25", 0.35), ("random", 0.0))
    ]
    group = group_by_env(entries)["MediaSearch-SingleTurn-v0"]
    ax = _matplotlib().figure.Figure().add_subplot()
    _accuracy_rows(ax, "MediaSearch-SingleTurn-v0", group, {e.label: "C0" for e in group})
    # One row per agent, best on top, named on the axis: no points or labels stacked at x = 0.
    assert [t.get_text() for t in ax.get_yticklabels()] == ["random", "bm25", "oracle"]
    assert "no tool calls" in ax.get_title() and ax.get_xlabel() == "accuracy (95% CI)"


def test_a_custom_board_names_its_task_file(tmp_path) -> None:
    runs = [
        save(tmp_path, "mine/oracle", custom("oracle", 1.0)),
        save(tmp_path, "mine/bm25", custom("bm25", 0.5)),
    ]
    write_leaderboard(runs, tmp_path / "board", plots=False)
    text = (tmp_path / "board" / "leaderboard.md").read_text()
    assert "custom tasks `mine.jsonl` (3 tasks, sha256 `abababababab`)" in text
