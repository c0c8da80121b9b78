"""String-to-type conversion for typed args dataclasses: one converter for every command line.

Values reach a program as text: ``agentenv eval --agent-args k=5`` hands the
agents ``"5"``, and the training scripts' ``--learning-rate 3e-6`` reaches
``argparse`` as ``"3e-6"``. Both kinds of args are dataclasses that declare
the real types, so the conversion is read from the annotations, here, once:
:func:`convert` serves :func:`args_from_strings` (``key=value`` pairs, the
agents) and :mod:`agentenv.integrations.dataclass_cli` (``--options``, the
training scripts), so the two cannot drift apart in what they accept.

Supported annotations: ``int``, ``float``, ``bool``
(``true/false/1/0/yes/no/on/off``), ``str``, ``Any``, a ``Literal`` of
strings, and unions of these with ``None`` (``none``, ``null`` or an empty
value gives ``None``). An unparseable value is a :class:`ValueError` that
names the field and what it expects.

Example:
    >>> from dataclasses import dataclass
    >>> @dataclass
    ... class Args:
    ...     k: int = 5
    ...     temperature: float = 0.0
    ...     verbose: bool = False
    ...     name: str | None = None
    >>> args_from_strings(Args, {"k": "3", "verbose": "yes", "name": "none"})
    Args(k=3, temperature=0.0, verbose=True, name=None)
    >>> args_from_strings(Args, {"kk": "3"})
    Traceback (most recent call last):
    ...
    ValueError: unknown argument 'kk' for Args; known: k, temperature, verbose, name
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping
from typing import Any, Literal, TypeVar, Union

T = TypeVar("T")

_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off"})
_NONE = frozenset({"", "none", "null"})


def args_from_strings(cls: type[T], values: Mapping[str, Any]) -> T:
    """An instance of the dataclass ``cls`` with ``values`` converted to the field types.

    Values that are not strings (a caller passing Python objects) are kept as
    they are; an unknown key is an error that lists the known ones.
    """
    if not dataclasses.is_dataclass(cls):
        raise TypeError(f"{cls!r} is not a dataclass")
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init}
    hints = typing.get_type_hints(cls)
    converted: dict[str, Any] = {}
    for key, value in values.items():
        if key not in fields:
            raise ValueError(
                f"unknown argument {key!r} for {cls.__name__}; known: {', '.join(fields)}"
            )
        converted[key] = (
            convert(value, hints[key], f"{cls.__name__}.{key}") if isinstance(value, str) else value
        )
    return cls(**converted)


def is_convertible(annotation: Any) -> bool:
    """Whether :func:`convert` can produce ``annotation`` from text.

    Lets a parser reject an unsupported field type when it is built, not when
    a user first passes that option.

    Example:
        >>> is_convertible(int | None), is_convertible(Literal["a", "b"]), is_convertible(list[int])
        (True, True, False)
    """
    origin = typing.get_origin(annotation)
    if origin in (Union, types.UnionType):
        return all(is_convertible(a) for a in typing.get_args(annotation) if a is not type(None))
    return origin is Literal or annotation in (bool, int, float, str, Any)


def convert(text: str, annotation: Any, where: str = "value") -> Any:
    """Convert one string to ``annotation``; ``where`` names the field in errors.

    Example:
        >>> convert("native", Literal["native", "hermes"]), convert("2.5", float), convert("", int | None)
        ('native', 2.5, None)
        >>> convert("maybe", bool, "--use-vllm")
        Traceback (most recent call last):
        ...
        ValueError: --use-vllm must be true or false, got 'maybe'
    """
    origin = typing.get_origin(annotation)
    if origin in (Union, types.UnionType):
        options = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(options) < len(typing.get_args(annotation)) and text.strip().lower() in _NONE:
            return None
        errors = []
        for option in options:
            try:
                return convert(text, option, where)
            except ValueError as exc:
                errors.append(str(exc))
        raise ValueError("; ".join(errors))
    if origin is Literal:
        choices = typing.get_args(annotation)
        if text not in choices:
            raise ValueError(f"{where} must be one of {', '.join(map(str, choices))}, got {text!r}")
        return text
    if annotation is bool:
        lowered = text.strip().lower()
        if lowered in _TRUE or lowered in _FALSE:
            return lowered in _TRUE
        raise ValueError(f"{where} must be true or false, got {text!r}")
    if annotation in (int, float):
        try:
            return annotation(text)
        except ValueError:
            raise ValueError(
                f"{where} must be {'an int' if annotation is int else 'a number'}, got {text!r}"
            ) from None
    if annotation is str or annotation is Any:
        return text
    raise ValueError(f"{where}: cannot convert a string to {annotation!r}")
