"""`agentenv` imports only what it runs: `--help` lists every sub-command without importing any of their
modules, `agentenv CMD` imports CMD's module alone, and no sub-command imports the entry point (no cycle)."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

from agentenv.cli.main import COMMANDS, build_parser

ROOT = Path(__file__).resolve().parents[1]


def _imported_after(argv: list[str]) -> set[str]:
    code = (
        f"import sys, json\nfrom agentenv.cli.main import main\ntry:\n    main({argv!r})\nexcept SystemExit:\n    pass\n"
        "print(json.dumps(sorted(sys.modules)), file=sys.stderr)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    return set(json.loads(done.stderr.strip().splitlines()[-1]))


def test_help_imports_no_sub_command_module() -> None:
    loaded = _imported_after(["--help"])
    assert not {spec.module for spec in COMMANDS.values()} & loaded
    assert "agentenv.evaluation.runner" not in loaded and "agentenv.evaluation.agents" not in loaded


def test_a_sub_command_imports_its_own_module_only() -> None:
    loaded = _imported_after(["leaderboard", "--help"])
    others = {spec.module for name, spec in COMMANDS.items() if name != "leaderboard"}
    assert COMMANDS["leaderboard"].module in loaded and not others & loaded


def test_help_lists_every_command_with_its_registered_line() -> None:
    full = build_parser()
    (sub,) = [a for a in full._actions if a.dest == "command"]
    assert {a.dest: a.help for a in sub._choices_actions} == {
        name: spec.help for name, spec in COMMANDS.items()
    }


def test_no_sub_command_module_imports_the_entry_point() -> None:
    for spec in COMMANDS.values():
        path = ROOT / (spec.module.replace(".", "/") + ".py")
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
        imported |= {
            alias.name
            for node in ast.walk(tree)
            if isinstance(node, ast.Import)
            for alias in node.names
        }
        assert "agentenv.cli.main" not in imported, spec.module
