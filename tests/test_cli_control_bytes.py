"""No raw control byte reaches the terminal: a run folder, a ``--tasks`` path, a task's text, a
server's error body or a command's own error holding ESC/CSI/OSC sequences, ``\\r``, BEL, C1
controls or a bidi override (U+202E) is printed as escapes, on stdout and on stderr.

Why: printed raw, a run folder named ``run ESC]0;OWNED BEL ESC[2K CR wrote board.md ESC[8m`` set
the window title, erased the refusal naming it, put a fake ``wrote`` line in its place and hid
what followed (the probe's findings). Each command is driven through ``agentenv``'s ``main``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import gymnasium as gym
import pytest

from agentenv.cli import main as cli_main

from .control_bytes import EVIL, SHOWN, media_rows, raw_in, run_cli


@pytest.fixture(autouse=True)
def _in_an_empty_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def test_a_leaderboard_refusal_shows_the_run_folder_escaped(tmp_path: Path, capsys) -> None:
    run = tmp_path / EVIL
    run.mkdir()
    (run / "summary.json").write_text("{}", encoding="utf-8")
    code, out, err = run_cli(
        ["leaderboard", str(run), "--out", str(tmp_path / "board"), "--no-plots"], capsys
    )
    assert code == 2 and not raw_in(out + err), ascii(err)
    assert SHOWN in err and err.startswith("agentenv leaderboard: ")
    assert len(err.strip().splitlines()) == 1  # the refusal is not overwritten by a fake line


def test_eval_prints_the_tasks_path_and_its_out_folder_escaped(tmp_path: Path, capsys) -> None:
    tasks = media_rows(tmp_path / f"{EVIL}.jsonl")
    argv = ["eval", "MediaSearch-v0", "--agent", "oracle", "--tasks", str(tasks)]
    with pytest.warns(UserWarning, match="no gold tool plan"):
        code, out, err = run_cli([*argv, "--out", str(tmp_path / EVIL), "--no-progress"], capsys)
    assert code == 0 and not raw_in(out + err), ascii(out + err)
    first = out.splitlines()[0]
    assert first.startswith("oracle on MediaSearch-v0 (custom tasks ") and SHOWN in first
    assert out.strip().splitlines()[-1].startswith("wrote ") and SHOWN in out.splitlines()[-1]


def test_a_missing_tasks_path_is_one_escaped_error_line(tmp_path: Path, capsys) -> None:
    argv = ["eval", "MediaSearch-v0", "--agent", "oracle", "--no-progress"]
    code, out, err = run_cli([*argv, "--tasks", str(tmp_path / f"{EVIL}.jsonl")], capsys)
    assert code == 2 and not raw_in(out + err), ascii(err)
    assert err.startswith("agentenv: error: ") and SHOWN in err
    assert len(err.strip().splitlines()) == 1


def test_a_usage_error_quoting_what_was_typed_is_escaped(capsys) -> None:
    code, out, err = run_cli(["eval", "MediaSearch-v0", "--agent", "oracle", f"--{EVIL}"], capsys)
    assert code == 2 and not raw_in(out + err), ascii(err)
    assert "unknown option" in err and len(err.strip().splitlines()) == 1


def test_a_refused_task_row_is_named_and_its_file_escaped(tmp_path: Path, capsys) -> None:
    rows = [{"question": "how long is nolan's interstellar \x1b]0;OWNED\x07", "answer": "169"}]
    tasks = media_rows(tmp_path / f"{EVIL}.jsonl", rows)
    code, out, err = run_cli(["check-tasks", "MediaSearch-v0", "--tasks", str(tasks)], capsys)
    assert code == 2 and not raw_in(out + err), ascii(err)
    assert "field 'question' holds a control character U+001B at position 34" in err


def test_check_tasks_prints_a_questions_tab_as_an_escape(tmp_path: Path, capsys) -> None:
    rows = [{"question": "zzqqxx\tnonexistent film qqzz", "answer": "Aaron Sorkin"}]
    tasks = media_rows(tmp_path / "q.jsonl", rows)
    code, out, err = run_cli(["check-tasks", "MediaSearch-v0", "--tasks", str(tasks)], capsys)
    assert code == 1 and not raw_in(out + err) and "\t" not in out, ascii(out)
    assert "zzqqxx\\x09nonexistent film qqzz" in out and "unreachable:" in out


def test_check_tasks_prints_import_notes_naming_the_file_escaped(tmp_path: Path, capsys) -> None:
    row = {"phenotypes": ["HP:0001166", "HP:0000545", "HP:9999999"], "diagnosis": ["OMIM:154700"]}
    tasks = tmp_path / f"{EVIL}.jsonl"
    tasks.write_text(json.dumps(row) + "\n", encoding="utf-8")
    code, out, err = run_cli(
        ["check-tasks", "RareDiseaseDiagnosis-v0", "--tasks", str(tasks)], capsys
    )
    assert code == 1 and not raw_in(out + err), ascii(out + err)
    notes = [line for line in out.splitlines() if line.startswith("import: ")]
    assert notes and SHOWN in notes[0] and "HP:9999999" in notes[0]


def test_judge_consistency_errors_are_escaped(tmp_path: Path, capsys) -> None:
    argv = ["judge-consistency", "--episodes", str(tmp_path / EVIL / "episodes.jsonl")]
    code, out, err = run_cli([*argv, "--endpoint", "http://127.0.0.1:9"], capsys)
    assert code == 2 and not raw_in(out + err), ascii(err)
    assert err.startswith("agentenv judge-consistency: error: --episodes ") and SHOWN in err


def test_simulator_check_shows_an_endpoints_reason_escaped(monkeypatch, capsys) -> None:
    import importlib

    from agentenv.evaluation.agents import AgentFailure

    simulator_check = importlib.import_module("agentenv.multiagent.simulator_check")

    def failing(*args, **kwargs):
        raise AgentFailure(f"http://127.0.0.1:9/v1/chat/completions: HTTP 500: {EVIL}")

    monkeypatch.setattr(simulator_check, "simulator_check", failing)
    argv = ["simulator-check", "--env", "MediaConcierge-v0", "--dialogues", "1"]
    code, out, err = run_cli(argv, capsys)
    assert code == 2 and not raw_in(out + err), ascii(err)
    assert err.startswith("agentenv: error: simulator-check: ") and SHOWN in err


def test_a_commands_own_exit_message_is_escaped(monkeypatch, capsys) -> None:
    def exits(argv):
        raise SystemExit(f"--side: not {EVIL}")

    monkeypatch.setattr(cli_main, "_main", exits)
    code, out, err = run_cli(["simulator-check"], capsys)
    assert code == 1 and not raw_in(out + err) and err.strip() == f"--side: not {SHOWN}"


def test_a_failed_runs_reasons_are_printed_escaped(capsys) -> None:
    """A run whose reasons hold raw controls (another agent's, or one written before the LLM agent
    marked them) is still printed safely."""
    import io

    from agentenv.evaluation.report import FAILED_RUN_EXIT, exit_code
    from agentenv.evaluation.summary import Summary

    summary = Summary.model_construct(
        episodes=4,
        agent_failures=3,
        agent_failure_rate=0.75,
        agent_failure_reasons={f"http://h/v1: HTTP 500: {EVIL}": 3},
    )
    stream = io.StringIO()
    assert exit_code(summary, stream=stream) == FAILED_RUN_EXIT
    shown = stream.getvalue()
    assert not raw_in(shown) and SHOWN in shown and shown.startswith("agentenv eval: failed run: ")


BODY = b"overloaded \x1b]0;OWNED\x07\x1b[2K\rall good\x1b[8m\xe2\x80\xae"


@pytest.fixture
def failing_endpoint() -> Iterator[str]:
    """An OpenAI-compatible server that lists model ``m``, answers the agent's preflight and fails
    every real request with HTTP 503 and a body of control sequences."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:
            pass

        def _send(self, status: int, body: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            self._send(200, json.dumps({"object": "list", "data": [{"id": "m"}]}).encode())

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            if len(body) < 400:  # the preflight's tiny request
                reply = {
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}}]
                }
                self._send(200, json.dumps(reply).encode())
            else:
                self._send(503, BODY)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_an_endpoints_error_body_is_marked_in_every_line_and_file(
    failing_endpoint: str, tmp_path: Path
) -> None:
    """The retry log lines, ``failed run:``, ``summary.json`` and the leaderboard's refusal."""
    out = tmp_path / "run"
    argv = ["eval", "MediaSearch-v0", "--agent", "llm", "--episodes", "2", "--no-progress"]
    argv += ["--agent-args", "model=m", f"base_url={failing_endpoint}", "retries=0"]
    env = {**os.environ, "AGENTENV_DEBUG": "0"}
    run = subprocess.run(
        [sys.executable, "-m", "agentenv.cli.main", *argv, "--out", str(out)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert run.returncode == 3 and not raw_in(run.stdout + run.stderr), ascii(run.stderr)
    marked = "overloaded <U+001B>]0;OWNED<U+0007><U+001B>[2K all good<U+001B>[8m<U+202E>"
    assert "failed run:" in run.stderr and marked in run.stderr
    assert "\\\\" not in run.stderr  # marked once, not escaped a second time where printed
    reasons = json.loads((out / "summary.json").read_text())["agent_failure_reasons"]
    assert all(marked in reason and not raw_in(reason) for reason in reasons)
    board = subprocess.run(
        [sys.executable, "-m", "agentenv.cli.main", "leaderboard", str(out), "--no-plots"]
        + ["--out", str(tmp_path / "board")],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert board.returncode == 2 and "a failed run" in board.stderr and marked in board.stderr
    assert not raw_in(board.stdout + board.stderr)


class _Hostile(gym.Wrapper):
    """The real env, its question and each tool output followed by control sequences (as a task
    question, a document or a simulated user's reply could hold them)."""

    def reset(self, **kwargs):
        obs, info = self.env.reset(**kwargs)
        return f"{obs}\n{EVIL}\ttabbed", info

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        if terminated or truncated:
            info = {**info, "answer_feedback": f"{info.get('answer_feedback', '')}{EVIL}"}
        try:
            value = json.loads(obs)
        except ValueError:
            return f"{obs} {EVIL}", reward, terminated, truncated, info
        if isinstance(value, dict):
            value[f"note{EVIL}"] = EVIL
            for row in value.get("results") or []:
                if isinstance(row, dict):
                    row["title"] = f"{row.get('title')}{EVIL}"
        return json.dumps(value), reward, terminated, truncated, info


def test_play_shows_the_question_tool_outputs_and_the_score_escaped(monkeypatch, capsys) -> None:
    from agentenv.play.session import play

    make = gym.make
    monkeypatch.setattr(gym, "make", lambda *a, **k: _Hostile(make(*a, **k)))
    lines = iter(["search Heat", "full", "answer Heat"])
    assert play("MediaSearch-v0", seed=0, read=lambda prompt: next(lines)) == 0
    out = capsys.readouterr().out
    assert not raw_in(out), ascii(out)
    question = out.split("-" * 40)[1]
    assert f"\n{SHOWN}\ttabbed\n" in question  # a multi-line display keeps its lines and tabs
    answer = next(line for line in out.splitlines() if line.startswith("Answer: "))
    assert answer.endswith(SHOWN)  # the score screen
    assert out.count("Heatrun\\x1b]0;OWNED\\x07") >= 4  # table cells, the turn's and `full`'s
    assert out.count(f" {SHOWN}\n") >= 1  # a plain-text tool output (the answer's)
