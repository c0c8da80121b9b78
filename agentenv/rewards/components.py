"""The reward components an env can report, and what each one means.

Every env fills ``info["reward_components"]`` at the end of an episode with
named floats, whatever their weight, so a run logs what it did not optimise.
A :class:`~agentenv.rewards.config.RewardConfig` weights them (a weight of 0 means
"log only") or charges them as costs. This module is the one place that says
what each name means, so that you know what you can weight.

Why the table is written once, as data: a docstring table and a dict drift
apart. :data:`GENERIC` below is the only copy of the generic rows; the dict
:data:`COMPONENTS` and the table appended to this docstring (and printed by
:func:`components_table`) are generated from it. Components a task family
adds live in its :class:`~agentenv.families.Family` record
(``Family.components``), next to the code that computes them;
:func:`all_components` merges both, so a family kept outside this package
documents its components the same way.

A name with a capital ``K`` after ``@`` is a pattern: ``hit@K`` documents
``hit@1``, ``hit@3``, ``hit@10``.

Example:
    >>> COMPONENTS["latency_ms"].split(";")[0]
    "modelled latency: the sum of each executed tool's declared Tool.latency_ms"
    >>> closest("acuracy", ["accuracy", "format"])
    'accuracy'
    >>> meaning("hit@3") == COMPONENTS["hit@K"]
    True
    >>> meaning("no_such_component") is None
    True
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from agentenv.did_you_mean import closest  # the shared hint, kept importable from here

if TYPE_CHECKING:
    from agentenv.families import Family

__all__ = [
    "COMPONENTS",
    "GENERIC",
    "Component",
    "all_components",
    "closest",
    "components_table",
    "documented",
    "meaning",
    "undocumented",
]


@dataclass(frozen=True)
class Component:
    """One row of the table: a component name, who reports it, and what it means."""

    name: str
    reported_by: str
    meaning: str


_TOOL_ENV = "every ToolEnv; dialogue lead"
_TOP_K = "top-k families"
_SPEAKER = "dialogue: simulated side"

#: The generic components, in table order: the one copy (everything else is generated).
GENERIC: tuple[Component, ...] = (
    Component(
        "accuracy",
        "every family",
        "rule-based correctness in [0, 1]; for top-k families the gold is among the first k",
    ),
    Component(
        "format",
        _TOOL_ENV,
        "1.0 if the episode ended with an answer and had no invalid action "
        "(and a <think> block every turn when RewardConfig.require_think)",
    ),
    Component(
        "tool_calls",
        _TOOL_ENV,
        "tool calls executed (parallel calls count one each); charged by tool_call_cost",
    ),
    Component("turns", _TOOL_ENV, "actions taken, invalid ones included; charged by turn_cost"),
    Component(
        "invalid_actions",
        "every ToolEnv; both dialogue agents",
        "actions rejected as unparseable, unknown tool or invalid arguments",
    ),
    Component(
        "tool_errors", _TOOL_ENV, "calls that ran but failed (tool error, timeout, exception)"
    ),
    Component(
        "latency_ms",
        _TOOL_ENV,
        "modelled latency: the sum of each executed tool's declared Tool.latency_ms; "
        "deterministic; charged by latency_cost",
    ),
    Component(
        "tokens",
        "when known",
        "tokens the policy generated; charged by token_cost; no env reports it yet",
    ),
    Component("hit@K", _TOP_K, "the gold is among the first K predictions (e.g. hit@1, hit@3)"),
    Component(
        "hit@any",
        _TOP_K,
        "the gold is anywhere in the list, however long: the hackable reward, for teaching "
        "(scored instead of accuracy when RewardConfig.over_limit='allow')",
    ),
    Component("reciprocal_rank", _TOP_K, "1 / rank of the gold, 0 if absent"),
    Component("n_predictions", _TOP_K, "how many predictions the answer listed"),
    Component(
        "over_limit",
        _TOP_K,
        "1.0 if the answer listed more predictions than allowed; see RewardConfig.over_limit",
    ),
    Component(
        "messages",
        "both dialogue agents",
        "messages sent to the other side: the lead's <say> messages, the simulated side's replies",
    ),
    Component(
        "faithful",
        _SPEAKER,
        "share of its messages the rule-based checker found faithful (no false claim, evasion, "
        "unanswered item, leak or volunteered fact); 1.0 if it sent none",
    ),
    Component(
        "truthfulness", _SPEAKER, "1 - false_claims / claims; 1.0 when it made no checkable claim"
    ),
    Component("claims", _SPEAKER, "statements the checker could tie to one of its private facts"),
    Component("false_claims", _SPEAKER, "claims that contradict its private facts"),
    Component("evasions", _SPEAKER, "'not sure' about a fact it knows"),
    Component("unanswered", _SPEAKER, "items the lead asked about that a reply did not address"),
    Component(
        "leaks", _SPEAKER, "messages that named the hidden answer (the diagnosis, the title)"
    ),
    Component("volunteered", _SPEAKER, "held-back facts given without being asked"),
    Component(
        "contradictions", _SPEAKER, "statements that reverse what it said earlier in the dialogue"
    ),
    Component("tool_call_cost", "ToolCallCost wrapper", "cost the wrapper subtracted"),
    Component("turn_cost", "TurnCost wrapper", "cost the wrapper subtracted"),
    Component("format_bonus", "FormatBonus wrapper", "bonus the wrapper added"),
    Component(
        "prediction_limit", "PredictionLimit wrapper", "reward change for going over its limit"
    ),
    Component("shaping_paid", "CostShaping wrapper", "cost already paid on earlier steps"),
)

#: Generic component name -> meaning, in table order (generated from :data:`GENERIC`).
COMPONENTS: dict[str, str] = {c.name: c.meaning for c in GENERIC}

_PATTERN = re.compile(r"@K\b")


def _rows(families: Iterable[Family] | None = None) -> list[Component]:
    """The merged table: generic rows (families that re-document one join its "reported by"), then
    each family's own names; a name two families add shows each family's meaning."""
    if families is None:
        # lazy: the registry imports installed families, which import this package
        from agentenv.families import families as registered

        families = registered()
    rows: dict[str, Component] = {c.name: c for c in GENERIC}
    added: dict[str, list[tuple[str, str]]] = {}
    for family in families:
        name_of = family.name
        for key, text in family.components.items():
            if key in COMPONENTS:
                row = rows[key]
                if name_of not in row.reported_by:
                    rows[key] = Component(key, f"{row.reported_by}; {name_of}", row.meaning)
            else:
                added.setdefault(key, []).append((name_of, str(text)))
    for key, sources in added.items():
        if len(sources) == 1:
            rows[key] = Component(key, sources[0][0], sources[0][1])
        else:
            rows[key] = Component(
                key, "; ".join(s for s, _ in sources), "; ".join(f"{s}: {t}" for s, t in sources)
            )
    return list(rows.values())


def all_components(families: Iterable[Family] | None = None) -> dict[str, str]:
    """Every documented component: the generic ones, then those each registered family adds.

    ``families`` defaults to :func:`agentenv.families.families` (installed
    families included); pass records to document a family not registered.

    Example:
        >>> from agentenv.families import Family
        >>> toy = Family(name="toy", components={"bananas": "bananas eaten", "accuracy": "same as ever"})
        >>> table = all_components([toy])
        >>> table["bananas"], table["accuracy"] == COMPONENTS["accuracy"]
        ('bananas eaten', True)
    """
    return {row.name: row.meaning for row in _rows(families)}


def meaning(name: str, table: Mapping[str, str] | None = None) -> str | None:
    """What a reported component ``name`` means, or None if undocumented.

    ``table`` defaults to :func:`all_components`. ``hit@3`` matches ``hit@K``.
    """
    if table is None:
        table = all_components()
    if name in table:
        return table[name]
    for key, text in table.items():
        if _PATTERN.search(key):
            pattern = re.escape(key).replace("@K", r"@[0-9]+")
            if re.fullmatch(pattern, name):
                return text
    return None


def documented(name: str, table: Mapping[str, str] | None = None) -> bool:
    """Whether ``name`` is in the table (patterns such as ``hit@K`` included)."""
    return meaning(name, table) is not None


def undocumented(names: Iterable[str], table: Mapping[str, str] | None = None) -> list[str]:
    """The names (sorted) that no row documents: what a coverage test reports.

    Example:
        >>> undocumented(["accuracy", "hit@10", "bogus"], COMPONENTS)
        ['bogus']
    """
    if table is None:
        table = all_components()
    return sorted(n for n in set(names) if not documented(n, table))


def components_table(families: Iterable[Family] | None = None) -> str:
    """The table as reStructuredText (name, reported by, meaning), for docs and ``help()``.

    ``families=()`` renders the generic rows only (what this module's
    docstring shows, since it must not import the families).
    """
    rows = [(f"``{r.name}``", r.reported_by, r.meaning) for r in _rows(families)]
    head = ("name", "reported by", "meaning")
    widths = [max(len(head[i]), *(len(r[i]) for r in rows)) for i in range(3)]
    rule = "  ".join("=" * w for w in widths)

    def line(cells: tuple[str, str, str]) -> str:
        return "  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip()

    return "\n".join([rule, line(head), rule, *(line(r) for r in rows), rule])


if __doc__ is not None:  # not under python -OO
    __doc__ += "\nThe generic components:\n\n" + components_table(()) + "\n"
