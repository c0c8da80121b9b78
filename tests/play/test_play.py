"""``agentenv play`` end to end, driven by scripted input: typos cost nothing, shortcuts reach the env, the end shows the reward."""

from __future__ import annotations

import re
from collections.abc import Iterable

import pytest

from agentenv.play.session import play


class Script:
    """A ``read`` for :func:`play`: returns the lines in order, records each prompt, then raises EOFError."""

    def __init__(self, lines: Iterable[str]) -> None:
        self.lines, self.prompts = list(lines), []

    def __call__(self, prompt: str) -> str:
        self.prompts.append(prompt)
        if not self.lines:
            raise EOFError
        return self.lines.pop(0)


def component(out: str, name: str) -> float:
    match = re.search(rf"^\s+{re.escape(name)}\s+(\S+)$", out, re.MULTILINE)
    assert match, f"no {name} in the summary:\n{out}"
    return float(match.group(1))


def test_media_search_typo_is_free_and_shortcuts_reach_the_env(capsys):
    script = Script(
        [
            "serch Andy Griffith",
            "search qurey=western",
            "search Andy Griffith western k=3",
            "get_title title_id=tt0073096",
            "answer Even the Rain",
        ]
    )
    assert play("MediaSearch-v0", seed=0, read=script) == 0
    out = capsys.readouterr().out
    assert "did you mean search?" in out and "did you mean query?" in out
    assert "[turn 1/8, 8 left]" in script.prompts[0]
    assert all("turn 1/8" in p for p in script.prompts[:3])  # two typos: still the first turn
    assert "turn 2/8" in script.prompts[3] and "turn 3/8" in script.prompts[4]
    assert re.search(
        r"^\s+1\s+tt0073096\s+Hearts of the West\s+1975", out, re.MULTILINE
    )  # results as numbered rows
    assert "Error" not in out
    assert "Game over. Reward:" in out
    assert component(out, "tool_calls") == 2 and component(out, "invalid_actions") == 0
    assert component(out, "format") == 1 and component(out, "turns") == 3
    assert re.search(r"^Gold:\n  answer: \S", out, re.MULTILINE)  # the gold, after the game
    assert (
        "Answer: read as the film 'Even the Rain' (2010" in out
    )  # how the grammar read the answer


def test_diagnosis_dialogue_as_doctor(capsys):
    script = Script(
        [
            "Do you have a big head?",
            "ask_patient HP:0000256",
            "help",
            "say Do you have a big head (HP:0000256)?",
            "rank_by_phenotypes HP:0025792, HP:0010806 HP:0001513 k=3",
            "answer OMIM:618406",
        ]
    )
    assert play("DiagnosisDialogue-v0", seed=0, read=script) == 0
    out = capsys.readouterr().out
    assert "you are the doctor; the patient is scripted" in out
    assert "type `say Do you have a big head?`" in out
    assert "to ask the patient, type `say ...`" in out
    assert "say TEXT               a message to the patient" in out  # help shows the shortcuts
    assert (
        "patient: I'm not sure about increased size of skull (HP:0000256)." in out
    )  # unrecorded: open world
    assert all("turn 1/10" in p for p in script.prompts[:4])
    assert "turn 2/10" in script.prompts[4] and "turn 3/10" in script.prompts[5]
    assert "Game over. Reward:" in out
    assert component(out, "invalid_actions") == 0 and component(out, "messages") == 1
    assert (
        component(out, "tool_calls") == 2
    )  # rank_by_phenotypes, and the one finding asked (as ask_patient costs)


def test_diagnosis_dialogue_as_patient(capsys):
    script = Script(["answer OMIM:618406", "say No, I have none of those."])
    assert play("DiagnosisDialogue-v0", seed=0, side="patient", read=script) == 0
    out = capsys.readouterr().out
    assert "you are the patient; the doctor is scripted" in out
    assert "Your findings, in your own words:" in out  # the private briefing
    assert "only the doctor gives the final answer" in out
    assert "Game over. Reward:" in out and "truthfulness" in out


def test_unknown_side_is_a_user_error():
    from agentenv.errors import UserInputError

    with pytest.raises(UserInputError, match="--as must be one of assistant, user"):
        play("MediaConcierge-v0", side="nurse", read=Script([]))


def test_cli_play_arguments(capsys):
    from agentenv.cli.main import build_parser

    args = build_parser().parse_args(["play", "DiagnosisDialogue-v0", "--as", "patient"])
    assert (args.side, args.split, args.seed) == ("patient", "validation", None)
    with pytest.raises(SystemExit):
        build_parser().parse_args(["play", "--help"])
    assert "(default: validation)" in capsys.readouterr().out


def test_long_tables_are_cut_and_full_shows_everything() -> None:
    from agentenv.play.view import table

    rows = [{"id": f"HP:{i:07d}", "name": f"finding {i}"} for i in range(60)]
    shown = table(rows, max_width=100)
    assert "finding 24" in shown and "finding 25" not in shown and "and 35 more rows" in shown
