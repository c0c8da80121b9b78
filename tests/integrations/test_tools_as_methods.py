"""Env tools as typed methods: the schema a trainer builds from them matches the env's own schema."""

from __future__ import annotations

import inspect
from typing import Any, Literal

import gymnasium as gym
import pytest
from pydantic import BaseModel, Field

import agentenv  # noqa: F401 - registers the ids
from agentenv.engine.tools import Tool
from agentenv.integrations.tools_as_methods import method_signature, tool_method

JSON_TYPES = {"string", "integer", "number", "boolean", "array", "object"}


def env_types(spec: dict[str, Any]) -> set[str]:
    """The non-null JSON types a pydantic property allows."""
    options = spec.get("anyOf", [spec])
    return {o["type"] for o in options if o.get("type") in JSON_TYPES}


def method_types(spec: dict[str, Any]) -> set[str]:
    """The JSON types of a property as ``transformers.utils.get_json_schema`` writes it."""
    kind = spec.get("type")
    if kind is not None:
        return {kind} if isinstance(kind, str) else set(kind) - {"null"}
    return {t for option in spec.get("anyOf", []) for t in method_types(option)}


def test_method_schemas_match_the_env_tool_schemas() -> None:
    get_json_schema = pytest.importorskip("transformers.utils").get_json_schema
    env = gym.make("MediaSearch-v0")
    tools = env.unwrapped.tools
    for schema in env.unwrapped.tools.schemas:
        function = schema["function"]
        ours = get_json_schema(tool_method(tools[function["name"]]))["function"]
        assert ours["name"] == function["name"]
        assert ours["description"] == " ".join(function["description"].split())
        expected, got = function["parameters"], ours["parameters"]
        assert set(got.get("required", [])) == set(expected["required"])
        assert list(got["properties"]) == list(expected["properties"])
        for name, spec in expected["properties"].items():
            assert method_types(got["properties"][name]) == env_types(spec), (
                function["name"],
                name,
            )
            assert got["properties"][name]["description"].startswith(spec["description"])
            if "enum" in spec:
                assert got["properties"][name]["enum"] == spec["enum"]


class Args(BaseModel):
    query: str = Field(description="What to look for.")
    mode: Literal["fast", "exact"] = Field(default="fast", description="How to look.")
    tags: list[str] = Field(default_factory=list)


def test_signature_is_keyword_only_and_the_body_forwards_what_was_passed() -> None:
    t = Tool("lookup", "Look something up.", Args, lambda a: a)
    assert str(method_signature(t)) == (
        "(self, *, query: str, mode: Literal['fast', 'exact'] = 'fast', tags: list[str] = []) -> str"
    )
    method = tool_method(t)
    assert "tags: The tags argument. Defaults to []." in inspect.getdoc(method)

    class Host:
        def _call_tool(self, name: str, arguments: dict[str, Any]) -> str:
            return f"{name}:{sorted(arguments.items())}"

    Host.lookup = method
    assert Host().lookup(query="x") == "lookup:[('query', 'x')]"  # defaults are the env's to apply


@pytest.mark.parametrize("name", ["reset", "get_reward", "answer", "_hidden", "two words"])
def test_names_that_cannot_be_public_tool_methods_are_refused(name: str) -> None:
    with pytest.raises(ValueError, match="cannot be a public method"):
        tool_method(Tool(name, "x", Args, lambda a: a))
