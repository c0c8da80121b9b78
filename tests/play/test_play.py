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
    """A component's value on the score screen (a note may follow it: :func:`note`)."""
    match = re.search(rf"^\s+{re.escape(name)}\s+(\S+)(?:  +\S.*)?$", out, re.MULTILINE)
    assert match, f"no {name} in the summary:\n{out}"
    return float(match.group(1))


def note(out: str, name: str) -> str:
    """The note beside a component on the score screen, its wrapped lines joined ("" if none)."""
    match = re.search(
        rf"^  {re.escape(name)}\s+\S+(?:  +(\S.*(?:\n {{6,}}\S.*)*))?$", out, re.MULTILINE
    )
    assert match, f"no {name} in the summary:\n{out}"
    return " ".join((match.group(1) or "").split())


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
    assert (args.side, args.split, args.seed, args.tasks) == ("patient", "validation", None, None)
    with pytest.raises(SystemExit):
        build_parser().parse_args(["play", "--help"])
    shown = " ".join(capsys.readouterr().out.split())  # help lines wrap where the width says
    assert "(default: validation; not read with --tasks)" in shown


def test_long_tables_are_cut_and_full_shows_everything() -> None:
    from agentenv.play.view import table

    rows = [{"id": f"HP:{i:07d}", "name": f"finding {i}"} for i in range(60)]
    shown = table(rows, max_width=100)
    assert "finding 24" in shown and "finding 25" not in shown and "and 35 more rows" in shown


@pytest.mark.parametrize(
    ("env_id", "reason"),
    [
        ("MediaSearch-v0", "'???' is not a film title of the catalog"),
        ("RareDiseaseDiagnosis-v0", "entry 1: '???' is not a disease name or id"),
        ("DiagnosisDialogue-v0", "entry 1: '???' is not a disease name or id"),
        ("MediaConcierge-v0", "'???' is not a film title of the catalog"),
    ],
)
def test_score_screen_explains_format_beside_an_unreadable_answer(capsys, env_id, reason):
    assert play(env_id, seed=0, read=Script(["<answer>???</answer>"])) == 0
    out = capsys.readouterr().out
    assert f"Answer: unreadable answer: {reason}" in out
    assert component(out, "format") == 1 and component(out, "accuracy") == 0
    assert note(out, "format").startswith("tags well formed, nothing more")
    assert "the answer inside them was unreadable" in note(out, "format")
    assert note(out, "accuracy") == f"the answer could not be read, so 0: {reason}"


def test_score_screen_says_what_turns_and_tool_calls_count(capsys):
    script = Script(
        [
            "search Andy Griffith western k=3",
            "<tool_call>bad</tool_call>",  # refused: a turn, no tool call
            "answer Even the Rain",
        ]
    )
    assert play("MediaSearch-v0", seed=0, read=script) == 0
    out = capsys.readouterr().out
    assert component(out, "tool_calls") == 1 and component(out, "turns") == 3
    assert note(out, "turns") == "every message you sent: tool calls, the answer, refused ones"
    assert note(out, "tool_calls") == (
        "only the tool calls that ran (several in one message count one each)"
    )
    assert component(out, "format") == 0
    assert note(out, "format") == "tags not well formed: an action was refused (invalid_actions)"
    assert note(out, "accuracy") == ""  # a readable answer: the Answer line says how it was read
    assert note(out, "latency_ms").startswith("modelled")


def test_dialogue_score_screen_counts_says_and_questions(capsys):
    script = Script(["say Do you have a big head (HP:0000256)?", "answer OMIM:618406"])
    assert play("DiagnosisDialogue-v0", seed=0, read=script) == 0
    out = capsys.readouterr().out
    assert component(out, "tool_calls") == 1 and component(out, "turns") == 2
    assert (
        note(out, "turns") == "every message you sent: tool calls, says, the answer, refused ones"
    )
    assert note(out, "tool_calls") == (
        "tool calls that ran, plus one per item your messages asked about"
    )


def test_score_screen_notes_without_an_answer_and_over_the_limit() -> None:
    from agentenv.play.view import component_notes, final_summary

    ran_out = {"accuracy": 0.0, "format": 0.0, "tool_calls": 8.0, "turns": 8.0}
    notes = component_notes(ran_out, {}, answered=False)
    assert notes["accuracy"] == notes["format"] == "no answer was given"
    over = {"accuracy": 1.0, "over_limit": 1.0, "format": 1.0}
    shown = final_summary(0.0, {"reward_components": over}, over_limit="zero")
    assert note(shown, "over_limit") == (
        "more predictions than allowed: the reward is 0, whatever accuracy says"
    )
    assert note(shown, "accuracy") == ""
    patient = {"messages": 1.0, "truthfulness": 1.0, "invalid_actions": 0.0}
    assert component_notes(patient, {}) == {}  # the simulated side's components need none
