"""``agentenv serve-env``: its help, and every bad input refused in one line with exit 2 before anything binds."""

from __future__ import annotations

import pytest

from agentenv.cli.main import main


def test_help_names_both_protocols_and_loopback(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["serve-env", "--help"])
    out = capsys.readouterr().out
    assert exit_info.value.code == 0
    assert (
        "{verl-tool,openenv}" in out
        and "127.0.0.1, loopback only" in out
        and "--max-live-envs" in out
    )


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["serve-env", "MediaSearch-v0"], "the following arguments are required: --protocol"),
        (["serve-env", "MediaSearch-v0", "--protocol", "gym"], "invalid choice: 'gym'"),
        (["serve-env", "Nope-v0", "--protocol", "verl-tool"], "registers the id 'Nope-v0'"),
        (
            ["serve-env", "MediaSearch-v0", "--protocol", "verl-tool", "--env-arg", "bogus=1"],
            "MediaSearch-v0 takes no keyword 'bogus'",
        ),
        (
            ["serve-env", "MediaSearch-v0", "--protocol", "verl-tool", "--env-arg", "split=test"],
            "use --split instead",
        ),
        (
            ["serve-env", "MediaSearch-v0", "--protocol", "verl-tool", "--max-live-envs", "0"],
            "--max-live-envs must be positive, got 0",
        ),
        (
            ["serve-env", "MediaSearch-v0", "--protocol", "verl-tool", "--trajectory-idle", "-1"],
            "--trajectory-idle must be positive",
        ),
        (
            ["serve-env", "MediaSearch-v0", "--protocol", "verl-tool", "--port", "70000"],
            "argument --port: a TCP port is 0 to 65535, got 70000",
        ),
        (
            ["serve-env", "MediaSearch-v0", "--protocol", "verl-tool", "--max-turns", "x"],
            "invalid int value: 'x'",
        ),
        (
            ["serve-env", "MediaSearch-v0", "--protocol", "verl-tool", "--env-arg", "max_turns=-3"],
            "max_turns",
        ),
        (
            ["serve-env", "MediaSearch-v0", "--protocol", "verl-tool", "--workers", "0"],
            "--workers must be positive, got 0",
        ),
        (
            ["serve-env", "MediaSearch-v0", "--protocol", "openenv", "--workers", "2"],
            "--workers applies to --protocol verl-tool only",
        ),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    try:
        status = main(argv)
    except SystemExit as exit_info:  # argparse's own usage errors
        status = exit_info.code
    err = capsys.readouterr().err
    assert status == 2, err
    assert message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


@pytest.mark.parametrize(
    ("missing", "install"),
    [
        ({"openenv", "uvicorn", "starlette"}, "pip install 'agentenv[server,openenv]'"),
        ({"openenv"}, "pip install 'agentenv[openenv]'"),
    ],
)
def test_openenv_names_every_missing_extra_at_once(
    missing: set[str],
    install: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Why: a user with neither extra installed was told about 'server' first and about
    # 'openenv' only after installing it; one line now names both.
    import importlib.util

    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name in missing else real_find_spec(name, *a),
    )
    status = main(["serve-env", "MediaSearch-v0", "--protocol", "openenv"])
    err = capsys.readouterr().err
    assert status != 0
    assert install in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_port_0_announces_the_port_it_listens_on(tmp_path) -> None:
    """The banner said ":0", the port asked for, not the one the kernel gave."""
    pytest.importorskip("uvicorn")
    import os
    import re
    import signal
    import subprocess
    import sys
    import time
    import urllib.request

    proc = subprocess.Popen(
        [sys.executable, "-m", "agentenv.cli.main", "serve-env", "MediaSearch-v0"]
        + ["--protocol", "verl-tool", "--port", "0"],
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        banner = proc.stderr.readline()
        port = int(re.search(r"http://127\.0\.0\.1:(\d+)", banner).group(1))
        assert port != 0
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as r:
                    assert r.status == 200
                    break
            except OSError:
                assert time.monotonic() < deadline, banner
                time.sleep(0.2)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(30)
