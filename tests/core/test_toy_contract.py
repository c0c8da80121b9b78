"""The step contract on a tiny env: tool calls, answers, errors, truncation, limits."""

from __future__ import annotations

import time

import pytest
from gymnasium.utils.env_checker import check_env

from agentenv.engine.actions import answer, tool_call, tool_calls

from .toy_env import SquareEnv


def test_check_env_passes() -> None:
    check_env(SquareEnv(), skip_render_check=True)


def test_tool_call_then_answer_scores_one() -> None:
    env = SquareEnv()
    obs, info = env.reset(seed=0, options={"index": 3})
    assert obs == "What is 3 squared?"
    assert info["messages"][0]["role"] == "system" and "gold" not in info
    obs, reward, terminated, truncated, info = env.step(tool_call("square", n=3))
    assert obs == '{"n": 3, "square": 9}'
    assert (reward, terminated, truncated) == (0.0, False, False)
    assert info["messages"][-2]["tool_calls"][0]["function"]["name"] == "square"
    assert info["messages"][-1] == {
        "role": "tool",
        "tool_call_id": "call_1_0",
        "name": "square",
        "content": obs,
    }
    assert "gold" not in info and info["reward_components"] == {}
    obs, reward, terminated, truncated, info = env.step(answer("9"))
    assert (reward, terminated, truncated) == (1.0, True, False)
    assert info["gold"] == {"answer": "9"}
    assert info["reward_components"]["accuracy"] == 1.0
    assert info["reward_components"]["tool_calls"] == 1.0
    assert info["reward_components"]["format"] == 1.0


def test_parallel_calls_run_in_order() -> None:
    env = SquareEnv()
    env.reset(seed=0)
    obs, *_, info = env.step(tool_calls([("square", {"n": 2}), ("square", {"n": 4})]))
    assert obs.index('"square": 4') < obs.index('"square": 16')
    assert info["tool_calls"] == 2
    assert [m["role"] for m in info["messages"][-3:]] == ["assistant", "tool", "tool"]


@pytest.mark.parametrize(
    ("action", "fragment"),
    [
        ("", "empty action"),
        ("hello", "no <tool_call> or <answer>"),
        ('<tool_call>{"name": "square", "arguments": {"n": 2}</tool_call>', "bad JSON"),
        (
            '<tool_call>{"name": "cube", "arguments": {}}</tool_call>',
            "unknown tool 'cube' in call 1; known tools: square, sleep",
        ),
        (tool_call("square", n=-1), "invalid arguments for square"),
        (tool_call("square", n=1, m=2), "unexpected argument 'm'"),
        (tool_call("square"), "missing required argument 'n'"),
        (tool_call("square", n=1) + answer("1"), "not both"),
        ("<answer>1", "unmatched <answer>"),
        ("<think>hmm", "unclosed <think>"),
    ],
)
def test_bad_actions_explain_themselves(action: str, fragment: str) -> None:
    env = SquareEnv()
    env.reset(seed=0)
    obs, reward, terminated, truncated, info = env.step(action)
    assert fragment in info["parse_error"]
    assert obs.startswith("Error: ") and fragment in obs
    assert (terminated, truncated, info["turn"]) == (False, False, 1)


@pytest.mark.parametrize(
    "action", [tool_call("square", n=-1), tool_call("square", n=1, m=2), tool_call("cube", n=2)]
)
def test_a_well_formed_call_that_cannot_run_is_answered_in_a_tool_message(action: str) -> None:
    """As TRL's multi-turn loop and chat APIs answer it, so the rendered conversation matches a trainer's;
    it still counts as an invalid action (no tool ran, format 0)."""
    env = SquareEnv(max_turns=1)
    env.reset(seed=0)
    obs, _, _, _, info = env.step(action)
    call, reply = info["messages"][-2:]
    assert call["role"] == "assistant" and len(call["tool_calls"]) == 1
    assert call["tool_calls"][0]["function"]["name"] in ("square", "cube")
    assert reply == {
        "role": "tool",
        "tool_call_id": call["tool_calls"][0]["id"],
        "name": call["tool_calls"][0]["function"]["name"],
        "content": obs,
    }
    assert obs.startswith("Error: ") and info["parse_error"] in obs
    components = info["reward_components"]
    assert (components["invalid_actions"], components["tool_calls"], components["format"]) == (
        1.0,
        0.0,
        0.0,
    )


def test_a_rejected_call_stops_the_whole_action_and_says_so_for_each_call() -> None:
    env = SquareEnv()
    env.reset(seed=0)
    obs, _, _, _, info = env.step(tool_calls([("square", {"n": 2}), ("square", {"n": -1})]))
    first, second = info["messages"][-2:]
    assert [m["role"] for m in info["messages"][-3:]] == ["assistant", "tool", "tool"]
    assert first["content"].startswith("Error: not run: call 2 of this action was rejected")
    assert second["content"].startswith("Error: invalid arguments for square in call 2")
    assert obs == f"[square]\n{first['content']}\n\n[square]\n{second['content']}"
    assert info["tool_calls"] == 0


def test_unreadable_text_is_still_answered_in_a_user_turn() -> None:
    env = SquareEnv()
    env.reset(seed=0)
    obs, *_, info = env.step('<tool_call>{"name": "square", "arguments": {"n": 2}</tool_call>')
    assert info["messages"][-1] == {"role": "user", "content": obs}
    assert info["messages"][-2]["role"] == "assistant" and "tool_calls" not in info["messages"][-2]


def test_tool_failures_become_observations() -> None:
    env = SquareEnv()
    env.reset(seed=0)
    start = time.perf_counter()
    obs, *_ = env.step(tool_call("sleep", seconds=5))
    assert "did not finish within" in obs and time.perf_counter() - start < 2
    obs, *_ = env.step(tool_call("boom", seconds=0))
    assert obs.startswith("Error: boom failed (ZeroDivisionError)")
    obs, *_ = env.step(tool_call("big", seconds=0))
    assert len(obs) < 1100 and "output truncated: 99000 more characters" in obs
    obs, *_ = env.step(tool_call("square", n=500))
    assert obs == "Error: no entry for 500"


def test_turn_budget_truncates() -> None:
    env = SquareEnv(max_turns=2)
    env.reset(seed=0)
    assert env.step("nonsense")[3] is False
    _, reward, terminated, truncated, info = env.step("nonsense")
    assert (terminated, truncated, reward) == (False, True, 0.0)
    assert (
        info["reward_components"]["accuracy"] == 0.0 and info["reward_components"]["format"] == 0.0
    )
    assert "gold" in info
    with pytest.raises(RuntimeError):
        env.step(answer("1"))


def test_reset_options_pin_tasks() -> None:
    env = SquareEnv()
    _, info = env.reset(options={"index": 5})
    first = info["task_id"]
    assert env.reset(options={"task_id": first})[1]["task_id"] == first
    obs, _ = env.reset(options={"task": {"question": "Two?", "answer": "2"}})
    assert obs == "Two?"
    with pytest.raises(ValueError, match="at most one"):
        env.reset(options={"index": 1, "task_id": first})
    with pytest.raises(KeyError):
        env.reset(options={"task_id": "nope"})
    with pytest.raises(IndexError):
        env.reset(options={"index": 99})


def test_transcript_mode_shows_whole_conversation() -> None:
    env = SquareEnv(observation_mode="transcript")
    obs, _ = env.reset(seed=1, options={"index": 2})
    assert obs.startswith("SYSTEM: ") and "USER: What is 2 squared?" in obs
    obs, *_ = env.step(tool_call("square", n=2))
    assert "TOOL square:" in obs and "-> square(" in obs


def test_same_seed_same_rollout() -> None:
    def rollout(seed: int) -> list:
        env = SquareEnv()
        out = [env.reset(seed=seed)]
        for action in ["bad", tool_call("square", n=4), answer("16")]:
            out.append(env.step(action))
        return out

    assert rollout(7) == rollout(7)
