"""``agentenv judge-consistency`` given hostile paths and flags: each is one line and exit 2, at once.

Why these: a probe grew ``--cache /dev/zero`` to 12.6 GB, hung on a FIFO cache, crashed (exit 1,
which this command means as UNSTABLE) on deep JSON, replaced the run's ``summary.json`` with the
report, advised deleting the run's ``episodes.jsonl``, and waited 127 s per request at
``--retries 8``. Each test runs the command as a user does, through ``agentenv.cli.main.main``,
against the loopback fake judge.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from agentenv.cli.main import main as agentenv_main
from agentenv.judge import client as client_module
from agentenv.judge.client import MAX_BACKOFF_S, MAX_RETRIES, ChatClient, backoff_wait

from .fake_endpoint import FakeJudge

CACHE_HINT = "give a new cache path, or the path of a cache the judge wrote"


@pytest.fixture
def run_dir(tmp_path: Path, records: list[dict]) -> Path:
    """A run folder as ``agentenv eval --out`` leaves it: episodes.jsonl and summary.json."""
    folder = tmp_path / "ev1"
    folder.mkdir()
    (folder / "episodes.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    (folder / "summary.json").write_text(json.dumps({"env_id": "MediaSearch-v0"}) + "\n")
    return folder


def argv(run_dir: Path, judge: FakeJudge, *extra: str) -> list[str]:
    """The command line, with the env taken from the run's summary.json."""
    return [
        "judge-consistency",
        "--episodes",
        str(run_dir / "episodes.jsonl"),
        "--endpoint",
        judge.url,
        "--model",
        "always-yes",
        "--retries",
        "0",
        *extra,
    ]


def exit_code(args: list[str]) -> int:
    """``main``'s status; argparse's refusals leave by ``SystemExit``."""
    try:
        return agentenv_main(args)
    except SystemExit as exit_:
        return int(exit_.code or 0)


def snapshot(run_dir: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(run_dir.iterdir())}


def assert_one_line_refusal(err: str, *fragments: str) -> None:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    for fragment in fragments:
        assert fragment in err, (fragment, err)


def test_a_fifo_cache_is_refused_at_once(
    fake_judge: FakeJudge, run_dir: Path, tmp_path: Path
) -> None:
    """A FIFO used to hang the reader; a subprocess with a timeout makes a hang a failure."""
    fifo = tmp_path / "cache.fifo"
    os.mkfifo(fifo)
    code = "import sys; from agentenv.cli.main import main; sys.exit(main(sys.argv[1:]))"
    done = subprocess.run(
        [sys.executable, "-c", code, *argv(run_dir, fake_judge, "--cache", str(fifo))],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2, done.stderr
    assert_one_line_refusal(done.stderr, f"--cache {fifo}: a FIFO, not a regular file", CACHE_HINT)
    assert sum(fake_judge.requests.values()) == 0


def _deep(p: Path) -> None:
    p.write_text("[" * 100_000 + "\n")


def _not_utf8(p: Path) -> None:
    p.write_bytes(b'{"key": "\xff\xfe"}\n')


def _user_notes(p: Path) -> None:
    p.write_text("my notes, not a cache\n")


def _wrong_row(p: Path) -> None:
    p.write_text(json.dumps({"key": "a" * 64, "verdict": True}) + "\n" + '{"key": "k"}\n')


@pytest.mark.parametrize(
    ("write", "fragment"),
    [
        (_deep, ":1: JSON nested too deeply to be a judge cache line"),
        (_not_utf8, ":1: not UTF-8 text"),
        (_user_notes, ":1: not JSON"),
        (_wrong_row, ":2: not a judge cache line"),
    ],
)
def test_a_bad_cache_line_is_named_by_file_and_line(
    fake_judge: FakeJudge,
    run_dir: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture,
    write: Callable[[Path], object],
    fragment: str,
) -> None:
    """Deep nesting was a RecursionError (exit 1); bad bytes a codec error without the file."""
    cache = tmp_path / "cache.jsonl"
    write(cache)
    before = cache.read_bytes()
    assert exit_code(argv(run_dir, fake_judge, "--cache", str(cache))) == 2
    err = capsys.readouterr().err
    assert_one_line_refusal(err, f"{cache}{fragment}", CACHE_HINT)
    assert "delete" not in err, "never advise deleting a file that may be the user's"
    assert cache.read_bytes() == before and sum(fake_judge.requests.values()) == 0


@pytest.mark.parametrize(
    ("cache", "fragment"),
    [
        ("/dev/zero", "a device or special file, not a regular file"),
        ("{tmp}/afile/x.jsonl", "a part of this path is a file, not a folder"),
        ("{tmp}", "a folder, not a regular file"),
    ],
)
def test_a_cache_that_is_no_file_is_refused_before_any_request(
    fake_judge: FakeJudge,
    run_dir: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture,
    cache: str,
    fragment: str,
) -> None:
    """``/dev/zero`` grew to 12.6 GB; ``A.jsonl/x`` was a FileExistsError after the requests."""
    (tmp_path / "afile").write_text("x\n")
    path = cache.format(tmp=tmp_path)
    assert exit_code(argv(run_dir, fake_judge, "--cache", path)) == 2
    assert_one_line_refusal(capsys.readouterr().err, f"--cache {path}", fragment)
    assert sum(fake_judge.requests.values()) == 0


def _symlink(target: Path, link: Path) -> Path:
    link.symlink_to(target)
    return link


def _hardlink(target: Path, link: Path) -> Path:
    os.link(target, link)
    return link


@pytest.mark.parametrize(
    ("flag", "make"),
    [
        ("--json", lambda run, tmp: run / "summary.json"),
        ("--json", lambda run, tmp: run / "episodes.jsonl"),
        ("--json", lambda run, tmp: _symlink(run / "summary.json", tmp / "link.json")),
        ("--json", lambda run, tmp: tmp / ".." / tmp.name / "ev1" / "summary.json"),
        ("--cache", lambda run, tmp: run / "episodes.jsonl"),
        ("--cache", lambda run, tmp: run / "summary.json"),
        ("--cache", lambda run, tmp: _hardlink(run / "episodes.jsonl", tmp / "hard.jsonl")),
    ],
)
def test_an_output_that_is_an_input_is_refused_even_with_overwrite(
    fake_judge: FakeJudge,
    run_dir: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture,
    flag: str,
    make: Callable[[Path, Path], Path],
) -> None:
    """``--json ev1/summary.json --overwrite`` replaced the summary the command reads."""
    path = make(run_dir, tmp_path)
    before = snapshot(run_dir)
    assert exit_code(argv(run_dir, fake_judge, flag, str(path), "--overwrite")) == 2
    err = capsys.readouterr().err
    assert_one_line_refusal(err, f"{flag} {path}: is one of the inputs")
    assert "delete" not in err
    assert snapshot(run_dir) == before, "the run's files are unchanged"
    assert sum(fake_judge.requests.values()) == 0


def test_the_report_and_the_cache_cannot_be_one_file(
    fake_judge: FakeJudge, run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """The report, written last, would replace the verdicts the run just paid for."""
    same = str(tmp_path / "both.json")
    assert exit_code(argv(run_dir, fake_judge, "--cache", same, "--json", same)) == 2
    assert_one_line_refusal(capsys.readouterr().err, "is the --cache file")
    assert not Path(same).exists()


def test_a_fifo_report_path_is_refused(
    fake_judge: FakeJudge, run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """The report is written by a rename: it would replace a FIFO (or, as root, a device)."""
    fifo = tmp_path / "report.fifo"
    os.mkfifo(fifo)
    assert exit_code(argv(run_dir, fake_judge, "--json", str(fifo), "--overwrite")) == 2
    assert_one_line_refusal(capsys.readouterr().err, f"--json {fifo}: a FIFO")
    assert fifo.is_fifo()


def test_a_deep_summary_is_one_line_naming_it(
    fake_judge: FakeJudge, run_dir: Path, capsys: pytest.CaptureFixture
) -> None:
    """``'[' * 100000`` in summary.json was a RecursionError, exit 1 (read: UNSTABLE)."""
    summary = run_dir / "summary.json"
    summary.write_text("[" * 100_000)
    assert exit_code(argv(run_dir, fake_judge)) == 2
    assert_one_line_refusal(capsys.readouterr().err, f"{summary}: JSON nested too deeply")


@pytest.mark.parametrize("value", ["11", str(10**18), "-1", "2.5"])
def test_retries_over_the_cap_are_refused(
    fake_judge: FakeJudge, run_dir: Path, capsys: pytest.CaptureFixture, value: str
) -> None:
    args = argv(run_dir, fake_judge)
    args[args.index("--retries") + 1] = value
    assert exit_code(args) == 2
    assert f"expected a whole number from 0 to {MAX_RETRIES}" in capsys.readouterr().err
    assert sum(fake_judge.requests.values()) == 0


def test_the_help_states_the_caps(capsys: pytest.CaptureFixture) -> None:
    assert exit_code(["judge-consistency", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert f"0 to {MAX_RETRIES}" in text and f"at most {MAX_BACKOFF_S:g} s" in text


def test_the_cap_itself_is_accepted(
    fake_judge: FakeJudge, run_dir: Path, capsys: pytest.CaptureFixture
) -> None:
    args = argv(run_dir, fake_judge)
    args[args.index("--retries") + 1] = str(MAX_RETRIES)
    assert exit_code(args) == 0, capsys.readouterr().err


def test_one_wait_is_capped() -> None:
    """``backoff_s * 2 ** (attempt - 1)`` waited 64 s before the 8th retry, and forever beyond."""
    assert [backoff_wait(0.5, a) for a in range(1, 8)] == [0.5, 1, 2, 4, 8, 16, MAX_BACKOFF_S]
    assert backoff_wait(0.5, 10**18) == MAX_BACKOFF_S
    assert backoff_wait(0.0, 5) == 0.0 and backoff_wait(0.5, 0) == 0.0


def test_a_failing_endpoint_waits_at_most_the_cap(
    fake_judge: FakeJudge, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The real retry loop, its sleeps recorded instead of slept (this thread's only: ``time.sleep``
    is the module's, and the fake judge's server threads sleep too)."""
    waits: list[float] = []
    real_sleep, caller = client_module.time.sleep, threading.get_ident()

    def record(seconds: float) -> None:
        if threading.get_ident() == caller:
            waits.append(seconds)
        else:
            real_sleep(seconds)

    monkeypatch.setattr(client_module.time, "sleep", record)
    chat = ChatClient(fake_judge.url, "broken", retries=MAX_RETRIES, backoff_s=0.5)
    with pytest.raises(client_module.JudgeEndpointError, match=f"after {MAX_RETRIES + 1} attempts"):
        chat.complete([{"role": "user", "content": "q"}])
    assert waits == [min(0.5 * 2**i, MAX_BACKOFF_S) for i in range(MAX_RETRIES)]
    assert max(waits) == MAX_BACKOFF_S


def test_the_client_refuses_retries_over_the_cap() -> None:
    with pytest.raises(ValueError, match=f"retries must be from 0 to {MAX_RETRIES}"):
        ChatClient("http://127.0.0.1:9", "m", retries=MAX_RETRIES + 1)


def test_an_unexpected_error_exits_2_never_1(
    fake_judge: FakeJudge,
    run_dir: Path,
    capsys: pytest.CaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Exit 1 means UNSTABLE here; a crash must not read as a verdict."""

    def crash(*args: object, **kwargs: object) -> None:
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr("agentenv.judge.consistency.judge_consistency", crash)
    assert exit_code(argv(run_dir, fake_judge)) == 2
    assert_one_line_refusal(capsys.readouterr().err, "RecursionError", "a bug in agentenv")


def test_a_good_cache_still_saves_every_request(
    fake_judge: FakeJudge, run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """The checks refuse only what they should: a cache this command wrote is read back."""
    cache = tmp_path / "new" / "verdicts.jsonl"
    assert exit_code(argv(run_dir, fake_judge, "--cache", str(cache))) == 0
    assert exit_code(argv(run_dir, fake_judge, "--cache", str(cache))) == 0
    assert capsys.readouterr().out.rstrip().endswith("HTTP requests made: 0")
