"""More lines that print a user's value: ``data shift-check``'s tables and file lines, the
``wrote ...`` lines of ``export-sft``, ``prepare-verl`` and ``simulator-check``, ``models``' paths
under ``$AGENTENV_HOME``, and the servers' startup and binding lines show ESC/OSC sequences,
``\\r``, BEL and bidi overrides as escapes (:func:`agentenv.terminal_text.terminal_text`), on
stdout, on stderr and in the log.

Why: printed raw, a task file whose ``kind`` is ``ESC]0;OWNED BEL ESC[2K CR ...`` or a ``--out``
path holding one set the window title, erased the line and printed a fake one in its place (the
probe's findings). The helpers are those of ``tests/test_cli_control_bytes.py``.
"""

from __future__ import annotations

import argparse
import gc
import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentenv.cli import serve_env as serve_env_cli
from agentenv.cli import serve_retrieval as serve_retrieval_cli
from agentenv.cli.data import main as data_main

from .control_bytes import EVIL, SHOWN, media_rows, raw_in, run_cli

KIND = "lookup\x1b]0;OWNED\x07\x1b[2K\r\u202e"
"""A task row's ``kind``: OSC title, BEL, erase line, carriage return, right-to-left override."""
KIND_SHOWN = "lookup\\x1b]0;OWNED\\x07\\x1b[2K\\x0d\\u202e"
HARD = "hard\x07\x1b[8m"
"""A task row's ``difficulty``: BEL and hidden text."""
HARD_SHOWN = "hard\\x07\\x1b[8m"


@pytest.fixture(autouse=True)
def _in_an_empty_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def _shift_rows(path: Path, kinds: list[str], difficulties: list[str]) -> Path:
    rows = [
        {"question": f"question {i} about film {i * 7}", "kind": kind, "difficulty": difficulty}
        for i, (kind, difficulty) in enumerate(zip(kinds, difficulties, strict=True))
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture
def shift_files(tmp_path: Path) -> tuple[Path, Path]:
    a = _shift_rows(tmp_path / f"a{EVIL}.jsonl", [KIND] * 3 + ["count"] * 3, [HARD] * 6)
    b = _shift_rows(tmp_path / f"b{EVIL}.jsonl", ["count"] * 4 + [KIND] * 2, ["easy"] * 6)
    return a, b


def _table(out: str, field: str) -> list[str]:
    """The lines of ``field``'s histogram: its header and one line per value."""
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"{field}:"))
    end = next(i for i in range(start, len(lines)) if "JS divergence" in lines[i])
    return lines[start:end]


def test_shift_check_shows_kinds_difficulties_and_paths_escaped(
    tmp_path: Path, shift_files: tuple[Path, Path], capsys
) -> None:
    a, b = shift_files
    out_file = tmp_path / f"report{EVIL}.json"
    argv = ["data", "shift-check", str(a), str(b), "--permutations", "20", "--out", str(out_file)]
    code, out, err = run_cli(argv, capsys)
    assert code == 0 and not raw_in(out + err), ascii(out + err)
    assert f"  A: {tmp_path}/a{SHOWN}.jsonl (6 rows)" in out
    assert f"  B: {tmp_path}/b{SHOWN}.jsonl (6 rows)" in out
    assert f"wrote {tmp_path}/report{SHOWN}.json" in out
    assert KIND_SHOWN in out and HARD_SHOWN in out
    for field in ("kind", "difficulty"):  # escaped before the widths: the columns line up
        rows = _table(out, field)[1:]
        assert len(rows) == 2 and len({len(row) for row in rows}) == 1, rows
    # The JSON report keeps the values as they are (JSON escapes them itself).
    report = json.loads(out_file.read_text(encoding="utf-8"))
    assert report["kind"]["counts_a"][KIND] == 3


def test_shift_check_json_output_holds_no_raw_control_byte(
    shift_files: tuple[Path, Path], capsys
) -> None:
    a, b = shift_files
    code, out, err = run_cli(
        ["data", "shift-check", str(a), str(b), "--permutations", "20", "--json"], capsys
    )
    assert code == 0 and not raw_in(out + err), ascii(out + err)
    assert json.loads(out)["kind"]["counts_b"][KIND] == 2


def test_shift_checks_own_main_escapes_its_error_line(tmp_path: Path, capsys) -> None:
    """``python -m agentenv.cli.data``: its one-line error names the file escaped."""
    short = _shift_rows(tmp_path / f"s{EVIL}.jsonl", ["count"] * 2, ["easy"] * 2)
    capsys.readouterr()
    code = data_main(["shift-check", str(short), str(short)])
    captured = capsys.readouterr()
    assert code == 2 and not raw_in(captured.out + captured.err), ascii(captured.err)
    assert captured.err.startswith("agentenv: error: ") and SHOWN in captured.err


def test_export_sft_prints_the_files_it_wrote_escaped(tmp_path: Path, capsys) -> None:
    tasks = media_rows(tmp_path / f"t{EVIL}.jsonl")
    out_dir = tmp_path / f"sft{EVIL}"
    argv = ["export-sft", "MediaSearch-v0", "--tasks", str(tasks), "--out", str(out_dir)]
    code, out, err = run_cli([*argv, "--episodes", "2", "--no-progress"], capsys)
    assert code == 0 and not raw_in(out + err), ascii(out + err)
    assert f"wrote {tmp_path}/sft{SHOWN}/chat.jsonl, " in out
    assert (out_dir / "chat.jsonl").is_file()


def test_prepare_verl_prints_its_tasks_and_out_escaped(tmp_path: Path, capsys) -> None:
    pytest.importorskip("pyarrow")
    tasks = media_rows(tmp_path / f"t{EVIL}.jsonl")
    out_file = tmp_path / f"verl{EVIL}.parquet"
    argv = ["prepare-verl", "MediaSearch-v0", "--tasks", str(tasks), "--out", str(out_file)]
    code, out, err = run_cli(argv, capsys)
    assert code == 0 and not raw_in(out + err), ascii(out + err)
    assert f"(tasks {tmp_path}/t{SHOWN}.jsonl, seed 0) to {tmp_path}/verl{SHOWN}.parquet" in out
    assert out_file.is_file()


def test_simulator_check_prints_its_json_path_escaped(tmp_path: Path, capsys) -> None:
    report = tmp_path / f"j{EVIL}.json"
    argv = ["simulator-check", "--env", "MediaConcierge-v0", "--dialogues", "1"]
    code, out, err = run_cli([*argv, "--json", str(report)], capsys)
    assert code == 0 and not raw_in(out + err), ascii(out + err)
    assert f"wrote {tmp_path}/j{SHOWN}.json" in out and report.is_file()


def test_models_list_and_path_show_the_home_escaped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    home = tmp_path / f"home{EVIL}"  # a fresh, empty home: nothing is installed
    monkeypatch.setenv("AGENTENV_HOME", str(home))
    code, out, err = run_cli(["models", "list"], capsys)
    assert code == 0 and not raw_in(out + err), ascii(out)
    assert out.startswith("smollm2-135m: not installed") and f"home{SHOWN}" in out
    code, out, err = run_cli(["models", "path", "smollm2-135m"], capsys)
    assert code != 0 and not raw_in(out + err), ascii(err)
    assert f"home{SHOWN}" in err


def test_models_path_prints_an_installed_model_dir_escaped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    from agentenv.models import smollm2

    where = tmp_path / f"home{EVIL}" / "models" / "smollm2-135m"
    monkeypatch.setattr(smollm2, "model_dir", lambda: where)
    code, out, err = run_cli(["models", "path", "smollm2-135m"], capsys)
    assert code == 0 and not raw_in(out + err), ascii(out)
    assert out == f"{tmp_path}/home{SHOWN}/models/smollm2-135m\n"
    code, out, err = run_cli(["models", "list"], capsys)
    assert code == 0 and not raw_in(out + err) and f"home{SHOWN}" in out


# --------------------------------------------------------------------------- servers


class _Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


@pytest.fixture
def log_of() -> Iterator[Any]:
    """``log_of(name)``: the messages logged to that logger (at any level) while the test runs,
    whether or not another test turned its propagation off."""
    attached: list[tuple[logging.Logger, _Lines, int]] = []

    def attach(name: str) -> list[str]:
        logger = logging.getLogger(name)
        handler = _Lines()
        attached.append((logger, handler, logger.level))
        logger.addHandler(handler)
        logger.setLevel(logging.DEBUG)
        return handler.lines

    yield attach
    for logger, handler, level in attached:
        logger.removeHandler(handler)
        logger.setLevel(level)


def test_serve_env_binding_warning_shows_the_host_escaped(log_of) -> None:
    from agentenv.integrations.serve_env.limits import EnvServerLimits
    from agentenv.integrations.serve_env.runner import checked_limits

    lines = log_of("agentenv.serve_env")
    checked_limits(EVIL, EnvServerLimits())
    binding = [line for line in lines if "binding" in line]
    assert binding == [f"serve-env binding {SHOWN}: the server has no authentication"]


def test_serve_env_announces_its_url_escaped() -> None:
    args = argparse.Namespace(env_id="MediaSearch-v0", split="train", protocol="verl-tool")
    args.host = EVIL
    line = serve_env_cli.serving_line(args, 8710, ", 2 worker processes")
    assert not raw_in(line)
    assert line == (
        f"serve-env: MediaSearch-v0 (train) over the verl-tool protocol on http://{SHOWN}:8710, "
        "2 worker processes"
    )


def test_serve_env_run_prints_the_announce_line_escaped(
    monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    """The line ``run`` prints once the server listens (the server itself is not started)."""
    pytest.importorskip("uvicorn")
    pytest.importorskip("starlette")
    from agentenv.integrations.serve_env import runner

    def serve(app, host, port, limits, *, announce, **kwargs) -> None:
        announce(8710)

    monkeypatch.setattr(runner, "serve", serve)
    argv = ["serve-env", "MediaSearch-v0", "--protocol", "verl-tool", "--host", EVIL]
    code, out, err = run_cli(argv, capsys)
    assert code == 0 and not raw_in(out + err), ascii(err)
    assert f"on http://{SHOWN}:8710" in err


def test_serve_retrieval_prints_its_corpus_and_url_escaped(
    monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    """The ``listening on`` line, with the corpus loader, index and server stubbed out."""
    import agentenv.retrieval
    import agentenv.retrieval.server

    served: list[str] = []
    monkeypatch.setattr(
        serve_retrieval_cli, "load_corpus_texts", lambda name: (["d1"], ["text"], "sum")
    )
    monkeypatch.setattr(serve_retrieval_cli, "corpus_retriever_params", lambda *a: {})
    monkeypatch.setattr(agentenv.retrieval, "build_retriever", lambda *a, **k: object())
    monkeypatch.setattr(
        agentenv.retrieval.server, "serve", lambda r, i, host, *a, **k: served.append(host)
    )
    argv = ["serve-retrieval", "--corpus", f"c{EVIL}", "--host", EVIL, "--port", "8700"]
    code, out, err = run_cli(argv, capsys)
    assert code == 0 and not raw_in(out + err), ascii(err)
    assert f"over c{SHOWN} (1 documents)" in err and f"listening on http://{SHOWN}:8700" in err
    assert served == [EVIL]  # the host itself is passed on unchanged


def test_retrieval_server_binding_warning_shows_the_host_escaped(
    monkeypatch: pytest.MonkeyPatch, log_of
) -> None:
    pytest.importorskip("uvicorn")
    from agentenv.retrieval import server

    class Stop(Exception):
        pass

    def bind_listener(host: str, port: int) -> Any:
        raise Stop(host)

    monkeypatch.setattr(server, "bind_listener", bind_listener)
    lines = log_of(server.logger.name)
    try:
        with pytest.raises(Stop):
            server.serve(object(), {}, EVIL, 0)
    finally:
        gc.unfreeze()  # serve froze the heap for its forks; give it back to this process
    binding = [line for line in lines if "binding" in line]
    assert binding == [f"retrieval server binding {SHOWN}: it has no authentication"]
