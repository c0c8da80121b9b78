"""Turn an env :class:`~agentenv.engine.tools.Tool` into a typed, documented method.

Trainers such as TRL build a tool's JSON schema from a Python function: its
signature and type hints give the parameters, a Google-style docstring gives
the descriptions (``transformers.utils.get_json_schema``). An agentenv tool is
a pydantic argument model instead, so this module writes that function: an
explicit :class:`inspect.Signature` with one keyword-only parameter per field,
real annotations, and a docstring whose ``Args:`` section holds each field's
description, its constraints and its default. Nothing is ``exec``-ed.

``get_json_schema`` keeps types, enums (``Literal``/``Enum`` hints) and
descriptions, and nothing else of a JSON schema: bounds (``minimum``,
``maximum``), lengths and item counts of the env's ``info["tools"]`` would be
lost, so :func:`constraint_text` writes them into each argument's description,
which is what the model reads in the rendered tool list.

The method does not validate or run anything itself. It forwards the
arguments it was called with to ``self._call_tool(name, arguments)``, so the
env validates them and runs the tool exactly as for a text action, counting
the turn and explaining bad arguments to the policy.

Example:
    >>> from pydantic import BaseModel, Field
    >>> class SearchArgs(BaseModel):
    ...     query: str = Field(description="Words to look for.")
    ...     k: int = Field(default=5, description="How many results.")
    >>> from agentenv.engine.tools import Tool
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

from agentenv.engine.tools import Tool

#: Names a tool may not take: TRL treats ``reset``/``get_reward`` specially; ``answer`` is the answer format.
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


def _number(value: Any) -> str:
    return json.dumps(value)


def _bounds(spec: dict[str, Any], low: str, high: str, unit: str) -> list[str]:
    lo, hi = spec.get(low), spec.get(high)
    suffix = f" {unit}" if unit else ""
    if lo is not None and hi is not None:
        return [f"{_number(lo)} to {_number(hi)}{suffix}."]
    if lo is not None:
        return [f"At least {_number(lo)}{suffix}."]
    if hi is not None:
        return [f"At most {_number(hi)}{suffix}."]
    return []


def constraint_text(spec: dict[str, Any], *, enum_in_type: bool = False) -> str:
    """The JSON-schema constraints of one property as a sentence, for the docstring.

    ``transformers.utils.get_json_schema`` (what TRL builds a method's schema with)
    writes types, ``enum`` (from ``Literal``/``Enum`` hints or a trailing
    ``(choices: [...])``) and descriptions only, so bounds, lengths and item
    counts would be lost; this puts them in the description the model reads.
    A ``(choices: [...])`` suffix is added for an enum the type hint does not carry.

    Example:
        >>> constraint_text({"type": "integer", "minimum": 1, "maximum": 20})
        'Range: 1 to 20.'
        >>> constraint_text({"anyOf": [{"type": "string", "maxLength": 200}, {"type": "null"}]})
        'Length: at most 200 characters.'
        >>> constraint_text({"type": "array", "items": {"type": "string", "maxLength": 20}, "maxItems": 5})
        'Items: at most 5. Each item: length: at most 20 characters.'
    """
    options = [o for o in spec.get("anyOf", [spec]) if o.get("type") != "null"]
    parts: list[str] = []
    for option in options:
        parts.extend(_option_constraints(option, enum_in_type=enum_in_type))
    return " ".join(dict.fromkeys(parts))


def _option_constraints(spec: dict[str, Any], *, enum_in_type: bool) -> list[str]:
    parts: list[str] = []
    numeric = _bounds(spec, "minimum", "maximum", "")
    if numeric:
        parts.append("Range: " + numeric[0])
    if spec.get("exclusiveMinimum") is not None:
        parts.append(f"Greater than {_number(spec['exclusiveMinimum'])}.")
    if spec.get("exclusiveMaximum") is not None:
        parts.append(f"Less than {_number(spec['exclusiveMaximum'])}.")
    if spec.get("multipleOf") is not None:
        parts.append(f"A multiple of {_number(spec['multipleOf'])}.")
    length = _bounds(spec, "minLength", "maxLength", "characters")
    if length:
        parts.append("Length: " + length[0][0].lower() + length[0][1:])
    if spec.get("pattern") is not None:
        parts.append(f"Must match the regular expression {spec['pattern']}.")
    items = _bounds(spec, "minItems", "maxItems", "")
    if items:
        parts.append("Items: " + items[0][0].lower() + items[0][1:])
    if spec.get("uniqueItems"):
        parts.append("Items must be distinct.")
    if isinstance(spec.get("items"), dict):
        inner = _option_constraints(spec["items"], enum_in_type=enum_in_type)
        if inner:
            parts.append("Each item: " + " ".join(inner)[0].lower() + " ".join(inner)[1:])
    if "enum" in spec and not enum_in_type:
        parts.append(f"One of {json.dumps(spec['enum'], ensure_ascii=False)}.")
    return parts


def _enum_in_type(annotation: Any) -> bool:
    """Whether the hint itself carries the enum (``Literal``/``Enum``), so get_json_schema writes it."""
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return True
    origin = typing.get_origin(annotation)
    if origin is typing.Literal:
        return True
    return (
        any(_enum_in_type(a) for a in typing.get_args(annotation)) if origin is not None else False
    )


def method_docstring(t: Tool) -> str:
    """The Google-style docstring of a tool's method: description, then ``Args:`` with each field's
    description, constraints (:func:`constraint_text`) and default."""
    lines = [_one_line(t.description) or f"Call the {t.name} tool."]
    fields = t.args_model.model_fields
    if fields:
        properties = t.args_model.model_json_schema().get("properties", {})
        lines += ["", "Args:"]
        for name, info in fields.items():
            text = _one_line(info.description or f"The {name} argument.")
            constraints = constraint_text(
                properties.get(name, {}), enum_in_type=_enum_in_type(info.annotation)
            )
            if constraints:
                text += f" {constraints}"
            if not info.is_required():
                text += (
                    f" Defaults to {_default_text(info.get_default(call_default_factory=True))}."
                )
            lines.append(f"    {name}: {text}")
    return "\n".join(lines)


def method_signature(t: Tool) -> inspect.Signature:
    """``(self, *, field: type [= default], ...) -> str`` for a tool's argument model."""
    params = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    for name, info in t.args_model.model_fields.items():
        default = (
            inspect.Parameter.empty
            if info.is_required()
            else info.get_default(call_default_factory=True)
        )
        params.append(
            inspect.Parameter(
                name,
                inspect.Parameter.KEYWORD_ONLY,
                default=default,
                annotation=plain_annotation(info.annotation),
            )
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

    def method(self: Any, /, **arguments: Any) -> str:  # "self" from the model reaches the env
        return self._call_tool(name, arguments)

    signature = method_signature(t)
    method.__name__ = name
    method.__qualname__ = name
    method.__doc__ = method_docstring(t)
    method.__signature__ = signature  # type: ignore[attr-defined]
    method.__annotations__ = {
        p.name: p.annotation
        for p in signature.parameters.values()
        if p.annotation is not inspect.Parameter.empty
    } | {"return": str}
    return method
