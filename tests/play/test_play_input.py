"""``agentenv play`` input parsing: a pure function from a typed line and the tool schemas to action text."""

from __future__ import annotations

import json

import pytest

from agentenv.play.reading import InputError, parse_line


def _tool(name: str, properties: dict, required: list[str]) -> dict:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": "",
            "parameters": {
                "type": "object",
                "properties": properties,
                "required": required,
                "additionalProperties": False,
            },
        },
    }


TOOLS = [
    _tool(
        "search",
        {"query": {"type": "string"}, "k": {"type": "integer", "minimum": 1, "maximum": 20}},
        ["query"],
    ),
    _tool("get_title", {"title_id": {"type": "string"}}, ["title_id"]),
    _tool(
        "filter_titles",
        {
            "genre": {"anyOf": [{"type": "string"}, {"type": "null"}]},
            "year_min": {
                "anyOf": [{"type": "integer", "minimum": 1900, "maximum": 2100}, {"type": "null"}]
            },
            "cast": {"type": "array", "items": {"type": "string"}},
            "min_rating": {"anyOf": [{"type": "number"}, {"type": "null"}]},
            "feature_only": {"type": "boolean"},
            "sort_by": {"type": "string", "enum": ["rating", "year", "runtime", "title"]},
        },
        [],
    ),
    _tool("ask_patient", {"hpo_id": {"type": "string"}}, ["hpo_id"]),
    _tool(
        "rank_by_phenotypes",
        {"hpo_ids": {"type": "array", "items": {"type": "string"}}, "k": {"type": "integer"}},
        ["hpo_ids"],
    ),
]


def call(line: str, **kwargs) -> dict:
    """The ``{"name", "arguments"}`` payload of the single tool call ``line`` becomes."""
    action = parse_line(line, TOOLS, **kwargs).action
    assert (
        action is not None
        and action.startswith("<tool_call>\n")
        and action.endswith("\n</tool_call>")
    )
    return json.loads(action.removeprefix("<tool_call>\n").removesuffix("\n</tool_call>"))


@pytest.mark.parametrize(
    ("line", "arguments"),
    [
        ("search query=Andy Griffith western", {"query": "Andy Griffith western"}),
        ("search Andy Griffith western", {"query": "Andy Griffith western"}),
        ("search Andy Griffith western k=3", {"query": "Andy Griffith western", "k": 3}),
        ("search k=3 query=Andy Griffith", {"k": 3, "query": "Andy Griffith"}),
        ('search query="Andy Griffith" k=3', {"query": "Andy Griffith", "k": 3}),
        ("search query='k=3 is text' k=2", {"query": "k=3 is text", "k": 2}),
        ('search "Andy Griffith"', {"query": "Andy Griffith"}),
        ("search query=Rustlers' Rhapsody", {"query": "Rustlers' Rhapsody"}),
        ('search {"query": "Heat", "k": 2}', {"query": "Heat", "k": 2}),
        ("ask_patient HP:0000256", {"hpo_id": "HP:0000256"}),
        ("get_title tt0073096", {"title_id": "tt0073096"}),
        ("rank_by_phenotypes HP:0001250 HP:0000256", {"hpo_ids": ["HP:0001250", "HP:0000256"]}),
        (
            "rank_by_phenotypes HP:0001250, HP:0000256 k=5",
            {"hpo_ids": ["HP:0001250", "HP:0000256"], "k": 5},
        ),
        ('rank_by_phenotypes hpo_ids=["HP:0001250"]', {"hpo_ids": ["HP:0001250"]}),
        (
            "filter_titles genre=Western year_min=1950 cast=Tom Hanks, Meg Ryan feature_only=yes sort_by=Year",
            {
                "genre": "Western",
                "year_min": 1950,
                "cast": ["Tom Hanks", "Meg Ryan"],
                "feature_only": True,
                "sort_by": "year",
            },
        ),
        (
            'filter_titles cast=["Hanks, Tom"] min_rating=7.5 genre=null feature_only=false',
            {"cast": ["Hanks, Tom"], "min_rating": 7.5, "genre": None, "feature_only": False},
        ),
        ("filter_titles min_rating=7", {"min_rating": 7}),
        ("filter_titles", {}),
    ],
)
def test_tool_forms(line, arguments):
    assert call(line) == {"name": line.split()[0], "arguments": arguments}


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("serch Andy", "did you mean search?"),
        ("get_tile tt1", "did you mean get_title?"),
        ("search_movies x", "did you mean search?"),
        ("search qurey=x", "no argument 'qurey': did you mean query?"),
        ('get_title {"titleid": "tt1"}', "did you mean title_id?"),
        ("search query=x k=five", "k expects a whole number"),
        ("search query=x k=99", "between 1 and 20"),
        ("filter_titles sort_by=ratin", "did you mean rating?"),
        ("filter_titles year_min=nineteen", "whole number"),
        ("filter_titles feature_only=maybe", "true or false"),
        ("filter_titles Western", "name them"),
        ("get_title", "get_title needs title_id"),
        ("search query=a query=b", "given twice"),
        ("search {not json", "not valid JSON"),
        ("search [1, 2]", "query expects string"),
        ("answer", "needs the answer text"),
        ("", "empty line"),
        ("hello there", "unknown command 'hello'; commands: search, get_title"),
    ],
)
def test_typos_are_caught_with_a_suggestion(line, message):
    with pytest.raises(InputError, match=message.replace("?", r"\?").replace("(", r"\(")):
        parse_line(line, TOOLS)


def test_answers_say_local_commands_and_raw_text():
    assert parse_line("answer Even the Rain", TOOLS).action == "<answer>Even the Rain</answer>"
    assert parse_line("answer OMIM:1; OMIM:2", TOOLS).action == "<answer>OMIM:1; OMIM:2</answer>"
    assert parse_line("help", TOOLS).command == "help"
    assert parse_line("?", TOOLS).command == "help"
    assert parse_line("quit", TOOLS).command == "quit"
    raw = '<tool_call>\n{"name": "serch", "arguments": {}}\n</tool_call>'
    assert parse_line(raw, TOOLS).action == raw  # raw text is the model's format: sent as it is
    assert parse_line('{"name": "search", "arguments": {}}', TOOLS).action.startswith("{")
    with pytest.raises(InputError, match="unknown command 'say'"):
        parse_line("say hi", TOOLS)
    assert (
        parse_line("say Do you have seizures?", TOOLS, say_to="patient").action
        == "<say>Do you have seizures?</say>"
    )
    with pytest.raises(InputError, match="type `say Do you have seizures`"):
        parse_line("Do you have seizures", TOOLS, say_to="patient")
    with pytest.raises(InputError, match="only the doctor gives the final answer"):
        parse_line("answer x", TOOLS, say_to="doctor", can_answer=False)
    with pytest.raises(InputError, match="no such tool here"):
        parse_line("lookup_phenotype seizure", TOOLS, say_to="patient")


def test_full_is_a_local_command() -> None:
    assert parse_line("full", []).command == "full"


DEEP = "[" * 3000 + "]" * 3000
HUGE = "9" * 5000


@pytest.mark.parametrize(
    ("line", "said"),
    [  # each ended the whole session with a traceback's last line
        (f'filter_titles {{"year_min": {HUGE}}}', "JSON arguments cannot be read"),
        (f"filter_titles year_min={HUGE}", "expects a whole number, got 5000 digits"),
        (f'search {{"query": {DEEP}}}', "nested too deeply"),
        (f"filter_titles cast={DEEP}", "expects a list"),
        ('search {"query": "a", "query": "b"}', "'query' appears twice"),  # used "b", spent a turn
    ],
)
def test_unreadable_json_and_numbers_are_typos_not_crashes(line: str, said: str) -> None:
    with pytest.raises(InputError, match=said):
        parse_line(line, TOOLS)


def test_say_with_tags_and_local_commands_with_words_are_typos() -> None:
    """`say <answer>X</answer>` was sent as the answer (a game over); `quit now` was an unknown command."""
    with pytest.raises(InputError, match="a message is plain text"):
        parse_line("say <answer>OMIM:154700</answer>", TOOLS, say_to="patient")
    with pytest.raises(InputError, match="`quit` takes nothing after it"):
        parse_line("quit now", TOOLS)


def test_full_shows_every_row_in_the_table_layout() -> None:
    """`full` printed indented JSON (404 lines for a 50-row table) instead of the rows it hid."""
    from agentenv.play.view import MAX_ROWS, render_observation

    rows = [{"id": f"tt{i:07d}", "title": f"Film {i}", "year": 1990 + i % 30} for i in range(60)]
    text = json.dumps({"count": 60, "results": rows})
    assert "more rows" in render_observation(text)
    full = render_observation(text, max_rows=10**6)
    assert "more rows" not in full and "tt0000059" in full and '"title"' not in full
    assert len(full.splitlines()) == 60 + 3 and MAX_ROWS < 60
