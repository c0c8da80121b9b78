"""``simulator-check`` fed hostile flags: NaN and overflowing llm timeouts, pairs without ``=``,
a wrong or empty ``--side``. Each is one ``agentenv: error:`` line with exit 2, before any
dialogue runs or any request is sent (the endpoint below is a closed port)."""

from __future__ import annotations

import pytest

from agentenv.cli import simulator_check

from .control_bytes import run_cli

CHECK = ["simulator-check", "--env", "DiagnosisDialogue-v0", "--dialogues", "1"]
LLM = [*CHECK, "--policy", "llm", "--agent-args", "base_url=http://127.0.0.1:9", "model=x"]


REFUSED = [
    ([*LLM, "timeout_s=nan"], "timeout_s must be a number above 0 to 1e+09, got 'nan'"),
    ([*LLM, "timeout_s=1e18"], "timeout_s must be a number above 0"),
    ([*LLM, "timeout_s=inf"], "timeout_s must be a number above 0"),
    ([*LLM, "timeout_s=0"], "timeout_s must be a number above 0"),
    ([*LLM, "timeout_s=soon"], "got 'soon'"),
    ([*LLM, "backoff_s=nan"], "backoff_s must be a number from 0"),
    ([*LLM, "temperature=-1"], "temperature must be a number from 0"),
    ([*CHECK, "--policy", "llm", "--agent-args", "nonsense"], "expects K=V pairs, got 'nonsense'"),
    ([*CHECK, "--agent-args", "model=x"], "--agent-args applies to --policy llm only"),
    ([*CHECK, "--side", "nosuch"], "--side: DiagnosisDialogue-v0 simulates the 'patient' side"),
    ([*CHECK, "--side", ""], "not ''"),
]


@pytest.mark.parametrize(
    ("argv", "message"), REFUSED, ids=[" ".join(a[5:])[-40:] for a, _ in REFUSED]
)
def test_a_hostile_flag_is_one_error_line_and_exit_2(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run_cli(argv, capsys)
    assert code == 2, err
    assert err.startswith("agentenv: error: ") and len(err.strip().splitlines()) == 1, err
    assert message in err and "Traceback" not in err, err


def test_the_side_it_simulates_is_still_accepted(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli([*CHECK, "--side", "patient"], capsys)
    assert code == 0, err


def test_the_module_on_its_own_says_the_same(capsys: pytest.CaptureFixture[str]) -> None:
    """``python -m agentenv.cli.simulator_check`` exits with the same line (status 1, as Python's)."""
    with pytest.raises(SystemExit, match="^agentenv: error: --agent-args timeout_s must"):
        simulator_check.main(LLM[1:] + ["timeout_s=nan"])
