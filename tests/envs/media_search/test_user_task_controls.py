"""A MediaSearch task row may hold no control character: ESC, ``\\r``, BEL, C1 controls, U+2028/9
and the bidi overrides and isolates are refused at load, naming the row, the field, the character
and its position; a question keeps its line breaks and tabs, an answer or alias its tabs.

Why: a question is printed by ``agentenv play`` and ``check-tasks`` and sent to the model; an ESC
sequence in it retitled or cleared the terminal, and a ``\\r`` or U+202E rewrote what was read.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentenv.envs.media_search.tasks.user_tasks import (
    load_user_tasks,
    question_from_dict,
    questions_from_rows,
)
from agentenv.errors import UserInputError

BASE = {"question": "how long is nolan's interstellar", "answer": "169"}


@pytest.mark.parametrize(
    ("row", "field", "code", "position"),
    [
        (
            {**BASE, "question": "how long is nolan's interstellar \x1b]0;OWNED\x07"},
            "question",
            "001B",
            34,
        ),
        ({**BASE, "question": "how long\r| fake is nolan's interstellar"}, "question", "000D", 9),
        ({**BASE, "question": "how long is \u202enolan's interstellar"}, "question", "202E", 13),
        ({**BASE, "question": "  how long\x07 is it"}, "question", "0007", 11),  # as written
        ({**BASE, "answer": "16\x9b9"}, "answer", "009B", 3),
        ({**BASE, "aliases": ["one sixty-nine", "\x1b[32mx"]}, "aliases[1]", "001B", 1),
        ({**BASE, "aliases": ["169\u2066 minutes"]}, "aliases[0]", "2066", 4),
        ({**BASE, "question": "how long\u2028is it"}, "question", "2028", 9),
    ],
)
def test_a_control_character_is_refused_naming_field_character_and_position(
    row: dict, field: str, code: str, position: int
) -> None:
    with pytest.raises(UserInputError) as err:
        question_from_dict(row, "tasks.jsonl:3")
    assert str(err.value).startswith(
        f"tasks.jsonl:3: field '{field}' holds a control character U+{code} at position "
        f"{position}; remove it"
    ), str(err.value)


def test_a_file_with_escape_sequences_names_every_bad_row(tmp_path: Path, monkeypatch) -> None:
    """The probe's file: an ESC question, an ESC alias; the good rows would load."""
    monkeypatch.delenv("AGENTENV_SKIP_BAD_ROWS", raising=False)
    rows = [
        BASE,
        {**BASE, "question": "how long is nolan's interstellar \x1b[2J\x1b[31mRED\x1b[0m\r| fake"},
        {
            "question": "who wrote fincher's social network movie",
            "answer": "Aaron Sorkin",
            "aliases": ["\x1b[32mx"],
        },
    ]
    path = tmp_path / "esc.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    with pytest.raises(UserInputError) as err:
        load_user_tasks(path)
    text = str(err.value)
    assert f"{path}:2: field 'question' holds a control character U+001B" in text
    assert f"{path}:3: field 'aliases[0]' holds a control character U+001B at position 1" in text


def test_a_question_keeps_line_breaks_and_tabs_and_an_answer_its_tabs() -> None:
    q = question_from_dict(
        {
            "question": "Which film?\n\tThe one with Pacino and De Niro",
            "answer": "Heat (1995)",
            "aliases": ["Heat\t1995"],
            "answer_type": "title",
        }
    )
    assert q.question == "Which film?\n\tThe one with Pacino and De Niro"
    assert "Heat\t1995" in q.aliases
    with pytest.raises(UserInputError, match="spans more than one line"):
        question_from_dict({**BASE, "answer": "16\n9"})


def test_rows_from_python_are_held_to_the_same_rule() -> None:
    with pytest.raises(
        UserInputError, match=r"tasks\[1\]: field 'question' holds a control character U\+001B"
    ):
        questions_from_rows([BASE, {"question": "q\x1b[8m hidden", "answer": "A"}])


CONTROLS = [
    chr(c)
    for c in [
        *range(0x20),
        *range(0x7F, 0xA0),
        0x2028,
        0x2029,
        *range(0x202A, 0x202F),
        *range(0x2066, 0x206A),
    ]
]


@settings(max_examples=200, deadline=None)
@given(
    control=st.sampled_from(CONTROLS),
    field=st.sampled_from(["question", "answer", "alias"]),
    before=st.text(alphabet="abc xyz", min_size=1, max_size=8).filter(str.strip),
)
def test_every_control_is_refused_in_every_field_except_the_layout_it_keeps(
    control: str, field: str, before: str
) -> None:
    text = f"{before.strip()}{control}7 films"
    row = {**BASE, "answer_type": "text"}
    if field == "alias":
        row["aliases"] = [text]
    else:
        row[field] = text
    kept = control == "\t" or (control == "\n" and field == "question")
    if kept:
        question_from_dict(row)
        return
    with pytest.raises(UserInputError) as err:
        question_from_dict(row)
    message = str(err.value)
    named = "aliases[0]" if field == "alias" else field
    assert f"field '{named}'" in message
    if not (control == "\n" and field != "question"):  # that one: the one-line rule names it
        assert re.search(
            rf"U\+{ord(control):04X} at position {len(before.strip()) + 1}", message
        ), message


def test_a_question_written_with_windows_line_breaks_loads_and_a_lone_cr_does_not() -> None:
    q = question_from_dict({**BASE, "question": "Which film?\r\nThe one with Pacino"})
    assert q.question == "Which film?\r\nThe one with Pacino"
    with pytest.raises(UserInputError, match="U\\+000D at position 12"):
        question_from_dict({**BASE, "question": "Which film?\rThe one with Pacino\r\n"})
