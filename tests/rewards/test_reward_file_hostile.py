"""Hostile reward files (``--reward FILE``) end in one line naming the file, quickly.

A probe found: 60 KB of ``[`` in YAML ran for minutes (PyYAML's time grows with the square of
the depth), the same in JSON raised ``RecursionError`` (exit 1), and ``"0.1"`` or ``true`` where a
number belongs was read as 0.1 or 1.0. A reward config is a flat mapping of numbers: deeper
text is refused before a parser sees it, and its numbers must be numbers.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentenv.cli.main import main
from agentenv.errors import UserInputError
from agentenv.rewards.config import RewardConfig, resolve_reward
from agentenv.rewards.files import MAX_REWARD_DEPTH, MAX_REWARD_FILE_BYTES, json_depth_passed

pytest.importorskip("yaml")

FAST = 2.0
"""Seconds any reward file under the size cap may take to be read or refused (most take ms)."""


def _read(tmp_path: Path, name: str, text: str) -> tuple[RewardConfig | None, Exception | None]:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    start = time.perf_counter()
    try:
        result: tuple[RewardConfig | None, Exception | None] = (resolve_reward(path), None)
    except ValueError as exc:  # UserInputError, and the ValueErrors that name the file
        result = (None, exc)
    assert time.perf_counter() - start < FAST, f"{name}: {len(text):,} characters took too long"
    return result


@pytest.mark.parametrize(
    ("name", "text", "line"),
    [
        ("flow.yaml", "weights: " + "[" * 60_000, 1),
        ("flow.json", '{"weights":' + "[" * 60_000, 1),
        ("mapping.json", '{"a":\n' + '{"a":' * 20, 2),
        ("dashes.yaml", "weights:\n" + "- " * 20_000 + "x", 2),
        ("keys.yaml", "? " * 20_000 + "x", 1),
        ("blocks.yaml", "".join(" " * i + "k:\n" for i in range(300)), MAX_REWARD_DEPTH + 1),
    ],
)
def test_deep_nesting_is_refused_naming_file_and_line(
    tmp_path: Path, name: str, text: str, line: int
) -> None:
    config, error = _read(tmp_path, name, text)
    assert config is None and isinstance(error, UserInputError)
    assert f"{name}:{line}:" in str(error), error
    assert len(str(error)) < 300


@pytest.mark.parametrize(
    ("name", "text", "field"),
    [
        ("string.json", '{"tool_call_cost": "0.1"}', "tool_call_cost"),
        ("bool.json", '{"turn_cost": true}', "turn_cost"),
        ("weight.json", '{"weights": {"accuracy": "1"}}', "weights.accuracy"),
        ("weight.yaml", "weights: {accuracy: true}", "weights.accuracy"),
        ("cap.yaml", "cost_cap: '0.5'", "cost_cap"),
        (
            "penalty.json",
            '{"over_limit": "penalty", "over_limit_penalty": "2"}',
            "over_limit_penalty",
        ),
    ],
)
def test_a_number_must_be_a_number(tmp_path: Path, name: str, text: str, field: str) -> None:
    config, error = _read(tmp_path, name, text)
    assert config is None and error is not None
    assert name in str(error) and f"field {field!r}" in str(error), error


def test_ints_and_floats_are_numbers(tmp_path: Path) -> None:
    config, error = _read(
        tmp_path,
        "ok.yaml",
        "preset: efficient\nweights: {accuracy: 1, format: 0.5}\nturn_cost: 0\n",
    )
    assert error is None and config is not None
    assert config.weights == {"accuracy": 1.0, "format": 0.5} and config.turn_cost == 0.0


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("digits.json", '{"tool_call_cost": ' + "9" * 5_000 + "}"),
        ("digits.yaml", "tool_call_cost: " + "9" * 5_000),
        ("hex.yaml", "tool_call_cost: 0x" + "f" * 60_000),
        ("sexagesimal.yaml", "tool_call_cost: " + "1:" * 30_000 + "1.5"),
    ],
)
def test_huge_numbers_name_the_file(tmp_path: Path, name: str, text: str) -> None:
    config, error = _read(tmp_path, name, text)
    assert config is None and error is not None and name in str(error), error
    assert len(str(error)) < 400


def test_json_depth_ignores_brackets_in_strings() -> None:
    assert json_depth_passed('{"name": "[[[[[[[[[[[[", "w": {"a": 1}}', 2) is None
    assert json_depth_passed('{"name": "\\\\", "w": [[[[]]]]}', 3) == 1
    assert json_depth_passed('{"name": "\\"[[[[", "w": 1}', 1) is None


@pytest.mark.parametrize("suffix", [".json", ".yaml"])
def test_the_command_prints_one_line(tmp_path: Path, suffix: str, capsys) -> None:
    path = tmp_path / f"deep{suffix}"
    path.write_text(("weights: " if suffix == ".yaml" else '{"weights":') + "[" * 60_000)
    code = main(
        ["eval", "MediaSearch-v0", "--agent", "oracle", "--episodes", "1", "--reward", str(path)]
    )
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert str(path) in err


# Text that reaches the parsers' corners: flow and block indicators, quotes, escapes, anchors,
# tags, numbers, and long runs of any of them.
_PIECES = st.sampled_from(
    [
        "[", "]", "{", "}", ",", ":", ": ", "- ", "? ", "#", "\n", "  ", '"', "'", "\\", "&a ",
        "*a", "!!", "|", ">", "0x", "1:2", "1e999", ".nan", "9" * 120, "weights", "accuracy",
        "tool_call_cost", "preset", "efficient", "true", "null", "0.5", "1", "-3",
    ]
)  # fmt: skip
_RUNS = st.builds(lambda piece, n: piece * n, _PIECES, st.integers(1, 20_000))
_TEXTS = st.one_of(
    st.text(max_size=300),
    st.lists(st.one_of(_PIECES, _RUNS), max_size=12).map("".join),
).filter(lambda text: len(text.encode("utf-8")) <= MAX_REWARD_FILE_BYTES)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(text=_TEXTS, suffix=st.sampled_from([".json", ".yaml", ".yml"]))
def test_any_text_under_the_cap_is_a_config_or_a_named_error(
    tmp_path: Path, text: str, suffix: str
) -> None:
    """Whatever the text, reading it gives a RewardConfig or a ValueError naming the file, fast."""
    name = f"reward{suffix}"
    config, error = _read(tmp_path, name, text)
    assert config is not None or name in str(error), error
