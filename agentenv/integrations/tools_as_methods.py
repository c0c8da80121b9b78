"""Turn an env :class:`~agentenv.tools.Tool` into a typed, documented method.

Trainers such as TRL build a tool's JSON schema from a Python function: its
signature and type hints give the parameters, a Google-style docstring gives
the descriptions (``transformers.utils.get_json_schema``). An agentenv tool is
a pydantic argument model instead, so this module writes that function: an
explicit :class:`inspect.Signature` with one keyword-only parameter per field,
real annotations, and a docstring whose ``Args:`` section holds each field's
description (plus its default). Nothing is ``exec``-ed.

The method does not validate or run anything itself. It forwards the
arguments it was called with to ``self._call_tool(name, arguments)``, so the
env validates them and runs the tool exactly as for a text action, counting
the turn and explaining bad arguments to the policy.

Example:
    >>> from pydantic import BaseModel, Field
    >>> class SearchArgs(BaseModel):
    ...     query: str = Field(description="Words to look for.")
    ...     k: int = Field(default=5, description="How many results.")
    >>> from agentenv.tools import Tool
    >>> method = tool_method(Tool("search", "Find films by keywords.", SearchArgs, lambda a: a))
    >>> import inspect
    >>> str(inspect.signature(method))
    '(self, *, query: str, k: int = 5) -> str'
    >>> print(method.__doc__)
    Find films by keywords.
    <BLANKLINE>
    Args:
        query: Words to look for.
        k: How many results. Defaults to 5.
"""

from __future__ import annotations

import enum
import inspect
import json
import types
import typing
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

from agentenv.tools import Tool

#: Names a tool may not take: TRL treats ``reset``/``get_reward`` specially, ``answer`` ends the episode.
RESERVED_NAMES = frozenset({"reset", "get_reward", "answer"})


def plain_annotation(annotation: Any) -> Any:
    """An annotation that schema builders understand: nested models become ``dict``.

    Example:
        >>> class Inner(BaseModel):
        ...     x: int
        >>> plain_annotation(list[Inner]), plain_annotation(int | None)
        (list[dict], int | None)
    """
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return dict
    origin = typing.get_origin(annotation)
    if origin is None:
        return annotation
    args = typing.get_args(annotation)
    if origin is typing.Literal:
        return annotation
    if origin is typing.Annotated:
        return plain_annotation(args[0])
    plain = tuple(plain_annotation(a) for a in args)
    if origin in (typing.Union, types.UnionType):
        result = plain[0]
        for a in plain[1:]:
            result = result | a
        return result
    if origin is list:
        return list[plain[0]] if plain else list
    if origin is dict:
        return dict[plain[0], plain[1]] if len(plain) == 2 else dict
    if origin is tuple:
        return list[plain[0]] if plain and (len(plain) == 1 or plain[-1] is Ellipsis) else list
    return annotation


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _default_text(value: Any) -> str:
    if isinstance(value, enum.Enum):
        value = value.value
    return json.dumps(value, ensure_ascii=False, default=str)


def method_docstring(t: Tool) -> str:
    """The Google-style docstring of a tool's method: description, then ``Args:``."""
    lines = [_one_line(t.description) or f"Call the {t.name} tool."]
    fields = t.args_model.model_fields
    if fields:
        lines += ["", "Args:"]
        for name, info in fields.items():
            text = _one_line(info.description or f"The {name} argument.")
            if not info.is_required():
                text += f" Defaults to {_default_text(info.get_default(call_default_factory=True))}."
            lines.append(f"    {name}: {text}")
    return "\n".join(lines)


def method_signature(t: Tool) -> inspect.Signature:
    """``(self, *, field: type [= default], ...) -> str`` for a tool's argument model."""
    params = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    for name, info in t.args_model.model_fields.items():
        default = inspect.Parameter.empty if info.is_required() else info.get_default(call_default_factory=True)
        params.append(
            inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default,
                              annotation=plain_annotation(info.annotation))
        )
    return inspect.Signature(params, return_annotation=str)


def tool_method(t: Tool) -> Callable[..., str]:
    """A function to set on a class: calling it on an instance runs ``self._call_tool(t.name, kwargs)``."""
    if not t.name.isidentifier() or t.name.startswith("_") or t.name in RESERVED_NAMES:
        raise ValueError(
            f"tool name {t.name!r} cannot be a public method: it must be an identifier, "
            f"not start with '_', and not be one of {sorted(RESERVED_NAMES)}"
        )
    name = t.name

    def method(self: Any, **arguments: Any) -> str:
        return self._call_tool(name, arguments)

    signature = method_signature(t)
    method.__name__ = name
    method.__qualname__ = name
    method.__doc__ = method_docstring(t)
    method.__signature__ = signature  # type: ignore[attr-defined]
    method.__annotations__ = {
        p.name: p.annotation for p in signature.parameters.values() if p.annotation is not inspect.Parameter.empty
    } | {"return": str}
    return method
