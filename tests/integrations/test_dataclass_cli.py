"""The training scripts' args: every field documented, every field settable from the command line."""

from __future__ import annotations

import dataclasses

import pytest

from agentenv.baselines import train_grpo, train_sft
from agentenv.integrations.dataclass_cli import build_parser, field_docs, parse_args


@pytest.mark.parametrize("cls", [train_grpo.Args, train_sft.Args], ids=["grpo", "sft"])
def test_every_field_has_a_docstring_and_an_option(cls: type) -> None:
    docs = field_docs(cls)
    names = [f.name for f in dataclasses.fields(cls)]
    assert set(docs) == set(names)
    assert all(len(doc) > 10 for doc in docs.values())
    help_text = build_parser(cls).format_help()
    for name in names:
        assert f"--{name.replace('_', '-')}" in help_text
    assert parse_args(cls, []) == cls()


def test_options_convert_to_the_field_types() -> None:
    args = parse_args(
        train_grpo.Args,
        [
            "--model",
            "/models/tiny",
            "--tasks",
            "16",
            "--use-vllm",
            "true",
            "--learning-rate",
            "3e-6",
            "--max-tool-calling-iterations",
            "none",
        ],
    )
    assert args.model == "/models/tiny" and args.tasks == 16 and args.use_vllm is True
    assert args.learning_rate == 3e-6 and args.max_tool_calling_iterations is None
    with pytest.raises(SystemExit):
        parse_args(train_grpo.Args, ["--use-vllm", "maybe"])


@pytest.mark.parametrize("script", ["train_grpo.py", "train_sft.py"])
def test_scripts_run_as_commands(script: str) -> None:
    """``python baselines/<script> --help`` works from a checkout (and imports no trainer to do it)."""
    import subprocess
    import sys
    from pathlib import Path

    path = Path(train_grpo.__file__).with_name(script)
    result = subprocess.run(
        [sys.executable, str(path), "--help"], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert "--model" in result.stdout and "--output-dir" in result.stdout
