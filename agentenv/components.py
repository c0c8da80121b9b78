"""The reward components an env can report, and what each one means.

Every env fills ``info["reward_components"]`` at the end of an episode with
named floats, whatever their weight, so a run logs what it did not optimise.
A :class:`~agentenv.rewards.RewardConfig` weights them (a weight of 0 means
"log only") or charges them as costs. This table is the one place that says
what each name means, so that you know what you can weight.

========================  ======================  ===========================================
name                      reported by             meaning
========================  ======================  ===========================================
``accuracy``              every family            rule-based correctness in [0, 1]; for top-k
                                                  families the gold is among the first k
``format``                every ToolEnv           1.0 if the episode ended with an answer and
                                                  had no invalid action (and a ``<think>``
                                                  block every turn when ``require_think``)
``tool_calls``            every ToolEnv           tool calls executed (parallel calls count
                                                  one each); charged by ``tool_call_cost``
``turns``                 every ToolEnv           actions taken, invalid ones included;
                                                  charged by ``turn_cost``
``invalid_actions``       every ToolEnv           actions rejected as unparseable, unknown
                                                  tool or invalid arguments
``tool_errors``           every ToolEnv           calls that ran but failed (tool error,
                                                  timeout, exception)
``latency_ms``            every ToolEnv           modelled latency: the sum of each executed
                                                  tool's declared ``Tool.latency_ms``;
                                                  deterministic; charged by ``latency_cost``
``tokens``                when known              tokens the policy generated; charged by
                                                  ``token_cost``; no env reports it yet
``hit@K``                 rare disease            the gold is among the first K predictions
                                                  (e.g. ``hit@1``, ``hit@3``)
``hit@any``               rare disease            the gold is anywhere in the list, however
                                                  long: the hackable reward, for teaching
``reciprocal_rank``       rare disease            1 / rank of the gold, 0 if absent
``n_predictions``         top-k families          how many predictions the answer listed
``over_limit``            top-k families          1.0 if the answer listed more predictions
                                                  than allowed; see ``RewardConfig.over_limit``
``unresolved``            rare disease            predictions that matched no known disease
``questions_asked``       rare disease            ``ask_patient`` calls
``tool_call_cost``        ToolCallCost wrapper    cost the wrapper subtracted
``turn_cost``             TurnCost wrapper        cost the wrapper subtracted
``format_bonus``          FormatBonus wrapper     bonus the wrapper added
``prediction_limit``      PredictionLimit         reward change for going over its limit
``shaping_paid``          CostShaping wrapper     cost already paid on earlier steps
========================  ======================  ===========================================

Example:
    >>> COMPONENTS["latency_ms"].split(";")[0]
    "modelled latency: the sum of each executed tool's declared Tool.latency_ms"
    >>> closest("acuracy", ["accuracy", "format"])
    'accuracy'
"""

from __future__ import annotations

from collections.abc import Iterable

#: Component name -> meaning, in the order of the table above.
COMPONENTS: dict[str, str] = {
    "accuracy": "rule-based correctness in [0, 1]; for top-k families the gold is among the first k",
    "format": "1.0 if the episode ended with an answer and had no invalid action",
    "tool_calls": "tool calls executed; charged by tool_call_cost",
    "turns": "actions taken, invalid ones included; charged by turn_cost",
    "invalid_actions": "actions rejected as unparseable, unknown tool or invalid arguments",
    "tool_errors": "calls that ran but failed (tool error, timeout, exception)",
    "latency_ms": "modelled latency: the sum of each executed tool's declared Tool.latency_ms; "
    "charged by latency_cost",
    "tokens": "tokens the policy generated; charged by token_cost",
    "hit@K": "the gold is among the first K predictions",
    "hit@any": "the gold is anywhere in the list, however long (the hackable reward)",
    "reciprocal_rank": "1 / rank of the gold, 0 if absent",
    "n_predictions": "how many predictions the answer listed",
    "over_limit": "1.0 if the answer listed more predictions than allowed",
    "unresolved": "predictions that matched no known disease",
    "questions_asked": "ask_patient calls",
    "tool_call_cost": "cost subtracted by the ToolCallCost wrapper",
    "turn_cost": "cost subtracted by the TurnCost wrapper",
    "format_bonus": "bonus added by the FormatBonus wrapper",
    "prediction_limit": "reward change made by the PredictionLimit wrapper",
    "shaping_paid": "cost the CostShaping wrapper paid on earlier steps",
}


def closest(name: str, known: Iterable[str]) -> str | None:
    """The known name nearest to a misspelt one, for "did you mean" hints (only on an error path)."""
    import difflib

    matches = difflib.get_close_matches(name, list(known), n=1, cutoff=0.6)
    return matches[0] if matches else None
