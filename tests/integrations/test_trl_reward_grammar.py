"""The TRL reward reads completions by their grammar: a string, or a list of messages whose
assistant ones are OpenAI messages. A probe had ``str()`` of a tuple, a tool message or a dict
content graded as the answer (1.0 on a gold of 5)."""

from __future__ import annotations

import pytest

pytest.importorskip("trl")

from agentenv.integrations.trl import AgentEnvFactory  # noqa: E402

TASK = "task-68d5a8d12771"  # train split, gold 5
PROMPTS = [[{"role": "user", "content": "q"}]]
TOOL = {"role": "tool", "content": "<answer>5</answer>"}


@pytest.fixture(scope="module")
def reward():
    return AgentEnvFactory("MediaSearch-v0", seed=0, split="train").reward_func


@pytest.mark.parametrize(
    ("completion", "said"),
    [
        ((TOOL,), r"completions\[0\]: a completion is a string or a list of messages, got tuple"),
        (TOOL, r"completions\[0\]: a completion is a string or a list of messages, got dict"),
        (["<answer>5</answer>"], r"completions\[0\]\[0\]: a message is an object"),
        (
            [{"role": "assistant", "content": {"note": "<answer>5</answer>"}}],
            "'content' must be a string, null or a list of parts, got dict",
        ),
        (
            [{"role": "assistant", "content": None, "tool_calls": "search"}],
            "'tool_calls' must be a list",
        ),
    ],
)
def test_a_completion_outside_the_grammar_is_refused(reward, completion, said) -> None:
    with pytest.raises(ValueError, match=said):
        reward(prompts=PROMPTS, completions=[completion], task_id=[TASK])


def test_honest_completions_still_score(reward) -> None:
    assert reward(prompts=PROMPTS, completions=[[TOOL]], task_id=[TASK]) == [0.0]
    honest = [{"role": "assistant", "content": "<answer>5</answer>"}]
    assert reward(prompts=PROMPTS, completions=[honest], task_id=[TASK]) == [1.0]
    assert reward(prompts=PROMPTS, completions=["<answer>5</answer>"], task_id=[TASK]) == [1.0]
    parts = [{"role": "assistant", "content": [{"type": "text", "text": "<answer>5</answer>"}]}]
    assert reward(prompts=PROMPTS, completions=[parts], task_id=[TASK]) == [1.0]


def test_an_argument_named_self_reaches_the_env() -> None:
    """It raised "got multiple values for argument 'self'" before the env saw the call, while the
    docs promise the env's own error on both sides."""
    env = AgentEnvFactory("MediaSearch-v0", seed=0, split="train")()
    env.reset(task_id=TASK)
    assert "unexpected argument 'self'" in env.search(**{"self": "x", "query": "rob zombie"})


def test_mismatched_batch_lengths_are_named(reward) -> None:
    honest = [{"role": "assistant", "content": "<answer>5</answer>"}]
    with pytest.raises(ValueError, match="0 environments for 1 completions"):
        reward(prompts=PROMPTS, completions=[honest], environments=[], task_id=[TASK])
    with pytest.raises(ValueError, match="2 prompts for 1 completions"):
        reward(prompts=PROMPTS * 2, completions=[honest], task_id=[TASK])


def test_tool_call_arguments_that_are_not_a_json_object_are_refused(reward) -> None:
    for arguments in ({1: "x"}, {"query": b"x"}):
        call = {"function": {"name": "search", "arguments": arguments}}
        message = [{"role": "assistant", "content": None, "tool_calls": [call]}]
        with pytest.raises(ValueError, match="arguments"):
            reward(prompts=PROMPTS, completions=[message], task_id=[TASK])


@pytest.mark.parametrize(
    ("column", "value", "said"),
    [("index", 0.9, "whole number"), ("index", "0", "whole number"), ("seed", 1.5, "whole number")],
)
def test_row_columns_that_pin_an_episode_are_whole_numbers(reward, column, value, said) -> None:
    """index=0.9 and index="0" played task 0, seed=1.5 became seed 1."""
    honest = [{"role": "assistant", "content": "<answer>5</answer>"}]
    row = {"index": [3], "seed": [0], column: [value]}
    with pytest.raises(TypeError, match=said):
        reward(prompts=PROMPTS, completions=[honest], **row)


def test_numpy_integers_from_a_dataset_still_pin_the_episode(reward) -> None:
    import numpy as np

    honest = [{"role": "assistant", "content": "<answer>5</answer>"}]
    plain = reward(prompts=PROMPTS, completions=[honest], index=[3], seed=[0])
    numpy = reward(prompts=PROMPTS, completions=[honest], index=[np.int64(3)], seed=[np.int64(0)])
    assert plain == numpy
