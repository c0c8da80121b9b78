"""Runs verify themselves: `--resume` and `agentenv leaderboard` refuse edited, cut, foreign or out-of-range
rows naming file:line, refuse FIFOs unopened, explain every malformed input in one line, and never rank
runs whose fingerprints (system prompt, tool schemas, reward, grader version) differ."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentenv.cli.main import main
from agentenv.evaluation import run_files
from agentenv.evaluation.leaderboard import LeaderboardError, load_entry, write_leaderboard
from agentenv.evaluation.run_dir import read_chain, run_header
from agentenv.evaluation.run_files import chain_line, header_digest

ENV = "MediaSearch-v0"


def _eval(out: Path, *extra: str, env: str = ENV, episodes: int = 4) -> int:
    return main(
        ["eval", env, "--agent", "oracle", "--episodes", str(episodes), "--no-progress"]
        + ["--out", str(out), *extra]
    )


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Real oracle runs: MediaSearch (seed 0, and seed 1) and DiagnosisDialogue (a dialogue id)."""
    root = tmp_path_factory.mktemp("runs")
    made = {
        "media": root / "media",
        "seed1": root / "seed1",
        "dialogue": root / "dialogue",
    }
    assert _eval(made["media"]) == 0
    assert _eval(made["seed1"], "--seed", "1") == 0
    assert _eval(made["dialogue"], env="DiagnosisDialogue-v0", episodes=3) == 0
    return made


@pytest.fixture
def run(runs: dict[str, Path], tmp_path: Path) -> Path:
    """A copy of the MediaSearch run, to edit."""
    return Path(shutil.copytree(runs["media"], tmp_path / "run"))


def _lines(run: Path) -> list[str]:
    return (run / "episodes.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)


def _write(run: Path, lines: list[str]) -> None:
    (run / "episodes.jsonl").write_text("".join(lines), encoding="utf-8")


def _rechain(run: Path, records: list[dict]) -> None:
    """Rows whose digests are all correct (a careful forger): only the range checks can refuse them."""
    previous = header_digest(run_header(json.loads((run / "run.json").read_text())))
    lines = []
    for record in records:
        body = {k: v for k, v in record.items() if k != "digest"}
        line = chain_line(json.dumps(body, ensure_ascii=False) + "\n", previous)
        previous = line[-67:-3]
        lines.append(line)
    _write(run, lines)


def _refusals(run: Path, capsys: pytest.CaptureFixture[str]) -> tuple[str, str]:
    """The one-line errors of `--resume` and of `leaderboard` on ``run``."""
    assert _eval(run, "--resume") == 2
    resume = capsys.readouterr().err.strip()
    with pytest.raises(LeaderboardError) as board:
        load_entry(run)
    for message in (resume, str(board.value)):
        assert len(message.splitlines()) == 1 and "Traceback" not in message, message
    return resume, str(board.value)


@contextlib.contextmanager
def _no_hang(seconds: int = 20) -> Iterator[None]:
    """Turn a blocked read (a FIFO opened) into a test failure instead of a hung suite."""

    def fail(signum: int, frame: object) -> None:
        raise AssertionError("the read blocked: a FIFO was opened")

    previous = signal.signal(signal.SIGALRM, fail)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def test_a_verified_run_is_ranked_and_its_digests_do_not_depend_on_time(
    runs: dict[str, Path], tmp_path: Path
) -> None:
    entry = load_entry(runs["media"])
    assert entry.verified and entry.summary.episodes_digest == _lines(runs["media"])[-1][-67:-3]
    assert set(entry.summary.fingerprint) == {"system_prompt", "tools", "reward", "grader"}
    assert entry.summary.fingerprint["grader"] == "media_search/3"
    again = tmp_path / "again"
    assert _eval(again) == 0  # another run, another wall time: the same bytes
    assert (again / "episodes.jsonl").read_bytes() == (
        runs["media"] / "episodes.jsonl"
    ).read_bytes()


def test_an_edited_reward_is_refused_naming_its_line(
    run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = _lines(run)
    lines[1] = lines[1].replace('"reward": 1.0', '"reward": -7.0', 1)
    _write(run, lines)
    for message in _refusals(run, capsys):
        assert "episodes.jsonl line 2: its digest does not follow from the row before" in message


def test_rows_of_another_env_pasted_in_are_refused_at_the_first(
    run: Path, runs: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    _write(run, _lines(run)[:1] + _lines(runs["dialogue"]))
    for message in _refusals(run, capsys):
        assert "episodes.jsonl line 2: its digest does not follow" in message


def test_rows_of_another_seed_are_refused_at_the_header(
    run: Path, runs: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    _write(run, _lines(runs["seed1"]))
    for message in _refusals(run, capsys):
        assert "episodes.jsonl line 1: its digest does not follow from the run's header" in message


def test_a_row_cut_from_the_middle_is_refused(
    run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = _lines(run)
    _write(run, lines[:1] + lines[2:])
    for message in _refusals(run, capsys):
        assert "episodes.jsonl line 2" in message


def test_rows_cut_from_the_end_are_rerun_by_resume_but_refused_by_the_board(
    run: Path, runs: dict[str, Path]
) -> None:
    _write(run, _lines(run)[:2])
    with pytest.raises(LeaderboardError, match="holds 2 episodes, .*summary.json says 4"):
        load_entry(run)
    assert _eval(run, "--resume") == 0  # a kill -9 leaves a prefix: resume finishes it
    assert (run / "episodes.jsonl").read_bytes() == (runs["media"] / "episodes.jsonl").read_bytes()


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        ("reward", float("nan"), "reward is nan; a reward must be a finite number"),
        ("reward", float("inf"), "reward is inf"),
        ("accuracy", 5.0, "reward_components.accuracy is 5.0; component 'accuracy' must be [0, 1]"),
        ("tool_calls", -1, "tool_calls is -1"),
    ],
)
def test_values_out_of_range_are_refused_even_with_good_digests(
    run: Path, capsys: pytest.CaptureFixture[str], field: str, value: float, expected: str
) -> None:
    records = [json.loads(line) for line in _lines(run)]
    if field == "accuracy":
        records[2]["reward_components"]["accuracy"] = value
    else:
        records[2][field] = value
    _rechain(run, records)
    resume, board = _refusals(run, capsys)
    assert f"episodes.jsonl line 3: {expected}" in resume
    assert f"line 3: {expected}" in board


@pytest.mark.parametrize(
    ("metric", "value", "expected"),
    [
        ("accuracy", 0.5, "metrics.accuracy is 0.5 but its 4 episodes"),
        ("mean_reward", 5.0, "metrics.mean_reward is 5.0 but intervals.mean_reward.mean"),
        ("accuracy", 1.5, "metrics.accuracy is 1.5; accuracy must be [0, 1]"),
        ("mean_reward", float("nan"), "metrics.mean_reward is nan; mean_reward must be a finite"),
        ("mean_turns", float("inf"), "metrics.mean_turns is inf"),
    ],
)
def test_an_edited_or_impossible_summary_is_refused(
    run: Path, metric: str, value: float, expected: str
) -> None:
    summary = json.loads((run / "summary.json").read_text())
    summary["metrics"][metric] = value
    if metric == "accuracy" and value <= 1:
        summary["intervals"][metric].update(mean=value, ci_low=value, ci_high=value)
    (run / "summary.json").write_text(json.dumps(summary))
    with pytest.raises(LeaderboardError, match="summary.json: ") as err:
        load_entry(run)
    assert expected in str(err.value)


def test_a_run_without_digests_is_shown_marked_unverified(run: Path, tmp_path: Path) -> None:
    """What an agentenv before row digests wrote: no digest, no fingerprint, no run.json."""
    summary = json.loads((run / "summary.json").read_text())
    summary.pop("episodes_digest")
    summary.pop("fingerprint")
    (run / "summary.json").write_text(json.dumps(summary))
    (run / "run.json").unlink()
    written = write_leaderboard([run], tmp_path / "board", plots=False)
    board = written[0].read_text()
    assert "| 4 (unverified) |" in board and "1 of 1 runs unverified" in board


@pytest.mark.parametrize("keep_run_json", [True, False])
def test_a_digest_taken_out_of_a_new_run_is_refused(run: Path, keep_run_json: bool) -> None:
    """Taking episodes_digest out (and editing the accuracy) used to show the run as unverified
    beside verified ones; a summary with a fingerprint, or beside a chained run.json, always has one."""
    summary = json.loads((run / "summary.json").read_text())
    summary.pop("episodes_digest")
    summary["metrics"]["accuracy"] = 0.99
    summary["intervals"]["accuracy"].update(mean=0.99, ci_low=0.9, ci_high=1.0)
    (run / "summary.json").write_text(json.dumps(summary))
    if not keep_run_json:
        (run / "run.json").unlink()
    why = "says its rows are chained" if keep_run_json else "it has a run fingerprint"
    with pytest.raises(LeaderboardError, match=f"has no episodes_digest, but .*{why}"):
        load_entry(run)


def test_an_old_run_without_digests_is_not_resumed(
    run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    identity = json.loads((run / "run.json").read_text())
    del identity["digest_format"]
    (run / "run.json").write_text(json.dumps(identity))
    assert _eval(run, "--resume") == 2
    err = capsys.readouterr().err
    assert "without row digests" in err and "--overwrite" in err


@pytest.mark.parametrize("name", ["episodes.jsonl", "summary.json", "run.json"])
def test_a_fifo_is_refused_at_once(
    run: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    (run / name).unlink()
    os.mkfifo(run / name)
    with _no_hang():
        if name != "summary.json":
            assert _eval(run, "--resume") == 2
            assert f"{name}: a FIFO, not a regular file" in capsys.readouterr().err
        with pytest.raises(LeaderboardError, match=f"{name}: a FIFO, not a regular file"):
            load_entry(run)


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("[" * 100_000 + "]" * 100_000, "line 2: JSON nested too deeply"),
        ('[1, 2, "a list"]', "line 2: a JSON list where an episode record belongs"),
        ("not json", "line 2: not JSON"),
        (None, "line 2: longer than"),
    ],
)
def test_malformed_rows_name_file_and_line_in_one_line(
    run: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    line: str | None,
    expected: str,
) -> None:
    lines = _lines(run)
    limit = max(map(len, lines)) + 300_000  # the bound scaled down: stands for a 200 MB line
    monkeypatch.setattr(run_files, "MAX_LINE_BYTES", limit)
    lines[1] = ("x" * (limit + 10) if line is None else line) + "\n"
    _write(run, lines)
    for message in _refusals(run, capsys):
        assert f"episodes.jsonl {expected}" in message


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[" * 100_000, "summary.json: JSON nested too deeply"),
        ("[1, 2]", "summary.json line 1: a JSON list where a summary.json belongs"),
        ('{\n"env_id": \n}', "summary.json line 3: not JSON"),
        ('{"env_id": []}', "summary.json: not a valid summary.json: env_id:"),
    ],
)
def test_a_malformed_summary_names_file_and_line(run: Path, text: str, expected: str) -> None:
    (run / "summary.json").write_text(text)
    with pytest.raises(LeaderboardError) as err:
        load_entry(run)
    assert expected in str(err.value) and len(str(err.value).splitlines()) == 1


def test_a_huge_summary_is_not_read_whole(run: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(run_files, "MAX_JSON_BYTES", 1024)
    with pytest.raises(LeaderboardError, match="summary.json: larger than"):
        load_entry(run)


def _prompt_reworded(monkeypatch: pytest.MonkeyPatch) -> None:
    from agentenv.envs.media_search.env import MediaSearchEnv

    original = MediaSearchEnv._system_prompt
    monkeypatch.setattr(
        MediaSearchEnv, "_system_prompt", lambda self: original(self) + " Be brief."
    )


def _tool_reworded(monkeypatch: pytest.MonkeyPatch) -> None:
    from agentenv.engine.tools import Tool

    original = Tool.schema

    def schema(self: Tool) -> dict:
        out = original(self)
        if self.name == "get_title":
            out = json.loads(json.dumps(out))
            out["function"]["description"] += " Also lists trivia."
        return out

    monkeypatch.setattr(Tool, "schema", schema)


@pytest.mark.parametrize(
    ("change", "part"), [(_prompt_reworded, "system prompt"), (_tool_reworded, "tool schemas")]
)
def test_runs_differing_only_in_prompt_or_one_tool_are_not_ranked_together(
    runs: dict[str, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    change,
    part: str,
) -> None:
    with monkeypatch.context() as patch:
        change(patch)
        changed = tmp_path / "changed"
        assert (
            main(
                ["eval", ENV, "--agent", "bm25", "--episodes", "4", "--no-progress"]
                + ["--out", str(changed)]
            )
            == 0
        )
        resumed = Path(shutil.copytree(runs["media"], tmp_path / "resumed"))
        assert _eval(resumed, "--resume", "--episodes", "5") == 2  # the env changed under the run
        assert f"was run with another {part}" in capsys.readouterr().err
    with pytest.raises(LeaderboardError, match=f"differ in their {part} ") as err:
        write_leaderboard([runs["media"], changed], tmp_path / "board", plots=False)
    assert len(str(err.value).splitlines()) == 1


def test_dialogue_ids_evaluate_their_lead_against_the_simulated_side(
    runs: dict[str, Path], tmp_path: Path
) -> None:
    summary = json.loads((runs["dialogue"] / "summary.json").read_text())
    assert summary["env_id"] == "DiagnosisDialogue-v0" and summary["episodes"] == 3
    assert summary["metrics"]["accuracy"] == 1.0  # the oracle doctor names the gold
    assert summary["fingerprint"]["grader"] == "rare_disease/1"
    records, _, _ = read_chain(
        runs["dialogue"] / "episodes.jsonl",
        header_digest(run_header(json.loads((runs["dialogue"] / "run.json").read_text()))),
    )
    assert [r["episode"] for r in records] == [0, 1, 2]
    assert records[0]["messages"][0]["role"] == "system"
    part = tmp_path / "part"
    assert _eval(part, env="DiagnosisDialogue-v0", episodes=2) == 0
    assert _eval(part, "--resume", "--episodes", "3", env="DiagnosisDialogue-v0", episodes=3) == 0
    assert (part / "episodes.jsonl").read_bytes() == (
        runs["dialogue"] / "episodes.jsonl"
    ).read_bytes()


def test_media_concierge_is_evaluated_too(tmp_path: Path) -> None:
    assert _eval(tmp_path / "mc", env="MediaConcierge-v0", episodes=2) == 0
    summary = json.loads((tmp_path / "mc" / "summary.json").read_text())
    assert (
        summary["metrics"]["accuracy"] == 1.0
        and summary["fingerprint"]["grader"] == "media_search/3"
    )


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_any_one_byte_edit_is_refused_at_or_before_its_row(runs: dict[str, Path], data) -> None:
    """A search over single-byte edits of a real run: each is refused, naming a line no later than the
    edited one (an edited digest, body, separator or newline alike)."""
    folder = runs["media"]
    original = (folder / "episodes.jsonl").read_bytes()
    root = header_digest(run_header(json.loads((folder / "run.json").read_text())))
    at = data.draw(st.integers(0, len(original) - 1), label="byte")
    byte = data.draw(st.integers(0, 255).filter(lambda b: b != original[at]), label="value")
    edited = original[:at] + bytes([byte]) + original[at + 1 :]
    row = original[:at].count(b"\n") + 1
    target = folder.parent / f"edit-{os.getpid()}.jsonl"
    target.write_bytes(edited)
    try:
        with pytest.raises(run_files.RunFileError) as err:
            read_chain(target, root)
    finally:
        target.unlink()
    named = int(str(err.value).split(" line ", 1)[1].split(":", 1)[0])
    assert named <= row, (at, byte, str(err.value))


def test_a_fused_retrievers_weights_join_the_fingerprint_and_bm25_adds_nothing() -> None:
    """Two runs with one env option (``retriever="hybrid-minilm"``) but other fusion weights
    searched differently: the fingerprint's ``retriever`` part tells them apart; the default
    ``bm25`` records no such part, so its runs' fingerprints are as before."""
    import gymnasium as gym

    from agentenv.evaluation.fingerprint import PARTS, differing, env_fingerprint
    from agentenv.retrieval.hybrid import HybridRetriever

    def fingerprint(env: gym.Env) -> dict[str, str]:
        _, info = env.reset(seed=0)
        return env_fingerprint(ENV, env, info)

    plain = gym.make(ENV)
    bm25 = plain.unwrapped.retriever
    assert sorted(fingerprint(plain)) == sorted(PARTS)
    fused = [
        fingerprint(gym.make(ENV, retriever=HybridRetriever([bm25, bm25], weights=w, version=v)))
        for w, v in (([1.0, 0.75], "a"), ([1.0, 1.0], "a"), ([1.0, 0.75], "b"), ([1.0, 0.75], "a"))
    ]
    assert differing(fused[0], fused[1]) == ["retriever"] == differing(fused[0], fused[2])
    assert fused[0] == fused[3]
    assert differing(fingerprint(plain), fused[0]) == ["retriever"]


def _edit_summary(run: Path, **fields: object) -> None:
    summary = json.loads((run / "summary.json").read_text())
    for dotted, value in fields.items():
        *parents, last = dotted.split("__")
        target = summary
        for key in parents:
            target = target[key]
        target[last] = value
    (run / "summary.json").write_text(json.dumps(summary))


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"split": "validation"}, 'split is "validation" but'),
        ({"agent": "my-agent"}, 'agent is "my-agent" but'),
        ({"agent_args": {"k": "3"}}, "agent_args is"),
        ({"env_kwargs": {"question_style": "template"}}, "env_kwargs is"),
        ({"env_version": 3}, "env_version is 3"),
        (
            {"intervals__accuracy": {"mean": 1.0, "ci_low": 0.5, "ci_high": 1.0}},
            "intervals.accuracy is",
        ),
        ({"per_kind_accuracy__lookup": 0.25}, "per_kind_accuracy.lookup is 0.25"),
        (
            {"per_difficulty_accuracy": {f"level{i}": 1.0 for i in range(3000)}},
            "per_difficulty_accuracy.",
        ),
        ({"component_means__accuracy": 0.5}, "component_means.accuracy is 0.5"),
        ({"metrics__invalid_action_rate": 0.0001}, "metrics.invalid_action_rate is 0.0001"),
        ({"n_tasks": 4}, "n_tasks is 4 but"),
        ({"reward_preset": "cost"}, 'reward_preset is "cost" but'),
        ({"corpus_checksums__media": "0" * 64}, "corpus_checksums is"),
    ],
)
def test_a_summary_field_that_disagrees_with_run_json_or_the_rows_is_refused(
    run: Path, fields: dict, expected: str
) -> None:
    """Fields the board used to show as the summary said: the run's definition is run.json's,
    and every figure the rows decide is recomputed from them."""
    _edit_summary(run, **fields)
    with pytest.raises(LeaderboardError, match="summary.json: ") as err:
        load_entry(run)
    assert expected in str(err.value)


def test_rows_cut_from_the_end_with_a_summary_rewritten_to_match_are_refused(run: Path) -> None:
    """Cut the last rows, and rewrite the summary's count, digest and every figure to the rows
    left (no hash to forge): run.json still plans the whole run, so it is not complete."""
    from agentenv.evaluation.report import row_figures

    header = header_digest(run_header(json.loads((run / "run.json").read_text())))
    records, _, _ = read_chain(run / "episodes.jsonl", header)
    _write(run, _lines(run)[:2])
    kept, last, _ = read_chain(run / "episodes.jsonl", header)
    figures = row_figures(kept, seed=0)
    figures["intervals"] = {k: m.model_dump() for k, m in figures["intervals"].items()}
    _edit_summary(run, episodes=2, episodes_digest=last, **figures)
    with pytest.raises(LeaderboardError, match="planned 4 episodes and 2 were run"):
        load_entry(run)
    assert len(records) == 4


def test_an_untouched_run_agrees_with_every_recomputed_figure(run: Path) -> None:
    entry = load_entry(run)
    assert entry.verified and entry.summary.episodes == 4


def test_runs_on_different_episodes_of_a_split_are_not_ranked_together(
    runs: dict[str, Path], tmp_path: Path
) -> None:
    """Seed 0 and seed 1 with 4 episodes each play different tasks of the test split."""
    with pytest.raises(LeaderboardError, match="played different tasks"):
        write_leaderboard([runs["media"], runs["seed1"]], tmp_path / "board", plots=False)


@pytest.mark.skipif(
    not os.access("/proc/kmsg", os.R_OK), reason="reading /proc/kmsg needs root on Linux"
)
def test_a_regular_looking_file_whose_reads_block_is_refused_at_once(run: Path) -> None:
    """/proc/kmsg is a 'regular file' to stat, and a read of it waits for kernel messages."""
    (run / "summary.json").unlink()
    (run / "summary.json").symlink_to("/proc/kmsg")
    # Refused at once either way: nothing to read yet (EAGAIN), or kernel messages, which are no JSON.
    with _no_hang(), pytest.raises(LeaderboardError, match="reading it would block|not JSON"):
        load_entry(run)


@pytest.mark.parametrize("field", ["turns", "tool_calls"])
def test_a_count_too_large_for_a_float_is_refused_naming_its_line(run: Path, field: str) -> None:
    records = [json.loads(line) for line in _lines(run)]
    records[1][field] = 10**400
    _rechain(run, records)
    with pytest.raises(LeaderboardError, match=f"line 2: {field} is 1000.*from 0 to 1,000,000,000"):
        load_entry(run)


def test_resume_refuses_a_linked_run_file(run: Path, runs: dict[str, Path], capsys) -> None:
    """Resuming through a symlinked episodes.jsonl appended to another run's file."""
    (run / "episodes.jsonl").unlink()
    (run / "episodes.jsonl").symlink_to(runs["seed1"] / "episodes.jsonl")
    before = (runs["seed1"] / "episodes.jsonl").read_bytes()
    assert _eval(run, "--resume", episodes=6) == 2
    assert "is a symbolic link" in capsys.readouterr().err
    assert (runs["seed1"] / "episodes.jsonl").read_bytes() == before


def test_a_summary_is_read_strictly_and_a_label_cannot_split_its_row(run: Path, tmp_path: Path):
    _edit_summary(run, episodes="4")
    with pytest.raises(LeaderboardError, match="episodes: Input should be a valid integer"):
        load_entry(run)
    _edit_summary(run, episodes=4)
    for name in ("run.json",):
        identity = json.loads((run / name).read_text())
        identity["agent_args"] = {"note": "a\nb|c"}
        (run / name).write_text(json.dumps(identity))
    _edit_summary(run, agent_args={"note": "a\nb|c"})
    board = write_leaderboard([run], tmp_path / "board", plots=False)[0].read_text()
    (row,) = [line for line in board.splitlines() if line.startswith("| oracle")]
    assert "note=a b&#124;c" in row and row.endswith(" |")


def test_what_the_env_served_is_recorded_and_joins_the_header(run: Path) -> None:
    """Corpus checksums, preset name and task count are in run.json; edited there (and in the
    summary, to agree), the first row no longer chains from the header."""
    recorded = json.loads((run / "run.json").read_text())
    assert set(recorded["corpus_checksums"]) == {"media", "questions"}
    assert recorded["reward_preset"] == "strict" and recorded["n_tasks"] == 1000
    for file in ("run.json", "summary.json"):
        edited = json.loads((run / file).read_text())
        edited["n_tasks"] = 4  # would grant the every-task-once exemption
        (run / file).write_text(json.dumps(edited))
    with pytest.raises(LeaderboardError, match="line 1: its digest does not follow"):
        load_entry(run)


def test_a_run_recorded_before_the_served_fields_still_verifies_and_resumes(
    run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A run.json without the served fields (as older runs were written): its rows chain from the
    header without them, the board ranks it, and --resume continues it without adding them."""
    recorded = json.loads((run / "run.json").read_text())
    for key in ("corpus_checksums", "reward_preset", "n_tasks"):
        del recorded[key]
    (run / "run.json").write_text(json.dumps(recorded))
    previous, lines = header_digest(run_header(recorded)), []
    for line in _lines(run):  # the same rows, chained from the header without the served fields
        body, _ = run_files.split_digest(line.encode("utf-8"))
        lines.append(chain_line(body.decode("utf-8") + "\n", previous))
        previous = lines[-1][-67:-3]
    _write(run, lines)
    _edit_summary(run, episodes_digest=previous)
    assert load_entry(run).verified
    assert _eval(run, "--episodes", "6", "--resume") == 0, capsys.readouterr().err
    assert "n_tasks" not in json.loads((run / "run.json").read_text())
    assert load_entry(run).summary.episodes == 6


def test_resume_refuses_an_env_that_now_serves_another_corpus(
    run: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from agentenv.evaluation import runner

    real = runner.env_metadata

    def other_corpus(*args: object, **kwargs: object) -> dict:
        meta = dict(real(*args, **kwargs))
        meta["corpus_checksums"] = {**meta["corpus_checksums"], "media": "f" * 64}
        return meta

    monkeypatch.setattr(runner, "env_metadata", other_corpus)
    assert _eval(run, "--episodes", "6", "--resume") == 2
    err = capsys.readouterr().err
    assert "was run with corpus_checksums=" in err and "--overwrite" in err
    assert len(_lines(run)) == 4  # nothing appended


def test_one_pass_over_a_task_file_records_its_plan_and_is_ranked(tmp_path: Path) -> None:
    """Without --episodes a task-file run plays each task once; run.json recorded its plan as
    null, and the board refused the run ("'episodes' is null")."""
    rows = [
        {"question": "Who directed Heat (1995)?", "answer": "Michael Mann"},
        {"question": "What year was Inception released?", "answer": "2010"},
    ]
    tasks = tmp_path / "mine.jsonl"
    tasks.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    out = tmp_path / "mine"
    assert (
        main(
            [
                "eval",
                ENV,
                "--agent",
                "oracle",
                "--tasks",
                str(tasks),
                "--no-progress",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    assert json.loads((out / "run.json").read_text())["episodes"] == 2
    entry = load_entry(out)
    assert entry.verified and entry.summary.episodes == 2
    _edit_summary(out, tasks_file__count=1000)  # the board's caption shows this count
    with pytest.raises(LeaderboardError, match="tasks_file.count is 1000 but .*run.json says 2"):
        load_entry(out)
