"""Command-line options from a typed args dataclass whose fields carry docstrings.

The training scripts in ``baselines/`` keep their settings in one dataclass,
one docstring per field (the cleanrl style), so a reader sees every knob with
its reason in one place. This module turns such a dataclass into an
``argparse`` parser: one ``--field-name`` option per field, converted by the
field's annotation (``int``, ``float``, ``str``, ``bool`` as
``true``/``false``, ``X | None`` with ``none``), with the docstring as help.

Example:
    >>> from dataclasses import dataclass
    >>> @dataclass
    ... class Args:
    ...     steps: int = 10
    ...     '''Optimizer steps.'''
    ...     bf16: bool = True
    ...     '''Train in bfloat16.'''
    ...     name: str | None = None
    ...     '''Run name.'''
    >>> parse_args(Args, ["--steps", "3", "--bf16", "false", "--name", "none"])
    Args(steps=3, bf16=False, name=None)
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import inspect
import textwrap
import types
import typing
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

T = TypeVar("T")

_TRUE, _FALSE = {"1", "true", "yes", "on"}, {"0", "false", "no", "off"}


def field_docs(cls: type) -> dict[str, str]:
    """The docstring under each field of a dataclass, read from its source (empty if none)."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
    except (OSError, TypeError):
        return {}
    body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.ClassDef) else []
    docs: dict[str, str] = {}
    for node, after in zip(body, body[1:], strict=False):
        if (
            isinstance(node, ast.AnnAssign)
            and isinstance(node.target, ast.Name)
            and isinstance(after, ast.Expr)
            and isinstance(after.value, ast.Constant)
            and isinstance(after.value.value, str)
        ):
            docs[node.target.id] = " ".join(after.value.value.split())
    return docs


def converter(annotation: Any) -> Callable[[str], Any]:
    """A function from option text to the annotated type."""
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        options = [a for a in typing.get_args(annotation) if a is not type(None)]
        inner = converter(options[0])

        def optional(text: str) -> Any:
            return None if text.strip().lower() in ("", "none", "null") else inner(text)

        return optional
    if origin is typing.Literal:
        choices = typing.get_args(annotation)

        def literal(text: str) -> Any:
            if text not in choices:
                raise argparse.ArgumentTypeError(f"expected one of {', '.join(map(str, choices))}, got {text!r}")
            return text

        return literal
    if annotation is bool:

        def boolean(text: str) -> bool:
            lowered = text.strip().lower()
            if lowered not in _TRUE | _FALSE:
                raise argparse.ArgumentTypeError(f"expected true or false, got {text!r}")
            return lowered in _TRUE

        return boolean
    if annotation in (int, float, str):
        return annotation
    raise TypeError(f"no command-line conversion for {annotation!r}")


def build_parser(cls: type, description: str | None = None) -> argparse.ArgumentParser:
    """An ``argparse`` parser with one option per field of the dataclass ``cls``."""
    parser = argparse.ArgumentParser(description=description or (cls.__doc__ or "").strip().split("\n\n")[0])
    hints = typing.get_type_hints(cls)
    docs = field_docs(cls)
    for f in dataclasses.fields(cls):
        default = f.default if f.default is not dataclasses.MISSING else dataclasses.MISSING
        required = default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        parser.add_argument(
            f"--{f.name.replace('_', '-')}",
            dest=f.name,
            type=converter(hints[f.name]),
            required=required,
            default=argparse.SUPPRESS,
            help=f"{docs.get(f.name, '')} (default: {default if not required else 'required'})".strip(),
        )
    return parser


def parse_args(cls: type[T], argv: Sequence[str] | None = None) -> T:
    """Parse ``argv`` into an instance of the dataclass ``cls`` (unset options keep their defaults)."""
    namespace = build_parser(cls).parse_args(argv)
    return cls(**vars(namespace))
