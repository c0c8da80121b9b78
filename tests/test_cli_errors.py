"""One line for every mistake: each sub-command fed bad input exits 2, with no traceback, in at most 3
lines that name the bad value (unknown flags, wrong types, bad values, empty, binary, huge and special
files, folders, unreadable paths, missing extras); AGENTENV_DEBUG=1 shows the traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from agentenv.cli.main import COMMANDS, main


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("bad")
    out = {
        "empty": root / "empty.jsonl",
        "binary": root / "binary.jsonl",
        "huge_line": root / "huge.jsonl",
        "folder": root / "folder",
        "empty_folder": root / "empty_folder",
        "file": root / "a_file",
        "latin1": root / "latin1.jsonl",
        "unreadable": root / "unreadable.jsonl",
    }
    out["empty"].write_bytes(b"")
    out["binary"].write_bytes(b"\x00\x01\x02PK\x03\x04" * 100)
    out["huge_line"].write_bytes(b'{"question": "' + b"a" * (2 << 20) + b'", "answer": "x"}\n')
    out["folder"].mkdir()
    (out["folder"] / "x.bin").write_bytes(b"\x00" * 10)
    out["empty_folder"].mkdir()
    out["file"].write_text("not a folder")
    out["latin1"].write_bytes('{"question": "caf\xe9"}\n'.encode("latin-1"))
    out["unreadable"].write_text('{"question": "q", "answer": "a"}\n')
    out["unreadable"].chmod(0)
    out["root"] = root
    return out


@pytest.fixture(autouse=True)
def _in_an_empty_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Cases without --out use the default ./results: run each test in an empty folder, so a run the
    developer left in the checkout's results/ is not refused before the mistake is read."""
    monkeypatch.chdir(tmp_path)


EVAL = ["eval", "MediaSearch-v0", "--agent", "oracle", "--no-progress"]

# (argv with {name} placeholders for the files above, what the message must name)
CASES: list[tuple[list[str], str]] = [
    (["evl"], "evl"),
    (["--bogus"], "--bogus"),
    ([*EVAL, "--bogus"], "--bogus"),
    ([*EVAL, "--episodes", "x"], "'x'"),
    ([*EVAL, "--episodes", "0"], "--episodes"),
    ([*EVAL, "--workers", "0"], "--workers"),
    ([*EVAL, "--seed", "1.5"], "'1.5'"),
    ([*EVAL, "--split", "tset"], "'tset'"),
    ([*EVAL, "--max-agent-failures", "-1"], "--max-agent-failures"),
    ([*EVAL, "--reward", "lenient2"], "lenient2"),
    ([*EVAL, "--env-arg", "max_turns=abc"], "abc"),
    ([*EVAL, "--env-arg", "kk=3"], "kk"),
    ([*EVAL, "--agent-args", "kk=3"], "kk"),
    ([*EVAL, "--agent-args", "k"], "'k'"),
    (["eval", "MediaSearch-v0", "--agent", "llm"], "model="),
    (
        [
            "eval",
            "MediaSearch-v0",
            "--agent",
            "llm",
            "--agent-args",
            "model=q",
            "base_url=localhost:8000",
        ],
        "localhost:8000",
    ),
    (["eval", "MediaSearch-v0", "--agent", "no-such-agent"], "no-such-agent"),
    (["eval", "MediaSerch-v0", "--agent", "oracle"], "MediaSerch-v0"),
    (["eval", "nosuchmodule:X-v0", "--agent", "oracle"], "nosuchmodule"),
    ([*EVAL, "--out", "{file}"], "{file}"),
    ([*EVAL, "--out", "{file}/run"], "{file}"),
    ([*EVAL, "--tasks", "{root}/missing.jsonl"], "missing.jsonl"),
    ([*EVAL, "--reward", "{root}/missing.yaml"], "missing.yaml does not exist"),
    ([*EVAL, "--out", "/proc/no-such-folder/run"], "--out /proc/no-such-folder/run"),
    (
        ["reproduce", "reward-hacking", "--out", "/proc/no-such-folder/x"],
        "/proc/no-such-folder|agentenv[",
    ),
    ([*EVAL, "--tasks", "{empty}"], "{empty}"),
    ([*EVAL, "--tasks", "{binary}"], "{binary}"),
    ([*EVAL, "--tasks", "{huge_line}"], "{huge_line}"),
    ([*EVAL, "--tasks", "{latin1}"], "{latin1}"),
    ([*EVAL, "--tasks", "{folder}"], "{folder}: is a directory"),  # MediaSearch reads one file
    (
        ["eval", "RareDiseaseDiagnosis-v0", "--agent", "oracle", "--tasks", "{folder}"],
        "x.bin is not a case file",  # the family's reader names what a folder of cases may hold
    ),
    ([*EVAL, "--tasks", "{empty_folder}"], "{empty_folder}"),
    ([*EVAL, "--tasks", "{unreadable}"], "{unreadable}"),
    ([*EVAL, "--tasks", "/dev/zero", "--episodes", "1"], "/dev/zero"),
    (["play", "NoSuch-v0"], "NoSuch-v0"),
    (["play", "MediaSearch-v0", "--seed", "x"], "'x'"),
    (["play", "MediaSearch-v0", "--split", "tset"], "'tset'"),
    (["list", "--family-module", "nosuchmodule"], "nosuchmodule"),
    (["list", "--bogus"], "--bogus"),
    (["leaderboard", "{root}/missing"], "missing"),
    (["leaderboard", "{root}", "--out", "{file}"], "is a file; give a folder"),
    (["leaderboard", "{empty}"], "{empty}"),
    (["leaderboard", "{binary}"], "{binary}"),
    (["leaderboard", "{empty_folder}"], "{empty_folder}"),
    (["check-tasks", "MediaSearch-v0", "--tasks", "{root}/missing.jsonl"], "missing.jsonl"),
    (["check-tasks", "MediaSearch-v0", "--tasks", "{binary}"], "{binary}"),
    (["check-tasks", "MediaSearch-v0", "--tasks", "/dev/zero"], "/dev/zero"),
    (["check-tasks", "MediaSearch-v0", "--tasks", "{empty}"], "{empty}"),
    (
        ["export-sft", "MediaSearch-v0", "--out", "{root}/sft", "--episodes", "0"],
        "--episodes|agentenv[",
    ),
    (["export-sft", "MediaSearch-v0", "--out", "{file}"], "{file}|agentenv["),
    (["export-sft", "MediaSearch-v0"], "--out"),
    # a plan of 10^14 episodes filled 24 GB before the kernel killed the process
    ([*EVAL, "--episodes", "99999999999999"], "expected 1 to 10,000,000 episodes"),
    (
        [*EVAL, "--out", ""],
        "an empty path names no folder",
    ),  # wrote the run into the working folder
    # a dead service gave a "clean" run at 0.20 accuracy, every search an error observation
    (
        [*EVAL, "--out", "{root}/r", "--env-arg", "retriever=http://127.0.0.1:1"],
        "does not answer /health",
    ),
    ([*EVAL, "--out", "{root}/c", "--env-arg", "catalog=bogus"], "catalog must be a Catalog"),
    ([*EVAL, "--out", "{root}/c", "--env-arg", "kinds=" + "[" * 30000], "nested too deeply"),
    ([*EVAL, "--out", "{root}/c", "--env-arg", "compact=yes"], "must be True or False, got 'yes'"),
    (
        [
            "prepare-verl",
            "MediaSearch-v0",
            "--episodes",
            "99999999999",
            "--out",
            "{root}/r.parquet",
        ],
        "expected 1 to 10,000,000 episodes",
    ),
    (["data", "shift-check", "{empty}", "{empty}", "--permutations", "-1"], "permutations"),
    (
        ["judge-consistency", "--episodes", "{empty}", "--endpoint", "x", "--min-kappa", "nan"],
        "expected a number from -1 to 1",
    ),
    (["simulator-check", "--env", "DiagnosisDialogue-v0", "--dialogues", "0"], "dialogues"),
    (["simulator-check", "--env", "DiagnosisDialogue-v0", "--json", "{root}"], "is a folder"),
    (["data", "shift-check", "{file}", "{file}", "--out", "{file}"], "is one of the inputs"),
    (["data", "shift-check", "{empty}", "{empty}", "--out", "{file}"], "exists; pass --overwrite"),
    (["export-sft", "MediaConcierge-v0", "--out", "{root}/sft"], "two-agent (PettingZoo) env"),
    (
        ["export-sft", "MediaSearch-v0", "--out", "{root}/sft", "--tokenizer", "/nonexistent"],
        "no such folder",
    ),
    (
        ["export-sft", "MediaSearch-v0", "--out", "{root}/sft", "--seed", "-3"],
        "seed is a whole number",
    ),
    (["play", "MediaSearch-v0", "--seed", "-1"], "a seed is a whole number from 0, got '-1'"),
    (["export-sft", "MediaSearch-v0", "--out", "{root}/sft", "--min-reward", "nan"], "nan"),
    (["export-sft", "MediaSearch-v0", "--out", "{root}/sft", "--tasks", ""], "empty path"),
    (["data", "shift-check", "{root}/missing.jsonl", "{empty}"], "missing.jsonl"),
    (["data", "shift-check", "{binary}", "{binary}"], "{binary}"),
    (["data", "shift-check", "{folder}", "{folder}"], "{folder}"),
    (["data", "bogus"], "bogus"),
    (["simulator-check", "--env", "NoSuch-v0"], "NoSuch-v0"),
    (["simulator-check", "--dialogues", "x"], "'x'"),
    (
        [
            "judge-consistency",
            "--episodes",
            "{root}/missing.jsonl",
            "--endpoint",
            "http://127.0.0.1:9",
        ],
        "missing.jsonl",
    ),
    (
        ["judge-consistency", "--episodes", "{binary}", "--endpoint", "http://127.0.0.1:9"],
        "{binary}",
    ),
    (["reproduce", "no-such-lesson", "--out", "{root}/r"], "no-such-lesson"),
    (
        ["reproduce", "reward-hacking", "--seeds", "2", "--seed-list", "3,4", "--out", "{root}/r2"],
        "not both",
    ),
    (["reproduce", "sft-then-rl", "--seed-list", "3", "--out", "{root}/r3"], "one seed"),
    (["reproduce", "reward-hacking", "--device", "cuda", "--out", "{root}/r4"], "sft-then-rl only"),
    (["reproduce", "reward-hacking", "--quick", "--out", "{file}"], "{file}"),
    (["reproduce", "reward-hacking", "--overwrite", "--out", "{folder}"], "{folder}"),
    (["export-sft", "MediaSearch-v0", "--overwrite", "--out", "{folder}"], "{folder}|agentenv["),
    (["serve-env", "MediaSerch-v0", "--protocol", "verl-tool"], "MediaSerch-v0"),
    (["serve-env", "MediaSearch-v0", "--protocol", "gym"], "gym"),
    (["serve-env", "MediaSearch-v0", "--protocol", "openenv", "--port", "99999"], "99999"),
    (
        ["serve-env", "MediaSearch-v0", "--protocol", "verl-tool", "--max-live-envs", "0"],
        "--max-live-envs",
    ),
    (["prepare-verl", "MediaSearch-v0", "--out", "{file}"], "{file}"),
    (["prepare-verl", "MediaSearch-v0", "--out", "{file}/rows.parquet"], "{file}"),
    (["prepare-verl", "MediaSearch-v0", "--episodes", "-3", "--out", "{root}/rows.parquet"], "-3"),
    (
        [
            "prepare-verl",
            "MediaSearch-v0",
            "--env-arg",
            "max_turns=abc",
            "--out",
            "{root}/rows.parquet",
        ],
        "max_turns",
    ),
    (["serve-retrieval", "--corpus", "nosuch"], "nosuch|agentenv["),
    (["serve-retrieval", "--port", "x"], "'x'"),
    # NaN limits hung every connection; inf overflowed the timer; a bad port failed after the index
    (
        ["serve-retrieval", "--corpus", "media", "--header-timeout", "nan"],
        "--header-timeout must be a number, got nan",
    ),
    (
        ["serve-retrieval", "--corpus", "media", "--idle-timeout", "inf"],
        "--idle-timeout must be a number from 0",
    ),
    (
        ["serve-retrieval", "--corpus", "media", "--max-wait-ms", "nan"],
        "--max-wait-ms must be a number",
    ),
    (["serve-retrieval", "--corpus", "media", "--max-k", "0"], "--max-k must be positive"),
    (["serve-retrieval", "--port", "99999"], "a TCP port is 0 to 65535, got 99999"),
    (["serve-retrieval", "--workers", "0"], "at least 1, got '0'"),
    (
        ["serve-env", "MediaSearch-v0", "--protocol", "verl-tool", "--idle-timeout", "nan"],
        "--idle-timeout must be a number",
    ),
    (["models", "instal", "x"], "instal"),
]


def _fill(text: str, files: dict[str, Path]) -> str:
    return text.format(**{k: str(v) for k, v in files.items()})


def _run(argv: list[str], capsys) -> tuple[int, str]:
    capsys.readouterr()
    try:
        code = main(argv)
    except SystemExit as exit_:  # argparse's usage errors and --help exit
        code = exit_.code if isinstance(exit_.code, int) else 1
    return code, capsys.readouterr().err


def test_every_sub_command_has_cases() -> None:
    covered = {argv[0] for argv, _ in CASES}
    assert set(COMMANDS) <= covered, set(COMMANDS) - covered


@pytest.mark.parametrize(("argv", "named"), CASES, ids=[" ".join(a)[:60] for a, _ in CASES])
def test_a_mistake_is_one_line_naming_the_bad_value(
    argv: list[str], named: str, files, capsys
) -> None:
    if "{unreadable}" in " ".join(argv) and os.geteuid() == 0:
        pytest.skip("root reads any file")
    argv = [_fill(a, files) for a in argv]
    code, err = _run(argv, capsys)
    lines = err.strip().splitlines()
    assert code == 2, err
    assert "Traceback" not in err and 1 <= len(lines) <= 3, err
    assert any(_fill(n, files) in err for n in named.split("|")), err


def test_a_refused_reproduce_leaves_nothing_in_out(files, capsys) -> None:
    out = files["root"] / "refused-lesson"
    code, err = _run(
        ["reproduce", "reward-hacking", "--seeds", "2", "--seed-list", "3,4", "--out", str(out)],
        capsys,
    )
    assert code == 2 and "not both" in err and not out.exists()


def test_a_lesson_stopped_before_writing_leaves_no_run_in_out(files, capsys, monkeypatch) -> None:
    """A missing extra stops a lesson at once: its --out must not keep the start marker, or the same
    command, rerun after the install, is refused as "already holds a run". A lesson that wrote
    something before it stopped keeps it (--overwrite replaces it)."""
    from agentenv.cli import reproduce
    from agentenv.lessons.structured.rl_extra import MissingRLExtra

    def missing_extra(args) -> int:
        raise MissingRLExtra("training and the sb3 agent need the rl extra: pip install -e '.[rl]'")

    monkeypatch.setattr(reproduce, "_run", missing_extra)
    out = files["root"] / "lesson-missing-extra"
    argv = ["reproduce", "reward-hacking", "--quick", "--out", str(out)]
    code, err = _run(argv, capsys)
    assert code == 2 and "rl extra" in err and not out.exists(), err

    def stopped_midway(args) -> int:
        (args.out / "runs").mkdir()
        raise MissingRLExtra("plots need the rl extra: pip install -e '.[rl]'")

    monkeypatch.setattr(reproduce, "_run", stopped_midway)
    code, err = _run(argv, capsys)
    assert code == 2 and (out / "runs").is_dir() and (out / "reproduce.json").is_file(), err


def test_agentenv_debug_shows_the_traceback(files) -> None:
    argv = [*EVAL, "--reward", "lenient2", "--out", str(files["root"] / "dbg")]
    quiet = subprocess.run(
        [sys.executable, "-m", "agentenv.cli.main", *argv], capture_output=True, text=True
    )
    loud = subprocess.run(
        [sys.executable, "-m", "agentenv.cli.main", *argv],
        capture_output=True,
        text=True,
        env={**os.environ, "AGENTENV_DEBUG": "1"},
    )
    assert quiet.returncode == loud.returncode == 2
    assert "Traceback" not in quiet.stderr and "Traceback" in loud.stderr
    assert quiet.stderr.strip().splitlines()[-1] == loud.stderr.strip().splitlines()[-1]


def test_a_closed_pipe_is_not_an_error(tmp_path: Path) -> None:
    """`agentenv eval ... | head -1`: the reader leaves early; no BrokenPipeError traceback."""
    reader = subprocess.Popen(["head", "-1"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "agentenv.cli.main",
            *EVAL,
            "--episodes",
            "3",
            "--out",
            str(tmp_path / "run"),
        ],
        stdout=reader.stdin,
        stderr=subprocess.PIPE,
        text=True,
    )
    reader.stdin.close()
    reader.wait()
    assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr, done.stderr
    assert done.returncode == 0


@pytest.mark.parametrize(
    ("argv", "module", "extra"),
    [
        (
            [
                "export-sft",
                "MediaSearch-v0",
                "--out",
                "{root}/sft-missing-extra",
                "--episodes",
                "1",
            ],
            "tokenizers",
            "tokens",
        ),
        (["serve-retrieval", "--corpus", "media", "--port", "{port}"], "starlette", "server"),
    ],
)
def test_a_missing_extra_is_named(
    argv: list[str], module: str, extra: str, files, capsys, monkeypatch
) -> None:
    """On a core install a command that needs an extra names it, instead of a bare ModuleNotFoundError."""
    for name in [m for m in sys.modules if m == module or m.startswith(module + ".")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, module, None)  # importing it raises ModuleNotFoundError
    for name in [
        m
        for m in sys.modules
        if m.startswith(
            (
                "agentenv.data",
                "agentenv.tokens",
                "agentenv.retrieval.serve",
                "agentenv.retrieval.server",
            )
        )
    ]:
        monkeypatch.delitem(sys.modules, name)
        parent, _, child = name.rpartition(".")
        if hasattr(
            sys.modules.get(parent), child
        ):  # the re-import rebinds it: give the old one back
            monkeypatch.setattr(sys.modules[parent], child, getattr(sys.modules[parent], child))
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    code, err = _run([_fill(a.replace("{port}", str(port)), files) for a in argv], capsys)
    assert code == 2 and "Traceback" not in err and len(err.strip().splitlines()) <= 3, err
    assert f"agentenv[{extra}]" in err, err


def test_a_broken_socket_does_not_silence_stdout(monkeypatch, capfd) -> None:
    """A BrokenPipeError from a socket (a dead endpoint mid-run) is an error, not the reader of stdout
    leaving: silencing stdout then hid every later line, pytest's own report included."""
    import os

    import agentenv.cli.main as cli

    def broken(argv: list[str]) -> int:
        raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr(cli, "_main", broken)
    before = os.fstat(1)
    assert cli.main(["list"]) == 1
    after = os.fstat(1)
    assert (before.st_dev, before.st_ino) == (
        after.st_dev,
        after.st_ino,
    )  # stdout is still where it was
    assert "BrokenPipeError" in capfd.readouterr().err


# (argv, the name the hint must offer): agents, sub-commands, flags, splits, reward presets, env ids, choices
DID_YOU_MEAN: list[tuple[list[str], str]] = [
    (["evl", "MediaSearch-v0"], "eval"),
    (["eval", "MediaSearch-v0", "--agnt", "oracle"], "--agent"),
    ([*EVAL, "--episods", "3"], "--episodes"),
    ([*EVAL, "--episods=3"], "--episodes"),
    (["eval", "MediaSearch-v0", "--agent", "orcale"], "oracle"),
    ([*EVAL, "--split", "tset"], "test"),
    ([*EVAL, "--reward", "strct"], "strict"),
    (["eval", "MediaSerch-v0", "--agent", "oracle"], "MediaSearch-v0"),
    (["serve-env", "MediaSearch-v0", "--protocol", "openen"], "openenv"),
]


@pytest.mark.parametrize(
    ("argv", "meant"), DID_YOU_MEAN, ids=[" ".join(a) for a, _ in DID_YOU_MEAN]
)
def test_a_misspelt_name_gets_a_did_you_mean(argv: list[str], meant: str, capsys) -> None:
    code, err = _run(argv, capsys)
    assert code == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert f"did you mean {meant!r}" in err, err


def test_no_hint_when_nothing_is_close(capsys) -> None:
    code, err = _run([*EVAL, "--zzzzzz"], capsys)
    assert code == 2 and "--zzzzzz" in err and "did you mean" not in err, err


def test_an_abbreviated_flag_still_works() -> None:
    from agentenv.cli.main import build_parser

    args = build_parser("eval").parse_args(
        ["eval", "MediaSearch-v0", "--agent", "oracle", "--epi", "3"]
    )
    assert args.episodes == 3
