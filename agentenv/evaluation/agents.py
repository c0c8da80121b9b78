"""What an agent is to the evaluation harness, and the registry of named agents.

An agent sees what a policy sees (the observation text and ``info``). A
*privileged* scripted agent such as the oracle is also handed the task, since
it exists to prove the task is solvable; a learned policy never gets it.

Why a registry: ``agentenv eval --agent NAME``, SFT export and the dialogue
simulator build agents by name, yet the library must not import the agents
that ship in ``agentenv.baselines`` (they import the library, not the other
way round). So names are found like families are:

* installed distributions declare factories in the entry-point group
  ``agentenv.agents`` (this package declares ``random``, ``oracle``,
  ``bm25``, ``llm`` and ``phenotype-ranker`` that way); a factory is imported
  only when its agent is built;
* user code calls :func:`register_agent` with any callable.

A factory takes the ``--agent-args K=V`` pairs as keyword arguments, with
string values as the command line delivers them, and converts them itself
(:func:`agentenv.evaluation.arguments.args_from_strings` does it from a typed dataclass).

Example:
    >>> class Echo:
    ...     name = "echo-doctest"
    ...     def reset(self, obs, info, *, task, rng): self.said = obs
    ...     def act(self, obs, info): return f"<answer>{self.said}</answer>"
    >>> _ = register_agent("echo-doctest", Echo)
    >>> make_agent("echo-doctest").name, "echo-doctest" in agent_names()
    ('echo-doctest', True)
    >>> unregister_agent("echo-doctest")
    >>> "echo-doctest" in agent_names()
    False
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from importlib.metadata import EntryPoint, entry_points
from typing import Any, Protocol

import numpy as np

from agentenv.core import Task
from agentenv.errors import UserInputError

ENTRY_POINT_GROUP = "agentenv.agents"
"""The entry-point group in which distributions declare agent factories."""

AgentFactory = Callable[..., "Agent"]


class Agent(Protocol):
    """A policy over text actions."""

    name: str

    def reset(
        self, obs: str, info: Mapping[str, Any], *, task: Task, rng: np.random.Generator
    ) -> None:
        """Start an episode. ``task`` may only be read by privileged (oracle) agents."""
        ...

    def act(self, obs: str, info: Mapping[str, Any]) -> str:
        """Return the next action text."""
        ...


class AgentFailure(RuntimeError):
    """The agent gave up on this episode, for reasons outside the policy; ``reason`` says why.

    A model endpoint that is down, times out or answers garbage is not a
    policy that chose a bad action, and it must not crash a 1,000-episode
    evaluation either. An agent raises it from ``act`` after its own bounded
    retries; the evaluation runner catches it, records the reason in the
    episode record (``agent_failure``) and lets the env end the episode
    without an answer, so the env's own grader scores it as a failure.

    Example:
        >>> str(AgentFailure("endpoint http://127.0.0.1:8000 returned HTTP 500 three times"))
        'endpoint http://127.0.0.1:8000 returned HTTP 500 three times'
    """

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class UnsupportedEnv(UserInputError):
    """The agent does not know how to act in this env (e.g. a strategy meets tools it has no use for).

    A user error, not a bug: the message names the env's offer and what the
    agent plays, so ``agentenv eval`` prints it in one line.
    """


_REGISTERED: dict[str, AgentFactory] = {}
_DECLARED: dict[str, EntryPoint] | None = None


def _declared() -> dict[str, EntryPoint]:
    """The agent entry points of every installed distribution, by name (read once, loaded lazily)."""
    global _DECLARED
    if _DECLARED is None:
        _DECLARED = {
            ep.name: ep
            for ep in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name)
        }
    return _DECLARED


def register_agent(name: str, factory: AgentFactory, *, replace: bool = False) -> AgentFactory:
    """Make ``factory`` buildable as ``make_agent(name, ...)`` (and ``agentenv eval --agent name``).

    Registering the same factory again is a no-op; another factory under a
    taken name is an error unless ``replace`` is set, so a typo cannot shadow
    a shipped agent in silence. Returns ``factory``.
    """
    if not isinstance(name, str) or not name.strip():
        raise UserInputError(f"an agent name must be a non-empty string, got {name!r}")
    if not callable(factory):
        raise UserInputError(
            f"agent {name!r}: the factory must be callable, got {type(factory).__name__}"
        )
    from agentenv.families import family_agents

    known = _REGISTERED.get(name)
    taken = (known is not None and known is not factory) or (
        known is None and (name in _declared() or name in family_agents())
    )
    if taken and not replace:
        raise UserInputError(
            f"agent {name!r} is already registered; pass replace=True to override it"
        )
    _REGISTERED[name] = factory
    return factory


def unregister_agent(name: str) -> None:
    """Forget an agent registered with :func:`register_agent` (for tests and notebooks)."""
    _REGISTERED.pop(name, None)


def agent_names() -> tuple[str, ...]:
    """Every buildable agent name, sorted: declared by installed distributions, by a registered
    family (``Family.agents``), or registered in code."""
    from agentenv.families import family_agents

    return tuple(sorted(set(_declared()) | set(_REGISTERED) | set(family_agents())))


def agent_factory(name: str) -> AgentFactory:
    """The factory of a named agent; an unknown name lists the known ones."""
    factory = _REGISTERED.get(name)
    if factory is not None:
        return factory
    declared = _declared().get(name)
    if declared is None:
        from agentenv.families import family_agents, resolve

        owned = family_agents().get(name)
        if owned is not None:
            family, ref = owned
            try:
                return resolve(ref)
            except Exception as err:
                raise ImportError(
                    f"agent {name!r} of family {family.name!r} ({ref!r}) failed to load: {err}"
                ) from err
        from agentenv.did_you_mean import did_you_mean

        known = agent_names()
        raise UserInputError(
            f"unknown agent {name!r}{did_you_mean(name, known)}; known agents: {', '.join(known) or 'none'}"
        )
    try:
        return declared.load()
    except Exception as err:
        raise ImportError(
            f"agent entry point {declared.name} = {declared.value} failed to load: {err}"
        ) from err


def make_agent(name: str, **kwargs: Any) -> Agent:
    """Build a named agent; ``kwargs`` are its ``--agent-args`` (strings are converted by the factory)."""
    return agent_factory(name)(**kwargs)


def family_agent_part(agent: str, family_name: str, part: str, noun: str) -> Callable[..., Any]:
    """The ``part`` (``"oracle"``, ``"bm25"``) of a task's family, for the generic agent named ``agent``.

    A family without that part is :class:`UnsupportedEnv`, naming the families that have ``noun``
    (e.g. "an oracle").
    """
    from agentenv.families import families, family_part, get_family

    try:
        return family_part(get_family(family_name), part)
    except UserInputError as err:
        having = ", ".join(f.name for f in families() if getattr(f, part) is not None) or "none"
        raise UnsupportedEnv(
            f"the {agent} agent cannot play this env: {err}; families with {noun}: {having}"
        ) from err
