"""The registry of task families: one :class:`Family` record per family, and the lookups generic code uses.

Why a registry: the library (evaluation, retrieval serving, SFT export, the
judge, the baseline agents) must work for families it has never heard of,
including ones kept outside this package. So it never imports a family; it
asks this registry. A family is one folder whose ``__init__`` builds a
:class:`Family` record and hands it to :func:`register_family`.

How families are found:

* the families of installed distributions, declared as entry points in the
  ``agentenv.families`` group (this package declares its own two that way),
  are registered by ``import agentenv``;
* any other module registers its family when imported:
  ``gym.make("mypkg.tasks:MyTask-v0")`` imports ``mypkg.tasks`` first
  (Gymnasium's own rule), and :func:`family_of_env` does the same.

Registering builds nothing: references to oracles, corpora and the like may
be ``"module:attribute"`` strings, resolved by :func:`resolve` only on use.

Example:
    >>> toy = Family(
    ...     name="toy_doctest",
    ...     envs=(EnvSpec("ToyDoctest-v0", "agentenv.core:ToolEnv", description="a doctest family"),),
    ...     gold_text="builtins:str",
    ... )
    >>> register_family(toy) is toy
    True
    >>> family_of_env("ToyDoctest-v0").name
    'toy_doctest'
    >>> resolve(toy.gold_text)(42)
    '42'
    >>> get_family("no_such_family")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    agentenv.errors.UserInputError: unknown task family 'no_such_family'; registered: ...
    >>> unregister_family("toy_doctest")
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from agentenv.errors import UserInputError

ENTRY_POINT_GROUP = "agentenv.families"
"""The entry-point group an installed distribution declares its families in."""

Ref = Any
"""A callable or other object, or a ``"module:attribute"`` string naming one (resolved on use)."""

_NAME = re.compile(r"^[a-z][a-z0-9_]*$")


@dataclass(frozen=True)
class EnvSpec:
    """One single-agent Gymnasium id: its entry point (``"module:Class"``), kwargs and a one-line description."""

    id: str
    entry_point: str
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    description: str = ""


@dataclass(frozen=True)
class DialogueSpec:
    """One multi-agent (PettingZoo AEC) id: entry point, agent names (lead first), kwargs, description."""

    id: str
    entry_point: str
    agents: tuple[str, ...]
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    description: str = ""


@dataclass(frozen=True)
class Family:
    """Everything generic code needs to know about one task family, in one record.

    Attributes:
        name: the family's name, lower case with underscores (``"media_search"``);
            the tasks of its envs carry it in ``Task.family``.
        envs: its single-agent ids.
        dialogues: its multi-agent ids.
        corpora: corpus name -> a callable returning ``(ids, texts, checksum)``
            of the documents ``agentenv serve-retrieval --corpus NAME`` indexes.
        oracle: factory of the privileged scripted agent that proves every task
            solvable (the ``oracle`` agent delegates to it).
        bm25: factory of the ``bm25`` baseline's strategy for this family: an
            agent that retrieves once and answers from what it read. A strategy
            may declare ``options``, a dataclass of its own ``--agent-args``.
        gold_text: how a task's gold renders as text, for the judge and SFT export.
        reasoning: factory ``(task, rng) -> writer`` of scripted ``<think>`` lines
            for SFT export (``turn_line(step, calls, previous_output)`` and
            ``answer_line(answer)``); ``None`` uses the generic lines.
        solvability: ``(env, task) -> str | None``: why a task (typically one of the
            user's own) cannot be solved with the env's tools, or ``None`` when it
            can; run by ``agentenv check-tasks``.
        structured: the family's structured menus (``agentenv.structured.Menu``
            subclasses; each is both the ``Discrete`` menu and the feature extractor),
            a sequence: a menu with ``required_tools`` plays the ids that offer tools,
            one without plays the single-turn ids. ``None``: no structured wrapper.
        components: reward components the family adds -> what each means.
        docs: the family's documentation page, for error messages and listings.
        grader_version: the version of the family's grading (answer grammar, components,
            gold rules), part of every run's fingerprint; bump it whenever a change could
            move a score, so the leaderboard refuses to rank runs graded both ways.
    """

    name: str
    envs: tuple[EnvSpec, ...] = ()
    dialogues: tuple[DialogueSpec, ...] = ()
    corpora: Mapping[str, Ref] = field(default_factory=dict)
    oracle: Ref | None = None
    bm25: Ref | None = None
    gold_text: Ref | None = None
    reasoning: Ref | None = None
    solvability: Ref | None = None
    structured: Ref | None = None
    components: Mapping[str, str] = field(default_factory=dict)
    docs: str = ""
    grader_version: int = 1

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not _NAME.match(self.name):
            raise UserInputError(
                f"Family.name must be lower case letters, digits and underscores, starting with a letter; "
                f"got {self.name!r}"
            )
        for where, specs, kind in (
            ("envs", self.envs, EnvSpec),
            ("dialogues", self.dialogues, DialogueSpec),
        ):
            if not isinstance(specs, tuple) or not all(isinstance(s, kind) for s in specs):
                raise UserInputError(
                    f"Family {self.name!r}: {where} must be a tuple of {kind.__name__}"
                )
            for s in specs:
                if ":" not in s.entry_point:
                    raise UserInputError(
                        f"Family {self.name!r}: {s.id} entry_point must be 'module:Class', got {s.entry_point!r}"
                    )

    @property
    def ids(self) -> tuple[str, ...]:
        """All ids of the family, single-agent first."""
        return tuple(s.id for s in self.envs) + tuple(s.id for s in self.dialogues)


_FAMILIES: dict[str, Family] = {}
_INSTALLED_LOADED = False


def register_family(family: Family) -> Family:
    """Add a family to the registry and register its single-agent ids with Gymnasium.

    Registering the same record again is a no-op; another record under a
    taken name, or an id another family owns, is an error that names both.
    """
    import gymnasium as gym

    if not isinstance(family, Family):
        raise UserInputError(
            f"register_family takes an agentenv.families.Family, got {type(family).__name__}"
        )
    known = _FAMILIES.get(family.name)
    if known is not None and known != family:
        raise UserInputError(
            f"task family {family.name!r} is already registered with another record"
        )
    for other in _FAMILIES.values():
        if other.name != family.name and set(other.ids) & set(family.ids):
            taken = sorted(set(other.ids) & set(family.ids))
            raise UserInputError(
                f"family {family.name!r}: ids {taken} already belong to family {other.name!r}"
            )
    _FAMILIES[family.name] = family
    for spec in family.envs:
        if spec.id not in gym.registry:
            gym.register(id=spec.id, entry_point=spec.entry_point, kwargs=dict(spec.kwargs))
    return family


def unregister_family(name: str) -> None:
    """Remove a family and its Gymnasium ids (for tests and notebooks that define throwaway families)."""
    import gymnasium as gym

    family = _FAMILIES.pop(name, None)
    for spec in family.envs if family else ():
        gym.registry.pop(spec.id, None)


def load_installed_families() -> None:
    """Register the families every installed distribution declares (entry-point group ``agentenv.families``).

    Idempotent. A declared family that fails to import is reported as an
    error naming the entry point, not skipped in silence.
    """
    global _INSTALLED_LOADED
    if _INSTALLED_LOADED:
        return
    from importlib.metadata import entry_points

    _INSTALLED_LOADED = True
    for ep in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
        try:
            family = ep.load()
        except Exception as err:
            raise ImportError(
                f"task family entry point {ep.name} = {ep.value} failed to load: {err}"
            ) from err
        register_family(family)


def families() -> tuple[Family, ...]:
    """Every registered family, installed ones first, in registration order."""
    load_installed_families()
    return tuple(_FAMILIES.values())


def get_family(name: str) -> Family:
    """The family called ``name``; an unknown name lists the registered ones."""
    load_installed_families()
    family = _FAMILIES.get(name)
    if family is None:
        raise UserInputError(
            f"unknown task family {name!r}; registered: {', '.join(_FAMILIES) or 'none'}"
        )
    return family


def family_of_env(env_id: str) -> Family:
    """The family that registered ``env_id`` (single- or multi-agent).

    A ``"module:Id"`` id imports ``module`` first, as ``gym.make`` does, so a
    family kept outside this package is found the same way.
    """
    module, _, bare = env_id.rpartition(":")
    if module:
        importlib.import_module(module)
    for family in families():
        if bare in family.ids:
            return family
    import difflib

    known = [i for f in _FAMILIES.values() for i in f.ids]
    close = difflib.get_close_matches(bare, known, n=1, cutoff=0.6)
    hint = f"did you mean {close[0]!r}? " if close else ""
    raise UserInputError(
        f"no task family registers the id {bare!r}; {hint}registered ids: {', '.join(known) or 'none'}. "
        "For a family outside agentenv, name its module: 'mypkg.module:MyTask-v0'"
    )


def bare_id(env_id: str) -> str:
    """``env_id`` without a ``module:`` prefix.

    Example:
        >>> bare_id("mypkg.tasks:MyTask-v0"), bare_id("MediaSearch-v0")
        ('MyTask-v0', 'MediaSearch-v0')
    """
    return env_id.rpartition(":")[2]


def env_specs() -> tuple[EnvSpec, ...]:
    """Every single-agent id of every registered family."""
    return tuple(s for f in families() for s in f.envs)


def dialogue_specs() -> tuple[DialogueSpec, ...]:
    """Every multi-agent id of every registered family."""
    return tuple(s for f in families() for s in f.dialogues)


def corpus_names() -> tuple[str, ...]:
    """Every corpus a registered family offers to the retrieval server."""
    return tuple(name for f in families() for name in f.corpora)


def load_corpus(name: str) -> tuple[list[str], list[str], str]:
    """``(ids, texts, checksum)`` of a registered corpus; an unknown name lists the known ones.

    ``"module:name"`` imports ``module`` first, for a family kept outside this package.
    """
    module, _, name = name.rpartition(":")
    if module:
        importlib.import_module(module)
    for family in families():
        if name in family.corpora:
            ids, texts, checksum = resolve(family.corpora[name])()
            return list(ids), list(texts), str(checksum)
    raise UserInputError(
        f"unknown corpus {name!r}; registered corpora: {', '.join(corpus_names()) or 'none'}"
    )


def resolve(ref: Ref) -> Any:
    """The object a reference names: ``"module:attribute"`` is imported, anything else is returned as is."""
    if not isinstance(ref, str):
        return ref
    module, sep, attribute = ref.partition(":")
    if not sep or not module or not attribute:
        raise UserInputError(f"a reference must be 'module:attribute', got {ref!r}")
    target: Any = importlib.import_module(module)
    for part in attribute.split("."):
        target = getattr(target, part)
    return target


def family_part(family: Family, part: str) -> Callable[..., Any]:
    """A family's callable ``part`` (``"oracle"``, ``"bm25"``, …), resolved; a missing one is a clear error."""
    ref = getattr(family, part)
    if ref is None:
        raise UserInputError(
            f"task family {family.name!r} defines no {part!r}; see docs/new-family.md"
        )
    return resolve(ref)
