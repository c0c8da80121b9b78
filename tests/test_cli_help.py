"""Every ``agentenv`` sub-command's ``--help`` shows each default and reads as plain text (no RST markup)."""

from __future__ import annotations

import argparse

import pytest

from agentenv.cli.main import build_parser


def _subparsers() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(sub.choices)


SUBCOMMANDS = sorted(_subparsers())


def _shows_a_default(action: argparse.Action) -> bool:
    """Whether the option has a default worth showing (not None, False, an empty list or help's)."""
    default = action.default
    return not (
        isinstance(action, argparse._HelpAction)
        or default is None
        or default is False
        or default == []
        or default is argparse.SUPPRESS
    )


def test_the_commands_are_all_here() -> None:
    assert {
        "eval",
        "export-sft",
        "judge-consistency",
        "leaderboard",
        "serve-retrieval",
        "simulator-check",
    } <= set(SUBCOMMANDS)


@pytest.mark.parametrize("command", SUBCOMMANDS)
def test_help_lists_every_default(command: str) -> None:
    parser = _subparsers()[command]
    missing = []
    for action in parser._actions:
        if not _shows_a_default(action):
            continue
        rendered = parser._get_formatter()._format_action(action)
        if "default" not in rendered.lower():
            missing.append(
                f"{'/'.join(action.option_strings) or action.dest} (default {action.default!r})"
            )
    assert not missing, (
        f"agentenv {command} --help does not show the default of: {', '.join(missing)}"
    )


@pytest.mark.parametrize("command", SUBCOMMANDS)
def test_help_has_no_rst_markup(command: str) -> None:
    text = _subparsers()[command].format_help()
    assert "``" not in text and ":func:`" not in text and ":class:`" not in text, text


@pytest.mark.parametrize(
    ("command", "option", "shown"),
    [
        ("serve-retrieval", "--port", "(default: 8700)"),
        ("serve-retrieval", "--backend", "(default: bm25)"),
        ("judge-consistency", "--model", "(default: judge)"),
        ("export-sft", "--split", "(default: train)"),
        ("simulator-check", "--dialogues", "(default: 50)"),
        ("leaderboard", "--out", "(default: leaderboard)"),
    ],
)
def test_the_defaults_users_ask_about(command: str, option: str, shown: str) -> None:
    parser = _subparsers()[command]
    (action,) = [a for a in parser._actions if option in a.option_strings]
    assert shown in " ".join(parser._get_formatter()._format_action(action).split())


def test_export_sft_defaults_to_train() -> None:
    """SFT data must never come from the test split by default."""
    args = _subparsers()["export-sft"].parse_args(["MediaSearch-v0", "--out", "x"])
    assert args.split == "train"


def test_reproduce_takes_the_model_as_model_or_base() -> None:
    """The issue's spelling (``--model smollm2-135m``) and the older ``--base`` set the same field."""
    parser = build_parser("reproduce")
    for flag in ("--model", "--base"):
        args = parser.parse_args(["reproduce", "sft-then-rl", flag, "smollm2-135m", "--out", "x"])
        assert str(args.base) == "smollm2-135m"
    assert parser.parse_args(["reproduce", "sft-then-rl", "--out", "x"]).base is None
