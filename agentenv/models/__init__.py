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

__all__ = ["MODEL_NAMES", "is_model_name", "local_model", "resolve_model"]

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


def local_model(value: str, flag: str = "--model") -> str:
    """What a trainer loads for ``value``: a packaged model's verified directory, a local directory,
    or a hub id already in the local Hugging Face cache; anything else is one line naming ``flag``.

    Why: transformers treats any other string as a hub id, so ``--model smollm2-13m`` (a typo)
    spent a minute retrying a hub request and ended in two tracebacks, and a machine that can
    reach the hub would have downloaded weights. agentenv fetches nothing: callers also load with
    the hub offline, so a cached hub id is read from the cache only.

    Example:
        >>> local_model("smollm2-13m")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        agentenv.errors.UserInputError: --model 'smollm2-13m' is not a packaged model name (did you mean 'smollm2-135m'?)...
    """
    from pathlib import Path

    from agentenv.errors import UserInputError

    if is_model_name(value):
        return resolve_model(value)
    if Path(value).is_dir():
        return value
    if _in_hub_cache(value):
        return value
    from agentenv.did_you_mean import closest

    hint = closest(value.strip().lower(), list(MODEL_NAMES))
    raise UserInputError(
        f"{flag} {value!r} is not a packaged model name"
        + (f" (did you mean {hint!r}?)" if hint else f" ({', '.join(MODEL_NAMES)})")
        + ", a local directory, or a model in the local Hugging Face cache; agentenv fetches "
        "nothing from a model hub: give a directory written by save_pretrained (see "
        "`agentenv models list` for the packaged ones)"
    )


def _in_hub_cache(value: str) -> bool:
    """Whether ``value`` is a hub id whose ``config.json`` is in the local cache (no network)."""
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:
        return False
    try:
        found = try_to_load_from_cache(value, "config.json")
    except Exception:  # noqa: BLE001 - not a valid repo id: not in the cache
        return False
    return isinstance(found, str)
