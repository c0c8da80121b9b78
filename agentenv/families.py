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
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from agentenv.errors import UserInputError

ENTRY_POINT_GROUP = "agentenv.families"
"""The entry-point group an installed distribution declares its families in."""

Ref = Any
"""A callable or other object, or a ``"module:attribute"`` string naming one (resolved on use)."""

_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
_SPLIT = re.compile(r"^[a-z][a-z0-9_-]*$")
_AGENT = re.compile(r"^[a-z][a-z0-9_-]*$")

STANDARD_SPLITS = ("train", "validation", "test")
"""The splits every family serves; a family may declare more (``Family.splits``)."""


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

    Its splits, agents and reward presets live here too, so a family kept in
    one folder (in this repo or outside it) gets its own ``--split``, its own
    ``--agent`` and its own ``--reward`` with no line anywhere else.

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
        structured: the family's structured menus (``agentenv.lessons.structured.Menu``
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
    splits: tuple[str, ...] = STANDARD_SPLITS
    agents: Mapping[str, Ref] = field(default_factory=dict)
    reward_presets: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
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
        if (
            not isinstance(self.splits, tuple)
            or self.splits[:3] != STANDARD_SPLITS
            or not all(isinstance(s, str) and _SPLIT.match(s) for s in self.splits)
            or len(set(self.splits)) != len(self.splits)
        ):
            raise UserInputError(
                f"Family {self.name!r}: splits must be a tuple starting with {STANDARD_SPLITS}, then the "
                f"family's own split names (lower case, digits, '-' or '_'), each once; got {self.splits!r}"
            )
        for where, names in (("agents", self.agents), ("reward_presets", self.reward_presets)):
            bad = [n for n in names if not isinstance(n, str) or not _AGENT.match(n)]
            if bad:
                raise UserInputError(
                    f"Family {self.name!r}: {where} names must be lower case letters, digits, '-' or '_'; "
                    f"got {bad}"
                )
        for name, preset in self.reward_presets.items():
            if not isinstance(preset, Mapping):
                raise UserInputError(
                    f"Family {self.name!r}: reward_presets[{name!r}] must be a dict of RewardConfig "
                    f"fields, got {type(preset).__name__}"
                )
        _check_presets(self)
        _check_references(self)
        for spec in (*self.envs, *self.dialogues):
            if not isinstance(spec.kwargs, Mapping):
                raise UserInputError(
                    f"Family {self.name!r}: {spec.id} kwargs must be a dict of keyword arguments "
                    f"(give {{}} for none), got {type(spec.kwargs).__name__}"
                )
        if (
            not isinstance(self.grader_version, int)
            or isinstance(self.grader_version, bool)
            or self.grader_version < 1
        ):
            raise UserInputError(
                f"Family {self.name!r}: grader_version must be a whole number from 1 (bump it when "
                f"grading changes), got {self.grader_version!r}"
            )

    @property
    def ids(self) -> tuple[str, ...]:
        """All ids of the family, single-agent first."""
        return tuple(s.id for s in self.envs) + tuple(s.id for s in self.dialogues)


_REFERENCE = re.compile(r"^[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*:[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*$")
_REFERENCE_FIELDS = ("oracle", "bm25", "gold_text", "reasoning", "solvability", "structured")


def _references(family: Family) -> list[tuple[str, Ref]]:
    """(field, reference) of every reference the record holds, named as its error messages name them."""
    held = [(name, getattr(family, name)) for name in _REFERENCE_FIELDS]
    held += [(f"corpora[{name!r}]", ref) for name, ref in family.corpora.items()]
    held += [(f"agents[{name!r}]", ref) for name, ref in family.agents.items()]
    return held


def _check_references(family: Family) -> None:
    """Refuse a reference string that is not ``"module:attribute"`` when the record is made.

    Why: references are resolved on use, so ``oracle="pkg.agents.Oracle"`` (a dot for the
    colon) was accepted and failed at the first run that needed it, far from the record.
    Nothing is imported here: registering builds nothing.
    """
    for where, ref in _references(family):
        if isinstance(ref, str) and not _REFERENCE.match(ref):
            raise UserInputError(
                f"Family {family.name!r}: {where} must be a callable or a 'module:attribute' string "
                f"(e.g. 'mypkg.agents:Oracle'), got {ref!r}"
            )


GENERIC_PRESETS = ("strict", "lenient", "efficient")
"""The generic reward presets' names (:data:`agentenv.rewards.config.PRESETS`, kept equal by a test),
here so that checking a record imports no reward code."""


def _check_presets(family: Family) -> None:
    """Refuse a declared preset named like a generic one when the record is made.

    Why: a name is looked up among the generic presets first, so a family's ``strict`` was never
    reached. Its fields are read when the preset is first chosen (``resolve_reward`` names the
    family, the preset and the field), since registering builds nothing.
    """
    for name in family.reward_presets:
        if name in GENERIC_PRESETS:
            raise UserInputError(
                f"Family {family.name!r}: reward_presets[{name!r}] has the name of a generic preset "
                f"({', '.join(GENERIC_PRESETS)}), which would always be chosen instead; rename it"
            )


_FAMILIES: dict[str, Family] = {}
_REGISTERED_BY: dict[str, str] = {}
"""Family name -> where its record was registered from (an entry point or a module), for errors."""
_INSTALLED_LOADED = False
_DEFERRED: list[Any] = []
"""Entry points whose module was being imported when they were loaded (see load_installed_families)."""


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
            f"task family {family.name!r} is already registered with another record (from "
            f"{_REGISTERED_BY.get(family.name, 'an earlier call')}; this one from "
            f"{_origin()}): "
            "rename one, or remove a stale install that declares the old one"
        )
    for other in _FAMILIES.values():
        if other.name == family.name:
            continue
        for what, mine, theirs in (
            ("ids", family.ids, other.ids),
            ("agents", family.agents, other.agents),
            ("reward presets", family.reward_presets, other.reward_presets),
        ):
            taken = sorted(set(mine) & set(theirs))
            if taken:
                raise UserInputError(
                    f"family {family.name!r}: {what} {taken} already belong to family {other.name!r}"
                )
    if known is None:
        _REGISTERED_BY[family.name] = _origin()
    _FAMILIES[family.name] = family
    for spec in family.envs:
        if spec.id not in gym.registry:
            # Gymnasium's passive checker marks its first reset checked before calling it, so a first
            # reset that raised (a refused task index) left its reuse check with nothing to compare
            # and the env's first step after the next good reset raised TypeError (gymnasium 1.4.0):
            # one bad start broke a served env for the next client. agentenv.checks.check_env runs
            # Gymnasium's full check_env and the package's own on every id instead.
            gym.register(
                id=spec.id,
                entry_point=spec.entry_point,
                kwargs=dict(spec.kwargs),
                disable_env_checker=True,
            )
    return family


def _origin() -> str:
    """Where the record being registered comes from: the entry point being loaded, else the module
    that called :func:`register_family` (for the error that names both records)."""
    if _LOADING:
        return _LOADING[-1]
    frame = sys._getframe(2)
    return f"module {frame.f_globals.get('__name__', '?')}"


_LOADING: list[str] = []
"""The entry points being loaded (innermost last): a record registered meanwhile comes from one."""


def unregister_family(name: str) -> None:
    """Remove a family and its Gymnasium ids (for tests and notebooks that define throwaway families)."""
    import gymnasium as gym

    _REGISTERED_BY.pop(name, None)
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
        if _DEFERRED:
            _load_deferred()
        return
    from importlib.metadata import entry_points

    _INSTALLED_LOADED = True
    for ep in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
        if _being_imported(ep.module):
            # The entry point's own module is importing agentenv (``gym.make("pkg.family:Id")``
            # or ``import pkg.family`` imports it, which imports ``agentenv.families``, whose
            # package registers the installed families): its record does not exist yet. Loading
            # it now raised "partially initialized module"; it is loaded at the next lookup.
            _DEFERRED.append(ep)
            continue
        _load_entry_point(ep)


def _being_imported(module: str) -> bool:
    """Whether ``module`` is in ``sys.modules`` but still running its body (importlib's own flag)."""
    loaded = sys.modules.get(module)
    spec = getattr(loaded, "__spec__", None)
    return loaded is not None and bool(getattr(spec, "_initializing", False))


def _load_deferred() -> None:
    """Load the entry points deferred while their module was importing, once it is not."""
    for ep in list(_DEFERRED):
        if not _being_imported(ep.module):
            _DEFERRED.remove(ep)
            _load_entry_point(ep)


def _load_entry_point(ep: Any) -> None:
    """Load one ``agentenv.families`` entry point and register its record, naming it on failure."""
    _LOADING.append(f"entry point {ep.name} = {ep.value}")
    try:
        try:
            family = ep.load()
        except Exception as err:
            raise ImportError(
                f"task family entry point {ep.name} = {ep.value} failed to load: {err}"
            ) from err
        register_family(family)
    finally:
        _LOADING.pop()


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
    from agentenv.did_you_mean import closest

    known = [i for f in _FAMILIES.values() for i in f.ids]
    close = closest(bare, known)
    hint = f"did you mean {close!r}? " if close else ""
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


def splits_of(env_id: str) -> tuple[str, ...]:
    """The splits ``env_id``'s family declares (what ``--split`` accepts for it).

    Example:
        >>> splits_of("MediaSearch-v0")
        ('train', 'validation', 'test', 'casual')
    """
    return family_of_env(env_id).splits


def check_split(env_id: str, split: str) -> str:
    """``split`` if ``env_id``'s family declares it; otherwise a one-line error listing the family's splits.

    Example:
        >>> check_split("RareDiseaseDiagnosis-v0", "casual")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        agentenv.errors.UserInputError: split 'casual' is not one of RareDiseaseDiagnosis-v0's: train, validation, test, real...
    """
    family = family_of_env(env_id)
    if split not in family.splits:
        from agentenv.did_you_mean import did_you_mean

        raise UserInputError(
            f"split {split!r}{did_you_mean(split, family.splits)} is not one of "
            f"{bare_id(env_id)}'s: {', '.join(family.splits)} "
            f"(declared by family {family.name!r})"
        )
    return split


def all_splits() -> tuple[str, ...]:
    """Every split any registered family declares, the standard three first."""
    seen = dict.fromkeys(STANDARD_SPLITS)
    for family in families():
        seen.update(dict.fromkeys(family.splits))
    return tuple(seen)


def family_agents() -> dict[str, tuple[Family, Ref]]:
    """Agent name -> (the family declaring it, its factory reference), over every registered family."""
    return {name: (f, ref) for f in families() for name, ref in f.agents.items()}


def reward_preset(name: str) -> Mapping[str, Any] | None:
    """The ``RewardConfig`` fields of a preset some registered family declares, or ``None``."""
    for family in families():
        if name in family.reward_presets:
            return {"name": name, **family.reward_presets[name]}
    return None


def reward_preset_names() -> tuple[str, ...]:
    """Every reward preset the registered families declare."""
    return tuple(name for f in families() for name in f.reward_presets)


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
    try:
        target: Any = importlib.import_module(module)
    except ModuleNotFoundError as err:
        if err.name is None or not (module == err.name or module.startswith(err.name + ".")):
            raise  # the module exists, and one it imports is missing: its own error, as raised
        raise UserInputError(f"{_holder(ref)} {ref!r}: no module named {err.name!r}") from None
    for part in attribute.split("."):
        try:
            target = getattr(target, part)
        except AttributeError:
            raise UserInputError(
                f"{_holder(ref)} {ref!r}: {getattr(target, '__name__', module)!r} has no attribute "
                f"{part!r}"
            ) from None
    return target


def _holder(ref: str) -> str:
    """Which record field holds ``ref`` ("Family 'x' bm25"), for the error that it does not resolve."""
    for family in _FAMILIES.values():
        for where, held in _references(family):
            if held == ref:
                return f"Family {family.name!r} {where}"
    return "reference"


def family_part(family: Family, part: str) -> Callable[..., Any]:
    """A family's callable ``part`` (``"oracle"``, ``"bm25"``, …), resolved; a missing one is a clear error."""
    ref = getattr(family, part)
    if ref is None:
        raise UserInputError(
            f"task family {family.name!r} defines no {part!r}; see docs/new-family.md"
        )
    return resolve(ref)
