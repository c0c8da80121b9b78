"""Print the red-team table (cases and highest strict reward per env and attack class) after the run."""

from __future__ import annotations

from typing import Any


def pytest_terminal_summary(terminalreporter: Any) -> None:
    from .test_reward_attacks import REPORT

    if not REPORT:
        return
    write = terminalreporter.write_line
    write("")
    write("red-team attacks: cases / highest strict reward, per env id and attack class")
    envs = sorted({env for env, _ in REPORT})
    classes = list(dict.fromkeys(c for _, c in REPORT))
    write("| env | " + " | ".join(classes) + " | total |")
    write("|---" * (len(classes) + 2) + "|")
    for env in envs:
        cells, total = [], 0
        for c in classes:
            rewards = REPORT.get((env, c), [])
            total += len(rewards)
            cells.append(f"{len(rewards)} / {max(rewards):.1f}" if rewards else "-")
        write(f"| {env} | " + " | ".join(cells) + f" | {total} |")
