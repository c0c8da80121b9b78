"""Read what a person types in ``agentenv play`` into canonical action text: a pure function.

Why local: a typo should cost the player nothing. Every mistake this module
can see (an unknown command or tool, an unknown or missing argument, a value
of the wrong type) raises :class:`InputError` with what was wrong and a close
match, and ``play`` asks again without stepping the env, so no turn is spent
and ``format`` is not zeroed. Raw action text (``<tool_call>…``, ``<answer>…``,
``<say>…``, ``<think>…`` or an OpenAI-style JSON object) is passed through
untouched, exactly as a model would send it.

The forms:

* ``TOOL key=value ...``: a value runs until the next ``key=``, so
  ``search query=Andy Griffith western k=3`` needs no quotes; quoted values
  (``"..."`` or ``'...'``) and JSON lists/objects (``cast=["A B", "C D"]``)
  work too.
* ``TOOL VALUE ...``: a bare first argument goes to the tool's one required
  argument (``search Andy Griffith western``, ``ask_patient HP:0000256``).
* ``TOOL {json}``: the arguments as one JSON object.
* ``answer TEXT`` (several predictions: ``answer A; B; C``), ``say TEXT`` in a
  dialogue, ``help``, ``quit``.

Values are converted by the tool's JSON schema (``info["tools"]``): integers,
numbers, booleans (``true``/``yes``/``1``), ``null``, lists (JSON, comma
separated, or space-separated ids such as ``HP:0001250 HP:0000256``), enums.

Example:
    >>> tools = [{"type": "function", "function": {"name": "search", "description": "", "parameters": {
    ...     "type": "object", "required": ["query"], "properties": {
    ...         "query": {"type": "string"}, "k": {"type": "integer"}}}}}]
    >>> parse_line("search Andy Griffith western k=3", tools).action
    '<tool_call>\\n{"name": "search", "arguments": {"query": "Andy Griffith western", "k": 3}}\\n</tool_call>'
    >>> try:
    ...     parse_line("serch x", tools)
    ... except InputError as err:
    ...     print(err)
    unknown command 'serch': did you mean search?
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentenv.engine.actions import answer, tool_call
from agentenv.engine.strict_json import unique_keys

LOCAL_COMMANDS = {
    "help": "help",
    "?": "help",
    "full": "full",
    "quit": "quit",
    "exit": "quit",
    "q": "quit",
}
_RAW_TAGS = ("<tool_call>", "<answer>", "<say>", "<think>")
_KEY = re.compile(r"(?:(?<=\s)|^)([A-Za-z_][A-Za-z0-9_]*)=")
_STRICT_JSON = json.JSONDecoder(object_pairs_hook=unique_keys)
"""Typed JSON is read as the env reads it: a key named twice is refused, not last-wins."""
_ID_LIKE = re.compile(r"^[A-Za-z]+:\S+$")
_TRUE = {"true", "yes", "y", "1", "on"}
_FALSE = {"false", "no", "n", "0", "off"}


class InputError(ValueError):
    """A line that cannot be turned into an action; the message says why and suggests a fix."""


@dataclass(frozen=True)
class Parsed:
    """What one typed line means: a local ``command`` (``help``, ``quit``) or an ``action`` to send."""

    action: str | None = None
    command: str | None = None
    tool: str | None = None
    arguments: dict[str, Any] = field(default_factory=dict)


def did_you_mean(word: str, choices: Sequence[str]) -> str:
    """``": did you mean X?"`` for the closest of ``choices``, else ``""``."""
    lowered = {c.lower(): c for c in choices}
    if word.lower() in lowered:
        return f": did you mean {lowered[word.lower()]}?"
    close = difflib.get_close_matches(word.lower(), list(lowered), n=1, cutoff=0.75)
    if not close and len(word) >= 4:  # a name with a word added or left out: search_movies, title
        close = [c for c in lowered if len(c) >= 4 and (c in word.lower() or word.lower() in c)][:1]
    return f": did you mean {lowered[close[0]]}?" if close else ""


def parse_line(
    line: str,
    tools: Sequence[Mapping[str, Any]],
    *,
    say_to: str | None = None,
    can_answer: bool = True,
) -> Parsed:
    """Turn one typed line into a :class:`Parsed`; raise :class:`InputError` for anything a person mistyped.

    ``tools`` is ``info["tools"]`` (OpenAI function schemas); ``say_to`` names the
    other side of a dialogue, which enables ``say TEXT``; ``can_answer`` is
    False for a side that only talks (a simulated patient or user).
    """
    text = line.strip()
    if not text:
        raise InputError("empty line: type a command, or `help`")
    head, _, rest = text.partition(" ")
    rest = rest.strip()
    schemas = {t["function"]["name"]: t["function"] for t in tools}
    typed_command = head in schemas or head == "answer" or (head == "say" and say_to is not None)
    if not typed_command and (any(tag in text for tag in _RAW_TAGS) or text.startswith("{")):
        return Parsed(action=text)  # the model's own text, sent as it is
    if head.lower() in LOCAL_COMMANDS:
        if rest:
            raise InputError(f"`{head}` takes nothing after it; type `{head}` alone")
        return Parsed(command=LOCAL_COMMANDS[head.lower()])
    if head == "answer":
        if not can_answer:
            raise InputError(f"only the {say_to} gives the final answer; reply with `say TEXT`")
        if not rest:
            raise InputError(
                "`answer` needs the answer text, e.g. `answer Inception` (several: `answer A; B; C`)"
            )
        return Parsed(action=answer(rest))
    if head == "say" and say_to is not None:
        if not rest:
            raise InputError(
                f"`say` needs a message for the {say_to}, e.g. `say Do you have seizures?`"
            )
        if any(tag in rest for tag in (*_RAW_TAGS, "</")):
            raise InputError(
                "a message is plain text (the env refuses tags inside <say>); to answer, type "
                "`answer TEXT`"
            )
        return Parsed(action=f"<say>{rest}</say>")
    if head in schemas:
        arguments = parse_arguments(head, rest, schemas[head].get("parameters") or {})
        return Parsed(action=tool_call(head, **arguments), tool=head, arguments=arguments)
    commands = [
        *schemas,
        *(["answer"] if can_answer else []),
        "help",
        "full",
        "quit",
        *(["say"] if say_to else []),
    ]
    hint = did_you_mean(head, commands)
    if not hint and "_" in head:
        listed = ", ".join(schemas) or "none"
        hint = f": no such tool here (tools: {listed})" + (
            f"; to ask the {say_to}, type `say ...`" if say_to else ""
        )
    elif not hint and say_to is not None:
        hint = f"; to talk to the {say_to}, type `say {text}`"
    elif not hint:
        hint = f"; commands: {', '.join(commands)} (`help` explains them)"
    raise InputError(f"unknown command {head!r}{hint}")


def parse_arguments(tool: str, rest: str, parameters: Mapping[str, Any]) -> dict[str, Any]:
    """The arguments of ``TOOL rest``, checked and converted against the tool's parameter schema."""
    properties: Mapping[str, Any] = parameters.get("properties") or {}
    required = list(parameters.get("required") or [])
    if rest.startswith("{"):
        try:
            raw = _STRICT_JSON.decode(rest)
        except json.JSONDecodeError as err:
            raise InputError(
                f"{tool}: the arguments are not valid JSON ({err.msg} at column {err.colno})"
            ) from None
        except RecursionError:
            raise InputError(f"{tool}: the JSON arguments are nested too deeply") from None
        except ValueError as err:  # a key named twice, an integer of more than 4,300 digits
            raise InputError(f"{tool}: the JSON arguments cannot be read: {err}") from None
        if not isinstance(raw, dict):
            raise InputError(
                f'{tool}: the JSON arguments must be an object, e.g. {{"{(required or ["key"])[0]}": ...}}'
            )
        values = {k: (v, True) for k, v in raw.items()}
    else:
        values = _split_pairs(tool, rest, properties, required)
    arguments: dict[str, Any] = {}
    for key, (value, typed) in values.items():
        if key not in properties:
            names = list(properties)
            raise InputError(
                f"{tool} has no argument {key!r}{did_you_mean(key, names)}"
                + (
                    f" ({tool} takes {', '.join(names)})"
                    if names
                    else f" ({tool} takes no arguments)"
                )
            )
        arguments[key] = convert(tool, key, value, properties[key], typed=typed)
    missing = [k for k in required if k not in arguments]
    if missing:
        example = " ".join(f"{k}=..." for k in missing)
        raise InputError(f"{tool} needs {', '.join(missing)}: e.g. `{tool} {example}`")
    return arguments


def _split_pairs(
    tool: str, rest: str, properties: Mapping[str, Any], required: Sequence[str]
) -> dict[str, tuple[Any, bool]]:
    """``key=value`` pairs (a value runs until the next ``key=``) and a leading bare value."""
    values: dict[str, tuple[Any, bool]] = {}
    pos, key = 0, None
    while pos < len(rest):
        while pos < len(rest) and rest[pos].isspace():
            pos += 1
        if pos >= len(rest):
            break
        match = _KEY.match(rest, pos)
        if match:
            key, pos = match.group(1), match.end()
        elif key is not None or values:
            raise InputError(f"{tool}: cannot read {rest[pos:]!r}")
        value, typed, pos = _read_value(rest, pos)
        name = key if match else _bare_target(tool, properties, required)
        if name in values:
            raise InputError(f"{tool}: {name} is given twice")
        values[name] = (value, typed)
    return values


def _bare_target(tool: str, properties: Mapping[str, Any], required: Sequence[str]) -> str:
    if len(required) == 1:
        return required[0]
    if len(properties) == 1:
        return next(iter(properties))
    names = ", ".join(properties) or "no arguments"
    raise InputError(
        f"{tool} takes several arguments ({names}): name them, e.g. `{tool} key=value key=value`"
    )


def _read_value(rest: str, pos: int) -> tuple[Any, bool, int]:
    """One value from ``pos``: quoted, JSON list/object, or plain text up to the next ``key=``."""
    if pos < len(rest) and rest[pos] in "\"'":
        quote = rest[pos]
        end = rest.find(quote, pos + 1)
        while end != -1 and end + 1 < len(rest) and not rest[end + 1].isspace():
            end = rest.find(quote, end + 1)
        if end != -1:
            return rest[pos + 1 : end], False, end + 1
    if pos < len(rest) and rest[pos] in "[{":
        try:
            value, end = _STRICT_JSON.raw_decode(rest, pos)
        except (ValueError, RecursionError):  # read as plain text, and refused as such
            pass
        else:
            if end >= len(rest) or rest[end].isspace():
                return value, True, end
    following = _KEY.search(rest, pos)
    while following and following.start() > pos and not rest[following.start() - 1].isspace():
        following = _KEY.search(rest, following.start() + 1)
    end = following.start() if following and following.start() > pos else len(rest)
    return rest[pos:end].strip(), False, end


def _types(spec: Mapping[str, Any]) -> list[str]:
    kind = spec.get("type")
    if isinstance(kind, str):
        return [kind]
    if isinstance(kind, list):
        return [str(k) for k in kind]
    return [t for s in spec.get("anyOf", []) for t in _types(s)]


def _variant(spec: Mapping[str, Any], kind: str) -> Mapping[str, Any]:
    """The sub-schema of ``spec`` for one type (``anyOf`` members carry their own bounds)."""
    for sub in spec.get("anyOf", []):
        if kind in _types(sub):
            return sub
    return spec


def convert(
    tool: str, key: str, value: Any, spec: Mapping[str, Any], *, typed: bool = False
) -> Any:
    """Convert a typed text ``value`` to the schema type of ``key`` (JSON ``typed`` values are only checked)."""
    kinds = _types(spec) or ["string"]
    where = f"{tool} {key}"
    if not typed and "null" in kinds and str(value).lower() in ("null", "none"):
        return None
    if typed:
        return _check(where, value, spec, kinds)
    errors = []
    for kind in [k for k in kinds if k != "string"] + (["string"] if "string" in kinds else []):
        try:
            converted = _from_text(str(value), kind, _variant(spec, kind))
        except InputError as err:
            errors.append(f"{where} {err}")
            continue
        try:
            return _check(where, converted, spec, kinds)
        except InputError as err:
            errors.append(str(err))
    raise InputError(errors[0] if errors else f"{where}: cannot read {value!r}")


def _from_text(text: str, kind: str, spec: Mapping[str, Any]) -> Any:
    if kind == "string":
        return text
    if kind == "integer":
        if re.fullmatch(r"[+-]?\d+", text.strip()):
            try:
                return int(text)
            except ValueError:  # more digits than Python reads
                raise InputError(
                    f"expects a whole number, got {len(text.strip())} digits"
                ) from None
        raise InputError(f"expects a whole number, got {text!r}")
    if kind == "number":
        try:
            number = float(text)
        except ValueError:
            raise InputError(f"expects a number, got {text!r}") from None
        return (
            int(number)
            if number.is_integer() and re.fullmatch(r"[+-]?\d+", text.strip())
            else number
        )
    if kind == "boolean":
        if text.lower() in _TRUE:
            return True
        if text.lower() in _FALSE:
            return False
        raise InputError(f"expects true or false, got {text!r}")
    if kind == "array":
        stripped = text.strip()
        if stripped.startswith("["):
            try:
                return _STRICT_JSON.decode(stripped)
            except (ValueError, RecursionError):
                raise InputError(
                    f'expects a list, got {text!r} (write ["a", "b"] or a, b)'
                ) from None
        if not stripped:
            return []
        items = []
        for piece in (p.strip() for p in stripped.split(",")):
            words = piece.split()
            items += (
                words
                if words and all(_ID_LIKE.match(w) for w in words)
                else [piece]
                if piece
                else []
            )
        item_spec = spec.get("items") or {}
        item_kinds = _types(item_spec)
        if item_kinds and "string" not in item_kinds:
            return [convert("", "", item, item_spec) for item in items]
        return items
    if kind == "object":
        try:
            value = _STRICT_JSON.decode(text)
        except (ValueError, RecursionError):
            raise InputError(f"expects a JSON object, got {text!r}") from None
        return value
    if kind == "null":
        raise InputError(f"expects null, got {text!r}")
    return text


_PY = {
    "string": str,
    "integer": int,
    "number": (int, float),
    "boolean": bool,
    "array": list,
    "object": dict,
}


def _check(where: str, value: Any, spec: Mapping[str, Any], kinds: Sequence[str]) -> Any:
    """Raise for a value of none of ``kinds``, out of an enum, or out of its bounds; return it otherwise."""
    if value is None:
        if "null" in kinds:
            return None
        raise InputError(f"{where} cannot be null")
    fits = [
        k
        for k in kinds
        if k in _PY
        and isinstance(value, _PY[k])
        and not (k != "boolean" and isinstance(value, bool))
    ]
    if not fits:
        raise InputError(f"{where} expects {' or '.join(kinds)}, got {json.dumps(value)}")
    sub = _variant(spec, fits[0])
    enum = sub.get("enum")
    if enum is not None and value not in enum:
        folded = {str(e).lower(): e for e in enum}
        if isinstance(value, str) and value.lower() in folded:
            return folded[value.lower()]
        raise InputError(
            f"{where} must be one of {', '.join(map(str, enum))}{did_you_mean(str(value), [str(e) for e in enum])}"
        )
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        low, high = sub.get("minimum"), sub.get("maximum")
        if (low is not None and value < low) or (high is not None and value > high):
            raise InputError(f"{where} must be between {low} and {high}, got {value}")
    return value
