"""Reward configuration: named components in, one scalar out.

Every env reports all of its components in ``info["reward_components"]``
whatever their weight, so a run logs what it did not optimise. A
:class:`RewardConfig` turns them into the scalar reward. It is rule-based and
deterministic, and it fails loudly: a weight on a component that the env did
not report raises, it never counts as 0.

Presets:

* ``strict`` (default): accuracy only; an answer with more predictions than
  the task allows scores 0 (never silently truncated).
* ``lenient``: the hackable "gold anywhere in my list" reward, kept for
  teaching; over-limit answers are allowed and scored on ``hit@any``.
* ``efficient``: strict plus a cost per tool call and per turn, so that the
  number of tool calls can fall under RL.

Example:
    >>> cfg = resolve_reward("efficient")
    >>> cfg.combine({"accuracy": 1.0, "tool_calls": 2, "turns": 3, "over_limit": 0.0})
    0.84
    >>> resolve_reward("strict").combine({"accuracy": 1.0, "over_limit": 1.0})
    0.0
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator


class RewardConfig(BaseModel):
    """How components become the scalar reward. Validated; unknown fields are errors."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field("custom", description="Preset name, for logs.")
    weights: dict[str, float] = Field(
        default_factory=lambda: {"accuracy": 1.0},
        description="Component name -> weight; a weight of 0 means 'log only'.",
    )
    tool_call_cost: float = Field(0.0, ge=0.0, description="Subtracted per tool call.")
    turn_cost: float = Field(0.0, ge=0.0, description="Subtracted per turn (every action).")
    cost_cap: float | None = Field(None, ge=0.0, description="Upper bound on the total cost.")
    over_limit: Literal["zero", "penalty", "allow"] = Field(
        "zero", description="Answers with more predictions than allowed: 0, a penalty, or allowed."
    )
    over_limit_penalty: float = Field(1.0, ge=0.0, description="Subtracted when over_limit='penalty'.")
    require_think: bool = Field(False, description="The format component requires <think> every turn.")

    @field_validator("weights")
    @classmethod
    def _weights_are_finite(cls, weights: dict[str, float]) -> dict[str, float]:
        for key, value in weights.items():
            if value != value or value in (float("inf"), float("-inf")):
                raise ValueError(f"weight of {key!r} must be finite, got {value}")
        return weights

    def cost(self, components: Mapping[str, float]) -> float:
        """Tool-call and turn cost of an episode, capped by ``cost_cap``."""
        total = self.tool_call_cost * components.get("tool_calls", 0.0) + self.turn_cost * components.get(
            "turns", 0.0
        )
        return min(total, self.cost_cap) if self.cost_cap is not None else total

    def combine(self, components: Mapping[str, float]) -> float:
        """The scalar reward; raises ``KeyError`` naming a weighted component that is missing."""
        over = components.get("over_limit", 0.0) > 0
        base = 0.0
        for key, weight in self.weights.items():
            if weight == 0.0:
                continue
            if key == "accuracy" and over and self.over_limit == "allow" and "hit@any" in components:
                value = components["hit@any"]
            elif key not in components:
                raise KeyError(
                    f"reward weight on {key!r} but the env reported only {sorted(components)}"
                )
            else:
                value = components[key]
            base += weight * value
        if over and self.over_limit == "zero":
            base = 0.0
        elif over and self.over_limit == "penalty":
            base -= self.over_limit_penalty
        return round(base - self.cost(components), 10)


PRESETS: dict[str, RewardConfig] = {
    "strict": RewardConfig(name="strict"),
    "lenient": RewardConfig(name="lenient", over_limit="allow"),
    "efficient": RewardConfig(name="efficient", tool_call_cost=0.05, turn_cost=0.02, cost_cap=0.5),
}


def resolve_reward(spec: str | Mapping[str, Any] | RewardConfig | Path | None) -> RewardConfig:
    """Accept a preset name, a dict, a ``RewardConfig``, or a JSON/YAML file path.

    User input fails early with the field at fault and the fix.
    """
    if spec is None:
        return PRESETS["strict"]
    if isinstance(spec, RewardConfig):
        return spec
    if isinstance(spec, Path) or (isinstance(spec, str) and spec.endswith((".json", ".yaml", ".yml"))):
        return _from_file(Path(spec))
    if isinstance(spec, str):
        if spec not in PRESETS:
            raise ValueError(f"unknown reward preset {spec!r}; choose one of {sorted(PRESETS)} or pass a dict")
        return PRESETS[spec]
    if isinstance(spec, Mapping):
        data = dict(spec)
        base = data.pop("preset", None)
        if base is not None:
            data = {**resolve_reward(base).model_dump(), **data}
        try:
            return RewardConfig(**data)
        except ValidationError as exc:
            raise ValueError(f"invalid reward config: {_explain(exc)}") from None
    raise TypeError(f"reward must be a preset name, dict, RewardConfig or file path, not {type(spec).__name__}")


def _from_file(path: Path) -> RewardConfig:
    if not path.is_file():
        raise FileNotFoundError(f"reward config file {path} does not exist")
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".json":
        data = json.loads(text)
    else:
        try:
            import yaml
        except ImportError:
            raise ImportError(f"reading {path} needs PyYAML: pip install pyyaml, or use JSON") from None
        data = yaml.safe_load(text)
    if not isinstance(data, Mapping):
        raise ValueError(f"{path}: a reward config file must hold a mapping of fields")
    try:
        return resolve_reward(data)
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from None


def _explain(exc: ValidationError) -> str:
    return "; ".join(
        f"field {'.'.join(str(p) for p in e['loc'])!r}: {e['msg']}" for e in exc.errors(include_url=False)
    )
