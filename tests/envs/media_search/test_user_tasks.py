"""Bring-your-own questions: good files load; every bad row is reported with line, field and fix."""

from __future__ import annotations

import json

import pytest

from agentenv.envs.media_search.grading.grade import grade_answer
from agentenv.envs.media_search.tasks.user_tasks import load_user_tasks, question_from_dict
from agentenv.errors import UserInputError


def write(tmp_path, lines):
    path = tmp_path / "mine.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_a_good_file(tmp_path):
    path = write(
        tmp_path,
        [
            json.dumps(
                {
                    "question": "Who directed Inception?",
                    "answer": "Christopher Nolan",
                    "aliases": ["Nolan"],
                }
            ),
            "",
            json.dumps({"question": "How many Oscars did Inception win?", "answer": "4"}),
            json.dumps({"question": "Year of Jaws?", "answer": " 1975 "}),
        ],
    )
    questions = load_user_tasks(path)
    assert [q.answer_type for q in questions] == ["person", "number", "year"]
    assert all(q.kind == "custom" and q.plan is None and q.extract is None for q in questions)
    assert questions[1].id != questions[0].id
    assert grade_answer("nolan", questions[0]) and grade_answer("four", questions[1])
    assert questions[2].answer == "1975" and grade_answer("1975", questions[2])
    assert not grade_answer("in 1975", questions[2])  # no words around a number


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (
            '{"question": "Q?", "answer": "A",}',
            r"mine.jsonl:2: invalid JSON .*at column \d+.*one JSON object like",
        ),
        ('["Q?", "A"]', "mine.jsonl:2: expected a JSON object"),
        ('{"question": "Q?"}', "mine.jsonl:2: missing field 'answer'"),
        ('{"answer": "A"}', "mine.jsonl:2: missing field 'question'"),
        (
            '{"question": "Q?", "answer": 7}',
            r"mine.jsonl:2: field 'answer' must be a non-empty string, got 7.*\"answer\": \"7\"",
        ),
        (
            '{"question": "  ", "answer": "A"}',
            "mine.jsonl:2: field 'question' must be a non-empty string",
        ),
        (
            '{"question": "Q?", "answer": "A", "aliases": "B"}',
            "mine.jsonl:2: field 'aliases' must be a list of non-empty strings",
        ),
        ('{"question": "Q?", "answer": "A", "aliases": [1]}', "mine.jsonl:2: field 'aliases'"),
        (
            '{"question": "Q?", "answer": "A", "anwser": "A"}',
            "mine.jsonl:2: unknown field 'anwser'.*fix the spelling",
        ),
    ],
)
def test_bad_rows_name_line_field_and_fix(tmp_path, line, message):
    path = write(tmp_path, ['{"question": "Fine?", "answer": "Yes", "answer_type": "text"}', line])
    with pytest.raises(UserInputError, match=message):  # one line from the agentenv command
        load_user_tasks(path)


def test_an_empty_file_is_an_error(tmp_path):
    with pytest.raises(ValueError, match="no questions"):
        load_user_tasks(write(tmp_path, ["", "  "]))


def test_rows_from_python(tmp_path):
    q = question_from_dict({"question": "Q?", "answer": "Alien"}, where="tasks[0]")
    assert q.split == "custom" and q.aliases == ("tt0078748",)  # the one film "Alien" names
    with pytest.raises(ValueError, match=r"^tasks\[3\]: missing field 'answer'"):
        question_from_dict({"question": "Q?"}, where="tasks[3]")


def test_json_column_counts_within_the_line(tmp_path):
    with pytest.raises(
        UserInputError, match=r"mine.jsonl:2: invalid JSON \(Expecting ',' delimiter at column 19\)"
    ):
        load_user_tasks(
            write(
                tmp_path,
                ['{"question": "Fine?", "answer": "7"}', '{"question": "Q?" "answer": "A"}'],
            )
        )


def test_a_directory_is_named_as_the_wrong_input(tmp_path):
    with pytest.raises(
        UserInputError, match="is a directory; MediaSearch --tasks takes one JSONL file"
    ):
        load_user_tasks(tmp_path)


def test_gym_make_passes_the_error_through_unwrapped(tmp_path):
    """gym.make does not wrap an env's exception: the agentenv command sees a UserInputError (one line)."""
    import gymnasium as gym

    import agentenv  # noqa: F401  (registers the ids)

    path = write(tmp_path, ['{"question": "Q?"}'])
    with pytest.raises(UserInputError, match=r"mine.jsonl:1: missing field 'answer'"):
        gym.make("MediaSearch-v0", tasks=str(path))


def test_the_agentenv_command_prints_one_line(tmp_path, capsys):
    from agentenv.evaluation.runner import RunConfig, timed_run

    path = write(tmp_path, ['{"question": "Q?", "answer": 1975'])
    with pytest.raises(UserInputError) as err:
        timed_run(
            RunConfig(
                env_id="MediaSearch-v0",
                agent="oracle",
                episodes=1,
                env_kwargs=(("tasks", str(path)),),
            ),
            progress=False,
        )
    assert "\n" not in str(err.value) and str(err.value).startswith(f"{path}:1: invalid JSON")


def test_rows_may_carry_an_id_as_rare_disease_rows_do(tmp_path):
    path = write(
        tmp_path,
        [
            json.dumps(
                {
                    "id": "nolan-1",
                    "question": "Who directed Inception?",
                    "answer": "Christopher Nolan",
                }
            ),
            json.dumps({"question": "Year of Jaws?", "answer": "1975"}),
        ],
    )
    first, second = load_user_tasks(path)
    assert first.id == "nolan-1" and second.id.startswith("mq-")


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        (
            [
                {"id": "a", "question": "Q1?", "answer": "Alien"},
                {"id": "a", "question": "Q2?", "answer": "Heat"},
            ],
            r"mine\.jsonl:2: id 'a' is already the id of .*mine\.jsonl:1; give each row its own id",
        ),
        (
            [{"id": 3, "question": "Q1?", "answer": "Alien"}],
            r"mine\.jsonl:1: field 'id' must be a string .*; got int 3",
        ),
        (
            [{"id": "", "question": "Q1?", "answer": "Alien"}],
            r"mine\.jsonl:1: field 'id' must be a string",
        ),
    ],
)
def test_a_bad_or_repeated_id_fails_early_naming_the_row(tmp_path, rows, message):
    with pytest.raises(UserInputError, match=message):
        load_user_tasks(write(tmp_path, [json.dumps(r) for r in rows]))


def test_a_list_of_rows_is_checked_as_a_file_is():
    import gymnasium as gym

    rows = [
        {"id": "a", "question": "Q1?", "answer": "Alien"},
        {"id": "a", "question": "Q2?", "answer": "Heat"},
    ]
    with pytest.raises(UserInputError, match=r"tasks\[1\]: id 'a' is already the id of tasks\[0\]"):
        gym.make("MediaSearch-v0", tasks=rows)
    same = [{"question": "Q1?", "answer": "Alien"}, {"question": "Q1?", "answer": "Heat"}]
    with pytest.raises(UserInputError, match=r"tasks\[1\]: the same question as tasks\[0\]"):
        gym.make("MediaSearch-v0", tasks=same)
    env = gym.make(
        "MediaSearch-v0", tasks=[{"id": "q-1", "question": "Year of Jaws?", "answer": "1975"}]
    )
    assert env.unwrapped.tasks[0].case.id == "q-1"
