"""The README's first commands are the ones CI runs, and its Quickstart earns the reward it prints."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", README, flags=re.S)


def _command(line: str) -> str:
    return line.split("#", 1)[0].strip()


def test_the_first_screen_holds_the_main_job_and_the_test_commands() -> None:
    first = README.splitlines()[:12]
    commands = [_command(line) for line in _blocks("bash")[0].splitlines() if _command(line)]
    assert any(c.startswith("agentenv eval ") for c in commands)
    assert "python -m pytest" in commands and "python -m pytest -m fast" in commands
    assert all(any(c in line for line in first) for c in commands)


def test_ci_runs_the_readme_main_job_and_test_command_verbatim() -> None:
    ci = [line.strip() for line in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()]
    commands = [_command(line) for line in _blocks("bash")[0].splitlines() if _command(line)]
    main_job = next(c for c in commands if c.startswith("agentenv eval "))
    assert ci.count(main_job) == 2, "CI runs the README's main job twice, as written"
    assert "python -m pytest" in ci
    assert "--overwrite" in main_job, "the main job must run again in the same place"


def test_the_quickstart_prints_the_reward_it_says() -> None:
    code = next(b for b in _blocks("python") if "env.reset" in b)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code, "README.md:Quickstart", "exec"), {})
    expected = re.search(r"print\(r, .*?# ([\d.]+) \{", code)
    assert expected is not None, "the Quickstart says in a comment what it prints"
    assert printed.getvalue().split()[0] == expected.group(1) != "0.0"
