"""Pretrained models the package can build offline from registry packages, known by name.

A model argument anywhere in the package (``--agent-args model=...`` of the ``hf`` agent, the TRL
scripts' ``--model``, the lessons' ``--model``) is either a local directory written by
``save_pretrained`` or one of :data:`MODEL_NAMES`, which :func:`resolve_model` turns into its
verified directory under ``$AGENTENV_HOME/models``. A name whose directory is missing is one
line naming its install command (:class:`agentenv.models.smollm2.ModelNotInstalled`).

Example:
    >>> resolve_model("checkpoints/my-sft")  # a path is passed through untouched
    'checkpoints/my-sft'
    >>> is_model_name("SmolLM2-135M"), is_model_name("checkpoints/my-sft")
    (True, False)
"""

from __future__ import annotations

import importlib

__all__ = ["MODEL_NAMES", "is_model_name", "resolve_model"]

MODEL_NAMES: dict[str, str] = {
    "smollm2-135m": "agentenv.models.smollm2",
    "smollm2-135m-instruct": "agentenv.models.smollm2",
}
"""Each accepted name (lower case) and the module whose ``model_dir()`` gives its directory."""


def is_model_name(value: str) -> bool:
    """Whether ``value`` names a packaged model rather than a path (case-insensitive)."""
    return value.strip().lower() in MODEL_NAMES


def resolve_model(value: str) -> str:
    """A packaged model's verified directory for its name; any other value (a path) unchanged.

    Raises:
        agentenv.models.smollm2.ModelNotInstalled: the name's directory is missing or damaged;
            the message names the install command.
    """
    module = MODEL_NAMES.get(value.strip().lower())
    if module is None:
        return value
    return str(importlib.import_module(module).model_dir())
