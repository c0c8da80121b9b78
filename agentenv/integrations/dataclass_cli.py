"""Command-line options from a typed args dataclass whose fields carry docstrings.

The training scripts in ``baselines/`` keep their settings in one dataclass,
one docstring per field (the cleanrl style), so a reader sees every knob with
its reason in one place. This module turns such a dataclass into an
``argparse`` parser: one ``--field-name`` option per field, converted by the
field's annotation by :func:`agentenv.evaluation.arguments.convert` (the same converter
that reads the agents' ``--agent-args``), with the docstring as help.

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
import typing
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from agentenv.evaluation.arguments import convert, is_convertible

T = TypeVar("T")


def field_docs(cls: type) -> dict[str, str]:
    """The docstring under each field of a dataclass, read from its source (empty if none).

    Fields inherited from a base dataclass (the training scripts' shared
    ``TrainArgs``) carry the base's docstring unless the subclass, which
    redeclares a field to change its default, gives one of its own.
    """
    docs: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        if klass is not object:
            docs.update(_own_field_docs(klass))
    return docs


def _own_field_docs(cls: type) -> dict[str, str]:
    """The field docstrings written in ``cls``'s own class body."""
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
    """A function from option text to the annotated type, by :func:`agentenv.evaluation.arguments.convert`.

    An unsupported annotation is a :class:`TypeError` here, when the parser is
    built; a bad value becomes ``argparse``'s usage error, which names the option.
    """
    if not is_convertible(annotation):
        raise TypeError(f"no command-line conversion for {annotation!r}")

    def parse(text: str) -> Any:
        try:
            return convert(text, annotation)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    return parse


def build_parser(cls: type, description: str | None = None) -> argparse.ArgumentParser:
    """An ``argparse`` parser with one option per field of the dataclass ``cls``."""
    parser = argparse.ArgumentParser(
        description=description or (cls.__doc__ or "").strip().split("\n\n")[0]
    )
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
